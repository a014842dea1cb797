//! One driver pass's deliveries, gathered per endpoint: a name server that 500 brokers register
//! with in the same millisecond is woken once, with all 500, not 500 times.

use super::Packets;
use crate::sim::ids::NodeId;
use crate::sim::packet::Packet;
use actix::prelude::*;

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
    main: Vec<Option<Recipient<Packets>>>,
    parts: Vec<Option<Box<Part>>>,
}

struct Part {
    /// By node id: whether this actor takes what that peer sends (and the notices about it,
    /// which the network writes as coming from the peer).
    peers: Vec<bool>,
    to: Recipient<Packets>,
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
    pub(super) fn set(&mut self, node: NodeId, endpoint: Option<Recipient<Packets>>) {
        self.main[node.0 as usize] = endpoint;
        self.parts[node.0 as usize] = None;
    }

    /// `to` takes what `peers` send `node`.
    pub(super) fn share(&mut self, node: NodeId, peers: impl IntoIterator<Item = NodeId>, to: Recipient<Packets>) {
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
    order: Vec<NodeId>,
    /// By node id: that node's batch, if it has one in this pass. A node with a part has one
    /// batch, divided only when it is sent: the packets of every other node pass no test.
    pending: Vec<Option<Vec<Packet>>>,
}

impl Batches {
    /// Adds `packet` to its node's batch (a node without an endpoint drops it).
    /// `more` says how many entries of this instant follow it: a new batch is made room for
    /// them, since a provider's hundred beats, or their hundred answers, arrive together.
    ///
    /// Inlined into the driver's loop, which nearly every packet of a run passes through: as a
    /// call, saving and restoring the loop's registers cost 20 instructions a packet.
    #[inline(always)]
    pub(super) fn gather(&mut self, packet: Packet, endpoints: &Endpoints, more: usize) {
        let to = packet.to;
        if self.pending.len() < endpoints.main.len() {
            self.pending.resize_with(endpoints.main.len(), || None);
        }
        let batch = &mut self.pending[to.0 as usize];
        match batch {
            Some(packets) => packets.push(packet),
            None if !endpoints.has(to) => {}
            None => {
                self.order.push(to);
                let mut packets = Vec::with_capacity(1 + more.min(MAX_BATCH_RESERVE));
                packets.push(packet);
                *batch = Some(packets);
            }
        }
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
        self.flush(node, endpoints, true);
    }

    /// Sends `node`'s batch, divided between its endpoint and its part if it has one (the
    /// part's share stays for later when `hold_part`). Endpoints change only in actors'
    /// handlers, never during a pass, so the endpoint is the one the packets were gathered
    /// for; holding a clone of its address per batch instead cost two allocations (actix gives
    /// each address clone its own sender state).
    fn flush(&mut self, node: NodeId, endpoints: &Endpoints, hold_part: bool) {
        let Some(slot) = self.pending.get_mut(node.0 as usize) else { return };
        let Some(packets) = slot.take() else { return };
        let Some(main) = &endpoints.main[node.0 as usize] else { return };
        let Some(part) = &endpoints.parts[node.0 as usize] else { return main.do_send(Packets(packets)) };
        // Nearly always all one side's: a producer's answers, or a route poll's.
        let (theirs, ours): (Vec<Packet>, Vec<Packet>) = if packets.iter().all(|p| part.takes(p.from)) {
            (packets, Vec::new())
        } else if !packets.iter().any(|p| part.takes(p.from)) {
            (Vec::new(), packets)
        } else {
            packets.into_iter().partition(|p| part.takes(p.from))
        };
        if !ours.is_empty() {
            main.do_send(Packets(ours));
        }
        match (theirs.is_empty(), hold_part) {
            (true, _) => {}
            (false, true) => *slot = Some(theirs),
            (false, false) => part.to.do_send(Packets(theirs)),
        }
    }

    pub(super) fn flush_all(&mut self, endpoints: &Endpoints) {
        let mut order = std::mem::take(&mut self.order);
        for node in order.drain(..) {
            self.flush(node, endpoints, false);
        }
        // Keep the list's memory for the next pass.
        self.order = order;
    }
}
