//! The topic-list queries an operator or a test sends a name server (`mqadmin topicList`,
//! `RouteInfoManagerNewTest`): `RouteInfoManager#getAllTopicList`, `#getTopicsByCluster`,
//! `#getSystemTopicList`, `#getUnitTopics`, `#getHasUnitSubTopicList` and
//! `#getHasUnitSubUnUnitTopicList` (5.3.x). Each answers a `TopicList`, a set of names.

use super::RouteInfoManager;
use std::collections::BTreeSet;

/// `TopicSysFlag.FLAG_UNIT` and `FLAG_UNIT_SUB`.
pub const FLAG_UNIT: u32 = 1;
pub const FLAG_UNIT_SUB: u32 = 1 << 1;

/// Which `TopicList` query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopicQuery {
    /// `getAllTopicList`: every topic in `topicQueueTable`.
    All,
    /// `getTopicsByCluster`: topics with a QueueData of a group in the cluster.
    Cluster(String),
    /// `getSystemTopicList`: every cluster name and every group name (RocketMQ treats both as
    /// topics a broker auto-creates), plus one broker address.
    System,
    /// `getUnitTopics`: topics whose (first) QueueData has the unit flag.
    Unit,
    /// `getHasUnitSubTopicList`: ... the unit-subscription flag.
    UnitSub,
    /// `getHasUnitSubUnUnitTopicList`: the unit-subscription flag and not the unit flag.
    UnitSubNotUnit,
}

/// A `TopicList`: the names, and the broker address only `getSystemTopicList` sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicList {
    pub topics: BTreeSet<String>,
    pub broker_addr: Option<String>,
}

impl RouteInfoManager {
    pub fn topic_list(&self, query: &TopicQuery) -> TopicList {
        let flagged = |has: fn(u32) -> bool| TopicList {
            // Java reads the flag of `queueDatas.values().iterator().next()`: a HashMap's first
            // value. Groups of one topic share its flag (it comes from the topic's config), so
            // the first of our sorted map says the same.
            topics: self
                .topic_queue_table
                .iter()
                .filter(|(_, by_broker)| by_broker.values().next().is_some_and(|q| has(q.topic_sys_flag)))
                .map(|(t, _)| t.clone())
                .collect(),
            broker_addr: None,
        };
        match query {
            TopicQuery::All => {
                TopicList { topics: self.topic_queue_table.keys().cloned().collect(), broker_addr: None }
            }
            // An unknown cluster throws a NullPointerException inside the try: logged, and the
            // empty list answered.
            TopicQuery::Cluster(cluster) => {
                let names = self.cluster_named(cluster).cloned().unwrap_or_default();
                let topics = self
                    .topic_queue_table
                    .iter()
                    .filter(|(_, by_broker)| names.iter().any(|n| by_broker.contains_key(n)))
                    .map(|(t, _)| t.clone())
                    .collect();
                TopicList { topics, broker_addr: None }
            }
            TopicQuery::System => {
                let mut topics = BTreeSet::new();
                for (cluster, names) in &self.cluster_addr_table {
                    topics.insert(cluster.to_string());
                    topics.extend(names.iter().map(|name| name.to_string()));
                }
                // The first group with an address, and its first id. Java walks a HashMap of
                // group names, in hash order; routesim's groups are sorted by name, so with
                // several groups the address given may be another group's than Java's.
                let broker_addr = self
                    .broker_addr_table
                    .values()
                    .find_map(|g| g.broker_addrs.values().next().map(|addr| addr.to_string()));
                TopicList { topics, broker_addr }
            }
            TopicQuery::Unit => flagged(|f| f & FLAG_UNIT != 0),
            TopicQuery::UnitSub => flagged(|f| f & FLAG_UNIT_SUB != 0),
            TopicQuery::UnitSubNotUnit => flagged(|f| f & FLAG_UNIT == 0 && f & FLAG_UNIT_SUB != 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{body, broker, ch, dv, manager, master_and_slave, queue_data};
    use super::*;
    use crate::rocketmq::types::QueueData;
    use crate::sim::clock::SimTime;

    fn names(list: &TopicList) -> Vec<&str> {
        list.topics.iter().map(String::as_str).collect()
    }

    #[test]
    fn all_cluster_and_system_lists_read_the_tables_as_java_does() {
        let mut m = manager();
        let b = broker("broker-a", 0, "10.0.0.1:10911", &body(dv(1), &["T", "U"]));
        m.register_broker(SimTime(0), &b, ch(1));
        let all = m.topic_list(&TopicQuery::All);
        assert!(names(&all).contains(&"T") && names(&all).contains(&"U"), "{all:?}");
        assert_eq!(m.topic_list(&TopicQuery::Cluster("DefaultCluster".into())).topics, all.topics);
        assert!(m.topic_list(&TopicQuery::Cluster("Other".into())).topics.is_empty(), "unknown cluster: empty");
        let system = m.topic_list(&TopicQuery::System);
        assert_eq!(names(&system), ["DefaultCluster", "broker-a"]);
        assert_eq!(system.broker_addr.as_deref(), Some("10.0.0.1:10911"));
    }

    #[test]
    fn unit_lists_follow_the_first_queue_datas_flag() {
        let mut m = manager();
        master_and_slave(&mut m, false);
        let flagged = |flag| vec![QueueData { topic_sys_flag: flag, ..queue_data("broker-a", 6) }];
        assert!(m.register_topic("unit", flagged(FLAG_UNIT)));
        assert!(m.register_topic("sub", flagged(FLAG_UNIT_SUB)));
        assert!(m.register_topic("both", flagged(FLAG_UNIT | FLAG_UNIT_SUB)));
        assert_eq!(names(&m.topic_list(&TopicQuery::Unit)), ["both", "unit"]);
        assert_eq!(names(&m.topic_list(&TopicQuery::UnitSub)), ["both", "sub"]);
        assert_eq!(names(&m.topic_list(&TopicQuery::UnitSubNotUnit)), ["sub"]);
    }
}
