//! Taking brokers out: the batch `unRegisterBroker` (reference §2.3), the expiry scan that only
//! *decides* (§2.4), and turning a live entry or a closed channel into a request (§2.5).

use super::outcome::{CleanupAbort, ExpiredBroker, MinBrokerIdChange, UnregisterReport, UnregisterStep};
use super::{no_master_exists, RouteInfoManager};
use crate::rocketmq::types::{
    perm, BrokerAddrInfo, BrokerData, BrokerLiveInfo, UnregisterRequest, DEFAULT_BROKER_CHANNEL_EXPIRED_TIME,
};
use crate::sim::clock::SimTime;
use crate::sim::ids::ChannelId;
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// The sets Java accumulates over a batch before cleaning topics once.
#[derive(Default)]
struct BatchSets {
    /// Groups that became empty and were removed.
    removed: BTreeSet<Name>,
    /// Every other request's broker name — including names with no BrokerData at all.
    reduced: BTreeSet<Name>,
    /// brokerName -> offline address, for step 7; a later request for the same name wins.
    notify: BTreeMap<Name, Name>,
}

impl RouteInfoManager {
    /// `unRegisterBroker(Set)` (§2.3): one call is one batch under one write lock — steps 1–5
    /// per request, then one topic cleanup (6) and the notices (7).
    ///
    /// Requests are applied in slice order (Java's `HashSet` order is arbitrary). Duplicates are
    /// applied twice, as Java does for headers without `equals`; every step is idempotent.
    /// Nothing here re-checks freshness: a request decided before the broker re-registered
    /// still removes the fresh registration (#11043).
    pub fn un_register_broker(&mut self, batch: &[UnregisterRequest]) -> UnregisterReport {
        let mut sets = BatchSets::default();
        let mut report = UnregisterReport::default();
        for req in batch {
            report.requests.push(self.unregister_one(req, &mut sets));
        }
        self.clean_topics(&sets, &mut report);
        // Java throws out of step 6 before reaching step 7.
        if report.aborted.is_none() && self.config.notify_min_broker_id_changed {
            report.notifications = self.min_id_notices(&sets.notify);
        }
        report
    }

    /// Steps 1–5 for one request.
    fn unregister_one(&mut self, req: &UnregisterRequest, sets: &mut BatchSets) -> UnregisterStep {
        let key = BrokerAddrInfo::new(req.cluster_name, req.broker_addr);
        let mut step = UnregisterStep {
            request: req.clone(),
            live_removed: self.remove_live_entry(key),
            filter_removed: self.filter_server_table.remove(&key).is_some(),
            broker_data_found: false,
            addrs_removed: Vec::new(),
            min_broker_id_changed: false,
            notify_queued: false,
            broker_name_removed: false,
            cluster_name_removed: false,
            cluster_dropped: false,
        };
        if step.filter_removed {
            self.bump();
        }
        self.remove_address(req, &mut step, sets);
        // The planted bug drops step 5's `if (removeBrokerName)`: the name leaves its cluster set
        // even though the group keeps other members.
        let unguarded = self.planted == Some(Mutation::UnregisterAlwaysLeavesCluster);
        if step.broker_name_removed || unguarded {
            self.leave_cluster(req, &mut step);
        }
        if step.broker_name_removed {
            sets.removed.insert(req.broker_name);
        } else {
            sets.reduced.insert(req.broker_name);
        }
        step
    }

    /// Steps 3–4: remove the address from its group — by *address*, whatever id it holds
    /// (#5374/#5375; 4.x removed by id and could delete a newly promoted master).
    fn remove_address(&mut self, req: &UnregisterRequest, step: &mut UnregisterStep, sets: &mut BatchSets) {
        let Some(group) = self.broker_addr_table.get_mut(&req.broker_name) else {
            return;
        };
        step.broker_data_found = true;
        if group.cluster != req.cluster_name {
            self.cross_cluster_names.insert(req.broker_name);
        }
        // Judged from the *request's* id before removal, not from the entry actually removed.
        let min_id = group.broker_addrs.keys().next().copied();
        step.min_broker_id_changed = min_id == Some(req.broker_id);
        let group = Rc::make_mut(group);
        group.broker_addrs.retain(|&id, addr| {
            let hit = *addr == req.broker_addr;
            if hit {
                step.addrs_removed.push((id, addr.to_string()));
            }
            !hit
        });
        // An already-empty group (left by the single-topic guard) is removed here too.
        if group.broker_addrs.is_empty() {
            self.broker_addr_table.remove(&req.broker_name);
            step.broker_name_removed = true;
        } else if step.min_broker_id_changed {
            sets.notify.insert(req.broker_name, req.broker_addr);
            step.notify_queued = true;
        }
        if !step.addrs_removed.is_empty() || step.broker_name_removed {
            self.bump();
        }
    }

    /// Step 5: only the *request's* cluster set is cleaned; if the group lived under another
    /// cluster name, that set keeps listing it.
    fn leave_cluster(&mut self, req: &UnregisterRequest, step: &mut UnregisterStep) {
        let Some(names) = self.cluster_addr_table.get_mut(&req.cluster_name) else {
            return;
        };
        step.cluster_name_removed = names.remove(&req.broker_name);
        if names.is_empty() {
            self.cluster_addr_table.remove(&req.cluster_name);
            step.cluster_dropped = true;
        }
        if step.cluster_name_removed || step.cluster_dropped {
            self.bump();
        }
    }

    /// Step 6, `cleanTopicByUnRegisterRequests`: one pass over every topic. Removed groups lose
    /// their QueueData (empty topics go); a reduced group with acting master and no id 0 left
    /// has its write bit cleared. A reduced name with QueueData but no BrokerData is Java's
    /// latent NPE: the pass stops there (topics are visited in sorted order here).
    fn clean_topics(&mut self, sets: &BatchSets, report: &mut UnregisterReport) {
        let groups = &self.broker_addr_table;
        let memo = &mut self.memo;
        let revision = &mut self.revision;
        self.topic_queue_table.retain_sorted(|topic, by_broker| {
            if report.aborted.is_some() {
                return true;
            }
            for name in &sets.removed {
                if by_broker.remove(name).is_some() {
                    memo.note_removal(*name);
                    *revision += 1;
                    report.queue_data_removed.push((topic.clone(), name.to_string()));
                }
            }
            if by_broker.is_empty() {
                report.topics_removed.push(topic.clone());
                return false;
            }
            for name in &sets.reduced {
                let Some(queue_data) = by_broker.get_mut(name) else {
                    continue;
                };
                let Some(group) = groups.get(name) else {
                    report.aborted = Some(CleanupAbort { topic: topic.clone(), broker_name: name.to_string() });
                    return true;
                };
                if group.enable_acting_master && no_master_exists(Some(group)) {
                    if queue_data.perm & perm::WRITE != 0 {
                        Rc::make_mut(queue_data).perm &= !perm::WRITE;
                        *revision += 1;
                    }
                    report.write_perm_wiped.push((topic.clone(), name.to_string()));
                }
            }
            true
        });
    }

    /// Step 7: notices for surviving groups whose smallest id went, built from the group as it
    /// stands after the whole batch — and only for groups with acting master enabled.
    fn min_id_notices(&self, notify: &BTreeMap<Name, Name>) -> Vec<MinBrokerIdChange> {
        notify
            .iter()
            .filter_map(|(name, offline)| {
                let group = self.broker_addr_table.get(name).filter(|g| g.enable_acting_master)?;
                MinBrokerIdChange::for_group(name, &group.broker_addrs, Some(offline.to_string()), None)
            })
            .collect()
    }

    /// `scanNotActiveBroker` (§2.4), without side effects: every live entry with
    /// `last + timeout < now`. Strictly less: at exactly `last + timeout` a broker is still
    /// alive. The scan removes nothing itself — in 5.x it closes the channel and submits the
    /// request, and the entry goes only when the batch runs, so a later scan (or the channel's
    /// CLOSE event) may submit it again.
    pub fn scan_not_active_broker(&self, now: SimTime) -> Vec<ExpiredBroker> {
        // The planted bug reads 4.x's constant instead of the entry's own timeout.
        let one_timeout = self.planted == Some(Mutation::ScanIgnoresBrokerTimeout);
        let expiry = |live: &BrokerLiveInfo| match one_timeout {
            true => live.last_update_timestamp + DEFAULT_BROKER_CHANNEL_EXPIRED_TIME,
            false => live.expiry(),
        };
        // Most scans expire nobody, and most know it without reading the table: no entry
        // expires before `live_floor`. A broker refreshes every 30 s for a 120 s timeout, so
        // after a full scan the next ~18 are answered here. The scan of a thousand entries,
        // each a cache line gone cold in the 5 s since the last, was 7% of the RocketMQ bench's
        // second-level misses. (The planted bug's timeout is not the one the floor was kept by.)
        if !one_timeout && now <= self.live_floor.get() {
            return Vec::new();
        }
        // Otherwise find the expired entries in storage order, then sort only those, so the
        // list comes out in key order as a sorted table would give it; and make the floor exact.
        let mut floor = SimTime(u64::MAX);
        let mut expired: Vec<(&BrokerAddrInfo, &BrokerLiveInfo)> = self
            .broker_live_table
            .unordered()
            .filter(|(_, live)| {
                let expiry = expiry(live);
                floor = floor.min(expiry);
                expiry < now
            })
            .collect();
        if !one_timeout {
            self.live_floor.set(floor);
        }
        expired.sort_unstable_by(|a, b| a.0.cmp(b.0));
        expired
            .into_iter()
            .map(|(key, live)| ExpiredBroker {
                addr_info: *key,
                last_update: live.last_update_timestamp,
                timeout: live.heartbeat_timeout_millis,
                channel: live.channel,
                request: self.setup_unregister_request(key),
            })
            .collect()
    }

    /// `onChannelDestroy(Channel)` (§2.5): find the live entry holding this very channel, then
    /// build its request. A broker that re-registered on a new connection holds a new channel,
    /// so closing the old one finds nothing. (If two entries share a channel, the first in
    /// sorted order wins; Java takes the first in hash order.)
    pub fn on_channel_destroy(&self, channel: ChannelId) -> Option<UnregisterRequest> {
        let (key, _) = self
            .broker_live_table
            .unordered()
            .filter(|(_, live)| live.channel == channel)
            .min_by_key(|(key, _)| *key)?;
        self.setup_unregister_request(key)
    }

    /// `setupUnRegisterRequest` (§2.5): the first group *of the same cluster* listing this
    /// address supplies the broker name and id. `None` when no group lists it — an orphan
    /// entry, which Java never unregisters.
    pub fn setup_unregister_request(&self, info: &BrokerAddrInfo) -> Option<UnregisterRequest> {
        // The first group in name order: the smallest name among the matches.
        let lists_addr = |(_, group): &(&Name, &Rc<BrokerData>)| {
            group.cluster == info.cluster_name && group.broker_addrs.values().any(|addr| *addr == info.broker_addr)
        };
        let first = self.broker_addr_table.unordered().filter(lists_addr).min_by_key(|(name, _)| *name);
        first.and_then(|(_, group)| {
            let (&id, _) = group.broker_addrs.iter().find(|(_, addr)| **addr == info.broker_addr)?;
            Some(UnregisterRequest {
                broker_name: group.broker_name,
                broker_addr: info.broker_addr,
                cluster_name: info.cluster_name,
                broker_id: id,
            })
        })
    }
}
