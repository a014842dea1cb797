//! The 1.x Nacos invariants, one rule at a time, on a real `NamingServer` driven by hand:
//! `orders-1` and `payments-1` (one app, one `ip:port`, two services) beat to `nacos1`, and
//! `NacosWatch` is asked one millisecond before and at each deadline, and on a correct run.
//!
//! Every deadline is written out from the Java numbers — `instance.heartbeat.timeout` 15 s and
//! `ip.delete.timeout` 30 s (`Constants.DEFAULT_HEART_BEAT_TIMEOUT`, `DEFAULT_IP_DELETE_TIMEOUT`),
//! the check period 5 s (`HealthCheckReactor#scheduleCheck`: `scheduleWithFixedDelay(5000, 5000)`
//! from the client's creation), the strict `now - lastHeartBeatTime > timeout` of
//! `UnhealthyInstanceChecker` / `ExpiredInstanceChecker` — never from `nacos_bounds`' helpers, so
//! a helper that drifts fails here.

use super::arrival::{ArrivalKind, NacosArrival};
use super::nacos::{NacosWatch, Quiet};
use super::Invariant;
use crate::nacos::naming::{NamingServer, RegisterSource};
use crate::nacos::notes::NacosNote;
use crate::nacos::types::{ClientKey, Instance, ServiceKey};
use crate::nacos::wire::{Answer, BeatReq, DeregisterReq};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ProcState;
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use crate::sim::scenario::parse;
use crate::sim::world::World;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

const SCENARIO: &str = r#"
[scenario]
name = "t"
duration = "10m"
invariants = ["nacos_stays_healthy", "nacos_bounded_expiry", "nacos_recovery"]

[network]
latency = "2ms"
jitter = "1ms"

[[nacos_server]]
name = "nacos1"

[[instance]]
name = "orders-1"
service = "orders"
ip = "10.1.0.1"
servers = ["nacos1"]

[[instance]]
name = "payments-1"
app = "orders-1"
service = "payments"
ip = "10.1.0.1"
servers = ["nacos1"]
"#;

/// One one-way trip at its slowest: the fixture's `latency` 2 ms + `jitter` 1 ms.
pub(super) const HOP: u64 = 2 + 1;

pub(super) fn t(ms: u64) -> SimTime {
    SimTime(ms)
}

pub(super) struct Fixture {
    watch: NacosWatch,
    world: World,
    states: BTreeMap<String, ProcState>,
    /// Each instance by name, from the scenario.
    instances: BTreeMap<String, (ServiceKey, Instance)>,
}

/// `nacos1` and the app running since 0; nothing registered yet. `server` is added to the
/// server's section (`expire_instance = false`, say).
pub(super) fn setup(server: &str) -> Fixture {
    let text = SCENARIO.replace("name = \"nacos1\"\n", &format!("name = \"nacos1\"\n{server}"));
    let scenario = parse(Path::new("t.toml"), &text).expect("the fixture parses");
    let world = World::default();
    let config = scenario.nacos.servers[0].config.clone();
    world.set_nacos_server("nacos1", Some(Rc::new(RefCell::new(NamingServer::new(config, SimTime::ZERO)))));
    let mut watch = NacosWatch::new(&scenario);
    let mut states = BTreeMap::new();
    for name in ["nacos1", "orders-1"] {
        watch.process(t(0), name, None, ProcState::Running);
        states.insert(name.to_string(), ProcState::Running);
    }
    let instances = scenario.nacos.apps[0]
        .instances
        .iter()
        .map(|i| (i.name.clone(), (i.service.clone(), i.instance.clone())))
        .collect();
    Fixture { watch, world, states, instances }
}

impl Fixture {
    fn core(&self) -> Rc<RefCell<NamingServer>> {
        self.world.nacos_server("nacos1").expect("running")
    }

    fn key(&self, name: &str) -> (ServiceKey, ClientKey) {
        let (service, i) = &self.instances[name];
        (service.clone(), ClientKey::new(&i.ip, i.port))
    }

    /// What the network tells the monitor: a request from `name` reached nacos1 at `ms`.
    fn arrived(&mut self, ms: u64, name: &str, kind: ArrivalKind) {
        let (service, client) = self.key(name);
        self.watch.arrived(t(ms), "nacos1", NacosArrival { service, client, kind });
    }

    /// `name` registers at `ms`: it arrives, the server registers it, and the watch's mirror of
    /// what nacos1 publishes follows (the cleaner's removals are judged by it).
    pub(super) fn register(&mut self, ms: u64, name: &str) {
        self.arrived(ms, name, ArrivalKind::Register);
        let (service, instance) = &self.instances[name];
        let changes = self.core().borrow_mut().register(t(ms), service, instance, RegisterSource::Request);
        for change in changes {
            assert_eq!(self.mark(ms, &NacosNote::from(change)), None);
        }
    }

    /// A DELETE for `name` arrives at `ms` and the server removes the instance.
    pub(super) fn deregister(&mut self, ms: u64, name: &str) {
        self.arrived(ms, name, ArrivalKind::Deregister);
        let (service, i) = &self.instances[name];
        let req = DeregisterReq { service: service.clone(), cluster: i.cluster.clone(), ip: i.ip, port: i.port };
        let changes = self.core().borrow_mut().deregister(t(ms), &req);
        for change in changes {
            assert_eq!(self.mark(ms, &NacosNote::from(change)), None);
        }
    }

    /// nacos1's cleaner removes orders-1's client at `ms`, idle for `idle_ms`: the report.
    fn orders_client_removed(&mut self, ms: u64, idle_ms: u64) -> Option<String> {
        let (service, client) = self.key("orders-1");
        let services = vec![service];
        let note =
            NacosNote::ClientRemoved { client, idle: SimDuration(idle_ms), instances: 1, subscriptions: 0, services };
        self.mark(ms, &note)
    }

    /// Whether nacos1 holds `name`, and how.
    pub(super) fn held(&self, name: &str) -> Option<bool> {
        let (service, client) = self.key(name);
        self.core().borrow().instance(&service, &client).map(|p| p.healthy)
    }

    /// A light beat from `name` arrives at `ms` and is handled; its answer's code.
    pub(super) fn beat(&mut self, ms: u64, name: &str) -> i32 {
        self.arrived(ms, name, ArrivalKind::LightBeat);
        let (service, i) = &self.instances[name];
        let req =
            BeatReq { service: service.clone(), cluster: Name::new(&i.cluster), ip: i.ip, port: i.port, body: None };
        match self.core().borrow_mut().handle_beat(t(ms), &req).0 {
            Answer::Beat(reply) => reply.code,
            other => panic!("a beat answer, got {other:?}"),
        }
    }

    /// Runs the server's checks and cleaner at each of their ticks up to `ms`, and tells the
    /// watch what they did: the `nacos_stays_healthy` reports.
    pub(super) fn checks_until(&mut self, ms: u64) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let next = self.core().borrow().next_wake().filter(|w| *w <= t(ms));
            let Some(now) = next else { return out };
            let changes = self.core().borrow_mut().run_due(now);
            for change in changes {
                out.extend(self.mark(now.millis(), &NacosNote::from(change)));
            }
        }
    }

    /// The watch told of a trace event of nacos1's checker at `ms`.
    fn mark(&mut self, ms: u64, note: &NacosNote) -> Option<String> {
        let found = self.watch.on_note(t(ms), "nacos1/health", note);
        found.into_iter().inspect(|(i, _)| assert_eq!(*i, Invariant::NacosStaysHealthy)).map(|(_, d)| d).next()
    }

    /// A hand-built `Unhealthy` (or, `deleted`, `Expired`) note for `name` at `ms`: what a
    /// checker claims, whatever the server holds.
    fn marked(&mut self, ms: u64, name: &str, deleted: bool) -> Option<String> {
        let (service, client) = self.key(name);
        let silent = SimDuration(ms);
        let note = match deleted {
            false => NacosNote::Unhealthy { service, client, silent, timeout: 15_000, delete_timeout: Some(30_000) },
            true => NacosNote::Expired { service, client, silent, timeout: 30_000 },
        };
        self.mark(ms, &note)
    }

    /// `nacos_bounded_expiry` before the instant `ms`.
    fn bounded(&self, ms: u64) -> Option<String> {
        let found = self.watch.before_instant(t(ms), &self.world, &self.states, None, (true, false));
        found.into_iter().map(|(_, d)| d).next()
    }

    /// `nacos_recovery` before the instant `ms`, the network whole since `quiet` and the slowest
    /// link during the faults `slowest` one way.
    pub(super) fn recovery(&self, ms: u64, quiet: u64, slowest: u64) -> Option<String> {
        let quiet = Some(Quiet { since: t(quiet), slowest: SimDuration(slowest) });
        let found = self.watch.before_instant(t(ms), &self.world, &self.states, quiet, (false, true));
        found.into_iter().map(|(_, d)| d).next()
    }
}

// ---- nacos_stays_healthy ----

#[test]
fn marked_unhealthy_after_exactly_15s_of_silence_is_reported_after_15_001_ms_is_not() {
    // UnhealthyInstanceChecker#isUnhealthy: now - lastHeartBeatTime > 15_000, strictly.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    let v = f.marked(1_000 + 15_000, "orders-1", false).expect("15 s of silence is not too long");
    assert!(v.contains("arrived at 1.000s, 15s before, within its 15s limit"), "{v}");
    assert_eq!(f.marked(1_000 + 15_000 + 1, "orders-1", false), None);
}

#[test]
fn deleted_after_exactly_30s_of_silence_is_reported_after_30_001_ms_is_not() {
    // ExpiredInstanceChecker#isExpireInstance: now - lastHeartBeatTime > 30_000, strictly.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    let v = f.marked(1_000 + 30_000, "orders-1", true).expect("30 s of silence is not too long");
    assert!(v.contains("deleted (ExpiredInstanceChecker)") && v.contains("within its 30s limit"), "{v}");
    assert_eq!(f.marked(1_000 + 30_000 + 1, "orders-1", true), None);
}

#[test]
fn a_checker_comparing_with_ge_is_caught_at_the_tick_15s_after_the_registration() {
    // The client is created by the registration at 1 s, so its checks run at 6, 11, 16, 21 s...
    // (5 s initial delay, 5 s period): one lands exactly 15 s after the last arrival.
    let mut f = setup("");
    f.core().borrow_mut().plant(Mutation::NacosUnhealthyAtTimeout);
    f.register(1_000, "orders-1");
    let v = f.checks_until(1_000 + 15_000);
    assert!(v.iter().any(|v| v.contains("orders-1") && v.contains("unhealthy")), "{v:?}");
    // The real `>`: nothing at 16 s, unhealthy at 21 s; at 31 s (exactly 30 s) still present,
    // deleted at 36 s — a correct run, nothing reported.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    assert_eq!(f.checks_until(1_000 + 15_000), Vec::<String>::new());
    assert_eq!(f.held("orders-1"), Some(true));
    assert_eq!(f.checks_until(1_000 + 30_000 + 5_000), Vec::<String>::new());
    assert_eq!(f.held("orders-1"), None, "deleted at 36 s");
}

#[test]
fn marked_while_beats_kept_arriving_every_5s_is_reported() {
    // The client's BeatTask: one beat a period (5 s) after the answer to the last.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    for at in [6_003, 11_006, 16_009] {
        f.beat(at, "orders-1");
    }
    let v = f.marked(20_000, "orders-1", false).expect("3.991 s of silence");
    assert!(v.contains("arrived at 16.009s"), "{v}");
    // Once they stop, 15 s after the last one is still too early, 15.001 s is not.
    assert!(f.marked(16_009 + 15_000, "orders-1", false).is_some());
    assert_eq!(f.marked(16_009 + 15_001, "orders-1", false), None);
}

#[test]
fn a_beat_in_the_instant_of_the_check_neither_excuses_nor_condemns_it() {
    // The check and a beat in the same millisecond race in Java: the check is judged by the
    // arrival before that instant. 15 s since it: premature, whatever the racing beat.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    f.beat(16_000, "orders-1");
    assert!(f.marked(16_000, "orders-1", false).is_some());
    // 15.001 s since it: a fair mark, though a beat arrived in its instant.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    f.beat(16_001, "orders-1");
    assert_eq!(f.marked(16_001, "orders-1", false), None);
}

#[test]
fn a_beat_for_another_service_of_the_same_ip_port_does_not_count() {
    // lastHeartBeatTime is per published instance (HealthCheckInstancePublishInfo), not per
    // client: payments' beats keep payments healthy, not orders.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    f.register(1_000, "payments-1");
    f.beat(11_000, "payments-1");
    assert_eq!(f.marked(16_001, "orders-1", false), None);
    assert!(f.marked(16_001, "payments-1", false).is_some(), "payments beat 5.001 s before");
}

/// `ExpiredClientCleaner#isExpireClient` reads the *client's* lastUpdatedTime, which
/// `EphemeralClientOperationServiceImpl#deregisterInstance` also moves
/// (`client.setLastUpdatedTime()`): a removal 81 s after a deregistration is early, though the
/// removed instance itself was silent for 3 min. (The watch once judged only the instance's own
/// beats and registrations, and missed it.)
#[test]
fn a_client_removed_within_3_min_of_a_deregistration_is_reported() {
    let mut f = setup("expire_instance = false\n");
    f.register(1_000, "orders-1");
    f.register(1_000, "payments-1");
    f.arrived(100_000, "payments-1", ArrivalKind::Deregister);
    let removed = f.orders_client_removed(1_000 + 180_001, 180_001);
    assert!(removed.is_some(), "updated by the deregistration at 100 s");
}

/// A light beat for an instance the server does not publish is answered 20404 before
/// `InstanceOperatorClientImpl#handleBeat` reaches `client.setLastUpdatedTime()`: it does not
/// keep the client. (Found by explore, nacos seed 4111: a restarted server removed a client
/// 48.9 s after its last registration, 21.4 s after such a beat, and the watch called it early.)
#[test]
fn a_light_beat_answered_20404_does_not_keep_its_client() {
    let mut f = setup("expire_instance = false\n");
    f.register(1_000, "orders-1");
    assert_eq!(f.beat(100_000, "payments-1"), 20404);
    assert_eq!(f.orders_client_removed(1_000 + 180_001, 180_001), None);
}

// ---- nacos_bounded_expiry ----

#[test]
fn a_silent_instance_still_healthy_after_last_arrival_plus_15s_plus_5s_is_reported() {
    // The first check tick past last + 15 s is at most one 5 s period later; a check at an
    // instant is made before that instant runs, so the bound itself is still allowed.
    let deadline = 1_000 + 15_000 + 5_000;
    let mut f = setup("");
    f.register(1_000, "orders-1");
    assert_eq!(f.bounded(deadline), None);
    let v = f.bounded(deadline + 1).expect("a checker that never ran");
    assert!(v.contains("orders-1") && v.contains(&format!("unhealthy by {}", t(deadline))), "{v}");
    // The real server meets it exactly: its tick at 16 s finds exactly 15 s (strict >), the next
    // one is the deadline. The bound cannot be any tighter.
    let mut f = setup("");
    f.register(1_000, "orders-1");
    f.checks_until(deadline);
    assert_eq!(f.bounded(deadline + 1), None);
}

#[test]
fn a_silent_instance_still_present_after_last_arrival_plus_30s_plus_5s_is_reported() {
    let deadline = 1_000 + 30_000 + 5_000;
    let mut f = setup("");
    f.register(1_000, "orders-1");
    f.checks_until(deadline - 1); // unhealthy at 21 s; its tick at 31 s finds exactly 30 s
    assert_eq!(f.bounded(deadline), None);
    let v = f.bounded(deadline + 1).expect("the tick at the deadline did not run");
    assert!(v.contains("(unhealthy)") && v.contains(&format!("gone by {}", t(deadline))), "{v}");
    f.checks_until(deadline);
    assert_eq!(f.bounded(deadline + 1), None);
}

#[test]
fn later_beats_move_the_bounds_later() {
    let mut f = setup("");
    f.register(1_000, "orders-1");
    for at in [6_003, 11_006, 16_009] {
        f.beat(at, "orders-1");
    }
    assert_eq!(f.bounded(16_009 + 15_000 + 5_000), None);
    assert!(f.bounded(16_009 + 15_000 + 5_000 + 1).is_some());
}

#[test]
fn without_expire_instance_the_cleaner_is_due_185s_after_the_clients_last_arrival() {
    // nacos.naming.expireInstance=false: only ExpiredClientCleaner removes the instance, when
    // the *client* (the ip:port) has not been updated for more than clientExpiredTime (3 min),
    // at its next 5 s run. payments' beats update the client, so they keep orders too.
    let deadline = 100_000 + 180_000 + 5_000;
    let run = |cleaned: bool| {
        let mut f = setup("expire_instance = false\n");
        f.register(1_000, "orders-1");
        f.register(1_000, "payments-1");
        for at in (5_000..=100_000).step_by(5_000) {
            f.beat(at, "payments-1");
        }
        let until = if cleaned { deadline } else { deadline - 1 };
        assert_eq!(f.checks_until(until), Vec::<String>::new(), "a correct run");
        f
    };
    let f = run(false);
    assert_eq!(f.bounded(1_000 + 180_000 + 5_000 + 1), None, "not from orders' own last beat");
    assert_eq!(f.bounded(deadline), None);
    let v = f.bounded(deadline + 1).expect("the cleaner run at the deadline did not happen");
    assert!(v.contains("client_expired_time 3m") && v.contains(&format!("gone by {}", t(deadline))), "{v}");
    assert_eq!(run(true).bounded(deadline + 1), None);
}
