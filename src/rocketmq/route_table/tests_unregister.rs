//! Tests pinning the batch `unRegisterBroker` (§2.3), the expiry scan (§2.4) and the
//! channel-destroy lookup (§2.5).

use super::test_support::*;
use super::{CleanupAbort, NamesrvConfig};
use crate::rocketmq::types::{perm, UnregisterRequest};

#[test]
fn unregister_of_the_last_member_removes_live_filter_group_cluster_and_topics() {
    // RocketMQ RouteInfoManager#unRegisterBroker steps 1-6
    // (RouteInfoManagerNewTest#unregisterBroker)
    let mut m = manager();
    let mut req = broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"]));
    req.filter_server_list = Some(vec!["fs".into()]);
    m.register_broker(t(0), &req, ch(1));

    let report = m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);
    let step = &report.requests[0];
    assert!(step.live_removed && step.filter_removed && step.broker_name_removed);
    assert!(step.cluster_name_removed && step.cluster_dropped);
    assert_eq!(report.topics_removed, vec!["T".to_string(), "U".to_string()]);
    assert!(m.pickup_topic_route_data("T").is_none());
    assert!(m.cluster_addr_table().is_empty() && m.filter_server_table().is_empty());
}

#[test]
fn unregister_removes_by_address_not_by_id() {
    // RocketMQ RouteInfoManager#unRegisterBroker step 3 (#5374/#5375)
    let mut m = manager();
    master_and_slave(&mut m, false);
    // A delayed request from the slave's earlier life as id 0 names the wrong id.
    let report = m.un_register_broker(&[unreg(BROKER, 0, SLAVE_ADDR)]);

    assert_eq!(report.requests[0].addrs_removed, vec![(1, SLAVE_ADDR.to_string())]);
    assert_eq!(ids_of(&m, BROKER), vec![0], "the master under id 0 survives");
}

#[test]
fn unregister_flags_min_id_change_from_the_request_id_not_the_removed_entry() {
    // RocketMQ RouteInfoManager#unRegisterBroker steps 3-4: request.brokerId.equals(min) before
    // removal
    let config = NamesrvConfig { notify_min_broker_id_changed: true, ..Default::default() };
    let mut m = manager_with(config);
    master_and_slave(&mut m, true);
    let report = m.un_register_broker(&[unreg(BROKER, 0, SLAVE_ADDR)]);

    assert!(report.requests[0].notify_queued, "id 0 claimed, though id 1 went");
    assert_eq!(report.notifications.len(), 1);
    assert_eq!(report.notifications[0].min_broker_id, 0, "the minimum did not actually move");
}

#[test]
fn unregister_of_a_slave_keeps_the_master_and_its_topics() {
    // RocketMQ RouteInfoManagerNewTest#unRegisterSlaveBroker
    let mut m = manager();
    master_and_slave(&mut m, true);
    let report = m.un_register_broker(&[unreg(BROKER, 1, SLAVE_ADDR)]);

    assert!(!report.requests[0].broker_name_removed);
    assert!(report.write_perm_wiped.is_empty(), "a master is still there");
    let route = m.pickup_topic_route_data("T").unwrap();
    assert_eq!(route.broker_datas[0].broker_addrs.get(&0).map(|a| a.as_str()), Some(MASTER_ADDR));
}

#[test]
fn unregister_of_the_master_wipes_write_perm_when_acting_master_is_enabled() {
    // RocketMQ RouteInfoManager#cleanTopicByUnRegisterRequests
    // (RouteInfoManagerNewTest#unRegisterMasterBroker)
    let mut m = manager();
    master_and_slave(&mut m, true);
    let report = m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);

    assert_eq!(report.write_perm_wiped, vec![("T".into(), BROKER.into()), ("U".into(), BROKER.into())]);
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ));
}

#[test]
fn unregister_of_the_master_keeps_write_perm_for_groups_without_acting_master() {
    // RocketMQ RouteInfoManagerNewTest#unRegisterMasterBrokerOldVersion
    let mut m = manager();
    master_and_slave(&mut m, false);
    m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);

    assert_eq!(ids_of(&m, BROKER), vec![1]);
    assert_eq!(perm_of(&m, "T", BROKER), Some(perm::READ_WRITE));
}

#[test]
fn unregister_of_an_unknown_group_still_clears_live_and_filter_entries() {
    // RocketMQ RouteInfoManager#unRegisterBroker steps 1-2 run before the BrokerData lookup
    let mut m = manager();
    master_and_slave(&mut m, false);
    let report = m.un_register_broker(&[unreg("no-such-broker", 0, MASTER_ADDR)]);

    let step = &report.requests[0];
    assert!(step.live_removed && !step.broker_data_found && !step.broker_name_removed);
    assert_eq!(ids_of(&m, BROKER), vec![0, 1], "the group itself is untouched");
    assert_eq!(m.quirks().len(), 0, "still listed, so not an orphan; no quirk");
}

#[test]
fn unregister_under_another_cluster_name_leaves_the_name_in_its_real_cluster() {
    // RocketMQ RouteInfoManager#unRegisterBroker step 5 cleans
    // clusterAddrTable[request.clusterName] only
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let wrong = UnregisterRequest { cluster_name: "elsewhere".into(), ..unreg(BROKER, 0, MASTER_ADDR) };
    let report = m.un_register_broker(&[wrong]);

    assert!(report.requests[0].broker_name_removed && !report.requests[0].cluster_name_removed);
    assert!(m.cluster_addr_table()[&n(CLUSTER)].contains(&n(BROKER)));
    assert!(m.check_consistency().is_empty());
    assert_eq!(m.quirks().len(), 2, "stale cluster entry + live entry under the real cluster: {:?}", m.quirks());
}

#[test]
fn batch_applies_duplicates_twice_harmlessly() {
    // RocketMQ BatchUnregistrationService#run: headers have no equals, so a HashSet keeps
    // duplicates
    let mut m = manager();
    master_and_slave(&mut m, false);
    let report = m.un_register_broker(&[unreg(BROKER, 1, SLAVE_ADDR), unreg(BROKER, 1, SLAVE_ADDR)]);

    assert!(report.requests[0].live_removed && !report.requests[1].live_removed);
    assert_eq!(ids_of(&m, BROKER), vec![0]);
}

#[test]
fn batch_cleans_topics_once_after_all_requests() {
    // RocketMQ RouteInfoManager#unRegisterBroker step 6
    // (RouteInfoManagerNewTest#submitMultiUnRegisterRequests)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["base", "TestTopic1"])), ch(1));
    m.register_broker(t(0), &broker("broker-b", 0, "127.0.0.1:20911", &body(dv(1), &["base", "TestTopic2"])), ch(2));
    let report = m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR), unreg("broker-b", 0, "127.0.0.1:20911")]);

    assert_eq!(report.topics_removed, vec!["TestTopic1".to_string(), "TestTopic2".to_string(), "base".to_string()]);
    assert!(m.topic_queue_table().is_empty());
}

#[test]
fn min_broker_id_notice_on_unregister_requires_acting_master() {
    // RocketMQ RouteInfoManager#notifyMinBrokerIdChanged(Map): brokerData.isEnableActingMaster()
    let config = NamesrvConfig { notify_min_broker_id_changed: true, ..Default::default() };
    let mut m = manager_with(config);
    master_and_slave(&mut m, false);
    let report = m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);

    assert!(report.requests[0].notify_queued);
    assert!(report.notifications.is_empty());
}

#[test]
fn min_broker_id_notice_on_unregister_notifies_every_remaining_member() {
    // RocketMQ RouteInfoManager#unRegisterBroker step 7, chooseBrokerAddrsToNotify with an offline
    // addr
    let config = NamesrvConfig { notify_min_broker_id_changed: true, ..Default::default() };
    let mut m = manager_with(config);
    master_and_slave(&mut m, true);
    m.register_broker(t(0), &acting(broker(BROKER, 2, "127.0.0.1:50911", &body(dv(1), &["T", "U"]))), ch(3));
    let report = m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);

    let notice = &report.notifications[0];
    assert_eq!((notice.min_broker_id, notice.min_broker_addr.as_str()), (1, SLAVE_ADDR));
    assert_eq!(notice.offline_broker_addr.as_deref(), Some(MASTER_ADDR));
    assert_eq!(notice.notify_addrs, vec![SLAVE_ADDR.to_string(), "127.0.0.1:50911".to_string()]);
}

#[test]
fn cleanup_aborts_like_javas_npe_when_a_reduced_name_has_queue_data_but_no_group() {
    // RocketMQ RouteInfoManager#cleanTopicByUnRegisterRequests:
    // brokerAddrTable.get(brokerName).isEnableActingMaster()
    let config = NamesrvConfig { notify_min_broker_id_changed: true, ..Default::default() };
    let mut m = manager_with(config);
    master_and_slave(&mut m, true);
    // Unreachable through the API (check_consistency flags it): QueueData of a name with no group.
    m.topic_queue_table.get_mut("T").unwrap().insert(queue_data("ghost", perm::READ_WRITE).into());
    let report = m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR), unreg("ghost", 0, "x:1")]);

    assert_eq!(report.aborted, Some(CleanupAbort { topic: "T".into(), broker_name: "ghost".into() }));
    assert!(report.notifications.is_empty(), "step 7 never runs");
    assert_eq!(perm_of(&m, "U", BROKER), Some(perm::READ_WRITE), "topics after the abort are untouched");
    assert!(!m.check_consistency().is_empty());
}

#[test]
fn master_down_slave_promoted_then_old_master_rejoins_as_slave() {
    // RocketMQ RouteInfoManagerNewTest#switchBrokerRole
    let mut m = manager();
    master_and_slave(&mut m, false);
    m.un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);
    assert_eq!(ids_of(&m, BROKER), vec![1]);

    m.register_broker(t(1), &broker(BROKER, 0, SLAVE_ADDR, &body(dv(2), &["T", "U"])), ch(2));
    assert_eq!(
        m.broker_addr_table()[&n(BROKER)].broker_addrs.values().map(|a| a.as_str()).collect::<Vec<_>>(),
        vec![SLAVE_ADDR]
    );
    m.register_broker(t(2), &broker(BROKER, 1, MASTER_ADDR, &body(dv(2), &["T", "U"])), ch(3));
    assert_eq!(ids_of(&m, BROKER), vec![0, 1]);
    assert_eq!(m.broker_addr_table()[&n(BROKER)].broker_addrs[&1], MASTER_ADDR);
}
