//! What every actor holds: the network handle, the observer, its process and its trace label.
//!
//! Not an actor itself — the few lines every actor would otherwise repeat: reading virtual time,
//! recording a trace event, sending a packet, and setting a timer that comes back as a message.

use crate::actors::inbox::Local;
use crate::actors::network::{Net, Sent, TimerId};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::digest::BeatFields;
use crate::sim::ids::{ChannelId, MsgId, NodeId};
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use crate::sim::notes::What;
use crate::sim::observe::Obs;
use crate::sim::packet::Body;
use crate::sim::trace::TraceEvent;
use actix::prelude::*;
use std::rc::Rc;

#[derive(Clone)]
pub struct Env {
    pub net: Net,
    /// Shared, not copied: every actor holds an `Env`, and an `Obs` is two cache lines of
    /// pointers that recording an event reads. A thousand brokers' own copies, each read once
    /// per registration round 30 s apart, were a cache miss per round each
    /// (docs/speed-history.md, "RocketMQ's wall-time gap in three factors").
    pub obs: Rc<Obs>,
    /// The process this actor belongs to; its timers die with it.
    pub node: NodeId,
    /// Which incarnation of the process (bumped on every restart).
    pub epoch: u32,
    /// The actor's name in the trace: `a0`, `ns1`, `ns1/scanner`, ...
    pub label: Name,
    /// Test-only planted bug, if any.
    pub mutation: Option<Mutation>,
}

impl Env {
    /// The same process, another actor in it (`ns1` → `ns1/scanner`).
    pub fn part(&self, suffix: &str) -> Env {
        Env { label: Name::from(format!("{}/{suffix}", self.label)), ..self.clone() }
    }

    pub fn now(&self) -> SimTime {
        self.net.now()
    }

    /// False once this incarnation of the process died (see [`Net::alive`]).
    pub fn alive(&self) -> bool {
        self.net.alive(self.node, self.epoch)
    }

    /// The process exits on its own: its shutdown hook has finished. Only the current
    /// incarnation can exit. A `restart` may come while a slow hook still runs (each of its
    /// requests can wait out a connect or read timeout in a cut network). The restart replaces
    /// the old incarnation, and the old hook's late end must not stop the new one.
    pub fn exit(&self) {
        if self.alive() {
            self.net.stop_process(self.node, crate::actors::network::Stop::Exit);
        }
    }

    /// Inlined, so that the note is built straight into its trace event (see
    /// [`Obs::record_event`]).
    #[inline(always)]
    pub fn record(&self, what: impl Into<What>) {
        if self.alive() {
            self.obs.record_event(TraceEvent { t: self.now(), actor: self.label, what: what.into() });
        }
    }

    /// `record` of a beat's answer, the one event every Nacos 1.x beat makes. Its fields go to
    /// the observer as they are, which builds an event only if something besides the digest
    /// reads it (`Obs::record_beat`). Through `record`, the note was built by the caller, then
    /// copied into the event and read back at once in other widths than it was written (a stall
    /// on the store buffer per beat, 3% of the Nacos bench's time). Inlined into the answer's
    /// handling since the event is no longer built here: as a call it was 1% of that bench's
    /// instructions.
    #[inline]
    pub fn record_beat(&self, instance: Name, server: Name, light: bool, code: i32, next: Option<SimDuration>) {
        if self.alive() {
            self.obs.record_beat(self.now(), self.label, BeatFields { instance, server, light, code, next });
        }
    }

    /// Sends from this process; a dead one sends nothing (id 0).
    pub fn send(&self, to: NodeId, body: Body) -> MsgId {
        self.net.send_via_live(self.node, self.epoch, to, body, None).id
    }

    /// `send`, with the channel and its connect time (see [`Sent`]); a dead process sends
    /// nothing (id 0). `last` is the channel the previous request to `to` went on, if the
    /// caller kept it: it spares the network a look-up (see `Net::send_via_live`). Inlined into
    /// every request's send: as a call of its own around the network's, it was 0.8% of the
    /// Nacos bench's instructions.
    #[inline(always)]
    pub fn send_via(&self, to: NodeId, body: Body, last: Option<ChannelId>) -> Sent {
        self.net.send_via_live(self.node, self.epoch, to, body, last)
    }

    pub fn send_on(&self, channel: ChannelId, body: Body) -> MsgId {
        self.net.send_on_live(self.node, self.epoch, channel, body)
    }

    /// Delivers `msg` to `to` after `delay` of virtual time (the agenda's timer, not tokio's).
    /// `to` is an actor's address, nearly always its own.
    pub fn after<A, M>(&self, delay: SimDuration, to: Local<A>, msg: M) -> TimerId
    where
        A: Actor<Context = Context<A>> + Handler<M, Result = ()>,
        M: Message<Result = ()> + 'static,
    {
        self.net.after(self.node, delay, move || to.do_send(msg))
    }

    /// When a fixed-rate task scheduled for `scheduled` runs next: `scheduled + period`, or now
    /// if that has passed (Java's `scheduleAtFixedRate` catches up after a stall, one run at a
    /// time).
    pub fn fixed_rate_delay(&self, scheduled: SimTime, period: SimDuration) -> (SimTime, SimDuration) {
        let next = scheduled + period;
        (next, next.since(self.now()))
    }
}

/// Stops an actor (its process died or exited).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Stop;
