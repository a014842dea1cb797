//! One TCP connection as both kernels see it, and the table of them.

use super::tcp::{Stream, Syn};
use super::Seg;
use crate::sim::clock::SimTime;
use crate::sim::ids::{ChannelId, NodeId};

/// One TCP connection, opened by `client` to `server`. Its id is its place in [`Channels`].
///
/// One cache line: everything a write on a flowing channel reads and writes (its ends, its
/// flags, the handshake's end, the last reads and writes, each direction's next free arrival)
/// lies in the line's 60 bytes, and what only a connecting channel or a stalled stream needs is
/// boxed beside it ([`Rare`]). A broker's registration writes on one channel per name server
/// every 30 s, long enough for the channel to leave the caches; laid out as before (about 250
/// bytes, the two streams' backlogs and timers in line), a write touched three lines of it
/// (docs/speed-history.md, "A channel in one line").
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct Channel {
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
    /// Per end (client, server): the last time that end's application read or wrote on the
    /// channel. Netty's `IdleStateHandler` counts only its own end's reads and writes — a
    /// request lost in a partition was written by the sender but never read by the receiver.
    last_io: [SimTime; 2],
    /// Per direction (client → server, server → client): when the last segment handed to the
    /// network arrives. TCP delivers in order, so nothing sent later arrives earlier.
    next_free: [SimTime; 2],
    /// The SYN while the handshake retries it, and each direction's unsent segments and
    /// retransmission timer; `None` while the channel flows, which is nearly always.
    rare: Option<Box<Rare>>,
}

/// What a channel needs only while connecting or while a segment is being retransmitted.
#[derive(Clone, Debug, Default)]
struct Rare {
    /// While the handshake is still retrying its SYN: when it began, and the retry timer.
    syn: Option<Syn>,
    /// Per direction, as `Channel::next_free` is.
    streams: [Stream; 2],
}

impl Rare {
    fn is_empty(&self) -> bool {
        self.syn.is_none() && self.streams.iter().all(|s| s.is_idle() && s.retry.is_none())
    }
}

impl Channel {
    pub(super) fn new(client: NodeId, server: NodeId, connected_at: SimTime) -> Self {
        Channel {
            client,
            server,
            pool: super::Pool::DEFAULT,
            current: false,
            open_at_client: true,
            open_at_server: true,
            connected_at,
            last_io: [connected_at; 2],
            next_free: [connected_at; 2],
            rare: None,
        }
    }

    /// The handshake completed at `at`: both ends' clocks and streams start there.
    pub(super) fn connected(&mut self, at: SimTime) {
        self.set_syn(None);
        self.connected_at = at;
        self.last_io = [at; 2];
        self.next_free = [at; 2];
    }

    /// While the handshake is still retrying its SYN: when it began, and the retry timer.
    pub fn syn(&self) -> Option<Syn> {
        self.rare.as_ref().and_then(|r| r.syn)
    }

    pub(super) fn set_syn(&mut self, syn: Option<Syn>) {
        match syn {
            Some(_) => self.rare.get_or_insert_with(Box::default).syn = syn,
            None => {
                if let Some(rare) = &mut self.rare {
                    rare.syn = None;
                }
                self.settle();
            }
        }
    }

    /// Direction `dir`'s unsent segments and timer, made if the channel had none.
    pub(super) fn stream_mut(&mut self, dir: usize) -> &mut Stream {
        &mut self.rare.get_or_insert_with(Box::default).streams[dir]
    }

    /// Direction `dir`'s retransmission timer, if its head is being retransmitted.
    pub(super) fn retry(&self, dir: usize) -> Option<super::tcp::Retry> {
        self.rare.as_ref().and_then(|r| r.streams[dir].retry)
    }

    /// Whether direction `dir` has nothing waiting: TCP delivers in order, so a new segment
    /// waits behind a lost one.
    pub(super) fn is_idle(&self, dir: usize) -> bool {
        self.rare.as_ref().is_none_or(|r| r.streams[dir].is_idle())
    }

    /// Everything direction `dir` still had unsent, and its timer stopped.
    pub(super) fn drain(&mut self, dir: usize) -> Vec<Seg> {
        let segs = self.rare.as_mut().map(|r| r.streams[dir].drain()).unwrap_or_default();
        self.settle();
        segs
    }

    /// Lets the boxed part go once nothing in it is in use, so that a channel that stalled once
    /// flows in one line again.
    pub(super) fn settle(&mut self) {
        if self.rare.as_ref().is_some_and(|r| r.is_empty()) {
            self.rare = None;
        }
    }

    /// Whether the channel keeps nothing outside its line.
    #[cfg(test)]
    pub(super) fn is_in_one_line(&self) -> bool {
        self.rare.is_none() && std::mem::size_of::<Option<Channel>>() == 64
    }

    /// When a segment of direction `dir` that the network would deliver at `at` arrives: not
    /// before the one handed to it last (TCP delivers in order), which it then becomes.
    pub(super) fn arrives_in_order(&mut self, dir: usize, at: SimTime) -> SimTime {
        let at = at.max(self.next_free[dir]);
        self.next_free[dir] = at;
        at
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
        !self.open_at_client && !self.open_at_server && self.is_idle(0) && self.is_idle(1)
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

    /// The ids of the channels that `keep`, in id order.
    pub(super) fn ids_where(&self, mut keep: impl FnMut(&Channel) -> bool) -> Vec<ChannelId> {
        let each = self.0.iter().enumerate();
        each.filter_map(|(i, c)| c.as_ref().filter(|c| keep(c)).map(|_| ChannelId(i as u64))).collect()
    }
}

impl std::ops::Index<&ChannelId> for Channels {
    type Output = Channel;
    fn index(&self, id: &ChannelId) -> &Channel {
        self.get(id).expect("channel exists")
    }
}
