//! The network model, pure: processes, TCP connections, UDP datagrams, and the fate of each.
//!
//! The network (`crate::actors::network`) asks this model for a verdict on every send,
//! every retransmission and every arrival, and turns the verdicts into agenda entries. The model
//! owns the things that make RocketMQ's and Nacos's failure paths differ:
//!
//! * a **killed process on a live host** closes its TCP connections: peers get a FIN (queued
//!   behind whatever the process had written) and RocketMQ's `BrokerHousekeepingService`
//!   unregisters the broker in milliseconds;
//! * a **silent failure** (host down, partition, SIGSTOP) closes nothing: the peer's end stays
//!   open (half-open TCP) and only a timeout notices;
//! * **TCP is reliable** (see [`tcp`]): a lost segment is retransmitted, so loss and short cuts
//!   delay messages instead of losing them; a connection dies only when the kernel's retry
//!   budget runs out or an application closes it;
//! * **UDP is not**: a datagram lost or cut is gone (Nacos's push).

mod channel;
mod handshake;
pub mod links;
mod stream;
pub mod tcp;
mod teardown;

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId, ProcState};
use crate::sim::rng::SimRng;
pub use channel::Channel;
use channel::Channels;
pub use links::{LinkParams, LinkRules};
use rustc_hash::FxHashMap;
pub use tcp::{Miss, Seg};

/// What the network knows of a process, read by every packet that reaches it and every timer
/// it set: eight bytes, its name kept apart (`NetCore::name`), so that a thousand brokers'
/// entries share a few cache lines rather than each taking half of one.
#[derive(Clone, Copy, Debug)]
pub struct Proc {
    pub state: ProcState,
    /// False after a host crash or power-off: nothing answers, not even the kernel's RST.
    pub host_up: bool,
    /// Bumped on every (re)start, so timers of a previous incarnation are dropped.
    pub epoch: u32,
}

/// Why a connection could not be opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectFailure {
    /// The host answered with RST: nothing listens on the port.
    Refused,
    /// No answer to the SYN (host down, partition): the connect timeout ran out.
    TimedOut,
}

/// The verdict on one send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOutcome {
    /// The segment reaches the peer at `at` over `channel`; `opened` when this send opened it.
    Deliver { channel: ChannelId, at: SimTime, opened: bool },
    /// Not received yet: `miss` says why it was lost, or is `None` when it waits behind an
    /// earlier segment that was. TCP retransmits; `retransmit_at` is set when this send started
    /// the stream's retransmission timer.
    Held { channel: ChannelId, opened: bool, miss: Option<Miss>, retransmit_at: Option<SimTime> },
    /// The connection is not up yet: the first SYN (or its answer) was lost, and the kernel
    /// sends it again at `syn_at`. What the client writes meanwhile waits for the handshake.
    Connecting { channel: ChannelId, miss: Miss, syn_at: SimTime },
    /// No connection could be opened; the sender learns it at `at`.
    ConnectFailed { at: SimTime, reason: ConnectFailure },
    /// The sender's end of the channel is already closed; nothing is sent.
    Closed,
}

/// What happens to a segment when it reaches its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    Accept,
    /// The destination is hung: the segment waits in the socket buffer until it resumes.
    Park,
    /// The destination closed its end (or died on a live host): the sender gets an RST.
    Reset,
    /// Nobody is there to answer at all (the host died while it was in flight).
    Discard,
}

/// What becomes of the FIN a close sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinFate {
    /// It reaches the peer at this time.
    Arrives(SimTime),
    /// It was lost (or waits behind lost data); the kernel retransmits it.
    Held { miss: Option<Miss>, retransmit_at: Option<SimTime> },
    /// The connection never came up: there is nobody to tell.
    Unheard,
}

/// A close, as the network carries it to the other end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closing {
    pub peer: NodeId,
    pub fin: FinFate,
    /// What was written on a connection still connecting: it never leaves.
    pub dropped: Vec<Seg>,
}

/// The outcome of a connect's SYN timer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handshake {
    /// Nothing is connecting any more.
    Idle,
    /// No answer again; the next SYN leaves at `next` (or the connect times out then).
    Again { from: NodeId, to: NodeId, miss: Miss, attempt: u32, next: SimTime },
    /// The handshake completed at `connected`; the queued segments then leave: these arrive
    /// at these times, and `retransmit_at` is set when one was lost.
    Connected {
        from: NodeId,
        to: NodeId,
        connected: SimTime,
        delivered: Vec<(Seg, SimTime)>,
        retransmit_at: Option<SimTime>,
    },
    /// The connect failed (an RST came back, or the connect timeout ran out) at `at`; the
    /// queued segments never leave.
    Failed { from: NodeId, to: NodeId, at: SimTime, reason: ConnectFailure, segs: Vec<Seg> },
}

/// The outcome of a stream's retransmission timer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Retransmission {
    /// Nothing is waiting any more (the timer is stale, or the channel is gone).
    Idle,
    /// Lost again; the timer fires next at `next`. `head` is the segment retransmitted.
    Failed { from: NodeId, to: NodeId, head: Seg, miss: Miss, attempt: u32, next: SimTime },
    /// The head got through: these segments arrive at these times, in order. `again` is set
    /// when a follower was lost and the timer restarted.
    Delivered {
        from: NodeId,
        to: NodeId,
        segs: Vec<(Seg, SimTime)>,
        attempt: u32,
        waited: SimDuration,
        again: Option<SimTime>,
    },
    /// The kernel gave up on the stream: `tcp_retries2` on an open connection (whose end is now
    /// closed with an error), or the orphan budget of a closed socket.
    GaveUp { from: NodeId, to: NodeId, segs: Vec<Seg>, orphan: bool, waited: SimDuration },
}

/// The fate of a UDP datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datagram {
    Arrives(SimTime),
    Dropped(Miss),
}

/// One transmission's verdict: in order at a time, or held for retransmission.
enum Tx {
    Arrives(SimTime),
    Held { miss: Option<Miss>, retransmit_at: Option<SimTime> },
}

/// What an idle-check timer finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleCheck {
    /// The end is closed already.
    Gone,
    /// Nothing read or written for the whole idle time: close it.
    Fire,
    /// Traffic since: look again at this time.
    Later(SimTime),
}

pub struct NetCore {
    pub rules: LinkRules,
    pub connect_timeout: SimDuration,
    procs: Vec<Proc>,
    /// By node id, as `procs`.
    names: Vec<String>,
    channels: Channels,
    /// The channel each client currently uses towards each server, per pool (looked up, never
    /// iterated).
    current: FxHashMap<(NodeId, NodeId, Pool), ChannelId>,
    next_channel: u64,
}

impl NetCore {
    pub fn new(rules: LinkRules, connect_timeout: SimDuration) -> Self {
        NetCore {
            rules,
            connect_timeout,
            procs: Vec::new(),
            names: Vec::new(),
            channels: Channels::default(),
            current: FxHashMap::default(),
            next_channel: 0,
        }
    }

    pub fn add_node(&mut self, name: &str) -> NodeId {
        self.procs.push(Proc { state: ProcState::Down, host_up: true, epoch: 0 });
        self.names.push(name.to_string());
        NodeId(self.procs.len() as u32 - 1)
    }

    pub fn proc(&self, node: NodeId) -> &Proc {
        &self.procs[node.0 as usize]
    }

    pub fn name(&self, node: NodeId) -> &str {
        &self.names[node.0 as usize]
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.names.iter().position(|n| n == name).map(|i| NodeId(i as u32))
    }

    /// Starts (or restarts) a process on a running host; returns its new epoch.
    pub fn start(&mut self, node: NodeId) -> u32 {
        let p = &mut self.procs[node.0 as usize];
        p.state = ProcState::Running;
        p.host_up = true;
        p.epoch += 1;
        p.epoch
    }

    pub fn set_state(&mut self, node: NodeId, state: ProcState, host_up: bool) {
        let p = &mut self.procs[node.0 as usize];
        p.state = state;
        p.host_up = host_up;
    }

    pub fn channel(&self, id: ChannelId) -> Option<&Channel> {
        self.channels.get(&id)
    }

    /// The channel `client` currently uses towards `server`, if it is open at the client.
    pub fn current_channel(&self, client: NodeId, server: NodeId) -> Option<ChannelId> {
        let key = (client, server, Pool::DEFAULT);
        self.current.get(&key).copied().filter(|id| self.channels[id].open_at_client)
    }

    /// Channels open at `node`'s end, in id order.
    pub fn open_channels_of(&self, node: NodeId) -> Vec<ChannelId> {
        self.channels.ids_where(|c| c.is_open_at(node))
    }

    /// The stream `from` writes on, for its retransmission timer.
    pub fn direction(&self, channel: ChannelId, from: NodeId) -> usize {
        self.channels.get(&channel).map_or(0, |c| c.end(from))
    }

    /// Decides a segment's fate as it reaches `to`.
    pub fn arrive(&mut self, now: SimTime, channel: ChannelId, to: NodeId) -> Arrival {
        let Proc { state, host_up, .. } = *self.proc(to);
        // A channel gone on a live host crossed its own close: the sender's FIN and this
        // segment passed each other, and the closed socket answers RST (the sender's end is
        // already closed, so the RST changes nothing). On a dead host nothing answers.
        let Some(c) = self.channels.get_mut(&channel).filter(|_| host_up) else {
            return if host_up { Arrival::Reset } else { Arrival::Discard };
        };
        if !c.is_open_at(to) || state == ProcState::Down {
            return Arrival::Reset;
        }
        if state == ProcState::Hung {
            Arrival::Park
        } else {
            c.touch(to, now);
            Arrival::Accept
        }
    }

    /// A UDP datagram: no connection, no retransmission, no order.
    pub fn datagram(&mut self, now: SimTime, from: NodeId, to: NodeId, rng: &mut SimRng) -> Datagram {
        match self.link().attempt(from, to, rng) {
            Ok(delay) => Datagram::Arrives(now + delay),
            Err(miss) => Datagram::Dropped(miss),
        }
    }

    /// Netty's `IdleStateHandler` on `node`'s end of `channel`: has `node` neither read nor
    /// written for `idle`?
    pub fn idle_check(&self, now: SimTime, channel: ChannelId, node: NodeId, idle: SimDuration) -> IdleCheck {
        match self.channels.get(&channel) {
            Some(c) if c.is_open_at(node) => {
                let quiet_until = c.last_io(node) + idle;
                if now >= quiet_until {
                    IdleCheck::Fire
                } else {
                    IdleCheck::Later(quiet_until)
                }
            }
            _ => IdleCheck::Gone,
        }
    }
}

#[cfg(test)]
mod tests;

/// One of a process's client connection pools. Each pool has its own current connection to each
/// server: a process whose separate clients keep separate connections to the same peer (a Nacos
/// member's HTTP client for member reports, its `DistroFilter` proxy client and its cluster gRPC
/// client) uses one pool per client, so a read timeout that closes one client's connection does
/// not fail another client's request. Everything else uses [`Pool::DEFAULT`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pool(pub u8);

impl Pool {
    pub const DEFAULT: Pool = Pool(0);
}

/// How a client write finds its channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lease {
    /// The client's current channel to the server, or a new one (one keep-alive connection).
    /// The client may name the channel its last request went on: if that is still the current
    /// one, the send does not look it up (see `Channel::current`).
    Reuse(Option<ChannelId>),
    /// As a pooling HTTP client sends: a request does not wait behind a connection still being
    /// set up (another request's), it leases a new one, which becomes the current channel. The
    /// older connect goes on alone and fails or succeeds for its request. The connections are
    /// the given pool's, apart from the process's other clients' (see [`Pool`]).
    Pooled(Pool),
    /// Always a new connection, which becomes the current channel — a gRPC client's new
    /// `ManagedChannel` while its old connection to the same server is still open.
    Fresh,
}
