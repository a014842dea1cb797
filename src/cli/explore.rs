//! `routesim explore [--model rocketmq|nacos|both] [--cases N] [--seed S] [--jobs J] [--out DIR]
//! [--shard K/N] [--json]`: random clusters and fault schedules against every invariant of their
//! model; each failure is shrunk and saved as a scenario. `--merge SUMMARY...` combines the
//! `--json` summaries of a sharded sweep (`explore_merge`).

use super::json::{self, ExploreClock, ExploreDoc, ExploreFailureDoc};
use super::output::output_failed;
use super::progress::Progress;
use super::{threads, FAILED, HELD, INVALID};
use crate::sim::explore::{explore as run_explore, ExploreOptions, ExploreReport, Model, Shard};
use clap::ValueEnum;
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
    /// Print one JSON document on stdout instead of the summary (schema: docs/json-output.md).
    #[arg(long)]
    json: bool,
    /// Run only shard K of N of the sweep (the cases i with i % N == K), e.g. a Kubernetes
    /// Indexed Job's completion index: the N shards run exactly the whole sweep's cases.
    #[arg(long, value_parser = Shard::parse, default_value = "0/1")]
    shard: Shard,
    /// Instead of exploring, combine the `--json` summaries of a sharded sweep (files, or
    /// folders of *.json) into one, checking every shard is there once.
    #[arg(long, num_args = 1.., conflicts_with_all = ["cases", "seed", "jobs", "out", "shard"])]
    merge: Vec<PathBuf>,
}

pub fn explore(args: ExploreArgs) -> u8 {
    if !args.merge.is_empty() {
        return super::explore_merge::merge(&args.merge, args.json);
    }
    // This shard's share of the sweep: the cases i < cases with i % N == K.
    let (k, n, cases) = (args.shard.index, args.shard.count, u64::from(args.cases));
    let share = if k < cases { (cases - 1 - k) / n + 1 } else { 0 };
    let jobs = match threads(args.jobs, share.max(1) as usize) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return INVALID;
        }
    };
    let progress = Progress::new("cases", share);
    let opts = ExploreOptions {
        cases: args.cases,
        model: args.model,
        seed: args.seed,
        jobs,
        out_dir: args.out.clone(),
        mutation: None,
        max_shrink_iters: 256,
        stop_at_first: false,
        shard: args.shard,
    };
    let report = run_explore(&opts, &|done| progress.update(done));
    progress.finish();
    let code = if report.failures.is_empty() { HELD } else { FAILED };
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        json::print(&mut out, &document(&report, &args, jobs))
    } else {
        print_summary(&mut out, &report, args.model)
    };
    match written {
        Ok(()) => code,
        Err(e) => output_failed(&e, code),
    }
}

fn document(report: &ExploreReport, args: &ExploreArgs, jobs: usize) -> ExploreDoc {
    let secs = report.elapsed.as_secs_f64();
    let failures = report
        .failures
        .iter()
        .map(|f| ExploreFailureDoc {
            invariant: f.invariant,
            message: f.failure.clone(),
            saved: f.path.display().to_string(),
            seed: f.seed,
            case: f.case,
        })
        .collect();
    let model = args.model.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string());
    ExploreDoc {
        command: "explore",
        model,
        seed: args.seed,
        jobs,
        sweep_cases: args.cases,
        shard: args.shard.to_string(),
        cases: report.cases,
        events: report.events,
        failures,
        wall_clock: ExploreClock { elapsed_secs: secs, cases_per_sec: report.cases as f64 / secs.max(1e-9) },
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
