//! proptest strategies for Nacos scenarios — the same [`Scenario`] type the TOML loader produces.
//!
//! A shape (1–3 independent naming servers, 1–4 services, 1–4 applications of 1–3 instances,
//! sometimes a subscriber) and a list of fault *episodes*, repaired into a valid timeline the way
//! [`super::gen`] repairs RocketMQ's, so every shrink is still a valid scenario.
//!
//! Choices that keep the invariants meaningful:
//!
//! * **One server per application.** There is no Distro between the servers, and a 1.x client
//!   that lists several starts every request at a random one, so "stays healthy on its server"
//!   would be false by design (scenario 08). Servers are independent; each app picks one.
//! * **Numeric `preserved.*` metadata only**, as multiples of the interval that
//!   `checkInstanceIsLegal` accepts — including a timeout *equal* to the interval, the tight case
//!   `nacos_recovery` has to leave out. A non-numeric timeout is 0 ms to the server (scenario 05):
//!   the invariants would hold (they use the server's reading), but the instance would do
//!   nothing but flap.
//! * **Faults on an app's own link or process** (see [`faults`]): a cut between two servers
//!   would change nothing, as they do not talk to each other.

pub mod cluster;
pub mod faults;

use crate::nacos::naming::NamingConfig;
use crate::nacos::types::{
    client_beat_interval, Instance, Metadata, ServiceKey, DEFAULT_CLIENT_EXPIRED_TIME, DEFAULT_HEART_BEAT_INTERVAL,
    DEFAULT_NAMESPACE, DEFAULT_PUSH_TASK_DELAY, DEFAULT_READ_TIMEOUT, HEART_BEAT_INTERVAL_KEY, HEART_BEAT_TIMEOUT_KEY,
    IP_DELETE_TIMEOUT_KEY,
};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::invariants::Invariant;
use crate::sim::name::Name;
use crate::sim::scenario::{
    NacosAppSpec, NacosInstanceSpec, NacosServerSpec, NacosSpecs, NetworkSpec, Scenario, SubscriberSpec,
};
use faults::{episode, timeline};
pub use faults::{Episode, LinkFault};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

/// (group, name): two services share a name in different groups, which Nacos keeps apart.
const SERVICES: [(&str, &str); 4] =
    [("DEFAULT_GROUP", "orders"), ("DEFAULT_GROUP", "pay"), ("G2", "orders"), ("DEFAULT_GROUP", "stock")];

/// How long a generated run goes on after its last fault: the slowest recovery (a 50 s read
/// timeout, 2 s of slow link, a 5 s cycle) with 40 s to spare for watching the instances stay.
pub const NACOS_SETTLE: SimDuration = SimDuration::from_secs(100);

/// `preserved.*` overrides: an interval in ms, and the two timeouts as multiples of it.
#[derive(Clone, Debug)]
struct Timing {
    interval: Option<u64>,
    timeout: Option<u64>,
    delete: Option<u64>,
    /// A plain metadata entry too (re-registration must carry it back, #6042).
    tag: bool,
}

#[derive(Clone, Debug)]
struct Inst {
    service: usize,
    timing: Timing,
    start_ms: u64,
}

#[derive(Clone, Debug)]
struct App {
    server: usize,
    /// A Dubbo-style provider: one `ip:port` for all its instances (one per service), so one
    /// `IpPortBasedClient` publishes them all and shares one `lastUpdatedTime`.
    provider: bool,
    read_timeout_ms: u64,
    /// The `BeatReactor`'s threads: one (two cores, the default) or two.
    beat_threads: usize,
    instances: Vec<Inst>,
}

#[derive(Clone, Debug)]
struct Server {
    light_beats: bool,
    expire_instance: bool,
    client_expired_secs: u64,
}

#[derive(Clone, Debug)]
struct Sub {
    server: usize,
    services: Vec<usize>,
}

fn timing() -> impl Strategy<Value = Timing> {
    let interval = proptest::option::weighted(0.5, proptest::sample::select(vec![1000u64, 2000, 3000, 5000]));
    let timeout = proptest::option::weighted(0.4, proptest::sample::select(vec![1u64, 2, 3, 5]));
    let delete = proptest::option::weighted(0.4, proptest::sample::select(vec![1u64, 2, 4, 8]));
    (interval, timeout, delete, proptest::bool::weighted(0.2)).prop_map(|(interval, timeout, delete, tag)| Timing {
        interval,
        timeout,
        delete,
        tag,
    })
}

fn app() -> impl Strategy<Value = App> {
    let start = prop_oneof![3 => Just(0u64), 1 => 0u64..10_000];
    let inst =
        (any::<usize>(), timing(), start).prop_map(|(service, timing, start_ms)| Inst { service, timing, start_ms });
    let read_timeout = prop_oneof![2 => Just(DEFAULT_READ_TIMEOUT), 1 => Just(3_000u64), 1 => Just(10_000u64)];
    let threads = prop_oneof![3 => Just(1usize), 1 => Just(2usize)];
    (any::<usize>(), proptest::bool::weighted(0.3), read_timeout, threads, proptest::collection::vec(inst, 1..=3))
        .prop_map(|(server, provider, read_timeout_ms, beat_threads, instances)| App {
            server,
            provider,
            read_timeout_ms,
            beat_threads,
            instances,
        })
}

fn server() -> impl Strategy<Value = Server> {
    let expired = prop_oneof![3 => Just(DEFAULT_CLIENT_EXPIRED_TIME / 1000), 1 => Just(45u64)];
    (proptest::bool::weighted(0.75), proptest::bool::weighted(0.8), expired).prop_map(
        |(light_beats, expire_instance, client_expired_secs)| Server {
            light_beats,
            expire_instance,
            client_expired_secs,
        },
    )
}

/// A Nacos scenario with every Nacos invariant enabled.
pub fn scenario() -> impl Strategy<Value = Scenario> {
    let servers = proptest::collection::vec(server(), 1..=3);
    let apps = proptest::collection::vec(app(), 1..=4);
    let subs = proptest::collection::vec(
        (any::<usize>(), proptest::collection::vec(any::<usize>(), 1..=2))
            .prop_map(|(server, services)| Sub { server, services }),
        0..=1,
    );
    let net = (0u64..=2, prop_oneof![3 => Just(0u64), 1 => Just(3)]);
    let episodes = proptest::collection::vec(episode(), 0..=6);
    // Seeds stay below 2^63: TOML integers are signed 64-bit, and the shrunk case must load.
    (0..i64::MAX as u64, 1usize..=SERVICES.len(), servers, apps, subs, net, episodes).prop_map(
        |(seed, services, servers, apps, subs, net, episodes)| {
            build(seed, services, &servers, &apps, &subs, net, &episodes)
        },
    )
}

fn metadata(t: &Timing) -> Metadata {
    let interval = t.interval.unwrap_or(DEFAULT_HEART_BEAT_INTERVAL);
    let mut m = Metadata::new();
    let mut put = |k: &str, v: u64| m.insert(k.to_string(), v.to_string());
    if let Some(i) = t.interval {
        put(HEART_BEAT_INTERVAL_KEY, i);
    }
    if let Some(f) = t.timeout {
        put(HEART_BEAT_TIMEOUT_KEY, f * interval);
    }
    if let Some(f) = t.delete {
        put(IP_DELETE_TIMEOUT_KEY, f * interval);
    }
    if t.tag {
        m.insert("version".into(), "v1".into());
    }
    m
}

fn service(i: usize) -> ServiceKey {
    let (group, name) = SERVICES[i];
    ServiceKey::new(DEFAULT_NAMESPACE, group, name)
}

fn build(
    seed: u64,
    services: usize,
    servers: &[Server],
    apps: &[App],
    subs: &[Sub],
    (latency, jitter): (u64, u64),
    episodes: &[Episode],
) -> Scenario {
    let servers: Vec<NacosServerSpec> = servers
        .iter()
        .enumerate()
        .map(|(k, s)| NacosServerSpec {
            name: format!("nacos{}", k + 1),
            start: SimTime::ZERO,
            config: NamingConfig {
                light_beat_enabled: s.light_beats,
                expire_instance: s.expire_instance,
                client_expired_time: s.client_expired_secs * 1000,
                ..NamingConfig::default()
            },
            push_delay: SimDuration(DEFAULT_PUSH_TASK_DELAY),
            cluster: None,
        })
        .collect();
    let server_name = |i: usize| servers[i % servers.len()].name.clone();
    let apps: Vec<NacosAppSpec> =
        apps.iter().enumerate().map(|(k, a)| app_spec(k, a, services, &server_name)).collect();
    let known: BTreeSet<ServiceKey> = apps.iter().flat_map(|a| &a.instances).map(|i| i.service.clone()).collect();
    let subscribers: Vec<SubscriberSpec> = subs
        .iter()
        .filter_map(|s| {
            let mut wanted: Vec<ServiceKey> = Vec::new();
            for key in s.services.iter().map(|i| service(i % services)).filter(|k| known.contains(k)) {
                if !wanted.contains(&key) {
                    wanted.push(key);
                }
            }
            (!wanted.is_empty()).then(|| (server_name(s.server), wanted))
        })
        .enumerate()
        .map(|(n, (server, services))| gateway(n, server, services))
        .collect();
    let clients = client_processes(&apps, &subscribers);
    let server_names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    let network = NetworkSpec { latency: SimDuration(latency), jitter: SimDuration(jitter), ..NetworkSpec::default() };
    let timeline = timeline(episodes, &clients, &server_names, &network);
    let last = timeline.last().map_or(SimTime::ZERO, |e| e.at).max(SimTime(30_000));
    Scenario {
        name: "generated".into(),
        description: None,
        seed,
        drawn: Vec::new(),
        duration: last.since(SimTime::ZERO) + NACOS_SETTLE,
        network,
        namesrvs: Vec::new(),
        brokers: Vec::new(),
        clients: Vec::new(),
        producers: Vec::new(),
        timeline,
        expects: Vec::new(),
        invariants: Invariant::NACOS.to_vec(),
        nacos: NacosSpecs { servers, apps, subscribers },
    }
}

/// Gateway `n` (`gw<n+1>` on `10.255.0.<n+1>`), subscribed from the start through `server`.
pub(super) fn gateway(n: usize, server: String, services: Vec<ServiceKey>) -> SubscriberSpec {
    SubscriberSpec {
        name: format!("gw{}", n + 1),
        servers: vec![server],
        services,
        ip: format!("10.255.0.{}", n + 1),
        udp_port: 54951,
        read_timeout: SimDuration(DEFAULT_READ_TIMEOUT),
        start: SimTime::ZERO,
    }
}

/// Every client-side process with the first server it talks to and when it starts: what the
/// fault timeline aims its client faults at.
pub(super) fn client_processes(
    apps: &[NacosAppSpec],
    subscribers: &[SubscriberSpec],
) -> Vec<(String, String, SimTime)> {
    apps.iter()
        .map(|a| (a.name.clone(), a.servers[0].clone(), a.start))
        .chain(subscribers.iter().map(|s| (s.name.clone(), s.servers[0].clone(), s.start)))
        .collect()
}

/// Instance `j` of application `k` (named `a<k+1>-<j+1>`): healthy, enabled, weight 1, in the
/// default cluster, as a client registers it. Both generators build their instances here.
pub(super) fn instance_spec(
    (k, j): (usize, usize),
    service: ServiceKey,
    (ip, port): (&Name, u16),
    metadata: Metadata,
    start: SimTime,
    period: SimDuration,
) -> NacosInstanceSpec {
    let instance = Instance {
        ip: *ip,
        port,
        weight: 1.0,
        cluster: Arc::from(crate::nacos::types::DEFAULT_CLUSTER),
        metadata: Arc::new(metadata),
        healthy: true,
        enabled: true,
    };
    NacosInstanceSpec { name: format!("a{}-{}", k + 1, j + 1), service, instance, start, period }
}

/// Application `k`: its instances on `10.1.<k+1>.1`, each on its own port unless it is a
/// provider (one port, one instance per service: Nacos could not tell two apart).
fn app_spec(k: usize, a: &App, services: usize, server_name: &dyn Fn(usize) -> String) -> NacosAppSpec {
    let ip = Name::from(format!("10.1.{}.1", k + 1));
    let mut instances: Vec<NacosInstanceSpec> = Vec::new();
    for (j, inst) in a.instances.iter().enumerate() {
        let key = service(inst.service % services);
        if a.provider && instances.iter().any(|i| i.service == key) {
            continue;
        }
        let metadata = metadata(&inst.timing);
        let period = client_beat_interval(&metadata).expect("generated intervals are small numbers");
        let port = if a.provider { 8080 } else { 8080 + j as u16 };
        let start = SimTime(inst.start_ms);
        instances.push(instance_spec((k, j), key, (&ip, port), metadata, start, SimDuration(period as u64)));
    }
    NacosAppSpec {
        name: format!("a{}", k + 1),
        transport: crate::sim::scenario::Transport::Http,
        servers: vec![server_name(a.server)],
        read_timeout: SimDuration(a.read_timeout_ms),
        beat_threads: a.beat_threads,
        start: instances.iter().map(|i| i.start).min().unwrap_or(SimTime::ZERO),
        instances,
    }
}
