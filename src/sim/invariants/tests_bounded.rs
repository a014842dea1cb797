//! `bounded_expiry` on a hand-built name server table: the monitor must report an entry held
//! past `last arrival + timeout + scan interval + batch delay`, even though it skips full passes
//! while its horizon says nothing can be overdue yet.

use super::monitor::Monitor;
use super::{Arrival, Invariant};
use crate::rocketmq::route_table::test_support::{body, broker, ch, dv, manager, t};
use crate::rocketmq::route_table::RouteInfoManager;
use crate::sim::clock::SimDuration;
use crate::sim::network::ProcState;
use crate::sim::scenario::parse;
use crate::sim::world::World;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

const SCENARIO: &str = r#"
[scenario]
name = "t"
duration = "10m"
invariants = ["bounded_expiry"]

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

/// ns1 running since 0 with a0 (timeout `a_timeout`) and b0 (default 120 s) in its live table,
/// and a monitor that has seen ns1 start.
fn setup(a_timeout: SimDuration) -> (Monitor, World) {
    let scenario = parse(Path::new("t.toml"), SCENARIO).expect("the fixture parses");
    let mut table: RouteInfoManager = manager();
    // Two topics: a one-topic body from a master is RocketMQ's single-topic guard.
    let b = body(dv(1), &["T", "U"]);
    let mut a = broker("broker-a", 0, "10.0.0.1:10911", &b);
    a.heartbeat_timeout_millis = Some(a_timeout);
    table.register_broker(t(0), &a, ch(1));
    table.register_broker(t(0), &broker("broker-b", 0, "10.0.0.2:10911", &b), ch(2));
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
    let (mut monitor, world) = setup(SimDuration::from_secs(120));
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
    // a0 has a 300 s timeout, so the horizon of a pass that knows only a0 reaches 306 s.
    let (mut monitor, world) = setup(SimDuration::from_secs(300));
    monitor.arrived(t(1_000), "a0", "ns1", Arrival::Rmq);
    assert!(!overdue(&mut monitor, &world, 1_500));
    // b0's first arrival, at 2 s, bounds it at 127 s without changing the table's revision.
    monitor.arrived(t(2_000), "b0", "ns1", Arrival::Rmq);
    assert!(!overdue(&mut monitor, &world, 127_000));
    assert!(overdue(&mut monitor, &world, 127_001), "b0 is overdue long before a0's horizon");
}

#[test]
fn later_arrivals_move_the_bound_later() {
    let (mut monitor, world) = setup(SimDuration::from_secs(120));
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
