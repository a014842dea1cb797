//! Writes a [`Scenario`] back out as TOML that loads to the same scenario.
//!
//! Property tests shrink a failing case to a `Scenario`; this turns it into a file a person can
//! read, edit and replay with `routesim run`. Defaults are left out, so the file says only what
//! differs from a plain cluster.

use super::{Action, BrokerSpec, ClientSpec, NamesrvSpec, Scenario, TimedEvent};
use crate::rocketmq::broker::{BrokerConfig, TopicChange};
use crate::rocketmq::types::{perm, TopicConfig, NETTY_IDLE_TIME, SCAN_INITIAL_DELAY};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::{Expectation, RouteWant, Subject, When};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A TOML string literal.
pub(super) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A bare key when TOML allows it, else a quoted one.
fn key(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        s.to_string()
    } else {
        q(s)
    }
}

pub(super) fn d(x: SimDuration) -> String {
    q(&x.to_string())
}

pub(super) fn t(x: SimTime) -> String {
    q(&x.since(SimTime::ZERO).to_string())
}

pub(super) fn list(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let v: Vec<String> = items.into_iter().map(|s| q(s.as_ref())).collect();
    format!("[{}]", v.join(", "))
}

pub fn to_toml(s: &Scenario) -> String {
    let mut out = String::new();
    if let Some(desc) = &s.description {
        for line in desc.lines() {
            let _ = writeln!(out, "# {line}");
        }
        out.push('\n');
    }
    let _ = writeln!(out, "[scenario]\nname = {}\nseed = {}\nduration = {}", q(&s.name), s.seed, d(s.duration));
    if let Some(desc) = &s.description {
        let _ = writeln!(out, "description = {}", q(desc));
    }
    if !s.invariants.is_empty() {
        let _ = writeln!(out, "invariants = {}", list(s.invariants.iter().map(|i| i.key())));
    }
    let n = &s.network;
    let _ = writeln!(
        out,
        "\n[network]\nlatency = {}\njitter = {}\nloss = {:?}\nconnect_timeout = {}",
        d(n.latency),
        d(n.jitter),
        n.loss,
        d(n.connect_timeout)
    );
    for ns in &s.namesrvs {
        namesrv(&mut out, ns);
    }
    let all_ns: Vec<String> = s.namesrvs.iter().map(|n| n.name.clone()).collect();
    for b in &s.brokers {
        broker(&mut out, b, &all_ns);
    }
    for c in &s.clients {
        client(&mut out, c, &all_ns);
    }
    for p in &s.producers {
        super::producer::write(&mut out, p);
    }
    super::write_nacos::tables(&mut out, &s.nacos);
    for e in &s.timeline {
        event(&mut out, e, &all_ns);
    }
    for e in &s.expects {
        expect(&mut out, e);
    }
    out
}

fn namesrv(out: &mut String, ns: &NamesrvSpec) {
    let _ = writeln!(out, "\n[[namesrv]]\nname = {}", q(&ns.name));
    let defaults = [
        ("start", ns.start != SimTime::ZERO, t(ns.start)),
        ("scan_interval", ns.scan_interval != SimDuration::from_secs(5), d(ns.scan_interval)),
        ("scan_initial_delay", ns.scan_initial_delay != SCAN_INITIAL_DELAY, d(ns.scan_initial_delay)),
        ("unregister_queue_capacity", ns.queue_capacity != 3000, ns.queue_capacity.to_string()),
        ("unregister_delay", ns.unregister_delay != SimDuration::ZERO, d(ns.unregister_delay)),
        ("support_acting_master", ns.table.support_acting_master, "true".into()),
        ("notify_min_broker_id_changed", ns.table.notify_min_broker_id_changed, "true".into()),
        ("delete_topic_with_broker_registration", ns.table.delete_topic_with_broker_registration, "true".into()),
    ];
    for (k, differs, v) in defaults {
        if differs {
            let _ = writeln!(out, "{k} = {v}");
        }
    }
    idle_close(out, ns.idle_close);
}

/// `idle_close`, when it is not Netty's 120 s.
fn idle_close(out: &mut String, idle: Option<SimDuration>) {
    match idle {
        None => {
            let _ = writeln!(out, "idle_close = \"off\"");
        }
        Some(idle) if idle != NETTY_IDLE_TIME => {
            let _ = writeln!(out, "idle_close = {}", d(idle));
        }
        Some(_) => {}
    }
}

fn topic(tc: &TopicConfig) -> String {
    format!(
        "{{ name = {}, read = {}, write = {}, perm = {} }}",
        q(&tc.topic_name),
        tc.read_queue_nums,
        tc.write_queue_nums,
        q(perm::to_text(tc.perm))
    )
}

fn broker(out: &mut String, b: &BrokerSpec, all_ns: &[String]) {
    let c: &BrokerConfig = &b.config;
    let _ = writeln!(
        out,
        "\n[[broker]]\nname = {}\ncluster = {}\nbroker_name = {}\nid = {}\naddr = {}",
        q(&b.name),
        q(&c.cluster),
        q(&c.broker_name),
        c.broker_id,
        q(&c.addr)
    );
    if b.namesrvs != all_ns {
        let _ = writeln!(out, "namesrvs = {}", list(&b.namesrvs));
    }
    if c.register_period != SimDuration::from_secs(30) {
        let _ = writeln!(out, "register_period = {}", d(c.register_period));
    }
    if c.enable_acting_master {
        let _ = writeln!(out, "enable_acting_master = true");
    }
    if c.permission != perm::READ_WRITE {
        let _ = writeln!(out, "permission = {}", q(perm::to_text(c.permission)));
    }
    if !c.system_topics {
        let _ = writeln!(out, "system_topics = false");
    }
    if c.register_timeout != crate::rocketmq::broker::REGISTER_TIMEOUT {
        let _ = writeln!(out, "register_timeout = {}", d(c.register_timeout));
    }
    if !c.refresh_metadata {
        let _ = writeln!(out, "refresh_metadata = false");
    }
    idle_close(out, b.idle_close);
    if b.start != SimTime::ZERO {
        let _ = writeln!(out, "start = {}", t(b.start));
    }
    let topics: Vec<String> = b.topics.iter().map(topic).collect();
    let _ = writeln!(out, "topics = [{}]", topics.join(", "));
}

fn client(out: &mut String, c: &ClientSpec, all_ns: &[String]) {
    let _ = writeln!(out, "\n[[client]]\nname = {}\ntopics = {}", q(&c.name), list(&c.topics));
    if c.namesrvs != all_ns {
        let _ = writeln!(out, "namesrvs = {}", list(&c.namesrvs));
    }
    if c.poll_interval != SimDuration::from_secs(30) {
        let _ = writeln!(out, "poll_interval = {}", d(c.poll_interval));
    }
    if c.timeout != SimDuration::from_secs(3) {
        let _ = writeln!(out, "timeout = {}", d(c.timeout));
    }
    idle_close(out, c.idle_close);
    if c.start != SimTime::ZERO {
        let _ = writeln!(out, "start = {}", t(c.start));
    }
}

fn link(from: &str, to: &str, both_ways: bool) -> String {
    if both_ways {
        format!("between = [{}, {}]", q(from), q(to))
    } else {
        format!("from = {}, to = {}", q(from), q(to))
    }
}

fn namesrv_key(namesrvs: &[String], all_ns: &[String]) -> String {
    match namesrvs {
        [one] if all_ns.len() > 1 => format!("namesrv = {}, ", q(one)),
        _ => String::new(),
    }
}

fn event(out: &mut String, e: &TimedEvent, all_ns: &[String]) {
    let table = if matches!(
        e.action,
        Action::WipeWritePerm { .. }
            | Action::AddWritePerm { .. }
            | Action::DeleteTopic { .. }
            | Action::RegisterTopic { .. }
            | Action::UnregisterBroker { .. }
            | Action::RegisterBroker { .. }
            | Action::Topic { .. }
            | Action::SetBrokerId { .. }
            | Action::BrokerPermission { .. }
            | Action::UpdateMetadata { .. }
            | Action::Deregister { .. }
            | Action::NacosSwitch { .. }
    ) {
        "action"
    } else {
        "fault"
    };
    let _ = writeln!(out, "\n[[{table}]]\nname = {}\nat = {}", q(&e.name), t(e.at));
    let verb = match &e.action {
        Action::Crash(p) => format!("crash = {}", q(p)),
        Action::HostDown(p) => format!("host_down = {}", q(p)),
        Action::Hang(p) => format!("hang = {}", q(p)),
        Action::Resume(p) => format!("resume = {}", q(p)),
        Action::Shutdown(p) => format!("shutdown = {}", q(p)),
        Action::Restart(p) => format!("restart = {}", q(p)),
        Action::Partition(groups) => {
            let g: Vec<String> = groups.iter().map(list).collect();
            format!("partition = [{}]", g.join(", "))
        }
        Action::Block { from, to } => format!("block = {{ {} }}", link(from, to, false)),
        Action::Heal(None) => "heal = \"all\"".into(),
        Action::Heal(Some(n)) => format!("heal = {}", q(n)),
        Action::Loss { from, to, rate, both_ways } => {
            format!("loss = {{ {}, rate = {rate:?} }}", link(from, to, *both_ways))
        }
        Action::Latency { from, to, base, jitter, both_ways } => {
            format!("latency = {{ {}, base = {}, jitter = {} }}", link(from, to, *both_ways), d(*base), d(*jitter))
        }
        Action::WipeWritePerm { namesrvs, broker_name } => {
            format!("wipe_write_perm = {{ {}broker_name = {} }}", namesrv_key(namesrvs, all_ns), q(broker_name))
        }
        Action::AddWritePerm { namesrvs, broker_name } => {
            format!("add_write_perm = {{ {}broker_name = {} }}", namesrv_key(namesrvs, all_ns), q(broker_name))
        }
        Action::DeleteTopic { namesrvs, topic, cluster } => {
            let cluster = cluster.as_ref().map(|c| format!(", cluster = {}", q(c))).unwrap_or_default();
            format!("delete_topic = {{ {}topic = {}{cluster} }}", namesrv_key(namesrvs, all_ns), q(topic))
        }
        Action::RegisterTopic { namesrvs, topic, queues } => {
            let qs: Vec<String> = queues
                .iter()
                .map(|qd| {
                    format!(
                        "{{ broker_name = {}, read = {}, write = {}, perm = {}, sys_flag = {} }}",
                        q(&qd.broker_name),
                        qd.read_queue_nums,
                        qd.write_queue_nums,
                        q(perm::to_text(qd.perm)),
                        qd.topic_sys_flag
                    )
                })
                .collect();
            format!(
                "register_topic = {{ {}topic = {}, queues = [{}] }}",
                namesrv_key(namesrvs, all_ns),
                q(topic),
                qs.join(", ")
            )
        }
        Action::UnregisterBroker { namesrvs, request: r } => format!(
            "unregister_broker = {{ {}cluster = {}, broker_addr = {}, broker_name = {}, broker_id = {} }}",
            namesrv_key(namesrvs, all_ns),
            q(&r.cluster_name),
            q(&r.broker_addr),
            q(&r.broker_name),
            r.broker_id
        ),
        Action::Topic { broker, change: TopicChange::Upsert(tc) } => {
            let body = topic(tc).replacen("{ ", &format!("{{ broker = {}, ", q(broker)), 1);
            format!("upsert_topic = {body}")
        }
        Action::Topic { broker, change: TopicChange::Delete(name) } => {
            format!("remove_topic = {{ broker = {}, topic = {} }}", q(broker), q(name))
        }
        Action::RegisterBroker { broker, version: v } => format!(
            "register_broker = {{ broker = {}, data_version = {{ counter = {}, timestamp = {}, state_version = {} }} }}",
            q(broker),
            v.counter,
            q(&v.timestamp.since(crate::sim::clock::SimTime::ZERO).to_string()),
            v.state_version
        ),
        Action::SetBrokerId { broker, id } => format!("set_broker_id = {{ broker = {}, id = {id} }}", q(broker)),
        Action::BrokerPermission { broker, perm: p } => {
            format!("broker_permission = {{ broker = {}, perm = {} }}", q(broker), q(perm::to_text(*p)))
        }
        Action::UpdateMetadata { .. } | Action::Deregister { .. } | Action::NacosSwitch { .. } => {
            super::write_nacos::action(&e.action)
        }
    };
    let _ = writeln!(out, "{verb}");
}

fn expect(out: &mut String, e: &Expectation) {
    let _ = writeln!(out, "\n[[expect]]\nname = {}", q(&e.name));
    let _ = match e.when {
        When::At(at) => writeln!(out, "at = {}", t(at)),
        When::By { from, deadline } => writeln!(out, "after = {}\nwithin = {}", t(from), d(deadline.since(from))),
        When::During { from, until } => writeln!(out, "from = {}\nuntil = {}", t(from), t(until)),
    };
    let subject = match &e.subject {
        Subject::Route { namesrv, topic, want } => {
            format!("route = {{ namesrv = {}, topic = {}{} }}", q(namesrv), q(topic), want_fields(want))
        }
        Subject::Client { client, topic, want } => {
            format!("client = {{ client = {}, topic = {}{} }}", q(client), q(topic), want_fields(want))
        }
        Subject::Live { namesrv, broker, present, entry } => {
            super::table_expect::write_live(namesrv, broker, *present, entry)
        }
        Subject::Topics { namesrv, want } => super::table_expect::write_topics(namesrv, want),
        Subject::Registration { broker, namesrv, want } => {
            super::table_expect::write_registration(broker, namesrv, want)
        }
        Subject::Cluster { namesrv, cluster, brokers } => {
            format!("cluster = {{ namesrv = {}, cluster = {}, brokers = {} }}", q(namesrv), q(cluster), list(brokers))
        }
        Subject::Nacos(n) => super::write_nacos::subject(n),
        Subject::Sends(w) => super::sends_expect::write(w),
        Subject::Events(w) => super::events_expect::write(w),
    };
    let _ = writeln!(out, "{subject}");
    if !e.converges.is_empty() {
        let bounds: Vec<String> =
            e.converges.iter().map(|b| format!("{} = {}", b.quantile.key(), q(&b.text()))).collect();
        let _ = writeln!(out, "converges = {{ {} }}", bounds.join(", "));
    }
}

fn want_fields(w: &RouteWant) -> String {
    let mut s = String::new();
    if let Some(a) = w.absent {
        let _ = write!(s, ", absent = {a}");
    }
    if let Some(b) = &w.brokers {
        let _ = write!(s, ", brokers = {}", list(b));
    }
    let map = |m: &BTreeMap<String, String>| {
        let v: Vec<String> = m.iter().map(|(k, v)| format!("{} = {v}", key(k))).collect();
        format!("{{ {} }}", v.join(", "))
    };
    if let Some(a) = &w.addrs {
        let inner: BTreeMap<String, String> = a
            .iter()
            .map(|(name, ids)| {
                let ids: BTreeMap<String, String> = ids.iter().map(|(id, addr)| (id.to_string(), q(addr))).collect();
                (name.clone(), map(&ids))
            })
            .collect();
        let _ = write!(s, ", addrs = {}", map(&inner));
    }
    if let Some(p) = &w.perm {
        let inner: BTreeMap<String, String> = p.iter().map(|(k, v)| (k.clone(), q(perm::to_text(*v)))).collect();
        let _ = write!(s, ", perm = {}", map(&inner));
    }
    if let Some(qs) = &w.queues {
        let inner: BTreeMap<String, String> =
            qs.iter().map(|(k, (r, wr))| (k.clone(), format!("{{ read = {r}, write = {wr} }}"))).collect();
        let _ = write!(s, ", queues = {}", map(&inner));
    }
    if let Some(n) = w.writable_queues {
        let _ = write!(s, ", writable_queues = {n}");
    }
    s
}
