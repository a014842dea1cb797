//! Checks that need a tool from outside Rust.
//!
//! - A real browser: every Mermaid diagram must render to an SVG with the Mermaid library (from
//!   disk, no CDN), and every HTML report must load in headless Chromium without console errors
//!   and show its lanes. Screenshots land in `target/tmp/browser/`. Needs Debian's `chromium` and
//!   `npm ci` in `tests/browser`.
//! - A terminal: progress lines are drawn only on one, so these run `routesim` on a
//!   pseudo-terminal from util-linux `script`.
//!
//! A check whose tool is missing is reported as *ignored*, with the reason, never as passed.
//! `.ci/run` installs every tool and sets `ROUTESIM_TOOL_TESTS=1`, under which a missing tool is
//! a failure instead. This file has its own harness (`libtest-mimic`) because the standard one
//! can only ignore a test when it is compiled, not when it finds out what the machine has.

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::{load, Scenario};
use routesim::sim::trace::TraceOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        needs(browser_missing, "mermaid_diagrams_render_to_svg_without_errors", mermaid_diagrams_render),
        needs(browser_missing, "html_reports_load_cleanly_and_show_their_lanes", html_reports_load),
        needs(browser_missing, "producer_charts_show_when_sends_retry_and_fail", producer_charts_show),
        needs(browser_missing, "a_report_screenshot_names_its_faults_expectations_colours_and_moments", report_teaches),
        needs(browser_missing, "sweep_reports_draw_a_labelled_histogram_per_expectation", sweep_report_draws),
        needs(script_missing, "check_on_a_terminal_draws_a_progress_line", check_draws_progress),
        needs(script_missing, "run_on_a_terminal_shows_virtual_time_progress", run_shows_progress),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// A trial that runs `check` when `missing` finds its tool, and is ignored with the reason
/// otherwise (or fails, when the tools are required).
fn needs(missing: fn() -> Option<&'static str>, name: &'static str, check: fn()) -> Trial {
    Trial::ignorable_test(name, move || match missing() {
        Some(why) if std::env::var_os("ROUTESIM_TOOL_TESTS").is_some() => {
            Err(Failed::from(format!("ROUTESIM_TOOL_TESTS is set but this {why}")))
        }
        Some(why) => Ok(Completion::ignored_with(why)),
        None => {
            check();
            Ok(Completion::Completed)
        }
    })
}

fn browser_missing() -> Option<&'static str> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let ready = Path::new(&chromium).exists() && root().join("tests/browser/node_modules/mermaid").exists();
    (!ready).then_some("needs /usr/bin/chromium and `npm ci` in tests/browser (.ci/run installs both)")
}

fn script_missing() -> Option<&'static str> {
    let found = Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success());
    (!found).then_some("needs util-linux `script` for a pseudo-terminal")
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn check(mode: &str, input: &Path, screenshot: &Path) -> serde_json::Value {
    let out = Command::new("node")
        .arg(root().join("tests/browser/check.mjs"))
        .args([mode, input.to_str().unwrap(), screenshot.to_str().unwrap()])
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "check.mjs failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// A few catalogue scenarios that between them use every kind of event: RocketMQ's kill, scan,
/// partition and batch race; Nacos's 20404 and re-registration, a half-hour of flapping (the
/// diagram's repetition folding), and pushes to a subscriber.
const SAMPLES: &[&str] = &[
    "rocketmq/01-kill-vs-silent",
    "rocketmq/05-partition-one-namesrv",
    "rocketmq/07-expiry-reregistration-race",
    "nacos/03-server-restart",
    "nacos/05-metadata",
    "nacos/07-subscriber",
];

fn samples() -> Vec<(String, Scenario)> {
    SAMPLES.iter().map(|n| (n.replace('/', "-"), load(&root().join(format!("scenarios/{n}.toml"))).unwrap())).collect()
}

/// A run with its trace kept and its key moments told, as `run --report` makes one.
fn kept(s: &Scenario) -> routesim::sim::runner::RunReport {
    let trace = TraceOptions { keep: true, ..Default::default() };
    run(s, RunOptions { trace, narrator: Some(routesim::view::explain::narrator()), ..Default::default() })
}

/// Long runs drawn from catalogue scenarios: (scenario, duration, drawn around its faults and
/// checks because the whole run would pass Mermaid's limit).
const LONG_RUNS: &[(&str, &str, bool)] = &[
    ("nacos/05-metadata", "1h", false),
    ("nacos/08-two-servers-without-distro", "2h", true),
    ("rocketmq/09-lossy-link", "2h", true),
];

/// Every catalogue scenario's diagram, and those of a 1-hour and two 2-hour runs, as `routesim
/// run --diagram` writes them, render in Mermaid from npm: none is over Mermaid's text limit,
/// and the long ones that would be say which part they draw.
fn mermaid_diagrams_render() {
    let dir = out_dir().join("diagrams");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let draw = |scenario: &Path, name: &str| {
        let mmd = dir.join(format!("{name}.mmd"));
        let out = Command::new(env!("CARGO_BIN_EXE_routesim"))
            .args(["run", "-q", scenario.to_str().unwrap(), "--diagram", mmd.to_str().unwrap()])
            .output()
            .unwrap();
        let text = std::fs::read_to_string(&mmd).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(text.len() <= routesim::view::mermaid::MERMAID_MAX_TEXT, "{name}: {} characters", text.len());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let mut catalogue = 0;
    for kind in ["rocketmq", "nacos"] {
        for entry in std::fs::read_dir(root().join("scenarios").join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{kind}-{}", path.file_stem().unwrap().to_string_lossy());
            let stderr = draw(&path, &name);
            assert!(!stderr.contains("--diagram-window"), "{name} is drawn whole: {stderr}");
            catalogue += 1;
        }
    }
    assert!(catalogue >= 28, "found {catalogue} catalogue scenarios");
    for (scenario, duration, around) in LONG_RUNS {
        let source = std::fs::read_to_string(root().join(format!("scenarios/{scenario}.toml"))).unwrap();
        let (line, _) = source.lines().enumerate().find(|(_, l)| l.starts_with("duration = ")).unwrap();
        let long: Vec<String> = source
            .lines()
            .enumerate()
            .map(|(i, l)| if i == line { format!("duration = \"{duration}\"") } else { l.to_string() })
            .collect();
        let name = format!("{}-{duration}", scenario.replace('/', "-"));
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, long.join("\n")).unwrap();
        let stderr = draw(&file, &name);
        assert_eq!(stderr.contains("around its faults and checks"), *around, "{name}: {stderr}");
        if *around {
            assert!(stderr.contains("--diagram-window FROM..TO"), "{name}: {stderr}");
        }
    }
    let v = check("mermaids", &dir, &dir);
    let diagrams = v["diagrams"].as_object().unwrap();
    assert_eq!(diagrams.len(), catalogue + LONG_RUNS.len(), "{v}");
    for (name, d) in diagrams {
        assert_eq!(d["error"], serde_json::Value::Null, "{name}: {d}");
        assert_eq!(d["svg"], true, "{name}: {d}");
        assert!(d["messages"].as_u64().unwrap() > 5, "{name}: {d}");
        assert_eq!(d["errors"].as_array().unwrap().len(), 0, "{name}: {d}");
    }
}

fn html_reports_load() {
    for (name, s) in samples() {
        let report = kept(&s);
        let html = out_dir().join(format!("{name}.html"));
        std::fs::write(&html, routesim::view::report::html(&s, &report).unwrap()).unwrap();
        let v = check("report", &html, &out_dir().join(format!("{name}-report.png")));
        assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{name}: {v}");
        let lanes: Vec<&str> = v["lanes"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        for process in s.process_names() {
            assert!(lanes.contains(&process.as_str()), "{name}: no lane for {process}: {lanes:?}");
        }
        for (exp, _) in &report.verdicts {
            assert!(lanes.iter().any(|l| l.ends_with(&exp.name)), "{name}: no row for expectation {}", exp.name);
        }
        if !s.brokers.is_empty() {
            assert!(lanes.iter().any(|l| l.contains(" · live ")), "{name}: no live-table rows: {lanes:?}");
        }
        // Every Nacos instance has a row at a naming server, every subscriber a row per instance seen.
        for app in &s.nacos.apps {
            for i in &app.instances {
                let row = |l: &&str| l.ends_with(&format!(" · {}", i.name)) && !l.contains('✔');
                assert!(lanes.iter().any(row), "{name}: no naming-server row for {}: {lanes:?}", i.name);
            }
        }
        for sub in &s.nacos.subscribers {
            let prefix = format!("{} · ", sub.name);
            assert!(lanes.iter().any(|l| l.starts_with(&prefix)), "{name}: no view rows for {}: {lanes:?}", sub.name);
        }
        assert!(v["marks"].as_u64().unwrap() > 10, "{name}: {v}");
        if s.producers.is_empty() {
            assert!(!v["legend"].as_str().unwrap().contains("send ok"), "{name}: a chart legend without producers");
        }
    }
}

/// Lesson rocketmq/14 in a browser: each producer has a sends chart and a latency chart; kill -9
/// shows as retried sends and no failures, power-off as failures, all after the fault; the
/// legend explains the classes.
fn producer_charts_show() {
    let s = load(&root().join("scenarios/rocketmq/14-producer-kill-vs-power-off.toml")).unwrap();
    let report = kept(&s);
    let html = out_dir().join("rocketmq-14-producer-charts.html");
    std::fs::write(&html, routesim::view::report::html(&s, &report).unwrap()).unwrap();
    let v = check("report", &html, &out_dir().join("rocketmq-14-producer-charts.png"));
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v}");
    let lanes: Vec<&str> = v["lanes"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    // The faults both strike at 65 s.
    let fault = s.timeline.iter().map(|e| e.at.millis()).min().unwrap();
    let times = |producer: &str, class: &str| -> Vec<u64> {
        let ts = v["charts"][producer][class].as_array().cloned().unwrap_or_default();
        ts.iter().map(|t| t.as_u64().unwrap()).collect()
    };
    for p in &s.producers {
        // Two chart rows per producer, each labelled with its own maximum.
        for row in [format!("{} · sends/1s (max ", p.name), format!("{} · latency (max ", p.name)] {
            assert!(lanes.iter().any(|l| l.starts_with(&row)), "no row {row:?}: {lanes:?}");
        }
        // Sends were stored from the first second to the last, and each bucket has its latency.
        assert!(times(&p.name, "sent-ok").len() > 250, "{}: {v}", p.name);
        assert!(times(&p.name, "lat-max").len() > 250 && times(&p.name, "lat-p99").len() > 250, "{v}");
    }
    // kill -9: retried, never failed, and only after the kill.
    let retried = times("to-killed", "sent-retried");
    assert!(!retried.is_empty() && retried.iter().all(|&t| t + 1000 > fault), "{retried:?}");
    assert!(times("to-killed", "sent-failed").is_empty(), "{v}");
    // Power-off: failed sends, every one after the power went off.
    let failed = times("to-powered-off", "sent-failed");
    assert!(!failed.is_empty() && failed.iter().all(|&t| t + 1000 > fault), "{failed:?}");
    assert_eq!(v["untitledCharts"], 0, "every chart bar has a tooltip");
    let legend = v["legend"].as_str().unwrap();
    for entry in ["send ok", "send retried-ok", "send failed", "slowest send", "p99 latency"] {
        assert!(legend.contains(entry), "legend lacks {entry:?}: {legend}");
    }
}

/// Issue 13 item 2: a screenshot of the report, with nothing hovered, says what happened. The
/// scenario's faults are named on the chart at their times, every expectation's full name is
/// written in its lane without running off the column, the legend names the states these runs
/// draw, and explain's key moments are listed under the chart — clicking one marks its instant.
fn report_teaches() {
    let legends: [(&str, &[&str]); 2] = [
        ("rocketmq/01-kill-vs-silent", &["in live table", "in route", "held", "down", "expiry / deletion", "fault"]),
        ("nacos/07-subscriber", &["registered, healthy", "registered, unhealthy", "held", "marked unhealthy", "push"]),
    ];
    for (file, legend) in legends {
        let s = load(&root().join(format!("scenarios/{file}.toml"))).unwrap();
        let report = kept(&s);
        let name = file.replace('/', "-");
        let html = out_dir().join(format!("{name}-teaches.html"));
        std::fs::write(&html, routesim::view::report::html(&s, &report).unwrap()).unwrap();
        let v = check("report", &html, &out_dir().join(format!("{name}-teaches.png")));
        assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{name}: {v}");
        // Each fault's name, as visible text at its time, none drawn over another.
        let faults = v["faultLabels"].as_array().unwrap();
        assert!(!s.timeline.is_empty(), "{name}: a scenario with faults");
        for e in &s.timeline {
            let at = e.at.millis();
            assert!(
                faults.iter().any(|f| f["text"].as_str().unwrap().contains(&e.name) && f["at"] == at),
                "{name}: no label {:?} at {at}: {faults:?}",
                e.name
            );
        }
        assert_eq!(v["overlappingFaultLabels"], 0, "{name}: fault labels drawn over each other: {faults:?}");
        // Every expectation's whole name, inside the label column.
        let lanes = v["laneTexts"].as_array().unwrap();
        for (exp, verdict) in &report.verdicts {
            let full = format!("{} {}", if verdict.held() { "✔" } else { "✘" }, exp.name);
            assert!(lanes.iter().any(|l| l["text"] == full.as_str()), "{name}: no lane reads {full:?}: {lanes:?}");
        }
        let cut: Vec<_> = lanes.iter().filter(|l| l["fits"] != true).collect();
        assert!(cut.is_empty(), "{name}: labels running off the column: {cut:?}");
        // The legend names what these runs draw, each entry visible with its swatch.
        let entries: Vec<&str> = v["legendEntries"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
        for entry in legend {
            assert!(entries.contains(entry), "{name}: legend lacks {entry:?}: {entries:?}");
        }
        // The key moments, as explain tells them, in order; the faults among them.
        let shown = v["moments"].as_array().unwrap();
        assert_eq!(shown.len(), report.moments.len().min(300), "{name}: {shown:?}");
        for (m, text) in report.moments.iter().zip(shown) {
            let text = text.as_str().unwrap();
            assert!(text.starts_with(&format!("{} {}", m.t, m.actor)) && text.contains(&m.story[0]), "{name}: {text}");
        }
        let fault = report.moments.iter().find(|m| m.story[0].starts_with("FAULT ")).expect("a fault's moment");
        // Clicking the first fault's moment draws a visible line at its instant, a fault's time.
        let h = &v["highlightAfterClick"];
        assert_eq!(h["visible"], true, "{name}: {h}");
        assert_eq!((&h["at"], &h["cursor"]), (&fault.t.millis().into(), &fault.t.millis().into()), "{name}: {h}");
        assert!(s.timeline.iter().any(|e| e.at == fault.t), "{name}: {h}");
    }
}

/// Runs `routesim` on a pseudo-terminal, which merges stdout and stderr into the output's stdout.
fn on_a_terminal(args: &str) -> Output {
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_routesim"));
    Command::new("script").args(["-qec", &cmd, "/dev/null"]).current_dir(root()).output().expect("script runs")
}

/// `routesim check` draws its progress line on a terminal (and only there: `tests/it/cli.rs`
/// checks the piped output has none).
fn check_draws_progress() {
    let o = on_a_terminal("check scenarios/nacos --jobs 2");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let n = std::fs::read_dir(root().join("scenarios/nacos")).unwrap().count();
    assert!(out.contains(&format!("] {n}/{n} scenarios")), "a progress line ending at {n}/{n}: {out:?}");
    assert!(out.contains(&format!("{n} scenarios: {n} passed")), "{out:?}");
}

/// A run with its timeline off shows how far the virtual clock has got, then the verdicts.
fn run_shows_progress() {
    let o = on_a_terminal("run --quiet scenarios/rocketmq/01-kill-vs-silent.toml");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("/300 virtual seconds"), "a progress line over the 5 min run: {out:?}");
    assert!(out.contains("PASS  the killed broker is gone within 10 ms"), "then the verdicts: {out:?}");
}

/// `routesim sweep --report`: a power-off at a random phase, swept over 200 seeds; the page
/// shows a histogram of all 200 convergence times with its quantiles, every label inside the
/// chart, and the bounds' verdicts as text.
fn sweep_report_draws() {
    let file = root().join("tests/fixtures/phased-power-off.toml");
    let source = std::fs::read_to_string(&file).unwrap();
    let opts = routesim::sim::sweep::SweepOptions { first_seed: 1, runs: 200, jobs: 2, max_events: 1_000_000 };
    let report =
        routesim::sim::sweep::sweep(&file, &source, &opts, &|_| {}).unwrap_or_else(|(seed, e)| panic!("{seed}: {e}"));
    let html = out_dir().join("sweep.html");
    std::fs::write(&html, routesim::view::sweep::html(&report, "phased-power-off.toml", "1..=200")).unwrap();
    let v = check("sweep", &html, &out_dir().join("sweep.png"));
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v}");
    let charts = v["charts"].as_array().unwrap();
    assert_eq!(charts.len(), 1, "{v}");
    assert_eq!(charts[0]["runs"], 200, "{v}");
    assert_eq!(charts[0]["quantiles"], serde_json::json!(["p50", "p90", "p99"]), "{v}");
    assert_eq!(charts[0]["clipped"], 0, "labels cut off at the chart's edge: {v}");
    let text = v["text"].as_str().unwrap();
    assert!(text.contains("PASS converges max = 2m5s"), "{text}");
}
