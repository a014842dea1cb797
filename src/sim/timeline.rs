//! A queue of small values by due time, FIFO among equal times, for an actor that schedules its
//! own work: a Nacos client's `BeatTask` runs (`actors/nacos_app.rs`).
//!
//! Such a queue is nearly always filled at the back (a run scheduled one period out is later
//! than any waiting) and emptied at the front. A `VecDeque` did that with wrap-around arithmetic
//! on every look at either end: in the Nacos bench, which files and takes one run per beat and
//! looks at the front and back several times, about 40 instructions a beat. Here the runs sit in
//! a plain vector from `head` on; what was taken is left behind `head` and dropped in one move
//! when the vector would otherwise grow, or at once when the queue empties.

use crate::sim::clock::SimTime;

pub struct Timeline<T: Copy> {
    runs: Vec<(SimTime, T)>,
    /// Runs before this index were taken.
    head: usize,
}

impl<T: Copy> Default for Timeline<T> {
    fn default() -> Self {
        Timeline { runs: Vec::new(), head: 0 }
    }
}

impl<T: Copy> Timeline<T> {
    /// When the earliest run is due.
    #[inline]
    pub fn first(&self) -> Option<SimTime> {
        self.runs.get(self.head).map(|(at, _)| *at)
    }

    /// Files `item` at `at`: after every run due at or before `at`.
    #[inline]
    pub fn file(&mut self, at: SimTime, item: T) {
        match self.runs.last() {
            Some((last, _)) if *last > at => self.insert(at, item),
            _ => {
                if self.runs.len() == self.runs.capacity() && self.head * 2 >= self.runs.len() {
                    // At least half the vector was taken: move the rest to the front rather than
                    // grow, so memory follows the runs waiting, and each run moves at most once
                    // for every run taken before it.
                    self.runs.drain(..self.head);
                    self.head = 0;
                }
                self.runs.push((at, item));
            }
        }
    }

    /// Earlier than the last run (a shorter interval, a retry): rare, so a search and a shift.
    #[inline(never)]
    fn insert(&mut self, at: SimTime, item: T) {
        let i = self.head + self.runs[self.head..].partition_point(|(t, _)| *t <= at);
        self.runs.insert(i, (at, item));
    }

    /// Takes the earliest run if it is due at or before `now`.
    #[inline]
    pub fn pop_due(&mut self, now: SimTime) -> Option<T> {
        let &(at, item) = self.runs.get(self.head)?;
        if at > now {
            return None;
        }
        self.head += 1;
        if self.head == self.runs.len() {
            self.runs.clear();
            self.head = 0;
        }
        Some(item)
    }

    pub fn len(&self) -> usize {
        self.runs.len() - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::SimRng;
    use std::collections::BTreeMap;

    /// Against a tree of instants with a FIFO per instant, through any mix of filing (mostly at
    /// the back, sometimes earlier) and taking what is due.
    #[test]
    fn runs_come_out_by_time_then_in_filing_order() {
        for seed in 0..200 {
            let mut rng = SimRng::new(seed);
            let mut q = Timeline::default();
            let mut want: BTreeMap<SimTime, Vec<u32>> = BTreeMap::new();
            let mut now = 0;
            for n in 0..400u32 {
                if rng.index(3) > 0 {
                    // One period out, or now and then a shorter one.
                    let ahead = if rng.index(8) == 0 { rng.index(5) } else { 5 };
                    let at = SimTime(now + ahead as u64);
                    q.file(at, n);
                    want.entry(at).or_default().push(n);
                } else {
                    now += rng.index(4) as u64;
                    let expected = want.first_entry().filter(|e| e.key().0 <= now).map(|mut e| {
                        let v = e.get_mut().remove(0);
                        if e.get().is_empty() {
                            e.remove();
                        }
                        v
                    });
                    assert_eq!(q.pop_due(SimTime(now)), expected, "seed {seed}, step {n}");
                }
                assert_eq!(q.first(), want.keys().next().copied());
                assert_eq!(q.len(), want.values().map(Vec::len).sum::<usize>());
            }
        }
    }

    #[test]
    fn taken_runs_do_not_hold_memory() {
        // A steady client: a hundred runs waiting, one taken and one filed per step. The vector
        // stays within twice what waits instead of growing with every run ever filed.
        let mut q = Timeline::default();
        for i in 0..100 {
            q.file(SimTime(i), i);
        }
        for t in 0..100_000u64 {
            assert!(q.pop_due(SimTime(t)).is_some());
            q.file(SimTime(t + 100), 0);
        }
        assert_eq!(q.len(), 100);
        assert!(q.runs.capacity() <= 256, "capacity {}", q.runs.capacity());
    }
}
