//! The agenda's tests: its order, the wheel's edges, and a property test against the tree of
//! instants it replaced.

use super::*;
use proptest::prelude::*;
use std::collections::VecDeque;

#[test]
fn entries_come_out_by_time_then_by_arrival() {
    let mut a = Agenda::default();
    a.push(SimTime(5), "late");
    a.push(SimTime(1), "first");
    a.push(SimTime(1), "second");
    a.push(SimTime(3), "middle");
    let mut out = vec![];
    while let Some((_, e)) = a.pop_due(SimTime(10)) {
        out.push(e);
    }
    assert_eq!(out, ["first", "second", "middle", "late"]);
}

#[test]
fn an_instant_taken_whole_leaves_later_pushes_to_it_for_the_next_take() {
    let mut a = Agenda::default();
    a.push(SimTime(2), 1);
    a.push(SimTime(2), 2);
    a.push(SimTime(7), 9);
    let mut out = Vec::new();
    assert!(a.take_due(SimTime(2), &mut out));
    assert_eq!(out, [1, 2]);
    // Pushed while the instant's entries are being handled: the next take has it.
    a.push(SimTime(2), 3);
    let mut more = Vec::new();
    assert!(a.take_due(SimTime(2), &mut more));
    assert_eq!(more, [3]);
    assert!(!a.take_due(SimTime(2), &mut Vec::new()), "7 is not due at 2");
    assert_eq!((a.next_time(), a.len()), (Some(SimTime(7)), 1));
}

#[test]
fn a_removed_entry_leaves_no_instant_behind() {
    let mut a = Agenda::default();
    a.push(SimTime(5), 1);
    a.push(SimTime(9), 2);
    assert_eq!(a.remove(SimTime(5), |e| *e == 1), Some(1));
    assert_eq!(a.next_time(), Some(SimTime(9)), "nobody wakes at 5");
    assert_eq!(a.remove(SimTime(9), |e| *e == 3), None);
    assert_eq!(a.len(), 1);
}

#[test]
fn nothing_is_popped_before_it_is_due() {
    let mut a = Agenda::default();
    a.push(SimTime(5), ());
    assert!(a.pop_due(SimTime(4)).is_none());
    assert_eq!(a.next_time(), Some(SimTime(5)));
    assert!(a.pop_due(SimTime(5)).is_some());
}

#[test]
fn a_far_instant_keeps_its_place_ahead_of_later_pushes_to_it() {
    // Pushed while beyond the ring, then again once the ring has turned to it: the first
    // push still comes out first.
    let far = SimTime(SLOTS as u64 + 10);
    let mut a = Agenda::default();
    a.push(far, "early push");
    a.push(SimTime(20), "turns the ring");
    assert_eq!(a.pop_due(SimTime(20)), Some((SimTime(20), "turns the ring")));
    a.push(far, "late push");
    assert_eq!(a.pop_due(far), Some((far, "early push")));
    assert_eq!(a.pop_due(far), Some((far, "late push")));
    assert!(a.is_empty());
}

#[test]
fn the_ring_wraps_round() {
    let mut a = Agenda::default();
    let mut t = 0;
    // Walk the ring round three times in steps that land on every part of it.
    for step in [1, 63, 64, 65, 4095, 4096, 4097, 40_000, 60_000] {
        a.push(SimTime(t + step), step);
        assert_eq!(a.next_time(), Some(SimTime(t + step)));
        assert_eq!(a.pop_due(SimTime(t + step)), Some((SimTime(t + step), step)));
        t += step;
    }
    assert!(a.is_empty());
    assert_eq!(a.next_time(), None);
}

/// The reference: a tree of instants, what the agenda was before the wheel.
#[derive(Default)]
struct Reference(BTreeMap<SimTime, VecDeque<u32>>);

#[derive(Clone, Debug)]
enum Op {
    Push(u64, u32),
    Pop(u64),
    TakeAll(u64),
    Remove(u64, u32),
}

fn op() -> impl Strategy<Value = Op> {
    // Delays near zero, near the ring's span and far beyond it.
    let delay = prop_oneof![0..100u64, (SLOTS as u64 - 50)..(SLOTS as u64 + 50), 0..(4 * SLOTS as u64)];
    prop_oneof![
        (delay.clone(), 0..8u32).prop_map(|(d, v)| Op::Push(d, v)),
        (0..(2 * SLOTS as u64)).prop_map(Op::Pop),
        (0..(2 * SLOTS as u64)).prop_map(Op::TakeAll),
        (delay, 0..8u32).prop_map(|(d, v)| Op::Remove(d, v)),
    ]
}

proptest! {
    #[test]
    fn behaves_like_a_tree_of_instants(ops in prop::collection::vec(op(), 1..300)) {
        let (mut a, mut r) = (Agenda::default(), Reference::default());
        let mut now = 0u64;
        for op in ops {
            match op {
                Op::Push(d, v) => {
                    a.push(SimTime(now + d), v);
                    r.0.entry(SimTime(now + d)).or_default().push_back(v);
                }
                Op::Pop(d) => {
                    // Time moves the way the driver moves it: to at most the next instant.
                    let until = SimTime(now + d);
                    let want = r.0.first_entry().filter(|e| *e.key() <= until).map(|mut e| {
                        let at = *e.key();
                        let v = e.get_mut().pop_front().unwrap();
                        if e.get().is_empty() { e.remove(); }
                        (at, v)
                    });
                    let got = a.pop_due(until);
                    prop_assert_eq!(got, want);
                    if let Some((at, _)) = got { now = at.0; }
                }
                Op::TakeAll(d) => {
                    let until = SimTime(now + d);
                    let want = r.0.first_entry().filter(|e| *e.key() <= until).map(|e| (*e.key(), Vec::from(e.remove())));
                    let mut got = Vec::new();
                    let at = a.next_time();
                    let took = a.take_due(until, &mut got);
                    prop_assert_eq!(took.then(|| (at.unwrap(), got)), want);
                    if took { now = at.unwrap().0; }
                }
                Op::Remove(d, v) => {
                    let at = SimTime(now + d);
                    let want = r.0.get_mut(&at).and_then(|b| {
                        let i = b.iter().position(|e| *e == v)?;
                        b.remove(i)
                    });
                    if r.0.get(&at).is_some_and(VecDeque::is_empty) { r.0.remove(&at); }
                    prop_assert_eq!(a.remove(at, |e| *e == v), want);
                }
            }
            prop_assert_eq!(a.next_time(), r.0.keys().next().copied());
            prop_assert_eq!(a.len(), r.0.values().map(VecDeque::len).sum::<usize>());
        }
    }
}
