//! The steady-state shortcut for `registerBroker`'s per-topic loop (§2.1 step 10b): knowing,
//! without looking at the topics, that Java's loop would change nothing.
//!
//! # Why the skip is exact
//!
//! Every 30 s each broker re-registers its whole topic table with each name server. When the
//! registration is not `registerFirst` and the broker's DataVersion equals the stored one,
//! Java's per-topic condition `registerFirst || isTopicConfigChanged(...)` reduces to
//! "`topicQueueTable[topic]` is missing, empty, or lacks this brokerName" — and when it is
//! false the iteration does nothing. So the loop is a no-op exactly when every topic of the
//! body already has a QueueData for this brokerName.
//!
//! The memo records, per live entry, the wrapper (an `Arc`) that the last full pass walked, and
//! the brokerName's *removal stamp* at the end of that pass. After any pass, every topic of that
//! wrapper has a QueueData for the brokerName: each iteration either found one or created one.
//! That presence can only be lost by *removing* a QueueData of this brokerName (or a whole
//! topic holding one); every such removal in this module goes through [`TopicMemo::note_removal`],
//! which gives the name a fresh stamp. Replacing a QueueData (perm changes, `registerTopic`)
//! keeps it present. So if
//!
//! * the incoming wrapper is `Arc::ptr_eq` to the recorded one — same allocation, and we hold a
//!   clone, so it cannot have been freed and reused, nor mutated (`Arc` gives no `&mut` while
//!   shared): same topics —
//! * for the same brokerName, whose stamp has not moved since,
//!
//! then every topic still has its QueueData and every Java condition is false. Anything else
//! (a new allocation, a removal, a first registration, a new DataVersion, or
//! `deleteTopicWithBrokerRegistration`, whose step 10a must scan anyway) runs the full loop.
//! Stamps come from one counter and are never deleted, so a stamp value is never reused.

use crate::rocketmq::types::{BrokerAddrInfo, TopicConfigWrapper};
use crate::sim::keyed::{Hint, KeyedMap};
use crate::sim::name::Name;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// What one full pass established for one live entry.
#[derive(Debug)]
struct Verified {
    wrapper: Arc<TopicConfigWrapper>,
    broker_name: Name,
    stamp: u64,
}

#[derive(Debug)]
pub(super) struct TopicMemo {
    enabled: bool,
    verified: KeyedMap<BrokerAddrInfo, Verified>,
    /// brokerName -> stamp of the last removal of one of its QueueData (absent: never).
    removal_stamps: FxHashMap<Name, u64>,
    last_stamp: u64,
}

impl TopicMemo {
    pub(super) fn new() -> Self {
        TopicMemo { enabled: true, verified: KeyedMap::new(), removal_stamps: FxHashMap::default(), last_stamp: 0 }
    }

    #[cfg(test)]
    pub(super) fn disable(&mut self) {
        self.enabled = false;
        self.verified = KeyedMap::new();
    }

    fn stamp(&self, broker_name: Name) -> u64 {
        self.removal_stamps.get(&broker_name).copied().unwrap_or(0)
    }

    /// True when a pass over `wrapper` for `broker_name` is known to change nothing. The caller
    /// has already checked the Java-side conditions (not registerFirst, DataVersion unchanged,
    /// no step 10a).
    pub(super) fn proves_no_op(
        &self,
        key: BrokerAddrInfo,
        broker_name: Name,
        wrapper: &Arc<TopicConfigWrapper>,
        hint: &mut Hint,
    ) -> bool {
        self.enabled
            && self.verified.position_hinted(&key, hint).map(|at| self.verified.at(at)).is_some_and(|v| {
                Arc::ptr_eq(&v.wrapper, wrapper) && v.broker_name == broker_name && v.stamp == self.stamp(broker_name)
            })
    }

    /// Records the end of a full pass.
    pub(super) fn record(
        &mut self,
        key: BrokerAddrInfo,
        broker_name: Name,
        wrapper: &Arc<TopicConfigWrapper>,
        hint: &mut Hint,
    ) {
        if !self.enabled {
            return;
        }
        let verified = Verified { wrapper: Arc::clone(wrapper), broker_name, stamp: self.stamp(broker_name) };
        match self.verified.position_hinted(&key, hint) {
            Some(at) => *self.verified.at_mut(at) = verified,
            None => {
                self.verified.insert(key, verified);
            }
        }
    }

    /// The live entry is gone; its next registration is "changed" in Java terms anyway, and
    /// dropping the record releases the wrapper.
    pub(super) fn forget(&mut self, key: BrokerAddrInfo) {
        self.verified.remove(&key);
    }

    /// A QueueData of `broker_name` was removed (alone or with its topic).
    pub(super) fn note_removal(&mut self, broker_name: Name) {
        self.last_stamp += 1;
        match self.removal_stamps.get_mut(&broker_name) {
            Some(stamp) => *stamp = self.last_stamp,
            None => {
                self.removal_stamps.insert(broker_name, self.last_stamp);
            }
        }
    }

    /// Self-check for property tests: every record whose stamp is current must really find a
    /// QueueData for its brokerName in every topic of its wrapper.
    pub(super) fn violations(&self, topic_queue_table: &KeyedMap<String, super::QueueTable>) -> Vec<String> {
        let mut out = Vec::new();
        for (key, v) in &self.verified {
            if v.stamp != self.stamp(v.broker_name) {
                continue;
            }
            for tc in v.wrapper.topic_config_table.values() {
                let present = topic_queue_table.get(&tc.topic_name).is_some_and(|m| m.contains_key(&v.broker_name));
                if !present {
                    out.push(format!(
                        "topic memo for {key} claims topic {} has QueueData of {}, it has not",
                        tc.topic_name, v.broker_name
                    ));
                }
            }
        }
        out
    }
}
