//! `NamingGrpcRedoService`: the client's record of what it registered, so that a new connection
//! gets it all again. Pure; the client actor runs its `RedoScheduledTask`.
//!
//! `registerService` first caches the instance (`cacheInstanceForRedo`, not yet registered), then
//! sends the request and marks it registered when the answer comes (`instanceRegistered`). A
//! `DISCONNECTED` connection event (`onDisConnect`) marks everything unregistered; the redo task
//! runs every 3 s from the client's creation (`scheduleWithFixedDelay(redoTask, 3000, 3000)`)
//! and, **only while connected** (`RedoScheduledTask#run`: `if (!redoService.isConnected())
//! return`), registers again whatever is not marked registered. So a re-registration lands 0–3 s
//! after a reconnect, and a failed one is simply tried again at the next run.
//!
//! Keyed by service (`getGroupedName`), as Java keys `registeredInstances`: one instance per
//! service per client — registering a second one for the same service replaces the first, on the
//! client and on the server alike (#9261).

use crate::nacos::types::ServiceKey;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
struct RedoData {
    /// The caller's index of the instance.
    idx: usize,
    registered: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RedoService {
    connected: bool,
    instances: BTreeMap<ServiceKey, RedoData>,
}

impl RedoService {
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// `cacheInstanceForRedo`: the instance `idx` is wanted (replacing any earlier one of the
    /// same service). Returns the index it replaced, if another.
    pub fn cache(&mut self, service: &ServiceKey, idx: usize) -> Option<usize> {
        let old = self.instances.insert(service.clone(), RedoData { idx, registered: false });
        old.map(|o| o.idx).filter(|o| *o != idx)
    }

    /// `instanceRegistered`: the server answered the registration of `idx`.
    pub fn registered(&mut self, service: &ServiceKey, idx: usize) {
        if let Some(d) = self.instances.get_mut(service).filter(|d| d.idx == idx) {
            d.registered = true;
        }
    }

    /// `removeInstanceForRedo` (deregistration done).
    pub fn remove(&mut self, service: &ServiceKey) {
        self.instances.remove(service);
    }

    /// `onConnected`.
    pub fn on_connected(&mut self) {
        self.connected = true;
    }

    /// `onDisConnect`: not connected, and nothing counts as registered any more.
    pub fn on_disconnect(&mut self) {
        self.connected = false;
        for d in self.instances.values_mut() {
            d.registered = false;
        }
    }

    /// One `RedoScheduledTask` run: the instances to register again, in service order; none
    /// while disconnected.
    pub fn to_redo(&self) -> Vec<(ServiceKey, usize)> {
        if !self.connected {
            return Vec::new();
        }
        self.instances.iter().filter(|(_, d)| !d.registered).map(|(s, d)| (s.clone(), d.idx)).collect()
    }
}
