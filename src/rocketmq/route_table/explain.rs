//! Narration for explain mode: each outcome as one line per Java step that did something, with
//! the step number from the reference so a reader can follow along in `RouteInfoManager.java`.

use super::outcome::{BrokerRole, RegisterOutcome, RegisterStop, TopicPass, UnregisterReport};

impl RegisterOutcome {
    /// One line per step of §2.1 that had an effect or decided something.
    pub fn explain(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.register_first {
            lines.push("registerFirst: new group or unclaimed id (steps 2/8)".to_string());
        }
        for (id, addr) in &self.switched_ids {
            lines.push(format!("step 5: {addr} left id {id} (one id per address)"));
        }
        match &self.stopped {
            Some(RegisterStop::Conflict { old_addr, old_state_version, new_state_version, .. }) => {
                lines.push(format!(
                    "step 6: conflict with live {old_addr} (stateVersion {old_state_version} > \
                     {new_state_version}); own live entry dropped, empty SUCCESS"
                ));
            }
            Some(RegisterStop::SingleTopicGuard) => {
                lines.push("step 7: one-topic body for an unclaimed id: null (SYSTEM_ERROR)".into());
            }
            Some(RegisterStop::NullWrapper { step }) => {
                lines.push(format!("step {step}: null wrapper dereferenced; caught, empty result"));
            }
            None => {}
        }
        if let Some(role) = self.role {
            let role = match role {
                BrokerRole::Master => "master",
                BrokerRole::PrimeSlave => "prime slave",
                BrokerRole::Slave => "slave (topics untouched)",
            };
            lines.push(format!("step 9: registers as {role}"));
        }
        for topic in &self.topics_deleted {
            lines.push(format!("step 10a: deleted QueueData of {topic} (missing from the body)"));
        }
        match self.topic_pass {
            TopicPass::NotEligible => {}
            TopicPass::Skipped => lines.push("step 10b: skipped, memo proves no topic would change".into()),
            TopicPass::Ran { topics } => {
                lines.push(format!("step 10b: checked {topics} topics, updated {:?}", self.topics_updated))
            }
        }
        if self.stopped.is_none() {
            let verb = if self.live_entry_replaced { "replaced" } else { "created" };
            lines.push(format!("step 11: live entry {verb}"));
        }
        if let Some(notice) = &self.min_broker_id_changed {
            lines.push(format!(
                "step 14: min broker id of {} is now {}; notify {:?}",
                notice.broker_name, notice.min_broker_id, notice.notify_addrs
            ));
        }
        lines
    }
}

impl UnregisterReport {
    /// One line per request (steps 1–5), then the topic cleanup and notices (steps 6–7).
    pub fn explain(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for step in &self.requests {
            let mut parts = Vec::new();
            parts
                .push(if step.live_removed { "step 1 live entry removed" } else { "step 1 no live entry" }.to_string());
            if step.filter_removed {
                parts.push("step 2 filter servers removed".into());
            }
            if !step.broker_data_found {
                parts.push("step 3 no such group".into());
            }
            for (id, addr) in &step.addrs_removed {
                parts.push(format!("step 3 id {id}={addr} removed"));
            }
            if step.notify_queued {
                parts.push("step 4 min id changed".into());
            }
            if step.broker_name_removed {
                parts.push("step 4 group removed".into());
            }
            if step.cluster_dropped {
                parts.push("step 5 cluster dropped".into());
            } else if step.cluster_name_removed {
                parts.push("step 5 left its cluster".into());
            }
            lines.push(format!("{}: {}", step.request, parts.join(", ")));
        }
        // Step 6, grouped by broker name: one line per group, not per topic.
        let mut by_group: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (topic, name) in &self.queue_data_removed {
            by_group.entry(name).or_default().push(topic);
        }
        for (name, topics) in by_group {
            lines.push(format!(
                "step 6: QueueData of {name} removed from {} topics ({})",
                topics.len(),
                topics.join(", ")
            ));
        }
        if !self.topics_removed.is_empty() {
            lines.push(format!("step 6: topics left empty and removed: {}", self.topics_removed.join(", ")));
        }
        let mut wiped: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (topic, name) in &self.write_perm_wiped {
            wiped.entry(name).or_default().push(topic);
        }
        for (name, topics) in wiped {
            let n = topics.len();
            lines.push(format!("step 6: {name} has no master (acting master on): write perm wiped on {n} topics"));
        }
        if let Some(abort) = &self.aborted {
            lines.push(format!(
                "step 6: aborted at {}/{} (Java NPE: QueueData without BrokerData); step 7 skipped",
                abort.topic, abort.broker_name
            ));
        }
        for notice in &self.notifications {
            lines.push(format!(
                "step 7: min broker id of {} is now {}; notify {:?}",
                notice.broker_name, notice.min_broker_id, notice.notify_addrs
            ));
        }
        lines
    }
}
