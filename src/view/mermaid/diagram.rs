//! The diagram being built: participants, and a list of items (arrows, notes, routine traffic)
//! that is folded when it is written out (see [`super::fold`]).
//!
//! 1. **Routine traffic** (periodic registrations, beats, polls that change nothing) between two
//!    interesting items becomes one `loop` that names each message once with its count, except
//!    the messages a later line cites and the last ones before a fault, which keep their arrows.
//! 2. **Repeated steps**: when the same few items come back again and again — a node that flaps
//!    unhealthy/healthy every 5 s for half an hour, a link that keeps refusing — the run of
//!    repetitions becomes one `loop` showing the first repetition, with the count and the span.
//!    Items count as "the same" when they differ only in times and durations.
//!
//! A message is drawn where the trace first tells of it, which for a registration is when the
//! broker sends it. If the network then reports it lost or dropped in the same moment, the arrow
//! already drawn becomes a lost one (`-x`): it is never drawn delivered and lost side by side.

use super::fold::{expand, fold_repeats, timeless, Keys, Msg, MsgKey};
use crate::sim::clock::{SimDuration, SimTime};
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

pub use crate::sim::trace::process_of as process;

/// Stands for "across every participant" until the participant list is known.
pub const ALL: &str = "\u{1}all";

/// How long after a message was drawn the network may still report it lost: a TCP segment is
/// lost as it is sent, a datagram or a segment to a powered-off host is dropped when it would
/// have arrived, one latency later (milliseconds). Nothing waits in flight for a second.
const IN_FLIGHT: SimDuration = SimDuration(1_000);

#[derive(Clone, Debug)]
pub enum Item {
    Arrow {
        from: String,
        to: String,
        style: &'static str,
        t: SimTime,
        label: String,
        /// Drawn as it was sent (see [`Msg::in_flight`]).
        in_flight: bool,
    },
    Note {
        over: String,
        t: SimTime,
        label: String,
    },
    /// Routine messages between two interesting items, each kept until the diagram is written.
    Routine(Vec<Msg>),
    /// Routine messages folded: each message once, with its count. A message that was lost or
    /// dropped is drawn `-x`, never as a delivered `->>`.
    Loop {
        from: SimTime,
        to: SimTime,
        counts: BTreeMap<MsgKey, u32>,
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
    pub fn first_t(&self) -> SimTime {
        match self {
            Item::Arrow { t, .. } | Item::Note { t, .. } => *t,
            Item::Routine(msgs) => msgs.first().map_or(SimTime::ZERO, |m| m.t),
            Item::Loop { from, .. } | Item::Repeat { from, .. } => *from,
        }
    }

    pub fn last_t(&self) -> SimTime {
        match self {
            Item::Arrow { t, .. } | Item::Note { t, .. } => *t,
            Item::Routine(msgs) => msgs.last().map_or(SimTime::ZERO, |m| m.t),
            Item::Loop { to, .. } | Item::Repeat { to, .. } => *to,
        }
    }

    /// What makes two items "the same step": everything but times, durations and counts.
    pub fn key(&self) -> String {
        match self {
            Item::Arrow { from, to, style, label, .. } => format!("A{from}{style}{to}:{}", timeless(label)),
            Item::Note { over, label, .. } => format!("N{over}:{}", timeless(label)),
            Item::Loop { counts, .. } => {
                counts.keys().fold("R".to_string(), |k, (f, t, l, s)| format!("{k}|{f}{s}{t}:{}", timeless(l)))
            }
            // Expanded before repetitions are looked for; a repetition already summarises.
            Item::Routine(_) | Item::Repeat { .. } => format!("P{}", self.first_t().millis()),
        }
    }

    fn write(&self, out: &mut String, depth: usize) {
        let pad = "    ".repeat(depth);
        match self {
            Item::Arrow { from, to, style, t, label, .. } => {
                let _ = writeln!(out, "{pad}{}{style}{}: {t} {}", id(from), id(to), text(label));
            }
            Item::Note { over, t, label } => {
                let _ = writeln!(out, "{pad}Note over {}: {t} {}", id(over), text(label));
            }
            Item::Loop { from, to, counts } => {
                let _ = writeln!(out, "{pad}loop routine traffic {from} to {to}");
                for ((f, t, label, style), n) in counts {
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
            Item::Routine(_) => unreachable!("routine traffic is expanded before it is written"),
        }
    }
}

#[derive(Default)]
pub struct Diagram {
    participants: Vec<String>,
    items: Vec<Item>,
    keys: Keys,
    /// Routine messages since the last interesting item.
    pending: Vec<Msg>,
    /// Faults and checks: what a diagram too long for Mermaid is drawn around.
    key_instants: Vec<SimTime>,
}

impl Diagram {
    /// Items drawn so far (pending routine traffic not yet counted).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    fn touch(&mut self, actor: &str) {
        if !self.participants.iter().any(|p| p == actor) {
            self.participants.push(actor.to_string());
        }
    }

    pub fn arrow(&mut self, from: &str, to: &str, style: &'static str, t: SimTime, label: &str) {
        self.push_arrow(from, to, style, t, label, false);
    }

    /// A message drawn as it is sent: [`Diagram::lost`] can still turn it into a lost one.
    pub fn sent(&mut self, from: &str, to: &str, t: SimTime, label: &str) {
        self.push_arrow(from, to, "->>", t, label, true);
    }

    fn push_arrow(&mut self, from: &str, to: &str, style: &'static str, t: SimTime, label: &str, in_flight: bool) {
        self.flush();
        self.touch(from);
        self.touch(to);
        self.items.push(Item::Arrow { from: from.into(), to: to.into(), style, t, label: label.into(), in_flight });
    }

    pub fn note(&mut self, over: &str, t: SimTime, label: &str) {
        self.flush();
        self.touch(over);
        self.items.push(Item::Note { over: over.into(), t, label: label.into() });
    }

    /// A fault or a check: a moment the diagram must show even when it cannot show everything.
    pub fn key_instant(&mut self, t: SimTime) {
        self.key_instants.push(t);
    }

    pub fn routine(&mut self, from: &str, to: &str, t: SimTime, label: &str) {
        self.fold(from, to, t, label, "->>", false);
    }

    /// Routine traffic drawn as it is sent (see [`Diagram::sent`]).
    pub fn routine_sent(&mut self, from: &str, to: &str, t: SimTime, label: &str) {
        self.fold(from, to, t, label, "->>", true);
    }

    /// A routine message that did not arrive (lost, dropped, refused): folded like the traffic
    /// it belongs to, but drawn as lost.
    pub fn routine_lost(&mut self, from: &str, to: &str, t: SimTime, label: &str) {
        self.fold(from, to, t, label, "-x", false);
    }

    fn fold(&mut self, from: &str, to: &str, t: SimTime, label: &str, style: &'static str, in_flight: bool) {
        self.touch(from);
        self.touch(to);
        let key = self.keys.id((from.to_string(), to.to_string(), label.to_string(), style));
        self.pending.push(Msg { t, key, cited: false, in_flight });
    }

    /// The network lost or dropped a `kind` message (`REGISTER_BROKER`) from `from` to `to`: if
    /// it was drawn as it was sent, that arrow becomes the lost one, labelled with `why`;
    /// otherwise the loss is drawn as a routine lost message.
    pub fn lost(&mut self, from: &str, to: &str, kind: &str, t: SimTime, why: &str) {
        // A lost SYN holds back whatever was waiting for the connection, whatever its kind.
        let sent = |f: &str, d: &str, label: &str, style: &str| {
            f == from && d == to && style == "->>" && (kind == "SYN" || label.starts_with(kind))
        };
        let sent_key = |(f, d, label, style): &MsgKey| sent(f, d, label, style);
        let recent = |at: SimTime| at <= t && t.since(at) <= IN_FLIGHT;
        let keys = &mut self.keys;
        let convert = |m: &mut Msg, keys: &mut Keys| {
            let (f, d, label, _) = keys.get(m.key).clone();
            m.key = keys.id((f, d, format!("{label}: {why}"), "-x"));
            m.in_flight = false;
        };
        let in_flight = |m: &Msg, keys: &Keys| m.in_flight && recent(m.t) && sent_key(keys.get(m.key));
        if let Some(m) = self.pending.iter_mut().rev().find(|m| in_flight(m, keys)) {
            return convert(m, keys);
        }
        // Items are in time order: only the last second of them can hold it.
        for item in self.items.iter_mut().rev().take_while(|i| recent(i.last_t())) {
            match item {
                Item::Arrow { from: f, to: d, style, label, in_flight: flight @ true, t: at }
                    if recent(*at) && sent(f, d, label, style) =>
                {
                    *style = "-x";
                    *label = format!("{label}: {why}");
                    *flight = false;
                    return;
                }
                Item::Routine(msgs) => {
                    if let Some(m) = msgs.iter_mut().rev().find(|m| in_flight(m, keys)) {
                        return convert(m, keys);
                    }
                }
                _ => {}
            }
        }
        self.routine_lost(from, to, t, &format!("{kind} {why}"));
    }

    /// A later line counts from the last message `from` (a process) delivered to `to` whose label
    /// holds `label`, at or before `by`: that message keeps its own arrow.
    pub fn cite(&mut self, from: &str, to: &str, label: &str, by: SimTime) {
        let keys = &self.keys;
        let wanted = |m: &Msg| {
            let (f, d, l, style) = keys.get(m.key);
            m.t <= by && process(f) == from && d == to && *style == "->>" && l.contains(label)
        };
        if let Some(m) = self.pending.iter_mut().rev().find(|m| wanted(m)) {
            m.cited = true;
            return;
        }
        for item in self.items.iter_mut().rev() {
            match item {
                Item::Arrow { from: f, to: d, style: "->>", t, label: l, .. }
                    if *t <= by && process(f) == from && d == to && l.contains(label) =>
                {
                    return;
                }
                Item::Routine(msgs) => {
                    if let Some(m) = msgs.iter_mut().rev().find(|m| wanted(m)) {
                        m.cited = true;
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// A fault on `targets` is about to be drawn: the last message of each kind that crossed it
    /// since the last interesting item keeps its own arrow. One target (a killed process): what
    /// it last sent to others. Several (the sides of a partition, a link): what each last sent
    /// to another.
    pub fn fault(&mut self, targets: &[String], t: SimTime) {
        self.key_instant(t);
        let crosses = |(f, d, _, style): &MsgKey| {
            let (f, d) = (process(f), process(d));
            *style == "->>"
                && f != d
                && targets.iter().any(|x| x == f)
                && (targets.len() == 1 || targets.iter().any(|x| x == d))
        };
        let mut seen = std::collections::BTreeSet::new();
        for m in self.pending.iter_mut().rev() {
            if crosses(self.keys.get(m.key)) && seen.insert(m.key) {
                m.cited = true;
            }
        }
    }

    /// Closes the pending routine traffic.
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.items.push(Item::Routine(std::mem::take(&mut self.pending)));
        }
    }

    /// Every instant the diagram must show (faults and checks), in order.
    pub fn key_instants(&self) -> &[SimTime] {
        &self.key_instants
    }

    /// Writes the diagram; `rank` orders the participants. With `spans`, only what falls inside
    /// them is drawn, and each gap between them is said.
    pub fn render(&mut self, rank: impl Fn(&str) -> (usize, bool), spans: Option<&[(SimTime, SimTime)]>) -> String {
        self.flush();
        let inside = |t: SimTime| spans.is_none_or(|s| s.iter().any(|&(a, b)| a <= t && t <= b));
        let mut expanded = Vec::new();
        let mut last_span: Option<usize> = None;
        for item in &self.items {
            // A gap between two spans is said where the next span starts.
            if let Some(spans) = spans {
                let span = spans.iter().position(|&(a, b)| a <= item.last_t() && item.first_t() <= b);
                if let (Some(s), Some(prev)) = (span, last_span) {
                    if s != prev {
                        let (gap_from, gap_to) = (spans[prev].1, spans[s].0);
                        let what = format!("{gap_from} to {gap_to} not drawn (--diagram-window FROM..TO draws it)");
                        expanded.push(Item::Note { over: ALL.into(), t: gap_to, label: what });
                    }
                }
                if span.is_some() {
                    last_span = span;
                }
            }
            match item {
                Item::Routine(msgs) => {
                    let kept: Vec<Msg> = msgs.iter().filter(|m| inside(m.t)).copied().collect();
                    expand(&kept, &self.keys, &mut expanded);
                }
                other if inside(other.first_t()) => expanded.push(other.clone()),
                _ => {}
            }
        }
        let items = fold_repeats(expanded);
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
