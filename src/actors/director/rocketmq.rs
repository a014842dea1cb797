//! The director's RocketMQ part: starting a name server (its route table, scanner and
//! unregistration batcher), a broker, and a route client with the producers that share its
//! process. Each is built fresh on every (re)start.

use super::{Director, Running};
use crate::actors::batcher::Batcher;
use crate::actors::broker::Broker;
use crate::actors::inbox::Local;
use crate::actors::namesrv::RouteTable;
use crate::actors::producer::Producers;
use crate::actors::remoting::{Remoting, Servers};
use crate::actors::route_client::RouteClient;
use crate::actors::scanner::Scanner;
use crate::rocketmq::broker::BrokerCore;
use crate::rocketmq::client::RouteClientCore;
use crate::rocketmq::route_table::RouteInfoManager;
use crate::sim::clock::SimDuration;
use crate::sim::ids::NodeId;
use crate::sim::scenario::{BrokerSpec, ClientSpec, NamesrvSpec};
use std::cell::RefCell;
use std::rc::Rc;

impl Director {
    pub(super) fn start_namesrv(&mut self, spec: &NamesrvSpec) {
        let mut core = RouteInfoManager::new(spec.table.clone());
        if let Some(m) = self.env.mutation {
            core.plant(m);
        }
        let table = Rc::new(RefCell::new(core));
        self.env.obs.world.set_namesrv(&spec.name, Some(table.clone()));
        let (batcher, route_table, scanner) = (Local::new(), Local::new(), Local::new());
        // The process must be up before any of its actors sets a timer.
        let env = self.start_process(&spec.name, Some(route_table.endpoint()));
        self.idle_close(env.node, spec.idle_close);
        scanner.start(Scanner::new(
            env.part("scanner"),
            table.clone(),
            batcher.clone(),
            spec.scan_interval,
            spec.scan_initial_delay,
            scanner.clone(),
        ));
        route_table.start(RouteTable::new(env.clone(), table, batcher.clone(), scanner));
        let part = env.part("batcher");
        batcher.start(Batcher::new(
            part,
            spec.queue_capacity,
            spec.unregister_delay,
            route_table.clone(),
            batcher.clone(),
        ));
        self.running.insert(spec.name.clone(), Running::Namesrv(route_table));
    }

    /// Netty's `IdleStateHandler` on this process's ends (or none).
    fn idle_close(&self, node: NodeId, idle: Option<SimDuration>) {
        if let Some(idle) = idle {
            self.env.net.set_idle_timeout(node, idle);
        }
    }

    /// The shared list of these name servers, made at its first use.
    fn servers(&mut self, names: &[String]) -> Servers {
        let nodes = &self.nodes;
        let list = self.server_lists.entry(names.to_vec());
        list.or_insert_with(|| Servers::new(names.iter().map(|n| (n.clone(), nodes[n])))).clone()
    }

    /// `NettyRemotingClient`'s `namesrvIndex` starts at a random value below 999.
    fn namesrv_index(&self) -> usize {
        self.env.net.with_rng(|r| r.index(999))
    }

    pub(super) fn start_broker(&mut self, spec: &BrokerSpec) {
        let disk = self.disks.entry(spec.name.clone()).or_default().clone();
        let core = BrokerCore::new(spec.config.clone(), spec.topics.clone(), self.env.now(), disk.get());
        disk.set(Some(core.data_version()));
        let namesrvs = self.servers(&spec.namesrvs);
        let start_index = self.namesrv_index();
        let me = Local::new();
        let env = self.start_process(&spec.name, Some(me.endpoint()));
        self.idle_close(env.node, spec.idle_close);
        me.start(Broker::new(env, core, namesrvs, start_index, disk, me.clone()));
        self.running.insert(spec.name.clone(), Running::Broker(me));
    }

    pub(super) fn start_client(&mut self, spec: &ClientSpec) {
        let start_index = self.namesrv_index();
        let mut core = RouteClientCore::new(spec.namesrvs.clone());
        if let Some(m) = self.env.mutation {
            core.plant(m);
        }
        let core = Rc::new(RefCell::new(core));
        self.env.obs.world.set_client(&spec.name, Some(core.clone()));
        let namesrvs = self.servers(&spec.namesrvs);
        let me = Local::new();
        let env = self.start_process(&spec.name, Some(me.endpoint()));
        self.idle_close(env.node, spec.idle_close);
        let topics = spec.topics.clone();
        let remoting = Remoting::new(env.clone(), namesrvs, start_index, me.clone());
        let mut actor =
            RouteClient::new(env.clone(), core.clone(), remoting, topics, spec.poll_interval, spec.timeout, me.clone());
        // The client's producers share its route cache and its node: the brokers' traffic is
        // theirs, the name servers' the route client's.
        let specs: Vec<_> = self.scenario.producers.iter().filter(|p| p.client == spec.name).cloned().collect();
        let mut producers = None;
        if !specs.is_empty() {
            let brokers: Vec<(String, NodeId)> =
                self.scenario.brokers.iter().map(|b| (b.config.addr.clone(), self.nodes[&b.name])).collect();
            let nodes: Vec<NodeId> = brokers.iter().map(|(_, n)| *n).collect();
            core.borrow_mut().keep_broker_addrs();
            let (net, node) = (env.net.clone(), env.node);
            let addr = Local::new();
            addr.start(Producers::new(env, core, brokers, specs, addr.clone()));
            net.share_endpoint(node, nodes, addr.endpoint());
            actor = actor.with_producers();
            producers = Some(addr);
        }
        me.start(actor);
        self.running.insert(spec.name.clone(), Running::Client(me, producers));
    }
}
