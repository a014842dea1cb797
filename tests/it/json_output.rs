//! `--json` on `run`, `check` and `explore`: one JSON document on stdout and nothing else, the
//! same document for the same scenario and seed (but for `wall_clock`), and the exit codes of
//! the human output. The schema is `docs/json-output.md`.

use crate::common::{routesim, text, write, FAILING, HOLDS};
use serde_json::Value;

const KILL: &str = "scenarios/rocketmq/01-kill-vs-silent.toml";

/// [`FAILING`] with an expectation that holds, and one invariant enabled.
fn failing_and_holding() -> String {
    let with_invariant =
        FAILING.replace("duration = \"2m\"\n", "duration = \"2m\"\ninvariants = [\"consistent_tables\"]\n");
    format!("{with_invariant}{HOLDS}")
}

/// Stdout parsed as one JSON document: it fails if anything else was printed around it.
fn document(o: &std::process::Output) -> Value {
    let (out, err) = text(o);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("stdout is one JSON document ({e}):\n{out}\nstderr: {err}"))
}

#[test]
fn run_json_is_one_document_with_every_verdict_and_exit_1_on_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "fail.toml", failing_and_holding());
    let o = routesim(&["run", "--json", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "the exit code is the human output's");
    let doc = document(&o);
    assert_eq!(doc["command"], "run");
    let s = &doc["scenarios"][0];
    assert_eq!(s["file"], file.to_str().unwrap());
    assert_eq!(
        (s["name"].as_str(), s["seed"].as_u64(), s["duration_ms"].as_u64()),
        (Some("expects the impossible"), Some(5), Some(120_000))
    );
    assert!(s["events"].as_u64().unwrap() > 0 && s["trace_digest"].as_str().unwrap().len() == 32, "{s}");
    assert_eq!(s["held"], false);
    assert_eq!(s["stopped"], Value::Null);
    // The failed `at` expectation: its frame, when it was checked, and both sides.
    let failed = &s["expectations"][0];
    assert_eq!(failed["name"], "route survives a kill");
    assert_eq!(failed["frame"], serde_json::json!({ "kind": "at", "at_ms": 60_000 }));
    assert_eq!(failed["verdict"], "failed");
    assert_eq!(failed["failed_at_ms"], 60_000);
    assert_eq!(failed["expected"], "brokers [broker-a]");
    assert_eq!(failed["observed"], "absent (TOPIC_NOT_EXIST)");
    // The held `by` expectation carries its convergence time and no mismatch.
    let held = &s["expectations"][1];
    assert_eq!(held["frame"], serde_json::json!({ "kind": "by", "from_ms": 0, "deadline_ms": 10_000 }));
    assert_eq!(held["verdict"], "held");
    assert!(held["converged_after_ms"].is_u64(), "{held}");
    assert_eq!((&held["expected"], &held["observed"]), (&Value::Null, &Value::Null));
    assert_eq!(s["invariants"], serde_json::json!({ "checked": ["consistent_tables"], "violated": [] }));
}

#[test]
fn run_json_is_the_same_document_for_the_same_seed_and_has_no_timeline() {
    let first = routesim(&["run", "--json", KILL, KILL]);
    let second = routesim(&["run", "--json", KILL, KILL]);
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(first.stdout, second.stdout, "no wall-clock field in `run --json`");
    let doc = document(&first);
    assert_eq!(doc["scenarios"].as_array().unwrap().len(), 2, "one entry per FILE, in one document");
    let other_seed = routesim(&["run", "--json", "--seed", "7", KILL]);
    assert_eq!(document(&other_seed)["scenarios"][0]["seed"], 7);
}

#[test]
fn run_json_on_bad_input_prints_nothing_on_stdout_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.toml", failing_and_holding().replace("crash = \"a0\"", "crash = \"a9\""));
    let o = routesim(&["run", "--json", file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("unknown process \"a9\""), "{err}");
}

#[test]
fn check_json_gives_each_file_its_outcome_and_errors_and_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/", "scenarios/rocketmq/01-kill-vs-silent.toml"),
        dir.path().join("a.toml"),
    )
    .unwrap();
    write(dir.path(), "b.toml", failing_and_holding());
    write(dir.path(), "c.toml", "[scenario]\nname = 1\n");
    let args = ["check", "--json", "--jobs", "1", dir.path().to_str().unwrap()];
    let o = routesim(&args);
    assert_eq!(o.status.code(), Some(2), "an invalid file still makes it 2");
    assert!(text(&o).1.contains("c.toml:2:8"), "errors still go to stderr");
    let mut doc = document(&o);
    assert_eq!(doc["command"], "check");
    let outcomes: Vec<&str> = doc["files"].as_array().unwrap().iter().map(|f| f["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["PASS", "FAIL", "INVALID"]);
    let fail = &doc["files"][1];
    assert_eq!(fail["scenario"]["expectations"][0]["verdict"], "failed");
    let invalid = &doc["files"][2];
    assert_eq!(invalid["scenario"], Value::Null);
    assert_eq!((invalid["errors"][0]["line"].as_u64(), invalid["errors"][0]["column"].as_u64()), (Some(2), Some(8)));
    assert_eq!(doc["summary"], serde_json::json!({ "scenarios": 3, "passed": 1, "failed": 1, "invalid": 1 }));
    assert!(doc["wall_clock"]["elapsed_secs"].is_f64());
    // Everything but the wall clock is the same on a second run.
    let mut again = document(&routesim(&args));
    doc.as_object_mut().unwrap().remove("wall_clock");
    again.as_object_mut().unwrap().remove("wall_clock");
    assert_eq!(doc, again);
}

#[test]
fn explore_json_counts_cases_and_keeps_elapsed_under_wall_clock() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["explore", "--json", "--model", "rocketmq", "--cases", "3", "--seed", "4", "--jobs", "1", "--out"];
    let o = routesim(&[&args[..], &[dir.path().to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(0));
    let doc = document(&o);
    assert_eq!(doc["command"], "explore");
    assert_eq!(
        (doc["model"].as_str(), doc["seed"].as_u64(), doc["jobs"].as_u64()),
        (Some("rocketmq"), Some(4), Some(1))
    );
    assert_eq!(doc["cases"], 3);
    assert!(doc["events"].as_u64().unwrap() > 0);
    assert_eq!(doc["failures"], serde_json::json!([]));
    assert!(doc["wall_clock"]["elapsed_secs"].is_f64() && doc["wall_clock"]["cases_per_sec"].is_f64(), "{doc}");
}

/// A sweep run as two shards and merged is the sweep run whole: the same cases, the same events
/// (every case is the same scenario wherever it runs), the same failures; and a merge that
/// lacks a shard refuses rather than report a clean sweep that never ran.
#[test]
fn explore_shards_merge_into_the_whole_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let explore = |shard: &str, file: &str| {
        let out = routesim(&[
            "explore", "--model", "nacos", "--cases", "6", "--seed", "5", "--shard", shard, "--out", d, "--json",
        ]);
        assert!(out.status.code().is_some_and(|c| c <= 1), "{}", text(&out).1);
        std::fs::write(dir.path().join(file), &out.stdout).unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let whole = explore("0/1", "whole.json.txt");
    let a = explore("0/2", "a.json");
    let b = explore("1/2", "b.json");
    assert_eq!((a["cases"].as_u64(), b["cases"].as_u64()), (Some(3), Some(3)));
    let merged = routesim(&[
        "explore",
        "--merge",
        dir.path().join("a.json").to_str().unwrap(),
        dir.path().join("b.json").to_str().unwrap(),
        "--json",
    ]);
    let m: serde_json::Value = serde_json::from_slice(&merged.stdout).expect("one JSON document");
    assert_eq!(m["cases"], whole["cases"]);
    assert_eq!(m["events"], whole["events"], "the same cases simulate the same events");
    assert_eq!(m["failures"].as_array().unwrap().len(), whole["failures"].as_array().unwrap().len());
    // A folder works too; a missing shard is an error.
    let only_a = routesim(&["explore", "--merge", dir.path().join("a.json").to_str().unwrap()]);
    assert_eq!(only_a.status.code(), Some(2));
    assert!(text(&only_a).1.contains("missing [\"1/2\"]"), "{}", text(&only_a).1);
    let folder = routesim(&["explore", "--merge", d]);
    assert_eq!(folder.status.code(), merged.status.code(), "{}", text(&folder).1);
}
