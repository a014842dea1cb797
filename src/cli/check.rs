//! `routesim check DIR [--jobs N]`: every scenario under DIR, in parallel, one line each. A
//! progress line counts finished scenarios on a terminal; piped output carries only the results.

use super::json::{self, CheckClock, CheckDoc, CheckFileDoc, ErrorDoc, ScenarioDoc, SummaryDoc};
use super::output::{frame, output_failed, over_budget};
use super::progress::Progress;
use super::{scenario_files, threads, FAILED, HELD, INVALID};
use crate::sim::clock::parse_duration;
use crate::sim::expect::Verdict;
use crate::sim::runner::{run, RunOptions, RunReport, DEFAULT_MAX_EVENTS};
use crate::sim::scenario::{load, LoadError};
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    /// Stop any one scenario after this much wall time (e.g. `30s`, `2m`): it gets a TIMEOUT
    /// line, counts as invalid, and the others still run. Default: no limit but the event budget.
    #[arg(long, value_name = "DURATION", value_parser = wall_time)]
    timeout: Option<std::time::Duration>,
    /// Print one JSON document on stdout instead of the lines (schema: docs/json-output.md).
    #[arg(long)]
    json: bool,
}

/// `--timeout` in the scenario's duration syntax, at least a millisecond.
fn wall_time(text: &str) -> Result<std::time::Duration, String> {
    match parse_duration(text) {
        Ok(d) if d.millis() > 0 => Ok(std::time::Duration::from_millis(d.millis())),
        Ok(_) => Err("a timeout of 0 would stop every scenario at once; give at least 1ms".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

enum Outcome {
    Invalid(LoadError),
    Ran(Box<RunReport>),
    /// A bug in routesim: the run panicked. The message has been printed by the panic hook.
    Panicked,
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
    let watchdog = Watchdog { runs: Mutex::new(vec![None; jobs]), finished: AtomicBool::new(false) };
    // Each worker takes the next file; every run has its own actor system on its own thread.
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|worker| {
                let (files, results, next, done, progress, watchdog) =
                    (&files, &results, &next, &done, &progress, &watchdog);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let outcome = match load(file) {
                        Ok(s) => {
                            let stop = args.timeout.map(|limit| watchdog.watch(worker, limit));
                            let opts = RunOptions { max_events, stop, ..Default::default() };
                            // One scenario that trips a bug must not cost the others their verdicts.
                            let ran = std::panic::catch_unwind(AssertUnwindSafe(|| run(&s, opts)));
                            watchdog.unwatch(worker);
                            ran.map_or(Outcome::Panicked, |r| Outcome::Ran(Box::new(r)))
                        }
                        Err(e) => Outcome::Invalid(e),
                    };
                    *results[i].lock().expect("no worker panics while holding it") = Some(outcome);
                    progress.update(done.fetch_add(1, Ordering::Relaxed) as u64 + 1);
                })
            })
            .collect();
        if args.timeout.is_some() {
            scope.spawn(|| watchdog.patrol());
        }
        for w in workers {
            let _ = w.join();
        }
        watchdog.finished.store(true, Ordering::Relaxed);
    });
    progress.finish();
    let mut out = std::io::stdout().lock();
    let (mut passed, mut failed, mut invalid) = (0, 0, 0);
    let (mut written, mut entries) = (Ok(()), Vec::new());
    for (file, slot) in files.iter().zip(results) {
        let outcome = slot.into_inner().expect("lock is free").expect("every file was run");
        let (outcome, line, entry) = judge(file, outcome, args.timeout);
        match outcome {
            "PASS" => passed += 1,
            "FAIL" => failed += 1,
            _ => invalid += 1,
        }
        // The counts still cover every file: the exit status says what happened to all of them.
        if args.json {
            entries.push(entry);
        } else {
            written = written.and_then(|()| writeln!(out, "{line}"));
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let written = if args.json {
        let summary = SummaryDoc { scenarios: files.len(), passed, failed, invalid };
        let doc = CheckDoc {
            command: "check",
            dir: args.dir.display().to_string(),
            files: entries,
            summary,
            wall_clock: CheckClock { elapsed_secs: secs },
        };
        json::print(&mut out, &doc)
    } else {
        let summary =
            format!("{} scenarios: {passed} passed, {failed} failed, {invalid} invalid ({secs:.2}s)", files.len());
        written.and_then(|()| writeln!(out, "{summary}")).and_then(|()| out.flush())
    };
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

/// One file's outcome word (`PASS`, `FAIL`, `OVER`, ...), its human line and its JSON entry.
/// Errors go to stderr here, in both modes.
fn judge(file: &Path, outcome: Outcome, timeout: Option<Duration>) -> (&'static str, String, CheckFileDoc) {
    let entry =
        |outcome, scenario, errors| CheckFileDoc { file: file.display().to_string(), outcome, scenario, errors };
    match outcome {
        Outcome::Invalid(e) => {
            eprintln!("error: {e}");
            ("INVALID", format!("INVALID {}", file.display()), entry("INVALID", None, ErrorDoc::from_load(&e)))
        }
        Outcome::Panicked => {
            let why = "routesim panicked running it (a bug in routesim: please report it with this file)";
            eprintln!("error: {}: {why}", file.display());
            let errors = vec![ErrorDoc::message(why.to_string())];
            ("PANIC", format!("PANIC   {}", file.display()), entry("PANIC", None, errors))
        }
        Outcome::Ran(r) => {
            let doc = ScenarioDoc::new(file, &r);
            match r.budget_exceeded {
                Some(over) if over.stopped => {
                    let limit = timeout.map_or(0, |d| d.as_millis());
                    eprintln!(
                        "error: {}: {over} (raise --timeout, now {limit}ms, or shorten the scenario)",
                        file.display()
                    );
                    ("TIMEOUT", format!("TIMEOUT {}  ({over})", file.display()), entry("TIMEOUT", Some(doc), vec![]))
                }
                // A run cut short by its budget has no verdicts worth counting: like invalid
                // input, it needs a change to the scenario (or a larger --max-events) before it
                // says anything.
                Some(over) => {
                    over_budget(file, &over);
                    ("OVER", format!("OVER    {}  ({over})", file.display()), entry("OVER", Some(doc), vec![]))
                }
                None => {
                    let held = r.verdicts.iter().filter(|(_, v)| v.held()).count();
                    let verdict = if r.all_held() { "PASS" } else { "FAIL" };
                    let mut line = format!(
                        "{verdict}    {}  ({held}/{} expectations, digest {})",
                        file.display(),
                        r.verdicts.len(),
                        r.digest
                    );
                    line.push_str(&what_failed(&r));
                    (verdict, line, entry(verdict, Some(doc), vec![]))
                }
            }
        }
    }
}

/// Under a FAIL line, one line per failed expectation and per violation: a FAIL that names
/// nothing sends the reader to `routesim run` just to learn which claim broke.
fn what_failed(r: &RunReport) -> String {
    let mut lines = String::new();
    for (exp, verdict) in &r.verdicts {
        if let Verdict::Failed { at, .. } = verdict {
            lines.push_str(&format!("\n        failed:   {}  [{}]  at {at}", exp.name, frame(&exp.when)));
        }
    }
    for v in &r.violations {
        lines.push_str(&format!("\n        violated: {} at {}", v.invariant, v.at));
    }
    lines
}

/// Stops runs that pass `--timeout`: one thread looks at each worker's current run every few
/// milliseconds and raises its stop flag once its deadline has passed. The run itself never
/// reads the wall clock; it only sees the flag, between two instants.
struct Watchdog {
    /// Per worker: its current run's deadline and stop flag.
    runs: Mutex<Vec<Option<Deadline>>>,
    finished: AtomicBool,
}

type Deadline = (Instant, Arc<AtomicBool>);

impl Watchdog {
    fn watch(&self, worker: usize, limit: Duration) -> Arc<AtomicBool> {
        let stop = Arc::new(AtomicBool::new(false));
        self.runs.lock().expect("never held across a panic")[worker] = Some((Instant::now() + limit, stop.clone()));
        stop
    }

    fn unwatch(&self, worker: usize) {
        self.runs.lock().expect("never held across a panic")[worker] = None;
    }

    fn patrol(&self) {
        while !self.finished.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
            let now = Instant::now();
            for (deadline, stop) in self.runs.lock().expect("never held across a panic").iter().flatten() {
                if now >= *deadline {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}
