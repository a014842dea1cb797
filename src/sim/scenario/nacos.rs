//! The Nacos part of a scenario: naming servers, application processes with their instances, and
//! subscribers — validated from `[[nacos_server]]`, `[[instance]]` and `[[subscriber]]`.
//!
//! An `[[instance]]` is one ephemeral instance. Its process is the instance itself, or the `app`
//! it names: instances of one app share one `NamingService` — one `BeatReactor` (so one light-beat
//! flag), one server list, one namespace, one read timeout — and faults target the app.

use super::ctx::{Ctx, Kind, Least};
use super::raw::S;
use super::raw_nacos::{RawInstance, RawNacosServer, RawSubscriber};
use crate::nacos::naming::NamingConfig;
use crate::nacos::types::{Instance, ServiceKey, DEFAULT_PUSH_TASK_DELAY};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::world::NacosInstanceFacts;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Every Nacos process of a scenario.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NacosSpecs {
    pub servers: Vec<NacosServerSpec>,
    pub apps: Vec<NacosAppSpec>,
    pub subscribers: Vec<SubscriberSpec>,
}

/// A naming server process.
#[derive(Clone, Debug, PartialEq)]
pub struct NacosServerSpec {
    pub name: String,
    pub start: SimTime,
    pub config: NamingConfig,
    /// `nacos.naming.push.pushTaskDelay`, default 500 ms.
    pub push_delay: SimDuration,
    /// The Nacos cluster it is a member of (`cluster.conf` lists the servers with this name);
    /// `None`: a standalone server, as before clusters existed in the sim.
    pub cluster: Option<String>,
}

impl NacosSpecs {
    /// The members of `server`'s cluster (itself included), in name order; empty if standalone.
    pub fn cluster_of(&self, server: &str) -> Vec<String> {
        let Some(c) = self.servers.iter().find(|s| s.name == server).and_then(|s| s.cluster.as_ref()) else {
            return Vec::new();
        };
        let mut out: Vec<String> =
            self.servers.iter().filter(|s| s.cluster.as_ref() == Some(c)).map(|s| s.name.clone()).collect();
        out.sort();
        out
    }
}

/// How an application's `NamingService` reaches the servers: `transport` on its `[[instance]]`s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// A 1.x client (or a 2.0–2.1 `NamingHttpClientProxy`): HTTP registration and
    /// `BeatReactor` beats, checked by the server's beat checkers.
    #[default]
    Http,
    /// A 2.x client: one gRPC connection (`RpcClient`), instances registered over it, liveness
    /// by the connection (`nacos::grpc`).
    Grpc,
}

/// An application process: one `NamingService` and the instances it registers.
#[derive(Clone, Debug, PartialEq)]
pub struct NacosAppSpec {
    pub name: String,
    pub transport: Transport,
    pub servers: Vec<String>,
    /// `com.alibaba.nacos.client.naming.rtimeout`, default 50 s.
    pub read_timeout: SimDuration,
    /// The `BeatReactor`'s threads: `namingClientBeatThreadCount`, else
    /// `UtilAndComs.DEFAULT_CLIENT_BEAT_THREAD_COUNT` = `cores > 1 ? cores / 2 : 1`.
    pub beat_threads: usize,
    /// The earliest start of its instances: the process starts then.
    pub start: SimTime,
    pub instances: Vec<NacosInstanceSpec>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NacosInstanceSpec {
    pub name: String,
    pub service: ServiceKey,
    pub instance: Instance,
    /// When it registers (at or after its app's start).
    pub start: SimTime,
    /// Its beat period as the client reads `preserved.heart.beat.interval`.
    pub period: SimDuration,
}

/// A 1.x subscriber process.
#[derive(Clone, Debug, PartialEq)]
pub struct SubscriberSpec {
    pub name: String,
    pub servers: Vec<String>,
    pub services: Vec<ServiceKey>,
    pub ip: String,
    pub udp_port: u16,
    pub read_timeout: SimDuration,
    pub start: SimTime,
}

impl NacosSpecs {
    /// Every process with its start time, servers first.
    pub fn starts(&self) -> Vec<(String, SimTime)> {
        let servers = self.servers.iter().map(|s| (s.name.clone(), s.start));
        let apps = self.apps.iter().map(|a| (a.name.clone(), a.start));
        servers.chain(apps).chain(self.subscribers.iter().map(|s| (s.name.clone(), s.start))).collect()
    }

    /// Makes equal cluster names share one allocation: every instance of a cluster then carries
    /// the same `Arc`, and comparisons of equal names end on a pointer check instead of a byte
    /// compare. Only speed changes: equality and order are still by content. (Service keys need
    /// nothing of the kind: they are interned when made.)
    pub fn share_strings(&mut self) {
        let mut pool: BTreeSet<Arc<str>> = BTreeSet::new();
        let mut share = |s: &mut Arc<str>| match pool.get(&**s) {
            Some(shared) => *s = shared.clone(),
            None => {
                pool.insert(s.clone());
            }
        };
        for i in self.apps.iter_mut().flat_map(|a| a.instances.iter_mut()) {
            share(&mut i.instance.cluster);
        }
    }

    /// What observers need to find each instance on a server.
    pub fn instance_facts(&self) -> BTreeMap<String, NacosInstanceFacts> {
        let instances = self.apps.iter().flat_map(|a| &a.instances);
        let fact = |i: &NacosInstanceSpec| NacosInstanceFacts {
            service: i.service.clone(),
            ip: i.instance.ip,
            port: i.instance.port,
        };
        instances.map(|i| (i.name.clone(), fact(i))).collect()
    }
}

/// What expectations may refer to.
#[derive(Default)]
pub struct NacosKnown {
    /// Instance name → its service.
    pub instances: BTreeMap<String, ServiceKey>,
    /// Instance name → its `ip:port`.
    pub addrs: BTreeMap<String, String>,
    pub services: BTreeSet<ServiceKey>,
    /// Subscriber name → the services it subscribes to.
    pub subscribers: BTreeMap<String, Vec<ServiceKey>>,
    /// Instances that were wrong (and reported): naming one in an expectation adds no error.
    pub broken: BTreeSet<String>,
    /// Server name → its cluster, for servers in one.
    pub clusters: BTreeMap<String, String>,
    /// Each 2.x (gRPC) client → the servers of its list.
    pub grpc_clients: BTreeMap<String, Vec<String>>,
    /// The instances of 2.x (gRPC) clients: no `ip:port` tag decides where they live.
    pub grpc_instances: BTreeSet<String>,
}

impl NacosKnown {
    pub fn from_specs(specs: &NacosSpecs, broken: BTreeSet<String>) -> Self {
        let instances: BTreeMap<_, _> =
            specs.apps.iter().flat_map(|a| &a.instances).map(|i| (i.name.clone(), i.service.clone())).collect();
        let services = instances.values().cloned().collect();
        let subscribers = specs.subscribers.iter().map(|s| (s.name.clone(), s.services.clone())).collect();
        let addrs = specs
            .apps
            .iter()
            .flat_map(|a| &a.instances)
            .map(|i| (i.name.clone(), format!("{}:{}", i.instance.ip, i.instance.port)))
            .collect();
        let clusters = specs.servers.iter().filter_map(|s| Some((s.name.clone(), s.cluster.clone()?))).collect();
        let grpc_clients = specs
            .apps
            .iter()
            .filter(|a| a.transport == Transport::Grpc)
            .map(|a| (a.name.clone(), a.servers.clone()))
            .collect();
        let grpc_instances = specs
            .apps
            .iter()
            .filter(|a| a.transport == Transport::Grpc)
            .flat_map(|a| a.instances.iter().map(|i| i.name.clone()))
            .collect();
        NacosKnown { instances, addrs, services, subscribers, broken, clusters, grpc_clients, grpc_instances }
    }
}

/// Defines the process names: servers, apps, subscribers. An instance's `app` defaults to its
/// own name, so an instance without `app` is a process of its own.
pub fn define_names(
    ctx: &mut Ctx,
    servers: &[S<RawNacosServer>],
    instances: &[S<RawInstance>],
    subs: &[S<RawSubscriber>],
) {
    for s in servers {
        ctx.define(&s.get_ref().name, Kind::NacosServer);
    }
    for i in instances {
        let i = i.get_ref();
        let process = i.app.as_ref().unwrap_or(&i.name);
        if ctx.procs.get(process.get_ref()) != Some(&Kind::NacosApp) {
            ctx.define(process, Kind::NacosApp);
        }
    }
    for s in subs {
        ctx.define(&s.get_ref().name, Kind::Subscriber);
    }
}

/// The Nacos processes, and the names of the instances that were wrong (already reported).
pub fn build(
    ctx: &mut Ctx,
    servers: Vec<S<RawNacosServer>>,
    instances: Vec<S<RawInstance>>,
    subs: Vec<S<RawSubscriber>>,
) -> (NacosSpecs, BTreeSet<String>) {
    let servers = servers.into_iter().map(|s| server(ctx, s.into_inner())).collect();
    let all = ctx.names(Kind::NacosServer).to_vec();
    let (apps, broken) = super::nacos_instance::apps(ctx, instances, &all);
    let known: BTreeSet<ServiceKey> =
        apps.iter().flat_map(|a: &NacosAppSpec| &a.instances).map(|i| i.service.clone()).collect();
    // Every client id (`ip:port`) taken so far; subscribers add theirs as they come.
    let mut taken: BTreeSet<(String, u16)> =
        apps.iter().flat_map(|a| &a.instances).map(|i| (i.instance.ip.to_string(), i.instance.port)).collect();
    let subscribers = subs
        .into_iter()
        .enumerate()
        .map(|(n, s)| super::nacos_subscriber::subscriber(ctx, s.into_inner(), n, (&known, &mut taken, &all)))
        .collect();
    (NacosSpecs { servers, apps, subscribers }, broken)
}

/// A timeout or period: 1 ms to 30 days.
pub(super) fn positive(ctx: &mut Ctx, v: &Option<S<String>>, default: SimDuration, key: &str) -> SimDuration {
    ctx.duration_in(v, default, key, Least::OneMilli)
}

fn server(ctx: &mut Ctx, raw: RawNacosServer) -> NacosServerSpec {
    let d = NamingConfig::default();
    // Zero is allowed: the client keeps its own period when the answer's interval is not
    // positive (`BeatTask#run`: `if (interval > 0)`).
    let default_interval = SimDuration(d.client_beat_interval as u64);
    let interval = ctx.duration_in(&raw.client_beat_interval, default_interval, "client_beat_interval", Least::Zero);
    NacosServerSpec {
        name: raw.name.into_inner(),
        start: ctx.time_or_zero(&raw.start),
        config: NamingConfig {
            light_beat_enabled: raw.light_beat_enabled.unwrap_or(d.light_beat_enabled),
            client_beat_interval: interval.millis() as i64,
            expire_instance: raw.expire_instance.unwrap_or(d.expire_instance),
            client_expired_time: positive(
                ctx,
                &raw.client_expired_time,
                SimDuration(d.client_expired_time),
                "client_expired_time",
            )
            .millis(),
            push_cache_millis: positive(ctx, &raw.push_cache, SimDuration(d.push_cache_millis), "push_cache").millis(),
        },
        push_delay: ctx.duration_in(&raw.push_delay, SimDuration(DEFAULT_PUSH_TASK_DELAY), "push_delay", Least::Zero),
        // A cluster named by one server only is a cluster of one: `MemberInfoReportTask` finds no
        // other member and reports to nobody, which is what Nacos does too.
        cluster: raw.cluster.as_ref().and_then(|c| word(ctx, c, "cluster name")),
    }
}

/// A service, group or namespace name: non-empty, no spaces, no `@@`.
pub(super) fn word(ctx: &mut Ctx, v: &S<String>, what: &str) -> Option<String> {
    let s = v.get_ref();
    if s.is_empty() || s.contains(char::is_whitespace) || s.contains("@@") {
        let help = if s.contains("@@") { "give the group with the `group` key" } else { "no spaces, not empty" };
        return ctx.fail(v.span(), format!("invalid {what} {s:?}"), Some(help));
    }
    Some(s.clone())
}

pub(super) fn word_or(ctx: &mut Ctx, v: &Option<S<String>>, default: &str, what: &str) -> Option<String> {
    match v {
        Some(v) => word(ctx, v, what),
        None => Some(default.to_string()),
    }
}

/// The servers an instance or subscriber talks to: the listed ones, or all of them.
pub(super) fn server_list(
    ctx: &mut Ctx,
    list: &Option<Vec<S<String>>>,
    owner: &S<String>,
    all: &[String],
) -> Vec<String> {
    let servers = match list {
        Some(list) => list.iter().filter_map(|n| ctx.refer(n, &[Kind::NacosServer])).collect(),
        None => all.to_vec(),
    };
    if servers.is_empty() && list.as_ref().is_none_or(|l| l.is_empty()) {
        let help = "define a [[nacos_server]] or list some in `servers`";
        ctx.error(owner.span(), format!("{} has no Nacos server to talk to", owner.get_ref()), Some(help.into()));
    }
    servers
}
