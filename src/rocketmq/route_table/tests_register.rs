//! Tests pinning `registerBroker` (§2.1) step by step, and the heartbeat paths (§2.2).

use super::test_support::*;
use super::{BrokerRole, NamesrvConfig, RegisterBrokerResult, RegisterStop, TopicPass};
use crate::rocketmq::types::{perm, BrokerAddrInfo, DataVersion, DEFAULT_BROKER_CHANNEL_EXPIRED_TIME};

#[test]
fn first_registration_creates_cluster_group_topics_and_live_entry() {
    // RocketMQ RouteInfoManager#registerBroker steps 1, 2, 8, 10b, 11
    // (RouteInfoManagerNewTest#registerBroker)
    let mut m = manager();
    let b = body(dv(1), &["TestTopic", "baseTopic"]);
    let out = m.register_broker(t(1000), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));

    assert!(out.register_first);
    assert_eq!(out.role, Some(BrokerRole::Master));
    assert_eq!(out.topics_updated, vec!["TestTopic".to_string(), "baseTopic".to_string()]);
    assert!(!out.live_entry_replaced);
    assert!(m.cluster_addr_table()[&n(CLUSTER)].contains(&n(BROKER)));
    assert_eq!(m.broker_addr_table()[&n(BROKER)].broker_addrs[&0], MASTER_ADDR);
    assert_eq!(perm_of(&m, "TestTopic", BROKER), Some(perm::READ_WRITE));
    let live = &m.broker_live_table()[&BrokerAddrInfo::new(CLUSTER, MASTER_ADDR)];
    assert_eq!((live.last_update_timestamp, live.channel, live.data_version), (t(1000), ch(1), dv(1)));
}

#[test]
fn master_registration_returns_no_master_or_ha_address() {
    // RocketMQ RouteInfoManager#registerBroker step 13 (RouteInfoManagerNewTest#registerBroker)
    let mut m = manager();
    let out = m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    assert_eq!(out.result, Some(RegisterBrokerResult::default()));
}

#[test]
fn slave_registration_learns_the_master_and_its_ha_address() {
    // RocketMQ RouteInfoManager#registerBroker step 13 (RouteInfoManagerNewTest#registerBroker)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    let out = m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &b), ch(2));

    let expected = RegisterBrokerResult {
        ha_server_addr: Some(Name::from(format!("ha-of-{MASTER_ADDR}"))),
        master_addr: Some(Name::from(MASTER_ADDR)),
    };
    assert_eq!(out.result, Some(expected));
    assert_eq!(out.role, Some(BrokerRole::Slave));
    assert_eq!(out.topic_pass, TopicPass::NotEligible);
}

#[test]
fn slave_gets_no_master_address_while_the_master_has_no_live_entry() {
    // RocketMQ RouteInfoManager#registerBroker step 13: the master must be in brokerLiveTable
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    // The master's live entry goes (e.g. a conflict elsewhere); its address stays in the group.
    m.broker_live_table.remove(&BrokerAddrInfo::new(CLUSTER, MASTER_ADDR));

    let out = m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &b), ch(2));
    assert_eq!(out.result, Some(RegisterBrokerResult::default()));
}

#[test]
fn last_registrant_overwrites_the_group_acting_master_flag_and_zone() {
    // RocketMQ RouteInfoManager#registerBroker step 3
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    let master = acting(broker(BROKER, 0, MASTER_ADDR, &b));
    m.register_broker(t(0), &master, ch(1));
    assert!(m.broker_addr_table()[&n(BROKER)].enable_acting_master);

    // The slave registers without acting master and with a zone: the whole group follows it.
    let slave = broker(BROKER, 1, SLAVE_ADDR, &b);
    let slave = crate::rocketmq::types::RegisterBrokerRequest { zone_name: Some("z1".into()), ..slave };
    m.register_broker(t(0), &slave, ch(2));
    let group = &m.broker_addr_table()[&n(BROKER)];
    assert!(!group.enable_acting_master);
    assert_eq!(group.zone_name.as_deref(), Some("z1"));
}

#[test]
fn old_broker_without_the_acting_master_field_clears_the_flag_and_is_never_prime_slave() {
    // RocketMQ RouteInfoManager#registerBroker steps 3 and 9 (isOldVersionBroker)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &acting(broker(BROKER, 0, MASTER_ADDR, &b)), ch(1));
    let old_slave = crate::rocketmq::types::RegisterBrokerRequest {
        enable_acting_master: None,
        ..broker("broker-b", 1, SLAVE_ADDR, &b)
    };
    let out = m.register_broker(t(0), &old_slave, ch(2));

    // Smallest id of a master-less group, but an old broker: a plain slave, topics untouched.
    assert_eq!(out.role, Some(BrokerRole::Slave));
    assert!(!m.broker_addr_table()[&n("broker-b")].enable_acting_master);
    assert_eq!(perm_of(&m, "T", "broker-b"), None);
}

#[test]
fn same_address_moves_to_its_new_id_on_role_switch() {
    // RocketMQ RouteInfoManager#registerBroker step 5 (RouteInfoManagerNewTest#switchBrokerRole)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let out = m.register_broker(t(0), &broker(BROKER, 0, SLAVE_ADDR, &body(dv(2), &["T", "U"])), ch(1));

    assert_eq!(out.switched_ids, vec![(1, SLAVE_ADDR.to_string())]);
    assert_eq!(ids_of(&m, BROKER), vec![0]);
}

#[test]
fn conflicting_registration_with_lower_state_version_is_ignored_and_loses_its_live_entry() {
    // RocketMQ RouteInfoManager#registerBroker step 6 (controller mode)
    let mut m = manager();
    let newer = crate::rocketmq::types::DataVersion { state_version: 5, ..dv(1) };
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(newer, &["T", "U"])), ch(1));
    // The stale one had a live entry of its own from an earlier life.
    m.register_broker(t(0), &broker("other", 0, SLAVE_ADDR, &body(dv(1), &["T", "U"])), ch(2));

    let stale = broker(BROKER, 0, SLAVE_ADDR, &body(dv(1), &["T", "U"]));
    let out = m.register_broker(t(10), &stale, ch(2));

    assert!(out.conflict);
    assert_eq!(out.result, Some(RegisterBrokerResult::default()), "non-null: still SUCCESS");
    assert!(matches!(out.stopped, Some(RegisterStop::Conflict { live_entry_removed: true, .. })));
    assert_eq!(m.broker_addr_table()[&n(BROKER)].broker_addrs[&0], MASTER_ADDR);
    assert!(!m.broker_live_table().contains_key(&BrokerAddrInfo::new(CLUSTER, SLAVE_ADDR)));
}

#[test]
fn equal_state_version_is_not_a_conflict_and_the_newcomer_takes_the_id() {
    // RocketMQ RouteInfoManager#registerBroker step 6: strictly greater (testMasterChangeFromSlave)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    let out = m.register_broker(t(0), &broker(BROKER, 0, SLAVE_ADDR, &b), ch(2));

    assert!(!out.conflict);
    // Java's registerFirst only asks whether the id was empty; it held MASTER_ADDR.
    assert!(!out.register_first);
    assert_eq!(m.broker_addr_table()[&n(BROKER)].broker_addrs[&0], SLAVE_ADDR);
}

#[test]
fn single_topic_first_registration_returns_null_after_touching_cluster_table() {
    // RocketMQ RouteInfoManager#registerBroker step 7 (#4522/#4523): steps 1-5 stay applied
    let mut m = manager();
    let out = m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["OnlyOne"])), ch(1));

    assert_eq!(out.result, None);
    assert_eq!(out.stopped, Some(RegisterStop::SingleTopicGuard));
    assert!(m.cluster_addr_table()[&n(CLUSTER)].contains(&n(BROKER)));
    assert!(m.broker_addr_table()[&n(BROKER)].broker_addrs.is_empty(), "an empty group remains");
    assert!(m.broker_live_table().is_empty());
    assert!(m.topic_queue_table().is_empty());
}

#[test]
fn single_topic_registration_of_a_claimed_id_is_accepted() {
    // RocketMQ RouteInfoManager#registerBroker step 7 applies only to unclaimed ids
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["A", "B"])), ch(1));
    let out = m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(2), &["C"])), ch(1));

    assert!(out.result.is_some());
    assert_eq!(out.topics_updated, vec!["C".to_string()]);
}

#[test]
fn registration_under_an_unclaimed_id_of_a_known_group_counts_as_first() {
    // RocketMQ RouteInfoManager#registerBroker step 8: registerFirst |= isEmpty(oldAddr)
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(1));
    m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &b), ch(2));
    let again = m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &b), ch(2));

    assert!(!again.register_first);
    let fresh = m.register_broker(t(0), &broker(BROKER, 2, "127.0.0.1:50911", &b), ch(3));
    assert!(fresh.register_first);
}

#[test]
fn each_registration_replaces_the_whole_live_entry() {
    // RocketMQ RouteInfoManager#registerBroker step 11: new BrokerLiveInfo(...)
    let mut m = manager();
    let mut req = broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"]));
    req.heartbeat_timeout_millis = Some(ms(10_000));
    m.register_broker(t(0), &req, ch(1));
    req.heartbeat_timeout_millis = None;
    req.ha_server_addr = "new-ha".into();
    let out = m.register_broker(t(500), &req, ch(7));

    assert!(out.live_entry_replaced);
    let live = &m.broker_live_table()[&BrokerAddrInfo::new(CLUSTER, MASTER_ADDR)];
    assert_eq!(live.heartbeat_timeout_millis, DEFAULT_BROKER_CHANNEL_EXPIRED_TIME, "lengthened back to 120 s");
    assert_eq!((live.last_update_timestamp, live.channel), (t(500), ch(7)));
    assert_eq!(live.ha_server_addr, "new-ha");
}

#[test]
fn filter_server_list_none_keeps_empty_removes_and_non_empty_replaces() {
    // RocketMQ RouteInfoManager#registerBroker step 12
    let mut m = manager();
    let key = BrokerAddrInfo::new(CLUSTER, MASTER_ADDR);
    let mut req = broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"]));
    req.filter_server_list = Some(vec!["fs1".into()]);
    m.register_broker(t(0), &req, ch(1));
    assert_eq!(m.filter_server_table()[&key], vec!["fs1".to_string()]);

    req.filter_server_list = None;
    m.register_broker(t(1), &req, ch(1));
    assert!(m.filter_server_table().contains_key(&key), "None keeps");

    req.filter_server_list = Some(vec![]);
    m.register_broker(t(2), &req, ch(1));
    assert!(!m.filter_server_table().contains_key(&key), "empty removes");
}

#[test]
fn lower_broker_id_registration_notifies_everyone_but_the_new_minimum() {
    // RocketMQ RouteInfoManager#registerBroker steps 4 and 14, chooseBrokerAddrsToNotify
    let config = NamesrvConfig { notify_min_broker_id_changed: true, ..Default::default() };
    let mut m = manager_with(config);
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &b), ch(1));
    m.register_broker(t(0), &broker(BROKER, 2, "127.0.0.1:50911", &b), ch(2));
    let out = m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(3));

    // The group has no acting master: the register path does not check that flag.
    let notice = out.min_broker_id_changed.expect("min id went from 1 to 0");
    assert_eq!((notice.min_broker_id, notice.min_broker_addr.as_str()), (0, MASTER_ADDR));
    assert_eq!(notice.offline_broker_addr, None);
    assert_eq!(notice.ha_broker_addr, Some(format!("ha-of-{MASTER_ADDR}")));
    assert_eq!(notice.notify_addrs, vec![SLAVE_ADDR.to_string(), "127.0.0.1:50911".to_string()]);
}

#[test]
fn first_registration_into_an_empty_group_never_changes_min_broker_id() {
    // RocketMQ RouteInfoManager#registerBroker step 4: prevMinBrokerId defaults to 0
    let config = NamesrvConfig { notify_min_broker_id_changed: true, ..Default::default() };
    let mut m = manager_with(config);
    let out = m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    assert_eq!(out.min_broker_id_changed, None);
}

#[test]
fn min_broker_id_change_is_silent_when_notification_is_off() {
    // RocketMQ RouteInfoManager#registerBroker step 14: namesrvConfig.isNotifyMinBrokerIdChanged()
    let mut m = manager();
    let b = body(dv(1), &["T", "U"]);
    m.register_broker(t(0), &broker(BROKER, 1, SLAVE_ADDR, &b), ch(1));
    let out = m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &b), ch(2));
    assert_eq!(out.min_broker_id_changed, None);
}

#[test]
fn same_address_under_two_clusters_is_two_live_entries() {
    // RocketMQ RouteInfoManagerTest#testQueryBrokerTopicConfig: the live key is (cluster, addr)
    let mut m = manager();
    m.register_broker(t(0), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
    let mut other = broker("broker-1", 0, MASTER_ADDR, &body(dv(2), &["V", "W"]));
    other.cluster_name = "cluster-1".into();
    m.register_broker(t(0), &other, ch(2));

    assert_eq!(m.broker_live_table().len(), 2);
    assert!(!m.is_broker_topic_config_changed(CLUSTER, MASTER_ADDR, &dv(1)));
    assert!(!m.is_broker_topic_config_changed("cluster-1", MASTER_ADDR, &dv(2)));
}

#[test]
fn null_wrapper_first_registration_is_caught_like_javas_npe() {
    // RocketMQ RouteInfoManager#registerBroker step 7 dereferences the wrapper; the catch returns
    // the empty result
    let mut m = manager();
    let mut req = broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &[]));
    req.topic_config_wrapper = None;
    let out = m.register_broker(t(0), &req, ch(1));

    assert_eq!(out.stopped, Some(RegisterStop::NullWrapper { step: 7 }));
    assert_eq!(out.result, Some(RegisterBrokerResult::default()));
    assert!(m.broker_addr_table()[&n(BROKER)].broker_addrs.is_empty());
}

#[test]
fn null_wrapper_re_registration_stores_a_fresh_data_version() {
    // RocketMQ RouteInfoManager#registerBroker step 11: new DataVersion() when the wrapper is null
    let mut m = manager();
    let mut req = broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"]));
    m.register_broker(t(0), &req, ch(1));
    req.topic_config_wrapper = None;
    let out = m.register_broker(t(9000), &req, ch(1));

    assert_eq!(out.topic_pass, TopicPass::NotEligible);
    let live = &m.broker_live_table()[&BrokerAddrInfo::new(CLUSTER, MASTER_ADDR)];
    assert_eq!(live.data_version, DataVersion::new(t(9000)));
}
