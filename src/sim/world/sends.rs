//! What a producer's sends did, kept for the `sends` expectations that ask about it.
//!
//! A log is appended in time order, one record per finished send. An expectation reads the
//! sends that ended since its window opened, after every event while it is open, so reads must
//! not cost the whole log: counts are prefix sums (O(1)), the longest latency is read off maxima
//! kept per block of records (O(n/B + B)), and only the final verdict sorts latencies for its
//! percentiles.

use crate::sim::clock::{SimDuration, SimTime};

const BLOCK: usize = 256;

/// One finished send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendRecord {
    pub end: SimTime,
    /// From the send's start to its end (all attempts).
    pub latency: SimDuration,
    pub ok: bool,
    /// It took more than one attempt.
    pub retried: bool,
}

#[derive(Default, Debug)]
pub struct SendLog {
    records: Vec<SendRecord>,
    /// `ok_before[i]`: how many of `records[..i]` were ok (one longer than `records`).
    ok_before: Vec<u64>,
    retried_before: Vec<u64>,
    /// The longest latency in each full or partial block of `BLOCK` records.
    block_max: Vec<SimDuration>,
}

/// The sends that ended in a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendStats {
    pub sent: u64,
    pub ok: u64,
    pub retried: u64,
    pub max_latency: SimDuration,
}

impl SendStats {
    pub fn failed(&self) -> u64 {
        self.sent - self.ok
    }
}

impl SendLog {
    pub fn push(&mut self, r: SendRecord) {
        if self.ok_before.is_empty() {
            self.ok_before.push(0);
            self.retried_before.push(0);
        }
        let i = self.records.len();
        self.ok_before.push(self.ok_before[i] + u64::from(r.ok));
        self.retried_before.push(self.retried_before[i] + u64::from(r.retried));
        if i % BLOCK == 0 {
            self.block_max.push(r.latency);
        } else if let Some(m) = self.block_max.last_mut() {
            *m = (*m).max(r.latency);
        }
        self.records.push(r);
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Index of the first send that ended at or after `since`.
    fn first_since(&self, since: SimTime) -> usize {
        self.records.partition_point(|r| r.end < since)
    }

    /// The sends that ended at or after `since`.
    pub fn stats(&self, since: SimTime) -> SendStats {
        let (i, n) = (self.first_since(since), self.records.len());
        if i == n {
            return SendStats::default();
        }
        // Whole blocks from the first block boundary at or after `i`; the ragged start by hand.
        let boundary = i.div_ceil(BLOCK) * BLOCK;
        let head = self.records[i..boundary.min(n)].iter().map(|r| r.latency).max().unwrap_or_default();
        let blocks = self.block_max[boundary / BLOCK..].iter().copied().max().unwrap_or_default();
        SendStats {
            sent: (n - i) as u64,
            ok: self.ok_before[n] - self.ok_before[i],
            retried: self.retried_before[n] - self.retried_before[i],
            max_latency: head.max(blocks),
        }
    }

    /// The latencies of the sends that ended at or after `since`, sorted: for percentiles.
    pub fn latencies(&self, since: SimTime) -> Vec<SimDuration> {
        let mut l: Vec<SimDuration> = self.records[self.first_since(since)..].iter().map(|r| r.latency).collect();
        l.sort_unstable();
        l
    }
}

/// The `q`-th percentile (nearest rank) of sorted latencies.
pub fn percentile(sorted: &[SimDuration], q: u32) -> SimDuration {
    if sorted.is_empty() {
        return SimDuration::ZERO;
    }
    let rank = (sorted.len() * q as usize).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(end: u64, latency: u64, ok: bool, retried: bool) -> SendRecord {
        SendRecord { end: SimTime(end), latency: SimDuration(latency), ok, retried }
    }

    #[test]
    fn stats_count_only_the_sends_that_ended_in_the_window_and_find_their_longest() {
        let mut log = SendLog::default();
        // 1000 sends, one a millisecond; every 100th failed after a retry, taking 3 s.
        for k in 0..1000u64 {
            let slow = k % 100 == 99;
            log.push(rec(k, if slow { 3000 } else { 2 }, !slow, slow));
        }
        let all = log.stats(SimTime::ZERO);
        assert_eq!((all.sent, all.ok, all.failed(), all.retried), (1000, 990, 10, 10));
        assert_eq!(all.max_latency, SimDuration(3000));
        // From 500 on: 500 sends, 5 slow ones (599, 699, ..., 999).
        let late = log.stats(SimTime(500));
        assert_eq!((late.sent, late.failed()), (500, 5));
        // A window holding no slow send, across a block boundary (256..=300).
        let mut quiet = SendLog::default();
        for k in 0..301u64 {
            quiet.push(rec(k, if k < 200 { 900 } else { 2 }, true, false));
        }
        assert_eq!(quiet.stats(SimTime(200)).max_latency, SimDuration(2));
        assert_eq!(quiet.stats(SimTime(1000)), SendStats::default());
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let sorted: Vec<SimDuration> = (1..=100).map(SimDuration).collect();
        assert_eq!(percentile(&sorted, 50), SimDuration(50));
        assert_eq!(percentile(&sorted, 99), SimDuration(99));
        assert_eq!(percentile(&sorted, 100), SimDuration(100));
        assert_eq!(percentile(&[SimDuration(7)], 99), SimDuration(7));
    }
}
