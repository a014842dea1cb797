//! Operator changes at runtime: the console's instance metadata (`NamingMetadataManager`) and the
//! server switches (`SwitchDomain`).
//!
//! # Instance metadata (2.1.2)
//!
//! `PUT /nacos/v1/ns/instance` (`InstanceController#update` →
//! `InstanceOperatorClientImpl#updateInstance`) does not touch the instance a client published.
//! It checks the request with `NamingUtils.checkInstanceIsLegal`, refuses it if the service
//! singleton does not exist (INVALID_PARAM, "service not found"), and otherwise *replaces* the
//! `InstanceMetadata` stored under `metadataId = ip:port:cluster` (`buildMetadata`: the request's
//! weight, enabled and metadata map). `InstanceMetadataProcessor#updateInstanceMetadata` then
//! publishes a `ServiceChangedEvent`: subscribers get a push. The instance need not be
//! registered: the metadata waits for it. The console's edit dialog sends the instance's weight
//! and enabled flag back as they are; the model stores the metadata map only, so pushes and
//! lists carry the register-time weight and flag, as they would. Not modelled: the batch
//! endpoint (`PUT /instance/metadata/batch`, `batchUpdateMetadata`), which *merges* keys into
//! the stored map instead of replacing it.
//!
//! Every reader looks there *first*, key by key, and only then at the register-time
//! `extendDatum`: `UnhealthyInstanceChecker#getTimeout` and `ExpiredInstanceChecker#getTimeout`
//! (`preserved.heart.beat.timeout`, `preserved.ip.delete.timeout`),
//! `InstanceOperatorClientImpl#getHeartBeatInterval` (the beat answer's `clientBeatInterval`)
//! and `InstanceEnableBeatCheckInterceptor` (`enableClientBeat`). A key the console map lacks
//! falls back to the register-time value. So a console edit outlives the client's
//! re-registrations — a 20404 re-register replaces `extendDatum`, not this map — unlike the 1.x
//! server of #6042.
//!
//! It does not live for ever. When the instance goes (deregistered, expired, or its client
//! removed) `NamingMetadataManager` marks the metadata expired (`InstanceMetadataEvent` with
//! `expired = true`, or `ClientDisconnectEvent`); a registration of the same instance unmarks it
//! (`expired = false`). `ExpiredMetadataCleaner` runs every 5 s from 5 s after start-up and
//! deletes metadata marked for longer than `expiredMetadataExpiredTime` (60 s). The mark keeps
//! its first time (`ExpiredMetadataInfo.equals` ignores `createTime`, and the set keeps the
//! old entry). Here the cleaner is evaluated lazily: metadata whose first cleaner tick past the
//! mark + 60 s has come is gone when next read. (A server pause does not re-phase this grid.)
//!
//! # Switches
//!
//! `PUT /nacos/v1/ns/operator/switches` (`OperatorController#updateSwitch` →
//! `SwitchManager#update`): `clientBeatInterval` is `Long.parseLong(value)` with no range check —
//! 0 and negative values are stored as given — and `lightBeatEnabled` is
//! `ConvertUtils.toBoolean(value)`. `InstanceController#beat` reads both on every beat.

use super::{Change, NamingServer, Timeouts};
use crate::nacos::types::{ClientKey, Metadata, ServiceKey};
use crate::sim::clock::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `GlobalConfig.getExpiredMetadataExpiredTime()`: 60 s after its instance went.
pub const EXPIRED_METADATA_TIME: u64 = 60_000;
/// `GlobalConfig.getExpiredMetadataCleanInterval()` and `ExpiredMetadataCleaner.INITIAL_DELAY`.
pub const EXPIRED_METADATA_CLEAN_INTERVAL: u64 = 5_000;

/// `metadataId` (`InstancePublishInfo.genMetadataId`: `ip:port:cluster`) within its service.
pub type MetadataKey = (ServiceKey, ClientKey, Arc<str>);

/// One `InstanceMetadata` entry: its `extendData`, and since when it is marked expired.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsoleMetadata {
    pub extend: Arc<Metadata>,
    pub expired_since: Option<SimTime>,
}

/// What a server's operator switches may change (`None`: left as it is).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Switches {
    pub client_beat_interval: Option<i64>,
    pub light_beat_enabled: Option<bool>,
}

impl Timeouts {
    /// The checkers' and `getHeartBeatInterval`'s reading: each key from the console metadata
    /// if it has it, else from the register-time metadata, else the default.
    pub fn resolve(console: Option<&Metadata>, register: &Metadata) -> Self {
        let Some(console) = console else { return Timeouts::from_metadata(register) };
        let mut merged = register.clone();
        merged.extend(console.iter().map(|(k, v)| (k.clone(), v.clone())));
        Timeouts::from_metadata(&merged)
    }
}

impl NamingServer {
    /// `SwitchManager#update` for the switches the model reads.
    pub fn set_switches(&mut self, s: Switches) {
        if let Some(i) = s.client_beat_interval {
            self.config.client_beat_interval = i;
        }
        if let Some(l) = s.light_beat_enabled {
            self.config.light_beat_enabled = l;
        }
    }

    /// `ExpiredMetadataCleaner`'s first tick that deletes metadata marked at `since`.
    fn metadata_removed_at(&self, since: SimTime) -> SimTime {
        let first = self.metadata_grid + SimDuration(EXPIRED_METADATA_CLEAN_INTERVAL);
        let after = since.millis() as i128 + EXPIRED_METADATA_TIME as i128;
        crate::nacos::health::first_tick(first, first, after).unwrap_or(SimTime(u64::MAX))
    }

    /// Runs the lazy cleaner up to `now`: drops metadata whose deletion tick has come.
    pub(crate) fn clean_metadata(&mut self, now: SimTime) {
        if self.console.values().all(|m| m.expired_since.is_none()) {
            return;
        }
        let gone: Vec<MetadataKey> = self
            .console
            .iter()
            .filter(|(_, m)| m.expired_since.is_some_and(|t| self.metadata_removed_at(t) <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            self.console.remove(&k);
        }
    }

    /// The console metadata of an instance, as the checkers would read it at `now`.
    pub fn console_metadata(&self, service: &ServiceKey, client: &ClientKey, cluster: &Arc<str>) -> Option<&Metadata> {
        let m = self.console.get(&(service.clone(), client.clone(), cluster.clone()))?;
        Some(&m.extend)
    }

    /// Every console metadata entry still stored (a restart keeps them: they go through the CP
    /// protocol, which writes to disk).
    pub fn console_entries(&mut self, now: SimTime) -> BTreeMap<MetadataKey, ConsoleMetadata> {
        self.clean_metadata(now);
        self.console.clone()
    }

    /// Restores the entries a previous incarnation had stored (JRaft's log replayed at start).
    /// The expiry marks lived in memory only: none survives.
    pub fn restore_console(&mut self, entries: BTreeMap<MetadataKey, ConsoleMetadata>) {
        self.console = entries.into_iter().map(|(k, m)| (k, ConsoleMetadata { expired_since: None, ..m })).collect();
    }

    /// `InstanceOperatorClientImpl#updateInstance` (after `checkInstanceIsLegal`, which scenario
    /// validation runs): `Err` with the server's message when the service singleton is missing.
    /// The published instance, if any, reads its timeouts afresh and its client is rescheduled.
    pub fn update_instance(
        &mut self,
        now: SimTime,
        service: &ServiceKey,
        client: &ClientKey,
        cluster: &Arc<str>,
        metadata: Arc<Metadata>,
    ) -> Result<Vec<Change>, String> {
        if !self.services.contains(service) {
            return Err(format!("service not found, namespace: {}, service: {}", service.namespace, service.grouped));
        }
        self.clean_metadata(now);
        let key = (service.clone(), client.clone(), cluster.clone());
        // A fresh InstanceMetadata object: not in ExpiredMetadataInfos' sense re-marked, but the
        // mark (if any) stays, as `updateInstanceMetadata` leaves that set alone.
        let expired_since = self.console.get(&key).and_then(|m| m.expired_since);
        self.console.insert(key, ConsoleMetadata { extend: metadata.clone(), expired_since });
        let timeouts = self.retime(service, client, now);
        self.bump();
        let (service, client, cluster) = (service.clone(), client.clone(), cluster.clone());
        Ok(vec![Change::MetadataUpdated { service, client, cluster, metadata, timeouts }])
    }

    /// Recomputes the published instance's timeouts (if it is published) and reschedules its
    /// client; returns them.
    fn retime(&mut self, service: &ServiceKey, client: &ClientKey, now: SimTime) -> Option<Timeouts> {
        let p = self.clients.get(client)?.publishers.get(service)?;
        let console = self.console.get(&(service.clone(), client.clone(), p.cluster.clone()));
        let timeouts = Timeouts::resolve(console.map(|m| &*m.extend), &p.metadata);
        self.clients.get_mut(client)?.publishers.get_mut(service)?.timeouts = timeouts;
        self.reschedule(client, now);
        Some(timeouts)
    }

    /// The timeouts a registration of `metadata` gets, console metadata included.
    pub(crate) fn timeouts_for(
        &self,
        service: &ServiceKey,
        client: &ClientKey,
        cluster: &Arc<str>,
        metadata: &Metadata,
    ) -> Timeouts {
        if self.console.is_empty() {
            return Timeouts::from_metadata(metadata);
        }
        Timeouts::resolve(self.console_metadata(service, client, cluster), metadata)
    }

    /// `NamingMetadataManager#onEvent` for what an operation or check changed: a registration
    /// unmarks its instance's metadata, a deregistration, expiry or client removal marks it.
    pub(crate) fn metadata_events(&mut self, now: SimTime, changes: &[Change]) {
        if self.console.is_empty() {
            return;
        }
        self.clean_metadata(now);
        for c in changes {
            match c {
                Change::Registered { service, client, .. } => self.mark(service, client, None),
                Change::Deregistered { service, client } | Change::Expired { service, client, .. } => {
                    self.mark(service, client, Some(now))
                }
                Change::ClientRemoved { client, published, .. } => {
                    for service in published {
                        self.mark(service, client, Some(now));
                    }
                }
                _ => {}
            }
        }
    }

    /// Sets or clears the expiry mark of every metadata entry of `(service, client)`. (A client
    /// publishes one instance per service, so one cluster in practice.) A mark keeps its first
    /// time.
    fn mark(&mut self, service: &ServiceKey, client: &ClientKey, at: Option<SimTime>) {
        for ((s, c, _), m) in self.console.iter_mut() {
            if s == service && c == client {
                m.expired_since = at.map(|t| m.expired_since.unwrap_or(t));
            }
        }
    }
}
