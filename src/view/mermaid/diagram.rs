//! The diagram being built: participants, and a list of items (arrows, notes, loops) that is
//! folded twice before it is written out.
//!
//! 1. **Routine traffic** (periodic registrations, beats, polls that change nothing) between two
//!    interesting items becomes one `loop` that names each message once with its count.
//! 2. **Repeated steps**: when the same few items come back again and again — a node that flaps
//!    unhealthy/healthy every 5 s for half an hour, a link that keeps refusing — the run of
//!    repetitions becomes one `loop` showing the first repetition, with the count and the span.
//!    Items count as "the same" when they differ only in times and durations.

use crate::sim::clock::SimTime;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A participant id Mermaid accepts: letters, digits and `_`.
pub fn id(actor: &str) -> String {
    actor.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Text safe inside a Mermaid message or note: `;` ends a statement, `#` starts an entity code
/// (so a literal one is written as the entity `#35;`), and arrows would be parsed as arrows.
pub fn text(s: &str) -> String {
    s.replace(';', ",").replace('#', "#35;").replace("-->", "→").replace("->", "→")
}

/// Stands for "across every participant" until the participant list is known.
pub const ALL: &str = "\u{1}all";

#[derive(Clone, Debug)]
enum Item {
    Arrow {
        from: String,
        to: String,
        style: &'static str,
        t: SimTime,
        label: String,
    },
    Note {
        over: String,
        t: SimTime,
        label: String,
    },
    /// Routine messages folded: (from, to, label, arrow style) → count. A message that was lost
    /// or dropped is drawn `-x`, never as a delivered `->>`.
    Routine {
        from: SimTime,
        to: SimTime,
        msgs: BTreeMap<(String, String, String, &'static str), u32>,
    },
    /// `times` repetitions of `items`, the first one shown.
    Repeat {
        from: SimTime,
        to: SimTime,
        times: usize,
        items: Vec<Item>,
    },
}

impl Item {
    fn first_t(&self) -> SimTime {
        match self {
            Item::Arrow { t, .. } | Item::Note { t, .. } => *t,
            Item::Routine { from, .. } | Item::Repeat { from, .. } => *from,
        }
    }

    fn last_t(&self) -> SimTime {
        match self {
            Item::Arrow { t, .. } | Item::Note { t, .. } => *t,
            Item::Routine { to, .. } | Item::Repeat { to, .. } => *to,
        }
    }

    /// What makes two items "the same step": everything but times, durations and counts.
    fn key(&self) -> String {
        match self {
            Item::Arrow { from, to, style, label, .. } => format!("A{from}{style}{to}:{}", timeless(label)),
            Item::Note { over, label, .. } => format!("N{over}:{}", timeless(label)),
            Item::Routine { msgs, .. } => {
                msgs.keys().fold("R".to_string(), |k, (f, t, l, s)| format!("{k}|{f}{s}{t}:{}", timeless(l)))
            }
            // A repetition is never part of a longer one: it already summarises.
            Item::Repeat { from, .. } => format!("P{}", from.millis()),
        }
    }

    fn write(&self, out: &mut String, depth: usize) {
        let pad = "    ".repeat(depth);
        match self {
            Item::Arrow { from, to, style, t, label } => {
                let _ = writeln!(out, "{pad}{}{style}{}: {t} {}", id(from), id(to), text(label));
            }
            Item::Note { over, t, label } => {
                let _ = writeln!(out, "{pad}Note over {}: {t} {}", id(over), text(label));
            }
            Item::Routine { from, to, msgs } => {
                let _ = writeln!(out, "{pad}loop routine traffic {from} to {to}");
                for ((f, t, label, style), n) in msgs {
                    let times = if *n > 1 { format!(" ×{n}") } else { String::new() };
                    let _ = writeln!(out, "{pad}    {}{style}{}: {}{times}", id(f), id(t), text(label));
                }
                let _ = writeln!(out, "{pad}end");
            }
            Item::Repeat { from, to, times, items } => {
                let _ = writeln!(out, "{pad}loop the same steps ×{times} from {from} to {to} (the first shown)");
                for item in items {
                    item.write(out, depth + 1);
                }
                let _ = writeln!(out, "{pad}end");
            }
        }
    }
}

/// The label with every time or duration (`25.001s`, `1m30s`, `250ms`) and count (`×3`) blanked.
fn timeless(label: &str) -> String {
    let b = label.as_bytes();
    let (mut out, mut i) = (String::with_capacity(label.len()), 0);
    while i < b.len() {
        let starts_number = b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if starts_number || label[i..].starts_with('×') {
            let mut j = if b[i].is_ascii_digit() { i } else { i + '×'.len_utf8() };
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.' || matches!(b[j], b'h' | b'm' | b's')) {
                j += 1;
            }
            let unit = label[i..j].ends_with(['h', 'm', 's']);
            if unit || label[i..].starts_with('×') {
                out.push('#');
                i = j;
                continue;
            }
        }
        let c = label[i..].chars().next().expect("in bounds");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

#[derive(Default)]
pub struct Diagram {
    participants: Vec<String>,
    items: Vec<Item>,
    /// Routine messages since the last interesting item.
    folded: BTreeMap<(String, String, String, &'static str), u32>,
    fold_from: Option<SimTime>,
    fold_to: SimTime,
}

impl Diagram {
    /// Items drawn so far (a pending fold not yet counted).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    fn touch(&mut self, actor: &str) {
        if !self.participants.iter().any(|p| p == actor) {
            self.participants.push(actor.to_string());
        }
    }

    pub fn arrow(&mut self, from: &str, to: &str, style: &'static str, t: SimTime, label: &str) {
        self.flush();
        self.touch(from);
        self.touch(to);
        self.items.push(Item::Arrow { from: from.into(), to: to.into(), style, t, label: label.into() });
    }

    pub fn note(&mut self, over: &str, t: SimTime, label: &str) {
        self.flush();
        self.touch(over);
        self.items.push(Item::Note { over: over.into(), t, label: label.into() });
    }

    pub fn routine(&mut self, from: &str, to: &str, t: SimTime, label: &str) {
        self.fold(from, to, t, label, "->>");
    }

    /// A routine message that did not arrive (lost, dropped, refused): folded like the traffic
    /// it belongs to, but drawn as lost.
    pub fn routine_lost(&mut self, from: &str, to: &str, t: SimTime, label: &str) {
        self.fold(from, to, t, label, "-x");
    }

    fn fold(&mut self, from: &str, to: &str, t: SimTime, label: &str, style: &'static str) {
        self.touch(from);
        self.touch(to);
        self.fold_from.get_or_insert(t);
        self.fold_to = t;
        *self.folded.entry((from.to_string(), to.to_string(), label.to_string(), style)).or_default() += 1;
    }

    /// Closes the pending routine fold. A lone message is drawn as itself: a loop around one
    /// arrow says nothing the arrow does not.
    fn flush(&mut self) {
        let Some(from) = self.fold_from.take() else { return };
        let msgs = std::mem::take(&mut self.folded);
        match msgs.iter().next() {
            Some(((f, to, label, style), 1)) if msgs.len() == 1 => {
                let (from_actor, to, label, style) = (f.clone(), to.clone(), label.clone(), *style);
                self.items.push(Item::Arrow { from: from_actor, to, style, t: from, label });
            }
            _ => self.items.push(Item::Routine { from, to: self.fold_to, msgs }),
        }
    }

    /// Writes the diagram; `rank` orders the participants.
    pub fn finish(mut self, rank: impl Fn(&str) -> (usize, bool)) -> String {
        self.flush();
        let items = fold_repeats(std::mem::take(&mut self.items));
        let mut participants: Vec<&String> = self.participants.iter().filter(|p| *p != ALL).collect();
        let first_seen = |p: &String| self.participants.iter().position(|x| x == p);
        participants.sort_by_key(|p| (rank(p), first_seen(p)));
        let span = match (participants.first(), participants.last()) {
            (Some(a), Some(b)) if a != b => format!("{},{}", id(a), id(b)),
            (Some(a), _) => id(a),
            _ => "all".into(),
        };
        let mut out = String::from("sequenceDiagram\n");
        for p in &participants {
            let _ = writeln!(out, "    participant {} as {}", id(p), text(p));
        }
        let mut body = String::new();
        for item in &items {
            item.write(&mut body, 1);
        }
        out + &body.replace(&id(ALL), &span)
    }
}

/// The longest block of steps considered when looking for repetitions.
const MAX_PERIOD: usize = 24;
/// Fewer repetitions than this are drawn out in full: two are easy to read, three are a pattern.
const MIN_REPEATS: usize = 3;

/// Replaces each run of at least [`MIN_REPEATS`] identical blocks with one `Repeat`, greedily
/// from the start, preferring the run that covers the most items (then the shortest block).
fn fold_repeats(items: Vec<Item>) -> Vec<Item> {
    let keys: Vec<String> = items.iter().map(Item::key).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut best: Option<(usize, usize)> = None;
        for p in 1..=MAX_PERIOD {
            if i + MIN_REPEATS * p > items.len() {
                break;
            }
            let mut r = 1;
            while i + (r + 1) * p <= items.len() && keys[i + r * p..i + (r + 1) * p] == keys[i..i + p] {
                r += 1;
            }
            if r >= MIN_REPEATS && best.is_none_or(|(bp, br)| r * p > bp * br) {
                best = Some((p, r));
            }
        }
        match best {
            Some((p, r)) => {
                let (from, to) = (items[i].first_t(), items[i + p * r - 1].last_t());
                out.push(Item::Repeat { from, to, times: r, items: items[i..i + p].to_vec() });
                i += p * r;
            }
            None => {
                out.push(items[i].clone());
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SimTime {
        SimTime(ms)
    }

    #[test]
    fn times_durations_and_counts_do_not_make_steps_different_but_names_do() {
        assert_eq!(timeless("orders-1 silent 20.001s > 15s"), timeless("orders-1 silent 1m5.3s > 15s"));
        assert_eq!(timeless("beat ×3"), "beat #");
        assert_ne!(timeless("orders-1 silent 20s"), timeless("orders-2 silent 20s"));
        assert_eq!(timeless("3 instances (2 healthy)"), "3 instances (2 healthy)");
    }

    #[test]
    fn three_repetitions_of_a_block_fold_into_one_loop_showing_the_first() {
        let mut d = Diagram::default();
        for k in 0..4 {
            d.note("nacos1/health", at(5_000 * k + 1), &format!("unhealthy after {}ms", k));
            d.arrow("app", "nacos1", "->>", at(5_000 * k + 2), "beat: healthy again");
        }
        d.note("app", at(30_000), "end");
        let out = d.finish(|_| (0, false));
        assert!(out.contains("loop the same steps ×4 from 0.001s to 15.002s (the first shown)"), "{out}");
        assert_eq!(out.matches("healthy again").count(), 1, "{out}");
        assert!(out.contains("Note over app: 30.000s end"), "{out}");
    }

    #[test]
    fn a_lost_message_is_drawn_lost_in_a_fold_and_alone() {
        let mut d = Diagram::default();
        d.routine("a0", "ns2", at(1), "REGISTER_BROKER (periodic)");
        d.routine_lost("a0", "ns2", at(2), "REGISTER_BROKER dropped, link cut");
        d.routine_lost("a0", "ns2", at(3), "REGISTER_BROKER dropped, link cut");
        d.note("a0", at(4), "end of the fold");
        d.routine_lost("b0", "ns2", at(5), "SYN lost, TCP retransmits");
        let out = d.finish(|_| (0, false));
        assert!(out.contains("a0->>ns2: REGISTER_BROKER (periodic)\n"), "{out}");
        assert!(out.contains("a0-xns2: REGISTER_BROKER dropped, link cut ×2"), "{out}");
        assert!(out.contains("b0-xns2: 0.005s SYN lost"), "a lone lost message is an arrow, drawn lost: {out}");
        assert!(!out.contains("->>ns2: REGISTER_BROKER dropped"), "{out}");
    }

    #[test]
    fn two_repetitions_stay_drawn_out() {
        let mut d = Diagram::default();
        for k in 0..2 {
            d.note("a", at(k), "same");
        }
        let out = d.finish(|_| (0, false));
        assert_eq!(out.matches("same").count(), 2, "{out}");
        assert!(!out.contains("loop"), "{out}");
    }

    #[test]
    fn routine_messages_between_interesting_ones_fold_with_their_counts() {
        let mut d = Diagram::default();
        for k in 0..5 {
            d.routine("a0", "ns1", at(k * 30_000), "REGISTER_BROKER (periodic)");
        }
        d.note("ns1", at(200_000), "expired");
        let out = d.finish(|_| (0, false));
        assert!(out.contains(
            "loop routine traffic 0.000s to 120.000s\n        a0->>ns1: REGISTER_BROKER (periodic) ×5\n    end"
        ));
    }

    #[test]
    fn a_literal_hash_is_written_as_an_entity_code() {
        assert_eq!(text("ch#1; a -> b"), "ch#35;1, a → b");
    }
}
