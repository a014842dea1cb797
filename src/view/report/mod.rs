//! The HTML report: one self-contained file with an SVG swimlane timeline of a run.
//!
//! A lane per actor with its registrations, beats, scan ticks, expiries, batches, pushes and
//! polls as ticks; faults as bands over the processes they touch; for every RocketMQ name server
//! a row per broker (its time in the live table and its "alive until" window, the last
//! registration plus the timeout) and route membership per name server and per client; for
//! every Nacos naming server a row per instance (healthy and unhealthy spans, the beats that
//! reached it, and the deadlines counted from its last beat: "alive until" after the heart-beat
//! timeout, "deleted after" the delete timeout) and each subscriber's view over time; and the
//! expectations with their convergence times; and per producer, its sends per time bucket
//! (ok, retried-ok, failed) and their latency (slowest and p99). Everything is derived from the run's trace.
//!
//! It is meant to teach without hovering: the timeline's faults are named on the chart, labels
//! wrap instead of being cut, the legend (`legend.rs`) tells every colour apart, lanes that never
//! change fold away (`lanes.rs`), and the key moments `explain` tells are listed under the chart
//! (`moments.rs`), each marking its instant when clicked.

mod html;
mod lanes;
mod legend;
mod model;
mod moments;
mod nacos;
mod producer;
mod rocketmq;

pub use html::render;
pub use model::{Model, ReportView, MAX_DRAWN};

use crate::sim::runner::RunReport;
use crate::sim::scenario::Scenario;
use crate::sim::trace::Watcher;
use crate::view::{TooLong, Window};

/// The report of a whole run whose trace was kept (`TraceOptions::keep`); its key-moment
/// panel lists the moments of a run made with a `RunOptions::narrator`. A run of any length
/// is drawn by a [`ReportView`] watching it instead.
pub fn html(scenario: &Scenario, report: &RunReport) -> Result<String, TooLong> {
    let mut view = ReportView::new(scenario, Window::whole());
    report.kept.iter().for_each(|e| view.event(e));
    Ok(render(&view.finish(report)?))
}
