//! The two heartbeat paths (reference §2.2), BROKER_HEARTBEAT and QUERY_DATA_VERSION: both
//! refresh an existing live entry and never create one.

use super::outcome::QueryDataVersionOutcome;
use super::RouteInfoManager;
use crate::rocketmq::types::{BrokerAddrInfo, DataVersion};
use crate::sim::clock::SimTime;
use crate::sim::keyed::Hint;

impl RouteInfoManager {
    /// BROKER_HEARTBEAT (§2.2): refreshes the timestamp of an *existing* entry and nothing
    /// else. It never re-creates an expired or unregistered broker — only REGISTER_BROKER does.
    /// Returns whether an entry was refreshed. Does not move the revision.
    pub fn update_broker_info_update_timestamp(&mut self, now: SimTime, cluster: &str, addr: &str) -> bool {
        match self.broker_live_table.get_mut(&BrokerAddrInfo::new(cluster, addr)) {
            Some(live) => {
                live.last_update_timestamp = now;
                self.live_floor.lower_to(live);
                true
            }
            None => false,
        }
    }

    /// QUERY_DATA_VERSION (§2.2): `changed` is computed *before* the refresh, then the
    /// timestamp is refreshed (existing entries only) and the stored DataVersion returned.
    pub fn query_broker_topic_config(
        &mut self,
        now: SimTime,
        cluster: &str,
        addr: &str,
        dv: &DataVersion,
    ) -> QueryDataVersionOutcome {
        let changed = self.is_broker_topic_config_changed(cluster, addr, dv);
        let refreshed = self.update_broker_info_update_timestamp(now, cluster, addr);
        let stored = self.broker_live_table.get(&BrokerAddrInfo::new(cluster, addr)).map(|l| l.data_version);
        QueryDataVersionOutcome { changed, stored, refreshed }
    }

    /// `isBrokerTopicConfigChanged`: no live entry, or a DataVersion that differs in any of its
    /// three fields.
    pub fn is_broker_topic_config_changed(&self, cluster: &str, addr: &str, dv: &DataVersion) -> bool {
        self.changed_at(BrokerAddrInfo::new(cluster, addr), dv, &mut Hint::default())
    }

    /// Whether `key`'s live entry is absent or holds another DataVersion; `hint` is where the
    /// entry was last found (see [`crate::sim::keyed::KeyedMap::position_hinted`]).
    pub(super) fn changed_at(&self, key: BrokerAddrInfo, dv: &DataVersion, hint: &mut Hint) -> bool {
        let live = self.broker_live_table.position_hinted(&key, hint).map(|at| self.broker_live_table.at(at));
        live.is_none_or(|live| live.data_version != *dv)
    }
}
