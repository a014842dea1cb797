//! The timeline of docs/scenario-format.md's frame table, run: every row's verdict, so the
//! table and the checker cannot drift apart.

use crate::sim::runner::{run, RunOptions};
use crate::sim::scenario::parse;
use std::path::Path;

/// Each row of the table: (frame keys, claim, holds?).
const ROWS: &[(&str, &str, bool)] = &[
    (r#"at = "delete Orders""#, ORDERS_ABSENT, true),
    (r#"at = "delete Orders - 1ms""#, ORDERS_ABSENT, false),
    (r#"at = "165.005s""#, B0_LIVE, false),
    (r#"at = "165.005s - 1ms""#, B0_LIVE, true),
    ("after = \"165.005s\"\nwithin = \"10s\"", B0_LIVE, false),
    ("after = \"165.005s - 1ms\"\nwithin = \"10s\"", B0_GONE, true),
    ("from = \"165.005s\"\nuntil = \"4m\"", B0_GONE, true),
    ("from = \"power off b0\"\nuntil = \"165.005s\"", B0_LIVE, false),
    ("from = \"power off b0\"\nuntil = \"165.005s - 1ms\"", B0_LIVE, true),
];

const ORDERS_ABSENT: &str = r#"route = { namesrv = "ns1", topic = "Orders", absent = true }"#;
const B0_LIVE: &str = r#"live = { namesrv = "ns1", broker = "b0", present = true }"#;
const B0_GONE: &str = r#"live = { namesrv = "ns1", broker = "b0", present = false }"#;

const CLUSTER: &str = r#"
[scenario]
name = "frames"
seed = 1
duration = "4m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "b0"
broker_name = "broker-b"
addr = "10.0.0.2:10911"
topics = [{ name = "Orders", read = 4, write = 4 }]

[[fault]]
name = "power off b0"
at = "60s"
host_down = "b0"

[[action]]
name = "delete Orders"
at = "100s"
delete_topic = { topic = "Orders" }
"#;

#[test]
fn every_row_of_the_frame_table_holds_as_documented() {
    let mut source = CLUSTER.to_string();
    for (i, (frame, claim, _)) in ROWS.iter().enumerate() {
        source += &format!("\n[[expect]]\nname = \"row {}\"\n{frame}\n{claim}\n", i + 1);
    }
    let scenario = parse(Path::new("frames.toml"), &source).unwrap_or_else(|e| panic!("{e}"));
    let report = run(&scenario, RunOptions::default());
    for ((exp, verdict), (frame, claim, holds)) in report.verdicts.iter().zip(ROWS) {
        assert_eq!(verdict.held(), *holds, "{}: {frame} / {claim}: {verdict:?}", exp.name);
    }
    // The last row is exact: one more millisecond and the scan's events are inside it.
    assert_eq!(report.verdicts.len(), ROWS.len());
}
