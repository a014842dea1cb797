//! Raw name-server requests an operator or a test sends, as `[[action]]`s: `register_topic`
//! (REGISTER_TOPIC_IN_NAMESRV), `unregister_broker` (UNREGISTER_BROKER with a header of one's
//! choosing) and `register_broker` (a broker's REGISTER_BROKER under a chosen DataVersion), as
//! `RouteInfoManagerNewTest`, `RouteInfoManagerBrokerRegisterTest` and `mqadmin` send them.

use super::ctx::{Ctx, Kind};
use super::raw::{RawRegisterBroker, RawRegisterTopic, RawTopic, RawUnregisterBroker, S};
use super::timeline::{broker_name_known, Refs};
use super::Action;
use crate::rocketmq::types::{DataVersion, QueueData, UnregisterRequest};
use crate::sim::clock::SimTime;
use crate::sim::name::Name;

pub(super) fn register_topic(
    ctx: &mut Ctx,
    raw: &S<RawRegisterTopic>,
    refs: &Refs,
    namesrvs: Vec<String>,
) -> Option<Action> {
    let r = raw.get_ref();
    // `DefaultRequestProcessor#registerTopicToNamesrv` calls `registerTopic` only for a
    // non-empty list: an empty one is answered SUCCESS and changes nothing, which a scenario
    // would not mean.
    if r.queues.get_ref().is_empty() {
        let help = "give at least one `{ broker_name = ..., read = 8, write = 8 }`";
        return ctx.fail(r.queues.span(), "`queues` is empty: the name server would ignore it", Some(help));
    }
    let mut queues = Vec::new();
    for q in r.queues.get_ref() {
        let q = q.get_ref();
        let name = broker_name_known(ctx, &q.broker_name, refs);
        // The counts and perm read as a topic's do (defaults 16/16, rw).
        let topic =
            RawTopic { name: r.topic.clone(), read: q.read.clone(), write: q.write.clone(), perm: q.perm.clone() };
        let config = super::validate::topic(ctx, &topic);
        let sys_flag = q.sys_flag.as_ref().map(|f| ctx.count(f, "sys_flag", 0)).unwrap_or(Some(0));
        queues.push(QueueData {
            broker_name: Name::from(name?),
            read_queue_nums: config.read_queue_nums,
            write_queue_nums: config.write_queue_nums,
            perm: config.perm,
            topic_sys_flag: sys_flag?,
        });
    }
    Some(Action::RegisterTopic { namesrvs, topic: r.topic.get_ref().clone(), queues })
}

pub(super) fn unregister_broker(
    ctx: &mut Ctx,
    raw: &S<RawUnregisterBroker>,
    refs: &Refs,
    namesrvs: Vec<String>,
) -> Option<Action> {
    let r = raw.get_ref();
    let from = match &r.broker {
        Some(b) => {
            let name = ctx.refer(b, &[Kind::Broker])?;
            refs.brokers.iter().find(|s| s.name == name)
        }
        None => None,
    };
    // Each field: as given, else the broker's own; with neither the header is incomplete.
    let mut missing = Vec::new();
    let mut field = |v: &Option<S<String>>, own: Option<&String>, key: &'static str| match (v, own) {
        (Some(v), _) => Some(v.get_ref().clone()),
        (None, Some(own)) => Some(own.clone()),
        (None, None) => {
            missing.push(key);
            None
        }
    };
    let cluster = field(&r.cluster, from.map(|b| &b.config.cluster), "cluster");
    let broker_addr = field(&r.broker_addr, from.map(|b| &b.config.addr), "broker_addr");
    let broker_name = field(&r.broker_name, from.map(|b| &b.config.broker_name), "broker_name");
    let broker_id = match (&r.broker_id, from) {
        (Some(id), _) => ctx.count(id, "broker_id", 0).map(u64::from),
        (None, Some(b)) => Some(b.config.broker_id),
        (None, None) => {
            missing.push("broker_id");
            None
        }
    };
    if !missing.is_empty() {
        let help = "name the broker (`broker = \"a0\"`) to take its header, or give every field";
        return ctx.fail(raw.span(), format!("the UNREGISTER_BROKER header lacks {}", missing.join(", ")), Some(help));
    }
    let request = UnregisterRequest {
        cluster_name: Name::from(cluster?),
        broker_addr: Name::from(broker_addr?),
        broker_name: Name::from(broker_name?),
        broker_id: broker_id?,
    };
    Some(Action::UnregisterBroker { namesrvs, request })
}

/// `register_broker = { broker, data_version = { counter, timestamp = "0s", state_version = 0 } }`.
/// Java's `DataVersion` holds three `long`s (`stateVersion`, `timestamp`, an `AtomicLong`
/// counter) and `equals` compares all three; a broker's first version is counter 0 with the
/// timestamp of its start. The timestamp is a time from the scenario's start, like every time
/// here, and may lie past the run's end: it is only compared, never waited for.
pub(super) fn register_broker(ctx: &mut Ctx, raw: &S<RawRegisterBroker>) -> Option<Action> {
    let r = raw.get_ref();
    let broker = ctx.refer(&r.broker, &[Kind::Broker]);
    let dv = r.data_version.get_ref();
    let counter = ctx.long(&dv.counter, "counter");
    let state_version = match &dv.state_version {
        Some(v) => ctx.long(v, "state_version"),
        None => Some(0),
    };
    let timestamp = match &dv.timestamp {
        Some(t) => ctx.duration(t).map(|d| SimTime::ZERO + d),
        None => Some(SimTime::ZERO),
    };
    let version = DataVersion { state_version: state_version?, timestamp: timestamp?, counter: counter? };
    Some(Action::RegisterBroker { broker: broker?, version })
}
