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

fn scenario(extra: &str) -> Scenario {
    parse(Path::new("t.toml"), &format!("{BASE}{extra}")).unwrap_or_else(|e| panic!("valid: {e}"))
}

/// Runs `BASE` + `extra`: every expectation must hold; the scenario survives a round trip.
fn holds(extra: &str) {
    let s = scenario(extra);
    let report = run(&s, RunOptions::default());
    let failed: Vec<String> =
        report.verdicts.iter().filter(|(_, v)| !v.held()).map(|(e, v)| format!("{}: {v:?}", e.name)).collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(parse(Path::new("t.toml"), &to_toml(&s)).expect("round trip"), s, "{}", to_toml(&s));
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
