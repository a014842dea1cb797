//! The agenda: everything that will happen, ordered by (virtual time, arrival order).
//!
//! Every timer any actor sets and every packet in flight is an entry here, and the network's driver
//! is the only thing that moves virtual time — to the earliest entry, once every actor is idle.
//! Two rules make the run deterministic: entries due at the same instant come out in the order
//! they were added, and nothing else (no tokio timer wheel, no hash order) decides who goes
//! first.

use crate::sim::clock::SimTime;
use std::collections::BTreeMap;

/// How many milliseconds the wheel spans: 2^17 ms, about 131 s. Nearly every timer the models
/// set lands inside it — RocketMQ's 30 s registration and route poll, the 5 s scan and beats,
/// Nacos's 15/30 s health thresholds, and Netty's 120 s idle checks on both ends of every
/// RocketMQ channel (`serverChannelMaxIdleTimeSeconds`, `clientChannelMaxIdleTimeSeconds`) — so
/// only the rare long one (a 3-min Distro expiry, a fault minutes ahead) waits in the overflow
/// tree. With 2^16 ms the idle checks went to the tree: 64,000 of them in the RocketMQ bench's
/// hour, each an insert of its own vector and a removal when the ring turned to it, 2.4% of
/// that bench's instructions. The slot table is 512 KB; only the lines of the slots in use are
/// touched.
const SLOTS: usize = 1 << 17;
const WORDS: usize = SLOTS / 64;
/// No bucket in this slot.
const EMPTY: u32 = u32::MAX;

/// A min-queue of `E` by time, FIFO among equal times.
///
/// A timing wheel of instants: one FIFO bucket per distinct instant, found through a ring of
/// millisecond slots covering `[base, base + SLOTS)`. A simulation puts many entries on the same
/// instant (a provider's hundred beats, a broker's registrations to every name server); a bucket
/// takes them in and hands them out without re-sorting anything, and finding an instant's bucket
/// is an index, not a tree search. The earliest instant is found through two levels of bitmaps
/// (a bit per slot, a bit per word of slots): a few word scans from the current instant.
///
/// Instants beyond the ring, and any before `base` (nothing pushes into the past today, but the
/// agenda does not rely on it), wait in a tree and move into the ring when it turns to them.
/// All entries of one instant are always in the same place, which is what keeps them FIFO: an
/// instant moves into the ring the moment the ring reaches it, before anyone can push to it there.
///
/// Emptied buckets are kept for reuse: a busy instant fills one with a hundred entries, and
/// growing a fresh one to that size, instant after instant, was a real share of a big run.
pub struct Agenda<E> {
    /// The earliest instant the ring covers; only moves forward, to the instant last popped.
    base: u64,
    /// Slot `t % SLOTS` → index into `buckets` of instant `t`'s entries, or `EMPTY`.
    slot: Box<[u32]>,
    /// A bit per slot that holds a bucket, and a bit per non-zero word of that.
    bits: Box<[u64]>,
    summary: [u64; WORDS / 64],
    /// Plain vectors, not deques: an instant's entries are only ever added at the back and
    /// taken all at once (`take_due`), and a deque's wrap-around arithmetic on every push and
    /// every pop was about 1% of the Nacos bench.
    buckets: Vec<Vec<E>>,
    /// Indices in `buckets` free for reuse.
    free: Vec<u32>,
    /// Instants outside the ring.
    far: BTreeMap<SimTime, Vec<E>>,
    /// No instant in `far` is earlier than this (`u64::MAX`: there is none). A lower bound, not
    /// always the earliest (taking an entry out of the tree leaves it be), made exact whenever
    /// the tree is searched. It spares the tree two searches a busy run would otherwise make at
    /// nearly every instant while the tree holds the odd far timer: whether the ring's turn
    /// reaches one of its instants, and whether one of them comes before the ring's earliest.
    /// The RocketMQ bench kept a couple of thousand idle checks two minutes out there while the
    /// ring spanned 65 s; the second search alone, down three levels of nodes, was 2% of its
    /// instructions.
    far_low: u64,
    /// The earliest instant with an entry, kept up to date: the driver asks for it before every
    /// entry it takes out.
    first: Option<SimTime>,
    len: usize,
}

/// A bucket with room for one more entry, for a caller that writes the entry in place (see
/// [`Agenda::room`]).
pub struct Room<'a, E>(&'a mut Vec<E>);

impl<E> Room<'_, E> {
    /// Where the entry goes: past the bucket's last entry, inside its allocation.
    #[inline(always)]
    pub fn slot(&mut self) -> *mut E {
        let len = self.0.len();
        assert!(len < self.0.capacity(), "a room is made with space for one entry");
        // SAFETY: `len < capacity`, so the offset stays inside the bucket's allocation.
        unsafe { self.0.as_mut_ptr().add(len) }
    }

    /// The entry at `slot` is written: it joins its instant.
    ///
    /// # Safety
    /// The whole of `*slot()` holds a valid `E`.
    #[inline(always)]
    pub unsafe fn filled(self) {
        let len = self.0.len();
        // SAFETY: the caller wrote entry `len`, inside the capacity `slot` checked.
        unsafe { self.0.set_len(len + 1) };
    }
}

/// At most this many emptied buckets keep memory grown for a burst, so that one burst does not
/// hold its memory for the rest of the run.
const SPARE_BUCKETS: usize = 64;

/// Beyond the spare ones, an emptied bucket keeps room for up to this many entries. Steady
/// instants of a dozen or so are common: ten producers sending on the same 10 ms grid put ten
/// sends, and 3 s later ten request alarms, on one instant. Cut back to `KEPT_CAPACITY` each
/// time, such a bucket grew again at its next use: a million reallocations an hour in the
/// bench's producers case. Bursts larger than this (a provider's hundred beats) are still
/// given back.
const KEPT_GROWN: usize = 32;

/// Every emptied bucket keeps room for this many entries: a run's routine instants hold one to
/// a few each, and thousands of them are pending at once (a thousand brokers' registration
/// timers over 30 s), so spare buckets without memory meant an allocation for nearly every
/// push. The memory this keeps is bounded by the most instants ever pending at once.
const KEPT_CAPACITY: usize = 8;

impl<E> Default for Agenda<E> {
    fn default() -> Self {
        Agenda {
            base: 0,
            slot: vec![EMPTY; SLOTS].into_boxed_slice(),
            bits: vec![0; WORDS].into_boxed_slice(),
            summary: [0; WORDS / 64],
            buckets: Vec::new(),
            free: Vec::new(),
            far: BTreeMap::new(),
            far_low: u64::MAX,
            first: None,
            len: 0,
        }
    }
}

impl<E> Agenda<E> {
    /// Every timer set comes here, and every entry but a packet on its way (which `room` takes):
    /// the ring's case is inlined into its callers, the tree's is a call (as one out-of-line
    /// function, the call was 37 instructions a push, 2.6% of the Nacos bench).
    #[inline(always)]
    pub fn push(&mut self, at: SimTime, entry: E) {
        self.bucket_for(at).push(entry);
    }

    /// Room for one more entry at `at`, which the caller writes in place (and must: the entry is
    /// counted already).
    ///
    /// For the one entry every packet makes. Built as a value and pushed, an entry is put
    /// together on the stack, field by field, and then copied into its bucket in 16-byte pieces,
    /// each read back at once across several of the narrower stores just made. The CPU cannot
    /// forward such a read from its store buffer, and waits for those stores to reach its cache:
    /// that wait was half of the push's sampled time, 5% of the Nacos bench. Neither `Vec::push`
    /// after a `reserve` nor a separate bucket look-up let the compiler build the entry in the
    /// bucket itself.
    #[inline(always)]
    pub fn room(&mut self, at: SimTime) -> Room<'_, E> {
        let bucket = self.bucket_for(at);
        bucket.reserve(1);
        Room(bucket)
    }

    /// The bucket of instant `at`, made if it has none, with the entry about to join it counted.
    #[inline(always)]
    fn bucket_for(&mut self, at: SimTime) -> &mut Vec<E> {
        self.len += 1;
        if self.first.is_none_or(|first| at < first) {
            self.first = Some(at);
        }
        if !self.in_ring(at) {
            return self.far_bucket(at);
        }
        let s = at.0 as usize % SLOTS;
        // Whether the instant has a bucket is asked of the bitmap (16 KB, which stays in the
        // caches), not of the slot table (512 KB): a timer 30 s or 120 s ahead nearly always
        // starts an instant of its own, and reading its slot first was a cache miss per timer
        // (4.5% of the RocketMQ bench's simulated last-level misses). A new instant's slot is
        // only written.
        let b = if self.has_bit(s) {
            self.slot[s]
        } else {
            // An instant more than half the ring ahead (Netty's 120 s idle checks, one entry
            // each) gets a vector made to size, not a spare bucket with the room it kept for a
            // busy instant: tens of thousands of them wait at once in a large fleet, and with
            // spares an 8x RocketMQ hour held 13.9 MB of room for 1.9 MB of entries.
            let far = at.0 - self.base >= (SLOTS / 2) as u64;
            self.occupy(s, far.then(Vec::new))
        };
        &mut self.buckets[b as usize]
    }

    #[inline(never)]
    fn far_bucket(&mut self, at: SimTime) -> &mut Vec<E> {
        self.far_low = self.far_low.min(at.0);
        self.far.entry(at).or_default()
    }

    /// When the earliest entry is due.
    pub fn next_time(&self) -> Option<SimTime> {
        self.first
    }

    /// Finds the earliest instant anew, after one was emptied.
    fn find_first(&mut self) -> Option<SimTime> {
        let ring = self.ring_first();
        if ring.is_some_and(|r| r.0 < self.far_low) {
            return ring;
        }
        let far = self.far.keys().next().copied();
        self.far_low = far.map_or(u64::MAX, |t| t.0);
        match (ring, far) {
            (Some(r), Some(f)) => Some(r.min(f)),
            (r, f) => r.or(f),
        }
    }

    /// Removes and returns the earliest entry if it is due at or before `now`. One at a time,
    /// each shifting the rest of its instant forward: the driver takes whole instants
    /// (`take_due`); this is for tests that follow the agenda entry by entry, and built only
    /// for them, so that nothing on a run's path can come to shift buckets one entry at a time.
    #[cfg(test)]
    pub fn pop_due(&mut self, now: SimTime) -> Option<(SimTime, E)> {
        let at = self.next_time().filter(|at| *at <= now)?;
        let entry = self.take(at, |bucket| Some(bucket.remove(0))).expect("buckets are never left empty");
        self.advance(at);
        Some((at, entry))
    }

    /// Moves every entry of the earliest instant, if it is due at or before `now`, to `out`
    /// (which must be empty), in order; false when nothing is due. An instant's hundred beats
    /// then cost one slot lookup, not a hundred, and each entry moves once more, not through
    /// the bookkeeping of a pop each. `out` and the instant's bucket swap buffers, so neither
    /// allocates. Entries pushed for `now` meanwhile go to a new bucket, which the next call
    /// takes: they come out after these, as they would have from one bucket.
    pub fn take_due(&mut self, now: SimTime, out: &mut Vec<E>) -> bool {
        debug_assert!(out.is_empty(), "the caller hands an empty buffer");
        let Some(at) = self.next_time().filter(|at| *at <= now) else { return false };
        if self.in_ring(at) {
            let s = at.0 as usize % SLOTS;
            std::mem::swap(&mut self.buckets[self.slot[s] as usize], out);
            self.release_if_empty(s);
        } else {
            *out = self.far.remove(&at).expect("the earliest instant has a bucket");
        }
        self.len -= out.len();
        self.first = self.find_first();
        self.advance(at);
        true
    }

    /// Takes out the first entry at `at` that `pick` chooses, if there is one. An instant left
    /// with nothing is gone, so nobody wakes up for it.
    pub fn remove(&mut self, at: SimTime, pick: impl Fn(&E) -> bool) -> Option<E> {
        self.take(at, |bucket| {
            let i = bucket.iter().position(pick)?;
            Some(bucket.remove(i))
        })
    }

    /// Takes what `out` takes from instant `at`'s bucket, wherever the bucket is, and forgets
    /// the instant if that emptied it.
    #[inline]
    fn take(&mut self, at: SimTime, out: impl FnOnce(&mut Vec<E>) -> Option<E>) -> Option<E> {
        // The entry stays in its `Option` until it is returned: an entry is a hundred bytes,
        // and each unwrap and re-wrap on the driver's path was a copy of it.
        let entry;
        let emptied = if self.in_ring(at) {
            let s = at.0 as usize % SLOTS;
            let b = self.slot[s];
            if b == EMPTY {
                return None;
            }
            entry = out(&mut self.buckets[b as usize]);
            entry.is_some() && self.release_if_empty(s)
        } else {
            let bucket = self.far.get_mut(&at)?;
            entry = out(bucket);
            let emptied = entry.is_some() && bucket.is_empty();
            if emptied {
                self.far.remove(&at);
            }
            emptied
        };
        if emptied && self.first == Some(at) {
            self.first = self.find_first();
        }
        if entry.is_some() {
            self.len -= 1;
        }
        entry
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn in_ring(&self, at: SimTime) -> bool {
        at.0 >= self.base && at.0 - self.base < SLOTS as u64
    }

    /// The ring turns to `at` (the instant just popped): instants of the tree that it now
    /// covers move in, before anything else can be pushed to them.
    fn advance(&mut self, at: SimTime) {
        if at.0 <= self.base {
            return;
        }
        self.base = at.0;
        if self.far_low >= self.base + SLOTS as u64 {
            return;
        }
        // An instant in the past stays in the tree, where `next_time` still finds it first.
        // (Nothing pushes into the past today; if something did, every turn would search.)
        while let Some(t) = self.far.range(SimTime(self.base)..).next().map(|(t, _)| *t) {
            if !self.in_ring(t) {
                break;
            }
            let bucket = self.far.remove(&t).expect("just found");
            let s = t.0 as usize % SLOTS;
            debug_assert_eq!(self.slot[s], EMPTY, "an instant is in one place only");
            self.occupy(s, Some(bucket));
        }
        self.far_low = self.far.keys().next().map_or(u64::MAX, |t| t.0);
    }

    /// Gives empty slot `s` a bucket: `moved` (an instant's entries from the tree, or a vector
    /// made to size), or else a spare one, which keeps the capacity it grew to.
    #[inline]
    fn occupy(&mut self, s: usize, moved: Option<Vec<E>>) -> u32 {
        let b = match (self.free.pop(), moved) {
            (Some(b), None) => b,
            (spare, moved) => self.occupy_rare(spare, moved),
        };
        self.slot[s] = b;
        self.set_bit(s);
        b
    }

    /// `occupy` with entries moved in from the tree or a vector made to size for an instant far
    /// ahead, or with no spare bucket left.
    #[cold]
    #[inline(never)]
    fn occupy_rare(&mut self, spare: Option<u32>, moved: Option<Vec<E>>) -> u32 {
        match spare {
            Some(b) => {
                if let Some(bucket) = moved {
                    self.buckets[b as usize] = bucket;
                }
                b
            }
            None => {
                self.buckets.push(moved.unwrap_or_default());
                (self.buckets.len() - 1) as u32
            }
        }
    }

    /// Frees slot `s`'s bucket if it has no entries left; says whether it did. Once or twice an
    /// instant, as `occupy` is: both keep their rare parts out of line. With them in, saving
    /// and restoring registers for them was a quarter of this function's 64 instructions a
    /// call; the two cost 4% of the RocketMQ bench.
    fn release_if_empty(&mut self, s: usize) -> bool {
        let b = self.slot[s];
        let bucket = &self.buckets[b as usize];
        if !bucket.is_empty() {
            return false;
        }
        let grown = bucket.capacity() > KEPT_GROWN;
        self.slot[s] = EMPTY;
        self.clear_bit(s);
        if grown && self.free.len() >= SPARE_BUCKETS {
            self.shrink_bucket(b);
        }
        self.free.push(b);
        true
    }

    /// Gives back the memory of a bucket that grew for a burst.
    #[cold]
    #[inline(never)]
    fn shrink_bucket(&mut self, b: u32) {
        self.buckets[b as usize].shrink_to(KEPT_CAPACITY);
    }

    fn has_bit(&self, s: usize) -> bool {
        self.bits[s / 64] & (1 << (s % 64)) != 0
    }

    fn set_bit(&mut self, s: usize) {
        self.bits[s / 64] |= 1 << (s % 64);
        self.summary[s / 4096] |= 1 << (s / 64 % 64);
    }

    fn clear_bit(&mut self, s: usize) {
        self.bits[s / 64] &= !(1 << (s % 64));
        if self.bits[s / 64] == 0 {
            self.summary[s / 4096] &= !(1 << (s / 64 % 64));
        }
    }

    /// The earliest instant in the ring: the first set slot at or after `base`'s, going round.
    fn ring_first(&self) -> Option<SimTime> {
        let start = self.base as usize % SLOTS;
        let s = self.next_slot(start, SLOTS).or_else(|| self.next_slot(0, start))?;
        let ahead = (s + SLOTS - start) % SLOTS;
        Some(SimTime(self.base + ahead as u64))
    }

    /// The first set slot in `[from, to)`.
    fn next_slot(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        // The rest of `from`'s own word first.
        let w = from / 64;
        let here = self.bits[w] & (!0u64 << (from % 64));
        if here != 0 {
            let s = w * 64 + here.trailing_zeros() as usize;
            return (s < to).then_some(s);
        }
        // Then the next non-empty word, found through the summary.
        let mut word = w + 1;
        while word * 64 < to {
            let group = word / 64;
            let rest = self.summary[group] & (!0u64 << (word % 64));
            if rest != 0 {
                let found = group * 64 + rest.trailing_zeros() as usize;
                let s = found * 64 + self.bits[found].trailing_zeros() as usize;
                return (s < to).then_some(s);
            }
            word = (group + 1) * 64;
        }
        None
    }
}

#[cfg(test)]
mod tests;
