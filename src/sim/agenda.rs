//! The agenda: everything that will happen, ordered by (virtual time, arrival order).
//!
//! Every timer any actor sets and every packet in flight is an entry here, and the network actor
//! is the only thing that sleeps on the tokio clock — until the earliest entry. Two rules make the
//! run deterministic: entries due at the same instant come out in the order they were added, and
//! nothing else (no tokio timer wheel, no hash order) decides who goes first.

use crate::sim::clock::SimTime;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};

/// A min-queue of `E` by time, FIFO among equal times.
///
/// A calendar of instants: one FIFO bucket per distinct instant. A simulation puts many entries
/// on the same instant (a provider's hundred beats, a broker's registrations to every name
/// server), and a bucket takes them in and hands them out without re-sorting anything.
///
/// Emptied buckets are kept for reuse: a busy instant fills one with a hundred entries, and
/// growing a fresh one to that size, instant after instant, was a real share of a big run.
pub struct Agenda<E> {
    buckets: BTreeMap<SimTime, VecDeque<E>>,
    spare: Vec<VecDeque<E>>,
    len: usize,
}

/// At most this many emptied buckets wait for reuse, so that one burst does not hold its
/// memory for the rest of the run.
const SPARE_BUCKETS: usize = 64;

impl<E> Default for Agenda<E> {
    fn default() -> Self {
        Agenda { buckets: BTreeMap::new(), spare: Vec::new(), len: 0 }
    }
}

impl<E> Agenda<E> {
    pub fn push(&mut self, at: SimTime, entry: E) {
        let Agenda { buckets, spare, .. } = self;
        buckets.entry(at).or_insert_with(|| spare.pop().unwrap_or_default()).push_back(entry);
        self.len += 1;
    }

    /// When the earliest entry is due.
    pub fn next_time(&self) -> Option<SimTime> {
        self.buckets.keys().next().copied()
    }

    /// Removes and returns the earliest entry if it is due at or before `now`.
    pub fn pop_due(&mut self, now: SimTime) -> Option<(SimTime, E)> {
        let mut first = self.buckets.first_entry()?;
        let at = *first.key();
        if at > now {
            return None;
        }
        let entry = first.get_mut().pop_front().expect("buckets are never left empty");
        if first.get().is_empty() {
            let bucket = first.remove();
            if self.spare.len() < SPARE_BUCKETS {
                self.spare.push(bucket);
            }
        }
        self.len -= 1;
        Some((at, entry))
    }

    /// Takes out the first entry at `at` that `pick` chooses, if there is one. An instant left
    /// with nothing is gone, so nobody wakes up for it.
    pub fn remove(&mut self, at: SimTime, pick: impl Fn(&E) -> bool) -> Option<E> {
        // One search of the calendar: the entry handle both edits the bucket and drops it.
        let Entry::Occupied(mut slot) = self.buckets.entry(at) else { return None };
        let i = slot.get().iter().position(pick)?;
        let entry = slot.get_mut().remove(i);
        if slot.get().is_empty() {
            let bucket = slot.remove();
            if self.spare.len() < SPARE_BUCKETS {
                self.spare.push(bucket);
            }
        }
        self.len -= 1;
        entry
    }

    /// How many entries are still due at or before `now` in the earliest instant's bucket (none
    /// once that bucket is a later instant's).
    pub fn due_len(&self, now: SimTime) -> usize {
        self.buckets.first_key_value().filter(|(at, _)| **at <= now).map_or(0, |(_, bucket)| bucket.len())
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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
    fn due_len_counts_only_what_is_due_now() {
        let mut a = Agenda::default();
        a.push(SimTime(1), 'a');
        a.push(SimTime(1), 'b');
        a.push(SimTime(2), 'c');
        assert_eq!(a.due_len(SimTime(1)), 2);
        a.pop_due(SimTime(1));
        a.pop_due(SimTime(1));
        assert_eq!(a.due_len(SimTime(1)), 0, "the next bucket is a later instant's");
    }

    #[test]
    fn a_removed_entry_leaves_no_instant_behind() {
        let mut a = Agenda::default();
        a.push(SimTime(5), 1);
        a.push(SimTime(9), 2);
        assert_eq!(a.remove(SimTime(5), |e| *e == 1), Some(1));
        assert_eq!(a.next_time(), Some(SimTime(9)), "nobody wakes at 5");
        assert_eq!(a.remove(SimTime(9), |e| *e == 3), None);
        assert_eq!(a.len(), 1);
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
