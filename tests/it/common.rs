//! What the integration tests share: running the `routesim` binary as a user would, reading its
//! output, writing scenario files. Each module uses only some of it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary from the repository root, so catalogue paths work as the README writes them.
pub fn routesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_routesim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// Stdout and stderr, as text.
pub fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Writes `body` (text or raw bytes) to `dir/name`.
pub fn write(dir: &Path, name: &str, body: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).expect("temp file");
    path
}

/// A valid scenario (one name server, one broker with `Orders`) that loader tests append a
/// mistake to; what they append starts on line 14.
pub const GOOD: &str = r#"
[scenario]
name = "t"
duration = "5m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders", read = 4, write = 4 }]
"#;

/// The errors of [`GOOD`] with `extra` appended, loaded as `t.toml`.
pub fn errors(extra: &str) -> routesim::sim::scenario::ScenarioErrors {
    routesim::sim::scenario::parse(Path::new("t.toml"), &format!("{GOOD}{extra}")).expect_err("should be rejected")
}

/// A scenario whose one expectation cannot hold: the route of a killed broker never comes back.
pub const FAILING: &str = r#"
[scenario]
name = "expects the impossible"
seed = 5
duration = "2m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders", read = 4, write = 4 }]

[[fault]]
at = "30s"
crash = "a0"

[[expect]]
name = "route survives a kill"
at = "1m"
route = { namesrv = "ns1", topic = "Orders", brokers = ["broker-a"] }
"#;

/// An expectation [`FAILING`]'s scenario meets, to append to it.
pub const HOLDS: &str = r#"
[[expect]]
name = "route is there before the kill"
after = "0s"
within = "10s"
route = { namesrv = "ns1", topic = "Orders", brokers = ["broker-a"] }
"#;
