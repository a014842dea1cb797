//! `[[producer]]` tables and `sends` subjects as the binary reads them: every mistake is invalid
//! input (exit 2) named at its `file:line:column` with what would be right; a valid producer
//! survives `to_toml` and runs to a PASS line with the measured figures.

use routesim::sim::scenario::{parse, to_toml};
use std::path::Path;

use crate::common::{routesim, text, write};

/// Sixteen lines: a name server, one broker with `Orders` (4 write queues) and a client that
/// polls nothing yet. What a test appends starts on line 17.
const CLUSTER: &str = r#"[scenario]
name = "producer input"
duration = "2m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders", read = 4, write = 4 }]

[[client]]
name = "app"
topics = []
"#;

/// A valid producer, lines 17-22; its last line is the schedule a test may replace.
const PRODUCER: &str = r#"
[[producer]]
name = "p1"
client = "app"
topic = "Orders"
"#;

/// Runs `CLUSTER` + `extra` and returns stderr, after checking the exit code is 2 and that the
/// first error is at `line:column` of the file.
fn invalid(extra: &str, at: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "p.toml", format!("{CLUSTER}{extra}"));
    let o = routesim(&["run", "--quiet", file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "invalid input exits 2:\n{out}{err}");
    let want = format!("error: {}:{at}: ", file.display());
    assert!(err.starts_with(&want), "expected an error at {at}:\n{err}");
    err
}

/// A producer with `schedule` as its last lines.
fn producer(schedule: &str) -> String {
    format!("{PRODUCER}{schedule}\n")
}

/// A valid producer and one expectation over the whole run with `sends` as its subject.
fn sends(subject: &str) -> String {
    format!("{PRODUCER}rate = 5\n\n[[expect]]\nname = \"e\"\nfrom = \"0s\"\nuntil = \"1m\"\nsends = {subject}\n")
}

// ---- [[producer]] ----

#[test]
fn a_rate_of_zero_is_refused_with_its_range() {
    let err = invalid(&producer("rate = 0"), "22:8");
    assert!(err.contains("rate must be between 1 and 1000 messages a second, got 0"), "{err}");
}

#[test]
fn a_rate_above_one_a_millisecond_points_to_bursts() {
    // The clock's resolution is 1 ms, so 1000 a second is the most a steady rate can mean.
    let err = invalid(&producer("rate = 1001"), "22:8");
    assert!(err.contains("got 1001"), "{err}");
    assert!(err.contains("for more at once use `burst` and `every`"), "{err}");
}

#[test]
fn a_burst_without_every_asks_for_every() {
    let err = invalid(&producer("burst = 5"), "22:9");
    assert!(err.contains("producer \"p1\" has `burst` without `every`"), "{err}");
    assert!(err.contains("every = \"10s\""), "{err}");
}

#[test]
fn an_every_without_burst_asks_for_burst() {
    let err = invalid(&producer("every = \"1s\""), "22:9");
    assert!(err.contains("has `every` without `burst`"), "{err}");
}

#[test]
fn a_rate_and_a_burst_together_are_refused_at_the_burst() {
    let err = invalid(&producer("rate = 5\nburst = 5\nevery = \"1s\""), "23:9");
    assert!(err.contains("has both `rate` and `burst`: give one schedule"), "{err}");
}

#[test]
fn a_producer_with_no_schedule_needs_a_send_rate() {
    let err = invalid(PRODUCER, "19:8");
    assert!(err.contains("producer \"p1\" needs a send rate"), "{err}");
}

#[test]
fn an_unknown_client_is_named_with_a_suggestion() {
    let err = invalid(&PRODUCER.replace("\"app\"", "\"apq\"").replace("Orders\"\n", "Orders\"\nrate = 5\n"), "20:10");
    assert!(err.contains("unknown client \"apq\""), "{err}");
    assert!(err.contains("did you mean \"app\"?"), "{err}");
}

#[test]
fn an_unknown_topic_says_no_broker_has_it() {
    let err = invalid(&PRODUCER.replace("\"Orders\"", "\"Ordrs\"").replace("Ordrs\"\n", "Ordrs\"\nrate = 5\n"), "21:9");
    assert!(err.contains("unknown topic \"Ordrs\": no broker has it"), "{err}");
    assert!(err.contains("did you mean \"Orders\"?"), "{err}");
}

#[test]
fn an_unknown_mode_lists_the_three() {
    let err = invalid(&producer("rate = 5\nmode = \"asynch\""), "23:8");
    assert!(err.contains("unknown mode \"asynch\""), "{err}");
    assert!(err.contains("one of \"sync\", \"async\", \"oneway\""), "{err}");
}

#[test]
fn a_negative_retry_count_is_refused_with_both_bounds() {
    let err = invalid(&producer("rate = 5\nretry_times = -1"), "23:15");
    assert!(err.contains("retry_times must be between 0 and 1000, got -1"), "{err}");
    let err = invalid(&producer("rate = 5\nretry_times_async = -3"), "23:21");
    assert!(err.contains("retry_times_async must be between 0 and 1000, got -3"), "{err}");
}

#[test]
fn a_retry_count_past_the_cap_is_refused_because_spent_sends_retry_in_one_instant() {
    // Java takes any int; here 2147483647 retries of a send whose budget was spent by a
    // power-off would all run in the same virtual instant and exhaust memory.
    let err = invalid(&producer("rate = 5\nretry_times = 2147483647"), "23:15");
    assert!(err.contains("retry_times must be between 0 and 1000, got 2147483647"), "{err}");
    assert!(err.contains("same instant"), "{err}");
}

#[test]
fn a_topic_with_more_write_queues_than_the_model_lists_is_refused() {
    // Two brokers of 40,000 write queues each: 80,000 over the topic, past 65,536.
    let cluster = CLUSTER.replace("write = 4 }", "write = 40000 }").replace(
        "\n[[client]]",
        "\n[[broker]]\nname = \"b0\"\nbroker_name = \"broker-b\"\naddr = \"10.0.0.2:10911\"\n\
         topics = [{ name = \"Orders\", read = 4, write = 40000 }]\n\n[[client]]",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "p.toml", format!("{cluster}{}", producer("rate = 5")));
    let o = routesim(&["run", "--quiet", file.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(":27:9: topic \"Orders\" has up to 80000 write queues"), "{err}");
    assert!(err.contains("may have at most 65536"), "{err}");
}

#[test]
fn a_duplicate_producer_name_is_reported_at_the_second() {
    let twice = format!("{}{}", producer("rate = 5"), producer("rate = 5"));
    let err = invalid(&twice, "25:8");
    assert!(err.contains("duplicate producer name \"p1\""), "{err}");
}

#[test]
fn an_until_before_from_would_never_send() {
    let err = invalid(&producer("rate = 5\nfrom = \"10s\"\nuntil = \"5s\""), "24:9");
    assert!(err.contains("`until` (5.000s) is before `from` (10.000s): the producer would never send"), "{err}");
}

#[test]
fn an_until_before_the_default_from_says_from_defaults_to_one_second() {
    let err = invalid(&producer("rate = 5\nuntil = \"500ms\""), "23:9");
    assert!(err.contains("is before `from` (1.000s, its default)"), "{err}");
}

#[test]
fn a_from_past_the_end_of_the_run_is_refused() {
    let err = invalid(&producer("rate = 5\nfrom = \"3m\""), "23:8");
    assert!(err.contains("past the end of the scenario"), "{err}");
}

// ---- sends ----

#[test]
fn sends_with_an_unknown_producer_suggests_the_nearest() {
    let err = invalid(&sends("{ producer = \"p2\", failed = 0 }"), "28:22");
    assert!(err.contains("unknown producer \"p2\""), "{err}");
    assert!(err.contains("did you mean \"p1\"?"), "{err}");
}

#[test]
fn sends_with_no_claim_lists_the_claims() {
    let err = invalid(&sends("{ producer = \"p1\" }"), "28:9");
    assert!(err.contains("a sends subject needs at least one claim"), "{err}");
    assert!(err.contains("`succeeded_at_least`"), "{err}");
}

#[test]
fn sends_to_an_unknown_broker_name_suggests_the_nearest() {
    let err = invalid(&sends("{ producer = \"p1\", to_broker = \"broker-b\", failed = 0 }"), "28:40");
    assert!(err.contains("unknown broker name \"broker-b\""), "{err}");
    assert!(err.contains("did you mean \"broker-a\"?"), "{err}");
}

#[test]
fn a_negative_sends_count_is_refused_with_both_bounds() {
    let err = invalid(&sends("{ producer = \"p1\", failed_at_most = -1 }"), "28:45");
    assert!(err.contains("failed_at_most must be between 0 and 2147483647 (Java's int), got -1"), "{err}");
}

// ---- valid producers ----

#[test]
fn a_scenario_with_producers_survives_a_toml_round_trip() {
    // Both schedules, every mode, every key away from its default, and a sends claim of each
    // kind: what `to_toml` writes must load back as the same scenario.
    let extra = r#"
[[producer]]
name = "steady"
client = "app"
topic = "Orders"
rate = 7
mode = "async"
from = "2s"
until = "90s"
send_timeout = "1500ms"
retry_times = 4
retry_times_async = 3
retry_another_broker_when_not_store_ok = true
send_latency_fault_enable = true
start_detector_enable = true

[[producer]]
name = "bursty"
client = "app"
topic = "Orders"
burst = 20
every = "10s"
mode = "oneway"

[[expect]]
name = "steady sends"
after = "30s"
within = "10s"
sends = { producer = "steady", to_broker = "broker-a", failed = 0, succeeded_at_least = 10, retried_at_most = 0, max_latency = "1s" }

[[expect]]
name = "bursty sends"
from = "0s"
until = "1m"
sends = { producer = "bursty", failed_at_most = 1, failed_at_least = 0 }
"#;
    let s = parse(Path::new("p.toml"), &format!("{CLUSTER}{extra}")).expect("valid");
    assert_eq!(s.producers.len(), 2);
    let text = to_toml(&s);
    let back = parse(Path::new("written.toml"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back, s, "{text}");
}

#[test]
fn a_passing_sends_expectation_prints_what_was_measured() {
    // 5 sends a second from 1 s to 60 s to one live broker: every one stored at the first
    // attempt, in a round trip of 2 ms.
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(
        "{}\n[[expect]]\nname = \"all stored\"\nat = \"1m\"\nsends = {{ producer = \"p1\", failed = 0 }}\n",
        producer("rate = 5")
    );
    let file = write(dir.path(), "p.toml", format!("{CLUSTER}{extra}"));
    let o = routesim(&["run", "--quiet", file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let pass = out.lines().position(|l| l.contains("PASS  all stored")).unwrap_or_else(|| panic!("{out}"));
    let measured = out.lines().nth(pass + 1).unwrap_or_default().trim();
    assert!(measured.starts_with("measured: sent "), "the line under PASS:\n{out}");
    assert!(measured.contains(", failed 0, retried 0, latency p50 "), "{out}");
}

#[test]
fn a_restarted_client_sends_from_its_next_tick_not_every_tick_it_missed() {
    // The client is down from 10.5 s to 40.5 s. Restarted, it has no route until its first
    // poll 10 ms later; had it replayed the 30 ticks it missed, they would all fail at once
    // for want of a route (`No route info of this topic`).
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(
        "{}\n[[fault]]\nat = \"10500ms\"\ncrash = \"app\"\n\n[[fault]]\nat = \"40500ms\"\nrestart = \"app\"\n\n\
         [[expect]]\nname = \"no catch-up burst\"\nfrom = \"restart app\"\nuntil = \"1m\"\n\
         sends = {{ producer = \"p1\", failed = 0 }}\n",
        producer("rate = 1")
    );
    let file = write(dir.path(), "p.toml", format!("{CLUSTER}{extra}"));
    let o = routesim(&["run", "--quiet", file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("measured: sent 19, ok 19, failed 0"), "one send a second from 41 s to 59 s:\n{out}");
}
