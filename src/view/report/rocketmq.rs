//! RocketMQ rows of the report: registrations, heartbeats, scans, batches and polls as marks;
//! each broker's time in a name server's live table with its "alive until" window; route
//! membership per name server and per client.

use super::model::{process, Builder};
use crate::rocketmq::notes::{Registration, RmqNote, UnregisterBatch};
use crate::sim::clock::SimTime;
use crate::sim::scenario::Scenario;

pub(super) fn rows(b: &mut Builder, s: &Scenario, a: &str, t: SimTime, n: &RmqNote, text: &str) {
    let ns = process(a).to_string();
    let user_topic = |topic: &str| s.brokers.iter().any(|br| br.topics.iter().any(|x| x.topic_name == topic));
    match n {
        RmqNote::RegisterSent { .. } => b.mark(a, t, "register", text.to_string()),
        RmqNote::HeartbeatSent { .. } => b.mark(a, t, "heartbeat", text.to_string()),
        RmqNote::Registered(r) => {
            let Registration { addr, cluster, broker_name, topics_updated, timeout, .. } = r;
            b.mark(a, t, "register", text.to_string());
            let broker = broker_label(s, cluster, addr);
            let row = b.row(&format!("{ns} · live {broker}"), "live", &ns);
            b.open_bar(row, t, "present", format!("{broker} in {ns}'s brokerLiveTable"));
            b.last_reg.insert((ns.clone(), addr.to_string()), (t, *timeout));
            for topic in topics_updated.iter().filter(|t| user_topic(t)) {
                let row = b.row(&format!("{ns} · {topic} · {broker_name}"), "route", &ns);
                b.open_bar(row, t, "route", format!("{broker_name} serves {topic} at {ns}"));
            }
        }
        RmqNote::HeartbeatRefreshed { .. } => b.mark(a, t, "heartbeat", text.to_string()),
        RmqNote::ScanTick { .. } => b.mark(a, t, "scan", text.to_string()),
        RmqNote::Expired { .. } => b.mark(a, t, "expire", text.to_string()),
        RmqNote::BatchTaken { .. } => b.mark(a, t, "batch", text.to_string()),
        RmqNote::BatchApplied(batch) => {
            let UnregisterBatch { live_removed, queue_data_removed, .. } = &**batch;
            b.mark(a, t, "batch", text.to_string());
            for key in live_removed {
                let (cluster, addr) = key.split_once('/').unwrap_or(("", key));
                let broker = broker_label(s, cluster, addr);
                let row = b.row(&format!("{ns} · live {broker}"), "live", &ns);
                b.close_bar(row, t);
                if let Some((last, timeout)) = b.last_reg.remove(&(ns.clone(), addr.to_string())) {
                    let detail = format!(
                        "alive until {} (last registration {last} + {timeout}); removed at {t}",
                        last + timeout
                    );
                    b.bar(row, last, last + timeout, "alive", detail);
                }
            }
            for (topic, broker_name) in queue_data_removed.iter().filter(|(t, _)| user_topic(t)) {
                let row = b.row(&format!("{ns} · {topic} · {broker_name}"), "route", &ns);
                b.close_bar(row, t);
            }
        }
        RmqNote::RouteChanged { topic, brokers, .. } => {
            b.mark(a, t, "poll", text.to_string());
            let prefix = format!("{a} · {topic} · ");
            for row in b.rows_with_prefix("route", &prefix) {
                let name = b.m.rows[row].label[prefix.len()..].to_string();
                if !brokers.iter().any(|b| *b == name) {
                    b.close_bar(row, t);
                }
            }
            for broker in brokers {
                let row = b.row(&format!("{prefix}{broker}"), "route", a);
                b.open_bar(row, t, "route", format!("{broker} in {a}'s route for {topic}"));
            }
        }
        RmqNote::RoutePolled { .. }
        | RmqNote::TopicNotExist { .. }
        | RmqNote::TopicNotExistKeptOld { .. }
        | RmqNote::PollFailed { .. } => b.mark(a, t, "poll", text.to_string()),
        RmqNote::SendDone { ok, attempts, elapsed, .. } => {
            b.sends.record(a, t, *ok, *attempts, *elapsed);
            // A send stored at the first attempt is the steady state: hundreds a second would
            // bury the lane, and the producer's chart counts it. Failures and retries are what a
            // reader looks for.
            match (ok, attempts) {
                (true, 1) => {}
                (false, _) => b.mark(a, t, "drop", text.to_string()),
                _ => b.mark(a, t, "other", text.to_string()),
            }
        }
        RmqNote::SendAttemptFailed { .. } | RmqNote::SendRefused { .. } => b.mark(a, t, "drop", text.to_string()),
        _ => b.mark(a, t, "other", text.to_string()),
    }
}

/// The broker process behind a (cluster, address), or the address.
fn broker_label(s: &Scenario, cluster: &str, addr: &str) -> String {
    s.brokers
        .iter()
        .find(|b| b.config.addr == addr && (cluster.is_empty() || b.config.cluster == cluster))
        .map_or_else(|| addr.to_string(), |b| b.name.clone())
}
