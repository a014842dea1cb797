//! One driver pass's deliveries, gathered per endpoint: a name server that 500 brokers register
//! with in the same millisecond is woken once, with all 500, not 500 times.

use super::Packets;
use crate::sim::ids::NodeId;
use crate::sim::packet::Packet;
use actix::prelude::*;

/// The most room a new batch reserves ahead (a batch still grows past it as needed).
const MAX_BATCH_RESERVE: usize = 255;

/// Packets gathered per endpoint during one pass, sent in order of first arrival. The network
/// keeps one for the whole run: a pass usually reaches one or two endpoints, and a map built
/// per pass cost an allocation each time.
#[derive(Default)]
pub(super) struct Batches {
    order: Vec<NodeId>,
    /// By node id: that endpoint's batch, if it has one in this pass.
    pending: Vec<Option<Vec<Packet>>>,
}

impl Batches {
    /// Adds `packet` to its endpoint's batch (a node without an endpoint drops it).
    /// `more` says how many entries of this instant follow it: a new batch is made room for
    /// them, since a provider's hundred beats, or their hundred answers, arrive together.
    ///
    /// Inlined into the driver's loop, which nearly every packet of a run passes through: as a
    /// call, saving and restoring the loop's registers cost 20 instructions a packet.
    #[inline(always)]
    pub(super) fn gather(&mut self, packet: Packet, endpoints: &[Option<Recipient<Packets>>], more: usize) {
        let to = packet.to;
        if self.pending.len() < endpoints.len() {
            self.pending.resize_with(endpoints.len(), || None);
        }
        let batch = &mut self.pending[to.0 as usize];
        match batch {
            Some(packets) => packets.push(packet),
            None if endpoints[to.0 as usize].is_none() => {}
            None => {
                self.order.push(to);
                let mut packets = Vec::with_capacity(1 + more.min(MAX_BATCH_RESERVE));
                packets.push(packet);
                *batch = Some(packets);
            }
        }
    }

    /// Sends `node`'s batch. Endpoints change only in actors' handlers, never during a pass,
    /// so the endpoint is the one the packets were gathered for; holding a clone of its address
    /// per batch instead cost two allocations (actix gives each address clone its own sender
    /// state).
    pub(super) fn flush(&mut self, node: NodeId, endpoints: &[Option<Recipient<Packets>>]) {
        if let Some(packets) = self.pending.get_mut(node.0 as usize).and_then(Option::take) {
            if let Some(endpoint) = &endpoints[node.0 as usize] {
                endpoint.do_send(Packets(packets));
            }
        }
    }

    pub(super) fn flush_all(&mut self, endpoints: &[Option<Recipient<Packets>>]) {
        let mut order = std::mem::take(&mut self.order);
        for node in order.drain(..) {
            self.flush(node, endpoints);
        }
        // Keep the list's memory for the next pass.
        self.order = order;
    }
}
