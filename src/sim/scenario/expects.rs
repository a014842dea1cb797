//! `[[expect]]` tables: a name, one time frame (`at` | `after`+`within` | `from`+`until`) and one
//! subject (`route` | `client` | `live` | `cluster`).

use super::ctx::{spaced_duration, Ctx, Kind, JAVA_INT_MAX};
use super::error::nearest;
use super::raw::{RawExpect, RawRoute, S};
use super::timeline::{AnchorError, Anchors};
use crate::sim::clock::{parse_duration, SimDuration, SimTime};
use crate::sim::expect::{Expectation, Quantile, QuantileBound, RouteWant, Subject, When};
use std::collections::{BTreeMap, BTreeSet};

pub struct Known<'a> {
    pub anchors: &'a Anchors<'a>,
    pub topics: &'a BTreeSet<String>,
    pub broker_names: &'a BTreeSet<String>,
    pub nacos: &'a super::nacos::NacosKnown,
    pub producers: &'a [super::producer::ProducerSpec],
    /// Broker process → its address.
    pub broker_addrs: &'a BTreeMap<String, String>,
}

pub fn expects(ctx: &mut Ctx, raw: Vec<S<RawExpect>>, known: &Known) -> Vec<Expectation> {
    let mut out: Vec<Expectation> = Vec::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for r in raw {
        let span = r.span();
        let r = r.into_inner();
        if !names.insert(r.name.get_ref().clone()) {
            ctx.error(r.name.span(), format!("duplicate expectation name {:?}", r.name.get_ref()), None);
            continue;
        }
        let when = when(ctx, &r, span.clone(), known.anchors);
        let subject = subject(ctx, &r, span, known);
        let converges = converges(ctx, &r, when.as_ref());
        if let (Some(when), Some(mut subject)) = (when, subject) {
            super::sends_expect::anchor(&mut subject, &when);
            out.push(Expectation { name: r.name.into_inner(), when, subject, converges });
        }
    }
    out
}

/// `converges = { ... }`: each key a duration (at most) or a range `"A..B"` (within). Only an
/// `after`/`within` expectation has a convergence time to bound.
fn converges(ctx: &mut Ctx, r: &RawExpect, when: Option<&When>) -> Vec<QuantileBound> {
    let Some(raw) = &r.converges else { return Vec::new() };
    if when.is_some_and(|w| !matches!(w, When::By { .. })) {
        let help = "only `after` with `within` measures a convergence time; `sweep` takes its distribution";
        ctx.error(raw.span(), "`converges` needs an `after`/`within` expectation", Some(help.into()));
        return Vec::new();
    }
    let c = raw.get_ref();
    let keys = [
        (Quantile::Min, &c.min),
        (Quantile::P50, &c.p50),
        (Quantile::P90, &c.p90),
        (Quantile::P99, &c.p99),
        (Quantile::Max, &c.max),
    ];
    let mut out = Vec::new();
    let mut stated = false;
    for (quantile, v) in keys {
        let Some(v) = v else { continue };
        stated = true;
        let text = v.get_ref().trim();
        let parsed = match text.split_once("..") {
            Some((a, b)) => parse_duration(a.trim()).and_then(|a| Ok((a, parse_duration(b.trim())?))),
            None => parse_duration(text).map(|b| (SimDuration::ZERO, b)),
        };
        match parsed {
            Ok((at_least, at_most)) if at_least <= at_most => out.push(QuantileBound { quantile, at_least, at_most }),
            Ok(_) => ctx.error(v.span(), format!("range {text:?} ends before it starts"), None),
            Err(e) => ctx.error(
                v.span(),
                format!("invalid {} {:?}: {}", quantile.key(), e.input, e.why),
                Some("a duration (at most), e.g. \"125s\", or a range (within), e.g. \"100s..115s\"".into()),
            ),
        }
    }
    if !stated {
        ctx.error(raw.span(), "`converges` states no bound", Some("give one of min, p50, p90, p99, max".into()));
    }
    out
}

/// A point in time: `"90s"`, or an event's name, either optionally with an offset: `"NAME + 5s"`,
/// `"NAME - 5s"`, `"165.005s - 1ms"`.
/// Virtual time moves in whole milliseconds, so `"NAME - 1ms"` is the state just before the
/// events of NAME's instant: nothing can happen between the two.
fn point(ctx: &mut Ctx, v: &S<String>, anchors: &Anchors) -> Option<SimTime> {
    let text = v.get_ref().trim();
    // `"5 m"` is a time with a stray space, not the name of an event, unless one has that name.
    if parse_duration(text).is_ok() || (!anchors.knows(text) && spaced_duration(text).is_some()) {
        return ctx.time(v);
    }
    // A whole name first: a default name such as "latency a -> b 5ms+0ms" holds a '+' itself
    // (a `name` that reads as a time is refused, so this is never ambiguous).
    let (name, sign, offset) = match offset_split(text) {
        _ if anchors.knows(text) => (text, '+', Default::default()),
        Some((n, sign, d)) if parse_duration(d).is_ok() => (n, sign, parse_duration(d).ok()?),
        Some((n, sign, d)) if spaced_duration(d).is_some() => {
            let tight = spaced_duration(d).unwrap_or_default();
            let msg = format!("invalid duration {d:?} after `{sign}`: a duration has no spaces");
            return ctx.fail(v.span(), msg, Some(&format!("write it {:?}", format!("{n} {sign} {tight}"))));
        }
        _ => (text, '+', Default::default()),
    };
    // `"165.005s - 1ms"`: a time with an offset, as an event's name with one.
    let found = match parse_duration(name) {
        Ok(d) => Ok(SimTime::ZERO + d),
        Err(_) => anchors.find(name),
    };
    match found {
        Ok(t) if sign == '-' && offset > t.since(SimTime::ZERO) => {
            let msg = format!("{text:?} is before the run starts ({name:?} is at {t})");
            ctx.fail(v.span(), msg, Some(&format!("subtract at most {}", t.since(SimTime::ZERO))))
        }
        Ok(t) if sign == '-' => ctx.within_run(v.span(), t - offset),
        Ok(t) => ctx.within_run(v.span(), t + offset),
        // The event is wrong and reported already; anchoring on it is not a second mistake.
        Err(AnchorError::Broken) => None,
        Err(AnchorError::Ambiguous(msg)) => {
            ctx.fail(v.span(), msg, Some("give each of those events its own `name` and anchor on one"))
        }
        Err(AnchorError::Unknown(msg)) => {
            let help = match nearest(name, anchors.names()) {
                Some(n) => format!("did you mean {n:?}? (a time like \"90s\" works too)"),
                None => "use a time like \"90s\", a fault's name, \"NAME + 5s\" or \"NAME - 1ms\"".into(),
            };
            ctx.fail(v.span(), msg, Some(&help))
        }
    }
}

/// `"NAME + D"` or `"NAME - D"` as (NAME, sign, D), both trimmed. A minus needs a space before
/// it, since names hold hyphens (`"kill orders-1"`); a plus does not (`"kill a0+5s"`).
pub(super) fn offset_split(text: &str) -> Option<(&str, char, &str)> {
    let plus = text.rfind('+');
    let minus = text.rfind(" -").map(|i| i + 1);
    let (i, sign) = match (plus, minus) {
        (Some(p), Some(m)) if m > p => (m, '-'),
        (Some(p), _) => (p, '+'),
        (None, Some(m)) => (m, '-'),
        (None, None) => return None,
    };
    Some((text[..i].trim(), sign, text[i + 1..].trim()))
}

fn when(ctx: &mut Ctx, r: &RawExpect, span: std::ops::Range<usize>, events: &Anchors) -> Option<When> {
    match (&r.at, &r.after, &r.within, &r.from, &r.until) {
        (Some(at), None, None, None, None) => Some(When::At(point(ctx, at, events)?)),
        (None, Some(after), Some(within), None, None) => {
            let from = point(ctx, after, events)?;
            let d = ctx.duration(within)?;
            let deadline = ctx.within_run(within.span(), from + d)?;
            Some(When::By { from, deadline })
        }
        (None, None, None, Some(from), Some(until)) => {
            let (from_t, until_t) = (point(ctx, from, events)?, point(ctx, until, events)?);
            if until_t < from_t {
                return ctx.fail(until.span(), format!("`until` ({until_t}) is before `from` ({from_t})"), None);
            }
            Some(When::During { from: from_t, until: until_t })
        }
        _ => ctx.fail(
            span,
            "an expectation needs exactly one time frame",
            Some(
                "use `at = T`, or `after = T` with `within = D` (eventually), or `from = T` with `until = T` (always)",
            ),
        ),
    }
}

fn subject(ctx: &mut Ctx, r: &RawExpect, span: std::ops::Range<usize>, known: &Known) -> Option<Subject> {
    let nacos = super::nacos_expect::count(r);
    let count = [r.route.is_some(), r.client.is_some(), r.live.is_some(), r.cluster.is_some(), r.sends.is_some()]
        .iter()
        .chain([&r.events.is_some(), &r.topics.is_some(), &r.registration.is_some()])
        .filter(|x| **x)
        .count()
        + nacos;
    if count != 1 {
        return ctx.fail(
            span,
            format!("an expectation needs exactly one subject, found {count}"),
            Some(
                "one of `route`, `client`, `live`, `cluster`, `topics`, `registration`, `sends` (RocketMQ), `instance`, `service`, `subscriber`, `member`, `connection`, `responsible` (Nacos) or `events` (the trace)",
            ),
        );
    }
    if nacos == 1 {
        return super::nacos_expect::subject(ctx, r, known.nacos);
    }
    if let Some(events) = &r.events {
        return super::events_expect::subject(ctx, events, known);
    }
    if let Some(sends) = &r.sends {
        return super::sends_expect::subject(ctx, sends, known.producers, known.broker_names);
    }
    if let Some(route) = &r.route {
        let rr = route.get_ref();
        let Some(ns) = &rr.namesrv else {
            return ctx.fail(
                route.span(),
                "a route subject needs `namesrv`",
                Some("or use `client = { client = ..., topic = ... }` for a client's view"),
            );
        };
        if let Some(c) = &rr.client {
            return ctx.fail(
                c.span(),
                "`client` does not belong in a route subject",
                Some("use a `client` subject for a client's view"),
            );
        }
        if let Some(w) = &rr.writable_queues {
            return ctx.fail(w.span(), "`writable_queues` is a client claim", Some("use a `client` subject"));
        }
        let namesrv = ctx.refer(ns, &[Kind::Namesrv]);
        let (topic, want) = (topic(ctx, rr, known), want(ctx, rr, known));
        return Some(Subject::Route { namesrv: namesrv?, topic: topic?, want: want? });
    }
    if let Some(client) = &r.client {
        let rr = client.get_ref();
        let Some(c) = &rr.client else { return ctx.fail(client.span(), "a client subject needs `client`", None) };
        if let Some(ns) = &rr.namesrv {
            return ctx.fail(
                ns.span(),
                "`namesrv` does not belong in a client subject",
                Some("a client reads from the name server it chose"),
            );
        }
        let name = ctx.refer(c, &[Kind::Client]);
        let (topic, want) = (topic(ctx, rr, known), want(ctx, rr, known));
        return Some(Subject::Client { client: name?, topic: topic?, want: want? });
    }
    if let Some(live) = &r.live {
        return super::table_expect::live(ctx, live);
    }
    if let Some(topics) = &r.topics {
        return super::table_expect::topics(ctx, topics);
    }
    if let Some(reg) = &r.registration {
        return super::table_expect::registration(ctx, reg);
    }
    let cl = r.cluster.as_ref()?.get_ref();
    let namesrv = ctx.refer(&cl.namesrv, &[Kind::Namesrv]);
    let brokers = broker_names(ctx, &cl.brokers, known)?;
    Some(Subject::Cluster { namesrv: namesrv?, cluster: cl.cluster.get_ref().clone(), brokers })
}

fn topic(ctx: &mut Ctx, r: &RawRoute, known: &Known) -> Option<String> {
    let t = r.topic.get_ref();
    if known.topics.contains(t) {
        return Some(t.clone());
    }
    let help = nearest(t, known.topics.iter().map(String::as_str)).map(|n| format!("did you mean {n:?}?"));
    ctx.fail(r.topic.span(), format!("unknown topic {t:?}: no broker has it"), help.as_deref())
}

fn broker_name(ctx: &mut Ctx, name: &str, span: std::ops::Range<usize>, known: &Known) -> Option<String> {
    if known.broker_names.contains(name) {
        return Some(name.to_string());
    }
    let help = nearest(name, known.broker_names.iter().map(String::as_str)).map(|n| format!("did you mean {n:?}?"));
    ctx.fail(span, format!("no broker has broker_name {name:?}"), help.as_deref())
}

fn broker_names(ctx: &mut Ctx, list: &[S<String>], known: &Known) -> Option<BTreeSet<String>> {
    let names: Vec<Option<String>> = list.iter().map(|b| broker_name(ctx, b.get_ref(), b.span(), known)).collect();
    names.into_iter().collect()
}

fn want(ctx: &mut Ctx, r: &RawRoute, known: &Known) -> Option<RouteWant> {
    let mut w = RouteWant { absent: r.absent, ..Default::default() };
    if let Some(b) = &r.brokers {
        w.brokers = Some(broker_names(ctx, b, known)?);
    }
    if let Some(a) = &r.addrs {
        let mut map = BTreeMap::new();
        for (name, ids) in a.get_ref() {
            broker_name(ctx, name, a.span(), known)?;
            let mut by_id = BTreeMap::new();
            for (id, addr) in ids {
                let Ok(id) = id.parse::<u64>() else {
                    return ctx.fail(
                        a.span(),
                        format!("broker id {id:?} is not a number"),
                        Some("write addrs = { broker-a = { 0 = \"10.0.0.1:10911\" } }"),
                    );
                };
                by_id.insert(id, addr.clone());
            }
            map.insert(name.clone(), by_id);
        }
        w.addrs = Some(map);
    }
    if let Some(p) = &r.perm {
        let mut map = BTreeMap::new();
        for (name, text) in p.get_ref() {
            broker_name(ctx, name, p.span(), known)?;
            let Some(bits) = crate::rocketmq::types::perm::from_text(text) else {
                return ctx.fail(p.span(), format!("invalid perm {text:?}"), Some("use \"rw\", \"r\", \"w\" or \"-\""));
            };
            map.insert(name.clone(), bits);
        }
        w.perm = Some(map);
    }
    if let Some(q) = &r.queues {
        let mut map = BTreeMap::new();
        for (name, counts) in q.get_ref() {
            broker_name(ctx, name, q.span(), known)?;
            let range = 0..=JAVA_INT_MAX;
            if !range.contains(&counts.read) || !range.contains(&counts.write) {
                let msg = format!(
                    "queue counts must be between 0 and {JAVA_INT_MAX} (Java's int), got read = {}, write = {}",
                    counts.read, counts.write
                );
                return ctx.fail(q.span(), msg, None);
            }
            map.insert(name.clone(), (counts.read as u32, counts.write as u32));
        }
        w.queues = Some(map);
    }
    if let Some(n) = &r.writable_queues {
        w.writable_queues = Some(ctx.count(n, "writable_queues", 0)?);
    }
    Some(w)
}
