//! The `sends` subject: what a producer's sends did over the expectation's window — how many
//! ended, how many failed or needed a retry, and the longest one.
//!
//! Unlike a route, this is not a state read at an instant but a count over time: it covers the
//! sends that *ended* from the window's start (`from`, or `after`; the run's start for `at`) up
//! to the instant checked.

use super::Mismatch;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::world::{percentile, SendStats, World};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendsWant {
    pub producer: String,
    /// Only the sends whose last attempt went to this broker name.
    pub to_broker: Option<String>,
    /// Sends ending at or after this time count.
    pub since: SimTime,
    pub sent_at_most: Option<u64>,
    pub failed: Option<u64>,
    pub failed_at_most: Option<u64>,
    pub failed_at_least: Option<u64>,
    pub succeeded_at_least: Option<u64>,
    pub retried_at_most: Option<u64>,
    pub max_latency: Option<SimDuration>,
}

impl SendsWant {
    fn stats(&self, world: &World) -> SendStats {
        world.with_sends(&self.producer, self.to_broker.as_deref(), |log| log.stats(self.since)).unwrap_or_default()
    }

    pub fn holds(&self, world: &World) -> bool {
        let s = self.stats(world);
        self.sent_at_most.is_none_or(|n| s.sent <= n)
            && self.failed.is_none_or(|n| s.failed() == n)
            && self.failed_at_most.is_none_or(|n| s.failed() <= n)
            && self.failed_at_least.is_none_or(|n| s.failed() >= n)
            && self.succeeded_at_least.is_none_or(|n| s.ok >= n)
            && self.retried_at_most.is_none_or(|n| s.retried <= n)
            && self.max_latency.is_none_or(|d| s.max_latency <= d)
    }

    pub fn check(&self, world: &World) -> Result<(), Mismatch> {
        if self.holds(world) {
            return Ok(());
        }
        Err(Mismatch { expected: self.describe(), got: self.figures(world) })
    }

    /// Changes with every send that ends.
    pub fn revision(&self, world: &World) -> (u64, u64) {
        let n = world.with_sends(&self.producer, self.to_broker.as_deref(), |log| log.len()).unwrap_or(0);
        (0, n as u64)
    }

    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.sent_at_most {
            parts.push(format!("at most {n} sent"));
        }
        if let Some(n) = self.failed {
            parts.push(format!("{n} failed"));
        }
        if let Some(n) = self.failed_at_most {
            parts.push(format!("at most {n} failed"));
        }
        if let Some(n) = self.failed_at_least {
            parts.push(format!("at least {n} failed"));
        }
        if let Some(n) = self.succeeded_at_least {
            parts.push(format!("at least {n} ok"));
        }
        if let Some(n) = self.retried_at_most {
            parts.push(format!("at most {n} retried"));
        }
        if let Some(d) = self.max_latency {
            parts.push(format!("none longer than {d}"));
        }
        let to = self.to_broker.as_ref().map(|b| format!(" to {b}")).unwrap_or_default();
        format!("{}'s sends{to} since {}: {}", self.producer, self.since, parts.join(", "))
    }

    /// The measured figures, for the verdict line: `sent 1200, ok 1188, failed 12, retried 30,
    /// latency p50 2ms p99 3s max 3.004s`.
    pub fn figures(&self, world: &World) -> String {
        let s = self.stats(world);
        let sorted = world
            .with_sends(&self.producer, self.to_broker.as_deref(), |log| log.latencies(self.since))
            .unwrap_or_default();
        format!(
            "sent {}, ok {}, failed {}, retried {}, latency p50 {} p99 {} max {}",
            s.sent,
            s.ok,
            s.failed(),
            s.retried,
            percentile(&sorted, 50),
            percentile(&sorted, 99),
            s.max_latency
        )
    }
}
