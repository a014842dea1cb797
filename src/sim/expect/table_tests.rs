//! The `live` entry fields and the `topics` queries on a run: one broker registering with one
//! name server, then changing its topics.

use super::Verdict;
use crate::sim::runner::{run, RunOptions};
use crate::sim::scenario::parse;
use std::path::Path;

const CLUSTER: &str = r#"
[scenario]
name = "tables"
seed = 1
duration = "3m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders", read = 4, write = 4 }]

[[action]]
name = "add Payments"
at = "70s"
upsert_topic = { broker = "a0", name = "Payments" }
"#;

fn verdicts(expects: &str) -> Vec<(String, Verdict)> {
    let scenario = parse(Path::new("t.toml"), &format!("{CLUSTER}\n{expects}")).unwrap_or_else(|e| panic!("{e}"));
    run(&scenario, RunOptions::default()).verdicts.into_iter().map(|(e, v)| (e.name, v)).collect()
}

#[test]
fn a_live_entry_shows_its_last_update_timeout_and_data_version() {
    // a0's start-up registration opens the channel and returns at 0.004 s, which schedules
    // the periodic one 10 s later, then every 30 s (BrokerController#start), each landing
    // 1 ms after it is sent: 10.005 s, 40.005 s, 70.005 s. `updateTopic` bumps the topic
    // config's DataVersion (TopicConfigManager#updateTopicConfig → nextVersion) and registers
    // at once.
    let v = verdicts(
        r#"
[[expect]]
name = "registered at 40.005 s, 120 s timeout, first config"
at = "60s"
live = { namesrv = "ns1", broker = "a0", present = true, last_update = "40.005s", timeout = "120s", data_version = 0 }

[[expect]]
name = "a new topic is a new DataVersion"
after = "add Payments"
within = "1s"
live = { namesrv = "ns1", broker = "a0", present = true, data_version = 1 }

[[expect]]
name = "wrong on purpose"
at = "60s"
live = { namesrv = "ns1", broker = "a0", present = true, last_update = "10.005s", timeout = "10s" }
"#,
    );
    assert!(v[0].1.held() && v[1].1.held(), "{v:#?}");
    let Verdict::Failed { mismatch, .. } = &v[2].1 else { panic!("{v:#?}") };
    assert_eq!(mismatch.expected, "a0 (DefaultCluster/10.0.0.1:10911): last update 10.005s, timeout 10s");
    assert_eq!(mismatch.got, "last update 40.005s, timeout 2m");
}

#[test]
fn the_topic_lists_answer_as_the_name_server_holds_them() {
    let v = verdicts(
        r#"
[[expect]]
name = "all"
at = "60s"
topics = { namesrv = "ns1", query = "all", includes = ["Orders", "SELF_TEST_TOPIC"], excludes = ["Payments"] }

[[expect]]
name = "by cluster, after the new topic"
after = "add Payments"
within = "1s"
topics = { namesrv = "ns1", query = "cluster", cluster = "DefaultCluster", includes = ["Orders", "Payments"] }

[[expect]]
name = "an unknown cluster has none"
at = "60s"
topics = { namesrv = "ns1", query = "cluster", cluster = "Elsewhere", topics = [] }

[[expect]]
name = "system: the cluster and group names, and an address"
at = "60s"
topics = { namesrv = "ns1", query = "system", topics = ["DefaultCluster", "broker-a"], broker_addr = "10.0.0.1:10911" }

[[expect]]
name = "no unit topics"
at = "60s"
topics = { namesrv = "ns1", query = "unit", topics = [] }

[[expect]]
name = "wrong on purpose"
at = "60s"
topics = { namesrv = "ns1", query = "system", topics = ["DefaultCluster"] }
"#,
    );
    let held: Vec<bool> = v.iter().map(|(_, v)| v.held()).collect();
    assert_eq!(held, [true, true, true, true, true, false], "{v:#?}");
    let Verdict::Failed { mismatch, .. } = &v[5].1 else { unreachable!() };
    assert_eq!(mismatch.expected, "getSystemTopicList exactly [DefaultCluster]");
    assert_eq!(mismatch.got, "[DefaultCluster, broker-a]");
}

/// `register_topic` and `unregister_broker` as an operator or a test sends them, with the
/// table invariants on: the topic is stored as given, the unregistration goes through the
/// batch at once, the broker's next periodic registration brings it back (10.004 s + 30 s·k,
/// landing 1 ms later: 70.005 s), and the topic only the name server knew of is gone for good.
#[test]
fn operator_requests_change_the_tables_as_registertopic_and_unregisterbroker_do() {
    let scenario = parse(Path::new("rq.toml"), REQUESTS).unwrap_or_else(|e| panic!("{e}"));
    let report = run(&scenario, RunOptions::default());
    let held: Vec<bool> = report.verdicts.iter().map(|(_, v)| v.held()).collect();
    assert_eq!(held, [true, true, true, true], "{:#?}", report.verdicts);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    let Verdict::Held { converged: Some(back) } = report.verdicts[2].1 else { unreachable!() };
    assert_eq!(back.millis(), 20_005);
}

const REQUESTS: &str = include_str!("table_tests_requests.toml");

/// `RouteInfoManager#registerBroker` answers a slave with its master's address and the master's
/// HA address (`brokerIP2` and `haListenPort`, by default the listen port + 1), a master with
/// nulls, and a slave whose master has no live entry with nulls too. In rocketmq/03 the master
/// is killed at 40 s (its channel closes; it is unregistered at 40.001 s) and the slave
/// registers every 30 s from 10.004 s: its registration at 40.004 s, 4 ms after the kill, is
/// the first answered with nulls.
#[test]
fn a_slave_is_told_its_master_until_the_master_is_gone() {
    let catalogue = include_str!("../../../scenarios/rocketmq/03-master-down-no-acting-master.toml");
    let expects = r#"
[[expect]]
name = "reg: the slave is told its master"
at = "39s"
registration = { broker = "a-slave", namesrv = "ns1", master_addr = "10.0.0.1:10911", ha_server_addr = "10.0.0.1:10912" }

[[expect]]
name = "reg: a master is told nothing"
at = "39s"
registration = { broker = "a-master", namesrv = "ns1", master_addr = "", ha_server_addr = "" }

[[expect]]
name = "reg: once the master is gone, nothing either"
after = "kill the master"
within = "1s"
registration = { broker = "a-slave", namesrv = "ns1", master_addr = "" }

[[expect]]
name = "reg: wrong on purpose"
at = "39s"
registration = { broker = "a-slave", namesrv = "ns1", master_addr = "" }
"#;
    let scenario = parse(Path::new("t.toml"), &format!("{catalogue}\n{expects}")).unwrap_or_else(|e| panic!("{e}"));
    let report = run(&scenario, RunOptions::default());
    let v: Vec<_> = report.verdicts.into_iter().filter(|(e, _)| e.name.starts_with("reg:")).collect();
    let held: Vec<bool> = v.iter().map(|(_, v)| v.held()).collect();
    assert_eq!(held, [true, true, true, false], "{v:#?}");
    let Verdict::Held { converged: Some(after) } = v[2].1 else { unreachable!() };
    assert!((4..1_000).contains(&after.millis()), "the slave's registration at 40.004 s: {after:?}");
    let Verdict::Failed { mismatch, .. } = &v[3].1 else { unreachable!() };
    assert_eq!(mismatch.expected, "a-slave's last REGISTER_BROKER answer: masterAddr null");
    assert!(mismatch.got.starts_with("masterAddr 10.0.0.1:10911, haServerAddr 10.0.0.1:10912 (answered at "));
}

/// `register_broker` as `RouteInfoManagerBrokerRegisterTest` uses it: `registerBroker` reads a
/// master's topics only when `isBrokerTopicConfigChanged` (the DataVersion differs from the
/// live entry's) or on a first registration. So after `wipeWritePermOfBroker`, a registration
/// under the version the name server already holds leaves the wipe in place, and one under a
/// new version makes the topics writable again — and the name server keeps that version until
/// the broker's next periodic registration (10.004 s + 30 s·k, landing 1 ms later: 70.005 s)
/// brings back its own counter 0.
#[test]
fn a_chosen_dataversion_decides_whether_the_topics_are_read_again() {
    let scenario = parse(Path::new("v.toml"), VERSION).unwrap_or_else(|e| panic!("{e}"));
    let report = run(&scenario, RunOptions::default());
    let held: Vec<bool> = report.verdicts.iter().map(|(_, v)| v.held()).collect();
    assert_eq!(held, [true, true, true, true, true, false], "{:#?}", report.verdicts);
    let Verdict::Failed { mismatch, .. } = &report.verdicts[5].1 else { unreachable!() };
    assert!(mismatch.expected.contains("broker-a") && mismatch.expected.contains("rw"), "{mismatch:?}");
    assert!(mismatch.got.contains("broker-a") && mismatch.got.contains('r'), "{mismatch:?}");
}

const VERSION: &str = include_str!("table_tests_version.toml");
