//! Closing a connection: an application's close (a FIN queued behind its data), an abort, a
//! host that goes down (its ends vanish, the peers' stay half-open), and the bookkeeping that
//! forgets a channel once both ends are closed.

use super::{Channel, Closing, FinFate, NetCore, Seg, Tx};
use crate::sim::clock::SimTime;
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::rng::SimRng;

impl NetCore {
    /// `by`'s application closes its end. The FIN queues behind anything still unsent. `None`
    /// when that end was closed already.
    pub fn close(&mut self, now: SimTime, channel: ChannelId, by: NodeId, rng: &mut SimRng) -> Option<Closing> {
        let c = self.channels.get_mut(&channel)?;
        if !c.is_open_at(by) {
            return None;
        }
        let peer = c.peer_of(by);
        if c.syn().is_some() {
            // Never connected: the connect is abandoned and what waited for it with it.
            let dropped = c.drain(0);
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
        let dropped = c.drain(end);
        self.forget_current(channel);
        self.tidy(channel);
        dropped
    }

    /// `node`'s host dies: every end it held vanishes, open or orphaned, and its kernel's
    /// retransmissions with it. Peers keep their ends (half-open). Returns the dropped segments.
    pub fn host_down(&mut self, node: NodeId) -> Vec<Seg> {
        let held = self
            .channels
            .ids_where(|c| c.is_open_at(node) || ((node == c.client || node == c.server) && !c.is_idle(c.end(node))));
        held.into_iter().flat_map(|ch| self.abort(ch, node)).collect()
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
    pub(super) fn discard(&mut self, channel: ChannelId) {
        if let Some(c) = self.channels.get(&channel) {
            if self.current.get(&(c.client, c.server, c.pool)) == Some(&channel) {
                self.current.remove(&(c.client, c.server, c.pool));
            }
        }
        self.channels.remove(&channel);
    }

    pub(super) fn forget_current(&mut self, channel: ChannelId) {
        let Some(c) = self.channels.get_mut(&channel) else { return };
        if !c.open_at_client && self.current.get(&(c.client, c.server, c.pool)) == Some(&channel) {
            c.current = false;
            self.current.remove(&(c.client, c.server, c.pool));
        }
    }

    pub(super) fn tidy(&mut self, channel: ChannelId) {
        if self.channels.get(&channel).is_some_and(Channel::is_finished) {
            self.forget_current(channel);
            self.channels.remove(&channel);
        }
    }
}
