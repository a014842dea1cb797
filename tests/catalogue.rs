//! The teaching catalogue is part of the test suite: every scenario under `scenarios/` must
//! pass, and must replay identically from its seed.

use routesim::sim::runner::{run, RunOptions, RunReport};
use routesim::sim::scenario::{load, Scenario};
use routesim::sim::trace::TraceOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

fn catalogue() -> Vec<(PathBuf, Scenario)> {
    let mut files = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("scenarios/ exists") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 8, "the catalogue has at least 8 scenarios, found {}", files.len());
    files
        .into_iter()
        .map(|f| {
            let s = load(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (f, s)
        })
        .collect()
}

fn failures(report: &RunReport) -> Vec<String> {
    report.verdicts.iter().filter(|(_, v)| !v.held()).map(|(e, v)| format!("{}: {v:?}", e.name)).collect()
}

#[test]
fn every_catalogue_scenario_passes() {
    let mut broken = Vec::new();
    for (file, scenario) in catalogue() {
        let report = run(&scenario, RunOptions::default());
        assert!(!report.verdicts.is_empty(), "{} asserts nothing", file.display());
        let failed = failures(&report);
        if !failed.is_empty() {
            broken.push(format!("{} (seed {}):\n  {}", file.display(), report.seed, failed.join("\n  ")));
        }
    }
    assert!(broken.is_empty(), "catalogue scenarios failed:\n{}", broken.join("\n"));
}

#[test]
fn every_catalogue_scenario_replays_to_the_same_trace_digest() {
    for (file, scenario) in catalogue() {
        let first = run(&scenario, RunOptions::default());
        let second = run(&scenario, RunOptions::default());
        assert_eq!(first.digest, second.digest, "{} is not deterministic", file.display());
        assert_eq!(first.events, second.events);
    }
}

/// A `Write` that keeps what it is given, so two runs' JSON-lines files can be compared.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn jsonl(scenario: &Scenario, seed: Option<u64>) -> (Vec<u8>, String) {
    let out = Captured::default();
    let trace = TraceOptions { jsonl: Some(Box::new(out.clone())), ..Default::default() };
    let report = run(scenario, RunOptions { seed, trace, ..Default::default() });
    let bytes = out.0.lock().unwrap().clone();
    (bytes, report.digest)
}

#[test]
fn the_same_seed_writes_byte_identical_trace_files() {
    let (_, scenario) =
        catalogue().into_iter().find(|(f, _)| f.ends_with("09-lossy-link.toml")).expect("lossy-link scenario");
    let (a, _) = jsonl(&scenario, None);
    let (b, _) = jsonl(&scenario, None);
    assert!(a.len() > 1000);
    assert!(a == b, "two runs of the same seed wrote different JSON lines");
}

#[test]
fn another_seed_draws_other_losses() {
    // The lossy link is the one place randomness decides what happens: a different seed must
    // lose different packets, or the seed is not reaching the network.
    let (_, scenario) =
        catalogue().into_iter().find(|(f, _)| f.ends_with("09-lossy-link.toml")).expect("lossy-link scenario");
    let (_, d1) = jsonl(&scenario, Some(1));
    let (_, d2) = jsonl(&scenario, Some(2));
    assert_ne!(d1, d2);
}

#[test]
fn every_catalogue_scenario_survives_a_toml_round_trip() {
    // The writer that saves shrunk counterexamples must lose nothing a scenario can say.
    for (file, scenario) in catalogue() {
        let text = routesim::sim::scenario::to_toml(&scenario);
        let back =
            routesim::sim::scenario::parse(&file, &text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", file.display()));
        assert_eq!(back, scenario, "{} changed in the round trip:\n{text}", file.display());
    }
}
