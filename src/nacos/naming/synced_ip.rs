//! Distro for 1.x clients: a clustered member's `IpPortBasedClient`s (`EphemeralIpPortClientManager`)
//! synced to the other members like connection clients, with one difference that decides who
//! owns them — responsibility is not "the connection is here" but the `DistroMapper`:
//!
//! - **Owner.** A member is responsible for a client when `DistroMapper#responsible` maps its
//!   `responsibleId` (`ip:port`, the id before its `#`) to itself under its own view
//!   (`EphemeralIpPortClientManager#isResponsibleClient`). Only then does it run the client's beat
//!   checks (`InstanceBeatCheckResponsibleInterceptor`), sync its changes
//!   (`DistroClientDataProcessor#isInvalidClient`) and send verify data for it (`getVerifyData`).
//!   When the view moves, responsibility moves with it, and so do the checks.
//! - **Copies.** A CHANGE creates the client if absent (`syncClientConnected` → `clientConnected`)
//!   and puts every instance that differs (`upgradeClient`; `IpPortBasedClient#addServiceInstance`
//!   makes a `HeartBeatInstancePublishInfo`, last beat now). A DELETE removes it
//!   (`clientDisconnected`). A VERIFY with a matching revision (or 0) runs `ClientBeatUpdateTask`:
//!   every instance's `lastHeartBeatTime` and the client's `lastUpdatedTime` become now — so a
//!   copy taken over after its owner dies starts from at most one verify period of silence.
//! - **Expiry.** No separate cleaner: `EphemeralIpPortClientManager.ExpiredClientCleaner` runs over
//!   every client, copy or not, and removes one with instances not updated for over
//!   `clientExpiredTime` (3 min) — for a copy, not verified.
//!
//! Ids: `ClientManagerDelegate#getClientManagerById` sends an id with a `#` (`ip:port#true`) to the
//! ip-port manager and any other to the connection manager; the Distro messages here carry the
//! same string ids and [`ip_client_key`] makes that choice.

use super::{Change, ConnSyncData, IpPortClient, NamingServer, Published, RegisterSource};
use crate::nacos::cluster::DistroMapper;
use crate::nacos::types::{ClientKey, ServiceKey};
use crate::sim::clock::SimTime;
use crate::sim::name::Name;
use std::sync::Arc;

/// The `IpPortBasedClient` a Distro id names (`ip:port#true`), or `None` for a connection id.
///
/// This is the one place a name is interned per message rather than when it enters the model: a
/// Distro CHANGE, DELETE or VERIFY carries the client id as text, and the member reads the ip
/// back from it, as Java does. The interner's lock and lookup cost what the `Arc<str>` this made
/// before cost (an allocation and a free). Only ip-port ids get here: a connection id has no `#`
/// and returns before anything is interned, so the fresh ids of 2.x connections never fill the
/// interner, and the ips of 1.x clients are the scenario's own.
pub fn ip_client_key(id: &str) -> Option<ClientKey> {
    let (addr, _) = id.split_once('#')?;
    let (ip, port) = addr.rsplit_once(':')?;
    Some(ClientKey { ip: Name::from(ip), port: port.parse().ok()? })
}

impl NamingServer {
    /// Whether this member is responsible for `key` (`EphemeralIpPortClientManager#isResponsibleClient`).
    pub(crate) fn responsible_for(&self, key: &ClientKey) -> bool {
        self.mapper.as_ref().is_none_or(|m| m.responsible(&key.responsible_tag()))
    }

    /// The member's view changed (`DistroMapper#onEvent`): each client's responsibility is read
    /// again, and a client that changed hands has its checks rescheduled — started here, or
    /// dropped. Returns the clients this member took over.
    pub fn set_mapper(&mut self, mapper: DistroMapper, now: SimTime) -> Vec<ClientKey> {
        self.mapper = Some(mapper);
        let mut flipped: Vec<(ClientKey, bool)> = Vec::new();
        for (key, client) in &self.clients {
            let now_responsible = self.responsible_for(key);
            if client.responsible != now_responsible {
                flipped.push((key.clone(), now_responsible));
            }
        }
        flipped.sort_unstable();
        let mut taken = Vec::new();
        for (key, responsible) in flipped {
            self.clients.get_mut(&key).expect("listed above").responsible = responsible;
            self.reschedule(&key, now);
            if responsible {
                taken.push(key);
            }
        }
        taken
    }

    /// A change to `key` (or its removal): a CHANGE (DELETE) to every other member, if this
    /// member is responsible for it (`syncToAllServer` → `isInvalidClient`).
    pub(crate) fn mark_ip_dirty(&mut self, key: &ClientKey, deleted: bool) {
        if self.distro_enabled && self.responsible_for(key) {
            self.distro_dirty.insert(Arc::from(key.to_string()), deleted);
        }
    }

    /// `generateSyncData` of an `IpPortBasedClient`.
    pub(super) fn ip_sync_data(&self, key: &ClientKey) -> Option<ConnSyncData> {
        let c = self.clients.get(key)?;
        let instances = c.published().into_iter().map(|(s, p)| (s.clone(), key.clone(), p.clone())).collect();
        Some(ConnSyncData { instances, revision: c.revision })
    }

    /// `getVerifyData`'s share of ip-port clients: those this member is responsible for.
    pub(super) fn responsible_ip_clients(&self) -> impl Iterator<Item = (Arc<str>, u64)> + '_ {
        let mut keys: Vec<(&ClientKey, &IpPortClient)> = self.clients.iter().filter(|(_, c)| c.responsible).collect();
        keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
        keys.into_iter().map(|(k, c)| (Arc::from(k.to_string()), c.revision))
    }

    /// `getDatumSnapshot`'s share: every ip-port client here, owned or a copy.
    pub(super) fn ip_snapshot(&self) -> impl Iterator<Item = (Arc<str>, ConnSyncData)> + '_ {
        self.clients().filter_map(|(k, _)| Some((Arc::from(k.to_string()), self.ip_sync_data(k)?)))
    }

    /// CHANGE: `syncClientConnected` then `upgradeClient` on an `IpPortBasedClient`.
    pub(super) fn apply_ip_sync(&mut self, now: SimTime, key: &ClientKey, data: &ConnSyncData) -> Vec<Change> {
        self.create_client_if_absent(key, now);
        let client = self.clients.get_mut(key).expect("created above");
        let mut changes = Vec::new();
        let mut put = Vec::new();
        for (service, _, p) in &data.instances {
            let differs = client.publishers.get(service).is_none_or(|old| !super::synced::same_publish(old, p));
            if differs {
                client.publishers.insert(service.clone(), Published { last_heart_beat: now, ..p.clone() });
                put.push(service.clone());
                let (service, client) = (service.clone(), key.clone());
                changes.push(Change::Registered { service, client, new_client: false, source: RegisterSource::Distro });
            }
        }
        let mut gone: Vec<ServiceKey> =
            client.publishers.keys().filter(|s| !data.instances.iter().any(|(d, _, _)| d == *s)).cloned().collect();
        gone.sort_unstable();
        for service in &gone {
            client.publishers.swap_remove(service);
            changes.push(Change::Deregistered { service: service.clone(), client: key.clone() });
        }
        client.revision = data.revision;
        for service in &put {
            self.services.insert(service.clone());
            self.publishers.entry(service.clone()).or_default().insert(key.clone());
        }
        for service in &gone {
            self.unindex_publisher(service, key);
        }
        if !changes.is_empty() {
            self.bump();
            // `addServiceInstance` publishes `ClientChangedEvent` here too: a member whose own
            // view makes it responsible (views disagree) sends the client on — once, since the
            // echo finds nothing that differs.
            self.mark_ip_dirty(key, false);
        }
        self.reschedule(key, now);
        changes
    }

    /// DELETE: `EphemeralIpPortClientManager#clientDisconnected`, every instance at once.
    pub(super) fn apply_ip_delete(&mut self, key: &ClientKey, id: &Arc<str>) -> Vec<Change> {
        let Some((_, published)) = self.remove_ip_client(key) else { return Vec::new() };
        let instances = vec![key.clone(); published.len()];
        vec![Change::ConnectionReleased { conn: id.clone(), published, instances }]
    }

    /// VERIFY: `EphemeralIpPortClientManager#verifyClient` → `ClientBeatUpdateTask`.
    pub(super) fn verify_ip(&mut self, now: SimTime, key: &ClientKey, revision: u64) -> bool {
        let planted = self.schedule.planted == Some(crate::sim::mutation::Mutation::DistroVerifyDoesNotRenew);
        let Some(c) = self.clients.get_mut(key) else { return false };
        if revision != 0 && c.revision != revision {
            return false;
        }
        if planted {
            return true; // the planted bug: "ok", and the copy not renewed
        }
        for p in c.publishers.values_mut() {
            p.last_heart_beat = now;
        }
        c.last_updated = now;
        // Thresholds only move later: the filed entries stay (early is allowed, see `health`).
        true
    }
}
