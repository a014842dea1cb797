//! The HTML report: one self-contained file with an SVG swimlane timeline of a run.
//!
//! A lane per actor with its registrations, heartbeats, scan ticks, expiries, batches and polls
//! as ticks; faults as bands over the processes they touch; for every name server, a row per
//! broker showing its time in the live table and its "alive until" window (last registration +
//! timeout); route membership per name server and per client; and the expectations with their
//! convergence times. Everything is derived from the run's trace.

mod html;
mod model;

use crate::sim::runner::RunReport;
use crate::sim::scenario::Scenario;

/// The report of a run whose trace was kept (`TraceOptions::keep`).
pub fn html(scenario: &Scenario, report: &RunReport) -> String {
    html::render(&model::build(scenario, report, &report.kept))
}
