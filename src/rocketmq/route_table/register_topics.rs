//! `registerBroker` step 10 (reference §2.1): a master's or prime slave's topics become
//! QueueData — optionally deleting the ones it dropped (10a), then the per-topic loop (10b)
//! that `memo.rs` lets a steady-state re-registration skip.

use super::outcome::{BrokerRole, RegisterOutcome, TopicPass};
use super::{RegisterHints, RouteInfoManager};
use crate::rocketmq::types::{perm, BrokerAddrInfo, QueueData, RegisterBrokerRequest, TopicConfig, TopicConfigWrapper};
use crate::sim::name::Name;
use std::rc::Rc;
use std::sync::Arc;

impl RouteInfoManager {
    /// Step 10 for a master or prime slave: 10a (optional delete), then 10b, the per-topic loop
    /// — or the memo's proof that the loop would change nothing (see `memo.rs`).
    pub(super) fn update_topics(
        &mut self,
        req: &RegisterBrokerRequest,
        key: BrokerAddrInfo,
        wrapper: &Arc<TopicConfigWrapper>,
        role: BrokerRole,
        out: &mut RegisterOutcome,
        hints: &mut RegisterHints,
    ) {
        let name = req.broker_name;
        // Compared with the *previous* live entry: step 11 has not replaced it yet.
        let config_changed = self.changed_at(key, &wrapper.data_version, &mut hints.live);
        let delete_missing = self.config.delete_topic_with_broker_registration;
        if delete_missing {
            self.delete_missing_topics(name, wrapper, out);
        }
        let steady = !out.register_first && !config_changed && !delete_missing;
        if steady && self.memo.proves_no_op(key, name, wrapper, &mut hints.memo) {
            out.topic_pass = TopicPass::Skipped;
            return;
        }
        // A prime slave of an acting-master group serves read-only. Java does this by mutating
        // the request's TopicConfig in place; each request body is freshly decoded, so that is
        // invisible outside this call and computing the perm is equivalent.
        let read_only = role == BrokerRole::PrimeSlave && self.group(&name).enable_acting_master;
        let mut carry = Carry::default();
        // registerFirst || isTopicConfigChanged(...). With an unchanged DataVersion an existing
        // QueueData is *not* overwritten — a namesrv-side wipeWritePerm survives.
        let overwrite = out.register_first || config_changed;
        for tc in wrapper.topic_config_table.values() {
            if self.create_and_update_queue_data(name, tc, read_only, overwrite, &mut carry) {
                out.topics_updated.push(tc.topic_name.clone());
            }
        }
        self.memo.record(key, name, wrapper, &mut hints.memo);
        out.topic_pass = TopicPass::Ran { topics: wrapper.topic_config_table.len() };
    }

    /// Step 10a: drop this broker's QueueData for topics its body no longer lists. Java takes
    /// the body's *map keys* here (step 10b uses each config's `topicName`); so do we.
    fn delete_missing_topics(&mut self, broker_name: Name, wrapper: &TopicConfigWrapper, out: &mut RegisterOutcome) {
        let doomed: Vec<String> = self
            .topic_queue_table
            .iter()
            .filter(|(topic, by_broker)| {
                by_broker.contains_key(&broker_name) && !wrapper.topic_config_table.contains_key(topic)
            })
            .map(|(topic, _)| topic.clone())
            .collect();
        for topic in doomed {
            let by_broker = self.topic_queue_table.get_mut(&topic).expect("collected above");
            by_broker.remove(&broker_name);
            let now_empty = by_broker.is_empty();
            self.memo.note_removal(broker_name);
            self.bump();
            if now_empty {
                self.topic_queue_table.remove(&topic);
                out.topics_removed.push(topic.clone());
            }
            out.topics_deleted.push(topic);
        }
    }

    /// One topic of step 10b: when the topic has no QueueData for this brokerName, or
    /// `overwrite` (registerFirst or a changed DataVersion) holds, `createAndUpdateQueueData`
    /// puts one unless an equal QueueData is already there. True if the table changed. `carry.last`
    /// is the QueueData the pass put before: reused when equal to the one Java would build,
    /// which is invisible (a shared QueueData is copied before any change). The row is searched
    /// once for both questions: a master's first registration asks them for each of its topics.
    fn create_and_update_queue_data(
        &mut self,
        broker_name: Name,
        tc: &TopicConfig,
        read_only: bool,
        overwrite: bool,
        carry: &mut Carry,
    ) -> bool {
        let perm = if read_only { tc.perm & !perm::WRITE } else { tc.perm };
        // QueueData's equals: all five fields.
        let is_wanted = |q: &QueueData| {
            q.broker_name == broker_name
                && q.read_queue_nums == tc.read_queue_nums
                && q.write_queue_nums == tc.write_queue_nums
                && q.perm == perm
                && q.topic_sys_flag == tc.topic_sys_flag
        };
        let row = match self.topic_queue_table.position(&tc.topic_name) {
            Some(row) => row,
            None => self.topic_queue_table.insert_full(tc.topic_name.clone(), Default::default()),
        };
        let by_broker = self.topic_queue_table.at_mut(row);
        let Carry { last, hint } = carry;
        let make = || match last {
            Some(q) if is_wanted(q) => Rc::clone(q),
            _ => {
                let q = Rc::new(QueueData {
                    broker_name,
                    read_queue_nums: tc.read_queue_nums,
                    write_queue_nums: tc.write_queue_nums,
                    perm,
                    topic_sys_flag: tc.topic_sys_flag,
                });
                *last = Some(Rc::clone(&q));
                q
            }
        };
        let changed = by_broker.put_unless(broker_name, hint, |q| !overwrite || is_wanted(q), make);
        if changed {
            self.bump();
        }
        changed
    }
}

/// What a topic pass carries from one topic to the next.
#[derive(Default)]
struct Carry {
    /// The QueueData the pass made last: the next topic with the same queue counts and perm
    /// shares it (a hundred topics of one config are one allocation, not a hundred).
    last: Option<Rc<QueueData>>,
    /// Where the group's QueueData sat in the last row (see `QueueTable::put_unless`).
    hint: usize,
}
