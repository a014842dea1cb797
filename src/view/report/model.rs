//! What the HTML report draws, derived from the trace: rows (one per actor, plus table rows for
//! each registry and reader), marks, bars and fault bands. The RocketMQ and Nacos rows are
//! filled in by `rocketmq.rs` and `nacos.rs`; this file holds the builder and what both share:
//! faults, processes that lose their memory, expectations.

use super::moments::MomentText;
use super::producer::{Chart, SendCharts};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::{Verdict, When};
use crate::sim::notes::{CheckNote, FaultNote, NetNote, What};
use crate::sim::runner::RunReport;
use crate::sim::scenario::{Action, Scenario};
use crate::sim::trace::{TraceEvent as Event, Watcher};
use crate::view::cast::Cast;
use crate::view::{TooLong, Window};
use std::collections::BTreeMap;

/// One horizontal row of the chart.
pub struct Row {
    pub label: String,
    /// `actor`; `live` (a broker's entry at a name server) or `instance` (an instance at a naming
    /// server); `route` (a group in a route) or `view` (an instance in a subscriber's list); `check`.
    pub kind: &'static str,
    /// Process the row belongs to, for grouping and fault bands.
    pub process: String,
}

/// A point event on a row.
pub struct Mark {
    pub row: usize,
    pub t: SimTime,
    /// CSS class: `register`, `heartbeat`, `scan`, `expire`, `batch`, `poll`, `drop`, `close`, ...
    pub class: &'static str,
    pub detail: String,
}

/// A span on a row.
pub struct Bar {
    pub row: usize,
    pub from: SimTime,
    pub to: SimTime,
    pub class: &'static str,
    pub detail: String,
}

/// A fault drawn across the rows of the processes it touches.
pub struct Band {
    pub processes: Vec<String>,
    pub from: SimTime,
    pub to: SimTime,
    pub class: &'static str,
    pub detail: String,
}

pub struct Model {
    pub title: String,
    pub seed: u64,
    pub digest: String,
    /// The part of the run drawn: the whole run unless `--window` chose less.
    pub window: Window,
    /// The run's own end.
    pub end: SimTime,
    pub rows: Vec<Row>,
    pub marks: Vec<Mark>,
    pub bars: Vec<Bar>,
    pub bands: Vec<Band>,
    /// Per producer, its sends and their latency per time bucket.
    pub charts: Vec<Chart>,
    /// The scenario's timeline inside the window (faults and operator actions): its time and
    /// name, written on the chart.
    pub faults: Vec<(SimTime, String)>,
    /// The key moments `explain` tells, inside the window (a run made without the explainer
    /// has none), and how many more were left off.
    pub moments: (Vec<MomentText>, usize),
}

/// The most marks, bars and bands one report draws. A browser stays usable around here, and the
/// model stays a few tens of megabytes: past it the report is refused with a pointer to
/// `--window` rather than grown with every routine beat of a long run.
pub const MAX_DRAWN: usize = 100_000;

pub(super) struct Builder {
    pub m: Model,
    /// Marks, bars and bands drawn so far.
    drawn: usize,
    /// When the report passed [`MAX_DRAWN`].
    pub overflow: Option<SimTime>,
    index: BTreeMap<(String, &'static str), usize>,
    /// Open spans: (row) → (start, class, detail).
    open: BTreeMap<usize, (SimTime, &'static str, String)>,
    /// Last registration per (name server, broker addr), for the "alive until" window.
    pub last_reg: BTreeMap<(String, String), (SimTime, SimDuration)>,
    /// Every producer's sends, bucketed for its charts.
    pub sends: SendCharts,
}

impl Builder {
    pub fn row(&mut self, label: &str, kind: &'static str, process: &str) -> usize {
        if let Some(&i) = self.index.get(&(label.to_string(), kind)) {
            return i;
        }
        self.m.rows.push(Row { label: label.to_string(), kind, process: process.to_string() });
        self.index.insert((label.to_string(), kind), self.m.rows.len() - 1);
        self.m.rows.len() - 1
    }

    /// The rows of `kind` whose label starts with `prefix`, in label order.
    pub fn rows_with_prefix(&self, kind: &str, prefix: &str) -> Vec<usize> {
        self.index.iter().filter(|((l, k), _)| *k == kind && l.starts_with(prefix)).map(|(_, i)| *i).collect()
    }

    /// A mark on the actor's own lane.
    pub fn mark(&mut self, actor: &str, t: SimTime, class: &'static str, detail: String) {
        let row = self.row(actor, "actor", process(actor));
        self.mark_row(row, t, class, detail);
    }

    pub fn mark_row(&mut self, row: usize, t: SimTime, class: &'static str, detail: String) {
        if self.m.window.contains(t) && self.room(t) {
            self.m.marks.push(Mark { row, t, class, detail });
        }
    }

    /// Whether one more item fits; the first one that does not records when the report overflowed.
    pub(super) fn room(&mut self, t: SimTime) -> bool {
        if self.drawn >= MAX_DRAWN {
            self.overflow.get_or_insert(t);
            return false;
        }
        self.drawn += 1;
        true
    }

    /// Opens a span on `row` unless one is open already.
    pub fn open_bar(&mut self, row: usize, t: SimTime, class: &'static str, detail: String) {
        self.open.entry(row).or_insert((t, class, detail));
    }

    /// The class of the span open on `row`, if any.
    pub fn open_class(&self, row: usize) -> Option<&'static str> {
        self.open.get(&row).map(|(_, c, _)| *c)
    }

    pub fn close_bar(&mut self, row: usize, t: SimTime) {
        if let Some((from, class, detail)) = self.open.remove(&row) {
            self.bar(row, from, t, class, detail);
        }
    }

    /// Switches `row` to a span of `class` at `t`, closing a span of another class.
    pub fn switch_bar(&mut self, row: usize, t: SimTime, class: &'static str, detail: String) {
        if self.open_class(row).is_some_and(|c| c != class) {
            self.close_bar(row, t);
        }
        self.open_bar(row, t, class, detail);
    }

    /// A span, cut to the window; one wholly outside it is not drawn. Its text keeps the real
    /// times, so a span begun before the window still says when it began.
    pub fn bar(&mut self, row: usize, from: SimTime, to: SimTime, class: &'static str, detail: String) {
        if let Some((from, to)) = self.m.window.clip(from, to) {
            if self.room(to) {
                self.m.bars.push(Bar { row, from, to, class, detail });
            }
        }
    }

    /// A process lost its memory (killed, host down, shut down): every table row it held ends.
    fn forget(&mut self, process: &str, t: SimTime) {
        let rows: Vec<usize> = self
            .open
            .keys()
            .copied()
            .filter(|&r| self.m.rows[r].process == process && self.m.rows[r].kind != "actor")
            .collect();
        for row in rows {
            self.close_bar(row, t);
        }
        self.last_reg.retain(|(ns, _), _| ns != process);
    }

    /// Rows grouped by process in scenario order: the actor, its parts (scanner, batcher,
    /// health checker), then its table rows; expectation rows last. Within a group, parts and
    /// table rows go in label order (numbers by value: `orders-2` before `orders-10`), so every
    /// name server and naming server lists its brokers and instances alike, whoever spoke
    /// first; expectations keep the scenario's order.
    fn sort_rows(&mut self, order: &[String]) {
        let rank = |r: &Row| {
            let p = order.iter().position(|o| *o == r.process).unwrap_or(order.len());
            let k = match r.kind {
                "actor" if !r.label.contains('/') => 0,
                "actor" => 1,
                "live" | "instance" => 2,
                "route" | "view" => 3,
                // Below the client's route rows, so a broker leaving the route sits just above
                // the sends it changes.
                "sends" => 4,
                "latency" => 5,
                _ => 6,
            };
            let by_label = if k < 6 { super::lanes::natural(&r.label) } else { Vec::new() };
            (p, k, by_label)
        };
        let mut idx: Vec<usize> = (0..self.m.rows.len()).collect();
        idx.sort_by_cached_key(|&i| (rank(&self.m.rows[i]), i));
        let mut new_of = vec![0; idx.len()];
        for (new, &old) in idx.iter().enumerate() {
            new_of[old] = new;
        }
        let mut rows: Vec<Option<Row>> = std::mem::take(&mut self.m.rows).into_iter().map(Some).collect();
        self.m.rows = idx.iter().map(|&i| rows[i].take().expect("each row once")).collect();
        self.m.marks.iter_mut().for_each(|m| m.row = new_of[m.row]);
        self.m.bars.iter_mut().for_each(|b| b.row = new_of[b.row]);
        for c in &mut self.m.charts {
            (c.sends_row, c.latency_row) = (new_of[c.sends_row], new_of[c.latency_row]);
        }
    }
}

pub(super) use crate::sim::trace::process_of as process;

/// The report's model, built as the run goes: it holds what it draws, never the events.
pub struct ReportView {
    scenario: Scenario,
    cast: Cast,
    b: Builder,
}

impl ReportView {
    pub fn new(scenario: &Scenario, window: Window) -> Self {
        let m = Model {
            title: scenario.name.clone(),
            seed: 0,
            digest: String::new(),
            window,
            end: SimTime::ZERO + scenario.duration,
            rows: Vec::new(),
            marks: Vec::new(),
            bars: Vec::new(),
            bands: Vec::new(),
            charts: Vec::new(),
            faults: Vec::new(),
            moments: (Vec::new(), 0),
        };
        let mut b = Builder {
            m,
            drawn: 0,
            overflow: None,
            index: BTreeMap::new(),
            open: BTreeMap::new(),
            last_reg: BTreeMap::new(),
            sends: SendCharts::new(window, SimTime::ZERO + scenario.duration),
        };
        let cast = Cast::of(scenario);
        // Actor rows in the scenario's order first, so lanes do not depend on who spoke first.
        for p in &cast.order {
            b.row(p, "actor", p);
        }
        ReportView { scenario: scenario.clone(), cast, b }
    }

    /// The finished model, or why there is none: more to draw than [`MAX_DRAWN`].
    pub fn finish(self, report: &RunReport) -> Result<Model, TooLong> {
        let ReportView { scenario, cast, mut b } = self;
        (b.m.seed, b.m.digest, b.m.end) = (report.seed, report.digest.clone(), report.end);
        let end = b.m.end;
        for row in b.open.keys().copied().collect::<Vec<_>>() {
            b.close_bar(row, end);
        }
        faults(&mut b, &scenario);
        let window = b.m.window;
        b.m.faults =
            scenario.timeline.iter().filter(|e| window.contains(e.at)).map(|e| (e.at, e.name.clone())).collect();
        b.m.moments = super::moments::within(window, &report.moments);
        verdicts(&mut b, report);
        super::producer::draw(&mut b);
        if let Some(at) = b.overflow {
            return Err(TooLong { what: "report", limit: MAX_DRAWN, items: "marks and spans", at });
        }
        b.sort_rows(&cast.order);
        Ok(b.m)
    }
}

impl Watcher for ReportView {
    fn event(&mut self, e: &Event) {
        // Past the limit nothing more will be drawn: the rest of the run costs nothing here.
        if self.b.overflow.is_none() {
            event(&mut self.b, &self.scenario, &self.cast, e);
        }
    }
}

fn event(b: &mut Builder, s: &Scenario, cast: &Cast, e: &Event) {
    let (a, t) = (&*e.actor, e.t);
    match &e.what {
        What::Rmq(n) => super::rocketmq::rows(b, s, a, t, n, &e.what.to_string()),
        What::Nacos(n) => super::nacos::rows(b, cast, a, t, n, &e.what.to_string()),
        What::Net(NetNote::Dropped { from, .. }) => b.mark(from, t, "drop", e.what.to_string()),
        What::Net(NetNote::Closed { by, .. }) => b.mark(by, t, "close", e.what.to_string()),
        What::Net(NetNote::Reset { to, .. }) => b.mark(to, t, "drop", e.what.to_string()),
        What::Fault(FaultNote::Applied { name, targets, .. }) => {
            for target in targets {
                b.mark(target, t, "fault", e.what.to_string());
            }
            let applied = s.timeline.iter().find(|x| x.at == t && x.name == *name).map(|x| &x.action);
            if let Some(Action::Crash(p) | Action::HostDown(p) | Action::Shutdown(p)) = applied {
                b.forget(p, t);
            }
        }
        What::Check(CheckNote::Violated { .. }) => {
            let row = b.row("invariants", "check", "check");
            b.mark_row(row, t, "fail", e.what.to_string());
        }
        _ => {}
    }
}

/// Faults with a duration (hang → resume, partition → heal, down → restart) become bands.
fn faults(b: &mut Builder, s: &Scenario) {
    let end = b.m.end;
    for (i, e) in s.timeline.iter().enumerate() {
        let later = &s.timeline[i + 1..];
        let until = |pred: &dyn Fn(&Action) -> bool| later.iter().find(|x| pred(&x.action)).map_or(end, |x| x.at);
        let (to, class) = match &e.action {
            Action::Hang(p) => {
                (until(&|a| matches!(a, Action::Resume(q) | Action::Crash(q) | Action::HostDown(q) if q == p)), "hung")
            }
            Action::Crash(p) | Action::HostDown(p) | Action::Shutdown(p) => {
                (until(&|a| matches!(a, Action::Restart(q) if q == p)), "down")
            }
            Action::Partition(_) | Action::Block { .. } => {
                let name = e.name.clone();
                (until(&|a| matches!(a, Action::Heal(None)) || matches!(a, Action::Heal(Some(n)) if *n == name)), "cut")
            }
            Action::Loss { rate, .. } if *rate > 0.0 => {
                (until(&|a| matches!(a, Action::Loss { .. } | Action::Heal(None))), "lossy")
            }
            _ => continue,
        };
        let detail = format!("{} from {} to {to}", e.name, e.at);
        if let Some((from, to)) = b.m.window.clip(e.at, to) {
            if b.room(from) {
                b.m.bands.push(Band { processes: e.action.targets(), from, to, class, detail });
            }
        }
    }
}

fn verdicts(b: &mut Builder, r: &RunReport) {
    for (exp, v) in &r.verdicts {
        let mark = if v.held() { "✔" } else { "✘" };
        let row = b.row(&format!("{mark} {}", exp.name), "check", "check");
        let (pass, class) = if v.held() { ("PASS", "pass") } else { ("FAIL", "fail") };
        if let When::At(t) = exp.when {
            let how = match v {
                Verdict::Failed { mismatch, .. } => format!(": expected {}; got {}", mismatch.expected, mismatch.got),
                _ => String::new(),
            };
            b.mark_row(row, t, class, format!("{pass} {}{how}", exp.name));
            continue;
        }
        let (from, to) = match (exp.when, v) {
            (When::At(t), _) => (t, t),
            (When::By { from, .. }, Verdict::Held { converged: Some(c) }) => (from, from + *c),
            (When::By { from, deadline }, _) => (from, deadline),
            (When::During { from, until }, Verdict::Held { .. }) => (from, until),
            (When::During { from, .. }, Verdict::Failed { at, .. }) => (from, *at),
        };
        let how = match v {
            Verdict::Held { converged: Some(c) } => format!(" — converged after {c}"),
            Verdict::Failed { at, mismatch } => {
                format!(" at {at}: expected {}; got {}", mismatch.expected, mismatch.got)
            }
            _ => String::new(),
        };
        let detail = format!("{pass} {}{how}", exp.name);
        // A verdict reached in milliseconds is a bar too thin to see: the mark at its end shows it.
        b.mark_row(row, to, class, detail.clone());
        b.bar(row, from, to.max(from + SimDuration(1)), class, detail);
    }
}
