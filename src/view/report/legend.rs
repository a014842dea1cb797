//! The report's colours and legend, from one table: every class the chart draws, what it means,
//! how it is drawn and its colour. The CSS and the legend are both generated from [`ENTRIES`], so
//! a class cannot be drawn in one colour and explained in another.
//!
//! The colours are Paul Tol's *muted* qualitative scheme (<https://personal.sron.nl/~pault/>),
//! chosen because its ten colours stay apart for the common colour-vision deficiencies
//! (deuteranopia, protanopia, tritanopia) and in greyscale print better than a rainbow does.
//! Ten colours cannot each mark one of thirty classes, so a class is told apart by its colour
//! *and* its shape: a short tick (routine traffic), a tall thick tick (an event that changes
//! something), a solid span (a state), a dashed outline (a deadline), a pale full-height band (a
//! fault) or a chart bar. Within a shape no two classes share a colour (`tests` below), and the
//! pairs a reader is most likely to confuse — "in route" and "held", "hung" and "unhealthy" —
//! differ in colour as well.

use super::model::Model;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Paul Tol's muted scheme: indigo, cyan, teal, green, olive, sand, rose, wine, purple, and the
/// pale grey he keeps for "no data" (here: scan ticks, the quietest traffic).
pub const PALETTE: &[&str] =
    &["#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499", "#DDDDDD"];
const INDIGO: &str = PALETTE[0];
const CYAN: &str = PALETTE[1];
const TEAL: &str = PALETTE[2];
const GREEN: &str = PALETTE[3];
const OLIVE: &str = PALETTE[4];
const SAND: &str = PALETTE[5];
const ROSE: &str = PALETTE[6];
const WINE: &str = PALETTE[7];
const PURPLE: &str = PALETTE[8];
const GREY: &str = PALETTE[9];

/// How a class is drawn; the legend's swatch has the same shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    /// A short thin tick at the foot of the lane: routine traffic.
    Tick,
    /// A full-height thick tick: something changed.
    Event,
    /// A solid span inside the lane: a state held for a while.
    Span,
    /// A dashed outline: a deadline, not a state.
    Outline,
    /// A pale band over every lane of a process: a fault lasting a while.
    Band,
    /// A bar of a producer's chart.
    Chart,
}

pub struct Entry {
    pub class: &'static str,
    pub what: &'static str,
    pub shape: Shape,
    pub colour: &'static str,
}

const fn e(class: &'static str, what: &'static str, shape: Shape, colour: &'static str) -> Entry {
    Entry { class, what, shape, colour }
}

/// Every class in legend order. Ticks and spans of one concept share a colour (an "unhealthy"
/// event, then the "unhealthy" span it opens), so the colour carries the meaning across shapes.
pub const ENTRIES: &[Entry] = &[
    e("register", "registration", Shape::Tick, INDIGO),
    e("heartbeat", "heartbeat / beat", Shape::Tick, CYAN),
    e("scan", "scan tick", Shape::Tick, GREY),
    e("poll", "route poll / list", Shape::Tick, TEAL),
    e("push", "push", Shape::Tick, OLIVE),
    e("drop", "lost / reset / failed", Shape::Tick, ROSE),
    e("close", "channel closed", Shape::Tick, WINE),
    e("other", "other", Shape::Tick, SAND),
    e("expire", "expiry / deletion", Shape::Event, ROSE),
    e("batch", "unregister batch", Shape::Event, PURPLE),
    e("unhealthy", "marked unhealthy", Shape::Event, SAND),
    e("healthy", "healthy again", Shape::Event, TEAL),
    e("notfound", "20404 / beat refused", Shape::Event, OLIVE),
    e("fault", "fault", Shape::Event, WINE),
    e("present", "in live table", Shape::Span, CYAN),
    e("route", "in route", Shape::Span, INDIGO),
    e("healthy", "registered, healthy", Shape::Span, TEAL),
    e("unhealthy", "registered, unhealthy", Shape::Span, SAND),
    e("pass", "held", Shape::Span, GREEN),
    e("fail", "failed", Shape::Span, ROSE),
    e("alive", "alive until (last registration or beat + timeout)", Shape::Outline, WINE),
    e("deadline", "deleted after (last beat + delete timeout)", Shape::Outline, PURPLE),
    e("down", "down", Shape::Band, ROSE),
    e("hung", "hung", Shape::Band, PURPLE),
    e("cut", "cut off", Shape::Band, OLIVE),
    e("lossy", "lossy link", Shape::Band, SAND),
    e("sent-ok", "send ok", Shape::Chart, GREEN),
    e("sent-retried", "send retried-ok", Shape::Chart, SAND),
    e("sent-failed", "send failed", Shape::Chart, ROSE),
    e("lat-max", "slowest send", Shape::Chart, CYAN),
    e("lat-p99", "p99 latency", Shape::Chart, INDIGO),
];

/// Whether a mark of `class` is routine (a short tick) rather than an event (a tall one).
pub fn routine(class: &str) -> bool {
    ENTRIES.iter().any(|x| x.class == class && x.shape == Shape::Tick)
}

/// The chart's colour rules, generated from [`ENTRIES`]. Pass and fail marks on the
/// expectation rows are events in the colours of their spans.
pub fn css() -> String {
    let mut out = String::new();
    for x in ENTRIES {
        let (c, col) = (x.class, x.colour);
        let _ = match x.shape {
            Shape::Tick => writeln!(out, ".mark.{c} {{ stroke: {col}; }}"),
            Shape::Event => writeln!(out, ".mark.{c} {{ stroke: {col}; stroke-width: 3px; }}"),
            Shape::Span => writeln!(out, ".bar.{c} {{ fill: {col}; }}"),
            Shape::Outline => {
                writeln!(out, ".bar.{c} {{ fill: none; stroke: {col}; stroke-dasharray: 4 3; stroke-width: 1.5px; }}")
            }
            Shape::Band => writeln!(out, ".band.{c} {{ fill: {col}; }}"),
            Shape::Chart => writeln!(out, ".chart.{c} {{ fill: {col}; }}"),
        };
    }
    let _ = writeln!(
        out,
        ".mark.pass {{ stroke: {GREEN}; stroke-width: 3px; }} .mark.fail {{ stroke: {ROSE}; stroke-width: 3px; }}"
    );
    out
}

/// The legend of the classes this report draws, and no others, grouped by shape. Each entry is
/// a `.entry` with its swatch, so a screenshot explains every colour on it.
pub fn html(m: &Model) -> String {
    let marks: BTreeSet<&str> = m.marks.iter().map(|x| x.class).collect();
    let spans: BTreeSet<&str> = m.bars.iter().map(|x| x.class).collect();
    let bands: BTreeSet<&str> = m.bands.iter().map(|x| x.class).collect();
    let used = |x: &Entry| match x.shape {
        Shape::Tick | Shape::Event => marks.contains(x.class),
        Shape::Span | Shape::Outline => spans.contains(x.class),
        Shape::Band => bands.contains(x.class),
        Shape::Chart => !m.charts.is_empty(),
    };
    let groups = [
        ("traffic", &[Shape::Tick][..]),
        ("events", &[Shape::Event]),
        ("states", &[Shape::Span, Shape::Outline]),
        ("faults", &[Shape::Band]),
        ("sends", &[Shape::Chart]),
    ];
    let mut out = String::from(r#"<div class="legend">"#);
    for (title, shapes) in groups {
        let entries: Vec<&Entry> = ENTRIES.iter().filter(|x| shapes.contains(&x.shape) && used(x)).collect();
        if entries.is_empty() {
            continue;
        }
        let _ = write!(out, r#"<span class="group"><b>{title}</b>"#);
        for x in entries {
            let style = match x.shape {
                Shape::Outline => format!("border: 1.5px dashed {}", x.colour),
                Shape::Tick | Shape::Event => format!("border-left-color: {}", x.colour),
                _ => format!("background: {}", x.colour),
            };
            let shape = format!("{:?}", x.shape).to_lowercase();
            let _ =
                write!(out, r#"<span class="entry"><span class="sw {shape}" style="{style}"></span>{}</span>"#, x.what);
        }
        out.push_str("</span>");
    }
    out.push_str("</div>");
    out
}

/// The swatches' shapes: a tick is a left border, short or tall; a band is pale.
pub const CSS: &str = r#"
.legend { margin: 6px 0; line-height: 22px; }
.legend .group { margin-right: 14px; white-space: nowrap; display: inline-block; }
.legend .group b { font-weight: 600; margin-right: 4px; color: #555; }
.legend .entry { margin-right: 10px; white-space: nowrap; }
.legend .sw { display: inline-block; width: 14px; height: 12px; margin-right: 4px; vertical-align: middle; box-sizing: border-box; }
.legend .sw.tick { width: 4px; height: 6px; border-left: 2px solid; vertical-align: -1px; margin-left: 5px; }
.legend .sw.event { width: 4px; height: 14px; border-left: 3px solid; margin-left: 5px; }
.legend .sw.band { opacity: 0.35; height: 16px; }
"#;

#[cfg(test)]
mod tests {
    use super::super::producer;
    use super::*;

    fn colour(class: &str, shape: Shape) -> &'static str {
        ENTRIES.iter().find(|x| x.class == class && x.shape == shape).expect("in the legend").colour
    }

    #[test]
    fn every_legend_colour_comes_from_tols_muted_palette() {
        for x in ENTRIES {
            assert!(PALETTE.contains(&x.colour), "{} uses {}, not a palette colour", x.class, x.colour);
        }
        let distinct: BTreeSet<&str> = PALETTE.iter().copied().collect();
        assert_eq!(distinct.len(), PALETTE.len(), "the palette repeats a colour");
    }

    #[test]
    fn no_two_legend_classes_of_one_shape_share_a_colour() {
        for (i, a) in ENTRIES.iter().enumerate() {
            for b in &ENTRIES[i + 1..] {
                assert!(
                    (a.shape, a.colour) != (b.shape, b.colour),
                    "{} and {} are both {:?} in {}",
                    a.what,
                    b.what,
                    a.shape,
                    a.colour
                );
            }
        }
    }

    #[test]
    fn states_and_deadlines_all_differ_in_colour_since_they_share_a_lane() {
        let spans: Vec<&Entry> = ENTRIES.iter().filter(|x| matches!(x.shape, Shape::Span | Shape::Outline)).collect();
        let colours: BTreeSet<&str> = spans.iter().map(|x| x.colour).collect();
        assert_eq!(colours.len(), spans.len(), "two spans share a colour");
    }

    #[test]
    fn the_pairs_the_old_legend_confused_now_differ_in_colour() {
        // "in route" and "held" were one green; "hung" and "unhealthy" one peach.
        assert_ne!(colour("route", Shape::Span), colour("pass", Shape::Span));
        assert_ne!(colour("hung", Shape::Band), colour("unhealthy", Shape::Span));
        assert_ne!(colour("present", Shape::Span), colour("healthy", Shape::Span));
        assert_ne!(colour("down", Shape::Band), colour("hung", Shape::Band));
    }

    #[test]
    fn every_class_the_producer_charts_draw_is_in_the_legend() {
        for class in producer::CLASSES {
            assert!(ENTRIES.iter().any(|x| x.class == *class && x.shape == Shape::Chart), "{class}");
        }
    }
}
