//! proptest strategies that build [`Scenario`]s — the same type the TOML loader produces.
//!
//! A cluster shape (1–3 name servers, 1–6 broker groups of a master and up to two slaves,
//! topics, acting-master flags, clients) and a list of fault *episodes*: a fault together with
//! how it ends (hang → resume, partition → heal, crash → maybe restart, ...). Episodes are turned
//! into a timeline by [`timeline`], which drops any episode whose target is not in a state to
//! take it (already down, hung, ...). Because that repair is a plain function of the episodes,
//! every shrink of the list is still a valid scenario.

use crate::rocketmq::broker::BrokerConfig;
use crate::rocketmq::route_table::NamesrvConfig;
use crate::rocketmq::topic_table::TopicConfigs;
use crate::rocketmq::types::{perm, TopicConfig, NETTY_IDLE_TIME, SCAN_INITIAL_DELAY};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::invariants::monitor::SETTLE;
use crate::sim::invariants::Invariant;
use crate::sim::scenario::{Action, BrokerSpec, ClientSpec, NamesrvSpec, NetworkSpec, Scenario, TimedEvent};
use proptest::prelude::*;
use std::collections::BTreeMap;

pub(super) const TOPICS: [&str; 3] = ["TopicA", "TopicB", "TopicC"];

/// One broker group of the generated cluster.
#[derive(Clone, Debug)]
struct Group {
    slaves: u64,
    acting_master: bool,
    topics: Vec<(usize, u32)>,
}

/// A fault with its end, on process or link indices (resolved modulo the cluster's size).
#[derive(Clone, Debug)]
pub enum Episode {
    Crash {
        target: usize,
        at: u64,
        restart_after: Option<u64>,
    },
    HostDown {
        target: usize,
        at: u64,
        restart_after: Option<u64>,
    },
    Hang {
        target: usize,
        at: u64,
        for_secs: u64,
    },
    Shutdown {
        target: usize,
        at: u64,
        restart_after: Option<u64>,
    },
    Partition {
        a: usize,
        b: usize,
        at: u64,
        for_secs: u64,
    },
    Block {
        a: usize,
        b: usize,
        at: u64,
        for_secs: u64,
    },
    Loss {
        a: usize,
        b: usize,
        at: u64,
        for_secs: u64,
        percent: u8,
    },
    Latency {
        a: usize,
        b: usize,
        at: u64,
        for_secs: u64,
        millis: u64,
    },
    NamesrvRestart {
        ns: usize,
        at: u64,
        down_secs: u64,
    },
    /// `mqadmin updateTopic` on every broker of a group (slaves copy the master's topics in
    /// production, `SlaveSynchronize#syncTopicConfig`, which routesim does not model).
    UpsertTopic {
        group: usize,
        at: u64,
        topic: usize,
        queues: u32,
        perm: u32,
    },
    /// `mqadmin deleteTopic` on the brokers of a group only (name servers keep the topic).
    RemoveTopic {
        group: usize,
        at: u64,
        topic: usize,
    },
    /// `mqadmin updateBrokerConfig brokerPermission` on every broker of a group.
    Permission {
        group: usize,
        at: u64,
        perm: u32,
    },
}

fn episode() -> impl Strategy<Value = Episode> {
    let at = 5u64..300;
    let restart = proptest::option::of(1u64..90);
    prop_oneof![
        (any::<usize>(), at.clone(), restart.clone()).prop_map(|(target, at, restart_after)| Episode::Crash {
            target,
            at,
            restart_after
        }),
        (any::<usize>(), at.clone(), restart.clone()).prop_map(|(target, at, restart_after)| Episode::HostDown {
            target,
            at,
            restart_after
        }),
        (any::<usize>(), at.clone(), 1u64..200).prop_map(|(target, at, for_secs)| Episode::Hang {
            target,
            at,
            for_secs
        }),
        (any::<usize>(), at.clone(), restart).prop_map(|(target, at, restart_after)| Episode::Shutdown {
            target,
            at,
            restart_after
        }),
        (any::<usize>(), any::<usize>(), at.clone(), 1u64..200).prop_map(|(a, b, at, for_secs)| Episode::Partition {
            a,
            b,
            at,
            for_secs
        }),
        (any::<usize>(), any::<usize>(), at.clone(), 1u64..200).prop_map(|(a, b, at, for_secs)| Episode::Block {
            a,
            b,
            at,
            for_secs
        }),
        (any::<usize>(), any::<usize>(), at.clone(), 1u64..200, 10u8..90)
            .prop_map(|(a, b, at, for_secs, percent)| Episode::Loss { a, b, at, for_secs, percent }),
        (any::<usize>(), any::<usize>(), at.clone(), 1u64..200, 5u64..2000)
            .prop_map(|(a, b, at, for_secs, millis)| Episode::Latency { a, b, at, for_secs, millis }),
        (any::<usize>(), at.clone(), 1u64..60).prop_map(|(ns, at, down_secs)| Episode::NamesrvRestart {
            ns,
            at,
            down_secs
        }),
        (any::<usize>(), at.clone(), 0..TOPICS.len(), 1u32..=8, any_perm())
            .prop_map(|(group, at, topic, queues, perm)| Episode::UpsertTopic { group, at, topic, queues, perm }),
        (any::<usize>(), at.clone(), 0..TOPICS.len()).prop_map(|(group, at, topic)| Episode::RemoveTopic {
            group,
            at,
            topic
        }),
        (any::<usize>(), at, any_perm()).prop_map(|(group, at, perm)| Episode::Permission { group, at, perm }),
    ]
}

/// Read-write, read-only or write-only.
fn any_perm() -> impl Strategy<Value = u32> {
    prop_oneof![Just(perm::READ_WRITE), Just(perm::READ), Just(perm::WRITE)]
}

fn group() -> impl Strategy<Value = Group> {
    let topics = proptest::sample::subsequence((0..TOPICS.len()).collect::<Vec<_>>(), 1..=TOPICS.len());
    (0u64..=2, any::<bool>(), topics, proptest::collection::vec(1u32..=8, TOPICS.len())).prop_map(
        |(slaves, acting_master, topics, queues)| Group {
            slaves,
            acting_master,
            topics: topics.into_iter().map(|t| (t, queues[t])).collect(),
        },
    )
}

/// A RocketMQ scenario with every RocketMQ invariant enabled.
pub fn scenario() -> impl Strategy<Value = Scenario> {
    let namesrv =
        (any::<bool>(), prop_oneof![Just(0u64), Just(0), Just(1000)], any::<bool>(), prop::bool::weighted(0.8));
    let namesrvs = proptest::collection::vec(namesrv, 1..=3);
    let groups = proptest::collection::vec(group(), 1..=6);
    let clients = proptest::collection::vec(any::<prop::sample::Index>(), 0..=2);
    let net = (0u64..=2, prop_oneof![Just(0u64), Just(0), Just(3)]);
    let episodes = proptest::collection::vec(episode(), 0..=6);
    // Seeds stay below 2^63: TOML integers are signed 64-bit, and the shrunk case must load.
    (0..i64::MAX as u64, namesrvs, groups, clients, net, episodes, super::producers::producers()).prop_map(
        |(seed, ns, groups, clients, net, episodes, producers)| {
            let shape = Shape { ns: &ns, groups: &groups, clients: &clients, producers: &producers };
            build(seed, shape, net, &episodes)
        },
    )
}

/// The generated cluster, before faults.
struct Shape<'a> {
    ns: &'a [(bool, u64, bool, bool)],
    groups: &'a [Group],
    clients: &'a [prop::sample::Index],
    producers: &'a [super::producers::GenProducer],
}

fn build(seed: u64, shape: Shape<'_>, (latency, jitter): (u64, u64), episodes: &[Episode]) -> Scenario {
    let Shape { ns, groups, clients, producers } = shape;
    let namesrvs: Vec<NamesrvSpec> = ns
        .iter()
        .enumerate()
        .map(|(i, &(support_acting_master, delay, released_scan, idle))| NamesrvSpec {
            name: format!("ns{}", i + 1),
            start: SimTime::ZERO,
            table: NamesrvConfig { support_acting_master, ..Default::default() },
            scan_interval: SimDuration::from_secs(5),
            // 5.3.3's 5 ms first scan, or develop's 5 s (#9682).
            scan_initial_delay: if released_scan { SCAN_INITIAL_DELAY } else { SimDuration::from_secs(5) },
            queue_capacity: 3000,
            unregister_delay: SimDuration(delay),
            idle_close: idle.then_some(NETTY_IDLE_TIME),
        })
        .collect();
    let ns_names: Vec<String> = namesrvs.iter().map(|n| n.name.clone()).collect();
    let mut brokers = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for id in 0..=group.slaves {
            let mut config = BrokerConfig::new(
                "DefaultCluster",
                &format!("broker-g{}", g + 1),
                id,
                &format!("10.0.{}.{}:10911", g + 1, id + 1),
            );
            config.enable_acting_master = group.acting_master;
            let topics = group
                .topics
                .iter()
                .map(|&(t, q)| TopicConfig {
                    read_queue_nums: q,
                    write_queue_nums: q,
                    perm: perm::READ_WRITE,
                    ..TopicConfig::new(TOPICS[t])
                })
                .collect::<TopicConfigs>()
                .into();
            brokers.push(BrokerSpec {
                name: format!("g{}-{id}", g + 1),
                config,
                namesrvs: ns_names.clone(),
                start: SimTime::ZERO,
                topics,
                idle_close: Some(NETTY_IDLE_TIME),
            });
        }
    }
    let known: Vec<String> = TOPICS
        .iter()
        .filter(|t| brokers.iter().any(|b| b.topics.iter().any(|x| x.topic_name == **t)))
        .map(|t| t.to_string())
        .collect();
    let mut clients: Vec<ClientSpec> = clients
        .iter()
        .enumerate()
        .map(|(i, pick)| ClientSpec {
            name: format!("c{}", i + 1),
            namesrvs: ns_names.clone(),
            topics: vec![pick.get(&known).clone()],
            poll_interval: SimDuration::from_secs(30),
            timeout: SimDuration::from_secs(3),
            start: SimTime::ZERO,
            idle_close: Some(NETTY_IDLE_TIME),
        })
        .collect();
    let processes: Vec<String> =
        brokers.iter().map(|b| b.name.clone()).chain(clients.iter().map(|c| c.name.clone())).collect();
    let network = NetworkSpec { latency: SimDuration(latency), jitter: SimDuration(jitter), ..NetworkSpec::default() };
    let mut timeline = timeline(episodes, &processes, &ns_names, &network);
    super::operator::actions(episodes, &brokers, &mut timeline);
    let last = timeline.last().map_or(SimTime::ZERO, |e| e.at);
    let duration = last.since(SimTime::ZERO) + SETTLE + SimDuration::from_secs(20);
    let producers = super::producers::build(producers, &mut clients, &known, SimTime::ZERO + duration);
    Scenario {
        name: "generated".into(),
        description: None,
        seed,
        drawn: Vec::new(),
        duration,
        network,
        namesrvs,
        brokers,
        clients,
        producers,
        timeline,
        expects: Vec::new(),
        invariants: Invariant::ROCKETMQ.to_vec(),
        nacos: Default::default(),
    }
}

/// Episodes → a valid, time-ordered timeline. An episode is dropped when its target is not in
/// a state to take it for its whole length; name servers only restart, never hang.
pub fn timeline(
    episodes: &[Episode],
    processes: &[String],
    namesrvs: &[String],
    network: &NetworkSpec,
) -> Vec<TimedEvent> {
    let everyone: Vec<String> = processes.iter().chain(namesrvs).cloned().collect();
    let mut busy = Busy::default();
    let mut events: Vec<TimedEvent> = Vec::new();
    let mut n = 0;
    for e in episodes {
        n += 1;
        let secs = |s: u64| SimTime(s * 1000);
        let mut push = |at: SimTime, name: String, action: Action| events.push(TimedEvent { at, name, action });
        match e {
            Episode::Crash { target, at, restart_after }
            | Episode::HostDown { target, at, restart_after }
            | Episode::Shutdown { target, at, restart_after } => {
                let who = &processes[target % processes.len()];
                // A broker's shutdown can take up to 3 s per name server: restart 10 s later at
                // the earliest. Without a restart the process stays down for good.
                let restart_at = restart_after.map(|after| at + after.max(10));
                if !busy.claim(who, *at * 1000, restart_at.unwrap_or(u64::MAX / 1000) * 1000) {
                    continue;
                }
                let action = match e {
                    Episode::Crash { .. } => Action::Crash(who.clone()),
                    Episode::HostDown { .. } => Action::HostDown(who.clone()),
                    _ => Action::Shutdown(who.clone()),
                };
                push(secs(*at), format!("e{n} stop {who}"), action);
                if let Some(back) = restart_at {
                    push(secs(back), format!("e{n} restart {who}"), Action::Restart(who.clone()));
                }
            }
            Episode::Hang { target, at, for_secs } => {
                let who = &processes[target % processes.len()];
                if !busy.claim(who, *at * 1000, (at + for_secs) * 1000) {
                    continue;
                }
                push(secs(*at), format!("e{n} hang {who}"), Action::Hang(who.clone()));
                push(secs(at + for_secs), format!("e{n} resume {who}"), Action::Resume(who.clone()));
            }
            Episode::NamesrvRestart { ns, at, down_secs } => {
                let who = &namesrvs[ns % namesrvs.len()];
                if !busy.claim(who, *at * 1000, (at + down_secs) * 1000) {
                    continue;
                }
                push(secs(*at), format!("e{n} crash {who}"), Action::Crash(who.clone()));
                push(secs(at + down_secs), format!("e{n} restart {who}"), Action::Restart(who.clone()));
            }
            Episode::Partition { a, b, at, for_secs } | Episode::Block { a, b, at, for_secs } => {
                let (x, y) = (&everyone[a % everyone.len()], &everyone[b % everyone.len()]);
                if x == y {
                    continue;
                }
                let name = format!("e{n} cut");
                let action = match e {
                    Episode::Partition { .. } => Action::Partition(vec![vec![x.clone()], vec![y.clone()]]),
                    _ => Action::Block { from: x.clone(), to: y.clone() },
                };
                push(secs(*at), name.clone(), action);
                push(secs(at + for_secs), format!("e{n} heal"), Action::Heal(Some(name)));
            }
            Episode::Loss { a, b, at, for_secs, percent } => {
                let (x, y) = (&everyone[a % everyone.len()], &everyone[b % everyone.len()]);
                if x == y {
                    continue;
                }
                let (from, to) = (x.clone(), y.clone());
                let rate = f64::from(*percent) / 100.0;
                push(
                    secs(*at),
                    format!("e{n} loss"),
                    Action::Loss { from: from.clone(), to: to.clone(), rate, both_ways: true },
                );
                push(
                    secs(at + for_secs),
                    format!("e{n} no loss"),
                    Action::Loss { from, to, rate: 0.0, both_ways: true },
                );
            }
            // Operator actions need the group structure: `operator_actions`.
            Episode::UpsertTopic { .. } | Episode::RemoveTopic { .. } | Episode::Permission { .. } => {}
            Episode::Latency { a, b, at, for_secs, millis } => {
                let (x, y) = (&everyone[a % everyone.len()], &everyone[b % everyone.len()]);
                if x == y {
                    continue;
                }
                let (from, to) = (x.clone(), y.clone());
                let slow = Action::Latency {
                    from: from.clone(),
                    to: to.clone(),
                    base: SimDuration(*millis),
                    jitter: SimDuration::ZERO,
                    both_ways: true,
                };
                push(secs(*at), format!("e{n} slow"), slow);
                let back = Action::Latency { from, to, base: network.latency, jitter: network.jitter, both_ways: true };
                push(secs(at + for_secs), format!("e{n} fast"), back);
            }
        }
    }
    events.sort_by_key(|e| e.at);
    events
}

/// Each process's busy intervals (in ms). Repairing a generated schedule claims an episode's
/// whole length for its target; an episode that overlaps an earlier claim is dropped, so a
/// shrink that removes one episode can only free its target, never make another invalid.
#[derive(Default)]
pub struct Busy(BTreeMap<String, Vec<(u64, u64)>>);

impl Busy {
    /// Claims `[from, to]` for `who` unless an earlier episode already holds part of it.
    pub fn claim(&mut self, who: &str, from: u64, to: u64) -> bool {
        let list = self.0.entry(who.to_string()).or_default();
        if list.iter().any(|&(a, b)| from <= b && a <= to) {
            return false;
        }
        list.push((from, to));
        true
    }
}
