//! Tests pinning the heartbeat paths (§2.2): BROKER_HEARTBEAT and QUERY_DATA_VERSION refresh
//! an existing live entry and nothing else.

use super::test_support::*;
use crate::rocketmq::types::{BrokerAddrInfo, DataVersion};

#[test]
fn heartbeat_refreshes_only_the_timestamp() {
    // RocketMQ RouteInfoManager#updateBrokerInfoUpdateTimestamp (BROKER_HEARTBEAT)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let before = m.revision();
    assert!(m.update_broker_info_update_timestamp(t(5000), CLUSTER, MASTER_ADDR));

    let live = &m.broker_live_table()[&BrokerAddrInfo::new(CLUSTER, MASTER_ADDR)];
    assert_eq!((live.last_update_timestamp, live.data_version, live.channel), (t(5000), dv(1), ch(1)));
    assert_eq!(m.revision(), before, "a timestamp move is invisible to observers");
}

#[test]
fn heartbeat_never_resurrects_an_expired_broker() {
    // RocketMQ RouteInfoManager#updateBrokerInfoUpdateTimestamp: only `if (prev != null)`
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let expired = m.scan_not_active_broker(t(120_001));
    m.un_register_broker(&[expired[0].request.clone().unwrap()]);

    assert!(!m.update_broker_info_update_timestamp(t(121_000), CLUSTER, MASTER_ADDR));
    let q = m.query_broker_topic_config(t(121_000), CLUSTER, MASTER_ADDR, &dv(1));
    assert!(!q.refreshed);
    assert!(m.broker_live_table().is_empty() && m.broker_addr_table().is_empty());
}

#[test]
fn query_data_version_reports_changed_before_refreshing() {
    // RocketMQ DefaultRequestProcessor#queryBrokerTopicConfig (QUERY_DATA_VERSION)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));

    let q = m.query_broker_topic_config(t(1000), CLUSTER, MASTER_ADDR, &dv(2));
    assert!(q.changed && q.refreshed);
    assert_eq!(q.stored, Some(dv(1)), "the stored version, not the broker's");
    let q = m.query_broker_topic_config(t(2000), CLUSTER, MASTER_ADDR, &dv(1));
    assert!(!q.changed);
    assert_eq!(m.broker_live_table()[&BrokerAddrInfo::new(CLUSTER, MASTER_ADDR)].last_update_timestamp, t(2000));
}

#[test]
fn query_data_version_for_an_unknown_broker_is_changed_with_nothing_stored() {
    // RocketMQ RouteInfoManager#isBrokerTopicConfigChanged: prev == null
    let mut m = manager();
    let q = m.query_broker_topic_config(t(0), CLUSTER, MASTER_ADDR, &dv(1));
    assert_eq!((q.changed, q.stored, q.refreshed), (true, None, false));
}

#[test]
fn broker_topic_config_change_compares_all_three_data_version_fields() {
    // RocketMQ RouteInfoManagerNewTest#isBrokerTopicConfigChanged (DataVersion#equals)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let same = dv(1);
    assert!(!m.is_broker_topic_config_changed(CLUSTER, MASTER_ADDR, &same));
    assert!(m.is_broker_topic_config_changed(CLUSTER, MASTER_ADDR, &DataVersion { counter: 2, ..same }));
    assert!(m.is_broker_topic_config_changed(CLUSTER, MASTER_ADDR, &DataVersion { timestamp: t(7), ..same }));
    assert!(m.is_broker_topic_config_changed(CLUSTER, MASTER_ADDR, &DataVersion { state_version: 1, ..same }));
}
