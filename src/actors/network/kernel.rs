//! The network actor's state and its verdicts on each agenda entry: who receives a packet,
//! which timers still belong to a live process, how a close reaches the other end.

use crate::sim::agenda::Agenda;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::network::{Arrival, NetCore, ProcState, SendOutcome};
use crate::sim::notes::{DropReason, NetNote, What};
use crate::sim::observe::Obs;
use crate::sim::packet::{Body, CloseKind, MsgId, Notice, Packet};
use crate::sim::rng::SimRng;
use actix::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::time::Instant;

/// One agenda entry.
pub(super) enum Due {
    Deliver(Packet),
    Notice { to: NodeId, epoch: u32, notice: Notice },
    Timer { owner: NodeId, epoch: u32, id: u64, fire: Box<dyn FnOnce()> },
    IdleCheck { channel: ChannelId, server: NodeId },
}

pub(super) struct Kernel {
    pub(super) core: NetCore,
    pub(super) agenda: Agenda<Due>,
    pub(super) rng: SimRng,
    pub(super) endpoints: Vec<Option<Recipient<super::Packets>>>,
    pub(super) parked: BTreeMap<NodeId, Vec<Due>>,
    pub(super) idle_timeout: BTreeMap<NodeId, SimDuration>,
    pub(super) cancelled: BTreeSet<u64>,
    pub(super) next_msg: MsgId,
    pub(super) next_timer: u64,
    pub(super) origin: Instant,
    /// Virtual now as of the driver's last wake.
    pub(super) now: SimTime,
    /// The instant the driver sleeps until, if it sleeps.
    pub(super) armed: Option<SimTime>,
    pub(super) notify: Rc<Notify>,
    pub(super) obs: Obs,
    pub(super) net_actor: Arc<str>,
}

impl Kernel {
    pub(super) fn wake_if_earlier(&mut self, at: SimTime) {
        if self.armed.is_some_and(|armed| at < armed) {
            self.armed = None;
            self.notify.notify_one();
        }
    }

    pub(super) fn push(&mut self, at: SimTime, due: Due) {
        self.agenda.push(at, due);
        self.wake_if_earlier(at);
    }

    pub(super) fn note(&mut self, now: SimTime, note: NetNote) {
        let actor = self.net_actor.clone();
        self.obs.record(now, &actor, What::Net(note));
    }

    pub(super) fn names(&self, a: NodeId, b: NodeId) -> (String, String) {
        (self.core.name(a).to_string(), self.core.name(b).to_string())
    }

    pub(super) fn apply_send(
        &mut self,
        now: SimTime,
        from: NodeId,
        to: NodeId,
        outcome: SendOutcome,
        body: Body,
    ) -> MsgId {
        self.next_msg += 1;
        let id = self.next_msg;
        let msg = body.kind();
        match outcome {
            SendOutcome::Deliver { channel, at, opened } => {
                if opened {
                    let (client, server) = self.names(from, to);
                    self.note(now, NetNote::Opened { channel, client, server });
                    if let Some(idle) = self.idle_timeout.get(&to).copied() {
                        self.push(now + idle, Due::IdleCheck { channel, server: to });
                    }
                }
                self.push(at, Due::Deliver(Packet { id, from, to, channel, body }));
            }
            SendOutcome::Lost { .. } | SendOutcome::Cut { .. } => {
                let reason =
                    if matches!(outcome, SendOutcome::Lost { .. }) { DropReason::Lost } else { DropReason::Cut };
                let (from, to) = self.names(from, to);
                self.note(now, NetNote::Dropped { from, to, msg, reason });
            }
            SendOutcome::ConnectFailed { at, reason } => {
                let epoch = self.core.proc(from).epoch;
                let notice = Notice::SendFailed { msg: id, to, reason };
                self.push(at, Due::Notice { to: from, epoch, notice });
                let (f, t) = self.names(from, to);
                self.note(now, NetNote::ConnectFailed { from: f, to: t, msg, reason });
            }
            SendOutcome::Closed => {}
        }
        id
    }

    pub(super) fn close(
        &mut self,
        now: SimTime,
        by: NodeId,
        channel: ChannelId,
        reason: &'static str,
        kind: CloseKind,
    ) {
        let Some(fin) = self.core.close(now, channel, by) else { return };
        let (by_name, peer_name) = self.names(by, fin.peer);
        self.note(now, NetNote::Closed { channel, by: by_name, peer: peer_name, reason, fin: fin.arrives.is_some() });
        // Netty fires channelInactive on the closing side as well.
        let epoch = self.core.proc(by).epoch;
        let local = Notice::ChannelClosed { channel, peer: fin.peer, kind };
        self.push(now, Due::Notice { to: by, epoch, notice: local });
        if let Some(at) = fin.arrives {
            let epoch = self.core.proc(fin.peer).epoch;
            let remote = Notice::ChannelClosed { channel, peer: by, kind: CloseKind::Fin };
            self.push(at, Due::Notice { to: fin.peer, epoch, notice: remote });
        }
    }

    pub(super) fn admit_timer(
        &mut self,
        owner: NodeId,
        epoch: u32,
        id: u64,
        fire: Box<dyn FnOnce()>,
    ) -> Option<Box<dyn FnOnce()>> {
        if self.cancelled.remove(&id) {
            return None;
        }
        let p = self.core.proc(owner);
        match p.state {
            _ if p.epoch != epoch => None,
            ProcState::Down => None,
            ProcState::Hung => {
                self.parked.entry(owner).or_default().push(Due::Timer { owner, epoch, id, fire });
                None
            }
            ProcState::Running => Some(fire),
        }
    }

    /// The packet if it is to be delivered now to its (existing) endpoint.
    pub(super) fn arrive(&mut self, now: SimTime, packet: Packet) -> Option<Packet> {
        match self.core.arrive(now, packet.channel, packet.to) {
            Arrival::Accept => self.endpoints[packet.to.0 as usize].is_some().then_some(packet),
            Arrival::Park => {
                self.parked.entry(packet.to).or_default().push(Due::Deliver(packet));
                None
            }
            Arrival::Reset => {
                let (from, to) = self.names(packet.from, packet.to);
                let msg = packet.body.kind();
                self.note(now, NetNote::Reset { channel: packet.channel, from, to, msg });
                // The RST travels back; the sender's end closes when it arrives.
                if self.core.peer_closed(packet.channel, packet.from) {
                    let at = now + self.core.rules.params(packet.to, packet.from).latency;
                    let epoch = self.core.proc(packet.from).epoch;
                    let notice =
                        Notice::ChannelClosed { channel: packet.channel, peer: packet.to, kind: CloseKind::Reset };
                    self.push(at, Due::Notice { to: packet.from, epoch, notice });
                }
                None
            }
            Arrival::Discard => {
                let (from, to) = self.names(packet.from, packet.to);
                let msg = packet.body.kind();
                self.note(now, NetNote::Dropped { from, to, msg, reason: DropReason::NoHost });
                None
            }
        }
    }

    pub(super) fn admit_notice(&mut self, _now: SimTime, to: NodeId, epoch: u32, notice: Notice) -> Option<Packet> {
        let (state, current_epoch) = (self.core.proc(to).state, self.core.proc(to).epoch);
        if current_epoch != epoch || state == ProcState::Down {
            return None;
        }
        if let Notice::ChannelClosed { channel, kind: CloseKind::Fin, .. } = notice {
            // The FIN closes this end too (the application sees channelInactive).
            self.core.peer_closed(channel, to);
        }
        if state == ProcState::Hung {
            // Parked as a notice, not as a packet: a connect failure has no channel for
            // `arrive` to find, and would be discarded on resume.
            self.parked.entry(to).or_default().push(Due::Notice { to, epoch, notice });
            return None;
        }
        let (channel, from) = match &notice {
            Notice::ChannelClosed { channel, peer, .. } => (*channel, *peer),
            Notice::SendFailed { to: peer, .. } => (ChannelId(0), *peer),
        };
        let packet = Packet { id: 0, from, to, channel, body: Body::Notice(notice) };
        self.endpoints[to.0 as usize].is_some().then_some(packet)
    }

    pub(super) fn idle_check(&mut self, now: SimTime, channel: ChannelId, server: NodeId) {
        let Some(idle) = self.idle_timeout.get(&server).copied() else { return };
        let Some(c) = self.core.channel(channel) else { return };
        if !c.is_open_at(server) {
            return;
        }
        let quiet_until = c.last_io + idle;
        if now >= quiet_until {
            self.close(now, server, channel, "idle", CloseKind::Idle);
        } else {
            self.push(quiet_until, Due::IdleCheck { channel, server });
        }
    }
}
