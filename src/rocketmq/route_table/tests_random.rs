//! Randomized proofs: the topic-loop memo never changes a result (two managers, one with the
//! memo off, stay identical), nor do the registration's position hints (the memo-less manager's
//! are scrambled before every step), the tables stay consistent, and the revision moves exactly
//! when an observer-visible field changes. Every failure names its seed.

use super::test_support::*;
use super::{NamesrvConfig, RegisterOutcome, RouteInfoManager, TopicPass};
use crate::rocketmq::types::{
    BrokerAddrInfo, BrokerData, DataVersion, QueueData, RegisterBrokerRequest, TopicConfigWrapper, UnregisterRequest,
};
use crate::sim::clock::SimDuration;
use crate::sim::ids::ChannelId;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const CLUSTERS: [&str; 2] = ["c1", "c2"];
const NAMES: [&str; 3] = ["b0", "b1", "b2"];
const ADDRS: [&str; 5] = ["a0:1", "a1:1", "a2:1", "a3:1", "a4:1"];
const TOPICS: [&str; 5] = ["t0", "t1", "t2", "t3", "t4"];

/// One step of a random history; printed when a step fails.
#[derive(Debug, Clone)]
enum Op {
    Register(Box<RegisterBrokerRequest>, ChannelId),
    Heartbeat(String, String),
    Query(String, String, DataVersion),
    Unregister(Vec<UnregisterRequest>),
    ScanAndUnregister,
    ChannelDestroy(ChannelId),
    Wipe(String),
    AddPerm(String),
    DeleteTopic(String, Option<String>),
    RegisterTopic(String, Vec<QueueData>),
}

struct Gen {
    rng: ChaCha8Rng,
    bodies: Vec<Arc<TopicConfigWrapper>>,
    /// What each (cluster, addr) last sent — name, id, acting flag, body — because brokers
    /// mostly resend the same registration (the same body allocation) every 30 s.
    last: BTreeMap<(String, String), Profile>,
}

#[derive(Clone, Copy)]
struct Profile {
    name: usize,
    id: u64,
    acting: usize,
    body: usize,
}

impl Gen {
    fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let versions = [dv(1), dv(2), DataVersion { state_version: 3, ..dv(1) }];
        let bodies = (0..8)
            .map(|_| {
                let n = rng.gen_range(1..=TOPICS.len());
                let mut topics: Vec<&str> = TOPICS.to_vec();
                while topics.len() > n {
                    topics.remove(rng.gen_range(0..topics.len()));
                }
                body(versions[rng.gen_range(0..versions.len())], &topics)
            })
            .collect();
        Gen { rng, bodies, last: BTreeMap::new() }
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.rng.gen_range(0..from.len())]
    }

    fn op(&mut self, m: &RouteInfoManager) -> Op {
        match self.rng.gen_range(0..100) {
            0..=54 => self.register(),
            55..=59 => Op::Heartbeat(self.pick(&CLUSTERS).into(), self.pick(&ADDRS).into()),
            60..=62 => Op::Query(self.pick(&CLUSTERS).into(), self.pick(&ADDRS).into(), dv(1)),
            63..=70 => Op::Unregister(self.unregister_batch(m)),
            71..=74 => Op::ScanAndUnregister,
            75..=77 => Op::ChannelDestroy(ChannelId(self.rng.gen_range(0..6))),
            78..=81 => Op::Wipe(self.pick(&NAMES).into()),
            82..=84 => Op::AddPerm(self.pick(&NAMES).into()),
            85..=92 => {
                let cluster = self.rng.gen_bool(0.5).then(|| self.pick(&CLUSTERS).to_string());
                Op::DeleteTopic(self.pick(&TOPICS).into(), cluster)
            }
            _ => {
                let names = [NAMES[0], NAMES[1], NAMES[2], "ghost"];
                let qds = (0..self.rng.gen_range(0..3)).map(|_| queue_data(self.pick(&names), 6)).collect();
                Op::RegisterTopic(self.pick(&TOPICS).into(), qds)
            }
        }
    }

    fn register(&mut self) -> Op {
        let (cluster, addr) = (self.pick(&CLUSTERS), self.pick(&ADDRS));
        let key = (cluster.to_string(), addr.to_string());
        let fresh = Profile {
            name: self.rng.gen_range(0..NAMES.len()),
            id: self.rng.gen_range(0..3),
            acting: self.rng.gen_range(0..3),
            body: self.rng.gen_range(0..self.bodies.len()),
        };
        let profile = match self.last.get(&key) {
            Some(&p) if self.rng.gen_bool(0.85) => p,
            Some(&p) if self.rng.gen_bool(0.5) => Profile { body: fresh.body, ..p },
            _ => fresh,
        };
        self.last.insert(key, profile);
        let mut req = broker(NAMES[profile.name], profile.id, addr, &self.bodies[profile.body]);
        req.cluster_name = cluster.into();
        req.enable_acting_master = [None, Some(false), Some(true)][profile.acting];
        req.heartbeat_timeout_millis = self.rng.gen_bool(0.3).then_some(SimDuration(10_000));
        req.filter_server_list = [None, None, Some(vec![]), Some(vec!["fs".into()])][self.rng.gen_range(0..4)].clone();
        if self.rng.gen_bool(0.02) {
            req.topic_config_wrapper = None;
        }
        Op::Register(Box::new(req), ChannelId(self.rng.gen_range(0..6)))
    }

    fn unregister_batch(&mut self, m: &RouteInfoManager) -> Vec<UnregisterRequest> {
        let live: Vec<BrokerAddrInfo> = m.broker_live_table().keys().cloned().collect();
        (0..self.rng.gen_range(1..=3))
            .map(|_| {
                let found =
                    live.get(self.rng.gen_range(0..live.len().max(1))).and_then(|k| m.setup_unregister_request(k));
                match found {
                    Some(req) if self.rng.gen_bool(0.8) => req,
                    _ => UnregisterRequest {
                        cluster_name: self.pick(&CLUSTERS).into(),
                        ..unreg(self.pick(&NAMES), self.rng.gen_range(0..3), self.pick(&ADDRS))
                    },
                }
            })
            .collect()
    }
}

/// Applies one step; returns a comparable description of what it did, and for a registration
/// whether the memo skipped the loop (the description then reads as if the loop had run).
fn apply(m: &mut RouteInfoManager, op: &Op, now: u64) -> (String, Option<RegisterOutcome>) {
    let said = match op {
        Op::Register(req, channel) => {
            let out = m.register_broker(t(now), req, *channel);
            let mut as_if_ran = out.clone();
            if out.topic_pass == TopicPass::Skipped {
                let topics = req.topic_config_wrapper.as_ref().map_or(0, |w| w.topic_config_table.len());
                as_if_ran.topic_pass = TopicPass::Ran { topics };
            }
            return (format!("{as_if_ran:?}"), Some(out));
        }
        Op::Heartbeat(c, a) => format!("{}", m.update_broker_info_update_timestamp(t(now), c, a)),
        Op::Query(c, a, v) => format!("{:?}", m.query_broker_topic_config(t(now), c, a, v)),
        Op::Unregister(batch) => format!("{:?}", m.un_register_broker(batch)),
        Op::ScanAndUnregister => {
            let batch: Vec<_> = m.scan_not_active_broker(t(now)).into_iter().filter_map(|e| e.request).collect();
            format!("{:?}", m.un_register_broker(&batch))
        }
        Op::ChannelDestroy(channel) => match m.on_channel_destroy(*channel) {
            Some(req) => format!("{:?}", m.un_register_broker(&[req])),
            None => "none".into(),
        },
        Op::Wipe(name) => format!("{}", m.wipe_write_perm_of_broker(name)),
        Op::AddPerm(name) => format!("{}", m.add_write_perm_of_broker(name)),
        Op::DeleteTopic(topic, cluster) => format!("{}", m.delete_topic(topic, cluster.as_deref())),
        Op::RegisterTopic(topic, qds) => format!("{}", m.register_topic(topic, qds.clone())),
    };
    (said, None)
}

type LiveView = BTreeMap<BrokerAddrInfo, (SimDuration, DataVersion, ChannelId, Name)>;

/// Everything an observer can see: the tables, with live timestamps left out.
#[derive(Debug, PartialEq)]
struct Visible {
    topics: BTreeMap<String, super::QueueTable>,
    groups: BTreeMap<Name, std::rc::Rc<BrokerData>>,
    clusters: BTreeMap<Name, BTreeSet<Name>>,
    live: LiveView,
    filters: BTreeMap<BrokerAddrInfo, Vec<String>>,
}

fn visible(m: &RouteInfoManager) -> Visible {
    let live = m
        .broker_live_table()
        .iter()
        .map(|(k, l)| (*k, (l.heartbeat_timeout_millis, l.data_version, l.channel, l.ha_server_addr)));
    Visible {
        topics: m.topic_queue_table().to_btree(),
        groups: m.broker_addr_table().to_btree(),
        clusters: m.cluster_addr_table().iter().map(|(c, names)| (*c, names.to_btree())).collect(),
        live: live.collect(),
        filters: m.filter_server_table().to_btree(),
    }
}

fn random_config(rng: &mut ChaCha8Rng) -> NamesrvConfig {
    NamesrvConfig {
        support_acting_master: rng.gen_bool(0.5),
        notify_min_broker_id_changed: rng.gen_bool(0.5),
        // Mostly off: the memo only ever skips with it off.
        delete_topic_with_broker_registration: rng.gen_bool(0.2),
    }
}

#[test]
fn topic_memo_skip_matches_the_full_java_loop_on_random_histories() {
    // RocketMQ RouteInfoManager#registerBroker step 10b; memo.rs explains why skipping is exact
    let (mut skips, mut restores) = (0, 0);
    for seed in 0..48 {
        let mut gen = Gen::new(seed);
        let config = random_config(&mut gen.rng);
        let (mut fast, mut full) = (RouteInfoManager::new(config.clone()), RouteInfoManager::new(config));
        full.disable_topic_memo();
        let mut scramble = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let mut now = 0;
        for step in 0..400 {
            now += gen.rng.gen_range(0..40_000);
            let op = gen.op(&fast);
            full.scramble_hints(&mut scramble);
            let steady = match &op {
                Op::Register(req, _) => req.topic_config_wrapper.as_ref().is_some_and(|w| {
                    !fast.is_broker_topic_config_changed(&req.cluster_name, &req.broker_addr, &w.data_version)
                }),
                _ => false,
            };
            let ((said_fast, out), (said_full, _)) = (apply(&mut fast, &op, now), apply(&mut full, &op, now));
            if let Some(out) = out {
                skips += usize::from(out.topic_pass == TopicPass::Skipped);
                restores += usize::from(steady && !out.register_first && !out.topics_updated.is_empty());
            }
            let context = format!("re-run with seed {seed}: step {step} {op:?}");
            assert_eq!(said_fast, said_full, "outcomes differ; {context}");
            assert_eq!(visible(&fast), visible(&full), "tables differ; {context}");
            assert_eq!(fast.broker_live_table(), full.broker_live_table(), "timestamps differ; {context}");
            assert_eq!(fast.check_consistency(), Vec::<String>::new(), "{context}");
        }
    }
    // The test means something only if both the shortcut and its refusals were exercised.
    assert!(skips > 500, "only {skips} skipped registrations");
    assert!(restores > 20, "only {restores} steady registrations that had to re-create QueueData");
}

#[test]
fn revision_moves_exactly_when_an_observer_visible_field_changes() {
    // The revision contract in mod.rs, checked against a full snapshot after every random step
    for seed in 100..132 {
        let mut gen = Gen::new(seed);
        let mut m = RouteInfoManager::new(random_config(&mut gen.rng));
        let mut now = 0;
        for step in 0..300 {
            now += gen.rng.gen_range(0..40_000);
            let op = gen.op(&m);
            let (before, revision) = (visible(&m), m.revision());
            apply(&mut m, &op, now);
            let changed = visible(&m) != before;
            assert_eq!(m.revision() != revision, changed, "re-run with seed {seed}: step {step} {op:?}");
        }
    }
}
