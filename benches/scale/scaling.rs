//! `cargo bench --bench scale -- scaling`: the RocketMQ case at 1×, 2×, 4× and 8× the fleet,
//! one run each, as a table of wall time and peak RSS with the memory cost of each added 1,000
//! brokers.
//!
//! Each shape runs in a child process (this same binary, `--scale K --row`): `getrusage` reports
//! a process's peak resident set, which only grows, so one process running all four would report
//! the 8× peak four times. The child prints one `row` line the parent reads.

use std::process::Command;

/// The shapes, in fleet multiples (1× = 1,000 brokers).
const SHAPES: [usize; 4] = [1, 2, 4, 8];
/// How far a step's MB per 1,000 brokers may stray from the 1×→8× margin and still be linear.
const LINEAR_TOLERANCE: f64 = 0.15;

/// What a child reports for its shape.
struct Row {
    scale: usize,
    events: u64,
    wall_secs: f64,
    rss_mb: f64,
}

/// The line a child prints after its case: `row EVENTS MEDIAN_SECS RSS_MB BEST_SECS` (the best
/// is what `against` compares).
pub fn row_line(m: &super::Measured, rss_mb: f64) -> String {
    let (median, best) = (m.median.as_secs_f64(), m.best.as_secs_f64());
    format!("row {} {median:.4} {rss_mb:.1} {best:.4}", m.events)
}

fn run_child(scale: usize, hours: u64) -> Row {
    let exe = std::env::current_exe().expect("the bench binary's path");
    let args = ["rocketmq", "--scale", &scale.to_string(), "--hours", &hours.to_string(), "--runs", "1", "--row"];
    let out = Command::new(exe).args(args).output().expect("the bench binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "--scale {scale} failed: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let line = stdout.lines().find_map(|l| l.strip_prefix("row ")).unwrap_or_else(|| panic!("no row in {stdout}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    let number = |i: usize| f[i].parse::<f64>().unwrap_or_else(|_| panic!("bad row {line:?}"));
    Row { scale, events: number(0) as u64, wall_secs: number(1), rss_mb: number(2) }
}

/// Runs the four shapes and prints the table.
pub fn run(hours: u64) {
    let rows: Vec<Row> = SHAPES.iter().map(|&k| run_child(k, hours)).collect();
    println!("rocketmq scaling ({hours} h, 2 name servers x 100 topics, 10 clients; one run per shape):");
    println!(
        "{:>6} {:>8} {:>12} {:>9} {:>10} {:>18}",
        "shape", "brokers", "events", "wall", "peak RSS", "MB/1,000 brokers"
    );
    // MB per 1,000 brokers between neighbouring shapes: the cost of the brokers added.
    let per_thousand = |a: &Row, b: &Row| (b.rss_mb - a.rss_mb) / (b.scale - a.scale) as f64;
    let mut steps = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let step = i.checked_sub(1).map(|p| per_thousand(&rows[p], r));
        steps.extend(step);
        let step = step.map_or("-".to_string(), |s| format!("{s:.1}"));
        println!(
            "{:>6} {:>8} {:>12} {:>8.2}s {:>7.1} MB {step:>18}",
            format!("{}x", r.scale),
            r.scale * 1000,
            r.events,
            r.wall_secs,
            r.rss_mb
        );
    }
    let (first, last) = (&rows[0], &rows[rows.len() - 1]);
    let margin = per_thousand(first, last);
    let linear = steps.iter().all(|s| (s - margin).abs() <= LINEAR_TOLERANCE * margin.abs());
    println!(
        "margin 1x->8x: {margin:.1} MB per 1,000 brokers; growth {} (every step within {:.0}% of the margin)",
        if linear { "linear" } else { "NOT linear" },
        LINEAR_TOLERANCE * 100.0
    );
}
