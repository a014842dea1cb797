//! The server's push delay engine (`NamingSubscriberServiceV2Impl` + `PushDelayTaskExecuteEngine`),
//! pure.
//!
//! Each `ServiceChangedEvent` adds a `PushDelayTask(service, 500 ms)`; tasks for the same service
//! **merge**, keeping the earliest creation time, so a burst of changes gives one push. The engine
//! polls every 100 ms (a fixed-delay task from server start) and runs each task whose age is at
//! least the delay: a push lands 500–600 ms after the first change it carries. A
//! `ServiceSubscribedEvent` adds a task aimed at that one subscriber; merging with a push to all
//! makes it a push to all.
//!
//! Like the health checker, the engine does not wake every 100 ms: it computes the first poll tick
//! at which a task is ripe and the actor arms a timer for that tick only. Polls before it find
//! nothing to do, so skipping them changes nothing.

use crate::nacos::types::{ClientKey, ServiceKey, DEFAULT_PUSH_TASK_DELAY, PUSH_ENGINE_TICK};
use crate::sim::clock::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// Who a push task is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Targets {
    /// Every subscriber of the service on this server (`pushToAll`).
    All,
    /// Only these subscriber clients (a first subscription).
    Clients(BTreeSet<ClientKey>),
}

impl Targets {
    /// `PushDelayTask#merge`.
    fn merge(&mut self, other: Targets) {
        match (&mut *self, other) {
            (Targets::All, _) => {}
            (_, Targets::All) => *self = Targets::All,
            (Targets::Clients(a), Targets::Clients(b)) => a.extend(b),
        }
    }
}

pub struct PushEngine {
    /// service → (earliest `lastProcessTime`, targets).
    tasks: BTreeMap<ServiceKey, (SimTime, Targets)>,
    /// The poll grid: ticks at `anchor + 100 ms·k`, `k ≥ 1`.
    anchor: SimTime,
    delay: u64,
}

impl PushEngine {
    /// An engine started at `start` with `pushTaskDelay` = `delay` milliseconds.
    pub fn new(start: SimTime, delay: u64) -> Self {
        PushEngine { tasks: BTreeMap::new(), anchor: start, delay }
    }

    pub fn with_default_delay(start: SimTime) -> Self {
        Self::new(start, DEFAULT_PUSH_TASK_DELAY)
    }

    /// `addTask(service, new PushDelayTask(...))` at `now`, merged with any pending task.
    pub fn add(&mut self, service: &ServiceKey, targets: Targets, now: SimTime) {
        match self.tasks.get_mut(service) {
            Some((created, pending)) => {
                *created = (*created).min(now);
                pending.merge(targets);
            }
            None => {
                self.tasks.insert(service.clone(), (now, targets));
            }
        }
    }

    /// The first poll tick at which some task is ripe.
    ///
    /// Saturating: a delay near `u64::MAX` ms must give a wake at the end of time, not a sum
    /// that wraps to a tick in the past (the engine then woke, found nothing ripe and re-armed
    /// for the same instant, for ever).
    pub fn next_wake(&self) -> Option<SimTime> {
        let ripe = self.tasks.values().map(|(created, _)| created.millis().saturating_add(self.delay)).min()?;
        let (anchor, tick) = (self.anchor.millis(), PUSH_ENGINE_TICK);
        let k = ripe.saturating_sub(anchor).div_ceil(tick);
        Some(SimTime(anchor.saturating_add(k.max(1).saturating_mul(tick))))
    }

    /// `processTasks` at `now`: removes and returns the ripe tasks, in service order.
    pub fn take_ripe(&mut self, now: SimTime) -> Vec<(ServiceKey, Targets)> {
        let ripe: Vec<ServiceKey> = self
            .tasks
            .iter()
            .filter(|(_, (created, _))| now.since(*created).millis() >= self.delay)
            .map(|(s, _)| s.clone())
            .collect();
        ripe.into_iter().filter_map(|s| self.tasks.remove(&s).map(|(_, t)| (s, t))).collect()
    }

    /// The JVM was stopped from `since` until `now`: a poll that fell in the pause runs now, and the
    /// grid continues from there (fixed delay).
    pub fn resume(&mut self, since: SimTime, now: SimTime) {
        let (anchor, tick) = (self.anchor.millis(), PUSH_ENGINE_TICK);
        let k = since.millis().saturating_sub(anchor).div_ceil(tick);
        if anchor.saturating_add(k.max(1).saturating_mul(tick)) < now.millis() {
            // The overdue poll runs at `now`; ticks are `anchor + 100 ms·k` with `k ≥ 1`.
            self.anchor = SimTime(now.millis().saturating_sub(tick));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(n: &str) -> ServiceKey {
        ServiceKey::new("public", "DEFAULT_GROUP", n)
    }

    #[test]
    fn a_change_is_pushed_at_the_first_engine_poll_at_least_500_ms_later() {
        // Nacos PushDelayTask#shouldProcess: now - lastProcessTime >= 500, polled every 100 ms
        let mut e = PushEngine::with_default_delay(SimTime(0));
        e.add(&svc("a"), Targets::All, SimTime(10_001));
        assert_eq!(e.next_wake(), Some(SimTime(10_600)));
        assert!(e.take_ripe(SimTime(10_500)).is_empty());
        assert_eq!(e.take_ripe(SimTime(10_600)), vec![(svc("a"), Targets::All)]);
        assert!(e.is_empty());
    }

    #[test]
    fn changes_to_one_service_merge_and_keep_the_earliest_time() {
        // Nacos PushDelayTask#merge: setLastProcessTime(min(...)), pushToAll absorbs targets
        let mut e = PushEngine::with_default_delay(SimTime(0));
        let one = ClientKey::new(&crate::sim::name::Name::from("10.9.0.1"), 54951);
        e.add(&svc("a"), Targets::Clients(BTreeSet::from([one])), SimTime(1_000));
        e.add(&svc("a"), Targets::All, SimTime(1_300));
        assert_eq!(e.next_wake(), Some(SimTime(1_500)));
        assert_eq!(e.take_ripe(SimTime(1_500)), vec![(svc("a"), Targets::All)]);
    }

    #[test]
    fn a_delay_of_u64_max_wakes_at_the_end_of_time_instead_of_wrapping() {
        let mut e = PushEngine::new(SimTime(0), u64::MAX);
        e.add(&svc("a"), Targets::All, SimTime(10_001));
        let wake = e.next_wake().expect("a task is pending");
        assert!(wake > SimTime(10_001), "a wrapped sum woke at {wake}, before the task could be ripe");
        assert!(e.take_ripe(SimTime(10_100)).is_empty());
    }

    #[test]
    fn a_pause_moves_the_poll_grid_to_the_resume_instant() {
        // Nacos NacosDelayTaskExecuteEngine: scheduleWithFixedDelay(processInterval)
        let mut e = PushEngine::with_default_delay(SimTime(0));
        e.resume(SimTime(1_000), SimTime(3_050));
        e.add(&svc("a"), Targets::All, SimTime(3_050));
        assert_eq!(e.next_wake(), Some(SimTime(3_550)));
    }
}
