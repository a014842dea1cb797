//! `routesim sweep --report out.html`: one self-contained page, a histogram per expectation of
//! how long it took to converge over the sweep's runs, with its quantiles and `converges`
//! bounds drawn on it. No script: the labels are on the chart, so a screenshot or a printout
//! says as much as the page.

use crate::sim::clock::SimDuration;
use crate::sim::sweep::{Distribution, ExpectSummary, SweepReport};
use std::fmt::Write;

const W: f64 = 760.0;
const H: f64 = 220.0;
/// Margins: left, right, top (quantile labels), bottom (time axis).
const L: f64 = 48.0;
const R: f64 = 16.0;
const T: f64 = 38.0;
const B: f64 = 40.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A distribution as text: one row per bin — its lower edge, a bar scaled to the fullest bin,
/// the count — each row after `indent`. `routesim sweep` prints it; lesson pages quote it.
pub fn text_histogram(d: &Distribution, indent: &str) -> String {
    const WIDTH: u64 = 40;
    let fullest = d.bins.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let mut out = String::new();
    for (edge, n) in &d.bins {
        let bar = "#".repeat((n * WIDTH).div_ceil(fullest) as usize);
        let _ = writeln!(out, "{indent}{:>10} |{bar:<40}| {n}", edge.to_string());
    }
    out
}

/// The page for a finished sweep of `file` over `seeds` (as the summary line says them).
pub fn html(r: &SweepReport, file: &str, seeds: &str) -> String {
    let mut out = String::new();
    let title = esc(&r.scenario);
    let _ = write!(
        out,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>sweep: {title}</title><style>{CSS}</style></head><body>"
    );
    let _ = write!(out, "<h1>{title}</h1><p class=\"meta\">{} · sweep over seeds {}</p>", esc(file), esc(seeds));
    let failing = r.failing_seeds();
    let _ = match failing.is_empty() {
        true => write!(out, "<p class=\"ok\">Every expectation held in every run.</p>"),
        false => write!(
            out,
            "<p class=\"bad\">{} of {} runs failed: seeds {}.</p>",
            failing.len(),
            r.outcomes.len(),
            esc(&list(&failing))
        ),
    };
    let out_of_bounds = r.expectations.iter().filter(|e| !e.bounds_held()).count();
    if out_of_bounds > 0 {
        let _ = write!(
            out,
            "<p class=\"bad\">{out_of_bounds} expectations out of their <code>converges</code> bounds.</p>"
        );
    }
    for e in &r.expectations {
        section(&mut out, e);
    }
    out.push_str("</body></html>\n");
    out
}

fn list(seeds: &[u64]) -> String {
    let shown: Vec<String> = seeds.iter().take(20).map(u64::to_string).collect();
    let more = if seeds.len() > 20 { format!(" and {} more", seeds.len() - 20) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

fn section(out: &mut String, e: &ExpectSummary) {
    let name = esc(&e.name);
    let _ = write!(out, "<section><h2>{name}</h2><p>Held in {} of {} runs.", e.held, e.runs);
    let Some(d) = &e.converged else {
        out.push_str(" No convergence time to draw: only an <code>after</code>/<code>within</code> expectation that held has one.</p></section>");
        return;
    };
    let _ = write!(
        out,
        " Converged after (from its <code>after</code>): min {} · p50 {} · p90 {} · p99 {} · max {}.</p>",
        d.min, d.p50, d.p90, d.p99, d.max
    );
    for (b, value, held) in &e.bounds {
        let measured = value.map_or("nothing to measure".to_string(), |v| v.to_string());
        let class = if *held { "ok" } else { "bad" };
        let verdict = if *held { "PASS" } else { "FAIL" };
        let _ = write!(
            out,
            "<p class=\"{class}\">{verdict} converges {} = {}: measured {measured}</p>",
            b.quantile.key(),
            esc(&b.text())
        );
    }
    chart(out, e, d);
    out.push_str("</section>");
}

/// Bars over the bins, the quantiles as labelled vertical lines, the bounds as shaded bands.
fn chart(out: &mut String, e: &ExpectSummary, d: &Distribution) {
    let width = d.bins.get(1).map_or(1, |b| b.0.millis() - d.bins[0].0.millis()).max(1);
    // The data, widened to show every bound — a bound the data misses is the point of the chart.
    let mut lo = d.min.millis() as f64;
    let mut hi = (d.bins.last().map_or(d.max, |b| b.0).millis() + width) as f64;
    for (b, _, _) in &e.bounds {
        if b.at_least > SimDuration::ZERO {
            lo = lo.min(b.at_least.millis() as f64);
        }
        hi = hi.max(b.at_most.millis() as f64);
    }
    let pad = (hi - lo).max(1.0) * 0.03;
    let (lo, hi) = (lo - pad, hi + pad);
    let x = |ms: f64| L + (ms - lo) / (hi - lo).max(1.0) * (W - L - R);
    let tallest = d.bins.iter().map(|b| b.1).max().unwrap_or(1).max(1) as f64;
    let y = |n: f64| H - B - n / tallest * (H - B - T);
    let _ = write!(
        out,
        "<svg data-expect=\"{}\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\">",
        esc(&e.name)
    );
    for (b, value, held) in &e.bounds {
        let (a, z) = (x(b.at_least.millis() as f64).max(L), x(b.at_most.millis() as f64).min(W - R));
        if z > a {
            let class = if *held { "band" } else { "band out" };
            let _ = write!(out, "<rect class=\"{class}\" x=\"{a:.1}\" y=\"{T}\" width=\"{:.1}\" height=\"{:.1}\"><title>converges {} = {}{}</title></rect>", z - a, H - B - T, b.quantile.key(), esc(&b.text()), value.map_or(String::new(), |v| format!(", measured {v}")));
        }
    }
    for &(from, n) in &d.bins {
        let (x0, x1) = (x(from.millis() as f64), x((from.millis() + width) as f64));
        let top = y(n as f64);
        let _ = write!(
            out,
            "<rect class=\"bin\" data-from=\"{}\" data-count=\"{n}\" x=\"{:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{} to {}: {n} runs</title></rect>",
            from.millis(),
            x0 + 0.5,
            (x1 - x0 - 1.0).max(1.0),
            H - B - top,
            from,
            from + SimDuration(width),
        );
        if n > 0 {
            let _ = write!(out, "<text class=\"count\" x=\"{:.1}\" y=\"{:.1}\">{n}</text>", (x0 + x1) / 2.0, top - 3.0);
        }
    }
    let quantiles = [("p50", d.p50), ("p90", d.p90), ("p99", d.p99)];
    for (i, (label, v)) in quantiles.iter().enumerate() {
        let at = x(v.millis() as f64);
        let _ = write!(
            out,
            "<line class=\"quantile\" data-q=\"{label}\" x1=\"{at:.1}\" x2=\"{at:.1}\" y1=\"{}\" y2=\"{}\"/><text class=\"qlabel\" text-anchor=\"{}\" x=\"{at:.1}\" y=\"{}\">{label} {v}</text>",
            T - 2.0,
            H - B,
            anchor(at),
            10.0 + 11.0 * i as f64
        );
    }
    // The time axis: its ends and the middle, as durations after the `after` event.
    let _ = write!(out, "<line class=\"axis\" x1=\"{L}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>", W - R, H - B, H - B);
    for frac in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let ms = lo + frac * (hi - lo);
        let label = SimDuration(ms.round().max(0.0) as u64);
        let at = x(ms);
        let _ = write!(
            out,
            "<text class=\"tick\" text-anchor=\"{}\" x=\"{at:.1}\" y=\"{}\">{label}</text>",
            anchor(at),
            H - B + 16.0
        );
    }
    let _ = write!(
        out,
        "<text class=\"caption\" x=\"{}\" y=\"{}\">time to converge after the `after` event · bars: runs per bin (tallest {})</text></svg>",
        W / 2.0,
        H - 6.0,
        tallest
    );
}

/// Labels near an edge grow inwards, so none is cut off.
fn anchor(x: f64) -> &'static str {
    if x > W - R - 70.0 {
        "end"
    } else if x < L + 40.0 {
        "start"
    } else {
        "middle"
    }
}

const CSS: &str = "body{font:14px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin:24px 0 4px}\
.meta{color:#555}.ok{color:#1a6b2f}.bad{color:#a40000;font-weight:600}\
svg{background:#fafafa;border:1px solid #ddd}rect.bin{fill:#3b6ea8}rect.band{fill:#2e8b57;opacity:.12}rect.band.out{fill:#c0392b;opacity:.18}\
line.quantile{stroke:#d35400;stroke-width:1.5;stroke-dasharray:4 3}line.axis{stroke:#444}\
text{font-size:11px;fill:#333}text.count,text.caption{text-anchor:middle}text.qlabel{fill:#d35400}";
