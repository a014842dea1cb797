//! The default name of each fault and action: how the timeline prints it, and what an
//! expectation anchors on when the event has no `name`.

use super::Action;
use crate::rocketmq::broker::TopicChange;

/// The default name of an event: its verb and target, as the timeline prints it.
pub fn describe(a: &Action) -> String {
    match a {
        Action::Crash(p) => format!("crash {p}"),
        Action::HostDown(p) => format!("host_down {p}"),
        Action::Hang(p) => format!("hang {p}"),
        Action::Resume(p) => format!("resume {p}"),
        Action::Shutdown(p) => format!("shutdown {p}"),
        Action::Restart(p) => format!("restart {p}"),
        Action::Partition(groups) => {
            let g: Vec<String> = groups.iter().map(|g| g.join(",")).collect();
            format!("partition {}", g.join(" | "))
        }
        Action::Block { from, to } => format!("block {from} -> {to}"),
        Action::Heal(None) => "heal all".into(),
        Action::Heal(Some(n)) => format!("heal {n}"),
        Action::Loss { from, to, rate, both_ways } => format!("loss {from} {} {to} {rate}", arrow(*both_ways)),
        Action::Latency { from, to, base, jitter, both_ways } => {
            format!("latency {from} {} {to} {base}+{jitter}", arrow(*both_ways))
        }
        Action::WipeWritePerm { broker_name, .. } => format!("wipe_write_perm {broker_name}"),
        Action::AddWritePerm { broker_name, .. } => format!("add_write_perm {broker_name}"),
        Action::DeleteTopic { topic, .. } => format!("delete_topic {topic}"),
        Action::RegisterTopic { topic, queues, .. } => {
            let groups: Vec<&str> = queues.iter().map(|q| q.broker_name.as_str()).collect();
            format!("register_topic {topic} on [{}]", groups.join(", "))
        }
        Action::UnregisterBroker { request, .. } => format!("unregister_broker {request}"),
        Action::RegisterBroker { broker, version } => format!("register_broker {broker} with DataVersion {version}"),
        Action::Topic { broker, change: TopicChange::Upsert(t) } => {
            format!("upsert_topic {} on {broker}", t.topic_name)
        }
        Action::Topic { broker, change: TopicChange::Delete(t) } => format!("remove_topic {t} on {broker}"),
        Action::SetBrokerId { broker, id } => format!("set_broker_id {broker} {id}"),
        Action::BrokerPermission { broker, perm } => {
            format!("broker_permission {broker} {}", crate::rocketmq::types::perm::to_text(*perm))
        }
        Action::UpdateMetadata { instance, .. } => format!("update_metadata {instance}"),
        Action::Deregister { instance, .. } => format!("deregister {instance}"),
        Action::NacosSwitch { servers, switches } => {
            let mut set = Vec::new();
            if let Some(i) = switches.client_beat_interval {
                set.push(format!("clientBeatInterval={i}"));
            }
            if let Some(l) = switches.light_beat_enabled {
                set.push(format!("lightBeatEnabled={l}"));
            }
            format!("nacos_switch {} {}", servers.join(","), set.join(" "))
        }
    }
}

fn arrow(both_ways: bool) -> &'static str {
    if both_ways {
        "<->"
    } else {
        "->"
    }
}
