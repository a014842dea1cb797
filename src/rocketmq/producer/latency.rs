//! `LatencyFaultToleranceImpl`: the producer's table of brokers it has sent to, each with the
//! instant it may be used again (isolation) and whether it is thought reachable, plus the
//! detector that probes them.
//!
//! The table only ever fills when `sendLatencyFaultEnable` is on: `MQFaultStrategy` drops every
//! update otherwise. Items are never removed by time; only the detector forgets a broker, when
//! the client no longer has an address for it.

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::rng::SimRng;
use std::collections::BTreeMap;

/// `startDetector`: `scheduleAtFixedRate(..., 3, 3, SECONDS)` — the first round 3 s after the
/// producer starts, then every 3 s. The task always runs; it does nothing unless
/// `startDetectorEnable` is set.
pub const DETECTOR_INITIAL_DELAY: SimDuration = SimDuration::from_secs(3);
/// See [`DETECTOR_INITIAL_DELAY`].
pub const DETECTOR_PERIOD: SimDuration = SimDuration::from_secs(3);

/// `LatencyFaultToleranceImpl.FaultItem`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultItem {
    pub name: String,
    /// The latency of the last update (the real one, even when the isolation came from the
    /// `isolation` flag).
    pub current_latency: SimDuration,
    /// The broker is available again from this instant on (`isAvailable`: `now >= start`).
    pub start_timestamp: SimTime,
    /// The detector probes the item again only from this instant on.
    pub check_stamp: SimTime,
    /// `reachableFlag`: false after a failure the producer blames on the network (see
    /// `MQFaultStrategy`), true again after any successful update or probe.
    pub reachable: bool,
}

impl FaultItem {
    fn new(name: &str) -> Self {
        FaultItem {
            name: name.to_string(),
            current_latency: SimDuration::ZERO,
            start_timestamp: SimTime::ZERO,
            check_stamp: SimTime::ZERO,
            reachable: false,
        }
    }

    /// `updateNotAvailableDuration`: only ever *extends* the isolation. A zero duration (a fast
    /// send) changes nothing — a broker isolated for 30 s is not freed early by a quick success.
    fn update_not_available_duration(&mut self, now: SimTime, duration: SimDuration) {
        if duration > SimDuration::ZERO && now + duration > self.start_timestamp {
            self.start_timestamp = now + duration;
        }
    }

    /// `FaultItem#isAvailable`: `System.currentTimeMillis() >= startTimestamp`.
    pub fn is_available(&self, now: SimTime) -> bool {
        now >= self.start_timestamp
    }
}

/// What one detector round asks the producer to do (`detectByOneRound`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DetectAction {
    /// `resolver.resolve(name)` found no master address: the item is dropped.
    Forget { name: String },
    /// `serviceDetector.detect(addr, detectTimeout)`: a `GET_MAX_OFFSET` request to the broker
    /// (`MQClientAPIImpl#getMaxOffset` for queue 0 of the producer's first topic); it counts as
    /// reachable when any answer comes within the timeout. Report it with
    /// [`LatencyFaultTolerance::on_probe`].
    Probe { name: String, addr: String, timeout: SimDuration },
}

/// `LatencyFaultToleranceImpl`.
#[derive(Clone, Debug)]
pub struct LatencyFaultTolerance {
    /// `faultItemTable`, ordered so detector rounds are deterministic (Java's is a hash map).
    items: BTreeMap<String, FaultItem>,
    detect_timeout: SimDuration,
    detect_interval: SimDuration,
    start_detector_enable: bool,
}

impl LatencyFaultTolerance {
    pub fn new(detect_timeout: SimDuration, detect_interval: SimDuration, start_detector_enable: bool) -> Self {
        LatencyFaultTolerance { items: BTreeMap::new(), detect_timeout, detect_interval, start_detector_enable }
    }

    /// `updateFaultItem(name, currentLatency, notAvailableDuration, reachable)`: creates the
    /// item if needed, then sets the latency, extends the isolation and sets `reachable`.
    pub fn update_fault_item(
        &mut self,
        now: SimTime,
        name: &str,
        latency: SimDuration,
        duration: SimDuration,
        reachable: bool,
    ) {
        let item = self.items.entry(name.to_string()).or_insert_with(|| FaultItem::new(name));
        item.current_latency = latency;
        item.update_not_available_duration(now, duration);
        item.reachable = reachable;
    }

    /// `isAvailable(name)`: true for a broker with no item.
    pub fn is_available(&self, now: SimTime, name: &str) -> bool {
        self.items.get(name).is_none_or(|i| i.is_available(now))
    }

    /// `isReachable(name)`: true for a broker with no item.
    pub fn is_reachable(&self, name: &str) -> bool {
        self.items.get(name).is_none_or(|i| i.reachable)
    }

    pub fn item(&self, name: &str) -> Option<&FaultItem> {
        self.items.get(name)
    }

    /// `remove(name)`.
    pub fn remove(&mut self, name: &str) {
        self.items.remove(name);
    }

    /// `pickOneAtLeast()`: a random reachable item's name (Java shuffles the items and takes
    /// the first reachable one, which is the same as a uniform pick among the reachable ones).
    /// 5.3.x never calls it — `MQFaultStrategy` falls back to a plain round-robin pick instead —
    /// so it is here for completeness only.
    pub fn pick_one_at_least(&self, rng: &mut SimRng) -> Option<&str> {
        let reachable: Vec<&FaultItem> = self.items.values().filter(|i| i.reachable).collect();
        if reachable.is_empty() {
            return None;
        }
        Some(reachable[rng.index(reachable.len())].name.as_str())
    }

    /// One tick of the task `startDetector` schedules every [`DETECTOR_PERIOD`]: nothing unless
    /// `startDetectorEnable`, else `detectByOneRound`.
    ///
    /// `detectByOneRound`: every item whose `checkStamp` has come (`now - checkStamp >= 0`) gets
    /// `checkStamp = now + detectInterval`, then is forgotten when `resolve` (Java's `Resolver`,
    /// `MQClientInstance#findBrokerAddressInPublish`) has no address for it, or probed. Every
    /// item is probed, the reachable ones too.
    ///
    /// Java probes one item after another on the detector thread, each blocking up to
    /// `detectTimeout`; the model decides the whole round at `now`, and the caller should run
    /// the probes in the order given, one after the other, to keep Java's timing.
    pub fn on_detector_tick(&mut self, now: SimTime, resolve: &dyn Fn(&str) -> Option<String>) -> Vec<DetectAction> {
        if !self.start_detector_enable {
            return Vec::new();
        }
        let mut actions = Vec::new();
        for item in self.items.values_mut().filter(|i| now >= i.check_stamp) {
            item.check_stamp = now + self.detect_interval;
            match resolve(&item.name) {
                None => actions.push(DetectAction::Forget { name: item.name.clone() }),
                Some(addr) => {
                    actions.push(DetectAction::Probe { name: item.name.clone(), addr, timeout: self.detect_timeout })
                }
            }
        }
        for action in &actions {
            if let DetectAction::Forget { name } = action {
                self.items.remove(name);
            }
        }
        actions
    }

    /// A probe's answer: `if (serviceOK && !reachableFlag) reachableFlag = true`. A failed probe
    /// changes nothing; neither touches the isolation.
    pub fn on_probe(&mut self, name: &str, ok: bool) {
        if let Some(item) = self.items.get_mut(name) {
            if ok && !item.reachable {
                item.reachable = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    fn table(detector: bool) -> LatencyFaultTolerance {
        // ClientConfig: detectTimeout 200, detectInterval 2000.
        LatencyFaultTolerance::new(ms(200), ms(2000), detector)
    }

    #[test]
    fn an_isolated_broker_is_available_again_exactly_at_the_end_of_its_isolation() {
        // FaultItem#updateNotAvailableDuration: startTimestamp = now + duration;
        // FaultItem#isAvailable: now >= startTimestamp.
        let mut t = table(false);
        t.update_fault_item(SimTime(1000), "a", ms(3000), ms(6000), true);
        assert!(!t.is_available(SimTime(6999), "a"));
        assert!(t.is_available(SimTime(7000), "a"));
        assert!(t.is_available(SimTime(0), "unknown"), "no item: available");
        assert!(t.is_reachable("unknown"), "no item: reachable");
    }

    #[test]
    fn a_quick_success_does_not_shorten_an_isolation_but_marks_the_broker_reachable() {
        // FaultItem#updateNotAvailableDuration: only `duration > 0 && now + duration > start`
        // moves startTimestamp; setReachable is unconditional.
        let mut t = table(false);
        t.update_fault_item(SimTime(0), "a", ms(10_000), ms(10_000), false);
        t.update_fault_item(SimTime(1000), "a", ms(5), SimDuration::ZERO, true);
        let item = t.item("a").unwrap();
        assert_eq!(item.start_timestamp, SimTime(10_000));
        assert_eq!(item.current_latency, ms(5));
        assert!(t.is_reachable("a"));
        // A shorter isolation later does not shorten it either.
        t.update_fault_item(SimTime(2000), "a", ms(600), ms(2000), true);
        assert_eq!(t.item("a").unwrap().start_timestamp, SimTime(10_000));
    }

    #[test]
    fn the_detector_does_nothing_unless_enabled() {
        // LatencyFaultToleranceImpl#startDetector: run() checks startDetectorEnable.
        let mut t = table(false);
        t.update_fault_item(SimTime(0), "a", ms(10), ms(10_000), false);
        assert!(t.on_detector_tick(SimTime(3000), &|_| Some("a:10911".into())).is_empty());
    }

    #[test]
    fn the_detector_probes_each_item_at_most_every_detect_interval_and_restores_reachability() {
        // LatencyFaultToleranceImpl#detectByOneRound: checkStamp = now + detectInterval (2000);
        // detect(addr, detectTimeout = 200); a good probe sets reachableFlag.
        let mut t = table(true);
        t.update_fault_item(SimTime(100), "a", ms(10), ms(10_000), false);
        let resolve = |_: &str| Some("a:10911".to_string());
        let probe = DetectAction::Probe { name: "a".into(), addr: "a:10911".into(), timeout: ms(200) };
        assert_eq!(t.on_detector_tick(SimTime(3000), &resolve), vec![probe.clone()]);
        assert!(t.on_detector_tick(SimTime(4999), &resolve).is_empty(), "checkStamp is 5000");
        t.on_probe("a", false);
        assert!(!t.is_reachable("a"));
        assert_eq!(t.on_detector_tick(SimTime(6000), &resolve), vec![probe]);
        t.on_probe("a", true);
        assert!(t.is_reachable("a"));
        assert!(!t.is_available(SimTime(6000), "a"), "a probe does not end the isolation (10 100)");
    }

    #[test]
    fn the_detector_forgets_a_broker_the_client_has_no_address_for() {
        // LatencyFaultToleranceImpl#detectByOneRound: resolve(name) == null -> remove.
        let mut t = table(true);
        t.update_fault_item(SimTime(0), "gone", ms(10), ms(10_000), false);
        assert_eq!(t.on_detector_tick(SimTime(3000), &|_| None), vec![DetectAction::Forget { name: "gone".into() }]);
        assert!(t.item("gone").is_none());
        assert!(t.is_available(SimTime(3000), "gone"), "forgotten: no longer isolated");
    }

    #[test]
    fn pick_one_at_least_only_picks_reachable_items() {
        // LatencyFaultToleranceImpl#pickOneAtLeast: the first reachableFlag item after a shuffle.
        let mut t = table(false);
        t.update_fault_item(SimTime(0), "down", ms(10), ms(10_000), false);
        assert_eq!(t.pick_one_at_least(&mut SimRng::new(3)), None);
        t.update_fault_item(SimTime(0), "up", ms(10), ms(10_000), true);
        assert_eq!(t.pick_one_at_least(&mut SimRng::new(3)), Some("up"));
    }
}
