//! How the driver learns that every actor has finished the work of an instant.
//!
//! The run's runtime is tokio's single-threaded scheduler. When it finds no task ready it is
//! about to park the thread: every mailbox is empty and every handler has returned, so nothing
//! can happen at this instant any more unless the driver delivers it. Tokio runs the runtime's
//! `on_thread_park` hook at exactly that moment, and a task the hook wakes runs instead of the
//! thread parking (`current_thread::Context::park` checks for pending work after the hook). A
//! run's runtime ([`IdleGate::runtime`]) has [`IdleGate::on_park`] as that hook; the driver
//! awaits [`IdleGate::wait`].
//!
//! It used to sleep on tokio's paused clock instead, which detects the same moment (tokio moves
//! a paused clock only when the runtime is idle) but pays for it at every instant: a pass of
//! tokio's timer wheel, wall-clock reads for its metrics, and re-arming the driver's timer
//! whenever an actor added an earlier entry. About one instant per trace event in the RocketMQ
//! bench, whose brokers start staggered; this gate is a lock and a wake.

use std::future::poll_fn;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Poll, Waker};

/// Why the driver was woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Woken {
    /// The runtime has no other task to run: time may move.
    Idle,
    /// An actor added an entry for the current instant.
    Poked,
}

/// Shared between the runtime's park hook (which tokio requires to be `Send + Sync`) and the
/// driver; both run on the run's one thread, so the lock is never contended.
#[derive(Clone, Default)]
pub struct IdleGate(Arc<Mutex<Gate>>);

#[derive(Default)]
struct Gate {
    /// The driver, while it waits.
    waiting: Option<Waker>,
    woken: Option<Woken>,
}

impl IdleGate {
    /// A run's runtime: one thread, no timers and no I/O, this gate as its park hook.
    pub fn runtime(&self) -> tokio::runtime::Runtime {
        let hook = self.clone();
        tokio::runtime::Builder::new_current_thread()
            .on_thread_park(move || hook.on_park())
            .build()
            .expect("a current-thread tokio runtime can always be built")
    }

    /// The runtime's park hook: the runtime has no ready task. Opens the gate for a driver that
    /// waits; with none waiting (before the run starts, after it ends) the thread parks as usual.
    pub fn on_park(&self) {
        self.wake(Woken::Idle);
    }

    /// An entry for the current instant: the driver runs next in the task queue's order, as
    /// an actor sent a message would, and does not wait for the runtime to run dry first. A
    /// zero-delay timer or a close notice so reaches its process in the order a real thread
    /// hand-off would give it, not behind every other actor's chain of messages.
    pub(super) fn poke(&self) {
        self.wake(Woken::Poked);
    }

    fn wake(&self, why: Woken) {
        let mut gate = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(waker) = gate.waiting.take() {
            gate.woken = Some(why);
            drop(gate);
            waker.wake();
        }
    }

    /// Resolves when the runtime has run out of other work, or when poked. A poll before
    /// either (the network actor's context polls its futures for any message it gets) keeps
    /// waiting.
    pub(super) async fn wait(&self) -> Woken {
        poll_fn(|cx| {
            let mut gate = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            match gate.woken.take() {
                Some(why) => Poll::Ready(why),
                None => {
                    gate.waiting = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// Waits on the gate while another task runs a chain of 1,000 steps that keeps the runtime
    /// busy, as a burst of messages between actors does, poking the gate at step `poke_at`.
    /// Returns why the wait ended and how many steps had run by then.
    fn wait_beside_a_chain(poke_at: Option<usize>) -> (Woken, usize) {
        let gate = IdleGate::default();
        let steps = Rc::new(Cell::new(0));
        let (counter, poker) = (steps.clone(), gate.clone());
        tokio::task::LocalSet::new().block_on(&gate.runtime(), async move {
            tokio::task::spawn_local(async move {
                for i in 0..1_000 {
                    counter.set(counter.get() + 1);
                    if Some(i) == poke_at {
                        poker.poke();
                    }
                    tokio::task::yield_now().await;
                }
            });
            let woken = gate.wait().await;
            (woken, steps.get())
        })
    }

    #[test]
    fn the_gate_opens_only_once_every_other_task_has_run_dry() {
        assert_eq!(wait_beside_a_chain(None), (Woken::Idle, 1_000));
    }

    #[test]
    fn a_poke_wakes_the_driver_before_the_runtime_is_idle() {
        let (woken, steps) = wait_beside_a_chain(Some(10));
        assert_eq!(woken, Woken::Poked);
        assert!(steps < 1_000, "the driver ran only after the chain ended ({steps} steps)");
    }

    #[test]
    fn with_nobody_waiting_the_park_hook_does_nothing() {
        let gate = IdleGate::default();
        gate.on_park();
        gate.poke();
        let woken = gate.runtime().block_on(async {
            // Nothing was stored for a later wait: this one waits for the next park.
            gate.wait().await
        });
        assert_eq!(woken, Woken::Idle);
    }
}
