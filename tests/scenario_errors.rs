//! Bad scenario files get a clear error — file:line:column, what is wrong, what would be right —
//! and never a panic.

use routesim::sim::scenario::{parse, ScenarioErrors};
use std::path::Path;

const GOOD: &str = r#"
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

fn errors(extra: &str) -> ScenarioErrors {
    let text = format!("{GOOD}{extra}");
    parse(Path::new("t.toml"), &text).expect_err("should be rejected")
}

fn one(extra: &str) -> String {
    let e = errors(extra);
    assert_eq!(e.0.len(), 1, "expected one error, got: {e}");
    e.to_string()
}

#[test]
fn the_base_scenario_is_valid() {
    parse(Path::new("t.toml"), GOOD).expect("valid");
}

#[test]
fn a_toml_syntax_error_points_at_its_line() {
    let e = one("\n[[fault]\nat = \"1s\"\n");
    assert!(e.starts_with("t.toml:15:"), "{e}");
}

#[test]
fn a_misspelt_key_suggests_the_right_one() {
    let e = one("\n[[client]]\nname = \"c\"\ntopics = [\"Orders\"]\npoll_intervall = \"30s\"\n");
    assert!(e.contains("t.toml:18:1: unknown key `poll_intervall`"), "{e}");
    assert!(e.contains("did you mean `poll_interval`?"), "{e}");
}

#[test]
fn an_undefined_broker_is_named_with_a_suggestion() {
    let e = one("\n[[fault]]\nat = \"1m\"\ncrash = \"a1\"\n");
    assert!(e.contains("t.toml:17:9: unknown process \"a1\""), "{e}");
    assert!(e.contains("did you mean \"a0\"?"), "{e}");
}

#[test]
fn an_undefined_name_server_or_topic_is_reported() {
    let e = one("\n[[client]]\nname = \"c\"\nnamesrvs = [\"ns2\"]\ntopics = [\"Orders\"]\n");
    assert!(e.contains("unknown name server \"ns2\""), "{e}");
    let e = one("\n[[client]]\nname = \"c\"\ntopics = [\"Order\"]\n");
    assert!(e.contains("unknown topic \"Order\": no broker has it") && e.contains("did you mean \"Orders\"?"), "{e}");
}

#[test]
fn a_time_past_the_duration_is_rejected() {
    let e = one("\n[[fault]]\nat = \"6m\"\ncrash = \"a0\"\n");
    assert!(
        e.contains("6m is past the end of the scenario (5m)")
            || e.contains("360.000s is past the end of the scenario (5m)"),
        "{e}"
    );
}

#[test]
fn duplicate_names_are_rejected() {
    let e = one("\n[[broker]]\nname = \"ns1\"\nbroker_name = \"b\"\naddr = \"10.0.0.2:10911\"\n");
    assert!(e.contains("duplicate name \"ns1\": already used by a name server"), "{e}");
}

#[test]
fn invalid_durations_and_perms_say_what_would_be_right() {
    let e = one("\n[[client]]\nname = \"c\"\ntopics = [\"Orders\"]\npoll_interval = \"30\"\n");
    assert!(e.contains("invalid duration \"30\"") && e.contains("write it like \"30s\""), "{e}");
    let e = one("\n[[action]]\nat = \"1m\"\nbroker_permission = { broker = \"a0\", perm = \"rx\" }\n");
    assert!(e.contains("invalid perm \"rx\"") && e.contains("use \"rw\", \"r\", \"w\" or \"-\""), "{e}");
}

#[test]
fn every_problem_is_reported_at_once_in_file_order() {
    let e = errors("\n[[fault]]\nat = \"1m\"\ncrash = \"zz\"\n\n[[fault]]\nat = \"9m\"\nhang = \"a0\"\n");
    assert_eq!(e.0.len(), 2, "{e}");
    assert!(e.0[0].line < e.0[1].line);
}

#[test]
fn a_fault_table_holds_exactly_one_verb_and_the_right_table() {
    let e = one("\n[[fault]]\nat = \"1m\"\ncrash = \"a0\"\nhang = \"a0\"\n");
    assert!(e.contains("exactly one verb"), "{e}");
    let e = one("\n[[fault]]\nat = \"1m\"\nwipe_write_perm = { broker_name = \"broker-a\" }\n");
    assert!(e.contains("move it to a [[action]] table"), "{e}");
}

#[test]
fn an_impossible_process_history_is_rejected() {
    let e = one("\n[[fault]]\nat = \"1m\"\nresume = \"a0\"\n");
    assert!(e.contains("a0 is running") && e.contains("hang it first"), "{e}");
    let e = one("\n[[fault]]\nat = \"1m\"\ncrash = \"a0\"\n\n[[fault]]\nat = \"2m\"\ncrash = \"a0\"\n");
    assert!(e.contains("a0 is down") && e.contains("restart it first"), "{e}");
}

#[test]
fn expectations_need_one_time_frame_one_subject_and_known_anchors() {
    let e = one("\n[[expect]]\nname = \"x\"\nat = \"1m\"\nwithin = \"1s\"\nroute = { namesrv = \"ns1\", topic = \"Orders\", absent = true }\n");
    assert!(e.contains("exactly one time frame"), "{e}");
    let e = one("\n[[expect]]\nname = \"x\"\nafter = \"kill a9\"\nwithin = \"1s\"\nroute = { namesrv = \"ns1\", topic = \"Orders\", absent = true }\n");
    assert!(e.contains("no fault or action is named \"kill a9\""), "{e}");
    let e = one("\n[[expect]]\nname = \"x\"\nat = \"1m\"\n");
    assert!(e.contains("exactly one subject"), "{e}");
}

#[test]
fn hostile_input_is_an_error_not_a_panic() {
    for text in
        ["", "[scenario]", "[[broker]]\nname = 1", "\u{0}", "[scenario]\nname=\"x\"\nduration=\"99999999999999999h\""]
    {
        let _ = parse(Path::new("t.toml"), text).expect_err(text);
    }
}
