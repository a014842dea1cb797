//! Opening a connection: the SYN exchange, and the SYN sent again after 1 s, 2 s, 4 s... while
//! nothing answers, until the application's connect timeout. That is how a connect to a dead
//! host or across a partition ends: in a timeout. A refusal (RST) comes only from a live host
//! whose process is down.

use super::{tcp, Channel, ConnectFailure, Handshake, Miss, NetCore, Pool, SendOutcome, Tx};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId, ProcState};
use crate::sim::rng::SimRng;

impl NetCore {
    /// One SYN and its answer: through, or why not.
    pub(super) fn syn_exchange(&self, from: NodeId, to: NodeId, rng: &mut SimRng) -> Result<(), Miss> {
        self.link().reach(from, to)?;
        if !self.rules.reachable(to, from) {
            return Err(Miss::Cut);
        }
        let (there, back) = (self.rules.params(from, to), self.rules.params(to, from));
        if rng.chance(there.loss) || rng.chance(back.loss) {
            return Err(Miss::Lost);
        }
        Ok(())
    }

    pub(super) fn rtt(&self, a: NodeId, b: NodeId) -> SimDuration {
        self.rules.params(a, b).latency + self.rules.params(b, a).latency
    }

    /// Opens a connection: the SYN and its answer take a round trip. A SYN that finds no answer
    /// is sent again after 1 s, 2 s, 4 s... (`TCP_TIMEOUT_INIT`), each time against the links as
    /// they are then, until the application's connect timeout. Gives the new channel, and why
    /// its first SYN found no answer in time, if it did not.
    pub(super) fn connect(
        &mut self,
        now: SimTime,
        from: NodeId,
        to: NodeId,
        pool: Pool,
        rng: &mut SimRng,
    ) -> Result<(ChannelId, Option<Miss>), SendOutcome> {
        let rtt = self.rtt(from, to);
        // Netty's connect timeout (`CONNECT_TIMEOUT_MILLIS`, the client's `connectTimeoutMillis`)
        // is a timer from the connect: an answer, SYN-ACK or RST, that would land at or after
        // it comes too late, and the connect fails as one whose SYNs were all lost. (A tie goes
        // to the timeout, as it does against a retransmission.) The SYNs the kernel sends
        // again meanwhile would be answered no sooner, so the wait is one timer to the end.
        let miss = match self.syn_exchange(from, to, rng) {
            Err(miss) => Some(miss),
            Ok(()) if rtt >= self.connect_timeout => Some(Miss::Slow),
            Ok(()) => None,
        };
        if miss.is_none() && self.proc(to).state == ProcState::Down {
            return Err(SendOutcome::ConnectFailed { at: now + rtt, reason: ConnectFailure::Refused });
        }
        self.next_channel += 1;
        let id = ChannelId(self.next_channel);
        let mut c = Channel::new(from, to, now + rtt);
        c.pool = pool;
        if let Some(miss) = miss {
            let next = if miss == Miss::Slow { self.connect_timeout } else { tcp::SYN_RTO.min(self.connect_timeout) };
            c.set_syn(Some(tcp::Syn { started: now, rto: tcp::SYN_RTO, due: now + next, attempts: 0 }));
        }
        c.current = true;
        self.channels.insert(id, c);
        if let Some(old) = self.current.insert((from, to, pool), id) {
            if let Some(old) = self.channels.get_mut(&old) {
                old.current = false;
            }
        }
        Ok((id, miss))
    }

    /// A connect's SYN timer fired at `now`: send the SYN again, give up, or connect.
    pub fn syn_retry(&mut self, now: SimTime, channel: ChannelId, rng: &mut SimRng) -> Handshake {
        let Some(c) = self.channels.get(&channel) else { return Handshake::Idle };
        let Some(syn) = c.syn().filter(|s| s.due == now) else { return Handshake::Idle };
        let (from, to) = (c.client, c.server);
        let failed = |me: &mut Self, at, reason| {
            let segs = me.channels.get_mut(&channel).map(|c| c.drain(0)).unwrap_or_default();
            me.discard(channel);
            Handshake::Failed { from, to, at, reason, segs }
        };
        if now.since(syn.started) >= self.connect_timeout {
            // The application's connect timeout wins a tie with a SYN retransmission.
            return failed(self, now, ConnectFailure::TimedOut);
        }
        let attempt = syn.attempts + 1;
        if let Err(miss) = self.syn_exchange(from, to, rng) {
            let deadline = syn.started + self.connect_timeout;
            let c = self.channels.get_mut(&channel).expect("channel exists");
            let rto = tcp::backed_off(syn.rto);
            let next = (now + rto).min(deadline);
            c.set_syn(Some(tcp::Syn { rto, due: next, attempts: attempt, ..syn }));
            return Handshake::Again { from, to, miss, attempt, next };
        }
        let connected = now + self.rtt(from, to);
        let deadline = syn.started + self.connect_timeout;
        if connected >= deadline {
            // Through, but answered only after the connect timeout (see `connect`).
            let c = self.channels.get_mut(&channel).expect("channel exists");
            c.set_syn(Some(tcp::Syn { due: deadline, attempts: attempt, ..syn }));
            return Handshake::Again { from, to, miss: Miss::Slow, attempt, next: deadline };
        }
        if self.proc(to).state == ProcState::Down {
            return failed(self, connected, ConnectFailure::Refused);
        }
        let c = self.channels.get_mut(&channel).expect("channel exists");
        let queued = c.drain(0);
        c.connected(connected);
        let (mut delivered, mut retransmit_at) = (Vec::new(), None);
        for seg in queued {
            match self.transmit(connected, channel, from, seg, rng) {
                Tx::Arrives(at) => delivered.push((seg, at)),
                Tx::Held { retransmit_at: Some(at), .. } => retransmit_at = Some(at),
                Tx::Held { .. } => {}
            }
        }
        Handshake::Connected { from, to, connected, delivered, retransmit_at }
    }
}
