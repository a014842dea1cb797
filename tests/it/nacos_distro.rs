//! Nacos Distro in whole runs: which member each member's `DistroMapper` names for a 1.x HTTP
//! instance, and how that answer follows each member's own membership view. Every owner below is
//! worked by hand from the Java (`DistroMapper#distroHash`: `Math.abs(s.hashCode() %
//! Integer.MAX_VALUE)`, then `% healthyList.size()` over the sorted UP/SUSPICIOUS members):
//!
//! | tag | `String.hashCode` | `distroHash` | % 3 → of [nacos1, nacos2, nacos3] | % 2 → of [nacos1, nacos2] |
//! |---|---|---|---|---|
//! | `10.1.0.1:8080` | -1839857309 | 1839857309 | 2 → nacos3 | 1 → nacos2 |
//! | `10.1.0.2:8080` | -1811228158 | 1811228158 | 1 → nacos2 | 0 → nacos1 |
//! | `10.1.0.3:8080` | -1782599007 | 1782599007 | 0 → nacos1 | 1 → nacos2 |
//!
//! Membership timings are those of `nacos_members.rs`: a killed member is DOWN at the next report
//! to it (21.002 s for a kill at 20 s), a powered-off one SUSPICIOUS at 23.5 s and DOWN at 38 s.

use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::{parse, to_toml, Scenario};
use std::path::Path;

use crate::common::{routesim, text, write};

mod filter;

/// Three members of "east" and three 1.x instances; what tests append starts on line 35.
const BASE: &str = r#"
[scenario]
name = "distro"
duration = "45s"

[network]
connect_timeout = "5s"

[[nacos_server]]
name = "nacos1"
cluster = "east"

[[nacos_server]]
name = "nacos2"
cluster = "east"

[[nacos_server]]
name = "nacos3"
cluster = "east"

[[instance]]
name = "a"
service = "orders"
ip = "10.1.0.1"

[[instance]]
name = "b"
service = "orders"
ip = "10.1.0.2"

[[instance]]
name = "c"
service = "orders"
ip = "10.1.0.3"
"#;

/// Runs `BASE` + `extra`: every expectation must hold; the scenario survives a round trip.
fn holds(extra: &str) {
    let s = run_holds(&format!("{BASE}{extra}"));
    assert_eq!(parse(Path::new("t.toml"), &to_toml(&s)).expect("round trip"), s, "{}", to_toml(&s));
}

/// Runs a whole scenario: every expectation must hold. Returns the scenario it parsed.
fn run_holds(body: &str) -> Scenario {
    let s = parse(Path::new("t.toml"), body).unwrap_or_else(|e| panic!("valid: {e}"));
    let report = run(&s, RunOptions::default());
    let failed: Vec<String> =
        report.verdicts.iter().filter(|(_, v)| !v.held()).map(|(e, v)| format!("{}: {v:?}", e.name)).collect();
    assert!(failed.is_empty(), "{failed:?}");
    s
}

/// At `at`, `instance` is in `state` on `server`.
fn state_at(at: &str, server: &str, instance: &str, state: &str) -> String {
    format!(
        "\n[[expect]]\nname = \"at {at} {instance} {state} on {server}\"\nat = \"{at}\"\n\
         instance = {{ server = \"{server}\", instance = \"{instance}\", state = \"{state}\" }}\n"
    )
}

/// At `at`, `server` maps `instance` to `member`.
fn maps(at: &str, server: &str, instance: &str, member: &str) -> String {
    format!(
        "\n[[expect]]\nname = \"at {at} {server} maps {instance} to {member}\"\nat = \"{at}\"\n\
         responsible = {{ server = \"{server}\", instance = \"{instance}\", member = \"{member}\" }}\n"
    )
}

fn all(claims: &[(&str, &str, &str, &str)]) -> String {
    claims.iter().map(|(at, s, i, m)| maps(at, s, i, m)).collect()
}

#[test]
fn members_that_see_the_same_cluster_agree_on_every_owner() {
    let mut claims = Vec::new();
    for server in ["nacos1", "nacos2", "nacos3"] {
        claims.extend([("10s", server, "a", "nacos3"), ("10s", server, "b", "nacos2"), ("10s", server, "c", "nacos1")]);
    }
    holds(&all(&claims));
}

#[test]
fn a_killed_members_clients_are_rehashed_over_the_survivors_when_it_is_down() {
    // DOWN at 21.002 s in both survivors' views: [nacos1, nacos2], a → nacos2, b → nacos1, c →
    // nacos2. Every client may move, not only the dead member's: the modulus changed.
    let claims = all(&[
        ("21.001s", "nacos1", "a", "nacos3"),
        ("21.003s", "nacos1", "a", "nacos2"),
        ("21.003s", "nacos2", "a", "nacos2"),
        ("21.003s", "nacos1", "b", "nacos1"),
        ("21.003s", "nacos2", "c", "nacos2"),
    ]);
    holds(&format!("\n[[fault]]\nname = \"kill\"\nat = \"20s\"\ncrash = \"nacos3\"\n{claims}"));
}

#[test]
fn a_suspicious_member_keeps_its_clients_until_it_is_down() {
    // Powered off at 20 s: SUSPICIOUS from 23.5 s, still in the healthy list; DOWN at 38 s.
    let claims = all(&[
        ("30s", "nacos1", "a", "nacos3"),
        ("37.9s", "nacos1", "a", "nacos3"),
        ("38.1s", "nacos1", "a", "nacos2"),
    ]);
    holds(&format!("\n[[fault]]\nname = \"power off\"\nat = \"20s\"\nhost_down = \"nacos3\"\n{claims}"));
}

#[test]
fn across_a_partition_each_side_owns_everything_it_can_see() {
    // nacos1 alone from 20 s: it sees nacos3 DOWN at 38 s and nacos2 at 40 s; then its list is
    // [nacos1] and it owns all three. nacos2 and nacos3 see nacos1 DOWN at 40 s: [nacos2,
    // nacos3], a → 1839857309 % 2 = 1 → nacos3, b → 0 → nacos2, c → 1 → nacos3. So b has two
    // owners (nacos1 and nacos2) until the heal.
    let claims = all(&[
        ("40.1s", "nacos1", "a", "nacos1"),
        ("40.1s", "nacos1", "b", "nacos1"),
        ("40.1s", "nacos2", "b", "nacos2"),
        ("40.1s", "nacos3", "a", "nacos3"),
        ("40.1s", "nacos3", "c", "nacos3"),
    ]);
    holds(&format!(
        "\n[[fault]]\nname = \"cut\"\nat = \"20s\"\npartition = [[\"nacos1\"], [\"nacos2\", \"nacos3\"]]\n{claims}"
    ));
}

#[test]
fn a_wrong_owner_claim_fails_with_the_owner_and_the_healthy_list() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("{BASE}\n[[fault]]\nat = \"20s\"\ncrash = \"nacos3\"\n{}", maps("22s", "nacos1", "a", "nacos3"));
    let file = write(dir.path(), "t.toml", body);
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("nacos1 maps a to nacos3"), "{stdout}");
    assert!(stdout.contains("nacos2 (healthy list [nacos1, nacos2])"), "{stdout}");
}

// ---- validation: file:line:column, exit 2 ----

fn refused(extra: &str, needle: &str, says: &[&str]) {
    let source = format!("{BASE}{extra}");
    let e = parse(Path::new("t.toml"), &source).expect_err("should be rejected");
    assert_eq!(e.0.len(), 1, "expected one error, got: {e}");
    let at = BASE.len() + extra.find(needle).unwrap_or_else(|| panic!("{needle:?} is in the text"));
    let line = source[..at].matches('\n').count() + 1;
    let column = at - source[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    let e = e.to_string();
    assert!(e.starts_with(&format!("t.toml:{line}:{column}: ")), "expected the error at {line}:{column}, got: {e}");
    for s in says {
        assert!(e.contains(s), "{s:?} missing from: {e}");
    }
}

fn claim(server: &str, instance: &str, member: &str) -> String {
    format!(
        "[[expect]]\nname = \"claim\"\nat = \"1s\"\nresponsible = {{ server = \"{server}\", instance = \"{instance}\", member = \"{member}\" }}\n"
    )
}

#[test]
fn a_responsible_claim_on_a_standalone_server_is_refused() {
    let loner = "\n[[nacos_server]]\nname = \"nacos4\"\n";
    refused(
        &format!("{loner}\n{}", claim("nacos4", "a", "nacos1")),
        "\"nacos4\", instance",
        &["nacos4 is not in a cluster", "owns every client"],
    );
}

#[test]
fn a_responsible_claim_naming_a_member_of_another_cluster_is_refused() {
    let west = "\n[[nacos_server]]\nname = \"nacos5\"\ncluster = \"west\"\n";
    refused(
        &format!("{west}\n{}", claim("nacos1", "a", "nacos5")),
        "\"nacos5\" }",
        &["nacos5 is not a member of nacos1's cluster \"east\"", "nacos1, nacos2, nacos3"],
    );
}

#[test]
fn a_responsible_claim_about_a_grpc_instance_or_an_unknown_one_is_refused() {
    let grpc = "\n[[instance]]\nname = \"g\"\nservice = \"orders\"\nip = \"10.1.0.9\"\ntransport = \"grpc\"\n";
    refused(
        &format!("{grpc}\n{}", claim("nacos1", "g", "nacos1")),
        "\"g\", member",
        &["g is a gRPC instance", "connection = { client, server }"],
    );
    refused(&claim("nacos1", "zz", "nacos1"), "\"zz\"", &["unknown instance \"zz\""]);
    let typo = "[[expect]]\nname = \"claim\"\nat = \"1s\"\nresponsible = { server = \"nacos1\", instance = \"a\", owner = \"nacos1\" }\n";
    refused(typo, "owner", &["owner"]);
}

#[test]
fn the_binary_exits_2_on_a_bad_responsible_claim() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "t.toml", format!("{BASE}{}", claim("nacos1", "a", "nacos9")));
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("t.toml:"), "{stderr}");
    assert!(stderr.contains("nacos9"), "{stderr}");
}

// ---- Distro sync of 2.x gRPC clients ----
//
// One 2.x client `g` whose only server is nacos1, so its connection — and its client's
// ownership — is nacos1's. Its `ConnectionSetupRequest` takes a TCP handshake (SYN 1 ms, SYN-ACK
// 2 ms) and arrives at 3 ms; the `InstanceRequest` follows the setup answer and arrives at
// 5 ms: nacos1's `ClientChangedEvent` is at 0.005 s.
//
// `DistroProtocol#sync` queues a `DistroDelayTask` per other member with `syncDelayMillis`
// (1 s): due at 1.005 s. The delay engine looks every 100 ms from nacos1's start, so it sends at
// 1.100 s. To nacos2 the pooled connection is already open — nacos1's `DistroLoadDataTask` asked
// nacos2 (first in address order) for its snapshot at 0 s — so the request arrives at 1.101 s;
// to nacos3 the connection is new (handshake 2 ms), and it arrives at 1.103 s.

const GRPC: &str = r#"
[scenario]
name = "distro grpc"
duration = "210s"

[network]
connect_timeout = "5s"

[[nacos_server]]
name = "nacos1"
cluster = "east"

[[nacos_server]]
name = "nacos2"
cluster = "east"

[[nacos_server]]
name = "nacos3"
cluster = "east"

[[instance]]
name = "g"
service = "orders"
ip = "10.1.0.9"
transport = "grpc"
servers = ["nacos1"]
"#;

fn grpc_holds(extra: &str) {
    run_holds(&format!("{GRPC}{extra}"));
}

fn on(at: &str, server: &str, state: &str) -> String {
    state_at(at, server, "g", state)
}

#[test]
fn a_grpc_clients_instance_is_copied_to_every_member_a_second_after_it_registers() {
    let claims = [
        on("0.006s", "nacos1", "healthy"),
        on("1.1s", "nacos2", "absent"),
        on("1.101s", "nacos2", "healthy"),
        on("1.102s", "nacos3", "absent"),
        on("1.104s", "nacos3", "healthy"),
    ];
    grpc_holds(&claims.concat());
}

#[test]
fn a_closed_connection_is_a_delete_on_every_member_a_second_later() {
    // g killed at 10 s: its FIN reaches nacos1 at 10.001 (`clientDisconnected` →
    // `ClientDisconnectEvent`). The DELETE is due at 11.001, sent at the 11.100 tick on the
    // connections opened at 1.1 s, and arrives at 11.101.
    let claims =
        [on("10.002s", "nacos1", "absent"), on("11.1s", "nacos2", "present"), on("11.102s", "nacos2", "absent")];
    grpc_holds(&format!("\n[[fault]]\nat = \"10s\"\ncrash = \"g\"\n{}", claims.concat()));
}

#[test]
fn a_dead_owners_copies_stay_until_the_client_expired_time_passes_their_last_verify() {
    // nacos1 and g lose power at 22 s: no FIN, no DELETE. nacos1's last verify (every 5 s from
    // 5 s) left at 20.000 and renewed the copies at 20.001 (`setLastRenewTime`). The copies'
    // cleaner runs every 5 s from start and removes a copy once `now - lastRenewTime > 3 min`:
    // 200.001 is not a tick, so 205 s.
    let claims = [
        on("204.9s", "nacos2", "healthy"),
        on("204.9s", "nacos3", "healthy"),
        on("205.001s", "nacos2", "absent"),
        on("205.001s", "nacos3", "absent"),
    ];
    grpc_holds(&format!(
        "\n[[fault]]\nat = \"22s\"\nhost_down = \"nacos1\"\n\n[[fault]]\nat = \"22s\"\nhost_down = \"g\"\n{}",
        claims.concat()
    ));
}

#[test]
fn a_restarted_member_loads_a_snapshot_from_the_first_member_that_answers() {
    // nacos2 killed at 20 s and restarted empty at 25 s. Its new view (cluster.conf re-read) has
    // everyone UP, so `DistroLoadDataTask` asks nacos1, first in address order: a new
    // connection (SYN 25.001, SYN-ACK 25.002), the SNAPSHOT request at 25.003, the answer — every
    // client nacos1 holds — at 25.004 (`processSnapshot`: g becomes a copy here).
    let claims = [on("25.003s", "nacos2", "absent"), on("25.004s", "nacos2", "healthy")];
    grpc_holds(&format!("{RESTART}{}", claims.concat()));
}

const RESTART: &str =
    "\n[[fault]]\nat = \"20s\"\ncrash = \"nacos2\"\n\n[[fault]]\nat = \"25s\"\nrestart = \"nacos2\"\n";

/// nacos2 restarts inside a partition that cuts it off from 24 s to 40 s.
const RESTART_CUT: &str = "\n[[fault]]\nname = \"cut\"\nat = \"24s\"\npartition = [[\"nacos2\"], [\"nacos1\", \"nacos3\"]]\n\n[[fault]]\nat = \"40s\"\nheal = \"cut\"\n";

#[test]
fn a_member_that_restarts_cut_off_gets_its_copies_back_through_verify_before_its_next_load() {
    // nacos2 restarts at 25 s inside the cut. Its SNAPSHOT requests fail to connect after the
    // 5 s connect timeout: nacos1 at 30 s, nacos3 at 35 s; the round is over, the next in 30 s
    // (`loadDataRetryDelayMillis`): 65 s. The cut heals at 40 s; nacos1 sees nacos2 UP at 40.003
    // (nacos2's report arrives), so its 45 s verify goes to nacos2, which lacks the copy: the
    // failure is back at 45.002 → `ClientVerifyFailedEvent` → a CHANGE to nacos2 with delay 0,
    // sent at the 45.100 tick, applied at 45.101 — 20 s before the snapshot would have come.
    let claims = [on("44.9s", "nacos2", "absent"), on("45.1s", "nacos2", "absent"), on("45.101s", "nacos2", "healthy")];
    grpc_holds(&format!("{RESTART}{RESTART_CUT}{}", claims.concat()));
}

#[test]
fn distro_failures_are_in_the_trace_with_their_java_names() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("{GRPC}{RESTART}{RESTART_CUT}{}", on("45.05s", "nacos2", "healthy"));
    let file = write(dir.path(), "t.toml", body);
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("g on nacos2: healthy"), "{stdout}");
    for line in [
        "35.000s nacos2/distro  Distro snapshot: no peer answered; next try in 30s (DistroLoadDataTask)",
        "45.002s nacos1/distro  Distro verify of 3_g_4 failed on nacos2: CHANGE to nacos2 now",
        "65.002s nacos2/distro  Distro snapshot from nacos1 loaded: 1 clients copied (DistroLoadDataTask)",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
    for (at, java) in [("45.002s", "ClientVerifyFailedEvent"), ("35s", "loadDataRetryDelayMillis")] {
        let out = routesim(&["explain", file.to_str().unwrap(), "--at", at]);
        let (stdout, stderr) = text(&out);
        assert!(stdout.contains(java), "{java}\n{stdout}\n{stderr}");
    }
}
