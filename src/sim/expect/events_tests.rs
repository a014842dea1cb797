//! The `events` subject on catalogue runs: counts over each kind of frame, filters by actor,
//! instance, broker and field, and the message of a count that is wrong.

use super::Verdict;
use crate::sim::runner::{run, RunOptions};
use crate::sim::scenario::parse;
use std::path::Path;

/// The verdicts of `expects` added to a catalogue scenario, by name.
fn verdicts(catalogue: &str, expects: &str) -> Vec<(String, Verdict)> {
    let scenario = parse(Path::new("t.toml"), &format!("{catalogue}\n{expects}")).unwrap_or_else(|e| panic!("{e}"));
    let report = run(&scenario, RunOptions::default());
    report.verdicts.into_iter().filter(|(e, _)| e.name.starts_with("ev:")).map(|(e, v)| (e.name, v)).collect()
}

const NACOS_CRASH: &str = include_str!("../../../scenarios/nacos/01-crash.toml");
const RMQ_PARTITION: &str = include_str!("../../../scenarios/rocketmq/05-partition-one-namesrv.toml");

#[test]
fn counts_what_the_health_checker_and_the_beats_did() {
    let v = verdicts(
        NACOS_CRASH,
        r#"
[[expect]]
name = "ev: marked unhealthy once, by nacos1's checker"
from = "0s"
until = "60s"
events = { kind = "unhealthy", actor = "nacos1", instance = "orders-1", count = 1 }

[[expect]]
name = "ev: the live instance is never marked"
from = "0s"
until = "60s"
events = { kind = "unhealthy", instance = "orders-2", count = 0 }

[[expect]]
name = "ev: deleted within 35 s of the kill"
after = "kill orders-1"
within = "35s"
events = { kind = "expired", area = "nacos", instance = "orders-1", at_least = 1 }

[[expect]]
name = "ev: the killed app beat twice before it died (5 s and 10 s), no more"
at = "1m"
events = { kind = "beat", actor = "orders-1", where = { code = 10200 }, count = 2 }

[[expect]]
name = "ev: deleted twice (it is not)"
from = "0s"
until = "60s"
events = { kind = "expired", instance = "orders-1", count = 2 }

[[expect]]
name = "ev: at most 3 beats of orders-2 (it beats every 5 s)"
from = "0s"
until = "60s"
events = { kind = "beat", instance = "orders-2", at_most = 3 }
"#,
    );
    let held: Vec<bool> = v.iter().map(|(_, v)| v.held()).collect();
    assert_eq!(held, [true, true, true, true, false, false], "{v:#?}");
    // The deletion came 33.003 s after the kill: the tick at 45.003 s (the lesson's own bound).
    assert!(matches!(v[2].1, Verdict::Held { converged: Some(d) } if d.millis() == 33_003), "{:?}", v[2]);
    let Verdict::Failed { at, mismatch } = &v[4].1 else { unreachable!() };
    assert_eq!(at.millis(), 60_000, "a count over a window is judged when it closes");
    assert_eq!(mismatch.expected, "exactly 2 \"expired\" events about instance orders-1");
    assert_eq!(mismatch.got, "1 (at 45.003s)");
    // One beat too many fails at that beat, not at the window's end.
    let Verdict::Failed { at, mismatch } = &v[5].1 else { unreachable!() };
    assert!(at.millis() < 25_000, "failed at the 4th beat: {at}");
    assert!(mismatch.got.starts_with("4 (at "), "{}", mismatch.got);
}

#[test]
fn counts_registrations_across_a_cut() {
    let v = verdicts(
        RMQ_PARTITION,
        r#"
[[expect]]
name = "ev: no registration of a0 reaches ns2 while the cut lasts"
from = "cut a0 from ns2"
until = "2m"
events = { kind = "registered", actor = "ns2", broker = "a0", count = 0 }

[[expect]]
name = "ev: while b0's still do, every 30 s"
from = "cut a0 from ns2"
until = "2m"
events = { kind = "registered", actor = "ns2", broker = "b0", at_least = 2 }

[[expect]]
name = "ev: each broker's first registration at ns2 is the start-up one"
at = "2m"
events = { kind = "registered", actor = "ns2", where = { first = true }, count = 2 }
"#,
    );
    assert!(v.iter().all(|(_, v)| v.held()), "{v:#?}");
}
