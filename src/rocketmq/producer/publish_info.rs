//! `TopicPublishInfo`: the write queues a producer chooses from for one topic, and the
//! round-robin index (`sendWhichQueue`) that walks them.

use crate::rocketmq::types::{perm, TopicRouteData, MASTER_ID};
use crate::sim::name::Name;
use crate::sim::rng::SimRng;
use std::fmt;

/// `MessageQueue`: one write queue of one broker group.
///
/// The names are interned: a send copies its queue into the attempt, the record and the
/// result, and compares its broker with the last one, several times per message; as two
/// `String`s each copy was two allocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageQueue {
    pub topic: Name,
    pub broker_name: Name,
    pub queue_id: u32,
}

impl MessageQueue {
    pub fn new(topic: impl Into<Name>, broker_name: impl Into<Name>, queue_id: u32) -> Self {
        MessageQueue { topic: topic.into(), broker_name: broker_name.into(), queue_id }
    }
}

impl fmt::Display for MessageQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}#{}", self.topic, self.broker_name, self.queue_id)
    }
}

/// `ThreadLocalIndex`: a counter that starts at a random `int` and is read masked positive.
///
/// Java keeps one value per thread; the model has one sending thread per producer, so one value.
/// Java draws the start lazily (`random.nextInt()` on the thread's first `incrementAndGet`);
/// the model draws it when the publish info is built, which only moves the draw in the RNG's
/// sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendWhichQueue {
    index: i32,
}

impl SendWhichQueue {
    /// `random.nextInt()`: any `int`, negative ones included.
    pub fn new(rng: &mut SimRng) -> Self {
        SendWhichQueue { index: rng.up_to(u64::from(u32::MAX)) as u32 as i32 }
    }

    /// A known start, for tests: the first [`Self::increment_and_get`] returns `start + 1`.
    pub fn starting_at(start: i32) -> Self {
        SendWhichQueue { index: start }
    }

    /// `incrementAndGet`: `++index & 0x7FFFFFFF`. The `int` wraps, and the mask keeps the
    /// result usable as a list index (`Integer.MIN_VALUE & mask` is 0).
    pub fn increment_and_get(&mut self) -> u32 {
        self.index = self.index.wrapping_add(1);
        (self.index & 0x7FFF_FFFF) as u32
    }

    /// `reset`: `Math.abs(random.nextInt(Integer.MAX_VALUE))`, a value in `0..MAX_VALUE`.
    pub fn reset(&mut self, rng: &mut SimRng) {
        self.index = rng.up_to(i32::MAX as u64 - 1) as i32;
    }
}

/// `TopicPublishInfo`, as `MQClientInstance#topicRouteData2TopicPublishInfo` builds it.
#[derive(Clone, Debug)]
pub struct TopicPublishInfo {
    queues: Vec<MessageQueue>,
    send_which_queue: SendWhichQueue,
}

impl TopicPublishInfo {
    /// `topicRouteData2TopicPublishInfo(topic, route)`, the plain-topic branch:
    ///
    /// 1. the queue datas sorted by broker name (`Collections.sort(qds)`, `QueueData#compareTo`
    ///    compares `brokerName` only; the sort is stable);
    /// 2. for each *writable* queue data, the first `BrokerData` of the same name; skipped when
    ///    there is none or it has no master (`brokerAddrs` without `MixAll.MASTER_ID`);
    /// 3. queues `0..writeQueueNums` of that broker, in order.
    ///
    /// Left out: the `orderTopicConf` branch (ordered topics read their queues from a KV
    /// config, not the route) and static topics (`topicQueueMappingByBroker`); routesim's name
    /// server serves neither.
    ///
    /// `MQClientInstance#updateTopicRouteInfoFromNameServer` builds a *new* publish info on
    /// every route change, so the round-robin index restarts at a fresh random value each time.
    pub fn from_route(topic: &str, route: &TopicRouteData, rng: &mut SimRng) -> Self {
        let mut qds: Vec<_> = route.queue_datas.iter().collect();
        qds.sort_by_key(|a| a.broker_name);
        let topic = Name::new(topic);
        let mut queues = Vec::new();
        for qd in qds.into_iter().filter(|qd| perm::is_writeable(qd.perm)) {
            let Some(bd) = route.broker_datas.iter().find(|bd| bd.broker_name == qd.broker_name) else { continue };
            if !bd.broker_addrs.contains_key(&MASTER_ID) {
                continue;
            }
            queues.extend((0..qd.write_queue_nums).map(|i| MessageQueue::new(topic, qd.broker_name, i)));
        }
        TopicPublishInfo { queues, send_which_queue: SendWhichQueue::new(rng) }
    }

    /// A publish info with the given queues and index, for tests.
    pub fn with_queues(queues: Vec<MessageQueue>, send_which_queue: SendWhichQueue) -> Self {
        TopicPublishInfo { queues, send_which_queue }
    }

    /// `ok()`: there is at least one queue to send to.
    pub fn ok(&self) -> bool {
        !self.queues.is_empty()
    }

    pub fn queues(&self) -> &[MessageQueue] {
        &self.queues
    }

    /// `selectOneMessageQueue()`: the next queue round robin, whatever its broker.
    pub fn select_one(&mut self) -> Option<MessageQueue> {
        if self.queues.is_empty() {
            return None; // Java divides by zero here; every caller checks ok() first.
        }
        let pos = self.send_which_queue.increment_and_get() as usize % self.queues.len();
        Some(self.queues[pos])
    }

    /// `selectOneMessageQueue(QueueFilter... filter)`: at most one lap — `size` steps of the
    /// index — for the first queue every filter keeps; `None` when the lap finds none. A failed
    /// lap moves the index by exactly `size`, so it ends where it began.
    pub fn select_one_filtered(&mut self, mut keep: impl FnMut(&MessageQueue) -> bool) -> Option<MessageQueue> {
        for _ in 0..self.queues.len() {
            let pos = self.send_which_queue.increment_and_get() as usize % self.queues.len();
            if keep(&self.queues[pos]) {
                return Some(self.queues[pos]);
            }
        }
        None
    }

    /// `selectOneMessageQueue(String lastBrokerName)`: the 4.x rule — one lap for a queue of
    /// another broker, else one more plain step. Still in the 5.3.x class, but nothing in the
    /// 5.3.x send path calls it (`MQFaultStrategy` uses the filters instead); kept so the two
    /// can be compared.
    pub fn select_one_avoiding(&mut self, last_broker_name: Option<&str>) -> Option<MessageQueue> {
        let Some(last) = last_broker_name else { return self.select_one() };
        for _ in 0..self.queues.len() {
            let mq = self.select_one()?;
            if mq.broker_name != last {
                return Some(mq);
            }
        }
        self.select_one()
    }

    /// `resetIndex()`: a fresh random start (`MQFaultStrategy` does this before a retry's
    /// selection when latency fault tolerance is on).
    pub fn reset_index(&mut self, rng: &mut SimRng) {
        self.send_which_queue.reset(rng);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocketmq::types::{BrokerData, QueueData};

    fn qd(broker: &str, writes: u32, perm: u32) -> QueueData {
        QueueData {
            broker_name: broker.into(),
            read_queue_nums: writes,
            write_queue_nums: writes,
            perm,
            topic_sys_flag: 0,
        }
    }

    fn bd(broker: &str, ids: &[u64]) -> BrokerData {
        let mut b = BrokerData::new("c", broker);
        for &id in ids {
            b.broker_addrs.insert(id, format!("{broker}-{id}:10911").into());
        }
        b
    }

    fn names(tp: &TopicPublishInfo) -> Vec<String> {
        tp.queues().iter().map(|q| format!("{}#{}", q.broker_name, q.queue_id)).collect()
    }

    #[test]
    fn publish_info_lists_write_queues_of_writable_mastered_brokers_sorted_by_name() {
        // RocketMQ MQClientInstance#topicRouteData2TopicPublishInfo: Collections.sort(qds), then
        // PermName.isWriteable, a BrokerData of that name, and MASTER_ID among its addresses.
        let route = TopicRouteData {
            queue_datas: vec![
                qd("c", 2, perm::READ_WRITE),
                qd("a", 2, perm::READ_WRITE),
                qd("ro", 4, perm::READ),
                qd("slave-only", 4, perm::READ_WRITE),
                qd("no-broker-data", 4, perm::READ_WRITE),
                qd("b", 1, perm::WRITE),
            ]
            .into_iter()
            .map(Into::into)
            .collect(),
            broker_datas: [bd("a", &[0, 1]), bd("b", &[0]), bd("c", &[0]), bd("ro", &[0]), bd("slave-only", &[1])]
                .map(Into::into)
                .to_vec(),
            ..Default::default()
        };
        let tp = TopicPublishInfo::from_route("T", &route, &mut SimRng::new(1));
        // Write queues only: "a" has readQueueNums = writeQueueNums here, "b" is write-only.
        assert_eq!(names(&tp), ["a#0", "a#1", "b#0", "c#0", "c#1"]);
        assert!(tp.ok());
    }

    #[test]
    fn the_index_walks_round_robin_from_its_start_and_wraps_positive() {
        // RocketMQ ThreadLocalIndex#incrementAndGet: ++index & POSITIVE_MASK.
        let mut idx = SendWhichQueue::starting_at(i32::MAX - 1);
        assert_eq!(idx.increment_and_get(), i32::MAX as u32);
        assert_eq!(idx.increment_and_get(), 0, "MIN_VALUE & 0x7FFFFFFF");
        assert_eq!(idx.increment_and_get(), 1);
        let qs = vec![MessageQueue::new("T", "a", 0), MessageQueue::new("T", "b", 0), MessageQueue::new("T", "c", 0)];
        // TopicPublishInfo#selectOneMessageQueue(): index % size, the index first incremented.
        let mut tp = TopicPublishInfo::with_queues(qs, SendWhichQueue::starting_at(-1));
        let picked: Vec<_> = (0..4).map(|_| tp.select_one().unwrap().broker_name).collect();
        assert_eq!(picked, ["a", "b", "c", "a"]);
    }

    #[test]
    fn a_filtered_selection_tries_one_lap_and_then_gives_up() {
        // TopicPublishInfo#selectOneMessageQueue(List, ThreadLocalIndex, QueueFilter...): size
        // tries, null when no queue passes every filter.
        let qs = vec![MessageQueue::new("T", "a", 0), MessageQueue::new("T", "b", 0)];
        let mut tp = TopicPublishInfo::with_queues(qs, SendWhichQueue::starting_at(-1));
        assert_eq!(tp.select_one_filtered(|q| q.broker_name == "b").unwrap().broker_name, "b");
        assert_eq!(tp.select_one_filtered(|_| false), None);
        // Two failed steps leave the index where it was: the next plain pick is "a" (index 2).
        assert_eq!(tp.select_one().unwrap().broker_name, "a");
    }

    #[test]
    fn the_4x_selection_avoids_the_last_broker_unless_it_is_the_only_one() {
        // TopicPublishInfo#selectOneMessageQueue(String lastBrokerName).
        let qs = vec![MessageQueue::new("T", "a", 0), MessageQueue::new("T", "a", 1), MessageQueue::new("T", "b", 0)];
        let mut tp = TopicPublishInfo::with_queues(qs, SendWhichQueue::starting_at(-1));
        assert_eq!(tp.select_one_avoiding(Some("a")).unwrap().broker_name, "b");
        let only_a = vec![MessageQueue::new("T", "a", 0)];
        let mut tp = TopicPublishInfo::with_queues(only_a, SendWhichQueue::starting_at(0));
        assert_eq!(tp.select_one_avoiding(Some("a")).unwrap().broker_name, "a");
    }
}
