//! Nacos cluster membership (`ServerMemberManager`) in whole runs: three members of one cluster,
//! and what each one's view says of the others after a kill, a power-off, a partition and its
//! heal. Every time below is derived from the Java, not read off a run:
//!
//! - `ServerMemberManager#onApplicationEvent` schedules `MemberInfoReportTask` 5 s after start;
//!   `Task#after` re-arms it 2 s after each run (the HTTP report is asynchronous).
//! - `executeBody` advances its cursor before reading it, over the other members in address
//!   (here: name) order. nacos1's others are [nacos2, nacos3]: it reports to nacos3 at 5, 9, 13 …
//!   (5 + 4k) and to nacos2 at 7, 11 … (7 + 4k). nacos2's are [nacos1, nacos3]: nacos3 at 5 + 4k,
//!   nacos1 at 7 + 4k. nacos3's are [nacos1, nacos2]: nacos2 at 5 + 4k, nacos1 at 7 + 4k.
//! - The report client (`DefaultHttpClientFactory`) connects within 5 s (`nacos.http.timeout`; the
//!   scenarios set `[network] connect_timeout = "5s"` to match) and reads within 2.5 s. A report
//!   on a kept-alive connection to a silent peer fails at +2.5 s and the connection is dropped, so
//!   the next one connects afresh and fails at +5 s.
//! - `MemberUtil#onFail`: SUSPICIOUS and failAccessCnt + 1, DOWN when the count passes 3 or the
//!   message says "Connection refused"; `MemberUtil#onSuccess`: UP, count 0.
//!
//! The links have 1 ms latency: a refused connect is known 2 ms after it starts (SYN, RST).

use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::{parse, to_toml, Scenario};
use std::path::Path;

use crate::common::{routesim, text, write};

/// Three members of cluster "east"; what tests append starts on line 20.
const BASE: &str = r#"
[scenario]
name = "members"
duration = "75s"

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
"#;

fn scenario(extra: &str) -> Scenario {
    parse(Path::new("t.toml"), &format!("{BASE}{extra}")).unwrap_or_else(|e| panic!("valid: {e}"))
}

/// Runs `BASE` + `extra` in-process: every expectation must hold; the scenario survives a round
/// trip through the writer.
fn holds(extra: &str) {
    let s = scenario(extra);
    let report = run(&s, RunOptions::default());
    let failed: Vec<String> =
        report.verdicts.iter().filter(|(_, v)| !v.held()).map(|(e, v)| format!("{}: {v:?}", e.name)).collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(parse(Path::new("t.toml"), &to_toml(&s)).expect("round trip"), s, "{}", to_toml(&s));
}

/// `server` sees `peer` in `state` at `at`.
fn sees(at: &str, server: &str, peer: &str, state: &str) -> String {
    format!(
        "\n[[expect]]\nname = \"at {at} {server} sees {peer} {state}\"\nat = \"{at}\"\n\
         member = {{ server = \"{server}\", peer = \"{peer}\", state = \"{state}\" }}\n"
    )
}

fn all(claims: &[(&str, &str, &str, &str)]) -> String {
    claims.iter().map(|(at, s, p, st)| sees(at, s, p, st)).collect()
}

#[test]
fn a_killed_member_on_a_live_host_is_down_at_the_next_report_to_it() {
    // Killed at 20 s: its host refuses connections. nacos1 and nacos2 both report to nacos3 at
    // 21 s (5 + 4k); the connect is refused at 21.002 and "Connection refused" is DOWN at once.
    // nacos1 and nacos2 still see each other UP.
    let claims = all(&[
        ("21.001s", "nacos1", "nacos3", "UP"),
        ("21.003s", "nacos1", "nacos3", "DOWN"),
        ("21.003s", "nacos2", "nacos3", "DOWN"),
        ("29s", "nacos1", "nacos2", "UP"),
        ("29s", "nacos2", "nacos1", "UP"),
    ]);
    holds(&format!("\n[[fault]]\nname = \"kill\"\nat = \"20s\"\ncrash = \"nacos3\"\n{claims}"));
}

#[test]
fn a_restarted_member_is_up_again_at_the_next_report_that_reaches_it() {
    // Killed at 20 s (DOWN at 21.002), restarted at 30 s: nacos1's next report to nacos3 is at
    // 33 s and is answered, so UP (`onSuccess`). The restarted nacos3 starts from cluster.conf:
    // everyone UP, whatever happened before.
    let claims = all(&[
        ("32.9s", "nacos1", "nacos3", "DOWN"),
        ("33.1s", "nacos1", "nacos3", "UP"),
        ("30.1s", "nacos3", "nacos1", "UP"),
    ]);
    holds(&format!(
        "\n[[fault]]\nname = \"kill\"\nat = \"20s\"\ncrash = \"nacos3\"\n\n[[fault]]\nat = \"30s\"\nrestart = \"nacos3\"\n{claims}"
    ));
}

#[test]
fn a_powered_off_member_is_suspicious_first_and_down_after_the_fourth_failed_report() {
    // Host down at 20 s: nothing refuses, everything times out. nacos1 reports to nacos3 at 21 s
    // on its kept-alive connection: read timeout at 23.5 s, failAccessCnt 1, SUSPICIOUS. Then at
    // 25, 29 and 33 s on new connections, each failing 5 s later: counts 2 (30 s), 3 (34 s) and
    // 4 (38 s) — 4 > 3, DOWN at 38 s. nacos2 reports to nacos3 at the same instants.
    let claims = all(&[
        ("23.4s", "nacos1", "nacos3", "UP"),
        ("23.6s", "nacos1", "nacos3", "SUSPICIOUS"),
        ("37.9s", "nacos1", "nacos3", "SUSPICIOUS"),
        ("38.1s", "nacos1", "nacos3", "DOWN"),
        ("38.1s", "nacos2", "nacos3", "DOWN"),
    ]);
    holds(&format!("\n[[fault]]\nname = \"power off\"\nat = \"20s\"\nhost_down = \"nacos3\"\n{claims}"));
}

#[test]
fn a_partition_makes_the_views_disagree_and_the_heal_makes_them_agree() {
    // nacos1 alone from 20 s to 41 s. nacos1 → nacos3 fails at 23.5, 30, 34, 38 s (DOWN at 38);
    // nacos1 → nacos2, nacos2 → nacos1 and nacos3 → nacos1 start at 23 s (7 + 4k) and fail at
    // 25.5, 32, 36, 40 s (DOWN at 40). nacos2 and nacos3 keep answering each other.
    //
    // After the heal every pair's next report on a fresh connection is answered (each member
    // reports to each peer every 4 s), and a report received also sets its sender UP
    // (`NacosClusterController#report`). Connects begun before the heal may still time out
    // until 37 + 5 = 42 s (a SYN sent at 40 s was lost; the next would be at 44 s, past the
    // deadline), and one begun at 39 s retransmits at 42 s and connects. So from 42 s each
    // view is repaired by the first report after it, at the latest 46 s.
    let claims = all(&[
        ("39s", "nacos1", "nacos3", "DOWN"),
        ("39s", "nacos2", "nacos3", "UP"),
        ("39s", "nacos1", "nacos2", "SUSPICIOUS"),
        ("39s", "nacos3", "nacos2", "UP"),
        ("39s", "nacos2", "nacos1", "SUSPICIOUS"),
        ("40.1s", "nacos2", "nacos1", "DOWN"),
        ("40.1s", "nacos3", "nacos1", "DOWN"),
        ("40.1s", "nacos1", "nacos2", "DOWN"),
        ("46.1s", "nacos1", "nacos2", "UP"),
        ("46.1s", "nacos1", "nacos3", "UP"),
        ("46.1s", "nacos2", "nacos1", "UP"),
        ("46.1s", "nacos3", "nacos1", "UP"),
        ("46.1s", "nacos2", "nacos3", "UP"),
        ("46.1s", "nacos3", "nacos2", "UP"),
    ]);
    holds(&format!(
        "\n[[fault]]\nname = \"cut\"\nat = \"20s\"\npartition = [[\"nacos1\"], [\"nacos2\", \"nacos3\"]]\n\n\
         [[fault]]\nat = \"41s\"\nheal = \"all\"\n{claims}"
    ));
}

#[test]
fn a_hung_member_times_out_every_report_and_is_up_again_at_the_first_after_resume() {
    // SIGSTOP at 20 s: its kernel still accepts connections (handshake 2 ms) but nothing reads
    // them. nacos1's report at 21 s on the kept-alive connection times out at 23.5 s (count 1);
    // those at 25, 29, 33 s connect at +2 ms and time out reading 2.5 s later: 27.502, 31.502 and
    // 35.502 s (count 4 > 3, DOWN). Resumed at 45 s, it answers nacos1's report of 45 s: UP.
    let claims = all(&[
        ("23.6s", "nacos1", "nacos3", "SUSPICIOUS"),
        ("35.4s", "nacos1", "nacos3", "SUSPICIOUS"),
        ("35.6s", "nacos1", "nacos3", "DOWN"),
        ("35.6s", "nacos2", "nacos3", "DOWN"),
        ("45.1s", "nacos1", "nacos3", "UP"),
    ]);
    holds(&format!(
        "\n[[fault]]\nname = \"stop\"\nat = \"20s\"\nhang = \"nacos3\"\n\n[[fault]]\nat = \"45s\"\nresume = \"nacos3\"\n{claims}"
    ));
}

#[test]
fn a_one_way_block_fails_the_reports_both_ways() {
    // nacos1 -> nacos2 blocked at 50 s. nacos1's reports to nacos2 (51, 55, 59, 63 s) are lost;
    // nacos2's to nacos1 (same instants) arrive but the answers — and from 55 s the SYN-ACKs —
    // cannot come back. Both: read timeout at 53.5 s, then connect timeouts at 60, 64, 68 s: DOWN
    // at 68 s, each in its own view. nacos3 sees both UP all along.
    let claims = all(&[
        ("67.9s", "nacos2", "nacos1", "SUSPICIOUS"),
        ("68.1s", "nacos2", "nacos1", "DOWN"),
        ("68.1s", "nacos1", "nacos2", "DOWN"),
        ("68.1s", "nacos3", "nacos1", "UP"),
        ("68.1s", "nacos3", "nacos2", "UP"),
    ]);
    holds(&format!(
        "\n[[fault]]\nname = \"one way\"\nat = \"50s\"\nblock = {{ from = \"nacos1\", to = \"nacos2\" }}\n{claims}"
    ));
}

#[test]
fn a_wrong_member_claim_fails_with_what_the_view_holds() {
    let dir = tempfile::tempdir().unwrap();
    let claim = sees("23.6s", "nacos1", "nacos3", "DOWN");
    let body = format!("{BASE}\n[[fault]]\nat = \"20s\"\nhost_down = \"nacos3\"\n{claim}");
    let file = write(dir.path(), "t.toml", body);
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("nacos1 sees nacos3 DOWN"), "{stdout}");
    assert!(stdout.contains("SUSPICIOUS (failAccessCnt 1)"), "{stdout}");
}

#[test]
fn the_timeline_names_the_java_rule_and_routine_reports_stay_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "t.toml", format!("{BASE}\n[[fault]]\nat = \"20s\"\ncrash = \"nacos3\"\n"));
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains(
            "21.002s nacos1/member  member report to nacos3 failed (connection refused): \"Connection refused\": \
             DOWN at once; UP -> DOWN (MemberUtil#onFail)"
        ),
        "{stdout}"
    );
    // Answered reports to an UP peer, and failures at a peer already DOWN, are routine.
    assert!(!stdout.contains("still UP"), "{stdout}");
    assert!(!stdout.contains("still DOWN"), "{stdout}");
    // The first report (5 s) opens a connection: SYN and SYN-ACK, then request and answer, 1 ms each.
    let out = routesim(&["run", file.to_str().unwrap(), "--full"]);
    let full = text(&out).0;
    assert!(full.contains("5.004s nacos1/member  member report to nacos3 answered: still UP"), "{full}");
}

#[test]
fn a_server_outside_a_cluster_keeps_no_view_and_probes_nobody() {
    // Without `cluster` a server is standalone, as before: no reports on the wire.
    let s = parse(Path::new("t.toml"), "[scenario]\nname = \"x\"\nduration = \"30s\"\n[[nacos_server]]\nname = \"nacos1\"\n[[nacos_server]]\nname = \"nacos2\"\n").unwrap();
    assert!(s.nacos.cluster_of("nacos1").is_empty());
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "t.toml", to_toml(&s));
    let out = routesim(&["run", file.to_str().unwrap(), "--full"]);
    assert!(!text(&out).0.contains("cluster/report"));
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

const LONER: &str = "\n[[nacos_server]]\nname = \"nacos4\"\n";
const WEST: &str = "\n[[nacos_server]]\nname = \"nacos5\"\ncluster = \"west\"\n";

#[test]
fn a_member_claim_about_a_server_outside_the_cluster_is_refused() {
    let claim = "[[expect]]\nname = \"claim\"\nat = \"1s\"\nmember = { server = \"nacos1\", peer = \"nacos5\", state = \"UP\" }\n";
    refused(
        &format!("{WEST}\n{claim}"),
        "\"nacos5\", state",
        &["nacos5 is not a member of nacos1's cluster \"east\"", "nacos2, nacos3"],
    );
}

#[test]
fn a_member_claim_on_a_standalone_server_is_refused() {
    let claim = "[[expect]]\nname = \"claim\"\nat = \"1s\"\nmember = { server = \"nacos4\", peer = \"nacos1\", state = \"UP\" }\n";
    refused(&format!("{LONER}\n{claim}"), "\"nacos4\", peer", &["nacos4 is not in a cluster", "cluster = \"name\""]);
}

#[test]
fn a_member_claim_about_itself_an_unknown_state_or_server_is_refused() {
    let own = "[[expect]]\nname = \"claim\"\nat = \"1s\"\nmember = { server = \"nacos1\", peer = \"nacos1\", state = \"UP\" }\n";
    refused(own, "\"nacos1\", state", &["nacos1 is the server itself", "allMembersWithoutSelf"]);
    let state = "[[expect]]\nname = \"claim\"\nat = \"1s\"\nmember = { server = \"nacos1\", peer = \"nacos2\", state = \"up\" }\n";
    refused(state, "\"up\"", &["unknown member state \"up\"", "\"SUSPICIOUS\""]);
    let unknown = "[[expect]]\nname = \"claim\"\nat = \"1s\"\nmember = { server = \"nacos1\", peer = \"nacos9\", state = \"UP\" }\n";
    refused(unknown, "\"nacos9\"", &["nacos9"]);
}

#[test]
fn a_bad_cluster_name_is_refused_and_a_cluster_of_one_is_fine() {
    refused("\n[[nacos_server]]\nname = \"nacos4\"\ncluster = \"a b\"\n", "\"a b\"", &["invalid cluster name \"a b\""]);
    // A cluster of one: `MemberInfoReportTask` finds nobody to report to.
    holds(WEST);
}

#[test]
fn the_binary_exits_2_on_a_bad_member_claim() {
    let dir = tempfile::tempdir().unwrap();
    let claim = "[[expect]]\nname = \"claim\"\nat = \"1s\"\nmember = { server = \"nacos1\", peer = \"nacos1\", state = \"UP\" }\n";
    let file = write(dir.path(), "t.toml", format!("{BASE}{claim}"));
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("t.toml:23:"), "{stderr}");
}
