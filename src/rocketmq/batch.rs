//! `BatchUnregistrationService`'s queue, pure: a bounded FIFO that is drained whole.
//!
//! The Java service thread blocks in `take()`, then `drainTo()`s everything queued and applies
//! the lot as one `unRegisterBroker` batch under one write lock. `offer()` never blocks: when the
//! queue (capacity 3000) is full the request is dropped and only logged — the model reports it.

use crate::rocketmq::types::UnregisterRequest;
use std::collections::VecDeque;

/// `NamesrvConfig.unRegisterBrokerQueueCapacity`.
pub const DEFAULT_QUEUE_CAPACITY: usize = 3000;

pub struct UnregisterQueue {
    queue: VecDeque<UnregisterRequest>,
    capacity: usize,
}

impl UnregisterQueue {
    pub fn new(capacity: usize) -> Self {
        UnregisterQueue { queue: VecDeque::new(), capacity }
    }

    /// `LinkedBlockingQueue.offer`: false (and the request is gone) when the queue is full.
    pub fn offer(&mut self, request: UnregisterRequest) -> bool {
        if self.queue.len() >= self.capacity {
            return false;
        }
        self.queue.push_back(request);
        true
    }

    /// `take()` followed by `drainTo()`: everything queued, oldest first.
    pub fn drain(&mut self) -> Vec<UnregisterRequest> {
        self.queue.drain(..).collect()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(addr: &str) -> UnregisterRequest {
        UnregisterRequest { broker_name: "b".into(), broker_addr: addr.into(), cluster_name: "c".into(), broker_id: 0 }
    }

    #[test]
    fn a_full_queue_refuses_the_offer_instead_of_blocking() {
        // RocketMQ BatchUnregistrationService#submit -> offer()
        let mut q = UnregisterQueue::new(2);
        assert!(q.offer(req("a")));
        assert!(q.offer(req("b")));
        assert!(!q.offer(req("c")));
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn drain_takes_everything_in_arrival_order_duplicates_included() {
        // RocketMQ BatchUnregistrationService#run: take() + drainTo(); headers have no equals()
        let mut q = UnregisterQueue::new(10);
        for a in ["a", "b", "a"] {
            q.offer(req(a));
        }
        let batch: Vec<_> = q.drain().into_iter().map(|r| r.broker_addr).collect();
        assert_eq!(batch, ["a", "b", "a"]);
        assert!(q.is_empty());
    }
}
