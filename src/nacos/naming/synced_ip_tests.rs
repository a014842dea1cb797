//! Distro for 1.x `IpPortBasedClient`s against `EphemeralIpPortClientManager` (`isResponsibleClient`,
//! `verifyClient` → `ClientBeatUpdateTask`, `ExpiredClientCleaner`), `DistroClientDataProcessor`
//! (`upgradeClient`, `isInvalidClient`) and `InstanceBeatCheckResponsibleInterceptor`.
//!
//! Two members, `nacos1` and `nacos2`. `DistroMapper` hashes `10.0.0.1:8080` to 1643343804 and
//! `10.0.0.1:8081` to one less (see `cluster::distro_tests`): over two healthy members the first
//! maps to index 0 (`nacos1`), the second to index 1 (`nacos2`).

use super::synced_ip::ip_client_key;
use super::tests::{instance, key, svc};
use super::*;
use crate::nacos::cluster::{DistroMapper, MemberView};

fn at(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}

/// `me`'s mapper with `peers` all UP in its view.
fn mapper(me: &str, peers: &[&str]) -> DistroMapper {
    DistroMapper::from_view(&MemberView::new(me, peers.iter().map(|p| Arc::from(*p))))
}

/// A clustered member started at 0 that sees both members UP.
fn member(me: &str) -> NamingServer {
    let mut s = NamingServer::new(NamingConfig::default(), at(0));
    s.enable_distro();
    s.set_mapper(mapper(me, &["nacos1", "nacos2"]), at(0));
    s
}

fn id(port: u16) -> Arc<str> {
    Arc::from(key(port).to_string())
}

/// `nacos1` owns `10.0.0.1:8080` (registered at 1 s) and `nacos2` holds the copy (synced at 2 s).
fn owner_and_copy() -> (NamingServer, NamingServer) {
    let mut owner = member("nacos1");
    owner.register(at(1_000), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let mut copy = member("nacos2");
    let data = owner.client_sync_data(&id(8080)).expect("owned here");
    copy.apply_sync(at(2_000), &Arc::from("nacos1"), &id(8080), &data);
    (owner, copy)
}

#[test]
fn distro_ids_with_a_hash_are_ip_port_clients() {
    // `ClientManagerDelegate#getClientManagerById`: no `#` → a connection id.
    assert_eq!(ip_client_key("10.0.0.1:8080#true"), Some(key(8080)));
    assert_eq!(ip_client_key("1700000000000_10.0.0.1_50000"), None);
}

#[test]
fn only_the_responsible_member_syncs_a_change() {
    // `syncToAllServer` skips a client `isResponsibleClient` refuses.
    let mut s = member("nacos1");
    s.register(at(1_000), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    assert_eq!(s.take_distro_dirty(), vec![(id(8080), false)]);
    s.register(at(1_000), &svc("orders"), &instance(8081, &[]), RegisterSource::Request);
    assert!(s.take_distro_dirty().is_empty(), "10.0.0.1:8081 is nacos2's");
    let verify: Vec<Arc<str>> = s.verify_data().into_iter().map(|(c, _)| c).collect();
    assert_eq!(verify, vec![id(8080)], "getVerifyData: responsible clients only");
}

#[test]
fn a_copy_gets_the_instance_and_the_owners_revision() {
    let (owner, copy) = owner_and_copy();
    let p = copy.instance(&svc("orders"), &key(8080)).expect("synced");
    assert!(p.healthy);
    assert_eq!(copy.client(&key(8080)).unwrap().revision, owner.client(&key(8080)).unwrap().revision);
    assert!(!copy.client(&key(8080)).unwrap().responsible);
}

#[test]
fn a_copy_is_never_beat_checked_but_expires_unverified_after_client_expired_time() {
    // The copy hears no beats (they go to the owner). Its own checks are intercepted, so it never
    // turns unhealthy; the cleaner removes it once `lastUpdatedTime` (its creation at 2 s) is
    // more than 3 min old, on the cleaner's 5 s grid from 0: at 185 s.
    let (_, mut copy) = owner_and_copy();
    let changes = copy.run_due(at(180_000));
    assert!(changes.is_empty(), "{changes:?}");
    assert!(copy.instance(&svc("orders"), &key(8080)).is_some_and(|p| p.healthy));
    let changes = copy.run_due(at(185_000));
    assert!(matches!(&changes[..], [Change::ClientRemoved { client, .. }] if *client == key(8080)), "{changes:?}");
}

#[test]
fn verify_renews_the_copy_and_a_revision_mismatch_fails() {
    let (owner, mut copy) = owner_and_copy();
    let revision = owner.client(&key(8080)).unwrap().revision;
    assert!(copy.verify_client(at(170_000), &id(8080), revision));
    assert!(copy.run_due(at(185_000)).is_empty(), "renewed at 170 s: good until after 350 s");
    assert!(!copy.verify_client(at(175_000), &id(8080), revision + 1), "the owner must re-sync");
    assert!(copy.verify_client(at(175_000), &id(8080), 0), "0 is an old owner's: always accepted");
    assert!(!copy.verify_client(at(175_000), &id(8081), 0), "no such copy");
}

#[test]
fn a_member_that_becomes_responsible_checks_from_the_last_verify() {
    // The owner leaves nacos2's view. nacos2 now maps 10.0.0.1:8080 to itself, and the copy's
    // beat check (grid: created at 2 s, ticks at 7 s + 5 s·k) finds it silent since the last
    // verify (20 s): unhealthy at the first tick past 35 s, i.e. 37 s.
    let (_, mut copy) = owner_and_copy();
    assert!(copy.verify_client(at(20_000), &id(8080), 0));
    let taken = copy.set_mapper(mapper("nacos2", &[]), at(21_000));
    assert_eq!(taken, vec![key(8080)]);
    assert!(copy.run_due(at(36_999)).is_empty());
    let changes = copy.run_due(at(37_000));
    assert!(matches!(&changes[..], [Change::Unhealthy { client, .. }] if *client == key(8080)), "{changes:?}");
    // The new owner's change goes out to the others.
    assert_eq!(copy.take_distro_dirty().last(), Some(&(id(8080), false)));
}

#[test]
fn the_owners_changes_reach_the_copy() {
    // Unhealthy on the owner (15 s after the last beat, on its grid 6 s + 5 s·k: 21 s) → a CHANGE
    // with healthy false; then deleted at the first tick where the silence exceeds 30 s, 36 s (at 31 s it is exactly
    // 30 s: strict `>`) → a CHANGE without the instance.
    let (mut owner, mut copy) = owner_and_copy();
    owner.take_distro_dirty();
    assert!(matches!(&owner.run_due(at(21_000))[..], [Change::Unhealthy { .. }]));
    assert_eq!(owner.take_distro_dirty(), vec![(id(8080), false)]);
    let data = owner.client_sync_data(&id(8080)).unwrap();
    copy.apply_sync(at(22_000), &Arc::from("nacos1"), &id(8080), &data);
    assert!(copy.instance(&svc("orders"), &key(8080)).is_some_and(|p| !p.healthy));
    assert!(owner.run_due(at(31_000)).is_empty());
    assert!(matches!(&owner.run_due(at(36_000))[..], [Change::Expired { .. }]));
    let data = owner.client_sync_data(&id(8080)).unwrap();
    let changes = copy.apply_sync(at(37_000), &Arc::from("nacos1"), &id(8080), &data);
    assert!(matches!(&changes[..], [Change::Deregistered { .. }]), "{changes:?}");
    assert!(copy.instance(&svc("orders"), &key(8080)).is_none());
}

#[test]
fn a_delete_removes_the_copy_with_its_instances() {
    let (_, mut copy) = owner_and_copy();
    let changes = copy.apply_delete(&id(8080));
    assert!(
        matches!(&changes[..], [Change::ConnectionReleased { published, .. }] if published == &[svc("orders")]),
        "{changes:?}"
    );
    assert!(copy.client(&key(8080)).is_none());
    assert!(copy.take_distro_dirty().is_empty(), "a copy's removal is not synced on");
}
