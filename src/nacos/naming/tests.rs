//! The naming server's operations: registration, deregistration, every branch of `handleBeat`,
//! `getHeartBeatInterval`, and list queries with their UDP subscription and cached data.

use super::*;
use crate::nacos::beat::BeatInfo;
use crate::nacos::types::{Instance, CODE_OK, CODE_RESOURCE_NOT_FOUND, HEART_BEAT_INTERVAL_KEY};
use crate::nacos::wire::{Answer, BeatReply, BeatReq, DeregisterReq, ListReq};
use crate::sim::name::Name;

pub(crate) fn svc(name: &str) -> ServiceKey {
    ServiceKey::new("public", "DEFAULT_GROUP", name)
}

pub(crate) fn instance(port: u16, metadata: &[(&str, &str)]) -> Instance {
    Instance {
        ip: Name::from("10.0.0.1"),
        port,
        weight: 1.0,
        cluster: Arc::from("DEFAULT"),
        metadata: Arc::new(metadata.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
        healthy: true,
        enabled: true,
    }
}

pub(crate) fn key(port: u16) -> ClientKey {
    ClientKey::new(&Name::from("10.0.0.1"), port)
}

/// A light beat (no body) for `svc(name)` from `10.0.0.1:port`.
pub(crate) fn light(name: &str, port: u16) -> BeatReq {
    BeatReq { service: svc(name), cluster: Name::new("DEFAULT"), ip: Name::from("10.0.0.1"), port, body: None }
}

/// A full beat, its body built from `instance(port, metadata)`.
pub(crate) fn full(name: &str, port: u16, metadata: &[(&str, &str)]) -> BeatReq {
    let info = BeatInfo::new(svc(name), &instance(port, metadata), SimDuration(5000));
    BeatReq { body: Some(Arc::new(info)), ..light(name, port) }
}

pub(crate) fn beat_reply(a: &Answer) -> BeatReply {
    match a {
        Answer::Beat(r) => *r,
        other => panic!("expected a beat answer, got {other:?}"),
    }
}

pub(crate) fn server() -> NamingServer {
    NamingServer::new(NamingConfig::default(), SimTime::ZERO)
}

#[test]
fn registering_creates_the_client_and_a_healthy_instance() {
    // Nacos EphemeralClientOperationServiceImpl#registerInstance
    let mut s = server();
    let changes = s.register(SimTime(1), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    assert_eq!(
        changes,
        [Change::Registered {
            service: svc("orders"),
            client: key(8080),
            new_client: true,
            source: RegisterSource::Request
        }]
    );
    let p = s.instance(&svc("orders"), &key(8080)).unwrap();
    assert!(p.healthy);
    assert_eq!(p.last_heart_beat, SimTime(1));
    assert_eq!(s.counts(&svc("orders")), (1, 1));
}

#[test]
fn re_registering_resets_the_last_beat_and_health() {
    // Nacos IpPortBasedClient#addServiceInstance replaces the publish info
    let mut s = server();
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    s.check_client(&key(8080), SimTime(20_000), &mut Vec::new());
    assert!(!s.instance(&svc("orders"), &key(8080)).unwrap().healthy);
    let changes = s.register(SimTime(21_000), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    assert!(matches!(changes[0], Change::Registered { new_client: false, .. }));
    let p = s.instance(&svc("orders"), &key(8080)).unwrap();
    assert!(p.healthy);
    assert_eq!(p.last_heart_beat, SimTime(21_000));
}

#[test]
fn deregistering_removes_the_instance_but_keeps_the_client_for_the_cleaner() {
    // Nacos EphemeralClientOperationServiceImpl#deregisterInstance
    let mut s = server();
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let req =
        DeregisterReq { service: svc("orders"), cluster: Arc::from("other"), ip: Name::from("10.0.0.1"), port: 8080 };
    let changes = s.deregister(SimTime(10), &req);
    assert_eq!(changes, [Change::Deregistered { service: svc("orders"), client: key(8080) }], "cluster ignored");
    assert!(s.instance(&svc("orders"), &key(8080)).is_none());
    assert_eq!(s.client(&key(8080)).unwrap().last_updated, SimTime(10));
    assert!(s.deregister(SimTime(11), &req).is_empty(), "nothing left to remove");
}

#[test]
fn a_light_beat_from_an_unknown_instance_gets_resource_not_found() {
    // Nacos InstanceOperatorClientImpl#handleBeat branch (A): null == clientBeat -> RESOURCE_NOT_FOUND
    let mut s = server();
    let (answer, changes) = s.handle_beat(SimTime(5), &light("orders", 8080));
    assert_eq!(
        beat_reply(&answer),
        BeatReply { client_beat_interval: 5000, code: CODE_RESOURCE_NOT_FOUND, light_beat_enabled: true }
    );
    assert!(changes.is_empty());
    assert_eq!(s.client_count(), 0, "nothing is created");
}

#[test]
fn a_light_beat_for_a_service_the_client_does_not_publish_gets_resource_not_found() {
    // Nacos InstanceOperatorClientImpl#handleBeat: !client.getAllPublishedService().contains(service)
    let mut s = server();
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let (answer, _) = s.handle_beat(SimTime(5), &light("pay", 8080));
    assert_eq!(beat_reply(&answer).code, CODE_RESOURCE_NOT_FOUND);
}

#[test]
fn a_full_beat_from_an_unknown_instance_registers_it_from_the_body() {
    // Nacos InstanceOperatorClientImpl#handleBeat branch (B): BeatInfoInstanceBuilder + registerInstance
    let mut s = server();
    let (answer, changes) = s.handle_beat(SimTime(5), &full("orders", 8080, &[("k", "v")]));
    assert_eq!(beat_reply(&answer).code, CODE_OK);
    assert!(matches!(changes[0], Change::Registered { source: RegisterSource::FullBeat, new_client: true, .. }));
    let p = s.instance(&svc("orders"), &key(8080)).unwrap();
    assert!(p.healthy);
    assert_eq!(p.metadata.get("k").map(String::as_str), Some("v"));
}

#[test]
fn a_beat_for_a_missing_service_singleton_is_a_server_error() {
    // Nacos InstanceOperatorClientImpl#handleBeat branch (C): NacosException(SERVER_ERROR, "service not found")
    let mut s = server();
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    s.remove_service_singleton(&svc("orders"));
    let (answer, _) = s.handle_beat(SimTime(5), &light("orders", 8080));
    match answer {
        Answer::Error { status, message } => {
            assert_eq!(status, 500);
            assert_eq!(&*message, "service not found: DEFAULT_GROUP@@orders@public");
        }
        other => panic!("expected HTTP 500, got {other:?}"),
    }
}

#[test]
fn a_beat_refreshes_silently_and_flips_an_unhealthy_instance_back() {
    // Nacos ClientBeatProcessorV2#run: setLastHeartBeatTime; only !healthy publishes ServiceChangedEvent
    let mut s = server();
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let rev = s.revision();
    let (answer, changes) = s.handle_beat(SimTime(5_000), &light("orders", 8080));
    assert_eq!(beat_reply(&answer).code, CODE_OK);
    assert!(changes.is_empty(), "a healthy instance's beat produces no event");
    assert_eq!(s.revision(), rev);
    assert_eq!(s.client(&key(8080)).unwrap().last_updated, SimTime(5_000));
    s.check_client(&key(8080), SimTime(25_000), &mut Vec::new());
    let (_, changes) = s.handle_beat(SimTime(26_000), &light("orders", 8080));
    assert_eq!(
        changes,
        [Change::HealthyAgain { service: svc("orders"), client: key(8080), silent: SimDuration(21_000) }]
    );
    assert!(s.instance(&svc("orders"), &key(8080)).unwrap().healthy);
}

#[test]
fn a_steady_beat_answers_as_handle_beat_and_leaves_every_other_beat_untouched() {
    // The server tries `beat_steady` first: it must answer a known healthy instance exactly as
    // `handle_beat` would, and change nothing when it declines (a flip, or an unknown beat).
    let beat = light("orders", 8080);
    let (mut steady, mut general) = (server(), server());
    for s in [&mut steady, &mut general] {
        s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    }
    let reply = steady.beat_steady(SimTime(5_000), &beat).expect("a known healthy instance is steady");
    let (answer, changes) = general.handle_beat(SimTime(5_000), &beat);
    assert_eq!(reply, beat_reply(&answer));
    assert!(changes.is_empty());
    for s in [&steady, &general] {
        assert_eq!(s.instance(&svc("orders"), &key(8080)).unwrap().last_heart_beat, SimTime(5_000));
        assert_eq!(s.client(&key(8080)).unwrap().last_updated, SimTime(5_000));
    }
    // Unhealthy: the flip back is handle_beat's (it reports it), so the steady path declines.
    steady.check_client(&key(8080), SimTime(25_000), &mut Vec::new());
    let rev = steady.revision();
    assert_eq!(steady.beat_steady(SimTime(26_000), &beat), None);
    assert!(!steady.instance(&svc("orders"), &key(8080)).unwrap().healthy);
    assert_eq!(steady.instance(&svc("orders"), &key(8080)).unwrap().last_heart_beat, SimTime(5_000));
    assert_eq!(steady.revision(), rev);
    // Unknown to the server: 20404 is handle_beat's answer.
    assert_eq!(steady.beat_steady(SimTime(26_000), &light("orders", 9090)), None);
}

#[test]
fn the_beat_interval_answer_comes_from_metadata_before_the_switch() {
    // Nacos InstanceOperatorClientImpl#getHeartBeatInterval: extendDatum, then switchDomain (#3353)
    let mut s = server();
    s.register(SimTime(0), &svc("a"), &instance(1, &[(HEART_BEAT_INTERVAL_KEY, "2000")]), RegisterSource::Request);
    s.register(SimTime(0), &svc("b"), &instance(2, &[(HEART_BEAT_INTERVAL_KEY, "2s")]), RegisterSource::Request);
    s.register(SimTime(0), &svc("c"), &instance(3, &[]), RegisterSource::Request);
    assert_eq!(s.heart_beat_interval(&svc("a"), &key(1), &Arc::from("DEFAULT")), 2000);
    assert_eq!(
        s.heart_beat_interval(&svc("b"), &key(2), &Arc::from("DEFAULT")),
        0,
        "ConvertUtils.toLong: non-numeric -> 0"
    );
    assert_eq!(s.heart_beat_interval(&svc("c"), &key(3), &Arc::from("DEFAULT")), 5000);
    let (answer, _) = s.handle_beat(SimTime(1), &light("a", 1));
    assert_eq!(beat_reply(&answer).client_beat_interval, 2000);
}

#[test]
fn the_answer_carries_the_light_beat_switch() {
    // Nacos InstanceController#beat: result.put("lightBeatEnabled", switchDomain.isLightBeatEnabled())
    let config = NamingConfig { light_beat_enabled: false, ..NamingConfig::default() };
    let mut s = NamingServer::new(config, SimTime::ZERO);
    let (answer, _) = s.handle_beat(SimTime(1), &full("orders", 8080, &[]));
    assert!(!beat_reply(&answer).light_beat_enabled);
}

fn list_req(name: &str, healthy_only: bool) -> ListReq {
    ListReq { service: svc(name), client_ip: Name::from("10.9.0.1"), udp_port: 54951, healthy_only }
}

#[test]
fn a_list_query_with_a_udp_port_subscribes_once_and_answers_from_the_cache() {
    // Nacos InstanceOperatorClientImpl#listInstance + ServiceStorage#getData + ClientServiceIndexesManager (#5404)
    let mut s = server();
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let (info, changes) = s.list(SimTime(100), &list_req("orders", false));
    assert_eq!(info.hosts.len(), 1);
    assert_eq!(info.last_ref_time, SimTime(100));
    assert_eq!(info.cache_millis, 10_000);
    let sub = ClientKey::new(&Name::from("10.9.0.1"), 54951);
    assert_eq!(changes, [Change::Subscribed { service: svc("orders"), subscriber: sub.clone() }]);
    assert!(s.list(SimTime(200), &list_req("orders", false)).1.is_empty(), "announced once");
    assert_eq!(s.subscribers_of(&svc("orders")).collect::<Vec<_>>(), [&sub]);
    // The cache is only refreshed by the push task: a health change shows after getPushData.
    s.check_client(&key(8080), SimTime(20_000), &mut Vec::new());
    assert!(s.list(SimTime(20_001), &list_req("orders", false)).0.hosts[0].healthy, "stale cache");
    s.push_data(SimTime(20_500), &svc("orders"));
    assert!(!s.list(SimTime(20_501), &list_req("orders", false)).0.hosts[0].healthy);
    assert!(s.list(SimTime(20_502), &list_req("orders", true)).0.hosts.is_empty(), "healthyOnly");
}

#[test]
fn one_ip_port_client_publishes_one_instance_per_service() {
    // Nacos IpPortBasedClient: clientId "ip:port#true"; publishers keyed by Service
    let mut s = server();
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let changes = s.register(SimTime(1), &svc("pay"), &instance(8080, &[]), RegisterSource::Request);
    assert!(matches!(changes[0], Change::Registered { new_client: false, .. }), "the same client");
    assert_eq!(s.client_count(), 1);
    assert_eq!(s.client(&key(8080)).unwrap().publishers.len(), 2);
    // A beat for one service refreshes only that service's instance.
    s.handle_beat(SimTime(4_000), &light("pay", 8080));
    assert_eq!(s.instance(&svc("orders"), &key(8080)).unwrap().last_heart_beat, SimTime(0));
    assert_eq!(s.instance(&svc("pay"), &key(8080)).unwrap().last_heart_beat, SimTime(4_000));
}

#[test]
fn services_are_told_apart_by_namespace_and_group() {
    // Nacos Service#equals: namespace, group, name
    let mut s = server();
    let dev = ServiceKey::new("dev", "DEFAULT_GROUP", "orders");
    let other_group = ServiceKey::new("public", "G", "orders");
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    s.register(SimTime(0), &dev, &instance(8081, &[]), RegisterSource::Request);
    s.register(SimTime(0), &other_group, &instance(8082, &[]), RegisterSource::Request);
    for k in [svc("orders"), dev, other_group] {
        assert_eq!(s.counts(&k), (1, 1), "{k}");
    }
}

#[test]
fn steady_beats_find_their_own_instance_in_any_order_from_any_client() {
    // A steady beat tries the last beat's client and the entry after the last beat's instance
    // first (`beat_known`); whatever those point at, each beat must refresh its own instance.
    let mut s = server();
    for name in ["a", "b", "c"] {
        s.register(SimTime(0), &svc(name), &instance(8080, &[]), RegisterSource::Request);
    }
    s.register(SimTime(0), &svc("a"), &instance(8081, &[]), RegisterSource::Request);
    let beats = [("c", 8080), ("a", 8080), ("a", 8081), ("b", 8080), ("b", 8080), ("a", 8081), ("c", 8080)];
    for (i, (name, port)) in beats.into_iter().enumerate() {
        let now = SimTime(1000 + i as u64);
        assert!(s.beat_steady(now, &light(name, port)).is_some(), "beat {i} is steady");
        assert_eq!(s.instance(&svc(name), &key(port)).unwrap().last_heart_beat, now, "beat {i}");
    }
    let last = |name: &str, port: u16| s.instance(&svc(name), &key(port)).unwrap().last_heart_beat;
    assert_eq!(
        [last("a", 8080), last("b", 8080), last("c", 8080), last("a", 8081)],
        [1001, 1004, 1006, 1005].map(SimTime)
    );
    // A service this client does not publish is not steady, wherever the guesses point.
    assert!(s.beat_steady(SimTime(2000), &light("b", 8081)).is_none());
}
