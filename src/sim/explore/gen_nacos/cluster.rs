//! proptest strategies for Nacos *clusters*: 1–5 members of one Distro cluster, applications of
//! both kinds (1.x HTTP beats, 2.x gRPC), subscribers, and faults on members, clients and the
//! links between members — checked by `distro_agreement` (see [`crate::sim::invariants`]).
//!
//! Choices that keep the invariant meaningful:
//!
//! * **Default timings.** No `preserved.*` metadata: an instance whose timeout is its interval
//!   flaps for ever (`nacos_recovery`'s notes), and each flap is a change the members see a
//!   second apart — a disagreement by design, not a bug.
//! * **Every fault ends**, and a long quiet tail follows: the invariant's settling time and
//!   [`CLUSTER_WATCH`] past the last one, so the copies of a member that stays dead expire (3 min) and the tail still covers one more
//!   copy lifetime, which is what a bug in the copies' renewal needs to show.
//! * **Members listed in a random order** by each application: a 1.x client starts each request
//!   at a random one of them (`DistroFilter` routes it to the owner), a 2.x client connects to
//!   one and switches on failure.

use super::faults::{episode, timeline, Episode};
use super::{client_processes, gateway, instance_spec, service, SERVICES};
use crate::nacos::naming::NamingConfig;
use crate::nacos::types::{Metadata, DEFAULT_PUSH_TASK_DELAY, DEFAULT_READ_TIMEOUT};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::invariants::{distro_settle, Invariant};
use crate::sim::name::Name;
use crate::sim::scenario::{
    Action, NacosAppSpec, NacosInstanceSpec, NacosServerSpec, NacosSpecs, NetworkSpec, Scenario, SubscriberSpec,
    TimedEvent, Transport,
};
use proptest::prelude::*;

/// How long a generated cluster run watches the members agree, after `distro_agreement`'s
/// settling time: one more copy lifetime (3 min) and a cleaner period, so a copy that is not
/// renewed as it should be has the time to expire inside the watch.
pub const CLUSTER_WATCH: SimDuration = SimDuration::from_secs(185);

#[derive(Clone, Debug)]
struct App {
    grpc: bool,
    /// Which members it lists (a bit per member; none → all), and from which it starts.
    members: u8,
    first: usize,
    instances: Vec<(usize, u64)>,
}

/// A cut between two groups of members, healed `for_secs` later.
#[derive(Clone, Debug)]
struct MemberCut {
    side: u8,
    at: u64,
    for_secs: u64,
}

fn app() -> impl Strategy<Value = App> {
    let start = prop_oneof![3 => Just(0u64), 1 => 0u64..10_000];
    let inst = (any::<usize>(), start);
    (any::<bool>(), any::<u8>(), any::<usize>(), proptest::collection::vec(inst, 1..=3))
        .prop_map(|(grpc, members, first, instances)| App { grpc, members, first, instances })
}

fn member_cut() -> impl Strategy<Value = MemberCut> {
    (any::<u8>(), 5u64..240, 1u64..120).prop_map(|(side, at, for_secs)| MemberCut { side, at, for_secs })
}

/// A Nacos cluster scenario with `distro_agreement` enabled.
pub fn scenario() -> impl Strategy<Value = Scenario> {
    let subs = proptest::collection::vec(any::<usize>(), 0..=1);
    let net = prop_oneof![3 => Just(1u64), 1 => Just(0u64), 1 => Just(2u64)];
    (
        0..i64::MAX as u64,
        1usize..=5,
        1usize..=SERVICES.len(),
        proptest::collection::vec(app(), 1..=4),
        subs,
        net,
        proptest::collection::vec(episode(), 0..=4),
        proptest::collection::vec(member_cut(), 0..=2),
        proptest::collection::vec(0u64..5_000, 5),
    )
        .prop_map(|(seed, members, services, apps, subs, latency, episodes, cuts, starts)| {
            let shape = Shape { members, services, latency, starts };
            build(seed, &shape, &apps, &subs, &episodes, &cuts)
        })
}

/// The cluster's shape: how many members, services and ms of latency, and when each member
/// starts. Members start a few seconds apart, as a real cluster's do, so each runs its 5 s
/// verify and cleaner grids on its own phase.
struct Shape {
    members: usize,
    services: usize,
    latency: u64,
    starts: Vec<u64>,
}

fn build(seed: u64, shape: &Shape, apps: &[App], subs: &[usize], episodes: &[Episode], cuts: &[MemberCut]) -> Scenario {
    let Shape { members, services, latency, .. } = *shape;
    let names: Vec<String> = (1..=members).map(|k| format!("nacos{k}")).collect();
    let servers: Vec<NacosServerSpec> = names
        .iter()
        .enumerate()
        .map(|(k, name)| NacosServerSpec {
            name: name.clone(),
            start: SimTime(shape.starts[k]),
            config: NamingConfig::default(),
            push_delay: SimDuration(DEFAULT_PUSH_TASK_DELAY),
            cluster: Some("east".into()),
        })
        .collect();
    let apps: Vec<NacosAppSpec> = apps.iter().enumerate().map(|(k, a)| app_spec(k, a, services, &names)).collect();
    let subscribers: Vec<SubscriberSpec> = subs
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let services = apps.iter().flat_map(|a| &a.instances).map(|i| i.service.clone()).take(1).collect();
            gateway(n, names[s % members].clone(), services)
        })
        .filter(|s| !s.services.is_empty())
        .collect();
    let clients = client_processes(&apps, &subscribers);
    let network = NetworkSpec {
        latency: SimDuration(latency),
        connect_timeout: SimDuration::from_secs(5),
        ..NetworkSpec::default()
    };
    // Every member crash is restarted or stays down; every other fault ends (see `faults`).
    let mut events = timeline(episodes, &clients, &names, &network);
    for (n, c) in cuts.iter().enumerate() {
        let (a, b): (Vec<String>, Vec<String>) = {
            let (a, b): (Vec<_>, Vec<_>) = names.iter().enumerate().partition(|(i, _)| c.side & (1 << i) != 0);
            (a.into_iter().map(|(_, n)| n.clone()).collect(), b.into_iter().map(|(_, n)| n.clone()).collect())
        };
        if a.is_empty() || b.is_empty() {
            continue; // no cut: every member on one side
        }
        let name = format!("m{} cut", n + 1);
        events.push(TimedEvent { at: SimTime(c.at * 1000), name: name.clone(), action: Action::Partition(vec![a, b]) });
        let heal = Action::Heal(Some(name));
        events.push(TimedEvent {
            at: SimTime((c.at + c.for_secs) * 1000),
            name: format!("m{} heal", n + 1),
            action: heal,
        });
    }
    events.sort_by_key(|e| e.at);
    let last = events.last().map_or(SimTime::ZERO, |e| e.at).max(SimTime(30_000));
    let mut s = Scenario {
        name: "generated cluster".into(),
        description: None,
        seed,
        drawn: Vec::new(),
        duration: SimDuration::ZERO,
        network,
        namesrvs: Vec::new(),
        brokers: Vec::new(),
        clients: Vec::new(),
        producers: Vec::new(),
        timeline: events,
        expects: Vec::new(),
        invariants: vec![Invariant::DistroAgreement, Invariant::GrpcStaysConnected, Invariant::GrpcGoneInTime],
        nacos: NacosSpecs { servers, apps, subscribers },
    };
    s.duration = last.since(SimTime::ZERO) + distro_settle(&s) + CLUSTER_WATCH;
    s
}

/// Application `k`: its instances on `10.1.<k+1>.1`, one port each, listing its members from
/// `first` on (wrapping), filtered by its `members` bits.
fn app_spec(k: usize, a: &App, services: usize, names: &[String]) -> NacosAppSpec {
    let ip = Name::from(format!("10.1.{}.1", k + 1));
    let n = names.len();
    let mut servers: Vec<String> =
        (0..n).map(|i| (a.first + i) % n).filter(|i| a.members & (1 << i) != 0).map(|i| names[i].clone()).collect();
    if servers.is_empty() {
        servers = (0..n).map(|i| names[(a.first + i) % n].clone()).collect();
    }
    let mut instances: Vec<NacosInstanceSpec> = Vec::new();
    for (j, (svc, start_ms)) in a.instances.iter().enumerate() {
        let key = service(svc % services);
        // A gRPC client holds one instance per service (a second replaces the first, #9261).
        if a.grpc && instances.iter().any(|i| i.service == key) {
            continue;
        }
        let period = SimDuration(crate::nacos::types::DEFAULT_HEART_BEAT_INTERVAL);
        instances.push(instance_spec((k, j), key, (&ip, 8080 + j as u16), Metadata::new(), SimTime(*start_ms), period));
    }
    NacosAppSpec {
        name: format!("a{}", k + 1),
        transport: if a.grpc { Transport::Grpc } else { Transport::Http },
        servers,
        read_timeout: SimDuration(DEFAULT_READ_TIMEOUT),
        beat_threads: 1,
        start: instances.iter().map(|i| i.start).min().unwrap_or(SimTime::ZERO),
        instances,
    }
}
