//! The `live` and `topics` subjects of an `[[expect]]`: a live entry and its fields, and a
//! topic-list query's answer.

use super::ctx::{Ctx, Kind, Least};
use super::raw::{RawLive, RawRegistration, RawTopics, S};
use super::write::{d, q};
use crate::rocketmq::route_table::TopicQuery;
use crate::sim::clock::SimTime;
use crate::sim::expect::{LiveWant, RegistrationWant, Subject, TopicsWant};
use std::collections::BTreeSet;

pub fn live(ctx: &mut Ctx, raw: &S<RawLive>) -> Option<Subject> {
    let l = raw.get_ref();
    let namesrv = ctx.refer(&l.namesrv, &[Kind::Namesrv]);
    let broker = ctx.refer(&l.broker, &[Kind::Broker]);
    let entry = LiveWant {
        data_version: l.data_version.as_ref().and_then(|v| ctx.count(v, "data_version", 0)).map(u64::from),
        last_update: l.last_update.as_ref().and_then(|v| ctx.time(v)),
        timeout: l.timeout.as_ref().and_then(|v| ctx.checked(v, "timeout", Least::Zero, None)),
    };
    let claims = [l.data_version.is_some(), l.last_update.is_some(), l.timeout.is_some()];
    if !l.present && claims.iter().any(|c| *c) {
        let help = "a missing entry has no fields: drop them, or claim `present = true`";
        return ctx.fail(
            raw.span(),
            "`data_version`, `last_update` and `timeout` describe a present entry",
            Some(help),
        );
    }
    Some(Subject::Live { namesrv: namesrv?, broker: broker?, present: l.present, entry })
}

/// The queries by the names a scenario writes them.
const QUERIES: &[&str] = &["all", "cluster", "system", "unit", "unit_sub", "unit_sub_not_unit"];

pub fn topics(ctx: &mut Ctx, raw: &S<RawTopics>) -> Option<Subject> {
    let r = raw.get_ref();
    let namesrv = ctx.refer(&r.namesrv, &[Kind::Namesrv]);
    let query = match (r.query.get_ref().as_str(), &r.cluster) {
        ("cluster", Some(c)) => Some(TopicQuery::Cluster(c.get_ref().clone())),
        ("cluster", None) => {
            ctx.fail(r.query.span(), "`query = \"cluster\"` needs `cluster`", Some("e.g. cluster = \"DefaultCluster\""))
        }
        (_, Some(c)) => ctx.fail(c.span(), "`cluster` belongs only to `query = \"cluster\"`", None),
        ("all", None) => Some(TopicQuery::All),
        ("system", None) => Some(TopicQuery::System),
        ("unit", None) => Some(TopicQuery::Unit),
        ("unit_sub", None) => Some(TopicQuery::UnitSub),
        ("unit_sub_not_unit", None) => Some(TopicQuery::UnitSubNotUnit),
        (other, None) => {
            let help = format!("one of {}", QUERIES.join(", "));
            ctx.fail(r.query.span(), format!("unknown topic-list query {other:?}"), Some(&help))
        }
    };
    if let (Some(a), false) = (&r.broker_addr, r.query.get_ref() == "system") {
        return ctx.fail(a.span(), "only `query = \"system\"` answers a broker address", None);
    }
    let set =
        |v: &Option<Vec<S<String>>>| -> BTreeSet<String> { v.iter().flatten().map(|s| s.get_ref().clone()).collect() };
    let want = TopicsWant {
        query: query?,
        exactly: r.topics.as_ref().map(|_| set(&r.topics)),
        includes: set(&r.includes),
        excludes: set(&r.excludes),
        broker_addr: r.broker_addr.as_ref().map(|a| a.get_ref().clone()),
    };
    if want.exactly.is_none() && want.includes.is_empty() && want.excludes.is_empty() && want.broker_addr.is_none() {
        let help = "`topics = [...]` (exactly), `includes`, `excludes`, or `broker_addr` for the system list";
        return ctx.fail(raw.span(), "a topics subject needs a claim", Some(help));
    }
    Some(Subject::Topics { namesrv: namesrv?, want })
}

/// The `live = { ... }` line that loads back as the subject.
pub fn write_live(namesrv: &str, broker: &str, present: bool, e: &LiveWant) -> String {
    let mut fields = vec![format!("namesrv = {}", q(namesrv)), format!("broker = {}", q(broker))];
    fields.push(format!("present = {present}"));
    fields.extend(e.data_version.map(|v| format!("data_version = {v}")));
    fields.extend(e.last_update.map(|t| format!("last_update = {}", d(t.since(SimTime::ZERO)))));
    fields.extend(e.timeout.map(|t| format!("timeout = {}", d(t))));
    format!("live = {{ {} }}", fields.join(", "))
}

/// The `topics = { ... }` line that loads back as `w`.
pub fn write_topics(namesrv: &str, w: &TopicsWant) -> String {
    let list = |s: &BTreeSet<String>| format!("[{}]", s.iter().map(|t| q(t)).collect::<Vec<_>>().join(", "));
    let query = match &w.query {
        TopicQuery::All => "query = \"all\"".to_string(),
        TopicQuery::Cluster(c) => format!("query = \"cluster\", cluster = {}", q(c)),
        TopicQuery::System => "query = \"system\"".into(),
        TopicQuery::Unit => "query = \"unit\"".into(),
        TopicQuery::UnitSub => "query = \"unit_sub\"".into(),
        TopicQuery::UnitSubNotUnit => "query = \"unit_sub_not_unit\"".into(),
    };
    let mut fields = vec![format!("namesrv = {}", q(namesrv)), query];
    fields.extend(w.exactly.as_ref().map(|e| format!("topics = {}", list(e))));
    if !w.includes.is_empty() {
        fields.push(format!("includes = {}", list(&w.includes)));
    }
    if !w.excludes.is_empty() {
        fields.push(format!("excludes = {}", list(&w.excludes)));
    }
    fields.extend(w.broker_addr.as_ref().map(|a| format!("broker_addr = {}", q(a))));
    format!("topics = {{ {} }}", fields.join(", "))
}

/// `registration = { broker, namesrv, master_addr = "...", ha_server_addr = "" }`: `""` is
/// Java's null.
pub fn registration(ctx: &mut Ctx, raw: &S<RawRegistration>) -> Option<Subject> {
    let r = raw.get_ref();
    let broker = ctx.refer(&r.broker, &[Kind::Broker]);
    let namesrv = ctx.refer(&r.namesrv, &[Kind::Namesrv]);
    let field = |v: &Option<S<String>>| v.as_ref().map(|v| Some(v.get_ref().clone()).filter(|s| !s.is_empty()));
    let want = RegistrationWant { master_addr: field(&r.master_addr), ha_server_addr: field(&r.ha_server_addr) };
    if want == RegistrationWant::default() {
        let help = "`master_addr` and/or `ha_server_addr` (\"\" claims none, as a master gets)";
        return ctx.fail(raw.span(), "a registration subject needs a claim", Some(help));
    }
    Some(Subject::Registration { broker: broker?, namesrv: namesrv?, want })
}

/// The `registration = { ... }` line that loads back as the subject.
pub fn write_registration(broker: &str, namesrv: &str, w: &RegistrationWant) -> String {
    let mut fields = vec![format!("broker = {}", q(broker)), format!("namesrv = {}", q(namesrv))];
    let text = |v: &Option<String>| q(v.as_deref().unwrap_or(""));
    fields.extend(w.master_addr.as_ref().map(|m| format!("master_addr = {}", text(m))));
    fields.extend(w.ha_server_addr.as_ref().map(|h| format!("ha_server_addr = {}", text(h))));
    format!("registration = {{ {} }}", fields.join(", "))
}
