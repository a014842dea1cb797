//! The run's executor: every actor's context is a task here, polled in the order it was woken.
//!
//! actix runs an actor as one future, its `ContextFut`: it polls the actor's mailbox and runs
//! each message's handler. `Actor::start` hands that future to actix-rt, which spawns it on a
//! tokio `LocalSet`; a run does the same here, on a queue of its own ([`start`], [`run`]).
//! Actors, contexts and handlers are actix's, unchanged: what differs is who polls the futures,
//! and (`inbox`) the queue an actor's messages wait in.
//!
//! Why not tokio's `LocalSet`: a simulation runs on one thread, and each of its instants wakes
//! and polls a few actors. tokio's tasks are built for many threads: every wake-up and poll moves
//! the task's state word with atomic compare-and-swaps, counts references to it, sets up a
//! cooperative budget and a task-id context. That was 11.6% of the RocketMQ bench's instructions,
//! for 450,000 polls an hour. Here a task is a slot in a vector, its waker the slot's index (no
//! count, no allocation, and the same waker each time, so actix's mailbox never clones it), and
//! a wake-up is a push onto a queue.
//!
//! The order is tokio's `LocalSet`'s, which every run's trace was made with: first in, first
//! out; a task woken while it is queued stays where it is; a task woken while it runs (an actor
//! that sends itself a message through its address) goes to the back after its poll, behind the
//! tasks it woke meanwhile; and the run's own future gets its turn between every 61 tasks
//! (tokio's `MAX_TASKS_PER_TICK`). So every run is the same event for event as on tokio.
//!
//! A task's waker names its slot and the task's stamp, a number no other task of any run in the
//! process has had: a waker kept past its task wakes nothing, and one woken on another thread
//! (nothing in a run does that; its actors' addresses never leave its thread) finds no task of
//! its own there. Only the run's own future may be woken from another thread (see
//! [`block_on`]).

use actix::{Actor, Addr, Context};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{self, Poll, RawWaker, RawWakerVTable, Wake, Waker};

/// How many tasks run between two polls of the run's own future: tokio's `LocalSet` polls it
/// before every such tick, and the order of a run depends on it.
const TASKS_PER_TICK: usize = 61;

/// No task is running.
const NONE: u32 = u32::MAX;

/// The next task's stamp, for the whole process: a task's wakers carry it.
static STAMPS: AtomicU32 = AtomicU32::new(0);

type Task = Pin<Box<dyn Future<Output = ()>>>;

struct Slot {
    /// The task's future; `None` while it is being polled, or once it finished.
    task: Option<Task>,
    /// The task's stamp (see the module docs), which its wakers carry.
    stamp: u32,
    /// In `ready`.
    queued: bool,
}

struct Runtime {
    /// Inside a `block_on` on this thread.
    active: Cell<bool>,
    slots: RefCell<Vec<Slot>>,
    free: RefCell<Vec<u32>>,
    ready: RefCell<VecDeque<u32>>,
    /// The slot being polled, and whether it woke itself meanwhile.
    running: Cell<u32>,
    rewake: Cell<bool>,
}

thread_local! {
    static RT: Runtime = const {
        Runtime {
            active: Cell::new(false),
            slots: RefCell::new(Vec::new()),
            free: RefCell::new(Vec::new()),
            ready: RefCell::new(VecDeque::new()),
            running: Cell::new(NONE),
            rewake: Cell::new(false),
        }
    };
}

/// Starts `actor` on the run's executor, as `Actor::start` does on actix-rt's.
pub fn start<A: Actor<Context = Context<A>>>(actor: A) -> Addr<A> {
    run(Context::new(), actor)
}

/// Runs `actor` in `ctx` on the run's executor, as `Context::run` does on actix-rt's: made
/// first, a context gives out the actor's address before the actor exists.
pub fn run<A: Actor<Context = Context<A>>>(ctx: Context<A>, actor: A) -> Addr<A> {
    let fut = ctx.into_future(actor);
    let addr = fut.address();
    spawn(fut);
    addr
}

/// Queues `fut` as a task of the run, behind every task already woken.
///
/// # Panics
/// Outside [`block_on`], as tokio's `spawn_local` does outside a `LocalSet`.
pub fn spawn(fut: impl Future<Output = ()> + 'static) {
    RT.with(|rt| {
        assert!(rt.active.get(), "an actor was started outside the run's executor (runtime::block_on)");
        let task: Task = Box::pin(fut);
        let stamp = STAMPS.fetch_add(1, Ordering::Relaxed);
        let mut slots = rt.slots.borrow_mut();
        let i = match rt.free.borrow_mut().pop() {
            Some(i) => {
                slots[i as usize] = Slot { task: Some(task), stamp, queued: true };
                i
            }
            None => {
                slots.push(Slot { task: Some(task), stamp, queued: true });
                (slots.len() - 1) as u32
            }
        };
        rt.ready.borrow_mut().push_back(i);
    });
}

/// Runs `fut` to completion with the tasks it spawns.
///
/// Whenever the woken tasks have all run and nothing woke `fut`, the run is idle: `idle` may
/// hand back work (the network's driver) to run next, before `fut` and the tasks, as tokio's
/// `LocalSet` runs its own future first in each of its polls. Otherwise the thread sleeps until
/// `fut`'s waker is woken, which another thread may do.
///
/// `fut` is polled only when its waker was woken (and first of all), where tokio's `LocalSet`
/// polls it before every tick whatever happened: a poll of a future that nothing woke finds
/// nothing new, so the order of the run is the same, without the run's future's poll per
/// instant.
///
/// # Panics
/// When called inside another `block_on` on the same thread.
pub fn block_on<F: Future, W: FnOnce()>(fut: F, mut idle: impl FnMut() -> Option<W>) -> F::Output {
    RT.with(|rt| {
        assert!(!rt.active.replace(true), "runtime::block_on inside another");
    });
    // Whatever happens, the tasks left go when this returns (or unwinds), before the next run.
    struct Finish;
    impl Drop for Finish {
        fn drop(&mut self) {
            RT.with(|rt| {
                // Dropping a task may start another (nothing does today): drop until none is
                // left, so that nothing carries over into the thread's next run.
                loop {
                    let slots = std::mem::take(&mut *rt.slots.borrow_mut());
                    rt.ready.borrow_mut().clear();
                    rt.free.borrow_mut().clear();
                    if slots.is_empty() {
                        break;
                    }
                    drop(slots);
                }
                rt.running.set(NONE);
                rt.active.set(false);
            });
        }
    }
    let _finish = Finish;
    let main = Arc::new(MainWaker { woken: AtomicBool::new(true), thread: std::thread::current() });
    let waker = Waker::from(main.clone());
    let mut cx = task::Context::from_waker(&waker);
    let mut fut = pin!(fut);
    let mut first: Option<W> = None;
    loop {
        if let Some(work) = first.take() {
            work();
        }
        // A load first: nearly every round finds it unwoken, and the swap is a locked
        // instruction.
        if main.woken.load(Ordering::Acquire) && main.woken.swap(false, Ordering::AcqRel) {
            if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                return out;
            }
        }
        if tick() || main.woken.load(Ordering::Acquire) {
            continue;
        }
        first = idle();
        if first.is_some() {
            continue;
        }
        // Nothing on this thread can wake anything now: wait for `fut`'s waker.
        while !main.woken.load(Ordering::SeqCst) {
            std::thread::park();
        }
    }
}

/// Runs up to [`TASKS_PER_TICK`] woken tasks; true if it ran that many (more may be waiting).
fn tick() -> bool {
    RT.with(|rt| {
        for _ in 0..TASKS_PER_TICK {
            let Some(i) = rt.ready.borrow_mut().pop_front() else { return false };
            poll_slot(rt, i);
        }
        true
    })
}

fn poll_slot(rt: &Runtime, i: u32) {
    let (mut task, stamp) = {
        let mut slots = rt.slots.borrow_mut();
        let slot = &mut slots[i as usize];
        slot.queued = false;
        (slot.task.take().expect("a queued task has its future"), slot.stamp)
    };
    rt.running.set(i);
    rt.rewake.set(false);
    // SAFETY: the data is a plain number, which every function of `VTABLE` accepts.
    let waker = unsafe { Waker::from_raw(RawWaker::new(pack(i, stamp), &VTABLE)) };
    let done = task.as_mut().poll(&mut task::Context::from_waker(&waker)).is_ready();
    rt.running.set(NONE);
    if done {
        // Dropped outside the borrow: an actor's drop may wake or start others. The slot keeps
        // no task, so its wakers find nothing until a new task, with a new stamp, takes it.
        drop(task);
        rt.free.borrow_mut().push(i);
        return;
    }
    let requeue = rt.rewake.get();
    {
        let mut slots = rt.slots.borrow_mut();
        let slot = &mut slots[i as usize];
        slot.task = Some(task);
        slot.queued = requeue;
    }
    if requeue {
        rt.ready.borrow_mut().push_back(i);
    }
}

// `pack` puts two `u32`s in a pointer-sized word: only a 64-bit target has room for both.
const _: () = assert!(usize::BITS >= 64, "a waker's data packs two u32s into a pointer");

/// A task's waker data: its slot and its stamp, in one word.
fn pack(i: u32, stamp: u32) -> *const () {
    (((stamp as usize) << 32) | i as usize) as *const ()
}

fn wake(data: *const ()) {
    let (i, stamp) = ((data as usize & 0xFFFF_FFFF) as u32, ((data as usize) >> 32) as u32);
    RT.with(|rt| {
        let mut slots = rt.slots.borrow_mut();
        let Some(slot) = slots.get_mut(i as usize) else { return };
        if slot.stamp != stamp {
            return;
        }
        if rt.running.get() == i {
            // tokio re-queues a task that woke itself when its poll ends, behind what it woke.
            rt.rewake.set(true);
        } else if slot.task.is_some() && !slot.queued {
            slot.queued = true;
            drop(slots);
            rt.ready.borrow_mut().push_back(i);
        }
    });
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(|data| RawWaker::new(data, &VTABLE), wake, wake, |_| {});

/// The run's own future's waker: it may be woken from any thread.
struct MainWaker {
    woken: AtomicBool,
    thread: std::thread::Thread,
}

impl Wake for MainWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::SeqCst);
        self.thread.unpark();
    }
}

#[cfg(test)]
mod tests;

/// Wakes its own task and returns, as an actor that sends itself a message does: it runs again
/// behind every task woken before it.
#[cfg(test)]
pub(crate) async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}
