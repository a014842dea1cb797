//! `bounded_expiry` and `no_false_expiry` on a hand-built name server table: the monitor must
//! report an entry held past `last arrival + timeout + scan interval + batch delay`, even though
//! it skips full passes while its horizon says nothing can be overdue yet, and an expiry within
//! the timeout — the timeout the broker's config gives, whatever the table stored or the scan
//! reported.

use super::monitor::Monitor;
use super::{Arrival, Invariant};
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::route_table::test_support::{body, broker, ch, dv, manager, t};
use crate::rocketmq::route_table::RouteInfoManager;
use crate::sim::clock::SimDuration;
use crate::sim::ids::ProcState;
use crate::sim::scenario::parse;
use crate::sim::trace::{TraceEvent, What};
use crate::sim::world::World;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

const SCENARIO: &str = r#"
[scenario]
name = "t"
duration = "10m"
invariants = ["bounded_expiry", "no_false_expiry"]

[[namesrv]]
name = "ns1"
scan_interval = "5s"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "T", read = 4, write = 4 }]

[[broker]]
name = "b0"
broker_name = "broker-b"
addr = "10.0.0.2:10911"
topics = [{ name = "T", read = 4, write = 4 }]
"#;

/// b0 as an acting-master broker: its registrations carry a 10 s timeout.
const B_ACTING: &str = "enable_acting_master = true\n";

/// ns1 running since 0 with a0 and b0 in its live table, and a monitor that has seen ns1 start.
/// The table stores `a_stored` as a0's timeout (its config says 120 s: anything else is a table
/// bug), and 10 s for b0 when `b_acting`, else 120 s.
fn setup(a_stored: SimDuration, b_acting: bool) -> (Monitor, World) {
    let text = if b_acting { format!("{SCENARIO}{B_ACTING}") } else { SCENARIO.to_string() };
    let scenario = parse(Path::new("t.toml"), &text).expect("the fixture parses");
    let mut table: RouteInfoManager = manager();
    // Two topics: a one-topic body from a master is RocketMQ's single-topic guard.
    let b = body(dv(1), &["T", "U"]);
    let mut a = broker("broker-a", 0, "10.0.0.1:10911", &b);
    a.heartbeat_timeout_millis = Some(a_stored);
    table.register_broker(t(0), &a, ch(1));
    let mut bb = broker("broker-b", 0, "10.0.0.2:10911", &b);
    bb.heartbeat_timeout_millis = b_acting.then_some(SimDuration::from_secs(10));
    table.register_broker(t(0), &bb, ch(2));
    assert_eq!(table.broker_live_table().len(), 2, "both registered");
    let world = World::default();
    world.set_namesrv("ns1", Some(Rc::new(RefCell::new(table))));
    let mut monitor = Monitor::new(&scenario);
    monitor.process(t(0), "ns1", ProcState::Running);
    (monitor, world)
}

fn overdue(monitor: &mut Monitor, world: &World, at: u64) -> bool {
    monitor.before_instant(t(at), world).iter().any(|v| v.invariant == Invariant::BoundedExpiry)
}

#[test]
fn an_entry_held_past_its_bound_is_reported_at_the_first_instant_after() {
    let (mut monitor, world) = setup(SimDuration::from_secs(120), false);
    monitor.arrived(t(1_000), "a0", "ns1", Arrival::Rmq);
    monitor.arrived(t(1_000), "b0", "ns1", Arrival::Rmq);
    // Bound: 1 s + 120 s + 5 s scan + 0 batch delay = 126 s. Quiet instants before it are
    // skipped by the horizon; the bound itself is still allowed (the scan's `<` is strict).
    for at in [2_000, 60_000, 125_999, 126_000] {
        assert!(!overdue(&mut monitor, &world, at), "not overdue at {at} ms");
    }
    assert!(overdue(&mut monitor, &world, 126_001));
}

#[test]
fn a_broker_arriving_for_the_first_time_brings_its_own_earlier_bound() {
    // a0 has a 120 s timeout, so the horizon of a pass that knows only a0 reaches 126 s.
    let (mut monitor, world) = setup(SimDuration::from_secs(120), true);
    monitor.arrived(t(1_000), "a0", "ns1", Arrival::Rmq);
    assert!(!overdue(&mut monitor, &world, 1_500));
    // b0's first arrival, at 2 s, bounds it at 2 + 10 + 5 = 17 s without changing the table's
    // revision.
    monitor.arrived(t(2_000), "b0", "ns1", Arrival::Rmq);
    assert!(!overdue(&mut monitor, &world, 17_000));
    assert!(overdue(&mut monitor, &world, 17_001), "b0 is overdue long before a0's horizon");
}

#[test]
fn the_bound_uses_the_timeout_the_config_gives_not_the_one_the_table_stored() {
    // A table that stored 300 s for a0 (whose config sends no timeout: 120 s) would hold it
    // until 306 s; the bound is still 1 + 120 + 5 = 126 s.
    let (mut monitor, world) = setup(SimDuration::from_secs(300), false);
    monitor.arrived(t(1_000), "a0", "ns1", Arrival::Rmq);
    monitor.arrived(t(1_000), "b0", "ns1", Arrival::Rmq);
    assert!(!overdue(&mut monitor, &world, 126_000));
    assert!(overdue(&mut monitor, &world, 126_001));
}

fn expired(monitor: &mut Monitor, world: &World, at: u64, reported: SimDuration) -> Option<String> {
    let note = RmqNote::Expired {
        cluster: "DefaultCluster".into(),
        addr: "10.0.0.1:10911".into(),
        last_update: t(0),
        silent: SimDuration(at),
        timeout: reported,
        queued: true,
    };
    let e = TraceEvent { t: t(at), actor: "ns1/scanner".into(), what: What::Rmq(note) };
    let v = monitor.on_event(&e, world).into_iter().find(|v| v.invariant == Invariant::NoFalseExpiry);
    v.map(|v| v.detail)
}

#[test]
fn an_expiry_is_judged_by_the_configured_timeout_not_the_reported_one() {
    // A scan that expires a0 after 19 s of silence, reporting the 10 s a buggy table stored,
    // is wrong: a0's config gives it 120 s.
    let (mut monitor, world) = setup(SimDuration::from_secs(10), false);
    monitor.arrived(t(1_000), "a0", "ns1", Arrival::Rmq);
    let v = expired(&mut monitor, &world, 20_000, SimDuration::from_secs(10)).expect("caught");
    assert!(v.contains("within its 2m timeout (the scan used 10s)"), "{v}");
}

#[test]
fn an_arrival_in_the_scans_own_instant_does_not_excuse_the_one_before() {
    // The scan may miss a registration arriving in its very millisecond (Java's scan thread
    // races the Netty worker), but not the one before it: 115 s of silence is within 120 s.
    let (mut monitor, world) = setup(SimDuration::from_secs(120), false);
    monitor.arrived(t(10_000), "a0", "ns1", Arrival::Rmq);
    monitor.arrived(t(125_000), "a0", "ns1", Arrival::Rmq);
    assert!(expired(&mut monitor, &world, 125_000, SimDuration::from_secs(120)).is_some());
    // With the arrival before at 4 s, 121 s of silence: the expiry is right.
    let (mut monitor, world) = setup(SimDuration::from_secs(120), false);
    monitor.arrived(t(4_000), "a0", "ns1", Arrival::Rmq);
    monitor.arrived(t(125_000), "a0", "ns1", Arrival::Rmq);
    assert_eq!(expired(&mut monitor, &world, 125_000, SimDuration::from_secs(120)), None);
}

#[test]
fn later_arrivals_move_the_bound_later() {
    let (mut monitor, world) = setup(SimDuration::from_secs(120), false);
    monitor.arrived(t(1_000), "a0", "ns1", Arrival::Rmq);
    monitor.arrived(t(1_000), "b0", "ns1", Arrival::Rmq);
    assert!(!overdue(&mut monitor, &world, 2_000));
    // Both keep arriving every 30 s until 91 s: their bound is now 216 s.
    for at in [31_000, 61_000, 91_000] {
        monitor.arrived(t(at), "a0", "ns1", Arrival::Rmq);
        monitor.arrived(t(at), "b0", "ns1", Arrival::Rmq);
    }
    assert!(!overdue(&mut monitor, &world, 126_001), "the first horizon was only a lower bound");
    assert!(!overdue(&mut monitor, &world, 216_000));
    assert!(overdue(&mut monitor, &world, 216_001));
}
