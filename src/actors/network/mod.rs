//! The network: the one place virtual time advances.
//!
//! Every timer an actor sets and every packet in flight is an entry in one agenda, and the
//! network's driver ([`Net::start_driver`]; not an actor, it takes no messages) is the only
//! thing that moves virtual time: when no actor has anything left to do (see [`IdleGate`]), to
//! the earliest entry. So moving to instant `t` proves that all work of earlier
//! instants is finished; that is where `at` expectations look at the state. The driver's step,
//! in order:
//!
//! 1. wait until every actor is idle, then move to the earliest entry (an actor that adds an
//!    entry for the current instant wakes it at once, without moving time);
//! 2. let the observer check the state left by every earlier instant;
//! 3. pop every entry due now, in insertion order, and deliver it: a packet goes to its
//!    endpoint's inbox (or is parked, reset or discarded), a timer runs its closure.
//!
//! Actors hand packets and timers to the network synchronously through [`Net`] — like writing to
//! a socket buffer — and receive them as actix messages.

mod admit;
mod alarm;
mod batches;
mod driver;
mod idle;
mod kernel;

pub use alarm::Alarm;
pub use batches::Packets;
pub use idle::IdleGate;

use crate::actors::inbox::Endpoint;
use crate::sim::agenda::Agenda;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, MsgId, NodeId, ProcState};
use crate::sim::name::Name;
use crate::sim::network::{Datagram, Lease, LinkRules, NetCore, Pool, Seg, SendOutcome};
use crate::sim::notes::{NetNote, RunNote, What};
use crate::sim::observe::Obs;
use crate::sim::packet::{Body, CloseKind, Packet};
use crate::sim::rng::SimRng;
use actix::prelude::*;
use batches::Endpoints;
use kernel::{Due, Kernel};
use rustc_hash::FxHashMap;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Packets reach their endpoint as actix messages.
impl Message for Packet {
    type Result = ();
}

/// What a send did: the message's id, the channel it went on (none when no connection could
/// be made), and when that connection is up (none while its SYN is still being retried).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    pub id: MsgId,
    pub channel: Option<ChannelId>,
    pub up: Option<SimTime>,
}

/// A timer handle, for cancelling: its id and when it is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimerId(u64, SimTime);

/// How a process stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `kill -9` on a live host: the kernel closes its sockets, peers get FINs.
    Kill,
    /// Host crash or power-off: nothing is closed, peers keep half-open channels.
    HostDown,
    /// The process closed everything itself (graceful shutdown) and exits.
    Exit,
}

/// The handle every actor holds. Cheap to clone; single-threaded by design.
#[derive(Clone)]
pub struct Net(Rc<Shared>);

/// The network's state, and virtual now beside it.
///
/// Actors ask for the time far more often than for anything else of the network (a Nacos
/// beat asks five times between its run and its answer's handling): a copy in a `Cell` answers
/// without the `RefCell`'s borrow flag, checked, raised and lowered at each asking. The kernel
/// keeps its own copy for its own methods; the driver sets both, and nothing else moves time.
struct Shared {
    now: Cell<SimTime>,
    kernel: RefCell<Kernel>,
}

/// `net.0.borrow()` and `net.0.borrow_mut()` reach the kernel.
impl std::ops::Deref for Shared {
    type Target = RefCell<Kernel>;
    fn deref(&self) -> &RefCell<Kernel> {
        &self.kernel
    }
}

impl Net {
    pub fn new(rules: LinkRules, connect_timeout: SimDuration, seed: u64, obs: Obs, gate: IdleGate) -> Self {
        let kernel = RefCell::new(Kernel {
            core: NetCore::new(rules, connect_timeout),
            agenda: Agenda::default(),
            rng: SimRng::new(seed),
            endpoints: Endpoints::default(),
            parked: BTreeMap::new(),
            idle_timeout: BTreeMap::new(),
            held: FxHashMap::default(),
            cancelled: BTreeSet::new(),
            next_msg: 0,
            next_timer: 0,
            now: SimTime::ZERO,
            gate,
            obs,
            net_actor: Name::new("net"),
        });
        Net(Rc::new(Shared { now: Cell::new(SimTime::ZERO), kernel }))
    }

    /// Virtual now: milliseconds since the run began. Only the driver moves it.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.0.now.get()
    }

    /// Moves virtual now to `t`, if later: the driver's alone to do.
    fn advance_to(&self, t: SimTime) {
        let mut k = self.0.borrow_mut();
        k.now = t.max(k.now);
        self.0.now.set(k.now);
    }

    pub fn add_node(&self, name: &str) -> NodeId {
        let mut k = self.0.borrow_mut();
        k.endpoints.add();
        k.core.add_node(name)
    }

    pub fn name(&self, node: NodeId) -> String {
        self.0.borrow().core.name(node).to_string()
    }

    pub fn state(&self, node: NodeId) -> ProcState {
        self.0.borrow().core.proc(node).state
    }

    /// Draws from the run's one RNG.
    pub fn with_rng<R>(&self, f: impl FnOnce(&mut SimRng) -> R) -> R {
        f(&mut self.0.borrow_mut().rng)
    }

    /// Edits the link rules (partitions, blocks, loss, latency).
    pub fn with_rules<R>(&self, f: impl FnOnce(&mut LinkRules) -> R) -> R {
        f(&mut self.0.borrow_mut().core.rules)
    }

    /// A process that closes its end of any channel idle for `timeout` (Netty's
    /// `IdleStateHandler(0, 0, timeout)`, ALL_IDLE), server or client side.
    pub fn set_idle_timeout(&self, node: NodeId, timeout: SimDuration) {
        self.0.borrow_mut().idle_timeout.insert(node, timeout);
    }

    /// Starts (or restarts) `node`; `endpoint` receives its packets (`None` for a process that
    /// only keeps timers, like the director).
    /// Returns the new incarnation's epoch.
    pub fn start_process(&self, node: NodeId, endpoint: Option<Rc<dyn Endpoint>>) -> u32 {
        let mut k = self.0.borrow_mut();
        let now = k.now;
        let epoch = k.core.start(node);
        // A new incarnation's actors are new: a second one registers anew (`share_endpoint`).
        k.endpoints.set(node, endpoint);
        k.parked.remove(&node);
        if k.endpoints.has(node) {
            let name = k.core.name(node).to_string();
            k.obs.record(now, k.net_actor, What::Run(RunNote::ProcessStarted { node: name }));
        }
        drop(k);
        self.tell(node, ProcState::Running);
        epoch
    }

    /// A second actor of running process `node` takes what `peers` send it (and the notices
    /// about its channels to them); its endpoint keeps the rest. Until the process stops.
    pub fn share_endpoint(&self, node: NodeId, peers: impl IntoIterator<Item = NodeId>, to: Rc<dyn Endpoint>) {
        self.0.borrow_mut().endpoints.share(node, peers, to);
    }

    /// Whether incarnation `epoch` of `node` may still act. A handler can still run for a process
    /// that died in the same instant (its timer was admitted just before the fault); such a
    /// ghost must neither send nor leave trace events.
    ///
    /// A process *stopped* (SIGSTOP) in that instant is not a ghost: its handler was admitted
    /// while it ran, so it ran before the stop, and what it sends goes out. (Dropping those sends
    /// left a Nacos `BeatTask` waiting for an answer to a request never sent, for ever.)
    pub fn alive(&self, node: NodeId, epoch: u32) -> bool {
        self.0.borrow().alive(node, epoch)
    }

    /// Stops `node`. Its timers and buffered input die with it.
    pub fn stop_process(&self, node: NodeId, how: Stop) {
        let channels = self.0.borrow().core.open_channels_of(node);
        if how != Stop::HostDown {
            // The OS closes whatever sockets the process still holds: each FIN queues behind
            // what the process wrote, and the kernel keeps retransmitting both (orphans).
            let reason = if how == Stop::Kill { "process killed" } else { "process exited" };
            for ch in &channels {
                self.close(node, *ch, reason);
            }
        }
        let mut k = self.0.borrow_mut();
        if how == Stop::HostDown {
            // The dead host's ends, and its kernel's retransmissions, are gone without a FIN:
            // peers keep their ends half-open.
            let dropped = k.core.host_down(node);
            k.forget(dropped);
        }
        k.core.set_state(node, ProcState::Down, how != Stop::HostDown);
        k.endpoints.set(node, None);
        k.parked.remove(&node);
        drop(k);
        self.tell(node, ProcState::Down);
    }

    /// SIGSTOP: from now on the process's input and timers wait.
    pub fn hang(&self, node: NodeId) {
        self.0.borrow_mut().core.set_state(node, ProcState::Hung, true);
        self.tell(node, ProcState::Hung);
    }

    /// Lets the invariant monitor (if any) follow process life.
    fn tell(&self, node: NodeId, state: ProcState) {
        let (obs, name) = {
            let k = self.0.borrow();
            (k.obs.clone(), k.core.name(node).to_string())
        };
        if obs.watches_network() {
            obs.process(self.now(), &name, state);
        }
    }

    /// SIGCONT: everything that waited runs now, in its original order.
    pub fn resume(&self, node: NodeId) {
        let mut k = self.0.borrow_mut();
        let now = k.now;
        k.core.set_state(node, ProcState::Running, true);
        let parked = k.parked.remove(&node).unwrap_or_default();
        let entries = parked.len();
        // Netty's event loop reads the sockets before it runs its due tasks, so buffered input
        // counts as I/O before any idle timer looks.
        let (idle, rest): (Vec<Due>, Vec<Due>) = parked.into_iter().partition(|d| matches!(d, Due::IdleCheck { .. }));
        for due in rest.into_iter().chain(idle) {
            k.agenda.push(now, due);
        }
        k.poke_if_now(now);
        let (actor, name) = (k.net_actor, k.core.name(node).to_string());
        k.obs.record(now, actor, What::Net(NetNote::Unparked { node: name, entries }));
        drop(k);
        self.tell(node, ProcState::Running);
    }

    /// Sends `body` from incarnation `epoch` of `from` to `to` over `from`'s current channel,
    /// opening one if needed, and says which channel it went on and when that connection is up:
    /// what a client needs to match a close to its requests and to start a read timeout. A dead
    /// incarnation sends nothing (id 0). `last` is the channel the client's previous request
    /// to `to` went on, if it kept it (`Sent::channel`): a hint that saves a look-up, never a
    /// choice (see `Lease::Reuse`).
    ///
    /// An actor's own send (`Env::send_via`). The check and the send share one borrow of the
    /// network (two borrows were 0.5% of the Nacos bench, whose every beat and answer is one).
    #[inline(always)]
    pub fn send_via_live(&self, from: NodeId, epoch: u32, to: NodeId, body: Body, last: Option<ChannelId>) -> Sent {
        let mut k = self.0.borrow_mut();
        if !k.alive(from, epoch) {
            return Sent { id: 0, channel: None, up: None };
        }
        Self::send_via_in(&mut k, from, to, body, Lease::Reuse(last))
    }

    /// A send as `send_via_live` makes, without its check of the sender, for a pooling client:
    /// never queued behind a connect in progress (see `NetCore::send_how`), on the connections
    /// of `pool`.
    pub fn send_via_pooled(&self, from: NodeId, to: NodeId, body: Body, pool: Pool) -> Sent {
        self.send_via_how(from, to, body, Lease::Pooled(pool))
    }

    /// A send as `send_via_live` makes, without its check of the sender, on a new connection,
    /// even if one to `to` is open (see `Lease::Fresh`).
    pub fn send_via_fresh(&self, from: NodeId, to: NodeId, body: Body) -> Sent {
        self.send_via_how(from, to, body, Lease::Fresh)
    }

    fn send_via_how(&self, from: NodeId, to: NodeId, body: Body, lease: Lease) -> Sent {
        Self::send_via_in(&mut self.0.borrow_mut(), from, to, body, lease)
    }

    /// Out of line, with the network's `send_how` inlined into it: inlined into each actor's
    /// send instead, it left `send_how` a call of its own (36 instructions a request more).
    #[inline(never)]
    fn send_via_in(k: &mut Kernel, from: NodeId, to: NodeId, body: Body, lease: Lease) -> Sent {
        let now = k.now;
        let id = k.next_id();
        let outcome = k.core.send_how(now, from, to, Seg::Data(id), &mut k.rng, lease);
        let channel = match outcome {
            SendOutcome::Deliver { channel, .. }
            | SendOutcome::Held { channel, .. }
            | SendOutcome::Connecting { channel, .. } => Some(channel),
            SendOutcome::ConnectFailed { .. } | SendOutcome::Closed => None,
        };
        let up = channel.and_then(|c| k.core.channel(c)).filter(|c| c.syn().is_none()).map(|c| c.connected_at);
        k.apply_send(now, id, from, to, outcome, body);
        Sent { id, channel, up }
    }

    /// Sends on a known channel (a reply) from incarnation `epoch` of `from`: nothing (id 0)
    /// once it is dead, and silently nothing if `from` already closed the channel. One borrow
    /// for the check and the send (see [`Self::send_via_live`]).
    #[inline(always)]
    pub fn send_on_live(&self, from: NodeId, epoch: u32, channel: ChannelId, body: Body) -> MsgId {
        let mut k = self.0.borrow_mut();
        if !k.alive(from, epoch) {
            return 0;
        }
        Self::send_on_in(&mut k, from, channel, body)
    }

    fn send_on_in(k: &mut Kernel, from: NodeId, channel: ChannelId, body: Body) -> MsgId {
        let now = k.now;
        let Some(to) = k.core.channel(channel).map(|c| c.peer_of(from)) else { return 0 };
        let id = k.next_id();
        let outcome = k.core.send_on(now, channel, from, Seg::Data(id), &mut k.rng);
        k.apply_send(now, id, from, to, outcome, body)
    }

    /// Sends one UDP datagram: no connection, no retransmission; lost is lost.
    pub fn send_datagram(&self, from: NodeId, to: NodeId, body: Body) -> MsgId {
        let mut k = self.0.borrow_mut();
        let now = k.now;
        let k = &mut *k;
        let id = k.next_id();
        match k.core.datagram(now, from, to, &mut k.rng) {
            Datagram::Arrives(at) => {
                let packet = Packet { id, from, to, channel: ChannelId(0), body };
                k.push(at, Due::Datagram(packet));
            }
            Datagram::Dropped(miss) => {
                let (f, t) = k.names(from, to);
                let msg = body.kind();
                k.note(now, NetNote::Dropped { from: f, to: t, msg, reason: miss.into() });
            }
        }
        id
    }

    /// The application's connect timeout.
    pub fn connect_timeout(&self) -> SimDuration {
        self.0.borrow().core.connect_timeout
    }

    /// The channel `client` currently uses to reach `server`.
    pub fn current_channel(&self, client: NodeId, server: NodeId) -> Option<ChannelId> {
        self.0.borrow().core.current_channel(client, server)
    }

    /// When `channel`'s connection came up; `None` while its connect is in progress or once it
    /// is gone.
    pub fn connected_at(&self, channel: ChannelId) -> Option<SimTime> {
        self.0.borrow().core.channel(channel).filter(|c| c.syn().is_none()).map(|c| c.connected_at)
    }

    /// While `channel`'s SYN is unanswered: when its connect began, and when the handshake takes
    /// its next step (a SYN retransmission, or the connect timeout). `None` once it has
    /// connected or failed.
    pub fn handshake(&self, channel: ChannelId) -> Option<(SimTime, SimTime)> {
        self.0.borrow().core.channel(channel).and_then(|c| c.syn()).map(|syn| (syn.started, syn.due))
    }

    /// Takes back message `msg`, written on `channel` but not yet sent by the sender's clock: it
    /// will not arrive, and no notice about it will come. Either it still waits in its socket
    /// for the connection, or the SYN got through and the connection is up only later (the
    /// SYN-ACK is on its way back): the network scheduled the write when the SYN got through,
    /// to leave when the connection is up, and takes it out of the agenda again. Nothing once
    /// it has left. What was written behind it keeps the arrival times it was given.
    pub fn withdraw(&self, msg: MsgId, channel: ChannelId) {
        let mut k = self.0.borrow_mut();
        let now = k.now;
        if k.held.remove(&msg).is_some() {
            return;
        }
        let Some(c) = k.core.channel(channel).filter(|c| c.syn().is_none() && c.connected_at > now) else { return };
        // It leaves at `connected_at` and arrives within the link's latency and jitter, as they
        // are now: a latency fault within this round trip would hide it, and it would arrive.
        let p = k.core.rules.params(c.client, c.server);
        let first = c.connected_at + p.latency;
        let mut at = first;
        while at <= first + p.jitter {
            if k.agenda.remove(at, |d| matches!(d, Due::Deliver(packet) if packet.id == msg)).is_some() {
                return;
            }
            at += SimDuration(1);
        }
    }

    /// `by` closes its end of `channel`; both ends hear of it as a channel event.
    pub fn close(&self, by: NodeId, channel: ChannelId, reason: &'static str) {
        let now = self.now();
        self.0.borrow_mut().close(now, by, channel, reason, CloseKind::Local);
    }

    /// Runs `fire` after `delay`, unless `owner` has died (or is hung: then on resume).
    pub fn after(&self, owner: NodeId, delay: SimDuration, fire: impl FnOnce() + 'static) -> TimerId {
        let mut k = self.0.borrow_mut();
        let now = k.now;
        k.next_timer += 1;
        let id = k.next_timer;
        let epoch = k.core.proc(owner).epoch;
        k.push(now + delay, Due::Timer { owner, epoch, id, fire: Box::new(fire) });
        TimerId(id, now + delay)
    }

    /// Cancels a timer. One still in the agenda is taken out, so its instant costs nothing;
    /// one already parked (its process is stopped) is dropped when it would run.
    pub fn cancel(&self, timer: TimerId) {
        let mut k = self.0.borrow_mut();
        let TimerId(id, at) = timer;
        if k.agenda.remove(at, |d| matches!(d, Due::Timer { id: i, .. } if *i == id)).is_none() {
            k.cancelled.insert(id);
        }
    }
}

#[cfg(test)]
mod tests;
