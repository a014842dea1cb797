//! The health checker's index of due clients (`health.rs`), with its earliest tick at hand.

use crate::nacos::types::ClientKey;
use crate::sim::clock::SimTime;
use std::collections::BTreeSet;

/// One checker's index: an entry per client at (or before) its due tick, with the earliest tick
/// kept at hand. Every beat the server takes asks whether the checker must wake earlier than it
/// planned, and a `BTreeSet`'s first entry is a walk down the tree each time; the entries
/// themselves change only when a client's tick moves earlier or a check tick takes them.
#[derive(Default)]
pub(crate) struct DueIndex {
    entries: BTreeSet<(SimTime, ClientKey)>,
    /// `entries`' earliest tick, always equal to `entries.first()`'s.
    first: Option<SimTime>,
}

impl DueIndex {
    pub(crate) fn first(&self) -> Option<SimTime> {
        self.first
    }

    pub(crate) fn insert(&mut self, due: SimTime, key: &ClientKey) {
        self.entries.insert((due, key.clone()));
        self.first = Some(self.first.map_or(due, |f| f.min(due)));
    }

    pub(crate) fn remove(&mut self, at: SimTime, key: &ClientKey) {
        self.entries.remove(&(at, key.clone()));
        if self.first == Some(at) {
            self.first = self.entries.first().map(|(t, _)| *t);
        }
    }

    /// Takes the earliest entry if it is at or before `now`.
    pub(crate) fn pop_due(&mut self, now: SimTime) -> Option<ClientKey> {
        self.first.filter(|t| *t <= now)?;
        let (_, key) = self.entries.pop_first().expect("first is set only when there is an entry");
        self.first = self.entries.first().map(|(t, _)| *t);
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::DueIndex;
    use crate::nacos::types::ClientKey;
    use crate::sim::clock::SimTime;
    use crate::sim::rng::SimRng;

    /// The cached earliest tick stays equal to the set's first entry through any mix of the
    /// scheduler's moves: filing, moving a client earlier, and check ticks taking what is due.
    #[test]
    fn the_cached_first_tick_follows_the_entries() {
        let ip = crate::sim::name::Name::new("10.0.0.1");
        let keys: Vec<ClientKey> = (0..8).map(|p| ClientKey::new(&ip, 8000 + p)).collect();
        for seed in 0..50 {
            let mut rng = SimRng::new(seed);
            let mut index = DueIndex::default();
            let mut filed: Vec<Option<SimTime>> = vec![None; keys.len()];
            let mut now = SimTime::ZERO;
            for _ in 0..200 {
                let k = rng.up_to(keys.len() as u64 - 1) as usize;
                match rng.up_to(2) {
                    // File a client, or move it earlier, as `file` does.
                    0 | 1 => {
                        let due = SimTime(now.millis() + rng.up_to(30_000));
                        if filed[k].is_none_or(|f| due < f) {
                            if let Some(old) = filed[k] {
                                index.remove(old, &keys[k]);
                            }
                            index.insert(due, &keys[k]);
                            filed[k] = Some(due);
                        }
                    }
                    // A check tick: take everything due.
                    _ => {
                        now = SimTime(now.millis() + rng.up_to(10_000));
                        while let Some(key) = index.pop_due(now) {
                            let i = keys.iter().position(|k| *k == key).unwrap();
                            assert!(filed[i].is_some_and(|f| f <= now), "seed {seed}: popped an entry not due");
                            filed[i] = None;
                        }
                    }
                }
                assert_eq!(index.first(), index.entries.first().map(|(t, _)| *t), "seed {seed}");
                assert_eq!(index.first(), filed.iter().flatten().min().copied(), "seed {seed}");
            }
        }
    }
}
