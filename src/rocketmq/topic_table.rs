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
//!
//! # Finding a producer's topic
//!
//! A broker answers every `SEND_MESSAGE` after finding the message's topic here: 3.6 million
//! times an hour in the producers bench. A binary search by text read a hundred-odd topics'
//! names, seven of them per send, each from its own allocation. A send names its topic as an
//! interned [`Name`], so each list also keeps an index by `Name`, built on the first such
//! lookup and shared with the list: one hash probe and a pointer compare. The scenario's list
//! is one for the whole fleet, so is its index.

use crate::rocketmq::types::TopicConfig;
use crate::sim::name::Name;
use rustc_hash::FxHashMap;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::iter::Peekable;
use std::ops::{Deref, DerefMut};
use std::slice;
use std::sync::{Arc, OnceLock};

/// topic name -> `TopicConfig`, in name order (see the module comment).
#[derive(Clone, Default)]
pub struct TopicTable {
    /// Sorted by name; no name also in `shared`.
    own: TopicConfigs,
    /// Sorted by name, each name once: the scenario's list when it already was.
    shared: Arc<TopicConfigs>,
}

/// A list of topic configs, read as the `Vec` it holds, with an index by interned name made
/// when first asked (see the module comment). Changing the list drops the index.
#[derive(Default)]
pub struct TopicConfigs {
    configs: Vec<TopicConfig>,
    /// Topic name -> position in `configs` (the last, for a name listed twice).
    by_name: OnceLock<FxHashMap<Name, u32>>,
}

impl TopicConfigs {
    /// The config of topic `name`, through the index.
    pub fn find_named(&self, name: Name) -> Option<&TopicConfig> {
        let index = self.by_name.get_or_init(|| {
            self.configs.iter().enumerate().map(|(i, t)| (Name::new(&t.topic_name), i as u32)).collect()
        });
        index.get(&name).map(|&i| &self.configs[i as usize])
    }
}

impl Deref for TopicConfigs {
    type Target = Vec<TopicConfig>;

    fn deref(&self) -> &Vec<TopicConfig> {
        &self.configs
    }
}

impl DerefMut for TopicConfigs {
    fn deref_mut(&mut self) -> &mut Vec<TopicConfig> {
        self.by_name = OnceLock::new();
        &mut self.configs
    }
}

/// A copy of the configs; its index is made again when asked.
impl Clone for TopicConfigs {
    fn clone(&self) -> Self {
        self.configs.clone().into()
    }
}

impl From<Vec<TopicConfig>> for TopicConfigs {
    fn from(configs: Vec<TopicConfig>) -> Self {
        TopicConfigs { configs, by_name: OnceLock::new() }
    }
}

impl FromIterator<TopicConfig> for TopicConfigs {
    fn from_iter<I: IntoIterator<Item = TopicConfig>>(configs: I) -> Self {
        configs.into_iter().collect::<Vec<_>>().into()
    }
}

/// A shared list of default configs of these topics, for tests.
#[cfg(test)]
pub fn topic_list(names: &[&str]) -> Arc<TopicConfigs> {
    Arc::new(names.iter().map(|n| TopicConfig::new(n)).collect())
}

impl PartialEq for TopicConfigs {
    fn eq(&self, other: &Self) -> bool {
        self.configs == other.configs
    }
}

impl Eq for TopicConfigs {}

impl fmt::Debug for TopicConfigs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.configs.fmt(f)
    }
}

fn find<'a>(list: &'a [TopicConfig], name: &str) -> Option<&'a TopicConfig> {
    list.binary_search_by(|t| t.topic_name.as_str().cmp(name)).ok().map(|i| &list[i])
}

impl TopicTable {
    /// `builtin` then `topics`, each put in turn (a later config of a name replaces an earlier
    /// one); `topics` is shared rather than copied when it is sorted and names no builtin topic.
    pub fn build(builtin: Vec<TopicConfig>, topics: Arc<TopicConfigs>) -> Self {
        let sorted = topics.windows(2).all(|w| w[0].topic_name < w[1].topic_name);
        if sorted && builtin.iter().all(|b| find(&topics, &b.topic_name).is_none()) {
            TopicTable { own: Self::put_all(builtin), shared: topics }
        } else {
            TopicTable { own: Self::put_all(builtin.into_iter().chain(topics.iter().cloned())), shared: Arc::default() }
        }
    }

    /// Sorted by name, the last config of each name kept: a map's `insert` in turn.
    fn put_all(configs: impl IntoIterator<Item = TopicConfig>) -> TopicConfigs {
        let mut map = BTreeMap::new();
        for t in configs {
            map.insert(t.topic_name.clone(), t);
        }
        map.into_values().collect()
    }

    pub fn get(&self, name: &str) -> Option<&TopicConfig> {
        find(&self.own, name).or_else(|| find(&self.shared, name))
    }

    /// [`Self::get`] by interned name, through the lists' indexes: what a send asks.
    pub fn get_named(&self, name: Name) -> Option<&TopicConfig> {
        self.own.find_named(name).or_else(|| self.shared.find_named(name))
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

    /// The index a send looks its topic up by answers as the search by text does, for every
    /// name in the table and for names it lacks.
    fn finds_by_name_as_by_text(t: &TopicTable) {
        for name in ["a", "b", "c", "SELF", "absent"] {
            assert_eq!(t.get_named(Name::new(name)), t.get(name), "{name}");
        }
    }

    #[test]
    fn a_changed_list_is_indexed_again() {
        let mut list: TopicConfigs = vec![TopicConfig::new("a")].into();
        assert!(list.find_named(Name::new("a")).is_some());
        list.push(TopicConfig::new("b"));
        list.retain(|t| t.topic_name != "a");
        assert!(list.find_named(Name::new("a")).is_none(), "the old index is gone");
        assert_eq!(list.find_named(Name::new("b")).map(|t| t.topic_name.as_str()), Some("b"));
        assert_eq!(list.clone(), list);
    }

    #[test]
    fn a_sorted_scenario_list_is_shared_and_reads_as_the_map_would() {
        let builtin = vec![TopicConfig::new("b"), TopicConfig::new("SELF")];
        let topics = topic_list(&["a", "c"]);
        let t = TopicTable::build(builtin.clone(), Arc::clone(&topics));
        assert!(Arc::ptr_eq(&t.shared, &topics), "not copied");
        assert_eq!(names(&t), ["SELF", "a", "b", "c"]);
        finds_by_name_as_by_text(&t);
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
            let t = TopicTable::build(builtin.clone(), Arc::new(topics.clone().into()));
            assert!(t.shared.is_empty());
            finds_by_name_as_by_text(&t);
            assert!(t.iter().eq(as_map(&builtin, &topics).iter()), "{topics:?}");
        }
    }

    #[test]
    fn changes_copy_the_table_and_keep_the_order() {
        let mut t = TopicTable::build(vec![], topic_list(&["a", "c"]));
        finds_by_name_as_by_text(&t);
        t.insert(TopicConfig::new("b"));
        t.insert(TopicConfig { perm: 4, ..TopicConfig::new("c") });
        assert_eq!(names(&t), ["a", "b", "c"]);
        assert_eq!(t["c"].perm, 4);
        t.remove("a");
        assert_eq!(names(&t), ["b", "c"]);
        finds_by_name_as_by_text(&t);
        let narrowed = t.narrowed(perm::READ);
        assert_eq!((narrowed["b"].perm, narrowed["c"].perm, t["b"].perm), (perm::READ, perm::READ, perm::READ_WRITE));
    }
}
