//! `BrokerData.brokerAddrs`: a group's broker ids and addresses, kept inside the group.
//!
//! Java's is a `HashMap<Long, String>`; every place that shows or walks it here goes in id order
//! (the lowest id is the group's master or its acting master), so it was a `BTreeMap`. A group
//! holds a master and a slave or two, and a `BTreeMap` keeps even one entry in a node of its own,
//! allocated apart from the group: every registration reads the group's ids (`registerBroker`
//! steps 4 and 5), and that node was one more cache line to fetch each time, 30 s after the
//! group's last registration had left it (docs/speed-history.md, "A channel in one line").
//! This is the same map as a short sorted list whose first two entries live in the group itself.

use crate::sim::name::Name;
use serde::{Serialize, Serializer};
use smallvec::SmallVec;
use std::fmt;

/// Broker id → address, in id order: a `BTreeMap<u64, Name>` for the handful of entries a group
/// has (see the module docs).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BrokerAddrs(SmallVec<[(u64, Name); 2]>);

impl BrokerAddrs {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn find(&self, id: u64) -> Result<usize, usize> {
        self.0.binary_search_by_key(&id, |(k, _)| *k)
    }

    pub fn get(&self, id: &u64) -> Option<&Name> {
        self.find(*id).ok().map(|i| &self.0[i].1)
    }

    pub fn get_mut(&mut self, id: &u64) -> Option<&mut Name> {
        self.find(*id).ok().map(|i| &mut self.0[i].1)
    }

    pub fn contains_key(&self, id: &u64) -> bool {
        self.find(*id).is_ok()
    }

    /// Sets `id`'s address; returns the one it replaced, as `Map.put` does.
    pub fn insert(&mut self, id: u64, addr: Name) -> Option<Name> {
        match self.find(id) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, addr)),
            Err(i) => {
                self.0.insert(i, (id, addr));
                None
            }
        }
    }

    pub fn remove(&mut self, id: &u64) -> Option<Name> {
        self.find(*id).ok().map(|i| self.0.remove(i).1)
    }

    /// The lowest id and its address, taken out.
    pub fn pop_first(&mut self) -> Option<(u64, Name)> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }

    /// Keeps the entries `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&u64, &mut Name) -> bool) {
        self.0.retain(|(id, addr)| keep(id, addr));
    }

    /// In id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&u64, &Name)> + ExactSizeIterator + Clone {
        self.0.iter().map(|(id, addr)| (id, addr))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &u64> + ExactSizeIterator + Clone {
        self.0.iter().map(|(id, _)| id)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Name> + ExactSizeIterator + Clone {
        self.0.iter().map(|(_, addr)| addr)
    }
}

impl<'a> IntoIterator for &'a BrokerAddrs {
    type Item = (&'a u64, &'a Name);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (u64, Name)>, fn(&'a (u64, Name)) -> (&'a u64, &'a Name)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(id, addr)| (id, addr))
    }
}

impl FromIterator<(u64, Name)> for BrokerAddrs {
    /// A later entry for the same id replaces the earlier one, as in a map.
    fn from_iter<I: IntoIterator<Item = (u64, Name)>>(entries: I) -> Self {
        let mut addrs = BrokerAddrs::new();
        for (id, addr) in entries {
            addrs.insert(id, addr);
        }
        addrs
    }
}

impl<const N: usize> From<[(u64, Name); N]> for BrokerAddrs {
    fn from(entries: [(u64, Name); N]) -> Self {
        entries.into_iter().collect()
    }
}

/// `addrs[&id]`: the address of `id`, which must be there, as a map's index.
impl std::ops::Index<&u64> for BrokerAddrs {
    type Output = Name;
    fn index(&self, id: &u64) -> &Name {
        self.get(id).expect("no such broker id in the group")
    }
}

/// Shown as the map it is: `{0: "10.0.0.1:10911", 1: ...}`, as the `BTreeMap` was.
impl fmt::Debug for BrokerAddrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Written as the map it is, in id order, as the `BTreeMap` was.
impl Serialize for BrokerAddrs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every operation answers as a `BTreeMap` given the same operations answers, entries in
    /// the same order, over ids that land before, between, after and on existing ones.
    #[test]
    fn answers_as_a_btreemap_does() {
        let mut ours = BrokerAddrs::new();
        let mut map: BTreeMap<u64, Name> = BTreeMap::new();
        let addr = |i: u64| Name::new(&format!("10.0.0.{i}:10911"));
        let ops: [(char, u64); 16] = [
            ('i', 2),
            ('i', 0),
            ('i', 5),
            ('i', 2),
            ('r', 9),
            ('i', 1),
            ('r', 2),
            ('p', 0),
            ('i', 7),
            ('k', 3),
            ('i', 3),
            ('r', 0),
            ('p', 0),
            ('i', 0),
            ('k', 6),
            ('i', 6),
        ];
        for (step, (op, id)) in ops.into_iter().enumerate() {
            match op {
                'i' => assert_eq!(ours.insert(id, addr(step as u64)), map.insert(id, addr(step as u64))),
                'r' => assert_eq!(ours.remove(&id), map.remove(&id)),
                'p' => assert_eq!(ours.pop_first(), map.pop_first()),
                _ => {
                    ours.retain(|&k, _| k < id);
                    map.retain(|&k, _| k < id);
                }
            }
            assert!(ours.iter().eq(map.iter()), "step {step}: {ours:?} against {map:?}");
            assert_eq!(format!("{ours:?}"), format!("{map:?}"));
            assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&map).unwrap());
            for probe in 0..10 {
                assert_eq!(ours.get(&probe), map.get(&probe));
                assert_eq!(ours.contains_key(&probe), map.contains_key(&probe));
            }
        }
        assert!(ours.len() > 2, "the test reached past the entries kept in line");
    }
}
