//! Tests pinning how removal is *decided*: the expiry scan (§2.4) and the channel-destroy and
//! request lookups (§2.5). The decisions are applied by the batch unregister (§2.3).

use super::test_support::*;
use crate::rocketmq::types::BrokerAddrInfo;

#[test]
fn stale_unregister_wipes_a_fresh_re_registration() {
    // RocketMQ RouteInfoManager#unRegisterBroker has no freshness check (apache/rocketmq#11043)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    let decided = m.scan_not_active_broker(t(120_001));
    // The broker comes back on a new connection before the batch thread runs.
    m.register_broker(t(120_002), &broker(BROKER, 0, MASTER_ADDR, &b), ch(2));
    m.un_register_broker(&[decided[0].request.clone().unwrap()]);

    assert!(m.pickup_topic_route_data("T").is_none());
}

#[test]
fn scan_keeps_a_broker_at_exactly_last_plus_timeout() {
    // RocketMQ RouteInfoManager#scanNotActiveBroker: (last + timeoutMillis) < now, strict
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    assert!(m.scan_not_active_broker(t(120_000)).is_empty());
}

#[test]
fn scan_expires_a_broker_one_millisecond_later_with_its_request_and_channel() {
    // RocketMQ RouteInfoManager#scanNotActiveBroker then onChannelDestroy(BrokerAddrInfo)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let expired = m.scan_not_active_broker(t(120_001));

    assert_eq!(expired.len(), 1);
    assert_eq!((expired[0].channel, expired[0].last_update, expired[0].timeout), (ch(1), t(0), ms(120_000)));
    assert_eq!(expired[0].request, Some(unreg(BROKER, 0, MASTER_ADDR)));
}

#[test]
fn scan_uses_each_entrys_own_timeout() {
    // RocketMQ RouteInfoManager#scanNotActiveBroker: heartbeatTimeoutMillis per BrokerLiveInfo
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    let mut fast = acting(broker(BROKER, 1, SLAVE_ADDR, &b));
    fast.heartbeat_timeout_millis = Some(ms(10_000));
    m.register_broker(t(0), &fast, ch(2));

    let expired = m.scan_not_active_broker(t(10_001));
    assert_eq!(expired.iter().map(|e| e.addr_info.broker_addr.as_str()).collect::<Vec<_>>(), vec![SLAVE_ADDR]);
}

#[test]
fn scan_removes_nothing_so_the_next_scan_reports_the_broker_again() {
    // RocketMQ RouteInfoManager#scanNotActiveBroker (5.x): submit only; the batch thread removes
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    assert_eq!(m.scan_not_active_broker(t(120_001)).len(), 1);
    assert_eq!(m.scan_not_active_broker(t(125_001)).len(), 1);
    assert_eq!(m.broker_live_table().len(), 1);
}

#[test]
fn scan_reports_an_orphan_live_entry_without_a_request_forever() {
    // RocketMQ RouteInfoManager#setupUnRegisterRequest finds no group
    // (RouteInfoManagerBrokerRegisterTest#testMasterChangeFromSlave)
    let mut m = manager();
    master_and_slave(&mut m, false);
    // The slave's address takes over id 0 without the old master unregistering; the old
    // master's address is displaced from the group but its live entry stays.
    m.register_broker(t(0), &broker(BROKER, 0, SLAVE_ADDR, &body(dv(2), &["T", "U"])), ch(2));
    let expired = m.scan_not_active_broker(t(500_000));

    let orphan = expired.iter().find(|e| e.addr_info.broker_addr == MASTER_ADDR).unwrap();
    assert_eq!(orphan.request, None);
    assert!(m.quirks().iter().any(|q| q.contains("orphan")));
}

#[test]
fn channel_destroy_finds_the_broker_by_channel_identity() {
    // RocketMQ RouteInfoManager#onChannelDestroy(Channel)
    // (RouteInfoManagerNewTest#onChannelDestroy)
    let mut m = manager();
    master_and_slave(&mut m, false);
    assert_eq!(m.on_channel_destroy(ch(2)), Some(unreg(BROKER, 1, SLAVE_ADDR)));
    assert_eq!(m.on_channel_destroy(ch(99)), None);
}

#[test]
fn channel_destroy_of_a_replaced_connection_does_nothing() {
    // RocketMQ RouteInfoManager#onChannelDestroy(Channel): the live entry holds the newest channel
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    m.register_broker(t(1), &broker(BROKER, 0, MASTER_ADDR, &b), ch(2));
    assert_eq!(m.on_channel_destroy(ch(1)), None);
}

#[test]
fn setup_unregister_request_requires_a_group_of_the_same_cluster() {
    // RocketMQ RouteInfoManager#setupUnRegisterRequest: brokerData.getCluster() must match
    let mut m = manager();
    master_and_slave(&mut m, false);
    assert_eq!(m.setup_unregister_request(&BrokerAddrInfo::new("other", MASTER_ADDR)), None);
    assert_eq!(
        m.setup_unregister_request(&BrokerAddrInfo::new(CLUSTER, MASTER_ADDR)),
        Some(unreg(BROKER, 0, MASTER_ADDR))
    );
}

#[test]
fn a_scan_after_a_quiet_one_still_finds_a_shortened_timeout() {
    // A scan that finds nothing lets the next ones skip the table until the earliest expiry it
    // saw (`live_floor`). A re-registration with a shorter timeout
    // (RegisterBrokerRequestHeader#heartbeatTimeoutMillis) expires earlier than that, and a
    // heartbeat (BROKER_HEARTBEAT) refreshes; the scans must see both as a full read would.
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    assert!(m.scan_not_active_broker(t(10_000)).is_empty(), "expires at 120 s");
    let mut shorter = broker(BROKER, 0, MASTER_ADDR, &b);
    shorter.heartbeat_timeout_millis = Some(ms(30_000));
    m.register_broker(t(20_000), &shorter, ch(1));
    assert!(m.scan_not_active_broker(t(50_000)).is_empty(), "last + timeout < now is strict");
    assert_eq!(m.scan_not_active_broker(t(50_001)).len(), 1, "20 s + 30 s, not the 120 s seen before");
    assert!(m.update_broker_info_update_timestamp(t(60_000), CLUSTER, MASTER_ADDR));
    assert!(m.scan_not_active_broker(t(90_000)).is_empty(), "refreshed at 60 s");
    assert_eq!(m.scan_not_active_broker(t(90_001)).len(), 1);
}
