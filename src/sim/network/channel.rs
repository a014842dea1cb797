//! One TCP connection as both kernels see it, and the table of them.

use super::tcp::{Stream, Syn};
use crate::sim::clock::SimTime;
use crate::sim::ids::{ChannelId, NodeId};

/// One TCP connection, opened by `client` to `server`.
#[derive(Clone, Debug)]
pub struct Channel {
    pub id: ChannelId,
    pub client: NodeId,
    pub server: NodeId,
    /// The client's pool this connection belongs to (see `Pool`).
    pub pool: super::Pool,
    /// Whether this is the channel the client's table of current channels names for its
    /// server and pool (`NetCore::current`), kept with that table, so that a send naming it
    /// needs no look in the table.
    pub(super) current: bool,
    /// Whether each end's application still holds its socket.
    pub open_at_client: bool,
    pub open_at_server: bool,
    /// When the handshake completed: nothing the client writes leaves before.
    pub connected_at: SimTime,
    /// While the handshake is still retrying its SYN: when it began, and the retry timer.
    pub syn: Option<Syn>,
    /// Per end (client, server): the last time that end's application read or wrote on the
    /// channel. Netty's `IdleStateHandler` counts only its own end's reads and writes — a
    /// request lost in a partition was written by the sender but never read by the receiver.
    last_io: [SimTime; 2],
    /// Per direction: client → server, server → client.
    pub(super) streams: [Stream; 2],
}

impl Channel {
    pub(super) fn new(id: ChannelId, client: NodeId, server: NodeId, connected_at: SimTime) -> Self {
        let stream = Stream { next_free: connected_at, ..Stream::default() };
        Channel {
            id,
            client,
            server,
            pool: super::Pool::DEFAULT,
            current: false,
            open_at_client: true,
            open_at_server: true,
            connected_at,
            syn: None,
            last_io: [connected_at; 2],
            streams: [stream.clone(), stream],
        }
    }

    /// The handshake completed at `at`: both ends' clocks and streams start there.
    pub(super) fn connected(&mut self, at: SimTime) {
        self.syn = None;
        self.connected_at = at;
        self.last_io = [at; 2];
        for s in &mut self.streams {
            s.next_free = at;
        }
    }

    pub fn peer_of(&self, node: NodeId) -> NodeId {
        if node == self.client {
            self.server
        } else {
            self.client
        }
    }

    /// Whether `node`'s end is open; false for a node that is neither end.
    pub fn is_open_at(&self, node: NodeId) -> bool {
        (node == self.client && self.open_at_client) || (node == self.server && self.open_at_server)
    }

    /// 0 for the client's end (and the client → server stream), 1 for the server's.
    pub(super) fn end(&self, node: NodeId) -> usize {
        usize::from(node != self.client)
    }

    pub(super) fn set_closed(&mut self, node: NodeId) {
        if node == self.client {
            self.open_at_client = false;
        } else if node == self.server {
            self.open_at_server = false;
        }
    }

    /// The last read or write of `node`'s application on this channel.
    pub fn last_io(&self, node: NodeId) -> SimTime {
        self.last_io[self.end(node)]
    }

    pub(super) fn touch(&mut self, node: NodeId, now: SimTime) {
        let end = self.end(node);
        self.last_io[end] = self.last_io[end].max(now);
    }

    /// Both applications let go and no kernel has anything left to send: the connection is gone.
    pub(super) fn is_finished(&self) -> bool {
        !self.open_at_client && !self.open_at_server && self.streams.iter().all(Stream::is_idle)
    }
}

/// Channels by id. Ids come from a counter, so a vector indexed by id is a map without hashing
/// or comparisons — every packet looks its channel up.
#[derive(Default)]
pub(super) struct Channels(Vec<Option<Channel>>);

impl Channels {
    pub(super) fn get(&self, id: &ChannelId) -> Option<&Channel> {
        self.0.get(id.0 as usize).and_then(Option::as_ref)
    }

    pub(super) fn get_mut(&mut self, id: &ChannelId) -> Option<&mut Channel> {
        self.0.get_mut(id.0 as usize).and_then(Option::as_mut)
    }

    pub(super) fn insert(&mut self, id: ChannelId, c: Channel) {
        let i = id.0 as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i] = Some(c);
    }

    pub(super) fn remove(&mut self, id: &ChannelId) {
        if let Some(slot) = self.0.get_mut(id.0 as usize) {
            *slot = None;
        }
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &Channel> {
        self.0.iter().flatten()
    }
}

impl std::ops::Index<&ChannelId> for Channels {
    type Output = Channel;
    fn index(&self, id: &ChannelId) -> &Channel {
        self.get(id).expect("channel exists")
    }
}
