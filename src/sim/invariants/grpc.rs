//! The 2.x gRPC client invariants: a connection nothing has disturbed is never dropped
//! (`grpc_stays_connected`), and a client that dies is gone from every member in time
//! (`grpc_gone_in_time`).
//!
//! * **Stays connected.** A member unregisters a connection when its TCP connection closes
//!   (`transportTerminated`) or when `NacosRuntimeConnectionEjector` finds it idle for 20 s
//!   (`KEEP_ALIVE_TIME`) and its `ClientDetectionRequest` goes unanswered for 5 s. A running
//!   client answers, and its own health checks keep the connection alive; so a connection the
//!   client saw set up after the last fault of the run, while it still runs, is never
//!   unregistered while no fault is in force. (Stated with "no fault anywhere since", not per link: simpler, and true.)
//! * **Gone in time.** A killed client's kernel closes its connection: its member unregisters it
//!   when the FIN arrives and the others apply the Distro DELETE one sync lag later. A client
//!   whose host dies sends no FIN: the ejector finds it idle 20 s after its last request at the
//!   latest, probes it at its next run, and gives up 5 s later. Runs are 3 s apart *after* the
//!   previous one ends, and one that probes another silent connection waits 5 s for it
//!   (`scheduleWithFixedDelay`, `latch.await`): so the next run is at most 8 s away. Counted
//!   from the death when nothing else fails afterwards — a member that dies too leaves the copies for 3 min
//!   (lesson 16) — and not before the members have recovered from the fault before it (their
//!   views `UP` again, a failed sync retried: `distro::recovery`), from the heal if the network
//!   was not whole when it died; and never before the copies of an earlier fault have expired (a client that
//!   moved members leaves its old connection's copies behind, and a snapshot loaded after the
//!   heal renews them once: `distro::stale_copies_gone`).
//! * **Copies with no owner.** Only the member that holds the client natively renews the
//!   others' copies (`verifyClient` → `setLastRenewTime`). If no running member holds it when it
//!   dies (its member died first, or it had not reconnected yet), nothing removes the copies but
//!   their lease: `clientExpiredTime` (3 min) after their last renewal, which came before the
//!   death (`distro::copy_lease`).
//! * **Copies made after the death.** `syncClientConnected` creates a copy of any client it is
//!   told about (`computeIfAbsent`, no tombstone), so a copy can come back after the owner's
//!   DELETE: from a snapshot a member still loading took before the DELETE reached its source
//!   (`DistroLoadDataTask`), or from a CHANGE a cut held in TCP's retransmission queue that
//!   arrives after the DELETE went over a new connection. Nobody verifies such a copy, so it lives
//!   out its lease: the deadline moves to one lease after it was made, and is checked again.

use super::Invariant;
use crate::nacos::grpc::{DETECTION_TIMEOUT, EJECTOR_DELAY, KEEP_ALIVE_TIME};
use crate::nacos::naming::RegisterSource;
use crate::nacos::notes::NacosNote;
use crate::nacos::types::{ClientKey, ServiceKey};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ProcState;
use crate::sim::scenario::{Scenario, Transport};
use crate::sim::world::World;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A gRPC application's death, and the deadline by which no member may hold its instances.
struct Death {
    at: SimTime,
    deadline: SimTime,
    /// The network was not whole when it died (a cut, a pause, a lossy link in force): the
    /// members' views recover from the heal, not from before.
    disturbed: bool,
    /// Checked at its deadline; a copy made since sets it due again.
    checked: bool,
}

pub struct GrpcWatch {
    /// gRPC application → the instances it registers.
    apps: BTreeMap<String, Vec<(ServiceKey, ClientKey)>>,
    members: Vec<String>,
    /// When each client saw its connection set up (`GrpcClient#connectToServer` succeeded).
    registered: BTreeMap<Arc<str>, SimTime>,
    deaths: BTreeMap<String, Death>,
    /// gRPC application → the connections it has set up so far.
    connections: BTreeMap<String, Vec<Arc<str>>>,
    latency: SimDuration,
    lag: SimDuration,
    stale: SimDuration,
    /// After a fault, until the members see each other `UP` again and a failed sync has been
    /// retried (`distro::recovery`).
    recovery: SimDuration,
    /// A copy nothing renews is gone this long after it was made (`distro::copy_lease`).
    lease: SimDuration,
}

impl GrpcWatch {
    pub fn new(s: &Scenario) -> Self {
        let apps = s
            .nacos
            .apps
            .iter()
            .filter(|a| a.transport == Transport::Grpc)
            .map(|a| {
                let keys =
                    a.instances.iter().map(|i| (i.service.clone(), ClientKey::new(&i.instance.ip, i.instance.port)));
                (a.name.clone(), keys.collect())
            })
            .collect();
        let latency = s.network.latency + s.network.jitter;
        GrpcWatch {
            apps,
            members: s.nacos.servers.iter().map(|v| v.name.clone()).collect(),
            registered: BTreeMap::new(),
            deaths: BTreeMap::new(),
            connections: BTreeMap::new(),
            latency,
            lag: super::distro::sync_lag(s),
            stale: super::distro::stale_copies_gone(s),
            recovery: super::distro::recovery(s),
            lease: super::distro::copy_lease(s),
        }
    }

    /// A fault was applied at `at`: `process` stopped (`host`: with its host), after the run's
    /// previous fault at `previous`, with the network whole or not (`disturbed`); `world` and
    /// `states` as they were just before.
    pub fn died(
        &mut self,
        at: SimTime,
        process: &str,
        host: bool,
        faults: (SimTime, bool),
        world: &World,
        states: &BTreeMap<String, ProcState>,
    ) {
        let (previous, disturbed) = faults;
        if self.members.iter().any(|m| m == process) {
            self.owner_died(at, process, world);
        }
        if !self.apps.contains_key(process) {
            return;
        }
        let detect = if host {
            // The ejector runs with a fixed delay, and a run that probes a silent connection
            // waits out its latch: so the run that finds this one idle can start up to 5 s + 3 s
            // after it went idle, behind a run probing another silent connection (another dead
            // client, or an old connection of a restarted one). Allowing for that always costs
            // the check 5 s where nothing else is silent.
            KEEP_ALIVE_TIME + DETECTION_TIMEOUT + EJECTOR_DELAY + DETECTION_TIMEOUT + self.latency
        } else {
            self.latency // the FIN
        };
        // Copies of an older connection of this client (it moved members) may outlive it: then
        // not before they have run out too.
        let conns = self.connections.get(process).map(Vec::as_slice).unwrap_or_default();
        let moved = conns.len() > 1;
        let deadline = match moved {
            true => (at + detect + self.lag).max(previous + self.stale + self.lag),
            false => at + detect + self.lag,
        };
        // A fault just before may still hold the DELETE back (a member not yet `UP` again).
        let deadline = deadline.max(previous + self.recovery);
        // No running member holds its latest connection natively: that connection's copies go
        // with their leases, last renewed before now. (Older connections' copies: `moved`.)
        let running = self.members.iter().filter(|m| states.get(*m) == Some(&ProcState::Running));
        let owned = conns.last().is_some_and(|c| {
            running.clone().any(|m| world.nacos_server(m).is_some_and(|core| core.borrow().holds_native(c)))
        });
        let deadline = if owned { deadline } else { deadline.max(at + self.lease) };
        self.deaths.insert(process.to_string(), Death { at, deadline, disturbed, checked: false });
    }

    /// Member `member` stops at `at`, the same instant as some clients whose native holder it is:
    /// nothing failed *after* their deaths, but their copies now wait out their leases too. Any
    /// of a client's connections counts here, not only its latest: an older one's owner dying
    /// now leaves that connection's copies for a lease from now, later than `moved` allows.
    fn owner_died(&mut self, at: SimTime, member: &str, world: &World) {
        let Some(core) = world.nacos_server(member) else { return };
        let core = core.borrow();
        for (app, death) in self.deaths.iter_mut().filter(|(_, d)| d.at == at) {
            let conns = self.connections.get(app).map(Vec::as_slice).unwrap_or_default();
            if conns.iter().any(|c| core.holds_native(c)) {
                death.deadline = death.deadline.max(at + self.lease);
            }
        }
    }

    /// `process` started again: its instances are back by right, over a new connection.
    pub fn started(&mut self, process: &str) {
        self.deaths.remove(process);
    }

    /// `grpc_stays_connected`, at each connection's register and unregister.
    pub fn on_note(
        &mut self,
        now: SimTime,
        actor: &str,
        note: &NacosNote,
        states: &BTreeMap<String, ProcState>,
        quiet: Option<SimTime>,
    ) -> Option<(Invariant, String)> {
        match note {
            // The client's side: a connect that began before a fault can still reach the server
            // after it, for a client that has given up on it meanwhile (and closes it).
            NacosNote::GrpcConnected { conn, .. } => {
                self.registered.insert(conn.clone(), now);
                let app = crate::sim::trace::process_of(actor).to_string();
                self.connections.entry(app).or_default().push(conn.clone());
                None
            }
            // A copy of a dead client's instance made after its death lives out its lease.
            NacosNote::InstanceRegistered { service, client, source: RegisterSource::Distro, .. } => {
                let apps = &self.apps;
                let of_app = |app: &String| apps[app].iter().any(|(s, k)| s == service && k == client);
                if let Some((_, death)) = self.deaths.iter_mut().find(|(app, _)| of_app(app)) {
                    death.deadline = death.deadline.max(now + self.lease);
                    death.checked = false;
                }
                None
            }
            NacosNote::ConnUnregistered { conn, client, ejected_idle } => {
                let made = self.registered.remove(conn)?;
                let last_fault = quiet?;
                let running = states.get(client.as_ref()) == Some(&ProcState::Running);
                if !running || made <= last_fault {
                    return None;
                }
                let how = match ejected_idle {
                    Some(idle) => format!("ejected after {idle} idle and an unanswered detection"),
                    None => "closed".to_string(),
                };
                let detail = format!(
                    "connection {conn} of {client}, made at {made} after the last fault ({last_fault}), was {how} at \
                     {now} while {client} runs and no fault is in force"
                );
                Some((Invariant::GrpcStaysConnected, detail))
            }
            _ => None,
        }
    }

    /// `grpc_gone_in_time`, before the instant `now`: a dead client's instance still held by a
    /// running member past its deadline, if nothing failed after its death.
    pub fn before_instant(
        &mut self,
        now: SimTime,
        world: &World,
        states: &BTreeMap<String, ProcState>,
        quiet: Option<SimTime>,
    ) -> Option<String> {
        let last_fault = quiet?;
        // A death in a disturbed network is due no sooner than the members' recovery from the
        // heal (the last fault).
        let recovery = self.recovery;
        let due_by = |d: &Death| if d.disturbed { d.deadline.max(last_fault + recovery) } else { d.deadline };
        let due: Vec<String> = self
            .deaths
            .iter()
            .filter(|(_, d)| !d.checked && d.at == last_fault && now >= due_by(d))
            .map(|(app, _)| app.clone())
            .collect();
        for app in due {
            let death = self.deaths.get_mut(&app).expect("listed");
            death.checked = true;
            let deadline = due_by(death);
            for member in self.members.iter().filter(|m| states.get(*m) == Some(&ProcState::Running)) {
                let Some(core) = world.nacos_server(member) else { continue };
                let core = core.borrow();
                if let Some((service, key)) = self.apps[&app].iter().find(|(s, k)| core.instance(s, k).is_some()) {
                    return Some(format!(
                        "{app} died at {} and nothing failed since, yet at {now} {member} still holds its instance \
                         {service} {key} (due gone by {})",
                        death.at, deadline
                    ));
                }
            }
        }
        None
    }
}
