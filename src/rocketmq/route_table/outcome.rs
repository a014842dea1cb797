//! What each route-table call did, as plain data: the reply an actor sends, the effects it must
//! carry out (notices, unregister requests), and enough per-step detail for explain mode.

use crate::rocketmq::types::{BrokerAddrInfo, BrokerAddrs, DataVersion, UnregisterRequest};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ChannelId;
use crate::sim::name::Name;

/// `RegisterBrokerResult`: the REGISTER_BROKER reply header. Both fields stay `None` (Java:
/// null) for a master, and for a slave whose master has no live entry (§2.1 step 13).
/// Interned addresses: a slave's answer is built at every registration, 30 s after 30 s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegisterBrokerResult {
    pub ha_server_addr: Option<Name>,
    pub master_addr: Option<Name>,
}

/// Why `registerBroker` returned before claiming its id (§2.1 steps 6–7). Steps 1–5 have
/// already been applied in every case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterStop {
    /// Step 6: another address holds this id and its live entry carries a higher
    /// `stateVersion`. The newcomer's own live entry is removed and an *empty, non-null* result
    /// returned, so the broker still sees SUCCESS.
    Conflict { old_addr: String, old_state_version: u64, new_state_version: u64, live_entry_removed: bool },
    /// Step 7: an unknown id registering a one-topic body (issue #4522). Java returns null and
    /// the processor answers SYSTEM_ERROR "register broker failed".
    SingleTopicGuard,
    /// A `None` wrapper reached a step that dereferences it (6 or 7). Java throws a
    /// NullPointerException there, `registerBroker` catches it and returns the empty result.
    /// (The request processor never passes null; only a direct caller can get here.)
    NullWrapper { step: u8 },
}

/// The registering broker's role, decided at §2.1 step 9 after it claimed its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrokerRole {
    /// Id 0: writes its topics.
    Master,
    /// The smallest id of a master-less group, from a broker that sends `enableActingMaster`:
    /// writes its topics too (read-only when the group has acting master enabled).
    PrimeSlave,
    /// Any other slave: never touches topicQueueTable.
    Slave,
}

/// How step 10b's per-topic loop was handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopicPass {
    /// The loop did not apply: no wrapper, a plain slave, or the registration stopped early.
    NotEligible,
    /// The memo proved Java's loop would change nothing, so it was not run (see `memo.rs`).
    Skipped,
    /// Java's loop ran over this many topic configs.
    Ran { topics: usize },
}

/// Everything one `registerBroker` call did, in step order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterOutcome {
    /// The reply: `None` is Java's null (SYSTEM_ERROR); `Some` is SUCCESS.
    pub result: Option<RegisterBrokerResult>,
    /// Step 2 created the group, or step 8 found the id unclaimed.
    pub register_first: bool,
    /// Step 5: `(id, addr)` entries dropped because this address re-registered under another id.
    pub switched_ids: Vec<(u64, String)>,
    /// Step 6 fired (the details are in `stopped`).
    pub conflict: bool,
    /// Set when the call returned before step 8.
    pub stopped: Option<RegisterStop>,
    /// Step 9, when reached.
    pub role: Option<BrokerRole>,
    /// Step 10a: topics whose QueueData for this broker was deleted because the body lacks them.
    pub topics_deleted: Vec<String>,
    /// Step 10a: of those, topics that lost their last QueueData and were dropped.
    pub topics_removed: Vec<String>,
    pub topic_pass: TopicPass,
    /// Step 10b: topics whose QueueData for this broker was created or replaced.
    pub topics_updated: Vec<String>,
    /// Step 11 replaced an existing live entry (false: a new one was created).
    pub live_entry_replaced: bool,
    /// The channel the replaced live entry held: a different one means the broker came back on
    /// a new connection (a restart or reconnect) while its old entry was still there.
    pub previous_channel: Option<ChannelId>,
    /// Step 14: the notice to send, when the flag is on and the smallest id dropped. Boxed: it
    /// is rare, and in line it was half the outcome's size, which every registration returns
    /// (a `memcpy` call of its 300-odd bytes at each).
    pub min_broker_id_changed: Option<Box<MinBrokerIdChange>>,
}

impl RegisterOutcome {
    pub(super) fn new() -> Self {
        RegisterOutcome {
            result: None,
            register_first: false,
            switched_ids: Vec::new(),
            conflict: false,
            stopped: None,
            role: None,
            topics_deleted: Vec::new(),
            topics_removed: Vec::new(),
            topic_pass: TopicPass::NotEligible,
            topics_updated: Vec::new(),
            live_entry_replaced: false,
            previous_channel: None,
            min_broker_id_changed: None,
        }
    }
}

/// The QUERY_DATA_VERSION answer (§2.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryDataVersionOutcome {
    /// `isBrokerTopicConfigChanged`, computed *before* the refresh: true when no live entry
    /// exists or its DataVersion differs from the broker's.
    pub changed: bool,
    /// The stored DataVersion (the response body); `None` when there is no live entry.
    pub stored: Option<DataVersion>,
    /// Whether a live entry existed and had its timestamp refreshed.
    pub refreshed: bool,
}

/// `NOTIFY_MIN_BROKER_ID_CHANGE` (§2.10): a notice the actor sends oneway to `notify_addrs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MinBrokerIdChange {
    pub broker_name: String,
    pub min_broker_id: u64,
    pub min_broker_addr: String,
    /// Set on the unregister path: the address that went away.
    pub offline_broker_addr: Option<String>,
    /// Set on the register path: the registering broker's HA address.
    pub ha_broker_addr: Option<String>,
    /// `chooseBrokerAddrsToNotify`.
    pub notify_addrs: Vec<String>,
}

impl MinBrokerIdChange {
    /// Builds the notice for a group's current members; `None` for an empty group (Java
    /// returns before sending).
    pub(super) fn for_group(
        broker_name: &str,
        addrs: &BrokerAddrs,
        offline_broker_addr: Option<String>,
        ha_broker_addr: Option<String>,
    ) -> Option<Self> {
        let (&min_broker_id, min_broker_addr) = addrs.iter().next()?;
        // chooseBrokerAddrsToNotify: when someone went offline, or the group has one member,
        // tell everyone; when a newcomer took the smallest id, tell everyone else (the
        // newcomer already knows).
        let notify_addrs = if offline_broker_addr.is_some() || addrs.len() == 1 {
            addrs.values().map(Name::to_string).collect()
        } else {
            addrs.iter().filter(|(&id, _)| id != min_broker_id).map(|(_, a)| a.to_string()).collect()
        };
        Some(MinBrokerIdChange {
            broker_name: broker_name.to_string(),
            min_broker_id,
            min_broker_addr: min_broker_addr.to_string(),
            offline_broker_addr,
            ha_broker_addr,
            notify_addrs,
        })
    }
}

/// What §2.3 steps 1–5 did for one request of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnregisterStep {
    pub request: UnregisterRequest,
    /// Step 1.
    pub live_removed: bool,
    /// Step 2.
    pub filter_removed: bool,
    /// Step 3: a BrokerData exists under the request's broker name.
    pub broker_data_found: bool,
    /// Step 3: `(id, addr)` entries removed — by address, whatever their id.
    pub addrs_removed: Vec<(u64, String)>,
    /// Step 3: Java's `isMinBrokerIdChanged` — the *request's* id equalled the group's smallest
    /// id before removal.
    pub min_broker_id_changed: bool,
    /// Step 4: the group survived and the flag above queued it for a step-7 notice.
    pub notify_queued: bool,
    /// Step 4: the group became empty and its BrokerData was removed.
    pub broker_name_removed: bool,
    /// Step 5: the name was removed from the request cluster's set.
    pub cluster_name_removed: bool,
    /// Step 5: that set became empty and the cluster key was dropped.
    pub cluster_dropped: bool,
}

/// Where Java's latent NPE in `cleanTopicByUnRegisterRequests` (§2.3 step 6) would fire: a
/// reduced broker name with QueueData but no BrokerData. Java aborts the cleanup there and
/// skips step 7; removals already applied stay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CleanupAbort {
    pub topic: String,
    pub broker_name: String,
}

/// Everything one batch `unRegisterBroker` call did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnregisterReport {
    /// Steps 1–5, one per request, in batch order.
    pub requests: Vec<UnregisterStep>,
    /// Step 6: `(topic, broker_name)` QueueData removed because the group is gone.
    pub queue_data_removed: Vec<(String, String)>,
    /// Step 6: topics dropped because their last QueueData went.
    pub topics_removed: Vec<String>,
    /// Step 6: `(topic, broker_name)` whose write perm was wiped (acting master, no master left).
    pub write_perm_wiped: Vec<(String, String)>,
    /// Step 6 stopped early, as Java's NPE would.
    pub aborted: Option<CleanupAbort>,
    /// Step 7: notices to send.
    pub notifications: Vec<MinBrokerIdChange>,
}

/// One live entry the scan found expired (§2.4): the actor closes `channel` and submits
/// `request` (when there is one) to the batch unregister queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpiredBroker {
    pub addr_info: BrokerAddrInfo,
    pub last_update: SimTime,
    pub timeout: SimDuration,
    pub channel: ChannelId,
    /// What `setupUnRegisterRequest` builds; `None` for an orphan entry whose address is in no
    /// group of its cluster. Java submits nothing for those, so they stay expired forever.
    pub request: Option<UnregisterRequest>,
}
