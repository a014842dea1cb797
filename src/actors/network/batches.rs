//! One driver pass's deliveries, gathered per endpoint: a name server that 500 brokers register
//! with in the same millisecond is woken once, with all 500, not 500 times.

use crate::actors::inbox::Endpoint;
use crate::sim::ids::NodeId;
use crate::sim::packet::Packet;
use actix::prelude::*;
use std::rc::Rc;

/// Every packet one endpoint receives in one pass over an instant, as one actix message. Each
/// endpoint handles them in arrival order with its own `Handler<Packet>`.
///
/// A lone packet travels in the message itself. Most messages of the RocketMQ bench carry one
/// (a broker's registration reaching a name server, a name server's answer reaching the
/// broker, each at an instant of its own), and a vector for each was an allocation and a free
/// that Java has no counterpart for: 455,000 an hour. With the lone packet inline (and the
/// handler called at two places, below), the bench ran about 4% faster in alternating
/// wall-time rounds (per-round medians 0.89–0.99 of the former time in three measures,
/// 2026-12-06), for 0.8% fewer instructions.
///
/// An endpoint's `Handler<Packets>` (`packet_endpoint!`) calls its `Handler<Packet>` once per
/// form. One loop over an iterator of either form, with one call, cost the Nacos bench 30
/// instructions a packet more: each packet was copied out of the iterator's state and in again.
pub enum Packets {
    One(Packet),
    Many(Vec<Packet>),
}

impl Message for Packets {
    type Result = ();
}

/// Implements `Handler<Packets>` for endpoint actors by handing each packet to their
/// `Handler<Packet>` in order, and their inbox's `Handler<Delivery>` (`local_actor!`).
#[macro_export]
macro_rules! packet_endpoint {
    ($($actor:ty),* $(,)?) => {$(
        $crate::local_actor!(endpoints: $actor; parts:);
        impl actix::Handler<$crate::actors::network::Packets> for $actor {
            type Result = ();
            fn handle(&mut self, packets: $crate::actors::network::Packets, ctx: &mut actix::Context<Self>) {
                // Two calls of the handler, one per form (see `Packets`).
                match packets {
                    $crate::actors::network::Packets::One(p) => {
                        <Self as actix::Handler<$crate::sim::packet::Packet>>::handle(self, p, ctx)
                    }
                    $crate::actors::network::Packets::Many(packets) => {
                        for p in packets {
                            <Self as actix::Handler<$crate::sim::packet::Packet>>::handle(self, p, ctx);
                        }
                    }
                }
            }
        }
    )*};
}

/// The most room a new batch reserves ahead (a batch still grows past it as needed).
const MAX_BATCH_RESERVE: usize = 255;

/// Who receives each node's packets: the process's endpoint actor and, in a process with two
/// actors on the wire, the second one, its part, for the peers whose traffic is its own.
///
/// A RocketMQ client process is both: its route client talks to the name servers, and its
/// producers to the brokers, over one `NettyRemotingClient` in Java, whose response table
/// hands each answer straight to the request that waits for it. Until 2026-12-06 the route
/// client took every packet and passed the brokers' on to the producers, one actix message
/// each: 3.6 million an hour in the bench's producers case, a message per send that Java has
/// no counterpart for.
///
/// The parts have a vector of their own, read only when a batch is sent: the endpoints, which
/// every delivered packet looks at, stay 16 bytes a node.
#[derive(Default)]
pub(super) struct Endpoints {
    main: Vec<Option<Rc<dyn Endpoint>>>,
    parts: Vec<Option<Box<Part>>>,
}

struct Part {
    /// By node id: whether this actor takes what that peer sends (and the notices about it,
    /// which the network writes as coming from the peer).
    peers: Vec<bool>,
    to: Rc<dyn Endpoint>,
}

impl Part {
    fn takes(&self, from: NodeId) -> bool {
        self.peers.get(from.0 as usize).copied().unwrap_or(false)
    }
}

impl Endpoints {
    /// A new node, with no endpoint yet.
    pub(super) fn add(&mut self) {
        self.main.push(None);
        self.parts.push(None);
    }

    /// `node`'s endpoint from now on, without a part (`None`: its packets are dropped).
    pub(super) fn set(&mut self, node: NodeId, endpoint: Option<Rc<dyn Endpoint>>) {
        self.main[node.0 as usize] = endpoint;
        self.parts[node.0 as usize] = None;
    }

    /// `to` takes what `peers` send `node`.
    pub(super) fn share(&mut self, node: NodeId, peers: impl IntoIterator<Item = NodeId>, to: Rc<dyn Endpoint>) {
        let mut takes = vec![false; self.main.len()];
        for peer in peers.into_iter().map(|p| p.0 as usize) {
            if peer >= takes.len() {
                takes.resize(peer + 1, false);
            }
            takes[peer] = true;
        }
        self.parts[node.0 as usize] = Some(Box::new(Part { peers: takes, to }));
    }

    /// Whether anyone takes `node`'s packets.
    #[inline]
    pub(super) fn has(&self, node: NodeId) -> bool {
        self.main[node.0 as usize].is_some()
    }
}

/// Packets gathered per node during one pass, sent in order of first arrival. The network
/// keeps one for the whole run: a pass usually reaches one or two endpoints, and a map built
/// per pass cost an allocation each time.
#[derive(Default)]
pub(super) struct Batches {
    /// This pass's batches, in order of their node's first packet. A batch sent early (before
    /// a timer of its node) leaves its place empty, and a later packet for that node refills
    /// it: the order is the nodes', as it was when each pass sent the batches by node.
    order: Vec<(NodeId, Option<Packets>)>,
    /// By node id: one more than the node's place in `order` (0: none this pass). Four bytes a
    /// node, where a batch held by node id would take a packet's room (72 bytes) for each.
    place: Vec<u32>,
}

impl Batches {
    /// Adds `packet` to its node's batch (a node without an endpoint drops it).
    /// `more` says how many entries of this instant follow it: a second packet makes room for
    /// them, since a provider's hundred beats, or their hundred answers, arrive together.
    ///
    /// Inlined into the driver's loop, which nearly every packet of a run passes through: as a
    /// call, saving and restoring the loop's registers cost 20 instructions a packet.
    #[inline(always)]
    pub(super) fn gather(&mut self, packet: Packet, endpoints: &Endpoints, more: usize) {
        let place = self.place_of(packet.to);
        // At a busy instant the node's batch already holds several: one push.
        if place != 0 {
            if let (_, Some(Packets::Many(packets))) = &mut self.order[place - 1] {
                return packets.push(packet);
            }
        }
        self.start(place, packet, endpoints, more);
    }

    /// `packet` is the first of its node's batch in this pass, or the first since the batch
    /// was sent, or the second (the batch becomes a vector).
    #[inline(always)]
    fn start(&mut self, place: usize, packet: Packet, endpoints: &Endpoints, more: usize) {
        let to = packet.to;
        if place == 0 {
            if endpoints.has(to) {
                self.open(to, Packets::One(packet), endpoints);
            }
            return;
        }
        let batch = &mut self.order[place - 1].1;
        match batch.take() {
            None => *batch = Some(Packets::One(packet)),
            Some(Packets::One(first)) => {
                let mut packets = Vec::with_capacity(2 + more.min(MAX_BATCH_RESERVE));
                packets.push(first);
                packets.push(packet);
                *batch = Some(Packets::Many(packets));
            }
            // `gather` pushes onto a vector itself; this arm only keeps the match whole.
            Some(Packets::Many(mut packets)) => {
                packets.push(packet);
                *batch = Some(Packets::Many(packets));
            }
        }
    }

    /// Takes `packets`, all for one node, as the pass's first batch (none is gathered yet): what
    /// `gather` would have made of them one by one.
    pub(super) fn adopt(&mut self, mut packets: Vec<Packet>, endpoints: &Endpoints) {
        debug_assert!(self.is_empty(), "adopted as the pass's first batch");
        let Some(to) = packets.first().map(|p| p.to) else { return };
        let batch = match packets.len() {
            1 => Packets::One(packets.pop().expect("one packet")),
            _ => Packets::Many(packets),
        };
        self.open(to, batch, endpoints);
    }

    /// `to`'s batch in this pass, which it had none of. In line, as `start` is.
    #[inline(always)]
    fn open(&mut self, to: NodeId, batch: Packets, endpoints: &Endpoints) {
        if self.place.len() < endpoints.main.len() {
            self.place.resize(endpoints.main.len(), 0);
        }
        self.order.push((to, Some(batch)));
        self.place[to.0 as usize] = self.order.len() as u32;
    }

    /// Whether no batch is gathered in this pass.
    pub(super) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Sends `packet` as a batch of its own, as `flush_all` would send a pass's only packet.
    pub(super) fn send_alone(&mut self, packet: Packet, endpoints: &Endpoints) {
        Self::send(packet.to, Packets::One(packet), endpoints, false);
    }

    /// Sends what `node`'s endpoint has gathered, before one of its timers fires: what reached
    /// a process first is handled first.
    ///
    /// A part's packets wait for the end of the pass, after every timer of the instant: as
    /// they did when they came by way of the endpoint, which passed them on only once it ran.
    /// That order is also the one a Java client resumed from SIGSTOP shows: a thread whose
    /// `waitResponse` timed out during the pause returns the moment it runs again, while the
    /// answer that arrived meanwhile still has to be read and decoded by the Netty thread, so
    /// the send fails (`tests/regressions/rocketmq-a-paused-client-under-a-claimed-send.toml`).
    pub(super) fn flush_node(&mut self, node: NodeId, endpoints: &Endpoints) {
        let place = self.place_of(node);
        if place == 0 {
            return;
        }
        let slot = &mut self.order[place - 1].1;
        if let Some(packets) = slot.take() {
            *slot = Self::send(node, packets, endpoints, true);
        }
    }

    /// Sends `node`'s batch, divided between its endpoint and its part if it has one; gives
    /// back the part's share when `hold_part`, to be sent later. Endpoints change only in
    /// actors' handlers, never during a pass, so the endpoint is the one the packets were
    /// gathered for; holding a clone of its address per batch instead cost two allocations
    /// (actix gives each address clone its own sender state).
    fn send(node: NodeId, packets: Packets, endpoints: &Endpoints, hold_part: bool) -> Option<Packets> {
        let main = endpoints.main[node.0 as usize].as_ref()?;
        let Some(part) = &endpoints.parts[node.0 as usize] else {
            main.deliver(packets);
            return None;
        };
        let (theirs, ours) = match packets {
            Packets::One(p) if part.takes(p.from) => (Some(Packets::One(p)), None),
            one @ Packets::One(_) => (None, Some(one)),
            // Nearly always all one side's: a producer's answers, or a route poll's.
            Packets::Many(packets) if packets.iter().all(|p| part.takes(p.from)) => {
                (Some(Packets::Many(packets)), None)
            }
            Packets::Many(packets) if !packets.iter().any(|p| part.takes(p.from)) => {
                (None, Some(Packets::Many(packets)))
            }
            Packets::Many(packets) => {
                let (theirs, ours): (Vec<Packet>, Vec<Packet>) = packets.into_iter().partition(|p| part.takes(p.from));
                (Some(Packets::Many(theirs)), Some(Packets::Many(ours)))
            }
        };
        if let Some(ours) = ours {
            main.deliver(ours);
        }
        match (theirs, hold_part) {
            (Some(theirs), true) => Some(theirs),
            (Some(theirs), false) => {
                part.to.deliver(theirs);
                None
            }
            (None, _) => None,
        }
    }

    /// Sends every batch still held, in order, and leaves the list empty (its memory kept for
    /// the next pass).
    pub(super) fn flush_all(&mut self, endpoints: &Endpoints) {
        for (node, packets) in self.order.drain(..) {
            self.place[node.0 as usize] = 0;
            if let Some(packets) = packets {
                Self::send(node, packets, endpoints, false);
            }
        }
    }

    /// One more than `node`'s place in `order` this pass; 0 when it has none.
    #[inline(always)]
    fn place_of(&self, node: NodeId) -> usize {
        self.place.get(node.0 as usize).map_or(0, |&p| p as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::network::IdleGate;
    use crate::sim::ids::{ChannelId, MsgId};
    use crate::sim::packet::{Body, CloseKind, Notice};
    use std::cell::RefCell;

    type Log = Rc<RefCell<Vec<(u32, &'static str, Vec<MsgId>)>>>;

    /// An endpoint that writes down each message it gets: its node, its form, its packets.
    struct Recorder(u32, Log);

    impl Actor for Recorder {
        type Context = Context<Self>;
    }

    crate::local_actor!(endpoints: Recorder; parts:);

    impl Handler<Packets> for Recorder {
        type Result = ();
        fn handle(&mut self, packets: Packets, _: &mut Context<Self>) {
            let (form, ids) = match packets {
                Packets::One(p) => ("one", vec![p.id]),
                Packets::Many(ps) => ("many", ps.iter().map(|p| p.id).collect()),
            };
            self.1.borrow_mut().push((self.0, form, ids));
        }
    }

    fn packet(id: MsgId, to: u32) -> Packet {
        let notice = Notice::ChannelClosed { channel: ChannelId(1), peer: NodeId(9), kind: CloseKind::Fin };
        Packet { id, from: NodeId(9), to: NodeId(to), channel: ChannelId(1), body: Body::Notice(notice) }
    }

    /// Two passes. In the first, the endpoints are woken in the order of their first packet,
    /// each once, with all its packets (node 2 has no endpoint and gets nothing). In the second,
    /// a batch sent early (before a timer of node 0) goes alone, and what follows it at the
    /// same instant goes at the end of the pass; the places of the first pass are forgotten.
    /// (An actor runs all the messages it has when its task runs, in the order it was woken:
    /// that is the order the log shows.)
    #[test]
    fn batches_wake_endpoints_in_the_order_of_their_first_packet() {
        let log: Log = Rc::default();
        let got = log.clone();
        IdleGate::default().block_on(async move {
            let mut endpoints = Endpoints::default();
            for node in 0..3 {
                endpoints.add();
                if node < 2 {
                    let recorder = crate::actors::inbox::Local::new();
                    recorder.start(Recorder(node, log.clone()));
                    endpoints.set(NodeId(node), Some(recorder.endpoint()));
                }
            }
            // Started, as a run's actors are before its first pass.
            settle().await;
            let mut batches = Batches::default();
            batches.gather(packet(1, 1), &endpoints, 3);
            batches.gather(packet(2, 0), &endpoints, 2);
            batches.gather(packet(3, 2), &endpoints, 1);
            batches.gather(packet(4, 1), &endpoints, 0);
            batches.flush_all(&endpoints);
            settle().await;
            batches.gather(packet(5, 0), &endpoints, 3);
            batches.flush_node(NodeId(0), &endpoints);
            batches.gather(packet(6, 0), &endpoints, 2);
            batches.gather(packet(7, 0), &endpoints, 1);
            batches.gather(packet(8, 1), &endpoints, 0);
            batches.flush_all(&endpoints);
            settle().await;
        });
        let expected = vec![
            (1, "many", vec![1, 4]),
            (0, "one", vec![2]),
            (0, "one", vec![5]),
            (0, "many", vec![6, 7]),
            (1, "one", vec![8]),
        ];
        assert_eq!(*got.borrow(), expected);
    }

    /// A batch adopted whole (an instant of packets all for one process) is the pass's batch for
    /// its node: what the same instant gathers later for that node joins it, and other nodes'
    /// batches follow it, as if its packets had been gathered one by one.
    #[test]
    fn an_adopted_batch_takes_later_packets_for_its_node() {
        let log: Log = Rc::default();
        let got = log.clone();
        IdleGate::default().block_on(async move {
            let mut endpoints = Endpoints::default();
            for node in 0..2 {
                endpoints.add();
                let recorder = crate::actors::inbox::Local::new();
                recorder.start(Recorder(node, log.clone()));
                endpoints.set(NodeId(node), Some(recorder.endpoint()));
            }
            settle().await;
            let mut batches = Batches::default();
            batches.adopt(vec![packet(1, 1), packet(2, 1)], &endpoints);
            batches.gather(packet(3, 0), &endpoints, 1);
            batches.gather(packet(4, 1), &endpoints, 0);
            batches.flush_all(&endpoints);
            settle().await;
            batches.adopt(vec![packet(5, 0)], &endpoints);
            batches.flush_all(&endpoints);
            settle().await;
        });
        let expected = vec![(1, "many", vec![1, 2, 4]), (0, "one", vec![3]), (0, "one", vec![5])];
        assert_eq!(*got.borrow(), expected);
    }

    /// Lets the woken endpoints run.
    async fn settle() {
        for _ in 0..4 {
            crate::actors::runtime::yield_now().await;
        }
    }
}
