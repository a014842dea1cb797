//! An alarm that follows a moving deadline: a timer an owner points at its earliest deadline
//! as that changes, without cancelling and setting a timer each time.
//!
//! A producer sends every few milliseconds and each send is answered in a few. Its remoting
//! client needs to hear of a request that outlives its timeout, so it kept one timer at its
//! earliest deadline, set at every send and cancelled at every answer: two agenda operations
//! per send, one of them a search of its instant's bucket, 3.6 million of each an hour in the
//! bench's producers case. An [`Alarm`] stays in the agenda instead. The owner only says when
//! it is next due ([`Net::set_alarm`]); when the entry comes up and nothing is due yet, the
//! driver moves it to the owner's next deadline, or drops it if there is none, without a flush
//! or a message. Only an entry that finds its deadline come rings, and then exactly as a timer
//! set for that instant would have: through the same admission (a stopped process's alarm
//! waits for its resume, a dead incarnation's is dropped) and after the owner's packets.
//!
//! A silent move leaves no trace, so outputs are those of a timer set and cancelled per
//! request, except where a timeout ties, to the millisecond, with another entry of the same
//! instant: the moved entry was queued at its earlier instant, not at the request's start.

use super::admit::TimerFate;
use super::kernel::{Due, Kernel};
use super::Net;
use crate::sim::clock::SimTime;
use crate::sim::ids::NodeId;
use std::cell::Cell;
use std::rc::Rc;

pub struct Alarm {
    /// When the owner next needs it to ring: its earliest deadline, `None` with none pending.
    due: Cell<Option<SimTime>>,
    /// Its live entry in the agenda: the instant and the entry's id. An entry with another id
    /// is a leftover of an alarm moved earlier, and is dropped when it comes up.
    entry: Cell<Option<(SimTime, u64)>>,
    ring: Box<dyn Fn()>,
}

impl Alarm {
    /// An alarm that calls `ring` when a deadline has come.
    pub fn new(ring: impl Fn() + 'static) -> Rc<Alarm> {
        Rc::new(Alarm { due: Cell::new(None), entry: Cell::new(None), ring: Box::new(ring) })
    }

    pub(super) fn ring(&self) {
        (self.ring)()
    }
}

impl Net {
    /// `alarm` of `owner` rings at `due` (or after it, when its process resumes), or never with
    /// `None`. An entry already in the agenda at or before `due` is left where it is.
    pub fn set_alarm(&self, owner: NodeId, alarm: &Rc<Alarm>, due: Option<SimTime>) {
        alarm.due.set(due);
        let Some(at) = due else { return };
        if alarm.entry.get().is_some_and(|(queued, _)| queued <= at) {
            return;
        }
        let mut k = self.0.borrow_mut();
        k.next_timer += 1;
        let id = k.next_timer;
        let epoch = k.core.proc(owner).epoch;
        alarm.entry.set(Some((at, id)));
        k.push(at, Due::Alarm { owner, epoch, id, alarm: alarm.clone() });
    }
}

impl Kernel {
    /// What the driver does with an alarm's entry at `now`: the alarm back if it rings now;
    /// otherwise it has moved, waits for its process, or is gone.
    pub(super) fn admit_alarm(
        &mut self,
        now: SimTime,
        owner: NodeId,
        epoch: u32,
        id: u64,
        alarm: Rc<Alarm>,
    ) -> Option<Rc<Alarm>> {
        if alarm.entry.get().is_none_or(|(_, live)| live != id) {
            return None;
        }
        let fate = self.timer_fate(owner, epoch);
        if fate == TimerFate::Gone {
            alarm.entry.set(None);
            return None;
        }
        match alarm.due.get() {
            None => {
                alarm.entry.set(None);
                None
            }
            Some(due) if due > now => {
                alarm.entry.set(Some((due, id)));
                self.push(due, Due::Alarm { owner, epoch, id, alarm });
                None
            }
            Some(_) if fate == TimerFate::Waits => {
                // Parked, it keeps its id: on resume it comes up again at once and rings.
                self.parked.entry(owner).or_default().push(Due::Alarm { owner, epoch, id, alarm });
                None
            }
            Some(_) => {
                alarm.entry.set(None);
                Some(alarm)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::network::IdleGate;
    use crate::sim::clock::SimDuration;
    use crate::sim::expect::checker::Checker;
    use crate::sim::network::{LinkParams, LinkRules};
    use crate::sim::observe::Obs;
    use crate::sim::trace::{Trace, TraceOptions};
    use crate::sim::world::World;
    use std::cell::RefCell;

    /// What an owner does at an instant: point its alarm at a deadline, or at none; or stop
    /// or resume its process.
    #[derive(Clone, Copy)]
    enum Step {
        Due(Option<u64>),
        Hang,
        Resume,
    }

    /// Runs `steps` (each at its instant, in order) for one process's alarm until 10 s, and
    /// returns the instants at which it rang.
    fn rings(steps: &[(u64, Step)]) -> Vec<u64> {
        let idle = IdleGate::default();
        let steps = steps.to_vec();
        idle.clone().block_on(async move {
            let obs =
                Obs::new(Trace::new(TraceOptions::default()), Checker::new(Vec::new()), World::new(Default::default()));
            let params = LinkParams { latency: SimDuration(1), jitter: SimDuration(0), loss: 0.0 };
            let net = Net::new(LinkRules::new(params), SimDuration::from_secs(3), 1, obs, idle);
            let node = net.add_node("producer");
            net.start_process(node, None);
            let rang = Rc::new(RefCell::new(Vec::new()));
            let alarm = {
                let (rang, net) = (rang.clone(), net.clone());
                Alarm::new(move || rang.borrow_mut().push(net.now().0))
            };
            for (at, step) in steps {
                let (n, alarm) = (net.clone(), alarm.clone());
                // A hung process's own timers wait, so its stop and resume come from outside,
                // as the director's do.
                let owner = if matches!(step, Step::Due(_)) { node } else { net.add_node("director") };
                net.start_process(owner, None);
                net.after(owner, SimDuration(at), move || match step {
                    Step::Due(due) => n.set_alarm(node, &alarm, due.map(SimTime)),
                    Step::Hang => n.hang(node),
                    Step::Resume => n.resume(node),
                });
            }
            net.start_driver(SimTime(10_000), u64::MAX, None).await;
            let out = rang.borrow().clone();
            out
        })
    }

    #[test]
    fn an_alarm_rings_at_its_deadline_and_only_then() {
        assert_eq!(rings(&[(0, Step::Due(Some(3_000)))]), vec![3_000]);
    }

    #[test]
    fn an_alarm_moved_later_before_its_deadline_rings_once_at_the_new_one() {
        // The request due at 3 s was answered at 10 ms; the next one is due at 3.01 s.
        assert_eq!(rings(&[(0, Step::Due(Some(3_000))), (10, Step::Due(Some(3_010)))]), vec![3_010]);
    }

    #[test]
    fn an_alarm_with_nothing_pending_never_rings() {
        assert_eq!(rings(&[(0, Step::Due(Some(3_000))), (10, Step::Due(None))]), Vec::<u64>::new());
    }

    #[test]
    fn an_alarm_moved_earlier_rings_at_the_earlier_deadline_and_its_old_entry_stays_quiet() {
        assert_eq!(rings(&[(0, Step::Due(Some(3_000))), (10, Step::Due(Some(1_000)))]), vec![1_000]);
    }

    #[test]
    fn a_stopped_process_hears_its_alarm_when_it_resumes() {
        let steps = [(0, Step::Due(Some(3_000))), (2_000, Step::Hang), (5_000, Step::Resume)];
        assert_eq!(rings(&steps), vec![5_000]);
        // Moved past the pause before it came due, it rings at its own deadline after all.
        let steps =
            [(0, Step::Due(Some(3_000))), (10, Step::Due(Some(6_000))), (2_000, Step::Hang), (5_000, Step::Resume)];
        assert_eq!(rings(&steps), vec![6_000]);
    }
}
