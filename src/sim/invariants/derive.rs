//! What a name server's tables must hold once the cluster has settled, derived from the
//! running brokers' own configuration — the broker side of the story, independent of
//! `RouteInfoManager` — and the comparison that reports the difference.

use crate::rocketmq::broker::system_topics;
use crate::rocketmq::types::{perm, BrokerAddrInfo, TopicConfig, MASTER_ID};
use crate::sim::expect::subject::describe_route;
use crate::sim::scenario::{BrokerSpec, Scenario};
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};

type Groups = BTreeMap<String, BTreeMap<u64, String>>;
/// topic → broker name → (read, write, perm)
type Topics = BTreeMap<String, BTreeMap<String, (u32, u32, u32)>>;

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
    pub fn from_scenario(s: &Scenario, running: &BTreeSet<String>) -> Self {
        let per_namesrv = s
            .namesrvs
            .iter()
            .filter(|n| running.contains(&n.name))
            .map(|n| {
                let brokers: Vec<&BrokerSpec> =
                    s.brokers.iter().filter(|b| running.contains(&b.name) && b.namesrvs.contains(&n.name)).collect();
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
    let mut topics: Topics = BTreeMap::new();
    for b in brokers {
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
pub fn compare(expected: &Expected, s: &Scenario, running: &BTreeSet<String>, world: &World) -> Vec<String> {
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
        let groups: Groups = t.broker_addr_table().iter().map(|(n, g)| (n.clone(), g.broker_addrs.clone())).collect();
        out.extend(diff(&format!("{ns}: group"), &want.groups, &groups));
        out.extend(diff(&format!("{ns}: cluster"), &want.clusters, t.cluster_addr_table()));
        let topics: Topics = t
            .topic_queue_table()
            .iter()
            .map(|(topic, qs)| {
                let qs = qs.iter().map(|(b, q)| (b.clone(), (q.read_queue_nums, q.write_queue_nums, q.perm))).collect();
                (topic.clone(), qs)
            })
            .collect();
        out.extend(diff(&format!("{ns}: topic"), &want.topics, &topics));
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
