//! The network model, pure: processes, TCP connections, UDP datagrams, and the fate of each.
//!
//! The network actor (`crate::actors::network`) asks this model for a verdict on every send,
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
pub mod links;
pub mod tcp;

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId, ProcState};
use crate::sim::rng::SimRng;
pub use channel::Channel;
use channel::Channels;
pub use links::{LinkParams, LinkRules};
use rustc_hash::FxHashMap;
pub use tcp::{Miss, Seg};

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
        let key = (client, server, Pool::DEFAULT);
        self.current.get(&key).copied().filter(|id| self.channels[id].open_at_client)
    }

    /// Channels open at `node`'s end, in id order.
    pub fn open_channels_of(&self, node: NodeId) -> Vec<ChannelId> {
        self.channels.values().filter(|c| c.is_open_at(node)).map(|c| c.id).collect()
    }

    /// Whether a transmission from `from` can reach `to` now, and if not, why.
    fn reach(&self, from: NodeId, to: NodeId) -> Result<(), Miss> {
        if !self.rules.reachable(from, to) {
            Err(Miss::Cut)
        } else if !self.proc(to).host_up {
            Err(Miss::NoHost)
        } else {
            Ok(())
        }
    }

    /// One transmission from `from` to `to`: its one-way delay, or why it does not arrive.
    fn attempt(&self, from: NodeId, to: NodeId, rng: &mut SimRng) -> Result<SimDuration, Miss> {
        self.reach(from, to)?;
        let p = self.rules.params(from, to);
        if rng.chance(p.loss) {
            return Err(Miss::Lost);
        }
        Ok(p.latency + SimDuration(rng.up_to(p.jitter.millis())))
    }

    /// The first retransmission timeout on the link between `a` and `b`.
    fn rto(&self, a: NodeId, b: NodeId) -> SimDuration {
        let (there, back) = (self.rules.params(a, b), self.rules.params(b, a));
        tcp::initial_rto(there.latency + back.latency, there.jitter + back.jitter)
    }

    /// A client write: reuses the client's channel to `to` or opens a new one.
    pub fn send(&mut self, now: SimTime, from: NodeId, to: NodeId, seg: Seg, rng: &mut SimRng) -> SendOutcome {
        self.send_how(now, from, to, seg, rng, Lease::Reuse)
    }

    /// `send`, choosing how the channel is found (see [`Lease`]).
    pub fn send_how(
        &mut self,
        now: SimTime,
        from: NodeId,
        to: NodeId,
        seg: Seg,
        rng: &mut SimRng,
        lease: Lease,
    ) -> SendOutcome {
        let pool = match lease {
            Lease::Pooled(pool) => pool,
            Lease::Reuse | Lease::Fresh => Pool::DEFAULT,
        };
        let existing = self.current.get(&(from, to, pool)).copied();
        let usable = |c: &Channel| match lease {
            Lease::Reuse => c.open_at_client,
            Lease::Pooled(_) => c.open_at_client && c.syn.is_none(),
            Lease::Fresh => false,
        };
        let (channel, opened) = match existing.filter(|id| usable(&self.channels[id])) {
            Some(id) => (id, false),
            None => match self.connect(now, from, to, pool, rng) {
                Ok(id) => (id, true),
                Err(outcome) => return outcome,
            },
        };
        let c = self.channels.get_mut(&channel).expect("channel exists");
        if let Some(syn) = c.syn {
            // Connecting: the write waits in the socket until the handshake completes.
            c.streams[0].backlog.push_back(seg);
            return if opened {
                let miss = self.syn_miss(from, to);
                SendOutcome::Connecting { channel, miss, syn_at: syn.due }
            } else {
                SendOutcome::Held { channel, opened: false, miss: None, retransmit_at: None }
            };
        }
        self.write(now, channel, from, seg, opened, rng)
    }

    /// A write on a known channel (a server's reply). Nothing if `from` already closed it.
    pub fn send_on(
        &mut self,
        now: SimTime,
        channel: ChannelId,
        from: NodeId,
        seg: Seg,
        rng: &mut SimRng,
    ) -> SendOutcome {
        match self.channels.get(&channel) {
            Some(c) if c.is_open_at(from) => self.write(now, channel, from, seg, false, rng),
            _ => SendOutcome::Closed,
        }
    }

    fn write(
        &mut self,
        now: SimTime,
        channel: ChannelId,
        from: NodeId,
        seg: Seg,
        opened: bool,
        rng: &mut SimRng,
    ) -> SendOutcome {
        let c = self.channels.get_mut(&channel).expect("channel exists");
        c.touch(from, now);
        // Written during the handshake, it leaves when the connection is up.
        let depart = now.max(c.connected_at);
        match self.transmit(depart, channel, from, seg, rng) {
            Tx::Arrives(at) => SendOutcome::Deliver { channel, at, opened },
            Tx::Held { miss, retransmit_at } => SendOutcome::Held { channel, opened, miss, retransmit_at },
        }
    }

    /// Puts `seg` on `from`'s stream at `depart`: delivered in order, or held for retransmission.
    fn transmit(&mut self, depart: SimTime, channel: ChannelId, from: NodeId, seg: Seg, rng: &mut SimRng) -> Tx {
        let c = &self.channels[&channel];
        let (to, dir) = (c.peer_of(from), c.end(from));
        if !c.streams[dir].is_idle() {
            // TCP delivers in order: behind a lost segment, everything waits.
            self.channels.get_mut(&channel).expect("channel exists").streams[dir].backlog.push_back(seg);
            return Tx::Held { miss: None, retransmit_at: None };
        }
        match self.attempt(from, to, rng) {
            Ok(delay) => {
                let s = &mut self.channels.get_mut(&channel).expect("channel exists").streams[dir];
                let at = (depart + delay).max(s.next_free);
                s.next_free = at;
                Tx::Arrives(at)
            }
            Err(miss) => {
                let rto = self.rto(from, to);
                let s = &mut self.channels.get_mut(&channel).expect("channel exists").streams[dir];
                s.backlog.push_back(seg);
                Tx::Held { miss: Some(miss), retransmit_at: Some(s.stall(depart, rto)) }
            }
        }
    }

    /// One SYN and its answer: through, or why not.
    fn syn_exchange(&self, from: NodeId, to: NodeId, rng: &mut SimRng) -> Result<(), Miss> {
        self.reach(from, to)?;
        if !self.rules.reachable(to, from) {
            return Err(Miss::Cut);
        }
        let (there, back) = (self.rules.params(from, to), self.rules.params(to, from));
        if rng.chance(there.loss) || rng.chance(back.loss) {
            return Err(Miss::Lost);
        }
        Ok(())
    }

    /// Why a SYN just sent found no answer (for the trace; the decision was `syn_exchange`'s).
    fn syn_miss(&self, from: NodeId, to: NodeId) -> Miss {
        match self.reach(from, to) {
            Err(miss) => miss,
            Ok(()) if !self.rules.reachable(to, from) => Miss::Cut,
            Ok(()) => Miss::Lost,
        }
    }

    fn rtt(&self, a: NodeId, b: NodeId) -> SimDuration {
        self.rules.params(a, b).latency + self.rules.params(b, a).latency
    }

    /// Opens a connection: the SYN and its answer take a round trip. A SYN that finds no answer
    /// is sent again after 1 s, 2 s, 4 s... (`TCP_TIMEOUT_INIT`), each time against the links as
    /// they are then, until the application's connect timeout.
    fn connect(
        &mut self,
        now: SimTime,
        from: NodeId,
        to: NodeId,
        pool: Pool,
        rng: &mut SimRng,
    ) -> Result<ChannelId, SendOutcome> {
        let answered = self.syn_exchange(from, to, rng);
        let rtt = self.rtt(from, to);
        if answered.is_ok() && self.proc(to).state == ProcState::Down {
            return Err(SendOutcome::ConnectFailed { at: now + rtt, reason: ConnectFailure::Refused });
        }
        self.next_channel += 1;
        let id = ChannelId(self.next_channel);
        let mut c = Channel::new(id, from, to, now + rtt);
        c.pool = pool;
        if answered.is_err() {
            let due = now + tcp::SYN_RTO.min(self.connect_timeout);
            c.syn = Some(tcp::Syn { started: now, rto: tcp::SYN_RTO, due, attempts: 0 });
        }
        self.channels.insert(id, c);
        self.current.insert((from, to, pool), id);
        Ok(id)
    }

    /// A connect's SYN timer fired at `now`: send the SYN again, give up, or connect.
    pub fn syn_retry(&mut self, now: SimTime, channel: ChannelId, rng: &mut SimRng) -> Handshake {
        let Some(c) = self.channels.get(&channel) else { return Handshake::Idle };
        let Some(syn) = c.syn.filter(|s| s.due == now) else { return Handshake::Idle };
        let (from, to) = (c.client, c.server);
        let failed = |me: &mut Self, at, reason| {
            let segs = me.channels.get_mut(&channel).map(|c| c.streams[0].drain()).unwrap_or_default();
            me.discard(channel);
            Handshake::Failed { from, to, at, reason, segs }
        };
        if now.since(syn.started) >= self.connect_timeout {
            // The application's connect timeout wins a tie with a SYN retransmission.
            return failed(self, now, ConnectFailure::TimedOut);
        }
        let attempt = syn.attempts + 1;
        if let Err(miss) = self.syn_exchange(from, to, rng) {
            let deadline = syn.started + self.connect_timeout;
            let c = self.channels.get_mut(&channel).expect("channel exists");
            let rto = tcp::backed_off(syn.rto);
            let next = (now + rto).min(deadline);
            c.syn = Some(tcp::Syn { rto, due: next, attempts: attempt, ..syn });
            return Handshake::Again { from, to, miss, attempt, next };
        }
        let connected = now + self.rtt(from, to);
        if self.proc(to).state == ProcState::Down {
            return failed(self, connected, ConnectFailure::Refused);
        }
        let c = self.channels.get_mut(&channel).expect("channel exists");
        c.connected(connected);
        let queued = c.streams[0].drain();
        let (mut delivered, mut retransmit_at) = (Vec::new(), None);
        for seg in queued {
            match self.transmit(connected, channel, from, seg, rng) {
                Tx::Arrives(at) => delivered.push((seg, at)),
                Tx::Held { retransmit_at: Some(at), .. } => retransmit_at = Some(at),
                Tx::Held { .. } => {}
            }
        }
        Handshake::Connected { from, to, connected, delivered, retransmit_at }
    }

    /// The retransmission timer of `channel`'s stream `dir` (0: client → server) fired at `now`.
    pub fn retransmit(&mut self, now: SimTime, channel: ChannelId, dir: usize, rng: &mut SimRng) -> Retransmission {
        let Some(c) = self.channels.get(&channel) else { return Retransmission::Idle };
        let Some(retry) = c.streams[dir].retry.filter(|r| r.due == now) else { return Retransmission::Idle };
        let (from, to) = if dir == 0 { (c.client, c.server) } else { (c.server, c.client) };
        let orphan = !c.is_open_at(from);
        let waited = now.since(retry.first_sent);
        let budget = if orphan { tcp::ORPHAN_BUDGET } else { tcp::OPEN_BUDGET };
        if waited >= budget {
            let c = self.channels.get_mut(&channel).expect("channel exists");
            let segs = c.streams[dir].drain();
            c.set_closed(from);
            self.forget_current(channel);
            self.tidy(channel);
            return Retransmission::GaveUp { from, to, segs, orphan, waited };
        }
        let attempt = retry.attempts + 1;
        let verdict = self.attempt(from, to, rng);
        let rto = self.rto(from, to);
        let s = &mut self.channels.get_mut(&channel).expect("channel exists").streams[dir];
        let delay = match verdict {
            Err(miss) => {
                let head = *s.backlog.front().expect("a stalled stream has a head");
                let r = s.retry.as_mut().expect("the stream is stalled");
                r.attempts = attempt;
                r.rto = tcp::backed_off(r.rto);
                r.due = now + r.rto;
                return Retransmission::Failed { from, to, head, miss, attempt, next: r.due };
            }
            Ok(delay) => delay,
        };
        s.retry = None;
        let mut segs = Vec::with_capacity(s.backlog.len());
        let mut next = Some(delay);
        let mut again = None;
        // The head got through; what waited behind it goes out now, each with its own luck.
        while let Some(delay) = next {
            let s = &mut self.channels.get_mut(&channel).expect("channel exists").streams[dir];
            let Some(seg) = s.backlog.pop_front() else { break };
            let at = (now + delay).max(s.next_free);
            s.next_free = at;
            segs.push((seg, at));
            if s.backlog.is_empty() {
                break;
            }
            next = match self.attempt(from, to, rng) {
                Ok(d) => Some(d),
                Err(_) => {
                    let s = &mut self.channels.get_mut(&channel).expect("channel exists").streams[dir];
                    again = Some(s.stall(now, rto));
                    None
                }
            };
        }
        self.tidy(channel);
        Retransmission::Delivered { from, to, segs, attempt, waited, again }
    }

    /// `by`'s application closes its end. The FIN queues behind anything still unsent. `None`
    /// when that end was closed already.
    pub fn close(&mut self, now: SimTime, channel: ChannelId, by: NodeId, rng: &mut SimRng) -> Option<Closing> {
        let c = self.channels.get_mut(&channel)?;
        if !c.is_open_at(by) {
            return None;
        }
        let peer = c.peer_of(by);
        if c.syn.is_some() {
            // Never connected: the connect is abandoned and what waited for it with it.
            let dropped = c.streams[0].drain();
            self.discard(channel);
            return Some(Closing { peer, fin: FinFate::Unheard, dropped });
        }
        c.set_closed(by);
        // The closing side cannot know whether the peer's end is still open (its FIN may be
        // lost in a cut, its host may be dead): the FIN always goes out, queued behind anything
        // unsent. A peer that had closed meanwhile just finds nobody to tell.
        let depart = now.max(c.connected_at);
        let fin = match self.transmit(depart, channel, by, Seg::Fin, rng) {
            Tx::Arrives(at) => FinFate::Arrives(at),
            Tx::Held { miss, retransmit_at } => FinFate::Held { miss, retransmit_at },
        };
        self.forget_current(channel);
        self.tidy(channel);
        Some(Closing { peer, fin, dropped: Vec::new() })
    }

    /// `node`'s end vanishes without a word (its host died, or an RST reset it): nothing it
    /// still had to send goes out. Returns those segments.
    pub fn abort(&mut self, channel: ChannelId, node: NodeId) -> Vec<Seg> {
        let Some(c) = self.channels.get_mut(&channel) else { return Vec::new() };
        if node != c.client && node != c.server {
            return Vec::new();
        }
        c.set_closed(node);
        let end = c.end(node);
        let dropped = c.streams[end].drain();
        self.forget_current(channel);
        self.tidy(channel);
        dropped
    }

    /// `node`'s host dies: every end it held vanishes, open or orphaned, and its kernel's
    /// retransmissions with it. Peers keep their ends (half-open). Returns the dropped segments.
    pub fn host_down(&mut self, node: NodeId) -> Vec<Seg> {
        let held: Vec<ChannelId> = self
            .channels
            .values()
            .filter(|c| {
                c.is_open_at(node) || ((node == c.client || node == c.server) && !c.streams[c.end(node)].is_idle())
            })
            .map(|c| c.id)
            .collect();
        held.into_iter().flat_map(|ch| self.abort(ch, node)).collect()
    }

    /// The stream `from` writes on, for its retransmission timer.
    pub fn direction(&self, channel: ChannelId, from: NodeId) -> usize {
        self.channels.get(&channel).map_or(0, |c| c.end(from))
    }

    /// `node` learns its peer is gone (a FIN or an RST arrived): its application closes its end
    /// too, and whatever it still had queued will never be read. Returns whether the end was
    /// open, and the segments dropped.
    pub fn peer_closed(&mut self, channel: ChannelId, node: NodeId) -> (bool, Vec<Seg>) {
        let was_open = self.channels.get(&channel).is_some_and(|c| c.is_open_at(node));
        if !was_open {
            return (false, Vec::new());
        }
        (true, self.abort(channel, node))
    }

    /// A connection that never came up: gone from both tables.
    fn discard(&mut self, channel: ChannelId) {
        if let Some(c) = self.channels.get(&channel) {
            if self.current.get(&(c.client, c.server, c.pool)) == Some(&channel) {
                self.current.remove(&(c.client, c.server, c.pool));
            }
        }
        self.channels.remove(&channel);
    }

    fn forget_current(&mut self, channel: ChannelId) {
        let Some(c) = self.channels.get(&channel) else { return };
        if !c.open_at_client && self.current.get(&(c.client, c.server, c.pool)) == Some(&channel) {
            self.current.remove(&(c.client, c.server, c.pool));
        }
    }

    fn tidy(&mut self, channel: ChannelId) {
        if self.channels.get(&channel).is_some_and(Channel::is_finished) {
            self.forget_current(channel);
            self.channels.remove(&channel);
        }
    }

    /// Decides a segment's fate as it reaches `to`.
    pub fn arrive(&mut self, now: SimTime, channel: ChannelId, to: NodeId) -> Arrival {
        let (state, host_up) = (self.proc(to).state, self.proc(to).host_up);
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
        match self.attempt(from, to, rng) {
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
    Reuse,
    /// As a pooling HTTP client sends: a request does not wait behind a connection still being
    /// set up (another request's), it leases a new one, which becomes the current channel. The
    /// older connect goes on alone and fails or succeeds for its request. The connections are
    /// the given pool's, apart from the process's other clients' (see [`Pool`]).
    Pooled(Pool),
    /// Always a new connection, which becomes the current channel — a gRPC client's new
    /// `ManagedChannel` while its old connection to the same server is still open.
    Fresh,
}
