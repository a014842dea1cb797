//! [`KeyedMap`]: a hash map that is read in key order; [`KeyedSet`], the set made the same way.
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
//! Lookups take anything [`Equivalent`] to the key. The route tables are keyed by interned
//! names (`crate::sim::name::Name`), whose hash is stored, not computed from the text: such a
//! map is looked up by a `Name`, never by a `&str`, and a name nobody made is simply absent.

use indexmap::{Equivalent, IndexMap, IndexSet};
use rustc_hash::FxBuildHasher;
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::hash::{BuildHasher, Hash};

/// Where `key` is in `map`, trying position `guess` first: one key compare when the guess
/// holds, a hash look-up when it does not (or is out of range). The entry at a good guess is
/// read anyway once found, where a probe reads a hash slot that may have left the caches. For
/// callers that keep where a key was last found ([`KeyedMap::position_hinted`], the Nacos
/// server's last beat's client and instance).
#[inline(always)]
pub fn index_hinted<K: Hash + Eq, V, S: BuildHasher>(map: &IndexMap<K, V, S>, guess: usize, key: &K) -> Option<usize> {
    match map.get_index(guess) {
        Some((k, _)) if k == key => Some(guess),
        _ => map.get_index_of(key),
    }
}

/// A position a key had in a [`KeyedMap`] or a [`KeyedSet`], kept by a caller that looks the
/// same key up again and again (see [`KeyedMap::position_hinted`]). The default knows nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint(u32);

impl Default for Hint {
    fn default() -> Self {
        Hint(u32::MAX)
    }
}

impl Hint {
    /// A hint of the caller's choosing, right or wrong: for tests that check a wrong one
    /// changes nothing.
    #[cfg(test)]
    pub(crate) fn of_position(position: usize) -> Hint {
        Hint::of(position)
    }

    fn of(position: usize) -> Hint {
        u32::try_from(position).map_or_else(|_| Hint::default(), Hint)
    }

    fn at(self) -> usize {
        self.0 as usize
    }
}

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

    /// Where `key` is stored, for a caller that reads the same entry many times in one step:
    /// one hash and one key compare here, then [`Self::at`] and [`Self::at_mut`] cost neither.
    /// The position holds only until the next [`Self::remove`] (which moves the last entry into
    /// the hole); inserts leave it valid.
    pub fn position<Q: ?Sized + Hash + Equivalent<K>>(&self, key: &Q) -> Option<usize> {
        self.map.get_index_of(key)
    }

    /// [`Self::position`], trying `hint` first: the position this key was found at before.
    /// A name server meets each broker's keys again at its next registration, 30 s later, when
    /// the table's hash slots have left the caches: probing them missed the cache about once a
    /// lookup (7% of the RocketMQ bench's misses). The entry at a hint is read anyway once
    /// found, and its key says whether the hint still holds (a removal moves the last entry
    /// into the hole); one that does not costs one key compare more, and is renewed.
    pub fn position_hinted(&self, key: &K, hint: &mut Hint) -> Option<usize> {
        let found = index_hinted(&self.map, hint.at(), key)?;
        *hint = Hint::of(found);
        Some(found)
    }

    /// The value at a [`Self::position`]; panics if the position is out of range.
    pub fn at(&self, position: usize) -> &V {
        &self.map[position]
    }

    /// The value at a [`Self::position`], mutably; panics if the position is out of range.
    pub fn at_mut(&mut self, position: usize) -> &mut V {
        &mut self.map[position]
    }

    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.map.insert(key, value)
    }

    /// [`Self::insert`], returning the entry's [`Self::position`].
    pub fn insert_full(&mut self, key: K, value: V) -> usize {
        self.map.insert_full(key, value).0
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

    /// Keeps the entries `keep` says yes to, asking in key order (as `BTreeMap::retain` would):
    /// for a pass whose decisions depend on what it saw before.
    pub fn retain_sorted(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        let mut order: Vec<usize> = (0..self.map.len()).collect();
        let map = &self.map;
        order.sort_unstable_by_key(|&i| map.get_index(i).map(|(k, _)| k));
        let mut kept = vec![true; self.map.len()];
        for i in order {
            let (k, v) = self.map.get_index_mut(i).expect("an index below the length");
            kept[i] = keep(k, v);
        }
        // `retain` visits in storage order, the order of the indices above.
        let mut i = 0;
        self.map.retain(|_, _| {
            i += 1;
            kept[i - 1]
        });
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

/// A set with hash lookups and sorted iteration, as [`KeyedMap`] is a map: for the route
/// table's per-cluster sets of broker names, which every registration asks "is this name in?"
/// (`brokerNames.add` in Java) — a `BTreeSet` of 500 names answers that with a dozen string
/// compares, a hash set with one.
#[derive(Clone)]
pub struct KeyedSet<K> {
    set: IndexSet<K, FxBuildHasher>,
}

impl<K> Default for KeyedSet<K> {
    fn default() -> Self {
        KeyedSet { set: IndexSet::with_hasher(FxBuildHasher) }
    }
}

impl<K: Hash + Eq + Ord> KeyedSet<K> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    pub fn contains<Q: ?Sized + Hash + Equivalent<K>>(&self, key: &Q) -> bool {
        self.set.contains(key)
    }

    /// [`Self::contains`], trying `hint` first (see [`KeyedMap::position_hinted`]).
    pub fn contains_hinted(&self, key: &K, hint: &mut Hint) -> bool {
        if self.set.get_index(hint.at()) == Some(key) {
            return true;
        }
        match self.set.get_index_of(key) {
            Some(found) => {
                *hint = Hint::of(found);
                true
            }
            None => false,
        }
    }

    /// True if the key was not there before, as `BTreeSet::insert`.
    pub fn insert(&mut self, key: K) -> bool {
        self.set.insert(key)
    }

    /// True if the key was there. O(1); the storage order this disturbs is never observed.
    pub fn remove<Q: ?Sized + Hash + Equivalent<K>>(&mut self, key: &Q) -> bool {
        self.set.swap_remove(key)
    }

    /// The keys sorted, as a `BTreeSet` would yield them.
    pub fn iter(&self) -> std::vec::IntoIter<&K> {
        let mut keys: Vec<&K> = self.set.iter().collect();
        keys.sort_unstable();
        keys.into_iter()
    }

    /// A sorted copy, for comparisons with sets built elsewhere.
    pub fn to_btree(&self) -> BTreeSet<K>
    where
        K: Clone,
    {
        self.set.iter().cloned().collect()
    }
}

impl<'a, K: Hash + Eq + Ord> IntoIterator for &'a KeyedSet<K> {
    type Item = &'a K;
    type IntoIter = std::vec::IntoIter<&'a K>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<K: Hash + Eq + Ord> FromIterator<K> for KeyedSet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        KeyedSet { set: iter.into_iter().collect() }
    }
}

/// Equal when they hold the same keys, whatever order they were inserted in.
impl<K: Hash + Eq> PartialEq for KeyedSet<K> {
    fn eq(&self, other: &Self) -> bool {
        self.set == other.set
    }
}

impl<K: Hash + Eq> Eq for KeyedSet<K> {}

impl<K: Hash + Eq + Ord + fmt::Debug> fmt::Debug for KeyedSet<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<K: Hash + Eq + Ord + Serialize> Serialize for KeyedSet<K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests;
