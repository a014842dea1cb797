//! Times written as ranges, drawn from the seed, and `routesim sweep`, which runs a scenario
//! over many seeds and reports distributions.

use crate::common::{errors, routesim, text, write};

/// A power-off at a random phase of the broker's 30 s register cycle (and of its 5 s polls of
/// the name server, whose idle close also ends the route); the expectation counts from it.
fn phased(within: &str) -> String {
    phased_with(within, "")
}

/// [`phased`], with more lines in its expectation (`converges = ...`).
fn phased_with(within: &str, extra: &str) -> String {
    format!(
        r#"
[scenario]
name = "power-off at a random phase"
seed = 1
duration = "6m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "b0"
broker_name = "broker-b"
addr = "10.0.0.2:10911"
start = "0s..30s"
topics = [{{ name = "Orders", read = 4, write = 4 }}]

[[fault]]
name = "power off b0"
at = "60s..90s"
host_down = "b0"

[[expect]]
name = "the silent broker leaves the route"
after = "power off b0"
within = "{within}"
route = {{ namesrv = "ns1", topic = "Orders", absent = true }}
{extra}
"#
    )
}

#[test]
fn a_range_is_drawn_from_the_seed_and_printed_under_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "p.toml", phased("130s"));
    let f = file.to_str().unwrap();
    let (a, _) = text(&routesim(&["run", "-q", f, "--seed", "3"]));
    let (b, _) = text(&routesim(&["run", "-q", f, "--seed", "3"]));
    let (c, _) = text(&routesim(&["run", "-q", f, "--seed", "4"]));
    assert_eq!(a, b, "the same seed draws the same instants");
    let drawn = |out: &str| out.lines().filter(|l| l.contains("drawn")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(drawn(&a).len(), 2, "{a}");
    assert!(drawn(&a)[1].contains("at  60.000s..90.000s  ->"), "{a}");
    assert_ne!(drawn(&a), drawn(&c), "another seed draws other instants");
}

#[test]
fn a_sweep_reports_how_often_each_expectation_held_and_its_distribution() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "p.toml", phased("130s"));
    let out = routesim(&["sweep", file.to_str().unwrap(), "--runs", "60", "--histogram"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("sweep: 60 runs, seeds 1..=60"), "{stdout}");
    assert!(stdout.contains("held in 60 of 60 runs"), "{stdout}");
    // A silent broker goes by its last registration + 120 s + a scan (5 s), or by the idle
    // close 120 s after its last 5 s poll: from the failure, within 90-125 s whatever the phase.
    let line = stdout.lines().find(|l| l.contains("converged after")).expect("a distribution");
    let secs = |key: &str| -> f64 {
        let v = line.split(&format!("{key} ")).nth(1).unwrap().split('s').next().unwrap();
        v.parse().unwrap()
    };
    assert!(secs("min") >= 90.0 && secs("max") <= 125.0, "{line}");
    assert!(secs("min") < secs("p50") && secs("p50") < secs("max"), "phases spread the times: {line}");
    assert!(stdout.contains("|#"), "a histogram: {stdout}");
}

#[test]
fn a_failing_seed_is_listed_as_a_command_that_replays_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "p.toml", phased("100s"));
    let f = file.to_str().unwrap();
    let out = routesim(&["sweep", f, "--runs", "40"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let replay = stdout.lines().find(|l| l.trim_start().starts_with("routesim run")).expect("a replay command");
    let seed = replay.split("--seed ").nth(1).unwrap().trim();
    let again = routesim(&["run", "-q", f, "--seed", seed]);
    assert_eq!(again.status.code(), Some(1), "seed {seed} fails when run alone too");
}

#[test]
fn the_json_document_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "p.toml", phased("110s"));
    let f = file.to_str().unwrap();
    let one = routesim(&["sweep", f, "--runs", "30", "--json", "--jobs", "1"]);
    let two = routesim(&["sweep", f, "--runs", "30", "--json", "--jobs", "2"]);
    assert_eq!(one.stdout, two.stdout);
    let doc: serde_json::Value = serde_json::from_slice(&one.stdout).expect("one JSON document");
    let e = &doc["expectations"][0];
    assert_eq!(e["runs"], 30);
    let held = e["held"].as_u64().unwrap();
    assert_eq!(doc["failing_seeds"].as_array().unwrap().len() as u64, 30 - held);
    assert_eq!(e["converged_ms"]["count"].as_u64().unwrap(), held);
    assert_eq!(doc["seeds"].as_array().unwrap().len(), 30);
}

#[test]
fn a_bad_range_is_refused_with_its_position() {
    let e = errors("\n[[fault]]\nname = \"k\"\nat = \"90s..60s\"\ncrash = \"a0\"\n").to_string();
    assert!(e.contains("t.toml:17:6") && e.contains("ends before it starts"), "{e}");
    let e = errors("\n[[fault]]\nname = \"k\"\nat = \"1m..10m\"\ncrash = \"a0\"\n").to_string();
    assert!(e.contains("past the end of the scenario"), "{e}");
    let e = errors("\n[[fault]]\nname = \"k\"\nat = \"1m..soon\"\ncrash = \"a0\"\n").to_string();
    assert!(e.contains("invalid range"), "{e}");
}

#[test]
fn sweep_refuses_bad_arguments_with_exit_2() {
    for args in
        [&["sweep", "nope.toml"][..], &["sweep", "scenarios/rocketmq/01-kill-vs-silent.toml", "--runs", "0"][..]]
    {
        let out = routesim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out).1);
    }
}

#[test]
fn converges_bounds_the_distribution_of_a_sweep() {
    let dir = tempfile::tempdir().unwrap();
    // The scan ends the route 120-125 s after the last registration, so no sooner than 90 s
    // after a failure that falls just before the next one; the idle close, 120 s after the last
    // 5 s poll, ends it by about 120 s whatever the phase.
    let ok = write(dir.path(), "ok.toml", phased_with("130s", "converges = { min = \"90s..100s\", max = \"125s\" }"));
    let out = routesim(&["sweep", ok.to_str().unwrap(), "--runs", "60"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("PASS  converges max = 2m5s: measured"), "{stdout}");
    // Every run holds, but the median is not what this file claims: the sweep fails.
    let bad = write(dir.path(), "bad.toml", phased_with("130s", "converges = { p50 = \"1m..1m30s\" }"));
    let out = routesim(&["sweep", bad.to_str().unwrap(), "--runs", "60", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bound = &doc["expectations"][0]["converges"][0];
    assert_eq!(bound["quantile"], "p50");
    assert_eq!(bound["held"], false);
    assert!(bound["measured_ms"].as_u64().unwrap() > 90_000, "{bound}");
    assert_eq!(doc["failing_seeds"].as_array().unwrap().len(), 0, "every run held; only the bound failed");
}

#[test]
fn converges_needs_an_after_within_frame_and_a_valid_bound() {
    let e = errors("\n[[expect]]\nname = \"x\"\nat = \"1m\"\nlive = { namesrv = \"ns1\", broker = \"a0\", present = true }\nconverges = { p99 = \"5s\" }\n").to_string();
    assert!(e.contains("`converges` needs an `after`/`within` expectation"), "{e}");
    let frame = "\n[[expect]]\nname = \"x\"\nafter = \"1m\"\nwithin = \"1m\"\nlive = { namesrv = \"ns1\", broker = \"a0\", present = true }\n";
    let e = errors(&format!("{frame}converges = {{ p99 = \"soon\" }}\n")).to_string();
    assert!(e.contains("invalid p99"), "{e}");
    let e = errors(&format!("{frame}converges = {{ p95 = \"5s\" }}\n")).to_string();
    assert!(e.contains("p95"), "{e}");
    let e = errors(&format!("{frame}converges = {{}}\n")).to_string();
    assert!(e.contains("states no bound"), "{e}");
}

#[test]
fn converges_survives_a_toml_round_trip() {
    use routesim::sim::scenario::{parse, to_toml};
    use std::path::Path;
    let s = parse(Path::new("p.toml"), &phased_with("130s", "converges = { p50 = \"1m40s..1m55s\", p99 = \"2m5s\" }"))
        .unwrap();
    assert_eq!(s.expects[0].converges.len(), 2);
    let back = parse(Path::new("p.toml"), &to_toml(&s)).unwrap();
    assert_eq!(back.expects, s.expects);
}

#[test]
fn report_writes_a_self_contained_page_with_a_histogram_per_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("sweep.html");
    let out = routesim(&[
        "sweep",
        "tests/fixtures/phased-power-off.toml",
        "--runs",
        "50",
        "--report",
        page.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg data-expect=\"the silent broker leaves the route within 125 s\""), "{html}");
    assert!(html.matches("class=\"bin\"").count() <= 12, "at most 12 bins");
    assert!(!html.contains("<script") && !html.contains("http"), "self-contained, no script, no link out");
    // An unwritable path is found before the runs, with exit 2.
    let out = routesim(&["sweep", "tests/fixtures/phased-power-off.toml", "--report", "/nonexistent-dir/x.html"]);
    assert_eq!(out.status.code(), Some(2));
}
