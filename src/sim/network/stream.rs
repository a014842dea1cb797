//! Writing on a stream: a client's send finds or opens its channel, each segment is transmitted
//! in order behind what the channel already carries, and a lost one is retransmitted on TCP's
//! doubling timer until it gets through or the kernel's retry budget (`tcp_retries2`) runs out.

use super::{tcp, Channel, Lease, NetCore, Pool, Retransmission, Seg, SendOutcome, Tx};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::rng::SimRng;

impl NetCore {
    /// The link rules and the processes, for a transmission that needs no channel borrowed
    /// beside them (see [`Link`]).
    pub(super) fn link(&self) -> Link<'_> {
        Link { rules: &self.rules, procs: &self.procs }
    }

    /// A client write: reuses the client's channel to `to` or opens a new one.
    pub fn send(&mut self, now: SimTime, from: NodeId, to: NodeId, seg: Seg, rng: &mut SimRng) -> SendOutcome {
        self.send_how(now, from, to, seg, rng, Lease::Reuse(None))
    }

    /// `send`, choosing how the channel is found (see [`Lease`]).
    pub fn send_how(
        &mut self,
        now: SimTime,
        from: NodeId,
        to: NodeId,
        seg: Seg,
        rng: &mut SimRng,
        lease: Lease,
    ) -> SendOutcome {
        let pool = match lease {
            Lease::Pooled(pool) => pool,
            Lease::Reuse(_) | Lease::Fresh => Pool::DEFAULT,
        };
        // A client that names its last channel (nearly every request of a run) spares the
        // table's hashing and probing when it is still the current one (0.3% of the Nacos
        // bench's instructions). Being current, it is the channel the table would give.
        let named = match lease {
            Lease::Reuse(Some(id)) => Some(id).filter(|id| {
                self.channels.get(id).is_some_and(|c| c.current && (c.client, c.server, c.pool) == (from, to, pool))
            }),
            _ => None,
        };
        let existing = named.or_else(|| self.current.get(&(from, to, pool)).copied());
        let usable = |c: &Channel| match lease {
            Lease::Reuse(_) => c.open_at_client,
            Lease::Pooled(_) => c.open_at_client && c.syn().is_none(),
            Lease::Fresh => false,
        };
        // `syn_miss`: why the first SYN of a channel opened here found no answer in time.
        let (channel, opened, syn_miss) = match existing.filter(|id| usable(&self.channels[id])) {
            Some(id) => (id, false, None),
            None => match self.connect(now, from, to, pool, rng) {
                Ok((id, miss)) => (id, true, miss),
                Err(outcome) => return outcome,
            },
        };
        let NetCore { channels, rules, procs, .. } = self;
        let c = channels.get_mut(&channel).expect("channel exists");
        if let Some(syn) = c.syn() {
            // Connecting: the write waits in the socket until the handshake completes.
            c.stream_mut(0).backlog.push_back(seg);
            return match syn_miss {
                Some(miss) => SendOutcome::Connecting { channel, miss, syn_at: syn.due },
                None => SendOutcome::Held { channel, opened: false, miss: None, retransmit_at: None },
            };
        }
        write(c, Link { rules, procs }, now, channel, from, seg, opened, rng)
    }

    /// A write on a known channel (a server's reply). Nothing if `from` already closed it.
    #[inline(always)]
    pub fn send_on(
        &mut self,
        now: SimTime,
        channel: ChannelId,
        from: NodeId,
        seg: Seg,
        rng: &mut SimRng,
    ) -> SendOutcome {
        let NetCore { channels, rules, procs, .. } = self;
        match channels.get_mut(&channel) {
            Some(c) if c.is_open_at(from) => write(c, Link { rules, procs }, now, channel, from, seg, false, rng),
            _ => SendOutcome::Closed,
        }
    }

    /// Puts `seg` on `from`'s stream of `channel` at `depart`: delivered in order, or held for
    /// retransmission.
    pub(super) fn transmit(
        &mut self,
        depart: SimTime,
        channel: ChannelId,
        from: NodeId,
        seg: Seg,
        rng: &mut SimRng,
    ) -> Tx {
        let NetCore { channels, rules, procs, .. } = self;
        let c = channels.get_mut(&channel).expect("channel exists");
        transmit(c, Link { rules, procs }, depart, from, seg, rng)
    }

    /// The retransmission timer of `channel`'s stream `dir` (0: client → server) fired at `now`.
    pub fn retransmit(&mut self, now: SimTime, channel: ChannelId, dir: usize, rng: &mut SimRng) -> Retransmission {
        let Some(c) = self.channels.get(&channel) else { return Retransmission::Idle };
        let Some(retry) = c.retry(dir).filter(|r| r.due == now) else { return Retransmission::Idle };
        let (from, to) = if dir == 0 { (c.client, c.server) } else { (c.server, c.client) };
        let orphan = !c.is_open_at(from);
        let waited = now.since(retry.first_sent);
        let budget = if orphan { tcp::ORPHAN_BUDGET } else { tcp::OPEN_BUDGET };
        if waited >= budget {
            let c = self.channels.get_mut(&channel).expect("channel exists");
            let segs = c.drain(dir);
            c.set_closed(from);
            self.forget_current(channel);
            self.tidy(channel);
            return Retransmission::GaveUp { from, to, segs, orphan, waited };
        }
        let attempt = retry.attempts + 1;
        let verdict = self.link().attempt(from, to, rng);
        let rto = self.link().rto(from, to);
        let s = self.channels.get_mut(&channel).expect("channel exists").stream_mut(dir);
        let delay = match verdict {
            Err(miss) => {
                let head = *s.backlog.front().expect("a stalled stream has a head");
                let r = s.retry.as_mut().expect("the stream is stalled");
                r.attempts = attempt;
                r.rto = tcp::backed_off(r.rto);
                r.due = now + r.rto;
                return Retransmission::Failed { from, to, head, miss, attempt, next: r.due };
            }
            Ok(delay) => delay,
        };
        s.retry = None;
        let mut segs = Vec::with_capacity(s.backlog.len());
        let mut next = Some(delay);
        let mut again = None;
        // The head got through; what waited behind it goes out now, each with its own luck.
        while let Some(delay) = next {
            let c = self.channels.get_mut(&channel).expect("channel exists");
            let Some(seg) = c.stream_mut(dir).backlog.pop_front() else { break };
            segs.push((seg, c.arrives_in_order(dir, now + delay)));
            if c.is_idle(dir) {
                break;
            }
            next = match self.link().attempt(from, to, rng) {
                Ok(d) => Some(d),
                Err(_) => {
                    let s = self.channels.get_mut(&channel).expect("channel exists").stream_mut(dir);
                    again = Some(s.stall(now, rto));
                    None
                }
            };
        }
        if let Some(c) = self.channels.get_mut(&channel) {
            c.settle();
        }
        self.tidy(channel);
        Retransmission::Delivered { from, to, segs, attempt, waited, again }
    }
}

/// What a transmission reads of the network besides its channel: the link rules and whether
/// the peer's host is up. Borrowed beside the channel, so that a write uses the channel its send
/// found: as methods of the whole network, `write` and `transmit` looked it up three more times
/// (each a bounds check and a test of its slot), 1% of the Nacos bench's instructions.
#[derive(Clone, Copy)]
pub(super) struct Link<'a> {
    pub(super) rules: &'a super::LinkRules,
    pub(super) procs: &'a [super::Proc],
}

impl Link<'_> {
    /// Whether a transmission from `from` can reach `to` now, and if not, why.
    #[inline(always)]
    pub(super) fn reach(self, from: NodeId, to: NodeId) -> Result<(), super::Miss> {
        if !self.rules.reachable(from, to) {
            Err(super::Miss::Cut)
        } else if !self.procs[to.0 as usize].host_up {
            Err(super::Miss::NoHost)
        } else {
            Ok(())
        }
    }

    /// One transmission from `from` to `to`: its one-way delay, or why it does not arrive.
    #[inline(always)]
    pub(super) fn attempt(self, from: NodeId, to: NodeId, rng: &mut SimRng) -> Result<SimDuration, super::Miss> {
        self.reach(from, to)?;
        let p = self.rules.params(from, to);
        if rng.chance(p.loss) {
            return Err(super::Miss::Lost);
        }
        Ok(p.latency + SimDuration(rng.up_to(p.jitter.millis())))
    }

    /// The first retransmission timeout on the link between `a` and `b`.
    pub(super) fn rto(self, a: NodeId, b: NodeId) -> SimDuration {
        let (there, back) = (self.rules.params(a, b), self.rules.params(b, a));
        tcp::initial_rto(there.latency + back.latency, there.jitter + back.jitter)
    }
}

/// A segment written on an open (or opening) channel: every data packet of a run comes here,
/// from `send_how` or `send_on`, and goes on through `transmit` and `attempt`. All three are
/// inlined into the send they serve: as calls they cost 2.3% of the Nacos bench in arguments
/// and results passed through memory (plain `#[inline]` left them calls).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn write(
    c: &mut Channel,
    link: Link<'_>,
    now: SimTime,
    channel: ChannelId,
    from: NodeId,
    seg: Seg,
    opened: bool,
    rng: &mut SimRng,
) -> SendOutcome {
    c.touch(from, now);
    // Written during the handshake, it leaves when the connection is up.
    let depart = now.max(c.connected_at);
    match transmit(c, link, depart, from, seg, rng) {
        Tx::Arrives(at) => SendOutcome::Deliver { channel, at, opened },
        Tx::Held { miss, retransmit_at } => SendOutcome::Held { channel, opened, miss, retransmit_at },
    }
}

/// Puts `seg` on `from`'s stream of `c` at `depart`: delivered in order, or held for
/// retransmission.
#[inline(always)]
fn transmit(c: &mut Channel, link: Link<'_>, depart: SimTime, from: NodeId, seg: Seg, rng: &mut SimRng) -> Tx {
    let (to, dir) = (c.peer_of(from), c.end(from));
    if !c.is_idle(dir) {
        // TCP delivers in order: behind a lost segment, everything waits.
        c.stream_mut(dir).backlog.push_back(seg);
        return Tx::Held { miss: None, retransmit_at: None };
    }
    match link.attempt(from, to, rng) {
        Ok(delay) => Tx::Arrives(c.arrives_in_order(dir, depart + delay)),
        Err(miss) => {
            let rto = link.rto(from, to);
            let s = c.stream_mut(dir);
            s.backlog.push_back(seg);
            Tx::Held { miss: Some(miss), retransmit_at: Some(s.stall(depart, rto)) }
        }
    }
}
