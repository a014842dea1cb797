//! The network's state, and what it does with a send, a close and its own TCP timers: how
//! a segment is scheduled or held, how a close reaches the other end, what a retransmission
//! or SYN timer finds. What happens to an entry as it comes due is in `admit.rs`.

use super::alarm::Alarm;
use super::idle::IdleGate;
use crate::sim::agenda::Agenda;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, MsgId, NodeId, ProcState};
use crate::sim::name::Name;
use crate::sim::network::{FinFate, Handshake, Miss, NetCore, Retransmission, Seg, SendOutcome};
use crate::sim::notes::{DropReason, FinNote, NetNote, What};
use crate::sim::observe::Obs;
use crate::sim::packet::{Body, CloseKind, Notice, Packet};
use crate::sim::rng::SimRng;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::ptr::addr_of_mut;
use std::rc::Rc;

/// One agenda entry.
///
/// Its tag is a whole word (`repr(u64)`), so that the payload starts on the word after it. The
/// driver moves each entry out of the agenda's buffer onto its stack, the tag into a register
/// and the rest in 16-byte pieces from just after the tag; a packet read back from the stack
/// at its own offset then lines up with those pieces. With a 4-byte tag every such read
/// straddled two of them, which the CPU cannot forward from its store buffer: a stall per
/// entry, 4% of the Nacos bench's sampled time.
#[repr(u64)]
pub(super) enum Due {
    /// A TCP segment reaches its destination's kernel. Its tag is named: `write_deliver` writes
    /// it.
    Deliver(Packet) = DELIVER,
    /// A UDP datagram reaches its destination's kernel.
    Datagram(Packet),
    Notice {
        to: NodeId,
        epoch: u32,
        notice: Notice,
    },
    Timer {
        owner: NodeId,
        epoch: u32,
        id: u64,
        fire: Box<dyn FnOnce()>,
    },
    /// An alarm's entry (see `alarm.rs`): it rings, like a timer, only if its owner's deadline
    /// has come, and otherwise moves to it.
    Alarm {
        owner: NodeId,
        epoch: u32,
        id: u64,
        alarm: Rc<Alarm>,
    },
    /// Netty's `IdleStateHandler` on `node`'s end: a timer of that process, so it waits while
    /// the process is stopped.
    IdleCheck {
        channel: ChannelId,
        node: NodeId,
        epoch: u32,
    },
    /// A stream's retransmission timer, run by the sender's kernel whatever its process does.
    Retransmit {
        channel: ChannelId,
        dir: usize,
    },
    /// A connect's SYN retransmission timer.
    Syn {
        channel: ChannelId,
    },
}

const DELIVER: u64 = 0;

/// What a `Deliver` entry is in memory: an enum with a primitive representation is laid out as
/// a `repr(C)` union of `repr(C)` structs, each its variant's fields after the tag (the
/// Reference, "Primitive representation of enums with fields").
#[repr(C)]
struct DeliverRepr {
    tag: u64,
    packet: Packet,
}

impl Due {
    /// Writes `Due::Deliver(packet)` at `slot` one field at a time, so that each goes straight
    /// from where it is into the agenda's bucket (see `Agenda::room`). Inlined, the `Packet`
    /// written here is never put together anywhere: its fields are stored into the slot.
    ///
    /// # Safety
    /// `slot` is valid for writes of a `Due`, and holds nothing that needs dropping.
    #[inline(always)]
    pub(super) unsafe fn write_deliver(slot: *mut Due, packet: Packet) {
        let Packet { id, from, to, channel, body } = packet;
        let slot = slot.cast::<DeliverRepr>();
        // SAFETY: `DeliverRepr` is `Due::Deliver`'s layout, and the caller lends the memory.
        unsafe {
            addr_of_mut!((*slot).tag).write(DELIVER);
            let p = addr_of_mut!((*slot).packet);
            addr_of_mut!((*p).id).write(id);
            addr_of_mut!((*p).from).write(from);
            addr_of_mut!((*p).to).write(to);
            addr_of_mut!((*p).channel).write(channel);
            addr_of_mut!((*p).body).write(body);
        }
    }
}

pub(super) struct Kernel {
    pub(super) core: NetCore,
    pub(super) agenda: Agenda<Due>,
    pub(super) rng: SimRng,
    pub(super) endpoints: super::batches::Endpoints,
    pub(super) parked: BTreeMap<NodeId, Vec<Due>>,
    /// Each node's Netty idle time (server or client side), if it closes idle channels.
    pub(super) idle_timeout: BTreeMap<NodeId, SimDuration>,
    /// Segments the network holds for retransmission, by message id.
    pub(super) held: FxHashMap<MsgId, Packet>,
    pub(super) cancelled: BTreeSet<u64>,
    pub(super) next_msg: MsgId,
    pub(super) next_timer: u64,
    /// Virtual now, as the driver last set it.
    pub(super) now: SimTime,
    /// How the driver waits (see [`IdleGate`]).
    pub(super) gate: IdleGate,
    pub(super) obs: Obs,
    pub(super) net_actor: Name,
}

impl Kernel {
    /// An entry for the current instant runs without waiting for the runtime to go idle.
    ///
    /// Every packet sent passes here, and nearly every one is due later: the compare is inlined
    /// into the send, and only a poke pays for a call (out of line, it was 18 instructions a
    /// packet, 1.2% of the Nacos bench).
    #[inline]
    pub(super) fn poke_if_now(&self, at: SimTime) {
        if at <= self.now {
            self.gate.poke();
        }
    }

    pub(super) fn push(&mut self, at: SimTime, due: Due) {
        self.agenda.push(at, due);
        self.poke_if_now(at);
    }

    pub(super) fn note(&mut self, now: SimTime, note: NetNote) {
        self.obs.record(now, self.net_actor, What::Net(note));
    }

    pub(super) fn names(&self, a: NodeId, b: NodeId) -> (String, String) {
        (self.core.name(a).to_string(), self.core.name(b).to_string())
    }

    /// Whether incarnation `epoch` of `node` still runs (or is stopped): not dead, not replaced.
    #[inline(always)]
    pub(super) fn alive(&self, node: NodeId, epoch: u32) -> bool {
        let p = self.core.proc(node);
        p.state != ProcState::Down && p.epoch == epoch
    }

    pub(super) fn epoch(&self, node: NodeId) -> u32 {
        self.core.proc(node).epoch
    }

    /// A process's segments that will never be sent: forget their bodies.
    pub(super) fn forget(&mut self, segs: Vec<Seg>) {
        for seg in segs {
            if let Seg::Data(id) = seg {
                self.held.remove(&id);
            }
        }
    }

    pub(super) fn next_id(&mut self) -> MsgId {
        self.next_msg += 1;
        self.next_msg
    }

    /// A new channel: both ends' idle timers start when the handshake completes.
    fn opened(&mut self, now: SimTime, channel: ChannelId, client: NodeId, server: NodeId) {
        let (c, s) = self.names(client, server);
        self.note(now, NetNote::Opened { channel, client: c, server: s });
        let connected = self.core.channel(channel).map_or(now, |c| c.connected_at);
        for node in [client, server] {
            if let Some(idle) = self.idle_timeout.get(&node).copied() {
                let epoch = self.epoch(node);
                self.push(connected + idle, Due::IdleCheck { channel, node, epoch });
            }
        }
    }

    /// What a send does, by its outcome. Nearly every send goes out on an open channel: that
    /// case is inlined into the send, a push onto the agenda, and the rest is a call. As one
    /// out-of-line function, passing the outcome and the body through memory and back cost
    /// 49 instructions a packet, 3.5% of the Nacos bench.
    #[inline]
    pub(super) fn apply_send(
        &mut self,
        now: SimTime,
        id: MsgId,
        from: NodeId,
        to: NodeId,
        outcome: SendOutcome,
        body: Body,
    ) -> MsgId {
        match outcome {
            SendOutcome::Deliver { channel, at, opened: false } => {
                // The room first, the packet after: given the packet built (as an argument to a
                // helper that takes the room), the compiler put it together on the stack before
                // finding the bucket and copied it from there, 3-5% slower on the Nacos bench.
                let mut room = self.agenda.room(at);
                // SAFETY: the slot is inside the bucket, free, and written whole below.
                unsafe {
                    Due::write_deliver(room.slot(), Packet { id, from, to, channel, body });
                    room.filled();
                }
                self.poke_if_now(at);
                id
            }
            outcome => self.apply_send_rare(now, id, from, to, outcome, body),
        }
    }

    #[inline(never)]
    fn apply_send_rare(
        &mut self,
        now: SimTime,
        id: MsgId,
        from: NodeId,
        to: NodeId,
        outcome: SendOutcome,
        body: Body,
    ) -> MsgId {
        match outcome {
            SendOutcome::Deliver { channel, at, opened } => {
                if opened {
                    self.opened(now, channel, from, to);
                }
                self.push(at, Due::Deliver(Packet { id, from, to, channel, body }));
            }
            SendOutcome::Held { channel, opened, miss, retransmit_at } => {
                if opened {
                    self.opened(now, channel, from, to);
                }
                self.held.insert(id, Packet { id, from, to, channel, body });
                if let Some(at) = retransmit_at {
                    let dir = self.core.direction(channel, from);
                    self.push(at, Due::Retransmit { channel, dir });
                }
                if let (Some(miss), Some(retry_at)) = (miss, retransmit_at) {
                    let msg = self.held[&id].body.kind();
                    let (from, to) = self.names(from, to);
                    let reason = DropReason::from(miss);
                    self.note(now, NetNote::Lost { channel, from, to, msg, reason, attempt: 0, retry_at });
                }
            }
            SendOutcome::Connecting { channel, miss, syn_at } => {
                self.held.insert(id, Packet { id, from, to, channel, body });
                self.push(syn_at, Due::Syn { channel });
                self.syn_missed(now, channel, (from, to), miss, 0, syn_at);
            }
            SendOutcome::ConnectFailed { at, reason } => {
                let epoch = self.epoch(from);
                let notice = Notice::SendFailed { msg: id, to, reason };
                self.push(at, Due::Notice { to: from, epoch, notice });
                let (f, t) = self.names(from, to);
                self.note(now, NetNote::ConnectFailed { from: f, to: t, msg: body.kind(), reason });
            }
            SendOutcome::Closed => {}
        }
        id
    }

    /// A FIN that reaches `to` at `at` tells its application the channel closed.
    fn fin_arrives(&mut self, at: SimTime, channel: ChannelId, from: NodeId, to: NodeId) {
        let epoch = self.epoch(to);
        let notice = Notice::ChannelClosed { channel, peer: from, kind: CloseKind::Fin };
        self.push(at, Due::Notice { to, epoch, notice });
    }

    pub(super) fn close(
        &mut self,
        now: SimTime,
        by: NodeId,
        channel: ChannelId,
        reason: &'static str,
        kind: CloseKind,
    ) {
        let Some(closing) = self.core.close(now, channel, by, &mut self.rng) else { return };
        self.forget(closing.dropped);
        let fin = match closing.fin {
            FinFate::Arrives(at) => {
                self.fin_arrives(at, channel, by, closing.peer);
                FinNote::Sent
            }
            FinFate::Held { miss, retransmit_at } => {
                if let Some(at) = retransmit_at {
                    let dir = self.core.direction(channel, by);
                    self.push(at, Due::Retransmit { channel, dir });
                }
                miss.map_or(FinNote::Queued, |m| FinNote::Lost(m.into()))
            }
            FinFate::Unheard => FinNote::Unheard,
        };
        let (by_name, peer_name) = self.names(by, closing.peer);
        self.note(now, NetNote::Closed { channel, by: by_name, peer: peer_name, reason, fin });
        // Netty fires channelInactive on the closing side as well.
        let epoch = self.epoch(by);
        let local = Notice::ChannelClosed { channel, peer: closing.peer, kind };
        self.push(now, Due::Notice { to: by, epoch, notice: local });
    }

    /// A stream's retransmission timer fired.
    pub(super) fn retransmit(&mut self, now: SimTime, channel: ChannelId, dir: usize) {
        match self.core.retransmit(now, channel, dir, &mut self.rng) {
            Retransmission::Idle => {}
            Retransmission::Failed { from, to, head, miss, attempt, next } => {
                self.push(next, Due::Retransmit { channel, dir });
                let msg = match head {
                    Seg::Data(id) => self.held.get(&id).map_or("segment", |p| p.body.kind()),
                    Seg::Fin => "FIN",
                };
                let (from, to) = self.names(from, to);
                let reason = DropReason::from(miss);
                self.note(now, NetNote::Lost { channel, from, to, msg, reason, attempt, retry_at: next });
            }
            Retransmission::Delivered { from, to, segs, attempt, waited, again } => {
                let segments = segs.len();
                for (seg, at) in segs {
                    match seg {
                        Seg::Data(id) => {
                            if let Some(packet) = self.held.remove(&id) {
                                self.push(at, Due::Deliver(packet));
                            }
                        }
                        Seg::Fin => self.fin_arrives(at, channel, from, to),
                    }
                }
                if let Some(at) = again {
                    self.push(at, Due::Retransmit { channel, dir });
                }
                let (from, to) = self.names(from, to);
                self.note(now, NetNote::Retransmitted { channel, from, to, attempt, waited, segments });
            }
            Retransmission::GaveUp { from, to, segs, orphan, waited } => {
                let segments = segs.len();
                self.forget(segs);
                if !orphan {
                    // The application's read fails with ETIMEDOUT: its channel closes.
                    let epoch = self.epoch(from);
                    let notice = Notice::ChannelClosed { channel, peer: to, kind: CloseKind::TimedOut };
                    self.push(now, Due::Notice { to: from, epoch, notice });
                }
                let (from, to) = self.names(from, to);
                self.note(now, NetNote::GaveUp { channel, from, to, segments, waited, orphan });
            }
        }
    }

    /// A connect's SYN timer fired.
    pub(super) fn syn_retry(&mut self, now: SimTime, channel: ChannelId) {
        match self.core.syn_retry(now, channel, &mut self.rng) {
            Handshake::Idle => {}
            Handshake::Again { from, to, miss, attempt, next } => {
                self.push(next, Due::Syn { channel });
                self.syn_missed(now, channel, (from, to), miss, attempt, next);
            }
            Handshake::Connected { from, to, delivered, retransmit_at, .. } => {
                self.opened(now, channel, from, to);
                for (seg, at) in delivered {
                    if let Some(packet) = self.take_held(seg) {
                        self.push(at, Due::Deliver(packet));
                    }
                }
                if let Some(at) = retransmit_at {
                    self.push(at, Due::Retransmit { channel, dir: 0 });
                }
            }
            Handshake::Failed { from, to, at, reason, segs } => {
                let epoch = self.epoch(from);
                let mut msg = "connect";
                for seg in segs {
                    if let Some(packet) = self.take_held(seg) {
                        msg = packet.body.kind();
                        let notice = Notice::SendFailed { msg: packet.id, to, reason };
                        self.push(at, Due::Notice { to: from, epoch, notice });
                    }
                }
                let (f, t) = self.names(from, to);
                self.note(now, NetNote::ConnectFailed { from: f, to: t, msg, reason });
            }
        }
    }

    /// A SYN found no answer in time; the handshake's next step is at `next`.
    fn syn_missed(
        &mut self,
        now: SimTime,
        channel: ChannelId,
        ends: (NodeId, NodeId),
        miss: Miss,
        attempt: u32,
        next: SimTime,
    ) {
        let (from, to) = self.names(ends.0, ends.1);
        let note = match miss {
            Miss::Slow => NetNote::SlowConnect { channel, from, to, timeout_at: next },
            miss => {
                let reason = DropReason::from(miss);
                NetNote::Lost { channel, from, to, msg: "SYN", reason, attempt, retry_at: next }
            }
        };
        self.note(now, note);
    }

    fn take_held(&mut self, seg: Seg) -> Option<Packet> {
        match seg {
            Seg::Data(id) => self.held.remove(&id),
            Seg::Fin => None,
        }
    }
}
