//! `routesim sweep FILE [--runs N] [--first-seed S] [--jobs J] [--histogram] [--json]`: one
//! scenario over many seeds; per expectation, how often it held and the distribution of its
//! convergence time, and every failing seed as a command that replays it.

use super::files::Staged;
use super::output::output_failed;
use super::progress::Progress;
use super::{threads, FAILED, HELD, INVALID};
use crate::sim::runner::DEFAULT_MAX_EVENTS;
use crate::sim::scenario::{read_source, MAX_SEED};
use crate::sim::sweep::{sweep as run_sweep, SweepOptions, SweepReport};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
#[command(after_help = "Example: routesim sweep scenarios/rocketmq/01-kill-vs-silent.toml --runs 500 --histogram")]
pub struct SweepArgs {
    /// The scenario; times written as ranges (`at = "60s..90s"`) are drawn afresh for each seed.
    file: PathBuf,
    /// How many runs: seeds FIRST_SEED, FIRST_SEED + 1, ...
    #[arg(long, default_value_t = 100)]
    runs: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Threads (default and ceiling: one per core).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Draw each convergence-time distribution as a histogram (the default on a terminal).
    #[arg(long)]
    histogram: bool,
    /// Print one JSON document instead: the same figures, every seed's outcome included.
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML page with each expectation's histogram (SVG).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Stop each run after N events (exit 2), as `run --max-events`.
    #[arg(long, default_value_t = DEFAULT_MAX_EVENTS)]
    max_events: u64,
}

/// At most this many runs: a sweep keeps every seed's outcome.
const MAX_RUNS: u64 = 1_000_000;

pub fn sweep(args: SweepArgs) -> u8 {
    if args.runs == 0 || args.runs > MAX_RUNS {
        eprintln!("error: --runs must be between 1 and {MAX_RUNS}, got {}", args.runs);
        return INVALID;
    }
    if args.first_seed.checked_add(args.runs - 1).is_none_or(|last| last > MAX_SEED) {
        eprintln!("error: seeds {}.. run past the largest seed, {MAX_SEED}", args.first_seed);
        return INVALID;
    }
    let jobs = match threads(args.jobs, args.runs as usize) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return INVALID;
        }
    };
    let source = match read_source(&args.file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return INVALID;
        }
    };
    // Found unwritable before the runs, not after; put in place only once complete.
    let staged = match args.report.as_deref().map(Staged::create).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", args.report.as_deref().unwrap_or(Path::new("")).display());
            return INVALID;
        }
    };
    let opts = SweepOptions { first_seed: args.first_seed, runs: args.runs, jobs, max_events: args.max_events };
    let progress = Progress::new("runs", args.runs);
    let started = std::time::Instant::now();
    let result = run_sweep(&args.file, &source, &opts, &|done| progress.update(done));
    progress.finish();
    let report = match result {
        Ok(r) => r,
        Err((seed, errors)) => {
            eprintln!("error: with seed {seed}: {errors}");
            return INVALID;
        }
    };
    eprintln!(
        "{} runs, {} events in {:.1}s on {jobs} threads",
        args.runs,
        report.events,
        started.elapsed().as_secs_f64()
    );
    let over = report.outcomes.iter().any(|o| o.over_budget);
    let code = match (over, report.all_held()) {
        (true, _) => INVALID,
        (false, true) => HELD,
        (false, false) => FAILED,
    };
    if let Some(staged) = staged {
        let seeds = format!("{}..={}", opts.first_seed, opts.first_seed + opts.runs - 1);
        let page = crate::view::sweep::html(&report, &args.file.display().to_string(), &seeds);
        let dest = staged.dest().to_path_buf();
        let written = staged.writer().and_then(|mut f| f.write_all(page.as_bytes())).and_then(|()| staged.commit());
        if let Err(e) = written {
            eprintln!("error: cannot write {}: {e}", dest.display());
            return INVALID;
        }
    }
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        super::sweep_json::write(&mut out, &args.file, &opts, &report)
    } else {
        let histogram = args.histogram || std::io::stdout().is_terminal();
        print(&mut out, &args.file, &opts, &report, histogram)
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => code,
        Err(e) => output_failed(&e, code),
    }
}

fn print(
    out: &mut impl Write,
    file: &Path,
    opts: &SweepOptions,
    r: &SweepReport,
    histogram: bool,
) -> std::io::Result<()> {
    let last = opts.first_seed + opts.runs - 1;
    writeln!(out, "== {}  ({})", r.scenario, file.display())?;
    writeln!(out, "sweep: {} runs, seeds {}..={last}", opts.runs, opts.first_seed)?;
    for e in &r.expectations {
        writeln!(out, "  {}", e.name)?;
        writeln!(out, "    held in {} of {} runs", e.held, e.runs)?;
        if let Some(d) = &e.converged {
            writeln!(
                out,
                "    converged after (from its `after`, {} runs): min {}  p50 {}  p90 {}  p99 {}  max {}",
                d.count, d.min, d.p50, d.p90, d.p99, d.max
            )?;
            if histogram {
                write!(out, "{}", crate::view::sweep::text_histogram(d, "      "))?;
            }
        }
        for (b, value, held) in &e.bounds {
            let verdict = if *held { "PASS" } else { "FAIL" };
            let measured = value.map_or("nothing to measure: it held in no run".to_string(), |v| v.to_string());
            writeln!(out, "    {verdict}  converges {} = {}: measured {measured}", b.quantile.key(), b.text())?;
        }
    }
    let over: Vec<u64> = r.outcomes.iter().filter(|o| o.over_budget).map(|o| o.seed).collect();
    if !over.is_empty() {
        writeln!(
            out,
            "{} runs stopped at --max-events {} (seeds {over:?}): their verdicts are not counted",
            over.len(),
            opts.max_events
        )?;
    }
    let violated: Vec<&str> = r.outcomes.iter().flat_map(|o| o.violations.iter().map(String::as_str)).collect();
    if let Some(first) = violated.first() {
        writeln!(out, "invariants violated in {} runs; the first: {first}", violated.len())?;
    }
    let failing = r.failing_seeds();
    let bounds = r.expectations.iter().filter(|e| !e.bounds_held()).count();
    if bounds > 0 {
        writeln!(out, "{bounds} expectations out of their `converges` bounds")?;
    }
    if failing.is_empty() {
        writeln!(out, "every expectation held in every run")?;
    } else {
        writeln!(out, "{} of {} runs failed; replay one with:", failing.len(), opts.runs)?;
        for seed in failing.iter().take(5) {
            writeln!(out, "  routesim run {} --seed {seed}", file.display())?;
        }
        if failing.len() > 5 {
            writeln!(out, "  ... and {} more (--json lists them all)", failing.len() - 5)?;
        }
    }
    Ok(())
}
