//! Distro copies of another member's gRPC clients, on the receiving side
//! (`DistroClientDataProcessor`, `ConnectionBasedClientManager`), and the owner's side of what it
//! sends (`generateSyncData`, `getVerifyData`).
//!
//! A member holds, besides its own (*native*) connection clients, a copy of every client native
//! to another member, kept by three messages from the owner:
//!
//! - **CHANGE** (`processData` → `syncClientConnected` + `upgradeClient`): the copy is created if
//!   absent, every instance that differs is put (a `ClientRegisterServiceEvent` each, so the
//!   service is pushed here), every service the owner no longer lists is removed, and the owner's
//!   revision is kept.
//! - **DELETE** (`clientDisconnected`): the copy goes with all its instances at once.
//! - **VERIFY** (`verifyClient`): if the copy exists and the revisions match (or the owner sent 0),
//!   `setLastRenewTime`; otherwise the answer is a failure and the owner re-syncs it.
//!
//! A copy nobody vouches for any more — its owner died, or is cut off — is removed by
//! `ConnectionBasedClientManager.ExpiredClientCleaner` once `now - lastRenewTime >
//! clientExpiredTime` (`ConnectionBasedClient#isExpire`, `nacos.naming.client.expired.time`,
//! 3 min), checked every 5 s from start-up.

use super::{Change, ConnClient, NamingServer, Published, RegisterSource};
use crate::nacos::types::{ClientKey, ServiceKey};
use crate::sim::clock::SimTime;
use std::sync::Arc;

/// `ClientSyncData` of a connection client: every instance it publishes, and its revision
/// (`ClientConstants.REVISION` in its attributes).
#[derive(Clone, Debug, PartialEq)]
pub struct ConnSyncData {
    pub instances: Vec<(ServiceKey, ClientKey, Published)>,
    pub revision: u64,
}

/// `InstancePublishInfo#equals`: ip, port, healthy, cluster and the metadata (`extendDatum`) —
/// not the time it was last vouched for.
pub(super) fn same_publish(a: &Published, b: &Published) -> bool {
    a.ip == b.ip && a.port == b.port && a.healthy == b.healthy && a.cluster == b.cluster && a.metadata == b.metadata
}

impl NamingServer {
    /// Makes this server a Distro member: from now on its own connection clients' changes are
    /// collected for [`NamingServer::take_distro_dirty`].
    pub fn enable_distro(&mut self) {
        self.distro_enabled = true;
    }

    /// Own connection clients changed since the last call: `(conn, deleted)`, in id order.
    pub fn take_distro_dirty(&mut self) -> Vec<(Arc<str>, bool)> {
        std::mem::take(&mut self.distro_dirty).into_iter().collect()
    }

    /// `DistroClientDataProcessor#getDistroData` → `generateSyncData`, read when the sync task
    /// runs (not when it was queued): `None` if the client is gone by then ("with null data to
    /// sync, skip"). `id` is a connection's or an ip-port client's (`synced_ip`).
    pub fn client_sync_data(&self, id: &Arc<str>) -> Option<ConnSyncData> {
        match super::synced_ip::ip_client_key(id) {
            Some(key) => self.ip_sync_data(&key),
            None => self.conns.get(id).filter(|c| c.native).map(sync_data),
        }
    }

    /// `getVerifyData`: `(clientId, revision)` of every client this member is responsible for
    /// — the native connection clients (`ConnectionBasedClientManager#isResponsibleClient`),
    /// then the ip-port clients its `DistroMapper` gives it.
    pub fn verify_data(&self) -> Vec<(Arc<str>, u64)> {
        let conns = self.conns.iter().filter(|(_, c)| c.native).map(|(id, c)| (id.clone(), c.revision));
        conns.chain(self.responsible_ip_clients()).collect()
    }

    /// `DistroClientDataProcessor#getDatumSnapshot`: every client here, native or a copy, as its
    /// sync data: connections in id order, then ip-port clients.
    pub fn snapshot(&self) -> Vec<(Arc<str>, ConnSyncData)> {
        let conns = self.conns.iter().map(|(id, c)| (id.clone(), sync_data(c)));
        conns.chain(self.ip_snapshot()).collect()
    }

    /// CHANGE from `owner` for client `id`: `syncClientConnected` then `upgradeClient`.
    pub fn apply_sync(&mut self, now: SimTime, owner: &Arc<str>, id: &Arc<str>, data: &ConnSyncData) -> Vec<Change> {
        match super::synced_ip::ip_client_key(id) {
            Some(key) => self.apply_ip_sync(now, &key, data),
            None => self.apply_conn_sync(now, owner, id, data),
        }
    }

    /// DELETE from the owner of client `id`.
    pub fn apply_delete(&mut self, id: &Arc<str>) -> Vec<Change> {
        match super::synced_ip::ip_client_key(id) {
            Some(key) => self.apply_ip_delete(&key, id),
            None => self.apply_conn_delete(id),
        }
    }

    /// VERIFY of client `id` at `revision`: true if the copy is there and agrees.
    pub fn verify_client(&mut self, now: SimTime, id: &Arc<str>, revision: u64) -> bool {
        match super::synced_ip::ip_client_key(id) {
            Some(key) => self.verify_ip(now, &key, revision),
            None => self.verify_conn(now, id, revision),
        }
    }

    /// A connection client's copy: created (renewed now) if absent, then upgraded.
    fn apply_conn_sync(&mut self, now: SimTime, owner: &Arc<str>, conn: &Arc<str>, data: &ConnSyncData) -> Vec<Change> {
        let client = self.conns.entry(conn.clone()).or_insert_with(|| ConnClient {
            native: false,
            owner: Some(owner.clone()),
            last_renew: now,
            ..ConnClient::default()
        });
        if client.native {
            return Vec::new(); // a stale echo of our own client: Java's ids never collide so
        }
        let mut changes = Vec::new();
        let mut put = Vec::new();
        for (service, key, p) in &data.instances {
            let differs = client.publishers.get(service).is_none_or(|(k, old)| k != key || !same_publish(old, p));
            if differs {
                let published = Published { last_heart_beat: now, ..p.clone() };
                client.publishers.insert(service.clone(), (key.clone(), published));
                put.push(service.clone());
                changes.push(Change::Registered {
                    service: service.clone(),
                    client: key.clone(),
                    new_client: false,
                    source: RegisterSource::Distro,
                });
            }
        }
        let gone: Vec<ServiceKey> =
            client.publishers.keys().filter(|s| !data.instances.iter().any(|(d, _, _)| d == *s)).cloned().collect();
        for service in &gone {
            if let Some((key, _)) = client.publishers.remove(service) {
                changes.push(Change::Deregistered { service: service.clone(), client: key });
            }
        }
        client.revision = data.revision;
        for service in &put {
            self.services.insert(service.clone());
            self.conn_publishers.entry(service.clone()).or_default().insert(conn.clone());
        }
        for service in &gone {
            self.unindex_conn(service, conn);
        }
        if !changes.is_empty() {
            self.bump();
        }
        changes
    }

    /// DELETE from the owner: `ConnectionBasedClientManager#clientDisconnected` on the copy.
    fn apply_conn_delete(&mut self, conn: &Arc<str>) -> Vec<Change> {
        if self.conns.get(conn).is_none_or(|c| c.native) {
            return Vec::new();
        }
        self.disconnect_client(conn)
    }

    /// `ConnectionBasedClientManager#verifyClient`: renews the copy if the revisions agree.
    fn verify_conn(&mut self, now: SimTime, conn: &Arc<str>, revision: u64) -> bool {
        let planted = self.schedule.planted == Some(crate::sim::mutation::Mutation::DistroVerifyDoesNotRenew);
        let Some(c) = self.conns.get_mut(conn) else { return false };
        if revision != 0 && c.revision != revision {
            return false;
        }
        if planted {
            return true; // the planted bug: "ok", and the copy not renewed
        }
        c.last_renew = now;
        true
    }

    /// `ExpiredClientCleaner#run` over the copies: each one not renewed for longer than
    /// `clientExpiredTime` is disconnected. Returns `(conn, idle ms, changes)` per copy removed.
    pub fn expire_copies(&mut self, now: SimTime) -> Vec<(Arc<str>, u64, Vec<Change>)> {
        let limit = self.config.client_expired_time;
        let expired: Vec<(Arc<str>, u64)> = self
            .conns
            .iter()
            .filter(|(_, c)| !c.native && now.since(c.last_renew).millis() > limit)
            .map(|(id, c)| (id.clone(), now.since(c.last_renew).millis()))
            .collect();
        expired.into_iter().map(|(id, idle)| (id.clone(), idle, self.disconnect_client(&id))).collect()
    }

    fn unindex_conn(&mut self, service: &ServiceKey, conn: &Arc<str>) {
        if let Some(set) = self.conn_publishers.get_mut(service) {
            set.remove(conn);
            if set.is_empty() {
                self.conn_publishers.remove(service);
            }
        }
    }
}

/// `DistroClientDataProcessor#generateSyncData` for one client: every instance it publishes, and
/// its revision.
fn sync_data(c: &ConnClient) -> ConnSyncData {
    let instances = c.publishers.iter().map(|(s, (k, p))| (s.clone(), k.clone(), p.clone())).collect();
    ConnSyncData { instances, revision: c.revision }
}
