//! A sweep: one scenario run over many seeds, and what its expectations did across them.
//!
//! One run answers "what happened with this seed"; the question users bring is "how long *can*
//! it take", and the answer depends on where a failure falls in the 30 s register cycle, the
//! client's poll, the 5 s scan. A scenario that writes its times as ranges (`at = "60s..90s"`,
//! `start = "0s..30s"`) gets them drawn afresh from each seed, so a sweep visits those phases;
//! the seed also moves every other random choice (jitter, loss, a client's first name server).
//!
//! The scenario is validated once per seed (the draws depend on it) and run without a trace.
//! Runs are independent and spread over threads; the results are put back in seed order, so
//! the report does not depend on how many threads ran it.

use crate::sim::clock::SimDuration;
use crate::sim::expect::{Quantile, QuantileBound, Verdict};
use crate::sim::runner::{run, RunOptions};
use crate::sim::scenario::{parse_seeded, ScenarioErrors};
use crate::sim::world::percentile;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

pub struct SweepOptions {
    /// The first seed; the runs use `first_seed..first_seed + runs`.
    pub first_seed: u64,
    pub runs: u64,
    pub jobs: usize,
    /// Per run, at most this many events (as `run --max-events`).
    pub max_events: u64,
}

/// What one seed's run did.
#[derive(Clone, Debug)]
pub struct SeedOutcome {
    pub seed: u64,
    /// Per expectation, in the scenario's order: held, and how long after `from` a `by`
    /// expectation first held.
    pub verdicts: Vec<(bool, Option<SimDuration>)>,
    pub violations: Vec<String>,
    /// The run stopped at its event budget: its verdicts mean nothing.
    pub over_budget: bool,
}

impl SeedOutcome {
    pub fn all_held(&self) -> bool {
        !self.over_budget && self.violations.is_empty() && self.verdicts.iter().all(|(held, _)| *held)
    }
}

/// One expectation across the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectSummary {
    pub name: String,
    /// The runs it held in, of those that reached their end.
    pub held: u64,
    pub runs: u64,
    /// The convergence times of the runs where it held, when it has one (`after`/`within`).
    pub converged: Option<Distribution>,
    /// Its `converges` bounds, each with the value the sweep measured (`None`: it held in no
    /// run, so there is nothing to measure) and whether the bound held.
    pub bounds: Vec<(QuantileBound, Option<SimDuration>, bool)>,
}

impl ExpectSummary {
    pub fn bounds_held(&self) -> bool {
        self.bounds.iter().all(|b| b.2)
    }
}

/// Nearest-rank quantiles of a set of durations, and a histogram of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    pub count: usize,
    pub min: SimDuration,
    pub p50: SimDuration,
    pub p90: SimDuration,
    pub p99: SimDuration,
    pub max: SimDuration,
    /// `BINS` equal-width bins from `min` to `max`: (lower edge, count).
    pub bins: Vec<(SimDuration, u64)>,
}

/// Histogram bins: enough to show a shape, few enough for a terminal.
pub const BINS: u64 = 12;

impl Distribution {
    pub fn value(&self, q: Quantile) -> SimDuration {
        match q {
            Quantile::Min => self.min,
            Quantile::P50 => self.p50,
            Quantile::P90 => self.p90,
            Quantile::P99 => self.p99,
            Quantile::Max => self.max,
        }
    }

    pub fn of(mut values: Vec<SimDuration>) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        let (min, max) = (values[0], values[values.len() - 1]);
        let width = (max.millis() - min.millis()) / BINS + 1;
        let mut bins: Vec<(SimDuration, u64)> = (0..BINS).map(|i| (min + SimDuration(i * width), 0)).collect();
        for v in &values {
            bins[((v.millis() - min.millis()) / width) as usize].1 += 1;
        }
        while bins.last().is_some_and(|b| b.1 == 0) {
            bins.pop();
        }
        Some(Distribution {
            count: values.len(),
            min,
            p50: percentile(&values, 50),
            p90: percentile(&values, 90),
            p99: percentile(&values, 99),
            max,
            bins,
        })
    }
}

pub struct SweepReport {
    pub scenario: String,
    pub outcomes: Vec<SeedOutcome>,
    pub expectations: Vec<ExpectSummary>,
    pub events: u64,
}

impl SweepReport {
    pub fn failing_seeds(&self) -> Vec<u64> {
        self.outcomes.iter().filter(|o| !o.all_held()).map(|o| o.seed).collect()
    }

    /// Every run held everything, and every distribution is within its bounds.
    pub fn all_held(&self) -> bool {
        self.failing_seeds().is_empty() && self.expectations.iter().all(ExpectSummary::bounds_held)
    }
}

/// Runs the scenario in `source` once per seed. Fails only if the file is invalid for some seed
/// (a range can put an event past another it must follow), with that seed's errors.
pub fn sweep(
    path: &Path,
    source: &str,
    opts: &SweepOptions,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SweepReport, (u64, ScenarioErrors)> {
    let first = parse_seeded(path, source, Some(opts.first_seed)).map_err(|e| (opts.first_seed, e))?;
    let next = AtomicU64::new(0);
    let done = AtomicUsize::new(0);
    let events = AtomicU64::new(0);
    let results: Mutex<Vec<Result<SeedOutcome, (u64, ScenarioErrors)>>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= opts.runs {
                    break;
                }
                let seed = opts.first_seed + i;
                let outcome = parse_seeded(path, source, Some(seed)).map_err(|e| (seed, e)).map(|s| {
                    let report = run(&s, RunOptions { max_events: opts.max_events, ..Default::default() });
                    events.fetch_add(report.events, Ordering::Relaxed);
                    SeedOutcome {
                        seed,
                        verdicts: report.verdicts.iter().map(|(_, v)| summary(v)).collect(),
                        violations: report.violations.iter().map(ToString::to_string).collect(),
                        over_budget: report.budget_exceeded.is_some(),
                    }
                });
                results.lock().expect("no panics while held").push(outcome);
                progress(done.fetch_add(1, Ordering::Relaxed) as u64 + 1);
            });
        }
    });
    let mut results = results.into_inner().expect("threads joined");
    results.sort_by_key(|r| match r {
        Ok(o) => o.seed,
        Err((seed, _)) => *seed,
    });
    let outcomes = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let expectations = first
        .expects
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let finished = outcomes.iter().filter(|o| !o.over_budget);
            let held: Vec<Option<SimDuration>> =
                finished.clone().filter_map(|o| o.verdicts.get(i).filter(|v| v.0).map(|v| v.1)).collect();
            let converged = Distribution::of(held.iter().flatten().copied().collect());
            let bounds = e
                .converges
                .iter()
                .map(|b| {
                    let value = converged.as_ref().map(|d| d.value(b.quantile));
                    (*b, value, value.is_some_and(|v| b.holds(v)))
                })
                .collect();
            ExpectSummary {
                name: e.name.clone(),
                held: held.len() as u64,
                runs: finished.count() as u64,
                converged,
                bounds,
            }
        })
        .collect();
    Ok(SweepReport { scenario: first.name, outcomes, expectations, events: events.into_inner() })
}

fn summary(v: &Verdict) -> (bool, Option<SimDuration>) {
    match v {
        Verdict::Held { converged } => (true, *converged),
        Verdict::Failed { .. } => (false, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<SimDuration> {
        v.iter().map(|&m| SimDuration(m)).collect()
    }

    #[test]
    fn quantiles_are_nearest_rank_and_the_bins_cover_min_to_max() {
        let d = Distribution::of(ms(&(1..=100).collect::<Vec<_>>())).unwrap();
        assert_eq!(
            (d.min, d.p50, d.p90, d.p99, d.max),
            (SimDuration(1), SimDuration(50), SimDuration(90), SimDuration(99), SimDuration(100))
        );
        assert_eq!(d.bins.iter().map(|b| b.1).sum::<u64>(), 100);
        assert_eq!(d.bins[0].0, SimDuration(1));
        assert!(d.bins.last().unwrap().0 <= SimDuration(100));
    }

    #[test]
    fn one_value_makes_one_bin_and_none_makes_no_distribution() {
        let d = Distribution::of(ms(&[7, 7, 7])).unwrap();
        assert_eq!(d.bins, vec![(SimDuration(7), 3)]);
        assert_eq!(Distribution::of(Vec::new()), None);
    }
}
