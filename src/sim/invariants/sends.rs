//! The producer checks: `send_within_timeout`, `sends_follow_route` and `sends_recover`, fed by
//! the monitor.
//!
//! Their ground truth is the actor layer's, not the send state machine's: the producer actor
//! tells the monitor when each send begins and where each attempt goes (`Obs::send_started`,
//! `Obs::send_attempt`), and the trace says when the send ended (`SendDone`). How long a send
//! took is measured here, from those instants, never read from the note's own `elapsed`.

use super::derive::Configs;
use super::Invariant;
use crate::rocketmq::client::RouteClientCore;
use crate::rocketmq::producer::CommunicationMode;
use crate::rocketmq::types::{perm, TopicRouteData, MASTER_ID};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ProcState;
use crate::sim::scenario::Scenario;
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

type Route = Option<Rc<TopicRouteData>>;

/// What the checks need to know of one `[[producer]]`.
struct Facts {
    client: String,
    topic: String,
    mode: CommunicationMode,
    /// `sendMsgTimeout` + the connect timeout: the longest a sync send may take (see
    /// [`Invariant::SendWithinTimeout`]).
    bound: SimDuration,
}

/// One attempt of a send as the producer actor put it on the wire (`Obs::send_attempt`).
#[derive(Clone, Copy, Debug)]
pub struct AttemptSeen<'a> {
    pub producer: &'a str,
    pub send: u64,
    /// 0 for the first.
    pub attempt: u32,
    /// The broker name, and the address the attempt went to.
    pub broker: &'a str,
    pub addr: &'a str,
    pub queue: u32,
}

/// A send that began and has not ended.
struct Flight {
    started: SimTime,
    /// Since when its client is paused, while it is: the wait is the pause's, not the send's.
    paused: Option<SimTime>,
    /// How long its client was paused while it ran, pauses over: its bound moves out by that
    /// much. (Java's waits run on the wall clock, which a SIGSTOP does not stop, so at the
    /// SIGCONT every wait that came due ends at once: the send ends by then.)
    pauses: SimDuration,
    /// Whether it was ever paused: its failure is then the pause's too.
    excused: bool,
    /// `sends_recover` claims it must succeed (the cluster was settled and the route sound when
    /// it began), with the route's description for the report.
    must_succeed: Option<String>,
    /// The route its client held at the instant it began, whose queues its attempts choose
    /// from; `None` when the client had left the world (shutting down). Kept here rather than
    /// looked up by time: a route can change in the very instant a send begins, after it.
    began_with: Option<Route>,
}

impl Flight {
    /// When a sync send with this `bound` is overdue: the bound counts from the start, moved
    /// out by the pauses over so far.
    fn due(&self, bound: SimDuration) -> SimTime {
        self.started + bound + self.pauses
    }
}

/// The monitor's view of the cluster at a send's start, for `sends_recover`.
pub struct Settled<'a> {
    /// When the last fault ended, if none is in force.
    pub quiet_since: Option<SimTime>,
    pub state: &'a BTreeMap<String, ProcState>,
    pub configs: &'a Configs,
}

#[derive(Default)]
pub struct SendWatch {
    producers: BTreeMap<String, Facts>,
    flights: BTreeMap<(String, u64), Flight>,
    /// Sync sends in flight by the instant they are overdue.
    due: BTreeSet<(SimTime, String, u64)>,
    /// Per producer, the routes its client held since its oldest send in flight began, each
    /// with when it was first seen: an attempt may use any of them (see `sends_follow_route`).
    routes: BTreeMap<String, Vec<(SimTime, Route)>>,
}

impl SendWatch {
    pub fn new(s: &Scenario) -> Self {
        let producers = s
            .producers
            .iter()
            .map(|p| {
                let facts = Facts {
                    client: p.client.clone(),
                    topic: p.topic.clone(),
                    mode: p.mode,
                    bound: p.config.send_msg_timeout + s.network.connect_timeout,
                };
                (p.name.clone(), facts)
            })
            .collect();
        SendWatch { producers, ..Default::default() }
    }

    /// Producer `name`'s send `id` began: remember when, the route its client holds, and whether
    /// `sends_recover` claims it must succeed.
    pub fn started(&mut self, now: SimTime, name: &str, id: u64, world: &World, settled: Settled<'_>) {
        let Some(f) = self.producers.get(name) else { return };
        // No core: the client is shutting down, and its producers send with what they had.
        let route = world.client(&f.client).map(|c| c.borrow().route_shared(&f.topic).cloned());
        let must_succeed = match (settled.quiet_since, &route) {
            (Some(since), Some(route)) if now.since(since) >= super::monitor::SETTLE => {
                sound(route.as_deref(), &f.topic, &settled)
            }
            _ => None,
        };
        let history = self.routes.entry(name.to_string()).or_default();
        if let Some(route) = &route {
            if history.last().is_none_or(|(_, r)| !same(r, route)) {
                history.push((now, route.clone()));
            }
        }
        if f.mode == CommunicationMode::Sync {
            self.due.insert((now + f.bound, name.to_string(), id));
        }
        // A send can begin in the very instant its client is paused (the pause and the tick
        // race, as a SIGSTOP and a timer thread do); it is the pause's then, too.
        let excused = settled.state.get(&f.client) == Some(&ProcState::Hung);
        let paused = excused.then_some(now);
        let flight =
            Flight { started: now, paused, pauses: SimDuration::ZERO, excused, must_succeed, began_with: route };
        self.flights.insert((name.to_string(), id), flight);
    }

    /// An attempt was put on the wire.
    pub fn attempt(&mut self, a: &AttemptSeen<'_>, world: &World) -> Option<(Invariant, String)> {
        let AttemptSeen { producer: name, send: id, attempt, broker, addr, queue } = *a;
        let f = self.producers.get(name)?;
        let flight = self.flights.get(&(name.to_string(), id))?;
        let history = self.routes.get(name).map(Vec::as_slice).unwrap_or_default();
        // The route current when the send began is the last one seen at or before its start.
        let from = history.iter().rposition(|(t, _)| *t <= flight.started).unwrap_or(0);
        // Every route of the topic it held since: as the sends that began after it saw them, and now.
        let now_route = world.client(&f.client).and_then(|c| c.borrow().route_shared(&f.topic).cloned());
        let held: Vec<&TopicRouteData> = history[from..]
            .iter()
            .map(|(_, r)| r)
            .chain(&flight.began_with)
            .chain([&now_route])
            .filter_map(|r| r.as_deref())
            .collect();
        // The queue comes from the publish info the send looked up before its loop, which a
        // route update replaces but does not change (`sendDefaultImpl`, `onExceptionImpl`):
        // every attempt's queue is the start route's. An async retry re-sends the first
        // attempt's request, queue id and all, to another broker: only its broker is checked.
        let check_queue = !(f.mode == CommunicationMode::Async && attempt > 0);
        // (No route seen at the start: the client had left the world, shutting down; then any
        // route held since will do.)
        let queue_ok = match &flight.began_with {
            Some(began_with) => began_with.as_deref().is_some_and(|r| writable_queue(r, broker, queue, check_queue)),
            None => held.iter().any(|r| writable_queue(r, broker, queue, check_queue)),
        };
        // The address is looked up at each attempt (`findBrokerAddressInPublish`, from the
        // client's broker address table). Any changed route of the client's updates that table,
        // so a master that moved may be known from another topic's route a poll ahead of this
        // one's: the client's current routes of every topic count too.
        let addr_ok = held.iter().any(|r| master_addr(r, broker) == Some(addr))
            || world.client(&f.client).is_some_and(|c| lists_master(&c.borrow(), broker, addr));
        if queue_ok && addr_ok {
            return None;
        }
        let (client, topic, started) = (&f.client, &f.topic, flight.started);
        let what = if queue_ok {
            format!("no route {client} held for {topic} since the send began at {started}, nor any it holds now, has {addr} as its master")
        } else {
            format!("the route {client} held for {topic} when the send began at {started} has no such writable queue")
        };
        let detail = format!(
            "{name}'s send #{id} (attempt {}) went to {broker} queue {queue} at {addr}, but {what}",
            attempt + 1
        );
        Some((Invariant::SendsFollowRoute, detail))
    }

    /// The trace says producer `name`'s send `id` ended at `now`.
    pub fn done(&mut self, now: SimTime, name: &str, id: u64, ok: bool, result: &str) -> Vec<(Invariant, String)> {
        let mut out = Vec::new();
        let Some(flight) = self.flights.remove(&(name.to_string(), id)) else { return out };
        let Some(f) = self.producers.get(name) else { return out };
        self.due.remove(&(flight.due(f.bound), name.to_string(), id));
        if f.mode == CommunicationMode::Sync && flight.paused.is_none() && now > flight.due(f.bound) {
            out.push((Invariant::SendWithinTimeout, overdue(name, id, &flight, now, f.bound, "took until")));
        }
        // A pause during the send excuses its failure too: Java's clock runs on through a
        // SIGSTOP, so the send finds its budget spent when it resumes.
        if let (false, false, Some(route)) = (ok, flight.excused, &flight.must_succeed) {
            let detail = format!(
                "{name}'s send #{id}, begun at {} with every fault healed for at least {}, failed: {result}; {}'s route for {} listed only running masters that store it: {route}",
                flight.started,
                super::monitor::SETTLE,
                f.client,
                f.topic
            );
            out.push((Invariant::SendsRecover, detail));
        }
        self.prune(name);
        out
    }

    /// A fault was applied (or an operator acted): the sends in flight lose `sends_recover`'s
    /// claim, made when the cluster was settled. A broker's host going down under a send fails
    /// it correctly in Java: the attempt waits out its timeout and leaves the retries nothing.
    pub fn fault(&mut self) {
        for flight in self.flights.values_mut() {
            flight.must_succeed = None;
        }
    }

    /// A process changed state at `now`: a paused client excuses its sends in flight until it
    /// resumes, and their bounds move out by the pause; a stopped one takes them with it (Java's
    /// threads die with the JVM).
    pub fn process(&mut self, now: SimTime, client: &str, state: ProcState) {
        let names: Vec<String> =
            self.producers.iter().filter(|(_, f)| f.client == client).map(|(n, _)| n.clone()).collect();
        for name in names {
            let ids: Vec<u64> =
                self.flights.range((name.clone(), 0)..=(name.clone(), u64::MAX)).map(|(k, _)| k.1).collect();
            for id in ids {
                let f = &self.producers[&name];
                let (sync, bound) = (f.mode == CommunicationMode::Sync, f.bound);
                let key = (name.clone(), id);
                match state {
                    ProcState::Running => {
                        let Some(flight) = self.flights.get_mut(&key) else { continue };
                        let Some(since) = flight.paused.take() else { continue };
                        self.due.remove(&(flight.due(bound), name.clone(), id));
                        flight.pauses = flight.pauses + now.since(since);
                        if sync {
                            self.due.insert((flight.due(bound), name.clone(), id));
                        }
                    }
                    ProcState::Hung => {
                        if let Some(flight) = self.flights.get_mut(&key) {
                            flight.paused.get_or_insert(now);
                            flight.excused = true;
                        }
                    }
                    ProcState::Down => {
                        if let Some(flight) = self.flights.remove(&key) {
                            self.due.remove(&(flight.due(bound), name.clone(), id));
                        }
                    }
                }
            }
            self.prune(&name);
        }
    }

    /// Virtual time reached `now`: a sync send still running past its bound is a violation
    /// already, even if it never ends.
    pub fn before_instant(&mut self, now: SimTime) -> Option<(Invariant, String)> {
        while let Some((at, name, id)) = self.due.first().cloned() {
            if at >= now {
                return None;
            }
            self.due.pop_first();
            let Some(flight) = self.flights.get(&(name.clone(), id)) else { continue };
            // Paused: the resume files it again, its bound moved out by the pause.
            if flight.paused.is_some() {
                continue;
            }
            let bound = self.producers[&name].bound;
            return Some((
                Invariant::SendWithinTimeout,
                overdue(&name, id, flight, now, bound, "was still running at"),
            ));
        }
        None
    }

    /// Forgets the routes no send in flight can still use.
    fn prune(&mut self, name: &str) {
        let oldest =
            self.flights.range((name.to_string(), 0)..=(name.to_string(), u64::MAX)).map(|(_, f)| f.started).min();
        let Some(history) = self.routes.get_mut(name) else { return };
        let keep_from = match oldest {
            Some(t) => history.iter().rposition(|(at, _)| *at <= t).unwrap_or(0),
            None => history.len().saturating_sub(1),
        };
        history.drain(..keep_from);
    }
}

fn overdue(name: &str, id: u64, flight: &Flight, now: SimTime, bound: SimDuration, verb: &str) -> String {
    let started = flight.started;
    let paused = match flight.pauses {
        SimDuration::ZERO => String::new(),
        p => format!(", and the {p} its client was paused"),
    };
    format!(
        "{name}'s sync send #{id} began at {started} and {verb} {now}, {} later: more than its send timeout plus the connect timeout ({bound}){paused}",
        now.since(started)
    )
}

fn same(a: &Route, b: &Route) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Rc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// The master address `route` gives the broker name.
fn master_addr<'r>(route: &'r TopicRouteData, broker: &str) -> Option<&'r str> {
    let data = route.broker_datas.iter().find(|b| b.broker_name == broker)?;
    data.broker_addrs.get(&MASTER_ID).map(|addr| addr.as_str())
}

/// Whether any route `client` holds now, of any topic, gives `broker`'s master as `addr`.
fn lists_master(client: &RouteClientCore, broker: &str, addr: &str) -> bool {
    client.topics().filter_map(|t| client.route(t)).any(|r| master_addr(r, broker) == Some(addr))
}

/// Whether `route` lets a producer write to `broker`'s `queue` (or to `broker` at all).
fn writable_queue(route: &TopicRouteData, broker: &str, queue: u32, check_queue: bool) -> bool {
    route
        .queue_datas
        .iter()
        .any(|q| q.broker_name == broker && q.perm & perm::WRITE != 0 && (!check_queue || queue < q.write_queue_nums))
}

/// `sends_recover`'s claim: every writable queue of `route` is on a running master that stores
/// the topic with at least that many queues, and there is one. Returns the route described, or
/// `None` when the route gives a send a reason to fail.
fn sound(route: Option<&TopicRouteData>, topic: &str, s: &Settled<'_>) -> Option<String> {
    let route = route?;
    let mut seen = Vec::new();
    for q in route.queue_datas.iter().filter(|q| q.perm & perm::WRITE != 0 && q.write_queue_nums > 0) {
        let addr = master_addr(route, &q.broker_name)?;
        let b = s.configs.broker_at(addr)?;
        let c = &b.config;
        let running = s.state.get(&b.name) == Some(&ProcState::Running);
        let stores = s.configs.queues_of(b, topic).is_some_and(|n| n >= q.write_queue_nums);
        if !running || c.broker_id != MASTER_ID || c.broker_name != q.broker_name || !stores {
            return None;
        }
        seen.push(format!("{} ({addr}, {} queues)", q.broker_name, q.write_queue_nums));
    }
    (!seen.is_empty()).then(|| seen.join(", "))
}
