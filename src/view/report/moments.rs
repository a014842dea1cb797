//! The report's key-moment panel: the moments `routesim explain` narrates (the explainer's
//! [`Moment`]s, taken from the run, not re-derived here), listed under the chart. Clicking one
//! draws a line at its instant on the chart and brings that instant into view, so the story and
//! the lanes can be read side by side.

use super::html::esc;
use crate::sim::clock::SimTime;
use crate::view::explain::{change_text, Moment};
use crate::view::Window;
use std::fmt::Write;

/// At most this many moments are listed: a long run's flapping would otherwise list thousands,
/// and `routesim explain --at T` tells the rest.
pub const MAX_MOMENTS: usize = 300;

/// One moment as the panel shows it.
pub struct MomentText {
    pub t: SimTime,
    pub actor: String,
    pub story: Vec<String>,
    /// The affected tables before and after, as `explain` prints them.
    pub tables: String,
}

/// The moments inside the window, at most [`MAX_MOMENTS`], and how many more there were.
pub fn within(window: Window, moments: &[Moment]) -> (Vec<MomentText>, usize) {
    let inside: Vec<&Moment> = moments.iter().filter(|m| window.contains(m.t)).collect();
    let shown = inside
        .iter()
        .take(MAX_MOMENTS)
        .map(|m| MomentText {
            t: m.t,
            actor: m.actor.clone(),
            story: m.story.clone(),
            tables: m.changes.iter().map(change_text).collect(),
        })
        .collect();
    (shown, inside.len().saturating_sub(MAX_MOMENTS))
}

/// The panel: one `li.moment` per moment with its time, actor and story; the tables folded.
pub fn html(moments: &[MomentText], left_off: usize, last: Option<SimTime>) -> String {
    let mut out = String::from(r#"<section id="moments"><h2>Key moments</h2>"#);
    if moments.is_empty() {
        out.push_str(
            "<p>No key moments in this window (the run's moments are collected when the report is written; \
             `routesim explain` tells them too).</p></section>",
        );
        return out;
    }
    out.push_str(
        "<p>What <code>routesim explain</code> tells, step by step: click a moment to mark its instant on the \
         chart.</p><ol>",
    );
    for m in moments {
        let _ = write!(
            out,
            r#"<li class="moment" data-at="{at}" tabindex="0"><span class="when">{t}</span> <span class="who">{who}</span>"#,
            at = m.t.millis(),
            t = m.t,
            who = esc(&m.actor)
        );
        for line in &m.story {
            let _ = write!(out, r#"<div class="story">{}</div>"#, esc(line));
        }
        if !m.tables.is_empty() {
            let _ = write!(
                out,
                "<details><summary>tables before and after</summary><pre>{}</pre></details>",
                esc(&m.tables)
            );
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>");
    if let (true, Some(t)) = (left_off > 0, last) {
        let _ = write!(
            out,
            "<p>… and {left_off} more moments: <code>routesim explain FILE --at {t}</code> tells them.</p>"
        );
    }
    out.push_str("</section>");
    out
}

pub const CSS: &str = r#"
#moments { margin-top: 14px; max-width: 1100px; }
#moments h2 { font-size: 15px; margin: 0 0 4px; }
#moments ol { padding-left: 0; list-style: none; margin: 0; }
.moment { padding: 4px 8px; border-left: 3px solid #ddd; margin: 2px 0; cursor: pointer; }
.moment:hover { background: #f4f4f4; }
.moment.selected { border-left-color: #882255; background: #f7edf2; }
.moment .when { font-weight: 600; font-variant-numeric: tabular-nums; }
.moment .who { color: #555; }
.moment .story { margin-left: 12px; }
.moment pre { font-size: 11px; margin: 2px 0 2px 12px; }
.moment summary { margin-left: 12px; color: #555; font-size: 12px; }
#cursor { stroke: #882255; stroke-width: 2px; vector-effect: non-scaling-stroke; }
"#;
