//! `MQFaultStrategy`: which queue a send goes to, and how a send's latency or failure isolates
//! its broker when `sendLatencyFaultEnable` is on.

use super::config::ProducerConfig;
use super::latency::LatencyFaultTolerance;
use super::publish_info::{MessageQueue, TopicPublishInfo};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
use crate::sim::rng::SimRng;

/// `MQFaultStrategy.latencyMax`: latency thresholds, ms.
pub const LATENCY_MAX: [u64; 7] = [50, 100, 550, 1800, 3000, 5000, 15000];
/// `MQFaultStrategy.notAvailableDuration`: the isolation for a latency at or above the
/// threshold of the same index, ms.
pub const NOT_AVAILABLE_DURATION: [u64; 7] = [0, 0, 2000, 5000, 6000, 10000, 30000];
/// `updateFaultItem`'s `isolation ? 10000 : currentLatency`: a failure is looked up in the
/// table as a 10 s latency, which gives 10 s of isolation.
pub const ISOLATION_LATENCY: SimDuration = SimDuration::from_millis(10_000);

/// `computeNotAvailableDuration(currentLatency)`: from the top of the table down, the duration
/// of the first threshold the latency reaches (`>=`); 0 under 50 ms.
pub fn compute_not_available_duration(latency: SimDuration) -> SimDuration {
    let i = LATENCY_MAX.iter().rposition(|&max| latency.millis() >= max);
    SimDuration::from_millis(i.map_or(0, |i| NOT_AVAILABLE_DURATION[i]))
}

/// One `updateFaultItem` call, as data: what a send did to its broker's fault item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultUpdate {
    pub broker_name: Name,
    pub latency: SimDuration,
    pub isolation: bool,
    pub reachable: bool,
    /// The isolation it asked for; `None` when `sendLatencyFaultEnable` is off and the call
    /// changed nothing.
    pub not_available: Option<SimDuration>,
}

/// `MQFaultStrategy`, owning its `LatencyFaultToleranceImpl`.
#[derive(Clone, Debug)]
pub struct MQFaultStrategy {
    pub tolerance: LatencyFaultTolerance,
    send_latency_fault_enable: bool,
    start_detector_enable: bool,
}

impl MQFaultStrategy {
    /// `new MQFaultStrategy(clientConfig, resolver, serviceDetector)`.
    pub fn new(config: &ProducerConfig) -> Self {
        MQFaultStrategy {
            tolerance: LatencyFaultTolerance::new(
                config.detect_timeout,
                config.detect_interval,
                config.start_detector_enable,
            ),
            send_latency_fault_enable: config.send_latency_fault_enable,
            start_detector_enable: config.start_detector_enable,
        }
    }

    pub fn send_latency_fault_enable(&self) -> bool {
        self.send_latency_fault_enable
    }

    pub fn start_detector_enable(&self) -> bool {
        self.start_detector_enable
    }

    /// `selectOneMessageQueue(tpInfo, lastBrokerName, resetIndex)`. `BrokerFilter` keeps
    /// queues of any broker but `lastBrokerName` (all of them when it is `None`).
    ///
    /// Off (the default): one lap for a queue off the last broker; if there is none (the last
    /// broker is the only one), one plain round-robin step — back to the broker that failed.
    ///
    /// On: `resetIndex` first re-randomises the index (the send loop asks for it on every
    /// retry); then one lap for a queue that is *available* (isolation over) and off the last
    /// broker; then one lap for one that is *reachable* and off the last broker — isolated or
    /// not; then a plain step, which can land on an isolated, unreachable or the last broker.
    /// Note that availability and reachability are never asked together.
    pub fn select_one_message_queue(
        &self,
        now: SimTime,
        tp: &mut TopicPublishInfo,
        last_broker_name: Option<Name>,
        reset_index: bool,
        rng: &mut SimRng,
    ) -> Option<MessageQueue> {
        let off_last = |mq: &MessageQueue| last_broker_name != Some(mq.broker_name);
        if self.send_latency_fault_enable {
            if reset_index {
                tp.reset_index(rng);
            }
            let available = |mq: &MessageQueue| self.tolerance.is_available(now, &mq.broker_name) && off_last(mq);
            if let Some(mq) = tp.select_one_filtered(available) {
                return Some(mq);
            }
            let reachable = |mq: &MessageQueue| self.tolerance.is_reachable(&mq.broker_name) && off_last(mq);
            if let Some(mq) = tp.select_one_filtered(reachable) {
                return Some(mq);
            }
            return tp.select_one();
        }
        tp.select_one_filtered(off_last).or_else(|| tp.select_one())
    }

    /// `updateFaultItem(brokerName, currentLatency, isolation, reachable)`: nothing when
    /// `sendLatencyFaultEnable` is off; otherwise the isolation is
    /// `computeNotAvailableDuration(isolation ? 10000 : currentLatency)` and the item keeps the
    /// real latency.
    pub fn update_fault_item(
        &mut self,
        now: SimTime,
        broker_name: impl Into<Name>,
        latency: SimDuration,
        isolation: bool,
        reachable: bool,
    ) -> FaultUpdate {
        let broker_name = broker_name.into();
        let mut update = FaultUpdate { broker_name, latency, isolation, reachable, not_available: None };
        if self.send_latency_fault_enable {
            let duration = compute_not_available_duration(if isolation { ISOLATION_LATENCY } else { latency });
            self.tolerance.update_fault_item(now, &broker_name, latency, duration, reachable);
            update.not_available = Some(duration);
        }
        update
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocketmq::producer::publish_info::SendWhichQueue;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }

    fn strategy(latency_on: bool) -> MQFaultStrategy {
        MQFaultStrategy::new(&ProducerConfig { send_latency_fault_enable: latency_on, ..Default::default() })
    }

    /// Queues a#0, b#0, c#0; the first pick is `a` (index -1 + 1 = 0).
    fn three_brokers() -> TopicPublishInfo {
        let qs = ["a", "b", "c"].iter().map(|b| MessageQueue::new("T", *b, 0)).collect();
        TopicPublishInfo::with_queues(qs, SendWhichQueue::starting_at(-1))
    }

    #[test]
    fn the_latency_table_maps_each_band_to_its_isolation() {
        // MQFaultStrategy: latencyMax {50,100,550,1800,3000,5000,15000},
        // notAvailableDuration {0,0,2000,5000,6000,10000,30000}; `>=` from the top.
        let cases = [(0, 0), (49, 0), (50, 0), (549, 0), (550, 2000), (1799, 2000), (1800, 5000)];
        let more = [(3000, 6000), (4999, 6000), (5000, 10000), (10000, 10000), (15000, 30000), (60000, 30000)];
        for (latency, isolated) in cases.into_iter().chain(more) {
            assert_eq!(compute_not_available_duration(ms(latency)), ms(isolated), "latency {latency} ms");
        }
    }

    #[test]
    fn a_failure_isolates_for_ten_seconds_whatever_its_latency() {
        // MQFaultStrategy#updateFaultItem: computeNotAvailableDuration(isolation ? 10000 : ...)
        // -> 10000 >= latencyMax[5] = 5000 -> notAvailableDuration[5] = 10000.
        let mut s = strategy(true);
        let u = s.update_fault_item(SimTime(0), "a", ms(1), true, true);
        assert_eq!(u.not_available, Some(ms(10_000)));
        assert_eq!(s.tolerance.item("a").unwrap().current_latency, ms(1), "the item keeps the real latency");
        assert!(!s.tolerance.is_available(SimTime(9_999), "a"));
        assert!(s.tolerance.is_available(SimTime(10_000), "a"));
    }

    #[test]
    fn with_latency_fault_off_updates_change_nothing() {
        // MQFaultStrategy#updateFaultItem: `if (this.sendLatencyFaultEnable)`.
        let mut s = strategy(false);
        assert_eq!(s.update_fault_item(SimTime(0), "a", ms(5000), true, false).not_available, None);
        assert!(s.tolerance.item("a").is_none());
    }

    #[test]
    fn with_latency_fault_on_a_3000_ms_broker_is_isolated_for_6000_ms_and_skipped() {
        // latencyMax[4] = 3000 -> notAvailableDuration[4] = 6000; availableFilter skips it.
        let mut s = strategy(true);
        let mut tp = three_brokers();
        s.update_fault_item(SimTime(0), "a", ms(3000), false, true);
        let mut rng = SimRng::new(1);
        let picked = s.select_one_message_queue(SimTime(5_999), &mut tp, None, false, &mut rng).unwrap();
        assert_eq!(picked.broker_name, "b", "a is isolated until 6000");
        let mut tp = three_brokers();
        let picked = s.select_one_message_queue(SimTime(6_000), &mut tp, None, false, &mut rng).unwrap();
        assert_eq!(picked.broker_name, "a", "isolation over");
    }

    #[test]
    fn retry_avoids_the_last_broker_when_another_exists_but_falls_back_to_it_when_alone() {
        // MQFaultStrategy#selectOneMessageQueue, off: BrokerFilter lap, then a plain pick.
        let s = strategy(false);
        let mut rng = SimRng::new(1);
        let mut tp = three_brokers();
        assert_eq!(
            s.select_one_message_queue(SimTime(0), &mut tp, Some("a".into()), true, &mut rng).unwrap().broker_name,
            "b"
        );
        let mut alone =
            TopicPublishInfo::with_queues(vec![MessageQueue::new("T", "a", 0)], SendWhichQueue::starting_at(0));
        let picked = s.select_one_message_queue(SimTime(0), &mut alone, Some("a".into()), true, &mut rng).unwrap();
        assert_eq!(picked.broker_name, "a");
    }

    #[test]
    fn when_every_other_broker_is_isolated_a_reachable_one_is_used_before_a_plain_pick() {
        // MQFaultStrategy#selectOneMessageQueue, on: availableFilter, then reachableFilter, then
        // selectOneMessageQueue(). b is isolated but reachable; c isolated and unreachable.
        let mut s = strategy(true);
        s.update_fault_item(SimTime(0), "b", ms(10), true, true);
        s.update_fault_item(SimTime(0), "c", ms(10), true, false);
        let mut rng = SimRng::new(7);
        for _ in 0..20 {
            let mut tp = three_brokers();
            let picked = s.select_one_message_queue(SimTime(1), &mut tp, Some("a".into()), true, &mut rng).unwrap();
            assert_eq!(picked.broker_name, "b", "the reachable pass, whatever the random reset index");
        }
        // All three unreachable and isolated: the plain pick may return the last broker.
        s.update_fault_item(SimTime(0), "a", ms(10), true, false);
        s.update_fault_item(SimTime(0), "b", ms(10), true, false);
        let mut tp = three_brokers();
        let picked = s.select_one_message_queue(SimTime(1), &mut tp, Some("b".into()), false, &mut rng).unwrap();
        // Two failed laps (6 steps, index -1 -> 5) and one plain step: index 6 % 3 = 0.
        assert_eq!(picked.broker_name, "a");
    }
}
