//! What a name server's tables must hold once the cluster has settled, derived from the
//! running brokers' own configuration as the operator's actions changed it — the broker side of
//! the story, independent of `RouteInfoManager` — and the comparison that reports the difference.

use super::ghosts::Ghosts;
use crate::rocketmq::broker::system_topics;
use crate::rocketmq::broker::TopicChange;
use crate::rocketmq::notes::RegisterReason;
use crate::rocketmq::types::{perm, BrokerAddrInfo, TopicConfig, MASTER_ID};
use crate::sim::expect::subject::describe_route;
use crate::sim::name::Name;
use crate::sim::scenario::{Action, BrokerSpec, NamesrvSpec, Scenario};
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};

/// group name → id → address
pub(super) type Groups = BTreeMap<String, BTreeMap<u64, String>>;
/// topic → broker name → (read, write, perm)
type Topics = BTreeMap<String, BTreeMap<String, (u32, u32, u32)>>;

/// The brokers' configuration as the actions so far changed it: what each broker registers. A
/// broker persists its topics and config, so a restart keeps the changes.
pub struct Configs {
    brokers: Vec<BrokerSpec>,
    /// (topic, group) pairs whose QueueData depends on history, not on config: left out of the
    /// comparison until an `upsert_topic` registers the topic afresh. A topic deleted from a
    /// group's brokers stays on name servers (`deleteTopicWithBrokerRegistration` is off by
    /// default, `RouteInfoManager#registerBroker`) until the group is unregistered;
    /// `wipe_write_perm` sticks until the group registers a changed DataVersion, and a topic a
    /// name server deleted comes back with the next such registration.
    unknowable: BTreeSet<(String, String)>,
    /// Groups an operator action changed a broker of (its topics, permission or id).
    changed: BTreeSet<String>,
    /// broker → the topics whose QueueData an action changed on it (an upsert, or its
    /// permission for all of them), with the group they are filed under.
    revised: BTreeMap<String, BTreeSet<(String, String)>>,
    /// broker → each DataVersion it has registered, and whether a full registration carried it
    /// (see [`Configs::registration_sent`]).
    sent_versions: BTreeMap<Name, BTreeMap<String, bool>>,
}

impl Configs {
    pub fn new(s: &Scenario) -> Self {
        Configs {
            brokers: s.brokers.clone(),
            unknowable: BTreeSet::new(),
            changed: BTreeSet::new(),
            revised: BTreeMap::new(),
            sent_versions: BTreeMap::new(),
        }
    }

    /// Broker `broker` sent a registration carrying DataVersion `version`.
    ///
    /// `BrokerController#registerIncrementBrokerData` is handed the `TopicConfigManager`'s
    /// DataVersion *object*, not a copy, and waits for the controller's lock while another
    /// registration holds it (a periodic one waiting 24 s for a name server that does not
    /// answer). A topic change made meanwhile advances that object, so the waiting registration
    /// goes out with the later change's version, and the later change's own registration then
    /// carries the same one. A name server that took the first keeps that version, so for the
    /// second `isTopicConfigChanged` is false: a topic it already has keeps its old QueueData
    /// there until the broker's DataVersion moves again. So when an incremental registration
    /// repeats a version that only incremental ones carried before, the topics an action changed
    /// on the broker depend on history. (A full registration with the version carries every
    /// topic as that version has it, so one sent before leaves nothing behind.)
    pub fn registration_sent(&mut self, broker: Name, reason: RegisterReason, version: &str) {
        let full = reason != RegisterReason::TopicsChanged;
        let sent = self.sent_versions.entry(broker).or_default();
        match sent.get_mut(version) {
            Some(carried_all) => {
                if !full && !*carried_all {
                    self.unknowable.extend(self.revised.get(broker.as_str()).into_iter().flatten().cloned());
                }
                *carried_all |= full;
            }
            None => {
                sent.insert(version.to_string(), full);
            }
        }
    }

    /// Applies an operator action; other actions change no config. `disturbed`: a fault has
    /// been applied (or the network loses packets), so a registration may have been lost.
    ///
    /// An `upsert_topic` makes its broker send an incremental registration: the new
    /// DataVersion with only the changed topic (`BrokerController#registerIncrementBrokerData`).
    /// A name server that missed an earlier registration of the broker and accepts this one
    /// never takes the content the missed one carried: the periodic full registrations carry
    /// the version it now holds, so `isTopicConfigChanged` is false for every other topic the
    /// group already has there. So once the run has been disturbed, an upsert leaves the
    /// broker's other topics an action changed earlier to history.
    pub fn apply(&mut self, action: &Action, disturbed: bool) {
        let pairs = |brokers: &[BrokerSpec], keep: &dyn Fn(&BrokerSpec, &str) -> bool| -> Vec<(String, String)> {
            let topics = brokers.iter().flat_map(|b| topics_of(b).into_iter().map(move |t| (b, t.topic_name)));
            topics.filter(|(b, t)| keep(b, t)).map(|(b, t)| (t, b.config.broker_name.clone())).collect()
        };
        match action {
            Action::WipeWritePerm { broker_name, .. } => {
                let wiped = pairs(&self.brokers, &|b, _| &b.config.broker_name == broker_name);
                self.unknowable.extend(wiped);
            }
            Action::DeleteTopic { topic, .. } => {
                let deleted = pairs(&self.brokers, &|_, t| t == topic);
                self.unknowable.extend(deleted);
            }
            // QueueData stored as an operator gave it, not as any broker's config says: it
            // stays until the group registers a changed DataVersion for that topic.
            Action::RegisterTopic { topic, queues, .. } => {
                self.unknowable.extend(queues.iter().map(|q| (topic.clone(), q.broker_name.to_string())));
            }
            Action::Topic { broker, .. }
            | Action::SetBrokerId { broker, .. }
            | Action::BrokerPermission { broker, .. } => {
                let Some(spec) = self.brokers.iter_mut().find(|b| &b.name == broker) else { return };
                spec.apply(action);
                let group = spec.config.broker_name.clone();
                self.changed.insert(group.clone());
                let revised = self.revised.entry(broker.clone()).or_default();
                match action {
                    Action::Topic { change: TopicChange::Upsert(t), .. } => {
                        let pair = (t.topic_name.clone(), group);
                        if disturbed {
                            self.unknowable.extend(revised.iter().filter(|p| **p != pair).cloned());
                        }
                        revised.insert(pair.clone());
                        self.unknowable.remove(&pair);
                    }
                    Action::BrokerPermission { .. } => {
                        revised.extend(topics_of(spec).into_iter().map(|t| (t.topic_name, group.clone())));
                    }
                    Action::Topic { change: TopicChange::Delete(name), .. } => {
                        self.unknowable.insert((name.clone(), group));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

impl Configs {
    /// The broker listening on `addr`, as its config now stands.
    pub fn broker_at(&self, addr: &str) -> Option<&BrokerSpec> {
        self.brokers.iter().find(|b| b.config.addr == addr)
    }

    /// How many queues broker `b` stores `topic` with (the larger of its read and write counts,
    /// which is what `crate::rocketmq::send::answer` accepts a queue id below), if it has it.
    pub fn queues_of(&self, b: &BrokerSpec, topic: &str) -> Option<u32> {
        topics_of(b).into_iter().find(|t| t.topic_name == topic).map(|t| t.write_queue_nums.max(t.read_queue_nums))
    }

    /// Whether a group without a running master may hold QueueData that none of its running
    /// brokers' configs gives. A prime slave (the lowest id left) writes the group's QueueData
    /// only on its first registration or with a DataVersion the name server has not seen from
    /// it (`registerFirst || isTopicConfigChanged` in `RouteInfoManager#registerBroker`), and a
    /// slave registered its version every 30 s while the master was there, so the group keeps
    /// what the master registered last at that name server: which of the master's configs
    /// that was depends on the network. It is one of them, so it can differ from the prime
    /// slave's only if the group's brokers were not configured alike, or an action changed one.
    pub(super) fn masterless_history(&self, group: &str) -> bool {
        if self.changed.contains(group) {
            return true;
        }
        let mut members = self.brokers.iter().filter(|b| b.config.broker_name == group);
        let Some(first) = members.next() else { return false };
        let queues = |b: &BrokerSpec| -> Vec<(String, u32, u32, u32, u32)> {
            let p = b.config.permission;
            topics_of(b).into_iter().map(|t| (t.topic_name, t.read_queue_nums, t.write_queue_nums, t.perm, p)).collect()
        };
        let want = queues(first);
        members.any(|b| queues(b) != want)
    }

    /// `topics` without the pairs whose state depends on history (and without topics left
    /// empty): those [`Configs::apply`] marked, and those of the master-less groups in
    /// `masterless` whose QueueData [`Configs::masterless_history`] may have left behind.
    fn knowable(&self, topics: &Topics, masterless: &BTreeSet<&str>) -> Topics {
        let mut out = Topics::new();
        for (topic, groups) in topics {
            let kept: BTreeMap<String, (u32, u32, u32)> = groups
                .iter()
                .filter(|(g, _)| !masterless.contains(g.as_str()))
                .filter(|(g, _)| !self.unknowable.contains(&(topic.clone(), (*g).clone())))
                .map(|(g, q)| (g.clone(), *q))
                .collect();
            if !kept.is_empty() {
                out.insert(topic.clone(), kept);
            }
        }
        out
    }
}

pub struct Expected {
    /// Per running name server: live keys, groups, cluster sets and topics.
    per_namesrv: BTreeMap<String, Tables>,
}

#[derive(PartialEq, Eq)]
struct Tables {
    live: BTreeSet<BrokerAddrInfo>,
    groups: Groups,
    clusters: BTreeMap<String, BTreeSet<String>>,
    topics: Topics,
}

fn topics_of(b: &BrokerSpec) -> Vec<TopicConfig> {
    let mut all = if b.config.system_topics { system_topics(&b.config) } else { Vec::new() };
    all.extend(b.topics.iter().cloned());
    all
}

impl Expected {
    pub fn new(namesrvs: &[NamesrvSpec], configs: &Configs, running: &BTreeSet<String>) -> Self {
        let per_namesrv = namesrvs
            .iter()
            .filter(|n| running.contains(&n.name))
            .map(|n| {
                let brokers: Vec<&BrokerSpec> = configs
                    .brokers
                    .iter()
                    .filter(|b| running.contains(&b.name) && b.namesrvs.contains(&n.name))
                    .collect();
                (n.name.clone(), tables(&brokers))
            })
            .collect();
        Expected { per_namesrv }
    }
}

fn tables(brokers: &[&BrokerSpec]) -> Tables {
    let mut live = BTreeSet::new();
    let mut groups: Groups = BTreeMap::new();
    let mut clusters: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for b in brokers {
        let c = &b.config;
        live.insert(BrokerAddrInfo::new(&c.cluster, &c.addr));
        groups.entry(c.broker_name.clone()).or_default().insert(c.broker_id, c.addr.clone());
        clusters.entry(c.cluster.clone()).or_default().insert(c.broker_name.clone());
    }
    // A group's QueueData is written by its master, or with no master by its lowest-id slave
    // (`isPrimeSlave` in `RouteInfoManager#registerBroker`): that broker's topics are the group's.
    let mut writers: BTreeMap<&str, &BrokerSpec> = BTreeMap::new();
    for b in brokers {
        let w = writers.entry(b.config.broker_name.as_str()).or_insert(b);
        if b.config.broker_id < w.config.broker_id {
            *w = b;
        }
    }
    let mut topics: Topics = BTreeMap::new();
    for b in writers.into_values() {
        let c = &b.config;
        let has_master = groups[&c.broker_name].contains_key(&MASTER_ID);
        for t in topics_of(b) {
            let mut p = t.perm;
            if c.permission != perm::READ_WRITE {
                p &= c.permission;
            }
            // A master-less group of acting-master brokers is read-only: the prime slave writes
            // its QueueData without the write bit, and losing the master wipes it.
            if !has_master && c.enable_acting_master {
                p &= !perm::WRITE;
            }
            topics
                .entry(t.topic_name.clone())
                .or_default()
                .insert(c.broker_name.clone(), (t.read_queue_nums, t.write_queue_nums, p));
        }
    }
    Tables { live, groups, clusters, topics }
}

fn diff<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    what: &str,
    want: &BTreeMap<K, V>,
    got: &BTreeMap<K, V>,
) -> Vec<String> {
    let keys: BTreeSet<&K> = want.keys().chain(got.keys()).collect();
    keys.into_iter()
        .filter(|k| want.get(k) != got.get(k))
        .map(|k| format!("{what} {k:?}: expected {:?}, got {:?}", want.get(k), got.get(k)))
        .collect()
}

/// Every difference between what should be and what is, sorted; empty when converged.
pub fn compare(
    expected: &Expected,
    configs: &Configs,
    ghosts: &Ghosts,
    s: &Scenario,
    running: &BTreeSet<String>,
    world: &World,
) -> Vec<String> {
    let mut out = Vec::new();
    for (ns, want) in &expected.per_namesrv {
        let Some(table) = world.namesrv(ns) else { continue };
        let t = table.borrow();
        let live: BTreeSet<BrokerAddrInfo> = t.broker_live_table().keys().cloned().collect();
        for k in want.live.difference(&live) {
            out.push(format!("{ns}: live entry {k} missing"));
        }
        for k in live.difference(&want.live) {
            out.push(format!("{ns}: live entry {k} should be gone"));
        }
        let mut groups: Groups = t
            .broker_addr_table()
            .iter()
            .map(|(n, g)| (n.to_string(), g.broker_addrs.iter().map(|(&id, a)| (id, a.to_string())).collect()))
            .collect();
        let mut clusters: BTreeMap<String, BTreeSet<String>> = t
            .cluster_addr_table()
            .iter()
            .map(|(c, names)| (c.to_string(), names.iter().map(|n| n.to_string()).collect()))
            .collect();
        ghosts.leave_out(ns, &want.groups, &mut groups, &mut clusters);
        out.extend(diff(&format!("{ns}: group"), &want.groups, &groups));
        out.extend(diff(&format!("{ns}: cluster"), &want.clusters, &clusters));
        let topics: Topics = t
            .topic_queue_table()
            .iter()
            .map(|(topic, qs)| {
                let qs =
                    qs.iter().map(|(b, q)| (b.to_string(), (q.read_queue_nums, q.write_queue_nums, q.perm))).collect();
                (topic.clone(), qs)
            })
            .collect();
        let masterless: BTreeSet<&str> = want
            .groups
            .iter()
            .filter(|(g, ids)| !ids.contains_key(&MASTER_ID) && configs.masterless_history(g))
            .map(|(g, _)| g.as_str())
            .collect();
        let (want, got) = (configs.knowable(&want.topics, &masterless), configs.knowable(&topics, &masterless));
        out.extend(diff(&format!("{ns}: topic"), &want, &got));
    }
    for c in s.clients.iter().filter(|c| running.contains(&c.name)) {
        let Some(core) = world.client(&c.name) else { continue };
        let core = core.borrow();
        let Some(ns) = core.current_namesrv() else { continue };
        let Some(table) = world.namesrv(ns) else { continue };
        let table = table.borrow();
        for topic in &c.topics {
            // TOPIC_NOT_EXIST: the client keeps whatever it had — RocketMQ's documented quirk.
            let Some(answer) = table.pickup_topic_route_data(topic) else { continue };
            if core.route(topic) != Some(&answer) {
                out.push(format!(
                    "{}: route {topic} is {} but {ns} answers {}",
                    c.name,
                    describe_route(core.route(topic)),
                    describe_route(Some(&answer))
                ));
            }
        }
    }
    out
}
