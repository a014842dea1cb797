//! The network model, pure: processes, TCP channels and what happens to each packet.
//!
//! The network actor (`crate::actors::network`) asks this model for a verdict on every send and
//! every arrival and turns the verdict into agenda entries. The model owns the things that make
//! RocketMQ's two failure paths differ:
//!
//! * a **killed process on a live host** closes its TCP connections: peers get a FIN at once and
//!   RocketMQ's `BrokerHousekeepingService` unregisters the broker in milliseconds;
//! * a **silent failure** (host down, partition, SIGSTOP) closes nothing: the peer's channel stays
//!   open (half-open TCP) and only a timeout notices.

pub mod links;

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::rng::SimRng;
pub use links::{LinkParams, LinkRules};
use rustc_hash::FxHashMap;

/// What a process is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcState {
    Running,
    /// SIGSTOP: its sockets stay open and buffer input, but none of its code runs.
    Hung,
    /// Not running (killed, shut down, or its host is off).
    Down,
}

#[derive(Clone, Debug)]
pub struct Proc {
    pub name: String,
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
    /// The packet arrives at `at` over `channel`; `opened` when this send opened the channel.
    Deliver { channel: ChannelId, at: SimTime, opened: bool },
    /// Lost on the wire (link loss). TCP would retransmit; the model treats the request as lost.
    Lost { channel: ChannelId },
    /// The link is cut; the packet vanishes and the channel stays (half-)open.
    Cut { channel: ChannelId },
    /// No channel could be opened; the sender learns it at `at`.
    ConnectFailed { at: SimTime, reason: ConnectFailure },
    /// The sender's side of the channel is already closed; nothing is sent.
    Closed,
}

/// What happens to a packet when it reaches its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    Accept,
    /// The destination is hung: the packet waits in the socket buffer until it resumes.
    Park,
    /// The destination closed its side (or died on a live host): the sender gets an RST.
    Reset,
    /// Nobody is there to answer at all (host down).
    Discard,
}

/// One TCP connection, opened by `client` to `server`.
#[derive(Clone, Debug)]
pub struct Channel {
    pub id: ChannelId,
    pub client: NodeId,
    pub server: NodeId,
    pub open_at_client: bool,
    pub open_at_server: bool,
    /// Last packet sent or received on this channel, for Netty's idle close.
    pub last_io: SimTime,
    /// FIFO per direction: a packet never overtakes an earlier one on the same channel.
    next_free: [SimTime; 2],
}

impl Channel {
    pub fn peer_of(&self, node: NodeId) -> NodeId {
        if node == self.client {
            self.server
        } else {
            self.client
        }
    }

    /// Whether `node`'s end is open; false for a node that is neither end.
    pub fn is_open_at(&self, node: NodeId) -> bool {
        (node == self.client && self.open_at_client) || (node == self.server && self.open_at_server)
    }
}

/// A close seen from the other end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fin {
    pub peer: NodeId,
    /// When the FIN arrives, or `None` when it cannot (cut link, peer host down).
    pub arrives: Option<SimTime>,
}

/// Channels by id. Ids come from a counter, so a vector indexed by id is a map without hashing
/// or comparisons — every packet looks its channel up.
#[derive(Default)]
struct Channels(Vec<Option<Channel>>);

impl Channels {
    fn get(&self, id: &ChannelId) -> Option<&Channel> {
        self.0.get(id.0 as usize).and_then(Option::as_ref)
    }

    fn get_mut(&mut self, id: &ChannelId) -> Option<&mut Channel> {
        self.0.get_mut(id.0 as usize).and_then(Option::as_mut)
    }

    fn insert(&mut self, id: ChannelId, c: Channel) {
        let i = id.0 as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i] = Some(c);
    }

    fn remove(&mut self, id: &ChannelId) {
        if let Some(slot) = self.0.get_mut(id.0 as usize) {
            *slot = None;
        }
    }

    fn values(&self) -> impl Iterator<Item = &Channel> {
        self.0.iter().flatten()
    }
}

impl std::ops::Index<&ChannelId> for Channels {
    type Output = Channel;
    fn index(&self, id: &ChannelId) -> &Channel {
        self.get(id).expect("channel exists")
    }
}

pub struct NetCore {
    pub rules: LinkRules,
    pub connect_timeout: SimDuration,
    procs: Vec<Proc>,
    channels: Channels,
    /// The channel each client currently uses towards each server (looked up, never iterated).
    current: FxHashMap<(NodeId, NodeId), ChannelId>,
    next_channel: u64,
}

impl NetCore {
    pub fn new(rules: LinkRules, connect_timeout: SimDuration) -> Self {
        NetCore {
            rules,
            connect_timeout,
            procs: Vec::new(),
            channels: Channels::default(),
            current: FxHashMap::default(),
            next_channel: 0,
        }
    }

    pub fn add_node(&mut self, name: &str) -> NodeId {
        self.procs.push(Proc { name: name.to_string(), state: ProcState::Down, host_up: true, epoch: 0 });
        NodeId(self.procs.len() as u32 - 1)
    }

    pub fn proc(&self, node: NodeId) -> &Proc {
        &self.procs[node.0 as usize]
    }

    pub fn name(&self, node: NodeId) -> &str {
        &self.procs[node.0 as usize].name
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.procs.iter().position(|p| p.name == name).map(|i| NodeId(i as u32))
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
        self.current.get(&(client, server)).copied().filter(|id| self.channels[id].open_at_client)
    }

    /// Channels open at `node`'s end, in id order.
    pub fn open_channels_of(&self, node: NodeId) -> Vec<ChannelId> {
        self.channels.values().filter(|c| c.is_open_at(node)).map(|c| c.id).collect()
    }

    /// A client-initiated send: reuses the client's channel to `to` or opens a new one.
    pub fn send(&mut self, now: SimTime, from: NodeId, to: NodeId, rng: &mut SimRng) -> SendOutcome {
        let existing = self.current.get(&(from, to)).copied();
        let (channel, opened) = match existing.filter(|id| self.channels[id].open_at_client) {
            Some(id) => (id, false),
            None => match self.connect(now, from, to) {
                Ok(id) => (id, true),
                Err(outcome) => return outcome,
            },
        };
        match self.transmit(now, channel, from, rng) {
            SendOutcome::Deliver { channel, at, .. } => SendOutcome::Deliver { channel, at, opened },
            other => other,
        }
    }

    /// A send on an existing channel (a server's reply, or a client reusing a known channel).
    pub fn send_on(&mut self, now: SimTime, channel: ChannelId, from: NodeId, rng: &mut SimRng) -> SendOutcome {
        match self.channels.get(&channel) {
            Some(c) if c.is_open_at(from) => self.transmit(now, channel, from, rng),
            _ => SendOutcome::Closed,
        }
    }

    fn connect(&mut self, now: SimTime, from: NodeId, to: NodeId) -> Result<ChannelId, SendOutcome> {
        let dest = self.proc(to);
        let rtt = self.rules.params(from, to).latency + self.rules.params(to, from).latency;
        let failed = |at, reason| SendOutcome::ConnectFailed { at, reason };
        if !self.rules.reachable(from, to) || !self.rules.reachable(to, from) || !dest.host_up {
            return Err(failed(now + self.connect_timeout, ConnectFailure::TimedOut));
        }
        if dest.state == ProcState::Down {
            return Err(failed(now + rtt, ConnectFailure::Refused));
        }
        self.next_channel += 1;
        let id = ChannelId(self.next_channel);
        self.channels.insert(
            id,
            Channel {
                id,
                client: from,
                server: to,
                open_at_client: true,
                open_at_server: true,
                last_io: now,
                next_free: [now; 2],
            },
        );
        self.current.insert((from, to), id);
        Ok(id)
    }

    fn transmit(&mut self, now: SimTime, channel: ChannelId, from: NodeId, rng: &mut SimRng) -> SendOutcome {
        let c = &self.channels[&channel];
        let to = c.peer_of(from);
        if !self.rules.reachable(from, to) {
            return SendOutcome::Cut { channel };
        }
        let p = self.rules.params(from, to);
        if rng.chance(p.loss) {
            return SendOutcome::Lost { channel };
        }
        let delay = p.latency + SimDuration(rng.up_to(p.jitter.millis()));
        let c = self.channels.get_mut(&channel).expect("channel exists");
        let dir = usize::from(from != c.client);
        let at = (now + delay).max(c.next_free[dir]);
        c.next_free[dir] = at;
        c.last_io = now;
        SendOutcome::Deliver { channel, at, opened: false }
    }

    /// Decides a packet's fate as it reaches `to`.
    pub fn arrive(&mut self, now: SimTime, channel: ChannelId, to: NodeId) -> Arrival {
        let (state, host_up) = (self.proc(to).state, self.proc(to).host_up);
        // A channel both ends have closed is gone; whatever was still in flight finds nobody.
        let Some(c) = self.channels.get_mut(&channel).filter(|_| host_up) else {
            return Arrival::Discard;
        };
        if !c.is_open_at(to) || state == ProcState::Down {
            return Arrival::Reset;
        }
        c.last_io = now;
        if state == ProcState::Hung {
            Arrival::Park
        } else {
            Arrival::Accept
        }
    }

    /// Closes `by`'s end of a channel. Returns the FIN the peer will (or will not) see, or `None`
    /// when that end was already closed.
    pub fn close(&mut self, now: SimTime, channel: ChannelId, by: NodeId) -> Option<Fin> {
        let c = self.channels.get_mut(&channel)?;
        if !c.is_open_at(by) {
            return None;
        }
        if by == c.client {
            c.open_at_client = false;
        } else {
            c.open_at_server = false;
        }
        let peer = c.peer_of(by);
        let peer_open = c.is_open_at(peer);
        let (client, server) = (c.client, c.server);
        if !c.open_at_client && !c.open_at_server {
            self.channels.remove(&channel);
            if self.current.get(&(client, server)) == Some(&channel) {
                self.current.remove(&(client, server));
            }
        }
        let reaches = peer_open && self.rules.reachable(by, peer) && self.proc(peer).host_up;
        let arrives = reaches.then(|| now + self.rules.params(by, peer).latency);
        Some(Fin { peer, arrives })
    }

    /// The peer's end learns of a close (FIN or RST received): both ends are now closed.
    pub fn peer_closed(&mut self, channel: ChannelId, node: NodeId) -> bool {
        let was_open = self.channels.get(&channel).is_some_and(|c| c.is_open_at(node));
        if was_open {
            self.close(SimTime::ZERO, channel, node);
        }
        was_open
    }
}

#[cfg(test)]
mod tests;
