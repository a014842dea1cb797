//! Operator actions in generated RocketMQ schedules: `mqadmin updateTopic`, `deleteTopic` and
//! `updateBrokerConfig brokerPermission` on a group's brokers, placed only where every one of
//! them is running (an admin command to a stopped broker is invalid input). Like the faults,
//! they are a plain function of the episodes, so every shrink is still a valid scenario.

use super::gen::{Episode, TOPICS};
use crate::rocketmq::broker::TopicChange;
use crate::rocketmq::types::TopicConfig;
use crate::sim::clock::SimTime;
use crate::sim::scenario::{Action, BrokerSpec, TimedEvent};
use std::collections::BTreeMap;

/// The operator episodes → actions on every broker of the group, at one instant, kept only when
/// every one of them is running then (an admin command to a stopped broker is invalid input).
/// Builds one broker's action.
type PerBroker<'a> = &'a dyn Fn(&str) -> Action;

pub(super) fn actions(episodes: &[Episode], brokers: &[BrokerSpec], events: &mut Vec<TimedEvent>) {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for b in brokers {
        groups.entry(b.config.broker_name.as_str()).or_default().push(&b.name);
    }
    let groups: Vec<Vec<&str>> = groups.into_values().collect();
    for (n, e) in episodes.iter().enumerate() {
        let (group, at, action): (usize, u64, PerBroker) = match e {
            Episode::UpsertTopic { group, at, topic, queues, perm } => (*group, *at, &|b: &str| Action::Topic {
                broker: b.to_string(),
                change: TopicChange::Upsert(TopicConfig {
                    read_queue_nums: *queues,
                    write_queue_nums: *queues,
                    perm: *perm,
                    ..TopicConfig::new(TOPICS[*topic])
                }),
            }),
            Episode::RemoveTopic { group, at, topic } => (*group, *at, &|b: &str| Action::Topic {
                broker: b.to_string(),
                change: TopicChange::Delete(TOPICS[*topic].to_string()),
            }),
            Episode::Permission { group, at, perm } => {
                (*group, *at, &|b: &str| Action::BrokerPermission { broker: b.to_string(), perm: *perm })
            }
            _ => continue,
        };
        let members = &groups[group % groups.len()];
        let t = SimTime(at * 1000);
        if members.iter().all(|b| running_at(events, b, t)) {
            for b in members {
                events.push(TimedEvent { at: t, name: format!("e{} op {b}", n + 1), action: action(b) });
            }
        }
    }
    // A stable sort: same-instant events keep their order, operator actions after the faults.
    events.sort_by_key(|e| e.at);
}

/// Whether `broker` runs at `t` given the process events so far (not at the very instant of
/// one of them, where the order of the two would decide).
fn running_at(events: &[TimedEvent], broker: &str, t: SimTime) -> bool {
    let mut up = true;
    for e in events.iter().filter(|e| e.at <= t) {
        match &e.action {
            Action::Crash(p) | Action::HostDown(p) | Action::Shutdown(p) | Action::Hang(p) if p == broker => up = false,
            Action::Restart(p) | Action::Resume(p) if p == broker => up = e.at < t,
            _ if e.at == t && e.action.targets().iter().any(|p| p == broker) => return false,
            _ => {}
        }
    }
    up
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;

    /// Generated schedules do reach the operator's actions, every one on a running broker: the
    /// `convergence` invariant is exercised against topics and permissions changed mid-run.
    #[test]
    fn generated_timelines_include_operator_actions_on_running_brokers() {
        let mut runner = TestRunner::deterministic();
        let (mut topics, mut perms) = (0, 0);
        for _ in 0..200 {
            let s = super::super::gen::scenario().new_tree(&mut runner).unwrap().current();
            for e in &s.timeline {
                let broker = match &e.action {
                    Action::Topic { broker, .. } => {
                        topics += 1;
                        broker
                    }
                    Action::BrokerPermission { broker, .. } => {
                        perms += 1;
                        broker
                    }
                    _ => continue,
                };
                let faults: Vec<TimedEvent> = s.timeline.iter().filter(|f| !f.name.contains(" op ")).cloned().collect();
                assert!(running_at(&faults, broker.as_str(), e.at), "{broker} is not running at {}: {e:?}", e.at);
            }
        }
        assert!(topics > 20 && perms > 10, "{topics} topic and {perms} permission actions in 200 scenarios");
    }
}
