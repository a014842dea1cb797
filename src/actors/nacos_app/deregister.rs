//! `NacosNamingService#deregisterInstance` (1.4.8), for one instance at the scenario's say
//! (`deregister`) or for each in turn from the shutdown hook.
//!
//! The client first stops the instance's beat chain (`BeatReactor#removeBeatInfo`: the entry
//! leaves `dom2Beat` and its `BeatInfo` is marked stopped), then sends
//! `DELETE /nacos/v1/ns/instance` (`NamingProxy#deregisterService`). A beat already in flight
//! still gets its answer, and a 20404 then registers the instance again (#1733, #9746).

use super::{NacosApp, Purpose};
use crate::nacos::notes::NacosNote;
use crate::nacos::wire::{DeregisterReq, NacosMsg};
use actix::prelude::*;
use std::sync::Arc;

impl NacosApp {
    /// `deregisterInstance` for instance `idx`; `shutdown` when the shutdown hook calls it.
    pub(super) fn deregister(&mut self, idx: usize, shutdown: bool, ctx: &mut Context<Self>) {
        self.registered[idx] = false;
        let i = &self.instances[idx];
        self.env.record(NacosNote::Deregistering { instance: i.name });
        let (ip, port) = (i.instance.ip, i.instance.port);
        self.reactor.remove_beat_info(&i.service.grouped, &ip, port);
        let req = DeregisterReq { service: i.service.clone(), cluster: i.instance.cluster.clone(), ip, port };
        let msg = NacosMsg::Deregister(Arc::new(req));
        if let Some(o) = self.http.call(Purpose::Deregister { idx, shutdown }, msg) {
            self.outcome(&o, ctx);
        }
    }
}

/// The application calls `NamingService#deregisterInstance` for the named instance.
#[derive(Message)]
#[rtype(result = "()")]
pub struct DeregisterInstance(pub Arc<str>);

impl Handler<DeregisterInstance> for NacosApp {
    type Result = ();
    fn handle(&mut self, DeregisterInstance(name): DeregisterInstance, ctx: &mut Context<Self>) {
        // During the shutdown hook the instances are deregistered in turn already.
        if self.shutdown.is_some() {
            return;
        }
        if let Some(idx) = self.instances.iter().position(|i| i.name == *name) {
            self.deregister(idx, false, ctx);
        }
    }
}
