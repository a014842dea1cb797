//! What an expectation is about, and how it is read off the world.

use super::events_subject::EventsWant;
use super::nacos_subject::NacosSubject;
use super::sends_subject::SendsWant;
use super::table_subject::{LiveWant, RegistrationWant, TopicsWant};
use super::Mismatch;
use crate::rocketmq::types::{perm, BrokerData, QueueData, TopicRouteData};
use crate::rocketmq::types::{BrokerAddrInfo, BrokerAddrs};
use crate::sim::name::Name;
use crate::sim::world::World;
use smallvec::{smallvec, SmallVec};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// What a subject's answer depends on: a (generation, revision) pair per process it reads. Asked
/// after every event for every open expectation, so it lives on the stack (a subject reads one
/// process, or a few).
pub type Revision = SmallVec<[(u64, u64); 2]>;

#[derive(Clone, Debug, PartialEq)]
pub enum Subject {
    /// A topic's route as a name server would answer `GET_ROUTEINFO_BY_TOPIC` now.
    Route { namesrv: String, topic: String, want: RouteWant },
    /// A client's cached route for a topic (what it would send with).
    Client { client: String, topic: String, want: RouteWant },
    /// Whether a broker process has an entry in a name server's `brokerLiveTable`, and what
    /// a present one holds.
    Live { namesrv: String, broker: String, present: bool, entry: LiveWant },
    /// A name server's answer to a topic-list query (`getAllTopicList`, ...).
    Topics { namesrv: String, want: TopicsWant },
    /// The answer a broker last got to its REGISTER_BROKER from a name server.
    Registration { broker: String, namesrv: String, want: RegistrationWant },
    /// The broker names a name server lists under a cluster (`clusterAddrTable`).
    Cluster { namesrv: String, cluster: String, brokers: BTreeSet<String> },
    /// A Nacos instance, service or subscriber view (`super::nacos_subject`).
    Nacos(NacosSubject),
    /// A producer's sends over the window (`super::sends_subject`).
    Sends(SendsWant),
    /// How many trace events of a kind happened in the window (`super::events_subject`):
    /// judged on the tally the checker keeps, never read off the world.
    Events(EventsWant),
}

/// The parts of a route a scenario asserts; `None` fields are not checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteWant {
    /// `true`: no route (`TOPIC_NOT_EXIST`); `false`: some route.
    pub absent: Option<bool>,
    /// Exactly these broker names have queues in the route.
    pub brokers: Option<BTreeSet<String>>,
    /// For each listed broker name, exactly these id → address pairs.
    pub addrs: Option<BTreeMap<String, BTreeMap<u64, String>>>,
    /// For each listed broker name, its queue perm (read/write bits).
    pub perm: Option<BTreeMap<String, u32>>,
    /// For each listed broker name, (read, write) queue counts.
    pub queues: Option<BTreeMap<String, (u32, u32)>>,
    /// Clients only: how many queues a producer would send to (writable, with a master).
    pub writable_queues: Option<u32>,
}

impl Subject {
    /// Whether the claim holds now — `check` without building the mismatch text, for the
    /// checker's every-event look at an open `by` window (a big route described thousands of
    /// times while a cluster converges was most of a large run's checking).
    pub fn holds(&self, world: &World) -> bool {
        match self {
            Subject::Route { namesrv, topic, want } => {
                let route = world.namesrv(namesrv).and_then(|t| t.borrow().pickup_topic_route_data(topic));
                want.holds(route.as_ref(), None)
            }
            Subject::Client { client, topic, want } => world.client(client).is_some_and(|core| {
                let core = core.borrow();
                let writable = core.publish_queues(topic).values().sum();
                want.holds(core.route(topic), Some(writable))
            }),
            Subject::Sends(s) => s.holds(world),
            _ => self.check(world).is_ok(),
        }
    }

    pub fn check(&self, world: &World) -> Result<(), Mismatch> {
        match self {
            Subject::Route { namesrv, topic, want } => {
                let route = world.namesrv(namesrv).and_then(|t| t.borrow().pickup_topic_route_data(topic));
                want.check(route.as_ref(), None)
            }
            Subject::Client { client, topic, want } => {
                let Some(core) = world.client(client) else {
                    return Err(Mismatch { expected: want.describe(), got: format!("{client} is not running") });
                };
                let core = core.borrow();
                let writable = core.publish_queues(topic).values().sum();
                want.check(core.route(topic), Some(writable))
            }
            Subject::Live { namesrv, broker, present, entry } => {
                let facts = &world.brokers[broker];
                let key = BrokerAddrInfo::new(&facts.cluster, &facts.addr);
                let table = world.namesrv(namesrv);
                let table = table.as_ref().map(|t| t.borrow());
                let found = table.as_ref().and_then(|t| t.broker_live_table().get(&key).cloned());
                let word = |p: bool| if p { "live entry present" } else { "no live entry" };
                match (&found, *present) {
                    (Some(e), true) => entry
                        .check(e)
                        .map_err(|(expected, got)| Mismatch { expected: format!("{broker} ({key}): {expected}"), got }),
                    (None, false) => Ok(()),
                    (_, _) => Err(Mismatch {
                        expected: format!("{broker} ({key}): {}", word(*present)),
                        got: word(found.is_some()).into(),
                    }),
                }
            }
            Subject::Topics { namesrv, want } => {
                let table = world.namesrv(namesrv);
                let table = table.as_ref().map(|t| t.borrow());
                want.check(table.as_deref())
            }
            Subject::Registration { broker, namesrv, want } => want.check(broker, world.registration(broker, namesrv)),
            Subject::Cluster { namesrv, cluster, brokers } => {
                let got: BTreeSet<String> = world
                    .namesrv(namesrv)
                    .and_then(|t| {
                        let t = t.borrow();
                        let names = t.cluster_addr_table().get(&Name::find(cluster)?)?;
                        Some(names.iter().map(|name| name.to_string()).collect())
                    })
                    .unwrap_or_default();
                if &got == brokers {
                    Ok(())
                } else {
                    Err(Mismatch { expected: format!("cluster {cluster} = {}", list(brokers)), got: list(&got) })
                }
            }
            Subject::Nacos(n) => n.check(world),
            Subject::Sends(s) => s.check(world),
            Subject::Events(_) => unreachable!("an events subject is judged on the checker's tally"),
        }
    }

    /// Changes whenever the answer of `check` could change.
    pub fn revision(&self, world: &World) -> Revision {
        match self {
            Subject::Route { namesrv, .. }
            | Subject::Live { namesrv, .. }
            | Subject::Cluster { namesrv, .. }
            | Subject::Topics { namesrv, .. } => {
                smallvec![world.namesrv_revision(namesrv)]
            }
            Subject::Client { client, .. } => smallvec![world.client_revision(client)],
            Subject::Registration { broker, namesrv, .. } => smallvec![world.registration_revision(broker, namesrv)],
            Subject::Nacos(n) => n.revision(world),
            Subject::Sends(s) => smallvec![s.revision(world)],
            Subject::Events(_) => unreachable!("an events subject is judged on the checker's tally"),
        }
    }
}

fn list<'a>(names: impl IntoIterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.into_iter().map(String::as_str).collect();
    format!("[{}]", v.join(", "))
}

impl RouteWant {
    fn check(&self, route: Option<&TopicRouteData>, writable: Option<u32>) -> Result<(), Mismatch> {
        let ok = self.holds(route, writable);
        if ok {
            return Ok(());
        }
        let mut got = describe_route(route);
        if let (Some(_), Some(w)) = (self.writable_queues, writable) {
            got.push_str(&format!("; {w} writable queues"));
        }
        Err(Mismatch { expected: self.describe(), got })
    }

    fn holds(&self, route: Option<&TopicRouteData>, writable: Option<u32>) -> bool {
        if let Some(absent) = self.absent {
            if absent != route.is_none() {
                return false;
            }
        }
        if let Some(w) = self.writable_queues {
            if writable != Some(w) {
                return false;
            }
        }
        let empty = TopicRouteData::default();
        let route = route.unwrap_or(&empty);
        if let Some(want) = &self.brokers {
            let got: BTreeSet<String> = route.queue_datas.iter().map(|q| q.broker_name.to_string()).collect();
            if &got != want {
                return false;
            }
        }
        if let Some(want) = &self.addrs {
            for (name, ids) in want {
                let got = route.broker_datas.iter().find(|b| b.broker_name == *name).map(|b| &b.broker_addrs);
                let same = |got: &BrokerAddrs| {
                    got.iter().map(|(id, a)| (id, a.as_str())).eq(ids.iter().map(|(id, a)| (id, a.as_str())))
                };
                if !got.is_some_and(same) {
                    return false;
                }
            }
        }
        if let Some(want) = &self.perm {
            for (name, p) in want {
                let got = route.queue_datas.iter().find(|q| &q.broker_name == name).map(|q| q.perm & perm::READ_WRITE);
                if got != Some(*p) {
                    return false;
                }
            }
        }
        if let Some(want) = &self.queues {
            for (name, (r, w)) in want {
                let got = route.queue_datas.iter().find(|q| &q.broker_name == name);
                if got.map(|q| (q.read_queue_nums, q.write_queue_nums)) != Some((*r, *w)) {
                    return false;
                }
            }
        }
        true
    }

    /// The claim in words, fields in a fixed order.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match self.absent {
            Some(true) => parts.push("absent".to_string()),
            Some(false) => parts.push("present".to_string()),
            None => {}
        }
        if let Some(b) = &self.brokers {
            parts.push(format!("brokers {}", list(b)));
        }
        if let Some(a) = &self.addrs {
            for (name, ids) in a {
                parts.push(format!("{name} {}", addrs(ids)));
            }
        }
        if let Some(p) = &self.perm {
            for (name, perm) in p {
                parts.push(format!("{name} perm {}", perm::to_text(*perm)));
            }
        }
        if let Some(q) = &self.queues {
            for (name, (r, w)) in q {
                parts.push(format!("{name} queues {r}r/{w}w"));
            }
        }
        if let Some(w) = self.writable_queues {
            parts.push(format!("{w} writable queues"));
        }
        parts.join("; ")
    }
}

fn addrs<'a, A: std::fmt::Display + 'a>(ids: impl IntoIterator<Item = (&'a u64, &'a A)>) -> String {
    let v: Vec<String> = ids.into_iter().map(|(id, a)| format!("{id}={a}")).collect();
    format!("{{{}}}", v.join(", "))
}

/// A route as one sorted line: `broker-a rw 4r/4w {0=10.0.0.1:10911}; broker-b ...`.
pub fn describe_route(route: Option<&TopicRouteData>) -> String {
    describe_route_brief(route, usize::MAX)
}

/// The first `max` queue datas by group name, ties in route order: what a stable sort of all of
/// them would start with. A route client describes a 1,000-group route for eight lines each time
/// its view changes, so the eight are picked in one pass over the route, each group compared
/// with the eighth kept so far and most turned away by that one compare, not by sorting or
/// partitioning all of them.
fn first_by_name(queues: &[Rc<QueueData>], max: usize) -> Vec<&QueueData> {
    if queues.len() <= max {
        let mut all: Vec<&QueueData> = queues.iter().map(|q| &**q).collect();
        all.sort_by_key(|q| q.broker_name);
        return all;
    }
    let mut kept: Vec<&QueueData> = Vec::with_capacity(max + 1);
    for q in queues {
        if kept.len() == max {
            match kept.last() {
                // An equal name later in the route comes after the one kept: it is not taken.
                Some(last) if q.broker_name < last.broker_name => {
                    kept.pop();
                }
                _ => continue,
            }
        }
        let at = kept.partition_point(|k| k.broker_name <= q.broker_name);
        kept.insert(at, &**q);
    }
    kept
}

/// For each queue data, the last `BrokerData` of its name, as a map built from them all would
/// keep: found in one pass from the end of the route, which stops once every name has one. A
/// search from the end for each of the eight groups a brief view shows read a 500-group route's
/// `BrokerData`s, each behind its own pointer, up to eight times: for the 410 changed routes of
/// the RocketMQ bench, 1.7 million first-level data misses, a tenth of the bench's.
fn last_data_of_each<'a>(datas: &'a [Rc<BrokerData>], queues: &[&QueueData]) -> Vec<Option<&'a BrokerData>> {
    let names: Vec<Name> = queues.iter().map(|q| q.broker_name).collect();
    let mut found: Vec<Option<&BrokerData>> = vec![None; queues.len()];
    let mut missing = queues.len();
    for data in datas.iter().rev() {
        if missing == 0 {
            break;
        }
        // Most groups are not among those shown: one compare with each name says so.
        if !names.contains(&data.broker_name) {
            continue;
        }
        for (name, slot) in names.iter().zip(found.iter_mut()) {
            if slot.is_none() && *name == data.broker_name {
                *slot = Some(&**data);
                missing -= 1;
            }
        }
    }
    found
}

/// Like [`describe_route`], listing at most `max` groups and counting the rest, so a trace line
/// about a 1,000-broker topic stays a line.
pub fn describe_route_brief(route: Option<&TopicRouteData>, max: usize) -> String {
    let Some(route) = route else { return "absent (TOPIC_NOT_EXIST)".into() };
    let total = route.queue_datas.len();
    let queues = first_by_name(&route.queue_datas, max);
    let datas = last_data_of_each(&route.broker_datas, &queues);
    let mut parts: Vec<String> = queues
        .iter()
        .zip(datas)
        .map(|(q, data)| {
            let ids = data.map_or_else(|| "{no BrokerData}".into(), |b| addrs(&b.broker_addrs));
            format!("{} {} {}r/{}w {ids}", q.broker_name, perm::to_text(q.perm), q.read_queue_nums, q.write_queue_nums)
        })
        .collect();
    if total > max {
        parts.push(format!("... and {} more groups", total - max));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests;
