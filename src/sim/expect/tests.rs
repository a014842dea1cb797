//! The three time frames, decided from the observer's two hooks (`before_instant`,
//! `after_event`) against a real route table.

use super::checker::Checker;
use super::{Expectation, Subject, Verdict, When};
use crate::rocketmq::route_table::test_support::{body, broker, ch, dv, manager, unreg, BROKER, CLUSTER, MASTER_ADDR};
use crate::rocketmq::route_table::RouteInfoManager;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::world::World;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// A world with one name server, and a claim "the cluster lists broker-a".
fn world() -> (World, Rc<RefCell<RouteInfoManager>>) {
    let world = World::new(BTreeMap::new());
    let table = Rc::new(RefCell::new(manager()));
    world.set_namesrv("ns1", Some(table.clone()));
    (world, table)
}

fn listed(name: &str, when: When) -> Expectation {
    let brokers: BTreeSet<String> = [BROKER.to_string()].into();
    Expectation {
        name: name.into(),
        when,
        subject: Subject::Cluster { namesrv: "ns1".into(), cluster: CLUSTER.into(), brokers },
        converges: Vec::new(),
    }
}

fn join(table: &Rc<RefCell<RouteInfoManager>>, at: u64) {
    table.borrow_mut().register_broker(SimTime(at), &broker(BROKER, 0, MASTER_ADDR, &body(dv(1), &["T", "U"])), ch(1));
}

fn leave(table: &Rc<RefCell<RouteInfoManager>>) {
    table.borrow_mut().un_register_broker(&[unreg(BROKER, 0, MASTER_ADDR)]);
}

fn verdict(c: &Checker) -> Verdict {
    c.verdicts().remove(0).1
}

#[test]
fn at_sees_the_state_after_every_event_of_its_instant() {
    let (world, table) = world();
    let mut c = Checker::new(vec![listed("x", When::At(SimTime(100)))]);
    assert!(c.before_instant(SimTime(100), &world).is_empty(), "instant 100 is not over yet");
    join(&table, 100);
    c.after_event(SimTime(100), &world);
    let notes = c.before_instant(SimTime(101), &world);
    assert_eq!(notes.len(), 1);
    assert_eq!(verdict(&c), Verdict::Held { converged: None });
}

#[test]
fn by_reports_the_first_moment_it_holds_as_the_convergence_time() {
    let (world, table) = world();
    let mut c = Checker::new(vec![listed("x", When::By { from: SimTime(1000), deadline: SimTime(5000) })]);
    c.before_instant(SimTime(1000), &world);
    c.before_instant(SimTime(1200), &world);
    c.after_event(SimTime(1200), &world);
    c.before_instant(SimTime(1700), &world);
    join(&table, 1700);
    c.after_event(SimTime(1700), &world);
    assert_eq!(verdict(&c), Verdict::Held { converged: Some(SimDuration(700)) });
}

#[test]
fn the_checker_listens_to_events_only_while_a_window_is_open() {
    // The observer skips the checker for every event while it does not listen, so a window
    // must make it listen from the instant it opens until the instant after its verdict.
    let (world, table) = world();
    let mut c = Checker::new(vec![listed("x", When::By { from: SimTime(1000), deadline: SimTime(5000) })]);
    c.before_instant(SimTime(1000), &world);
    assert!(!c.listening(), "the window opens only once instant 1000 is over");
    c.before_instant(SimTime(1200), &world);
    assert!(c.listening(), "the window is open");
    join(&table, 1200);
    c.after_event(SimTime(1200), &world);
    assert_eq!(verdict(&c), Verdict::Held { converged: Some(SimDuration(200)) });
    c.before_instant(SimTime(1300), &world);
    assert!(!c.listening(), "nothing is left to decide");
}

#[test]
fn by_that_already_holds_when_its_window_opens_converges_in_zero() {
    let (world, table) = world();
    join(&table, 0);
    let mut c = Checker::new(vec![listed("x", When::By { from: SimTime(1000), deadline: SimTime(5000) })]);
    c.before_instant(SimTime(1500), &world);
    assert_eq!(verdict(&c), Verdict::Held { converged: Some(SimDuration::ZERO) });
}

#[test]
fn by_fails_at_its_deadline_with_the_state_then() {
    let (world, _table) = world();
    let mut c = Checker::new(vec![listed("x", When::By { from: SimTime(0), deadline: SimTime(5000) })]);
    c.before_instant(SimTime(0), &world);
    assert!(c.before_instant(SimTime(5000), &world).is_empty(), "the deadline instant itself still counts");
    c.before_instant(SimTime(5001), &world);
    let Verdict::Failed { at, mismatch } = verdict(&c) else { panic!("should fail") };
    assert_eq!(at, SimTime(5000));
    assert_eq!((mismatch.expected.as_str(), mismatch.got.as_str()), ("cluster DefaultCluster = [broker-a]", "[]"));
}

#[test]
fn during_fails_at_the_first_event_that_breaks_it() {
    let (world, table) = world();
    join(&table, 0);
    let mut c = Checker::new(vec![listed("x", When::During { from: SimTime(1000), until: SimTime(9000) })]);
    c.before_instant(SimTime(1000), &world);
    c.before_instant(SimTime(2000), &world);
    c.after_event(SimTime(2000), &world);
    c.before_instant(SimTime(3000), &world);
    leave(&table);
    c.after_event(SimTime(3000), &world);
    assert!(matches!(verdict(&c), Verdict::Failed { at: SimTime(3000), .. }));
}

#[test]
fn during_checks_the_state_as_its_window_opens_and_holds_when_it_closes() {
    let (world, table) = world();
    let mut c = Checker::new(vec![listed("open", When::During { from: SimTime(10), until: SimTime(20) })]);
    assert!(c.before_instant(SimTime(10), &world).is_empty(), "instant 10 is not over yet");
    assert_eq!(c.before_instant(SimTime(11), &world).len(), 1, "decided once it is");
    assert!(matches!(verdict(&c), Verdict::Failed { at: SimTime(10), .. }), "nothing was listed at 10");

    join(&table, 0);
    let mut c = Checker::new(vec![listed("close", When::During { from: SimTime(10), until: SimTime(20) })]);
    c.before_instant(SimTime(11), &world);
    c.before_instant(SimTime(21), &world);
    assert_eq!(verdict(&c), Verdict::Held { converged: None });
}

#[test]
fn a_name_server_that_is_down_has_no_tables() {
    let (world, table) = world();
    join(&table, 0);
    world.set_namesrv("ns1", None);
    let mut c = Checker::new(vec![listed("x", When::At(SimTime(5)))]);
    c.before_instant(SimTime(6), &world);
    assert!(matches!(verdict(&c), Verdict::Failed { .. }));
}

#[test]
fn verdicts_reached_at_the_next_instant_speak_of_the_instant_they_checked() {
    // Nothing happens between 100 and 5001: the `at 100`, the `by` deadline 4000 and the
    // `during` close at 3000 are all decided when 5001 comes, but each is about its own instant,
    // and they come back in time order, not scenario order.
    let (world, _table) = world();
    let mut c = Checker::new(vec![
        listed("at", When::At(SimTime(100))),
        listed("by", When::By { from: SimTime(50), deadline: SimTime(4000) }),
        listed("during", When::During { from: SimTime(2000), until: SimTime(3000) }),
    ]);
    c.before_instant(SimTime(0), &world);
    let opened = c.before_instant(SimTime(2500), &world);
    let times: Vec<SimTime> = opened.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, [SimTime(100), SimTime(2000)], "`at 100` checked; the window failed as it opened at 2000");
    let late = c.before_instant(SimTime(5001), &world);
    assert_eq!(late.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [SimTime(4000)], "the deadline, not 5001");
}

/// Every frame reads the state after all the events of its boundary instant: a broker that
/// leaves in the instant an `after`/`from` window opens was not there when it opened, and one
/// that leaves and comes back within that instant never left, for any frame.
#[test]
fn windows_open_on_the_state_after_the_events_of_their_first_instant() {
    let (world, table) = world();
    join(&table, 0);
    let mut c = Checker::new(vec![
        listed("by", When::By { from: SimTime(1000), deadline: SimTime(5000) }),
        listed("during", When::During { from: SimTime(1000), until: SimTime(5000) }),
    ]);
    // Listed before instant 1000, gone once it is over: `after = 1000` is not met by the state
    // before its events, and `from = 1000` is broken as it opens.
    assert!(c.before_instant(SimTime(1000), &world).is_empty(), "instant 1000 is not over yet");
    leave(&table);
    c.after_event(SimTime(1000), &world);
    let opened = c.before_instant(SimTime(1001), &world);
    assert_eq!(opened.len(), 1, "only `during` is decided: {opened:?}");
    let verdicts = c.verdicts();
    assert!(matches!(verdicts[1].1, Verdict::Failed { at: SimTime(1000), .. }), "{:?}", verdicts[1]);
    c.before_instant(SimTime(2000), &world);
    join(&table, 2000);
    c.after_event(SimTime(2000), &world);
    assert_eq!(c.verdicts()[0].1, Verdict::Held { converged: Some(SimDuration(1000)) });

    // Gone and back within the window's first instant: not a break.
    let mut c = Checker::new(vec![listed("during", When::During { from: SimTime(3000), until: SimTime(4000) })]);
    c.before_instant(SimTime(3000), &world);
    leave(&table);
    c.after_event(SimTime(3000), &world);
    join(&table, 3000);
    c.after_event(SimTime(3000), &world);
    c.before_instant(SimTime(4001), &world);
    assert_eq!(verdict(&c), Verdict::Held { converged: None });
}
