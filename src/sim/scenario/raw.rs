//! The scenario file as written: serde structs that mirror the TOML one to one.
//!
//! Unknown keys are rejected (`deny_unknown_fields`). Values that validation may reject keep
//! their position (`Spanned`) so the error can point at them. Defaults are applied during
//! validation, where they are documented (`docs/scenario-format.md` lists every key).

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub scenario: S<RawMeta>,
    #[serde(default)]
    pub network: Option<S<RawNetwork>>,
    #[serde(default)]
    pub namesrv: Vec<S<RawNamesrv>>,
    #[serde(default)]
    pub broker: Vec<S<RawBroker>>,
    #[serde(default)]
    pub client: Vec<S<RawClient>>,
    #[serde(default)]
    pub producer: Vec<S<RawProducer>>,
    #[serde(default)]
    pub nacos_server: Vec<S<super::raw_nacos::RawNacosServer>>,
    #[serde(default)]
    pub instance: Vec<S<super::raw_nacos::RawInstance>>,
    #[serde(default)]
    pub subscriber: Vec<S<super::raw_nacos::RawSubscriber>>,
    #[serde(default)]
    pub fault: Vec<S<RawEvent>>,
    #[serde(default)]
    pub action: Vec<S<RawEvent>>,
    #[serde(default)]
    pub expect: Vec<S<RawExpect>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMeta {
    pub name: S<String>,
    pub seed: Option<S<i64>>,
    pub duration: S<String>,
    pub description: Option<String>,
    pub invariants: Option<Vec<S<String>>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    pub latency: Option<S<String>>,
    pub jitter: Option<S<String>>,
    pub loss: Option<S<f64>>,
    pub connect_timeout: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNamesrv {
    pub name: S<String>,
    pub start: Option<S<String>>,
    pub scan_interval: Option<S<String>>,
    pub scan_initial_delay: Option<S<String>>,
    pub unregister_queue_capacity: Option<S<i64>>,
    pub unregister_delay: Option<S<String>>,
    pub idle_close: Option<S<String>>,
    pub support_acting_master: Option<bool>,
    pub notify_min_broker_id_changed: Option<bool>,
    pub delete_topic_with_broker_registration: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBroker {
    pub name: S<String>,
    pub cluster: Option<S<String>>,
    pub broker_name: S<String>,
    pub id: Option<S<i64>>,
    pub addr: S<String>,
    pub namesrvs: Option<Vec<S<String>>>,
    pub register_period: Option<S<String>>,
    pub enable_acting_master: Option<bool>,
    pub permission: Option<S<String>>,
    pub system_topics: Option<bool>,
    pub register_timeout: Option<S<String>>,
    pub refresh_metadata: Option<bool>,
    pub idle_close: Option<S<String>>,
    pub start: Option<S<String>>,
    #[serde(default)]
    pub topics: Vec<S<RawTopic>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopic {
    pub name: S<String>,
    pub read: Option<S<i64>>,
    pub write: Option<S<i64>>,
    pub perm: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClient {
    pub name: S<String>,
    pub namesrvs: Option<Vec<S<String>>>,
    pub topics: Vec<S<String>>,
    pub poll_interval: Option<S<String>>,
    pub timeout: Option<S<String>>,
    pub idle_close: Option<S<String>>,
    pub start: Option<S<String>>,
}

/// A `DefaultMQProducer` inside a client process (its `MQClientInstance`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProducer {
    pub name: S<String>,
    pub client: S<String>,
    pub topic: S<String>,
    pub rate: Option<S<i64>>,
    pub burst: Option<S<i64>>,
    pub every: Option<S<String>>,
    pub mode: Option<S<String>>,
    pub from: Option<S<String>>,
    pub until: Option<S<String>>,
    pub send_timeout: Option<S<String>>,
    pub retry_times: Option<S<i64>>,
    pub retry_times_async: Option<S<i64>>,
    pub retry_another_broker_when_not_store_ok: Option<bool>,
    pub send_latency_fault_enable: Option<bool>,
    pub start_detector_enable: Option<bool>,
}

/// The `sends` subject: what a producer's sends did over the expectation's window.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSends {
    pub producer: S<String>,
    pub to_broker: Option<S<String>>,
    pub sent_at_most: Option<S<i64>>,
    pub failed: Option<S<i64>>,
    pub failed_at_most: Option<S<i64>>,
    pub failed_at_least: Option<S<i64>>,
    pub succeeded_at_least: Option<S<i64>>,
    pub retried_at_most: Option<S<i64>>,
    pub max_latency: Option<S<String>>,
}

/// One `[[fault]]` or `[[action]]`: a time, an optional name, and exactly one verb.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    pub at: S<String>,
    pub name: Option<S<String>>,
    // process faults
    pub crash: Option<S<String>>,
    pub host_down: Option<S<String>>,
    pub hang: Option<S<String>>,
    pub resume: Option<S<String>>,
    pub shutdown: Option<S<String>>,
    pub restart: Option<S<String>>,
    // network faults
    pub partition: Option<S<Vec<Vec<S<String>>>>>,
    pub block: Option<S<RawLink>>,
    pub heal: Option<S<String>>,
    pub loss: Option<S<RawLinkLoss>>,
    pub latency: Option<S<RawLinkLatency>>,
    // operator actions
    pub wipe_write_perm: Option<S<RawPermOp>>,
    pub add_write_perm: Option<S<RawPermOp>>,
    pub delete_topic: Option<S<RawDeleteTopic>>,
    pub register_topic: Option<S<RawRegisterTopic>>,
    pub unregister_broker: Option<S<RawUnregisterBroker>>,
    pub register_broker: Option<S<RawRegisterBroker>>,
    pub upsert_topic: Option<S<RawUpsertTopic>>,
    pub remove_topic: Option<S<RawRemoveTopic>>,
    pub set_broker_id: Option<S<RawSetId>>,
    pub broker_permission: Option<S<RawBrokerPerm>>,
    // Nacos operations
    pub update_metadata: Option<S<super::raw_nacos::RawUpdateMetadata>>,
    pub deregister: Option<S<String>>,
    pub nacos_switch: Option<S<super::raw_nacos::RawNacosSwitch>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    pub from: S<String>,
    pub to: S<String>,
}

/// `{ from, to, rate }` for one direction or `{ between = [a, b], rate }` for both.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLinkLoss {
    pub from: Option<S<String>>,
    pub to: Option<S<String>>,
    pub between: Option<Vec<S<String>>>,
    pub rate: S<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLinkLatency {
    pub from: Option<S<String>>,
    pub to: Option<S<String>>,
    pub between: Option<Vec<S<String>>>,
    pub base: S<String>,
    pub jitter: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPermOp {
    pub namesrv: Option<S<String>>,
    pub broker_name: S<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDeleteTopic {
    pub namesrv: Option<S<String>>,
    pub topic: S<String>,
    pub cluster: Option<S<String>>,
}

/// `register_topic = { topic, queues = [{ broker_name, read, write, perm, sys_flag }], namesrv }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRegisterTopic {
    pub namesrv: Option<S<String>>,
    pub topic: S<String>,
    pub queues: S<Vec<S<RawTopicQueue>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopicQueue {
    pub broker_name: S<String>,
    pub read: Option<S<i64>>,
    pub write: Option<S<i64>>,
    pub perm: Option<S<String>>,
    pub sys_flag: Option<S<i64>>,
}

/// `unregister_broker = { broker = "a0" }`, or the header's fields given one by one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUnregisterBroker {
    pub namesrv: Option<S<String>>,
    pub broker: Option<S<String>>,
    pub cluster: Option<S<String>>,
    pub broker_addr: Option<S<String>>,
    pub broker_name: Option<S<String>>,
    pub broker_id: Option<S<i64>>,
}

/// `register_broker = { broker, data_version = { counter, timestamp, state_version } }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRegisterBroker {
    pub broker: S<String>,
    pub data_version: S<RawDataVersion>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDataVersion {
    pub counter: S<i64>,
    pub timestamp: Option<S<String>>,
    pub state_version: Option<S<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUpsertTopic {
    pub broker: S<String>,
    pub name: S<String>,
    pub read: Option<S<i64>>,
    pub write: Option<S<i64>>,
    pub perm: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRemoveTopic {
    pub broker: S<String>,
    pub topic: S<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSetId {
    pub broker: S<String>,
    pub id: S<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBrokerPerm {
    pub broker: S<String>,
    pub perm: S<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    pub name: S<String>,
    pub at: Option<S<String>>,
    pub after: Option<S<String>>,
    pub within: Option<S<String>>,
    pub from: Option<S<String>>,
    pub until: Option<S<String>>,
    pub route: Option<S<RawRoute>>,
    pub client: Option<S<RawRoute>>,
    pub live: Option<S<RawLive>>,
    pub cluster: Option<S<RawCluster>>,
    pub instance: Option<S<super::raw_nacos::RawInstanceSubject>>,
    pub service: Option<S<super::raw_nacos::RawServiceSubject>>,
    pub subscriber: Option<S<super::raw_nacos::RawSubscriberSubject>>,
    pub member: Option<S<super::raw_nacos::RawMemberSubject>>,
    pub connection: Option<S<super::raw_nacos::RawConnectionSubject>>,
    pub responsible: Option<S<super::raw_nacos::RawResponsibleSubject>>,
    pub sends: Option<S<RawSends>>,
    pub events: Option<S<RawEvents>>,
    pub topics: Option<S<RawTopics>>,
    pub registration: Option<S<RawRegistration>>,
    pub converges: Option<S<RawConverges>>,
}

/// The `events` subject: how many trace events of one kind the window holds.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvents {
    pub kind: S<String>,
    pub area: Option<S<String>>,
    pub actor: Option<S<String>>,
    pub broker: Option<S<String>>,
    pub instance: Option<S<String>>,
    #[serde(rename = "where")]
    pub fields: Option<S<BTreeMap<String, S<toml::Value>>>>,
    pub count: Option<S<i64>>,
    pub at_least: Option<S<i64>>,
    pub at_most: Option<S<i64>>,
}

/// `converges = { p50 = "100s..115s", p99 = "125s", max = "126s" }`: bounds for `sweep`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConverges {
    pub min: Option<S<String>>,
    pub p50: Option<S<String>>,
    pub p90: Option<S<String>>,
    pub p99: Option<S<String>>,
    pub max: Option<S<String>>,
}

/// The route claims, for a name server's route (`namesrv`) or a client's view (`client`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRoute {
    pub namesrv: Option<S<String>>,
    pub client: Option<S<String>>,
    pub topic: S<String>,
    pub absent: Option<bool>,
    pub brokers: Option<Vec<S<String>>>,
    pub addrs: Option<S<BTreeMap<String, BTreeMap<String, String>>>>,
    pub perm: Option<S<BTreeMap<String, String>>>,
    pub queues: Option<S<BTreeMap<String, RawQueues>>>,
    pub writable_queues: Option<S<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQueues {
    pub read: i64,
    pub write: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLive {
    pub namesrv: S<String>,
    pub broker: S<String>,
    pub present: bool,
    pub data_version: Option<S<i64>>,
    pub last_update: Option<S<String>>,
    pub timeout: Option<S<String>>,
}

/// The `registration` subject: a broker's last REGISTER_BROKER answer.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRegistration {
    pub broker: S<String>,
    pub namesrv: S<String>,
    pub master_addr: Option<S<String>>,
    pub ha_server_addr: Option<S<String>>,
}

/// The `topics` subject: a topic-list query's answer.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopics {
    pub namesrv: S<String>,
    pub query: S<String>,
    pub cluster: Option<S<String>>,
    pub topics: Option<Vec<S<String>>>,
    pub includes: Option<Vec<S<String>>>,
    pub excludes: Option<Vec<S<String>>>,
    pub broker_addr: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCluster {
    pub namesrv: S<String>,
    pub cluster: S<String>,
    pub brokers: Vec<S<String>>,
}
