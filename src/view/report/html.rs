//! Renders a [`Model`] as one self-contained HTML file: inline CSS, inline SVG, a few lines of
//! inline script for zoom and pan. No network access is needed to open it.

use super::model::Model;
use super::producer;
use crate::sim::clock::SimTime;
use std::fmt::Write;

const ROW: u64 = 20;
const LABEL_WIDTH: u64 = 260;
/// A producer's chart rows are three lanes high, so a bar's height can be read.
const CHART_ROW: u64 = 3 * ROW;

/// Each row's top and height.
fn layout(m: &Model) -> Vec<(u64, u64)> {
    let mut y = 0;
    let heights = m.rows.iter().map(|r| if matches!(r.kind, "sends" | "latency") { CHART_ROW } else { ROW });
    heights
        .map(|h| {
            y += h;
            (y - h, h)
        })
        .collect()
}

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn render(m: &Model) -> String {
    // The drawing ends with the run (a run stopped early ends where it stopped), or the window.
    let (start, end) = (m.window.from.millis(), m.window.to.min(m.end).millis().max(m.window.from.millis() + 1));
    let width = end - start;
    let rows = layout(m);
    let height = rows.last().map_or(0, |(y, h)| y + h);
    let mut labels = String::new();
    let mut plot = String::new();
    for (row, &(y, h)) in m.rows.iter().zip(&rows) {
        let _ = write!(
            labels,
            r#"<g class="lane {kind}" data-lane="{label}"><rect x="0" y="{y}" width="{LABEL_WIDTH}" height="{h}"/><text x="6" y="{ty}">{label}<title>{label}</title></text></g>"#,
            kind = row.kind,
            label = esc(&row.label),
            ty = y + 14
        );
        let _ = write!(
            plot,
            r#"<rect class="rowbg {kind}" x="{start}" y="{y}" width="{width}" height="{h}"/>"#,
            kind = row.kind
        );
    }
    for band in &m.bands {
        for (row, &(y, h)) in m.rows.iter().zip(&rows) {
            if band.processes.contains(&row.process) {
                let (x, w) = (band.from.millis(), band.to.millis().saturating_sub(band.from.millis()).max(1));
                let _ = write!(
                    plot,
                    r#"<rect class="band {c}" x="{x}" y="{y}" width="{w}" height="{h}"><title>{d}</title></rect>"#,
                    c = band.class,
                    d = esc(&band.detail)
                );
            }
        }
    }
    for bar in &m.bars {
        let (x, w) = (bar.from.millis(), bar.to.millis().saturating_sub(bar.from.millis()).max(1));
        // The two deadlines share a row with the span they judge: "alive until" outlines its
        // upper half, "deleted after" its lower half, so both stay readable where they overlap.
        let (dy, h) = match bar.class {
            "alive" => (3, ROW / 2 - 3),
            "deadline" => (ROW / 2, ROW / 2 - 3),
            _ => (4, ROW - 8),
        };
        let _ = write!(
            plot,
            r#"<rect class="bar {c}" data-t="{x}" x="{x}" y="{y}" width="{w}" height="{h}"><title>{d}</title></rect>"#,
            c = bar.class,
            y = rows[bar.row].0 + dy,
            d = esc(&format!("{}–{}: {}", bar.from, bar.to, bar.detail))
        );
    }
    for mark in &m.marks {
        let _ = write!(
            plot,
            r#"<line class="mark {c}" data-t="{x}" x1="{x}" x2="{x}" y1="{y1}" y2="{y2}"><title>{d}</title></line>"#,
            c = mark.class,
            x = mark.t.millis(),
            y1 = rows[mark.row].0 + 3,
            y2 = rows[mark.row].0 + ROW - 3,
            d = esc(&format!("{} {}", mark.t, mark.detail))
        );
    }
    for c in &m.charts {
        producer::svg(&mut plot, c, rows[c.sends_row].0, rows[c.latency_row].0, CHART_ROW);
    }
    let title = esc(&m.title);
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>routesim — {title}</title>
<style>{CSS}{chart_css}</style></head>
<body>
<header><h1>{title}</h1>
<p>seed {seed} · trace digest <code>{digest}</code> · {span} · scroll to zoom, drag to pan, double-click to reset · hover for details</p>
<p class="legend">{legend}</p>
<p><button id="zin">zoom in</button> <button id="zout">zoom out</button> <button id="reset">reset</button></p></header>
<div id="chart">
<svg id="labels" width="{LABEL_WIDTH}" height="{total}" viewBox="0 0 {LABEL_WIDTH} {total}"><g transform="translate(0,{AXIS})">{labels}</g></svg>
<div id="right"><svg id="axis" width="100%" height="{AXIS}"></svg>
<svg id="plot" width="100%" height="{height}" viewBox="{start} 0 {width} {height}" preserveAspectRatio="none">{plot}</svg></div>
</div>
<script>{JS}</script>
<script>routesim({start}, {end}, {height});</script>
</body></html>
"#,
        legend = legend(m),
        chart_css = producer::CSS,
        seed = m.seed,
        digest = esc(&m.digest),
        span = if m.window.is_whole() {
            format!("{} of virtual time", m.end)
        } else {
            format!("{} to {} of a {} run (--window)", m.window.from, SimTime(end), m.end)
        },
        total = height + AXIS,
    )
}

const AXIS: u64 = 24;

/// What each mark and span class means, in legend order.
const MARKS: &[(&str, &str)] = &[
    ("register", "registration"),
    ("heartbeat", "heartbeat / beat"),
    ("scan", "scan tick"),
    ("expire", "expiry / deletion"),
    ("batch", "unregister batch"),
    ("unhealthy", "marked unhealthy"),
    ("healthy", "healthy again"),
    ("notfound", "20404 / beat refused"),
    ("push", "push"),
    ("poll", "route poll / list"),
    ("drop", "lost / reset / failed"),
    ("close", "channel closed"),
    ("fault", "fault"),
    ("other", "other"),
];
const BARS: &[(&str, &str)] = &[
    ("present", "in live table"),
    ("route", "in route"),
    ("healthy", "registered, healthy"),
    ("unhealthy", "registered, unhealthy"),
    ("alive", "alive until (last registration or beat + timeout)"),
    ("deadline", "deleted after (last beat + delete timeout)"),
    ("down", "down"),
    ("hung", "hung"),
    ("cut", "cut off"),
    ("lossy", "lossy link"),
    ("pass", "held"),
    ("fail", "failed"),
];

/// The legend of the classes this report uses, and no others.
fn legend(m: &Model) -> String {
    let marks: std::collections::BTreeSet<&str> = m.marks.iter().map(|x| x.class).collect();
    let bars: std::collections::BTreeSet<&str> =
        m.bars.iter().map(|x| x.class).chain(m.bands.iter().map(|x| x.class)).collect();
    let mut out = String::new();
    for (class, what) in MARKS.iter().filter(|(c, _)| marks.contains(c)) {
        let _ = write!(out, r#"<span class="k {class}"></span>{what} "#);
    }
    for (class, what) in BARS.iter().filter(|(c, _)| bars.contains(c)) {
        let _ = write!(out, r#"<span class="b {class}"></span>{what} "#);
    }
    // The producer charts' classes, when there is a producer to chart.
    for (class, what) in producer::LEGEND.iter().filter(|_| !m.charts.is_empty()) {
        let _ = write!(out, r#"<span class="b {class}"></span>{what} "#);
    }
    out
}

const CSS: &str = r#"
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 4px; }
header p { margin: 4px 0; }
#chart { display: flex; border: 1px solid #ccc; }
#right { flex: 1; overflow: hidden; }
#plot, #axis { display: block; cursor: grab; }
.lane rect { fill: #f7f7f7; stroke: #e3e3e3; }
.lane.live rect, .lane.route rect, .lane.instance rect, .lane.view rect { fill: #fbfbfb; }
.lane text { font-size: 12px; fill: #333; }
.lane.actor text { font-weight: 600; }
.rowbg { fill: #fff; stroke: #eee; vector-effect: non-scaling-stroke; }
.mark { stroke-width: 2px; vector-effect: non-scaling-stroke; stroke: #888; }
.mark.register { stroke: #2b7bb9; } .mark.heartbeat { stroke: #9ecae1; } .mark.scan { stroke: #bbb; }
.mark.expire { stroke: #d62728; stroke-width: 3px; } .mark.batch { stroke: #9467bd; stroke-width: 3px; }
.mark.poll { stroke: #2ca02c; } .mark.drop { stroke: #ff7f0e; } .mark.close { stroke: #8c564b; }
.mark.fault { stroke: #000; stroke-width: 3px; } .mark.fail { stroke: #d62728; stroke-width: 3px; } .mark.pass { stroke: #2ca02c; stroke-width: 3px; }
.mark.unhealthy { stroke: #ff7f0e; stroke-width: 3px; } .mark.healthy { stroke: #2ca02c; stroke-width: 3px; }
.mark.notfound { stroke: #8b0000; stroke-width: 3px; } .mark.push { stroke: #17becf; } .mark.other { stroke: #888; }
.bar { vector-effect: non-scaling-stroke; }
.bar.present { fill: #6baed6; } .bar.route { fill: #74c476; }
.bar.alive { fill: none; stroke: #d62728; stroke-dasharray: 4 3; stroke-width: 1.5px; }
.bar.pass { fill: #74c476; } .bar.fail { fill: #fb6a4a; }
.bar.healthy { fill: #6baed6; } .bar.unhealthy { fill: #fdae6b; }
.bar.deadline { fill: none; stroke: #6a3d9a; stroke-dasharray: 2 2; stroke-width: 1.5px; }
.band { opacity: 0.25; } .band.down { fill: #d62728; } .band.hung { fill: #ff7f0e; } .band.cut { fill: #7f7f7f; } .band.lossy { fill: #bcbd22; }
#axis text { font-size: 11px; fill: #555; } #axis line { stroke: #ccc; }
.legend span.k, .legend span.b { display: inline-block; width: 14px; height: 10px; margin: 0 3px 0 10px; vertical-align: middle; }
.k.register { background: #2b7bb9; } .k.heartbeat { background: #9ecae1; } .k.scan { background: #bbb; } .k.expire { background: #d62728; }
.k.batch { background: #9467bd; } .k.poll { background: #2ca02c; } .k.drop { background: #ff7f0e; } .k.close { background: #8c564b; } .k.fault { background: #000; }
.b.present { background: #6baed6; } .b.alive { border: 1.5px dashed #d62728; } .b.down { background: #f4a5a5; } .b.hung { background: #ffc999; }
.b.cut { background: #cbcbcb; } .b.pass { background: #74c476; } .b.fail { background: #fb6a4a; } .b.route { background: #74c476; }
.b.lossy { background: #dede9a; } .b.healthy { background: #6baed6; } .b.unhealthy { background: #fdae6b; } .b.deadline { border: 1.5px dashed #6a3d9a; }
.k.unhealthy { background: #ff7f0e; } .k.healthy { background: #2ca02c; } .k.notfound { background: #8b0000; } .k.push { background: #17becf; } .k.other { background: #888; }
.k.pass { background: #2ca02c; } .k.fail { background: #d62728; }
"#;

const JS: &str = r#"
function routesim(START, END, H) {
  const plot = document.getElementById('plot'), axis = document.getElementById('axis');
  let x0 = START, w = END - START;
  const nice = [1,2,5,10,20,50,100,200,500,1000,2000,5000,10000,15000,30000,60000,120000,300000,600000,1800000,3600000,7200000];
  function fmt(ms) { return ms % 1000 === 0 ? (ms / 1000) + 's' : (ms / 1000).toFixed(3) + 's'; }
  function drawAxis() {
    const px = axis.getBoundingClientRect().width || 1000;
    const step = nice.find(s => s * px / w >= 70) || nice[nice.length - 1];
    let out = '';
    for (let t = Math.ceil(x0 / step) * step; t <= x0 + w; t += step) {
      const x = (t - x0) / w * px;
      out += `<line x1="${x}" x2="${x}" y1="14" y2="24"/><text x="${x + 2}" y="12">${fmt(t)}</text>`;
    }
    axis.innerHTML = out;
  }
  function apply() { plot.setAttribute('viewBox', `${x0} 0 ${w} ${H}`); drawAxis(); }
  function zoom(k, fx) {
    const t = x0 + fx * w;
    w = Math.min(END - START, Math.max(20, w * k));
    x0 = Math.max(START, Math.min(END - w, t - fx * w));
    apply();
  }
  plot.addEventListener('wheel', e => {
    e.preventDefault();
    const r = plot.getBoundingClientRect();
    zoom(e.deltaY < 0 ? 0.8 : 1.25, (e.clientX - r.left) / r.width);
  }, { passive: false });
  let drag = null;
  plot.addEventListener('mousedown', e => { drag = { x: e.clientX, x0 }; });
  window.addEventListener('mouseup', () => { drag = null; });
  window.addEventListener('mousemove', e => {
    if (!drag) return;
    const r = plot.getBoundingClientRect();
    x0 = Math.max(START, Math.min(END - w, drag.x0 - (e.clientX - drag.x) / r.width * w));
    apply();
  });
  plot.addEventListener('dblclick', () => { x0 = START; w = END - START; apply(); });
  document.getElementById('zin').onclick = () => zoom(0.5, 0.5);
  document.getElementById('zout').onclick = () => zoom(2, 0.5);
  document.getElementById('reset').onclick = () => { x0 = START; w = END - START; apply(); };
  window.addEventListener('resize', drawAxis);
  apply();
}
"#;
