//! RocketMQ's route value types, as the name server stores and serves them.
//!
//! Field names follow the Java classes (`QueueData`, `BrokerData`, `BrokerLiveInfo`, ...) so the
//! port can be read side by side with `RouteInfoManager.java`. Maps are `BTreeMap` where Java has
//! `HashMap`: the contents are the same, and iteration order (which reaches traces and route
//! answers) becomes deterministic.

pub use crate::rocketmq::broker_addrs::BrokerAddrs;
pub use crate::rocketmq::topic_table::TopicTable;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ChannelId;
use crate::sim::name::Name;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// `PermName`: topic permission bits.
pub mod perm {
    pub const PRIORITY: u32 = 8;
    pub const READ: u32 = 4;
    pub const WRITE: u32 = 2;
    pub const INHERIT: u32 = 1;
    /// The default topic perm, read + write.
    pub const READ_WRITE: u32 = READ | WRITE;

    pub fn is_readable(perm: u32) -> bool {
        perm & READ == READ
    }

    pub fn is_writeable(perm: u32) -> bool {
        perm & WRITE == WRITE
    }

    /// `"rw"`, `"r"`, `"w"` or `"-"`, the spelling scenario files use.
    pub fn to_text(perm: u32) -> &'static str {
        match (is_readable(perm), is_writeable(perm)) {
            (true, true) => "rw",
            (true, false) => "r",
            (false, true) => "w",
            (false, false) => "-",
        }
    }

    /// Inverse of [`to_text`]: exactly its four spellings, so that `"wr"` or `""` in a scenario
    /// is reported instead of quietly meaning something.
    pub fn from_text(text: &str) -> Option<u32> {
        match text {
            "rw" => Some(READ_WRITE),
            "r" => Some(READ),
            "w" => Some(WRITE),
            "-" => Some(0),
            _ => None,
        }
    }
}

/// `MixAll.MASTER_ID`: broker id 0 is the master of its group.
pub const MASTER_ID: u64 = 0;

/// `RouteInfoManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME`: 2 minutes.
pub const DEFAULT_BROKER_CHANNEL_EXPIRED_TIME: SimDuration = SimDuration::from_secs(120);

/// Netty's idle close on every remoting connection, both ends: `IdleStateHandler(0, 0, 120 s)`
/// from `NettyServerConfig.serverChannelMaxIdleTimeSeconds` (name server) and
/// `NettySystemConfig.clientChannelMaxIdleTimeSeconds` (brokers, clients), both 120.
pub const NETTY_IDLE_TIME: SimDuration = SimDuration::from_secs(120);

/// `NamesrvController#startScheduleService`: the scan's first run 5 ms after start in
/// 5.0.0–5.3.3, the latest release; develop moved it to 5 s (#9682, not yet released).
pub const SCAN_INITIAL_DELAY: SimDuration = SimDuration::from_millis(5);

/// `TopicConfig`: one topic as a broker holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TopicConfig {
    pub topic_name: String,
    pub read_queue_nums: u32,
    pub write_queue_nums: u32,
    pub perm: u32,
    pub topic_sys_flag: u32,
}

impl TopicConfig {
    /// RocketMQ's defaults: 16 read and 16 write queues, perm rw.
    pub fn new(name: &str) -> Self {
        TopicConfig {
            topic_name: name.to_string(),
            read_queue_nums: 16,
            write_queue_nums: 16,
            perm: perm::READ_WRITE,
            topic_sys_flag: 0,
        }
    }
}

/// `DataVersion`: changes whenever a broker's topic set changes.
///
/// `equals` compares all three fields, so two brokers' versions are never confused even when
/// their counters agree (the timestamp differs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DataVersion {
    pub state_version: u64,
    pub timestamp: SimTime,
    pub counter: u64,
}

impl DataVersion {
    /// `new DataVersion()`: timestamp = now, counter 0.
    pub fn new(now: SimTime) -> Self {
        DataVersion { state_version: 0, timestamp: now, counter: 0 }
    }

    /// `nextVersion(stateVersion)`: timestamp = now, counter + 1.
    pub fn next_version(&mut self, now: SimTime, state_version: u64) {
        self.timestamp = now;
        self.state_version = state_version;
        self.counter += 1;
    }
}

impl DataVersion {
    /// The longest text: `v`, two 20-digit numbers, `@`, `.`, three digits and `s`.
    pub const TEXT_MAX: usize = 47;

    /// The text `Display` shows, `v{counter}@{seconds}.{millis:03}s` (the timestamp as
    /// `SimTime` shows it), written into `buf` without `core::fmt`. Every registration's trace
    /// note carries its version and the trace digest writes it each time: kept as text, the
    /// note shared a per-broker string, a reference count in a cache line of its own to touch
    /// every 30 s (docs/speed-history.md, "A channel in one line").
    pub fn text<'a>(&self, buf: &'a mut [u8; Self::TEXT_MAX]) -> &'a str {
        std::str::from_utf8(self.text_bytes(buf)).expect("ASCII digits and letters")
    }

    /// `text`'s bytes, for the trace digest, which has no use for them as a `str`: checking
    /// them for UTF-8 was a third of the text's cost. Each number's digits are written in
    /// place, its width known first, rather than copied from a buffer at a width known only
    /// then (a `memcpy` call each).
    pub fn text_bytes<'a>(&self, buf: &'a mut [u8; Self::TEXT_MAX]) -> &'a [u8] {
        buf[0] = b'v';
        let mut at = put_decimal(buf, 1, self.counter);
        buf[at] = b'@';
        at = put_decimal(buf, at + 1, self.timestamp.0 / 1000);
        let ms = self.timestamp.0 % 1000;
        let tail = [b'.', b'0' + (ms / 100) as u8, b'0' + (ms / 10 % 10) as u8, b'0' + (ms % 10) as u8, b's'];
        buf[at..at + 5].copy_from_slice(&tail);
        &buf[..at + 5]
    }
}

/// Writes `n`'s decimal digits into `buf` from `at`; returns where they end.
fn put_decimal(buf: &mut [u8], at: usize, mut n: u64) -> usize {
    let end = at + n.checked_ilog10().map_or(1, |log| log as usize + 1);
    let mut i = end;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return end;
        }
    }
}

impl fmt::Display for DataVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text(&mut [0; Self::TEXT_MAX]))
    }
}

/// `TopicConfigSerializeWrapper`: the body of a registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TopicConfigWrapper {
    /// Shared with the broker's own table when its permission narrows nothing: a periodic
    /// registration of 100 topics costs one reference, not a copy per broker. Serialized as the
    /// map Java sends (see [`TopicTable`]).
    pub topic_config_table: Arc<TopicTable>,
    pub data_version: DataVersion,
}

/// `QueueData`: one broker group's queues for one topic. `equals` compares all five fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QueueData {
    pub broker_name: Name,
    pub read_queue_nums: u32,
    pub write_queue_nums: u32,
    pub perm: u32,
    pub topic_sys_flag: u32,
}

/// `BrokerData`: one broker group (a master and its slaves) by broker name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BrokerData {
    pub cluster: Name,
    pub broker_name: Name,
    /// brokerId -> "ip:port"; id 0 is the master.
    pub broker_addrs: BrokerAddrs,
    pub zone_name: Option<String>,
    pub enable_acting_master: bool,
}

impl BrokerData {
    pub fn new(cluster: impl Into<Name>, broker_name: impl Into<Name>) -> Self {
        BrokerData {
            cluster: cluster.into(),
            broker_name: broker_name.into(),
            broker_addrs: BrokerAddrs::new(),
            zone_name: None,
            enable_acting_master: false,
        }
    }
}

/// `BrokerAddrInfo`: the key of the live and filter-server tables. Since 5.0 it is the pair
/// (cluster, address); the same `ip:port` under two cluster names is two live entries.
///
/// Two interned [`Name`]s: copied, hashed and compared without reading either text, which is
/// what the live table's lookup at every registration and heartbeat does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BrokerAddrInfo {
    pub cluster_name: Name,
    pub broker_addr: Name,
}

impl BrokerAddrInfo {
    pub fn new(cluster: impl Into<Name>, addr: impl Into<Name>) -> Self {
        BrokerAddrInfo { cluster_name: cluster.into(), broker_addr: addr.into() }
    }
}

impl fmt::Display for BrokerAddrInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.cluster_name, self.broker_addr)
    }
}

/// `brokerName[id]@addr`, how the trace names a broker process in a name server's notes.
///
/// Built by hand rather than with `format!`: a name server writes one for every registration and
/// heartbeat it takes, and the formatting machinery (with the reallocations of a string that
/// starts empty) cost more than the route-table update itself.
pub fn broker_label(broker_name: &str, broker_id: u64, addr: &str) -> String {
    let mut out = String::with_capacity(broker_name.len() + addr.len() + 24);
    let label = BrokerLabel { name: broker_name, id: broker_id, addr };
    label.write_to(&mut out).expect("a String takes any text");
    out
}

/// `brokerName[id]@addr` as its parts, written out only when read (see [`broker_label`]): a
/// note can hold one without building the text.
#[derive(Clone, Copy, Debug)]
pub struct BrokerLabel<'a> {
    pub name: &'a str,
    pub id: u64,
    pub addr: &'a str,
}

impl BrokerLabel<'_> {
    fn write_to(&self, out: &mut impl fmt::Write) -> fmt::Result {
        let mut digits = [0u8; 20];
        let id = std::str::from_utf8(decimal(self.id, &mut digits)).expect("ASCII digits");
        for part in [self.name, "[", id, "]@", self.addr] {
            out.write_str(part)?;
        }
        Ok(())
    }
}

impl fmt::Display for BrokerLabel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_to(f)
    }
}

impl Serialize for BrokerLabel<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Appends `n` in decimal, as `{n}` would, without the formatting machinery (see
/// [`broker_label`]).
pub fn push_decimal(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    out.push_str(std::str::from_utf8(decimal(n, &mut digits)).expect("ASCII digits"));
}

/// `n`'s decimal digits, written into `buf` (20 bytes hold the largest `u64`).
pub fn decimal(n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let end = put_decimal(buf, 0, n);
    &buf[..end]
}

/// `BrokerLiveInfo`: replaced whole on every registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BrokerLiveInfo {
    pub last_update_timestamp: SimTime,
    pub heartbeat_timeout_millis: SimDuration,
    pub data_version: DataVersion,
    pub channel: ChannelId,
    pub ha_server_addr: Name,
}

impl BrokerLiveInfo {
    /// The last instant the entry is alive: `scanNotActiveBroker` expires it once
    /// `last + timeout < now`, strictly.
    pub fn expiry(&self) -> SimTime {
        self.last_update_timestamp + self.heartbeat_timeout_millis
    }
}

/// `TopicRouteData`: the answer to `GET_ROUTEINFO_BY_TOPIC`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TopicRouteData {
    /// Shared with the table as `broker_datas` is.
    pub queue_datas: Vec<Rc<QueueData>>,
    /// Shared with the name server's table: an answer is a snapshot, and a later change to a
    /// group copies the group (`Rc::make_mut`) rather than the answers that hold it. Ten
    /// clients polling ten topics of a 500-group cluster hold 100,000 of these.
    pub broker_datas: Vec<Rc<BrokerData>>,
    pub filter_server_table: BTreeMap<String, Vec<String>>,
}

/// `RegisterBrokerRequestHeader` plus its body, as `registerBroker` receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterBrokerRequest {
    // The names are interned: a broker sends the same three every 30 s to every name server,
    // which finds its tables' entries by them (see `Name`).
    pub cluster_name: Name,
    pub broker_addr: Name,
    pub broker_name: Name,
    pub broker_id: u64,
    pub ha_server_addr: Name,
    pub zone_name: Option<String>,
    /// `heartbeatTimeoutMillis`: 10 s from acting-master brokers, absent (120 s) otherwise.
    pub heartbeat_timeout_millis: Option<SimDuration>,
    /// `enableActingMaster`: `None` for old brokers that do not send the field.
    pub enable_acting_master: Option<bool>,
    /// Shared, because a broker sends the same table to every name server.
    pub topic_config_wrapper: Option<Arc<TopicConfigWrapper>>,
    pub filter_server_list: Option<Vec<String>>,
}

/// `UnRegisterBrokerRequestHeader`. Java gives it no `equals`, so a batch may hold duplicates;
/// every unregister step is idempotent, which makes that harmless.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnregisterRequest {
    pub broker_name: Name,
    pub broker_addr: Name,
    pub cluster_name: Name,
    pub broker_id: u64,
}

impl fmt::Display for UnregisterRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}[{}]@{}", self.cluster_name, self.broker_name, self.broker_id, self.broker_addr)
    }
}

#[cfg(test)]
mod tests {
    use super::{broker_label, push_decimal, BrokerLabel, DataVersion};
    use crate::sim::clock::SimTime;

    #[test]
    fn a_data_version_reads_as_its_counter_at_its_timestamp_as_format_would_write_them() {
        // Every width's edges: the digits are written at a width worked out first.
        let mut cases = vec![(0, 0), (1, 999), (7, 1_000), (42, 30_005), (123, 86_400_010), (u64::MAX, u64::MAX)];
        for p in (1..20).map(|e| 10u64.pow(e)) {
            cases.extend([(p - 1, (p - 1).saturating_mul(1000)), (p, p.saturating_mul(1000).saturating_add(7))]);
        }
        for (counter, ms) in cases {
            let v = DataVersion { state_version: 9, timestamp: SimTime(ms), counter };
            let text = v.text(&mut [0; DataVersion::TEXT_MAX]).to_string();
            assert_eq!(text, format!("v{counter}@{}.{:03}s", ms / 1000, ms % 1000));
            assert_eq!(v.to_string(), text);
        }
    }

    #[test]
    fn hand_built_labels_read_exactly_as_format_would_write_them() {
        assert_eq!(
            broker_label("broker-a", 1, "10.0.0.2:10911"),
            format!("{}[{}]@{}", "broker-a", 1, "10.0.0.2:10911")
        );
        let label = BrokerLabel { name: "broker-b", id: 0, addr: "10.0.0.3:10911" };
        assert_eq!(label.to_string(), "broker-b[0]@10.0.0.3:10911");
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX] {
            let mut out = String::from("x");
            push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
    }
}
