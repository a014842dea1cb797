//! `--json`: what `run`, `check` and `explore` print as one JSON document instead of their
//! human output. The schema is documented field by field in `docs/json-output.md`; change both
//! together.
//!
//! The document is a function of the scenario and seed (and, for `explore`, of its flags): a
//! script can diff two runs. The only exceptions are the fields under `wall_clock`, kept apart
//! so a diff can drop them in one place. Times are virtual milliseconds since the run began
//! (`*_ms`), the unit the trace uses, so a script never parses `"60.000s"`.

use crate::sim::expect::{Verdict, When};
use crate::sim::runner::{BudgetExceeded, RunReport};
use crate::sim::scenario::LoadError;
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// `run --json`: every scenario given, in order.
#[derive(Serialize)]
pub struct RunDoc {
    pub command: &'static str,
    pub scenarios: Vec<ScenarioDoc>,
}

/// One run of one scenario: what the human output's verdict block and closing line say.
#[derive(Serialize)]
pub struct ScenarioDoc {
    pub file: String,
    pub name: String,
    pub seed: u64,
    pub events: u64,
    pub trace_digest: String,
    /// The scenario's virtual duration.
    pub duration_ms: u64,
    /// Every expectation held and no invariant was violated, in a run that reached its end.
    pub held: bool,
    /// Set when the run was cut short; its verdicts then mean little.
    pub stopped: Option<StoppedDoc>,
    pub expectations: Vec<ExpectationDoc>,
    pub invariants: InvariantsDoc,
}

#[derive(Serialize)]
pub struct StoppedDoc {
    /// `event_budget` (`--max-events`) or `timeout` (`check --timeout`, wall clock).
    pub reason: &'static str,
    pub at_ms: u64,
    pub events: u64,
}

#[derive(Serialize)]
pub struct ExpectationDoc {
    pub name: String,
    pub frame: FrameDoc,
    /// `held` or `failed`.
    pub verdict: &'static str,
    /// `by` frames that held: how long after `from_ms` the claim first held.
    pub converged_after_ms: Option<u64>,
    /// Failed verdicts: the instant the claim was found false, and both sides of it.
    pub failed_at_ms: Option<u64>,
    pub expected: Option<String>,
    pub observed: Option<String>,
    /// What a `sends` subject measured when it held (the human output's `measured:` line).
    pub measured: Option<String>,
}

/// The time frame as the scenario gave it, anchors resolved to times. Only the fields of its
/// `kind` are present: `at` has `at_ms`; `by` (`after` + `within`) has `from_ms` and
/// `deadline_ms`; `during` (`from` + `until`) has `from_ms` and `until_ms`.
#[derive(Serialize)]
pub struct FrameDoc {
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
}

#[derive(Serialize)]
pub struct InvariantsDoc {
    /// The keys the scenario enabled (`invariants = [...]`), checked at every event.
    pub checked: Vec<&'static str>,
    pub violated: Vec<ViolationDoc>,
}

#[derive(Serialize)]
pub struct ViolationDoc {
    pub invariant: &'static str,
    pub at_ms: u64,
    pub detail: String,
}

impl ScenarioDoc {
    pub fn new(file: &Path, r: &RunReport) -> Self {
        let expectations = r
            .verdicts
            .iter()
            .enumerate()
            .map(|(i, (exp, verdict))| {
                let (converged, failed) = match verdict {
                    Verdict::Held { converged } => (converged.map(|d| d.millis()), None),
                    Verdict::Failed { at, mismatch } => (None, Some((at.millis(), mismatch))),
                };
                ExpectationDoc {
                    name: exp.name.clone(),
                    frame: FrameDoc::new(&exp.when),
                    verdict: if verdict.held() { "held" } else { "failed" },
                    converged_after_ms: converged,
                    failed_at_ms: failed.map(|(at, _)| at),
                    expected: failed.map(|(_, m)| m.expected.clone()),
                    observed: failed.map(|(_, m)| m.got.clone()),
                    measured: if verdict.held() { r.figures.get(i).cloned().flatten() } else { None },
                }
            })
            .collect();
        let violated = r
            .violations
            .iter()
            .map(|v| ViolationDoc { invariant: v.invariant.key(), at_ms: v.at.millis(), detail: v.detail.clone() })
            .collect();
        ScenarioDoc {
            file: file.display().to_string(),
            name: r.scenario.clone(),
            seed: r.seed,
            events: r.events,
            trace_digest: r.digest.clone(),
            duration_ms: r.end.millis(),
            held: r.all_held(),
            stopped: r.budget_exceeded.as_ref().map(StoppedDoc::new),
            expectations,
            invariants: InvariantsDoc { checked: r.invariants.iter().map(|i| i.key()).collect(), violated },
        }
    }
}

impl StoppedDoc {
    fn new(over: &BudgetExceeded) -> Self {
        let reason = if over.stopped { "timeout" } else { "event_budget" };
        StoppedDoc { reason, at_ms: over.at.millis(), events: over.events }
    }
}

impl FrameDoc {
    fn new(when: &When) -> Self {
        let none = FrameDoc { kind: "", at_ms: None, from_ms: None, deadline_ms: None, until_ms: None };
        match *when {
            When::At(t) => FrameDoc { kind: "at", at_ms: Some(t.millis()), ..none },
            When::By { from, deadline } => {
                FrameDoc { kind: "by", from_ms: Some(from.millis()), deadline_ms: Some(deadline.millis()), ..none }
            }
            When::During { from, until } => {
                FrameDoc { kind: "during", from_ms: Some(from.millis()), until_ms: Some(until.millis()), ..none }
            }
        }
    }
}

/// `check --json`: one entry per file, in the order of the human lines, and the counts.
#[derive(Serialize)]
pub struct CheckDoc {
    pub command: &'static str,
    pub dir: String,
    pub files: Vec<CheckFileDoc>,
    pub summary: SummaryDoc,
    pub wall_clock: CheckClock,
}

#[derive(Serialize)]
pub struct CheckFileDoc {
    pub file: String,
    /// `PASS`, `FAIL`, `OVER`, `TIMEOUT`, `PANIC` or `INVALID`, as the human line starts.
    pub outcome: &'static str,
    /// The run, for every outcome that ran to a report (all but `INVALID` and `PANIC`).
    pub scenario: Option<ScenarioDoc>,
    /// Why the file has no verdicts: its load errors, or the panic.
    pub errors: Vec<ErrorDoc>,
}

/// A problem in a scenario file; `line` and `column` are absent when the file could not be read.
#[derive(Serialize)]
pub struct ErrorDoc {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    pub help: Option<String>,
}

impl ErrorDoc {
    pub fn message(message: String) -> Self {
        ErrorDoc { line: None, column: None, message, help: None }
    }

    pub fn from_load(e: &LoadError) -> Vec<ErrorDoc> {
        match e {
            LoadError::Io { .. } => vec![ErrorDoc::message(e.to_string())],
            LoadError::Invalid(errors) => errors
                .0
                .iter()
                .map(|e| ErrorDoc {
                    line: Some(e.line),
                    column: Some(e.column),
                    message: e.message.clone(),
                    help: e.help.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
pub struct SummaryDoc {
    pub scenarios: usize,
    pub passed: usize,
    pub failed: usize,
    /// `OVER`, `TIMEOUT`, `PANIC` and `INVALID` together, as in the human summary.
    pub invalid: usize,
}

/// Not deterministic: how long the command took on this machine.
#[derive(Serialize)]
pub struct CheckClock {
    pub elapsed_secs: f64,
}

/// `explore --json`.
#[derive(Serialize)]
pub struct ExploreDoc {
    pub command: &'static str,
    /// As given to `--model`.
    pub model: String,
    pub seed: u64,
    /// Threads used. Which cases run does not depend on it: case `i` is drawn from `(seed, i)`.
    pub jobs: usize,
    /// `--cases`: the whole sweep's case count, of which this run took its shard's share.
    pub sweep_cases: u32,
    /// `--shard K/N` (`0/1` for the whole sweep).
    pub shard: String,
    /// Cases this run checked.
    pub cases: u64,
    pub events: u64,
    pub failures: Vec<ExploreFailureDoc>,
    pub wall_clock: ExploreClock,
}

#[derive(Serialize)]
pub struct ExploreFailureDoc {
    /// The invariant's key, or `determinism` when two runs of one seed differed.
    pub invariant: &'static str,
    pub message: String,
    /// The shrunk scenario, replayable with `routesim run`.
    pub saved: String,
    pub seed: u64,
    /// The case of the sweep it was found in (`0 .. sweep_cases`).
    pub case: u64,
}

/// Not deterministic: how long the search took on this machine.
#[derive(Serialize)]
pub struct ExploreClock {
    pub elapsed_secs: f64,
    pub cases_per_sec: f64,
}

/// Writes `doc` as indented JSON and a final newline.
pub fn print(out: &mut impl Write, doc: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc).map_err(io::Error::from)?;
    writeln!(out)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::clock::{SimDuration, SimTime};
    use crate::sim::invariants::{Invariant, Violation};
    use crate::sim::runner::{run, RunOptions};

    const ONE_BROKER: &str = r#"
[scenario]
name = "one broker"
duration = "1m"
invariants = ["bounded_expiry"]

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders" }]
"#;

    #[test]
    fn a_violation_is_listed_with_its_key_virtual_time_and_detail() {
        // No model bug is reachable from a scenario file, so the violation is planted in the
        // report of a real run: what is under test is how it is written out.
        let s = crate::sim::scenario::parse(Path::new("t.toml"), ONE_BROKER).expect("valid");
        let mut report = run(&s, RunOptions::default());
        let detail = "broker-a still live at ns1".to_string();
        report.violations.push(Violation {
            invariant: Invariant::BoundedExpiry,
            at: SimTime::ZERO + SimDuration::from_millis(42_001),
            detail,
        });
        let doc = serde_json::to_value(ScenarioDoc::new(Path::new("t.toml"), &report)).expect("serialisable");
        assert_eq!(doc["held"], false, "a violation fails the run");
        assert_eq!(
            doc["invariants"],
            serde_json::json!({
                "checked": ["bounded_expiry"],
                "violated": [{ "invariant": "bounded_expiry", "at_ms": 42_001, "detail": "broker-a still live at ns1" }],
            })
        );
    }
}
