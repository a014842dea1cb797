//! The observer: records trace events and lets the expectation checker look after each one.

use crate::nacos::notes::NacosNote;
use crate::rocketmq::tap::{Input, InputTap};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::digest::BeatFields;
use crate::sim::expect::checker::Checker;
use crate::sim::ids::ProcState;
use crate::sim::invariants::monitor::Monitor;
use crate::sim::invariants::{Arrival, AttemptSeen, Violation};
use crate::sim::name::Name;
use crate::sim::narrate::Narrator;
use crate::sim::notes::{CheckNote, What};
use crate::sim::trace::{Trace, TraceEvent};
use crate::sim::world::World;
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Clone)]
pub struct Obs {
    pub trace: Rc<RefCell<Trace>>,
    pub checker: Rc<RefCell<Checker>>,
    pub world: Rc<World>,
    /// Present when the scenario enables invariants.
    pub monitor: Option<Rc<RefCell<Monitor>>>,
    /// Present in explain mode.
    pub narrator: Option<Rc<RefCell<Box<dyn Narrator>>>>,
    /// Told the virtual time at each new instant (the CLI's progress line on long runs).
    pub progress: Option<Rc<dyn Fn(SimTime)>>,
    /// The scenario's last instant: nothing is written into the trace after it.
    pub end: SimTime,
    /// Present in conformance runs: every name server's inputs, for replay on a real one.
    pub tap: Option<Rc<RefCell<Box<dyn InputTap>>>>,
    check_actor: Name,
}

impl Obs {
    pub fn new(trace: Trace, checker: Checker, world: World) -> Self {
        Obs {
            trace: Rc::new(RefCell::new(trace)),
            checker: Rc::new(RefCell::new(checker)),
            world: Rc::new(world),
            monitor: None,
            narrator: None,
            progress: None,
            end: SimTime(u64::MAX),
            tap: None,
            check_actor: Name::new("check"),
        }
    }

    pub fn with_narrator(mut self, narrator: Box<dyn Narrator>) -> Self {
        self.narrator = Some(Rc::new(RefCell::new(narrator)));
        self
    }

    pub fn with_monitor(mut self, monitor: Monitor) -> Self {
        self.monitor = Some(Rc::new(RefCell::new(monitor)));
        self
    }

    /// Records an event, then re-evaluates the expectations whose subject it may have changed.
    ///
    /// Callers must not hold a borrow of any core the world lends out: the checker reads them.
    pub fn record(&self, t: SimTime, actor: Name, what: What) {
        self.record_event(TraceEvent { t, actor, what });
    }

    /// `record`, for a caller that builds the event itself: an actor's note is then written
    /// once, into the event, and read where it lies. Built here from a note passed in, it was
    /// copied twice more (into `What`, then into the event), each copy read back at once in
    /// other widths than it was written: two stalls on the store buffer per event, 4% of the
    /// Nacos bench's time.
    pub fn record_event(&self, event: TraceEvent) {
        // Nearly every event of a long run goes to the trace alone. Through the whole of
        // `record_watched`, with its empty vectors made, walked and dropped, an answered beat
        // spent about 120 instructions here besides the trace's own; going round it saves 3.4%
        // of the Nacos bench's instructions.
        if !self.trace_alone() {
            return self.record_watched(event);
        }
        self.trace.borrow_mut().record(&event);
        if owns_nothing(&event.what) {
            std::mem::forget(event);
        }
    }

    /// `record` of a Nacos 1.x beat's answer, the one event nearly every beat makes. When the
    /// trace alone listens and only digests, the beat is encoded from its fields, with no event
    /// built at all (see `Trace::record_beat`).
    pub fn record_beat(&self, t: SimTime, actor: Name, beat: BeatFields) {
        if self.trace_alone() {
            let mut trace = self.trace.borrow_mut();
            if trace.digest_only() {
                return trace.record_beat(t, actor, beat);
            }
        }
        let BeatFields { instance, server, light, code, next } = beat;
        let what = What::Nacos(NacosNote::Beat { instance, server, light, code, next });
        self.record_event(TraceEvent { t, actor, what });
    }

    /// Whether the next event goes to the trace alone: no invariant monitor, no narrator, and
    /// no expectation listening (see `Checker::listening`).
    fn trace_alone(&self) -> bool {
        self.monitor.is_none() && self.narrator.is_none() && !self.checker.borrow().listening()
    }

    /// `record_event` for an event someone besides the trace may want to see.
    #[inline(never)]
    fn record_watched(&self, event: TraceEvent) {
        let t = event.t;
        let owns_nothing = owns_nothing(&event.what);
        let violations = match &self.monitor {
            Some(m) => m.borrow_mut().on_event(&event, &self.world),
            None => Vec::new(),
        };
        if let Some(x) = &self.narrator {
            x.borrow_mut().on_event(&event, &self.world);
        }
        // By reference: an event is 112 bytes, and only runs that keep events need a copy.
        self.trace.borrow_mut().record(&event);
        self.checker.borrow_mut().on_event(&event);
        let notes = self.checker.borrow_mut().after_event(t, &self.world);
        // Nearly every event decides nothing: a length check here, where the call, with an
        // empty vector to walk and drop, was part of 1.7% of the Nacos bench (with the one in
        // `record_violations`).
        if !notes.is_empty() {
            self.record_verdicts(notes.into_iter().map(|n| (t, n)));
        }
        self.record_violations(t, violations);
        if owns_nothing {
            std::mem::forget(event);
        }
    }

    /// Called by the network driver when virtual time reaches `now`, before anything at `now`
    /// happens: every instant before `now` is complete.
    pub fn before_instant(&self, now: SimTime) {
        if let Some(progress) = &self.progress {
            progress(now);
        }
        // Nearly every instant of a run: no expectation decides now and no monitor runs. Asked
        // first, that answer skips the checker's call and the borrow of the trace for an empty
        // list of verdicts (about 30 instructions an instant, half a million instants in the
        // RocketMQ bench's hour).
        if self.monitor.is_none() && self.checker.borrow().quiet(now) {
            return;
        }
        let notes = self.checker.borrow_mut().before_instant(now, &self.world);
        self.record_verdicts(notes);
        if let Some(m) = &self.monitor {
            let violations = m.borrow_mut().before_instant(now, &self.world);
            // The driver's last wake-up is 1 ms past the end, to see the end's final state;
            // what it finds is written at the end, before "scenario ends", so the timeline
            // never steps back. (The violation keeps the time its invariant gave it.)
            self.record_violations(now.min(self.end), violations);
        }
    }

    /// The run is over: checks that only make sense at the end (convergence).
    pub fn finish(&self, end: SimTime) {
        if let Some(m) = &self.monitor {
            let violations = m.borrow_mut().finish(end, &self.world);
            self.record_violations(end, violations);
        }
    }

    /// Whether anyone listens to arrivals and process changes (they cost a name lookup).
    pub fn watches_network(&self) -> bool {
        self.monitor.is_some() || self.tap.is_some()
    }

    /// A name server's input, for the tap if there is one (see [`InputTap`]).
    pub fn tap(&self, now: SimTime, namesrv: &str, input: impl FnOnce() -> Input) {
        if let Some(tap) = &self.tap {
            tap.borrow_mut().input(now, namesrv, input());
        }
    }

    /// A registration or heartbeat from `from` was delivered to the (naming) server `to`.
    pub fn arrived(&self, now: SimTime, from: &str, to: &str, arrival: Arrival) {
        if let Some(m) = &self.monitor {
            m.borrow_mut().arrived(now, from, to, arrival);
        }
    }

    /// A producer's send began (the invariants measure sends from the actor's instants).
    pub fn send_started(&self, now: SimTime, producer: &str, id: u64) {
        if let Some(m) = &self.monitor {
            m.borrow_mut().send_started(now, producer, id, &self.world);
        }
    }

    /// An attempt of a producer's send went on the wire.
    pub fn send_attempt(&self, now: SimTime, attempt: &AttemptSeen<'_>) {
        if let Some(m) = &self.monitor {
            let violation = m.borrow_mut().send_attempt(now, attempt, &self.world);
            self.record_violations(now, violation.into_iter().collect());
        }
    }

    /// A process started, stopped, hung or resumed.
    pub fn process(&self, now: SimTime, name: &str, state: ProcState) {
        if let Some(m) = &self.monitor {
            m.borrow_mut().process(now, name, state);
        }
        self.tap(now, name, || Input::Process(state));
    }

    /// Nearly every event and instant finds none: the check is inlined where they are
    /// recorded, and only writing them is a call.
    #[inline]
    fn record_violations(&self, t: SimTime, violations: Vec<Violation>) {
        if !violations.is_empty() {
            self.write_violations(t, violations);
        }
    }

    #[inline(never)]
    fn write_violations(&self, t: SimTime, violations: Vec<Violation>) {
        let mut trace = self.trace.borrow_mut();
        for v in violations {
            let note = CheckNote::Violated { invariant: v.invariant.key(), at: v.at, detail: v.detail };
            trace.record(&TraceEvent { t, actor: self.check_actor, what: What::Check(note) });
        }
    }

    fn record_verdicts(&self, notes: impl IntoIterator<Item = (SimTime, CheckNote)>) {
        let mut trace = self.trace.borrow_mut();
        for (t, note) in notes {
            trace.record(&TraceEvent { t, actor: self.check_actor, what: What::Check(note) });
        }
    }
}

/// Whether an event's note holds nothing that needs dropping, so that recording it can skip the
/// drop. An answered beat is nearly every event of a big Nacos run, and dropping one was a walk
/// of `What`'s layout to find nothing to free: 41 instructions an event (skipping it saves 0.9%
/// of the Nacos bench, net of this check).
/// The pattern names every field of the note and copies each, so a field that needed dropping
/// would not compile here.
fn owns_nothing(what: &What) -> bool {
    match what {
        What::Nacos(NacosNote::Beat { instance, server, light, code, next }) => {
            let _: (Name, Name, bool, i32, Option<SimDuration>) = (*instance, *server, *light, *code, *next);
            true
        }
        _ => false,
    }
}
