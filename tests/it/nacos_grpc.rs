//! Nacos 2.x gRPC clients (`transport = "grpc"`) in whole runs: one connection per client, the
//! client's keep-alive health check and reconnect, the server's connection ejector, and what a
//! kill, a power-off, a partition or a server's death do to the instances. Every bound below is
//! derived from Nacos 2.5.1, not read off a run:
//!
//! - `RpcClient`: the keep-alive thread wakes every 5 s (`connectionKeepAlive`) and health-checks
//!   a connection idle for 5 s, after a random sleep under 500 ms; so the server hears from a
//!   live client at least every 5.5 s (plus a round trip).
//! - `NacosRuntimeConnectionEjector`: every 3 s (fixed delay, from 1 s after start) a connection
//!   idle for >= 20 s gets a `ClientDetectionRequest`; unanswered within the 5 s latch, it is
//!   unregistered. Silence therefore removes an instance 25 to 28 s after its last request: from
//!   19.5 s to 28 s after the client went silent.
//! - `AddressTransportFilter#transportTerminated`: a FIN or RST unregisters the connection at once.
//! - `NamingGrpcRedoService`: after a new connection, every instance is registered again at the
//!   next 3 s run of `RedoScheduledTask`.
//!
//! Links have 1 ms latency.

use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::{parse, to_toml, Scenario};
use std::path::Path;

use crate::common::{routesim, text, write};

/// One naming server and one 2.x client with one instance; what tests append follows.
const BASE: &str = r#"
[scenario]
name = "grpc"
duration = "100s"

[[nacos_server]]
name = "nacos1"

[[instance]]
name = "orders-1"
app = "app1"
service = "orders"
ip = "10.1.0.1"
servers = ["nacos1"]
transport = "grpc"
"#;

fn scenario(base: &str, extra: &str) -> Scenario {
    parse(Path::new("t.toml"), &format!("{base}{extra}")).unwrap_or_else(|e| panic!("valid: {e}"))
}

/// Runs `base` + `extra`: every expectation must hold, and the scenario survives a round trip
/// through the writer.
fn holds_on(base: &str, extra: &str) {
    let s = scenario(base, extra);
    let report = run(&s, RunOptions::default());
    let failed: Vec<String> =
        report.verdicts.iter().filter(|(_, v)| !v.held()).map(|(e, v)| format!("{}: {v:?}", e.name)).collect();
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(parse(Path::new("t.toml"), &to_toml(&s)).expect("round trip"), s, "{}", to_toml(&s));
}

fn holds(extra: &str) {
    holds_on(BASE, extra);
}

fn expect(name: &str, frame: &str, subject: &str) -> String {
    format!("\n[[expect]]\nname = \"{name}\"\n{frame}\n{subject}\n")
}

fn instance(server: &str, name: &str, state: &str) -> String {
    format!("instance = {{ server = \"{server}\", instance = \"{name}\", state = \"{state}\" }}")
}

fn connection(client: &str, server: &str) -> String {
    format!("connection = {{ client = \"{client}\", server = \"{server}\" }}")
}

#[test]
fn a_live_client_is_never_ejected_because_its_health_checks_keep_the_connection_active() {
    // Health checks every ~5 s refresh lastActiveTime (GrpcRequestAcceptor#request), so the
    // ejector never finds the connection 20 s idle and never probes it.
    let mut claims = expect(
        "registered and healthy all along",
        "from = \"1s\"\nuntil = \"100s\"",
        &instance("nacos1", "orders-1", "healthy"),
    );
    claims += &expect("connected to nacos1", "from = \"1s\"\nuntil = \"100s\"", &connection("app1", "nacos1"));
    claims +=
        &expect("never probed", "from = \"0s\"\nuntil = \"100s\"", "events = { kind = \"conn_detecting\", count = 0 }");
    claims += &expect(
        "about one health check per 5 s",
        "from = \"0s\"\nuntil = \"100s\"",
        "events = { kind = \"grpc_health_ok\", at_least = 15, at_most = 20 }",
    );
    holds(&claims);
}

#[test]
fn kill_minus_9_removes_the_instance_as_soon_as_the_fin_arrives() {
    let mut claims = "\n[[fault]]\nname = \"kill\"\nat = \"30s\"\ncrash = \"app1\"\n".to_string();
    claims += &expect("present until the kill", "at = \"29.999s\"", &instance("nacos1", "orders-1", "healthy"));
    claims += &expect(
        "gone one latency later",
        "after = \"30s\"\nwithin = \"1ms\"",
        &instance("nacos1", "orders-1", "absent"),
    );
    claims +=
        &expect("never unhealthy", "from = \"0s\"\nuntil = \"100s\"", "events = { kind = \"unhealthy\", count = 0 }");
    holds(&claims);
}

#[test]
fn a_graceful_shutdown_closes_the_connection_and_removes_the_instance_at_once() {
    let mut claims = "\n[[fault]]\nat = \"30s\"\nshutdown = \"app1\"\n".to_string();
    claims += &expect("gone at once", "after = \"30s\"\nwithin = \"1ms\"", &instance("nacos1", "orders-1", "absent"));
    holds(&claims);
}

#[test]
fn a_powered_off_client_goes_25_to_28_s_after_its_last_request_whatever_the_seed() {
    // Silent from 60 s: the last request reached the server after 54.5 s, so it is removed no
    // earlier than 79.5 s and no later than 88 s.
    for seed in 1..=6 {
        let mut claims = "\n[[fault]]\nat = \"60s\"\nhost_down = \"app1\"\n".to_string();
        claims += &expect(
            "kept at least 19.5 s",
            "from = \"60s\"\nuntil = \"79.499s\"",
            &instance("nacos1", "orders-1", "healthy"),
        );
        claims +=
            &expect("gone within 28 s", "after = \"60s\"\nwithin = \"28s\"", &instance("nacos1", "orders-1", "absent"));
        claims += &expect(
            "one detection, one ejection",
            "from = \"60s\"\nuntil = \"100s\"",
            "events = { kind = \"conn_detecting\", count = 1 }",
        );
        holds(&format!("{claims}\n").replace("name = \"grpc\"", &format!("name = \"grpc\"\nseed = {seed}")));
    }
}

#[test]
fn a_hung_client_is_ejected_like_a_silent_one_because_its_kernel_still_acknowledges() {
    // SIGSTOP: the kernel keeps the connection, but no health check or detection answer is sent.
    let mut claims = "\n[[fault]]\nat = \"60s\"\nhang = \"app1\"\n".to_string();
    claims +=
        &expect("gone within 28 s", "after = \"60s\"\nwithin = \"28s\"", &instance("nacos1", "orders-1", "absent"));
    holds(&claims);
}

#[test]
fn a_black_holed_client_reconnects_after_the_heal_and_the_redo_task_registers_it_again() {
    // Health check from ~60–65.5 s, 4 tries of 3 s: UNHEALTHY by ~78 s; reconnects after the
    // heal at 90 s (the attempt begun in the cut times out within 3 s, then a sleep of at most
    // 1.5 s), and the redo run within 3 s of that.
    let mut claims = "\n[[fault]]\nat = \"60s\"\npartition = [[\"app1\"], [\"nacos1\"]]\n\n[[fault]]\nat = \"90s\"\nheal = \"all\"\n".to_string();
    claims += &expect("no usable connection in the cut", "at = \"80s\"", &connection("app1", "none"));
    claims += &expect("ejected in the cut", "at = \"89s\"", &instance("nacos1", "orders-1", "absent"));
    claims += &expect("reconnected", "after = \"90s\"\nwithin = \"5s\"", &connection("app1", "nacos1"));
    claims +=
        &expect("registered again", "after = \"90s\"\nwithin = \"8s\"", &instance("nacos1", "orders-1", "healthy"));
    claims += &expect("one redo", "from = \"90s\"\nuntil = \"100s\"", "events = { kind = \"grpc_redo\", count = 1 }");
    holds(&claims);
}

/// Two servers, the client listing both: which one it connects to first is the seed's draw.
const TWO: &str = r#"
[scenario]
name = "grpc two servers"
duration = "60s"

[[nacos_server]]
name = "nacos1"

[[nacos_server]]
name = "nacos2"

[[instance]]
name = "orders-1"
app = "app1"
service = "orders"
ip = "10.1.0.1"
transport = "grpc"
"#;

#[test]
fn a_killed_server_sends_the_client_to_the_next_one_where_the_redo_task_registers_it() {
    // nacos1 killed at 30 s: if the client was on it, the FIN ends its stream, it reconnects to
    // nacos2 at once and the redo run (every 3 s) registers there within 3 s. Either way, from
    // 34 s the client is on nacos2 with its instance, and nacos1 (down) has nothing.
    for seed in 1..=4 {
        let mut claims = "\n[[fault]]\nat = \"30s\"\ncrash = \"nacos1\"\n".to_string();
        claims += &expect("on nacos2", "from = \"34s\"\nuntil = \"60s\"", &connection("app1", "nacos2"));
        claims +=
            &expect("registered there", "from = \"34s\"\nuntil = \"60s\"", &instance("nacos2", "orders-1", "healthy"));
        holds_on(&TWO.replace("duration", &format!("seed = {seed}\nduration")), &claims);
    }
}

#[test]
fn a_restarted_server_gets_the_instance_back_from_the_redo_task() {
    // One-server list: refused connects (100, 200, 300 ... ms apart) until the restart at 40 s,
    // then a connection within ~1 s and the redo run within 3 s more.
    let mut claims =
        "\n[[fault]]\nat = \"30s\"\ncrash = \"nacos1\"\n\n[[fault]]\nat = \"40s\"\nrestart = \"nacos1\"\n".to_string();
    claims += &expect("none while the server is down", "at = \"35s\"", &connection("app1", "none"));
    claims += &expect("back", "after = \"40s\"\nwithin = \"5s\"", &instance("nacos1", "orders-1", "healthy"));
    holds(&claims);
}

#[test]
fn a_second_grpc_instance_of_one_service_in_one_app_replaces_the_first() {
    // AbstractClient#addServiceInstance: one instance per service per connection (#9261).
    let extra = "\n[[instance]]\nname = \"orders-2\"\napp = \"app1\"\nservice = \"orders\"\nip = \"10.1.0.1\"\nport = 8081\nservers = [\"nacos1\"]\ntransport = \"grpc\"\nstart = \"10s\"\n";
    let mut claims = extra.to_string();
    claims += &expect("first one alone at first", "at = \"9s\"", &instance("nacos1", "orders-1", "healthy"));
    claims += &expect("replaced", "at = \"11s\"", &instance("nacos1", "orders-1", "absent"));
    claims += &expect("by the second", "at = \"11s\"", &instance("nacos1", "orders-2", "healthy"));
    holds(&claims);
}

#[test]
fn http_and_grpc_clients_mix_and_only_the_http_one_has_an_unhealthy_phase() {
    // Both hosts power off at 60 s. The 1.x instance is unhealthy 15 s after its last beat (by
    // 80 s) and still present; the gRPC one never goes unhealthy, it is removed by 88 s.
    let extra = "\n[[instance]]\nname = \"pay-1\"\nservice = \"pay\"\nip = \"10.1.0.2\"\nservers = [\"nacos1\"]\n\n[[fault]]\nat = \"60s\"\nhost_down = \"app1\"\n\n[[fault]]\nat = \"60s\"\nhost_down = \"pay-1\"\n";
    let mut claims = extra.to_string();
    claims += &expect("http unhealthy", "at = \"81s\"", &instance("nacos1", "pay-1", "unhealthy"));
    claims += &expect("grpc gone", "at = \"88s\"", &instance("nacos1", "orders-1", "absent"));
    claims += &expect(
        "grpc never unhealthy",
        "from = \"0s\"\nuntil = \"100s\"",
        "events = { kind = \"unhealthy\", instance = \"orders-1\", count = 0 }",
    );
    holds(&claims);
}

#[test]
fn a_wrong_connection_claim_fails_with_what_the_client_is_on() {
    let dir = tempfile::tempdir().unwrap();
    let claims = "\n[[fault]]\nat = \"60s\"\npartition = [[\"app1\"], [\"nacos1\"]]\n".to_string()
        + &expect("still connected (wrong)", "at = \"80s\"", &connection("app1", "nacos1"));
    let file = write(dir.path(), "s.toml", format!("{BASE}{claims}"));
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("app1 connected to nacos1"), "{stdout}");
    assert!(stdout.contains("connected to no server"), "{stdout}");
}

#[test]
fn the_views_draw_the_grpc_events_and_explain_tells_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/nacos/14-grpc-black-hole.toml");
    let (mmd, html) = (dir.path().join("d.mmd"), dir.path().join("r.html"));
    let out = routesim(&[
        "run",
        file.to_str().unwrap(),
        "--diagram",
        mmd.to_str().unwrap(),
        "--report",
        html.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let diagram = std::fs::read_to_string(&mmd).unwrap();
    assert!(diagram.contains("ClientDetectionRequest"), "{diagram}");
    assert!(diagram.contains("clientDisconnected"), "{diagram}");
    let explain = routesim(&["explain", file.to_str().unwrap()]);
    let (said, _) = text(&explain);
    assert_eq!(explain.status.code(), Some(0));
    assert!(said.contains("NacosRuntimeConnectionEjector#ejectOutdatedConnection"), "{said}");
    assert!(said.contains("RpcClient#reconnect"), "{said}");
}

/// The error text of `BASE` + `extra`.
fn refused(extra: &str, says: &[&str]) {
    let e = parse(Path::new("t.toml"), &format!("{BASE}{extra}")).expect_err("should be rejected").to_string();
    for s in says {
        assert!(e.contains(s), "{s:?} not in:\n{e}");
    }
    assert!(e.contains("t.toml:"), "located: {e}");
}

#[test]
fn bad_grpc_inputs_are_refused_with_their_location() {
    let inst = |extra: &str| {
        format!("\n[[instance]]\nname = \"x\"\napp = \"app2\"\nservice = \"s\"\nip = \"10.1.0.9\"\n{extra}\n")
    };
    refused(&inst("transport = \"quic\""), &["unknown transport \"quic\"", "\"grpc\""]);
    refused(&inst("transport = \"grpc\"\nbeat_threads = 2"), &["`beat_threads` does not apply to a gRPC instance"]);
    refused(&inst("transport = \"grpc\"\nread_timeout = \"5s\""), &["`read_timeout` does not apply"]);
    let mixed = "\n[[instance]]\nname = \"orders-9\"\napp = \"app1\"\nservice = \"pay\"\nip = \"10.1.0.1\"\nservers = [\"nacos1\"]\n";
    refused(mixed, &["`transport` differ"]);
    refused(
        "\n[[action]]\nat = \"5s\"\nderegister = \"orders-1\"\n",
        &["deregister of orders-1: a gRPC instance", "shutdown"],
    );
}

#[test]
fn bad_connection_claims_are_refused_with_their_location() {
    let http = "\n[[instance]]\nname = \"pay-1\"\nservice = \"pay\"\nip = \"10.1.0.2\"\n";
    refused(
        &format!("{http}{}", expect("c", "at = \"1s\"", &connection("pay-1", "nacos1"))),
        &["pay-1 is a 1.x HTTP client"],
    );
    let two = "\n[[nacos_server]]\nname = \"nacos2\"\n";
    refused(
        &format!("{two}{}", expect("c", "at = \"1s\"", &connection("app1", "nacos2"))),
        &["app1 never connects to nacos2", "its servers: nacos1"],
    );
    refused(&expect("c", "at = \"1s\"", &connection("app9", "nacos1")), &["app9"]);
    refused(&expect("c", "at = \"1s\"", "connection = { client = \"app1\" }"), &["server"]);
}

#[test]
fn the_catalogue_lessons_hold_and_run_the_same_twice() {
    for f in ["14-grpc-black-hole.toml", "15-grpc-kill-vs-power-off.toml"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/nacos").join(f);
        let s = parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
        let (a, b) = (run(&s, RunOptions::default()), run(&s, RunOptions::default()));
        assert!(a.verdicts.iter().all(|(_, v)| v.held()), "{f}");
        assert_eq!(a.digest, b.digest, "{f}: deterministic");
    }
}
