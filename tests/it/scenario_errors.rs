//! Bad scenario files get a clear error — file:line:column, what is wrong, what would be right —
//! and never a panic.

use routesim::sim::scenario::parse;
use std::path::Path;

use crate::common::{errors, GOOD};

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

/// Every period, interval, delay and timeout is range-checked at load: a period of 0 ms never
/// lets virtual time move (the agenda grows until the allocator aborts), and a delay near the end
/// of `u64` milliseconds is longer than any run. Each key: the table it lives in, and whether
/// zero is allowed.
const DURATION_KEYS: &[(&str, &str, bool)] = &[
    ("[network]\n", "latency", true),
    ("[network]\n", "jitter", true),
    ("[network]\n", "connect_timeout", false),
    ("[[namesrv]]\nname = \"ns2\"\n", "scan_interval", false),
    ("[[namesrv]]\nname = \"ns2\"\n", "scan_initial_delay", true),
    ("[[namesrv]]\nname = \"ns2\"\n", "unregister_delay", true),
    ("[[namesrv]]\nname = \"ns2\"\n", "idle_close", false),
    ("[[broker]]\nname = \"b0\"\nbroker_name = \"b\"\naddr = \"10.0.0.9:10911\"\n", "register_period", true),
    ("[[broker]]\nname = \"b0\"\nbroker_name = \"b\"\naddr = \"10.0.0.9:10911\"\n", "register_timeout", false),
    ("[[client]]\nname = \"c\"\ntopics = [\"Orders\"]\n", "poll_interval", false),
    ("[[client]]\nname = \"c\"\ntopics = [\"Orders\"]\n", "timeout", false),
    ("[[nacos_server]]\nname = \"n1\"\n", "client_beat_interval", true),
    ("[[nacos_server]]\nname = \"n1\"\n", "client_expired_time", false),
    ("[[nacos_server]]\nname = \"n1\"\n", "push_delay", true),
    ("[[nacos_server]]\nname = \"n1\"\n", "push_cache", false),
    (
        "[[nacos_server]]\nname = \"n1\"\n\n[[instance]]\nname = \"i1\"\nservice = \"s\"\nip = \"10.1.0.1\"\n",
        "read_timeout",
        false,
    ),
];

#[test]
fn every_duration_key_is_range_checked_with_the_range_in_the_message() {
    for (table, key, zero_ok) in DURATION_KEYS {
        let e = one(&format!("\n{table}{key} = \"721h\"\n"));
        let min = if *zero_ok { "0s" } else { "1ms" };
        let want = format!("{key} must be between {min} and 720h (30 days), got 721h");
        assert!(e.contains(&want), "{key}: {e}");
        let zero = format!("{GOOD}\n{table}{key} = \"0s\"\n");
        match parse(Path::new("t.toml"), &zero) {
            Ok(_) => assert!(zero_ok, "{key} = \"0s\" must be refused"),
            Err(e) => {
                assert!(!zero_ok, "{key} = \"0s\" is allowed: {e}");
                assert!(
                    e.to_string().contains(&format!("{key} must be between 1ms and 720h (30 days), got 0s")),
                    "{e}"
                );
            }
        }
        parse(Path::new("t.toml"), &format!("{GOOD}\n{table}{key} = \"720h\"\n")).expect("the cap itself is allowed");
    }
}

#[test]
fn a_zero_poll_interval_is_refused_at_its_position() {
    let e = one("\n[[client]]\nname = \"c\"\ntopics = [\"Orders\"]\npoll_interval = \"0s\"\n");
    assert!(e.contains("t.toml:18:17: poll_interval must be between 1ms and 720h (30 days), got 0s"), "{e}");
    assert!(e.contains("the default is \"30s\""), "{e}");
}

#[test]
fn a_push_delay_of_u64_max_milliseconds_is_refused() {
    let e = one("\n[[nacos_server]]\nname = \"n1\"\npush_delay = \"18446744073709551615ms\"\n");
    assert!(e.contains("t.toml:17:14: push_delay must be between 0s and 720h (30 days)"), "{e}");
}

#[test]
fn a_run_longer_than_30_days_is_refused_at_its_position() {
    let text = GOOD.replace("duration = \"5m\"", "duration = \"721h\"");
    let e = parse(Path::new("t.toml"), &text).expect_err("past the cap");
    assert_eq!(e.0.len(), 1, "{e}");
    assert!(e.to_string().contains("t.toml:4:12: duration must be between 1ms and 720h (30 days), got 721h"), "{e}");
    parse(Path::new("t.toml"), &GOOD.replace("duration = \"5m\"", "duration = \"720h\"")).expect("30 days is allowed");
}

#[test]
fn a_zero_beat_interval_in_metadata_and_an_endless_latency_fault_are_refused() {
    let e = one("\n[[nacos_server]]\nname = \"n1\"\n\n[[instance]]\nname = \"i1\"\nservice = \"s\"\nip = \"10.1.0.1\"\nmetadata = { \"preserved.heart.beat.interval\" = \"0\" }\n");
    assert!(
        e.contains("instance i1: preserved.heart.beat.interval must be between 1ms and 720h (30 days), got 0s"),
        "{e}"
    );
    let e = one("\n[[fault]]\nat = \"1m\"\nlatency = { between = [\"a0\", \"ns1\"], base = \"9999h\" }\n");
    assert!(e.contains("base must be between 0s and 720h (30 days), got 9999h"), "{e}");
}

#[test]
fn a_named_fault_with_a_bad_time_is_still_known_to_what_names_it() {
    // Issue 13: the partition's bad `at` is the one mistake. Its heal, and an expectation
    // anchored on that heal, used to add two false "no ... is named" errors.
    let e = one(concat!(
        "\n[[fault]]\nname = \"cut\"\nat = \"1x\"\npartition = [[\"a0\"], [\"ns1\"]]\n",
        "\n[[fault]]\nat = \"2m\"\nheal = \"cut\"\n",
        "\n[[expect]]\nname = \"back\"\nat = \"heal cut\"\nroute = { namesrv = \"ns1\", topic = \"Orders\", brokers = [\"broker-a\"] }\n",
    ));
    assert!(e.starts_with("t.toml:17:6: invalid duration \"1x\""), "{e}");
}

#[test]
fn a_heal_with_no_cut_before_it_says_so_instead_of_an_empty_list() {
    let e = one("\n[[fault]]\nat = \"2m\"\nheal = \"cut\"\n");
    assert!(e.contains("no earlier partition or block is named \"cut\""), "{e}");
    assert!(e.contains("help: use \"all\"; no partition or block comes before it"), "{e}");
    assert!(!e.contains("()"), "{e}");
}

#[test]
fn a_time_with_a_space_is_flagged_as_a_malformed_duration_not_read_as_a_name() {
    // Issue 13: `"5 m"` in an expectation was looked up as an event's name.
    let e = one(
        "\n[[expect]]\nname = \"x\"\nat = \"2 m\"\nroute = { namesrv = \"ns1\", topic = \"Orders\", absent = true }\n",
    );
    assert!(e.contains("t.toml:17:6: invalid duration \"2 m\""), "{e}");
    assert!(e.contains("help: write it without spaces: \"2m\""), "{e}");
    // The same spelling in an offset after an anchor, and where only a duration may stand.
    let anchored = "\n[[fault]]\nname = \"kill\"\nat = \"1m\"\ncrash = \"a0\"\n\n[[expect]]\nname = \"x\"\nat = \"kill + 1 s\"\nroute = { namesrv = \"ns1\", topic = \"Orders\", absent = true }\n";
    let e = one(anchored);
    assert!(e.contains("invalid duration \"1 s\" after `+`") && e.contains("help: write it \"kill + 1s\""), "{e}");
    let e = one("\n[[fault]]\nat = \"1 m\"\ncrash = \"a0\"\n");
    assert!(e.contains("help: write it without spaces: \"1m\""), "{e}");
}

#[test]
fn a_malformed_scenario_duration_is_one_error_not_one_per_time_past_0s() {
    let text = GOOD.replace("duration = \"5m\"", "duration = \"5 m\"") + "\n[[fault]]\nat = \"1m\"\ncrash = \"a0\"\n";
    let e = parse(Path::new("t.toml"), &text).expect_err("rejected");
    assert_eq!(e.0.len(), 1, "{e}");
    assert!(e.to_string().contains("invalid duration \"5 m\"") && e.to_string().contains("\"5m\""), "{e}");
}

#[test]
fn an_unquoted_duration_gets_a_hint_to_quote_it() {
    // Issue 13: TOML's own message ("expected newline") was all a newcomer got.
    let e = parse(Path::new("t.toml"), &GOOD.replace("duration = \"5m\"", "duration = 7m")).expect_err("rejected");
    let e = e.to_string();
    assert!(e.starts_with("t.toml:4:13: "), "{e}");
    assert!(e.contains("help: durations and times are quoted strings: duration = \"7m\""), "{e}");
    let e = one("\n[[fault]]\nat = 1m30s\ncrash = \"a0\"\n");
    assert!(e.contains("help: durations and times are quoted strings: at = \"1m30s\""), "{e}");
}

#[test]
fn a_bare_number_for_a_duration_gets_a_hint_to_quote_it_with_its_unit() {
    let e = routesim::sim::scenario::parse(
        std::path::Path::new("t.toml"),
        "[scenario]\nname = \"t\"\nduration = 90\n\n[[namesrv]]\nname = \"ns1\"\n",
    )
    .expect_err("a bare number is not a duration")
    .to_string();
    assert!(e.contains("t.toml:3:12"), "{e}");
    assert!(e.contains("\"90s\" or \"90ms\""), "{e}");
}

#[test]
fn an_anchor_minus_an_offset_is_checked_like_a_plus() {
    let exp = |at: &str| {
        format!(
            "\n[[fault]]\nname = \"kill-a0\"\nat = \"1m\"\ncrash = \"a0\"\n\n[[expect]]\nname = \"x\"\nat = \"{at}\"\n\
             route = {{ namesrv = \"ns1\", topic = \"Orders\", absent = true }}\n"
        )
    };
    // Before the run starts: at 1 m, 90 s earlier is nothing.
    let e = one(&exp("kill-a0 - 90s"));
    assert!(e.contains("t.toml:22:6: \"kill-a0 - 90s\" is before the run starts (\"kill-a0\" is at 60.000s)"), "{e}");
    assert!(e.contains("help: subtract at most 1m"), "{e}");
    let e = one(&exp("kill-a0 - 1 s"));
    assert!(e.contains("invalid duration \"1 s\" after `-`") && e.contains("help: write it \"kill-a0 - 1s\""), "{e}");
    // A hyphen inside a name is part of it: "kill-a0" is the fault, not "kill" minus "a0".
    let valid = |at: &str| parse(Path::new("t.toml"), &format!("{GOOD}{}", exp(at))).map(|s| s.expects[0].when);
    use routesim::sim::{clock::SimTime, expect::When};
    assert_eq!(valid("kill-a0").unwrap(), When::At(SimTime(60_000)));
    assert_eq!(valid("kill-a0 - 1ms").unwrap(), When::At(SimTime(59_999)));
    assert_eq!(valid("59.5s - 500ms").unwrap(), When::At(SimTime(59_000)), "a time takes an offset too");
    let e = one(&exp("kill-a9 - 1ms"));
    assert!(e.contains("no fault or action is named \"kill-a9\"") && e.contains("did you mean \"kill-a0\"?"), "{e}");
    // A name that would read as NAME - D is refused where it is defined.
    let e = one("\n[[fault]]\nname = \"stop - 5s\"\nat = \"1m\"\ncrash = \"a0\"\n");
    assert!(e.contains("the event name \"stop - 5s\" reads as a time"), "{e}");
}

#[test]
fn an_events_subject_names_real_kinds_processes_and_counts() {
    let exp = |events: &str| format!("\n[[expect]]\nname = \"x\"\nat = \"1m\"\nevents = {{ {events} }}\n");
    let e = one(&exp(r#"kind = "unhealty", count = 0"#));
    assert!(e.contains("t.toml:18:19: no trace event is called \"unhealty\""), "{e}");
    assert!(e.contains("did you mean \"unhealthy\"?"), "{e}");
    let e = one(&exp(r#"kind = "registered", area = "rocketmq", count = 1"#));
    assert!(e.contains("unknown area \"rocketmq\"") && e.contains("one of run, fault, net, check, rmq, nacos"), "{e}");
    let e = one(&exp(r#"kind = "scan_tick", area = "nacos", count = 1"#));
    assert!(e.contains("area \"nacos\" has no \"scan_tick\" events") && e.contains("\"scan_tick\" is in rmq"), "{e}");
    let e = one(&exp(r#"kind = "registered", actor = "ns9", count = 1"#));
    assert!(e.contains("no process is named \"ns9\"") && e.contains("did you mean \"ns1\"?"), "{e}");
    let e = one(&exp(r#"kind = "registered", broker = "b0", count = 1"#));
    assert!(e.contains("no broker is named \"b0\"") && e.contains("did you mean \"a0\"?"), "{e}");
    let e = one(&exp(r#"kind = "unhealthy", instance = "orders-1", count = 1"#));
    assert!(e.contains("no instance is named \"orders-1\""), "{e}");
    let e = one(&exp(r#"kind = "registered""#));
    assert!(e.contains("an events subject needs a count") && e.contains("`count = N` (exactly)"), "{e}");
    let e = one(&exp(r#"kind = "registered", count = 1, at_most = 2"#));
    assert!(e.contains("says the same thing twice"), "{e}");
    let e = one(&exp(r#"kind = "registered", at_least = 3, at_most = 2"#));
    assert!(e.contains("`at_most` (2) is below `at_least` (3)"), "{e}");
    let e = one(&exp(r#"kind = "registered", at_least = -1"#));
    assert!(e.contains("at_least must be between 0 and"), "{e}");
    let e = one(&exp(r#"kind = "registered", where = { topics_updated = ["Orders"] }, count = 1"#));
    assert!(e.contains("`where.topics_updated` must be a string, an integer or a boolean"), "{e}");
    let e = one(&exp(r#"kind = "registered", count = 1, colour = "red""#));
    assert!(e.contains("colour"), "an unknown key is named: {e}");
}

#[test]
fn an_events_subject_that_is_right_loads_and_writes_back() {
    use routesim::sim::scenario::to_toml;
    let exp = "\n[[expect]]\nname = \"x\"\nfrom = \"0s\"\nuntil = \"1m\"\n\
               events = { kind = \"scan_tick\", actor = \"ns1/scanner\", where = { expired = 0 }, at_least = 11 }\n";
    let s = parse(Path::new("t.toml"), &format!("{GOOD}{exp}")).unwrap_or_else(|e| panic!("{e}"));
    let again = parse(Path::new("t.toml"), &to_toml(&s)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.expects, s.expects);
}

#[test]
fn live_fields_and_topic_queries_are_checked_where_they_are_written() {
    let exp = |subject: &str| format!("\n[[expect]]\nname = \"x\"\nat = \"1m\"\n{subject}\n");
    let e = one(&exp(r#"live = { namesrv = "ns1", broker = "a0", present = false, timeout = "120s" }"#));
    assert!(e.contains("t.toml:18:8: `data_version`, `last_update` and `timeout` describe a present entry"), "{e}");
    let e = one(&exp(r#"live = { namesrv = "ns1", broker = "a0", present = true, last_update = "2 s" }"#));
    assert!(e.contains("invalid duration \"2 s\""), "{e}");
    let e = one(&exp(r#"live = { namesrv = "ns1", broker = "a0", present = true, data_version = -2 }"#));
    assert!(e.contains("data_version must be between 0 and"), "{e}");
    let e = one(&exp(r#"topics = { namesrv = "ns1", query = "every", topics = [] }"#));
    assert!(e.contains("unknown topic-list query \"every\"") && e.contains("one of all, cluster, system"), "{e}");
    let e = one(&exp(r#"topics = { namesrv = "ns1", query = "cluster", topics = [] }"#));
    assert!(e.contains("`query = \"cluster\"` needs `cluster`"), "{e}");
    let e = one(&exp(r#"topics = { namesrv = "ns1", query = "all", cluster = "c", topics = [] }"#));
    assert!(e.contains("`cluster` belongs only to `query = \"cluster\"`"), "{e}");
    let e = one(&exp(r#"topics = { namesrv = "ns1", query = "all", broker_addr = "10.0.0.1:10911" }"#));
    assert!(e.contains("only `query = \"system\"` answers a broker address"), "{e}");
    let e = one(&exp(r#"topics = { namesrv = "ns1", query = "all" }"#));
    assert!(e.contains("a topics subject needs a claim"), "{e}");
    let e = one(&exp(r#"topics = { namesrv = "ns9", query = "all", topics = [] }"#));
    assert!(e.contains("ns9"), "{e}");
    // And what is right loads and writes back.
    use routesim::sim::scenario::to_toml;
    let good = exp(concat!(
        r#"topics = { namesrv = "ns1", query = "cluster", cluster = "DefaultCluster", includes = ["Orders"] }"#,
        "\n\n[[expect]]\nname = \"y\"\nat = \"1m\"\n",
        r#"live = { namesrv = "ns1", broker = "a0", present = true, last_update = "40.005s", timeout = "2m", data_version = 0 }"#
    ));
    let s = parse(Path::new("t.toml"), &format!("{GOOD}{good}")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parse(Path::new("t.toml"), &to_toml(&s)).unwrap_or_else(|e| panic!("{e}")).expects, s.expects);
}

#[test]
fn operator_requests_name_real_groups_and_full_headers() {
    let act = |verb: &str| format!("\n[[action]]\nat = \"1m\"\n{verb}\n");
    let e = one(&act(r#"register_topic = { topic = "Audit", queues = [] }"#));
    assert!(e.contains("t.toml:17:46: `queues` is empty: the name server would ignore it"), "{e}");
    let e = one(&act(r#"register_topic = { topic = "Audit", queues = [{ broker_name = "broker-b" }] }"#));
    assert!(e.contains("no broker has broker_name \"broker-b\"") && e.contains("did you mean \"broker-a\"?"), "{e}");
    let e = one(&act(r#"register_topic = { topic = "Audit", queues = [{ broker_name = "broker-a", perm = "x" }] }"#));
    assert!(e.contains("perm"), "{e}");
    let e =
        one(&act(r#"register_topic = { topic = "Audit", queues = [{ broker_name = "broker-a", sys_flag = -1 }] }"#));
    assert!(e.contains("sys_flag must be between 0 and"), "{e}");
    let e = one(&act(r#"unregister_broker = { broker_addr = "10.0.0.9:10911" }"#));
    assert!(e.contains("the UNREGISTER_BROKER header lacks cluster, broker_name, broker_id"), "{e}");
    assert!(e.contains("name the broker (`broker = \"a0\"`)"), "{e}");
    let e = one(&act(r#"unregister_broker = { broker = "a9" }"#));
    assert!(e.contains("a9"), "{e}");
    let e = one("\n[[fault]]\nat = \"1m\"\nunregister_broker = { broker = \"a0\" }\n");
    assert!(e.contains("`unregister_broker` is not a fault verb"), "{e}");
    let e = one(&act(r#"register_broker = { broker = "a9", data_version = { counter = 1 } }"#));
    assert!(e.contains("a9"), "{e}");
    let e = one(&act(r#"register_broker = { broker = "a0", data_version = { counter = -1 } }"#));
    assert!(e.contains("counter must be between 0 and"), "{e}");
    let e = one(&act(r#"register_broker = { broker = "a0", data_version = { counter = 1, state_version = -2 } }"#));
    assert!(e.contains("state_version must be between 0 and"), "{e}");
    let e = one(&act(r#"register_broker = { broker = "a0", data_version = { counter = 1, timestamp = "soon" } }"#));
    assert!(e.contains("invalid duration \"soon\""), "{e}");
    let e = one(&act(r#"register_broker = { broker = "a0", data_version = { count = 1 } }"#));
    assert!(e.contains("count") && e.contains("counter"), "the unknown key gets the right one: {e}");
    let e = one(&act(r#"register_broker = { broker = "a0" }"#));
    assert!(e.contains("data_version"), "{e}");
    // A header of one's own, and a topic registered only at the name server, load and write back.
    use routesim::sim::scenario::to_toml;
    let good = act(concat!(
        r#"unregister_broker = { broker = "a0", broker_id = 3, broker_addr = "10.0.0.9:10911" }"#,
        "\n\n[[action]]\nat = \"2m\"\n",
        r#"register_topic = { namesrv = "ns1", topic = "Audit", queues = [{ broker_name = "broker-a", read = 2, write = 2, perm = "r", sys_flag = 1 }] }"#,
        "\n\n[[action]]\nat = \"2m\"\n",
        r#"register_broker = { broker = "a0", data_version = { counter = 9, timestamp = "1m30s", state_version = 2 } }"#,
        "\n\n[[expect]]\nname = \"audit\"\nat = \"2m\"\n",
        r#"route = { namesrv = "ns1", topic = "Audit", absent = false }"#,
    ));
    let s = parse(Path::new("t.toml"), &format!("{GOOD}{good}")).unwrap_or_else(|e| panic!("{e}"));
    let again = parse(Path::new("t.toml"), &to_toml(&s)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.timeline, s.timeline);
    let text = to_toml(&s);
    assert!(text.contains("broker_id = 3") && text.contains("broker_addr = \"10.0.0.9:10911\""), "{text}");
    assert!(text.contains("counter = 9, timestamp = \"1m30s\", state_version = 2"), "{text}");
}

#[test]
fn a_registration_subject_names_a_broker_a_name_server_and_a_claim() {
    let exp = |subject: &str| format!("\n[[expect]]\nname = \"x\"\nat = \"1m\"\n{subject}\n");
    let e = one(&exp(r#"registration = { broker = "a0", namesrv = "ns1" }"#));
    assert!(e.contains("a registration subject needs a claim") && e.contains("\"\" claims none"), "{e}");
    let e = one(&exp(r#"registration = { broker = "a9", namesrv = "ns1", master_addr = "" }"#));
    assert!(e.contains("a9"), "{e}");
    let e = one(&exp(r#"registration = { broker = "a0", namesrv = "ns1", master = "" }"#));
    assert!(e.contains("master_addr"), "the unknown key gets the right one: {e}");
    use routesim::sim::scenario::to_toml;
    let good = exp(
        r#"registration = { broker = "a0", namesrv = "ns1", master_addr = "", ha_server_addr = "10.0.0.1:10912" }"#,
    );
    let s = parse(Path::new("t.toml"), &format!("{GOOD}{good}")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parse(Path::new("t.toml"), &to_toml(&s)).unwrap_or_else(|e| panic!("{e}")).expects, s.expects);
}
