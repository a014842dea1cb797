//! `routesim explore [--model rocketmq|nacos|both] [--cases N] [--seed S] [--jobs J] [--out DIR]`:
//! random clusters and fault schedules against every invariant of their model; each failure is
//! shrunk and saved as a scenario.

use super::output::output_failed;
use super::progress::Progress;
use super::{threads, FAILED, HELD, INVALID};
use crate::sim::explore::{explore as run_explore, ExploreOptions, ExploreReport, Model, Shard};
use std::io::Write;
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
    /// Threads (default and ceiling: one per core; never more than --cases).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Where shrunk counterexamples are written.
    #[arg(long, default_value = "target/routesim-failures")]
    out: PathBuf,
}

pub fn explore(args: ExploreArgs) -> u8 {
    let jobs = match threads(args.jobs, args.cases as usize) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return INVALID;
        }
    };
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
        shard: Shard::WHOLE,
    };
    let report = run_explore(&opts, &|done| progress.update(done));
    progress.finish();
    let code = if report.failures.is_empty() { HELD } else { FAILED };
    match print_summary(&mut std::io::stdout().lock(), &report, args.model) {
        Ok(()) => code,
        Err(e) => output_failed(&e, code),
    }
}

fn print_summary(out: &mut impl Write, report: &ExploreReport, model: Model) -> std::io::Result<()> {
    let secs = report.elapsed.as_secs_f64();
    writeln!(
        out,
        "{} {} cases, {} events simulated, {} violations in {secs:.1}s ({:.1} cases/s)",
        report.cases,
        model.name(),
        report.events,
        report.failures.len(),
        report.cases as f64 / secs.max(1e-9)
    )?;
    for f in &report.failures {
        let path = f.path.display();
        writeln!(out, "VIOLATION {}\n  saved: {path} (replay: routesim run {path})", f.failure)?;
    }
    out.flush()
}
