//! `grpc_gone_in_time`, one deadline rule at a time, on hand-built members: `app1` (one gRPC
//! instance) dies at 60 s and `GrpcWatch` is asked just before and at the deadline that rule
//! gives — silent, then reporting, while a running member still holds the instance — and at the
//! deadline with the instance gone from every member, when nothing may be reported.
//!
//! Each deadline is written out from the Nacos and TCP numbers, never from `distro`'s helpers, so
//! a helper that drifts fails here. The network numbers are the fixture's; the rest are the
//! scenario format's defaults (`connect_timeout` 3 s, `client_expired_time` 3 min).

use super::grpc::GrpcWatch;
use crate::nacos::naming::{NamingServer, RegisterSource};
use crate::nacos::notes::NacosNote;
use crate::nacos::types::{ClientKey, Instance, ServiceKey};
use crate::sim::clock::SimTime;
use crate::sim::ids::ProcState;
use crate::sim::scenario::parse;
use crate::sim::world::World;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

const SCENARIO: &str = r#"
[scenario]
name = "t"
duration = "10m"
invariants = ["grpc_gone_in_time"]

[network]
latency = "2ms"
jitter = "1ms"

[[nacos_server]]
name = "nacos1"
cluster = "east"

[[nacos_server]]
name = "nacos2"
cluster = "east"

[[nacos_server]]
name = "nacos3"
cluster = "east"

[[instance]]
name = "orders-1"
app = "app1"
service = "orders"
ip = "10.1.0.1"
transport = "grpc"

[[instance]]
name = "orders-2"
app = "app2"
service = "orders"
ip = "10.1.0.2"
transport = "grpc"
"#;

const MEMBERS: [&str; 3] = ["nacos1", "nacos2", "nacos3"];

/// One one-way trip at its slowest: the fixture's `latency` 2 ms + `jitter` 1 ms.
const TRIP: u64 = 2 + 1;
/// Distro's sync lag: `syncDelayMillis` 1 s + the delay engine's 100 ms grid + three trips (SYN,
/// SYN-ACK and the request, on a new connection).
const LAG: u64 = 1_000 + 100 + 3 * TRIP;
/// Until the members see each other `UP` after a fault: `MemberInfoReportTask` reports every 2 s
/// to one of the 2 others in turn, one report waits out the 3 s connect timeout (longer than
/// its 2.5 s read timeout), and the next run is 2 s on.
const MEMBERSHIP: u64 = 2_000 * 2 + 3_000 + 2_000;
/// After a fault: membership, then a sync that failed meanwhile — its 1 s delay, a lost request's
/// 3 s timeout, the 3 s retry, the 100 ms grid — and the sync lag of its arrival.
const RECOVERY: u64 = MEMBERSHIP + 1_000 + 3_000 + 3_000 + 100 + LAG;
/// A copy nothing renews: `clientExpiredTime` 3 min, the `ExpiredClientCleaner`'s next 5 s run,
/// and 1 ms because a check at an instant comes before that instant's cleaner run.
const LEASE: u64 = 180_000 + 5_000 + 1;

fn t(ms: u64) -> SimTime {
    SimTime(ms)
}

/// Three running members and the watch, with `app1` connected to nacos1 (`c1`) since 1 s.
struct Fixture {
    watch: GrpcWatch,
    world: World,
    states: BTreeMap<String, ProcState>,
    /// Each app's instance, from the scenario.
    apps: BTreeMap<String, (ServiceKey, Instance)>,
    /// Every connection made, for `forget`.
    conns: Vec<Arc<str>>,
}

fn setup() -> Fixture {
    let scenario = parse(Path::new("t.toml"), SCENARIO).expect("the fixture parses");
    let world = World::default();
    let mut states = BTreeMap::new();
    for v in &scenario.nacos.servers {
        let mut core = NamingServer::new(v.config.clone(), SimTime::ZERO);
        core.enable_distro();
        world.set_nacos_server(&v.name, Some(Rc::new(RefCell::new(core))));
        states.insert(v.name.clone(), ProcState::Running);
    }
    let mut apps = BTreeMap::new();
    for a in &scenario.nacos.apps {
        states.insert(a.name.clone(), ProcState::Running);
        apps.insert(a.name.clone(), (a.instances[0].service.clone(), a.instances[0].instance.clone()));
    }
    let watch = GrpcWatch::new(&scenario);
    let mut f = Fixture { watch, world, states, apps, conns: Vec::new() };
    f.connect(1_000, "app1", "c1", "nacos1");
    f
}

impl Fixture {
    fn core(&self, member: &str) -> Rc<RefCell<NamingServer>> {
        self.world.nacos_server(member).expect("a running member")
    }

    /// `app` connects to `member` over `conn` and registers its instance there (native); the
    /// other running members take the owner's CHANGE (copies).
    fn connect(&mut self, ms: u64, app: &str, conn: &str, member: &str) {
        let conn: Arc<str> = Arc::from(conn);
        let (service, instance) = &self.apps[app];
        let owner = self.core(member);
        let data = {
            let mut owner = owner.borrow_mut();
            owner.connect_client(&conn);
            owner.register_grpc(t(ms), &conn, service, instance).expect("registered");
            owner.client_sync_data(&conn).expect("native")
        };
        for m in MEMBERS.iter().filter(|m| **m != member && self.world.nacos_server(m).is_some()) {
            self.core(m).borrow_mut().apply_sync(t(ms), &Arc::from(member), &conn, &data);
        }
        let note = NacosNote::GrpcConnected {
            server: crate::sim::name::Name::new(member),
            conn: conn.clone(),
            previous: None,
        };
        self.watch.on_note(t(ms), app, &note, &self.states, None);
        self.conns.push(conn);
    }

    /// A fault stops `process` at `ms` (`host`: its host goes down), `previous` being the fault
    /// before it. As in `Monitor`: the watch sees the world as it was, then the process stops.
    fn died(&mut self, ms: u64, process: &str, host: bool, previous: u64, disturbed: bool) {
        self.watch.died(t(ms), process, host, (t(previous), disturbed), &self.world, &self.states);
        self.states.insert(process.to_string(), ProcState::Down);
        if MEMBERS.contains(&process) {
            self.world.set_nacos_server(process, None);
        }
    }

    /// `member` no longer holds connection `conn`'s client: a FIN or an ejection on the owner,
    /// a DELETE or the cleaner on a copy — `clientDisconnected` either way.
    fn drop_conn(&self, member: &str, conn: &str) {
        self.core(member).borrow_mut().disconnect_client(&Arc::from(conn));
    }

    /// Every connection gone from every running member.
    fn forget(&self) {
        for m in MEMBERS.iter().filter(|m| self.world.nacos_server(m).is_some()) {
            self.conns.iter().for_each(|c| self.drop_conn(m, c));
        }
    }

    fn holds(&self, member: &str, app: &str) -> bool {
        let (service, instance) = &self.apps[app];
        self.core(member).borrow().instance(service, &ClientKey::new(&instance.ip, instance.port)).is_some()
    }

    /// `grpc_gone_in_time` before the instant `ms`, the network whole since the fault at `quiet`.
    fn reported(&mut self, ms: u64, quiet: u64) -> Option<String> {
        self.watch.before_instant(t(ms), &self.world, &self.states, Some(t(quiet)))
    }
}

/// `steps` on a fresh fixture, twice. With `holder` still holding app1's instance: silent at
/// every instant of `earlier` and at `deadline - 1`, reported at `deadline`; that report is
/// returned. With the instance gone from every member: silent at `deadline`.
fn boundary(steps: impl Fn(&mut Fixture), deadline: u64, quiet: u64, holder: &str, earlier: &[u64]) -> String {
    let mut f = setup();
    steps(&mut f);
    assert!(f.holds(holder, "app1"), "{holder} still holds app1's instance");
    for at in earlier.iter().copied().chain([deadline - 1]) {
        assert_eq!(f.reported(at, quiet), None, "silent at {at} ms, before the deadline {deadline} ms");
    }
    let v = f.reported(deadline, quiet).expect("reported at the deadline");
    assert!(v.contains(holder), "{v}");
    let mut f = setup();
    steps(&mut f);
    f.forget();
    assert_eq!(f.reported(deadline, quiet), None, "gone everywhere: nothing to report");
    v
}

/// The report states the deadline it was checked against.
fn names(report: &str, deadline: u64) {
    assert!(report.contains(&format!("due gone by {}", t(deadline))), "{report}");
}

#[test]
fn a_killed_client_is_due_gone_a_fin_and_a_sync_lag_after_its_death() {
    // Killed at 60 s: its kernel's FIN reaches nacos1 one trip later (2 ms latency + 1 ms jitter),
    // and nacos1's DELETE reaches the others one sync lag after that (1 s syncDelayMillis +
    // 100 ms grid + 3 trips of 3 ms). The fault before it, at 0 s, is long recovered from.
    let deadline = 60_000 + (2 + 1) + (1_000 + 100 + 3 * 3);
    let kill = |f: &mut Fixture| {
        f.died(60_000, "app1", false, 0, false);
        f.drop_conn("nacos1", "c1"); // the FIN arrived: only the copies are left
    };
    names(&boundary(kill, deadline, 60_000, "nacos2", &[]), deadline);
}

#[test]
fn a_powered_off_client_is_due_gone_after_the_ejectors_detection() {
    // No FIN: its last request arrived at most a trip after 60 s; nacos1 finds it idle 20 s
    // later (KEEP_ALIVE_TIME), probes it at the ejector's next run and gives up after the 5 s
    // detection (DETECTION_TIMEOUT); then the sync lag. The next run is 3 s (EJECTOR_DELAY)
    // after the previous one *ended*, and that one may have waited 5 s on another silent
    // connection (the test below): the invariant allows for it whether or not one exists.
    let deadline = 60_000 + 20_000 + 5_000 + 3_000 + 5_000 + TRIP + LAG;
    let off = |f: &mut Fixture| f.died(60_000, "app1", true, 0, false);
    names(&boundary(off, deadline, 60_000, "nacos1", &[]), deadline);
}

#[test]
fn a_client_that_moved_members_waits_for_its_old_copies() {
    // app1 moved from nacos1 (c1) to nacos2 (c2) across a partition healed at 30 s; nacos3 still
    // holds a stale copy of c1. A snapshot after the heal can renew it once: membership (9 s),
    // then DistroLoadDataTask's next round within 30 s and its 30 s request, then the copy's
    // 3 min clientExpiredTime and the cleaner's 5 s tick; then the sync lag.
    let deadline = 30_000 + MEMBERSHIP + 30_000 + 30_000 + 180_000 + 5_000 + LAG;
    let moved_then_killed = |f: &mut Fixture| {
        f.connect(25_000, "app1", "c2", "nacos2");
        f.drop_conn("nacos1", "c1"); // ejected by its owner...
        f.drop_conn("nacos2", "c1"); // ...whose DELETE reached nacos2 but not nacos3
        f.died(60_000, "app1", false, 30_000, false);
        for m in MEMBERS {
            f.drop_conn(m, "c2"); // the FIN and its DELETE: c2 is gone everywhere
        }
    };
    // Not at the kill's own deadline (61.112 s) nor at recovery from the heal (47.209 s).
    names(&boundary(moved_then_killed, deadline, 60_000, "nacos3", &[61_112, 200_000]), deadline);
}

#[test]
fn a_death_just_after_a_fault_waits_for_the_recovery_from_it() {
    // A fault at 55 s (nacos3 restarted, say) may hold the DELETE back until the members see each
    // other UP (9 s) and a failed sync is retried (1 s delay + 3 s timeout + 3 s retry + 100 ms
    // grid) and arrives (the sync lag): later than the kill's own 61.112 s.
    let deadline = 55_000 + MEMBERSHIP + 1_000 + 3_000 + 3_000 + 100 + LAG;
    let kill = |f: &mut Fixture| {
        f.died(60_000, "app1", false, 55_000, false);
        f.drop_conn("nacos1", "c1");
        f.drop_conn("nacos2", "c1"); // the DELETE reached nacos2, not the restarted nacos3
    };
    names(&boundary(kill, deadline, 60_000, "nacos3", &[61_112]), deadline);
}

#[test]
fn a_client_no_running_member_holds_natively_waits_for_its_copies_lease() {
    // nacos1, app1's member, lost power at 50 s and app1 had not reconnected yet: nobody verifies
    // the copies of c1 any more, and only the cleaner removes them, one lease after their last
    // renewal (before 60 s): 3 min clientExpiredTime + the cleaner's 5 s tick + 1 ms.
    let deadline = 60_000 + 180_000 + 5_000 + 1;
    let orphaned = |f: &mut Fixture| {
        f.died(50_000, "nacos1", true, 0, false);
        f.died(60_000, "app1", false, 50_000, false);
    };
    // Not at the kill's deadline, nor at recovery from nacos1's death (67.209 s).
    names(&boundary(orphaned, deadline, 60_000, "nacos2", &[61_112, 67_209]), deadline);
}

#[test]
fn an_owner_dying_in_the_same_instant_leaves_the_copies_their_lease() {
    // app1 is killed, and in the same instant nacos1 (its member) loses power: the FIN finds
    // nobody, no DELETE is sent, and the copies live out their lease from now: 3 min
    // clientExpiredTime + 5 s cleaner tick + 1 ms.
    let deadline = 60_000 + 180_000 + 5_000 + 1;
    let both = |f: &mut Fixture| {
        f.died(60_000, "app1", false, 0, false);
        f.died(60_000, "nacos1", true, 60_000, false);
    };
    names(&boundary(both, deadline, 60_000, "nacos2", &[61_112]), deadline);
}

#[test]
fn a_copy_made_after_the_death_re_arms_the_check_for_its_lease() {
    let (service, instance) = setup().apps["app1"].clone();
    let client = ClientKey::new(&instance.ip, instance.port);
    let copy_again = |f: &mut Fixture| {
        // A snapshot nacos3 took from nacos1 before the DELETE: loaded only at 70 s.
        let data = f.core("nacos1").borrow().client_sync_data(&Arc::from("c1")).expect("native");
        f.died(60_000, "app1", false, 0, false);
        for m in MEMBERS {
            f.drop_conn(m, "c1"); // the FIN, then the DELETE everywhere
        }
        assert_eq!(f.reported(60_000 + TRIP + LAG, 60_000), None, "gone in time: the check passes");
        f.core("nacos3").borrow_mut().apply_sync(t(70_000), &Arc::from("nacos1"), &Arc::from("c1"), &data);
        let source = RegisterSource::Distro;
        let note = NacosNote::InstanceRegistered {
            service: service.clone(),
            client: client.clone(),
            new_client: false,
            source,
        };
        f.watch.on_note(t(70_000), "nacos3", &note, &f.states, Some(t(60_000)));
    };
    // Nobody verifies the new copy (syncClientConnected keeps no tombstone): it lives a lease from
    // 70 s, 3 min clientExpiredTime + 5 s cleaner tick + 1 ms.
    let deadline = 70_000 + 180_000 + 5_000 + 1;
    names(&boundary(copy_again, deadline, 60_000, "nacos3", &[]), deadline);
}

#[test]
fn a_client_that_starts_again_is_not_checked() {
    let mut f = setup();
    f.died(60_000, "app1", false, 0, false);
    f.watch.started("app1");
    f.states.insert("app1".into(), ProcState::Running);
    // Back at 61 s over a new connection: its instance is everywhere again, by right.
    f.connect(61_000, "app1", "c2", "nacos2");
    for at in [60_000 + TRIP + LAG, 600_000] {
        assert_eq!(f.reported(at, 60_000), None, "at {at} ms");
    }
    // Without the restart, the same instant reports it (`forget` nothing: nacos1 still holds c1).
    let mut f = setup();
    f.died(60_000, "app1", false, 0, false);
    assert!(f.reported(60_000 + TRIP + LAG, 60_000).is_some());
}

/// app1 killed at 60 s while nacos3 was cut off, the heal in the same instant being the last
/// fault: nacos1 and nacos2 dropped it, nacos3 waits for the retried DELETE.
fn killed_while_cut_off(f: &mut Fixture) {
    f.died(60_000, "app1", false, 30_000, true);
    f.drop_conn("nacos1", "c1");
    f.drop_conn("nacos2", "c1");
}

/// nacos3 sees nacos1 UP and gets the retried DELETE only after recovery from the heal:
/// membership 9 s + 1 s delay + 3 s timeout + 3 s retry + 100 ms grid + the sync lag.
const HEALED_DEADLINE: u64 = 60_000 + MEMBERSHIP + 1_000 + 3_000 + 3_000 + 100 + LAG;

#[test]
fn a_death_while_the_network_was_not_whole_waits_for_recovery_from_the_heal() {
    // Not at the kill's own deadline, 61.112 s.
    boundary(killed_while_cut_off, HEALED_DEADLINE, 60_000, "nacos3", &[61_112]);
}

/// The report of a death in a disturbed network names the deadline the check was held to (the
/// heal + recovery), not the undisturbed one (it said "due gone by 61.112s" once).
#[test]
fn the_report_of_a_disturbed_death_names_the_deadline_it_was_held_to() {
    let report = boundary(killed_while_cut_off, HEALED_DEADLINE, 60_000, "nacos3", &[61_112]);
    names(&report, HEALED_DEADLINE);
}

#[test]
fn a_death_followed_by_another_fault_is_never_checked() {
    let mut f = setup();
    f.died(60_000, "app1", false, 0, false);
    // Another fault at 70 s: the network was last disturbed then, not at the death.
    for at in [61_112, 70_000 + RECOVERY, 70_000 + LEASE, 3_600_000] {
        assert_eq!(f.reported(at, 70_000), None, "at {at} ms");
    }
    // Were the death still the last fault, the same watch would report it: only `quiet` held it.
    assert!(f.reported(3_600_000, 60_000).is_some());
}

/// Two clients of one member lose power in the same instant (a false report once).
/// `NacosRuntimeConnectionEjector` runs with a *fixed* delay (`scheduleWithFixedDelay(1000,
/// 3000)`), and a run that probes a silent connection waits on its latch the full 5 s. If app2
/// went idle 20 s first, the run probing it can start just before app1's connection reaches
/// 20 s idle; app1 is then probed only at the run after it, 5 s + 3 s later, and dropped 5 s after
/// that: 20 + 5 + 3 + 5 = 33 s after its last request, not 28. With 28 s allowed, `routesim run`
/// of two `host_down` gRPC apps at 60 s on one server, app2 `start = "2s"`, seed 1 (there app2
/// is the one held back) ejected app1 at 84 s and app2 at 92 s, and reported grpc_gone_in_time
/// at 90.030 s (due by 89.104 s).
#[test]
fn a_powered_off_client_behind_another_silent_connection_waits_one_more_ejector_run() {
    // 20 s KEEP_ALIVE_TIME + 5 s latch of the run probing app2 + 3 s EJECTOR_DELAY + 5 s
    // DETECTION_TIMEOUT + a trip (the last request) + the sync lag.
    let deadline = 60_000 + 20_000 + 5_000 + 3_000 + 5_000 + TRIP + LAG;
    let both_off = |f: &mut Fixture| {
        f.connect(2_000, "app2", "c9", "nacos1");
        f.died(60_000, "app2", true, 0, false);
        f.died(60_000, "app1", true, 60_000, false);
    };
    let earlier = [60_000 + 20_000 + 3_000 + 5_000 + TRIP + LAG]; // the 28 s it allowed once
    names(&boundary(both_off, deadline, 60_000, "nacos1", &earlier), deadline);
}
