//! Diagrams and reports in a real browser: every Mermaid diagram must render to an SVG with the
//! Mermaid library (from disk, no CDN), and every HTML report must load in headless Chromium
//! without console errors and show its lanes. Screenshots land in `target/tmp/browser/`.
//!
//! Needs Debian's `chromium` and `npm ci` in `tests/browser` (both done by `.ci/run`, which sets
//! `ROUTESIM_BROWSER_TESTS=1` so a missing browser fails instead of skipping).

use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::{load, Scenario};
use routesim::sim::trace::TraceOptions;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether the browser toolchain is here; skips (or fails under CI) when it is not.
fn browser_ready() -> bool {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let ready = Path::new(&chromium).exists() && root().join("tests/browser/node_modules/mermaid").exists();
    if !ready {
        let why = "needs /usr/bin/chromium and `npm ci` in tests/browser (.ci/run installs both)";
        assert!(std::env::var("ROUTESIM_BROWSER_TESTS").is_err(), "browser tests required but {why}");
        eprintln!("skipped: {why}");
    }
    ready
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

fn kept(s: &Scenario) -> routesim::sim::runner::RunReport {
    run(s, RunOptions { trace: TraceOptions { keep: true, ..Default::default() }, ..Default::default() })
}

#[test]
fn mermaid_diagrams_render_to_svg_without_errors() {
    if !browser_ready() {
        return;
    }
    for (name, s) in samples() {
        let report = kept(&s);
        let mmd = out_dir().join(format!("{name}.mmd"));
        std::fs::write(&mmd, routesim::view::mermaid::sequence_diagram(&s, &report.kept)).unwrap();
        let v = check("mermaid", &mmd, &out_dir().join(format!("{name}-diagram.png")));
        assert_eq!(v["error"], serde_json::Value::Null, "{name}: {v}");
        assert_eq!(v["svg"], true, "{name}: {v}");
        assert!(v["messages"].as_u64().unwrap() > 5, "{name}: {v}");
        assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{name}: {v}");
    }
}

#[test]
fn html_reports_load_cleanly_and_show_their_lanes() {
    if !browser_ready() {
        return;
    }
    for (name, s) in samples() {
        let report = kept(&s);
        let html = out_dir().join(format!("{name}.html"));
        std::fs::write(&html, routesim::view::report::html(&s, &report)).unwrap();
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
    }
}
