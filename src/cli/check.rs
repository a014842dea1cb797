//! `routesim check DIR [--jobs N]`: every scenario under DIR, in parallel, one line each. A
//! progress line counts finished scenarios on a terminal; piped output carries only the results.

use super::output::output_failed;
use super::progress::Progress;
use super::{scenario_files, threads, FAILED, HELD, INVALID};
use crate::sim::runner::{run, RunOptions, RunReport, DEFAULT_MAX_EVENTS};
use crate::sim::scenario::{load, LoadError};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// Folder of scenario files (searched recursively for *.toml).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Scenarios run at once (default and ceiling: one per core).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Stop each run after N events; a scenario that reaches it counts as invalid (exit 2).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_EVENTS, value_parser = clap::value_parser!(u64).range(1..))]
    max_events: u64,
}

enum Outcome {
    Invalid(LoadError),
    Ran(RunReport),
}

pub fn check(args: CheckArgs) -> u8 {
    // Checked before the folder is read: a bad flag is the first thing to fix.
    if let Err(e) = threads(args.jobs, 1) {
        eprintln!("error: {e}");
        return INVALID;
    }
    let files = match scenario_files(&args.dir) {
        Ok(f) if !f.is_empty() => f,
        Ok(_) => {
            eprintln!("error: no *.toml scenarios under {}", args.dir.display());
            return INVALID;
        }
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.dir.display());
            return INVALID;
        }
    };
    let (started, max_events) = (std::time::Instant::now(), args.max_events);
    let jobs = threads(args.jobs, files.len()).expect("checked above");
    let results: Vec<Mutex<Option<Outcome>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let (done, progress) = (AtomicUsize::new(0), Progress::new("scenarios", files.len() as u64));
    // Each worker takes the next file; every run has its own actor system on its own thread.
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let outcome = match load(file) {
                    Ok(s) => Outcome::Ran(run(&s, RunOptions { max_events, ..Default::default() })),
                    Err(e) => Outcome::Invalid(e),
                };
                *results[i].lock().expect("no worker panics while holding it") = Some(outcome);
                progress.update(done.fetch_add(1, Ordering::Relaxed) as u64 + 1);
            });
        }
    });
    progress.finish();
    let mut out = std::io::stdout().lock();
    let (mut passed, mut failed, mut invalid) = (0, 0, 0);
    let mut written = Ok(());
    for (file, slot) in files.iter().zip(results) {
        let line = match slot.into_inner().expect("lock is free").expect("every file was run") {
            Outcome::Invalid(e) => {
                invalid += 1;
                eprintln!("error: {e}");
                format!("INVALID {}", file.display())
            }
            // A run cut short by its budget has no verdicts worth counting: like invalid input,
            // it needs a change to the scenario (or a larger --max-events) before it says anything.
            Outcome::Ran(RunReport { budget_exceeded: Some(over), .. }) => {
                invalid += 1;
                eprintln!("error: {}: {over} (raise --max-events, or shorten the scenario)", file.display());
                format!("OVER    {}  ({over})", file.display())
            }
            Outcome::Ran(r) => {
                let held = r.verdicts.iter().filter(|(_, v)| v.held()).count();
                let verdict = if r.all_held() { "PASS" } else { "FAIL" };
                if r.all_held() {
                    passed += 1;
                } else {
                    failed += 1;
                }
                format!(
                    "{verdict}    {}  ({held}/{} expectations, digest {})",
                    file.display(),
                    r.verdicts.len(),
                    r.digest
                )
            }
        };
        // The counts still cover every file: the exit status says what happened to all of them.
        written = written.and_then(|()| writeln!(out, "{line}"));
    }
    let secs = started.elapsed().as_secs_f64();
    let summary =
        format!("{} scenarios: {passed} passed, {failed} failed, {invalid} invalid ({secs:.2}s)", files.len());
    let written = written.and_then(|()| writeln!(out, "{summary}")).and_then(|()| out.flush());
    let code = if invalid > 0 {
        INVALID
    } else if failed > 0 {
        FAILED
    } else {
        HELD
    };
    match written {
        Ok(()) => code,
        Err(e) => output_failed(&e, code),
    }
}
