//! Regressions: model bugs that `routesim explore` found, each pinned by a hand-trimmed scenario
//! under `tests/regressions/` named after what it pins. Every one must keep its expectations and
//! its invariants; each file's opening comment says what broke and where it was fixed.

use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::load;
use std::path::Path;

#[test]
fn every_regression_found_by_exploration_stays_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/regressions exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no regression scenarios in {}", dir.display());
    let mut broken = Vec::new();
    for file in files {
        let scenario = load(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(!scenario.expects.is_empty() && !scenario.invariants.is_empty(), "{} pins nothing", file.display());
        let report = run(&scenario, RunOptions::default());
        let failed: Vec<String> = report
            .verdicts
            .iter()
            .filter(|(_, v)| !v.held())
            .map(|(e, v)| format!("{}: {v:?}", e.name))
            .chain(report.violations.iter().map(|v| v.to_string()))
            .collect();
        if !failed.is_empty() {
            broken.push(format!("{} (seed {}):\n  {}", file.display(), report.seed, failed.join("\n  ")));
        }
    }
    assert!(broken.is_empty(), "regressions came back:\n{}", broken.join("\n"));
}
