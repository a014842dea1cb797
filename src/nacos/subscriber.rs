//! A 1.x subscriber's `HostReactor` (1.4.8 `client/.../naming/core/HostReactor.java`), pure: the
//! `serviceInfoMap` cache, each service's `UpdateTask`, what a UDP push does, and the local
//! filter of `NacosNamingService#selectInstances`.
//!
//! The cache changes on two paths. A **push** (`PushReceiver` → `processServiceJson`) replaces the
//! entry at once — even with an empty host list, since `pushEmptyProtection` is off by default.
//! A **poll** (`UpdateTask`, every `cacheMillis` = 10 s) queries the server and replaces it — but
//! only if no push arrived since the previous poll; otherwise it just refreshes the subscription
//! (`refreshOnly`) and keeps the pushed data. Polls back off on failure *and* on an empty answer:
//! `min(1 s << failCount, 60 s)`, `failCount ≤ 6`.

use crate::nacos::types::{Host, ServiceInfo, ServiceKey};
use crate::sim::clock::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `HostReactor.DEFAULT_DELAY`: the first `UpdateTask` delay and the failure back-off's base.
pub const DEFAULT_DELAY: u64 = 1_000;
/// The back-off cap, `DEFAULT_DELAY * 60`.
const MAX_DELAY: u64 = DEFAULT_DELAY * 60;
/// `UpdateTask#incFailCount`'s limit.
const FAIL_LIMIT: u32 = 6;

/// What an `UpdateTask` run asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollKind {
    /// `updateService`: the answer replaces the cache.
    Update,
    /// `refreshOnly`: a push arrived since the last poll; query only to stay subscribed.
    RefreshOnly,
}

#[derive(Clone, Debug, Default)]
struct UpdateTask {
    /// `lastRefTime` of the data the previous run saw; `None` is `Long.MAX_VALUE` (never ran).
    last_ref_time: Option<SimTime>,
    fail_count: u32,
}

#[derive(Default)]
pub struct SubscriberCore {
    cache: BTreeMap<ServiceKey, Arc<ServiceInfo>>,
    tasks: BTreeMap<ServiceKey, UpdateTask>,
    revision: u64,
}

impl SubscriberCore {
    pub fn new() -> Self {
        Self::default()
    }

    /// `getServiceInfo` for a new service: an empty entry (`lastRefTime` 0) goes into the cache
    /// before the first query (`updateServiceNow`), and an `UpdateTask` is created.
    pub fn subscribe(&mut self, service: &ServiceKey) {
        let empty =
            ServiceInfo { service: service.clone(), hosts: Vec::new(), last_ref_time: SimTime::ZERO, cache_millis: 0 };
        self.cache.entry(service.clone()).or_insert_with(|| Arc::new(empty));
        self.tasks.entry(service.clone()).or_default();
    }

    /// `processServiceJson`: the new data replaces the old; true when the hosts changed.
    pub fn process(&mut self, info: Arc<ServiceInfo>) -> bool {
        let changed = self.cache.get(&info.service).is_none_or(|old| old.hosts != info.hosts);
        self.cache.insert(info.service.clone(), info);
        if changed {
            self.revision += 1;
        }
        changed
    }

    /// What the `UpdateTask` of `service` does on this run.
    pub fn poll_kind(&self, service: &ServiceKey) -> PollKind {
        let (Some(task), Some(cached)) = (self.tasks.get(service), self.cache.get(service)) else {
            return PollKind::Update;
        };
        match task.last_ref_time {
            Some(seen) if cached.last_ref_time > seen => PollKind::RefreshOnly,
            _ => PollKind::Update,
        }
    }

    /// The `UpdateTask` run finished: `answer` is the query's result (`None` if it failed).
    /// Returns whether the cache changed and the delay until the next run.
    pub fn polled(
        &mut self,
        service: &ServiceKey,
        kind: PollKind,
        answer: Option<Arc<ServiceInfo>>,
    ) -> (bool, SimDuration) {
        let mut changed = false;
        let failed = match (kind, answer) {
            (PollKind::Update, Some(info)) => {
                changed = self.process(info);
                false
            }
            // updateService throws: caught by the task, counted as a failure.
            (PollKind::Update, None) => true,
            // refreshOnly swallows its own errors.
            (PollKind::RefreshOnly, _) => false,
        };
        let cached = self.cache.get(service).cloned();
        let task = self.tasks.entry(service.clone()).or_default();
        let mut delay = DEFAULT_DELAY;
        if failed {
            task.fail_count = (task.fail_count + 1).min(FAIL_LIMIT);
        } else if let Some(cached) = cached {
            task.last_ref_time = Some(cached.last_ref_time);
            if cached.hosts.is_empty() {
                task.fail_count = (task.fail_count + 1).min(FAIL_LIMIT);
            } else {
                delay = cached.cache_millis;
                task.fail_count = 0;
            }
        }
        (changed, SimDuration((delay << task.fail_count).min(MAX_DELAY)))
    }

    pub fn service(&self, service: &ServiceKey) -> Option<&Arc<ServiceInfo>> {
        self.cache.get(service)
    }

    /// `getAllInstances`: every cached host.
    pub fn all_instances(&self, service: &ServiceKey) -> &[Host] {
        self.cache.get(service).map_or(&[], |i| &i.hosts)
    }

    /// `selectInstances(service, healthy, subscribe = true)`: cached hosts whose health equals
    /// `healthy`, enabled, with positive weight. `healthy = false` gives only unhealthy ones.
    pub fn select_instances(&self, service: &ServiceKey, healthy: bool) -> impl Iterator<Item = &Host> {
        self.all_instances(service).iter().filter(move |h| h.healthy == healthy && h.enabled && h.weight > 0.0)
    }

    /// Bumped whenever a cached host list changes.
    pub fn revision(&self) -> u64 {
        self.revision
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::name::Name;

    fn svc() -> ServiceKey {
        ServiceKey::new("public", "DEFAULT_GROUP", "orders")
    }

    fn host(port: u16, healthy: bool) -> Host {
        Host { ip: Name::from("10.0.0.1"), port, cluster: Arc::from("DEFAULT"), weight: 1.0, healthy, enabled: true }
    }

    fn info(t: u64, hosts: Vec<Host>) -> Arc<ServiceInfo> {
        Arc::new(ServiceInfo { service: svc(), hosts, last_ref_time: SimTime(t), cache_millis: 10_000 })
    }

    #[test]
    fn a_push_replaces_the_cache_even_with_no_hosts() {
        // Nacos HostReactor#processServiceJson (pushEmptyProtection = false)
        let mut c = SubscriberCore::new();
        c.subscribe(&svc());
        assert!(c.process(info(1, vec![host(1, true)])));
        assert!(c.process(info(2, vec![])));
        assert!(c.all_instances(&svc()).is_empty());
        assert!(!c.process(info(3, vec![])), "same hosts: no change");
    }

    #[test]
    fn select_instances_keeps_only_the_asked_health() {
        // Nacos NacosNamingService#selectInstances: healthy == instance.isHealthy() && enabled && weight > 0
        let mut c = SubscriberCore::new();
        c.process(info(1, vec![host(1, true), host(2, false)]));
        let ports = |h: bool| c.select_instances(&svc(), h).map(|h| h.port).collect::<Vec<_>>();
        assert_eq!(ports(true), [1]);
        assert_eq!(ports(false), [2]);
    }

    #[test]
    fn a_poll_after_a_push_only_refreshes_and_keeps_the_pushed_data() {
        // Nacos HostReactor.UpdateTask#run: serviceObj.getLastRefTime() > lastRefTime -> refreshOnly
        let mut c = SubscriberCore::new();
        c.subscribe(&svc());
        assert_eq!(c.poll_kind(&svc()), PollKind::Update);
        c.polled(&svc(), PollKind::Update, Some(info(10, vec![host(1, true)])));
        assert_eq!(c.poll_kind(&svc()), PollKind::Update, "nothing newer arrived");
        c.process(info(15, vec![host(1, false)]));
        assert_eq!(c.poll_kind(&svc()), PollKind::RefreshOnly);
        let (changed, next) = c.polled(&svc(), PollKind::RefreshOnly, Some(info(20, vec![host(1, true)])));
        assert!(!changed);
        assert_eq!(next, SimDuration(10_000));
        assert!(!c.all_instances(&svc())[0].healthy, "the pushed view stays");
    }

    #[test]
    fn polls_back_off_on_failure_and_on_an_empty_answer_up_to_a_minute() {
        // Nacos HostReactor.UpdateTask#run: min(delayTime << failCount, DEFAULT_DELAY * 60)
        let mut c = SubscriberCore::new();
        c.subscribe(&svc());
        let delays: Vec<u64> = (0..8).map(|_| c.polled(&svc(), PollKind::Update, None).1.millis()).collect();
        assert_eq!(delays, [2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
        let (_, next) = c.polled(&svc(), PollKind::Update, Some(info(1, vec![host(1, true)])));
        assert_eq!(next, SimDuration(10_000), "success resets the count and uses cacheMillis");
        let (_, next) = c.polled(&svc(), PollKind::Update, Some(info(2, vec![])));
        assert_eq!(next, SimDuration(2_000), "an empty answer counts as a failure");
    }
}
