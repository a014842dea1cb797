//! The diagram's folding rules, on hand-made traffic.

use super::diagram::text;
use super::diagram::Diagram;
use super::fold::timeless;
use crate::sim::clock::SimTime;

fn at(ms: u64) -> SimTime {
    SimTime(ms)
}

#[test]
fn times_durations_and_counts_do_not_make_steps_different_but_names_do() {
    assert_eq!(timeless("orders-1 silent 20.001s > 15s"), timeless("orders-1 silent 1m5.3s > 15s"));
    assert_eq!(timeless("beat ×3"), "beat #");
    assert_ne!(timeless("orders-1 silent 20s"), timeless("orders-2 silent 20s"));
    assert_eq!(timeless("3 instances (2 healthy)"), "3 instances (2 healthy)");
}

#[test]
fn three_repetitions_of_a_block_fold_into_one_loop_showing_the_first() {
    let mut d = Diagram::default();
    for k in 0..4 {
        d.note("nacos1/health", at(5_000 * k + 1), &format!("unhealthy after {}ms", k));
        d.arrow("app", "nacos1", "->>", at(5_000 * k + 2), "beat: healthy again");
    }
    d.note("app", at(30_000), "end");
    let out = d.render(|_| (0, false), None);
    assert!(out.contains("loop the same steps ×4 from 0.001s to 15.002s (the first shown)"), "{out}");
    assert_eq!(out.matches("healthy again").count(), 1, "{out}");
    assert!(out.contains("Note over app: 30.000s end"), "{out}");
}

#[test]
fn a_lost_message_is_drawn_lost_in_a_fold_and_alone() {
    let mut d = Diagram::default();
    d.routine("a0", "ns2", at(1), "REGISTER_BROKER (periodic)");
    d.routine_lost("a0", "ns2", at(2), "REGISTER_BROKER dropped, link cut");
    d.routine_lost("a0", "ns2", at(3), "REGISTER_BROKER dropped, link cut");
    d.note("a0", at(4), "end of the fold");
    d.routine_lost("b0", "ns2", at(5), "SYN lost, TCP retransmits");
    let out = d.render(|_| (0, false), None);
    assert!(out.contains("a0->>ns2: REGISTER_BROKER (periodic)\n"), "{out}");
    assert!(out.contains("a0-xns2: REGISTER_BROKER dropped, link cut ×2"), "{out}");
    assert!(out.contains("b0-xns2: 0.005s SYN lost"), "a lone lost message is an arrow, drawn lost: {out}");
    assert!(!out.contains("->>ns2: REGISTER_BROKER dropped"), "{out}");
}

#[test]
fn two_repetitions_stay_drawn_out() {
    let mut d = Diagram::default();
    for k in 0..2 {
        d.note("a", at(k), "same");
    }
    let out = d.render(|_| (0, false), None);
    assert_eq!(out.matches("same").count(), 2, "{out}");
    assert!(!out.contains("loop"), "{out}");
}

#[test]
fn routine_messages_between_interesting_ones_fold_with_their_counts() {
    let mut d = Diagram::default();
    for k in 0..5 {
        d.routine("a0", "ns1", at(k * 30_000), "REGISTER_BROKER (periodic)");
    }
    d.note("ns1", at(200_000), "expired");
    let out = d.render(|_| (0, false), None);
    assert!(out
        .contains("loop routine traffic 0.000s to 120.000s\n        a0->>ns1: REGISTER_BROKER (periodic) ×5\n    end"));
}

#[test]
fn a_literal_hash_is_written_as_an_entity_code() {
    assert_eq!(text("ch#1; a -> b"), "ch#35;1, a → b");
}

#[test]
fn a_message_lost_as_it_is_sent_is_drawn_lost_once_and_never_delivered() {
    let mut d = Diagram::default();
    d.routine_sent("a0", "ns1", at(5_000), "REGISTER_BROKER (periodic)");
    d.routine_sent("a0", "ns2", at(5_000), "REGISTER_BROKER (periodic)");
    d.lost("a0", "ns2", "REGISTER_BROKER", at(5_000), "lost, TCP retransmits");
    d.routine_sent("a0", "ns1", at(35_000), "REGISTER_BROKER (periodic)");
    d.routine_sent("a0", "ns2", at(35_000), "REGISTER_BROKER (periodic)");
    d.lost("a0", "ns2", "SYN", at(35_000), "SYN lost, TCP retransmits");
    // Not the start-up registration drawn on its own: that one was sent a minute earlier.
    d.sent("b0", "ns2", at(0), "REGISTER_BROKER (start-up)");
    d.note("ns2", at(1), "first registration");
    d.lost("b0", "ns2", "REGISTER_BROKER", at(60_000), "dropped, host down");
    let out = d.render(|_| (0, false), None);
    assert!(!out.contains("a0->>ns2"), "a lost message drawn as delivered: {out}");
    assert!(out.contains("a0-xns2: REGISTER_BROKER (periodic): lost, TCP retransmits\n"), "{out}");
    assert!(out.contains("a0-xns2: REGISTER_BROKER (periodic): SYN lost, TCP retransmits\n"), "{out}");
    assert!(out.contains("a0->>ns1: REGISTER_BROKER (periodic) ×2"), "{out}");
    assert!(out.contains("b0->>ns2: 0.000s REGISTER_BROKER (start-up)\n"), "{out}");
    assert!(out.contains("b0-xns2: 60.000s REGISTER_BROKER dropped, host down"), "{out}");
}

#[test]
fn a_lone_arrow_sent_and_lost_in_the_same_moment_turns_lost() {
    let mut d = Diagram::default();
    d.sent("a0", "ns1", at(7), "UNREGISTER_BROKER");
    d.lost("a0", "ns1", "UNREGISTER_BROKER", at(7), "lost, TCP retransmits");
    let out = d.render(|_| (0, false), None);
    assert!(out.contains("a0-xns1: 0.007s UNREGISTER_BROKER: lost, TCP retransmits"), "{out}");
    assert!(!out.contains("->>"), "{out}");
}

#[test]
fn routine_traffic_within_one_instant_is_arrows_not_a_loop() {
    let mut d = Diagram::default();
    d.routine("ns1/scanner", "ns1/scanner", at(20_008), "scanNotActiveBroker: nothing expired");
    d.routine("ns2/scanner", "ns2/scanner", at(20_008), "scanNotActiveBroker: nothing expired");
    d.note("ns1", at(21_000), "next");
    let out = d.render(|_| (0, false), None);
    assert!(!out.contains("loop"), "{out}");
    assert!(out.contains("ns1_scanner->>ns1_scanner: 20.008s scanNotActiveBroker: nothing expired\n"), "{out}");
}

#[test]
fn the_last_message_across_a_fault_keeps_its_arrow() {
    let mut d = Diagram::default();
    for k in 0..3 {
        d.routine_sent("a0", "ns1", at(k * 30_000 + 5), "REGISTER_BROKER (periodic)");
        d.routine_sent("a0", "ns2", at(k * 30_000 + 5), "REGISTER_BROKER (periodic)");
        d.routine_sent("b0", "ns2", at(k * 30_000 + 6), "REGISTER_BROKER (periodic)");
        d.routine("ns2/scanner", "ns2/scanner", at(k * 30_000 + 9), "scan");
    }
    // A partition between a0 and ns2: only what crossed it stands out.
    d.fault(&["a0".into(), "ns2".into()], at(70_000));
    d.note(super::diagram::ALL, at(70_000), "FAULT: partition a0 | ns2");
    let out = d.render(|_| (0, false), None);
    assert!(out.contains("    a0->>ns2: 60.005s REGISTER_BROKER (periodic)\n"), "{out}");
    assert!(out.contains("loop routine traffic 0.005s to 60.005s"), "{out}");
    assert!(out.contains("loop routine traffic 60.006s to 60.009s"), "the rest folds after it: {out}");
    assert_eq!(out.matches("a0->>ns2").count(), 2, "two before in a loop, the last alone: {out}");
    assert!(!out.contains("a0->>ns1: 60.005s"), "a0 → ns1 did not cross the cut: {out}");
}

#[test]
fn a_cited_message_in_an_earlier_fold_is_drawn_on_its_own() {
    let mut d = Diagram::default();
    for k in 0..4 {
        d.routine_sent("a0", "ns1", at(k * 30_000), "REGISTER_BROKER (periodic)");
    }
    d.note("ns1", at(100_000), "something else");
    d.cite("a0", "ns1", "REGISTER_BROKER", at(60_003));
    d.note("ns1/scanner", at(180_004), "scanNotActiveBroker: silent 120.001s > 120s");
    let out = d.render(|_| (0, false), None);
    assert!(out.contains("loop routine traffic 0.000s to 30.000s"), "{out}");
    assert!(out.contains("    a0->>ns1: 60.000s REGISTER_BROKER (periodic)\n"), "{out}");
    assert!(out.contains("    a0->>ns1: 90.000s REGISTER_BROKER (periodic)\n"), "{out}");
}

#[test]
fn a_diagram_drawn_in_spans_says_what_it_left_out() {
    let mut d = Diagram::default();
    for k in 0..100 {
        d.routine("a0", "ns1", at(k * 30_000), "REGISTER_BROKER (periodic)");
        if k % 40 == 0 {
            d.note("a0", at(k * 30_000 + 1), &format!("event {k}"));
        }
    }
    let spans = [(at(0), at(60_000)), (at(2_400_000), at(2_460_000))];
    let out = d.render(|_| (0, false), Some(&spans));
    assert!(out.contains("event 0") && out.contains("event 80") && !out.contains("event 40"), "{out}");
    assert!(out.contains("60.000s to 2400.000s not drawn (--diagram-window FROM..TO draws it)"), "{out}");
    // Only what is inside the spans is counted: 30 s and 60 s, then 40m30s and 41m.
    assert_eq!(out.matches("REGISTER_BROKER (periodic) ×2").count(), 2, "{out}");
}
