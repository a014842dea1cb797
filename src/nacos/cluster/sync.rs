//! Distro's delay-task engine (`DistroDelayTaskExecuteEngine`, a `NacosDelayTaskExecuteEngine`):
//! the CHANGE and DELETE tasks a member holds for each `(target member, client)`, when each is
//! ripe, and how a new task merges into one still waiting. Pure: the actor side is
//! `actors::nacos_distro`.
//!
//! Read in Nacos 2.5.1:
//!
//! - `DistroProtocol#sync` queues one `DistroDelayTask` per other member
//!   (`allMembersWithoutSelf`), keyed by client *and* target, with `syncDelayMillis` (1 s).
//! - The engine's `ProcessRunnable` runs every 100 ms (`processInterval`, first 100 ms after
//!   start) and takes each task whose `now - lastProcessTime >= taskInterval`
//!   (`AbstractDelayTask#shouldProcess`).
//! - A task added where one waits is merged (`DistroDelayTask#merge`): the newer action wins
//!   (its `createTime` is the later), and it keeps the *older* `lastProcessTime` — so a burst of
//!   changes is sent once, 1 s after the first.
//! - A failed send comes back as a new task with `syncRetryDelayMillis` (3 s,
//!   `DistroSyncChangeTask#handleFailedTask`): forever, as long as the target is a member.
//!
//! The constants are `DistroConstants`' defaults (`DistroConfig`).

use crate::sim::clock::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `DEFAULT_DATA_SYNC_DELAY_MILLISECONDS`.
pub const SYNC_DELAY: SimDuration = SimDuration::from_millis(1_000);
/// `DEFAULT_DATA_SYNC_TIMEOUT_MILLISECONDS`: `DistroRpcCallbackWrapper#getTimeout`.
pub const SYNC_TIMEOUT: SimDuration = SimDuration::from_millis(3_000);
/// `DEFAULT_DATA_SYNC_RETRY_DELAY_MILLISECONDS`.
pub const SYNC_RETRY_DELAY: SimDuration = SimDuration::from_millis(3_000);
/// `DEFAULT_DATA_VERIFY_INTERVAL_MILLISECONDS`: `DistroVerifyTimedTask`, fixed delay, first run
/// one interval after start (`schedulePartitionDataTimedSync`).
pub const VERIFY_INTERVAL: SimDuration = SimDuration::from_millis(5_000);
/// `DEFAULT_DATA_VERIFY_TIMEOUT_MILLISECONDS`: `DistroVerifyCallbackWrapper#getTimeout`.
pub const VERIFY_TIMEOUT: SimDuration = SimDuration::from_millis(3_000);
/// `DEFAULT_DATA_LOAD_TIMEOUT_MILLISECONDS`: how long `getDatumSnapshot` waits for one peer.
pub const LOAD_TIMEOUT: SimDuration = SimDuration::from_millis(30_000);
/// `DEFAULT_DATA_LOAD_RETRY_DELAY_MILLISECONDS`: the next `DistroLoadDataTask` after a round in
/// which no peer gave a snapshot.
pub const LOAD_RETRY_DELAY: SimDuration = SimDuration::from_millis(30_000);
/// `NacosDelayTaskExecuteEngine`'s default `processInterval`.
pub const ENGINE_TICK: SimDuration = SimDuration::from_millis(100);

/// `DataOperation` of a sync task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DistroOp {
    Change,
    Delete,
}

impl DistroOp {
    pub fn word(self) -> &'static str {
        match self {
            DistroOp::Change => "CHANGE",
            DistroOp::Delete => "DELETE",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Task {
    op: DistroOp,
    last_process: SimTime,
    interval: SimDuration,
}

/// The waiting tasks, by `(target, client id)` (`DistroKey` with its `targetServer`).
#[derive(Debug)]
pub struct DistroTasks {
    /// The engine's start: its 100 ms ticks are `grid + 100 ms·k`, `k ≥ 1`.
    grid: SimTime,
    tasks: BTreeMap<(Arc<str>, Arc<str>), Task>,
}

impl DistroTasks {
    pub fn new(start: SimTime) -> Self {
        DistroTasks { grid: start, tasks: BTreeMap::new() }
    }

    /// `NacosDelayTaskExecuteEngine#addTask`, merging into a waiting task as `DistroDelayTask#merge`.
    pub fn add(&mut self, now: SimTime, target: &Arc<str>, key: &Arc<str>, op: DistroOp, delay: SimDuration) {
        let task = Task { op, last_process: now, interval: delay };
        self.tasks
            .entry((target.clone(), key.clone()))
            .and_modify(|old| *old = Task { last_process: old.last_process, ..task })
            .or_insert(task);
    }

    /// The engine tick at which the next task is ripe.
    pub fn next_wake(&self) -> Option<SimTime> {
        let due = self.tasks.values().map(|t| t.last_process + t.interval).min()?;
        let tick = ENGINE_TICK.millis();
        let k = due.since(self.grid).millis().div_ceil(tick).max(1);
        Some(self.grid + SimDuration::from_millis(k * tick))
    }

    /// `ProcessRunnable` → `processTasks`: the ripe tasks, removed, in key order.
    pub fn take_due(&mut self, now: SimTime) -> Vec<(Arc<str>, Arc<str>, DistroOp)> {
        let ripe: Vec<(Arc<str>, Arc<str>)> = self
            .tasks
            .iter()
            .filter(|(_, t)| now.since(t.last_process) >= t.interval)
            .map(|(k, _)| k.clone())
            .collect();
        ripe.into_iter()
            .map(|k| {
                let t = self.tasks.remove(&k).expect("listed");
                (k.0, k.1, t.op)
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}
