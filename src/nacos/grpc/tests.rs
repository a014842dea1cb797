//! The gRPC client's and server's pure rules, each against the Java it pins (Nacos 2.5.1).

use super::client::{keep_alive_due, HealthCheck, Next, Reconnect, ServerList};
use super::connections::ConnectionTable;
use super::redo::RedoService;
use super::*;
use crate::nacos::naming::{Change, NamingConfig, NamingServer};
use crate::nacos::types::{ClientKey, Instance, ServiceKey};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ChannelId;
use crate::sim::name::Name;
use std::sync::Arc;

fn ms(v: u64) -> SimDuration {
    SimDuration::from_millis(v)
}

fn at(v: u64) -> SimTime {
    SimTime(v)
}

#[test]
fn gen_next_server_starts_after_the_drawn_index_and_goes_round() {
    // NamingServerListManager: currentIndex = nextInt(3) = 1; genNextServer = ++currentIndex % 3.
    let mut l = ServerList::new(3, 1);
    assert_eq!([l.next_server(), l.next_server(), l.next_server(), l.next_server()], [2, 0, 1, 2]);
    let mut one = ServerList::new(1, 0);
    assert_eq!([one.next_server(), one.next_server()], [0, 0]);
}

#[test]
fn reconnect_sleeps_a_hundred_ms_more_per_round_of_the_list_up_to_five_seconds() {
    // RpcClient#reconnect: sleep min(retryTurns + 1, 50) * 100; retryTurns++ when
    // reConnectTimes > 0 && reConnectTimes % serverCount == 0.
    let mut one = Reconnect::default();
    let sleeps: Vec<u64> = (0..4).map(|_| one.failed(1).millis()).collect();
    assert_eq!(sleeps, [100, 200, 300, 400]);
    let mut two = Reconnect::default();
    let sleeps: Vec<u64> = (0..5).map(|_| two.failed(2).millis()).collect();
    assert_eq!(sleeps, [100, 100, 200, 200, 300]);
    let mut long = Reconnect::default();
    let last = (0..100).map(|_| long.failed(1)).last().unwrap();
    assert_eq!(last, ms(5_000), "capped at 50 turns");
    assert_eq!(long.attempts(), 100);
}

#[test]
fn the_keep_alive_thread_checks_only_a_connection_idle_for_five_seconds() {
    assert!(!keep_alive_due(at(14_999), at(10_000)));
    assert!(keep_alive_due(at(15_000), at(10_000)), ">= connectionKeepAlive");
}

#[test]
fn a_health_check_gets_four_tries_and_sleeps_only_before_the_first() {
    // healthCheckRetryTimes = 3; `while (reTryTimes >= 0) { reTryTimes--; if (reTryTimes > 1)
    // sleep(random.nextInt(500)) ... }`: tries with reTryTimes 2, 1, 0, -1 — four.
    let (mut c, first) = HealthCheck::start(321);
    assert_eq!(first, Next::Try(ms(321)));
    assert_eq!(c.try_failed(), Next::Try(ms(0)));
    assert_eq!(c.try_failed(), Next::Try(ms(0)));
    assert_eq!(c.try_failed(), Next::Try(ms(0)));
    assert_eq!(c.try_failed(), Next::Failed);
    assert_eq!(HEALTH_CHECK_RETRY_TIMES + 1, 4);
}

fn svc(name: &str) -> ServiceKey {
    ServiceKey::new("public", "DEFAULT_GROUP", name)
}

#[test]
fn redo_registers_again_only_while_connected_and_only_what_is_not_registered() {
    let mut r = RedoService::default();
    r.cache(&svc("orders"), 0);
    r.cache(&svc("pay"), 1);
    assert!(r.to_redo().is_empty(), "RedoScheduledTask#run: not connected, skip");
    r.on_connected();
    r.registered(&svc("orders"), 0);
    assert_eq!(r.to_redo(), vec![(svc("pay"), 1)]);
    r.registered(&svc("pay"), 1);
    assert!(r.to_redo().is_empty());
    // A switch: DISCONNECTED (all unregistered), then CONNECTED.
    r.on_disconnect();
    assert!(r.to_redo().is_empty());
    r.on_connected();
    assert_eq!(r.to_redo().len(), 2);
}

#[test]
fn a_second_instance_of_one_service_replaces_the_first_in_the_redo_cache() {
    // registeredInstances is keyed by the grouped service name (#9261).
    let mut r = RedoService::default();
    assert_eq!(r.cache(&svc("orders"), 0), None);
    assert_eq!(r.cache(&svc("orders"), 1), Some(0));
    r.on_connected();
    assert_eq!(r.to_redo(), vec![(svc("orders"), 1)]);
}

fn table_with(conns: &[(&str, u64)]) -> ConnectionTable {
    let mut t = ConnectionTable::default();
    for (i, (id, last)) in conns.iter().enumerate() {
        t.register(Arc::from(*id), Arc::from("app"), ChannelId(i as u64 + 1), at(*last));
    }
    t
}

#[test]
fn the_ejector_probes_connections_idle_for_twenty_seconds_or_more() {
    // `now - lastActiveTime >= KEEP_ALIVE_TIME`.
    let mut t = table_with(&[("a", 0), ("b", 1)]);
    let probed = t.start_run(at(20_000));
    assert_eq!(probed, vec![(Arc::from("a"), ms(20_000))]);
    assert_eq!(t.latch_deadline(), Some(at(25_000)), "latch.await(5000)");
}

#[test]
fn an_unanswered_probe_is_unregistered_when_the_latch_gives_up() {
    let mut t = table_with(&[("a", 0)]);
    t.start_run(at(21_000));
    let ended = t.finish_run(at(26_000), EJECTOR_DELAY);
    assert_eq!(ended.ejected.len(), 1);
    assert_eq!(ended.ejected[0].2, ms(26_000));
    assert_eq!(ended.next_run, at(29_000), "fixed delay: 3 s after the run ended");
    assert!(t.get("a").is_none());
}

#[test]
fn an_answered_probe_keeps_the_connection_and_ends_the_run_early() {
    let mut t = table_with(&[("a", 0), ("b", 0)]);
    t.start_run(at(21_000));
    assert!(!t.detection_answered("a", at(21_002)), "b still counted by the latch");
    assert!(t.detection_answered("b", at(21_003)), "the latch reached zero");
    let ended = t.finish_run(at(21_003), EJECTOR_DELAY);
    assert!(ended.ejected.is_empty());
    assert_eq!(t.get("a").unwrap().last_active, at(21_002), "freshActiveTime");
}

#[test]
fn any_request_refreshes_the_active_time() {
    let mut t = table_with(&[("a", 0)]);
    t.refresh("a", at(19_000));
    assert!(t.start_run(at(38_999)).is_empty());
    assert_eq!(t.start_run(at(39_000)).len(), 1);
}

fn instance(ip: &str, port: u16) -> Instance {
    Instance {
        ip: Name::from(ip),
        port,
        weight: 1.0,
        cluster: Arc::from("DEFAULT"),
        metadata: Arc::new(Default::default()),
        healthy: true,
        enabled: true,
    }
}

#[test]
fn a_released_connection_takes_every_instance_with_it_at_once() {
    // ConnectionBasedClientManager#clientDisconnected: no unhealthy phase, no 30 s delete.
    let mut s = NamingServer::new(NamingConfig::default(), at(0));
    let conn: Arc<str> = Arc::from("1_app_1");
    s.connect_client(&conn);
    s.register_grpc(at(1), &conn, &svc("orders"), &instance("10.1.0.1", 8080)).unwrap();
    s.register_grpc(at(1), &conn, &svc("pay"), &instance("10.1.0.1", 8081)).unwrap();
    let key = ClientKey::new(&Name::from("10.1.0.1"), 8080);
    assert!(s.instance(&svc("orders"), &key).is_some());
    assert_eq!(s.counts(&svc("orders")), (1, 1));
    let changes = s.disconnect_client(&conn);
    let Change::ConnectionReleased { published, .. } = &changes[0] else { panic!("{changes:?}") };
    assert_eq!(published, &vec![svc("orders"), svc("pay")]);
    assert!(s.instance(&svc("orders"), &key).is_none());
    assert_eq!(s.counts(&svc("pay")), (0, 0));
}

#[test]
fn a_second_registration_for_one_service_on_one_connection_replaces_the_first() {
    // AbstractClient#addServiceInstance: publishers.put(service, info) (#9261).
    let mut s = NamingServer::new(NamingConfig::default(), at(0));
    let conn: Arc<str> = Arc::from("c");
    s.connect_client(&conn);
    s.register_grpc(at(1), &conn, &svc("orders"), &instance("10.1.0.1", 8080)).unwrap();
    let changes = s.register_grpc(at(2), &conn, &svc("orders"), &instance("10.1.0.1", 8081)).unwrap();
    assert!(matches!(changes[0], Change::Deregistered { .. }), "{changes:?}");
    assert_eq!(s.counts(&svc("orders")), (1, 1));
}

#[test]
fn a_registration_on_an_unknown_connection_is_refused() {
    let mut s = NamingServer::new(NamingConfig::default(), at(0));
    assert!(s.register_grpc(at(1), &Arc::from("gone"), &svc("orders"), &instance("10.1.0.1", 8080)).is_none());
}
