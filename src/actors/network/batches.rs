//! One driver pass's deliveries, gathered per endpoint: a name server that 500 brokers register
//! with in the same millisecond is woken once, with all 500, not 500 times.

use super::Packets;
use crate::sim::ids::NodeId;
use crate::sim::packet::Packet;
use actix::prelude::*;
use std::collections::BTreeMap;

/// The most room a new batch reserves ahead (a batch still grows past it as needed).
const MAX_BATCH_RESERVE: usize = 255;

/// Packets gathered per endpoint during one pass, sent in order of first arrival.
#[derive(Default)]
pub(super) struct Batches {
    order: Vec<NodeId>,
    pending: BTreeMap<NodeId, (Recipient<Packets>, Vec<Packet>)>,
}

impl Batches {
    /// Adds `packet` to its endpoint's batch; the endpoint's address is cloned once per batch.
    /// `more` is how many entries are still due in this instant: a new batch is made room for
    /// them, since a provider's hundred beats, or their hundred answers, arrive together.
    pub(super) fn gather(&mut self, packet: Packet, endpoints: &[Option<Recipient<Packets>>], more: usize) {
        let to = packet.to;
        match self.pending.get_mut(&to) {
            Some((_, packets)) => packets.push(packet),
            None => {
                let Some(endpoint) = endpoints[to.0 as usize].clone() else { return };
                self.order.push(to);
                let mut packets = Vec::with_capacity(1 + more.min(MAX_BATCH_RESERVE));
                packets.push(packet);
                self.pending.insert(to, (endpoint, packets));
            }
        }
    }

    pub(super) fn flush(&mut self, node: NodeId) {
        if let Some((endpoint, packets)) = self.pending.remove(&node) {
            endpoint.do_send(Packets(packets));
        }
    }

    pub(super) fn flush_all(&mut self) {
        for node in std::mem::take(&mut self.order) {
            self.flush(node);
        }
    }
}
