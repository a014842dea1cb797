//! `nacos_recovery` and `distro_agreement`'s settling time, on the fixture of `tests_nacos`:
//! each bound written as a sum of the Java and TCP numbers it stands for.

use super::distro::settle;
use super::tests_nacos::{setup, t, Fixture, HOP};
use crate::nacos::types::CODE_RESOURCE_NOT_FOUND;
use crate::sim::clock::SimDuration;
use crate::sim::scenario::parse;
use std::path::Path;

// ---- nacos_recovery ----

/// Healed at 60 s, an instance of a one-server app is healthy again within: the read timeout
/// of a beat stuck in the black hole (50 s, `com.alibaba.nacos.client.naming.rtimeout`; the
/// 3 s connect timeout is shorter) and the handshake of the retry (2 hops); payments' beat
/// ahead of it on the app's one beat thread (a round trip, a handshake and a 20404
/// re-registration: 6 hops); one beat period (5 s; a 20404 answer carries the server's
/// `clientBeatInterval`, 5 s too); then the beat, its 20404 and the re-registration (3 hops).
const RECOVERED: u64 = 60_000 + (50_000 + 2 * HOP) + 6 * HOP + 5_000 + 3 * HOP;

/// Both instances registered at 1 s.
fn both_registered() -> Fixture {
    let mut f = setup("");
    f.register(1_000, "orders-1");
    f.register(1_000, "payments-1");
    f
}

#[test]
fn a_deleted_instance_must_be_back_by_its_recovery_bound() {
    let mut f = both_registered();
    f.checks_until(40_000); // both deleted at 36 s, during the partition
    assert_eq!(f.recovery(RECOVERED, 60_000, 0), None);
    let v = f.recovery(RECOVERED + 1, 60_000, 0).expect("still absent");
    assert!(v.contains("orders-1") && v.contains(&format!("healthy by {}", t(RECOVERED))), "{v}");
    assert!(v.contains("got absent"), "{v}");
    // A correct run: a beat after the heal gets 20404 and the client registers again.
    for name in ["orders-1", "payments-1"] {
        assert_eq!(f.beat(100_000, name), CODE_RESOURCE_NOT_FOUND);
        f.register(100_000 + 2 * HOP, name);
    }
    assert_eq!(f.recovery(RECOVERED + 1, 60_000, 0), None);
}

#[test]
fn an_unhealthy_instance_must_be_healthy_again_by_its_recovery_bound() {
    let mut f = both_registered();
    f.checks_until(21_000); // both unhealthy, and a server that never deletes them
    assert_eq!(f.held("orders-1"), Some(false));
    let by = RECOVERED - 60_000 + 25_000; // healed at 25 s
    assert_eq!(f.recovery(by, 25_000, 0), None);
    assert!(f.recovery(by + 1, 25_000, 0).is_some_and(|v| v.contains("got unhealthy")));
    // Their beats resume: ClientBeatProcessorV2 marks them healthy again.
    f.beat(30_000, "orders-1");
    f.beat(30_000 + 2 * HOP, "payments-1");
    assert_eq!(f.recovery(by + 1, 25_000, 0), None);
}

#[test]
fn a_slow_link_during_the_faults_adds_its_latency_to_the_recovery_bound() {
    // Packets still in flight on a link given 500 ms keep it; a fresh beat queues behind them.
    let mut f = both_registered();
    f.checks_until(40_000);
    assert_eq!(f.recovery(RECOVERED + 500, 60_000, 500), None);
    assert!(f.recovery(RECOVERED + 500 + 1, 60_000, 500).is_some());
}

/// A DELETE the app sent before it was killed, caught in a partition, can arrive after the
/// heal: the orphaned socket keeps retransmitting (Linux retries an orphan 8 times, about 100 s
/// at the minimum RTO) and the server removes the instance the restarted app registered. The
/// instance is due back one recovery bound after that arrival, not after the heal: the app's
/// next beat gets 20404 and it registers again.
#[test]
fn a_late_deregistration_restarts_the_recovery_bound() {
    let mut f = both_registered();
    f.beat(56_000, "orders-1");
    f.beat(56_000, "payments-1");
    let late = 70_000; // 10 s after the heal at 60 s
    f.deregister(late, "orders-1");
    assert_eq!(f.held("orders-1"), None);
    let bound = late + (50_000 + 2 * HOP) + 6 * HOP + 5_000 + 3 * HOP;
    assert_eq!(f.recovery(bound, 60_000, 0), None, "a removal the server was asked for");
    let v = f.recovery(bound + 1, 60_000, 0).expect("still absent after its bound");
    assert!(v.contains(&format!("healthy by {}", t(bound))), "{v}");
    assert!(v.contains(&format!("a deregistration of it arrived at {}", t(late))), "{v}");
    // The app beats on: 20404, and it registers again.
    assert_eq!(f.beat(late + 5_000, "orders-1"), CODE_RESOURCE_NOT_FOUND);
    f.register(late + 5_000 + 2 * HOP, "orders-1");
    assert_eq!(f.recovery(bound + 1, 60_000, 0), None);
}

// ---- distro_agreement ----

const CLUSTER: &str = r#"
[scenario]
name = "t"
duration = "10m"
invariants = ["distro_agreement"]

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
service = "orders"
ip = "10.1.0.1"
"#;

#[test]
fn distro_settles_after_the_documented_java_timings() {
    let s = parse(Path::new("t.toml"), CLUSTER).expect("the fixture parses");
    // Membership: MemberInfoReportTask reports every 2 s to one of the 2 peers in turn, a report
    // under way at the heal waits out the 3 s connect timeout (its read timeout is 2.5 s), and
    // the next run is 2 s on.
    let membership = 2_000 * 2 + 3_000 + 2_000;
    // A restarted member's snapshot: DistroLoadDataTask's next round within 30 s
    // (loadDataRetryDelayMillis) and its 30 s request (loadDataTimeoutMillis); then the copies'
    // clientExpiredTime (3 min) and the ExpiredClientCleaner's next 5 s run.
    let copies = 30_000 + 30_000 + 180_000 + 5_000;
    // The 1.x client's way back (50 s rtimeout, 3 tries' 3 s connect, a 5 s beat) is shorter.
    assert!(50_000 + 3 * 3_000 + 5_000 < copies);
    // Sync repair: syncDelayMillis 1 s, a lost request's syncTimeoutMillis 3 s, the
    // syncRetryDelayMillis 3 s, the 100 ms engine tick; verify repair: verifyIntervalMillis 5 s,
    // verifyTimeoutMillis 3 s, the tick.
    let repair = (1_000 + 3_000 + 3_000 + 100) + (5_000 + 3_000 + 100);
    assert_eq!(settle(&s), SimDuration(membership + copies + repair));
    assert_eq!(settle(&s), SimDuration(269_200), "with the defaults and three members");
}
