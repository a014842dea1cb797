//! Tests pinning `pickupTopicRouteData` (§2.8): what a client's route answer holds, and the
//! acting-master rewrite that exists only in the answer.

use super::route::SYNC_BROKER_MEMBER_GROUP_PREFIX;
use super::test_support::*;
use super::{NamesrvConfig, RouteInfoManager};
use crate::rocketmq::types::{perm, BrokerAddrInfo};

fn acting_manager() -> RouteInfoManager {
    manager_with(NamesrvConfig { support_acting_master: true, ..Default::default() })
}

/// An acting-master group whose master went away: only the slave (id 1) is left, read-only.
fn masterless_acting_group(m: &mut RouteInfoManager, topics: &[&str]) {
    let b = body(dv(1), topics);
    m.register_broker(t(0), &acting(broker(BROKER, 0, MASTER_ADDR, &b)), ch(1));
    m.register_broker(t(0), &acting(broker(BROKER, 1, SLAVE_ADDR, &b)), ch(2));
    m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);
}

#[test]
fn route_of_an_unknown_topic_is_none() {
    // RocketMQ RouteInfoManagerTest#testPickupTopicRouteData (TOPIC_NOT_EXIST)
    assert!(manager().pickup_topic_route_data("unit_test").is_none());
}

#[test]
fn route_lists_queue_and_broker_data_sorted_by_broker_name() {
    // RocketMQ RouteInfoManagerNewTest#pickupTopicRouteData
    let mut m = manager();
    m.register_broker(t(0), &broker("broker-b", 0, "127.0.0.1:20911", &body(dv(1), &["T", "U"])), ch(2));
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let route = m.pickup_topic_route_data("T").unwrap();

    let names = |v: Vec<&Name>| v.into_iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(names(route.queue_datas.iter().map(|q| &q.broker_name).collect()), ["broker-a", "broker-b"]);
    assert_eq!(names(route.broker_datas.iter().map(|b| &b.broker_name).collect()), ["broker-a", "broker-b"]);
    assert_eq!(route.queue_datas[0].read_queue_nums, 8);
    assert!(route.filter_server_table.is_empty());
}

#[test]
fn route_needs_at_least_one_broker_data() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData step 2: foundBrokerData && foundQueueData
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    m.broker_addr_table.remove(&n(BROKER));
    assert!(m.pickup_topic_route_data("T").is_none());
}

#[test]
fn route_counts_an_empty_group_as_found() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData: an empty BrokerData left by the single-topic
    // guard still counts
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["OnlyOne"])), ch(1));
    assert!(m.register_topic("OnlyOne", vec![queue_data(BROKER, perm::READ_WRITE)]));

    let route = m.pickup_topic_route_data("OnlyOne").unwrap();
    assert!(route.broker_datas[0].broker_addrs.is_empty());
}

#[test]
fn route_carries_filter_servers_for_every_address_that_has_them() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData: filterServerMap by (bd.cluster, addr)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    let mut master = broker(BROKER, 0, MASTER_ADDR, &b);
    master.filter_server_list = Some(vec!["fs-1".into()]);
    m.register_broker(t(0), &master, ch(1));
    m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &b), ch(2));

    let route = m.pickup_topic_route_data("T").unwrap();
    assert_eq!(route.filter_server_table.len(), 1, "Java's null for the slave is not encoded");
    assert_eq!(route.filter_server_table[MASTER_ADDR], vec!["fs-1".to_string()]);
}

#[test]
fn acting_master_rewrite_moves_min_slave_to_id_zero_in_the_answer_only() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData step 4
    // (RouteInfoManagerNewTest#pickupPartitionOrderTopicRouteData)
    let mut m = acting_manager();
    masterless_acting_group(&mut m, &["T", "U"]);
    let route = m.pickup_topic_route_data("T").unwrap();

    assert_eq!(route.broker_datas[0].broker_addrs.iter().collect::<Vec<_>>(), vec![(&0, &n(SLAVE_ADDR))]);
    assert!(!perm::is_writeable(route.queue_datas[0].perm));
    assert_eq!(ids_of(&m, BROKER), vec![1], "the stored table keeps the real id");
}

#[test]
fn acting_master_rewrite_needs_the_name_server_flag() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData: namesrvConfig.isSupportActingMaster()
    let mut m = manager();
    masterless_acting_group(&mut m, &["T", "U"]);
    let route = m.pickup_topic_route_data("T").unwrap();
    assert_eq!(route.broker_datas[0].broker_addrs.keys().collect::<Vec<_>>(), vec![&1]);
}

#[test]
fn acting_master_rewrite_skips_a_writeable_group() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData: only
    // `!PermName.isWriteable(queueData.getPerm())`
    let mut m = acting_manager();
    masterless_acting_group(&mut m, &["T", "U"]);
    m.add_write_perm_of_broker(BROKER);
    let route = m.pickup_topic_route_data("T").unwrap();
    assert_eq!(route.broker_datas[0].broker_addrs.keys().collect::<Vec<_>>(), vec![&1]);
}

#[test]
fn acting_master_rewrite_skips_sync_broker_member_topics() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData:
    // TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX
    let mut m = acting_manager();
    let sync_topic = format!("{SYNC_BROKER_MEMBER_GROUP_PREFIX}{BROKER}");
    masterless_acting_group(&mut m, &[&sync_topic, "T"]);
    let route = m.pickup_topic_route_data(&sync_topic).unwrap();
    assert_eq!(route.broker_datas[0].broker_addrs.keys().collect::<Vec<_>>(), vec![&1]);
}

#[test]
fn acting_master_rewrite_needs_the_groups_own_flag() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData: brokerData.isEnableActingMaster()
    let mut m = acting_manager();
    // A master-less group that registered without acting master, then had its perm wiped.
    m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    m.wipe_write_perm_of_broker(BROKER);
    let route = m.pickup_topic_route_data("T").unwrap();
    assert_eq!(route.broker_datas[0].broker_addrs.keys().collect::<Vec<_>>(), vec![&1]);
}

#[test]
fn acting_master_rewrite_leaves_groups_that_have_a_master() {
    // RocketMQ RouteInfoManagerNewTest#pickupPartitionOrderTopicRouteData case 3
    let mut m = acting_manager();
    masterless_acting_group(&mut m, &["T", "U"]);
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &acting(broker("broker-b", 0, "127.0.0.1:20911", &b)), ch(3));
    m.register_broker(t(0), &acting(broker("broker-b", 1, "127.0.0.1:21911", &b)), ch(4));
    let route = m.pickup_topic_route_data("T").unwrap();

    assert_eq!(route.broker_datas[0].broker_addrs.keys().collect::<Vec<_>>(), vec![&0]);
    assert_eq!(route.broker_datas[1].broker_addrs.keys().collect::<Vec<_>>(), vec![&0, &1]);
}

#[test]
fn route_answer_for_a_broker_in_two_clusters_uses_the_groups_cluster_for_filters() {
    // RocketMQ RouteInfoManager#pickupTopicRouteData: new
    // BrokerAddrInfo(brokerDataClone.getCluster(), addr)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    let mut elsewhere = broker(BROKER, 0, MASTER_ADDR, &b);
    elsewhere.cluster_name = "other".into();
    elsewhere.filter_server_list = Some(vec!["fs".into()]);
    m.register_broker(t(0), &elsewhere, ch(1));

    assert!(m.filter_server_table().contains_key(&BrokerAddrInfo::new("other", MASTER_ADDR)));
    let route = m.pickup_topic_route_data("T").unwrap();
    assert!(route.filter_server_table.is_empty(), "looked up under the group's own cluster");
    assert!(m.quirks().iter().any(|q| q.contains("whose BrokerData says cluster")));
}
