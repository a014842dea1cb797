//! Distro copies of gRPC clients against `DistroClientDataProcessor#upgradeClient`,
//! `ConnectionBasedClientManager#verifyClient` and its `ExpiredClientCleaner`.

use super::tests::{instance, key, svc};
use super::*;

fn at(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}

/// An owner with one native connection publishing `orders` at port 8080.
fn owner() -> (NamingServer, Arc<str>) {
    let mut s = NamingServer::new(NamingConfig::default(), at(0));
    s.enable_distro();
    let conn: Arc<str> = Arc::from("c1");
    s.connect_client(&conn);
    s.register_grpc(at(1_000), &conn, &svc("orders"), &instance(8080, &[])).unwrap();
    (s, conn)
}

#[test]
fn an_owners_registration_is_marked_for_a_change_and_its_disconnect_for_a_delete() {
    // `ClientChangedEvent` → CHANGE; `ClientDisconnectEvent` → DELETE (`syncToAllServer`).
    let (mut s, conn) = owner();
    assert_eq!(s.take_distro_dirty(), vec![(conn.clone(), false)]);
    s.disconnect_client(&conn);
    assert_eq!(s.take_distro_dirty(), vec![(conn, true)]);
}

#[test]
fn a_copy_takes_the_owners_instances_and_revision_and_is_not_synced_onward() {
    let (o, conn) = owner();
    let data = o.client_sync_data(&conn).unwrap();
    assert_eq!(data.revision, 1);
    let mut r = NamingServer::new(NamingConfig::default(), at(0));
    r.enable_distro();
    let changes = r.apply_sync(at(2_000), &Arc::from("nacos1"), &conn, &data);
    assert!(matches!(&changes[..], [Change::Registered { source: RegisterSource::Distro, .. }]));
    assert_eq!(r.counts(&svc("orders")), (1, 1));
    // `isInvalidClient`: a copy is not this member's to sync, nor to verify.
    assert!(r.take_distro_dirty().is_empty());
    assert!(r.verify_data().is_empty());
    // The same data again changes nothing (`InstancePublishInfo#equals`).
    assert!(r.apply_sync(at(3_000), &Arc::from("nacos1"), &conn, &data).is_empty());
}

#[test]
fn a_change_without_a_service_removes_it_from_the_copy() {
    let (o, conn) = owner();
    let mut r = NamingServer::new(NamingConfig::default(), at(0));
    r.apply_sync(at(2_000), &Arc::from("nacos1"), &conn, &o.client_sync_data(&conn).unwrap());
    let empty = ConnSyncData { instances: Vec::new(), revision: 2 };
    let changes = r.apply_sync(at(3_000), &Arc::from("nacos1"), &conn, &empty);
    assert_eq!(changes, vec![Change::Deregistered { service: svc("orders"), client: key(8080) }]);
    assert_eq!(r.counts(&svc("orders")), (0, 0));
}

#[test]
fn verify_renews_a_copy_only_when_the_revisions_agree() {
    let (o, conn) = owner();
    let mut r = NamingServer::new(NamingConfig::default(), at(0));
    r.apply_sync(at(2_000), &Arc::from("nacos1"), &conn, &o.client_sync_data(&conn).unwrap());
    assert!(r.verify_client(at(5_000), &conn, 1));
    assert!(!r.verify_client(at(6_000), &conn, 2), "a revision mismatch fails: the owner re-syncs");
    assert!(r.verify_client(at(7_000), &conn, 0), "0 is an old owner's: always accepted");
    assert!(!r.verify_client(at(7_000), &Arc::from("unknown"), 1));
}

#[test]
fn a_copy_nobody_renews_expires_strictly_after_the_client_expired_time() {
    // `isExpire`: `currentTime - lastRenewTime > clientExpiredTime` (3 min).
    let (o, conn) = owner();
    let mut r = NamingServer::new(NamingConfig::default(), at(0));
    r.apply_sync(at(2_000), &Arc::from("nacos1"), &conn, &o.client_sync_data(&conn).unwrap());
    r.verify_client(at(5_000), &conn, 1);
    assert!(r.expire_copies(at(185_000)).is_empty());
    let gone = r.expire_copies(at(185_001));
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].1, 180_001);
    assert_eq!(r.counts(&svc("orders")), (0, 0));
    // The owner's own client never expires this way.
    let mut o = o;
    assert!(o.expire_copies(at(1_000_000)).is_empty());
}

#[test]
fn a_delete_removes_a_copy_but_never_a_native_client() {
    let (mut o, conn) = owner();
    let mut r = NamingServer::new(NamingConfig::default(), at(0));
    r.apply_sync(at(2_000), &Arc::from("nacos1"), &conn, &o.client_sync_data(&conn).unwrap());
    assert_eq!(r.apply_delete(&conn).len(), 1);
    assert_eq!(r.counts(&svc("orders")), (0, 0));
    assert!(o.apply_delete(&conn).is_empty());
    assert_eq!(o.counts(&svc("orders")), (1, 1));
}
