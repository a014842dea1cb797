//! `[[subscriber]]`: a 1.x `HostReactor` process, its services, and its client id (`ip:udp_port`)
//! on the naming server.

use super::ctx::Ctx;
use super::error::nearest;
use super::nacos::{positive, server_list, word_or, SubscriberSpec};
use super::raw_nacos::RawSubscriber;
use crate::nacos::types::{ServiceKey, DEFAULT_GROUP, DEFAULT_NAMESPACE, DEFAULT_READ_TIMEOUT};
use crate::sim::clock::SimDuration;
use std::collections::BTreeSet;

/// A subscriber's ip when it gives none: `10.255.0.N` for the N-th, counting on into the third
/// octet past 255 so that every default is a valid, distinct address.
pub fn default_subscriber_ip(n: usize) -> String {
    let k = n + 1;
    format!("10.255.{}.{}", k / 256, k % 256)
}

/// A subscriber. Like a broker, it is kept when a field is wrong (the error is recorded), so
/// expectations about it report nothing false.
pub fn subscriber(
    ctx: &mut Ctx,
    raw: RawSubscriber,
    n: usize,
    (known, taken, all): (&BTreeSet<ServiceKey>, &mut BTreeSet<(String, u16)>, &[String]),
) -> SubscriberSpec {
    let namespace = word_or(ctx, &raw.namespace, DEFAULT_NAMESPACE, "namespace").unwrap_or(DEFAULT_NAMESPACE.into());
    let mut services = Vec::new();
    for s in &raw.services {
        let (group, name) = s.get_ref().split_once("@@").unwrap_or((DEFAULT_GROUP, s.get_ref()));
        let key = ServiceKey::new(&namespace, group, name);
        if !known.contains(&key) {
            let names: Vec<String> =
                known.iter().filter(|k| *k.namespace == *namespace).map(|k| k.grouped.to_string()).collect();
            let help = nearest(&key.grouped, names.iter().map(String::as_str)).map_or_else(
                || format!("no [[instance]] registers it; known: {}", names.join(", ")),
                |n| format!("did you mean {n:?}?"),
            );
            ctx.error(s.span(), format!("unknown service {:?} in namespace {namespace}", s.get_ref()), Some(help));
            continue;
        }
        services.push(key);
    }
    let ip = match &raw.ip {
        Some(i) => {
            ctx.ipv4(i, "10.255.0.1");
            i.get_ref().clone()
        }
        None => default_subscriber_ip(n),
    };
    let udp_port = match &raw.udp_port {
        Some(p) if !(1..=65535).contains(p.get_ref()) => {
            ctx.error(p.span(), format!("udp_port must be 1..=65535, got {}", p.get_ref()), None);
            54951
        }
        Some(p) => *p.get_ref() as u16,
        None => 54951,
    };
    if !taken.insert((ip.clone(), udp_port)) {
        let msg = format!("{}'s {ip}:{udp_port} is already used by another instance or subscriber", raw.name.get_ref());
        let help = "Nacos would see one client; set `ip` or `udp_port`";
        ctx.error(raw.name.span(), msg, Some(help.into()));
    }
    SubscriberSpec {
        servers: server_list(ctx, &raw.servers, &raw.name, all),
        name: raw.name.into_inner(),
        services,
        ip,
        udp_port,
        read_timeout: positive(ctx, &raw.read_timeout, SimDuration(DEFAULT_READ_TIMEOUT), "read_timeout"),
        start: ctx.time_or_zero(&raw.start),
    }
}
