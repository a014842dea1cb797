//! Answering clients and operators: `pickupTopicRouteData` (reference §2.8) and the write-perm
//! and topic admin commands (§2.9).

use super::RouteInfoManager;
use crate::rocketmq::types::{perm, BrokerAddrInfo, BrokerData, QueueData, TopicRouteData, MASTER_ID};
use crate::sim::name::Name;
use std::rc::Rc;

/// `TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX`: these system topics are never rewritten.
pub const SYNC_BROKER_MEMBER_GROUP_PREFIX: &str = "rmq_sys_SYNC_BROKER_MEMBER_";

impl RouteInfoManager {
    /// `pickupTopicRouteData` (§2.8); `None` is TOPIC_NOT_EXIST.
    ///
    /// The answer holds copies: the acting-master rewrite changes only the copy, never the
    /// stored ids. QueueData is listed even for names without a BrokerData, and an *empty*
    /// BrokerData still counts as "found" — both as in Java.
    pub fn pickup_topic_route_data(&self, topic: &str) -> Option<TopicRouteData> {
        let by_broker = self.topic_queue_table.get(topic)?;
        let mut route = TopicRouteData {
            queue_datas: by_broker.values().cloned().collect(),
            broker_datas: Vec::with_capacity(by_broker.len()),
            ..TopicRouteData::default()
        };
        for name in by_broker.keys() {
            let Some(group) = self.broker_addr_table.get(name) else {
                continue;
            };
            if !self.filter_server_table.is_empty() {
                for addr in group.broker_addrs.values() {
                    // Java puts the lookup result even when it is null; fastjson drops null map
                    // values when encoding, so the client sees no key. Removing mirrors both.
                    let key = BrokerAddrInfo::new(group.cluster, addr);
                    match self.filter_server_table.get(&key) {
                        Some(list) => route.filter_server_table.insert(addr.to_string(), list.clone()),
                        None => route.filter_server_table.remove(addr.as_str()),
                    };
                }
            }
            route.broker_datas.push(group.clone());
        }
        if route.broker_datas.is_empty() {
            return None;
        }
        if self.config.support_acting_master && !topic.starts_with(SYNC_BROKER_MEMBER_GROUP_PREFIX) {
            rewrite_acting_masters(&mut route);
        }
        Some(route)
    }

    /// `wipeWritePermOfBrokerByLock` (§2.9): clear the write bit of this broker's QueueData in
    /// every topic; returns how many topics had one. Stays until the broker's DataVersion
    /// changes, it re-registers "first", or `addWritePerm` runs (see §2.1 change detection).
    pub fn wipe_write_perm_of_broker(&mut self, broker_name: &str) -> usize {
        self.set_perm_of_broker(broker_name, |p| p & !perm::WRITE)
    }

    /// `addWritePermOfBrokerByLock` (§2.9): *sets* perm to read|write (6) rather than OR-ing
    /// the write bit, so any other bit (priority, inherit) is dropped. Returns the topic count.
    pub fn add_write_perm_of_broker(&mut self, broker_name: &str) -> usize {
        self.set_perm_of_broker(broker_name, |_| perm::READ_WRITE)
    }

    fn set_perm_of_broker(&mut self, broker_name: &str, new_perm: impl Fn(u32) -> u32) -> usize {
        let mut count = 0;
        let mut changed = false;
        // Each topic's edit stands alone: the order they are made in is never seen.
        for by_broker in self.topic_queue_table.values_mut_unordered() {
            if let Some(queue_data) = by_broker.get_mut(broker_name) {
                let updated = new_perm(queue_data.perm);
                if updated != queue_data.perm {
                    // Copy-on-write: route answers already given keep the old perm.
                    Rc::make_mut(queue_data).perm = updated;
                    changed = true;
                }
                count += 1;
            }
        }
        if changed {
            self.bump();
        }
        count
    }

    /// `deleteTopic` (§2.9). Without a cluster, the whole topic goes. With one, only the
    /// QueueData of that cluster's broker names go (and the topic, if that empties it); an
    /// unknown or empty cluster is a silent no-op. True if anything was removed.
    pub fn delete_topic(&mut self, topic: &str, cluster: Option<&str>) -> bool {
        let Some(cluster) = cluster else {
            let Some(by_broker) = self.topic_queue_table.remove(topic) else {
                return false;
            };
            for name in by_broker.keys() {
                self.memo.note_removal(*name);
            }
            self.bump();
            return true;
        };
        let (Some(names), Some(by_broker)) =
            (Name::find(cluster).and_then(|c| self.cluster_addr_table.get(&c)), self.topic_queue_table.get_mut(topic))
        else {
            return false;
        };
        let mut removed = false;
        for name in names {
            if by_broker.remove(name).is_some() {
                self.memo.note_removal(*name);
                removed = true;
            }
        }
        if by_broker.is_empty() {
            self.topic_queue_table.remove(topic);
        }
        if removed {
            self.bump();
        }
        removed
    }

    /// `registerTopic` (§2.9, REGISTER_TOPIC_IN_NAMESRV). QueueData is stored exactly as given
    /// (no perm transformation), keyed by its broker name. Every broker name must have a
    /// BrokerData; Java `return`s at the first that does not, and the two branches differ:
    /// for a *new* topic nothing has been stored yet, but for an *existing* topic the earlier
    /// QueueData were already put and stay. Returns true when every QueueData was accepted
    /// (false: an empty list, or stopped at an unknown broker).
    pub fn register_topic(&mut self, topic: &str, queue_datas: Vec<QueueData>) -> bool {
        if queue_datas.is_empty() {
            return false;
        }
        let exists = self.topic_queue_table.contains_key(topic);
        let mut staged = Default::default();
        let by_broker = match self.topic_queue_table.get_mut(topic) {
            Some(existing) => existing,
            None => &mut staged,
        };
        let mut complete = true;
        let mut changed = false;
        for queue_data in queue_datas {
            if !self.broker_addr_table.contains_key(&queue_data.broker_name) {
                complete = false;
                break;
            }
            let queue_data = Rc::new(queue_data);
            let previous = by_broker.insert(Rc::clone(&queue_data));
            changed |= previous.as_ref() != Some(&queue_data);
        }
        if !exists && complete {
            self.topic_queue_table.insert(topic.to_string(), staged);
        }
        if changed && (exists || complete) {
            self.bump();
        }
        complete
    }
}

/// §2.8 step 4, on the answer's copies. Applies only when some non-empty group lacks id 0.
/// Then each such group with acting master enabled whose QueueData for this topic is not
/// writeable gets its smallest id moved to 0, so producers treat that slave as the master.
fn rewrite_acting_masters(route: &mut TopicRouteData) {
    let needs = |g: &BrokerData| !g.broker_addrs.is_empty() && !g.broker_addrs.contains_key(&MASTER_ID);
    if !route.broker_datas.iter().any(|g| needs(g)) {
        return;
    }
    for group in route.broker_datas.iter_mut().filter(|g| needs(g) && g.enable_acting_master) {
        // The answer's own copy: the table's group is never rewritten.
        let group = Rc::make_mut(group);
        // Java takes the first QueueData of the group's name, then `break`s.
        let Some(queue_data) = route.queue_datas.iter().find(|q| q.broker_name == group.broker_name) else {
            continue;
        };
        if !perm::is_writeable(queue_data.perm) {
            let (min_id, addr) = group.broker_addrs.pop_first().expect("non-empty");
            debug_assert!(min_id > MASTER_ID);
            group.broker_addrs.insert(MASTER_ID, addr);
        }
    }
}
