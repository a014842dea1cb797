//! The executor against tokio's `LocalSet`, whose order every run's trace was made with: the same
//! scripted tasks, run on both, must be polled in the same order.

use super::*;
use crate::sim::rng::SimRng;
use std::cell::Cell;
use std::rc::Rc;

/// What a task of the script may be.
#[derive(Clone, Copy, PartialEq)]
enum State {
    /// Queued or running.
    Active,
    /// Waiting for another task to wake it.
    Idle,
    Done,
}

/// Tasks that, at each poll, wake others (some idle, some queued, some finished), wake
/// themselves before or after that or not at all, and start new tasks, as a seeded RNG says.
/// The log is the order of polls.
struct Script {
    rng: SimRng,
    wakers: Vec<Option<Waker>>,
    states: Vec<State>,
    steps_left: Vec<u32>,
    log: Vec<(usize, u32)>,
    main: Option<Waker>,
    spawn: fn(Pin<Box<dyn Future<Output = ()>>>),
}

type Shared = Rc<RefCell<Script>>;

impl Script {
    fn active(&self) -> usize {
        self.states.iter().filter(|s| **s == State::Active).count()
    }

    fn wake(&mut self, j: usize) {
        if let Some(w) = &self.wakers[j] {
            w.wake_by_ref();
            if self.states[j] == State::Idle {
                self.states[j] = State::Active;
            }
        }
    }

    fn wake_an_idle_one(&mut self) {
        if let Some(j) = self.states.iter().position(|s| *s == State::Idle) {
            self.wake(j);
        }
    }
}

fn task(script: Shared, i: usize) -> Pin<Box<dyn Future<Output = ()>>> {
    Box::pin(std::future::poll_fn(move |cx| {
        let mut s = script.borrow_mut();
        let step = s.steps_left[i];
        s.log.push((i, step));
        s.wakers[i] = Some(cx.waker().clone());
        let me = cx.waker().clone();
        if step == 0 {
            s.states[i] = State::Done;
            if s.active() == 0 {
                s.wake_an_idle_one();
            }
            if s.states.iter().all(|st| *st == State::Done) {
                if let Some(main) = s.main.take() {
                    main.wake();
                }
            }
            return Poll::Ready(());
        }
        s.steps_left[i] -= 1;
        let how = s.rng.up_to(2);
        if how == 0 {
            me.wake_by_ref();
        }
        for _ in 0..s.rng.up_to(2) {
            let n = s.wakers.len();
            let j = s.rng.index(n);
            s.wake(j);
        }
        if s.wakers.len() < 40 && s.rng.chance(0.1) {
            let j = s.wakers.len();
            s.wakers.push(None);
            s.states.push(State::Active);
            let steps = s.rng.up_to(6) as u32;
            s.steps_left.push(steps);
            (s.spawn)(task(script.clone(), j));
        }
        if how == 1 {
            me.wake_by_ref();
        } else if how == 2 {
            s.states[i] = State::Idle;
            // Someone must be left to wake it.
            if s.active() == 0 {
                s.wake_an_idle_one();
            }
        }
        Poll::Pending
    }))
}

fn script(seed: u64, spawn: fn(Pin<Box<dyn Future<Output = ()>>>)) -> Shared {
    let mut rng = SimRng::new(seed);
    let n = 1 + rng.index(20);
    let steps_left = (0..n).map(|_| rng.up_to(8) as u32).collect();
    Rc::new(RefCell::new(Script {
        rng,
        wakers: vec![None; n],
        states: vec![State::Active; n],
        steps_left,
        log: Vec::new(),
        main: None,
        spawn,
    }))
}

/// Starts the script's tasks, then waits for all of them to finish.
async fn play(s: Shared) -> Vec<(usize, u32)> {
    let n = s.borrow().wakers.len();
    for i in 0..n {
        let spawn = s.borrow().spawn;
        spawn(task(s.clone(), i));
    }
    std::future::poll_fn(|cx| {
        let mut sc = s.borrow_mut();
        if sc.states.iter().all(|st| *st == State::Done) {
            return Poll::Ready(());
        }
        sc.main = Some(cx.waker().clone());
        Poll::Pending
    })
    .await;
    let log = std::mem::take(&mut s.borrow_mut().log);
    log
}

fn on_tokio(seed: u64) -> Vec<(usize, u32)> {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let local = tokio::task::LocalSet::new();
    let s = script(seed, |f| {
        // The reference, on tokio's own queue.
        #[allow(clippy::disallowed_methods)]
        tokio::task::spawn_local(f);
    });
    rt.block_on(local.run_until(play(s)))
}

fn on_ours(seed: u64) -> Vec<(usize, u32)> {
    let s = script(seed, spawn);
    block_on(play(s), || None::<fn()>)
}

#[test]
fn tasks_are_polled_in_the_order_tokio_s_local_set_polls_them() {
    let mut polls = 0;
    for seed in 0..300 {
        let (tokio, ours) = (on_tokio(seed), on_ours(seed));
        assert_eq!(ours, tokio, "seed {seed}");
        polls += ours.len();
    }
    // The scripts are not trivial: thousands of polls, across more than one tick of 61.
    assert!(polls > 10_000, "{polls} polls");
}

#[test]
fn a_waker_kept_past_its_task_wakes_nothing_in_the_slot_s_next_task() {
    let log = Rc::new(RefCell::new(Vec::new()));
    let kept: Rc<RefCell<Option<Waker>>> = Rc::default();
    let (l, k) = (log.clone(), kept.clone());
    block_on(
        async move {
            let (l1, k1) = (l.clone(), k.clone());
            spawn(async move {
                std::future::poll_fn(|cx| {
                    *k1.borrow_mut() = Some(cx.waker().clone());
                    Poll::Ready(())
                })
                .await;
                l1.borrow_mut().push("first done");
            });
            yield_now().await;
            // The next task takes the freed slot and waits; the first task's waker must not
            // poll it.
            let l2 = l.clone();
            spawn(std::future::poll_fn(move |_| {
                l2.borrow_mut().push("second polled");
                Poll::<()>::Pending
            }));
            yield_now().await;
            k.borrow().as_ref().expect("kept").wake_by_ref();
            yield_now().await;
        },
        || None::<fn()>,
    );
    assert_eq!(*log.borrow(), ["first done", "second polled"]);
}

#[test]
#[should_panic(expected = "outside the run's executor")]
fn starting_a_task_outside_a_run_is_refused() {
    spawn(async {});
}

/// Sets its flag when dropped, and starts another task that never ends, with `then` in it.
struct Guard {
    dropped: Rc<Cell<u32>>,
    then: Option<Box<Guard>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.dropped.set(self.dropped.get() + 1);
        if let Some(next) = self.then.take() {
            spawn(async move {
                let _keep = next;
                std::future::pending::<()>().await;
            });
        }
    }
}

#[test]
fn tasks_left_at_the_end_are_dropped_with_what_their_drop_starts_and_the_next_run_starts_clean() {
    let dropped = Rc::new(Cell::new(0));
    let inner = Guard { dropped: dropped.clone(), then: None };
    let outer = Guard { dropped: dropped.clone(), then: Some(Box::new(inner)) };
    block_on(
        async move {
            spawn(async move {
                let _keep = outer;
                std::future::pending::<()>().await;
            });
            yield_now().await;
        },
        || None::<fn()>,
    );
    assert_eq!(dropped.get(), 2, "both tasks' guards were dropped");
    let ran = Rc::new(Cell::new(false));
    let r = ran.clone();
    block_on(
        async move {
            spawn(async move { r.set(true) });
            yield_now().await;
        },
        || None::<fn()>,
    );
    assert!(ran.get());
}

/// A waker kept from an earlier run (on this thread or another) names a slot that a later run
/// reuses; it must not poll that run's task.
#[test]
fn a_waker_kept_from_an_earlier_run_wakes_nothing_in_a_later_one() {
    let kept: Rc<RefCell<Option<Waker>>> = Rc::default();
    let k = kept.clone();
    block_on(
        async move {
            spawn(std::future::poll_fn(move |cx| {
                *k.borrow_mut() = Some(cx.waker().clone());
                Poll::<()>::Pending
            }));
            yield_now().await;
        },
        || None::<fn()>,
    );
    let polls = Rc::new(Cell::new(0));
    let p = polls.clone();
    block_on(
        async move {
            spawn(std::future::poll_fn(move |_| {
                p.set(p.get() + 1);
                Poll::<()>::Pending
            }));
            yield_now().await;
            kept.borrow().as_ref().expect("kept").wake_by_ref();
            yield_now().await;
        },
        || None::<fn()>,
    );
    assert_eq!(polls.get(), 1, "polled once, when it started");
}
