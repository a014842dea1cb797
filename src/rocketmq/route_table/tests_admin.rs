//! Tests pinning the operator commands (§2.9): wiping and restoring write perm, deleting a
//! topic, and registering one directly.

use super::test_support::*;
use crate::rocketmq::types::{perm, RegisterBrokerRequest};

#[test]
fn wipe_write_perm_clears_only_the_write_bit_and_counts_topics() {
    // RocketMQ RouteInfoManager#wipeWritePermOfBrokerByLock
    // (RouteInfoManagerTest#testWipeWritePermOfBrokerByLock)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    m.register_topic("P", vec![queue_data(BROKER, perm::READ_WRITE | perm::PRIORITY)]);

    assert_eq!(m.wipe_write_perm_of_broker(BROKER), 3);
    assert_eq!(perm_of(&m, "P", BROKER), Some(perm::READ | perm::PRIORITY));
    assert_eq!(m.wipe_write_perm_of_broker("nobody"), 0);
}

#[test]
fn add_write_perm_sets_read_write_instead_of_adding_the_bit() {
    // RocketMQ RouteInfoManager#operateWritePermOfBroker: perm = PERM_READ | PERM_WRITE
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    m.register_topic("P", vec![queue_data(BROKER, perm::READ | perm::PRIORITY)]);

    assert_eq!(m.add_write_perm_of_broker(BROKER), 3);
    assert_eq!(perm_of(&m, "P", BROKER), Some(perm::READ_WRITE), "the priority bit is gone");
}

#[test]
fn delete_topic_without_a_cluster_removes_it_everywhere() {
    // RocketMQ RouteInfoManager#deleteTopic(topic) (RouteInfoManagerNewTest#deleteTopic)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    assert!(m.delete_topic("T", None));
    assert!(m.pickup_topic_route_data("T").is_none());
    assert!(!m.delete_topic("T", None));
}

#[test]
fn delete_topic_in_a_cluster_removes_only_that_clusters_brokers() {
    // RocketMQ RouteInfoManager#deleteTopic(topic, cluster) (RouteInfoManagerNewTest#deleteTopic)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    let other =
        RegisterBrokerRequest { cluster_name: "AnotherCluster".into(), ..broker("broker-b", 0, "127.0.0.1:20911", &b) };
    m.register_broker(t(0), &other, ch(2));

    assert!(m.delete_topic("T", Some(CLUSTER)));
    let route = m.pickup_topic_route_data("T").unwrap();
    assert_eq!(route.broker_datas.iter().map(|g| g.broker_name.as_str()).collect::<Vec<_>>(), ["broker-b"]);
    assert!(m.delete_topic("T", Some("AnotherCluster")));
    assert!(!m.topic_queue_table().contains_key("T"), "emptied, so dropped");
}

#[test]
fn delete_topic_in_an_unknown_cluster_does_nothing() {
    // RocketMQ RouteInfoManager#deleteTopic(topic, cluster): brokerNames == null -> return
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    assert!(!m.delete_topic("T", Some("nowhere")));
    assert!(m.pickup_topic_route_data("T").is_some());
}

#[test]
fn register_topic_needs_every_broker_known_for_a_new_topic() {
    // RocketMQ RouteInfoManager#registerTopic, new-topic branch
    // (RouteInfoManagerNewTest#registerSingleTopicWithBrokerRegistration)
    let mut m = manager();
    assert!(!m.register_topic("T", vec![queue_data(BROKER, perm::READ_WRITE)]), "no broker yet");
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["A", "B"])), ch(1));

    let both = vec![queue_data(BROKER, perm::READ_WRITE), queue_data("unknown", perm::READ_WRITE)];
    assert!(!m.register_topic("T", both));
    assert!(!m.topic_queue_table().contains_key("T"), "nothing stored for a new topic");
    assert!(m.register_topic("T", vec![queue_data(BROKER, perm::READ)]));
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ), "stored as given");
}

#[test]
fn register_topic_on_an_existing_topic_keeps_puts_before_the_first_unknown_broker() {
    // RocketMQ RouteInfoManager#registerTopic, existing-topic branch: puts happen before the
    // `return`
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let qds = vec![queue_data(BROKER, perm::READ), queue_data("unknown", perm::READ_WRITE)];

    assert!(!m.register_topic("T", qds));
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ), "the first put stayed");
    assert_eq!(perm_of(&m, "T", "unknown"), None);
}
