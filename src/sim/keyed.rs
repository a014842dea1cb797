//! [`KeyedMap`]: a hash map that is read in key order.
//!
//! The route tables are looked up by name on every registration (a name server with 1,000
//! brokers takes 2,000 registrations a minute), and read *in order* only when something is
//! shown or compared: a route answer, a scan's expired list, a consistency report, a view. A
//! `BTreeMap` pays for the order on every lookup — twenty-odd string compares down a tree of a
//! thousand names — where a hash map pays one hash and one compare. This map hashes (Fx, with
//! no per-process seed, so nothing about it depends on the run) and sorts when it is iterated.
//!
//! So iteration stays deterministic and equal to the `BTreeMap` it replaces: [`KeyedMap::iter`],
//! `keys`, `values` and `&map` in a `for` are sorted by key. Code that provably does not depend
//! on order (a count, an `any`, a search whose matches it then sorts) may use
//! [`KeyedMap::unordered`] and skip the sort; its name is the reminder to check.
//!
//! Lookups take anything [`Equivalent`] to the key, so a two-part key such as `BrokerAddrInfo`
//! can be looked up from two borrowed `&str`s without building the owned key (see
//! `BrokerAddrRef`).

use indexmap::{Equivalent, IndexMap};
use rustc_hash::FxBuildHasher;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::hash::Hash;

/// A map with hash lookups and sorted iteration. See the module docs.
#[derive(Clone)]
pub struct KeyedMap<K, V> {
    map: IndexMap<K, V, FxBuildHasher>,
}

impl<K, V> Default for KeyedMap<K, V> {
    fn default() -> Self {
        KeyedMap { map: IndexMap::with_hasher(FxBuildHasher) }
    }
}

impl<K: Hash + Eq + Ord, V> KeyedMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get<Q: ?Sized + Hash + Equivalent<K>>(&self, key: &Q) -> Option<&V> {
        self.map.get(key)
    }

    pub fn get_mut<Q: ?Sized + Hash + Equivalent<K>>(&mut self, key: &Q) -> Option<&mut V> {
        self.map.get_mut(key)
    }

    pub fn contains_key<Q: ?Sized + Hash + Equivalent<K>>(&self, key: &Q) -> bool {
        self.map.contains_key(key)
    }

    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.map.insert(key, value)
    }

    /// Removes in O(1); the storage order this disturbs is never observed (iteration sorts).
    pub fn remove<Q: ?Sized + Hash + Equivalent<K>>(&mut self, key: &Q) -> Option<V> {
        self.map.swap_remove(key)
    }

    /// The entries sorted by key, as a `BTreeMap` would yield them.
    pub fn iter(&self) -> std::vec::IntoIter<(&K, &V)> {
        let mut entries: Vec<(&K, &V)> = self.map.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries.into_iter()
    }

    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }

    /// The entries in storage order, which depends on the history of inserts and removals.
    /// Only for work whose result does not depend on order.
    pub fn unordered(&self) -> impl Iterator<Item = (&K, &V)> {
        self.map.iter()
    }

    /// Every value, mutably, in storage order: only for edits that do not depend on order.
    pub fn values_mut_unordered(&mut self) -> impl Iterator<Item = &mut V> {
        self.map.values_mut()
    }

    /// The keys, cloned, in sorted order: for a pass that must edit the map as it goes.
    pub fn sorted_keys(&self) -> Vec<K>
    where
        K: Clone,
    {
        self.keys().cloned().collect()
    }

    /// A sorted copy, for comparisons with maps built elsewhere.
    pub fn to_btree(&self) -> BTreeMap<K, V>
    where
        K: Clone,
        V: Clone,
    {
        self.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

impl<'a, K: Hash + Eq + Ord, V> IntoIterator for &'a KeyedMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::vec::IntoIter<(&'a K, &'a V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// `map[key]`, like a `BTreeMap`'s: panics when the key is absent.
impl<K: Hash + Eq + Ord, V, Q: ?Sized + Hash + Equivalent<K>> std::ops::Index<&Q> for KeyedMap<K, V> {
    type Output = V;

    fn index(&self, key: &Q) -> &V {
        self.map.get(key).expect("no entry for this key in the KeyedMap")
    }
}

impl<K: Hash + Eq + Ord, V> FromIterator<(K, V)> for KeyedMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        KeyedMap { map: iter.into_iter().collect() }
    }
}

/// Equal when they hold the same entries, whatever order they were inserted in.
impl<K: Hash + Eq, V: PartialEq> PartialEq for KeyedMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.map == other.map
    }
}

impl<K: Hash + Eq, V: Eq> Eq for KeyedMap<K, V> {}

impl<K: Hash + Eq + Ord + fmt::Debug, V: fmt::Debug> fmt::Debug for KeyedMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Hash + Eq + Ord + Serialize, V: Serialize> Serialize for KeyedMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::KeyedMap;

    #[test]
    fn iteration_is_sorted_whatever_the_history_of_inserts_and_removals() {
        let mut map = KeyedMap::new();
        for name in ["broker-b", "broker-d", "broker-a", "broker-c", "broker-e"] {
            map.insert(name.to_string(), name.len());
        }
        // swap_remove moves the last entry into the hole: storage order is now scrambled.
        map.remove("broker-b");
        map.insert("broker-0".to_string(), 0);
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        assert_eq!(keys, ["broker-0", "broker-a", "broker-c", "broker-d", "broker-e"]);
        assert_eq!(
            format!("{map:?}"),
            r#"{"broker-0": 0, "broker-a": 8, "broker-c": 8, "broker-d": 8, "broker-e": 8}"#
        );
    }

    #[test]
    fn maps_with_the_same_entries_are_equal_in_any_insertion_order() {
        let a: KeyedMap<u32, &str> = [(1, "x"), (2, "y")].into_iter().collect();
        let b: KeyedMap<u32, &str> = [(2, "y"), (1, "x")].into_iter().collect();
        assert_eq!(a, b);
        let c: KeyedMap<u32, &str> = [(2, "y"), (1, "z")].into_iter().collect();
        assert_ne!(a, c);
    }
}
