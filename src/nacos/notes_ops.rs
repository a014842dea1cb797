//! How the operator's trace events read in the timeline: console metadata edits and switches.
//! (Split from `notes.rs` to keep each file short; `NacosNote`'s `Display` comes here for them.)

use crate::nacos::naming::{Switches, Timeouts};
use crate::nacos::notes::{ms, NacosNote};
use crate::nacos::types::Metadata;

/// `{k=v, k=v}`, sorted (metadata is a `BTreeMap`).
pub(crate) fn map_text(m: &Metadata) -> String {
    let pairs: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", pairs.join(", "))
}

/// What the checkers and the beat answer now read for an instance.
pub(crate) fn timeouts_text(t: &Timeouts) -> String {
    if t.skip {
        return "enableClientBeat=true: both checks skipped".into();
    }
    let interval = t.interval.map(|i| format!(", beat answers carry clientBeatInterval {i}")).unwrap_or_default();
    format!("unhealthy after {}, deleted after {}{interval}", ms(t.beat), ms(t.delete))
}

/// What setting `set` means to a 1.x client, for the timeline and explain.
pub(crate) fn switches_text(set: &Switches) -> String {
    let mut parts = Vec::new();
    if let Some(i) = set.client_beat_interval {
        let client = if i > 0 {
            format!("a 1.x BeatTask waits {} before its next beat", ms(i))
        } else {
            "a 1.x BeatTask ignores it (`if (interval > 0)`) and waits its own period".to_string()
        };
        parts.push(format!(
            "clientBeatInterval={i} (Long.parseLong, no range check): beat answers carry it unless the instance's \
             metadata sets preserved.heart.beat.interval; {client}"
        ));
    }
    if let Some(l) = set.light_beat_enabled {
        let client = if l { "drops the BeatInfo body" } else { "sends full beats again" };
        parts.push(format!("lightBeatEnabled={l}: after the next answer a client's whole reactor {client}"));
    }
    parts.join("; ")
}

pub(crate) fn line(n: &NacosNote) -> String {
    match n {
        NacosNote::MetadataUpdated { service, client, metadata, timeouts: Some(t), .. } => format!(
            "{service} {client}: updateInstance (console) stores metadata {}: now {}",
            map_text(metadata),
            timeouts_text(t)
        ),
        NacosNote::MetadataUpdated { service, client, metadata, timeouts: None, .. } => format!(
            "{service} {client}: updateInstance (console) stores metadata {} for an instance not registered here: it \
             applies when it registers",
            map_text(metadata)
        ),
        NacosNote::MetadataRefused { service, client, message } => {
            format!("{service} {client}: updateInstance refused (INVALID_PARAM): {message}")
        }
        NacosNote::SwitchesSet { set, .. } => format!("updateSwitch: {}", switches_text(set)),
        NacosNote::OperationMissed { operation, server, why } => {
            format!("{operation}: {server} is {why}, the call reaches nobody there")
        }
        other => other.to_string(),
    }
}
