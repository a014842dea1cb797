//! The director's Nacos part: starting naming servers, applications and subscribers, SIGTERM for
//! an application, telling a naming server that it was paused, and the Nacos operations: the
//! console's metadata edit, an application's `deregisterInstance`, and the switches.
//!
//! The sim's naming servers have no Raft group; those given a `cluster` also run
//! `ServerMemberManager`'s report task and keep a member view, and — when the scenario has 2.x
//! clients — Distro for them (`nacos_distro`). An operation aimed at
//! several servers is sent to each; one that is down or hung gets nothing, not even after a
//! restart. What a server accepted survives its restarts, as Nacos keeps both through its CP
//! protocol on disk: switches (`SwitchManager` → `PersistentConsistencyService`) and instance
//! metadata (`InstanceMetadataProcessor`, a `RequestProcessor4CP`).

use super::{Director, Running};
use crate::actors::inbox::Local;
use crate::actors::nacos_app::{AppInstance, DeregisterInstance, NacosApp, Shutdown};
use crate::actors::nacos_distro::{Distro, LoadTick, VerifyTick};
use crate::actors::nacos_filter::DistroFilter;
use crate::actors::nacos_grpc_client::{GrpcApp, GrpcShutdown};
use crate::actors::nacos_grpc_server::{EjectTick, GrpcConnections};
use crate::actors::nacos_health::{HealthChecker, Resumed};
use crate::actors::nacos_member::{MemberTick, Membership, FIRST_REPORT_DELAY};
use crate::actors::nacos_server::NacosServer;
use crate::actors::nacos_server::{SetSwitches, UpdateInstance};
use crate::actors::nacos_subscriber::NacosSubscriber;
use crate::nacos::cluster::sync::VERIFY_INTERVAL;
use crate::nacos::cluster::MemberView;
use crate::nacos::grpc::client::ConnView;
use crate::nacos::grpc::EJECTOR_INITIAL_DELAY;
use crate::nacos::naming::NamingServer;
use crate::nacos::naming::{ConsoleMetadata, MetadataKey, Switches};
use crate::nacos::notes::NacosNote;
use crate::nacos::subscriber::SubscriberCore;
use crate::nacos::types::{ClientKey, Metadata};
use crate::sim::clock::SimDuration;
use crate::sim::ids::NodeId;
use crate::sim::name::Name;
use crate::sim::scenario::{NacosAppSpec, NacosServerSpec, Scenario, SubscriberSpec, Transport};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// Which table a Nacos process comes from, and its position there.
#[derive(Clone, Copy)]
pub(super) enum NacosProc {
    Server(usize),
    App(usize),
    Subscriber(usize),
}

/// Every Nacos process by name.
pub(super) fn index(scenario: &Scenario) -> BTreeMap<String, NacosProc> {
    let n = &scenario.nacos;
    let servers = n.servers.iter().enumerate().map(|(i, s)| (s.name.clone(), NacosProc::Server(i)));
    let apps = n.apps.iter().enumerate().map(|(i, a)| (a.name.clone(), NacosProc::App(i)));
    let subs = n.subscribers.iter().enumerate().map(|(i, s)| (s.name.clone(), NacosProc::Subscriber(i)));
    servers.chain(apps).chain(subs).collect()
}

impl Director {
    /// Starts `name` if it is a Nacos process; false if it is not one.
    pub(super) fn start_nacos(&mut self, name: &str) -> bool {
        let n = &self.scenario.nacos;
        match self.nacos.get(name).copied() {
            Some(NacosProc::Server(i)) => self.start_nacos_server(&n.servers[i].clone()),
            Some(NacosProc::App(i)) => self.start_nacos_app(&n.apps[i].clone()),
            Some(NacosProc::Subscriber(i)) => self.start_subscriber(&n.subscribers[i].clone()),
            None => return false,
        }
        true
    }

    /// An app's server list, its names interned here, where they enter: its trace notes name them.
    fn nacos_servers(&self, names: &[String]) -> Vec<(Name, NodeId)> {
        names.iter().map(|s| (Name::new(s), self.nodes[s])).collect()
    }

    /// A fresh server: empty tables, its cleaner and push grids from now (a restart forgets all).
    fn start_nacos_server(&mut self, spec: &NacosServerSpec) {
        let core = Rc::new(RefCell::new(NamingServer::new(spec.config.clone(), self.env.now())));
        if let Some(kept) = self.console.get(&spec.name) {
            core.borrow_mut().restore_console(kept.clone());
        }
        if let Some(m) = self.env.mutation {
            core.borrow_mut().plant(m);
        }
        self.env.obs.world.set_nacos_server(&spec.name, Some(core.clone()));
        let (server, checker) = (Local::new(), Local::new());
        // The process must be up before any of its actors sets a timer.
        let env = self.start_process(&spec.name, Some(server.endpoint()));
        checker.start(HealthChecker::new(env.part("health"), core.clone(), server.clone(), checker.clone()));
        let mut actor = NacosServer::new(env.clone(), core, spec.push_delay, server.clone());
        actor.set_checker(checker.clone());
        let members = self.scenario.nacos.cluster_of(&spec.name);
        if !members.is_empty() {
            // A fresh view (everyone UP) per incarnation: a restarted member re-reads cluster.conf.
            let peers: BTreeMap<Arc<str>, NodeId> =
                members.iter().filter(|m| **m != spec.name).map(|m| (Arc::from(m.as_str()), self.nodes[m])).collect();
            let view = Rc::new(RefCell::new(MemberView::new(&spec.name, peers.keys().cloned())));
            self.env.obs.world.set_nacos_members(&spec.name, Some(view.clone()));
            // Distro syncs both kinds of client: 2.x connections and 1.x ip-port clients.
            let core = self.env.obs.world.nacos_server(&spec.name).expect("set above");
            actor.set_distro(Distro::new(env.part("distro"), view.clone(), core, peers.clone(), server.clone()));
            env.after(VERIFY_INTERVAL, server.clone(), VerifyTick);
            env.after(SimDuration::ZERO, server.clone(), LoadTick);
            actor.set_filter(DistroFilter::new(env.part("filter"), view.clone(), peers.clone(), server.clone()));
            actor.set_membership(Membership::new(env.part("member"), view, peers, server.clone()));
            env.after(FIRST_REPORT_DELAY, server.clone(), MemberTick);
        }
        // The gRPC side runs only when the scenario has 2.x clients, so that scenarios without
        // them keep their agenda exactly as before.
        if self.scenario.nacos.apps.iter().any(|a| a.transport == Transport::Grpc) {
            actor.set_grpc(GrpcConnections::new(
                env.clone(),
                self.env.obs.world.nacos_server(&spec.name).expect("set above"),
                server.clone(),
            ));
            env.after(EJECTOR_INITIAL_DELAY, server.clone(), EjectTick);
        }
        server.start(actor);
        self.running.insert(spec.name.clone(), Running::NacosServer(server, checker));
    }

    /// The application starts; each instance registers at its offset from now.
    fn start_nacos_app(&mut self, spec: &NacosAppSpec) {
        let instances = spec
            .instances
            .iter()
            .map(|i| AppInstance {
                name: Name::new(&i.name),
                service: i.service.clone(),
                instance: i.instance.clone(),
                offset: i.start.since(spec.start),
                period: i.period,
            })
            .collect();
        let servers = self.nacos_servers(&spec.servers);
        if spec.transport == Transport::Grpc {
            let view = Rc::new(RefCell::new(ConnView::default()));
            self.env.obs.world.set_grpc_client(&spec.name, Some(view.clone()));
            let me = Local::new();
            let env = self.start_process(&spec.name, Some(me.endpoint()));
            me.start(GrpcApp::new(env, Arc::from(spec.name.as_str()), servers, instances, view, me.clone()));
            self.running.insert(spec.name.clone(), Running::GrpcApp(me));
            return;
        }
        let me = Local::new();
        let env = self.start_process(&spec.name, Some(me.endpoint()));
        me.start(NacosApp::new(env, servers, spec.read_timeout, spec.beat_threads, instances, me.clone()));
        self.running.insert(spec.name.clone(), Running::NacosApp(me));
    }

    fn start_subscriber(&mut self, spec: &SubscriberSpec) {
        let core = Rc::new(RefCell::new(SubscriberCore::new()));
        self.env.obs.world.set_nacos_subscriber(&spec.name, Some(core.clone()));
        let servers = self.nacos_servers(&spec.servers);
        let me = Local::new();
        let env = self.start_process(&spec.name, Some(me.endpoint()));
        let udp = (Name::new(&spec.ip), spec.udp_port);
        me.start(NacosSubscriber::new(env, core, servers, spec.read_timeout, spec.services.clone(), udp, me.clone()));
        self.running.insert(spec.name.clone(), Running::NacosSubscriber(me));
    }

    /// SIGTERM for a Nacos application: its shutdown hook deregisters first. False if `name` is
    /// not a running application.
    pub(super) fn shutdown_nacos(&self, name: &str) -> bool {
        match self.running.get(name) {
            Some(Running::NacosApp(a)) => {
                a.do_send(Shutdown);
                true
            }
            Some(Running::GrpcApp(a)) => {
                a.do_send(GrpcShutdown);
                true
            }
            _ => false,
        }
    }

    /// SIGCONT for a process stopped since `since`: a naming server's fixed-delay tasks (beat
    /// checks, cleaner, push engine) run what fell due and re-phase, as a JVM's do after a pause.
    /// The checker hears it before the server handles its buffered requests.
    pub(super) fn nacos_resumed(&self, name: &str, since: crate::sim::clock::SimTime) {
        if let Some(Running::NacosServer(_, checker)) = self.running.get(name) {
            checker.do_send(Resumed { since });
        }
    }
}

/// A naming server's console metadata entries.
pub(super) type Console = BTreeMap<MetadataKey, ConsoleMetadata>;

impl Director {
    /// Before a naming server stops: what its console metadata is, for its next start.
    pub(super) fn keep_console(&mut self, name: &str) {
        if let Some(core) = self.env.obs.world.nacos_server(name) {
            let kept = core.borrow_mut().console_entries(self.env.now());
            self.console.insert(name.to_string(), kept);
        }
    }

    /// The server actor an operator's call reaches, or why none does.
    fn reachable(&self, server: &str) -> Result<&Local<NacosServer>, &'static str> {
        match self.running.get(server) {
            Some(Running::NacosServer(..)) if self.hung_since.contains_key(server) => Err("hung"),
            Some(Running::NacosServer(addr, _)) => Ok(addr),
            _ => Err("not running"),
        }
    }

    fn missed(&self, operation: &str, server: &str, why: &'static str) {
        let (operation, server) = (operation.to_string(), Arc::from(server));
        self.env.record(NacosNote::OperationMissed { operation, server, why });
    }

    /// `update_metadata`: the console's `PUT /nacos/v1/ns/instance` on each server.
    pub(super) fn update_metadata(&self, op: &str, instance: &str, servers: &[String], metadata: &Metadata) {
        let Some(i) = self.scenario.nacos.apps.iter().flat_map(|a| &a.instances).find(|i| i.name == instance) else {
            return;
        };
        let metadata = Arc::new(metadata.clone());
        for s in servers {
            match self.reachable(s) {
                Ok(addr) => addr.do_send(UpdateInstance {
                    service: i.service.clone(),
                    client: ClientKey::new(&i.instance.ip, i.instance.port),
                    cluster: i.instance.cluster.clone(),
                    metadata: metadata.clone(),
                }),
                Err(why) => self.missed(op, s, why),
            }
        }
    }

    /// `deregister`: the application calls `NamingService#deregisterInstance`.
    pub(super) fn deregister_instance(&self, app: &str, instance: &str) {
        if let Some(Running::NacosApp(a)) = self.running.get(app) {
            a.do_send(DeregisterInstance(Arc::from(instance)));
        }
    }

    /// `nacos_switch`: `updateSwitch` on each server; a server that took it keeps it (its spec
    /// is what a restart starts from).
    pub(super) fn nacos_switch(&mut self, op: &str, servers: &[String], switches: Switches) {
        for s in servers {
            match self.reachable(s) {
                Ok(addr) => {
                    addr.do_send(SetSwitches(switches));
                    if let Some(NacosProc::Server(i)) = self.nacos.get(s).copied() {
                        let config = &mut self.scenario.nacos.servers[i].config;
                        if let Some(v) = switches.client_beat_interval {
                            config.client_beat_interval = v;
                        }
                        if let Some(v) = switches.light_beat_enabled {
                            config.light_beat_enabled = v;
                        }
                    }
                }
                Err(why) => self.missed(op, s, why),
            }
        }
    }
}
