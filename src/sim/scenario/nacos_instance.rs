//! `[[instance]]`: one ephemeral instance and the app process it belongs to. Instances of one app
//! share one `NamingService`, so they must agree on its settings (servers, read timeout, beat
//! threads, transport); the first instance of an app sets them and the others are checked against
//! it.

use super::ctx::{range_text, Ctx, Least, MAX_DURATION};
use super::nacos::{positive, server_list, word, word_or, NacosAppSpec, NacosInstanceSpec, Transport};
use super::raw::S;
use super::raw_nacos::RawInstance;
use crate::nacos::types::{
    check_instance_is_legal, client_beat_interval, Instance, ServiceKey, DEFAULT_CLUSTER, DEFAULT_GROUP,
    DEFAULT_HEART_BEAT_INTERVAL, DEFAULT_NAMESPACE, DEFAULT_READ_TIMEOUT,
};
use crate::sim::clock::SimDuration;
use crate::sim::name::Name;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `Runtime.availableProcessors()` when a scenario does not say: a small VM or container.
pub const DEFAULT_CORES: usize = 2;

/// 1.4.x `UtilAndComs.DEFAULT_CLIENT_BEAT_THREAD_COUNT`.
pub fn default_beat_threads(cores: usize) -> usize {
    if cores > 1 {
        cores / 2
    } else {
        1
    }
}

/// What an instance says about its app's `NamingService`, which its app's instances must agree on.
#[derive(Clone, PartialEq)]
struct AppSettings {
    servers: Vec<String>,
    read_timeout: SimDuration,
    beat_threads: usize,
    transport: Transport,
}

/// `transport = "http" | "grpc"`; the beat keys mean nothing to a gRPC client, which has no
/// `BeatReactor` and no HTTP read timeout.
fn transport(ctx: &mut Ctx, raw: &RawInstance) -> Transport {
    let Some(t) = &raw.transport else { return Transport::Http };
    let transport = match t.get_ref().as_str() {
        "http" => Transport::Http,
        "grpc" => Transport::Grpc,
        other => {
            let help =
                "\"http\" (a 1.x client: HTTP beats, the default) or \"grpc\" (a 2.x client: one gRPC connection)";
            ctx.error(t.span(), format!("unknown transport {other:?}"), Some(help.into()));
            return Transport::Http;
        }
    };
    if transport == Transport::Grpc {
        let beat_keys = [
            ("cores", raw.cores.as_ref().map(|c| c.span())),
            ("beat_threads", raw.beat_threads.as_ref().map(|c| c.span())),
        ];
        for (key, span) in beat_keys {
            if let Some(span) = span {
                let help = "a 2.x gRPC client has no BeatReactor: its connection is its heartbeat; remove the key";
                ctx.error(span, format!("`{key}` does not apply to a gRPC instance"), Some(help.into()));
            }
        }
        if let Some(r) = &raw.read_timeout {
            let help = "gRPC requests time out after 3 s (DefaultGrpcClientConfig timeOutMills); remove the key";
            ctx.error(r.span(), "`read_timeout` does not apply to a gRPC instance".to_string(), Some(help.into()));
        }
    }
    transport
}

fn beat_threads(ctx: &mut Ctx, raw: &RawInstance) -> usize {
    let cores = match &raw.cores {
        Some(c) => ctx.count(c, "cores", 1).map_or(DEFAULT_CORES, |c| c as usize),
        None => DEFAULT_CORES,
    };
    match &raw.beat_threads {
        Some(t) => ctx.count(t, "beat_threads", 1).map_or(1, |t| t as usize),
        None => default_beat_threads(cores),
    }
}

fn instance(ctx: &mut Ctx, raw: &RawInstance, all: &[String]) -> Option<(NacosInstanceSpec, AppSettings)> {
    let namespace = word_or(ctx, &raw.namespace, DEFAULT_NAMESPACE, "namespace");
    let group = word_or(ctx, &raw.group, DEFAULT_GROUP, "group");
    let service = word(ctx, &raw.service, "service");
    let cluster = word_or(ctx, &raw.cluster, DEFAULT_CLUSTER, "cluster");
    // The port goes in `port`; the ip is a dotted quad (see `Ctx::ipv4`).
    let ip = raw.ip.get_ref();
    ctx.ipv4(&raw.ip, "10.1.0.1");
    // A wrong port, weight or metadata is reported and the instance kept with the default, so
    // that expectations naming it do not add a false "unknown instance".
    let port = match &raw.port {
        Some(p) if !(1..=65535).contains(p.get_ref()) => {
            ctx.error(p.span(), format!("port must be 1..=65535, got {}", p.get_ref()), None);
            8080
        }
        Some(p) => *p.get_ref() as u16,
        None => 8080,
    };
    let weight = match &raw.weight {
        Some(w) if !(0.0..=10_000.0).contains(w.get_ref()) => {
            ctx.error(w.span(), format!("weight must be between 0 and 10000, got {}", w.get_ref()), None);
            1.0
        }
        Some(w) => *w.get_ref(),
        None => 1.0,
    };
    let metadata = raw.metadata.as_ref().map(|m| m.get_ref().clone()).unwrap_or_default();
    let period = match check_instance_is_legal(&metadata).and_then(|_| client_beat_interval(&metadata)) {
        Ok(p) => SimDuration(p as u64),
        Err(why) => {
            let span = raw.metadata.as_ref().map_or(raw.name.span(), |m| m.span());
            let help = "NamingUtils.checkInstanceIsLegal would refuse the registration";
            ctx.error(span, format!("instance {}: {why}", raw.name.get_ref()), Some(help.into()));
            SimDuration(DEFAULT_HEART_BEAT_INTERVAL)
        }
    };
    // The client re-arms its beat every `period`: 0 ms would beat for ever without time moving.
    if period == SimDuration::ZERO || period > MAX_DURATION {
        let span = raw.metadata.as_ref().map_or(raw.name.span(), |m| m.span());
        let (name, range) = (raw.name.get_ref(), range_text(Least::OneMilli));
        let msg = format!("instance {name}: preserved.heart.beat.interval must be {range}, got {period}");
        ctx.error(span, msg, Some("write it in milliseconds, e.g. \"5000\" (the default)".into()));
    }
    let servers = server_list(ctx, &raw.servers, &raw.name, all);
    let read_timeout = positive(ctx, &raw.read_timeout, SimDuration(DEFAULT_READ_TIMEOUT), "read_timeout");
    let start = ctx.time_or_zero(&raw.start);
    let instance = Instance {
        ip: Name::from(ip.as_str()),
        port,
        weight,
        cluster: Arc::from(cluster?.as_str()),
        metadata: Arc::new(metadata),
        healthy: true,
        enabled: true,
    };
    let service = ServiceKey::new(&namespace?, &group?, &service?);
    let spec = NacosInstanceSpec { name: raw.name.get_ref().clone(), service, instance, start, period };
    let beat_threads = beat_threads(ctx, raw);
    let transport = transport(ctx, raw);
    Some((spec, AppSettings { servers, read_timeout, beat_threads, transport }))
}

/// Instances grouped into their processes, checking that an app's instances agree; and the
/// names of the instances left out because they were wrong.
pub(super) fn apps(ctx: &mut Ctx, raw: Vec<S<RawInstance>>, all: &[String]) -> (Vec<NacosAppSpec>, BTreeSet<String>) {
    let mut apps: Vec<NacosAppSpec> = Vec::new();
    let mut broken = BTreeSet::new();
    // Position of each app in `apps`, so that thousands of instances stay linear.
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen: BTreeMap<(ServiceKey, String, u16), String> = BTreeMap::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for r in raw {
        let r = r.into_inner();
        let name = r.name.get_ref().clone();
        let process = r.app.as_ref().map_or(name.clone(), |a| a.get_ref().clone());
        let clash = ctx.procs.get(&name).filter(|_| name != process).map(|k| k.word());
        if !names.insert(name.clone()) || clash.is_some() {
            let what = clash.map_or("another instance".to_string(), |w| format!("a {w}"));
            let msg = format!("duplicate name {name:?}: already used by {what}");
            ctx.error(r.name.span(), msg, Some("every instance and process needs its own name".into()));
            continue;
        }
        let Some((spec, settings)) = instance(ctx, &r, all) else {
            broken.insert(name);
            continue;
        };
        let key = (spec.service.clone(), spec.instance.ip.to_string(), spec.instance.port);
        if let Some(other) = seen.insert(key, name.clone()) {
            let msg = format!("{name} and {other} are the same instance to Nacos (same service, ip and port)");
            ctx.error(r.ip.span(), msg, Some("give one of them another ip or port".into()));
            broken.insert(name);
            continue;
        }
        match index.get(&process).map(|i| &mut apps[*i]) {
            None => {
                index.insert(process.clone(), apps.len());
                let start = spec.start;
                let AppSettings { servers, read_timeout, beat_threads, transport } = settings;
                let instances = vec![spec];
                let app =
                    NacosAppSpec { name: process, transport, servers, read_timeout, beat_threads, start, instances };
                apps.push(app);
            }
            Some(app) => {
                let first_ns = &app.instances[0].service.namespace;
                let theirs = AppSettings {
                    servers: app.servers.clone(),
                    read_timeout: app.read_timeout,
                    beat_threads: app.beat_threads,
                    transport: app.transport,
                };
                if theirs != settings || *first_ns != spec.service.namespace {
                    let msg = format!(
                        "{name} is in app {process} but its `servers`, `namespace`, `read_timeout`, `cores`, `beat_threads` or `transport` differ"
                    );
                    let help = "instances of one app share one NamingService; give them the same values or another app";
                    ctx.error(r.app.as_ref().map_or(r.name.span(), |a| a.span()), msg, Some(help.into()));
                    broken.insert(name);
                    continue;
                }
                app.start = app.start.min(spec.start);
                app.instances.push(spec);
            }
        }
    }
    (apps, broken)
}
