//! The delay engine against `NacosDelayTaskExecuteEngine` and `DistroDelayTask#merge`.

use super::sync::{DistroOp, DistroTasks, SYNC_DELAY, SYNC_RETRY_DELAY};
use crate::sim::clock::{SimDuration, SimTime};
use std::sync::Arc;

fn t(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}

#[test]
fn a_change_is_ripe_at_the_first_engine_tick_a_second_after_it() {
    // Engine started at 0: ticks at 100, 200, ... A change at 2 350 ms is due at 3 350 and
    // taken at the 3 400 tick (`now - lastProcessTime >= 1000`).
    let mut e = DistroTasks::new(t(0));
    let (n2, c): (Arc<str>, Arc<str>) = (Arc::from("nacos2"), Arc::from("conn1"));
    e.add(t(2_350), &n2, &c, DistroOp::Change, SYNC_DELAY);
    assert_eq!(e.next_wake(), Some(t(3_400)));
    assert!(e.take_due(t(3_300)).is_empty());
    assert_eq!(e.take_due(t(3_400)), vec![(n2, c, DistroOp::Change)]);
    assert!(e.is_empty());
}

#[test]
fn a_burst_merges_into_one_task_timed_from_the_first_and_the_last_action_wins() {
    // `merge`: `setLastProcessTime(oldTask.getLastProcessTime())`; the newer createTime keeps
    // its own action.
    let mut e = DistroTasks::new(t(0));
    let (n2, c): (Arc<str>, Arc<str>) = (Arc::from("nacos2"), Arc::from("conn1"));
    e.add(t(1_000), &n2, &c, DistroOp::Change, SYNC_DELAY);
    e.add(t(1_700), &n2, &c, DistroOp::Delete, SYNC_DELAY);
    assert_eq!(e.next_wake(), Some(t(2_000)));
    assert_eq!(e.take_due(t(2_000)), vec![(n2, c, DistroOp::Delete)]);
}

#[test]
fn tasks_for_different_targets_are_separate() {
    let mut e = DistroTasks::new(t(0));
    let c: Arc<str> = Arc::from("conn1");
    e.add(t(1_000), &Arc::from("nacos2"), &c, DistroOp::Change, SYNC_DELAY);
    e.add(t(1_500), &Arc::from("nacos3"), &c, DistroOp::Change, SYNC_DELAY);
    assert_eq!(e.take_due(t(2_000)).len(), 1);
    assert_eq!(e.next_wake(), Some(t(2_500)));
}

#[test]
fn a_retry_waits_three_seconds() {
    // `handleFailedTask`: a new `DistroDelayTask` with `syncRetryDelayMillis`.
    let mut e = DistroTasks::new(t(50));
    e.add(t(4_000), &Arc::from("nacos2"), &Arc::from("conn1"), DistroOp::Change, SYNC_RETRY_DELAY);
    // Due at 7 000; the grid is 50 + 100k: 7 050.
    assert_eq!(e.next_wake(), Some(t(7_050)));
}
