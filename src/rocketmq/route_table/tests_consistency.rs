//! Tests for the consistency check, the quirk report and the explain narration.

use super::test_support::*;
use super::RouteInfoManager;
use crate::rocketmq::types::RegisterBrokerRequest;

/// The shared master-and-slave pair, without acting master.
fn pair() -> RouteInfoManager {
    let mut m = manager();
    master_and_slave(&mut m, false);
    m
}

#[test]
fn a_normal_life_cycle_is_consistent_and_quirk_free() {
    // Register, heartbeat, unregister: every cross-table rule of consistency.rs holds throughout
    let mut m = pair();
    assert_eq!((m.check_consistency(), m.quirks()), (vec![], vec![]));
    m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);
    assert_eq!((m.check_consistency(), m.quirks()), (vec![], vec![]));
    m.un_register_broker(&[unreg(BROKER, 1, SLAVE_ADDR)]);
    assert_eq!((m.check_consistency(), m.quirks()), (vec![], vec![]));
}

#[test]
fn quirks_report_the_empty_group_left_by_the_single_topic_guard() {
    // RocketMQ RouteInfoManager#registerBroker step 7 returns after steps 1-5
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["OnlyOne"])), ch(1));
    assert!(m.check_consistency().is_empty());
    assert_eq!(m.quirks().len(), 1);
    assert!(m.quirks()[0].contains("no addresses"));
}

#[test]
fn quirks_report_filter_servers_that_outlive_a_conflicting_registration() {
    // RocketMQ RouteInfoManager#registerBroker step 6 removes brokerLiveTable only
    let mut m = manager();
    let newer = crate::rocketmq::types::DataVersion { state_version: 9, ..dv(1) };
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(newer, &["T", "U"])), ch(1));
    let mut stale = broker("other", 0, SLAVE_ADDR, &body(dv(1), &["T", "U"]));
    stale.filter_server_list = Some(vec!["fs".into()]);
    m.register_broker(t(0), &stale, ch(2));
    m.register_broker(t(0), &RegisterBrokerRequest { broker_name: BROKER.into(), ..stale }, ch(2));

    assert!(m.quirks().iter().any(|q| q.contains("outlived its live entry")), "{:?}", m.quirks());
}

#[test]
fn quirks_report_one_address_in_two_groups_after_a_rename() {
    // apache/rocketmq#1989: changing brokerName leaves the old name registered
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    m.register_broker(t(1), &broker("renamed", 0, MASTER_ADDR, &b), ch(1));
    assert!(m.check_consistency().is_empty());
    assert!(m.quirks().iter().any(|q| q.contains("several groups")), "{:?}", m.quirks());
}

#[test]
fn a_cluster_set_disagreeing_without_a_cross_cluster_history_is_a_violation() {
    // consistency.rs: only a name used under two clusters may disagree with its BrokerData
    let mut m = pair();
    m.cluster_addr_table.entry("phantom".into()).or_default().insert(BROKER.into());
    assert_eq!(m.check_consistency().len(), 1, "{:?}", m.check_consistency());
}

#[test]
fn explain_narrates_each_step_that_did_something() {
    // outcome.rs / explain.rs: the lines explain mode prints
    let mut m = manager();
    let out = m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let lines = out.explain();
    assert!(lines[0].starts_with("registerFirst"), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("step 10b: checked 2 topics")), "{lines:?}");
    assert_eq!(lines.last().unwrap(), "step 11: live entry created");

    let report = m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);
    let lines = report.explain();
    assert!(lines[0].contains("step 1 live entry removed") && lines[0].contains("step 4 group removed"), "{lines:?}");
    assert!(lines.contains(&"step 6: QueueData of broker-a removed from 2 topics (T, U)".to_string()), "{lines:?}");
    assert!(lines.contains(&"step 6: topics left empty and removed: T, U".to_string()), "{lines:?}");
}
