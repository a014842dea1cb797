//! A broker's side of registration (`BrokerController` + `BrokerOuterAPI`), pure.
//!
//! The broker owns its topic table and the `DataVersion` that changes with it, and builds the
//! requests it sends: a full `REGISTER_BROKER` at start and every `registerNameServerPeriod`, an
//! incremental one when topics change, the 1 s `QUERY_DATA_VERSION` heartbeat in acting-master
//! mode, and `UNREGISTER_BROKER` on a graceful shutdown.

use crate::rocketmq::topic_table::TopicConfigs;
use crate::rocketmq::types::{
    perm, push_decimal, DataVersion, RegisterBrokerRequest, TopicConfig, TopicConfigWrapper, TopicTable,
    UnregisterRequest,
};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
use std::sync::Arc;

/// `registerBrokerTimeoutMills` (5.x; 6 s in 4.x): each name server's `REGISTER_BROKER` and the
/// latch `registerBrokerAll` waits on.
pub const REGISTER_TIMEOUT: SimDuration = SimDuration::from_secs(24);
/// `BrokerController.start`: `refreshMetadata` (`GET_BROKER_CLUSTER_INFO`) at fixed rate, first
/// after 10 s, then every 5 s, each `invokeSync(null, ..., 3000)`.
pub const REFRESH_DELAY: SimDuration = SimDuration::from_secs(10);
pub const REFRESH_PERIOD: SimDuration = SimDuration::from_secs(5);
pub const REFRESH_TIMEOUT: SimDuration = SimDuration::from_secs(3);
/// `BrokerOuterAPI.unregisterBrokerAll`: `invokeSync(..., 3000)` per name server, in turn.
pub const UNREGISTER_TIMEOUT: SimDuration = SimDuration::from_secs(3);
/// `BrokerController.start`: the periodic registration starts 10 s after start-up.
pub const FIRST_PERIODIC_DELAY: SimDuration = SimDuration::from_secs(10);

/// `BrokerConfig` fields that matter to route registration, with RocketMQ's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerConfig {
    pub cluster: String,
    pub broker_name: String,
    pub broker_id: u64,
    pub addr: String,
    /// `registerNameServerPeriod`, default 30 s (clamped to 10–60 s when used).
    pub register_period: SimDuration,
    /// `enableSlaveActingMaster`: 1 s heartbeat, 10 s expiry, write-perm wipe on master loss.
    pub enable_acting_master: bool,
    /// `brokerHeartbeatInterval`, default 1 s.
    pub heartbeat_interval: SimDuration,
    /// `brokerNotActiveTimeoutMillis`, default 10 s (sent as the registration timeout in
    /// acting-master mode).
    pub not_active_timeout: SimDuration,
    /// `brokerPermission`, default rw (6).
    pub permission: u32,
    /// Whether the broker holds the system topics every real broker creates at start-up
    /// (see [`system_topics`]). Turning it off lets a one-topic broker meet the #4522 guard.
    pub system_topics: bool,
    /// `registerBrokerTimeoutMills`, default 24 s.
    pub register_timeout: SimDuration,
    /// Whether the 5.x `refreshMetadata` poll runs (it always does in 5.x; 4.x brokers have none).
    pub refresh_metadata: bool,
}

impl BrokerConfig {
    pub fn new(cluster: &str, broker_name: &str, broker_id: u64, addr: &str) -> Self {
        BrokerConfig {
            cluster: cluster.to_string(),
            broker_name: broker_name.to_string(),
            broker_id,
            addr: addr.to_string(),
            register_period: SimDuration::from_secs(30),
            enable_acting_master: false,
            heartbeat_interval: SimDuration::from_secs(1),
            not_active_timeout: SimDuration::from_secs(10),
            permission: perm::READ_WRITE,
            system_topics: true,
            register_timeout: REGISTER_TIMEOUT,
            refresh_metadata: true,
        }
    }

    /// `Math.max(10000, Math.min(registerNameServerPeriod, 60000))` in `BrokerController.start`.
    pub fn effective_register_period(&self) -> SimDuration {
        SimDuration(self.register_period.millis().clamp(10_000, 60_000))
    }

    /// The HA listen address RocketMQ reports: same host, listen port + 1. Built by hand (see
    /// [`broker_label`](crate::rocketmq::types::broker_label)): it goes into every registration.
    pub fn ha_server_addr(&self) -> String {
        match self.addr.rsplit_once(':').and_then(|(h, p)| Some((h, p.parse::<u32>().ok()?))) {
            Some((host, port)) => {
                let mut out = String::with_capacity(self.addr.len() + 1);
                out.push_str(host);
                out.push(':');
                push_decimal(&mut out, u64::from(port) + 1);
                out
            }
            None => self.addr.clone(),
        }
    }
}

/// What an operator (or the scenario) does to a broker's topics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopicChange {
    /// Create or update a topic (`UPDATE_AND_CREATE_TOPIC`).
    Upsert(TopicConfig),
    /// Delete a topic from the broker (`DELETE_TOPIC_IN_BROKER`).
    Delete(String),
}

/// The topics `TopicConfigManager`'s constructor creates on every broker that are part of every
/// registration: `SELF_TEST_TOPIC` (1 queue) and, with `clusterTopicEnable`/`brokerTopicEnable`
/// on (the default), one topic named after the cluster and one after the broker name (perm
/// inherit + rw). Others (TBW102, SCHEDULE_TOPIC_XXXX, ...) are left out to keep routes short;
/// what matters is that a real registration never carries a single topic.
pub fn system_topics(config: &BrokerConfig) -> Vec<TopicConfig> {
    let mut self_test = TopicConfig::new("SELF_TEST_TOPIC");
    (self_test.read_queue_nums, self_test.write_queue_nums) = (1, 1);
    let named = |name: &str| TopicConfig { perm: perm::READ_WRITE | perm::INHERIT, ..TopicConfig::new(name) };
    vec![self_test, named(&config.cluster), named(&config.broker_name)]
}

pub struct BrokerCore {
    pub config: BrokerConfig,
    /// Copied on write (`Arc::make_mut`) by a topic change: the wrapper shares it otherwise, and
    /// it shares the scenario's topic list (see [`TopicTable`]).
    topics: Arc<TopicTable>,
    data_version: DataVersion,
    /// The last full wrapper, shared by every name server's request until the topics change.
    wrapper: Arc<TopicConfigWrapper>,
    /// How many topics `wrapper` holds, kept here: each registration's trace note shows it,
    /// and the wrapper's table has left the caches by the next periodic registration.
    wrapped_topics: usize,
    /// The names every request carries, made once: a process keeps its cluster, name and
    /// address for life (a restart builds a new core), and each request shares them.
    names: RequestNames,
}

#[derive(Debug, Clone)]
struct RequestNames {
    cluster: Name,
    addr: Name,
    broker_name: Name,
    ha_server_addr: Name,
}

impl BrokerCore {
    /// A broker starting at `now`. `stored` is the DataVersion its `topics.json` holds from an
    /// earlier run: `TopicConfigManager#decode` loads it (`dataVersion.assignNewOne`), so a
    /// restarted broker registers with the version it had, not a new one. `topics` are the
    /// scenario's, shared rather than copied when they are sorted by name (see [`TopicTable`]).
    pub fn new(config: BrokerConfig, topics: Arc<TopicConfigs>, now: SimTime, stored: Option<DataVersion>) -> Self {
        let builtin = if config.system_topics { system_topics(&config) } else { Vec::new() };
        let topics = Arc::new(TopicTable::build(builtin, topics));
        let data_version = stored.unwrap_or_else(|| DataVersion::new(now));
        let wrapper = Self::wrap(&config, &topics, data_version);
        let wrapped_topics = wrapper.topic_config_table.len();
        let names = RequestNames {
            cluster: Name::new(&config.cluster),
            addr: Name::new(&config.addr),
            broker_name: Name::new(&config.broker_name),
            ha_server_addr: Name::new(&config.ha_server_addr()),
        };
        BrokerCore { config, topics, data_version, wrapper, wrapped_topics, names }
    }

    pub fn data_version(&self) -> DataVersion {
        self.data_version
    }

    /// The topic count and DataVersion a full registration carries, read without its wrapper.
    pub fn full_shape(&self) -> (usize, DataVersion) {
        (self.wrapped_topics, self.data_version)
    }

    pub fn topics(&self) -> &TopicTable {
        &self.topics
    }

    /// `registerBrokerAll`: every topic, perms narrowed by `brokerPermission` when it is not rw
    /// (then, and only then, a table of its own).
    fn wrap(config: &BrokerConfig, topics: &Arc<TopicTable>, dv: DataVersion) -> Arc<TopicConfigWrapper> {
        let topic_config_table = if config.permission == perm::READ_WRITE {
            Arc::clone(topics)
        } else {
            Arc::new(topics.narrowed(config.permission))
        };
        Arc::new(TopicConfigWrapper { topic_config_table, data_version: dv })
    }

    fn request(&self, wrapper: Arc<TopicConfigWrapper>) -> RegisterBrokerRequest {
        let c = &self.config;
        RegisterBrokerRequest {
            cluster_name: self.names.cluster,
            broker_addr: self.names.addr,
            broker_name: self.names.broker_name,
            broker_id: c.broker_id,
            ha_server_addr: self.names.ha_server_addr,
            zone_name: None,
            // `doRegisterBrokerAll`: brokerNotActiveTimeoutMillis in acting-master mode, else null.
            heartbeat_timeout_millis: c.enable_acting_master.then_some(c.not_active_timeout),
            enable_acting_master: Some(c.enable_acting_master),
            topic_config_wrapper: Some(wrapper),
            filter_server_list: Some(Vec::new()),
        }
    }

    /// The periodic (and start-up) full registration.
    pub fn full_registration(&self) -> RegisterBrokerRequest {
        self.request(self.wrapper.clone())
    }

    /// A full registration carrying `version` instead of the broker's own DataVersion: what a
    /// test sends when it calls `RouteInfoManager#registerBroker` with a DataVersion of its
    /// choosing (`RouteInfoManagerBrokerRegisterTest`). The broker's own version is untouched.
    pub fn registration_with_version(&self, version: DataVersion) -> RegisterBrokerRequest {
        let wrapper =
            TopicConfigWrapper { topic_config_table: self.wrapper.topic_config_table.clone(), data_version: version };
        self.request(Arc::new(wrapper))
    }

    /// `registerIncrementBrokerData`: only the changed topics, with the DataVersion as it is
    /// *when the registration is built*. Java's caller (`AdminBrokerProcessor#updateAndCreateTopic`)
    /// hands over `TopicConfigManager#getDataVersion()`, the live object, and the method waits for
    /// the controller's lock while another registration holds it; a change made meanwhile
    /// advances that object. So a registration queued behind a slow one goes out with a later
    /// change's version, and that change's own registration repeats it: a name server that took
    /// the first then keeps the second topic's old QueueData (`isTopicConfigChanged` is false).
    /// We reproduce that lost update
    /// (`tests/regressions/rocketmq-a-topic-change-queued-behind-a-registration-is-lost.toml`).
    pub fn incremental_registration(&self, changed: &[String]) -> RegisterBrokerRequest {
        let full = &self.wrapper.topic_config_table;
        let topic_config_table =
            Arc::new(changed.iter().filter_map(|name| full.get(name).map(|t| (name.clone(), t.clone()))).collect());
        let wrapper = TopicConfigWrapper { topic_config_table, data_version: self.data_version };
        self.request(Arc::new(wrapper))
    }

    /// Applies a topic change, bumps the DataVersion (`TopicConfigManager.updateDataVersion`)
    /// and returns the names of topics to send incrementally (none for a delete: 5.x sends no
    /// registration when a topic is deleted from a broker).
    pub fn change_topics(&mut self, now: SimTime, change: TopicChange) -> Vec<String> {
        let changed = match change {
            TopicChange::Upsert(t) => {
                let name = t.topic_name.clone();
                Arc::make_mut(&mut self.topics).insert(t);
                vec![name]
            }
            TopicChange::Delete(name) => {
                Arc::make_mut(&mut self.topics).remove(&name);
                vec![]
            }
        };
        self.bump(now);
        changed
    }

    /// `updateBrokerConfig brokerPermission=N`: bumps the DataVersion; the caller registers.
    pub fn set_permission(&mut self, now: SimTime, permission: u32) {
        self.config.permission = permission;
        self.bump(now);
    }

    /// The broker id changes (a slave promoted to master, or the reverse).
    pub fn set_broker_id(&mut self, id: u64) {
        self.config.broker_id = id;
    }

    fn bump(&mut self, now: SimTime) {
        self.data_version.next_version(now, 0);
        self.wrapper = Self::wrap(&self.config, &self.topics, self.data_version);
        self.wrapped_topics = self.wrapper.topic_config_table.len();
    }

    /// `UNREGISTER_BROKER` header for `unregisterBrokerAll`.
    pub fn unregister_request(&self) -> UnregisterRequest {
        let (c, n) = (&self.config, &self.names);
        UnregisterRequest {
            broker_name: n.broker_name,
            broker_addr: n.addr,
            cluster_name: n.cluster,
            broker_id: c.broker_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocketmq::topic_table::topic_list;

    fn core() -> BrokerCore {
        let mut cfg = BrokerConfig::new("c", "broker-a", 0, "10.0.0.1:10911");
        cfg.system_topics = false;
        BrokerCore::new(cfg, topic_list(&["T1", "T2"]), SimTime(0), None)
    }

    #[test]
    fn every_registration_carries_the_system_topics_unless_turned_off() {
        // RocketMQ TopicConfigManager(BrokerController): SELF_TEST_TOPIC, cluster and broker topics
        let cfg = BrokerConfig::new("c", "broker-a", 0, "10.0.0.1:10911");
        let b = BrokerCore::new(cfg, topic_list(&["T1"]), SimTime(0), None);
        let w = b.full_registration().topic_config_wrapper.unwrap();
        let names: Vec<&str> = w.topic_config_table.keys().map(String::as_str).collect();
        assert_eq!(names, ["SELF_TEST_TOPIC", "T1", "broker-a", "c"]);
        assert_eq!(core().full_registration().topic_config_wrapper.unwrap().topic_config_table.len(), 2);
    }

    #[test]
    fn register_period_is_clamped_to_ten_to_sixty_seconds() {
        // RocketMQ BrokerController#start: Math.max(10000, Math.min(period, 60000))
        let mut c = BrokerConfig::new("c", "b", 0, "h:1");
        c.register_period = SimDuration::from_secs(5);
        assert_eq!(c.effective_register_period(), SimDuration::from_secs(10));
        c.register_period = SimDuration::from_secs(90);
        assert_eq!(c.effective_register_period(), SimDuration::from_secs(60));
    }

    #[test]
    fn periodic_registrations_share_one_wrapper_until_topics_change() {
        let mut b = core();
        let (r1, r2) = (b.full_registration(), b.full_registration());
        assert!(Arc::ptr_eq(r1.topic_config_wrapper.as_ref().unwrap(), r2.topic_config_wrapper.as_ref().unwrap()));
        b.change_topics(SimTime(5), TopicChange::Upsert(TopicConfig::new("T3")));
        let r3 = b.full_registration();
        let w3 = r3.topic_config_wrapper.unwrap();
        assert_eq!(w3.topic_config_table.len(), 3);
        assert_ne!(w3.data_version, r1.topic_config_wrapper.unwrap().data_version);
    }

    #[test]
    fn an_incremental_registration_carries_only_the_changed_topic_and_the_new_version() {
        // RocketMQ BrokerController#registerIncrementBrokerData
        let mut b = core();
        let changed = b.change_topics(SimTime(7), TopicChange::Upsert(TopicConfig::new("T9")));
        let req = b.incremental_registration(&changed);
        let w = req.topic_config_wrapper.unwrap();
        assert_eq!(w.topic_config_table.keys().collect::<Vec<_>>(), ["T9"]);
        assert_eq!(w.data_version, b.data_version());
        assert_eq!(w.data_version.counter, 1);
    }

    #[test]
    fn a_read_only_broker_permission_narrows_every_topic() {
        // RocketMQ BrokerController#registerBrokerAll: perm & brokerPermission when not rw
        let mut b = core();
        b.set_permission(SimTime(1), perm::READ);
        let w = b.full_registration().topic_config_wrapper.unwrap();
        assert!(w.topic_config_table.values().all(|t| t.perm == perm::READ));
        assert_eq!(b.topics()["T1"].perm, perm::READ_WRITE, "the broker's own table keeps rw");
    }

    #[test]
    fn a_restarted_broker_registers_the_data_version_it_stored() {
        // RocketMQ TopicConfigManager#decode: dataVersion.assignNewOne(wrapper.getDataVersion())
        let mut before = core();
        before.change_topics(SimTime(50), TopicChange::Upsert(TopicConfig::new("T3")));
        let stored = before.data_version();
        let cfg = before.config.clone();
        let after = BrokerCore::new(cfg, topic_list(&["T1"]), SimTime(90_000), Some(stored));
        assert_eq!(after.full_registration().topic_config_wrapper.unwrap().data_version, stored);
    }

    #[test]
    fn acting_master_brokers_send_their_ten_second_timeout() {
        // RocketMQ BrokerController#doRegisterBrokerAll: brokerNotActiveTimeoutMillis or null
        let mut b = core();
        assert_eq!(b.full_registration().heartbeat_timeout_millis, None);
        b.config.enable_acting_master = true;
        assert_eq!(b.full_registration().heartbeat_timeout_millis, Some(SimDuration::from_secs(10)));
    }
}
