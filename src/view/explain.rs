//! Explain mode: a narrated walk through the key moments of a run, naming the real methods and
//! showing how the name servers' tables changed at each step.
//!
//! The explainer watches the trace like any observer. It keeps a snapshot of every name
//! server's tables; when an event changes them, the moment gets the lines that left and the
//! lines that arrived. Routine traffic is skipped.

use crate::rocketmq::notes::{RmqNote, UnregisterSource};
use crate::rocketmq::route_table::RouteInfoManager;
use crate::rocketmq::types::perm;
use crate::sim::clock::SimTime;
use crate::sim::notes::{CheckNote, FaultNote, NetNote, What};
use crate::sim::trace::TraceEvent;
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// One key moment.
pub struct Moment {
    pub t: SimTime,
    pub actor: String,
    /// What happened, in the code's own terms.
    pub story: Vec<String>,
    /// Per name server whose tables this moment changed: the rows of the affected tables
    /// before and after.
    pub changes: Vec<TableChange>,
}

pub struct TableChange {
    pub namesrv: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// The table a row belongs to: its first word.
fn table_of(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or("")
}

#[derive(Default)]
pub struct Explainer {
    /// Each name server's rows as last seen.
    snapshots: BTreeMap<String, BTreeSet<String>>,
    pub moments: Vec<Moment>,
}

/// A row without its refresh timestamp: a registration that only moves `lastUpdateTimestamp`
/// is routine, not a change worth a moment.
fn shape(line: &str) -> String {
    match (line.find("last update "), line.find(", timeout")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &line[..a], &line[b..]),
        _ => line.to_string(),
    }
}

/// Every row of a name server's five tables, one sorted line each.
pub fn table_lines(t: &RouteInfoManager) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (k, v) in t.broker_live_table() {
        out.insert(format!(
            "brokerLiveTable   {k}: last update {}, timeout {}, {}",
            v.last_update_timestamp, v.heartbeat_timeout_millis, v.channel
        ));
    }
    for (name, g) in t.broker_addr_table() {
        let ids: Vec<String> = g.broker_addrs.iter().map(|(id, a)| format!("{id}={a}")).collect();
        let acting = if g.enable_acting_master { ", acting master" } else { "" };
        out.insert(format!("brokerAddrTable   {name}: {{{}}}{acting}", ids.join(", ")));
    }
    for (cluster, names) in t.cluster_addr_table() {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        out.insert(format!("clusterAddrTable  {cluster}: [{}]", names.join(", ")));
    }
    for (topic, qs) in t.topic_queue_table() {
        for (b, q) in qs {
            out.insert(format!(
                "topicQueueTable   {topic} / {b}: {} {}r/{}w",
                perm::to_text(q.perm),
                q.read_queue_nums,
                q.write_queue_nums
            ));
        }
    }
    out
}

impl Explainer {
    pub fn on_event(&mut self, e: &TraceEvent, world: &World) {
        let story = story(e);
        let mut changes = Vec::new();
        for ns in world.namesrv_names() {
            let now: BTreeSet<String> = world.namesrv(&ns).map(|t| table_lines(&t.borrow())).unwrap_or_default();
            let empty = BTreeSet::new();
            let old = self.snapshots.get(&ns).unwrap_or(&empty);
            let (old_shape, now_shape): (BTreeSet<String>, BTreeSet<String>) =
                (old.iter().map(|l| shape(l)).collect(), now.iter().map(|l| shape(l)).collect());
            let touched: BTreeSet<&str> = old_shape.symmetric_difference(&now_shape).map(|l| table_of(l)).collect();
            if !touched.is_empty() {
                let rows =
                    |set: &BTreeSet<String>| set.iter().filter(|l| touched.contains(table_of(l))).cloned().collect();
                changes.push(TableChange { namesrv: ns.clone(), before: rows(old), after: rows(&now) });
            }
            self.snapshots.insert(ns, now);
        }
        if story.is_empty() && changes.is_empty() {
            return;
        }
        let story = if story.is_empty() { vec![e.what.to_string()] } else { story };
        self.moments.push(Moment { t: e.t, actor: e.actor.to_string(), story, changes });
    }
}

/// The narration of one event, or nothing for routine ones.
fn story(e: &TraceEvent) -> Vec<String> {
    match &e.what {
        What::Fault(FaultNote::Applied { action, .. }) => vec![format!("FAULT {action}: {}", fault_meaning(action))],
        What::Net(NetNote::Closed { channel, by, peer, reason, fin }) => vec![if *fin {
            format!("{by} closes {channel} ({reason}); {peer} receives the FIN: its Netty pipeline raises CLOSE")
        } else {
            format!("{by} closes {channel} ({reason}); no FIN reaches {peer}, whose end stays half-open")
        }],
        What::Net(NetNote::Reset { channel, from, to, msg }) => {
            vec![format!("{msg} from {from} hits {to}'s closed end of {channel}: RST, {from} reconnects next time")]
        }
        What::Rmq(n) => rmq_story(n),
        What::Check(CheckNote::Held { name, converged }) => {
            vec![format!(
                "expectation \"{name}\" held{}",
                converged.map(|c| format!(", converged after {c}")).unwrap_or_default()
            )]
        }
        What::Check(CheckNote::Failed { name, at, detail }) => {
            vec![format!("expectation \"{name}\" FAILED at {at}: {detail}")]
        }
        What::Check(CheckNote::Violated { invariant, at, detail }) => {
            vec![format!("invariant {invariant} VIOLATED at {at}: {detail}")]
        }
        _ => Vec::new(),
    }
}

fn fault_meaning(action: &str) -> &'static str {
    match action.split_whitespace().next() {
        Some("crash") => "kill -9 with the host alive: the OS closes every socket of the process",
        Some("host_down") => "the host dies: no socket is closed, peers keep half-open channels",
        Some("hang") => "SIGSTOP: sockets stay open, input waits, no task runs",
        Some("resume") => "SIGCONT: buffered input and overdue scheduled tasks run now",
        Some("shutdown") => "SIGTERM: the shutdown hook runs (a broker calls unregisterBrokerAll)",
        Some("restart") => "the process starts again with empty in-memory tables",
        Some("partition") | Some("block") => "packets across the cut vanish; nothing is closed",
        Some("heal") => "the cut is gone",
        _ => "an operator command",
    }
}

fn rmq_story(n: &RmqNote) -> Vec<String> {
    match n {
        RmqNote::Registered { broker, first, new_channel, topics_updated, timeout, channel, .. } if *first || *new_channel || !topics_updated.is_empty() => {
            let kind = if *first { "first registration (registerFirst)" } else if *new_channel { "re-registration on a new channel" } else { "topic config changed" };
            vec![format!(
                "DefaultRequestProcessor#registerBroker → RouteInfoManager#registerBroker({broker}) on {channel}: {kind}; QueueData updated for [{}]; BrokerLiveInfo replaced, expiring {timeout} after silence",
                topics_updated.join(", ")
            )]
        }
        RmqNote::HeartbeatIgnored { broker } => vec![format!("updateBrokerInfoUpdateTimestamp({broker}): no live entry — a heartbeat never resurrects a broker; only REGISTER_BROKER does")],
        RmqNote::RegisterRefused { broker, reason } => vec![format!("RouteInfoManager#registerBroker({broker}) refused: {reason}")],
        RmqNote::Expired { cluster, addr, last_update, silent, timeout, queued } => vec![format!(
            "NamesrvController scan task → RouteInfoManager#scanNotActiveBroker: {cluster}/{addr} last update {last_update} + {timeout} < now (silent {silent}) → RemotingHelper.closeChannel + onChannelDestroy(BrokerAddrInfo) → {}",
            if *queued { "BatchUnregistrationService#submit" } else { "nothing: no group lists this address (orphan entry)" }
        )],
        RmqNote::UnregisterQueued { broker, source, .. } => vec![match source {
            UnregisterSource::ChannelClosed => format!("BrokerHousekeepingService#onChannelClose → RouteInfoManager#onChannelDestroy(Channel): the live entry holding that channel is {broker} → BatchUnregistrationService#submit"),
            UnregisterSource::Request => format!("DefaultRequestProcessor#unregisterBroker({broker}): queued, answered SUCCESS at once"),
            UnregisterSource::Scan => format!("scan submits {broker}"),
        }],
        RmqNote::QueueFull { broker, capacity } => vec![format!("BatchUnregistrationService#submit: queue full ({capacity}), {broker} dropped (Java only logs it)")],
        RmqNote::BatchTaken { size } => vec![format!("BatchUnregistrationService#run: take() + drainTo() → a batch of {size}")],
        RmqNote::BatchApplied { steps, .. } => {
            let mut v = vec!["RouteInfoManager#unRegisterBroker(Set) under one write lock, then cleanTopicByUnRegisterRequests:".to_string()];
            v.extend(steps.iter().map(|s| format!("  {s}")));
            v
        }
        RmqNote::RouteChanged { topic, namesrv, view, .. } => vec![format!("MQClientInstance#updateTopicRouteInfoFromNameServer({topic}) from {namesrv}: route changed → {view}")],
        RmqNote::TopicNotExistKeptOld { topic, namesrv, view } => vec![format!("MQClientInstance#updateTopicRouteInfoFromNameServer({topic}) from {namesrv}: TOPIC_NOT_EXIST → MQClientException caught, old route kept: {view}")],
        RmqNote::PollFailed { namesrv, reason } => vec![format!("GET_ROUTEINFO_BY_TOPIC to {namesrv} failed ({reason}): the channel is closed, the next call picks another name server")],
        RmqNote::WritePermWiped { broker_name, topics } => vec![format!("RouteInfoManager#wipeWritePermOfBrokerByLock({broker_name}): {topics} topics read-only")],
        RmqNote::WritePermAdded { broker_name, topics } => vec![format!("RouteInfoManager#addWritePermOfBrokerByLock({broker_name}): {topics} topics set to rw")],
        RmqNote::UnregisterSent { namesrv } => vec![format!("BrokerController#shutdown → BrokerOuterAPI#unregisterBrokerAll: UNREGISTER_BROKER to {namesrv}")],
        RmqNote::TopicsChanged { .. } | RmqNote::BrokerIdChanged { .. } | RmqNote::PermissionChanged { .. } | RmqNote::TopicDeleted { .. } | RmqNote::MinBrokerIdChanged { .. } => {
            vec![n.to_string()]
        }
        _ => Vec::new(),
    }
}

/// The walk as text, from `from` on.
pub fn render(title: &str, moments: &[Moment], from: SimTime) -> String {
    let mut out = format!("== {title}: key moments from {from}\n");
    for m in moments.iter().filter(|m| m.t >= from) {
        let _ = writeln!(out, "\n{} {}", m.t, m.actor);
        for line in &m.story {
            let _ = writeln!(out, "    {line}");
        }
        for c in &m.changes {
            let _ = writeln!(out, "    {} before:", c.namesrv);
            let after_shapes: Vec<String> = c.after.iter().map(|l| shape(l)).collect();
            let before_shapes: Vec<String> = c.before.iter().map(|l| shape(l)).collect();
            for l in &c.before {
                let mark = if after_shapes.contains(&shape(l)) { ' ' } else { '-' };
                let _ = writeln!(out, "      {mark} {l}");
            }
            if c.before.is_empty() {
                let _ = writeln!(out, "        (empty)");
            }
            let _ = writeln!(out, "    {} after:", c.namesrv);
            for l in &c.after {
                let mark = if before_shapes.contains(&shape(l)) { ' ' } else { '+' };
                let _ = writeln!(out, "      {mark} {l}");
            }
            if c.after.is_empty() {
                let _ = writeln!(out, "        (empty)");
            }
        }
    }
    out
}
