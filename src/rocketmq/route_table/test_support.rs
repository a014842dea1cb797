//! Fixtures shared by the route-table tests: brokers, bodies and requests in one line each.

use super::{NamesrvConfig, RouteInfoManager};
use crate::rocketmq::types::{
    DataVersion, QueueData, RegisterBrokerRequest, TopicConfig, TopicConfigWrapper, UnregisterRequest,
};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ChannelId;
use std::sync::Arc;

pub use crate::sim::name::Name;

/// The interned name for a test's text: the tables are keyed by [`Name`].
pub fn n(text: &str) -> Name {
    Name::new(text)
}

pub const CLUSTER: &str = "DefaultCluster";
pub const BROKER: &str = "broker-a";
pub const MASTER_ADDR: &str = "127.0.0.1:10911";
pub const SLAVE_ADDR: &str = "127.0.0.1:30911";

pub fn t(ms: u64) -> SimTime {
    SimTime(ms)
}

pub fn ms(ms: u64) -> SimDuration {
    SimDuration(ms)
}

pub fn ch(n: u64) -> ChannelId {
    ChannelId(n)
}

/// A DataVersion as a broker stamps it: counter `n`, taken at `n` seconds.
pub fn dv(n: u64) -> DataVersion {
    DataVersion { state_version: 0, timestamp: SimTime(n * 1000), counter: n }
}

/// RocketMQ's test topics: 8 read and 8 write queues, perm rw.
pub fn topic(name: &str) -> TopicConfig {
    TopicConfig { read_queue_nums: 8, write_queue_nums: 8, ..TopicConfig::new(name) }
}

pub fn body(version: DataVersion, topics: &[&str]) -> Arc<TopicConfigWrapper> {
    let topic_config_table = Arc::new(topics.iter().map(|n| (n.to_string(), topic(n))).collect());
    Arc::new(TopicConfigWrapper { topic_config_table, data_version: version })
}

/// A 5.x broker (it sends `enableActingMaster`, here false) with default timeout and no filter
/// servers; its HA address is its address with port + 1.
pub fn broker(name: &str, id: u64, addr: &str, body: &Arc<TopicConfigWrapper>) -> RegisterBrokerRequest {
    RegisterBrokerRequest {
        cluster_name: CLUSTER.into(),
        broker_addr: addr.into(),
        broker_name: name.into(),
        broker_id: id,
        ha_server_addr: format!("ha-of-{addr}").into(),
        zone_name: None,
        heartbeat_timeout_millis: None,
        enable_acting_master: Some(false),
        topic_config_wrapper: Some(Arc::clone(body)),
        filter_server_list: None,
    }
}

/// The same broker with `enableSlaveActingMaster` on.
pub fn acting(req: RegisterBrokerRequest) -> RegisterBrokerRequest {
    RegisterBrokerRequest { enable_acting_master: Some(true), ..req }
}

pub fn unreg(name: &str, id: u64, addr: &str) -> UnregisterRequest {
    UnregisterRequest { broker_name: n(name), broker_addr: n(addr), cluster_name: n(CLUSTER), broker_id: id }
}

pub fn queue_data(broker_name: &str, perm: u32) -> QueueData {
    QueueData { broker_name: n(broker_name), read_queue_nums: 8, write_queue_nums: 8, perm, topic_sys_flag: 0 }
}

pub fn manager() -> RouteInfoManager {
    RouteInfoManager::new(NamesrvConfig::default())
}

pub fn manager_with(config: NamesrvConfig) -> RouteInfoManager {
    RouteInfoManager::new(config)
}

/// The perm of `broker_name`'s QueueData for `topic`, if any.
pub fn perm_of(m: &RouteInfoManager, topic: &str, broker_name: &str) -> Option<u32> {
    m.topic_queue_table().get(topic)?.get(broker_name).map(|q| q.perm)
}

/// The ids of a group, in order.
pub fn ids_of(m: &RouteInfoManager, broker_name: &str) -> Vec<u64> {
    m.broker_addr_table().get(&n(broker_name)).map(|g| g.broker_addrs.keys().copied().collect()).unwrap_or_default()
}

/// A master (id 0) and a slave (id 1) of `BROKER`, both serving topics T and U.
pub fn master_and_slave(m: &mut RouteInfoManager, acting_master: bool) {
    let b = body(dv(1), &["T", "U"]);
    let (mut master, mut slave) = (broker(BROKER, 0, MASTER_ADDR, &b), broker(BROKER, 1, SLAVE_ADDR, &b));
    if acting_master {
        (master, slave) = (acting(master), acting(slave));
    }
    m.register_broker(t(0), &master, ch(1));
    m.register_broker(t(0), &slave, ch(2));
}
