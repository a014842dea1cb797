//! Nacos value types and constants: the service and client identities, an instance as the client
//! registers it, the data a list answer or a push carries, and the metadata rules both sides use.
//!
//! Names are shared as `Arc<str>`: a beat round trip clones identities many times, and a refcount
//! bump costs nothing next to a `String` allocation.

use crate::sim::clock::SimTime;
use crate::sim::name::Name;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

/// `Constants.DEFAULT_HEART_BEAT_INTERVAL`: the client's beat period, and the server's check and
/// cleaner periods (both hard-coded to it; #5216 asked to change them and was declined).
pub const DEFAULT_HEART_BEAT_INTERVAL: u64 = 5_000;
/// `Constants.DEFAULT_HEART_BEAT_TIMEOUT`: silence after which an instance is marked unhealthy.
pub const DEFAULT_HEART_BEAT_TIMEOUT: i64 = 15_000;
/// `Constants.DEFAULT_IP_DELETE_TIMEOUT`: silence after which an instance is deleted; also the
/// idle time after which the cleaner drops a client that publishes nothing.
pub const DEFAULT_IP_DELETE_TIMEOUT: i64 = 30_000;
/// `ClientConstants.DEFAULT_CLIENT_EXPIRED_TIME`: a client not updated for this long is removed
/// whatever it publishes (`nacos.naming.client.expired.time`).
pub const DEFAULT_CLIENT_EXPIRED_TIME: u64 = 180_000;
/// `SwitchDomain.defaultPushCacheMillis`: the `cacheMillis` in answers to push-capable clients,
/// which the 1.x `HostReactor` uses as its poll period.
pub const DEFAULT_PUSH_CACHE_MILLIS: u64 = 10_000;
/// `PushConfig.pushTaskDelay`: how long a `PushDelayTask` waits (merging) before it runs.
pub const DEFAULT_PUSH_TASK_DELAY: u64 = 500;
/// `NacosDelayTaskExecuteEngine`'s default `processInterval`: the push engine's poll period.
pub const PUSH_ENGINE_TICK: u64 = 100;
/// `com.alibaba.nacos.client.naming.rtimeout`: the HTTP read timeout of the naming client.
pub const DEFAULT_READ_TIMEOUT: u64 = 50_000;

/// `NamingResponseCode.OK`.
pub const CODE_OK: i32 = 10_200;
/// `NamingResponseCode.RESOURCE_NOT_FOUND`: the beat's client or service is unknown.
pub const CODE_RESOURCE_NOT_FOUND: i32 = 20_404;

/// `PreservedMetadataKeys`, read from the instance's metadata.
pub const HEART_BEAT_INTERVAL_KEY: &str = "preserved.heart.beat.interval";
pub const HEART_BEAT_TIMEOUT_KEY: &str = "preserved.heart.beat.timeout";
pub const IP_DELETE_TIMEOUT_KEY: &str = "preserved.ip.delete.timeout";
/// `InstanceEnableBeatCheckInterceptor`: `enableClientBeat=true` *skips* the timeout checks.
pub const ENABLE_CLIENT_BEAT_KEY: &str = "enableClientBeat";

pub const DEFAULT_NAMESPACE: &str = "public";
pub const DEFAULT_GROUP: &str = "DEFAULT_GROUP";
pub const DEFAULT_CLUSTER: &str = "DEFAULT";

/// Instance metadata (`extendDatum` on the server). Sorted, so it prints the same every run.
pub type Metadata = BTreeMap<String, String>;

/// A 2.x `Service`: namespace plus the grouped name `group@@name`. `Service.equals` ignores the
/// ephemeral flag, and every service in this model is ephemeral, so it is left out.
///
/// One pointer to the shared [`ServiceName`]: every beat request, instance and index entry
/// holds a key, and at two strings and a hash (40 bytes) a light beat's request took two cache
/// lines, one read by the app's send and one by the server, each a miss (a bench instance's
/// request is read every 5 s, with 9,999 others' in between). At 8 bytes it takes one. A few
/// hundred services are read on every beat, so their names stay cached.
///
/// Keys are interned, as [`Name`]s are: [`ServiceKey::new`] makes one entry per distinct
/// namespace and grouped name, never freed, so equal keys are the same pointer and a clone is a
/// pointer copy. A beat's key is cloned several times between the app and the naming server, and
/// as an `Arc` each clone and drop was an atomic count on the service's shared line. Services
/// enter the model only with a scenario, so the entries stay few however long a process runs.
#[derive(Clone)]
pub struct ServiceKey(&'static ServiceName);

/// What a [`ServiceKey`] points to.
#[derive(Serialize)]
#[serde(rename = "ServiceKey")]
pub struct ServiceName {
    pub namespace: Arc<str>,
    /// `NamingUtils.getGroupedName`: `DEFAULT_GROUP@@orders`.
    pub grouped: Arc<str>,
    /// The content's hash, computed once: the naming server hashes the key of every beat twice.
    #[serde(skip)]
    hash: u64,
}

/// Keyed by the entries' own names: the text is kept once.
type ServiceTable = HashMap<(Arc<str>, Arc<str>), &'static ServiceName, rustc_hash::FxBuildHasher>;

impl ServiceKey {
    /// The key of `group@@name` in `namespace`, interning it on first use. Takes a process-wide
    /// lock: call it where a service enters the model (a scenario), not per event.
    pub fn new(namespace: &str, group: &str, name: &str) -> Self {
        static TABLE: OnceLock<Mutex<ServiceTable>> = OnceLock::new();
        let grouped = format!("{group}@@{name}");
        let key: (Arc<str>, Arc<str>) = (Arc::from(namespace), Arc::from(grouped));
        // An insert is one call, so a lock poisoned by a panic elsewhere still guards a whole table.
        let mut table = TABLE.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(entry) = table.get(&key) {
            return ServiceKey(entry);
        }
        let mut h = rustc_hash::FxHasher::default();
        (&*key.0, &*key.1).hash(&mut h);
        let (namespace, grouped) = (key.0.clone(), key.1.clone());
        let entry: &'static ServiceName = Box::leak(Box::new(ServiceName { namespace, grouped, hash: h.finish() }));
        table.insert(key, entry);
        ServiceKey(entry)
    }
}

impl std::ops::Deref for ServiceKey {
    type Target = ServiceName;

    fn deref(&self) -> &ServiceName {
        self.0
    }
}

impl Serialize for ServiceKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl Hash for ServiceKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl fmt::Debug for ServiceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceKey").field("namespace", &self.0.namespace).field("grouped", &self.0.grouped).finish()
    }
}

/// Equality is identity: the interner gives equal content one entry.
impl PartialEq for ServiceKey {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for ServiceKey {}

/// Content order (namespace, then grouped name), never creation order.
impl Ord for ServiceKey {
    fn cmp(&self, other: &Self) -> Ordering {
        if self == other {
            return Ordering::Equal;
        }
        let (a, b) = (self.0, other.0);
        a.namespace.cmp(&b.namespace).then_with(|| a.grouped.cmp(&b.grouped))
    }
}

impl PartialOrd for ServiceKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// `DEFAULT_GROUP@@orders`, prefixed by the namespace when it is not `public`.
impl fmt::Display for ServiceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if &*self.namespace == DEFAULT_NAMESPACE {
            f.write_str(&self.grouped)
        } else {
            write!(f, "{}/{}", self.namespace, self.grouped)
        }
    }
}

/// The identity of an `IpPortBasedClient`: its id is `ip:port#true`. One client publishes at most
/// one instance per service, so `(client, service)` names an instance on a server.
///
/// The ip is an interned [`Name`]: every beat finds its client by this key, and a `Name` hashes
/// and compares without reading the text. Ordered by the ip's text, then the port.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ClientKey {
    pub ip: Name,
    pub port: u16,
}

impl ClientKey {
    pub fn new(ip: &Name, port: u16) -> Self {
        ClientKey { ip: *ip, port }
    }
}

impl ClientKey {
    /// `IpPortBasedClient#getResponsibleId`: the client id up to its `#`, i.e. `ip:port` — the tag
    /// `DistroMapper` hashes.
    pub fn responsible_tag(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }
}

/// `ip:port#true`, the client id Nacos logs.
impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}#true", self.ip, self.port)
    }
}

/// An `Instance` as the client sends it to `POST /nacos/v1/ns/instance` (always ephemeral here).
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    pub ip: Name,
    pub port: u16,
    pub weight: f64,
    pub cluster: Arc<str>,
    pub metadata: Arc<Metadata>,
    pub healthy: bool,
    pub enabled: bool,
}

/// One host in a `ServiceInfo` (the list answer and the push payload).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Host {
    pub ip: Name,
    pub port: u16,
    pub cluster: Arc<str>,
    pub weight: f64,
    pub healthy: bool,
    pub enabled: bool,
}

/// A `ServiceInfo`: what `GET /instance/list` answers and what a UDP push carries.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceInfo {
    pub service: ServiceKey,
    /// Sorted by `ip:port` (Java's order is a `HashSet`'s; sorting keeps output stable).
    pub hosts: Vec<Host>,
    /// `lastRefTime`: the server's clock when the answer or push was built.
    pub last_ref_time: SimTime,
    /// `cacheMillis`: the 1.x client's next poll delay.
    pub cache_millis: u64,
}

/// `ConvertUtils.toLong(String)` as the 2.x server applies it to `preserved.*` metadata: blank
/// gives 0 (its default) and **any parse failure gives 0**. `Long.parseLong` takes an optional
/// sign and decimal digits, no spaces, within `i64` — exactly what `str::parse::<i64>` takes.
///
/// This is the root of the flapping trap: `preserved.heart.beat.timeout = "15s"` makes the
/// server's timeout 0 ms, not 15 s.
pub fn to_long(value: &str) -> i64 {
    if value.trim().is_empty() {
        return 0;
    }
    value.parse::<i64>().unwrap_or(0)
}

/// The client side's reading of the same keys (`Instance#getMetaDataByKeyWithDefault`): the value
/// if it matches `^\d+$`, else the default. `Err` when the digits overflow a long — Java's
/// `Long.parseLong` throws there and the registration call fails.
pub fn client_metadata_millis(metadata: &Metadata, key: &str, default: i64) -> Result<i64, String> {
    match metadata.get(key) {
        Some(v) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
            v.parse::<i64>().map_err(|_| format!("{key} = {v:?} overflows a Java long (NumberFormatException)"))
        }
        _ => Ok(default),
    }
}

/// `Instance#getInstanceHeartBeatInterval`, the client's beat period in milliseconds.
pub fn client_beat_interval(metadata: &Metadata) -> Result<i64, String> {
    client_metadata_millis(metadata, HEART_BEAT_INTERVAL_KEY, DEFAULT_HEART_BEAT_INTERVAL as i64)
}

/// `NamingUtils.checkInstanceIsLegal` (client and server): the interval must not exceed either
/// timeout, as the *client* reads them. A non-numeric timeout reads as its default here, so the
/// registration passes — while the server reads the same value as 0.
pub fn check_instance_is_legal(metadata: &Metadata) -> Result<(), String> {
    let interval = client_beat_interval(metadata)?;
    let timeout = client_metadata_millis(metadata, HEART_BEAT_TIMEOUT_KEY, DEFAULT_HEART_BEAT_TIMEOUT)?;
    let delete = client_metadata_millis(metadata, IP_DELETE_TIMEOUT_KEY, DEFAULT_IP_DELETE_TIMEOUT)?;
    if timeout < interval || delete < interval {
        return Err(format!(
            "Instance 'heart beat interval' must less than 'heart beat timeout' and 'ip delete timeout' \
             (interval {interval}, timeout {timeout}, delete {delete}; INVALID_PARAM)"
        ));
    }
    Ok(())
}

/// Nacos's `ConvertUtils.toBoolean(String)`: true for `y`, `yes`, `on`, `true` and `t`, in any
/// case (`TRUE_SET`, matched after `toLowerCase`); anything else is false.
pub fn convert_to_boolean(value: &str) -> bool {
    matches!(value.to_ascii_lowercase().as_str(), "y" | "yes" | "on" | "true" | "t")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(pairs: &[(&str, &str)]) -> Metadata {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn enable_client_beat_reads_the_way_convert_utils_does() {
        // Nacos ConvertUtils.toBoolean(String): TRUE_SET = {y, yes, on, true, t}, lower-cased
        for yes in ["true", "TRUE", "t", "T", "yes", "Y", "on", "On"] {
            assert!(convert_to_boolean(yes), "{yes}");
        }
        for no in ["false", "1", "", "enabled", "tru", "off"] {
            assert!(!convert_to_boolean(no), "{no}");
        }
    }

    #[test]
    fn a_non_numeric_timeout_becomes_zero_on_the_server() {
        // Nacos ConvertUtils#toLong(String): NumberFormatException -> default 0
        assert_eq!(to_long("15000"), 15_000);
        assert_eq!(to_long("15s"), 0);
        assert_eq!(to_long(" 15000"), 0, "Long.parseLong rejects spaces");
        assert_eq!(to_long("-5"), -5);
        assert_eq!(to_long("+5"), 5);
        assert_eq!(to_long(""), 0);
        assert_eq!(to_long("99999999999999999999"), 0, "overflow is a parse failure");
    }

    #[test]
    fn the_client_reads_only_all_digit_values_and_falls_back_to_the_default() {
        // Nacos Instance#getMetaDataByKeyWithDefault: value.matches("^\\d+$")
        assert_eq!(client_beat_interval(&md(&[(HEART_BEAT_INTERVAL_KEY, "1000")])), Ok(1000));
        assert_eq!(client_beat_interval(&md(&[(HEART_BEAT_INTERVAL_KEY, "1s")])), Ok(5000));
        assert_eq!(client_beat_interval(&md(&[(HEART_BEAT_INTERVAL_KEY, "-1")])), Ok(5000));
        assert_eq!(client_beat_interval(&md(&[])), Ok(5000));
        assert!(client_beat_interval(&md(&[(HEART_BEAT_INTERVAL_KEY, "99999999999999999999")])).is_err());
    }

    #[test]
    fn registration_rejects_an_interval_longer_than_a_timeout_but_not_a_non_numeric_timeout() {
        // Nacos NamingUtils#checkInstanceIsLegal
        assert!(check_instance_is_legal(&md(&[(HEART_BEAT_INTERVAL_KEY, "20000")])).is_err());
        assert!(check_instance_is_legal(&md(&[(IP_DELETE_TIMEOUT_KEY, "1000")])).is_err());
        assert!(check_instance_is_legal(&md(&[(HEART_BEAT_TIMEOUT_KEY, "15s")])).is_ok());
        assert!(
            check_instance_is_legal(&md(&[(IP_DELETE_TIMEOUT_KEY, "6000"), (HEART_BEAT_TIMEOUT_KEY, "9000")])).is_ok()
        );
    }

    #[test]
    fn services_print_grouped_and_clients_print_their_nacos_id() {
        assert_eq!(ServiceKey::new("public", "DEFAULT_GROUP", "orders").to_string(), "DEFAULT_GROUP@@orders");
        assert_eq!(ServiceKey::new("dev", "G", "orders").to_string(), "dev/G@@orders");
        assert_eq!(ClientKey::new(&Name::from("10.0.0.1"), 8080).to_string(), "10.0.0.1:8080#true");
    }
}
