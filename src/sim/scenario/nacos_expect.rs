//! The Nacos expectation subjects: `instance`, `service`, `subscriber`, `member`, `connection` and
//! `responsible`.

use super::ctx::{Ctx, Kind};
use super::error::nearest;
use super::nacos::NacosKnown;
use super::raw::{RawExpect, S};
use super::raw_nacos::{
    RawConnectionSubject, RawInstanceSubject, RawMemberSubject, RawResponsibleSubject, RawServiceSubject,
    RawSubscriberSubject,
};
use crate::nacos::cluster::NodeState;
use crate::nacos::types::{ServiceKey, DEFAULT_GROUP, DEFAULT_NAMESPACE};
use crate::sim::expect::{InstanceState, NacosSubject, Subject};
use std::collections::BTreeSet;

/// How many Nacos subjects the expectation names.
pub fn count(r: &RawExpect) -> usize {
    [
        r.instance.is_some(),
        r.service.is_some(),
        r.subscriber.is_some(),
        r.member.is_some(),
        r.connection.is_some(),
        r.responsible.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count()
}

/// The one Nacos subject of `r` (call only when `count(r) == 1`).
pub fn subject(ctx: &mut Ctx, r: &RawExpect, known: &NacosKnown) -> Option<Subject> {
    let s = if let Some(i) = &r.instance {
        instance(ctx, i, known)
    } else if let Some(s) = &r.service {
        service(ctx, s, known)
    } else if let Some(m) = &r.member {
        member(ctx, m.get_ref(), known)
    } else if let Some(c) = &r.connection {
        connection(ctx, c.get_ref(), known)
    } else if let Some(d) = &r.responsible {
        responsible(ctx, d.get_ref(), known)
    } else {
        subscriber(ctx, r.subscriber.as_ref()?.get_ref(), known)
    };
    s.map(Subject::Nacos)
}

fn instance_name(ctx: &mut Ctx, v: &S<String>, known: &NacosKnown) -> Option<String> {
    let n = v.get_ref();
    if known.instances.contains_key(n) {
        return Some(n.clone());
    }
    if known.broken.contains(n) {
        return None; // the instance itself is wrong and reported
    }
    let help = nearest(n, known.instances.keys().map(String::as_str)).map_or_else(
        || "name an [[instance]] (instances inside an `app` keep their own names)".to_string(),
        |near| format!("did you mean {near:?}?"),
    );
    ctx.fail(v.span(), format!("unknown instance {n:?}"), Some(&help))
}

fn instance(ctx: &mut Ctx, raw: &S<RawInstanceSubject>, known: &NacosKnown) -> Option<NacosSubject> {
    let r = raw.get_ref();
    let servers = match (&r.server, &r.servers) {
        (Some(one), None) => Some(vec![ctx.refer(one, &[Kind::NacosServer])?]),
        (None, Some(many)) if !many.get_ref().is_empty() => {
            let names: Vec<Option<String>> =
                many.get_ref().iter().map(|s| ctx.refer(s, &[Kind::NacosServer])).collect();
            names.into_iter().collect()
        }
        (None, Some(many)) => {
            return ctx.fail(many.span(), "`servers` is empty", Some("name at least one [[nacos_server]]"))
        }
        (Some(_), Some(many)) => {
            let help = "`server = \"a\"` checks one server, `servers = [\"a\", \"b\"]` holds on any of several";
            return ctx.fail(many.span(), "both `server` and `servers`", Some(help));
        }
        (None, None) => {
            let help = "add `server = \"nacos1\"`, or `servers = [...]` for any of several";
            return ctx.fail(raw.span(), "an instance subject names no server", Some(help));
        }
    };
    let instance = instance_name(ctx, &r.instance, known);
    let Some(state) = InstanceState::parse(r.state.get_ref()) else {
        let help = "one of \"healthy\", \"unhealthy\", \"absent\", \"present\"";
        return ctx.fail(r.state.span(), format!("unknown state {:?}", r.state.get_ref()), Some(help));
    };
    Some(NacosSubject::Instance { servers: servers?, instance: instance?, state })
}

fn count_of(ctx: &mut Ctx, v: &Option<S<i64>>, what: &str) -> Option<Option<usize>> {
    match v {
        Some(n) => Some(Some(ctx.count(n, what, 0)? as usize)),
        None => Some(None),
    }
}

fn service(ctx: &mut Ctx, raw: &S<RawServiceSubject>, known: &NacosKnown) -> Option<NacosSubject> {
    let r = raw.get_ref();
    let server = ctx.refer(&r.server, &[Kind::NacosServer]);
    let namespace = r.namespace.as_ref().map_or(DEFAULT_NAMESPACE, |n| n.get_ref());
    let group = r.group.as_ref().map_or(DEFAULT_GROUP, |g| g.get_ref());
    let key = ServiceKey::new(namespace, group, r.service.get_ref());
    if !known.services.contains(&key) {
        let names: Vec<String> = known.services.iter().map(|k| k.to_string()).collect();
        let help = nearest(&key.to_string(), names.iter().map(String::as_str))
            .map_or_else(|| format!("known: {}", names.join(", ")), |n| format!("did you mean {n:?}?"));
        return ctx.fail(r.service.span(), format!("no [[instance]] registers {key}"), Some(&help));
    }
    let healthy = count_of(ctx, &r.healthy, "healthy")?;
    let total = count_of(ctx, &r.total, "total")?;
    if healthy.is_none() && total.is_none() {
        return ctx.fail(raw.span(), "a service subject needs `healthy` or `total` (or both)", None);
    }
    Some(NacosSubject::Service { server: server?, service: key, healthy, total })
}

fn names(
    ctx: &mut Ctx,
    list: &Option<Vec<S<String>>>,
    service: &ServiceKey,
    known: &NacosKnown,
) -> Option<Option<BTreeSet<String>>> {
    let Some(list) = list else { return Some(None) };
    let mut out = BTreeSet::new();
    for n in list {
        let name = instance_name(ctx, n, known)?;
        if known.instances[&name] != *service {
            let msg = format!("{name} is an instance of {}, not of {service}", known.instances[&name]);
            return ctx.fail(n.span(), msg, None);
        }
        out.insert(name);
    }
    Some(Some(out))
}

fn subscriber(ctx: &mut Ctx, r: &RawSubscriberSubject, known: &NacosKnown) -> Option<NacosSubject> {
    let subscriber = ctx.refer(&r.subscriber, &[Kind::Subscriber])?;
    let group = r.group.as_ref().map_or(DEFAULT_GROUP, |g| g.get_ref());
    let grouped = format!("{group}@@{}", r.service.get_ref());
    let subscribed = known.subscribers.get(&subscriber).cloned().unwrap_or_default();
    let Some(service) = subscribed.iter().find(|k| *k.grouped == *grouped).cloned() else {
        let list: Vec<String> = subscribed.iter().map(|k| k.to_string()).collect();
        let help = format!("it subscribes to: {}", list.join(", "));
        return ctx.fail(r.service.span(), format!("{subscriber} does not subscribe to {grouped}"), Some(&help));
    };
    let instances = names(ctx, &r.instances, &service, known)?;
    let healthy = names(ctx, &r.healthy, &service, known)?;
    if instances.is_none() && healthy.is_none() {
        let help = "e.g. healthy = [\"orders-2\"]";
        return ctx.fail(
            r.subscriber.span(),
            "a subscriber subject needs `instances` or `healthy` (or both)",
            Some(help),
        );
    }
    Some(NacosSubject::Subscriber { subscriber, service, instances, healthy })
}

/// `member = { server, peer, state }`: both clustered servers of one cluster, not the same one
/// (a member's view of itself is not kept: `allMembersWithoutSelf`).
fn member(ctx: &mut Ctx, r: &RawMemberSubject, known: &NacosKnown) -> Option<NacosSubject> {
    let server = ctx.refer(&r.server, &[Kind::NacosServer]);
    let peer = ctx.refer(&r.peer, &[Kind::NacosServer]);
    let state = NodeState::parse(r.state.get_ref());
    if state.is_none() {
        let help = "one of \"UP\", \"SUSPICIOUS\", \"DOWN\" (Nacos's NodeState, in capitals)";
        ctx.fail::<()>(r.state.span(), format!("unknown member state {:?}", r.state.get_ref()), Some(help));
    }
    let (server, peer, state) = (server?, peer?, state?);
    let Some(cluster) = known.clusters.get(&server) else {
        let help = "give it `cluster = \"name\"` in its [[nacos_server]], with the servers it probes";
        return ctx.fail(r.server.span(), format!("{server} is not in a cluster: it has no member view"), Some(help));
    };
    if peer == server {
        let help = "a member keeps no view of itself (allMembersWithoutSelf); name another member";
        return ctx.fail(r.peer.span(), format!("{peer} is the server itself"), Some(help));
    }
    if known.clusters.get(&peer) != Some(cluster) {
        let members: Vec<&str> =
            known.clusters.iter().filter(|(n, c)| *c == cluster && **n != server).map(|(n, _)| n.as_str()).collect();
        let help = if members.is_empty() {
            format!("{server} is alone in cluster {cluster:?}")
        } else {
            format!("its fellow members: {}", members.join(", "))
        };
        return ctx.fail(
            r.peer.span(),
            format!("{peer} is not a member of {server}'s cluster {cluster:?}"),
            Some(&help),
        );
    }
    Some(NacosSubject::Member { server, peer, state })
}

/// `connection = { client, server }`: a 2.x client, and one server of its list or `"none"`.
fn connection(ctx: &mut Ctx, r: &RawConnectionSubject, known: &NacosKnown) -> Option<NacosSubject> {
    let client = ctx.refer(&r.client, &[Kind::NacosApp]);
    let none = r.server.get_ref() == "none" && !ctx.procs.contains_key("none");
    let server = if none { None } else { Some(ctx.refer(&r.server, &[Kind::NacosServer])) };
    let client = client?;
    let Some(servers) = known.grpc_clients.get(&client) else {
        let help = "give its [[instance]]s `transport = \"grpc\"` (a 2.x client keeps one connection)";
        return ctx.fail(
            r.client.span(),
            format!("{client} is a 1.x HTTP client: it has no gRPC connection"),
            Some(help),
        );
    };
    let server = match server {
        None => None,
        Some(s) => Some(s?),
    };
    if let Some(s) = server.as_ref().filter(|s| !servers.contains(s)) {
        let help = format!("its servers: {}; or \"none\" for no connection", servers.join(", "));
        return ctx.fail(
            r.server.span(),
            format!("{client} never connects to {s}: it is not in its server list"),
            Some(&help),
        );
    }
    Some(NacosSubject::Connection { client, server })
}

/// `responsible = { server, instance, member }`: a clustered server, a 1.x HTTP instance (its
/// `ip:port` is the Distro tag), and a member of the server's cluster — itself included, since
/// a member's healthy list holds itself.
fn responsible(ctx: &mut Ctx, r: &RawResponsibleSubject, known: &NacosKnown) -> Option<NacosSubject> {
    let server = ctx.refer(&r.server, &[Kind::NacosServer]);
    let instance = instance_name(ctx, &r.instance, known);
    let member = ctx.refer(&r.member, &[Kind::NacosServer]);
    let (server, instance, member) = (server?, instance?, member?);
    let Some(cluster) = known.clusters.get(&server) else {
        let help = "give it `cluster = \"name\"` in its [[nacos_server]]: a standalone server owns every client";
        return ctx.fail(r.server.span(), format!("{server} is not in a cluster: it has no DistroMapper"), Some(help));
    };
    if known.grpc_instances.contains(&instance) {
        let help = "a 2.x client's owner is the member its connection is on: use `connection = { client, server }`";
        return ctx.fail(
            r.instance.span(),
            format!("{instance} is a gRPC instance: DistroMapper does not place it"),
            Some(help),
        );
    }
    if known.clusters.get(&member) != Some(cluster) {
        let members: Vec<&str> =
            known.clusters.iter().filter(|(_, c)| *c == cluster).map(|(n, _)| n.as_str()).collect();
        return ctx.fail(
            r.member.span(),
            format!("{member} is not a member of {server}'s cluster {cluster:?}"),
            Some(&format!("its members: {}", members.join(", "))),
        );
    }
    Some(NacosSubject::Responsible { server, instance, member })
}
