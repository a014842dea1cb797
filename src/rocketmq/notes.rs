//! RocketMQ trace events and how the timeline words them.
//!
//! Each line should say what happened *and why*, in RocketMQ's own vocabulary, e.g.
//! `ns1/scanner  a0 silent 125.0s > 120s: close channel, queue unregister`.

use crate::rocketmq::send::SendCode;
use crate::rocketmq::types::{BrokerLabel, DataVersion};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ChannelId;
use crate::sim::name::Name;
use serde::Serialize;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Why a broker sent a full or incremental registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegisterReason {
    Startup,
    Periodic,
    TopicsChanged,
    IdChanged,
    PermissionChanged,
    /// A `register_broker` action: one full registration with a DataVersion chosen by the test.
    ChosenVersion,
}

/// Where an unregister request came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnregisterSource {
    /// `UNREGISTER_BROKER` from a broker shutting down.
    Request,
    /// `BrokerHousekeepingService.onChannelClose/onChannelIdle` → `onChannelDestroy(channel)`.
    ChannelClosed,
    /// `scanNotActiveBroker` → `onChannelDestroy(brokerAddrInfo)`.
    Scan,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RmqNote {
    // ---- broker ----
    RegisterSent {
        reason: RegisterReason,
        /// Shared with the broker, which sends the same list every 30 s.
        namesrvs: Arc<[String]>,
        topics: usize,
        /// Written as its text (`v3@12.000s`).
        #[serde(serialize_with = "version_text")]
        version: DataVersion,
        id: u64,
    },
    HeartbeatSent {
        namesrvs: usize,
    },
    UnregisterSent {
        namesrv: String,
    },
    ShutdownComplete,
    TopicsChanged {
        detail: String,
        version: String,
    },
    BrokerIdChanged {
        from: u64,
        to: u64,
    },
    PermissionChanged {
        perm: &'static str,
    },
    RequestFailed {
        namesrv: String,
        request: &'static str,
        reason: String,
    },

    // ---- name server route table ----
    /// Not boxed: a quarter of a million an hour at bench size, each an allocation and a free,
    /// and at 80 bytes it still fits the 96 a `What` takes for its largest note.
    Registered(Registration),
    RegisterRefused {
        broker: String,
        reason: &'static str,
    },
    HeartbeatRefreshed {
        broker: String,
    },
    /// `updateBrokerInfoUpdateTimestamp` found no entry: a heartbeat cannot resurrect a broker.
    HeartbeatIgnored {
        broker: String,
    },
    UnregisterQueued {
        broker: String,
        source: UnregisterSource,
        queued: bool,
    },
    /// A channel event whose channel no live entry holds (already removed, or replaced).
    ChannelEventIgnored {
        channel: ChannelId,
    },
    /// One `unRegisterBroker` batch: what each step did, structured for reports.
    BatchApplied(Box<UnregisterBatch>),
    MinBrokerIdChanged {
        broker_name: String,
        min_id: u64,
        min_addr: String,
        notify: Vec<String>,
    },
    RouteServed {
        topic: String,
        found: bool,
    },
    /// A broker's `refreshMetadata` poll (`GET_BROKER_CLUSTER_INFO`) answered.
    ClusterInfoServed {
        channel: ChannelId,
    },
    WritePermWiped {
        broker_name: String,
        topics: usize,
    },
    WritePermAdded {
        broker_name: String,
        topics: usize,
    },
    TopicDeleted {
        topic: String,
        cluster: Option<String>,
        removed: bool,
    },
    /// `registerTopic` (REGISTER_TOPIC_IN_NAMESRV): `complete` is false when it stopped at a
    /// group the name server does not know.
    TopicRegistered {
        topic: String,
        queues: usize,
        complete: bool,
    },

    // ---- scanner ----
    ScanTick {
        live: usize,
        expired: usize,
    },
    Expired {
        cluster: String,
        addr: String,
        last_update: SimTime,
        silent: SimDuration,
        timeout: SimDuration,
        queued: bool,
    },

    // ---- batcher ----
    QueueFull {
        broker: String,
        capacity: usize,
    },
    BatchTaken {
        size: usize,
    },

    // ---- route client ----
    RoutePolled {
        topic: String,
        namesrv: String,
    },
    RouteChanged {
        topic: String,
        namesrv: String,
        view: String,
        /// The groups now in the client's route (interned already: a route change of five
        /// hundred groups copies pointers, not texts).
        brokers: Vec<Name>,
    },
    TopicNotExistKeptOld {
        topic: String,
        namesrv: String,
        view: String,
    },
    TopicNotExist {
        topic: String,
        namesrv: String,
    },
    PollFailed {
        namesrv: String,
        reason: String,
    },

    // ---- broker, answering producers ----
    /// A `SEND_MESSAGE` refused (`crate::rocketmq::send`); stored ones are not traced here, the
    /// producer's `SendDone` says it.
    SendRefused {
        topic: String,
        queue: u32,
        code: SendCode,
    },

    // ---- producer ----
    /// One attempt of a send failed; the send tries again or ends.
    SendAttemptFailed {
        producer: Name,
        send: u64,
        /// 0 for the first attempt.
        attempt: u32,
        broker: Name,
        queue: u32,
        why: String,
        latency: SimDuration,
    },
    /// A send ended: `SEND_OK` (or another storing status), or the exception it threw.
    SendDone {
        producer: Name,
        send: u64,
        ok: bool,
        attempts: u32,
        /// The last attempt's broker and queue.
        broker: Option<Name>,
        queue: Option<u32>,
        elapsed: SimDuration,
        /// A stored send's status is a fixed word; only a failure's account is built.
        result: Cow<'static, str>,
    },
}

/// A `registerBroker` the route table accepted (`RmqNote::Registered`). Its reading label,
/// `brokerName[id]@addr` ([`Registration::broker`]), is written out only when the event is:
/// a quarter of a million registrations an hour at bench size, each a formatted `String`
/// nobody read, cost more than the rest of the note.
#[derive(Clone, Debug)]
pub struct Registration {
    /// The request's own (interned) names.
    pub cluster: Name,
    pub addr: Name,
    pub broker_name: Name,
    pub id: u64,
    pub channel: ChannelId,
    pub first: bool,
    /// The live entry it replaced held another channel: the broker reconnected.
    pub new_channel: bool,
    /// Topics whose QueueData for this group was created or replaced.
    pub topics_updated: Vec<String>,
    pub timeout: SimDuration,
}

impl Registration {
    /// `brokerName[id]@addr`, as every other note names a broker.
    pub fn broker(&self) -> BrokerLabel<'_> {
        BrokerLabel { name: &self.broker_name, id: self.id, addr: &self.addr }
    }
}

/// The fields in the order the derived form had, the label first: traces and digests are
/// unchanged.
impl Serialize for Registration {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut r = s.serialize_struct("Registration", 10)?;
        r.serialize_field("broker", &self.broker())?;
        r.serialize_field("cluster", &self.cluster)?;
        r.serialize_field("addr", &self.addr)?;
        r.serialize_field("broker_name", &self.broker_name)?;
        r.serialize_field("id", &self.id)?;
        r.serialize_field("channel", &self.channel)?;
        r.serialize_field("first", &self.first)?;
        r.serialize_field("new_channel", &self.new_channel)?;
        r.serialize_field("topics_updated", &self.topics_updated)?;
        r.serialize_field("timeout", &self.timeout)?;
        r.end()
    }
}

/// One `unRegisterBroker` batch (`RmqNote::BatchApplied`).
#[derive(Clone, Debug, Serialize)]
pub struct UnregisterBatch {
    pub size: usize,
    /// Narration, one line per request (steps 1–5) and per cleanup (6–7).
    pub steps: Vec<String>,
    /// Live entries removed (step 1), as `cluster/addr`.
    pub live_removed: Vec<String>,
    /// Groups removed (step 4).
    pub groups_removed: Vec<String>,
    /// `(topic, broker name)` QueueData removed (step 6).
    pub queue_data_removed: Vec<(String, String)>,
    /// `(topic, broker name)` whose write perm was wiped (step 6).
    pub perm_wiped: Vec<(String, String)>,
}

impl RmqNote {
    pub fn is_routine(&self) -> bool {
        match self {
            RmqNote::RegisterSent { reason, .. } => *reason == RegisterReason::Periodic,
            RmqNote::Registered(r) => !r.first && r.topics_updated.is_empty() && !r.new_channel,
            RmqNote::SendDone { ok, attempts, .. } => *ok && *attempts == 1,
            RmqNote::HeartbeatSent { .. }
            | RmqNote::HeartbeatRefreshed { .. }
            | RmqNote::RouteServed { .. }
            | RmqNote::ClusterInfoServed { .. }
            | RmqNote::ScanTick { .. }
            | RmqNote::RoutePolled { .. } => true,
            _ => false,
        }
    }
}

fn secs(d: SimDuration) -> String {
    format!("{:.1}s", d.millis() as f64 / 1000.0)
}

impl fmt::Display for RmqNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RmqNote::*;
        match self {
            RegisterSent { reason, namesrvs, topics, version, id } => {
                let why = match reason {
                    RegisterReason::Startup => "start-up",
                    RegisterReason::Periodic => "periodic",
                    RegisterReason::TopicsChanged => "topics changed, incremental",
                    RegisterReason::IdChanged => "broker id changed",
                    RegisterReason::PermissionChanged => "brokerPermission changed",
                    RegisterReason::ChosenVersion => "a test's registration with a chosen DataVersion",
                };
                write!(f, "REGISTER_BROKER id={id} {topics} topics {version} -> {} ({why})", namesrvs.join(", "))
            }
            HeartbeatSent { namesrvs } => write!(f, "QUERY_DATA_VERSION heartbeat -> {namesrvs} name servers"),
            UnregisterSent { namesrv } => write!(f, "UNREGISTER_BROKER -> {namesrv} (graceful shutdown)"),
            ShutdownComplete => write!(f, "shutdown complete: remoting closed"),
            TopicsChanged { detail, version } => write!(f, "topics changed: {detail}; DataVersion now {version}"),
            BrokerIdChanged { from, to } => write!(f, "brokerId {from} -> {to}"),
            PermissionChanged { perm } => write!(f, "brokerPermission -> {perm}"),
            RequestFailed { namesrv, request, reason } => write!(f, "{request} to {namesrv} failed: {reason}"),
            Registered(r) => {
                let Registration { channel, first, new_channel, topics_updated, timeout, .. } = r;
                let broker = r.broker();
                let topics_updated = topics_updated.len();
                let kind = match (first, new_channel) {
                    (true, _) => "first registration",
                    (false, true) => "re-registered on a new channel, its old entry still present",
                    (false, false) => "refresh",
                };
                write!(f, "registerBroker {broker} on {channel}: {kind}, {topics_updated} topics updated, expires {} after silence", secs(*timeout))
            }
            RegisterRefused { broker, reason } => write!(f, "registerBroker {broker} refused: {reason}"),
            HeartbeatRefreshed { broker } => write!(f, "heartbeat from {broker}: lastUpdateTimestamp refreshed"),
            HeartbeatIgnored { broker } => {
                write!(f, "heartbeat from {broker} ignored: no live entry, and a heartbeat cannot re-create one")
            }
            UnregisterQueued { broker, source, queued } => {
                let from = match source {
                    UnregisterSource::Request => "UNREGISTER_BROKER request",
                    UnregisterSource::ChannelClosed => "channel closed -> onChannelDestroy",
                    UnregisterSource::Scan => "scan",
                };
                let what = if *queued { "queue unregister" } else { "queue full, request lost" };
                write!(f, "{broker}: {from}: {what}")
            }
            ChannelEventIgnored { channel } => {
                write!(f, "close event for {channel}: no live entry holds it, nothing to do")
            }
            BatchApplied(b) => write!(f, "unRegisterBroker batch of {}: {}", b.size, b.steps.join("; ")),
            MinBrokerIdChanged { broker_name, min_id, min_addr, notify } => write!(
                f,
                "notifyMinBrokerIdChanged {broker_name}: min id {min_id} ({min_addr}) -> notify [{}]",
                notify.join(", ")
            ),
            RouteServed { topic, found } => {
                let answer = if *found { "route" } else { "TOPIC_NOT_EXIST" };
                write!(f, "GET_ROUTEINFO_BY_TOPIC {topic}: {answer}")
            }
            ClusterInfoServed { channel } => write!(f, "GET_BROKER_CLUSTER_INFO on {channel}: answered"),
            WritePermWiped { broker_name, topics } => {
                write!(f, "wipeWritePerm {broker_name}: {topics} topics now read-only")
            }
            WritePermAdded { broker_name, topics } => write!(f, "addWritePerm {broker_name}: {topics} topics now rw"),
            TopicDeleted { topic, cluster: Some(c), removed } => {
                write!(f, "deleteTopic {topic} in cluster {c}: removed={removed}")
            }
            TopicDeleted { topic, cluster: None, removed } => write!(f, "deleteTopic {topic}: removed={removed}"),
            TopicRegistered { topic, queues, complete: true } => {
                write!(f, "registerTopic {topic}: {queues} QueueData stored as given")
            }
            TopicRegistered { topic, queues, complete: false } => write!(
                f,
                "registerTopic {topic}: stopped at a group with no BrokerData ({queues} QueueData given; a new topic keeps none, an existing one those before it)"
            ),
            ScanTick { live, expired } => write!(f, "scanNotActiveBroker: {live} live, {expired} expired"),
            Expired { cluster, addr, last_update, silent, timeout, queued } => {
                let broker = format!("{cluster}/{addr}");
                let then =
                    if *queued { "close channel, queue unregister" } else { "close channel (no route entry: orphan)" };
                write!(f, "{broker} silent {} > {} (last update {last_update}): {then}", secs(*silent), secs(*timeout))
            }
            QueueFull { broker, capacity } => {
                write!(f, "unregister queue full ({capacity}): request for {broker} dropped")
            }
            BatchTaken { size } => write!(f, "take + drainTo: batch of {size}"),
            RoutePolled { topic, namesrv } => write!(f, "route {topic} from {namesrv}: unchanged"),
            RouteChanged { topic, namesrv, view, .. } => write!(f, "route {topic} from {namesrv} changed: {view}"),
            TopicNotExistKeptOld { topic, namesrv, view } => {
                write!(f, "route {topic} from {namesrv}: TOPIC_NOT_EXIST, keeping old route {view}")
            }
            TopicNotExist { topic, namesrv } => write!(f, "route {topic} from {namesrv}: TOPIC_NOT_EXIST"),
            PollFailed { namesrv, reason } => {
                write!(f, "route poll to {namesrv} failed: {reason}; the cached route stays")
            }
            SendRefused { topic, queue, code } => write!(f, "SEND_MESSAGE {topic} q{queue} answered {code}"),
            SendAttemptFailed { producer, send, attempt, broker, queue, why, latency } => {
                write!(
                    f,
                    "{producer} send #{send} attempt {} to {broker} q{queue} failed after {latency}: {why}",
                    attempt + 1
                )
            }
            SendDone { producer, send, ok, attempts, broker, queue, elapsed, result } => {
                let via = match (broker, queue) {
                    (Some(b), Some(q)) => format!(" via {b} q{q}"),
                    _ => String::new(),
                };
                let word = if *ok { "" } else { "FAILED " };
                let tries = if *attempts == 1 { "1 attempt".to_string() } else { format!("{attempts} attempts") };
                write!(f, "{producer} send #{send}: {word}{result}{via} in {elapsed} ({tries})")
            }
        }
    }
}

/// A DataVersion in a note is written as the text it shows (see [`DataVersion::text`]).
fn version_text<S: serde::Serializer>(version: &DataVersion, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(version.text(&mut [0; DataVersion::TEXT_MAX]))
}
