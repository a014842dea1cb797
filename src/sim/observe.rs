//! The observer: records trace events and lets the expectation checker look after each one.

use crate::sim::clock::SimTime;
use crate::sim::expect::checker::Checker;
use crate::sim::notes::{CheckNote, What};
use crate::sim::trace::{Trace, TraceEvent};
use crate::sim::world::World;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Clone)]
pub struct Obs {
    pub trace: Rc<RefCell<Trace>>,
    pub checker: Rc<RefCell<Checker>>,
    pub world: Rc<World>,
    check_actor: Arc<str>,
}

impl Obs {
    pub fn new(trace: Trace, checker: Checker, world: World) -> Self {
        Obs {
            trace: Rc::new(RefCell::new(trace)),
            checker: Rc::new(RefCell::new(checker)),
            world: Rc::new(world),
            check_actor: Arc::from("check"),
        }
    }

    /// Records an event, then re-evaluates the expectations whose subject it may have changed.
    ///
    /// Callers must not hold a borrow of any core the world lends out: the checker reads them.
    pub fn record(&self, t: SimTime, actor: &Arc<str>, what: What) {
        self.trace.borrow_mut().record(TraceEvent { t, actor: actor.clone(), what });
        let notes = self.checker.borrow_mut().after_event(t, &self.world);
        self.record_verdicts(t, notes);
    }

    /// Called by the network driver when virtual time reaches `now`, before anything at `now`
    /// happens: every instant before `now` is complete.
    pub fn before_instant(&self, now: SimTime) {
        let notes = self.checker.borrow_mut().before_instant(now, &self.world);
        self.record_verdicts(now, notes);
    }

    fn record_verdicts(&self, t: SimTime, notes: Vec<CheckNote>) {
        let mut trace = self.trace.borrow_mut();
        for note in notes {
            trace.record(TraceEvent { t, actor: self.check_actor.clone(), what: What::Check(note) });
        }
    }
}
