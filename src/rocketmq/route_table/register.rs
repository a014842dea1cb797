//! `registerBroker` (reference §2.1, the 11-argument form), steps 1–9 and 11–14; step 10, the
//! topic update, is in `register_topics.rs`.

use super::outcome::{BrokerRole, MinBrokerIdChange, RegisterBrokerResult, RegisterOutcome, RegisterStop};
use super::{RegisterHints, RouteInfoManager};
use crate::rocketmq::types::{
    BrokerAddrInfo, BrokerData, BrokerLiveInfo, DataVersion, RegisterBrokerRequest,
    DEFAULT_BROKER_CHANNEL_EXPIRED_TIME, MASTER_ID,
};
use crate::sim::clock::SimTime;
use crate::sim::ids::ChannelId;
use crate::sim::keyed::Hint;
use crate::sim::name::Name;
use std::rc::Rc;

/// Channels with ids beyond this register without hints (see [`RouteInfoManager::hints`]): ids
/// come from a run-wide counter, and a run that opens this many connections keeps its hint
/// vector at a megabyte per name server.
const HINTED_CHANNELS: usize = 1 << 16;

impl RouteInfoManager {
    /// `registerBroker` (§2.1), steps 1–14 in Java's order. `req.enable_acting_master == None`
    /// is an old broker that does not send the field.
    ///
    /// The order matters and is kept: the cluster entry and the group are touched (steps 1–5)
    /// before the two early returns (6, 7), and the topic update (10) runs *before* the live
    /// entry is replaced (11), so its change checks compare with the previous registration.
    ///
    /// The group is looked up by name once, in step 2, and then reached by its position `g` in
    /// `brokerAddrTable`: a registration reads it at every step, and a name lookup is a hash
    /// and a string compare on a group this call has already found. No step removes a group,
    /// so the position holds to the end of the call.
    ///
    /// The lookups by key try the positions the channel's last registration found first (see
    /// [`RouteInfoManager::hints`]); what they find is the same either way.
    pub fn register_broker(
        &mut self,
        now: SimTime,
        req: &RegisterBrokerRequest,
        channel: ChannelId,
    ) -> RegisterOutcome {
        let slot = usize::try_from(channel.0).ok().filter(|&slot| slot < HINTED_CHANNELS);
        let mut hints = slot.and_then(|slot| self.hints.get(slot).copied()).unwrap_or_default();
        let out = self.register_hinted(now, req, channel, &mut hints);
        if let Some(slot) = slot {
            if self.hints.len() <= slot {
                self.hints.resize(slot + 1, RegisterHints::default());
            }
            self.hints[slot] = hints;
        }
        out
    }

    fn register_hinted(
        &mut self,
        now: SimTime,
        req: &RegisterBrokerRequest,
        channel: ChannelId,
        hints: &mut RegisterHints,
    ) -> RegisterOutcome {
        let mut out = RegisterOutcome::new();
        let key = BrokerAddrInfo::new(req.cluster_name, req.broker_addr);
        let (created, g) = self.join_group(req, hints);
        out.register_first = created;
        // Step 4: an empty group counts as min id 0, so its first member never "lowers" it.
        let prev_min_id = self.broker_addr_table.at(g).broker_addrs.keys().next().copied();
        let min_id_dropped = req.broker_id < prev_min_id.unwrap_or(MASTER_ID);
        out.switched_ids = self.drop_other_ids_of_addr(req, g);
        if let Some(stop) = self.check_conflict(req, g).or_else(|| self.check_single_topic(req, g)) {
            out.conflict = matches!(stop, RegisterStop::Conflict { .. });
            // Only the guard returns Java's null; the others return the empty result object.
            if stop != RegisterStop::SingleTopicGuard {
                out.result = Some(RegisterBrokerResult::default());
            }
            out.stopped = Some(stop);
            return out;
        }
        let role = self.claim_id(req, g, &mut out.register_first);
        out.role = Some(role);
        if let Some(wrapper) = &req.topic_config_wrapper {
            if role != BrokerRole::Slave {
                self.update_topics(req, key, wrapper, role, &mut out, hints);
            }
        }
        out.previous_channel = self.replace_live_entry(now, req, key, channel, &mut hints.live);
        out.live_entry_replaced = out.previous_channel.is_some();
        self.update_filter_servers(key, req);
        out.result = Some(self.master_of(req, g, &mut hints.master));
        // Step 14. Unlike the unregister path (§2.3 step 7), Java does not check the group's
        // enableActingMaster here; we reproduce that asymmetry.
        if min_id_dropped && self.config.notify_min_broker_id_changed {
            out.min_broker_id_changed = MinBrokerIdChange::for_group(
                &req.broker_name,
                &self.broker_addr_table.at(g).broker_addrs,
                None,
                Some(req.ha_server_addr.to_string()),
            )
            .map(Box::new);
        }
        out
    }

    pub(super) fn group(&self, broker_name: &Name) -> &BrokerData {
        self.broker_addr_table.get(broker_name).expect("step 2 created the group")
    }

    /// Steps 1–3; returns whether step 2 created the group (`registerFirst`), and the group's
    /// position in `brokerAddrTable`.
    fn join_group(&mut self, req: &RegisterBrokerRequest, hints: &mut RegisterHints) -> (bool, usize) {
        let name = req.broker_name;
        let mut changed = match self.cluster_addr_table.get_mut(&req.cluster_name) {
            Some(names) => !names.contains_hinted(&name, &mut hints.cluster) && names.insert(name),
            None => {
                let names = [name].into_iter().collect();
                self.cluster_addr_table.insert(req.cluster_name, names);
                true
            }
        };
        let (created, g) = match self.broker_addr_table.position_hinted(&name, &mut hints.group) {
            Some(g) => (false, g),
            None => {
                let group = BrokerData::new(req.cluster_name, name);
                self.broker_addr_table.insert(name, Rc::new(group));
                (true, self.broker_addr_table.len() - 1)
            }
        };
        let group = self.broker_addr_table.at_mut(g);
        if group.cluster != req.cluster_name {
            // The group keeps the cluster it was created with (#3991/#1450).
            self.cross_cluster_names.insert(name);
        }
        // Step 3: the group-level flag and zone follow the *last* registrant, whoever it is.
        // `!isOldVersionBroker && enableActingMaster`: an old broker clears the flag.
        let acting = req.enable_acting_master.unwrap_or(false);
        if group.enable_acting_master != acting || group.zone_name != req.zone_name {
            // Copy-on-write: route answers still holding the group keep the old one.
            let group = Rc::make_mut(group);
            group.enable_acting_master = acting;
            group.zone_name.clone_from(&req.zone_name);
            changed = true;
        }
        if changed || created {
            self.bump();
        }
        (created, g)
    }

    /// Step 5, "switch slave to master": one `ip:port` may hold only one id in a group, so the
    /// address's entries under other ids go before it claims this one.
    fn drop_other_ids_of_addr(&mut self, req: &RegisterBrokerRequest, g: usize) -> Vec<(u64, String)> {
        let group = self.broker_addr_table.at_mut(g);
        // Almost every registration finds nothing to drop: look before copying the group.
        // The id first: the address compare is a string compare, and the own id always matches.
        if !group.broker_addrs.iter().any(|(&id, addr)| id != req.broker_id && *addr == req.broker_addr) {
            return Vec::new();
        }
        let group = Rc::make_mut(group);
        let mut switched = Vec::new();
        group.broker_addrs.retain(|&id, addr| {
            let drop = *addr == req.broker_addr && id != req.broker_id;
            if drop {
                switched.push((id, addr.to_string()));
            }
            !drop
        });
        if !switched.is_empty() {
            self.bump();
        }
        switched
    }

    /// Step 6: controller mode. Another address holds this id and is still live with a higher
    /// `stateVersion`: the newcomer is stale. Strictly greater — equal versions let it through.
    fn check_conflict(&mut self, req: &RegisterBrokerRequest, g: usize) -> Option<RegisterStop> {
        let old_addr = self.broker_addr_table.at(g).broker_addrs.get(&req.broker_id)?;
        if *old_addr == req.broker_addr {
            return None;
        }
        let old_key = BrokerAddrInfo::new(req.cluster_name, *old_addr);
        let old_state_version = self.broker_live_table.get(&old_key)?.data_version.state_version;
        let Some(wrapper) = &req.topic_config_wrapper else {
            return Some(RegisterStop::NullWrapper { step: 6 });
        };
        let new_state_version = wrapper.data_version.state_version;
        if old_state_version <= new_state_version {
            return None;
        }
        let old_addr = old_addr.to_string();
        let own_key = BrokerAddrInfo::new(req.cluster_name, req.broker_addr);
        let live_entry_removed = self.remove_live_entry(own_key);
        Some(RegisterStop::Conflict { old_addr, old_state_version, new_state_version, live_entry_removed })
    }

    /// Step 7 (#4523): a one-topic body is an incremental registration; it may not be the one
    /// that introduces an id. Returns null *after* steps 1–5, which can leave an empty group.
    fn check_single_topic(&self, req: &RegisterBrokerRequest, g: usize) -> Option<RegisterStop> {
        if self.broker_addr_table.at(g).broker_addrs.contains_key(&req.broker_id) {
            return None;
        }
        match &req.topic_config_wrapper {
            None => Some(RegisterStop::NullWrapper { step: 7 }),
            Some(w) if w.topic_config_table.len() == 1 => Some(RegisterStop::SingleTopicGuard),
            Some(_) => None,
        }
    }

    /// Steps 8–9: claim the id, then decide the role from the group's smallest id *after* it.
    fn claim_id(&mut self, req: &RegisterBrokerRequest, g: usize, register_first: &mut bool) -> BrokerRole {
        let group = self.broker_addr_table.at_mut(g);
        // Only a new or different address is written, so a refresh copies nothing.
        let old = group.broker_addrs.get(&req.broker_id);
        let changed = old != Some(&req.broker_addr);
        // `StringUtils.isEmpty(oldAddr)`: an id nobody held (or held by "") is a first.
        *register_first |= old.is_none_or(|a| a.is_empty());
        if changed {
            Rc::make_mut(group).broker_addrs.insert(req.broker_id, req.broker_addr);
        }
        let min_id = *group.broker_addrs.keys().next().expect("just inserted");
        if changed {
            self.bump();
        }
        if req.broker_id == MASTER_ID {
            BrokerRole::Master
        } else if req.enable_acting_master.is_some() && req.broker_id == min_id {
            BrokerRole::PrimeSlave
        } else {
            BrokerRole::Slave
        }
    }

    /// Step 11: a new `BrokerLiveInfo` replaces the old one whole — timestamp, timeout, channel
    /// and DataVersion all change, so a registration can shorten or lengthen the timeout.
    /// Returns the replaced entry's channel, if there was one. Only a change beyond the
    /// timestamp moves the revision.
    ///
    /// An existing entry is overwritten field by field, which leaves it equal to the new one
    /// Java puts.
    fn replace_live_entry(
        &mut self,
        now: SimTime,
        req: &RegisterBrokerRequest,
        key: BrokerAddrInfo,
        channel: ChannelId,
        hint: &mut Hint,
    ) -> Option<ChannelId> {
        let timeout = req.heartbeat_timeout_millis.unwrap_or(DEFAULT_BROKER_CHANNEL_EXPIRED_TIME);
        // Java: `new DataVersion()` (stamped now) when the wrapper is null.
        let data_version = match &req.topic_config_wrapper {
            Some(w) => w.data_version,
            None => DataVersion::new(now),
        };
        let Some(prev) = self.broker_live_table.position_hinted(&key, hint).map(|at| self.broker_live_table.at_mut(at))
        else {
            let info = BrokerLiveInfo {
                last_update_timestamp: now,
                heartbeat_timeout_millis: timeout,
                data_version,
                channel,
                ha_server_addr: req.ha_server_addr,
            };
            self.live_floor.lower_to(&info);
            self.broker_live_table.insert(key, info);
            self.bump();
            return None;
        };
        let previous = prev.channel;
        let new_ha_addr = prev.ha_server_addr != req.ha_server_addr;
        let visible_change = prev.heartbeat_timeout_millis != timeout
            || prev.data_version != data_version
            || prev.channel != channel
            || new_ha_addr;
        prev.last_update_timestamp = now;
        prev.heartbeat_timeout_millis = timeout;
        prev.data_version = data_version;
        prev.channel = channel;
        prev.ha_server_addr = req.ha_server_addr;
        self.live_floor.lower_to(prev);
        if visible_change {
            self.bump();
        }
        Some(previous)
    }

    /// Step 12: `None` leaves the entry alone, an empty list removes it, a list replaces it.
    fn update_filter_servers(&mut self, key: BrokerAddrInfo, req: &RegisterBrokerRequest) {
        let changed = match &req.filter_server_list {
            None => false,
            Some(list) if list.is_empty() => self.filter_server_table.remove(&key).is_some(),
            Some(list) if self.filter_server_table.get(&key) == Some(list) => false,
            Some(list) => {
                self.filter_server_table.insert(key, list.clone());
                true
            }
        };
        if changed {
            self.bump();
        }
    }

    /// Step 13: a slave learns its master's address and HA address, but only while the master
    /// (looked up under the *registrant's* cluster) has a live entry.
    ///
    /// `hint` is where that entry was found last time. Master and slave of a group register at
    /// nearly the same moments, so the master's entry is usually still cached; the hash slot a
    /// plain lookup probes is not (0.6 misses a registration round, 1.3% of the RocketMQ bench's
    /// simulated last-level misses).
    fn master_of(&self, req: &RegisterBrokerRequest, g: usize, hint: &mut Hint) -> RegisterBrokerResult {
        if req.broker_id == MASTER_ID {
            return RegisterBrokerResult::default();
        }
        let Some(master_addr) = self.broker_addr_table.at(g).broker_addrs.get(&MASTER_ID) else {
            return RegisterBrokerResult::default();
        };
        let master_key = BrokerAddrInfo::new(req.cluster_name, *master_addr);
        match self.broker_live_table.position_hinted(&master_key, hint).map(|at| self.broker_live_table.at(at)) {
            Some(live) => {
                RegisterBrokerResult { ha_server_addr: Some(live.ha_server_addr), master_addr: Some(*master_addr) }
            }
            None => RegisterBrokerResult::default(),
        }
    }
}
