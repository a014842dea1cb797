//! The Nacos half of the invariant monitor.
//!
//! Its ground truth is what *arrived* at each naming server — beats, registrations and
//! deregistrations accepted by the running server process, as the network reports them — never
//! the server's own `lastHeartBeatTime`. It also keeps a mirror of what each server publishes,
//! built from the server's trace events, to know which instances a client removal took.
//!
//! * `nacos_stays_healthy` is checked at the trace events that mark an instance unhealthy, delete
//!   it or remove its client;
//! * `nacos_bounded_expiry` and `nacos_recovery` at every instant boundary, against the servers'
//!   state (deadlines in [`super::nacos_bounds`]).

use super::arrival::{ArrivalKind, NacosArrival, Seen};
use super::nacos_bounds::{
    acted_by, answered_intervals, beat_cycle, documented_timeouts, edited_instances, premature, Recovery,
};
use super::Invariant;
use crate::nacos::naming::{NamingServer, Timeouts};
use crate::nacos::notes::NacosNote;
use crate::nacos::types::{ClientKey, ServiceKey};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ProcState;
use crate::sim::scenario::Scenario;
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};

/// What the invariants need to know of one scenario instance; fixed for the run.
struct InstanceFacts {
    name: String,
    app: String,
    servers: Vec<String>,
    /// The server's reading of its metadata (`ConvertUtils.toLong`), as the checkers must use it
    /// (`documented_timeouts`).
    timeouts: Timeouts,
    /// When it registers, counted from its app's (re)start.
    offset: SimDuration,
    recovery: Recovery,
}

struct ServerFacts {
    expire_instance: bool,
    client_expired_time: SimDuration,
}

/// The network is whole since `since`; `slowest` is the most latency any link had.
#[derive(Clone, Copy, Debug)]
pub struct Quiet {
    pub since: SimTime,
    pub slowest: SimDuration,
}

type InstanceKey = (ServiceKey, ClientKey);

pub struct NacosWatch {
    servers: BTreeMap<String, ServerFacts>,
    instances: BTreeMap<InstanceKey, InstanceFacts>,
    /// server → (service, client) → the last arrivals there, this incarnation of the server.
    seen: BTreeMap<String, BTreeMap<InstanceKey, Seen>>,
    /// server → client → the last arrival of anything from that `ip:port`: never earlier than
    /// the client's `lastUpdatedTime`, which the cleaner reads.
    touched: BTreeMap<String, BTreeMap<ClientKey, SimTime>>,
    /// server → (service, client) → the last deregistration of it that reached the server, this
    /// incarnation of the server. One can arrive long after its sender died: a DELETE caught in
    /// a partition stays in its orphaned socket's retransmissions (Linux retries an orphan 8
    /// times, `tcp_orphan_retries` 0), and once the link heals it removes the instance a new
    /// incarnation of the app registered in the meantime. The server is right to, and the
    /// client's next beat restores it: `nacos_recovery` counts its bound from that arrival.
    deleted: BTreeMap<String, BTreeMap<InstanceKey, SimTime>>,
    /// What each server publishes, followed from its trace events.
    published: BTreeMap<String, BTreeSet<InstanceKey>>,
    server_started: BTreeMap<String, SimTime>,
    server_resumed: BTreeMap<String, SimTime>,
    app_started: BTreeMap<String, SimTime>,
    /// Applications told to shut down (and not started again since): they deregister on purpose.
    stopping: BTreeSet<String>,
    /// Instances their application deregistered (`deregister`), until it starts again.
    withdrawn: BTreeSet<String>,
}

impl NacosWatch {
    pub fn new(s: &Scenario) -> Self {
        let servers: BTreeMap<String, ServerFacts> = s
            .nacos
            .servers
            .iter()
            .map(|v| {
                let facts = ServerFacts {
                    expire_instance: v.config.expire_instance,
                    client_expired_time: SimDuration(v.config.client_expired_time),
                };
                (v.name.clone(), facts)
            })
            .collect();
        let hop = s.network.latency + s.network.jitter;
        let edited = edited_instances(s);
        let intervals = |server: &str| answered_intervals(s, server);
        let mut instances = BTreeMap::new();
        for app in &s.nacos.apps {
            for i in app.instances.iter().filter(|i| !edited.contains(i.name.as_str())) {
                let timeouts = documented_timeouts(&i.instance.metadata);
                let cycle = app
                    .servers
                    .iter()
                    .flat_map(|v| intervals(v))
                    .map(|answered| beat_cycle(i.period, timeouts.interval, answered))
                    .fold(i.period, SimDuration::max);
                let stall = app.read_timeout.max(s.network.connect_timeout) + SimDuration(2 * hop.millis());
                let queue = Recovery::queue_for(app.instances.len(), app.beat_threads, hop);
                let facts = InstanceFacts {
                    name: i.name.clone(),
                    app: app.name.clone(),
                    servers: app.servers.clone(),
                    timeouts,
                    offset: i.start.since(app.start),
                    recovery: Recovery { stall, queue, slowest: SimDuration::ZERO, cycle, hop },
                };
                instances.insert((i.service.clone(), ClientKey::new(&i.instance.ip, i.instance.port)), facts);
            }
        }
        NacosWatch {
            servers,
            instances,
            seen: BTreeMap::new(),
            touched: BTreeMap::new(),
            deleted: BTreeMap::new(),
            published: BTreeMap::new(),
            server_started: BTreeMap::new(),
            server_resumed: BTreeMap::new(),
            app_started: BTreeMap::new(),
            stopping: BTreeSet::new(),
            withdrawn: BTreeSet::new(),
        }
    }

    /// A process started, stopped, hung or resumed. A (re)started server has forgotten everyone,
    /// so what arrived at its previous incarnation no longer counts.
    pub fn process(&mut self, now: SimTime, name: &str, before: Option<ProcState>, state: ProcState) {
        let resumed = before == Some(ProcState::Hung) && state == ProcState::Running;
        if self.servers.contains_key(name) {
            match state {
                ProcState::Running if resumed => {
                    self.server_resumed.insert(name.to_string(), now);
                }
                ProcState::Running => {
                    self.server_started.insert(name.to_string(), now);
                    self.server_resumed.remove(name);
                    self.seen.remove(name);
                    self.touched.remove(name);
                    self.deleted.remove(name);
                    self.published.remove(name);
                }
                ProcState::Down => {
                    self.published.remove(name);
                }
                ProcState::Hung => {}
            }
        } else if state == ProcState::Running && !resumed {
            self.app_started.insert(name.to_string(), now);
            self.stopping.remove(name);
            let mine: Vec<String> = self.instances.values().filter(|i| i.app == name).map(|i| i.name.clone()).collect();
            for i in mine {
                self.withdrawn.remove(&i);
            }
        }
    }

    /// What arrived at `server` from `client` for `service`.
    fn seen_at(&self, server: &str, key: &InstanceKey) -> Option<&Seen> {
        self.seen.get(server)?.get(key)
    }

    /// SIGTERM: the application deregisters its instances and exits.
    pub fn shutting_down(&mut self, app: &str) {
        self.stopping.insert(app.to_string());
    }

    /// The application deregistered this instance on purpose (`deregister`): it is not expected
    /// back until its application starts again.
    pub fn deregistered(&mut self, instance: &str) {
        self.withdrawn.insert(instance.to_string());
    }

    /// A request from an instance reached naming server `server`.
    pub fn arrived(&mut self, now: SimTime, server: &str, a: NacosArrival) {
        if !self.servers.contains_key(server) {
            return;
        }
        // A light beat for an instance the server does not publish is answered 20404 before
        // `handleBeat` moves the client's `lastUpdatedTime` (InstanceOperatorClientImpl#handleBeat:
        // `null == clientBeat` returns RESOURCE_NOT_FOUND ahead of `client.setLastUpdatedTime()`).
        // The mirror still shows what the server published before this arrival.
        let answered_20404 = a.kind == ArrivalKind::LightBeat
            && !self.published.get(server).is_some_and(|p| p.contains(&(a.service.clone(), a.client.clone())));
        if !answered_20404 {
            per_server(&mut self.touched, server).insert(a.client.clone(), now);
        }
        if a.kind == ArrivalKind::Deregister {
            per_server(&mut self.deleted, server).insert((a.service, a.client), now);
            return;
        }
        let seen = per_server(&mut self.seen, server);
        seen.entry((a.service, a.client)).and_modify(|s| s.again(now)).or_insert_with(|| Seen::first(now));
    }

    /// A Nacos trace event: keeps the mirror of each server's instances, and checks that an
    /// instance marked unhealthy, deleted or removed had been silent long enough.
    pub fn on_note(&mut self, now: SimTime, actor: &str, note: &NacosNote) -> Vec<(Invariant, String)> {
        let server = crate::sim::trace::process_of(actor);
        let Some(facts) = self.servers.get(server) else { return Vec::new() };
        let expired_time = facts.client_expired_time;
        let mut out = Vec::new();
        match note {
            NacosNote::InstanceRegistered { service, client, .. } => {
                per_server(&mut self.published, server).insert((service.clone(), client.clone()));
            }
            NacosNote::InstanceDeregistered { service, client } => {
                self.unpublish(server, &(service.clone(), client.clone()));
            }
            NacosNote::Unhealthy { service, client, .. } => {
                let key = (service.clone(), client.clone());
                let what = "unhealthy (UnhealthyInstanceChecker)";
                out.extend(self.too_soon(now, server, &key, |f| f.timeouts.beat, what));
            }
            NacosNote::Expired { service, client, .. } => {
                let key = (service.clone(), client.clone());
                out.extend(self.too_soon(now, server, &key, |f| f.timeouts.delete, "deleted (ExpiredInstanceChecker)"));
                self.unpublish(server, &key);
            }
            NacosNote::ClientRemoved { client, .. } => {
                let gone: Vec<InstanceKey> = self
                    .published
                    .get(server)
                    .map(|p| p.iter().filter(|(_, c)| c == client).cloned().collect())
                    .unwrap_or_default();
                let limit = |_: &InstanceFacts| expired_time.millis() as i64;
                // `isExpireClient` reads the client's `lastUpdatedTime`, which every register,
                // deregister and beat from it moves, whichever service it names, but a light
                // beat answered 20404 (see `arrived`). (The latest
                // arrival only: one in this very millisecond neither excuses nor condemns.)
                let touched = self.touched.get(server).and_then(|t| t.get(client)).copied().filter(|t| *t < now);
                let touched = touched.filter(|t| premature(now, *t, expired_time.millis() as i64));
                for key in gone {
                    let early = self.too_soon(now, server, &key, limit, "removed (ExpiredClientCleaner)");
                    out.extend(early.or_else(|| touched.map(|t| client_touched(server, now, t, expired_time, &key))));
                    self.unpublish(server, &key);
                }
            }
            _ => {}
        }
        out
    }

    fn unpublish(&mut self, server: &str, key: &InstanceKey) {
        if let Some(p) = self.published.get_mut(server) {
            p.remove(key);
        }
    }

    /// `nacos_stays_healthy` for one instance marked at `now`: nothing may have arrived from it
    /// within its `limit` before.
    fn too_soon(
        &self,
        now: SimTime,
        server: &str,
        key: &InstanceKey,
        limit: impl Fn(&InstanceFacts) -> i64,
        what: &str,
    ) -> Option<(Invariant, String)> {
        let facts = self.instances.get(key)?;
        let limit = limit(facts);
        let (service, client) = key;
        let seen = self.seen_at(server, key);
        let last = seen.and_then(|s| s.before(now));
        if last.is_some_and(|last| !premature(now, last, limit)) {
            return None;
        }
        let who = format!("{} ({service} {client})", facts.name);
        let detail = match last {
            None => format!("{server} marked {who} {what} at {now}, but nothing from it ever arrived there"),
            Some(last) => format!(
                "{server} marked {who} {what} at {now}, but a beat or registration from it arrived at {last}, {} \
                 before, within its {} limit. expected: kept; got: {what}",
                now.since(last),
                SimDuration(limit.max(0) as u64),
            ),
        };
        Some((Invariant::NacosStaysHealthy, detail))
    }

    /// The checks at an instant boundary: every earlier instant is complete. `quiet` is set
    /// when no fault is in force.
    pub fn before_instant(
        &self,
        now: SimTime,
        world: &World,
        states: &BTreeMap<String, ProcState>,
        quiet: Option<Quiet>,
        enabled: (bool, bool),
    ) -> Vec<(Invariant, String)> {
        let mut out = Vec::new();
        for (server, facts) in &self.servers {
            if states.get(server) != Some(&ProcState::Running) {
                continue;
            }
            let Some(core) = world.nacos_server(server) else { continue };
            let core = core.borrow();
            if enabled.0 {
                out.extend(self.bounded(now, server, facts, &core).map(|d| (Invariant::NacosBoundedExpiry, d)));
            }
            if let (true, Some(quiet)) = (enabled.1, quiet) {
                let diffs = self.recovery(now, server, &core, states, quiet);
                if !diffs.is_empty() {
                    out.push((Invariant::NacosRecovery, format!("{server} at {now}: {}", diffs.join("; "))));
                }
            }
        }
        out
    }

    /// `nacos_bounded_expiry` on one server: the first instance held past its deadline.
    fn bounded(&self, now: SimTime, server: &str, facts: &ServerFacts, core: &NamingServer) -> Option<String> {
        let resumed = self.server_resumed.get(server).copied();
        // An instance nothing ever arrived from has no deadline here.
        let seen_here = self.seen.get(server)?;
        let touched_here = self.touched.get(server);
        for (key, i) in &self.instances {
            let (service, client) = key;
            let Some(p) = core.instance(service, client) else { continue };
            let Some(seen) = seen_here.get(key) else { continue };
            if i.timeouts.skip {
                continue;
            }
            let last = seen.last;
            let unhealthy_by = acted_by(last, i.timeouts.beat, resumed);
            let absent_by = if facts.expire_instance {
                acted_by(last, i.timeouts.delete, resumed)
            } else {
                let touched = touched_here.and_then(|t| t.get(client)).copied().unwrap_or(last);
                acted_by(touched, facts.client_expired_time.millis() as i64, resumed)
            };
            // This runs for every instance at every instant: the text is built only for a violation.
            let who = || format!("{} ({service} {client})", i.name);
            if now > absent_by {
                let (who, state) = (who(), if p.healthy { "healthy" } else { "unhealthy" });
                let why = if facts.expire_instance {
                    format!("delete timeout {}ms", i.timeouts.delete)
                } else {
                    format!("client_expired_time {}", facts.client_expired_time)
                };
                return Some(format!(
                    "{server} still has {who} ({state}) at {now}: nothing arrived from it since {last}, so it should \
                     be gone by {absent_by} ({why} + check period 5s). expected: absent; got: {state}"
                ));
            }
            if p.healthy && now > unhealthy_by {
                let who = who();
                return Some(format!(
                    "{server} still has {who} healthy at {now}: nothing arrived from it since {last}, so it should be \
                     unhealthy by {unhealthy_by} (heart-beat timeout {}ms + check period 5s). expected: unhealthy or \
                     absent; got: healthy",
                    i.timeouts.beat
                ));
            }
        }
        None
    }

    /// `nacos_recovery` on one server: every instance past its recovery deadline that is not
    /// registered and healthy there, as "expected healthy, got ..." lines.
    fn recovery(
        &self,
        now: SimTime,
        server: &str,
        core: &NamingServer,
        states: &BTreeMap<String, ProcState>,
        quiet: Quiet,
    ) -> Vec<String> {
        let mut diffs = Vec::new();
        for (key, i) in &self.instances {
            let (service, client) = key;
            let running = states.get(&i.app) == Some(&ProcState::Running)
                && !self.stopping.contains(&i.app)
                && !self.withdrawn.contains(&i.name);
            if i.servers != [server] || !running {
                continue;
            }
            let recovery = Recovery { slowest: quiet.slowest, ..i.recovery };
            if !recovery.has_room(&i.timeouts) {
                continue;
            }
            let registers = self.app_started.get(&i.app).map_or(SimTime::ZERO, |t| *t + i.offset);
            let started = self.server_started.get(server).copied().unwrap_or_default();
            let deleted = self.deleted.get(server).and_then(|d| d.get(key)).copied();
            let from = quiet.since.max(registers).max(started).max(deleted.unwrap_or_default());
            let by = recovery.by(from);
            let got = match core.instance(service, client) {
                Some(p) if p.healthy => continue,
                Some(_) => "unhealthy",
                None => "absent",
            };
            if now > by {
                let last = self.seen_at(server, key).map(|s| s.last);
                let last = last.map_or("never".to_string(), |t| t.to_string());
                let since = match deleted {
                    Some(at) if at == from => format!("a deregistration of it arrived at {at}"),
                    _ => format!("quiet since {from}"),
                };
                diffs.push(format!(
                    "{} ({service} {client}) expected healthy by {by} ({since}, + stall {} + queue {} + slowest \
                     link {} + beat cycle {} + 3 hops of {}), got {got} (last arrival {last})",
                    i.name, recovery.stall, recovery.queue, recovery.slowest, recovery.cycle, recovery.hop
                ));
            }
        }
        diffs
    }
}

/// `server`'s entry of a per-server map, made on its first use (the checks look a server up by
/// `&str` on every instant; only a new server costs a `String`).
fn per_server<'a, V: Default>(map: &'a mut BTreeMap<String, V>, server: &str) -> &'a mut V {
    if !map.contains_key(server) {
        map.insert(server.to_string(), V::default());
    }
    map.get_mut(server).expect("inserted above")
}

/// `nacos_stays_healthy` for a client removed while a request from it had moved its
/// `lastUpdatedTime` within `clientExpiredTime`.
fn client_touched(
    server: &str,
    now: SimTime,
    last: SimTime,
    expired: SimDuration,
    key: &InstanceKey,
) -> (Invariant, String) {
    let (service, client) = key;
    let detail = format!(
        "{server} removed client {client} with {service} at {now} (ExpiredClientCleaner), but a request from that \
         client arrived at {last}, {} before, within its clientExpiredTime {expired}. expected: kept; got: removed",
        now.since(last)
    );
    (Invariant::NacosStaysHealthy, detail)
}
