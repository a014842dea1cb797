//! What a trace event says: one enum per area, each with its timeline wording.
//!
//! Model-specific notes live beside their models (`crate::rocketmq::notes`, `crate::nacos::notes`);
//! this file holds the ones the machinery itself writes and the `What` that joins them.

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ChannelId;
use crate::sim::network::{ConnectFailure, Miss};
use serde::Serialize;
use std::fmt;

pub use crate::nacos::notes::NacosNote;
pub use crate::rocketmq::notes::RmqNote;

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "area", rename_all = "snake_case")]
pub enum What {
    Run(RunNote),
    Fault(FaultNote),
    Net(NetNote),
    Rmq(RmqNote),
    Nacos(NacosNote),
    Check(CheckNote),
}

impl What {
    /// Routine events (a refresh that changes nothing) are left out of the default timeline.
    pub fn is_routine(&self) -> bool {
        match self {
            What::Net(n) => n.is_routine(),
            What::Rmq(n) => n.is_routine(),
            What::Nacos(n) => n.is_routine(),
            _ => false,
        }
    }
}

impl fmt::Display for What {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            What::Run(n) => n.fmt(f),
            What::Fault(n) => n.fmt(f),
            What::Net(n) => n.fmt(f),
            What::Rmq(n) => n.fmt(f),
            What::Nacos(n) => n.fmt(f),
            What::Check(n) => n.fmt(f),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunNote {
    Begin { scenario: String, seed: u64, duration: SimDuration },
    ProcessStarted { node: String },
    End { events: u64 },
}

impl fmt::Display for RunNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunNote::Begin { scenario, seed, duration } => {
                write!(f, "scenario \"{scenario}\" begins (seed {seed}, runs {duration})")
            }
            RunNote::ProcessStarted { node } => write!(f, "{node} starts"),
            RunNote::End { events } => write!(f, "scenario ends after {events} events"),
        }
    }
}

/// A fault or operator action, as applied.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum FaultNote {
    /// `targets` are the processes the fault touches, for views to draw it on their lanes.
    Applied { name: String, action: String, targets: Vec<String> },
}

impl fmt::Display for FaultNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultNote::Applied { name, action, .. } if name == action => write!(f, "** {action}"),
            FaultNote::Applied { name, action, .. } => write!(f, "** {action}  [{name}]"),
        }
    }
}

/// Why a UDP datagram did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Random link loss.
    Lost,
    /// A partition or one-way block.
    Cut,
    /// Nobody at the destination (host down, or the host died while it was in flight).
    NoHost,
    /// The host is up but no process listens on the port (ICMP port unreachable, ignored).
    NoListener,
}

// The models write their own notes; the trace's `What` wraps them. The conversions live here,
// above the models, so that `rocketmq/` and `nacos/` never name the trace.
impl From<RmqNote> for What {
    fn from(n: RmqNote) -> Self {
        What::Rmq(n)
    }
}

impl From<NacosNote> for What {
    fn from(n: NacosNote) -> Self {
        What::Nacos(n)
    }
}

impl From<Miss> for DropReason {
    fn from(m: Miss) -> Self {
        match m {
            Miss::Lost => DropReason::Lost,
            Miss::Cut => DropReason::Cut,
            Miss::NoHost => DropReason::NoHost,
            // Nothing is lost: the answer is late. The network writes `SlowConnect` for it.
            Miss::Slow => DropReason::Lost,
        }
    }
}

impl DropReason {
    fn text(self) -> &'static str {
        match self {
            DropReason::Lost => "lost on the link",
            DropReason::Cut => "link is cut",
            DropReason::NoHost => "host is down",
            DropReason::NoListener => "nothing listens there",
        }
    }
}

/// What became of the FIN a close sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinNote {
    /// On its way: the peer will see the close.
    Sent,
    /// Lost (the reason given); the kernel retransmits it until its orphan budget runs out.
    Lost(DropReason),
    /// Queued behind data still being retransmitted.
    Queued,
    /// The connection never came up: there is nobody to tell.
    Unheard,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum NetNote {
    /// A UDP datagram that did not arrive (UDP never retransmits).
    Dropped {
        from: String,
        to: String,
        msg: &'static str,
        reason: DropReason,
    },
    /// A TCP segment that did not arrive this time. The sender's kernel retransmits it at
    /// `retry_at`; `attempt` 0 is the original transmission.
    Lost {
        channel: ChannelId,
        from: String,
        to: String,
        msg: &'static str,
        reason: DropReason,
        attempt: u32,
        retry_at: SimTime,
    },
    /// A retransmission got through, with the `segments` that waited behind it.
    Retransmitted {
        channel: ChannelId,
        from: String,
        to: String,
        attempt: u32,
        waited: SimDuration,
        segments: usize,
    },
    /// The kernel gave up on a connection's unacknowledged data: `tcp_retries2` on an open
    /// connection (its end is reset), or `tcp_orphan_retries` on a socket already closed.
    GaveUp {
        channel: ChannelId,
        from: String,
        to: String,
        segments: usize,
        waited: SimDuration,
        orphan: bool,
    },
    /// A SYN got through, but its answer would land only after the connect timeout, at
    /// `timeout_at`: the connect will time out then, whatever the SYNs sent again meanwhile.
    SlowConnect {
        channel: ChannelId,
        from: String,
        to: String,
        timeout_at: SimTime,
    },
    ConnectFailed {
        from: String,
        to: String,
        msg: &'static str,
        reason: ConnectFailure,
    },
    /// `by` closed its end of the channel; `fin` says whether and how the peer will hear of it.
    Closed {
        channel: ChannelId,
        by: String,
        peer: String,
        reason: &'static str,
        fin: FinNote,
    },
    /// A packet hit an end that was closed: the sender gets an RST.
    Reset {
        channel: ChannelId,
        from: String,
        to: String,
        msg: &'static str,
    },
    /// A hung process's parked input and timers run now that it resumed.
    Unparked {
        node: String,
        entries: usize,
    },
    Opened {
        channel: ChannelId,
        client: String,
        server: String,
    },
}

impl NetNote {
    /// Opening a channel, and every retransmission after the first loss, are routine: the
    /// timeline shows the loss, and then whether it got through or the kernel gave up.
    fn is_routine(&self) -> bool {
        matches!(self, NetNote::Opened { .. } | NetNote::Lost { attempt: 1.., .. })
    }
}

impl fmt::Display for NetNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetNote::Dropped { from, to, msg, reason } => {
                write!(f, "{msg} {from} -> {to} dropped ({}): UDP does not retransmit", reason.text())
            }
            NetNote::Lost { channel, from, to, msg, reason, attempt: 0, retry_at } => {
                write!(f, "{msg} {from} -> {to} on {channel} lost ({}); TCP retransmits at {retry_at}", reason.text())
            }
            NetNote::Lost { channel, from, to, msg, reason, attempt, retry_at } => write!(
                f,
                "retransmission {attempt} of {msg} {from} -> {to} on {channel} lost ({}); next at {retry_at}",
                reason.text()
            ),
            NetNote::Retransmitted { channel, from, to, attempt, waited, segments } => {
                let behind = match segments {
                    1 => String::new(),
                    n => format!(", with {} segments queued behind it", n - 1),
                };
                write!(f, "{channel} {from} -> {to}: retransmission {attempt} got through after {waited}{behind}")
            }
            NetNote::GaveUp { channel, from, to, segments, waited, orphan: true } => write!(
                f,
                "{channel} {from} -> {to}: the closed socket gave up after {waited} (tcp_orphan_retries); {segments} segments never arrive"
            ),
            NetNote::GaveUp { channel, from, to, segments, waited, orphan: false } => write!(
                f,
                "{channel} {from} -> {to}: connection timed out after {waited} of retransmissions (tcp_retries2); {segments} segments never arrive, {from}'s end is reset"
            ),
            NetNote::SlowConnect { channel, from, to, timeout_at } => write!(
                f,
                "SYN {from} -> {to} on {channel} got through, but its answer comes back only after the connect \
                 timeout at {timeout_at}: the round trip is longer"
            ),
            NetNote::ConnectFailed { from, to, msg, reason } => {
                let why = match reason {
                    ConnectFailure::Refused => "connection refused (nothing listening)",
                    ConnectFailure::TimedOut => "connect timed out (no answer)",
                };
                write!(f, "{msg} {from} -> {to} failed: {why}")
            }
            NetNote::Closed { channel, by, peer, reason, fin } => {
                let heard = match fin {
                    FinNote::Sent => "FIN sent".to_string(),
                    FinNote::Lost(r) => format!("FIN lost ({}), the kernel retransmits it", r.text()),
                    FinNote::Queued => "FIN queued behind unacknowledged data".to_string(),
                    FinNote::Unheard => "it never connected: the connect is abandoned".to_string(),
                };
                write!(f, "{channel} {by}<->{peer} closed by {by} ({reason}); {heard}")
            }
            NetNote::Reset { channel, from, to, msg } => {
                write!(f, "{msg} {from} -> {to} on {channel}: end closed, RST back to {from}")
            }
            NetNote::Unparked { node, entries } => {
                write!(f, "{node} resumes: {entries} buffered inputs and overdue timers run")
            }
            NetNote::Opened { channel, client, server } => {
                write!(f, "{channel} opened {client} -> {server}")
            }
        }
    }
}

/// An expectation's verdict, written into the trace when it is decided.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum CheckNote {
    Held { name: String, converged: Option<SimDuration> },
    Failed { name: String, at: SimTime, detail: String },
    Violated { invariant: &'static str, at: SimTime, detail: String },
}

impl fmt::Display for CheckNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckNote::Held { name, converged: Some(d) } => {
                write!(f, "expectation \"{name}\" held (converged after {d})")
            }
            CheckNote::Held { name, converged: None } => write!(f, "expectation \"{name}\" held"),
            CheckNote::Failed { name, at, detail } => {
                write!(f, "expectation \"{name}\" FAILED at {at}: {detail}")
            }
            CheckNote::Violated { invariant, at, detail } => {
                write!(f, "invariant {invariant} VIOLATED at {at}: {detail}")
            }
        }
    }
}
