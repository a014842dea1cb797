//! The producer invariants, against a hand-built route: each can fail, and each keeps quiet
//! where Java gives a send the right to do what it did.

use super::derive::Configs;
use super::sends::{AttemptSeen, SendWatch, Settled};
use super::Invariant;
use crate::rocketmq::client::RouteClientCore;
use crate::rocketmq::types::{perm, BrokerData, QueueData, TopicRouteData};
use crate::sim::clock::SimTime;
use crate::sim::ids::ProcState;
use crate::sim::scenario::{parse, Scenario};
use crate::sim::world::World;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

pub(super) const CLUSTER: &str = r#"
[scenario]
name = "t"
duration = "10m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "T", read = 4, write = 4 }]

[[broker]]
name = "b0"
broker_name = "broker-b"
addr = "10.0.0.2:10911"
topics = [{ name = "T", read = 4, write = 4 }]

[[client]]
name = "c1"
topics = ["T"]

[[producer]]
name = "p1"
client = "c1"
topic = "T"
rate = 1
"#;

/// A route for `T` listing `brokers` as (name, master address, write queues).
pub(super) fn route(brokers: &[(&str, &str, u32)]) -> Rc<TopicRouteData> {
    let mut r =
        TopicRouteData { queue_datas: Vec::new(), broker_datas: Vec::new(), filter_server_table: BTreeMap::new() };
    for &(name, addr, queues) in brokers {
        let q = QueueData {
            broker_name: name.into(),
            read_queue_nums: queues,
            write_queue_nums: queues,
            perm: perm::READ_WRITE,
            topic_sys_flag: 0,
        };
        r.queue_datas.push(q.into());
        let mut b = BrokerData::new("DefaultCluster", name);
        b.broker_addrs.insert(0, addr.into());
        r.broker_datas.push(b.into());
    }
    Rc::new(r)
}

pub(super) const BOTH: &[(&str, &str, u32)] = &[("broker-a", "10.0.0.1:10911", 4), ("broker-b", "10.0.0.2:10911", 4)];

pub(super) struct Fixture {
    pub(super) scenario: Scenario,
    pub(super) world: World,
    pub(super) client: Rc<RefCell<RouteClientCore>>,
    pub(super) watch: SendWatch,
    pub(super) state: BTreeMap<String, ProcState>,
}

impl Fixture {
    pub(super) fn new() -> Self {
        Self::from_toml(CLUSTER)
    }

    /// The fixture over another scenario with the same processes (`a0`, `b0`, `c1`, `p1`).
    pub(super) fn from_toml(toml: &str) -> Self {
        let scenario = parse(Path::new("t.toml"), toml).expect("the fixture parses");
        let world = World::new(BTreeMap::new());
        let client = Rc::new(RefCell::new(RouteClientCore::new(vec!["ns1".into()])));
        world.set_client("c1", Some(client.clone()));
        let watch = SendWatch::new(&scenario);
        let state = ["a0", "b0", "c1"].iter().map(|n| (n.to_string(), ProcState::Running)).collect();
        let mut f = Fixture { scenario, world, client, watch, state };
        f.set_route(BOTH);
        f
    }

    pub(super) fn set_route(&mut self, brokers: &[(&str, &str, u32)]) {
        self.client.borrow_mut().on_route("T", Some(route(brokers)));
    }

    /// Send `id` begins at `secs`, the last fault having ended at `quiet_since` (if none is in force).
    fn start(&mut self, secs: u64, id: u64, quiet_since: Option<u64>) {
        let configs = Configs::new(&self.scenario);
        let settled =
            Settled { quiet_since: quiet_since.map(|s| SimTime(s * 1000)), state: &self.state, configs: &configs };
        self.watch.started(SimTime(secs * 1000), "p1", id, &self.world, settled);
    }

    fn attempt(&mut self, id: u64, broker: &str, addr: &str, queue: u32) -> Option<Invariant> {
        let seen = AttemptSeen { producer: "p1", send: id, attempt: 0, broker, addr, queue };
        self.watch.attempt(&seen, &self.world).map(|(i, _)| i)
    }
}

#[test]
fn an_attempt_must_go_to_a_writable_queue_at_its_master_address() {
    let mut f = Fixture::new();
    f.start(10, 1, None);
    assert_eq!(f.attempt(1, "broker-a", "10.0.0.1:10911", 3), None);
    assert_eq!(f.attempt(1, "broker-a", "10.0.0.1:10911", 4), Some(Invariant::SendsFollowRoute), "queue 4 of 4");
    assert_eq!(f.attempt(1, "broker-a", "10.0.0.2:10911", 0), Some(Invariant::SendsFollowRoute), "b's address");
    assert_eq!(f.attempt(1, "broker-c", "10.0.0.3:10911", 0), Some(Invariant::SendsFollowRoute), "no such broker");
}

#[test]
fn a_retry_may_use_the_route_its_send_began_with() {
    // Java's retries read the TopicPublishInfo the send began with; the route may have dropped
    // the broker since.
    let mut f = Fixture::new();
    f.start(10, 1, None);
    f.set_route(&BOTH[1..]);
    assert_eq!(f.attempt(1, "broker-a", "10.0.0.1:10911", 0), None);
    // A send that begins after the change may not.
    f.start(11, 2, None);
    assert_eq!(f.attempt(2, "broker-a", "10.0.0.1:10911", 0), Some(Invariant::SendsFollowRoute));
}

#[test]
fn a_sync_send_may_take_its_timeout_plus_the_connect_timeout_and_no_more() {
    let mut f = Fixture::new();
    f.start(10, 1, None);
    assert_eq!(f.watch.before_instant(SimTime(16_000)), None, "3 s + 3 s is allowed");
    assert!(f.watch.done(SimTime(16_000), "p1", 1, false, "timeout").is_empty());
    f.start(20, 2, None);
    let (i, detail) = f.watch.before_instant(SimTime(26_001)).expect("still running past 6 s");
    assert_eq!(i, Invariant::SendWithinTimeout);
    assert!(detail.contains("p1's sync send #2 began at 20.000s"), "{detail}");
}

#[test]
fn a_paused_client_excuses_its_sends() {
    let mut f = Fixture::new();
    f.start(10, 1, None);
    f.watch.process(SimTime(11_000), "c1", ProcState::Hung);
    assert_eq!(f.watch.before_instant(SimTime(60_000)), None);
    assert!(f.watch.done(SimTime(60_000), "p1", 1, false, "timeout").is_empty());
}

#[test]
fn after_settling_a_send_over_a_sound_route_must_succeed() {
    let mut f = Fixture::new();
    // 245 s after the last fault, both masters running and storing T: a failure is a violation.
    f.start(305, 1, Some(60));
    let found = f.watch.done(SimTime(305_001), "p1", 1, false, "sendDefaultImpl call timeout");
    assert_eq!(found.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [Invariant::SendsRecover]);
    // Too soon after the fault, or with a fault in force: no claim.
    f.start(304, 2, Some(60));
    assert!(f.watch.done(SimTime(304_500), "p1", 2, false, "x").is_empty());
    f.start(305, 3, None);
    assert!(f.watch.done(SimTime(305_500), "p1", 3, false, "x").is_empty());
    // A route that lists a stopped master, or more queues than the broker stores: no claim.
    f.state.insert("b0".into(), ProcState::Down);
    f.start(400, 4, Some(60));
    assert!(f.watch.done(SimTime(400_500), "p1", 4, false, "x").is_empty());
    f.state.insert("b0".into(), ProcState::Running);
    f.set_route(&[("broker-a", "10.0.0.1:10911", 8)]);
    f.start(500, 5, Some(60));
    assert!(f.watch.done(SimTime(500_500), "p1", 5, false, "x").is_empty());
}
