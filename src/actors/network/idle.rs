//! How the driver learns that every actor has finished the work of an instant.
//!
//! A run's actors are tasks of one `LocalSet` on tokio's current-thread runtime. The set is idle
//! when one of its polls ends with no task ready and nothing woken: every mailbox is empty and
//! every handler has returned, so nothing can happen at this instant any more unless the driver
//! delivers it. [`IdleGate::block_on`] runs the run's future in such a set and watches for
//! exactly that moment: it polls the set with a waker of its own, so it sees every task the set
//! schedules, and when a poll ends without one it runs the pass the driver left at the gate
//! ([`IdleGate::wait`]) and polls again. tokio's scheduler is never asked to park for it.
//!
//! The pass is not a task: the set's queue is empty at that moment, so a task woken for it
//! would run next anyway, and each instant would pay for its wake-up and poll. The loop hands
//! it to the run's own future, which the set polls first in its next poll, so the pass runs
//! inside the set's poll: an actor it sends to is queued there directly, where from outside
//! (`LocalSet::enter`) each queued actor also woke the set through its waker. Only a poke,
//! which must run the driver between actors still at work, queues the pass as a task of its
//! own.
//!
//! Two designs came before. The driver slept on tokio's paused clock, which moves only when the
//! runtime is idle: the same moment, but paid for at every instant with a pass of tokio's timer
//! wheel, wall-clock reads and re-arming the driver's timer. Then the runtime's
//! `on_thread_park` hook opened the gate: tokio calls it when its own queue is empty, after the
//! `LocalSet` has yielded to it, and around each such park its scheduler reads the wall clock
//! twice for its busy-time metrics, takes a lock and polls its (empty) driver. That was about
//! 150 ns per instant, and the RocketMQ bench passes 512,449 instants; this loop is a flag check.
//!
//! One rule follows: no actor may yield with `tokio::task::yield_now`, or run a tokio primitive
//! out of its cooperative budget. Both defer the task's wake until tokio's scheduler parks,
//! which it does not while a driver waits, so the loop would take the set for idle and leave
//! the task asleep. actix yields by waking its own task at once, which the loop sees; the only
//! tokio primitive in a run is the `oneshot` on which the driver reports the end.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

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
    /// The pass the idle loop let through, until the set's next poll runs it.
    released: Option<Pass>,
}

impl IdleGate {
    /// Runs `fut` to completion on a current-thread runtime without timers or I/O, with the
    /// tasks it spawns in a `LocalSet` (actix starts every actor there), running the driver's
    /// pass whenever they all run dry.
    pub fn block_on<F: Future>(&self, fut: F) -> F::Output {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a current-thread tokio runtime can always be built");
        let local = tokio::task::LocalSet::new();
        // The run's own future runs a released pass first, whenever the set polls it: the set
        // polls it before its tasks, and from inside its own poll, where a task the pass wakes
        // (an actor it sends to) goes straight onto the set's queue. Run from outside the
        // set's poll (`LocalSet::enter`), each such wake also woke the set itself, through
        // tokio's atomic waker slot and an atomic exchange in ours: about 4% of the sampled
        // time of the RocketMQ bench, with the waker clones they cost.
        let gate = self.clone();
        let mut fut = pin!(fut);
        let main = poll_fn(move |cx| {
            let released = gate.0.borrow_mut().released.take();
            if let Some(pass) = released {
                pass.run(Woken::Idle);
            }
            fut.as_mut().poll(cx)
        });
        let mut set = pin!(local.run_until(main));
        let seen = Arc::new(Seen::default());
        let waker = Waker::from(seen.clone());
        runtime.block_on(poll_fn(|cx| {
            seen.parked.store(false, Ordering::Relaxed);
            loop {
                seen.woken.store(false, Ordering::Relaxed);
                if let Poll::Ready(out) = set.as_mut().poll(&mut Context::from_waker(&waker)) {
                    return Poll::Ready(out);
                }
                // Woken during the poll: the set yielded with tasks still queued, or a task
                // scheduled another. Either way this instant is not over.
                if seen.woken.load(Ordering::Relaxed) {
                    continue;
                }
                // Idle: the driver's pass runs now, as the one task the set would have run
                // next had it been woken (its queue is empty), but without a task's wake-up
                // and poll: released to the run's future, at the head of the set's next poll,
                // so that the actors it sends to are queued in the order it sends.
                if let Some(pass) = self.open() {
                    self.0.borrow_mut().released = Some(pass);
                    continue;
                }
                // Idle, and no driver waits (before the run starts, after it ends): hand the
                // thread back to tokio until something wakes the set.
                *seen.outer.lock().unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
                // Sequentially consistent, with the two in `wake_by_ref`: a wake from another
                // thread either is seen here or sees `parked` and wakes tokio.
                seen.parked.store(true, Ordering::SeqCst);
                if !seen.woken.load(Ordering::SeqCst) {
                    return Poll::Pending;
                }
            }
        }))
    }

    /// An entry for the current instant: the driver's pass runs next in the task queue's
    /// order, as an actor sent a message would, and does not wait for every actor to run dry
    /// first. A zero-delay timer or a close notice so reaches its process in the order a real
    /// thread hand-off would give it, not behind every other actor's chain of messages. Rare
    /// (a few per run), so the pass goes in as a task of its own.
    #[inline(never)]
    pub(super) fn poke(&self) {
        if let Some(pass) = self.open() {
            tokio::task::spawn_local(async move { pass.run(Woken::Poked) });
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

/// The waker the idle loop polls the `LocalSet` with: it notes that the set has work, and
/// passes the wake on to tokio only while the loop has handed the thread back.
#[derive(Default)]
struct Seen {
    woken: AtomicBool,
    parked: AtomicBool,
    outer: Mutex<Option<Waker>>,
}

impl Wake for Seen {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        if self.parked.load(Ordering::SeqCst) {
            if let Some(outer) = self.outer.lock().unwrap_or_else(PoisonError::into_inner).take() {
                outer.wake();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Yields the way actix's mailbox does when it has handled its share of messages: wakes
    /// its own task at once and returns. (tokio's `yield_now` instead defers the wake until
    /// tokio's scheduler parks, which the idle loop never asks it to while a driver waits: no
    /// actor may use it, see the module doc.)
    async fn yield_once() {
        let mut yielded = false;
        poll_fn(|cx| {
            if yielded {
                return Poll::Ready(());
            }
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await
    }

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
            tokio::task::spawn_local(async move {
                for i in 0..1_000 {
                    counter.set(counter.get() + 1);
                    if Some(i) == poke_at {
                        poker.poke();
                    }
                    yield_once().await;
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

    /// Idle with no driver waiting, the loop hands the thread to tokio; a wake from another
    /// thread must still reach the set. (Nothing in a run wakes from another thread today:
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
