//! A broker's topic table (`TopicConfigManager.topicConfigTable`): topic name -> `TopicConfig`,
//! in name order, as a registration body carries it.
//!
//! # Why not a map
//!
//! Every broker of a scenario holds its topics twice if it copies them: once in the scenario's
//! `BrokerSpec.topics` (which the run shares, see `sim::scenario`), once in its own table. As a
//! `BTreeMap<String, TopicConfig>` the copy also stored each name twice (key and `topicName`):
//! at bench size, 1,000 brokers × 100 topics, that was a fifth of the run's heap. The table here
//! is two sorted lists: the broker's own few entries (the system topics, see
//! [`system_topics`](crate::rocketmq::broker::system_topics)) and, when the scenario's list is
//! already sorted and distinct from those, *that list itself*, shared by `Arc`. A scenario list
//! that is not (unsorted, a duplicate name, a name of a system topic) is copied into `own` with
//! a map's rules, a later entry replacing an earlier one, so the table reads the same either way.
//! A topic change copies the broker's table once (copy on write), as the map's `make_mut` did.
//!
//! Every entry's key is its `topic_name`: the model never keys a config by another name.

use crate::rocketmq::types::TopicConfig;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::iter::Peekable;
use std::slice;
use std::sync::Arc;

/// topic name -> `TopicConfig`, in name order (see the module comment).
#[derive(Clone, Default)]
pub struct TopicTable {
    /// Sorted by name; no name also in `shared`.
    own: Vec<TopicConfig>,
    /// Sorted by name, each name once: the scenario's list when it already was.
    shared: Arc<Vec<TopicConfig>>,
}

fn find<'a>(list: &'a [TopicConfig], name: &str) -> Option<&'a TopicConfig> {
    list.binary_search_by(|t| t.topic_name.as_str().cmp(name)).ok().map(|i| &list[i])
}

impl TopicTable {
    /// `builtin` then `topics`, each put in turn (a later config of a name replaces an earlier
    /// one); `topics` is shared rather than copied when it is sorted and names no builtin topic.
    pub fn build(builtin: Vec<TopicConfig>, topics: Arc<Vec<TopicConfig>>) -> Self {
        let sorted = topics.windows(2).all(|w| w[0].topic_name < w[1].topic_name);
        if sorted && builtin.iter().all(|b| find(&topics, &b.topic_name).is_none()) {
            TopicTable { own: Self::put_all(builtin), shared: topics }
        } else {
            TopicTable { own: Self::put_all(builtin.into_iter().chain(topics.iter().cloned())), shared: Arc::default() }
        }
    }

    /// Sorted by name, the last config of each name kept: a map's `insert` in turn.
    fn put_all(configs: impl IntoIterator<Item = TopicConfig>) -> Vec<TopicConfig> {
        let mut map = BTreeMap::new();
        for t in configs {
            map.insert(t.topic_name.clone(), t);
        }
        map.into_values().collect()
    }

    pub fn get(&self, name: &str) -> Option<&TopicConfig> {
        find(&self.own, name).or_else(|| find(&self.shared, name))
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn len(&self) -> usize {
        self.own.len() + self.shared.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The configs, in name order.
    pub fn values(&self) -> Values<'_> {
        Values { own: self.own.iter().peekable(), shared: self.shared.iter().peekable() }
    }

    /// The names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.values().map(|t| &t.topic_name)
    }

    /// `(name, config)` pairs, as the map's entries were.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &TopicConfig)> {
        self.values().map(|t| (&t.topic_name, t))
    }

    /// Puts `config` under its name (a copy of the table, unshared).
    pub fn insert(&mut self, config: TopicConfig) {
        *self = TopicTable { own: Self::put_all(self.values().cloned().chain([config])), shared: Arc::default() };
    }

    pub fn remove(&mut self, name: &str) {
        if self.contains_key(name) {
            let kept = self.values().filter(|t| t.topic_name != name).cloned().collect();
            *self = TopicTable { own: kept, shared: Arc::default() };
        }
    }

    /// Every config with `perm` narrowed to `permission` (a table of its own).
    pub fn narrowed(&self, permission: u32) -> Self {
        let own = self.values().map(|t| TopicConfig { perm: t.perm & permission, ..t.clone() }).collect();
        TopicTable { own, shared: Arc::default() }
    }
}

/// Entries put in turn, keyed by each config's own name (`key` must be it).
impl FromIterator<(String, TopicConfig)> for TopicTable {
    fn from_iter<I: IntoIterator<Item = (String, TopicConfig)>>(entries: I) -> Self {
        let configs = entries.into_iter().map(|(key, t)| {
            debug_assert_eq!(key, t.topic_name, "a topic table keys each config by its own name");
            t
        });
        TopicTable { own: Self::put_all(configs), shared: Arc::default() }
    }
}

/// The two sorted lists merged: the table's name order.
pub struct Values<'a> {
    own: Peekable<slice::Iter<'a, TopicConfig>>,
    shared: Peekable<slice::Iter<'a, TopicConfig>>,
}

impl<'a> Iterator for Values<'a> {
    type Item = &'a TopicConfig;

    fn next(&mut self) -> Option<&'a TopicConfig> {
        match (self.own.peek(), self.shared.peek()) {
            (Some(a), Some(b)) if b.topic_name < a.topic_name => self.shared.next(),
            (Some(_), _) => self.own.next(),
            (None, _) => self.shared.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.own.len() + self.shared.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Values<'_> {}

impl std::ops::Index<&str> for TopicTable {
    type Output = TopicConfig;

    fn index(&self, name: &str) -> &TopicConfig {
        self.get(name).unwrap_or_else(|| panic!("no topic {name}"))
    }
}

impl PartialEq for TopicTable {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.values().eq(other.values())
    }
}

impl Eq for TopicTable {}

/// Reads as the map it replaced did (`{"T": TopicConfig { .. }}`).
impl fmt::Debug for TopicTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Serialized as the map was: `{"T": {"topic_name": "T", ...}}`.
impl Serialize for TopicTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocketmq::types::perm;

    fn names(t: &TopicTable) -> Vec<&str> {
        t.keys().map(String::as_str).collect()
    }

    fn as_map(builtin: &[TopicConfig], topics: &[TopicConfig]) -> BTreeMap<String, TopicConfig> {
        builtin.iter().chain(topics).map(|t| (t.topic_name.clone(), t.clone())).collect()
    }

    #[test]
    fn a_sorted_scenario_list_is_shared_and_reads_as_the_map_would() {
        let builtin = vec![TopicConfig::new("b"), TopicConfig::new("SELF")];
        let topics: Arc<Vec<_>> = Arc::new(vec![TopicConfig::new("a"), TopicConfig::new("c")]);
        let t = TopicTable::build(builtin.clone(), Arc::clone(&topics));
        assert!(Arc::ptr_eq(&t.shared, &topics), "not copied");
        assert_eq!(names(&t), ["SELF", "a", "b", "c"]);
        let map = as_map(&builtin, &topics);
        assert!(t.iter().eq(map.iter()));
        assert_eq!(serde_json::to_string(&t).unwrap(), serde_json::to_string(&map).unwrap());
        assert_eq!(format!("{t:?}"), format!("{map:?}"));
    }

    #[test]
    fn any_other_list_is_copied_with_a_maps_rules() {
        let builtin = vec![TopicConfig::new("b")];
        let dup = TopicConfig { perm: 4, ..TopicConfig::new("a") };
        for topics in [
            vec![TopicConfig::new("c"), TopicConfig::new("a")],
            vec![TopicConfig::new("a"), dup.clone()],
            vec![TopicConfig { perm: 2, ..TopicConfig::new("b") }],
        ] {
            let t = TopicTable::build(builtin.clone(), Arc::new(topics.clone()));
            assert!(t.shared.is_empty());
            assert!(t.iter().eq(as_map(&builtin, &topics).iter()), "{topics:?}");
        }
    }

    #[test]
    fn changes_copy_the_table_and_keep_the_order() {
        let topics = Arc::new(vec![TopicConfig::new("a"), TopicConfig::new("c")]);
        let mut t = TopicTable::build(vec![], topics);
        t.insert(TopicConfig::new("b"));
        t.insert(TopicConfig { perm: 4, ..TopicConfig::new("c") });
        assert_eq!(names(&t), ["a", "b", "c"]);
        assert_eq!(t["c"].perm, 4);
        t.remove("a");
        assert_eq!(names(&t), ["b", "c"]);
        let narrowed = t.narrowed(perm::READ);
        assert_eq!((narrowed["b"].perm, narrowed["c"].perm, t["b"].perm), (perm::READ, perm::READ, perm::READ_WRITE));
    }
}
