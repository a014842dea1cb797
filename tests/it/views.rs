//! The three views of a run — explain mode, the Mermaid diagram, the HTML report — on catalogue
//! scenarios whose moments are pinned by their expectations, so the views can be checked against
//! exact times. (Rendering in a browser is `tests/tools.rs`.)

use routesim::sim::clock::SimTime;
use routesim::sim::runner::{run, RunOptions, RunReport};
use routesim::sim::scenario::{load, Scenario};
use routesim::sim::trace::TraceOptions;
use routesim::view::explain::render;
use std::path::Path;

fn scenario(name: &str) -> Scenario {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"))).unwrap()
}

fn explain(name: &str) -> String {
    let s = scenario(name);
    let report = run(&s, RunOptions { narrator: Some(routesim::view::explain::narrator()), ..Default::default() });
    render(&s.name, &report.moments, SimTime::ZERO)
}

/// A run with its trace kept and its key moments told, as `run --report` makes one.
fn kept(s: &Scenario) -> RunReport {
    let trace = TraceOptions { keep: true, ..Default::default() };
    run(s, RunOptions { trace, narrator: Some(routesim::view::explain::narrator()), ..Default::default() })
}

/// The blocks of the walk for the moments at `t` by `actor`.
fn moments<'a>(walk: &'a str, t: &str, actor: &str) -> Vec<&'a str> {
    walk.split("\n\n").filter(|b| b.starts_with(&format!("{t} {actor}\n"))).collect()
}

/// The block of the walk for the (first) moment at `t` by `actor`.
fn moment<'a>(walk: &'a str, t: &str, actor: &str) -> &'a str {
    moments(walk, t, actor).first().unwrap_or_else(|| panic!("no moment {t} {actor} in:\n{walk}"))
}

#[test]
fn explain_walks_a_nacos_crash_through_both_checkers_and_the_client_cleaner() {
    // 01-crash: orders-1's last beat reached nacos1 at 10.003 s; unhealthy at the 30.003 s tick,
    // deleted at 45.003 s, its empty client removed at 50 s.
    let walk = explain("nacos/01-crash");
    let unhealthy = moment(&walk, "30.003s", "nacos1/health");
    assert!(unhealthy.contains("UnhealthyInstanceChecker#doCheck(orders-1)"), "{unhealthy}");
    assert!(unhealthy.contains("= 20s > 15s"), "{unhealthy}");
    assert!(unhealthy.contains("- instances    DEFAULT_GROUP@@orders 10.1.0.1:8080#true (orders-1): healthy"));
    assert!(unhealthy.contains("+ instances    DEFAULT_GROUP@@orders 10.1.0.1:8080#true (orders-1): UNHEALTHY"));
    assert!(unhealthy.contains("last beat 10.003s"), "the table shows the beat the checker judged:\n{unhealthy}");
    let deleted = moment(&walk, "45.003s", "nacos1/health");
    assert!(deleted.contains("ExpiredInstanceChecker#doCheck(orders-1)") && deleted.contains("= 35s > 30s"));
    assert!(!deleted.contains("+ instances"), "the instance is gone afterwards:\n{deleted}");
    assert!(moment(&walk, "50.000s", "nacos1/health").contains("ExpiredClientCleaner"));
}

#[test]
fn explain_tells_the_first_beat_of_each_instance_once_with_the_row_it_refreshed() {
    let walk = explain("nacos/01-crash");
    assert_eq!(walk.matches("BeatTask#run → NamingProxy#sendBeat(orders-2").count(), 1, "{walk}");
    let at = moments(&walk, "5.002s", "orders-2");
    assert!(at[0].contains("lightBeatEnabled=true"), "the answer switches the reactor to light beats first");
    let beat = at[1];
    assert!(beat.contains("(D) ClientBeatProcessorV2#run"), "{beat}");
    assert!(beat.contains("- instances") && beat.contains("last beat 0.003s"), "{beat}");
    assert!(beat.contains("+ instances") && beat.contains("last beat 5.001s"), "{beat}");
}

#[test]
fn explain_narrates_20404_and_the_re_registration_after_a_server_restart() {
    // 03-server-restart: nacos1 dies at 62 s, restarts empty at 70 s; the light beat, on a new
    // connection, lands at 70.033 s and gets 20404, and the POST at 70.035 s brings orders-1 back.
    let walk = explain("nacos/03-server-restart");
    let crash = moment(&walk, "62.000s", "net");
    assert!(crash.contains("nacos1 after:\n        (empty)"), "the crash empties the tables at once:\n{crash}");
    assert!(moment(&walk, "70.033s", "nacos1").contains("handleBeat (A)"));
    assert!(moment(&walk, "70.034s", "orders-1").contains("20404 RESOURCE_NOT_FOUND → NamingProxy#registerService"));
    let back = moment(&walk, "70.035s", "nacos1");
    assert!(back.contains("registerInstance(orders-1") && back.contains("+ instances"), "{back}");
}

#[test]
fn explain_shows_client_beat_processor_flipping_a_paused_instance_back() {
    // 02-gc-pause: pause-18 is marked unhealthy at 80.003 s and healthy at its beat at 82.901 s.
    let walk = explain("nacos/02-gc-pause");
    let back = moment(&walk, "82.901s", "nacos1");
    assert!(back.contains("ClientBeatProcessorV2#run: pause-18 was unhealthy"), "{back}");
    assert!(back.contains("+ instances") && back.contains("(pause-18): healthy"), "{back}");
}

#[test]
fn explain_still_walks_rocketmq_through_the_unregister_batch() {
    let walk = explain("rocketmq/07-expiry-reregistration-race");
    let batch = moment(&walk, "62.001s", "ns1");
    assert!(batch.contains("RouteInfoManager#unRegisterBroker(Set)") && batch.contains("step 1 live entry removed"));
    assert!(batch.contains("ns1 after:\n        (empty)"), "{batch}");
}

#[test]
fn the_diagram_folds_beats_and_draws_20404_and_the_re_registration() {
    let s = scenario("nacos/03-server-restart");
    let d = routesim::view::mermaid::sequence_diagram(&s, &kept(&s).kept);
    assert!(d.contains("participant orders_1 as orders-1") && d.contains("participant nacos1 as nacos1"), "{d}");
    assert!(d.contains("orders_1->>nacos1: light beat orders-1: 10200 ×11"), "beats fold with a count:\n{d}");
    assert!(d.contains("nacos1-->>orders_1: 70.034s 20404 RESOURCE_NOT_FOUND"), "{d}");
    assert!(d.contains("orders_1->>nacos1: 70.035s POST instance orders-1: registerInstance"), "{d}");
}

#[test]
fn the_diagram_shows_checkers_and_pushes_with_what_the_subscriber_now_sees() {
    let s = scenario("nacos/07-subscriber");
    let d = routesim::view::mermaid::sequence_diagram(&s, &kept(&s).kept);
    assert!(d.contains("nacos1_health->>nacos1: 80.003s UnhealthyInstanceChecker: orders-1 no beat for 19.980s > 15s"));
    assert!(
        d.contains("nacos1_push-->>gateway: 80.601s UDP push orders: now sees [orders-1 UNHEALTHY, orders-2 healthy]")
    );
    assert!(d.contains("nacos1_health->>nacos1: 95.003s ExpiredInstanceChecker: orders-1"), "{d}");
}

#[test]
fn half_an_hour_of_flapping_folds_into_loops_of_repeated_steps() {
    // 05-metadata: trap-1 flips unhealthy and back every 5 s for 27 minutes.
    let s = scenario("nacos/05-metadata");
    let d = routesim::view::mermaid::sequence_diagram(&s, &kept(&s).kept);
    let flips = d.matches("UnhealthyInstanceChecker: trap-1").count();
    assert!(flips < 40, "{flips} flips drawn of about 320:\n{d}");
    assert!(d.contains("loop the same steps ×"), "{d}");
    assert!(d.lines().count() < 300, "{} lines", d.lines().count());
}

#[test]
fn the_report_draws_an_instances_deadlines_from_its_last_beat() {
    // 01-crash: last beat 10.003 s → alive until 25.003 s, flipped at the 30.003 s tick; deleted
    // after 40.003 s, at the 45.003 s tick — each bar names the checker that acted and when.
    let s = scenario("nacos/01-crash");
    let html = routesim::view::report::html(&s, &kept(&s)).unwrap();
    assert!(html.contains(r#"data-lane="nacos1 · orders-1""#), "a row per instance at its server");
    assert!(html.contains("alive until 25.003s (last beat 10.003s + 15s); UnhealthyInstanceChecker acted at 30.003s"));
    assert!(html.contains("deleted after 40.003s (last beat 10.003s + 30s); ExpiredInstanceChecker acted at 45.003s"));
    assert!(html.contains("orders-1 unhealthy at nacos1 (UnhealthyInstanceChecker)"));
}

#[test]
fn the_report_follows_a_subscribers_view() {
    let s = scenario("nacos/07-subscriber");
    let html = routesim::view::report::html(&s, &kept(&s)).unwrap();
    for lane in ["gateway · orders · orders-1", "gateway · orders · orders-3"] {
        assert!(html.contains(&format!(r#"data-lane="{lane}""#)), "{lane}");
    }
    assert!(
        html.contains("80.601s–95.601s: gateway sees orders-1 UNHEALTHY"),
        "the unhealthy span ends when it is gone"
    );
}

/// The lanes a report shows, in order.
fn lanes(html: &str) -> Vec<&str> {
    html.split(r#"data-lane=""#).skip(1).map(|l| &l[..l.find('"').unwrap()]).collect()
}

#[test]
fn every_server_and_every_client_lists_the_same_rows_in_the_same_order() {
    // Rows used to follow the order in which things first reached each reader: in 08 the name
    // server saw OnlyOnA first, the producer Shared; in nacos/05 the server and the gateway
    // listed fast-1, trap-1, plain-1. One rule now (label order, numbers by value) for all.
    for (name, pairs) in [
        ("rocketmq/08-stale-client-route", &[("ns1 · ", "producer · ")][..]),
        ("rocketmq/05-partition-one-namesrv", &[("ns1 · ", "ns2 · "), ("reads-ns1 · ", "reads-ns2 · ")]),
        ("nacos/05-metadata", &[("nacos1 · ", "gateway · orders · ")]),
    ] {
        let s = scenario(name);
        let html = routesim::view::report::html(&s, &kept(&s)).unwrap();
        let lanes = lanes(&html);
        let rows = |prefix: &str| -> Vec<&str> { lanes.iter().filter_map(|l| l.strip_prefix(prefix)).collect() };
        for (a, b) in pairs {
            let (ra, rb) = (rows(a), rows(b));
            let shared = |xs: &[&str], ys: &[&str]| -> Vec<String> {
                xs.iter().filter(|x| ys.contains(x)).map(|x| x.to_string()).collect()
            };
            assert!(shared(&ra, &rb).len() > 1, "{name}: {a:?} and {b:?} share rows: {lanes:?}");
            assert_eq!(shared(&ra, &rb), shared(&rb, &ra), "{name}: {a:?} and {b:?} list their rows differently");
        }
    }
    let s = scenario("nacos/05-metadata");
    let html = routesim::view::report::html(&s, &kept(&s)).unwrap();
    let at_server: Vec<&str> = lanes(&html).into_iter().filter(|l| l.starts_with("nacos1 · ")).collect();
    assert_eq!(at_server, ["nacos1 · fast-1", "nacos1 · plain-1", "nacos1 · trap-1"]);
}

#[test]
fn the_report_lists_explains_moments_and_names_its_faults() {
    let s = scenario("rocketmq/01-kill-vs-silent");
    let report = kept(&s);
    let html = routesim::view::report::html(&s, &report).unwrap();
    // Each fault's name is text on the chart at its time, not only a tooltip.
    assert!(html.contains(r#"data-at="60000" style="left:20.000%;top:0px" title="60.000s: kill a0">▾ kill a0</span>"#));
    assert!(html.contains(r#"top:16px" title="60.000s: power off b0">▾ power off b0</span>"#), "a line below");
    // Every moment explain tells is listed, with its time and story.
    assert_eq!(html.matches(r#"<li class="moment""#).count(), report.moments.len());
    assert!(html.contains("FAULT crash a0: kill -9 with the host alive"), "{html}");
    // The same run renders the same bytes.
    assert_eq!(html, routesim::view::report::html(&s, &kept(&s)).unwrap());
}
