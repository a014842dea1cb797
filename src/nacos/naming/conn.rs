//! The naming server's gRPC clients: `ConnectionBasedClientManager` and the
//! `ConnectionBasedClient`s it keeps, one per connection, with their publish infos.
//!
//! A connection-based client is created when its connection registers (`clientConnected`), is
//! keyed by the connection id, and holds at most one instance per service
//! (`AbstractClient#addServiceInstance` is a `publishers.put(service, info)`): a second
//! registration for the same service replaces the first (#9261). The beat checks never look at
//! it — `ClientBeatCheckTaskV2` runs only for `IpPortBasedClient`s — and the cleaner never
//! expires a native one (`ConnectionBasedClient#isExpire` is false for a connection this server
//! owns). It goes only with its connection: `clientDisconnected` removes the client and every
//! instance at once, and each service it published changes.

use super::{Change, NamingServer, Published, RegisterSource, Timeouts};
use crate::nacos::types::{ClientKey, Instance, ServiceKey};
use crate::sim::clock::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A `ConnectionBasedClient`: its instances by service, each with the `ip:port` it names.
///
/// `native` is `isNative`: true on the member the connection is on, false for a Distro copy
/// (`ConnectionBasedClientFactory#newSyncedClient`), which remembers who sent it (`owner`), the
/// owner's `revision`, and `lastRenewTime` — the last verify or sync that vouched for it.
#[derive(Clone, Debug, Default)]
pub struct ConnClient {
    pub(crate) publishers: BTreeMap<ServiceKey, (ClientKey, Published)>,
    pub native: bool,
    pub owner: Option<Arc<str>>,
    /// `AbstractClient.revision`: bumped by every registration on the owner
    /// (`recalculateRevision`), copied from the sync data on a copy (`upgradeClient`).
    pub revision: u64,
    pub last_renew: SimTime,
}

impl NamingServer {
    /// `ConnectionBasedClientManager#clientConnected`: an empty client for connection `conn`.
    pub fn connect_client(&mut self, conn: &Arc<str>) {
        self.conns.entry(conn.clone()).or_insert_with(|| ConnClient { native: true, ..ConnClient::default() });
    }

    /// `InstanceRequestHandler` → `EphemeralClientOperationServiceImpl#registerInstance` over
    /// connection `conn`. A client the server does not know (its connection went meanwhile) is
    /// refused, as `checkValid` refuses the request before it gets here; `None` then.
    pub fn register_grpc(
        &mut self,
        now: SimTime,
        conn: &Arc<str>,
        service: &ServiceKey,
        instance: &Instance,
    ) -> Option<Vec<Change>> {
        let key = ClientKey::new(&instance.ip, instance.port);
        let timeouts = Timeouts::from_metadata(&instance.metadata);
        let published = Published::new(instance, now, timeouts);
        let client = self.conns.get_mut(conn)?;
        let old = client.publishers.insert(service.clone(), (key.clone(), published));
        client.revision += 1;
        if self.distro_enabled {
            self.distro_dirty.insert(conn.clone(), false);
        }
        self.services.insert(service.clone());
        self.conn_publishers.entry(service.clone()).or_default().insert(conn.clone());
        self.bump();
        let mut changes = Vec::new();
        // Java publishes only `ClientRegisterServiceEvent`: the replaced instance just vanishes
        // from the service's next push. Saying so here lets the trace and views show it go.
        if let Some((old_key, _)) = old.filter(|(k, _)| *k != key) {
            changes.push(Change::Deregistered { service: service.clone(), client: old_key });
        }
        changes.push(Change::Registered {
            service: service.clone(),
            client: key,
            new_client: false,
            source: RegisterSource::Grpc,
        });
        Some(changes)
    }

    /// `ConnectionBasedClientManager#clientDisconnected`: the client and all its instances go
    /// at once (`ClientDisconnectEvent` → one `ServiceChangedEvent` per service).
    pub fn disconnect_client(&mut self, conn: &Arc<str>) -> Vec<Change> {
        let Some(client) = self.conns.remove(conn) else { return Vec::new() };
        // `DistroClientDataProcessor#syncToAllServer`: only the owner's `ClientDisconnectEvent`
        // becomes a Distro DELETE (`isInvalidClient` skips copies).
        if client.native && self.distro_enabled {
            self.distro_dirty.insert(conn.clone(), true);
        }
        let mut published = Vec::new();
        let mut instances = Vec::new();
        for (service, (key, _)) in client.publishers {
            if let Some(set) = self.conn_publishers.get_mut(&service) {
                set.remove(conn);
                if set.is_empty() {
                    self.conn_publishers.remove(&service);
                }
            }
            published.push(service);
            instances.push(key);
        }
        if !published.is_empty() {
            self.bump();
        }
        vec![Change::ConnectionReleased { conn: conn.clone(), published, instances }]
    }

    /// The connection clients, by connection id.
    pub fn conn_clients(&self) -> impl Iterator<Item = (&Arc<str>, &ConnClient)> {
        self.conns.iter()
    }

    /// The instance a connection client publishes for `service` under `client`'s `ip:port`.
    pub(crate) fn conn_instance(&self, service: &ServiceKey, client: &ClientKey) -> Option<&Published> {
        // Not through `conn_instances`: its items borrow `service` too, and the answer here
        // borrows the server alone.
        let conns = self.conn_publishers.get(service)?;
        conns.iter().find_map(|c| {
            let (k, p) = self.conns.get(c)?.publishers.get(service)?;
            (k == client).then_some(p)
        })
    }

    /// Every connection client's instance of `service`, in connection order.
    pub(crate) fn conn_instances<'a>(
        &'a self,
        service: &'a ServiceKey,
    ) -> impl Iterator<Item = (&'a ClientKey, &'a Published)> + 'a {
        let conns = self.conn_publishers.get(service);
        conns.into_iter().flatten().filter_map(move |c| {
            let (k, p) = self.conns.get(c)?.publishers.get(service)?;
            Some((k, p))
        })
    }
}
