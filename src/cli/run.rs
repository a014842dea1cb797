//! `routesim run FILE... [--seed N] [--trace out.jsonl] [--full] [--quiet] [--json] [--max-events N]`

use super::files::{check_outputs, Staged};
use super::json::{self, RunDoc, ScenarioDoc};
use super::output::{output_failed, over_budget, print_report, scenario_header};
use super::progress::Progress;
use super::{FAILED, HELD, INVALID};
use crate::sim::clock::SimTime;
use crate::sim::runner::{run as run_scenario, RunOptions, DEFAULT_MAX_EVENTS};
use crate::sim::scenario::load_seeded;
use crate::sim::trace::{Detail, TraceOptions};
use crate::view::mermaid::{DiagramView, Drawn, MERMAID_MAX_TEXT};
use crate::view::report::{render, ReportView};
use crate::view::Window;
use std::cell::{Cell, RefCell};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Scenario files to run, in order.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Use this seed instead of the scenario's (0 to 2^63 − 1, as `seed =` in a file).
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=crate::sim::scenario::MAX_SEED))]
    seed: Option<u64>,
    /// Write every event to FILE as one JSON object per line (one scenario only).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Show routine events too (refreshing registrations, heartbeats, unchanged polls).
    #[arg(long)]
    full: bool,
    /// Print no timeline: only verdicts, seed and digest.
    #[arg(short, long)]
    quiet: bool,
    /// Print one JSON document on stdout instead (schema: docs/json-output.md); no timeline.
    #[arg(long)]
    json: bool,
    /// Write a Mermaid sequence diagram of the run to FILE (one scenario only).
    #[arg(long, value_name = "FILE")]
    diagram: Option<PathBuf>,
    /// Write a self-contained HTML timeline report of the run to FILE (one scenario only).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Draw only FROM..TO of the run in --diagram and --report (e.g. `--window 55m..1h5m`): a
    /// long run's views are otherwise refused once they pass their size limits.
    #[arg(long, value_name = "FROM..TO")]
    window: Option<String>,
    /// Draw only FROM..TO of the run in --diagram (overrides --window there). Without either, a
    /// run whose diagram would pass Mermaid's 50,000-character limit is drawn around its faults
    /// and checks, and says so.
    #[arg(long, value_name = "FROM..TO")]
    diagram_window: Option<String>,
    /// Stop a run after N events and exit 2: a scenario stuck in a loop ends with a message
    /// instead of running (and growing) for ever.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_EVENTS, value_parser = clap::value_parser!(u64).range(1..))]
    max_events: u64,
}

pub fn run(args: RunArgs) -> u8 {
    if (args.trace.is_some() || args.diagram.is_some() || args.report.is_some()) && args.files.len() > 1 {
        eprintln!("error: --trace, --diagram and --report describe one run; give a single FILE");
        return INVALID;
    }
    if args.window.is_some() && args.diagram.is_none() && args.report.is_none() {
        eprintln!("error: --window chooses what --diagram and --report draw; give one of them too");
        return INVALID;
    }
    if args.diagram_window.is_some() && args.diagram.is_none() {
        eprintln!("error: --diagram-window chooses what --diagram draws; give --diagram FILE too");
        return INVALID;
    }
    let outputs: Vec<(&str, &Path)> =
        [("--trace", &args.trace), ("--diagram", &args.diagram), ("--report", &args.report)]
            .into_iter()
            .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
            .collect();
    if let Err(e) = check_outputs(&args.files, &outputs) {
        eprintln!("error: {e}");
        return INVALID;
    }
    // Validate everything first: a typo in the third file should not cost two runs.
    let mut scenarios = Vec::new();
    let mut invalid = false;
    for file in &args.files {
        match load_seeded(file, args.seed) {
            Ok(s) => scenarios.push((file, s)),
            Err(e) => {
                eprintln!("error: {e}");
                invalid = true;
            }
        }
    }
    if invalid {
        return INVALID;
    }
    let mut code = HELD;
    // `--json` prints nothing until every run is done, then the one document: a reader gets
    // whole JSON or (on bad input, exit 2) an empty stdout, never half of one.
    let quiet = args.quiet || args.json;
    let mut docs = Vec::new();
    for (file, scenario) in scenarios {
        let mut trace = TraceOptions::default();
        if !quiet {
            let detail = if args.full { Detail::Full } else { Detail::Story };
            trace.timeline = Some((Box::new(BufWriter::new(std::io::stdout())), detail));
        }
        // Each output goes to a temporary file, put in place only once the run is complete (see
        // `files`); a path that cannot be written is found before the run, not after it.
        let stage = |path: &Option<PathBuf>| {
            path.as_deref()
                .map(|p| Staged::create(p).map_err(|e| format!("cannot write {}: {e}", p.display())))
                .transpose()
        };
        let (staged_trace, staged_diagram, staged_report) =
            match (stage(&args.trace), stage(&args.diagram), stage(&args.report)) {
                (Ok(t), Ok(d), Ok(r)) => (t, d, r),
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                    eprintln!("error: {e}");
                    return INVALID;
                }
            };
        if let Some(staged) = &staged_trace {
            match staged.writer() {
                Ok(f) => trace.jsonl = Some(Box::new(BufWriter::new(f))),
                Err(e) => return cannot_write(staged.dest(), &e),
            }
        }
        // The views watch the run and keep only what they draw, so a long run costs them no
        // more than its window and their limits allow.
        let end = SimTime::ZERO + scenario.duration;
        let parse = |flag: &str, w: &Option<String>| {
            w.as_deref().map(|w| Window::parse(w, end).map_err(|e| e.replacen("--window", flag, 1))).transpose()
        };
        let (window, diagram_window) =
            match (parse("--window", &args.window), parse("--diagram-window", &args.diagram_window)) {
                (Ok(w), Ok(d)) => (w.unwrap_or(Window::whole()), d),
                (Err(e), _) | (_, Err(e)) => {
                    eprintln!("error: {e}");
                    return INVALID;
                }
            };
        let diagram_view = args
            .diagram
            .is_some()
            .then(|| Rc::new(RefCell::new(DiagramView::new(&scenario, diagram_window.unwrap_or(window)))));
        let report_view = args.report.is_some().then(|| Rc::new(RefCell::new(ReportView::new(&scenario, window))));
        if let Some(v) = &diagram_view {
            trace.watchers.push(Box::new(v.clone()));
        }
        if let Some(v) = &report_view {
            trace.watchers.push(Box::new(v.clone()));
        }
        // Written and flushed before the timeline starts streaming through its own buffer.
        let mut out = std::io::stdout().lock();
        if !args.json {
            if let Err(e) = writeln!(out, "{}", scenario_header(&scenario, file)).and_then(|()| out.flush()) {
                return output_failed(&e, code);
            }
        }
        drop(out);
        // A long run shows how far its virtual clock has got — unless the timeline is streaming
        // to the same terminal, where the line would tear through it.
        let streaming = !quiet && std::io::stdout().is_terminal();
        let progress =
            (!streaming).then(|| Rc::new(Progress::new("virtual seconds", scenario.duration.millis() / 1000)));
        let report = run_scenario(
            &scenario,
            RunOptions {
                seed: args.seed,
                trace,
                progress: progress.clone().map(virtual_clock),
                max_events: args.max_events,
                // The report lists explain's key moments under its chart.
                narrator: args.report.is_some().then(crate::view::explain::narrator),
                ..Default::default()
            },
        );
        if let Some(p) = progress {
            p.finish();
        }
        if let Some(e) = &report.io_error {
            return output_failed(e, code);
        }
        if let Some(over) = report.budget_exceeded {
            // The verdicts of a run cut short mean nothing: say why it stopped, and nothing else.
            let mut out = std::io::stdout().lock();
            if args.json {
                docs.push(ScenarioDoc::new(file, &report));
            } else if let Err(e) = writeln!(out, "stopped: {over}").and_then(|()| out.flush()) {
                return output_failed(&e, INVALID);
            }
            over_budget(file, &over);
            code = INVALID;
            continue;
        }
        let mut ready = Vec::new();
        let diagram = diagram_view.map(|v| unwrap(v).finish());
        if let (Some(staged), Some(Ok(Drawn { around: Some(spans), .. }))) = (&staged_diagram, &diagram) {
            let spans: Vec<String> = spans.iter().map(|(a, b)| format!("{a}..{b}")).collect();
            eprintln!(
                "note: the whole run would be too long for Mermaid (over {MERMAID_MAX_TEXT} characters), so {} \
                 draws {} around its faults and checks; draw another part with --diagram-window FROM..TO",
                staged.dest().display(),
                spans.join(", ")
            );
        }
        let views = [
            // Mermaid's renderer refuses a long diagram unless told otherwise: say so here.
            (staged_diagram, diagram.map(|d| d.map(|d| d.text)), MERMAID_MAX_TEXT),
            (staged_report, report_view.map(|v| unwrap(v).finish(&report).map(|m| render(&m))), usize::MAX),
        ];
        let mut too_long = Vec::new();
        for (staged, text, renderable) in views {
            match (staged, text) {
                (Some(mut staged), Some(Ok(text))) => {
                    if text.len() > renderable {
                        eprintln!(
                            "warning: {} has {} characters; Mermaid refuses more than {MERMAID_MAX_TEXT} unless its \
                             maxTextSize is raised: draw part of the run with --diagram-window FROM..TO",
                            staged.dest().display(),
                            text.len()
                        );
                    }
                    if let Err(e) = staged.write_all(text.as_bytes()) {
                        return cannot_write(staged.dest(), &e);
                    }
                    ready.push(staged);
                }
                (_, Some(Err(e))) => too_long.push(e),
                _ => {}
            }
        }
        if !too_long.is_empty() {
            // The verdicts still count; the view that could not be drawn is an error, and no
            // output is put in place (a half set of files would look like a whole one).
            if args.json {
                docs.push(ScenarioDoc::new(file, &report));
            } else {
                let mut out = std::io::stdout().lock();
                if let Err(e) = print_report(&mut out, &report).and_then(|()| out.flush()) {
                    return output_failed(&e, INVALID);
                }
            }
            for e in too_long {
                eprintln!("error: {}: {e}", file.display());
            }
            code = INVALID;
            continue;
        }
        ready.extend(staged_trace);
        // All written before any is put in place: a failure leaves every previous file as it was.
        for staged in ready {
            let dest = staged.dest().to_path_buf();
            if let Err(e) = staged.commit() {
                return cannot_write(&dest, &e);
            }
        }
        if !report.all_held() && code == HELD {
            code = FAILED;
        }
        if args.json {
            docs.push(ScenarioDoc::new(file, &report));
            continue;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = print_report(&mut out, &report).and_then(|()| out.flush()) {
            return output_failed(&e, code);
        }
    }
    if args.json {
        let doc = RunDoc { command: "run", scenarios: docs };
        if let Err(e) = json::print(&mut std::io::stdout().lock(), &doc) {
            return output_failed(&e, code);
        }
    }
    code
}

/// A view back from the run, which has dropped its handle by the time it returns.
fn unwrap<V>(view: Rc<RefCell<V>>) -> V {
    match Rc::try_unwrap(view) {
        Ok(v) => v.into_inner(),
        Err(_) => unreachable!("the run's trace, and its handle on the view, ends with the run"),
    }
}

fn cannot_write(path: &Path, e: &std::io::Error) -> u8 {
    eprintln!("error: cannot write {}: {e}", path.display());
    INVALID
}

/// Feeds the progress line whole virtual seconds: a run has far more instants than redraws.
fn virtual_clock(progress: Rc<Progress>) -> Box<dyn Fn(SimTime)> {
    let last = Cell::new(u64::MAX);
    Box::new(move |now: SimTime| {
        let secs = now.since(SimTime::ZERO).millis() / 1000;
        if secs != last.replace(secs) {
            progress.update(secs);
        }
    })
}
