//! `[[producer]]`: a `DefaultMQProducer` inside a `[[client]]` process, sending to one topic at a
//! steady rate or in bursts. Its settings are `DefaultMQProducer`'s, with their 5.3.3 defaults
//! (`rocketmq::producer::ProducerConfig`).

use super::ctx::{Ctx, Kind, Least};
use super::error::nearest;
use super::raw::{RawProducer, S};
use super::write::{d, q, t};
use crate::rocketmq::producer::{CommunicationMode, ProducerConfig};
use crate::sim::clock::{SimDuration, SimTime};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// At most this many write queues in a producer's topic, over all its brokers: the model lists
/// every queue, as `TopicPublishInfo.messageQueueList` does, and a topic of billions of queues
/// (each count may go up to Java's `int`) would take the machine's memory with it.
pub const MAX_PUBLISH_QUEUES: u64 = 65_536;

/// At most this many messages a second from one producer: one every millisecond, the clock's
/// resolution.
pub const MAX_RATE: i64 = 1000;

/// At most this many messages in one burst.
pub const MAX_BURST: i64 = 100_000;

/// At most this many retries (`retry_times`, `retry_times_async`). Java takes any `int`, but a
/// synchronous send whose budget is spent to the millisecond makes every remaining attempt at
/// once (`timeout < costTime` is strict), and on the virtual clock "at once" is one instant
/// that never ends: 2147483647 retries after one power-off ran the machine out of memory.
pub const MAX_RETRY_TIMES: i64 = 1000;

/// When a producer sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// `rate` messages a second, evenly: the k-th at `from + k·1000/rate` ms.
    Steady { rate: u32 },
    /// `size` messages at once every `every`.
    Bursts { size: u32, every: SimDuration },
}

impl Schedule {
    /// The sends due at the `k`-th tick, and when that tick is, counted from the first.
    pub fn tick(&self, k: u64) -> (SimDuration, u32) {
        match *self {
            Schedule::Steady { rate } => (SimDuration(k * 1000 / u64::from(rate)), 1),
            Schedule::Bursts { size, every } => (SimDuration(k.saturating_mul(every.millis())), size),
        }
    }

    /// The first tick due at or after `elapsed` from the first: where a producer whose process
    /// starts (or restarts) late begins, instead of sending every tick it missed at once.
    pub fn first_tick_from(&self, elapsed: SimDuration) -> u64 {
        match *self {
            // floor(k·1000/rate) >= e exactly when k >= e·rate/1000.
            Schedule::Steady { rate } => (elapsed.millis() * u64::from(rate)).div_ceil(1000),
            Schedule::Bursts { every, .. } => elapsed.millis().div_ceil(every.millis()),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProducerSpec {
    pub name: String,
    /// The `[[client]]` process it runs in: its `MQClientInstance`, whose route cache it reads.
    pub client: String,
    pub topic: String,
    pub schedule: Schedule,
    pub mode: CommunicationMode,
    /// The first send, and the time after which no send starts.
    pub from: SimTime,
    pub until: SimTime,
    pub config: ProducerConfig,
}

/// Validates the producers; each one's topic is added to its client's polled topics (Java adds
/// it to `topicPublishInfoTable` at the first send, and `updateTopicRouteInfoFromNameServer`
/// polls every topic there).
/// `write_queues`: each known topic's most write queues over all its brokers.
pub fn producers(ctx: &mut Ctx, raw: Vec<S<RawProducer>>, write_queues: &BTreeMap<String, u64>) -> Vec<ProducerSpec> {
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for r in raw {
        let r = r.into_inner();
        if !names.insert(r.name.get_ref().clone()) {
            ctx.error(r.name.span(), format!("duplicate producer name {:?}", r.name.get_ref()), None);
        }
        if let Some(p) = producer(ctx, r, write_queues) {
            out.push(p);
        }
    }
    out
}

fn producer(ctx: &mut Ctx, r: RawProducer, write_queues: &BTreeMap<String, u64>) -> Option<ProducerSpec> {
    let client = ctx.refer(&r.client, &[Kind::Client]);
    let topic = r.topic.get_ref();
    match write_queues.get(topic) {
        None => {
            let help = nearest(topic, write_queues.keys().map(String::as_str)).map(|n| format!("did you mean {n:?}?"));
            ctx.error(r.topic.span(), format!("unknown topic {topic:?}: no broker has it"), help);
        }
        Some(&n) if n > MAX_PUBLISH_QUEUES => {
            let msg = format!("topic {topic:?} has up to {n} write queues over its brokers; a producer's topic may have at most {MAX_PUBLISH_QUEUES}");
            ctx.error(r.topic.span(), msg, Some("the model lists every queue, as TopicPublishInfo does".into()));
        }
        Some(_) => {}
    }
    let schedule = schedule(ctx, &r);
    let mode = match r.mode.as_ref().map(|m| (m, m.get_ref().as_str())) {
        None | Some((_, "sync")) => CommunicationMode::Sync,
        Some((_, "async")) => CommunicationMode::Async,
        Some((_, "oneway")) => CommunicationMode::Oneway,
        Some((m, other)) => {
            let help = Some("one of \"sync\", \"async\", \"oneway\"".to_string());
            ctx.error(m.span(), format!("unknown mode {other:?}"), help);
            CommunicationMode::Sync
        }
    };
    let from = r.from.as_ref().and_then(|v| ctx.time(v)).unwrap_or(SimTime::ZERO + SimDuration::from_secs(1));
    let until = r.until.as_ref().and_then(|v| ctx.time(v)).unwrap_or(SimTime::ZERO + ctx.duration);
    if let (Some(u), true) = (&r.until, until < from) {
        let from_is = if r.from.is_some() { "" } else { ", its default" };
        let msg = format!("`until` ({until}) is before `from` ({from}{from_is}): the producer would never send");
        ctx.error(u.span(), msg, Some("`from` is the first send; `until` the last time a send may start".into()));
    }
    let mut config = ProducerConfig::default();
    config.send_msg_timeout =
        ctx.duration_in(&r.send_timeout, config.send_msg_timeout, "send_timeout", Least::OneMilli);
    if let Some(v) = &r.retry_times {
        config.retry_times_when_send_failed = retries(ctx, v, "retry_times").unwrap_or(2);
    }
    if let Some(v) = &r.retry_times_async {
        config.retry_times_when_send_async_failed = retries(ctx, v, "retry_times_async").unwrap_or(2);
    }
    let flag = |v: Option<bool>, default: bool| v.unwrap_or(default);
    config.retry_another_broker_when_not_store_ok =
        flag(r.retry_another_broker_when_not_store_ok, config.retry_another_broker_when_not_store_ok);
    config.send_latency_fault_enable = flag(r.send_latency_fault_enable, config.send_latency_fault_enable);
    config.start_detector_enable = flag(r.start_detector_enable, config.start_detector_enable);
    Some(ProducerSpec {
        name: r.name.into_inner(),
        client: client?,
        topic: r.topic.into_inner(),
        schedule: schedule?,
        mode,
        from,
        until,
        config,
    })
}

/// `retry_times` or `retry_times_async`: 0 to [`MAX_RETRY_TIMES`].
fn retries(ctx: &mut Ctx, v: &S<i64>, what: &str) -> Option<u32> {
    let n = *v.get_ref();
    if !(0..=MAX_RETRY_TIMES).contains(&n) {
        let help = "a send whose time is spent makes its remaining attempts in the same instant";
        return ctx.fail(v.span(), format!("{what} must be between 0 and {MAX_RETRY_TIMES}, got {n}"), Some(help));
    }
    Some(n as u32)
}

/// `rate = N`, or `burst = N` with `every = "D"`.
fn schedule(ctx: &mut Ctx, r: &RawProducer) -> Option<Schedule> {
    let count = |ctx: &mut Ctx, v: &S<i64>, what: &str, max: i64| {
        let n = *v.get_ref();
        if !(1..=max).contains(&n) {
            return ctx.fail(v.span(), format!("{what} must be between 1 and {max}, got {n}"), None);
        }
        Some(n as u32)
    };
    match (&r.rate, &r.burst, &r.every) {
        (Some(rate), None, None) => {
            let help = "one message per millisecond at most; for more at once use `burst` and `every`";
            let n = *rate.get_ref();
            if !(1..=MAX_RATE).contains(&n) {
                return ctx.fail(
                    rate.span(),
                    format!("rate must be between 1 and {MAX_RATE} messages a second, got {n}"),
                    Some(help),
                );
            }
            Some(Schedule::Steady { rate: n as u32 })
        }
        (None, Some(burst), Some(every)) => {
            let size = count(ctx, burst, "burst", MAX_BURST);
            let every = ctx.checked(every, "every", Least::OneMilli, None);
            Some(Schedule::Bursts { size: size?, every: every? })
        }
        // A schedule given twice, or half of one, is reported at the key that is wrong, with
        // what to add or remove.
        (Some(_), Some(burst), _) => both(ctx, r, "burst", burst.span()),
        (Some(_), None, Some(every)) => both(ctx, r, "every", every.span()),
        (None, Some(burst), None) => ctx.fail(
            burst.span(),
            format!("producer {:?} has `burst` without `every`", r.name.get_ref()),
            Some("add how often a burst starts, e.g. `every = \"10s\"`"),
        ),
        (None, None, Some(every)) => ctx.fail(
            every.span(),
            format!("producer {:?} has `every` without `burst`", r.name.get_ref()),
            Some("add how many messages each burst sends, e.g. `burst = 50`"),
        ),
        (None, None, None) => ctx.fail(
            r.name.span(),
            format!("producer {:?} needs a send rate", r.name.get_ref()),
            Some("give `rate = 100` (messages a second) or `burst = 50` with `every = \"10s\"`"),
        ),
    }
}

/// `rate` together with `burst` or `every`: reported at the second schedule's key.
fn both(ctx: &mut Ctx, r: &RawProducer, key: &str, span: std::ops::Range<usize>) -> Option<Schedule> {
    ctx.fail(
        span,
        format!("producer {:?} has both `rate` and `{key}`: give one schedule", r.name.get_ref()),
        Some("`rate = N` sends N messages a second, evenly; `burst = N` with `every = \"D\"` sends N at once every D"),
    )
}

/// The `[[producer]]` table that loads back as `p`.
pub fn write(out: &mut String, p: &ProducerSpec) {
    let _ = writeln!(out, "\n[[producer]]\nname = {}\nclient = {}\ntopic = {}", q(&p.name), q(&p.client), q(&p.topic));
    let _ = match p.schedule {
        Schedule::Steady { rate } => writeln!(out, "rate = {rate}"),
        Schedule::Bursts { size, every } => writeln!(out, "burst = {size}\nevery = {}", d(every)),
    };
    let mode = match p.mode {
        CommunicationMode::Sync => "sync",
        CommunicationMode::Async => "async",
        CommunicationMode::Oneway => "oneway",
    };
    let c = &p.config;
    let _ = writeln!(out, "mode = {}\nfrom = {}\nuntil = {}", q(mode), t(p.from), t(p.until));
    let _ = writeln!(out, "send_timeout = {}", d(c.send_msg_timeout));
    let _ = writeln!(out, "retry_times = {}", c.retry_times_when_send_failed);
    let _ = writeln!(out, "retry_times_async = {}", c.retry_times_when_send_async_failed);
    let _ = writeln!(out, "retry_another_broker_when_not_store_ok = {}", c.retry_another_broker_when_not_store_ok);
    let _ = writeln!(out, "send_latency_fault_enable = {}", c.send_latency_fault_enable);
    let _ = writeln!(out, "start_detector_enable = {}", c.start_detector_enable);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_start_begins_at_the_first_tick_not_yet_due() {
        // 3 a second: ticks at 0, 333, 666, 1000 ms. At 334 ms the next is the one at 666.
        let steady = Schedule::Steady { rate: 3 };
        for elapsed in [0, 1, 333, 334, 666, 667, 1000, 30_001] {
            let k = steady.first_tick_from(SimDuration(elapsed));
            assert!(steady.tick(k).0 >= SimDuration(elapsed), "rate 3, {elapsed} ms: tick {k}");
            assert!(k == 0 || steady.tick(k - 1).0 < SimDuration(elapsed), "rate 3, {elapsed} ms: tick {k}");
        }
        let bursts = Schedule::Bursts { size: 5, every: SimDuration::from_secs(10) };
        assert_eq!(bursts.first_tick_from(SimDuration(10_000)), 1);
        assert_eq!(bursts.first_tick_from(SimDuration(10_001)), 2);
    }
}
