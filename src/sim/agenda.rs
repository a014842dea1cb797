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
///
/// The heap orders small `(time, seq, slot)` keys; the entries themselves (packets can be a few
/// hundred bytes) stay put in a slab, so sifting never moves them.
pub struct Agenda<E> {
    heap: BinaryHeap<Key>,
    slab: Vec<Option<E>>,
    free: Vec<usize>,
    next_seq: u64,
}

#[derive(PartialEq, Eq)]
struct Key {
    at: SimTime,
    seq: u64,
    slot: usize,
}

// BinaryHeap is a max-heap: reverse the order so the earliest (then oldest) entry is on top.
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Default for Agenda<E> {
    fn default() -> Self {
        Agenda { heap: BinaryHeap::new(), slab: Vec::new(), free: Vec::new(), next_seq: 0 }
    }
}

impl<E> Agenda<E> {
    pub fn push(&mut self, at: SimTime, entry: E) {
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot] = Some(entry);
                slot
            }
            None => {
                self.slab.push(Some(entry));
                self.slab.len() - 1
            }
        };
        self.heap.push(Key { at, seq: self.next_seq, slot });
    }

    /// When the earliest entry is due.
    pub fn next_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|k| k.at)
    }

    /// Removes and returns the earliest entry if it is due at or before `now`.
    pub fn pop_due(&mut self, now: SimTime) -> Option<(SimTime, E)> {
        if self.heap.peek()?.at > now {
            return None;
        }
        let key = self.heap.pop()?;
        self.free.push(key.slot);
        let entry = self.slab[key.slot].take().expect("every key has its entry");
        Some((key.at, entry))
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
