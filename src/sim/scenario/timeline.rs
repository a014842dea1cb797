//! `[[fault]]` and `[[action]]` tables: one verb each, valid targets, names that cannot be read
//! as times, and the anchors expectations look events up by. (`lifecycle` checks the order.)

use super::ctx::{Ctx, Kind, Least};
use super::describe::describe;
use super::raw::{RawEvent, S};
use super::timeline_nacos::NacosRefs;
use super::{Action, BrokerSpec, NacosSpecs, TimedEvent};
use crate::rocketmq::broker::TopicChange;
use crate::sim::clock::{parse_duration, SimDuration, SimTime};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

const ANY: &[Kind] = &[Kind::Namesrv, Kind::Broker, Kind::Client, Kind::NacosServer, Kind::NacosApp, Kind::Subscriber];
const FAULT_VERBS: &[&str] =
    &["crash", "host_down", "hang", "resume", "shutdown", "restart", "partition", "block", "heal", "loss", "latency"];
const ACTION_VERBS: &[&str] = &[
    "wipe_write_perm",
    "add_write_perm",
    "delete_topic",
    "register_topic",
    "unregister_broker",
    "register_broker",
    "upsert_topic",
    "remove_topic",
    "set_broker_id",
    "broker_permission",
    "update_metadata",
    "deregister",
    "nacos_switch",
];

/// A validated event with the span of its table, for later passes to point at.
pub struct Placed {
    pub event: TimedEvent,
    pub span: Range<usize>,
}

/// The validated events in time order, and the names of the events that were wrong (already
/// reported): an expectation anchored on one of those says nothing more.
pub struct Timeline {
    pub placed: Vec<Placed>,
    pub broken: BTreeSet<String>,
}

/// What an event may refer to besides processes, gathered once so each event is a lookup.
pub(super) struct Refs<'a> {
    pub(super) broker_names: BTreeSet<&'a str>,
    /// The brokers, for what an operator's request takes from one (`unregister_broker`).
    pub(super) brokers: &'a [BrokerSpec],
    nacos: NacosRefs<'a>,
    /// Names of the partitions and blocks placed so far, in file order: what `heal` may name.
    cuts: Vec<String>,
    /// Partitions and blocks that were wrong (a bad `at`, an unknown process), already reported:
    /// a `heal` naming one is not a second mistake, only a heal that cannot be placed.
    broken_cuts: BTreeSet<String>,
}

pub fn timeline(
    ctx: &mut Ctx,
    faults: Vec<S<RawEvent>>,
    actions: Vec<S<RawEvent>>,
    brokers: &[BrokerSpec],
    nacos: (&NacosSpecs, &BTreeSet<String>),
) -> Timeline {
    let broker_names = brokers.iter().map(|b| b.config.broker_name.as_str()).collect();
    let nacos = NacosRefs::new(nacos.0, nacos.1);
    let mut refs = Refs { broker_names, brokers, nacos, cuts: Vec::new(), broken_cuts: BTreeSet::new() };
    let mut out = Vec::new();
    let mut broken = BTreeSet::new();
    for (table, list) in [("[[fault]]", faults), ("[[action]]", actions)] {
        for raw in list {
            let span = raw.span();
            let cut = raw.get_ref().partition.is_some() || raw.get_ref().block.is_some();
            match event(ctx, table, raw.into_inner(), &refs) {
                Ok(event) => {
                    if matches!(event.action, Action::Partition(_) | Action::Block { .. }) {
                        refs.cuts.push(event.name.clone());
                    }
                    out.push(Placed { event, span });
                }
                Err(name) => {
                    if let (true, Some(name)) = (cut, &name) {
                        refs.broken_cuts.insert(name.clone());
                    }
                    broken.extend(name);
                }
            }
        }
    }
    // Stable: events at the same time keep file order (faults before actions).
    out.sort_by_key(|p| p.event.at);
    Timeline { placed: out, broken }
}

/// An event name must not read as a time: an anchor `"61s"` or `"61s + 5s"` is taken as a time
/// from the start, so an event named `"61s"` could never be anchored on, and one named
/// `"x + 5s"` would be read as `"x"` plus five seconds.
fn check_name(ctx: &mut Ctx, name: &S<String>) {
    let text = name.get_ref().trim();
    let tail = super::expects::offset_split(text).map(|(_, _, d)| d);
    if parse_duration(text).is_ok() || tail.is_some_and(|d| parse_duration(d).is_ok()) {
        let msg = format!("the event name {:?} reads as a time", name.get_ref());
        let help =
            "expectations anchor on names as \"NAME\", \"NAME + 5s\" or \"NAME - 5s\"; use words, e.g. \"kill a0\"";
        ctx.error(name.span(), msg, Some(help.into()));
    }
}

fn verbs(raw: &RawEvent) -> Vec<(&'static str, Range<usize>)> {
    let mut v = Vec::new();
    macro_rules! has {
        ($($f:ident),*) => { $( if let Some(x) = &raw.$f { v.push((stringify!($f), x.span())); } )* };
    }
    has!(crash, host_down, hang, resume, shutdown, restart, partition, block, heal, loss, latency);
    has!(wipe_write_perm, add_write_perm, delete_topic, upsert_topic, remove_topic, set_broker_id, broker_permission);
    has!(register_topic, unregister_broker, register_broker);
    has!(update_metadata, deregister, nacos_switch);
    v
}

/// The event, or the name it would be known by when it is wrong (`None` when even that is not
/// known: no `name` and no valid verb).
fn event(ctx: &mut Ctx, table: &str, raw: RawEvent, refs: &Refs) -> Result<TimedEvent, Option<String>> {
    let named = raw.name.as_ref().map(|n| n.get_ref().clone());
    if let Some(n) = &raw.name {
        check_name(ctx, n);
    }
    let at = ctx.moment(&raw.at, "at");
    let verbs = verbs(&raw);
    let (verb, vspan) = match verbs.as_slice() {
        [one] => one.clone(),
        [] => return Err(ctx.fail(raw.at.span(), format!("this {table} has no verb"), Some("add one of: crash, hang, resume, shutdown, restart, host_down, partition, block, heal, loss, latency (faults) or wipe_write_perm, add_write_perm, delete_topic, upsert_topic, remove_topic, set_broker_id, broker_permission, update_metadata, deregister, nacos_switch (actions)")).or(named)),
        [_, (second, span), ..] => {
            let msg = format!("a {table} holds exactly one verb; found {} ({second} is extra)", verbs.len());
            return Err(ctx.fail(span.clone(), msg, Some("split it into two tables at the same time")).or(named));
        }
    };
    let belongs = if table == "[[fault]]" { FAULT_VERBS } else { ACTION_VERBS };
    if !belongs.contains(&verb) {
        let other = if table == "[[fault]]" { "[[action]]" } else { "[[fault]]" };
        let msg = format!("`{verb}` is not a {} verb", &table[2..table.len() - 2]);
        return Err(ctx.fail(vspan, msg, Some(&format!("move it to a {other} table"))).or(named));
    }
    let Some(action) = action(ctx, &raw, refs) else { return Err(named) };
    let name = named.unwrap_or_else(|| describe(&action));
    let heals_broken = matches!(&action, Action::Heal(Some(cut)) if refs.broken_cuts.contains(cut));
    match at {
        // A heal of a broken cut is known by name, so what anchors on it stays silent too.
        Some(at) if !heals_broken => Ok(TimedEvent { at, name, action }),
        _ => Err(Some(name)),
    }
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

pub(super) fn broker_name_known(ctx: &mut Ctx, v: &S<String>, refs: &Refs) -> Option<String> {
    if refs.broker_names.contains(v.get_ref().as_str()) {
        return Some(v.get_ref().clone());
    }
    let names = refs.broker_names.iter().copied();
    let help = super::error::nearest(v.get_ref(), names).map(|n| format!("did you mean {n:?}?"));
    ctx.fail(v.span(), format!("no broker has broker_name {:?}", v.get_ref()), help.as_deref())
}

fn namesrvs_or_all(ctx: &mut Ctx, v: &Option<S<String>>) -> Option<Vec<String>> {
    match v {
        Some(n) => Some(vec![ctx.refer(n, &[Kind::Namesrv])?]),
        None => Some(ctx.names(Kind::Namesrv).to_vec()),
    }
}

fn action(ctx: &mut Ctx, raw: &RawEvent, refs: &Refs) -> Option<Action> {
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
        return partition(ctx, p);
    }
    if let Some(b) = &raw.block {
        let b = b.get_ref();
        return Some(Action::Block { from: ctx.refer(&b.from, ANY)?, to: ctx.refer(&b.to, ANY)? });
    }
    if let Some(h) = &raw.heal {
        if h.get_ref() == "all" {
            return Some(Action::Heal(None));
        }
        if refs.cuts.contains(h.get_ref()) || refs.broken_cuts.contains(h.get_ref()) {
            return Some(Action::Heal(Some(h.get_ref().clone())));
        }
        let help = match refs.cuts.as_slice() {
            [] => "use \"all\"; no partition or block comes before it".to_string(),
            cuts => format!("use \"all\" or the name of an earlier partition or block ({})", cuts.join(", ")),
        };
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
    operator_action(ctx, raw, refs)
}

/// `partition = [[a, b], [c]]`: groups that cut each other off. An unknown node is reported on
/// its own (with a "did you mean"); the shape is judged by what was written.
fn partition(ctx: &mut Ctx, p: &S<Vec<Vec<S<String>>>>) -> Option<Action> {
    let written = p.get_ref();
    if written.len() < 2 || written.iter().any(Vec::is_empty) {
        return ctx.fail(
            p.span(),
            "a partition needs at least two non-empty groups",
            Some("e.g. partition = [[\"a0\"], [\"ns2\"]]"),
        );
    }
    let mut group_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ok = true;
    for (g, node) in written.iter().enumerate().flat_map(|(g, nodes)| nodes.iter().map(move |n| (g, n))) {
        if let Some(first) = group_of.insert(node.get_ref(), g) {
            let msg = format!("{:?} is in two groups of this partition ({} and {})", node.get_ref(), first + 1, g + 1);
            ctx.error(node.span(), msg, Some("a node sits on one side of a cut; list it once".into()));
            ok = false;
        }
    }
    let groups: Vec<Vec<String>> =
        written.iter().map(|g| g.iter().filter_map(|n| ctx.refer(n, ANY)).collect()).collect();
    let complete = groups.iter().zip(written).all(|(g, w)| g.len() == w.len());
    (ok && complete).then_some(Action::Partition(groups))
}

fn operator_action(ctx: &mut Ctx, raw: &RawEvent, refs: &Refs) -> Option<Action> {
    if let Some(w) = raw.wipe_write_perm.as_ref().or(raw.add_write_perm.as_ref()) {
        let w = w.get_ref();
        let namesrvs = namesrvs_or_all(ctx, &w.namesrv)?;
        let broker_name = broker_name_known(ctx, &w.broker_name, refs)?;
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
    if let Some(r) = &raw.register_topic {
        let namesrvs = namesrvs_or_all(ctx, &r.get_ref().namesrv)?;
        return super::requests::register_topic(ctx, r, refs, namesrvs);
    }
    if let Some(u) = &raw.unregister_broker {
        let namesrvs = namesrvs_or_all(ctx, &u.get_ref().namesrv)?;
        return super::requests::unregister_broker(ctx, u, refs, namesrvs);
    }
    if let Some(r) = &raw.register_broker {
        return super::requests::register_broker(ctx, r);
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
        );
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
        let id = ctx.broker_id(&s.id)?;
        return Some(Action::SetBrokerId { broker, id });
    }
    if let Some(p) = &raw.broker_permission {
        let p = p.get_ref();
        let broker = ctx.refer(&p.broker, &[Kind::Broker])?;
        let perm = ctx.perm(&p.perm)?;
        return Some(Action::BrokerPermission { broker, perm });
    }
    super::timeline_nacos::nacos_action(ctx, raw, &refs.nacos)
}

/// Events by name, for anchors: built once, so each expectation's anchor is a lookup.
pub struct Anchors<'a> {
    /// Each name's time and how many events carry it.
    by_name: BTreeMap<&'a str, (SimTime, usize)>,
    broken: &'a BTreeSet<String>,
}

/// Why an anchor names no single event.
pub enum AnchorError {
    /// No event has the name (the message says so).
    Unknown(String),
    /// Several events have it (the message says how many).
    Ambiguous(String),
    /// The event is wrong and was reported already: nothing more to say.
    Broken,
}

impl<'a> Anchors<'a> {
    pub fn new(timeline: &'a Timeline) -> Self {
        let mut by_name: BTreeMap<&str, (SimTime, usize)> = BTreeMap::new();
        for p in &timeline.placed {
            by_name.entry(p.event.name.as_str()).or_insert((p.event.at, 0)).1 += 1;
        }
        Anchors { by_name, broken: &timeline.broken }
    }

    /// Whether some event, valid or not, carries exactly this name.
    pub fn knows(&self, name: &str) -> bool {
        self.by_name.contains_key(name) || self.broken.contains(name)
    }

    /// Every valid event's name, for "did you mean".
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().copied()
    }

    pub fn find(&self, name: &str) -> Result<SimTime, AnchorError> {
        match self.by_name.get(name) {
            _ if self.broken.contains(name) => Err(AnchorError::Broken),
            Some(&(at, 1)) => Ok(at),
            Some(&(_, n)) => Err(AnchorError::Ambiguous(format!("{n} events are named {name:?}"))),
            None => Err(AnchorError::Unknown(format!("no fault or action is named {name:?}"))),
        }
    }
}
