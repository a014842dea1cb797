//! The director actor: starts the scenario's processes and applies its timeline.
//!
//! It plays the part of the operator and of the world around the cluster: it starts each
//! process at its start time, and at each fault's time kills, hangs, resumes, partitions or
//! restarts, or runs an `mqadmin` command. Processes are built fresh on every (re)start — a
//! restarted name server has empty tables until brokers register again (#9411).

use crate::actors::broker::{Broker, ChangeTopics, RegisterWithVersion, SetBrokerId, SetPermission, Shutdown};
use crate::actors::env::{Env, Stop};
use crate::actors::inbox::{Endpoint, Local};
use crate::actors::namesrv::{Admin, RouteTable};
use crate::actors::network::{Net, Stop as ProcStop};
use crate::actors::producer::Producers;
use crate::actors::remoting::Servers;
use crate::actors::route_client::RouteClient;
use crate::rocketmq::types::DataVersion;
use crate::sim::clock::SimTime;
use crate::sim::ids::{NodeId, ProcState};
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use crate::sim::notes::{FaultNote, What};
use crate::sim::observe::Obs;
use crate::sim::scenario::{Action, BrokerSpec, Scenario, TimedEvent};
use actix::prelude::*;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

mod nacos;
mod rocketmq;

/// What is running for each process, to stop it or send it operator commands.
enum Running {
    Namesrv(Local<RouteTable>),
    Broker(Local<Broker>),
    Client(Local<RouteClient>, Option<Local<Producers>>),
    NacosServer(Local<crate::actors::nacos_server::NacosServer>, Local<crate::actors::nacos_health::HealthChecker>),
    NacosApp(Local<crate::actors::nacos_app::NacosApp>),
    GrpcApp(Local<crate::actors::nacos_grpc_client::GrpcApp>),
    NacosSubscriber(Local<crate::actors::nacos_subscriber::NacosSubscriber>),
}

/// A RocketMQ process's spec: its kind and its position in the scenario's list.
#[derive(Clone, Copy)]
enum RmqProc {
    Namesrv(usize),
    Broker(usize),
    Client(usize),
}

fn rmq_index(s: &Scenario) -> BTreeMap<String, RmqProc> {
    let namesrvs = s.namesrvs.iter().enumerate().map(|(i, n)| (n.name.clone(), RmqProc::Namesrv(i)));
    let brokers = s.brokers.iter().enumerate().map(|(i, b)| (b.name.clone(), RmqProc::Broker(i)));
    let clients = s.clients.iter().enumerate().map(|(i, c)| (c.name.clone(), RmqProc::Client(i)));
    namesrvs.chain(brokers).chain(clients).collect()
}

pub struct Director {
    env: Env,
    scenario: Scenario,
    nodes: BTreeMap<String, NodeId>,
    running: BTreeMap<String, Running>,
    /// When each hung process was stopped (SIGSTOP), for the resume.
    hung_since: BTreeMap<String, SimTime>,
    /// Where each process's spec is (scenarios may hold thousands: a search by name at each
    /// start made starting them quadratic).
    rmq: BTreeMap<String, RmqProc>,
    nacos: BTreeMap<String, nacos::NacosProc>,
    /// Each broker's `topics.json` DataVersion, which survives its restarts.
    disks: BTreeMap<String, Rc<Cell<Option<DataVersion>>>>,
    /// Each naming server's console metadata as it stopped: the CP protocol wrote it to disk.
    console: BTreeMap<String, nacos::Console>,
    /// One shared [`Servers`] per distinct name-server list (see there).
    server_lists: BTreeMap<Vec<String>, Servers>,
    /// Its own address: where the timeline's timers go.
    me: Local<Director>,
}

impl Director {
    /// Registers every process with the network (ids in scenario order) and the director's own
    /// timer-only process. `me` is the address the director is started with.
    pub fn new(net: Net, obs: Obs, mut scenario: Scenario, mutation: Option<Mutation>, me: Local<Director>) -> Self {
        scenario.nacos.share_strings();
        let node = net.add_node("director");
        let epoch = net.start_process(node, None);
        let nacos: Vec<String> = scenario.nacos.starts().into_iter().map(|(n, _)| n).collect();
        let names = scenario
            .namesrvs
            .iter()
            .map(|n| &n.name)
            .chain(scenario.brokers.iter().map(|b| &b.name))
            .chain(scenario.clients.iter().map(|c| &c.name))
            .chain(nacos.iter());
        let nodes = names.map(|n| (n.clone(), net.add_node(n))).collect();
        let env = Env { net, obs: Rc::new(obs), node, epoch, label: Name::new("fault"), mutation };
        let nacos = nacos::index(&scenario);
        let rmq = rmq_index(&scenario);
        Director {
            env,
            scenario,
            nodes,
            running: BTreeMap::new(),
            hung_since: BTreeMap::new(),
            rmq,
            nacos,
            disks: BTreeMap::new(),
            console: BTreeMap::new(),
            server_lists: BTreeMap::new(),
            me,
        }
    }

    /// Starts the process `name` in the network and returns the environment of its actors.
    fn start_process(&self, name: &str, endpoint: Option<Rc<dyn Endpoint>>) -> Env {
        let node = self.nodes[name];
        let epoch = self.env.net.start_process(node, endpoint);
        Env { node, epoch, label: Name::new(name), ..self.env.clone() }
    }

    fn start(&mut self, name: &str) {
        let s = &self.scenario;
        match self.rmq.get(name).copied() {
            Some(RmqProc::Namesrv(i)) => self.start_namesrv(&s.namesrvs[i].clone()),
            Some(RmqProc::Broker(i)) => self.start_broker(&s.brokers[i].clone()),
            Some(RmqProc::Client(i)) => self.start_client(&s.clients[i].clone()),
            None => {
                self.start_nacos(name);
            }
        }
    }

    /// The process is gone: hide its state from observers, close its sockets, stop its actors.
    /// Hiding comes first so that whoever reads the close events the network traces already
    /// sees the process's memory gone (explain mode shows the emptied tables at the crash, not
    /// at whatever event happens next).
    fn stopped(&mut self, name: &str, how: ProcStop) {
        if matches!(self.running.get(name), Some(Running::NacosServer(..))) {
            self.keep_console(name);
        }
        let world = &self.env.obs.world;
        match self.running.get(name) {
            Some(Running::Namesrv(_)) => world.set_namesrv(name, None),
            Some(Running::Client(..)) => world.set_client(name, None),
            Some(Running::NacosServer(..)) => {
                world.set_nacos_server(name, None);
                world.set_nacos_members(name, None);
            }
            Some(Running::NacosSubscriber(_)) => world.set_nacos_subscriber(name, None),
            Some(Running::GrpcApp(_)) => world.set_grpc_client(name, None),
            Some(Running::Broker(_) | Running::NacosApp(_)) | None => {}
        }
        self.env.net.stop_process(self.nodes[name], how);
        self.hung_since.remove(name);
        match self.running.remove(name) {
            Some(Running::Namesrv(a)) => a.do_send(Stop),
            Some(Running::Broker(a)) => a.do_send(Stop),
            Some(Running::Client(a, producers)) => {
                a.do_send(Stop);
                if let Some(p) = producers {
                    p.do_send(Stop);
                }
            }
            Some(Running::NacosServer(a, _)) => a.do_send(Stop),
            Some(Running::NacosApp(a)) => a.do_send(Stop),
            Some(Running::GrpcApp(a)) => a.do_send(Stop),
            Some(Running::NacosSubscriber(a)) => a.do_send(Stop),
            None => {}
        }
    }

    fn broker(&self, name: &str) -> Option<&Local<Broker>> {
        match self.running.get(name) {
            Some(Running::Broker(a)) => Some(a),
            _ => None,
        }
    }

    fn admin(&self, namesrvs: &[String], cmd: impl Fn() -> Admin) {
        for ns in namesrvs {
            if let Some(Running::Namesrv(a)) = self.running.get(ns) {
                a.do_send(cmd());
            }
        }
    }

    fn apply(&mut self, event: &TimedEvent) {
        let description = crate::sim::scenario::describe(&event.action);
        let targets = event.action.targets();
        self.env.record(What::Fault(FaultNote::Applied { name: event.name.clone(), action: description, targets }));
        let net = self.env.net.clone();
        let node = |n: &String| self.nodes[n];
        match &event.action {
            Action::Crash(p) => self.stopped(p, ProcStop::Kill),
            Action::HostDown(p) => self.stopped(p, ProcStop::HostDown),
            Action::Hang(p) => {
                net.hang(node(p));
                self.hung_since.insert(p.clone(), self.env.now());
            }
            Action::Resume(p) => {
                net.resume(node(p));
                if let Some(since) = self.hung_since.remove(p) {
                    self.nacos_resumed(p, since);
                }
            }
            Action::Shutdown(p) => match self.broker(p) {
                // A broker's shutdown hook unregisters first; it exits when done.
                Some(b) => b.do_send(Shutdown),
                // So does a Nacos application's (it deregisters its instances).
                None if self.shutdown_nacos(p) => {}
                None => self.stopped(p, ProcStop::Exit),
            },
            Action::Restart(p) => {
                // A `shutdown` ends when its hook has deregistered or unregistered everything,
                // and in a cut network each of the hook's requests can wait out its timeouts:
                // the restart may come first. The old JVM is then gone before the new one runs
                // (`systemctl restart` kills what its stop left running), and the kernel closes
                // the sockets it held. The old hook cannot stop the new process either
                // (`Env::exit`).
                if net.state(node(p)) != ProcState::Down {
                    self.stopped(p, ProcStop::Kill);
                }
                self.start(p)
            }
            Action::Partition(groups) => {
                let groups: Vec<BTreeSet<NodeId>> = groups.iter().map(|g| g.iter().map(node).collect()).collect();
                net.with_rules(|r| r.partition(&event.name, groups));
            }
            Action::Block { from, to } => net.with_rules(|r| r.block(&event.name, node(from), node(to))),
            Action::Heal(target) => {
                net.with_rules(|r| r.heal(target.as_deref()));
            }
            Action::Loss { from, to, rate, both_ways } => {
                let (a, b) = (node(from), node(to));
                net.with_rules(|r| {
                    r.set_params(a, b, |p| p.loss = *rate);
                    if *both_ways {
                        r.set_params(b, a, |p| p.loss = *rate);
                    }
                });
            }
            Action::Latency { from, to, base, jitter, both_ways } => {
                let (a, b) = (node(from), node(to));
                net.with_rules(|r| {
                    r.set_params(a, b, |p| (p.latency, p.jitter) = (*base, *jitter));
                    if *both_ways {
                        r.set_params(b, a, |p| (p.latency, p.jitter) = (*base, *jitter));
                    }
                });
            }
            Action::WipeWritePerm { namesrvs, broker_name } => {
                self.admin(namesrvs, || Admin::WipeWritePerm(broker_name.clone()))
            }
            Action::AddWritePerm { namesrvs, broker_name } => {
                self.admin(namesrvs, || Admin::AddWritePerm(broker_name.clone()))
            }
            Action::DeleteTopic { namesrvs, topic, cluster } => {
                self.admin(namesrvs, || Admin::DeleteTopic { topic: topic.clone(), cluster: cluster.clone() })
            }
            Action::RegisterTopic { namesrvs, topic, queues } => {
                self.admin(namesrvs, || Admin::RegisterTopic { topic: topic.clone(), queues: queues.clone() })
            }
            Action::UnregisterBroker { namesrvs, request } => {
                self.admin(namesrvs, || Admin::Unregister(request.clone()))
            }
            // One-shot: not remembered, a restarted broker registers with its own version.
            Action::RegisterBroker { broker, version } => {
                if let Some(b) = self.broker(broker) {
                    b.do_send(RegisterWithVersion(*version));
                }
            }
            Action::Topic { broker, change } => {
                self.remember(broker, |spec| spec.apply(&event.action));
                if let Some(b) = self.broker(broker) {
                    b.do_send(ChangeTopics(change.clone()));
                }
            }
            Action::SetBrokerId { broker, id } => {
                self.remember(broker, |spec| spec.apply(&event.action));
                if let Some(b) = self.broker(broker) {
                    b.do_send(SetBrokerId(*id));
                }
            }
            Action::BrokerPermission { broker, perm } => {
                self.remember(broker, |spec| spec.apply(&event.action));
                if let Some(b) = self.broker(broker) {
                    b.do_send(SetPermission(*perm));
                }
            }
            Action::UpdateMetadata { instance, servers, metadata } => {
                self.update_metadata(&event.name, instance, servers, metadata)
            }
            Action::Deregister { instance, app } => self.deregister_instance(app, instance),
            Action::NacosSwitch { servers, switches } => self.nacos_switch(&event.name, servers, *switches),
        }
    }

    /// Brokers persist topics and config: a restart comes back with the changes.
    fn remember(&mut self, broker: &str, edit: impl FnOnce(&mut BrokerSpec)) {
        if let Some(spec) = self.scenario.brokers.iter_mut().find(|b| b.name == broker) {
            edit(spec);
        }
    }
}

impl Actor for Director {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        let starts: Vec<(String, SimTime)> = self
            .scenario
            .namesrvs
            .iter()
            .map(|n| (n.name.clone(), n.start))
            .chain(self.scenario.brokers.iter().map(|b| (b.name.clone(), b.start)))
            .chain(self.scenario.clients.iter().map(|c| (c.name.clone(), c.start)))
            .chain(self.scenario.nacos.starts())
            .collect();
        for (name, at) in starts {
            self.env.after(at.since(SimTime::ZERO), self.me.clone(), StartProcess(name));
        }
        for i in 0..self.scenario.timeline.len() {
            let at = self.scenario.timeline[i].at;
            self.env.after(at.since(SimTime::ZERO), self.me.clone(), ApplyEvent(i));
        }
    }
}

#[derive(Message)]
#[rtype(result = "()")]
struct StartProcess(String);

impl Handler<StartProcess> for Director {
    type Result = ();
    fn handle(&mut self, StartProcess(name): StartProcess, _: &mut Context<Self>) {
        self.start(&name);
    }
}

#[derive(Message)]
#[rtype(result = "()")]
struct ApplyEvent(usize);

impl Handler<ApplyEvent> for Director {
    type Result = ();
    fn handle(&mut self, ApplyEvent(i): ApplyEvent, _: &mut Context<Self>) {
        let event = self.scenario.timeline[i].clone();
        self.apply(&event);
    }
}
