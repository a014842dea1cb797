//! RocketMQ in explain mode: a name server's tables as rows, and the narration of each
//! `RmqNote` in the code's own terms (`registerBroker`, `scanNotActiveBroker`,
//! `onChannelDestroy`, `BatchUnregistrationService`, `unRegisterBroker` steps 1–6,
//! `cleanTopicByUnRegisterRequests`, the client's `updateTopicRouteInfoFromNameServer`).

use crate::rocketmq::notes::{Registration, RmqNote, UnregisterSource};
use crate::rocketmq::route_table::RouteInfoManager;
use crate::rocketmq::types::perm;
use std::collections::BTreeSet;

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
        let names: Vec<&str> = names.iter().map(|name| name.as_str()).collect();
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

pub(super) fn story(n: &RmqNote) -> Vec<String> {
    match n {
        RmqNote::Registered(r) if r.first || r.new_channel || !r.topics_updated.is_empty() => {
            let Registration { first, new_channel, topics_updated, timeout, channel, .. } = r;
            let broker = r.broker();
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
        RmqNote::BatchApplied(batch) => {
            let steps = &batch.steps;
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
        RmqNote::TopicsChanged { .. } | RmqNote::BrokerIdChanged { .. } | RmqNote::PermissionChanged { .. } | RmqNote::TopicDeleted { .. } | RmqNote::TopicRegistered { .. } | RmqNote::MinBrokerIdChanged { .. } => {
            vec![n.to_string()]
        }
        _ => Vec::new(),
    }
}
