//! Cross-table checks for property tests: *violations* are states RocketMQ's own code can never
//! reach (so a finding means the port is wrong); *quirks* are odd states the real code does
//! reach, reported so scenarios can show them.

use super::RouteInfoManager;
use std::collections::BTreeMap;

impl RouteInfoManager {
    /// Human-readable violations; empty means consistent. Each rule below holds for every
    /// sequence of calls to the Java class (the argument is in the comment), so any finding is
    /// a bug in this port. Cluster-set disagreements caused by a broker name used under two
    /// cluster names are *not* violations: they are listed by [`Self::quirks`].
    pub fn check_consistency(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.check_keys(&mut out);
        self.check_cluster_sets(&mut out);
        self.check_topics(&mut out);
        out.extend(self.memo.violations(&self.topic_queue_table));
        out
    }

    /// Tables are keyed by the name their values carry, and a group lists an address once
    /// (registration step 5 removes the address's other ids before it claims one).
    fn check_keys(&self, out: &mut Vec<String>) {
        for (name, group) in &self.broker_addr_table {
            if group.broker_name != *name {
                out.push(format!("BrokerData under {name} is named {}", group.broker_name));
            }
            let mut seen = BTreeMap::new();
            for (id, addr) in &group.broker_addrs {
                if let Some(other) = seen.insert(addr, id) {
                    out.push(format!("group {name} lists {addr} under ids {other} and {id}"));
                }
            }
        }
    }

    /// A group is created together with its cluster-set entry, never changes cluster, and
    /// leaves that set only when the group itself is removed — so every BrokerData (empty or
    /// not) is listed in its own cluster's set. Sets are created non-empty and dropped when
    /// emptied. The reverse direction (a listed name has a BrokerData of that cluster) only
    /// breaks through a cross-cluster name, which is a quirk.
    fn check_cluster_sets(&self, out: &mut Vec<String>) {
        for (name, group) in &self.broker_addr_table {
            let listed = self.cluster_addr_table.get(&group.cluster).is_some_and(|s| s.contains(name));
            if !listed {
                out.push(format!("group {name} of cluster {} is not in that cluster's set", group.cluster));
            }
        }
        for (cluster, names) in &self.cluster_addr_table {
            if names.is_empty() {
                out.push(format!("cluster {cluster} has an empty broker-name set"));
            }
            for name in names.iter().filter(|n| !self.cross_cluster_names.contains(*n)) {
                match self.broker_addr_table.get(name) {
                    None => out.push(format!("cluster {cluster} lists {name}, which has no BrokerData")),
                    Some(g) if g.cluster != *cluster => {
                        out.push(format!("cluster {cluster} lists {name}, whose BrokerData says cluster {}", g.cluster))
                    }
                    Some(_) => {}
                }
            }
        }
    }

    /// Topic maps are dropped when emptied; QueueData is keyed by its own broker name; and
    /// QueueData is only written for a name with a BrokerData, which takes its QueueData with
    /// it when removed (unregister step 6). A QueueData without a BrokerData is exactly what
    /// would make Java's step 6 throw.
    fn check_topics(&self, out: &mut Vec<String>) {
        for (topic, by_broker) in &self.topic_queue_table {
            if by_broker.is_empty() {
                out.push(format!("topic {topic} has an empty QueueData map"));
            }
            for (name, queue_data) in by_broker {
                if queue_data.broker_name != *name {
                    out.push(format!("topic {topic}: QueueData under {name} is named {}", queue_data.broker_name));
                }
                if !self.broker_addr_table.contains_key(name) {
                    out.push(format!("topic {topic} has QueueData of {name}, which has no BrokerData"));
                }
            }
        }
    }

    /// Odd states the real code reaches, each with where it comes from:
    ///
    /// * an empty BrokerData — left by the single-topic guard (§2.1 step 7) or a null-wrapper
    ///   registration after step 5 removed the address's old id; it still counts as "found"
    ///   in route answers;
    /// * orphan live entries — an address displaced from its id by another address (§2.4);
    ///   the scan reports them forever and nothing unregisters them;
    /// * filter-server entries without a live entry — the conflict path (§2.1 step 6) removes
    ///   the live entry only;
    /// * one address in two groups of one cluster (a renamed broker, #1989) —
    ///   `setupUnRegisterRequest` then picks the first;
    /// * cluster sets that disagree with BrokerData for names used under two clusters.
    pub fn quirks(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, group) in &self.broker_addr_table {
            if group.broker_addrs.is_empty() {
                out.push(format!("group {name} has no addresses (left by an aborted registration)"));
            }
        }
        for key in self.broker_live_table.keys() {
            if self.setup_unregister_request(key).is_none() {
                out.push(format!("live entry {key} is in no group of its cluster (orphan, never expires)"));
            }
        }
        for key in self.filter_server_table.keys() {
            if !self.broker_live_table.contains_key(key) {
                out.push(format!("filter servers of {key} outlived its live entry"));
            }
        }
        self.shared_address_quirks(&mut out);
        self.cross_cluster_quirks(&mut out);
        out
    }

    fn shared_address_quirks(&self, out: &mut Vec<String>) {
        let mut holders: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
        for group in self.broker_addr_table.values() {
            for addr in group.broker_addrs.values() {
                holders.entry((&group.cluster, addr)).or_default().push(&group.broker_name);
            }
        }
        for ((cluster, addr), names) in holders.into_iter().filter(|(_, n)| n.len() > 1) {
            out.push(format!("address {addr} is in several groups of cluster {cluster}: {names:?}"));
        }
    }

    fn cross_cluster_quirks(&self, out: &mut Vec<String>) {
        for (cluster, names) in &self.cluster_addr_table {
            for name in names.iter().filter(|n| self.cross_cluster_names.contains(*n)) {
                match self.broker_addr_table.get(name) {
                    None => out.push(format!("cluster {cluster} still lists {name}, whose group is gone")),
                    Some(g) if g.cluster != *cluster => {
                        out.push(format!("cluster {cluster} lists {name}, whose BrokerData says cluster {}", g.cluster))
                    }
                    Some(_) => {}
                }
            }
        }
    }
}
