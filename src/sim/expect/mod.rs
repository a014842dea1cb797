//! Expectations: named claims about the simulated state, each with a time frame and a subject.
//!
//! * `at` — the state at the end of one instant;
//! * `by` — *eventually*: the first time in `[from, deadline]` the claim holds is the
//!   convergence time, reported as `time - from`;
//! * `during` — *always*: the claim holds at the start of the interval and after every event
//!   in it.

pub mod checker;
pub mod nacos_subject;
pub mod sends_subject;
pub mod subject;
#[cfg(test)]
mod tests;

use crate::sim::clock::{SimDuration, SimTime};
pub use nacos_subject::{InstanceState, NacosSubject};
pub use sends_subject::SendsWant;
pub use subject::{RouteWant, Subject};

#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    pub name: String,
    pub when: When,
    pub subject: Subject,
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
