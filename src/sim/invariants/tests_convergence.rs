//! `convergence` after operator actions: the tables a cluster settles to are derived from the
//! brokers' config *as the actions changed it*, and the parts of a table whose state depends on
//! history (a topic deleted from a broker, a wiped write permission) are left out.

use super::Invariant;
use crate::sim::runner::{run, RunOptions, RunReport};
use crate::sim::scenario::parse;
use std::path::Path;

const CLUSTER: &str = r#"
[scenario]
name = "t"
duration = "10m"
invariants = ["convergence", "consistent_tables"]

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "T", read = 4, write = 4 }, { name = "U", read = 4, write = 4 }]

[[broker]]
name = "a1"
broker_name = "broker-a"
id = 1
addr = "10.0.0.2:10911"
topics = [{ name = "T", read = 4, write = 4 }, { name = "U", read = 4, write = 4 }]
"#;

fn run_with(actions: &str) -> RunReport {
    let scenario = parse(Path::new("t.toml"), &format!("{CLUSTER}{actions}")).expect("the fixture parses");
    assert!(scenario.invariants.contains(&Invariant::Convergence));
    run(&scenario, RunOptions::default())
}

fn assert_clean(report: &RunReport) {
    let v: Vec<String> = report.violations.iter().map(|v| v.to_string()).collect();
    assert!(v.is_empty(), "{v:?}");
    let failed: Vec<&str> = report.verdicts.iter().filter(|(_, v)| !v.held()).map(|(e, _)| e.name.as_str()).collect();
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn a_resized_topic_converges_to_the_new_size() {
    // Until the monitor applied actions, this reported "expected (4, 4, 6), got (8, 8, 6)".
    let report = run_with(
        r#"
[[action]]
name = "resize"
at = "1m"
upsert_topic = { broker = "a0", name = "T", read = 8, write = 8 }

[[expect]]
name = "the name server has the new size"
at = "9m"
route = { namesrv = "ns1", topic = "T", queues = { broker-a = { read = 8, write = 8 } } }
"#,
    );
    assert_clean(&report);
}

#[test]
fn a_read_only_broker_converges_to_read_only_queues() {
    let report = run_with(
        r#"
[[action]]
name = "drain"
at = "1m"
broker_permission = { broker = "a0", perm = "r" }

[[expect]]
name = "the queues are read-only"
at = "9m"
route = { namesrv = "ns1", topic = "T", perm = { broker-a = "r" } }
"#,
    );
    assert_clean(&report);
}

#[test]
fn history_dependent_queues_are_left_out_not_guessed() {
    // The name server keeps a topic deleted from its broker, and a wiped write permission until
    // a changed registration: neither follows from the brokers' config.
    let report = run_with(
        r#"
[[action]]
name = "delete U"
at = "1m"
remove_topic = { broker = "a0", topic = "U" }

[[action]]
name = "drain"
at = "2m"
wipe_write_perm = { broker_name = "broker-a" }

[[expect]]
name = "ns1 still lists U"
at = "9m"
route = { namesrv = "ns1", topic = "U", brokers = ["broker-a"] }

[[expect]]
name = "T stays read-only"
at = "9m"
route = { namesrv = "ns1", topic = "T", perm = { broker-a = "r" } }
"#,
    );
    assert_clean(&report);
}

#[test]
fn a_masterless_group_keeps_what_its_master_registered_last() {
    // Both brokers go read-only while a0 cannot reach ns1, and a0 dies before the heal. a1, the
    // prime slave now, registered its new DataVersion with ns1 while a0 still led the group,
    // so its registrations change nothing (`registerFirst || isTopicConfigChanged`): ns1 keeps
    // a0's read-write QueueData for good. The invariant expected a1's read-only config.
    let report = run_with(
        r#"
[[fault]]
name = "cut"
at = "30s"
block = { from = "a0", to = "ns1" }

[[action]]
name = "drain a0"
at = "1m"
broker_permission = { broker = "a0", perm = "r" }

[[action]]
name = "drain a1"
at = "1m"
broker_permission = { broker = "a1", perm = "r" }

[[fault]]
name = "kill a0"
at = "1m30s"
crash = "a0"

[[fault]]
name = "heal"
at = "2m"
heal = "cut"

[[expect]]
name = "ns1 still has a0's read-write queues"
at = "9m"
route = { namesrv = "ns1", topic = "T", perm = { broker-a = "rw" } }
"#,
    );
    assert_clean(&report);
}

#[test]
fn only_a_masterless_group_configured_apart_or_changed_is_left_out() {
    // One config for both brokers and no action: whichever registered last, the QueueData is
    // the same, so the group stays in the comparison after its master dies.
    let alike = parse(Path::new("t.toml"), CLUSTER).expect("the fixture parses");
    assert!(!super::derive::Configs::new(&alike).masterless_history("broker-a"));
    // a1 without topic U: what the master registered last is not what a1 registers.
    let apart = CLUSTER.replace(
        "id = 1\naddr = \"10.0.0.2:10911\"\ntopics = [{ name = \"T\", read = 4, write = 4 }, { name = \"U\", read = 4, write = 4 }]",
        "id = 1\naddr = \"10.0.0.2:10911\"\ntopics = [{ name = \"T\", read = 4, write = 4 }]",
    );
    assert_ne!(apart, CLUSTER);
    let apart = parse(Path::new("t.toml"), &apart).expect("the fixture parses");
    assert!(super::derive::Configs::new(&apart).masterless_history("broker-a"));
}

#[test]
fn an_upsert_lost_to_a_cut_stays_lost_once_a_later_one_arrives() {
    // a0's incremental registration of T (8 queues, `registerIncrementBrokerData`) is lost to
    // the cut; after the heal its incremental registration of U carries a newer DataVersion
    // and reaches ns1. Its periodic full registrations then carry the version ns1 holds, so
    // `isTopicConfigChanged` is false for T and ns1 keeps T at 4 queues for good.
    let report = run_with(
        r#"
[[fault]]
name = "cut"
at = "45s"
block = { from = "a0", to = "ns1" }

[[action]]
name = "grow T"
at = "1m"
upsert_topic = { broker = "a0", name = "T", read = 8, write = 8 }

[[fault]]
name = "heal"
at = "1m20s"
heal = "cut"

[[action]]
name = "grow U"
at = "1m25s"
upsert_topic = { broker = "a0", name = "U", read = 8, write = 8 }

[[expect]]
name = "ns1 never learns of T's new size"
at = "9m"
route = { namesrv = "ns1", topic = "T", queues = { broker-a = { read = 4, write = 4 } } }

[[expect]]
name = "but has U's"
at = "9m"
route = { namesrv = "ns1", topic = "U", queues = { broker-a = { read = 8, write = 8 } } }
"#,
    );
    assert_clean(&report);
}

#[test]
fn an_upsert_queued_behind_another_is_lost_without_any_fault() {
    // With 1 s each way, a0's periodic registration at 14 s holds the BrokerController's lock
    // until its answer at 16 s. Both upserts queue behind it (`registerIncrementBrokerData` is
    // `synchronized`), and both take the `TopicConfigManager`'s DataVersion object, which U's
    // change has advanced by then: T's registration goes out with v2 at 16 s, U's with v2 at
    // 18 s, and ns1, holding v2 since T's, finds nothing changed for U (`isTopicConfigChanged`).
    // The broker's periodic registrations carry v2 from then on, so U stays at 4 queues there.
    // Nothing was lost in the network: the invariant must not expect U's 8.
    let report = run_with(
        r#"
[network]
latency = "1s"

[[action]]
name = "grow T"
at = "14.5s"
upsert_topic = { broker = "a0", name = "T", read = 8, write = 8 }

[[action]]
name = "grow U"
at = "15s"
upsert_topic = { broker = "a0", name = "U", read = 8, write = 8 }

[[expect]]
name = "ns1 has T's new size"
at = "9m"
route = { namesrv = "ns1", topic = "T", queues = { broker-a = { read = 8, write = 8 } } }

[[expect]]
name = "but keeps U's old one"
at = "9m"
route = { namesrv = "ns1", topic = "U", queues = { broker-a = { read = 4, write = 4 } } }
"#,
    );
    assert_clean(&report);
}

#[test]
fn a_group_left_empty_by_a_refused_registration_is_not_expected_gone() {
    // ns1 restarts at 80 s with empty tables, and at that instant a0's upsert of T sends its
    // one-topic incremental registration there. `registerBroker` makes the group and lists it
    // in the cluster, then refuses it (#4522: the id is not in the group yet). Both brokers
    // die at 95 s, before their next periodic registration (100 s): nothing made a live entry,
    // so nothing ever unregisters the group, and Java keeps it, empty, in its cluster.
    let report = run_with(
        r#"
[[fault]]
name = "ns1 down"
at = "50s"
crash = "ns1"

[[fault]]
name = "ns1 back"
at = "80s"
restart = "ns1"

[[action]]
name = "grow T"
at = "80s"
upsert_topic = { broker = "a0", name = "T", read = 8, write = 8 }

[[fault]]
name = "a0 dies"
at = "95s"
crash = "a0"

[[fault]]
name = "a1 dies"
at = "95s"
crash = "a1"

[[expect]]
name = "ns1 still lists the dead group in its cluster"
at = "9m"
cluster = { namesrv = "ns1", cluster = "DefaultCluster", brokers = ["broker-a"] }
"#,
    );
    assert_clean(&report);
}
