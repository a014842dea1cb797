//! The agenda: everything that will happen, ordered by (virtual time, arrival order).
//!
//! Every timer any actor sets and every packet in flight is an entry here, and the network actor
//! is the only thing that sleeps on the tokio clock — until the earliest entry. Two rules make the
//! run deterministic: entries due at the same instant come out in the order they were added, and
//! nothing else (no tokio timer wheel, no hash order) decides who goes first.

use crate::sim::clock::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A min-queue of `E` by time, FIFO among equal times.
pub struct Agenda<E> {
    heap: BinaryHeap<Slot<E>>,
    next_seq: u64,
}

struct Slot<E> {
    at: SimTime,
    seq: u64,
    entry: E,
}

// BinaryHeap is a max-heap: reverse the order so the earliest (then oldest) entry is on top.
impl<E> Ord for Slot<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}
impl<E> PartialOrd for Slot<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> PartialEq for Slot<E> {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}
impl<E> Eq for Slot<E> {}

impl<E> Default for Agenda<E> {
    fn default() -> Self {
        Agenda { heap: BinaryHeap::new(), next_seq: 0 }
    }
}

impl<E> Agenda<E> {
    pub fn push(&mut self, at: SimTime, entry: E) {
        self.next_seq += 1;
        self.heap.push(Slot { at, seq: self.next_seq, entry });
    }

    /// When the earliest entry is due.
    pub fn next_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|s| s.at)
    }

    /// Removes and returns the earliest entry if it is due at or before `now`.
    pub fn pop_due(&mut self, now: SimTime) -> Option<(SimTime, E)> {
        if self.heap.peek()?.at > now {
            return None;
        }
        self.heap.pop().map(|s| (s.at, s.entry))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_out_by_time_then_by_arrival() {
        let mut a = Agenda::default();
        a.push(SimTime(5), "late");
        a.push(SimTime(1), "first");
        a.push(SimTime(1), "second");
        a.push(SimTime(3), "middle");
        let mut out = vec![];
        while let Some((_, e)) = a.pop_due(SimTime(10)) {
            out.push(e);
        }
        assert_eq!(out, ["first", "second", "middle", "late"]);
    }

    #[test]
    fn nothing_is_popped_before_it_is_due() {
        let mut a = Agenda::default();
        a.push(SimTime(5), ());
        assert!(a.pop_due(SimTime(4)).is_none());
        assert_eq!(a.next_time(), Some(SimTime(5)));
        assert!(a.pop_due(SimTime(5)).is_some());
    }
}
