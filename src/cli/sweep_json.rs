//! `routesim sweep --json`: the sweep as one JSON document (schema in `docs/sweep.md`). Times
//! are milliseconds of virtual time; nothing in it depends on the wall clock or the thread
//! count, so the same file and seeds give the same document.

use crate::sim::sweep::{Distribution, SweepOptions, SweepReport};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

pub fn write(out: &mut impl Write, file: &Path, opts: &SweepOptions, r: &SweepReport) -> std::io::Result<()> {
    let expectations: Vec<Value> = r
        .expectations
        .iter()
        .map(|e| {
            let bounds: Vec<Value> = e
                .bounds
                .iter()
                .map(|(b, value, held)| {
                    json!({
                        "quantile": b.quantile.key(),
                        "at_least_ms": b.at_least.millis(),
                        "at_most_ms": b.at_most.millis(),
                        "measured_ms": value.map(|v| v.millis()),
                        "held": held,
                    })
                })
                .collect();
            json!({
                "name": e.name,
                "held": e.held,
                "runs": e.runs,
                "converged_ms": e.converged.as_ref().map(distribution),
                "converges": bounds,
            })
        })
        .collect();
    let seeds: Vec<Value> = r
        .outcomes
        .iter()
        .map(|o| {
            json!({
                "seed": o.seed,
                "held": o.all_held(),
                "over_budget": o.over_budget,
                "verdicts": o.verdicts.iter().map(|(held, c)| json!({ "held": held, "converged_ms": c.map(|d| d.millis()) })).collect::<Vec<_>>(),
                "violations": o.violations,
            })
        })
        .collect();
    let doc = json!({
        "scenario": r.scenario,
        "file": file.display().to_string(),
        "first_seed": opts.first_seed,
        "runs": opts.runs,
        "events": r.events,
        "expectations": expectations,
        "all_held": r.all_held(),
        "failing_seeds": r.failing_seeds(),
        "seeds": seeds,
    });
    super::json::print(out, &doc)
}

fn distribution(d: &Distribution) -> Value {
    json!({
        "count": d.count,
        "min": d.min.millis(),
        "p50": d.p50.millis(),
        "p90": d.p90.millis(),
        "p99": d.p99.millis(),
        "max": d.max.millis(),
        "bins": d.bins.iter().map(|(edge, n)| json!({ "from": edge.millis(), "count": n })).collect::<Vec<_>>(),
    })
}
