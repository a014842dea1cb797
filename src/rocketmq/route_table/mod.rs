//! RocketMQ's name-server route table (`RouteInfoManager`, 5.x) as a pure state machine: the five
//! Java tables, the config flags that change their rules, and read access for observers.
//!
//! # Layout
//!
//! * `mod.rs` — the struct, [`NamesrvConfig`], accessors, the observer revision.
//! * `register.rs` — `registerBroker` (reference §2.1); its topic step 10 in `register_topics.rs`.
//! * `heartbeat.rs` — BROKER_HEARTBEAT and QUERY_DATA_VERSION, which only refresh (§2.2).
//! * `unregister.rs` — the batch `unRegisterBroker` (§2.3), `scanNotActiveBroker` (§2.4),
//!   `onChannelDestroy` / `setupUnRegisterRequest` (§2.5).
//! * `route.rs` — `pickupTopicRouteData` (§2.8), write-perm and topic admin (§2.9).
//! * `topics.rs` — the read-only topic-list queries (`getAllTopicList`, `getTopicsByCluster`,
//!   `getSystemTopicList`, the unit lists).
//! * `outcome.rs` — what each call did, as data; `explain.rs` narrates it.
//! * `queues.rs` — one topic's row of `topicQueueTable`, and why it is not a map.
//! * `memo.rs` — the steady-state skip of `registerBroker`'s topic loop, and why it is exact.
//! * `consistency.rs` — cross-table invariants (violations) versus odd-but-real states (quirks).
//! * `tests_*.rs` — one file per concept above; each test cites the Java method and step it
//!   pins. `tests_random.rs` drives seeded random histories (memo equivalence, revision).
//!
//! # How this differs from the Java class, and why it does not matter
//!
//! * **Locking.** Java guards the tables with one `ReentrantReadWriteLock`; every method here
//!   takes `&self` or `&mut self`, and the owning actor serialises calls, so one call is one
//!   critical section. A batch unregister is one call, just as it is one write-lock in Java.
//!   (`updateBrokerInfoUpdateTimestamp` and the scan take no lock in Java; serialising them
//!   only removes races the reference does not ask us to model.)
//! * **Effects are returned, not performed.** Java's scan closes channels and submits to
//!   `BatchUnregistrationService`; `notifyMinBrokerIdChanged` sends oneway RPCs. Here those
//!   decisions come back as [`ExpiredBroker`], [`UnregisterRequest`] and [`MinBrokerIdChange`]
//!   values and the actor carries them out (including the batch queue of §2.6).
//! * **Iteration order.** Java iterates `ConcurrentHashMap`s and `HashSet`s; we iterate
//!   `BTreeMap`s, so every list in an answer is sorted by key. Where Java's *result* depends on
//!   that order (the first match in `setupUnRegisterRequest` and the channel search, the point
//!   where the latent NPE of §2.3 step 6 aborts), we take the first in sorted order and say so.
//! * **Not modelled:** static-topic `topicQueueMappingInfoTable` (§2.1 step 10c; the wrapper
//!   type carries no mapping info, so step 10a's "no static topics" condition always holds),
//!   and the KV config.

mod consistency;
mod explain;
mod heartbeat;
mod memo;
mod outcome;
mod queues;
mod register;
mod register_topics;
mod route;
mod topics;
mod unregister;

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests_admin;
#[cfg(test)]
mod tests_consistency;
#[cfg(test)]
mod tests_expiry;
#[cfg(test)]
mod tests_heartbeat;
#[cfg(test)]
mod tests_random;
#[cfg(test)]
mod tests_register;
#[cfg(test)]
mod tests_register_topics;
#[cfg(test)]
mod tests_route;
#[cfg(test)]
mod tests_unregister;

pub use outcome::{
    BrokerRole, CleanupAbort, ExpiredBroker, MinBrokerIdChange, QueryDataVersionOutcome, RegisterBrokerResult,
    RegisterOutcome, RegisterStop, TopicPass, UnregisterReport, UnregisterStep,
};
pub use queues::QueueTable;
pub use route::SYNC_BROKER_MEMBER_GROUP_PREFIX;
pub use topics::{TopicList, TopicQuery, FLAG_UNIT, FLAG_UNIT_SUB};

#[cfg(doc)]
use crate::rocketmq::types::UnregisterRequest;
use crate::rocketmq::types::{BrokerAddrInfo, BrokerData, BrokerLiveInfo};
use crate::sim::clock::SimTime;
use crate::sim::keyed::{Hint, KeyedMap, KeyedSet};
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use memo::TopicMemo;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// The `NamesrvConfig` fields that change route-table rules. All default to `false`, as in
/// RocketMQ.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamesrvConfig {
    /// `supportActingMaster`: rewrite a master-less, read-only group's smallest id to 0 in route
    /// answers (§2.8 step 4). The stored table is never rewritten.
    pub support_acting_master: bool,
    /// `notifyMinBrokerIdChanged`: produce [`MinBrokerIdChange`] notices (§2.10).
    pub notify_min_broker_id_changed: bool,
    /// `deleteTopicWithBrokerRegistration`: a master's registration deletes its topics that are
    /// missing from the registration body (§2.1 step 10a).
    pub delete_topic_with_broker_registration: bool,
}

/// No live entry expires before this instant (see `RouteInfoManager::live_floor`).
#[derive(Debug, Default)]
struct LiveFloor(Cell<SimTime>);

impl LiveFloor {
    fn get(&self) -> SimTime {
        self.0.get()
    }

    /// After a full scan: the earliest expiry of all entries (none: never).
    fn set(&self, floor: SimTime) {
        self.0.set(floor);
    }

    /// Keeps the floor at or below `live`'s expiry; called by every write of a live entry.
    fn lower_to(&self, live: &BrokerLiveInfo) {
        self.0.set(self.0.get().min(live.expiry()));
    }
}

/// The name server's route table: `RouteInfoManager` without its lock, thread or RPC client.
///
/// The five `*_table` fields are the Java tables, key for key. The four that registrations look
/// up by name are [`KeyedMap`]s (a master's first registration looks up each of its topics
/// three times), and the cluster sets it adds its name to are [`KeyedSet`]s: hashed lookups,
/// iterated in key order like the `BTreeMap` beside them.
/// Everything else is bookkeeping
/// *beside* them that no Java code reads: the observer revision, the topic-loop memo, the
/// record of cross-cluster names (used only to classify consistency findings) and the positions
/// each channel's last registration found its entries at (`hints`).
#[derive(Debug)]
pub struct RouteInfoManager {
    config: NamesrvConfig,
    /// topic -> brokerName -> QueueData (a row keyed by each QueueData's own name: `queues.rs`).
    topic_queue_table: KeyedMap<String, QueueTable>,
    /// brokerName -> BrokerData (the group's id -> address map).
    broker_addr_table: KeyedMap<Name, Rc<BrokerData>>,
    /// clusterName -> brokerNames (a hashed set: every registration asks whether its name is in).
    cluster_addr_table: BTreeMap<Name, KeyedSet<Name>>,
    /// (cluster, address) -> liveness; replaced whole on every registration.
    broker_live_table: KeyedMap<BrokerAddrInfo, BrokerLiveInfo>,
    /// No live entry expires before this: it is at most every entry's last update plus its
    /// timeout, exact after each full scan and lowered by every write of an entry. A scan at or
    /// before it finds nothing without reading the table (`scan_not_active_broker`). A `Cell`,
    /// because a scan is a query.
    live_floor: LiveFloor,
    /// (cluster, address) -> filter server addresses.
    filter_server_table: KeyedMap<BrokerAddrInfo, Vec<String>>,
    revision: u64,
    memo: TopicMemo,
    /// Broker names that were registered or unregistered under a cluster other than the one
    /// their `BrokerData` records (RocketMQ #3991/#1450). Java allows it; it is what lets
    /// `clusterAddrTable` disagree with `brokerAddrTable`, so [`Self::check_consistency`]
    /// reports such disagreement as a quirk for these names and as a violation for any other.
    cross_cluster_names: BTreeSet<Name>,
    /// Test-only: the planted bug, if any ([`Self::plant`]); `None` in every real run.
    planted: Option<Mutation>,
    /// By channel id: where the last registration on that channel found its group, its name in
    /// its cluster's set, its live entry, its topic memo and (a slave's) its master's live
    /// entry. Not state: a lookup tries the hint first and checks the key there (see
    /// [`KeyedMap::position_hinted`]), so a stale or wrong hint changes nothing but the cost. A broker registers on the same channel every 30 s,
    /// and its table slots have left the caches by then. Netty would keep such a thing in the
    /// channel's attributes; ids come from a counter, so a vector indexed by id serves here.
    hints: Vec<RegisterHints>,
}

/// See [`RouteInfoManager::hints`].
#[derive(Clone, Copy, Debug, Default)]
struct RegisterHints {
    group: Hint,
    cluster: Hint,
    live: Hint,
    memo: Hint,
    master: Hint,
}

#[cfg(test)]
impl RouteInfoManager {
    /// Points every channel's hints at positions drawn at random, mostly wrong ones: for a
    /// test that checks the hints never change what a registration does.
    pub(super) fn scramble_hints(&mut self, rng: &mut impl rand::Rng) {
        self.hints.resize(self.hints.len().max(8), RegisterHints::default());
        let mut draw = || Hint::of_position(rng.gen_range(0..8));
        for h in &mut self.hints {
            *h = RegisterHints { group: draw(), cluster: draw(), live: draw(), memo: draw(), master: draw() };
        }
    }
}

impl RouteInfoManager {
    pub fn new(config: NamesrvConfig) -> Self {
        RouteInfoManager {
            config,
            topic_queue_table: KeyedMap::new(),
            broker_addr_table: KeyedMap::new(),
            cluster_addr_table: BTreeMap::new(),
            broker_live_table: KeyedMap::new(),
            live_floor: LiveFloor::default(),
            filter_server_table: KeyedMap::new(),
            revision: 0,
            memo: TopicMemo::new(),
            cross_cluster_names: BTreeSet::new(),
            planted: None,
            hints: Vec::new(),
        }
    }

    pub fn config(&self) -> &NamesrvConfig {
        &self.config
    }

    pub fn topic_queue_table(&self) -> &KeyedMap<String, QueueTable> {
        &self.topic_queue_table
    }

    pub fn broker_addr_table(&self) -> &KeyedMap<Name, Rc<BrokerData>> {
        &self.broker_addr_table
    }

    pub fn cluster_addr_table(&self) -> &BTreeMap<Name, KeyedSet<Name>> {
        &self.cluster_addr_table
    }

    pub fn broker_live_table(&self) -> &KeyedMap<BrokerAddrInfo, BrokerLiveInfo> {
        &self.broker_live_table
    }

    pub fn filter_server_table(&self) -> &KeyedMap<BrokerAddrInfo, Vec<String>> {
        &self.filter_server_table
    }

    /// Bumped on every change an observer could see: any change to topicQueueTable,
    /// brokerAddrTable, clusterAddrTable, filterServerTable, or to the *membership* /
    /// non-timestamp fields of brokerLiveTable. NOT bumped when a registration or heartbeat only
    /// moves `last_update_timestamp`.
    ///
    /// It only ever grows, possibly by more than one per call; an observer that re-renders a
    /// table view when it changes never misses a change and never redraws for a heartbeat.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// A cluster's group names, looked up by text (an operator's query or command): a name
    /// nothing ever made is a cluster nobody registered.
    fn cluster_named(&self, cluster: &str) -> Option<&KeyedSet<Name>> {
        Name::find(cluster).and_then(|name| self.cluster_addr_table.get(&name))
    }

    fn bump(&mut self) {
        self.revision += 1;
    }

    /// Removes a live entry and everything kept beside it; true if there was one.
    fn remove_live_entry(&mut self, key: BrokerAddrInfo) -> bool {
        self.memo.forget(key);
        let removed = self.broker_live_table.remove(&key).is_some();
        if removed {
            self.bump();
        }
        removed
    }

    /// Test-only: plants `mutation` where it touches this class (`UnregisterAlwaysLeavesCluster`,
    /// `ScanIgnoresBrokerTimeout`; any other changes nothing here). Not reachable from scenario
    /// files: the director calls it when a run asks for a mutation, so property tests can prove
    /// the invariants catch it.
    pub(crate) fn plant(&mut self, mutation: Mutation) {
        self.planted = Some(mutation);
    }

    /// Test hook: turn the topic-loop memo off, so this manager always runs Java's full loop.
    /// The randomized equivalence test compares such a manager with a normal one.
    #[cfg(test)]
    pub(crate) fn disable_topic_memo(&mut self) {
        self.memo.disable();
    }
}

/// `isNoMasterExists`: no group, an empty group, or a group whose smallest id is not 0.
fn no_master_exists(group: Option<&BrokerData>) -> bool {
    match group.and_then(|g| g.broker_addrs.keys().next()) {
        None => true,
        Some(&min_id) => min_id > crate::rocketmq::types::MASTER_ID,
    }
}
