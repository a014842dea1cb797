//! `routesim explain FILE [--at T] [--seed N] [--max-events N]`: a narrated walk through a run's key moments, naming the
//! real methods, with each name server's affected tables before and after.

use super::output::{output_failed, over_budget, print_report};
use super::{FAILED, HELD, INVALID};
use crate::sim::clock::{parse_duration, SimTime};
use crate::sim::runner::{run, RunOptions, DEFAULT_MAX_EVENTS};
use crate::sim::scenario::load_seeded;
use crate::view::explain::render;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The scenario to explain.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Start the walk at this time (e.g. "55s"); earlier moments are skipped.
    #[arg(long, value_name = "T")]
    at: Option<String>,
    /// Use this seed instead of the scenario's (0 to 2^63 − 1, as `seed =` in a file).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=crate::sim::scenario::MAX_SEED))]
    seed: Option<u64>,
    /// Stop the run after N events and exit 2, as `run --max-events` does.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_EVENTS, value_parser = clap::value_parser!(u64).range(1..))]
    max_events: u64,
}

pub fn explain(args: ExplainArgs) -> u8 {
    let from = match args.at.as_deref().map(parse_duration) {
        None => SimTime::ZERO,
        Some(Ok(d)) => SimTime::ZERO + d,
        Some(Err(e)) => {
            eprintln!("error: --at: {e}");
            return INVALID;
        }
    };
    let scenario = match load_seeded(&args.file, args.seed) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return INVALID;
        }
    };
    // A walk from past the end would print nothing and look like a run without moments.
    if from.millis() > scenario.duration.millis() {
        eprintln!(
            "error: --at {}: past the end of the scenario; give a time from 0s to {}",
            args.at.as_deref().unwrap_or_default(),
            scenario.duration
        );
        return INVALID;
    }
    let opts = RunOptions {
        seed: args.seed,
        narrator: Some(crate::view::explain::narrator()),
        max_events: args.max_events,
        ..Default::default()
    };
    let report = run(&scenario, opts);
    if let Some(over) = report.budget_exceeded {
        // A walk through half a run would read as the whole story: say why it stopped instead.
        over_budget(&args.file, &over);
        return INVALID;
    }
    let code = if report.all_held() { HELD } else { FAILED };
    let mut out = std::io::stdout().lock();
    let written = write!(out, "{}", render(&scenario.name, &report.moments, from))
        .and_then(|()| writeln!(out))
        .and_then(|()| print_report(&mut out, &report))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => code,
        Err(e) => output_failed(&e, code),
    }
}
