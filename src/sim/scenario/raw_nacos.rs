//! The Nacos tables as written: `[[nacos_server]]`, `[[instance]]`, `[[subscriber]]`, and the
//! Nacos expectation subjects. Defaults are applied in `nacos.rs`.

use super::raw::S;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNacosServer {
    pub name: S<String>,
    pub start: Option<S<String>>,
    pub light_beat_enabled: Option<bool>,
    pub client_beat_interval: Option<S<String>>,
    pub expire_instance: Option<bool>,
    pub client_expired_time: Option<S<String>>,
    pub push_delay: Option<S<String>>,
    pub push_cache: Option<S<String>>,
    pub cluster: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstance {
    pub name: S<String>,
    pub app: Option<S<String>>,
    pub service: S<String>,
    pub group: Option<S<String>>,
    pub namespace: Option<S<String>>,
    pub cluster: Option<S<String>>,
    pub ip: S<String>,
    pub port: Option<S<i64>>,
    pub weight: Option<S<f64>>,
    pub metadata: Option<S<BTreeMap<String, String>>>,
    pub servers: Option<Vec<S<String>>>,
    pub read_timeout: Option<S<String>>,
    pub cores: Option<S<i64>>,
    pub beat_threads: Option<S<i64>>,
    pub start: Option<S<String>>,
    pub transport: Option<S<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSubscriber {
    pub name: S<String>,
    pub servers: Option<Vec<S<String>>>,
    pub services: Vec<S<String>>,
    pub namespace: Option<S<String>>,
    pub ip: Option<S<String>>,
    pub udp_port: Option<S<i64>>,
    pub read_timeout: Option<S<String>>,
    pub start: Option<S<String>>,
}

/// `instance = { server, instance, state }`, or `servers = [...]` for "on any of these".
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstanceSubject {
    pub server: Option<S<String>>,
    pub servers: Option<S<Vec<S<String>>>>,
    pub instance: S<String>,
    pub state: S<String>,
}

/// `service = { server, service, healthy, total }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServiceSubject {
    pub server: S<String>,
    pub service: S<String>,
    pub group: Option<S<String>>,
    pub namespace: Option<S<String>>,
    pub healthy: Option<S<i64>>,
    pub total: Option<S<i64>>,
}

/// `subscriber = { subscriber, service, instances, healthy }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSubscriberSubject {
    pub subscriber: S<String>,
    pub service: S<String>,
    pub group: Option<S<String>>,
    pub instances: Option<Vec<S<String>>>,
    pub healthy: Option<Vec<S<String>>>,
}

/// `connection = { client, server }`: the server a 2.x client is RUNNING on (`"none"`: none).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConnectionSubject {
    pub client: S<String>,
    pub server: S<String>,
}

/// `member = { server, peer, state }`: `peer` as `server`'s `ServerMemberManager` sees it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMemberSubject {
    pub server: S<String>,
    pub peer: S<String>,
    pub state: S<String>,
}

/// `responsible = { server, instance, member }`: the member `server`'s `DistroMapper` maps the
/// instance's `ip:port` to.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawResponsibleSubject {
    pub server: S<String>,
    pub instance: S<String>,
    pub member: S<String>,
}

/// `update_metadata = { instance, server, metadata }` (`server`: all of the instance's servers).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUpdateMetadata {
    pub instance: S<String>,
    pub server: Option<S<String>>,
    pub metadata: S<BTreeMap<String, String>>,
}

/// `nacos_switch = { server, client_beat_interval, light_beat_enabled }` (`server`: all).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNacosSwitch {
    pub server: Option<S<String>>,
    pub client_beat_interval: Option<S<RawMillis>>,
    pub light_beat_enabled: Option<bool>,
}

/// A duration (`"2s"`) or, as the switch API takes it, a number of milliseconds that may be 0 or
/// negative (`-1`).
#[derive(Deserialize)]
#[serde(untagged)]
pub enum RawMillis {
    Millis(i64),
    Text(String),
}
