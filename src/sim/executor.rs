//! A Java `ScheduledThreadPoolExecutor`, as far as timing goes: a fixed number of threads run
//! tasks whose delay has passed, one task per thread, and a task that falls due while every
//! thread is busy waits.
//!
//! That waiting is what the models need it for. A RocketMQ broker runs its periodic
//! registration and its `refreshMetadata` poll on one thread, so a registration stuck on a
//! half-open channel for 24 s holds the poll back; a Nacos `BeatReactor` runs every instance's
//! `BeatTask` on `max(1, cores / 2)` threads, and a beat blocked on a black-holed server holds a
//! thread for the whole request.
//!
//! Waiting tasks run in the order Java's `DelayedWorkQueue` gives them: earliest scheduled
//! time first, then the lower sequence number (the order the tasks were created). What the task
//! does, and when it schedules itself again, is its owner's business.

use crate::sim::clock::SimTime;

pub struct Executor<T> {
    threads: usize,
    running: usize,
    /// Tasks due and waiting for a thread, kept sorted by (scheduled time, sequence number):
    /// a handful at most, so a vector beats a tree.
    waiting: Vec<((SimTime, u64), T)>,
}

impl<T> Executor<T> {
    pub fn new(threads: usize) -> Self {
        Executor { threads: threads.max(1), running: 0, waiting: Vec::new() }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// A task's delay passed: it was due at `scheduled`; `seq` orders tasks due at once.
    pub fn due(&mut self, scheduled: SimTime, seq: u64, task: T) {
        let key = (scheduled, seq);
        let at = self.waiting.partition_point(|(k, _)| *k < key);
        self.waiting.insert(at, (key, task));
    }

    /// The next task to run now, if a thread is free (the thread counts as busy until `done`).
    pub fn take(&mut self) -> Option<(SimTime, T)> {
        if self.running >= self.threads {
            return None;
        }
        if self.waiting.is_empty() {
            return None;
        }
        let ((scheduled, _), task) = self.waiting.remove(0);
        self.running += 1;
        Some((scheduled, task))
    }

    /// A running task finished: its thread is free.
    pub fn done(&mut self) {
        self.running = self.running.saturating_sub(1);
    }

    /// Tasks due but waiting for a thread.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    pub fn running(&self) -> usize {
        self.running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_single_thread_holds_back_a_task_that_falls_due() {
        // ScheduledThreadPoolExecutor(1): a second task waits for the first to finish.
        let mut e = Executor::new(1);
        e.due(SimTime(10_000), 0, "register");
        assert_eq!(e.take(), Some((SimTime(10_000), "register")));
        e.due(SimTime(15_000), 1, "refresh");
        assert_eq!(e.take(), None, "the one thread is waiting on the latch");
        e.done();
        assert_eq!(e.take(), Some((SimTime(15_000), "refresh")));
    }

    #[test]
    fn waiting_tasks_run_earliest_first_then_in_creation_order() {
        // DelayedWorkQueue: compareTo by time, then sequenceNumber.
        let mut e = Executor::new(1);
        e.due(SimTime(5), 1, "b");
        e.due(SimTime(5), 0, "a");
        e.due(SimTime(3), 2, "c");
        let order: Vec<&str> = std::iter::from_fn(|| {
            let t = e.take().map(|(_, t)| t);
            e.done();
            t
        })
        .collect();
        assert_eq!(order, ["c", "a", "b"]);
    }

    #[test]
    fn a_pool_runs_as_many_tasks_at_once_as_it_has_threads() {
        let mut e = Executor::new(2);
        for i in 0..3 {
            e.due(SimTime(0), i, i);
        }
        assert!(e.take().is_some() && e.take().is_some());
        assert_eq!(e.take(), None);
        assert_eq!((e.running(), e.waiting()), (2, 1));
    }
}
