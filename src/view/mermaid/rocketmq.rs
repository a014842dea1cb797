//! RocketMQ in the sequence diagram: registrations and heartbeats (folded when periodic), the
//! scan's decision, the unregister batch with its steps as a note, and the clients' polls.

use super::diagram::Diagram;
use super::{process, secs};
use crate::rocketmq::notes::{RegisterReason, RmqNote, UnregisterSource};
use crate::sim::clock::SimTime;
use crate::sim::name::Name;
use crate::view::cast::Cast;

pub(super) fn draw(d: &mut Diagram, cast: &Cast, a: &str, t: SimTime, n: &RmqNote) {
    let owner = process(a);
    match n {
        RmqNote::RegisterSent { reason, namesrvs, .. } => {
            for ns in namesrvs.iter() {
                if *reason == RegisterReason::Periodic {
                    d.routine_sent(a, ns, t, "REGISTER_BROKER (periodic)");
                } else {
                    d.sent(a, ns, t, &format!("REGISTER_BROKER ({})", reason_text(*reason)));
                }
            }
        }
        RmqNote::HeartbeatSent { .. } => d.routine(a, a, t, "QUERY_DATA_VERSION heartbeat to every name server"),
        RmqNote::Registered(r) if r.first || r.new_channel => {
            let (broker, first) = (r.broker(), r.first);
            let what =
                if first { "first registration" } else { "re-registered on a new channel, old entry still there" };
            d.note(a, t, &format!("registerBroker {broker}: {what}"));
        }
        RmqNote::HeartbeatIgnored { broker } => {
            d.note(a, t, &format!("heartbeat from {broker} ignored: cannot resurrect"))
        }
        RmqNote::RegisterRefused { broker, reason } => d.note(a, t, &format!("{broker} refused: {reason}")),
        RmqNote::UnregisterSent { namesrv } => d.sent(a, namesrv, t, "UNREGISTER_BROKER"),
        RmqNote::ScanTick { expired: 0, .. } => d.routine(a, a, t, "scanNotActiveBroker: nothing expired"),
        RmqNote::Expired { addr, silent, timeout, last_update, .. } => {
            // The expiry counts from the last registration this name server took: its arrow
            // stays out of the folds, so the diagram shows what the line counts from.
            if let Some(broker) = cast.broker(addr) {
                d.cite(broker, owner, "REGISTER_BROKER", *last_update);
            }
            d.note(a, t, &format!("scanNotActiveBroker: {addr} silent {} > {}", secs(*silent), secs(*timeout)));
            d.arrow(a, &format!("{owner}/batcher"), "->>", t, &format!("submit unregister {addr}"));
        }
        RmqNote::UnregisterQueued { broker, source, .. } => {
            let why = match source {
                UnregisterSource::ChannelClosed => "onChannelDestroy",
                UnregisterSource::Request => "UNREGISTER_BROKER",
                UnregisterSource::Scan => "scan",
            };
            d.arrow(a, &format!("{owner}/batcher"), "->>", t, &format!("submit unregister {broker} ({why})"));
        }
        RmqNote::QueueFull { broker, .. } => d.note(a, t, &format!("queue full: {broker} dropped")),
        RmqNote::BatchTaken { size } => d.arrow(a, owner, "->>", t, &format!("unRegisterBroker(batch of {size})")),
        RmqNote::BatchApplied(batch) => d.note(a, t, &batch.steps.join("<br/>")),
        RmqNote::RouteChanged { topic, namesrv, brokers, .. } => {
            let brokers = brokers.iter().map(Name::as_str).collect::<Vec<_>>().join(", ");
            d.arrow(a, namesrv, "->>", t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}"));
            d.arrow(namesrv, a, "-->>", t, &format!("route [{brokers}]"));
        }
        RmqNote::TopicNotExistKeptOld { topic, namesrv, .. } => {
            d.arrow(a, namesrv, "->>", t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}"));
            d.arrow(namesrv, a, "-->>", t, "TOPIC_NOT_EXIST");
            d.note(a, t, "keeps its old route");
        }
        RmqNote::TopicNotExist { topic, namesrv } => {
            d.arrow(a, namesrv, "->>", t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}"));
            d.arrow(namesrv, a, "-->>", t, "TOPIC_NOT_EXIST");
        }
        RmqNote::RoutePolled { topic, namesrv } => {
            d.routine(a, namesrv, t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}: unchanged"))
        }
        RmqNote::PollFailed { namesrv, reason } => d.note(a, t, &format!("poll to {namesrv} failed: {reason}")),
        RmqNote::WritePermWiped { broker_name, topics } => {
            d.note(a, t, &format!("wipeWritePerm {broker_name}: {topics} topics"))
        }
        RmqNote::WritePermAdded { broker_name, topics } => {
            d.note(a, t, &format!("addWritePerm {broker_name}: {topics} topics"))
        }
        RmqNote::TopicDeleted { topic, .. } => d.note(a, t, &format!("deleteTopic {topic}")),
        RmqNote::TopicRegistered { topic, complete, .. } => {
            let how = if *complete { "" } else { ": stopped at an unknown group" };
            d.note(a, t, &format!("registerTopic {topic}{how}"))
        }
        RmqNote::TopicsChanged { detail, .. } => d.note(a, t, &format!("topics changed: {detail}")),
        RmqNote::BrokerIdChanged { from, to } => d.note(a, t, &format!("brokerId {from} → {to}")),
        RmqNote::PermissionChanged { perm } => d.note(a, t, &format!("brokerPermission {perm}")),
        RmqNote::ShutdownComplete => d.note(a, t, "shutdown complete"),
        RmqNote::MinBrokerIdChanged { broker_name, min_id, .. } => {
            d.note(a, t, &format!("notifyMinBrokerIdChanged {broker_name}: min id {min_id}"))
        }
        // Sends fold by what happened to them, never by their numbers and times, so a stream of
        // them is one line with a count.
        RmqNote::SendDone { ok: true, attempts: 1, .. } => d.routine(a, a, t, "send: SEND_OK"),
        RmqNote::SendDone { ok: true, .. } => d.routine(a, a, t, "send: SEND_OK after a retry on another broker"),
        // Failures too: a broker that fails every send it gets would otherwise draw one note per
        // send, hundreds a minute; folded, the loop says how many failed and how.
        RmqNote::SendDone { ok: false, result, .. } => d.routine(a, a, t, &format!("send FAILED: {result}")),
        RmqNote::SendAttemptFailed { broker, why, .. } => {
            let exception = why.split(':').next().unwrap_or(why);
            d.routine(a, a, t, &format!("attempt to {broker} failed: {exception}"))
        }
        RmqNote::SendRefused { topic, code, .. } => d.routine(a, a, t, &format!("SEND_MESSAGE {topic}: {code}")),
        _ => {}
    }
}

fn reason_text(r: RegisterReason) -> &'static str {
    match r {
        RegisterReason::Startup => "start-up",
        RegisterReason::Periodic => "periodic",
        RegisterReason::TopicsChanged => "topics changed",
        RegisterReason::IdChanged => "broker id changed",
        RegisterReason::PermissionChanged => "permission changed",
        RegisterReason::ChosenVersion => "a chosen DataVersion",
    }
}
