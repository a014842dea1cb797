//! The naming server's HTTP operations (2.1.2 `InstanceController` → `InstanceOperatorClientImpl`
//! → `EphemeralClientOperationServiceImpl`), each returning what changed.

use super::{Change, IpPortClient, NamingServer, Published, RegisterSource};
use crate::nacos::health::ClientSched;
use crate::nacos::types::{ClientKey, Host, Instance, ServiceInfo, ServiceKey, CODE_OK, CODE_RESOURCE_NOT_FOUND};
use crate::nacos::wire::{Answer, BeatReply, BeatReq, DeregisterReq, ListReq};
use crate::sim::clock::SimTime;
use crate::sim::name::Name;
use std::collections::BTreeSet;
use std::sync::Arc;

impl NamingServer {
    /// `createIpPortClientIfAbsent` → `clientConnected` → `IpPortBasedClient#init`: a new client's
    /// beat check runs every 5 s from 5 s after now. Returns whether it was created.
    pub(super) fn create_client_if_absent(&mut self, key: &ClientKey, now: SimTime) -> bool {
        if self.clients.contains_key(key) {
            return false;
        }
        let client = IpPortClient {
            created: now,
            last_updated: now,
            publishers: Default::default(),
            subscriptions: BTreeSet::new(),
            sched: ClientSched::new(now),
            revision: 0,
            responsible: self.responsible_for(key),
            beat_cursor: 0,
        };
        self.clients.insert(key.clone(), client);
        true
    }

    /// `registerInstance`: creates the client and the service singleton if needed and *replaces*
    /// the client's publish info for the service — so a re-registration resets
    /// `lastHeartBeatTime` to now and `healthy` to the request's value.
    pub fn register(
        &mut self,
        now: SimTime,
        service: &ServiceKey,
        instance: &Instance,
        source: RegisterSource,
    ) -> Vec<Change> {
        let key = ClientKey::new(&instance.ip, instance.port);
        let new_client = self.create_client_if_absent(&key, now);
        self.services.insert(service.clone());
        self.clean_metadata(now);
        let timeouts = self.timeouts_for(service, &key, &instance.cluster, &instance.metadata);
        let published = Published::new(instance, now, timeouts);
        let client = self.clients.get_mut(&key).expect("created above");
        client.publishers.insert(service.clone(), published);
        client.last_updated = now;
        client.revision += 1;
        self.publishers.entry(service.clone()).or_default().insert(key.clone());
        self.bump();
        self.reschedule(&key, now);
        self.mark_ip_dirty(&key, false);
        let changes = vec![Change::Registered { service: service.clone(), client: key, new_client, source }];
        self.metadata_events(now, &changes);
        changes
    }

    /// `deregisterInstance`: removes the client's instance for the service. The client itself stays
    /// until the cleaner finds it empty and idle for 30 s. The cluster is not compared.
    pub fn deregister(&mut self, now: SimTime, req: &DeregisterReq) -> Vec<Change> {
        let key = ClientKey::new(&req.ip, req.port);
        if !self.services.contains(&req.service) {
            return Vec::new();
        }
        let Some(client) = self.clients.get_mut(&key) else { return Vec::new() };
        let removed = client.publishers.swap_remove(&req.service);
        client.last_updated = now;
        let mut changes = Vec::new();
        if removed.is_some() {
            client.revision += 1;
            self.unindex_publisher(&req.service, &key);
            self.bump();
            self.mark_ip_dirty(&key, false);
            changes.push(Change::Deregistered { service: req.service.clone(), client: key.clone() });
        }
        self.reschedule(&key, now);
        self.metadata_events(now, &changes);
        changes
    }

    /// `EphemeralIpPortClientManager#clientDisconnected`: the client goes with its subscriptions
    /// and every instance it publishes (returned in service order), and its owner tells the other
    /// members (a Distro DELETE). `None` if there is no such client.
    pub(crate) fn remove_ip_client(&mut self, key: &ClientKey) -> Option<(IpPortClient, Vec<ServiceKey>)> {
        let client = self.clients.swap_remove(key)?;
        for service in &client.subscriptions {
            if let Some(set) = self.subscribers.get_mut(service) {
                set.remove(key);
            }
        }
        let mut published: Vec<ServiceKey> = client.publishers.keys().cloned().collect();
        published.sort_unstable();
        for service in &published {
            self.unindex_publisher(service, key);
        }
        self.bump();
        self.mark_ip_dirty(key, true);
        Some((client, published))
    }

    pub(crate) fn unindex_publisher(&mut self, service: &ServiceKey, key: &ClientKey) {
        if let Some(set) = self.publishers.get_mut(service) {
            set.remove(key);
            if set.is_empty() {
                self.publishers.remove(service);
            }
        }
    }

    /// `InstanceController#beat` + `InstanceOperatorClientImpl#handleBeat`, with its branches:
    ///
    /// * (A) a light beat for a client that does not publish the service → `20404`;
    /// * (B) a full beat for the same → registered from the body, healthy, then as (D);
    /// * (C) the service singleton is missing → HTTP 500 "service not found" (unreachable for a
    ///   live client unless the empty-service cleaner raced it; #9959);
    /// * (D) `ClientBeatProcessorV2`: refresh `lastHeartBeatTime`, flip back to healthy (a
    ///   `ServiceChangedEvent` only then), and `client.setLastUpdatedTime()` → `10200`.
    pub fn handle_beat(&mut self, now: SimTime, req: &BeatReq) -> (Answer, Vec<Change>) {
        // A full beat's body overrides the query's ip and port, and its cluster unless blank (#2533).
        let (ip, port) = beat_addr(req);
        let key = ClientKey::new(ip, port);
        if let Some((reply, changes)) = self.beat_known(now, req, &key, true) {
            return (Answer::Beat(reply), changes);
        }
        // Past the common case: the query's interned cluster becomes the text the tables keep.
        let cluster = &match &req.body {
            Some(b) if !b.cluster.trim().is_empty() => b.cluster.clone(),
            _ => Arc::from(req.cluster.as_str()),
        };
        let mut changes = Vec::new();
        let known = self.clients.get(&key).is_some_and(|c| c.publishers.contains_key(&req.service));
        if !known {
            let Some(body) = &req.body else {
                return (self.beat_answer(&req.service, &key, cluster, CODE_RESOURCE_NOT_FOUND), changes);
            };
            let instance = Instance {
                ip: *ip,
                port,
                weight: body.weight,
                cluster: cluster.clone(),
                metadata: body.metadata.clone(),
                healthy: true,
                enabled: true,
            };
            changes = self.register(now, &req.service, &instance, RegisterSource::FullBeat);
        }
        if !self.services.contains(&req.service) {
            let message = format!("service not found: {}@{}", req.service.grouped, req.service.namespace);
            return (Answer::Error { status: 500, message: Arc::from(message) }, changes);
        }
        if let Some(client) = self.clients.get_mut(&key) {
            if let Some(p) = client.publishers.get_mut(&req.service).filter(|p| p.ip == *ip && p.port == port) {
                let silent = now.since(p.last_heart_beat);
                p.last_heart_beat = now;
                if !p.healthy {
                    p.healthy = true;
                    changes.push(Change::HealthyAgain { service: req.service.clone(), client: key.clone(), silent });
                }
            }
            client.last_updated = now;
        }
        if !changes.is_empty() {
            self.bump();
            self.mark_ip_dirty(&key, false);
        }
        self.reschedule(&key, now);
        (self.beat_answer(&req.service, &key, cluster, CODE_OK), changes)
    }

    /// (D) for an instance its client already publishes, that was healthy and stays so: nearly
    /// every beat. It changes nothing anyone is told of, so it returns only its answer, which
    /// fits in two registers; `None` sends the beat to [`handle_beat`](Self::handle_beat). As
    /// `handle_beat`'s answer and change list, returned through memory, every beat's result was
    /// written a field at a time and read back at once in 16-byte pieces, which the CPU cannot
    /// forward from its store buffer: 3% of the Nacos bench's sampled time.
    pub fn beat_steady(&mut self, now: SimTime, req: &BeatReq) -> Option<BeatReply> {
        let (ip, port) = beat_addr(req);
        self.beat_known(now, req, &ClientKey::new(ip, port), false).map(|(reply, _)| reply)
    }

    /// Branch (D) for an instance the client already publishes — nearly every beat — with one
    /// lookup of the client; a health flip only if `may_flip`. `None` sends the beat down the
    /// general path.
    #[inline(always)]
    fn beat_known(
        &mut self,
        now: SimTime,
        req: &BeatReq,
        key: &ClientKey,
        may_flip: bool,
    ) -> Option<(BeatReply, Vec<Change>)> {
        // `containSingleton(service)`: a service this client publishes always has its singleton
        // here, as every path that publishes creates it and none removes it (the empty-service
        // cleaner is not modelled). So the beat asks the set only once a test has removed one;
        // asked on every beat, it was a hash look-up, 1.6% of the Nacos bench's instructions.
        if self.singleton_removed && !self.services.contains(&req.service) {
            return None;
        }
        let NamingServer { clients, beat_client, schedule, config, .. } = self;
        let at = crate::sim::keyed::index_hinted(clients, *beat_client, key)?;
        *beat_client = at;
        let client = &mut clients[at];
        // ClientBeatProcessorV2 also compares the instance's ip and port with the beat's: they are
        // the client's own key here, so the comparison always holds.
        let p = client.published_mut(&req.service)?;
        // The change list is made only where it is returned: a vector made empty first and then
        // moved was read back at once in other widths than it was written (a stall on the
        // store buffer per beat, 3% of the Nacos bench's time).
        let flipped = !p.healthy;
        if flipped && !may_flip {
            return None;
        }
        let silent = now.since(p.last_heart_beat);
        p.last_heart_beat = now;
        p.healthy = true;
        let interval = p.timeouts.interval.unwrap_or(config.client_beat_interval);
        client.last_updated = now;
        // A beat that keeps a healthy instance healthy only moves the client's thresholds later:
        // its index entries become early, and the checker re-files early entries when it
        // reaches them. So only a health flip reschedules (its new unhealthy threshold can be
        // earlier than what was filed, e.g. with a non-numeric timeout of 0). Recomputing on
        // every beat would walk every instance of the client — 100 per beat for a provider
        // that registers 100 services from one ip:port.
        if flipped {
            schedule.reschedule(client, key, config, now);
        }
        let light_beat_enabled = config.light_beat_enabled;
        let reply = BeatReply { client_beat_interval: interval, code: CODE_OK, light_beat_enabled };
        if !flipped {
            return Some((reply, Vec::new()));
        }
        self.bump();
        // `ClientBeatProcessorV2`: the flip back to healthy is a `ClientChangedEvent` too.
        self.mark_ip_dirty(key, false);
        let change = Change::HealthyAgain { service: req.service.clone(), client: key.clone(), silent };
        Some((reply, vec![change]))
    }

    fn beat_answer(&self, service: &ServiceKey, key: &ClientKey, cluster: &Arc<str>, code: i32) -> Answer {
        Answer::Beat(BeatReply {
            client_beat_interval: self.heart_beat_interval(service, key, cluster),
            code,
            light_beat_enabled: self.config.light_beat_enabled,
        })
    }

    /// Nacos 2.x `InstanceOperatorClientImpl#getHeartBeatInterval`: `preserved.heart.beat.interval`
    /// from the console metadata of `ip:port:cluster` — looked up even when the instance is not
    /// published, so a 20404 answer carries it too — else from the registered instance's
    /// metadata, through `ConvertUtils.toLong` (non-numeric → 0, which the client ignores), else
    /// the `clientBeatInterval` switch. Per-instance metadata wins over the switch (#3353).
    pub fn heart_beat_interval(&self, service: &ServiceKey, key: &ClientKey, cluster: &Arc<str>) -> i64 {
        let console = || {
            let m = self.console_metadata(service, key, cluster)?;
            m.get(crate::nacos::types::HEART_BEAT_INTERVAL_KEY).map(|v| crate::nacos::types::to_long(v))
        };
        let interval = match self.instance(service, key) {
            Some(p) => p.timeouts.interval,
            None => console(),
        };
        interval.unwrap_or(self.config.client_beat_interval)
    }

    /// `listInstance` for a 1.x client: with `udpPort > 0` it first subscribes `clientIP:udpPort`
    /// (creating that client, refreshing its `lastUpdatedTime`); then it answers from
    /// `ServiceStorage`'s cache — data as of the last push task, so health changes show about
    /// 0.5 s late — keeping enabled instances, and healthy ones if `healthyOnly`.
    pub fn list(&mut self, now: SimTime, req: &ListReq) -> (Arc<ServiceInfo>, Vec<Change>) {
        let mut changes = Vec::new();
        if req.udp_port > 0 {
            let key = ClientKey::new(&req.client_ip, req.udp_port);
            self.create_client_if_absent(&key, now);
            let client = self.clients.get_mut(&key).expect("created above");
            client.subscriptions.insert(req.service.clone());
            client.last_updated = now;
            // Only a first subscription is announced (fix #5404).
            if self.subscribers.entry(req.service.clone()).or_default().insert(key.clone()) {
                changes.push(Change::Subscribed { service: req.service.clone(), subscriber: key.clone() });
            }
            self.reschedule(&key, now);
        }
        let data = match self.storage.get(&req.service) {
            Some(data) => data.clone(),
            None => self.push_data(now, &req.service),
        };
        let hosts = data.hosts.iter().filter(|h| h.enabled && (!req.healthy_only || h.healthy)).cloned().collect();
        let info =
            ServiceInfo { service: req.service.clone(), hosts, last_ref_time: now, cache_millis: data.cache_millis };
        (Arc::new(info), changes)
    }

    /// `ServiceStorage#getPushData`: rebuilds the service's data from the publisher index and
    /// caches it for queries (only if the service singleton exists). Pushes carry it with
    /// disabled instances removed.
    pub fn push_data(&mut self, now: SimTime, service: &ServiceKey) -> Arc<ServiceInfo> {
        let mut info = ServiceInfo {
            service: service.clone(),
            hosts: Vec::new(),
            last_ref_time: now,
            cache_millis: self.config.push_cache_millis,
        };
        if !self.services.contains(service) {
            return Arc::new(info);
        }
        info.hosts = self
            .instances(service)
            .map(|(_, p)| Host {
                ip: p.ip,
                port: p.port,
                cluster: p.cluster.clone(),
                weight: p.weight,
                healthy: p.healthy,
                enabled: p.enabled,
            })
            .collect();
        let info = Arc::new(info);
        self.storage.insert(service.clone(), info.clone());
        info
    }
}

/// The address a beat speaks for: a full beat's body overrides the query's ip and port.
fn beat_addr(req: &BeatReq) -> (&Name, u16) {
    match &req.body {
        Some(b) => (&b.ip, b.port),
        None => (&req.ip, req.port),
    }
}
