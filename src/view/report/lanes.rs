//! Where each lane sits: its place in the order (`natural`), its label wrapped to the label column (a long expectation name takes
//! several lines and its lane grows, rather than being cut off), its height, and whether it is
//! *steady* — one state from its first appearance to the end of the window, which a reader can
//! fold away when there are many.

use super::model::Model;

pub const ROW: u64 = 20;
pub const LABEL_WIDTH: u64 = 260;
/// A producer's chart rows are three lanes high, so a bar's height can be read.
pub const CHART_ROW: u64 = 3 * ROW;
/// Characters per label line. The column holds about 40 of the 12 px sans-serif; 34 leaves room
/// for wide letters and the bold actor lanes.
const LINE_CHARS: usize = 34;
const LINE_HEIGHT: u64 = 14;
/// From this many steady lanes on, they start folded.
pub const FOLD_FROM: usize = 6;

pub struct Lane {
    /// Top, in the initial layout (folded lanes take no room).
    pub y: u64,
    pub h: u64,
    pub lines: Vec<String>,
    pub steady: bool,
    pub folded: bool,
}

/// `text` in lines of at most `width` characters, broken between words (a longer word is split).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(word.drain(..width).collect());
        }
        let word: String = word.into_iter().collect();
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Whether each row keeps one state in the drawn window: a table row (a broker's entry, a route,
/// an instance, a subscriber's view) with a single span that lasts to the window's end and no
/// marks but routine beats. Process lanes and expectations always show.
fn steady(m: &Model, end: u64) -> Vec<bool> {
    let mut spans = vec![0usize; m.rows.len()];
    let mut to_end = vec![false; m.rows.len()];
    for b in &m.bars {
        spans[b.row] += 1;
        to_end[b.row] = b.to.millis() >= end;
    }
    let mut busy = vec![false; m.rows.len()];
    for mk in m.marks.iter().filter(|mk| mk.class != "heartbeat") {
        busy[mk.row] = true;
    }
    (0..m.rows.len())
        .map(|i| {
            let table = matches!(m.rows[i].kind, "live" | "route" | "instance" | "view");
            table && spans[i] == 1 && to_end[i] && !busy[i]
        })
        .collect()
}

/// Every row's lane, in row order; `end` is the drawn window's last millisecond.
pub fn layout(m: &Model, end: u64) -> Vec<Lane> {
    let steady = steady(m, end);
    let fold = steady.iter().filter(|s| **s).count() >= FOLD_FROM;
    let mut y = 0;
    m.rows
        .iter()
        .zip(steady)
        .map(|(row, steady)| {
            let lines = wrap(&row.label, LINE_CHARS);
            let base = if matches!(row.kind, "sends" | "latency") { CHART_ROW } else { ROW };
            let h = base.max(lines.len() as u64 * LINE_HEIGHT + 6);
            let folded = steady && fold;
            let lane = Lane { y, h, lines, steady, folded };
            if !folded {
                y += h;
            }
            lane
        })
        .collect()
}

/// A label as a sort key that orders runs of digits by value: `b2` before `b10`.
pub fn natural(label: &str) -> Vec<(u8, u64, String)> {
    let mut key = Vec::new();
    let mut rest = label;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits > 0 {
            // Beyond u64 the text still orders them.
            key.push((0, rest[..digits].parse().unwrap_or(u64::MAX), rest[..digits].to_string()));
            rest = &rest[digits..];
        } else {
            let text = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
            key.push((1, 0, rest[..text].to_string()));
            rest = &rest[text..];
        }
    }
    key
}

/// The label's `<text>`: one `<tspan>` a line, each ending in a space so the text reads whole.
pub fn label_text(lines: &[String]) -> String {
    let mut out = String::from(r#"<text x="6" y="0">"#);
    for (i, line) in lines.iter().enumerate() {
        let dy = if i == 0 { 14 } else { LINE_HEIGHT };
        let sep = if i + 1 < lines.len() { " " } else { "" };
        out += &format!(r#"<tspan x="6" dy="{dy}">{}{sep}</tspan>"#, super::html::esc(line));
    }
    out.push_str("</text>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_expectation_name_wraps_between_words_and_loses_nothing() {
        let name = "✔ the silent broker is still live 120 s after its last registration, and up to the next tick";
        let lines = wrap(name, LINE_CHARS);
        assert!(lines.len() >= 3, "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() <= LINE_CHARS), "{lines:?}");
        assert_eq!(lines.join(" "), name);
    }

    #[test]
    fn numbers_in_labels_sort_by_value() {
        let mut labels = ["ns1 · orders-10", "ns1 · orders-2", "ns1 · live b0", "ns1 · live a0", "ns1 · orders-1"];
        labels.sort_by_key(|l| natural(l));
        assert_eq!(labels, ["ns1 · live a0", "ns1 · live b0", "ns1 · orders-1", "ns1 · orders-2", "ns1 · orders-10"]);
    }

    #[test]
    fn a_word_longer_than_a_line_is_split_not_cut() {
        let lines = wrap(&"x".repeat(80), LINE_CHARS);
        assert_eq!(lines.concat(), "x".repeat(80));
        assert_eq!(lines.len(), 3);
        assert_eq!(wrap("", LINE_CHARS), vec![String::new()]);
    }
}
