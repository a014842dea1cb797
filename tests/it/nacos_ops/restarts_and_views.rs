//! The Nacos operations across a naming server's restart, and in `explain` and the diagram.

use super::{holds, trace, BASE, DEREGISTER, SHORTEN, SWITCHES};
use crate::common::{routesim, text, write};

#[test]
fn explain_and_the_diagram_name_the_java_method_behind_each_operation() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "t.toml", format!("{BASE}{SHORTEN}{DEREGISTER}{SWITCHES}"));
    let (explained, err) = text(&routesim(&["explain", file.to_str().unwrap()]));
    for says in [
        "InstanceController#update → InstanceOperatorClientImpl#updateInstance(orders-1",
        "unhealthy after 6s, deleted after 8s",
        "OperatorController#updateSwitch → SwitchManager#update on nacos1",
        "NacosNamingService#deregisterInstance(orders-1) → BeatReactor#removeBeatInfo",
    ] {
        assert!(explained.contains(says), "{says:?} missing from:\n{explained}\n{err}");
    }
    let mmd = dir.path().join("t.mmd");
    let out = routesim(&["run", file.to_str().unwrap(), "--diagram", mmd.to_str().unwrap()]);
    let diagram = std::fs::read_to_string(&mmd).unwrap_or_else(|_| panic!("{:?}", text(&out)));
    assert!(diagram.contains("updateInstance (console) orders-1"), "{diagram}");
    assert!(diagram.contains("updateSwitch: clientBeatInterval=10000"), "{diagram}");
}

#[test]
fn what_a_server_accepted_survives_its_restart_and_a_server_that_was_down_missed_it() {
    // Nacos keeps switches (SwitchManager → PersistentConsistencyService) and instance metadata
    // (InstanceMetadataProcessor, a RequestProcessor4CP) through its CP protocol, on disk.
    holds(
        r#"
[[action]]
name = "shorten"
at = "20s"
update_metadata = { instance = "orders-1", metadata = { "preserved.heart.beat.timeout" = "6000", "preserved.ip.delete.timeout" = "8000" } }

[[fault]]
at = "25s"
crash = "nacos1"

[[fault]]
at = "30s"
restart = "nacos1"

[[fault]]
name = "kill orders-1"
at = "60.5s"
crash = "orders-1"

[[expect]]
name = "the restarted server still reads the console's 8 s"
after = "kill orders-1"
within = "10s"
instance = { server = "nacos1", instance = "orders-1", state = "absent" }
"#,
    );
    holds(
        r#"
[[action]]
name = "slow beats"
at = "20s"
nacos_switch = { client_beat_interval = "10s" }

[[fault]]
at = "25s"
crash = "nacos1"

[[fault]]
name = "back"
at = "40s"
restart = "nacos1"

[[expect]]
name = "orders-2 is registered again by its first beat to the restarted server"
at = "back + 6s"
instance = { server = "nacos1", instance = "orders-2", state = "healthy" }

[[expect]]
name = "which still answers 10 s: orders-2's 6 s timeouts starve again"
after = "back + 6s"
within = "15s"
instance = { server = "nacos1", instance = "orders-2", state = "absent" }
"#,
    );
    let missed = r#"
[[fault]]
at = "15s"
crash = "nacos1"

[[action]]
name = "slow beats"
at = "20s"
nacos_switch = { client_beat_interval = "10s" }

[[fault]]
name = "back"
at = "25s"
restart = "nacos1"

[[expect]]
name = "the switch never reached nacos1: orders-2 keeps its 5 s beats"
from = "back + 20s"
until = "2m"
instance = { server = "nacos1", instance = "orders-2", state = "healthy" }
"#;
    holds(missed);
    assert!(trace(missed).contains("slow beats: nacos1 is not running, the call reaches nobody there"));
}
