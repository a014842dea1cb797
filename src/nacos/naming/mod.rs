//! The 2.x naming server's ephemeral-instance state, pure: `ServiceManager` singletons,
//! `EphemeralIpPortClientManager`'s `IpPortBasedClient`s with their publish infos, the
//! `ClientServiceIndexesManager` indexes and `ServiceStorage`'s cached `ServiceInfo`s.
//!
//! # Layout
//!
//! * `mod.rs` — the data, the config switches, what changed ([`Change`]), reads for observers.
//! * `ops.rs` — the HTTP operations: `registerInstance`, `deregisterInstance`, `handleBeat`,
//!   `getHeartBeatInterval`, `listInstance` (with its 1.x UDP subscription), `getPushData`.
//! * `metadata.rs` — operator changes at runtime: the console's instance metadata
//!   (`updateInstance`, `NamingMetadataManager`, `ExpiredMetadataCleaner`) and the switches.
//! * `crate::nacos::health` — `ClientBeatCheckTaskV2` and `ExpiredClientCleaner`, and the
//!   scheduler that runs them only at ticks where they change something.
//!
//! # How this differs from Java, and why it does not matter
//!
//! * **Events are returned.** Java publishes `ServiceChangedEvent`, `ClientChangedEvent`, ... on
//!   `NotifyCenter`; here every operation returns [`Change`]s and the actor turns them into trace
//!   lines and push tasks. Only `ServiceChanged` (a push) and `ServiceSubscribed` (a push to one
//!   new subscriber) have effects in a standalone server; the Distro sync they would also trigger
//!   is a later step.
//! * **`ClientBeatProcessorV2` runs inline.** Java schedules it on the health executor with delay
//!   0; it runs here within the same request, before the answer is sent.
//! * **The server handles what reaches it.** A standalone server is responsible for every
//!   client; a cluster member's `DistroFilter` (`actors::nacos_filter`) proxies a request for
//!   another member's client before it gets here, so this core never asks `DistroMapper`.
//! * **Sorted everywhere.** Java iterates `ConcurrentHashMap`s in hash order; we walk every map in
//!   key order (`BTreeMap`s, or hash maps through `sorted` and [`IpPortClient::published`]),
//!   so checks, cleanups and host lists come out the same every run.
//! * **Not modelled:** service-level `enableClientBeat`, the protect threshold (only
//!   services created through the service API have the `ServiceMetadata` that enables it, and
//!   scenarios create services only by registering), persistent instances, clusters filters.

mod conn;
mod metadata;
#[cfg(test)]
mod metadata_tests;
mod ops;
mod synced;
mod synced_ip;
#[cfg(test)]
mod synced_ip_tests;
#[cfg(test)]
mod synced_tests;
#[cfg(test)]
pub(crate) mod tests;

use crate::nacos::health::{ClientSched, Schedule};
use crate::nacos::types::{
    convert_to_boolean, to_long, ClientKey, Metadata, ServiceInfo, ServiceKey, DEFAULT_CLIENT_EXPIRED_TIME,
    DEFAULT_HEART_BEAT_INTERVAL, DEFAULT_HEART_BEAT_TIMEOUT, DEFAULT_IP_DELETE_TIMEOUT, DEFAULT_PUSH_CACHE_MILLIS,
    ENABLE_CLIENT_BEAT_KEY, HEART_BEAT_INTERVAL_KEY, HEART_BEAT_TIMEOUT_KEY, IP_DELETE_TIMEOUT_KEY,
};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
pub use conn::ConnClient;
pub use metadata::{ConsoleMetadata, MetadataKey, Switches, EXPIRED_METADATA_TIME};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
pub use synced::ConnSyncData;

/// The maps a beat looks up: every beat finds its service, its client and its instance, and at
/// 10,000 instances string-keyed `BTreeMap` searches were a fifth of a run's time. A hash map
/// finds them in one probe. FxHash has no random seed, yet its iteration order still follows
/// insertion history, so it must never reach output: whoever walks one (or a [`ClientMap`] or
/// [`PublishMap`], whose order is insertion and removal history) goes through [`sorted`].
pub(crate) type FastSet<K> = rustc_hash::FxHashSet<K>;

/// A client's instances: looked up by service like a hash map, but stored in one vector in
/// registration order. A provider beats for its instances in that same order, so the server
/// walks the vector front to back instead of landing on a random slot — at 10,000 instances
/// that was a cache miss on every beat.
pub(crate) type PublishMap = indexmap::IndexMap<ServiceKey, Published, rustc_hash::FxBuildHasher>;

/// The ip-port clients: a hash map whose entries also have positions, so that a beat can try
/// the last beat's client first (see [`NamingServer::beat_client`]).
pub(crate) type ClientMap = indexmap::IndexMap<ClientKey, IpPortClient, rustc_hash::FxBuildHasher>;

/// A hash map's entries in key order — the order Java's output never promised, but ours must
/// (same scenario, same trace).
pub(crate) fn sorted<'a, K: Ord + 'a, V: 'a>(entries: impl Iterator<Item = (&'a K, &'a V)>) -> Vec<(&'a K, &'a V)> {
    let mut entries: Vec<(&K, &V)> = entries.collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
}

/// The server switches that change the model's rules, with Nacos's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct NamingConfig {
    /// `SwitchDomain.lightBeatEnabled` (true): beat answers tell clients to drop the body.
    pub light_beat_enabled: bool,
    /// `SwitchDomain.clientBeatInterval` (5 s): the answer's `clientBeatInterval` when the
    /// instance's metadata does not set `preserved.heart.beat.interval`.
    pub client_beat_interval: i64,
    /// `nacos.naming.expireInstance` (true): false turns `ExpiredInstanceChecker` off.
    pub expire_instance: bool,
    /// `nacos.naming.client.expired.time` (3 min): `ExpiredClientCleaner` removes a client not
    /// updated for longer, instances and all.
    pub client_expired_time: u64,
    /// `SwitchDomain.defaultPushCacheMillis` (10 s): `cacheMillis` in answers, and how long the
    /// cleaner keeps an idle subscriber-only client.
    pub push_cache_millis: u64,
}

impl Default for NamingConfig {
    fn default() -> Self {
        NamingConfig {
            light_beat_enabled: true,
            client_beat_interval: DEFAULT_HEART_BEAT_INTERVAL as i64,
            expire_instance: true,
            client_expired_time: DEFAULT_CLIENT_EXPIRED_TIME,
            push_cache_millis: DEFAULT_PUSH_CACHE_MILLIS,
        }
    }
}

/// The two timeouts of one instance and whether its checks are switched off, read once from its
/// register-time metadata (`extendDatum` only changes when the instance is registered again).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Timeouts {
    /// `preserved.heart.beat.timeout` through `ConvertUtils.toLong` (non-numeric → 0), else 15 s.
    pub beat: i64,
    /// `preserved.ip.delete.timeout`, the same way, else 30 s.
    pub delete: i64,
    /// `enableClientBeat` true by `ConvertUtils.toBoolean` (`true`, `t`, `yes`, `y`, `on`, any
    /// case): `InstanceEnableBeatCheckInterceptor` skips both checks.
    pub skip: bool,
    /// `preserved.heart.beat.interval` through `toLong`, if present: what a beat's answer
    /// carries as `clientBeatInterval` instead of the switch. Read here once rather than from
    /// the metadata map on every beat; the map only changes with a new registration.
    pub interval: Option<i64>,
}

impl Timeouts {
    /// `UnhealthyInstanceChecker#getTimeout` / `ExpiredInstanceChecker#getTimeout`: the metadata
    /// value if the key is present — *any* value, numeric or not — else the default.
    pub fn from_metadata(m: &Metadata) -> Self {
        Timeouts {
            beat: m.get(HEART_BEAT_TIMEOUT_KEY).map_or(DEFAULT_HEART_BEAT_TIMEOUT, |v| to_long(v)),
            delete: m.get(IP_DELETE_TIMEOUT_KEY).map_or(DEFAULT_IP_DELETE_TIMEOUT, |v| to_long(v)),
            skip: m.get(ENABLE_CLIENT_BEAT_KEY).is_some_and(|v| convert_to_boolean(v)),
            interval: m.get(HEART_BEAT_INTERVAL_KEY).map(|v| to_long(v)),
        }
    }
}

/// A `HealthCheckInstancePublishInfo`: one instance as a client publishes it for one service.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    pub ip: Name,
    pub port: u16,
    pub cluster: Arc<str>,
    pub weight: f64,
    pub enabled: bool,
    pub healthy: bool,
    pub metadata: Arc<Metadata>,
    pub last_heart_beat: SimTime,
    pub timeouts: Timeouts,
}

impl Published {
    /// What a registration publishes (`InstancePublishInfo`), beating as of `now`.
    pub fn new(instance: &crate::nacos::types::Instance, now: SimTime, timeouts: Timeouts) -> Self {
        Published {
            ip: instance.ip,
            port: instance.port,
            cluster: instance.cluster.clone(),
            weight: instance.weight,
            enabled: instance.enabled,
            healthy: instance.healthy,
            metadata: instance.metadata.clone(),
            last_heart_beat: now,
            timeouts,
        }
    }
}

/// An `IpPortBasedClient` (`ip:port#true`).
#[derive(Clone, Debug)]
pub struct IpPortClient {
    pub created: SimTime,
    /// `lastUpdatedTime`: set by register, deregister, beat and subscribe; read by the cleaner.
    pub last_updated: SimTime,
    /// Looked up on every beat (see [`IpPortClient::published_mut`]); walk it with
    /// [`IpPortClient::published`].
    pub(crate) publishers: PublishMap,
    /// Where the next beat's service is likely to be in `publishers`: just after the last
    /// beat's. A provider registers its services in order and its beat tasks keep that order
    /// round after round, so the guess nearly always holds.
    beat_cursor: usize,
    pub subscriptions: BTreeSet<ServiceKey>,
    pub(crate) sched: ClientSched,
    /// `AbstractClient.revision`: moved by every register and deregister here
    /// (`recalculateRevision`), taken from the sync data on a Distro copy (`upgradeClient`).
    pub revision: u64,
    /// `DistroMapper#responsible(responsibleId)` under this member's current view: only then
    /// does `ClientBeatCheckTaskV2` check it (`InstanceBeatCheckResponsibleInterceptor`). Always
    /// true on a standalone server. Kept here, refreshed when the view moves (`set_mapper`).
    pub responsible: bool,
}

impl IpPortClient {
    /// The instances this client publishes, in service order.
    pub fn published(&self) -> Vec<(&ServiceKey, &Published)> {
        sorted(self.publishers.iter())
    }

    /// The instance this client publishes for `service`, for a beat: tried first at the
    /// cursor, an identity compare, then by hash (a look-up per beat was 2.5% of the Nacos
    /// bench's instructions). Either way the same entry.
    #[inline(always)]
    pub(crate) fn published_mut(&mut self, service: &ServiceKey) -> Option<&mut Published> {
        let at = crate::sim::keyed::index_hinted(&self.publishers, self.beat_cursor, service)?;
        self.beat_cursor = at + 1;
        self.publishers.get_index_mut(at).map(|(_, p)| p)
    }
}

/// How an instance came to be registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegisterSource {
    /// `POST /nacos/v1/ns/instance`.
    Request,
    /// A full beat from an unknown instance (`handleBeat` branch B, `BeatInfoInstanceBuilder`).
    FullBeat,
    /// An `InstanceRequest` over a 2.x client's gRPC connection (`InstanceRequestHandler`).
    Grpc,
    /// A Distro CHANGE from the member the client's connection is on (`upgradeClient`).
    Distro,
}

/// What an operation or a check did, as data. Each one names the Java event it stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// `ClientRegisterServiceEvent` → `ServiceChangedEvent`.
    Registered { service: ServiceKey, client: ClientKey, new_client: bool, source: RegisterSource },
    /// `ClientDeregisterServiceEvent` → `ServiceChangedEvent`.
    Deregistered { service: ServiceKey, client: ClientKey },
    /// `ClientBeatProcessorV2` flipped the instance back to healthy → `ServiceChangedEvent`.
    HealthyAgain { service: ServiceKey, client: ClientKey, silent: SimDuration },
    /// `UnhealthyInstanceChecker` → `ServiceChangedEvent`. `delete_timeout` is the instance's
    /// `ExpiredInstanceChecker` timeout, or `None` when `expireInstance` is off: views draw the
    /// deadline the instance is now heading for.
    Unhealthy { service: ServiceKey, client: ClientKey, silent: SimDuration, timeout: i64, delete_timeout: Option<i64> },
    /// `ExpiredInstanceChecker` removed the instance → `ClientDeregisterServiceEvent`.
    Expired { service: ServiceKey, client: ClientKey, silent: SimDuration, timeout: i64 },
    /// `ExpiredClientCleaner` → `clientDisconnected` → one `ServiceChangedEvent` per service the
    /// client still published.
    ClientRemoved { client: ClientKey, idle: SimDuration, published: Vec<ServiceKey>, subscribed: usize },
    /// `ConnectionBasedClientManager#clientDisconnected`: connection `conn`'s client went, with
    /// every instance it published (`instances[i]` of service `published[i]`).
    ConnectionReleased { conn: Arc<str>, published: Vec<ServiceKey>, instances: Vec<ClientKey> },
    /// `ServiceSubscribedEvent`: a first subscription, pushed to that subscriber alone.
    Subscribed { service: ServiceKey, subscriber: ClientKey },
    /// `InstanceOperatorClientImpl#updateInstance` stored console metadata →
    /// `ServiceChangedEvent`. `timeouts` are the published instance's new readings, `None` when
    /// the instance is not registered here (the metadata waits for it).
    MetadataUpdated {
        service: ServiceKey,
        client: ClientKey,
        cluster: Arc<str>,
        metadata: Arc<Metadata>,
        timeouts: Option<Timeouts>,
    },
}

impl Change {
    /// The services whose subscribers get a push (`ServiceChangedEvent`s).
    pub fn changed_services(&self) -> &[ServiceKey] {
        match self {
            Change::Registered { service, .. }
            | Change::Deregistered { service, .. }
            | Change::HealthyAgain { service, .. }
            | Change::Unhealthy { service, .. }
            | Change::Expired { service, .. }
            | Change::MetadataUpdated { service, .. } => std::slice::from_ref(service),
            Change::ClientRemoved { published, .. } | Change::ConnectionReleased { published, .. } => published,
            Change::Subscribed { .. } => &[],
        }
    }
}

/// One naming server's ephemeral data.
pub struct NamingServer {
    pub(crate) config: NamingConfig,
    /// `ServiceManager` singletons: created by the first registration, never removed here (the
    /// empty-service cleaner is not modelled).
    pub(crate) services: FastSet<ServiceKey>,
    /// Set once a singleton was removed (only tests do): until then every published service
    /// has one, and a steady beat need not ask (`beat_known`).
    singleton_removed: bool,
    pub(crate) clients: ClientMap,
    /// The position in `clients` of the last steady beat's client. A provider's beats for all
    /// its instances leave together and arrive in one batch from one ip:port, so the next
    /// beat nearly always comes from the same client: one key compare, not a hash probe.
    beat_client: usize,
    /// `publisherIndexes` / `subscriberIndexes`.
    pub(crate) publishers: BTreeMap<ServiceKey, BTreeSet<ClientKey>>,
    pub(crate) subscribers: BTreeMap<ServiceKey, BTreeSet<ClientKey>>,
    /// `ServiceStorage.serviceDataIndexes`: what list queries answer, refreshed by pushes.
    pub(crate) storage: BTreeMap<ServiceKey, Arc<ServiceInfo>>,
    pub(crate) schedule: Schedule,
    /// `NamingMetadataManager`'s instance metadata, by `metadataId` (see `metadata.rs`).
    pub(crate) console: BTreeMap<MetadataKey, ConsoleMetadata>,
    /// Start-up: `ExpiredMetadataCleaner` runs from 5 s after it, every 5 s.
    pub(crate) metadata_grid: SimTime,
    /// `ConnectionBasedClientManager.clients`: the gRPC clients, by connection id (`conn.rs`).
    pub(crate) conns: BTreeMap<Arc<str>, ConnClient>,
    /// The publisher index's share for connection clients.
    pub(crate) conn_publishers: BTreeMap<ServiceKey, BTreeSet<Arc<str>>>,
    /// A clustered member: its own connection clients' changes are Distro-synced.
    pub(crate) distro_enabled: bool,
    /// Own connection clients changed since the Distro part last looked: true for a disconnect
    /// (`ClientDisconnectEvent` → DELETE), false for a change (`ClientChangedEvent` → CHANGE).
    pub(crate) distro_dirty: BTreeMap<Arc<str>, bool>,
    /// A clustered member's `DistroMapper`, as of its view's last change; `None` standalone.
    pub(crate) mapper: Option<crate::nacos::cluster::DistroMapper>,
    revision: u64,
}

impl NamingServer {
    /// A server started at `now`: its cleaner runs from `now` every 5 s.
    pub fn new(config: NamingConfig, now: SimTime) -> Self {
        NamingServer {
            config,
            services: FastSet::default(),
            singleton_removed: false,
            clients: ClientMap::default(),
            beat_client: 0,
            publishers: BTreeMap::new(),
            subscribers: BTreeMap::new(),
            storage: BTreeMap::new(),
            schedule: Schedule::new(now),
            console: BTreeMap::new(),
            metadata_grid: now,
            conns: BTreeMap::new(),
            conn_publishers: BTreeMap::new(),
            distro_enabled: false,
            distro_dirty: BTreeMap::new(),
            mapper: None,
            revision: 0,
        }
    }

    pub fn config(&self) -> &NamingConfig {
        &self.config
    }

    /// Changes whenever an instance appears, disappears or changes health, or a client goes.
    /// Beats that only refresh `lastHeartBeatTime` leave it alone.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub(crate) fn bump(&mut self) {
        self.revision += 1;
    }

    /// The instance `client` publishes for `service`, if any: an `IpPortBasedClient`'s (1.x
    /// HTTP), else a gRPC connection client's instance at that `ip:port`.
    pub fn instance(&self, service: &ServiceKey, client: &ClientKey) -> Option<&Published> {
        match self.clients.get(client).and_then(|c| c.publishers.get(service)) {
            Some(p) => Some(p),
            None if self.conns.is_empty() => None,
            None => self.conn_instance(service, client),
        }
    }

    /// Whether gRPC connection `conn` is this member's own client (`isNative`): it alone renews
    /// the copies the others hold, through its verify.
    pub fn holds_native(&self, conn: &str) -> bool {
        self.conns.get(conn).is_some_and(|c| c.native)
    }

    /// Every instance of `service`: the HTTP clients' in client order, then the gRPC clients'
    /// in connection order.
    pub fn instances<'a>(
        &'a self,
        service: &'a ServiceKey,
    ) -> impl Iterator<Item = (&'a ClientKey, &'a Published)> + 'a {
        let keys = self.publishers.get(service);
        let http =
            keys.into_iter().flatten().filter_map(move |k| Some((k, self.clients.get(k)?.publishers.get(service)?)));
        http.chain(self.conn_instances(service))
    }

    /// `(healthy, total)` instances of `service`.
    pub fn counts(&self, service: &ServiceKey) -> (usize, usize) {
        self.instances(service).fold((0, 0), |(h, t), (_, p)| (h + usize::from(p.healthy), t + 1))
    }

    pub fn client(&self, key: &ClientKey) -> Option<&IpPortClient> {
        self.clients.get(key)
    }

    /// The `ServiceManager` singletons, sorted.
    pub fn services(&self) -> impl Iterator<Item = &ServiceKey> {
        let mut services: Vec<&ServiceKey> = self.services.iter().collect();
        services.sort_unstable();
        services.into_iter()
    }

    /// Every `IpPortBasedClient`, sorted by id.
    pub fn clients(&self) -> impl Iterator<Item = (&ClientKey, &IpPortClient)> {
        sorted(self.clients.iter()).into_iter()
    }

    pub fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// The subscriber clients of `service` on this server.
    pub fn subscribers_of(&self, service: &ServiceKey) -> impl Iterator<Item = &ClientKey> {
        self.subscribers.get(service).into_iter().flatten()
    }

    /// Test-only: plants `mutation` where it touches the health checks
    /// (`NacosUnhealthyAtTimeout`, `NacosNeverDeletes`; any other changes nothing here). Not
    /// reachable from scenario files; the director calls it when a run asks for a mutation, so
    /// property tests can prove the invariants catch it.
    pub(crate) fn plant(&mut self, mutation: crate::sim::mutation::Mutation) {
        self.schedule.planted = Some(mutation);
    }

    /// The planted bug, if any (see [`NamingServer::plant`]).
    pub(crate) fn planted(&self) -> Option<crate::sim::mutation::Mutation> {
        self.schedule.planted
    }

    /// `ServiceManager.removeSingleton`, as the empty-service cleaner would: only for tests that
    /// reach `handleBeat`'s "service not found" branch, which a live client cannot otherwise hit.
    #[cfg(test)]
    pub(crate) fn remove_service_singleton(&mut self, service: &ServiceKey) {
        self.singleton_removed = true;
        self.services.remove(service);
    }
}
