//! `routesim explore [--model rocketmq|nacos|both] [--cases N] [--seed S] [--jobs J] [--out DIR]`:
//! random clusters and fault schedules against every invariant of their model; each failure is
//! shrunk and saved as a scenario.

use super::progress::Progress;
use super::{FAILED, HELD};
use crate::sim::explore::{explore as run_explore, ExploreOptions, Model};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ExploreArgs {
    /// How many random scenarios to try.
    #[arg(long, default_value_t = 200)]
    cases: u32,
    /// Which system to generate scenarios for.
    #[arg(long, value_enum, default_value_t = Model::Both)]
    model: Model,
    /// Seed of the generator (each case also carries its own scenario seed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads (default: one per core).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Where shrunk counterexamples are written.
    #[arg(long, default_value = "target/routesim-failures")]
    out: PathBuf,
}

pub fn explore(args: ExploreArgs) -> u8 {
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let progress = Progress::new("cases", u64::from(args.cases));
    let opts = ExploreOptions {
        cases: args.cases,
        model: args.model,
        seed: args.seed,
        jobs,
        out_dir: args.out.clone(),
        mutation: None,
        max_shrink_iters: 256,
        stop_at_first: false,
    };
    let report = run_explore(&opts, &|done| progress.update(done));
    progress.finish();
    let secs = report.elapsed.as_secs_f64();
    println!(
        "{} {} cases, {} events simulated, {} violations in {secs:.1}s ({:.1} cases/s)",
        report.cases,
        args.model.name(),
        report.events,
        report.failures.len(),
        report.cases as f64 / secs.max(1e-9)
    );
    for f in &report.failures {
        println!("VIOLATION {}\n  saved: {} (replay: routesim run {})", f.failure, f.path.display(), f.path.display());
    }
    if report.failures.is_empty() {
        HELD
    } else {
        FAILED
    }
}
