//! `[[fault]]` and `[[action]]` tables: one verb each, valid targets, and a process history that
//! makes sense (no resuming what is not hung, no restarting what runs).

use super::ctx::{Ctx, Kind, Least};
use super::raw::{RawEvent, S};
use super::{Action, BrokerSpec, TimedEvent};
use crate::rocketmq::broker::TopicChange;
use crate::sim::clock::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::ops::Range;

const ANY: &[Kind] = &[Kind::Namesrv, Kind::Broker, Kind::Client, Kind::NacosServer, Kind::NacosApp, Kind::Subscriber];
const FAULT_VERBS: &[&str] =
    &["crash", "host_down", "hang", "resume", "shutdown", "restart", "partition", "block", "heal", "loss", "latency"];
const ACTION_VERBS: &[&str] = &[
    "wipe_write_perm",
    "add_write_perm",
    "delete_topic",
    "upsert_topic",
    "remove_topic",
    "set_broker_id",
    "broker_permission",
];

/// A validated event with the span of its table, for later passes to point at.
pub struct Placed {
    pub event: TimedEvent,
    pub span: Range<usize>,
}

pub fn timeline(
    ctx: &mut Ctx,
    faults: Vec<S<RawEvent>>,
    actions: Vec<S<RawEvent>>,
    brokers: &[BrokerSpec],
) -> Vec<Placed> {
    let mut out = Vec::new();
    for (table, list) in [("[[fault]]", faults), ("[[action]]", actions)] {
        for raw in list {
            let span = raw.span();
            if let Some(event) = event(ctx, table, raw.into_inner(), brokers, &out) {
                out.push(Placed { event, span });
            }
        }
    }
    // Stable: events at the same time keep file order (faults before actions).
    out.sort_by_key(|p| p.event.at);
    out
}

fn verbs(raw: &RawEvent) -> Vec<(&'static str, Range<usize>)> {
    let mut v = Vec::new();
    macro_rules! has {
        ($($f:ident),*) => { $( if let Some(x) = &raw.$f { v.push((stringify!($f), x.span())); } )* };
    }
    has!(crash, host_down, hang, resume, shutdown, restart, partition, block, heal, loss, latency);
    has!(wipe_write_perm, add_write_perm, delete_topic, upsert_topic, remove_topic, set_broker_id, broker_permission);
    v
}

fn event(ctx: &mut Ctx, table: &str, raw: RawEvent, brokers: &[BrokerSpec], earlier: &[Placed]) -> Option<TimedEvent> {
    let at = ctx.time(&raw.at);
    let verbs = verbs(&raw);
    let (verb, vspan) = match verbs.as_slice() {
        [one] => one.clone(),
        [] => return ctx.fail(raw.at.span(), format!("this {table} has no verb"), Some("add one of: crash, hang, resume, shutdown, restart, host_down, partition, block, heal, loss, latency (faults) or wipe_write_perm, add_write_perm, delete_topic, upsert_topic, remove_topic, set_broker_id, broker_permission (actions)")),
        [_, (second, span), ..] => {
            let msg = format!("a {table} holds exactly one verb; found {} ({second} is extra)", verbs.len());
            return ctx.fail(span.clone(), msg, Some("split it into two tables at the same time"));
        }
    };
    let belongs = if table == "[[fault]]" { FAULT_VERBS } else { ACTION_VERBS };
    if !belongs.contains(&verb) {
        let other = if table == "[[fault]]" { "[[action]]" } else { "[[fault]]" };
        return ctx.fail(
            vspan,
            format!("`{verb}` is not a {} verb", &table[2..table.len() - 2]),
            Some(&format!("move it to a {other} table")),
        );
    }
    let action = action(ctx, &raw, brokers, earlier)?;
    let name = match &raw.name {
        Some(n) => n.get_ref().clone(),
        None => describe(&action),
    };
    Some(TimedEvent { at: at?, name, action })
}

fn proc(ctx: &mut Ctx, v: &Option<S<String>>) -> Option<String> {
    v.as_ref().and_then(|n| ctx.refer(n, ANY))
}

fn link_ends(
    ctx: &mut Ctx,
    from: &Option<S<String>>,
    to: &Option<S<String>>,
    between: &Option<Vec<S<String>>>,
    span: Range<usize>,
) -> Option<Vec<(String, String)>> {
    match (from, to, between) {
        (Some(f), Some(t), None) => Some(vec![(ctx.refer(f, ANY)?, ctx.refer(t, ANY)?)]),
        (None, None, Some(b)) if b.len() == 2 => {
            let (a, c) = (ctx.refer(&b[0], ANY)?, ctx.refer(&b[1], ANY)?);
            Some(vec![(a.clone(), c.clone()), (c, a)])
        }
        _ => ctx.fail(span, "say which link: `from` and `to` for one direction, or `between = [a, b]` for both", None),
    }
}

fn broker_name_known(ctx: &mut Ctx, v: &S<String>, brokers: &[BrokerSpec]) -> Option<String> {
    if brokers.iter().any(|b| &b.config.broker_name == v.get_ref()) {
        return Some(v.get_ref().clone());
    }
    let names: Vec<&str> = brokers.iter().map(|b| b.config.broker_name.as_str()).collect();
    let help = super::error::nearest(v.get_ref(), names).map(|n| format!("did you mean {n:?}?"));
    ctx.fail(v.span(), format!("no broker has broker_name {:?}", v.get_ref()), help.as_deref())
}

fn namesrvs_or_all(ctx: &mut Ctx, v: &Option<S<String>>) -> Option<Vec<String>> {
    match v {
        Some(n) => Some(vec![ctx.refer(n, &[Kind::Namesrv])?]),
        None => Some(ctx.names(Kind::Namesrv)),
    }
}

fn action(ctx: &mut Ctx, raw: &RawEvent, brokers: &[BrokerSpec], earlier: &[Placed]) -> Option<Action> {
    if raw.crash.is_some() {
        return proc(ctx, &raw.crash).map(Action::Crash);
    }
    if raw.host_down.is_some() {
        return proc(ctx, &raw.host_down).map(Action::HostDown);
    }
    if raw.hang.is_some() {
        return proc(ctx, &raw.hang).map(Action::Hang);
    }
    if raw.resume.is_some() {
        return proc(ctx, &raw.resume).map(Action::Resume);
    }
    if raw.shutdown.is_some() {
        return proc(ctx, &raw.shutdown).map(Action::Shutdown);
    }
    if raw.restart.is_some() {
        return proc(ctx, &raw.restart).map(Action::Restart);
    }
    if let Some(p) = &raw.partition {
        let groups: Vec<Vec<String>> =
            p.get_ref().iter().map(|g| g.iter().filter_map(|n| ctx.refer(n, ANY)).collect()).collect();
        if groups.len() < 2 || groups.iter().any(Vec::is_empty) {
            return ctx.fail(
                p.span(),
                "a partition needs at least two non-empty groups",
                Some("e.g. partition = [[\"a0\"], [\"ns2\"]]"),
            );
        }
        return Some(Action::Partition(groups));
    }
    if let Some(b) = &raw.block {
        let b = b.get_ref();
        return Some(Action::Block { from: ctx.refer(&b.from, ANY)?, to: ctx.refer(&b.to, ANY)? });
    }
    if let Some(h) = &raw.heal {
        if h.get_ref() == "all" {
            return Some(Action::Heal(None));
        }
        let cuts = earlier.iter().filter(|p| matches!(p.event.action, Action::Partition(_) | Action::Block { .. }));
        if cuts.clone().any(|p| &p.event.name == h.get_ref()) {
            return Some(Action::Heal(Some(h.get_ref().clone())));
        }
        let names: Vec<&str> = cuts.map(|p| p.event.name.as_str()).collect();
        let help = format!("use \"all\" or the name of an earlier partition or block ({})", names.join(", "));
        return ctx.fail(h.span(), format!("no earlier partition or block is named {:?}", h.get_ref()), Some(&help));
    }
    if let Some(l) = &raw.loss {
        let r = l.get_ref();
        let rate = *r.rate.get_ref();
        if !(0.0..=1.0).contains(&rate) {
            return ctx.fail(r.rate.span(), format!("loss rate must be between 0 and 1, got {rate}"), None);
        }
        let ends = link_ends(ctx, &r.from, &r.to, &r.between, l.span())?;
        let (from, to) = ends[0].clone();
        return Some(Action::Loss { from, to, rate, both_ways: ends.len() == 2 });
    }
    if let Some(l) = &raw.latency {
        let r = l.get_ref();
        let base = ctx.checked(&r.base, "base", Least::Zero, None)?;
        let jitter = ctx.duration_in(&r.jitter, SimDuration::ZERO, "jitter", Least::Zero);
        let ends = link_ends(ctx, &r.from, &r.to, &r.between, l.span())?;
        let (from, to) = ends[0].clone();
        return Some(Action::Latency { from, to, base, jitter, both_ways: ends.len() == 2 });
    }
    operator_action(ctx, raw, brokers)
}

fn operator_action(ctx: &mut Ctx, raw: &RawEvent, brokers: &[BrokerSpec]) -> Option<Action> {
    if let Some(w) = raw.wipe_write_perm.as_ref().or(raw.add_write_perm.as_ref()) {
        let w = w.get_ref();
        let namesrvs = namesrvs_or_all(ctx, &w.namesrv)?;
        let broker_name = broker_name_known(ctx, &w.broker_name, brokers)?;
        return Some(if raw.wipe_write_perm.is_some() {
            Action::WipeWritePerm { namesrvs, broker_name }
        } else {
            Action::AddWritePerm { namesrvs, broker_name }
        });
    }
    if let Some(d) = &raw.delete_topic {
        let d = d.get_ref();
        return Some(Action::DeleteTopic {
            namesrvs: namesrvs_or_all(ctx, &d.namesrv)?,
            topic: d.topic.get_ref().clone(),
            cluster: d.cluster.as_ref().map(|c| c.get_ref().clone()),
        });
    }
    if let Some(u) = &raw.upsert_topic {
        let u = u.get_ref();
        let broker = ctx.refer(&u.broker, &[Kind::Broker])?;
        let topic = super::validate::topic(
            ctx,
            &super::raw::RawTopic {
                name: u.name.clone(),
                read: u.read.clone(),
                write: u.write.clone(),
                perm: u.perm.clone(),
            },
        )?;
        return Some(Action::Topic { broker, change: TopicChange::Upsert(topic) });
    }
    if let Some(r) = &raw.remove_topic {
        let r = r.get_ref();
        let broker = ctx.refer(&r.broker, &[Kind::Broker])?;
        return Some(Action::Topic { broker, change: TopicChange::Delete(r.topic.get_ref().clone()) });
    }
    if let Some(s) = &raw.set_broker_id {
        let s = s.get_ref();
        let broker = ctx.refer(&s.broker, &[Kind::Broker])?;
        let id = ctx.count(&s.id, "id", 0)? as u64;
        return Some(Action::SetBrokerId { broker, id });
    }
    if let Some(p) = &raw.broker_permission {
        let p = p.get_ref();
        let broker = ctx.refer(&p.broker, &[Kind::Broker])?;
        let perm = ctx.perm(&p.perm)?;
        return Some(Action::BrokerPermission { broker, perm });
    }
    None
}

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
        Action::Topic { broker, change: TopicChange::Upsert(t) } => {
            format!("upsert_topic {} on {broker}", t.topic_name)
        }
        Action::Topic { broker, change: TopicChange::Delete(t) } => format!("remove_topic {t} on {broker}"),
        Action::SetBrokerId { broker, id } => format!("set_broker_id {broker} {id}"),
        Action::BrokerPermission { broker, perm } => {
            format!("broker_permission {broker} {}", crate::rocketmq::types::perm::to_text(*perm))
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

/// Process life: what each fault needs the target to be doing, checked in time order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Life {
    NotStarted,
    Running,
    Hung,
    Down,
}

pub fn check_lifecycles(ctx: &mut Ctx, events: &[Placed], starts: &BTreeMap<String, SimTime>) {
    // Only processes some fault has touched are here; the others are running once started.
    // (Thousands of processes and faults: keep this linear.)
    let mut life: BTreeMap<&str, Life> = BTreeMap::new();
    for p in events {
        let at = p.event.at;
        let (target, need, next): (&str, &[Life], Life) = match &p.event.action {
            Action::Crash(t) | Action::HostDown(t) => (t, &[Life::Running, Life::Hung], Life::Down),
            Action::Shutdown(t) => (t, &[Life::Running], Life::Down),
            Action::Hang(t) => (t, &[Life::Running], Life::Hung),
            Action::Resume(t) => (t, &[Life::Hung], Life::Running),
            Action::Restart(t) => (t, &[Life::Down], Life::Running),
            // mqadmin commands need a running broker; a new brokerId is an edit of broker.conf,
            // possible while it is down (it takes effect at the restart).
            Action::Topic { broker, .. } | Action::BrokerPermission { broker, .. } => {
                (broker, &[Life::Running], Life::Running)
            }
            _ => continue,
        };
        let Some(&start) = starts.get(target) else { continue };
        let now = match life.get(target) {
            Some(&state) => state,
            None if start <= at => Life::Running,
            None => Life::NotStarted,
        };
        if !need.contains(&now) {
            let state = match now {
                Life::NotStarted => format!("has not started yet (it starts at {})", starts[target]),
                Life::Running => "is running".into(),
                Life::Hung => "is hung".into(),
                Life::Down => "is down".into(),
            };
            let help = match (now, need[0]) {
                (Life::Hung, Life::Running) => "resume it first",
                (Life::Down, _) => "restart it first",
                (Life::Running, Life::Down) => "crash or shut it down first",
                (Life::Running, Life::Hung) => "hang it first",
                _ => "check the order of the timeline",
            };
            ctx.error(p.span.clone(), format!("`{}` at {at}: {target} {state}", p.event.name), Some(help.into()));
            continue;
        }
        life.insert(target, next);
    }
}

/// Looks up an event by name for anchors; `None` with an error when unknown or ambiguous.
pub fn find_anchor(events: &[Placed], name: &str) -> Result<SimTime, String> {
    let hits: Vec<&Placed> = events.iter().filter(|p| p.event.name == name).collect();
    match hits.as_slice() {
        [one] => Ok(one.event.at),
        [] => Err(format!("no fault or action is named {name:?}")),
        _ => Err(format!("{} events are named {name:?}; give one a `name`", hits.len())),
    }
}
