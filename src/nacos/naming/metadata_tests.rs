//! The operator's changes at runtime: console metadata (`updateInstance`,
//! `NamingMetadataManager`, `ExpiredMetadataCleaner`) and the switches (`SwitchManager#update`).

use super::tests::{beat_reply, instance, key, light, server, svc};
use super::*;
use crate::nacos::types::{HEART_BEAT_INTERVAL_KEY, HEART_BEAT_TIMEOUT_KEY, IP_DELETE_TIMEOUT_KEY};
use crate::nacos::wire::DeregisterReq;
use crate::sim::name::Name;

fn md(pairs: &[(&str, &str)]) -> Arc<Metadata> {
    Arc::new(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
}

fn update(s: &mut NamingServer, at: u64, port: u16, pairs: &[(&str, &str)]) -> Result<Vec<Change>, String> {
    s.update_instance(SimTime(at), &svc("orders"), &key(port), &Arc::from("DEFAULT"), md(pairs))
}

fn register(s: &mut NamingServer, at: u64, port: u16, pairs: &[(&str, &str)]) {
    s.register(SimTime(at), &svc("orders"), &instance(port, pairs), RegisterSource::Request);
}

fn deregister(s: &mut NamingServer, at: u64, port: u16) {
    let req = DeregisterReq { service: svc("orders"), cluster: Arc::from("DEFAULT"), ip: Name::from("10.0.0.1"), port };
    s.deregister(SimTime(at), &req);
}

#[test]
fn console_metadata_changes_the_checkers_timeouts_at_once() {
    // Nacos UnhealthyInstanceChecker#getTimeout: NamingMetadataManager's metadata first
    let mut s = server();
    register(&mut s, 0, 8080, &[]);
    let changes = update(&mut s, 1_000, 8080, &[(HEART_BEAT_TIMEOUT_KEY, "3000"), (IP_DELETE_TIMEOUT_KEY, "4000")]);
    let t = Timeouts { beat: 3000, delete: 4000, skip: false, interval: None };
    assert!(matches!(&changes.unwrap()[..], [Change::MetadataUpdated { timeouts: Some(x), .. }] if *x == t));
    assert_eq!(s.run_due(SimTime(5_000)).len(), 2, "5 s of silence > 3 s and > 4 s: both checkers fire");
    assert!(s.instance(&svc("orders"), &key(8080)).is_none());
}

#[test]
fn a_key_the_console_map_lacks_falls_back_to_the_register_time_metadata() {
    // Nacos UnhealthyInstanceChecker#getTimeout: if (!timeout.isPresent()) instance.getExtendDatum()
    let mut s = server();
    register(&mut s, 0, 8080, &[(HEART_BEAT_TIMEOUT_KEY, "3000")]);
    update(&mut s, 1_000, 8080, &[("owner", "ops")]).unwrap();
    assert_eq!(s.instance(&svc("orders"), &key(8080)).unwrap().timeouts.beat, 3000);
}

#[test]
fn an_update_for_a_service_the_server_does_not_know_is_refused() {
    // Nacos InstanceOperatorClientImpl#updateInstance: !containSingleton(service) -> INVALID_PARAM
    let mut s = server();
    let err = update(&mut s, 0, 8080, &[(HEART_BEAT_TIMEOUT_KEY, "3000")]).unwrap_err();
    assert!(err.contains("service not found"), "{err}");
}

#[test]
fn the_beat_answer_carries_the_console_interval_even_for_an_unknown_instance() {
    // Nacos InstanceOperatorClientImpl#getHeartBeatInterval: metadataManager first, by ip:port:cluster
    let mut s = server();
    register(&mut s, 0, 8080, &[]);
    update(&mut s, 1_000, 8080, &[(HEART_BEAT_INTERVAL_KEY, "2000")]).unwrap();
    let (answer, _) = s.handle_beat(SimTime(2_000), &light("orders", 8080));
    assert_eq!(beat_reply(&answer).client_beat_interval, 2000);
    deregister(&mut s, 3_000, 8080);
    let (answer, _) = s.handle_beat(SimTime(4_000), &light("orders", 8080));
    let reply = beat_reply(&answer);
    assert_eq!((reply.code, reply.client_beat_interval), (crate::nacos::types::CODE_RESOURCE_NOT_FOUND, 2000));
}

#[test]
fn console_metadata_outlives_a_re_registration_within_sixty_seconds() {
    // Nacos NamingMetadataManager#handleInstanceMetadataEvent: expired=false on register unmarks it
    let mut s = server();
    register(&mut s, 0, 8080, &[]);
    update(&mut s, 1_000, 8080, &[(HEART_BEAT_TIMEOUT_KEY, "3000")]).unwrap();
    deregister(&mut s, 2_000, 8080);
    register(&mut s, 50_000, 8080, &[]);
    assert_eq!(s.instance(&svc("orders"), &key(8080)).unwrap().timeouts.beat, 3000);
}

#[test]
fn the_expired_metadata_cleaner_deletes_it_sixty_seconds_after_its_instance_went() {
    // Nacos ExpiredMetadataCleaner#doClean: currentTime - createTime > expiredMetadataExpiredTime (60 s),
    // every 5 s from 5 s after start-up
    let mut s = server();
    register(&mut s, 0, 8080, &[]);
    update(&mut s, 1_000, 8080, &[(HEART_BEAT_TIMEOUT_KEY, "3000")]).unwrap();
    deregister(&mut s, 2_000, 8080);
    // Marked at 2 s: the first tick more than 60 s later is 65 s.
    assert!(s.console_entries(SimTime(64_999)).len() == 1);
    assert!(s.console_entries(SimTime(65_000)).is_empty());
    register(&mut s, 66_000, 8080, &[]);
    assert_eq!(s.instance(&svc("orders"), &key(8080)).unwrap().timeouts.beat, 15_000);
}

#[test]
fn switches_change_what_every_beat_answer_says() {
    // Nacos SwitchManager#update: Long.parseLong(clientBeatInterval), no range check; InstanceController#beat
    let mut s = server();
    register(&mut s, 0, 8080, &[]);
    s.set_switches(Switches { client_beat_interval: Some(-1), light_beat_enabled: Some(false) });
    let (answer, _) = s.handle_beat(SimTime(5_000), &light("orders", 8080));
    let reply = beat_reply(&answer);
    assert_eq!((reply.client_beat_interval, reply.light_beat_enabled), (-1, false));
    // The instance's own preserved.heart.beat.interval still wins over the switch (#3353).
    register(&mut s, 6_000, 8081, &[(HEART_BEAT_INTERVAL_KEY, "2000")]);
    let (answer, _) = s.handle_beat(SimTime(7_000), &light("orders", 8081));
    assert_eq!(beat_reply(&answer).client_beat_interval, 2000);
}
