//! The kernel's verdict on each agenda entry as it comes due: whether a timer still belongs to
//! a live process, who receives a packet, datagram or notice (or whether it waits for a stopped
//! process, resets, or is dropped), and what an idle check finds.

use super::kernel::{Due, Kernel};
use crate::sim::clock::SimTime;
use crate::sim::ids::{ChannelId, NodeId, ProcState};
use crate::sim::network::{Arrival, IdleCheck};
use crate::sim::notes::{DropReason, NetNote};
use crate::sim::packet::{Body, CloseKind, Notice, Packet};

/// A due timer's process is running, stopped (the timer waits for its resume), or gone: dead,
/// or a later incarnation, whose actors are new and set timers of their own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum TimerFate {
    Runs,
    Waits,
    Gone,
}

impl Kernel {
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
        match self.timer_fate(owner, epoch) {
            TimerFate::Gone => None,
            TimerFate::Waits => {
                self.parked.entry(owner).or_default().push(Due::Timer { owner, epoch, id, fire });
                None
            }
            TimerFate::Runs => Some(fire),
        }
    }

    /// What becomes of a timer (or an alarm) of incarnation `epoch` of `owner` as it comes due.
    pub(super) fn timer_fate(&self, owner: NodeId, epoch: u32) -> TimerFate {
        let p = self.core.proc(owner);
        match p.state {
            _ if p.epoch != epoch => TimerFate::Gone,
            ProcState::Down => TimerFate::Gone,
            ProcState::Hung => TimerFate::Waits,
            ProcState::Running => TimerFate::Runs,
        }
    }

    /// What becomes of `packet` as it reaches its destination: `Accept` with an endpoint to
    /// take it is a delivery; anything else goes to [`Self::turn_away`]. Decided by reference,
    /// so the packet of a delivery (nearly every one) moves once, into its batch.
    pub(super) fn arrival(&mut self, now: SimTime, packet: &Packet) -> (Arrival, bool) {
        let arrival = self.core.arrive(now, packet.channel, packet.to);
        (arrival, arrival == Arrival::Accept && self.endpoints.has(packet.to))
    }

    /// Carries out the `arrival` of a packet not delivered now: parked, reset or discarded
    /// (accepted by a process without an endpoint, it is dropped).
    pub(super) fn turn_away(&mut self, now: SimTime, arrival: Arrival, packet: Packet) {
        match arrival {
            Arrival::Accept => {}
            Arrival::Park => {
                self.parked.entry(packet.to).or_default().push(Due::Deliver(packet));
            }
            Arrival::Reset => {
                let (from, to) = self.names(packet.from, packet.to);
                let msg = packet.body.kind();
                self.note(now, NetNote::Reset { channel: packet.channel, from, to, msg });
                // The RST travels back (it is not retransmitted: across a cut it is lost, and
                // the sender's end stays open until its own timeout). Its end closes when it
                // arrives.
                if self.core.rules.reachable(packet.to, packet.from) {
                    let (was_open, dropped) = self.core.peer_closed(packet.channel, packet.from);
                    self.forget(dropped);
                    if was_open {
                        let at = now + self.core.rules.params(packet.to, packet.from).latency;
                        let epoch = self.epoch(packet.from);
                        let notice =
                            Notice::ChannelClosed { channel: packet.channel, peer: packet.to, kind: CloseKind::Reset };
                        self.push(at, Due::Notice { to: packet.from, epoch, notice });
                    }
                }
            }
            Arrival::Discard => {
                let (from, to) = self.names(packet.from, packet.to);
                let msg = packet.body.kind();
                self.note(now, NetNote::Dropped { from, to, msg, reason: DropReason::NoHost });
            }
        }
    }

    /// A datagram reaching its destination: taken if someone listens, buffered while the
    /// process is stopped.
    pub(super) fn arrive_datagram(&mut self, now: SimTime, packet: Packet) -> Option<Packet> {
        let p = self.core.proc(packet.to);
        match p.state {
            ProcState::Running if self.endpoints.has(packet.to) => Some(packet),
            ProcState::Hung => {
                self.parked.entry(packet.to).or_default().push(Due::Datagram(packet));
                None
            }
            _ => {
                let reason = if p.host_up { DropReason::NoListener } else { DropReason::NoHost };
                let (from, to) = self.names(packet.from, packet.to);
                self.note(now, NetNote::Dropped { from, to, msg: packet.body.kind(), reason });
                None
            }
        }
    }

    pub(super) fn admit_notice(&mut self, to: NodeId, epoch: u32, notice: Notice) -> Option<Packet> {
        let (state, current_epoch) = (self.core.proc(to).state, self.epoch(to));
        if current_epoch != epoch || state == ProcState::Down {
            return None;
        }
        if let Notice::ChannelClosed { channel, kind: CloseKind::Fin, .. } = notice {
            // The FIN closes this end too (the application sees channelInactive) — unless this
            // end had closed already, in which case nobody is left to see it.
            let (was_open, dropped) = self.core.peer_closed(channel, to);
            self.forget(dropped);
            if !was_open {
                return None;
            }
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
        self.endpoints.has(to).then_some(packet)
    }

    /// `node`'s idle timer on `channel`: close it if nothing was read or written for the idle
    /// time, else look again when that would be.
    pub(super) fn idle_check(&mut self, now: SimTime, channel: ChannelId, node: NodeId, epoch: u32) {
        match self.timer_fate(node, epoch) {
            TimerFate::Gone => return,
            TimerFate::Waits => {
                self.parked.entry(node).or_default().push(Due::IdleCheck { channel, node, epoch });
                return;
            }
            TimerFate::Runs => {}
        }
        let Some(idle) = self.idle_timeout.get(&node).copied() else { return };
        match self.core.idle_check(now, channel, node, idle) {
            IdleCheck::Gone => {}
            IdleCheck::Fire => self.close(now, node, channel, "idle", CloseKind::Idle),
            IdleCheck::Later(at) => self.push(at, Due::IdleCheck { channel, node, epoch }),
        }
    }
}
