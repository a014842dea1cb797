//! The Nacos operations a scenario can order — `update_metadata` (the console's
//! `InstanceController#update`), `deregister` (the application's
//! `NamingService#deregisterInstance`) and `nacos_switch` (`OperatorController#updateSwitch`) —
//! each shown to work with an expectation that holds, to fail loudly (expected vs got) when the
//! claim is wrong, and to be refused with `file:line:column` when written wrong.

use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::{parse, to_toml, Scenario};
use std::path::Path;

use crate::common::{routesim, text, write};

/// One naming server, two instances with the default timeouts, a gateway subscribed to them;
/// what tests append starts on line 25.
const BASE: &str = r#"
[scenario]
name = "ops"
duration = "2m"
invariants = ["nacos_stays_healthy", "nacos_bounded_expiry", "nacos_recovery"]

[[nacos_server]]
name = "nacos1"

[[instance]]
name = "orders-1"
service = "orders"
ip = "10.1.0.1"

[[instance]]
name = "orders-2"
service = "orders"
ip = "10.1.0.2"
metadata = { "preserved.heart.beat.timeout" = "6000", "preserved.ip.delete.timeout" = "6000" }

[[subscriber]]
name = "gateway"
services = ["orders"]
"#;

fn scenario(extra: &str) -> Scenario {
    parse(Path::new("t.toml"), &format!("{BASE}{extra}")).unwrap_or_else(|e| panic!("valid: {e}"))
}

/// Runs `BASE` + `extra` in-process: every expectation must hold and no invariant break.
fn holds(extra: &str) {
    let s = scenario(extra);
    let report = run(&s, RunOptions::default());
    let failed: Vec<String> =
        report.verdicts.iter().filter(|(_, v)| !v.held()).map(|(e, v)| format!("{}: {v:?}", e.name)).collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert!(report.violations.is_empty(), "{:?}", report.violations.iter().map(|v| v.to_string()).collect::<Vec<_>>());
    // The writer that saves shrunk cases must say these actions too.
    assert_eq!(parse(Path::new("t.toml"), &to_toml(&s)).expect("round trip"), s, "{}", to_toml(&s));
}

/// Runs `BASE` + `extra` through the binary, expecting exit 1; returns stdout.
fn fails(extra: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "t.toml", format!("{BASE}{extra}"));
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    stdout
}

/// Runs `BASE` + `extra` through the binary with `--full`, expecting success; returns stdout.
fn trace(extra: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "t.toml", format!("{BASE}{extra}"));
    let out = routesim(&["run", file.to_str().unwrap(), "--full"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    stdout
}

/// The only error of `BASE` + `extra`, as `t.toml:line:column: message` and its help; and
/// where `needle` (the span it must point at) first is in `extra`, as `t.toml:line:column`.
fn refused(extra: &str, needle: &str) -> (String, String) {
    let source = format!("{BASE}{extra}");
    let e = parse(Path::new("t.toml"), &source).expect_err("should be rejected");
    assert_eq!(e.0.len(), 1, "expected one error, got: {e}");
    let at = BASE.len() + extra.find(needle).unwrap_or_else(|| panic!("{needle:?} is in the text"));
    let line = source[..at].matches('\n').count() + 1;
    let column = at - source[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    (e.to_string(), format!("t.toml:{line}:{column}: "))
}

fn assert_refused(extra: &str, needle: &str, says: &[&str]) {
    let (e, at) = refused(extra, needle);
    assert!(e.starts_with(&at), "expected the error at {at}, got: {e}");
    for s in says {
        assert!(e.contains(s), "{s:?} missing from: {e}");
    }
}

// ---- update_metadata ----

const SHORTEN: &str = r#"
[[action]]
name = "shorten"
at = "20s"
update_metadata = { instance = "orders-1", metadata = { "preserved.heart.beat.timeout" = "6000", "preserved.ip.delete.timeout" = "8000" } }

[[fault]]
name = "kill orders-1"
at = "40.5s"
crash = "orders-1"
"#;

#[test]
fn update_metadata_shortens_the_checkers_timeouts_of_a_live_instance() {
    // Nacos UnhealthyInstanceChecker / ExpiredInstanceChecker#getTimeout read NamingMetadataManager
    // first: 8 s instead of 30 s. Last beat at most 5 s before the kill, first tick more than 8 s
    // later: within 10 s of the kill (30-35 s without the edit).
    holds(&format!(
        r#"{SHORTEN}
[[expect]]
name = "deleted within 10 s of the kill"
after = "kill orders-1"
within = "10s"
instance = {{ server = "nacos1", instance = "orders-1", state = "absent" }}

[[expect]]
name = "the gateway hears of it"
after = "kill orders-1"
within = "11s"
subscriber = {{ subscriber = "gateway", service = "orders", instances = ["orders-2"] }}
"#
    ));
}

#[test]
fn update_metadata_is_pushed_and_narrated_with_the_new_timeouts() {
    // Nacos InstanceMetadataProcessor#updateInstanceMetadata publishes a ServiceChangedEvent.
    let out = trace(SHORTEN);
    assert!(out.contains("updateInstance (console) stores metadata"), "{out}");
    assert!(out.contains("now unhealthy after 6s, deleted after 8s"), "{out}");
    assert!(out.contains("20.500s nacos1/push    PushExecuteTask"), "{out}");
}

#[test]
fn a_wrong_claim_about_update_metadata_fails_with_expected_and_got() {
    let out = fails(&format!(
        r#"{SHORTEN}
[[expect]]
name = "still listed 15 s after the kill, as with the defaults"
at = "kill orders-1 + 15s"
instance = {{ server = "nacos1", instance = "orders-1", state = "unhealthy" }}
"#
    ));
    assert!(out.contains("FAIL  still listed 15 s after the kill"), "{out}");
    assert!(out.contains("expected: orders-1 on nacos1: unhealthy") && out.contains("got:      absent"), "{out}");
}

#[test]
fn update_metadata_is_refused_when_written_wrong() {
    let table = |body: &str| format!("\n[[action]]\nat = \"20s\"\nupdate_metadata = {body}\n");
    assert_refused(
        &table(r#"{ instance = "ordrs-1", metadata = {} }"#),
        r#""ordrs-1""#,
        &["no [[instance]] is named \"ordrs-1\"", "did you mean \"orders-1\"?"],
    );
    assert_refused(
        &table(r#"{ instance = "orders-1", server = "nacos2", metadata = {} }"#),
        r#""nacos2""#,
        &["nacos2"],
    );
    assert_refused(
        &table(r#"{ instance = "orders-1", metadata = { "preserved.heart.beat.interval" = "20000" } }"#),
        r#"{ "preserved"#,
        &["update_metadata of orders-1", "checkInstanceIsLegal", "INVALID_PARAM"],
    );
    assert_refused(&table(r#"{ instance = "orders-1" }"#), "{ instance", &["missing field `metadata`"]);
    assert_refused(
        &table(r#"{ instance = "orders-1", metadata = {}, weight = 2 }"#),
        "weight",
        &["unknown key `weight`", "valid keys here: instance, server, metadata"],
    );
}

// ---- deregister ----

const DEREGISTER: &str = r#"
[[action]]
name = "take orders-1 out"
at = "30s"
deregister = "orders-1"
"#;

#[test]
fn deregister_removes_the_instance_at_once_and_its_beats_stop() {
    // Nacos NacosNamingService#deregisterInstance: removeBeatInfo, then DELETE; the server's
    // EphemeralClientOperationServiceImpl#deregisterInstance removes it and pushes.
    holds(&format!(
        r#"{DEREGISTER}
[[expect]]
name = "gone from the server within a round trip"
after = "take orders-1 out"
within = "10ms"
instance = {{ server = "nacos1", instance = "orders-1", state = "absent" }}

[[expect]]
name = "no beat brings it back: its BeatTask chain stopped"
from = "take orders-1 out + 10ms"
until = "2m"
instance = {{ server = "nacos1", instance = "orders-1", state = "absent" }}

[[expect]]
name = "the gateway hears of it with the push 500 ms later"
after = "take orders-1 out"
within = "700ms"
subscriber = {{ subscriber = "gateway", service = "orders", instances = ["orders-2"] }}

[[expect]]
name = "its neighbour in nothing changed"
from = "take orders-1 out"
until = "2m"
instance = {{ server = "nacos1", instance = "orders-2", state = "healthy" }}
"#
    ));
    let out = trace(DEREGISTER);
    assert!(out.contains("deregisterInstance orders-1: removeBeatInfo, DELETE /nacos/v1/ns/instance"), "{out}");
}

#[test]
fn a_wrong_claim_about_deregister_fails_with_expected_and_got() {
    let out = fails(&format!(
        r#"{DEREGISTER}
[[expect]]
name = "still healthy a second later"
at = "31s"
instance = {{ server = "nacos1", instance = "orders-1", state = "healthy" }}
"#
    ));
    assert!(out.contains("FAIL  still healthy a second later"), "{out}");
    assert!(out.contains("expected: orders-1 on nacos1: healthy") && out.contains("got:      absent"), "{out}");
}

#[test]
fn deregister_is_refused_when_written_wrong() {
    assert_refused(
        "\n[[action]]\nat = \"30s\"\nderegister = \"orders-3\"\n",
        "\"orders-3\"",
        &["no [[instance]] is named \"orders-3\"", "did you mean"],
    );
    assert_refused(
        "\n[[fault]]\nat = \"30s\"\nderegister = \"orders-1\"\n",
        "\"orders-1\"\n",
        &["`deregister` is not a fault verb", "move it to a [[action]] table"],
    );
    // Only a running application can call deregisterInstance.
    assert_refused(
        "\n[[fault]]\nat = \"20s\"\ncrash = \"orders-1\"\n\n[[action]]\nat = \"30s\"\nderegister = \"orders-1\"\n",
        "[[action]]",
        &["orders-1 is down", "restart it first"],
    );
    assert_refused("\n[[action]]\nat = \"3x\"\nderegister = \"orders-1\"\n", "\"3x\"", &["invalid duration \"3x\""]);
}

// ---- nacos_switch ----

const SWITCHES: &str = r#"
[[action]]
name = "slow beats"
at = "20s"
nacos_switch = { server = "nacos1", client_beat_interval = "10s" }

[[action]]
name = "negative"
at = "60s"
nacos_switch = { client_beat_interval = -1, light_beat_enabled = false }
"#;

#[test]
fn a_switch_interval_reaches_clients_in_beat_answers_and_a_non_positive_one_is_ignored() {
    // Nacos InstanceController#beat answers switchDomain.getClientBeatInterval() when the
    // instance's metadata has no preserved.heart.beat.interval; 1.x BeatTask#run takes it only
    // `if (interval > 0)`. 10 s beats starve orders-2's 6 s timeouts (deleted, 20404,
    // re-registered, again); -1 leaves the client on its own 5 s period.
    holds(&format!(
        r#"{SWITCHES}
[[expect]]
name = "10 s beats starve a 6 s timeout"
after = "slow beats"
within = "20s"
instance = {{ server = "nacos1", instance = "orders-2", state = "absent" }}

[[expect]]
name = "orders-1 (15 s / 30 s) keeps up with 10 s beats"
from = "slow beats"
until = "2m"
instance = {{ server = "nacos1", instance = "orders-1", state = "healthy" }}

[[expect]]
name = "-1 is ignored: 5 s beats keep orders-2"
from = "negative + 11s"
until = "2m"
instance = {{ server = "nacos1", instance = "orders-2", state = "healthy" }}
"#
    ));
    let out = trace(SWITCHES);
    assert!(out.contains("a 1.x BeatTask ignores it (`if (interval > 0)`)"), "{out}");
    assert!(out.contains("nacos1 answered lightBeatEnabled=false: this reactor sends full beats again"), "{out}");
    assert!(out.contains("orders-1 full beat -> nacos1: 10200, next beat in 5s"), "{out}");
}

#[test]
fn a_wrong_claim_about_a_switch_fails_with_expected_and_got() {
    let out = fails(&format!(
        r#"{SWITCHES}
[[expect]]
name = "orders-2 survives 10 s beats"
from = "slow beats"
until = "negative"
instance = {{ server = "nacos1", instance = "orders-2", state = "healthy" }}
"#
    ));
    assert!(out.contains("FAIL  orders-2 survives 10 s beats"), "{out}");
    assert!(out.contains("expected: orders-2 on nacos1: healthy") && out.contains("got:      absent"), "{out}");
}

#[test]
fn nacos_switch_is_refused_when_written_wrong() {
    let table = |body: &str| format!("\n[[action]]\nat = \"20s\"\nnacos_switch = {body}\n");
    assert_refused(
        &table(r#"{ client_beat_interval = "2x" }"#),
        r#""2x""#,
        &["client_beat_interval: invalid duration \"2x\"", "e.g. 2000, 0 or -1"],
    );
    assert_refused(
        &table(r#"{ server = "nacos1" }"#),
        "{ server",
        &["nacos_switch sets nothing", "light_beat_enabled"],
    );
    assert_refused(&table(r#"{ server = "nacos9", light_beat_enabled = true }"#), r#""nacos9""#, &["nacos9"]);
    assert_refused(&table(r#"{ client_beat_interval = 9999999999999 }"#), "9999999999999", &["at most"]);
    assert_refused(&table(r#"{ light_beat_enabled = "no" }"#), r#""no""#, &["expected a boolean"]);
}

mod restarts_and_views;
