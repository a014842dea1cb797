//! The invariant monitor: watches the network and the trace, and checks the enabled invariants
//! after every event.
//!
//! Its ground truth is what *arrived*: the network tells it about every registration or
//! heartbeat delivered to a name server (and every beat or registration delivered to a Nacos
//! naming server), and about every process start, stop, hang and resume. It never trusts a
//! server's own timestamps, so a table that forgets a refresh (or a scanner that compares with
//! `<=`) shows up as a difference. The Nacos checks live in `super::nacos`, the name-server
//! checks in `monitor/namesrv.rs`; this file feeds them and keeps the fault bookkeeping both
//! families share.

use super::derive::{self, Configs, Expected};
use super::ghosts::Ghosts;
use super::nacos::{NacosWatch, Quiet};
use super::sends::{AttemptSeen, SendWatch, Settled};
use super::{Arrival, Invariant, Violation};
use crate::rocketmq::broker::BrokerConfig;
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::types::BrokerAddrInfo;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ProcState;
use crate::sim::notes::{FaultNote, What};
use crate::sim::scenario::{Action, Scenario};
use crate::sim::trace::TraceEvent;
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};

mod namesrv;

/// How long after the last fault the convergence check waits for the cluster to settle: the
/// worst expiry (`DEFAULT_BROKER_CHANNEL_EXPIRED_TIME` 120 s + one 5 s scan), two register
/// periods (30 s each; the first registration after a heal may bounce off a half-open channel)
/// and two client polls (`pollNameServerInterval` 30 s each). It was 240 s once, the scan left
/// out of the sum.
pub const SETTLE: SimDuration = SimDuration::from_secs(120 + 5 + 2 * 30 + 2 * 30);

/// A name server's schedule, for the expiry bound.
struct NamesrvFacts {
    scan_interval: SimDuration,
    scan_initial_delay: SimDuration,
    batch_delay: SimDuration,
}

/// The earliest instant at which a name server's live entry could be overdue, as of its table
/// revision. Arrivals only push bounds later and a restart or resume only moves the scan grid
/// later, so until the table's membership changes (a new entry, a new timeout, a group that
/// starts listing an address: all bump the revision) or a broker arrives for the first time,
/// `BoundedExpiry` has nothing to find before `until`. Without this the check walked every
/// live entry at every instant, the larger part of an explored case's time.
struct Horizon {
    revision: (u64, u64),
    until: SimTime,
}

pub struct Monitor {
    enabled: BTreeSet<Invariant>,
    scenario: Scenario,
    /// The brokers' config as the operator's actions so far changed it, for `Convergence`.
    configs: Configs,
    /// Empty groups that refused registrations left on name servers, for `Convergence`.
    ghosts: Ghosts,
    namesrvs: BTreeMap<String, NamesrvFacts>,
    /// (cluster, addr) → broker process name and the live-entry timeout its registrations must
    /// give it, derived from its config (`expiry_timeout`), never read back from the table or the
    /// scanner's report. Keyed like the live table so that a live entry is looked up without
    /// building a key.
    brokers_by_addr: BTreeMap<BrokerAddrInfo, (String, SimDuration)>,
    state: BTreeMap<String, ProcState>,
    /// When each name server last started or resumed: its scan grid starts over.
    ns_started: BTreeMap<String, SimTime>,
    ns_resumed: BTreeMap<String, SimTime>,
    /// Registrations and heartbeats from a broker that arrived at a name server, this
    /// incarnation of the name server: name server → broker → the last two instants. Nested so
    /// that the every-instant expiry check looks names up by reference.
    arrivals: BTreeMap<String, BTreeMap<String, Arrived>>,
    /// Per name server, until when its last full `BoundedExpiry` pass proved nothing can be
    /// overdue (see [`Horizon`]).
    horizons: BTreeMap<String, Horizon>,
    revisions: BTreeMap<String, (u64, u64)>,
    /// Cuts in force (partition/block names), processes hung, links with loss, links whose
    /// latency differs from the network's, and the most latency any link was given.
    cuts: BTreeSet<String>,
    lossy: BTreeSet<(String, String)>,
    slow: BTreeSet<(String, String)>,
    slowest: SimDuration,
    last_fault: SimTime,
    /// Whether any fault (not an operator's config change) has been applied yet.
    faulted: bool,
    nacos: NacosWatch,
    distro: super::distro::DistroWatch,
    grpc: super::grpc::GrpcWatch,
    sends: SendWatch,
    violations: Vec<Violation>,
    /// Each invariant reports once: the first violation is the one to shrink towards.
    reported: BTreeSet<Invariant>,
}

impl Monitor {
    pub fn new(scenario: &Scenario) -> Self {
        let namesrvs = scenario
            .namesrvs
            .iter()
            .map(|n| {
                let facts = NamesrvFacts {
                    scan_interval: n.scan_interval,
                    scan_initial_delay: n.scan_initial_delay,
                    batch_delay: n.unregister_delay,
                };
                (n.name.clone(), facts)
            })
            .collect();
        let brokers_by_addr = scenario
            .brokers
            .iter()
            .map(|b| {
                let key = BrokerAddrInfo::new(&b.config.cluster, &b.config.addr);
                (key, (b.name.clone(), expiry_timeout(&b.config)))
            })
            .collect();
        Monitor {
            enabled: scenario.invariants.iter().copied().collect(),
            scenario: scenario.clone(),
            configs: Configs::new(scenario),
            ghosts: Ghosts::default(),
            namesrvs,
            brokers_by_addr,
            state: BTreeMap::new(),
            ns_started: BTreeMap::new(),
            ns_resumed: BTreeMap::new(),
            arrivals: BTreeMap::new(),
            horizons: BTreeMap::new(),
            revisions: BTreeMap::new(),
            cuts: BTreeSet::new(),
            lossy: BTreeSet::new(),
            slow: BTreeSet::new(),
            slowest: SimDuration::ZERO,
            last_fault: SimTime::ZERO,
            faulted: false,
            nacos: NacosWatch::new(scenario),
            distro: super::distro::DistroWatch::new(scenario),
            grpc: super::grpc::GrpcWatch::new(scenario),
            sends: SendWatch::new(scenario),
            violations: Vec::new(),
            reported: BTreeSet::new(),
        }
    }

    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    fn violate(&mut self, invariant: Invariant, at: SimTime, detail: String) -> Option<Violation> {
        if !self.enabled.contains(&invariant) || !self.reported.insert(invariant) {
            return None;
        }
        let v = Violation { invariant, at, detail };
        self.violations.push(v.clone());
        Some(v)
    }

    /// A process started, stopped, hung or resumed.
    pub fn process(&mut self, now: SimTime, name: &str, state: ProcState) {
        let before = self.state.insert(name.to_string(), state);
        if state == ProcState::Running && before != Some(ProcState::Hung) {
            self.grpc.started(name);
        }
        self.nacos.process(now, name, before, state);
        self.sends.process(now, name, state);
        if self.namesrvs.contains_key(name) {
            match (before, state) {
                (Some(ProcState::Hung), ProcState::Running) => {
                    self.ns_resumed.insert(name.to_string(), now);
                }
                (_, ProcState::Running) => {
                    self.ns_started.insert(name.to_string(), now);
                    self.ghosts.restarted(name);
                    self.arrivals.remove(name);
                    self.horizons.remove(name);
                }
                _ => {}
            }
        }
    }

    /// A registration or heartbeat from `from` reached the (naming) server `to`.
    pub fn arrived(&mut self, now: SimTime, from: &str, to: &str, arrival: Arrival) {
        match arrival {
            Arrival::Rmq if self.namesrvs.contains_key(to) => {
                // Keys are allocated once per (name server, broker), not once per heartbeat.
                let at_ns = match self.arrivals.get_mut(to) {
                    Some(m) => m,
                    None => self.arrivals.entry(to.to_string()).or_default(),
                };
                match at_ns.get_mut(from) {
                    Some(a) if a.last != now => *a = Arrived { last: now, before: Some(a.last) },
                    Some(_) => {}
                    None => {
                        // A broker seen for the first time brings a bound the horizon never saw.
                        at_ns.insert(from.to_string(), Arrived { last: now, before: None });
                        self.horizons.remove(to);
                    }
                }
            }
            Arrival::Rmq => {}
            Arrival::Nacos(a) => self.nacos.arrived(now, to, a),
        }
    }

    /// Producer `name`'s send `id` began (told by the producer actor).
    pub fn send_started(&mut self, now: SimTime, name: &str, id: u64, world: &World) {
        let settled = Settled { quiet_since: self.quiet(), state: &self.state, configs: &self.configs };
        self.sends.started(now, name, id, world, settled);
    }

    /// An attempt of a producer's send went on the wire.
    pub fn send_attempt(&mut self, now: SimTime, a: &AttemptSeen<'_>, world: &World) -> Option<Violation> {
        let (invariant, detail) = self.sends.attempt(a, world)?;
        self.violate(invariant, now, detail)
    }

    /// Every trace event: track faults, and check what changed.
    pub fn on_event(&mut self, e: &TraceEvent, world: &World) -> Vec<Violation> {
        let mut out = Vec::new();
        match &e.what {
            What::Fault(FaultNote::Applied { name, .. }) => self.note_fault(e.t, name, world),
            What::Rmq(RmqNote::Expired { cluster, addr, timeout, .. }) => {
                out.extend(self.check_expiry(e.t, &e.actor, cluster, addr, *timeout));
            }
            What::Rmq(RmqNote::RegisterSent { reason, version, .. }) => {
                self.configs.registration_sent(e.actor, *reason, &version.to_string());
            }
            What::Rmq(RmqNote::RegisterRefused { .. }) => self.ghosts.refused(&e.actor, world),
            What::Rmq(RmqNote::Registered(r)) => self.ghosts.filled(&e.actor, &r.broker_name),
            What::Rmq(RmqNote::SendDone { producer, send, ok, result, .. }) => {
                for (invariant, detail) in self.sends.done(e.t, producer, *send, *ok, result) {
                    out.extend(self.violate(invariant, e.t, detail));
                }
            }
            What::Nacos(note) => {
                for (invariant, detail) in self.nacos.on_note(e.t, &e.actor, note) {
                    out.extend(self.violate(invariant, e.t, detail));
                }
                let quiet = self.quiet();
                if let Some((invariant, detail)) = self.grpc.on_note(e.t, &e.actor, note, &self.state, quiet) {
                    out.extend(self.violate(invariant, e.t, detail));
                }
            }
            _ => {}
        }
        if self.enabled.contains(&Invariant::ConsistentTables) {
            out.extend(self.check_consistency(e.t, world));
        }
        out
    }

    /// A fault was applied: remember when, and which cuts and lossy links are now in force.
    fn note_fault(&mut self, at: SimTime, name: &str, world: &World) {
        let previous = std::mem::replace(&mut self.last_fault, at);
        self.sends.fault();
        let Some(event) = self.scenario.timeline.iter().find(|t| t.at == at && t.name == name) else { return };
        if !event.action.is_broker_config() {
            self.faulted = true;
        }
        match event.action.clone() {
            Action::Crash(p) => {
                let disturbed = self.quiet().is_none();
                self.grpc.died(at, &p, false, (previous, disturbed), world, &self.state)
            }
            Action::HostDown(p) => {
                let disturbed = self.quiet().is_none();
                self.grpc.died(at, &p, true, (previous, disturbed), world, &self.state)
            }
            Action::Partition(_) | Action::Block { .. } => {
                self.cuts.insert(event.name.clone());
            }
            Action::Heal(None) => self.cuts.clear(),
            Action::Heal(Some(n)) => {
                self.cuts.remove(&n);
            }
            Action::Loss { from, to, rate, both_ways } => {
                for link in links(from, to, both_ways) {
                    if rate > 0.0 {
                        self.lossy.insert(link);
                    } else {
                        self.lossy.remove(&link);
                    }
                }
            }
            Action::Latency { from, to, base, jitter, both_ways } => {
                let n = &self.scenario.network;
                let normal = (base, jitter) == (n.latency, n.jitter);
                self.slowest = self.slowest.max(base + jitter);
                for link in links(from, to, both_ways) {
                    if normal {
                        self.slow.remove(&link);
                    } else {
                        self.slow.insert(link);
                    }
                }
            }
            Action::Shutdown(p) => self.nacos.shutting_down(&p),
            Action::Deregister { instance, .. } => self.nacos.deregistered(&instance),
            action if action.is_broker_config() => {
                // A registration can have been lost only if something disturbed the run.
                let disturbed = self.faulted || self.scenario.network.loss > 0.0;
                self.configs.apply(&action, disturbed)
            }
            _ => {}
        }
    }

    /// Called when virtual time reaches `now`: every earlier instant is complete.
    pub fn before_instant(&mut self, now: SimTime, world: &World) -> Vec<Violation> {
        let mut out = self.check_bounded_expiry(now, world);
        if let Some((invariant, detail)) = self.sends.before_instant(now) {
            out.extend(self.violate(invariant, now, detail));
        }
        let pending = |i: Invariant| self.enabled.contains(&i) && !self.reported.contains(&i);
        let nacos = (pending(Invariant::NacosBoundedExpiry), pending(Invariant::NacosRecovery));
        let distro = pending(Invariant::DistroAgreement);
        let gone = pending(Invariant::GrpcGoneInTime);
        if nacos.0 || nacos.1 {
            let quiet = self.quiet().map(|since| Quiet { since, slowest: self.slowest });
            let found = self.nacos.before_instant(now, world, &self.state, quiet, nacos);
            out.extend(found.into_iter().filter_map(|(i, d)| self.violate(i, now, d)));
        }
        if gone {
            let quiet = self.quiet();
            if let Some(detail) = self.grpc.before_instant(now, world, &self.state, quiet) {
                out.extend(self.violate(Invariant::GrpcGoneInTime, now, detail));
            }
        }
        if distro {
            let quiet = self.quiet();
            if let Some(detail) = self.distro.check(now, world, &self.state, quiet) {
                out.extend(self.violate(Invariant::DistroAgreement, now, detail));
            }
        }
        out
    }

    /// When the last fault ended, if none is in force: no cut, no lossy or slow link, no
    /// paused process, no loss on the whole network.
    fn quiet(&self) -> Option<SimTime> {
        let hung = self.state.values().any(|s| *s == ProcState::Hung);
        let whole = self.cuts.is_empty() && self.lossy.is_empty() && self.slow.is_empty();
        (whole && !hung && self.scenario.network.loss == 0.0).then_some(self.last_fault)
    }

    /// Called once, after the last instant of the run.
    pub fn finish(&mut self, end: SimTime, world: &World) -> Vec<Violation> {
        if !self.enabled.contains(&Invariant::Convergence) {
            return Vec::new();
        }
        let hung = self.state.values().any(|s| *s == ProcState::Hung);
        if hung || !self.cuts.is_empty() || !self.lossy.is_empty() || end.since(self.last_fault) < SETTLE {
            return Vec::new();
        }
        let running: BTreeSet<String> =
            self.state.iter().filter(|(_, s)| **s == ProcState::Running).map(|(n, _)| n.clone()).collect();
        let expected = Expected::new(&self.scenario.namesrvs, &self.configs, &running);
        let diffs = derive::compare(&expected, &self.configs, &self.ghosts, &self.scenario, &running, world);
        match diffs.is_empty() {
            true => Vec::new(),
            false => self.violate(Invariant::Convergence, end, diffs.join("; ")).into_iter().collect(),
        }
    }
}

/// The last arrival at a name server from one broker, and the one at an earlier instant.
#[derive(Clone, Copy)]
struct Arrived {
    last: SimTime,
    before: Option<SimTime>,
}

/// The timeout a broker's live entry must carry: a 5.x broker with `enableSlaveActingMaster`
/// sends `heartbeatTimeoutMillis = brokerNotActiveTimeoutMillis` (10 s) with each registration
/// (`BrokerOuterAPI#registerBrokerAll`); without it the header field is null and
/// `RouteInfoManager#registerBroker` stores `DEFAULT_BROKER_CHANNEL_EXPIRED_TIME`, 120 s.
fn expiry_timeout(c: &BrokerConfig) -> SimDuration {
    if c.enable_acting_master {
        c.not_active_timeout
    } else {
        SimDuration::from_secs(120)
    }
}

/// The directed links an action on `from`–`to` touches.
fn links(from: String, to: String, both_ways: bool) -> Vec<(String, String)> {
    let mut out = vec![(from.clone(), to.clone())];
    if both_ways {
        out.push((to, from));
    }
    out
}
