//! Expectations: named claims about the simulated state, each with a time frame and a subject.
//!
//! * `at` — the state at the end of one instant;
//! * `by` — *eventually*: the first time in `[from, deadline]` the claim holds is the
//!   convergence time, reported as `time - from`;
//! * `during` — *always*: the claim holds at the start of the interval and after every event
//!   in it (a count of events, over the whole interval).

pub mod checker;
pub mod events_subject;
#[cfg(test)]
mod events_tests;
#[cfg(test)]
mod frames_tests;
pub mod nacos_subject;
pub mod sends_subject;
pub mod subject;
pub mod table_subject;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;

use crate::sim::clock::{SimDuration, SimTime};
pub use events_subject::{EventsWant, Mention};
pub use nacos_subject::{InstanceState, NacosSubject};
pub use sends_subject::SendsWant;
pub use subject::{RouteWant, Subject};
pub use table_subject::{LiveWant, RegistrationWant, TopicsWant};

#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub name: String,
    pub when: When,
    pub subject: Subject,
    /// Bounds on the distribution of the convergence time over a sweep (`converges = { p99 =
    /// "125s" }`): checked by `routesim sweep`, which has a distribution; a single run has one
    /// value and leaves them alone.
    pub converges: Vec<QuantileBound>,
}

/// Which point of a distribution a bound is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Quantile {
    Min,
    P50,
    P90,
    P99,
    Max,
}

impl Quantile {
    pub const ALL: [Quantile; 5] = [Quantile::Min, Quantile::P50, Quantile::P90, Quantile::P99, Quantile::Max];

    pub fn key(self) -> &'static str {
        match self {
            Quantile::Min => "min",
            Quantile::P50 => "p50",
            Quantile::P90 => "p90",
            Quantile::P99 => "p99",
            Quantile::Max => "max",
        }
    }
}

/// `p99 = "125s"` (at most) or `p50 = "100s..115s"` (within, both ends included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantileBound {
    pub quantile: Quantile,
    pub at_least: SimDuration,
    pub at_most: SimDuration,
}

impl QuantileBound {
    pub fn holds(&self, value: SimDuration) -> bool {
        self.at_least <= value && value <= self.at_most
    }

    /// As the scenario writes it.
    pub fn text(&self) -> String {
        match self.at_least == SimDuration::ZERO {
            true => format!("{}", self.at_most),
            false => format!("{}..{}", self.at_least, self.at_most),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    At(SimTime),
    By { from: SimTime, deadline: SimTime },
    During { from: SimTime, until: SimTime },
}

/// Expected versus observed, each rendered as sorted, readable text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub expected: String,
    pub got: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Held; for `by`, how long after `from` it first held.
    Held {
        converged: Option<SimDuration>,
    },
    Failed {
        at: SimTime,
        mismatch: Mismatch,
    },
}

impl Verdict {
    pub fn held(&self) -> bool {
        matches!(self, Verdict::Held { .. })
    }
}
