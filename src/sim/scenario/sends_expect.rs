//! The `sends` subject of an `[[expect]]`: `sends = { producer = "p1", failed = 0 }`.

use super::ctx::{Ctx, Least};
use super::error::nearest;
use super::producer::ProducerSpec;
use super::raw::{RawSends, S};
use super::write::{d, q};
use crate::sim::clock::SimTime;
use crate::sim::expect::{SendsWant, Subject, When};
use std::collections::BTreeSet;

pub fn subject(
    ctx: &mut Ctx,
    raw: &S<RawSends>,
    producers: &[ProducerSpec],
    broker_names: &BTreeSet<String>,
) -> Option<Subject> {
    let r = raw.get_ref();
    let name = r.producer.get_ref();
    if !producers.iter().any(|p| p.name == *name) {
        let help = match nearest(name, producers.iter().map(|p| p.name.as_str())) {
            Some(n) => format!("did you mean {n:?}?"),
            None => "define it in a [[producer]] table".to_string(),
        };
        ctx.error(r.producer.span(), format!("unknown producer {name:?}"), Some(help));
    }
    let to_broker = match &r.to_broker {
        Some(b) if !broker_names.contains(b.get_ref()) => {
            let help =
                nearest(b.get_ref(), broker_names.iter().map(String::as_str)).map(|n| format!("did you mean {n:?}?"));
            ctx.error(b.span(), format!("unknown broker name {:?}", b.get_ref()), help);
            None
        }
        Some(b) => Some(b.get_ref().clone()),
        None => None,
    };
    // Counts of an expectation are Java ints like every other count in a scenario, and the
    // message gives both bounds.
    let count = |ctx: &mut Ctx, v: &Option<S<i64>>, what: &str| -> Option<u64> {
        ctx.count(v.as_ref()?, what, 0).map(u64::from)
    };
    let want = SendsWant {
        producer: name.clone(),
        to_broker,
        since: SimTime::ZERO,
        sent_at_most: count(ctx, &r.sent_at_most, "sent_at_most"),
        failed: count(ctx, &r.failed, "failed"),
        failed_at_most: count(ctx, &r.failed_at_most, "failed_at_most"),
        failed_at_least: count(ctx, &r.failed_at_least, "failed_at_least"),
        succeeded_at_least: count(ctx, &r.succeeded_at_least, "succeeded_at_least"),
        retried_at_most: count(ctx, &r.retried_at_most, "retried_at_most"),
        max_latency: r.max_latency.as_ref().and_then(|v| ctx.checked(v, "max_latency", Least::Zero, None)),
    };
    // Claims as written: one whose value is wrong is reported on its own, not as missing.
    let counts = [&r.sent_at_most, &r.failed, &r.failed_at_most, &r.failed_at_least, &r.succeeded_at_least];
    let claims = counts.iter().chain([&&r.retried_at_most]).filter(|c| c.is_some()).count()
        + usize::from(r.max_latency.is_some());
    if claims == 0 {
        let help = "`sent_at_most`, `failed`, `failed_at_most`, `failed_at_least`, `succeeded_at_least`, \
                    `retried_at_most` or `max_latency`";
        return ctx.fail(raw.span(), "a sends subject needs at least one claim", Some(help));
    }
    Some(Subject::Sends(want))
}

/// The sends counted are those that ended in the window: from its start (the run's start for
/// `at`).
pub fn anchor(subject: &mut Subject, when: &When) {
    if let Subject::Sends(want) = subject {
        want.since = match *when {
            When::At(_) => SimTime::ZERO,
            When::By { from, .. } | When::During { from, .. } => from,
        };
    }
}

/// The `sends = { ... }` line that loads back as `w`.
pub fn write(w: &SendsWant) -> String {
    let mut fields = vec![format!("producer = {}", q(&w.producer))];
    if let Some(b) = &w.to_broker {
        fields.push(format!("to_broker = {}", q(b)));
    }
    let counts = [
        ("sent_at_most", w.sent_at_most),
        ("failed", w.failed),
        ("failed_at_most", w.failed_at_most),
        ("failed_at_least", w.failed_at_least),
        ("succeeded_at_least", w.succeeded_at_least),
        ("retried_at_most", w.retried_at_most),
    ];
    fields.extend(counts.iter().filter_map(|(k, v)| v.map(|n| format!("{k} = {n}"))));
    if let Some(l) = w.max_latency {
        fields.push(format!("max_latency = {}", d(l)));
    }
    format!("sends = {{ {} }}", fields.join(", "))
}
