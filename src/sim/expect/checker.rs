//! Decides expectations as the run goes, from the observer's two hooks.
//!
//! `before_instant(now)` sees the state left by every instant before `now`: it decides `at`
//! claims, opens `by`/`during` windows and closes them when they end. `after_event(t)` re-checks
//! open windows whose subject changed (by revision, so an event elsewhere costs a comparison).
//!
//! Every frame reads the state *after* all the events of its boundary instants: an `at = T`
//! claim, the opening of `after = T` and of `from = T`, the end of `until = T` and of a
//! deadline. So a window opens only once its first instant is over, and the events of that
//! instant cannot meet an `after` or break a `from` half-way through it. "Just before the
//! events of T" is `T - 1ms`: virtual time moves in whole milliseconds.
//!
//! `before_instant` learns of an instant's end only when the next one begins, which may be much
//! later; each verdict it reaches is therefore paired with the instant it is *about* (the `at`,
//! the deadline, the window's edge), and the timeline prints it there, not at the next event.

use super::events_subject::Tally;
use super::subject::Revision;
use super::{Expectation, Mismatch, Subject, Verdict, When};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::notes::CheckNote;
use crate::sim::trace::TraceEvent;
use crate::sim::world::World;
use smallvec::smallvec;

struct Item {
    exp: Expectation,
    open: bool,
    last_revision: Option<Revision>,
    verdict: Option<Verdict>,
    /// What was measured when the verdict was reached (a `sends` subject's counts and
    /// latencies), for the verdict line.
    figures: Option<String>,
    /// An `events` subject's count so far in its window.
    tally: Tally,
}

pub struct Checker {
    items: Vec<Item>,
    /// Whether any expectation counts events: only then is each event serialised to match it.
    counts_events: bool,
    /// Whether the next event could matter to an expectation: some expectation counts events,
    /// or some window is open. Windows open only in `before_instant`, which sets this, so
    /// between two instants an event the checker does not listen to need not be shown to it;
    /// `after_event` works it out again when it decides a window.
    listening: bool,
    /// The first instant whose `before_instant` could decide or open something: before it,
    /// every undecided expectation waits for a time still ahead (its `at`, its window's edge).
    /// The driver asks at every instant, half a million times in an hour of a thousand brokers,
    /// and walking the expectations each time was about 2% of that bench.
    quiet_until: SimTime,
}

impl Checker {
    pub fn new(expectations: Vec<Expectation>) -> Self {
        let counts_events = expectations.iter().any(|e| matches!(e.subject, Subject::Events(_)));
        let items = expectations
            .into_iter()
            .map(|exp| Item {
                exp,
                open: false,
                last_revision: None,
                verdict: None,
                figures: None,
                tally: Tally::default(),
            })
            .collect();
        Checker { items, counts_events, listening: counts_events, quiet_until: SimTime::ZERO }
    }

    /// Whether `on_event` and `after_event` could do anything before the next instant.
    pub fn listening(&self) -> bool {
        self.listening
    }

    /// What `listening` should say now.
    fn wants_events(&self) -> bool {
        self.counts_events || self.items.iter().any(Item::watching)
    }

    /// Counts `e` for every `events` expectation whose window it falls in: up to the end of
    /// instant `T` for `at = T`; once a window has opened (after its first instant) otherwise.
    pub fn on_event(&mut self, e: &TraceEvent) {
        if !self.counts_events {
            return;
        }
        // Serialised once, and only when some window is counting.
        let mut json = None;
        for item in self.items.iter_mut().filter(|i| i.verdict.is_none()) {
            let Subject::Events(want) = &item.exp.subject else { continue };
            let counting = match item.exp.when {
                When::At(t) => e.t <= t,
                When::By { .. } | When::During { .. } => item.open,
            };
            if !counting {
                continue;
            }
            let Some(json) = json.get_or_insert_with(|| serde_json::to_value(&e.what).ok()) else { return };
            if want.matches(e, json) {
                item.tally.add(e.t);
            }
        }
    }

    /// Whether nothing can be decided at `now`: every undecided expectation waits for a later
    /// time (see `quiet_until`).
    #[inline]
    pub fn quiet(&self, now: SimTime) -> bool {
        now < self.quiet_until
    }

    /// Verdicts decided now that `now` has come, each with the instant it speaks of (always
    /// before `now`, and at or after the previous instant, so the trace stays in time order).
    pub fn before_instant(&mut self, now: SimTime, world: &World) -> Vec<(SimTime, CheckNote)> {
        if self.quiet(now) {
            return Vec::new();
        }
        let mut notes = Vec::new();
        for item in self.items.iter_mut().filter(|i| i.verdict.is_none()) {
            match item.exp.when {
                When::At(t) if t < now => {
                    let verdict = match item.eval(world) {
                        Ok(()) => Verdict::Held { converged: None },
                        Err(mismatch) => Verdict::Failed { at: t, mismatch },
                    };
                    notes.push((t, item.decide(world, verdict)));
                }
                When::By { from, deadline } => {
                    if !item.open && from < now {
                        item.open = true;
                        if item.holds(world) {
                            let held = Verdict::Held { converged: Some(SimDuration::ZERO) };
                            notes.push((from, item.decide(world, held)));
                            continue;
                        }
                    }
                    if item.open && deadline < now {
                        let mismatch = item.eval(world).expect_err("not held yet");
                        notes.push((deadline, item.decide(world, Verdict::Failed { at: deadline, mismatch })));
                    }
                }
                When::During { from, until } => {
                    if !item.open && from < now {
                        item.open = true;
                        // A count is judged over the whole window, when it closes.
                        if let (false, Err(mismatch)) = (item.counts(), item.eval(world)) {
                            notes.push((from, item.decide(world, Verdict::Failed { at: from, mismatch })));
                            continue;
                        }
                    }
                    if item.open && until < now {
                        let verdict = match item.eval(world) {
                            Ok(()) => Verdict::Held { converged: None },
                            Err(mismatch) => Verdict::Failed { at: until, mismatch },
                        };
                        notes.push((until, item.decide(world, verdict)));
                    }
                }
                When::At(_) => {}
            }
        }
        // In time order, as the trace is: an `at` listed first may speak of a later instant
        // than a window listed after it.
        notes.sort_by_key(|(t, _)| *t);
        self.listening = self.wants_events();
        self.quiet_until = self.items.iter().filter_map(Item::next_step).min().unwrap_or(SimTime(u64::MAX));
        notes
    }

    pub fn after_event(&mut self, t: SimTime, world: &World) -> Vec<CheckNote> {
        let mut notes = Vec::new();
        for item in self.items.iter_mut().filter(|i| i.watching()) {
            let revision = match item.counts() {
                true => smallvec![(item.tally.count, 0)],
                false => item.exp.subject.revision(world),
            };
            if item.last_revision.as_ref() == Some(&revision) {
                continue;
            }
            item.last_revision = Some(revision);
            match item.exp.when {
                When::By { from, .. } => {
                    if item.holds(world) {
                        notes.push(item.decide(world, Verdict::Held { converged: Some(t.since(from)) }));
                    }
                }
                When::During { .. } => {
                    // A count is judged when the window closes, unless it has already failed.
                    if let Subject::Events(w) = &item.exp.subject {
                        if !w.overshot(&item.tally) {
                            continue;
                        }
                    }
                    if let Err(mismatch) = item.eval(world) {
                        notes.push(item.decide(world, Verdict::Failed { at: t, mismatch }));
                    }
                }
                When::At(_) => {}
            }
        }
        if !notes.is_empty() {
            self.listening = self.wants_events();
        }
        notes
    }

    /// What each expectation measured when decided, in scenario order (see `Item::figures`).
    pub fn figures(&self) -> Vec<Option<String>> {
        self.items.iter().map(|i| i.figures.clone()).collect()
    }

    /// Every expectation with its verdict, in scenario order. Undecided ones (the run stopped
    /// early) count as failed at the last instant.
    pub fn verdicts(&self) -> Vec<(Expectation, Verdict)> {
        self.items
            .iter()
            .map(|i| {
                let v = i.verdict.clone().unwrap_or(Verdict::Failed {
                    at: SimTime::ZERO,
                    mismatch: super::Mismatch { expected: "a verdict".into(), got: "the run ended first".into() },
                });
                (i.exp.clone(), v)
            })
            .collect()
    }
}

impl Item {
    /// Whether its window is open and undecided: what `after_event` re-checks, and what makes
    /// the checker listen.
    fn watching(&self) -> bool {
        self.open && self.verdict.is_none()
    }

    /// The first instant at which `before_instant` has something to do for it, if undecided:
    /// the instant after its `at`, after its window's first instant, or after its end.
    fn next_step(&self) -> Option<SimTime> {
        if self.verdict.is_some() {
            return None;
        }
        let edge = match self.exp.when {
            When::At(t) => t,
            When::By { from, .. } | When::During { from, .. } if !self.open => from,
            When::By { deadline: end, .. } | When::During { until: end, .. } => end,
        };
        Some(SimTime(edge.0.saturating_add(1)))
    }

    /// Whether this is an `events` expectation, judged on its tally.
    fn counts(&self) -> bool {
        matches!(self.exp.subject, Subject::Events(_))
    }

    fn eval(&self, world: &World) -> Result<(), Mismatch> {
        match &self.exp.subject {
            Subject::Events(want) => want.judge(&self.tally),
            subject => subject.check(world),
        }
    }

    fn holds(&self, world: &World) -> bool {
        match &self.exp.subject {
            Subject::Events(want) => want.judge(&self.tally).is_ok(),
            subject => subject.holds(world),
        }
    }

    fn decide(&mut self, world: &World, verdict: Verdict) -> CheckNote {
        self.open = false;
        match &self.exp.subject {
            Subject::Sends(w) => self.figures = Some(w.figures(world)),
            Subject::Events(_) => self.figures = Some(self.tally.text()),
            _ => {}
        }
        let name = self.exp.name.clone();
        let note = match &verdict {
            Verdict::Held { converged } => CheckNote::Held { name, converged: *converged },
            Verdict::Failed { at, mismatch } => CheckNote::Failed {
                name,
                at: *at,
                detail: format!("expected {}; got {}", mismatch.expected, mismatch.got),
            },
        };
        self.verdict = Some(verdict);
        note
    }
}
