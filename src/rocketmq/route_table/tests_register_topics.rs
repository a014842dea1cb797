//! Tests pinning `registerBroker` step 10 (§2.1): which topics a registration writes, with
//! what perm, when an unchanged DataVersion leaves them alone, and when the memo may skip.

use super::test_support::*;
use super::{BrokerRole, NamesrvConfig, TopicPass};
use crate::rocketmq::types::perm;
use std::sync::Arc;

#[test]
fn prime_slave_writes_read_only_queue_data_when_acting_master_is_enabled() {
    // RocketMQ RouteInfoManager#registerBroker steps 9-10b
    // (RouteInfoManagerNewTest#registerOnlySlaveBroker)
    let mut m = manager();
    let out = m.register_broker(t(0), &acting(broker(BROKER, 1, SLAVE_ADDR, &body(dv(1), &["T", "U"]))), ch(1));

    assert_eq!(out.role, Some(BrokerRole::PrimeSlave));
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ));
}

#[test]
fn prime_slave_keeps_write_perm_without_acting_master() {
    // RocketMQ RouteInfoManager#registerBroker step 10b: the wipe needs
    // brokerData.isEnableActingMaster()
    let mut m = manager();
    let out = m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &body(dv(1), &["T", "U"])), ch(1));

    assert_eq!(out.role, Some(BrokerRole::PrimeSlave));
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ_WRITE));
}

#[test]
fn unchanged_data_version_keeps_a_wiped_write_perm() {
    // RocketMQ RouteInfoManager#registerBroker step 10b / isTopicConfigChanged (issue #313)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    m.wipe_write_perm_of_broker(BROKER);

    // Same body, same DataVersion, even a freshly decoded copy: the wipe survives.
    let copy = Arc::new((*b).clone());
    let out = m.register_broker(t(30_000), &broker(BROKER, 0, MASTER_ADDR, &copy), ch(1));
    assert!(out.topics_updated.is_empty());
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ));
}

#[test]
fn changed_data_version_overwrites_a_wiped_write_perm() {
    // RocketMQ RouteInfoManager#registerBroker step 10b: isBrokerTopicConfigChanged
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    m.wipe_write_perm_of_broker(BROKER);

    let out = m.register_broker(t(30_000), &broker(BROKER, 0, MASTER_ADDR, &body(dv(2), &["T", "U"])), ch(1));
    assert_eq!(out.topics_updated, vec!["T".to_string(), "U".to_string()]);
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ_WRITE));
}

#[test]
fn unchanged_data_version_still_adds_the_broker_to_a_topic_it_is_missing_from() {
    // RocketMQ RouteInfoManager#isTopicConfigChanged: !queueDataMap.containsKey(brokerName)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    m.delete_topic("U", None);
    m.wipe_write_perm_of_broker(BROKER);

    let out = m.register_broker(t(30_000), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    assert_eq!(out.topics_updated, vec!["U".to_string()], "only the missing topic is written");
    assert_eq!(perm_of(&m, "U", BROKER), Some(perm::READ_WRITE));
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ));
}

#[test]
fn registration_keeps_topics_missing_from_the_body_by_default() {
    // RocketMQ RouteInfoManager#registerBroker step 10a off
    // (RouteInfoManagerNewTest#keepTopicWithBrokerRegistration)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["base", "T", "U"])), ch(1));
    m.register_broker(t(1), &broker(BROKER, 0, MASTER_ADDR, &body(dv(2), &["base", "U"])), ch(1));
    assert!(m.pickup_topic_route_data("T").is_some());
}

#[test]
fn delete_topic_with_broker_registration_drops_only_this_brokers_missing_topics() {
    // RocketMQ RouteInfoManager#registerBroker step 10a
    // (RouteInfoManagerNewTest#deleteTopicWithBrokerRegistration2)
    let config = NamesrvConfig { delete_topic_with_broker_registration: true, ..Default::default() };
    let mut m = manager_with(config);
    let both = body(dv(1), &["base", "T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &both), ch(1));
    m.register_broker(t(0), &broker("broker-b", 0, "127.0.0.1:20911", &both), ch(2));

    let out = m.register_broker(t(1), &broker(BROKER, 0, MASTER_ADDR, &body(dv(2), &["base", "U"])), ch(1));
    assert_eq!(out.topics_deleted, vec!["T".to_string()]);
    assert!(out.topics_removed.is_empty(), "broker-b still serves T");
    assert_eq!(m.topic_queue_table()["T"].keys().collect::<Vec<_>>(), vec!["broker-b"]);

    let out = m.register_broker(t(1), &broker("broker-b", 0, "127.0.0.1:20911", &body(dv(2), &["base", "U"])), ch(2));
    assert_eq!(out.topics_removed, vec!["T".to_string()]);
    assert!(m.pickup_topic_route_data("T").is_none());
}

#[test]
fn steady_state_re_registration_skips_the_topic_loop_and_leaves_the_revision_alone() {
    // RocketMQ RouteInfoManager#registerBroker step 10b with an unchanged DataVersion (memo.rs)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    let first = m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    assert_eq!(first.topic_pass, TopicPass::Ran { topics: 2 });
    let before = m.revision();

    let again = m.register_broker(t(30_000), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    assert_eq!(again.topic_pass, TopicPass::Skipped);
    assert_eq!(m.revision(), before);
}

#[test]
fn a_fresh_body_allocation_runs_the_full_loop() {
    // memo.rs: only the very same Arc proves anything
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let out = m.register_broker(t(1), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    assert_eq!(out.topic_pass, TopicPass::Ran { topics: 2 });
    assert!(out.topics_updated.is_empty());
}

#[test]
fn the_memo_is_per_broker_name_so_a_renamed_registration_runs_the_loop() {
    // memo.rs: a record proves presence for one brokerName only (RocketMQ #1989, renamed brokers)
    let mut m = manager();
    m.register_broker(t(0), &broker("b1", 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let wide = body(dv(2), &["T", "U", "V"]);
    m.register_broker(t(1), &broker("b0", 0, MASTER_ADDR, &wide), ch(1));

    // Same address, same body allocation, same DataVersion as its live entry — but b1 never
    // had topic V, so Java's loop adds it.
    let out = m.register_broker(t(2), &broker("b1", 0, MASTER_ADDR, &wide), ch(1));
    assert!(!out.register_first);
    assert_eq!(out.topics_updated, vec!["V".to_string()]);
    assert!(perm_of(&m, "V", "b1").is_some());
}
