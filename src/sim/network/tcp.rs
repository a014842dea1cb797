//! TCP's reliability as Linux runs it, reduced to what decides *when* a message arrives.
//!
//! A message is one segment. On a link that loses it (random loss, a partition, a host that no
//! longer answers) TCP does not give up: the sender's kernel retransmits after the
//! retransmission timeout (RTO), doubling it each time, and the receiver hands data to its
//! application strictly in order — everything sent after a lost segment waits behind it. So on
//! a TCP link *loss is delay*. The connection fails only when the kernel's retry budget runs out
//! (`tcp_retries2`, about 15 minutes) or when the application gives up first and closes it; a
//! closed socket with unacknowledged data lives on as an *orphan* that keeps retransmitting
//! (data, then FIN) for a shorter budget (`tcp_orphan_retries`, about 100 s).
//!
//! The rules, with where they come from (RFC 6298 and the Linux kernel, `net/ipv4/tcp_timer.c`,
//! `tcp_input.c`):
//!
//! * **RTO** (RFC 6298 §2): `SRTT + max(G, 4·RTTVAR)`. Linux floors the variance term at
//!   `TCP_RTO_MIN` = 200 ms (`tcp_rtt_estimator` keeps `mdev_max` ≥ `tcp_rto_min`), so on a LAN
//!   the first retransmission comes one round trip plus 200 ms after the send. SRTT here is the
//!   link's round trip (both one-way latencies plus half their jitter), RTTVAR half the jitter.
//! * **Backoff** (RFC 6298 §5.5): each expiry doubles the RTO, up to `TCP_RTO_MAX` = 120 s.
//! * **Giving up** (`retransmits_timed_out`, `tcp_model_timeout`): a connection is dead once the
//!   head segment has waited as long as `boundary` retransmissions from a 200 ms base would take
//!   — 924.6 s for `tcp_retries2` = 15, 102.2 s for an orphan (`tcp_orphan_retries` = 0, which
//!   `tcp_orphan_retries()` reads as 8 while the RTO is below `TCP_RTO_MAX`). The check runs
//!   when the retransmission timer fires.
//! * **Connect** (RFC 6298 §2.1, `TCP_TIMEOUT_INIT`): a SYN is retransmitted after 1 s, 2 s,
//!   4 s...; the application's connect timeout (3 s for RocketMQ and Nacos) usually ends it first.
//!
//! What is simplified, on purpose:
//!
//! * one message is one segment, and ACKs are not modelled: a segment counts as acknowledged
//!   once delivered, even when the reverse direction is cut (so a one-way block never aborts the
//!   sender's connection by itself — its application's timeout does);
//! * segments queued behind a lost one are (re)sent the moment the head gets through, each with
//!   its own loss draw, and a new RTO if one is lost (RTO is recomputed after an ACK);
//! * no congestion window, no fast retransmit (three duplicate ACKs need more traffic than a
//!   registry's request-reply sees), no receive-window stalls, no keepalive (RocketMQ and the
//!   JDK's HTTP client leave `SO_KEEPALIVE` off);
//! * a segment already in flight when its destination host dies is lost for good: the sender
//!   only learns of it by its own application timeout.

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::MsgId;
use std::collections::VecDeque;

/// `TCP_RTO_MIN`: the floor of the RTO's variance term (Linux), 200 ms.
pub const RTO_MIN: SimDuration = SimDuration::from_millis(200);
/// `TCP_RTO_MAX`: the backoff stops doubling at 120 s.
pub const RTO_MAX: SimDuration = SimDuration::from_secs(120);
/// `TCP_TIMEOUT_INIT`: the first SYN retransmission after 1 s (RFC 6298 §2.1), doubling after.
pub const SYN_RTO: SimDuration = SimDuration::from_secs(1);
/// `net.ipv4.tcp_retries2`, default 15.
pub const TCP_RETRIES2: u32 = 15;
/// What `tcp_orphan_retries()` makes of the default `net.ipv4.tcp_orphan_retries` = 0 while the
/// connection's RTO is below `TCP_RTO_MAX`: 8 ("8 corresponds to >100 seconds with minimal RTO
/// of 200msec", `net/ipv4/tcp_timer.c`).
pub const ORPHAN_RETRIES: u32 = 8;

/// `tcp_model_timeout(sk, boundary, TCP_RTO_MIN)`: how long `boundary` retransmissions take when
/// the RTO starts at 200 ms and doubles up to 120 s. Linux declares a connection dead once its
/// oldest unacknowledged segment has waited this long.
pub const fn give_up_after(boundary: u32) -> SimDuration {
    let base = RTO_MIN.0;
    // ilog2(TCP_RTO_MAX / TCP_RTO_MIN) = ilog2(600) = 9: the doublings before the cap.
    let linear = (RTO_MAX.0 / base).ilog2();
    let ms = if boundary <= linear {
        ((2u64 << boundary) - 1) * base
    } else {
        ((2u64 << linear) - 1) * base + (boundary - linear) as u64 * RTO_MAX.0
    };
    SimDuration(ms)
}

/// How long an open connection keeps retransmitting (924.6 s).
pub const OPEN_BUDGET: SimDuration = give_up_after(TCP_RETRIES2);
/// How long a socket the application closed keeps retransmitting its unsent data and FIN
/// (102.2 s).
pub const ORPHAN_BUDGET: SimDuration = give_up_after(ORPHAN_RETRIES);

/// The first RTO on a link with this round trip and jitter (both directions summed): RFC 6298's
/// `SRTT + max(G, 4·RTTVAR)` with Linux's 200 ms floor on the variance term.
pub fn initial_rto(rtt: SimDuration, jitter: SimDuration) -> SimDuration {
    let srtt = rtt.0 + jitter.0 / 2;
    let variance = (2 * jitter.0).max(RTO_MIN.0);
    SimDuration((srtt + variance).min(RTO_MAX.0))
}

/// The RTO after one more expiry: doubled, at most `TCP_RTO_MAX`.
pub fn backed_off(rto: SimDuration) -> SimDuration {
    SimDuration(rto.0.saturating_mul(2).min(RTO_MAX.0))
}

/// One unit of a TCP stream: a message, or the FIN that closes the direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg {
    Data(MsgId),
    Fin,
}

/// Why a transmission did not reach the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Miss {
    /// Random loss on the link.
    Lost,
    /// A partition or one-way block.
    Cut,
    /// The destination host is down: nothing answers, not even with an RST.
    NoHost,
    /// A SYN got through, but its answer would come back only after the application's connect
    /// timeout: the link's round trip is longer than the timeout leaves.
    Slow,
}

/// A connect whose SYN (or its answer) was lost: the kernel sends it again on this timer, until
/// the application's connect timeout gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syn {
    pub started: SimTime,
    pub rto: SimDuration,
    pub due: SimTime,
    pub attempts: u32,
}

/// The retransmission timer of a stream whose head has not got through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry {
    /// When the head was first sent: the retry budget counts from here.
    pub first_sent: SimTime,
    pub rto: SimDuration,
    /// When the timer fires next.
    pub due: SimTime,
    /// Retransmissions so far.
    pub attempts: u32,
}

/// One direction of a connection, while a segment of it is being retransmitted (its next free
/// arrival is kept in the channel's line: `Channel::arrives_in_order`).
#[derive(Clone, Debug, Default)]
pub struct Stream {
    /// Segments the peer has not received: the head being retransmitted, then everything sent
    /// after it. Empty while the stream flows.
    pub backlog: VecDeque<Seg>,
    pub retry: Option<Retry>,
}

impl Stream {
    /// Starts the retransmission timer for a backlog whose head was just sent (and lost) at `now`.
    pub fn stall(&mut self, now: SimTime, rto: SimDuration) -> SimTime {
        let due = now + rto;
        self.retry = Some(Retry { first_sent: now, rto, due, attempts: 0 });
        due
    }

    /// Everything still unsent, and the timer stopped.
    pub fn drain(&mut self) -> Vec<Seg> {
        self.retry = None;
        self.backlog.drain(..).collect()
    }

    pub fn is_idle(&self) -> bool {
        self.backlog.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_connection_gives_up_after_about_fifteen_minutes() {
        // Linux tcp_model_timeout(sk, tcp_retries2 = 15, TCP_RTO_MIN): 1023 · 200 ms + 6 · 120 s
        assert_eq!(OPEN_BUDGET, SimDuration(924_600));
    }

    #[test]
    fn an_orphaned_socket_gives_up_after_about_a_hundred_seconds() {
        // Linux tcp_orphan_retries(): 0 means 8 "with minimal RTO of 200msec": 511 · 200 ms
        assert_eq!(ORPHAN_BUDGET, SimDuration(102_200));
    }

    #[test]
    fn the_rto_is_a_round_trip_plus_the_200_ms_floor_on_a_quiet_lan() {
        // RFC 6298 §2.3: SRTT + max(G, 4·RTTVAR); Linux: rttvar >= TCP_RTO_MIN
        assert_eq!(initial_rto(SimDuration(2), SimDuration::ZERO), SimDuration(202));
        // A jittery link's variance term outgrows the floor: 2 + 100/2 + 4 · 50.
        assert_eq!(initial_rto(SimDuration(2), SimDuration(100)), SimDuration(252));
    }

    #[test]
    fn the_rto_doubles_on_each_expiry_up_to_two_minutes() {
        // RFC 6298 §5.5 (back off the timer), Linux TCP_RTO_MAX = 120 s
        let mut rto = SimDuration(202);
        let mut seen = Vec::new();
        for _ in 0..11 {
            seen.push(rto.millis());
            rto = backed_off(rto);
        }
        assert_eq!(seen, [202, 404, 808, 1616, 3232, 6464, 12928, 25856, 51712, 103424, 120000]);
    }
}
