//! Renders a [`Model`] as one self-contained HTML file: inline CSS, inline SVG, a few lines of
//! inline script for zoom and pan. No network access is needed to open it.

use super::lanes::{self, label_text, Lane, LABEL_WIDTH, ROW};
use super::model::Model;
use super::{legend, moments, producer};
use crate::sim::clock::SimTime;
use std::fmt::Write;

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The chart's rows, each a `<g>` in its own coordinates (top at 0) so that folding a lane
/// only moves the groups below it.
fn rows_svg(m: &Model, lanes: &[Lane], (start, width): (u64, u64)) -> Vec<String> {
    let mut rows: Vec<String> = m
        .rows
        .iter()
        .zip(lanes)
        .map(|(row, lane)| {
            format!(
                r#"<rect class="rowbg {kind}" x="{start}" y="0" width="{width}" height="{h}"/>"#,
                kind = row.kind,
                h = lane.h
            )
        })
        .collect();
    for band in &m.bands {
        for (i, _) in m.rows.iter().enumerate().filter(|(_, r)| band.processes.contains(&r.process)) {
            let (x, w) = (band.from.millis(), band.to.millis().saturating_sub(band.from.millis()).max(1));
            let _ = write!(
                rows[i],
                r#"<rect class="band {c}" x="{x}" y="0" width="{w}" height="{h}"><title>{d}</title></rect>"#,
                c = band.class,
                h = lanes[i].h,
                d = esc(&band.detail)
            );
        }
    }
    for bar in &m.bars {
        let (x, w) = (bar.from.millis(), bar.to.millis().saturating_sub(bar.from.millis()).max(1));
        // The two deadlines share a row with the span they judge: "alive until" outlines its
        // upper half, "deleted after" its lower half, so both stay readable where they overlap.
        let (y, h) = match bar.class {
            "alive" => (3, ROW / 2 - 3),
            "deadline" => (ROW / 2, ROW / 2 - 3),
            _ => (4, ROW - 8),
        };
        let _ = write!(
            rows[bar.row],
            r#"<rect class="bar {c}" data-t="{x}" x="{x}" y="{y}" width="{w}" height="{h}"><title>{d}</title></rect>"#,
            c = bar.class,
            d = esc(&format!("{}–{}: {}", bar.from, bar.to, bar.detail))
        );
    }
    for mark in &m.marks {
        // Routine traffic is a short tick at the lane's foot, an event a full-height one: the
        // shape tells them apart where ten colours cannot name thirty classes.
        let (y1, y2) = if legend::routine(mark.class) { (ROW / 2, ROW - 3) } else { (2, ROW - 2) };
        let _ = write!(
            rows[mark.row],
            r#"<line class="mark {c}" data-t="{x}" x1="{x}" x2="{x}" y1="{y1}" y2="{y2}"><title>{d}</title></line>"#,
            c = mark.class,
            x = mark.t.millis(),
            d = esc(&format!("{} {}", mark.t, mark.detail))
        );
    }
    for c in &m.charts {
        let (mut sends, mut latency) = (String::new(), String::new());
        producer::svg(&mut sends, &mut latency, c, lanes[c.sends_row].h);
        rows[c.sends_row] += &sends;
        rows[c.latency_row] += &latency;
    }
    rows
}

/// Height of one line of fault labels above the axis.
const FAULT_LINE: u64 = 16;

/// The timeline's names, written above the axis at their times, and a dashed line through the
/// chart at each. Labels that would overlap take the next line down: the page's script redoes
/// this at every zoom with the real text widths; here it is estimated for a 1100 px chart, so
/// the file reads well before any script runs.
fn fault_labels(m: &Model, (start, width): (u64, u64), height: u64) -> (String, String, u64) {
    let (mut labels, mut lines) = (String::new(), String::new());
    let mut ends: Vec<f64> = Vec::new();
    for (t, name) in &m.faults {
        let left = (t.millis() - start) as f64 * 100.0 / width as f64;
        let (from, to) = (left * 11.0, left * 11.0 + 7.0 * (name.chars().count() as f64 + 2.0));
        let level = ends.iter().position(|&e| e < from).unwrap_or(ends.len());
        if level == ends.len() {
            ends.push(to);
        } else {
            ends[level] = to;
        }
        let _ = write!(
            labels,
            r#"<span class="flabel" data-at="{at}" style="left:{left:.3}%;top:{top}px" title="{t}: {name}">▾ {name}</span>"#,
            at = t.millis(),
            top = level as u64 * FAULT_LINE,
            name = esc(name)
        );
        let _ = write!(lines, r#"<line class="vline" x1="{x}" x2="{x}" y1="0" y2="{height}"/>"#, x = t.millis());
    }
    (labels, lines, ends.len().max(1) as u64 * FAULT_LINE)
}

pub fn render(m: &Model) -> String {
    // The drawing ends with the run (a run stopped early ends where it stopped), or the window.
    let (start, end) = (m.window.from.millis(), m.window.to.min(m.end).millis().max(m.window.from.millis() + 1));
    let width = end - start;
    let lanes = lanes::layout(m, end);
    let height = lanes.iter().filter(|l| !l.folded).map(|l| l.h).sum::<u64>();
    let (mut labels, mut plot) = (String::new(), String::new());
    for ((i, (row, lane)), svg) in m.rows.iter().zip(&lanes).enumerate().zip(rows_svg(m, &lanes, (start, width))) {
        let class = format!(
            "{}{}{}",
            row.kind,
            if lane.steady { " steady" } else { "" },
            if lane.folded { " folded" } else { "" }
        );
        let _ = write!(
            labels,
            r#"<g class="lane {class}" data-lane="{label}" data-h="{h}" transform="translate(0,{y})"><title>{label}</title><rect x="0" y="0" width="{LABEL_WIDTH}" height="{h}"/>{text}</g>"#,
            label = esc(&row.label),
            h = lane.h,
            y = lane.y,
            text = label_text(&lane.lines)
        );
        let _ =
            write!(plot, r#"<g class="row {class}" data-row="{i}" transform="translate(0,{y})">{svg}</g>"#, y = lane.y);
    }
    let (flabels, vlines, strip) = fault_labels(m, (start, width), height);
    let steady = lanes.iter().filter(|l| l.steady).count();
    let folded = lanes.iter().any(|l| l.folded);
    let fold = match (steady, folded) {
        (0, _) => String::new(),
        (n, true) => format!(r#" <button id="fold" data-n="{n}">show {n} unchanging lanes</button>"#),
        (n, false) => format!(r#" <button id="fold" data-n="{n}">fold {n} unchanging lanes</button>"#),
    };
    let top = strip + AXIS;
    let title = esc(&m.title);
    let (shown, left_off) = (&m.moments.0, m.moments.1);
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>routesim — {title}</title>
<style>{CSS}{chart_css}{legend_css}{colours}{moments_css}</style></head>
<body>
<header><h1>{title}</h1>
<p>seed {seed} · trace digest <code>{digest}</code> · {span} · scroll to zoom, drag to pan, double-click to reset · hover for details</p>
{legend}
<p><button id="zin">zoom in</button> <button id="zout">zoom out</button> <button id="reset">reset</button>{fold}</p></header>
<div id="chart">
<svg id="labels" width="{LABEL_WIDTH}" height="{total}" viewBox="0 0 {LABEL_WIDTH} {total}"><g id="lanes" transform="translate(0,{top})">{labels}</g></svg>
<div id="right"><div id="faults" style="height:{strip}px">{flabels}</div><svg id="axis" width="100%" height="{AXIS}"></svg>
<svg id="plot" width="100%" height="{height}" viewBox="{start} 0 {width} {height}" preserveAspectRatio="none">{plot}{vlines}<line id="cursor" x1="{start}" x2="{start}" y1="0" y2="{height}" visibility="hidden"/></svg></div>
</div>
{moments}
<script>{JS}</script>
<script>routesim({start}, {end}, {height});</script>
</body></html>
"#,
        legend = legend::html(m),
        chart_css = producer::CSS,
        legend_css = legend::CSS,
        colours = legend::css(),
        moments_css = moments::CSS,
        moments = moments::html(shown, left_off, shown.last().map(|x| x.t)),
        seed = m.seed,
        digest = esc(&m.digest),
        span = if m.window.is_whole() {
            format!("{} of virtual time", m.end)
        } else {
            format!("{} to {} of a {} run (--window)", m.window.from, SimTime(end), m.end)
        },
        total = height + top,
    )
}

const AXIS: u64 = 24;

const CSS: &str = r#"
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 4px; }
header p { margin: 4px 0; }
#chart { display: flex; border: 1px solid #ccc; }
#right { flex: 1; overflow: hidden; }
#plot, #axis { display: block; cursor: grab; }
#faults { position: relative; overflow: hidden; border-bottom: 1px solid #eee; }
.flabel { position: absolute; white-space: nowrap; font-size: 12px; line-height: 16px; color: #882255; font-weight: 600; margin-left: -4px; }
.vline { stroke: #882255; stroke-width: 1px; stroke-dasharray: 3 3; vector-effect: non-scaling-stroke; }
.lane rect { fill: #f7f7f7; stroke: #e3e3e3; }
.lane.live rect, .lane.route rect, .lane.instance rect, .lane.view rect { fill: #fbfbfb; }
.lane text { font-size: 12px; fill: #333; }
.lane.actor text { font-weight: 600; }
.lane.steady text { fill: #777; }
.folded { display: none; }
.rowbg { fill: #fff; stroke: #eee; vector-effect: non-scaling-stroke; }
.mark { stroke-width: 2px; vector-effect: non-scaling-stroke; stroke: #888; }
.bar { vector-effect: non-scaling-stroke; }
.band { opacity: 0.3; }
#axis text { font-size: 11px; fill: #555; } #axis line { stroke: #ccc; }
"#;

const JS: &str = r#"
function routesim(START, END, H) {
  const plot = document.getElementById('plot'), axis = document.getElementById('axis');
  const labels = document.getElementById('labels'), lanesG = document.getElementById('lanes');
  const strip = document.getElementById('faults'), cursor = document.getElementById('cursor');
  const flabels = [...strip.querySelectorAll('.flabel')];
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
  // Fault names at their times; one that would overlap the last on a line takes the next line.
  function drawFaults() {
    const px = strip.getBoundingClientRect().width || 1000, ends = [];
    for (const l of flabels) {
      const t = +l.dataset.at, x = (t - x0) / w * px;
      l.style.display = t < x0 || t > x0 + w ? 'none' : '';
      if (l.style.display) continue;
      let level = ends.findIndex(e => e < x);
      if (level < 0) { level = ends.length; ends.push(0); }
      ends[level] = x + l.offsetWidth + 6;
      l.style.left = `${x}px`;
      l.style.top = `${level * 16}px`;
    }
    strip.style.height = `${Math.max(1, ends.length) * 16}px`;
    const top = strip.offsetHeight + axis.getBoundingClientRect().height;
    lanesG.setAttribute('transform', `translate(0,${top})`);
    labels.setAttribute('height', top + H);
    labels.setAttribute('viewBox', `0 0 ${labels.getAttribute('width')} ${top + H}`);
  }
  function apply() { plot.setAttribute('viewBox', `${x0} 0 ${w} ${H}`); drawAxis(); drawFaults(); }
  // Stacks the lanes that are not folded, top to bottom, in both columns.
  function restack() {
    const rows = [...plot.querySelectorAll('g.row')];
    let y = 0;
    [...lanesG.querySelectorAll('g.lane')].forEach((lane, i) => {
      if (lane.classList.contains('folded')) return;
      lane.setAttribute('transform', `translate(0,${y})`);
      rows[i].setAttribute('transform', `translate(0,${y})`);
      y += +lane.dataset.h;
    });
    H = y;
    plot.setAttribute('height', H);
    plot.querySelectorAll('.vline, #cursor').forEach(l => l.setAttribute('y2', H));
    apply();
  }
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
  const fold = document.getElementById('fold');
  if (fold) fold.onclick = () => {
    const folding = fold.textContent.startsWith('fold');
    document.querySelectorAll('.lane.steady, .row.steady').forEach(e => e.classList.toggle('folded', folding));
    fold.textContent = `${folding ? 'show' : 'fold'} ${fold.dataset.n} unchanging lanes`;
    restack();
  };
  // A key moment clicked: a line at its instant, brought into view if the zoom hides it.
  function highlight(li) {
    document.querySelectorAll('.moment.selected').forEach(m => m.classList.remove('selected'));
    li.classList.add('selected');
    const t = +li.dataset.at;
    cursor.setAttribute('x1', t);
    cursor.setAttribute('x2', t);
    cursor.removeAttribute('visibility');
    if (t < x0 || t > x0 + w) { x0 = Math.max(START, Math.min(END - w, t - w / 2)); apply(); }
    document.getElementById('chart').scrollIntoView({ block: 'nearest' });
  }
  document.querySelectorAll('.moment').forEach(li => {
    li.addEventListener('click', () => highlight(li));
    li.addEventListener('keydown', e => { if (e.key === 'Enter') highlight(li); });
  });
  window.addEventListener('resize', apply);
  apply();
}
"#;
