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
            let mut parts = vec![format!("{}:", step.request)];
            parts.push(if step.live_removed { "live removed" } else { "no live entry" }.into());
            if step.filter_removed {
                parts.push("filter servers removed".into());
            }
            if !step.broker_data_found {
                parts.push("no such group".into());
            }
            for (id, addr) in &step.addrs_removed {
                parts.push(format!("removed id {id}={addr}"));
            }
            if step.notify_queued {
                parts.push("min id changed".into());
            }
            if step.broker_name_removed {
                parts.push("group removed".into());
            }
            if step.cluster_dropped {
                parts.push("cluster dropped".into());
            }
            lines.push(parts.join(" "));
        }
        for (topic, name) in &self.queue_data_removed {
            lines.push(format!("step 6: {topic} lost QueueData of {name}"));
        }
        for topic in &self.topics_removed {
            lines.push(format!("step 6: topic {topic} removed (no QueueData left)"));
        }
        for (topic, name) in &self.write_perm_wiped {
            lines.push(format!("step 6: {topic}/{name} write perm wiped (acting master, no id 0)"));
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
