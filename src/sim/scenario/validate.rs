//! From raw TOML to a [`Scenario`]: defaults, references, ranges — every problem reported.

use super::ctx::{Ctx, Kind, Least, MAX_DURATION};
use super::error::{nearest, unquoted_duration, ScenarioErrors};
use super::raw::{RawBroker, RawClient, RawNamesrv, RawScenario, RawTopic, S};
use super::{Action, BrokerSpec, ClientSpec, NamesrvSpec, NetworkSpec, Scenario};
use crate::rocketmq::batch::DEFAULT_QUEUE_CAPACITY;
use crate::rocketmq::broker::{BrokerConfig, TopicChange};
use crate::rocketmq::route_table::NamesrvConfig;
use crate::rocketmq::topic_table::TopicConfigs;
use crate::rocketmq::types::{perm, TopicConfig, NETTY_IDLE_TIME, SCAN_INITIAL_DELAY};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::invariants::Invariant;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `seed`: the run's seed when it is not the file's (`--seed`, a sweep): ranges are drawn from it.
pub fn validate(path: &Path, source: &str, seed: Option<u64>) -> Result<Scenario, ScenarioErrors> {
    let mut ctx = Ctx::new(path, source);
    if let Some(e) = super::limits::check_size(ctx.locator(), source) {
        return Err(ScenarioErrors(vec![e]));
    }
    let raw: RawScenario = match toml::from_str(source) {
        Ok(raw) => raw,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let (message, help) = explain_toml_error(e.message());
            let help = help.or_else(|| unquoted_duration(source, span.start)).or_else(|| bare_number(&message));
            ctx.error(span, message, help);
            return Err(ScenarioErrors(ctx.errors));
        }
    };
    let too_many = super::limits::check_counts(ctx.locator(), &raw);
    if !too_many.is_empty() {
        return Err(ScenarioErrors(too_many));
    }
    let scenario = build(&mut ctx, raw, seed);
    if ctx.errors.is_empty() {
        Ok(scenario)
    } else {
        ctx.errors.sort_by_key(|e| (e.line, e.column));
        Err(ScenarioErrors(ctx.errors))
    }
}

/// A bare number where a string is expected (`duration = 90`): durations and times carry their
/// unit in a quoted string, and a number alone would be ambiguous (seconds? milliseconds?).
fn bare_number(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("invalid type: integer `")
        .or_else(|| message.strip_prefix("invalid type: floating point `"))?;
    let (number, expected) = rest.split_once('`')?;
    expected.contains("expected a string").then(|| {
        format!("if this is a duration or a time, write it quoted with its unit: \"{number}s\" or \"{number}ms\"")
    })
}

/// serde's messages, with a "did you mean" for misspelt keys.
fn explain_toml_error(message: &str) -> (String, Option<String>) {
    let message = message.trim().to_string();
    let Some(rest) = message.strip_prefix("unknown field `") else { return (message, None) };
    let Some((field, expected)) = rest.split_once('`') else { return (message, None) };
    let valid: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let help = match nearest(field, valid.iter().copied()) {
        Some(near) => format!("did you mean `{near}`? valid keys here: {}", valid.join(", ")),
        None => format!("valid keys here: {}", valid.join(", ")),
    };
    (format!("unknown key `{field}`"), Some(help))
}

fn build(ctx: &mut Ctx, raw: RawScenario, seed_override: Option<u64>) -> Scenario {
    let meta = raw.scenario.into_inner();
    let seed = match seed_override {
        Some(s) => s,
        None => seed(ctx, meta.seed.as_ref()),
    };
    ctx.seed_phases(seed);
    // A duration that does not parse is reported once; times are then checked against the cap,
    // not against 0 s, where each would add a false "past the end".
    let parsed = ctx.duration(&meta.duration);
    ctx.duration = parsed.unwrap_or(MAX_DURATION);
    if ctx.duration > MAX_DURATION {
        // Times are checked against the duration: against the cap, they report only themselves.
        let msg = format!("duration must be {}, got {}", super::ctx::range_text(Least::OneMilli), ctx.duration);
        ctx.error(meta.duration.span(), msg, Some("a run covers at most 30 days of virtual time".into()));
        ctx.duration = MAX_DURATION;
    } else if parsed == Some(SimDuration::ZERO) {
        ctx.error(
            meta.duration.span(),
            "the scenario needs a positive duration",
            Some("e.g. duration = \"5m\"".into()),
        );
    }
    let network = network(ctx, raw.network.map(S::into_inner).unwrap_or_default());

    // Names first, so any table may refer to any process.
    for n in &raw.namesrv {
        ctx.define(&n.get_ref().name, Kind::Namesrv);
    }
    for b in &raw.broker {
        ctx.define(&b.get_ref().name, Kind::Broker);
    }
    for c in &raw.client {
        ctx.define(&c.get_ref().name, Kind::Client);
    }
    super::nacos::define_names(ctx, &raw.nacos_server, &raw.instance, &raw.subscriber);
    let namesrvs: Vec<_> = raw.namesrv.into_iter().map(|n| namesrv(ctx, n.into_inner())).collect();
    let mut addrs = BTreeMap::new();
    let mut brokers: Vec<_> = raw.broker.into_iter().map(|b| broker(ctx, b.into_inner(), &mut addrs)).collect();
    share_equal_topic_lists(&mut brokers);
    // Sets, not lists: every client's and expectation's topic is looked up here.
    let topics: BTreeSet<String> = brokers.iter().flat_map(|b| b.topics.iter().map(|t| t.topic_name.clone())).collect();
    let (nacos, broken_instances) = super::nacos::build(ctx, raw.nacos_server, raw.instance, raw.subscriber);
    let timeline = super::timeline::timeline(ctx, raw.fault, raw.action, &brokers, (&nacos, &broken_instances));
    let mut known_topics = topics;
    known_topics.extend(timeline.placed.iter().filter_map(|p| match &p.event.action {
        Action::Topic { change: TopicChange::Upsert(t), .. } => Some(t.topic_name.clone()),
        Action::RegisterTopic { topic, .. } => Some(topic.clone()),
        _ => None,
    }));
    let mut clients: Vec<_> = raw.client.into_iter().map(|c| client(ctx, c.into_inner(), &known_topics)).collect();
    // The most write queues each topic can have over all its brokers, start-up or upserted.
    let mut most: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let upserts = timeline.placed.iter().filter_map(|p| match &p.event.action {
        Action::Topic { broker, change: TopicChange::Upsert(t) } => Some((broker.as_str(), t)),
        _ => None,
    });
    for (broker, t) in brokers.iter().flat_map(|b| b.topics.iter().map(|t| (b.name.as_str(), t))).chain(upserts) {
        let n = most.entry((broker, &t.topic_name)).or_default();
        *n = (*n).max(u64::from(t.write_queue_nums));
    }
    let mut write_queues: BTreeMap<String, u64> = BTreeMap::new();
    for ((_, topic), n) in most {
        *write_queues.entry(topic.to_string()).or_default() += n;
    }
    let producers = super::producer::producers(ctx, raw.producer, &write_queues);
    for p in &producers {
        if let Some(c) = clients.iter_mut().find(|c| c.name == p.client) {
            if !c.topics.contains(&p.topic) {
                c.topics.push(p.topic.clone());
            }
        }
    }
    let starts: BTreeMap<String, SimTime> = namesrvs
        .iter()
        .map(|n| (n.name.clone(), n.start))
        .chain(brokers.iter().map(|b| (b.name.clone(), b.start)))
        .chain(clients.iter().map(|c| (c.name.clone(), c.start)))
        .chain(nacos.starts())
        .collect();
    super::lifecycle::check_lifecycles(ctx, &timeline.placed, &starts);
    let broker_names: BTreeSet<String> = brokers.iter().map(|b| b.config.broker_name.clone()).collect();
    let nacos_known = super::nacos::NacosKnown::from_specs(&nacos, broken_instances);
    let known = super::expects::Known {
        anchors: &super::timeline::Anchors::new(&timeline),
        topics: &known_topics,
        broker_names: &broker_names,
        nacos: &nacos_known,
        producers: &producers,
        broker_addrs: &brokers.iter().map(|b| (b.name.clone(), b.config.addr.clone())).collect(),
    };
    let expects = super::expects::expects(ctx, raw.expect, &known);
    let timeline = timeline.placed.into_iter().map(|p| p.event).collect();
    let invariants = invariants(ctx, meta.invariants.as_deref().unwrap_or_default());
    standalone_only(ctx, meta.invariants.as_deref().unwrap_or_default(), &nacos);
    Scenario {
        invariants,
        name: meta.name.into_inner(),
        description: meta.description,
        seed,
        drawn: std::mem::take(&mut ctx.drawn),
        duration: ctx.duration,
        network,
        namesrvs,
        brokers,
        clients,
        producers,
        nacos,
        timeline,
        expects,
    }
}

/// `seed =`: the range `--seed` takes too ([`MAX_SEED`](super::MAX_SEED)).
fn seed(ctx: &mut Ctx, v: Option<&S<i64>>) -> u64 {
    let Some(v) = v else { return 1 };
    match u64::try_from(*v.get_ref()) {
        Ok(seed) => seed,
        Err(_) => {
            let msg = format!("seed must be between 0 and {}, got {}", super::MAX_SEED, v.get_ref());
            ctx.error(v.span(), msg, Some("the same range as --seed".into()));
            1
        }
    }
}

fn invariants(ctx: &mut Ctx, keys: &[S<String>]) -> Vec<Invariant> {
    let mut out = Vec::new();
    for k in keys {
        match Invariant::from_key(k.get_ref()) {
            Some(i) if !out.contains(&i) => out.push(i),
            Some(_) => ctx.error(k.span(), format!("invariant {:?} is listed twice", k.get_ref()), None),
            None => {
                let valid: Vec<&str> = Invariant::ALL.iter().map(|i| i.key()).collect();
                let help = match nearest(k.get_ref(), valid.iter().copied()) {
                    Some(n) => format!("did you mean {n:?}? known: {}", valid.join(", ")),
                    None => format!("known: {}", valid.join(", ")),
                };
                ctx.error(k.span(), format!("unknown invariant {:?}", k.get_ref()), Some(help));
            }
        }
    }
    out
}

/// The 1.x invariants judge each naming server by what arrived at it and what its own checker
/// did. In a Distro cluster of two or more a member is responsible for only some clients: it
/// forwards the others' beats to their owner and holds copies that change a sync later, so those
/// judgements would report correct runs. `distro_agreement` is the cluster's invariant.
fn standalone_only(ctx: &mut Ctx, keys: &[S<String>], nacos: &super::NacosSpecs) {
    let Some(member) = nacos.servers.iter().find(|v| nacos.cluster_of(&v.name).len() > 1) else { return };
    let standalone = [Invariant::NacosStaysHealthy, Invariant::NacosBoundedExpiry, Invariant::NacosRecovery];
    for k in keys.iter().filter(|k| Invariant::from_key(k.get_ref()).is_some_and(|i| standalone.contains(&i))) {
        let msg = format!(
            "invariant {:?} judges standalone naming servers, but {} is in a Distro cluster: a member \
             not responsible for a client forwards its beats and learns of its expiry a sync later",
            k.get_ref(),
            member.name
        );
        let help = "in a cluster use \"distro_agreement\" (with \"grpc_stays_connected\" and \
                    \"grpc_gone_in_time\" for 2.x clients), or give every [[nacos_server]] no `cluster`";
        ctx.error(k.span(), msg, Some(help.into()));
    }
}

fn network(ctx: &mut Ctx, raw: super::raw::RawNetwork) -> NetworkSpec {
    let d = NetworkSpec::default();
    let loss = match raw.loss {
        Some(l) if !(0.0..=1.0).contains(l.get_ref()) => {
            ctx.error(l.span(), format!("loss must be between 0 and 1, got {}", l.get_ref()), None);
            0.0
        }
        Some(l) => l.into_inner(),
        None => d.loss,
    };
    NetworkSpec {
        latency: ctx.duration_in(&raw.latency, d.latency, "latency", Least::Zero),
        jitter: ctx.duration_in(&raw.jitter, d.jitter, "jitter", Least::Zero),
        loss,
        connect_timeout: ctx.duration_in(&raw.connect_timeout, d.connect_timeout, "connect_timeout", Least::OneMilli),
    }
}

fn namesrv(ctx: &mut Ctx, raw: RawNamesrv) -> NamesrvSpec {
    let capacity = match &raw.unregister_queue_capacity {
        Some(c) => ctx.count(c, "unregister_queue_capacity", 1).unwrap_or(1) as usize,
        None => DEFAULT_QUEUE_CAPACITY,
    };
    let scan_interval =
        ctx.duration_in(&raw.scan_interval, SimDuration::from_secs(5), "scan_interval", Least::OneMilli);
    NamesrvSpec {
        name: raw.name.into_inner(),
        start: ctx.time_or_zero(&raw.start),
        table: NamesrvConfig {
            support_acting_master: raw.support_acting_master.unwrap_or(false),
            notify_min_broker_id_changed: raw.notify_min_broker_id_changed.unwrap_or(false),
            delete_topic_with_broker_registration: raw.delete_topic_with_broker_registration.unwrap_or(false),
        },
        scan_interval,
        scan_initial_delay: ctx.duration_in(
            &raw.scan_initial_delay,
            SCAN_INITIAL_DELAY,
            "scan_initial_delay",
            Least::Zero,
        ),
        queue_capacity: capacity,
        unregister_delay: ctx.duration_in(&raw.unregister_delay, SimDuration::ZERO, "unregister_delay", Least::Zero),
        idle_close: ctx.idle(&raw.idle_close, NETTY_IDLE_TIME),
    }
}

/// The name servers a broker or client talks to: the listed ones, or all of them.
fn namesrv_list(ctx: &mut Ctx, list: Option<Vec<S<String>>>) -> Vec<String> {
    match list {
        Some(list) => list.iter().filter_map(|n| ctx.refer(n, &[Kind::Namesrv])).collect(),
        None => ctx.names(Kind::Namesrv).to_vec(),
    }
}

/// A topic's config. A wrong count or perm is reported and replaced by its default, so the topic
/// stays known: a client or expectation naming it gets no second, false "unknown topic" error.
pub(super) fn topic(ctx: &mut Ctx, raw: &RawTopic) -> TopicConfig {
    let mut t = TopicConfig::new(raw.name.get_ref());
    if let Some(r) = &raw.read {
        t.read_queue_nums = ctx.count(r, "read", 0).unwrap_or(t.read_queue_nums);
    }
    if let Some(w) = &raw.write {
        t.write_queue_nums = ctx.count(w, "write", 0).unwrap_or(t.write_queue_nums);
    }
    if let Some(p) = &raw.perm {
        t.perm = ctx.perm(p).unwrap_or(t.perm);
    }
    t
}

/// A broker listing the same topics as the one before it shares that broker's list (an `Arc`): a
/// fleet declared broker by broker repeats one list, and each broker's table shares its list in
/// turn (`rocketmq::topic_table`), so a thousand brokers of one list hold it once, not a thousand
/// times. Only memory changes: an upsert copies the list it changes (`Arc::make_mut`).
fn share_equal_topic_lists(brokers: &mut [BrokerSpec]) {
    for i in 1..brokers.len() {
        if brokers[i].topics == brokers[i - 1].topics {
            brokers[i].topics = std::sync::Arc::clone(&brokers[i - 1].topics);
        }
    }
}

/// A broker. Every field that is wrong is reported and replaced by its default rather than
/// dropping the broker: its name, group and topics stay known, so later references to them
/// report nothing false.
fn broker(ctx: &mut Ctx, raw: RawBroker, addrs: &mut BTreeMap<String, String>) -> BrokerSpec {
    let id = raw.id.as_ref().and_then(|id| ctx.broker_id(id)).unwrap_or(0);
    let cluster = raw.cluster.map(S::into_inner).unwrap_or_else(|| "DefaultCluster".into());
    if ctx.addr(&raw.addr).is_some() {
        // The name server keys `brokerLiveTable` by address: a second broker there would take
        // over the first one's entry and channel, which no real deployment can do.
        if let Some(first) = addrs.insert(raw.addr.get_ref().clone(), raw.name.get_ref().clone()) {
            let msg = format!("{} and {first} have the same address {}", raw.name.get_ref(), raw.addr.get_ref());
            ctx.error(raw.addr.span(), msg, Some("every broker process listens on its own ip:port".into()));
        }
    }
    let mut config = BrokerConfig::new(&cluster, raw.broker_name.get_ref(), id, raw.addr.get_ref());
    // RocketMQ clamps the period to 10–60 s, so any value up to the cap is fine here.
    config.register_period =
        ctx.duration_in(&raw.register_period, config.register_period, "register_period", Least::Zero);
    config.enable_acting_master = raw.enable_acting_master.unwrap_or(false);
    config.system_topics = raw.system_topics.unwrap_or(true);
    config.refresh_metadata = raw.refresh_metadata.unwrap_or(true);
    config.register_timeout =
        ctx.duration_in(&raw.register_timeout, config.register_timeout, "register_timeout", Least::OneMilli);
    if let Some(p) = &raw.permission {
        config.permission = ctx.perm(p).unwrap_or(perm::READ_WRITE);
    }
    let mut topics: Vec<TopicConfig> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for t in &raw.topics {
        let t_ref = t.get_ref();
        if !seen.insert(t_ref.name.get_ref()) {
            ctx.error(
                t_ref.name.span(),
                format!("duplicate topic {:?} on broker {}", t_ref.name.get_ref(), raw.name.get_ref()),
                None,
            );
            continue;
        }
        topics.push(topic(ctx, t_ref));
    }
    BrokerSpec {
        name: raw.name.get_ref().clone(),
        config,
        namesrvs: namesrv_list(ctx, raw.namesrvs),
        start: ctx.time_or_zero(&raw.start),
        topics: TopicConfigs::from(topics).into(),
        idle_close: ctx.idle(&raw.idle_close, NETTY_IDLE_TIME),
    }
}

fn client(ctx: &mut Ctx, raw: RawClient, known_topics: &BTreeSet<String>) -> ClientSpec {
    let mut topics = Vec::new();
    for t in &raw.topics {
        if known_topics.contains(t.get_ref()) {
            topics.push(t.get_ref().clone());
        } else {
            let help =
                nearest(t.get_ref(), known_topics.iter().map(String::as_str)).map(|n| format!("did you mean {n:?}?"));
            ctx.error(t.span(), format!("unknown topic {:?}: no broker has it", t.get_ref()), help);
        }
    }
    let listed = raw.namesrvs.as_ref().map(Vec::len);
    let namesrvs = namesrv_list(ctx, raw.namesrvs);
    // An unknown name in the list is reported on its own; this is for a client with none.
    if namesrvs.is_empty() && listed.unwrap_or(0) == 0 {
        ctx.error(
            raw.name.span(),
            format!("client {} has no name server to ask", raw.name.get_ref()),
            Some("define a [[namesrv]] or list some in `namesrvs`".into()),
        );
    }
    ClientSpec {
        name: raw.name.into_inner(),
        namesrvs,
        topics,
        poll_interval: ctx.duration_in(
            &raw.poll_interval,
            SimDuration::from_secs(30),
            "poll_interval",
            Least::OneMilli,
        ),
        timeout: ctx.duration_in(&raw.timeout, SimDuration::from_secs(3), "timeout", Least::OneMilli),
        start: ctx.time_or_zero(&raw.start),
        idle_close: ctx.idle(&raw.idle_close, NETTY_IDLE_TIME),
    }
}
