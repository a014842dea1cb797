//! Views of a finished run, each derived from its trace: a Mermaid sequence diagram, an HTML
//! swimlane report, the narrated explain mode, and the lesson pages that put them together for
//! each catalogue scenario.

pub mod cast;
pub mod explain;
pub mod glossary;
pub mod lesson;
pub mod lesson_sweep;
pub mod mermaid;
pub mod report;
pub mod sweep;
pub mod versions;

use crate::sim::clock::{parse_duration, SimTime};
use std::fmt;

/// The part of a run a view draws (`--window FROM..TO`, both ends included): the whole run unless
/// a user asks for less, which a long run's report or diagram needs to stay a size a browser or
/// Mermaid can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub from: SimTime,
    pub to: SimTime,
}

impl Window {
    /// Everything, including the checks a run makes just after its end.
    pub fn whole() -> Self {
        Window { from: SimTime::ZERO, to: SimTime(u64::MAX) }
    }

    pub fn is_whole(&self) -> bool {
        *self == Window::whole()
    }

    /// `FROM..TO` in the scenario's duration syntax (`90m..2h`), within a run that ends at `end`.
    pub fn parse(text: &str, end: SimTime) -> Result<Self, String> {
        let Some((a, b)) = text.split_once("..") else {
            return Err(format!("--window must be FROM..TO, e.g. 0s..10m; got {text:?}"));
        };
        let at = |part: &str| {
            parse_duration(part.trim()).map(|d| SimTime::ZERO + d).map_err(|e| format!("--window {text:?}: {e}"))
        };
        let (from, to) = (at(a)?, at(b)?);
        if from >= to {
            return Err(format!("--window {text:?}: FROM must come before TO"));
        }
        if from >= end {
            return Err(format!("--window {text:?} starts after the run, which ends at {end}"));
        }
        Ok(Window { from, to })
    }

    pub fn contains(&self, t: SimTime) -> bool {
        self.from <= t && t <= self.to
    }

    /// The part of `[from, to]` inside the window, if any.
    pub fn clip(&self, from: SimTime, to: SimTime) -> Option<(SimTime, SimTime)> {
        let (from, to) = (from.max(self.from), to.min(self.to));
        (from <= to).then_some((from, to))
    }
}

/// A view with more to draw than it can hold: refused, with the way to ask for less.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLong {
    /// `report` or `diagram`.
    pub what: &'static str,
    pub limit: usize,
    /// What the limit counts.
    pub items: &'static str,
    /// When the view passed it.
    pub at: SimTime,
}

impl fmt::Display for TooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let TooLong { what, limit, items, at } = self;
        write!(
            f,
            "the {what} of this run would draw more than {limit} {items} (the limit was reached at {at}); \
             draw part of the run with --window FROM..TO, e.g. --window 0s..{at}"
        )
    }
}
