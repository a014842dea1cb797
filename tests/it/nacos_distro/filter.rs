//! `DistroFilter` in whole runs: a 1.x request goes to the member its receiver's `DistroMapper`
//! names for the instance (Nacos 2.x `naming/web/DistroFilter#doFilter`).
//!
//! Each owner syncs its clients to the other members (`DistroClientDataProcessor`, 1 s later), so
//! every member holds every instance; only the owner checks beats.
//!
//! Both instances send only to nacos1 (`servers = ["nacos1"]`, a domain: each call is tried 3
//! times). Owners (the table in `nacos_distro.rs`): `a` = 10.1.0.1:8080 → nacos3 over three
//! members, nacos2 over [nacos1, nacos2]; `c` = 10.1.0.3:8080 → nacos1 over three.
//!
//! Timings, with the 1 ms one-way latency: a new connection is a SYN (1 ms) and a SYN-ACK (1 ms)
//! before the request (1 ms more). a registers at 0 s: over a new connection it reaches nacos1 at
//! 0.003; nacos1 opens a pooled connection to nacos3 (nothing pooled yet: the first member
//! report is at 5 s) and the proxied register arrives there at 0.006. Its answer is back at
//! nacos1 at 0.007 and at a at 0.008. `BeatReactor#addBeatInfo` puts the first beat 5 s after
//! the register call, at 5.000, and `BeatTask#run` schedules the next one 5 s after the
//! synchronous `sendBeat` returns: a proxied beat on open connections takes 4 ms, so the beats
//! leave at 5.000, 10.004, 15.008 and 20.012.

use super::{run_holds, state_at};
use crate::common::{routesim, text, write};

const FILTER: &str = r#"
[scenario]
name = "distro filter"
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
servers = ["nacos1"]

[[instance]]
name = "c"
service = "orders"
ip = "10.1.0.3"
servers = ["nacos1"]
"#;

fn holds(extra: &str) {
    run_holds(&format!("{FILTER}{extra}"));
}

/// By `at`, `server` put `instance` in its tables (`instance_registered`: a register it handled,
/// or a Distro copy) `count` times.
fn registered_by(at: &str, server: &str, instance: &str, count: u32) -> String {
    format!(
        "\n[[expect]]\nname = \"by {at} {server} registered {instance} {count} times\"\nat = \"{at}\"\n\
         events = {{ kind = \"instance_registered\", actor = \"{server}\", instance = \"{instance}\", count = {count} }}\n"
    )
}

#[test]
fn a_register_for_another_members_instance_is_proxied_and_lands_on_that_member_only() {
    let claims = [
        state_at("0.005s", "nacos3", "a", "absent"),
        state_at("0.006s", "nacos3", "a", "healthy"),
        // The owner syncs it to the others (`DistroProtocol#sync`, 1 s delay on the 100 ms
        // engine grid: the task added at 0.006 runs at 1.100). nacos1 hears it at 1.101 on the
        // connection nacos3's start-up snapshot request opened (`DistroLoadDataTask` asks the
        // first other member by name); nacos2 at 1.103, over a new one (SYN, SYN-ACK, request).
        state_at("1.100s", "nacos1", "a", "absent"),
        state_at("1.101s", "nacos1", "a", "healthy"),
        state_at("1.102s", "nacos2", "a", "absent"),
        state_at("1.103s", "nacos2", "a", "healthy"),
        // Registered once everywhere: by the owner's controller, and as one copy on each other
        // member — the beats go to the owner only, and verify keeps the copies without a resync.
        registered_by("40s", "nacos3", "a", 1),
        registered_by("40s", "nacos1", "a", 1),
        registered_by("40s", "nacos2", "a", 1),
        // The proxied beats keep it healthy past the 15 s unhealthy and 30 s delete timeouts, on
        // the owner and (by verify, `ClientBeatUpdateTask`) on the copies.
        state_at("40s", "nacos3", "a", "healthy"),
        state_at("40s", "nacos1", "a", "healthy"),
    ];
    holds(&claims.concat());
}

#[test]
fn a_register_for_the_receiving_members_own_instance_is_handled_there() {
    // c's register reaches nacos1 at 0.003 and is handled by nacos1's own controller.
    let claims = [
        state_at("0.002s", "nacos1", "c", "absent"),
        state_at("0.003s", "nacos1", "c", "healthy"),
        state_at("40s", "nacos1", "c", "healthy"),
        registered_by("40s", "nacos1", "c", 1),
        // Copies, synced at the engine tick 1.100 (registered 0.003, plus 1 s): both peers
        // already have connections open to nacos1 from its snapshot load at start.
        state_at("1.100s", "nacos2", "c", "absent"),
        state_at("1.101s", "nacos2", "c", "healthy"),
        registered_by("40s", "nacos2", "c", 1),
        registered_by("40s", "nacos3", "c", 1),
    ];
    holds(&claims.concat());
}

#[test]
fn when_the_owner_is_down_the_beats_go_to_the_new_owner() {
    // nacos3 killed at 20 s; nacos1 sees it DOWN at 21.002 (its report to nacos3 is refused).
    // The beat of 20.012 reaches nacos1 at 20.013, while nacos3 is still UP there: nacos3's FIN
    // closed the pooled connection at 20.001, so the proxy connects anew and is refused at
    // 20.015; the 500 reaches a at 20.016, which tries nacos1 twice more the same way, and the
    // beat fails at 20.024. The next leaves at 25.024 and reaches nacos1 at 25.025 (a kept-alive
    // connection): nacos1 now maps a to nacos2 and proxies it there on the connection its reports
    // keep open: it arrives at 25.026.
    //
    // nacos2 holds a copy of a (nacos3 synced it at 1.103, and its verifies renewed it until the
    // kill), and its own view made it responsible at 21.002 (`DistroMapper#onEvent`), so the beat
    // finds the instance and renews it: no 20404, no second registration. The copy's checks count
    // silence from the last verify (by 20 s), so it is never unhealthy in between.
    let kill = "\n[[fault]]\nat = \"20s\"\ncrash = \"nacos3\"\n";
    let forwarded = |at: &str, count: u32| {
        format!(
            "\n[[expect]]\nname = \"by {at} nacos1 forwarded {count} requests of a to nacos2\"\nat = \"{at}\"\n\
             events = {{ kind = \"distro_forwarded\", actor = \"nacos1/filter\", instance = \"a\", \
             where = {{ target = \"nacos2\" }}, count = {count} }}\n"
        )
    };
    let took_over = |at: &str, count: u32| {
        format!(
            "\n[[expect]]\nname = \"by {at} nacos2 took a over {count} times\"\nat = \"{at}\"\n\
             events = {{ kind = \"distro_took_over\", actor = \"nacos2/distro\", instance = \"a\", count = {count} }}\n"
        )
    };
    let claims = [
        super::maps("21.001s", "nacos1", "a", "nacos3"),
        super::maps("21.002s", "nacos1", "a", "nacos2"),
        forwarded("25.024s", 0),
        forwarded("25.025s", 1),
        state_at("40s", "nacos2", "a", "healthy"),
        registered_by("40s", "nacos2", "a", 1),
        took_over("21.001s", 0),
        took_over("21.002s", 1),
    ];
    holds(&format!("{kill}{}", claims.concat()));
}

#[test]
fn a_proxy_to_an_unreachable_owner_fails_and_the_client_sees_a_500() {
    // nacos3's host goes down at 20 s: no FIN, so the beat of 20.012 is proxied at 20.013 on the
    // proxy's pooled connection still open, and lost. PROXY_READ_TIMEOUT (2 s) fails it at 22.013
    // and the connection is discarded (Apache's pool cannot reuse it): a gets the 500 at 22.014
    // and tries nacos1 again. That proxy connects anew at 22.015 and is never answered:
    // PROXY_CONNECT_TIMEOUT (2 s) fails it at 24.015; the third the same way at 26.017, and the
    // beat at 26.018.
    let dir = tempfile::tempdir().unwrap();
    let off = "\n[[fault]]\nat = \"20s\"\nhost_down = \"nacos3\"\n";
    let body = format!("{FILTER}{off}{}", state_at("19s", "nacos3", "a", "healthy"));
    let file = write(dir.path(), "t.toml", body);
    let out = routesim(&["run", file.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for line in [
        "22.013s nacos1/filter  DistroFilter: PUT /nacos/v1/ns/instance/beat for 10.1.0.1:8080 to nacos3 failed \
         (read timed out): HTTP 500 to the client (HttpClient#request)",
        "22.014s a              PUT /nacos/v1/ns/instance/beat to nacos1 failed: HTTP 500 \
         java.net.SocketTimeoutException: Read timed out; trying nacos1",
        "24.015s nacos1/filter  DistroFilter: PUT /nacos/v1/ns/instance/beat for 10.1.0.1:8080 to nacos3 failed \
         (connect timed out): HTTP 500 to the client (HttpClient#request)",
        "26.018s a              a: PUT /nacos/v1/ns/instance/beat failed after all servers tried (HTTP 500 \
         org.apache.http.conn.ConnectTimeoutException: connect timed out): next beat in 5s (no back-off)",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
    let out = routesim(&["explain", file.to_str().unwrap(), "--at", "22.013s"]);
    let (stdout, stderr) = text(&out);
    assert!(stdout.contains("RestResult(500, e.toString())"), "{stdout}\n{stderr}");
}

#[test]
fn a_standalone_server_proxies_nothing() {
    // nacos4 is in no cluster: it handles every request it gets, whatever a's hash.
    let alone = "\n[[nacos_server]]\nname = \"nacos4\"\n\n[[instance]]\nname = \"d\"\nservice = \"orders\"\n\
                 ip = \"10.1.0.1\"\nport = 8081\nservers = [\"nacos4\"]\n";
    let claims = [state_at("0.002s", "nacos4", "d", "absent"), state_at("0.003s", "nacos4", "d", "healthy")];
    holds(&format!("{alone}{}", claims.concat()));
}
