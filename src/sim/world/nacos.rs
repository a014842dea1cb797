//! The Nacos part of the world: naming servers' state and subscribers' caches, lent to observers,
//! and the static facts that map an instance's scenario name to what Nacos knows it by.

use super::{core, revision, set, World};
use crate::nacos::cluster::MemberView;
use crate::nacos::naming::NamingServer;
use crate::nacos::subscriber::SubscriberCore;
use crate::nacos::types::{ClientKey, ServiceKey};
use crate::sim::name::Name;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// What a scenario's `[[instance]]` is to Nacos: a service and an `ip:port`.
#[derive(Clone, Debug, PartialEq)]
pub struct NacosInstanceFacts {
    pub service: ServiceKey,
    pub ip: Name,
    pub port: u16,
}

impl NacosInstanceFacts {
    pub fn client(&self) -> ClientKey {
        ClientKey::new(&self.ip, self.port)
    }
}

impl World {
    /// Records the scenario's instances (once, before the run).
    pub fn set_nacos_instances(&mut self, facts: BTreeMap<String, NacosInstanceFacts>) {
        self.nacos_names = facts.iter().map(|(n, f)| ((f.service.clone(), f.client()), n.clone())).collect();
        self.nacos_instances = facts;
    }

    pub fn nacos_instance(&self, name: &str) -> Option<&NacosInstanceFacts> {
        self.nacos_instances.get(name)
    }

    pub fn set_nacos_server(&self, name: &str, core: Option<Rc<RefCell<NamingServer>>>) {
        set(&self.nacos_servers, name, core);
    }

    pub fn set_nacos_subscriber(&self, name: &str, core: Option<Rc<RefCell<SubscriberCore>>>) {
        set(&self.nacos_subscribers, name, core);
    }

    pub fn nacos_server(&self, name: &str) -> Option<Rc<RefCell<NamingServer>>> {
        core(&self.nacos_servers, name)
    }

    pub fn nacos_subscriber(&self, name: &str) -> Option<Rc<RefCell<SubscriberCore>>> {
        core(&self.nacos_subscribers, name)
    }

    /// Changes whenever an instance of that server appears, goes or changes health.
    pub fn nacos_server_revision(&self, name: &str) -> (u64, u64) {
        revision(&self.nacos_servers, name, |s| s.revision())
    }

    pub fn nacos_subscriber_revision(&self, name: &str) -> (u64, u64) {
        revision(&self.nacos_subscribers, name, |s| s.revision())
    }

    pub fn set_grpc_client(&self, name: &str, view: Option<Rc<RefCell<crate::nacos::grpc::client::ConnView>>>) {
        set(&self.grpc_clients, name, view);
    }

    /// A 2.x client's connection view, while it runs.
    pub fn grpc_client(&self, name: &str) -> Option<Rc<RefCell<crate::nacos::grpc::client::ConnView>>> {
        core(&self.grpc_clients, name)
    }

    /// Changes whenever that client's connection server changes, or it starts or stops.
    pub fn grpc_client_revision(&self, name: &str) -> (u64, u64) {
        revision(&self.grpc_clients, name, |v| v.revision())
    }

    pub fn set_nacos_members(&self, name: &str, view: Option<Rc<RefCell<MemberView>>>) {
        set(&self.nacos_members, name, view);
    }

    /// A clustered server's membership view, while it runs.
    pub fn nacos_members(&self, name: &str) -> Option<Rc<RefCell<MemberView>>> {
        core(&self.nacos_members, name)
    }

    /// Changes whenever a member of that server's view changes state, or the server restarts.
    pub fn nacos_members_revision(&self, name: &str) -> (u64, u64) {
        revision(&self.nacos_members, name, |v| v.revision())
    }

    /// Names of the naming servers, in order.
    pub fn nacos_server_names(&self) -> Vec<String> {
        self.nacos_servers.borrow().keys().cloned().collect()
    }

    /// The scenario name of the instance `client` publishes for `service`, if it is one.
    pub fn nacos_instance_name(&self, service: &ServiceKey, client: &ClientKey) -> Option<&str> {
        self.nacos_names.get(&(service.clone(), client.clone())).map(String::as_str)
    }
}
