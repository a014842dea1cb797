//! How the driver learns that every actor has finished the work of an instant.
//!
//! A run's actors are tasks of the run's executor (`actors::runtime`). The run is idle when the
//! executor's queue runs dry and nothing woke the run's own future: every mailbox is empty and
//! every handler has returned, so nothing can happen at this instant any more unless the driver
//! delivers it. [`IdleGate::block_on`] runs the run's future on the executor and, at exactly
//! that moment, runs the pass the driver left at the gate ([`IdleGate::wait`]).
//!
//! The pass is not a task: the queue is empty at that moment, so a task woken for it would run
//! next anyway, and each instant would pay for its wake-up and poll. The executor runs it at
//! the head of its next round, before any task, so an actor it sends to is queued in the order
//! it sends. Only a poke, which must run the driver between actors still at work, queues the
//! pass as a task of its own.
//!
//! Three designs came before, all on tokio. The driver slept on tokio's paused clock, which
//! moves only when the runtime is idle: the same moment, but paid for at every instant with a
//! pass of tokio's timer wheel, wall-clock reads and re-arming the driver's timer. Then the
//! runtime's `on_thread_park` hook opened the gate: tokio calls it when its own queue is empty,
//! and around each such park its scheduler reads the wall clock twice for its busy-time
//! metrics, takes a lock and polls its (empty) driver, about 150 ns per instant, for the
//! RocketMQ bench's 512,449 instants. Then a loop polled tokio's `LocalSet` with a waker of its
//! own and took a poll that ended with nothing woken for idle. The executor now does that
//! itself (`runtime::block_on`).
//!
//! One rule follows from the first of them and still holds: no actor may wait on a tokio
//! timer or I/O, which nothing in a run drives. A task that wakes itself is queued again at
//! once, which the executor sees; the only tokio primitive in a run is the `oneshot` on which
//! the driver reports the end.

use crate::actors::runtime;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

/// Why the driver's next pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Woken {
    /// No actor has anything left to do: time may move.
    Idle,
    /// An actor added an entry for the current instant.
    Poked,
}

/// What the driver does when the gate opens: one pass, which ends by waiting again
/// ([`IdleGate::wait`], with the pass it is handed) or by finishing the run. Nothing holds a
/// pass but the gate while it waits and the caller while it runs, so a finished driver is
/// dropped with its last pass.
#[derive(Clone)]
pub(super) struct Pass(Rc<PassFn>);

/// A pass's body; it is handed its own `Pass`, to leave at the gate when it waits again.
type PassFn = dyn Fn(Woken, &Pass);

impl Pass {
    pub(super) fn new(f: impl Fn(Woken, &Pass) + 'static) -> Self {
        Pass(Rc::new(f))
    }

    fn run(&self, why: Woken) {
        (self.0)(why, self)
    }
}

/// Shared by the idle loop and the driver; both run on the run's one thread.
#[derive(Clone, Default)]
pub struct IdleGate(Rc<RefCell<Gate>>);

#[derive(Default)]
struct Gate {
    /// The driver's pass, while it waits for the gate.
    waiting: Option<Pass>,
}

impl IdleGate {
    /// Runs `fut` to completion on the run's executor, with the tasks it spawns (every actor
    /// is one), running the driver's pass whenever they all run dry.
    pub fn block_on<F: Future>(&self, fut: F) -> F::Output {
        // Idle: the driver's pass runs now, as the one task the executor would have run next
        // had it been woken (its queue is empty), but without a task's wake-up and poll: at
        // the head of the executor's next round, so that the actors it sends to are queued in
        // the order it sends.
        runtime::block_on(fut, || self.open().map(|pass| move || pass.run(Woken::Idle)))
    }

    /// An entry for the current instant: the driver's pass runs next in the task queue's
    /// order, as an actor sent a message would, and does not wait for every actor to run dry
    /// first. A zero-delay timer or a close notice so reaches its process in the order a real
    /// thread hand-off would give it, not behind every other actor's chain of messages. Rare
    /// (a few per run), so the pass goes in as a task of its own.
    #[inline(never)]
    pub(super) fn poke(&self) {
        if let Some(pass) = self.open() {
            runtime::spawn(async move { pass.run(Woken::Poked) });
        }
    }

    /// Takes the waiting driver's pass; none when no driver waits.
    fn open(&self) -> Option<Pass> {
        self.0.borrow_mut().waiting.take()
    }

    /// The driver waits: `pass` runs when every actor has run out of work, or when poked,
    /// whichever comes first, and once.
    pub(super) fn wait(&self, pass: Pass) {
        self.0.borrow_mut().waiting = Some(pass);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A driver's pass that reports why it ran, and the count `steps` held then, on `report`.
    fn reporting(steps: Rc<Cell<usize>>) -> (Pass, tokio::sync::oneshot::Receiver<(Woken, usize)>) {
        let (send, report) = tokio::sync::oneshot::channel();
        let send = RefCell::new(Some(send));
        let pass = Pass::new(move |why, _| {
            let send = send.borrow_mut().take().expect("a pass runs once per wait");
            let _ = send.send((why, steps.get()));
        });
        (pass, report)
    }

    /// Waits on the gate while another task runs a chain of 1,000 steps that keeps the actors
    /// busy, as a burst of messages between them does, poking the gate at step `poke_at`.
    /// Returns why the pass ran and how many steps had run by then.
    fn wait_beside_a_chain(poke_at: Option<usize>) -> (Woken, usize) {
        let gate = IdleGate::default();
        let steps = Rc::new(Cell::new(0));
        let (counter, poker) = (steps.clone(), gate.clone());
        gate.block_on(async {
            runtime::spawn(async move {
                for i in 0..1_000 {
                    counter.set(counter.get() + 1);
                    if Some(i) == poke_at {
                        poker.poke();
                    }
                    runtime::yield_now().await;
                }
            });
            let (pass, report) = reporting(steps);
            gate.wait(pass);
            report.await.expect("the pass ran")
        })
    }

    #[test]
    fn the_gate_opens_only_once_every_other_task_has_run_dry() {
        assert_eq!(wait_beside_a_chain(None), (Woken::Idle, 1_000));
    }

    #[test]
    fn a_poke_runs_the_driver_before_the_actors_are_idle() {
        let (woken, steps) = wait_beside_a_chain(Some(10));
        assert_eq!(woken, Woken::Poked);
        assert!(steps < 1_000, "the driver ran only after the chain ended ({steps} steps)");
    }

    #[test]
    fn with_nobody_waiting_a_poke_is_not_kept_for_a_later_wait() {
        let gate = IdleGate::default();
        gate.poke();
        let (woken, _) = gate.block_on(async {
            // Nothing was stored for a later wait: this one waits until the set runs dry.
            let (pass, report) = reporting(Rc::new(Cell::new(0)));
            gate.wait(pass);
            report.await.expect("the pass ran")
        });
        assert_eq!(woken, Woken::Idle);
    }

    /// Idle with no driver waiting, the executor sleeps; a wake of the run's future from
    /// another thread must still reach it. (Nothing in a run wakes from another thread today:
    /// `check --timeout` sets a flag the driver reads at each pass. But a waker may be sent
    /// anywhere, and a lost wake would hang the run.)
    #[test]
    fn a_wake_from_another_thread_resumes_a_loop_that_handed_the_thread_back() {
        let gate = IdleGate::default();
        let (send, receive) = tokio::sync::oneshot::channel();
        let sender = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            send.send(7).unwrap();
        });
        assert_eq!(gate.block_on(async { receive.await.unwrap() }), 7);
        sender.join().unwrap();
    }
}
