//! The membership rules against the Java they come from (`MemberUtil#onFail`, `#onSuccess`,
//! `MemberUtil#copy` via `NacosClusterController#report`, `MemberInfoReportTask`'s cursor).

use super::member::{MemberView, NodeState, MAX_FAIL_ACCESS_CNT};
use std::sync::Arc;

fn view(me: &str, all: &[&str]) -> MemberView {
    MemberView::new(me, all.iter().map(|n| Arc::from(*n)))
}

fn state(v: &MemberView, peer: &str) -> (NodeState, u32) {
    let p = v.peer(peer).unwrap();
    (p.state, p.fail_access_cnt)
}

#[test]
fn every_member_starts_up_and_self_is_not_a_peer() {
    // `MemberUtil#singleParse`: `state(NodeState.UP)`; `allMembersWithoutSelf` drops self.
    let v = view("nacos1", &["nacos1", "nacos2", "nacos3"]);
    assert_eq!(v.peers().map(|(n, _)| n.to_string()).collect::<Vec<_>>(), ["nacos2", "nacos3"]);
    assert_eq!(state(&v, "nacos2"), (NodeState::Up, 0));
    assert!(v.peer("nacos1").is_none());
}

#[test]
fn the_cursor_moves_before_it_is_read_so_the_second_peer_goes_first() {
    // `cursor = (cursor + 1) % members.size(); target = members.get(cursor)`, cursor 0 at start.
    let mut v = view("nacos1", &["nacos1", "nacos2", "nacos3", "nacos4"]);
    let order: Vec<String> = (0..5).map(|_| v.next_target().unwrap().to_string()).collect();
    assert_eq!(order, ["nacos3", "nacos4", "nacos2", "nacos3", "nacos4"]);
}

#[test]
fn a_cluster_of_one_reports_to_nobody() {
    // `if (members.isEmpty()) return;`
    let mut v = view("nacos1", &["nacos1"]);
    assert_eq!(v.next_target(), None);
}

#[test]
fn the_first_failure_makes_a_peer_suspicious_and_the_fourth_down() {
    // `onFail`: SUSPICIOUS, failAccessCnt + 1; DOWN once failAccessCnt > 3.
    let mut v = view("nacos1", &["nacos1", "nacos2"]);
    let mut seen = Vec::new();
    for _ in 0..=MAX_FAIL_ACCESS_CNT {
        seen.push(state_after(v.on_fail("nacos2", false).unwrap().to, &v));
    }
    assert_eq!(
        seen,
        [(NodeState::Suspicious, 1), (NodeState::Suspicious, 2), (NodeState::Suspicious, 3), (NodeState::Down, 4)]
    );
    // Further failures keep it DOWN and keep counting.
    assert!(!v.on_fail("nacos2", false).unwrap().changed());
    assert_eq!(state(&v, "nacos2"), (NodeState::Down, 5));
}

fn state_after(to: NodeState, v: &MemberView) -> (NodeState, u32) {
    (to, v.peer("nacos2").unwrap().fail_access_cnt)
}

#[test]
fn a_refused_connection_is_down_at_once() {
    // `StringUtils.containsIgnoreCase(ex.getMessage(), "Connection refused")`.
    let mut v = view("nacos1", &["nacos1", "nacos2"]);
    let seen = v.on_fail("nacos2", true).unwrap();
    assert_eq!((seen.from, seen.to, seen.fail_access_cnt), (NodeState::Up, NodeState::Down, 1));
}

#[test]
fn a_success_makes_a_peer_up_and_resets_the_count() {
    // `onSuccess`: UP, failAccessCnt 0 — from SUSPICIOUS and from DOWN alike.
    let mut v = view("nacos1", &["nacos1", "nacos2"]);
    v.on_fail("nacos2", false);
    v.on_fail("nacos2", false);
    let seen = v.on_success("nacos2").unwrap();
    assert_eq!((seen.from, seen.to), (NodeState::Suspicious, NodeState::Up));
    assert_eq!(state(&v, "nacos2"), (NodeState::Up, 0));
    v.on_fail("nacos2", true);
    assert_eq!(v.on_success("nacos2").unwrap().from, NodeState::Down);
    assert_eq!(state(&v, "nacos2"), (NodeState::Up, 0));
}

#[test]
fn a_report_received_makes_the_reporter_up_but_keeps_its_fail_count() {
    // `NacosClusterController#report`: node.setState(UP); `ServerMemberManager#update` ->
    // `MemberUtil#copy` copies the state, not failAccessCnt. So one more failure is DOWN at once.
    let mut v = view("nacos1", &["nacos1", "nacos2"]);
    for _ in 0..=MAX_FAIL_ACCESS_CNT {
        v.on_fail("nacos2", false);
    }
    let seen = v.on_report_from("nacos2").unwrap();
    assert_eq!((seen.from, seen.to), (NodeState::Down, NodeState::Up));
    assert_eq!(state(&v, "nacos2"), (NodeState::Up, 4));
    assert_eq!(v.on_fail("nacos2", false).unwrap().to, NodeState::Down);
}

#[test]
fn a_report_from_a_stranger_changes_nothing() {
    // `update`: "address {} want to update Member, but not in member list!" -> false.
    let mut v = view("nacos1", &["nacos1", "nacos2"]);
    let before = v.revision();
    assert!(v.on_report_from("nacos9").is_none());
    assert_eq!(v.revision(), before);
}

#[test]
fn the_revision_moves_only_on_state_changes() {
    let mut v = view("nacos1", &["nacos1", "nacos2"]);
    v.on_success("nacos2");
    assert_eq!(v.revision(), 0);
    v.on_fail("nacos2", false);
    v.on_fail("nacos2", false);
    assert_eq!(v.revision(), 1);
}

#[test]
fn suspicious_still_counts_as_healthy_for_distro() {
    // `DistroMapper#onEvent`: healthyList keeps UP and SUSPICIOUS members.
    assert!(NodeState::Up.is_healthy() && NodeState::Suspicious.is_healthy() && !NodeState::Down.is_healthy());
    assert_eq!(NodeState::parse("SUSPICIOUS"), Some(NodeState::Suspicious));
    assert_eq!(NodeState::parse("up"), None);
}
