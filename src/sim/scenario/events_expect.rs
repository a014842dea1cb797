//! The `events` subject of an `[[expect]]`:
//! `events = { kind = "unhealthy", actor = "nacos1", instance = "orders-1", count = 3 }`.
//!
//! The kinds are the trace's own event names, by area ([`KINDS`]); a kind that does not exist
//! would count nothing and make `count = 0` hold for ever, so it is refused like any unknown name.

use super::ctx::Ctx;
use super::error::nearest;
use super::expects::Known;
use super::raw::{RawEvents, S};
use super::write::q;
use crate::sim::expect::{EventsWant, Mention, Subject};
use std::collections::BTreeMap;

/// Every event the trace records, by area: the `area` and `event` of each `--trace` line.
/// (`kinds_are_every_note_variant` keeps this in step with the note enums.)
pub const KINDS: &[(&str, &[&str])] = &[
    ("run", &["begin", "process_started", "end"]),
    ("fault", &["applied"]),
    (
        "net",
        &[
            "dropped",
            "lost",
            "retransmitted",
            "gave_up",
            "slow_connect",
            "connect_failed",
            "closed",
            "reset",
            "unparked",
            "opened",
        ],
    ),
    ("check", &["held", "failed", "violated"]),
    (
        "rmq",
        &[
            "register_sent",
            "heartbeat_sent",
            "unregister_sent",
            "shutdown_complete",
            "topics_changed",
            "broker_id_changed",
            "permission_changed",
            "request_failed",
            "registered",
            "register_refused",
            "heartbeat_refreshed",
            "heartbeat_ignored",
            "unregister_queued",
            "channel_event_ignored",
            "batch_applied",
            "min_broker_id_changed",
            "route_served",
            "cluster_info_served",
            "write_perm_wiped",
            "write_perm_added",
            "topic_deleted",
            "topic_registered",
            "scan_tick",
            "expired",
            "queue_full",
            "batch_taken",
            "route_polled",
            "route_changed",
            "topic_not_exist_kept_old",
            "topic_not_exist",
            "poll_failed",
            "send_refused",
            "send_attempt_failed",
            "send_done",
        ],
    ),
    (
        "nacos",
        &[
            "registering",
            "registered",
            "beat",
            "light_beats",
            "attempt_failed",
            "call_failed",
            "deregistering",
            "deregistered",
            "shutdown_complete",
            "instance_registered",
            "instance_deregistered",
            "beat_not_found",
            "beat_failed",
            "healthy_again",
            "subscribed",
            "metadata_updated",
            "metadata_refused",
            "switches_set",
            "operation_missed",
            "member_probed",
            "member_report_in",
            "distro_sync_failed",
            "distro_verify_failed",
            "distro_loaded",
            "distro_took_over",
            "distro_load_failed",
            "distro_copy_expired",
            "distro_forwarded",
            "distro_forward_failed",
            "grpc_connected",
            "grpc_connect_failed",
            "grpc_health_ok",
            "grpc_health_failed",
            "grpc_stream_closed",
            "grpc_redo",
            "grpc_request_failed",
            "conn_registered",
            "conn_detecting",
            "conn_detected",
            "conn_unregistered",
            "connection_released",
            "unhealthy",
            "expired",
            "client_removed",
            "pushed",
            "push_resent",
            "push_gave_up",
            "view_changed",
            "polled",
            "push_unchanged",
            "poll_failed",
        ],
    ),
];

pub fn subject(ctx: &mut Ctx, raw: &S<RawEvents>, known: &Known) -> Option<Subject> {
    let r = raw.get_ref();
    let kind = r.kind.get_ref().trim().to_string();
    let areas: Vec<&str> = KINDS.iter().filter(|(_, ks)| ks.contains(&kind.as_str())).map(|(a, _)| *a).collect();
    if areas.is_empty() {
        let every = KINDS.iter().flat_map(|(_, ks)| ks.iter().copied());
        let help = match nearest(&kind, every) {
            Some(n) => {
                format!("did you mean {n:?}? (the kinds are the trace's `event` names, docs/scenario-format.md)")
            }
            None => "the kinds are the trace's `event` names, listed in docs/scenario-format.md".into(),
        };
        ctx.error(r.kind.span(), format!("no trace event is called {kind:?}"), Some(help));
    }
    let area = match &r.area {
        Some(a) if !KINDS.iter().any(|(name, _)| name == a.get_ref()) => {
            let names: Vec<&str> = KINDS.iter().map(|(a, _)| *a).collect();
            let help = Some(format!("one of {}", names.join(", ")));
            ctx.error(a.span(), format!("unknown area {:?}", a.get_ref()), help);
            None
        }
        Some(a) if !areas.is_empty() && !areas.contains(&a.get_ref().as_str()) => {
            let help = Some(format!("{kind:?} is in {}", areas.join(" and ")));
            ctx.error(a.span(), format!("area {:?} has no {kind:?} events", a.get_ref()), help);
            None
        }
        a => a.as_ref().map(|a| a.get_ref().clone()),
    };
    let actor = r.actor.as_ref().and_then(|a| {
        let name = a.get_ref();
        let process = crate::sim::trace::process_of(name);
        let machinery = ["run", "net", "fault", "check"];
        if ctx.procs.contains_key(process) || machinery.contains(&name.as_str()) {
            return Some(name.clone());
        }
        let help = nearest(process, ctx.procs.keys().map(String::as_str)).map(|n| format!("did you mean {n:?}?"));
        ctx.error(a.span(), format!("no process is named {process:?}"), help);
        None
    });
    let about = mention(ctx, r, known);
    let mut fields = BTreeMap::new();
    for (k, v) in r.fields.as_ref().map(|f| f.get_ref().iter()).into_iter().flatten() {
        let text = match v.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => {
                let help = Some("compare a string, an integer or a boolean field of the event".to_string());
                ctx.error(v.span(), format!("`where.{k}` must be a string, an integer or a boolean"), help);
                continue;
            }
        };
        fields.insert(k.clone(), text);
    }
    let count = |ctx: &mut Ctx, v: &Option<S<i64>>, what: &str| ctx.count(v.as_ref()?, what, 0).map(u64::from);
    let exact = count(ctx, &r.count, "count");
    let (mut at_least, mut at_most) = (count(ctx, &r.at_least, "at_least"), count(ctx, &r.at_most, "at_most"));
    let written = [&r.count, &r.at_least, &r.at_most].iter().filter(|c| c.is_some()).count();
    if written == 0 {
        let help = "`count = N` (exactly), or `at_least = N` and/or `at_most = N`";
        return ctx.fail(raw.span(), "an events subject needs a count", Some(help));
    }
    if r.count.is_some() && written > 1 {
        let help = "`count` is exact: drop `at_least`/`at_most`, or use them alone";
        return ctx.fail(raw.span(), "`count` with `at_least` or `at_most` says the same thing twice", Some(help));
    }
    if let (Some(l), Some(m)) = (at_least, at_most) {
        if l > m {
            let span = r.at_most.as_ref().map_or(raw.span(), |m| m.span());
            return ctx.fail(span, format!("`at_most` ({m}) is below `at_least` ({l})"), None);
        }
    }
    if let Some(n) = exact {
        (at_least, at_most) = (Some(n), Some(n));
    }
    Some(Subject::Events(EventsWant { kind, area, actor, about, fields, at_least, at_most }))
}

/// `broker = "a0"` or `instance = "orders-1"`: what the event must be about.
fn mention(ctx: &mut Ctx, r: &RawEvents, known: &Known) -> Option<Mention> {
    match (&r.broker, &r.instance) {
        (Some(b), Some(i)) => {
            let help = Some("count the broker's and the instance's events in two expectations".into());
            ctx.error(i.span(), "an events subject is about one broker or one instance, not both", help);
            let _ = b;
            None
        }
        (Some(b), None) => match known.broker_addrs.get(b.get_ref()) {
            Some(addr) => {
                let name = b.get_ref().clone();
                Some(Mention { what: format!("broker {name}"), name, addr: addr.clone(), service: None })
            }
            None => {
                let help = nearest(b.get_ref(), known.broker_addrs.keys().map(String::as_str))
                    .map(|n| format!("did you mean {n:?}? (the [[broker]]'s `name`)"));
                ctx.error(b.span(), format!("no broker is named {:?}", b.get_ref()), help);
                None
            }
        },
        (None, Some(i)) => {
            let name = i.get_ref();
            match (known.nacos.instances.get(name), known.nacos.addrs.get(name)) {
                (Some(service), Some(addr)) => Some(Mention {
                    what: format!("instance {name}"),
                    name: name.clone(),
                    addr: addr.clone(),
                    service: Some(service.grouped.to_string()),
                }),
                _ if known.nacos.broken.contains(name) => None,
                _ => {
                    let help = nearest(name, known.nacos.instances.keys().map(String::as_str))
                        .map(|n| format!("did you mean {n:?}?"));
                    ctx.error(i.span(), format!("no instance is named {name:?}"), help);
                    None
                }
            }
        }
        (None, None) => None,
    }
}

/// The `events = { ... }` line that loads back as `w`.
pub fn write(w: &EventsWant) -> String {
    let mut fields = vec![format!("kind = {}", q(&w.kind))];
    if let Some(a) = &w.area {
        fields.push(format!("area = {}", q(a)));
    }
    if let Some(a) = &w.actor {
        fields.push(format!("actor = {}", q(a)));
    }
    if let Some(m) = &w.about {
        let key = if m.service.is_some() { "instance" } else { "broker" };
        fields.push(format!("{key} = {}", q(&m.name)));
    }
    if !w.fields.is_empty() {
        let kv: Vec<String> = w.fields.iter().map(|(k, v)| format!("{} = {}", q(k), q(v))).collect();
        fields.push(format!("where = {{ {} }}", kv.join(", ")));
    }
    match (w.at_least, w.at_most) {
        (Some(l), Some(m)) if l == m => fields.push(format!("count = {l}")),
        (l, m) => {
            fields.extend(l.map(|l| format!("at_least = {l}")));
            fields.extend(m.map(|m| format!("at_most = {m}")));
        }
    }
    format!("events = {{ {} }}", fields.join(", "))
}

#[cfg(test)]
mod tests {
    use super::KINDS;

    /// Every variant of every note enum is a kind, in snake case as serde writes it.
    #[test]
    fn kinds_are_every_note_variant() {
        let sources = [
            ("run", include_str!("../notes.rs"), "RunNote"),
            ("fault", include_str!("../notes.rs"), "FaultNote"),
            ("net", include_str!("../notes.rs"), "NetNote"),
            ("check", include_str!("../notes.rs"), "CheckNote"),
            ("rmq", include_str!("../../rocketmq/notes.rs"), "RmqNote"),
            ("nacos", include_str!("../../nacos/notes.rs"), "NacosNote"),
        ];
        for (area, source, name) in sources {
            let start = source.find(&format!("pub enum {name} {{")).expect("the enum");
            let body = &source[start..start + source[start..].find("\n}").expect("its end")];
            let variants: Vec<String> = body
                .lines()
                .filter_map(|l| l.strip_prefix("    "))
                .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
                .map(|l| l.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or_default())
                .map(|v| {
                    v.chars().enumerate().fold(String::new(), |mut s, (i, c)| {
                        if c.is_ascii_uppercase() && i > 0 {
                            s.push('_');
                        }
                        s.push(c.to_ascii_lowercase());
                        s
                    })
                })
                .collect();
            let listed: Vec<String> =
                KINDS.iter().find(|(a, _)| *a == area).unwrap().1.iter().map(|k| k.to_string()).collect();
            assert_eq!(listed, variants, "{area}: KINDS must list {name}'s variants, in order");
        }
    }

    /// docs/scenario-format.md lists the same kinds, area by area.
    #[test]
    fn the_format_doc_lists_every_kind() {
        let doc = include_str!("../../../docs/scenario-format.md");
        for (area, kinds) in KINDS {
            let row: Vec<String> = kinds.iter().map(|k| format!("`{k}`")).collect();
            let line = format!("| `{area}` | {} |", row.join(", "));
            assert!(doc.contains(&line), "docs/scenario-format.md needs the row\n{line}");
        }
    }
}
