//! The Nacos tables and subjects of [`super::write`]: `[[nacos_server]]`, `[[instance]]`,
//! `[[subscriber]]`, and the `instance`/`service`/`subscriber` expectation subjects.

use super::nacos::NacosSpecs;
use super::write::{d, list, q, t};
use super::Action;
use crate::nacos::naming::NamingConfig;
use crate::nacos::types::{
    ServiceKey, DEFAULT_GROUP, DEFAULT_NAMESPACE, DEFAULT_PUSH_TASK_DELAY, DEFAULT_READ_TIMEOUT,
};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::nacos_subject::NacosSubject;
use std::fmt::Write;

/// (group, name) of a grouped service name.
fn split(key: &ServiceKey) -> (&str, &str) {
    key.grouped.split_once("@@").unwrap_or((DEFAULT_GROUP, &key.grouped))
}

/// `service = ..., group = ..., namespace = ...`, leaving defaults out.
fn service_keys(key: &ServiceKey, with_namespace: bool) -> String {
    let (group, name) = split(key);
    let mut s = format!("service = {}", q(name));
    if group != DEFAULT_GROUP {
        let _ = write!(s, ", group = {}", q(group));
    }
    if with_namespace && *key.namespace != *DEFAULT_NAMESPACE {
        let _ = write!(s, ", namespace = {}", q(&key.namespace));
    }
    s
}

pub fn tables(out: &mut String, n: &NacosSpecs) {
    let all: Vec<String> = n.servers.iter().map(|s| s.name.clone()).collect();
    let defaults = NamingConfig::default();
    for s in &n.servers {
        let _ = writeln!(out, "\n[[nacos_server]]\nname = {}", q(&s.name));
        let c = &s.config;
        if s.start != SimTime::ZERO {
            let _ = writeln!(out, "start = {}", t(s.start));
        }
        if c.light_beat_enabled != defaults.light_beat_enabled {
            let _ = writeln!(out, "light_beat_enabled = {}", c.light_beat_enabled);
        }
        if c.client_beat_interval != defaults.client_beat_interval {
            let _ = writeln!(out, "client_beat_interval = {}", d(SimDuration(c.client_beat_interval.max(0) as u64)));
        }
        if c.expire_instance != defaults.expire_instance {
            let _ = writeln!(out, "expire_instance = {}", c.expire_instance);
        }
        if c.client_expired_time != defaults.client_expired_time {
            let _ = writeln!(out, "client_expired_time = {}", d(SimDuration(c.client_expired_time)));
        }
        if c.push_cache_millis != defaults.push_cache_millis {
            let _ = writeln!(out, "push_cache = {}", d(SimDuration(c.push_cache_millis)));
        }
        if s.push_delay != SimDuration(DEFAULT_PUSH_TASK_DELAY) {
            let _ = writeln!(out, "push_delay = {}", d(s.push_delay));
        }
        if let Some(c) = &s.cluster {
            let _ = writeln!(out, "cluster = {}", q(c));
        }
    }
    for app in &n.apps {
        for i in &app.instances {
            let _ = writeln!(out, "\n[[instance]]\nname = {}", q(&i.name));
            if app.name != i.name {
                let _ = writeln!(out, "app = {}", q(&app.name));
            }
            let _ = writeln!(out, "{}", service_keys(&i.service, true).replace(", ", "\n"));
            let inst = &i.instance;
            if *inst.cluster != *crate::nacos::types::DEFAULT_CLUSTER {
                let _ = writeln!(out, "cluster = {}", q(&inst.cluster));
            }
            let _ = writeln!(out, "ip = {}\nport = {}", q(&inst.ip), inst.port);
            if inst.weight != 1.0 {
                let _ = writeln!(out, "weight = {:?}", inst.weight);
            }
            if !inst.metadata.is_empty() {
                let pairs: Vec<String> = inst.metadata.iter().map(|(k, v)| format!("{} = {}", q(k), q(v))).collect();
                let _ = writeln!(out, "metadata = {{ {} }}", pairs.join(", "));
            }
            if app.servers != all {
                let _ = writeln!(out, "servers = {}", list(&app.servers));
            }
            if app.read_timeout != SimDuration(DEFAULT_READ_TIMEOUT) {
                let _ = writeln!(out, "read_timeout = {}", d(app.read_timeout));
            }
            if app.beat_threads != super::nacos_instance::default_beat_threads(super::nacos_instance::DEFAULT_CORES) {
                let _ = writeln!(out, "beat_threads = {}", app.beat_threads);
            }
            if i.start != SimTime::ZERO {
                let _ = writeln!(out, "start = {}", t(i.start));
            }
            if app.transport == super::nacos::Transport::Grpc {
                let _ = writeln!(out, "transport = \"grpc\"");
            }
        }
    }
    for (n_sub, s) in n.subscribers.iter().enumerate() {
        let services: Vec<String> = s
            .services
            .iter()
            .map(|k| match split(k) {
                (g, name) if g == DEFAULT_GROUP => name.to_string(),
                _ => k.grouped.to_string(),
            })
            .collect();
        let _ = writeln!(out, "\n[[subscriber]]\nname = {}\nservices = {}", q(&s.name), list(&services));
        if let Some(ns) = s.services.first().map(|k| k.namespace.clone()).filter(|ns| **ns != *DEFAULT_NAMESPACE) {
            let _ = writeln!(out, "namespace = {}", q(&ns));
        }
        if s.servers != all {
            let _ = writeln!(out, "servers = {}", list(&s.servers));
        }
        if s.ip != super::nacos_subscriber::default_subscriber_ip(n_sub) {
            let _ = writeln!(out, "ip = {}", q(&s.ip));
        }
        if s.udp_port != 54951 {
            let _ = writeln!(out, "udp_port = {}", s.udp_port);
        }
        if s.read_timeout != SimDuration(DEFAULT_READ_TIMEOUT) {
            let _ = writeln!(out, "read_timeout = {}", d(s.read_timeout));
        }
        if s.start != SimTime::ZERO {
            let _ = writeln!(out, "start = {}", t(s.start));
        }
    }
}

pub fn subject(s: &NacosSubject) -> String {
    match s {
        NacosSubject::Instance { servers, instance, state } => {
            let on = match servers.as_slice() {
                [one] => format!("server = {}", q(one)),
                many => format!("servers = [{}]", many.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")),
            };
            format!("instance = {{ {on}, instance = {}, state = {} }}", q(instance), q(state.word()))
        }
        NacosSubject::Service { server, service, healthy, total } => {
            let mut s = format!("service = {{ server = {}, {}", q(server), service_keys(service, true));
            if let Some(h) = healthy {
                let _ = write!(s, ", healthy = {h}");
            }
            if let Some(t) = total {
                let _ = write!(s, ", total = {t}");
            }
            s + " }"
        }
        NacosSubject::Subscriber { subscriber, service, instances, healthy } => {
            let mut s = format!("subscriber = {{ subscriber = {}, {}", q(subscriber), service_keys(service, false));
            if let Some(i) = instances {
                let _ = write!(s, ", instances = {}", list(i));
            }
            if let Some(h) = healthy {
                let _ = write!(s, ", healthy = {}", list(h));
            }
            s + " }"
        }
        NacosSubject::Connection { client, server } => {
            let server = server.as_deref().unwrap_or("none");
            format!("connection = {{ client = {}, server = {} }}", q(client), q(server))
        }
        NacosSubject::Member { server, peer, state } => {
            format!("member = {{ server = {}, peer = {}, state = {} }}", q(server), q(peer), q(state.word()))
        }
        NacosSubject::Responsible { server, instance, member } => {
            format!("responsible = {{ server = {}, instance = {}, member = {} }}", q(server), q(instance), q(member))
        }
    }
}

/// The verb line of a Nacos operation. One server is written as `server`; several are the
/// default (the instance's servers, or every naming server), so the key is left out.
pub(super) fn action(a: &Action) -> String {
    let server = |servers: &[String]| match servers {
        [one] => format!("server = {}, ", q(one)),
        _ => String::new(),
    };
    match a {
        Action::UpdateMetadata { instance, servers, metadata } => {
            let pairs: Vec<String> = metadata.iter().map(|(k, v)| format!("{} = {}", q(k), q(v))).collect();
            let map = if pairs.is_empty() { "{}".to_string() } else { format!("{{ {} }}", pairs.join(", ")) };
            format!("update_metadata = {{ instance = {}, {}metadata = {map} }}", q(instance), server(servers))
        }
        Action::Deregister { instance, .. } => format!("deregister = {}", q(instance)),
        Action::NacosSwitch { servers, switches } => {
            let mut keys = vec![server(servers).trim_end_matches(", ").to_string()];
            if let Some(i) = switches.client_beat_interval {
                keys.push(format!("client_beat_interval = {i}"));
            }
            if let Some(l) = switches.light_beat_enabled {
                keys.push(format!("light_beat_enabled = {l}"));
            }
            keys.retain(|k| !k.is_empty());
            format!("nacos_switch = {{ {} }}", keys.join(", "))
        }
        _ => String::new(),
    }
}
