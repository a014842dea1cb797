//! `distro_agreement`: once every fault has been healed long enough, the running members of a
//! Nacos cluster all hold the same instances, with the same health.
//!
//! The settling time is a sum of the Java timings, each the worst case of one step that has to
//! happen after the last fault ([`settle`]):
//!
//! * **Membership** comes back first: each member reports to one peer every 2 s, round robin, so
//!   to each peer once per `2 s × (n − 1)` (`MemberInfoReportTask`); a report still waiting when
//!   the network healed runs out its connect timeout or its 2.5 s read timeout first, and the
//!   task's next run is 2 s on. Until a member sees a peer `UP` it sends it nothing.
//! * **Clients** come back next: a 1.x beat sent into a black hole waits out the client's read
//!   timeout (50 s by default) before its retry, and then a beat period; a 2.x client gives up on
//!   its connection after four health checks 5 s + 3 × 3 s, reconnects and registers again
//!   within its 3 s redo period. Each change is synced 1 s later.
//! * **Copies nobody vouches for any more** — the clients of a member that stays dead — expire
//!   `client_expired_time` (3 min) after their last renewal, at the cleaner's next 5 s tick. The
//!   last renewal can come after the last fault: a restarted member still loading takes a
//!   snapshot once it sees its peers again (up to a 30 s round and a 30 s request later), and
//!   every client in it, stale ones too, becomes a fresh copy. 1.x clients of a dead member are
//!   taken over and checked by a survivor well within that (lesson 19).
//! * **Then repair**: a sync that failed retries every 3 s (a request lost before the heal first
//!   waits out its 3 s timeout) on the 100 ms engine grid, and a copy still missing or stale is
//!   re-sent after the next verify (every 5 s, 3 s timeout).
//!
//! So `settle = max(membership + snapshot + copy expiry, membership + client recovery) + sync
//! repair + verify repair`: 269.2 s with the defaults and three members (membership takes 2 s
//! more per further member).
//! Disagreement within that time is Nacos being eventually consistent (lessons 16–19); after it,
//! it is a bug.

use crate::nacos::naming::NamingServer;
use crate::nacos::types::{ClientKey, ServiceKey};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ProcState;
use crate::sim::scenario::{Scenario, Transport};
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};

/// `MemberInfoReportTask`'s period and its HTTP client's read timeout.
const REPORT_PERIOD: u64 = 2_000;
const REPORT_READ_TIMEOUT: u64 = 2_500;
/// A 2.x client's give-up on a dead connection: 5 s idle, then health checks of 3 s
/// (`RpcClient#healthCheck`, the first plus three retries), then the 3 s redo period.
const GRPC_RECOVERY: u64 = 5_000 + 4 * 3_000 + 3_000;
/// `DistroLoadDataTask`: the retry delay and one request's timeout.
const LOAD_ROUND: u64 = 30_000 + 30_000;
/// `ExpiredClientCleaner`'s period.
const CLEANER_PERIOD: u64 = 5_000;
/// Sync: 1 s delay, a 3 s timeout of a request lost before the heal, a 3 s retry, the 100 ms tick.
const SYNC_REPAIR: u64 = 1_000 + 3_000 + 3_000 + 100;
/// Verify: 5 s period, 3 s timeout, then a CHANGE at the next 100 ms tick.
const VERIFY_REPAIR: u64 = 5_000 + 3_000 + 100;

/// How long after the last fault the members of `s`'s clusters must agree (see the module docs).
pub fn settle(s: &Scenario) -> SimDuration {
    let connect = s.network.connect_timeout.millis();
    let http = s.nacos.apps.iter().filter(|a| a.transport == Transport::Http);
    let beat = http.map(|a| a.read_timeout.millis() + 3 * connect + 5_000).max().unwrap_or(0);
    let clients = beat.max(GRPC_RECOVERY);
    let stale = stale_copies_gone(s).millis();
    SimDuration(stale.max(membership(s) + clients) + SYNC_REPAIR + VERIFY_REPAIR)
}

/// After a fault, until the members see each other `UP` again and a sync that failed meanwhile
/// has been retried and has arrived.
pub(super) fn recovery(s: &Scenario) -> SimDuration {
    SimDuration(membership(s) + SYNC_REPAIR) + sync_lag(s)
}

/// Until a member sees its peers `UP` again after the last fault (see the module docs).
fn membership(s: &Scenario) -> u64 {
    let members = s.nacos.servers.iter().filter(|v| v.cluster.is_some()).count().max(1) as u64;
    let connect = s.network.connect_timeout.millis();
    REPORT_PERIOD * (members - 1) + connect.max(REPORT_READ_TIMEOUT) + REPORT_PERIOD
}

/// Until every copy no owner vouches for is gone, counted from the last fault: a copy's lease is
/// renewed one last time by a snapshot a restarted member loads after the heal
/// (`DistroLoadDataTask`: its next round within 30 s once it sees its peers, each request up to
/// 30 s; `processSnapshot` makes every client a fresh copy, stale ones included), then runs out
/// after `client_expired_time` at the cleaner's next 5 s tick.
pub(super) fn stale_copies_gone(s: &Scenario) -> SimDuration {
    SimDuration(membership(s) + LOAD_ROUND + client_expired_time(s) + CLEANER_PERIOD)
}

/// How long a copy lives once nothing renews it: `clientExpiredTime` after it was made or last
/// verified (`ConnectionBasedClient#isExpire`, a strict `>`), removed at the `ExpiredClientCleaner`'s
/// next 5 s run; one more millisecond because a check at an instant comes before that instant's
/// cleaner run.
pub(super) fn copy_lease(s: &Scenario) -> SimDuration {
    SimDuration(client_expired_time(s) + CLEANER_PERIOD + 1)
}

/// The longest `clientExpiredTime` of the scenario's members.
fn client_expired_time(s: &Scenario) -> u64 {
    s.nacos.servers.iter().map(|v| v.config.client_expired_time).max().unwrap_or(0)
}

type Held = BTreeSet<(ServiceKey, ClientKey, bool)>;

/// What one member holds: every instance of every service, with its health — leaving out the
/// 1.x clients verify cannot see (see [`verify_blind`]).
fn held(core: &NamingServer, blind: &BTreeSet<ClientKey>) -> Held {
    let mut out = Held::new();
    for service in core.services() {
        for (client, p) in core.instances(service).filter(|(c, _)| !blind.contains(*c)) {
            out.insert((service.clone(), client.clone(), p.healthy));
        }
    }
    out
}

/// The 1.x clients every running member holds with one and the same revision. Distro's verify
/// compares revisions only, and a 1.x client's revision moves with a register or deregister
/// (`recalculateRevision`), not when a check marks an instance unhealthy or deletes it
/// (`UnhealthyInstanceChecker`, `ExpiredInstanceChecker#deleteIp` → `removeServiceInstance`).
/// So after a partition in which both sides held themselves responsible for a client, a member
/// that applied the losing side's CHANGE (the instance deleted, or unhealthy) keeps that copy
/// under the owner's revision: every verify passes, and nothing repairs it until the client
/// changes again. Nacos does that too; the invariant names it and leaves such clients out.
fn verify_blind(cores: &[(&String, std::rc::Rc<std::cell::RefCell<NamingServer>>)]) -> BTreeSet<ClientKey> {
    let Some((_, first)) = cores.first() else { return BTreeSet::new() };
    let first = first.borrow();
    let mut out = BTreeSet::new();
    for (key, client) in first.clients() {
        let same = cores.iter().all(|(_, c)| c.borrow().client(key).is_some_and(|o| o.revision == client.revision));
        if same {
            out.insert(key.clone());
        }
    }
    out
}

/// How long a change on one member takes to reach the others when nothing fails: the 1 s sync
/// delay (a change merged into a queued task keeps that task's due time), the engine's 100 ms
/// grid, and three one-way latencies (a new connection: SYN, SYN-ACK, the request).
pub(super) fn sync_lag(s: &Scenario) -> SimDuration {
    SimDuration(1_000 + 100 + 3 * (s.network.latency + s.network.jitter).millis())
}

/// The members of each cluster, and what was last compared.
pub struct DistroWatch {
    clusters: BTreeMap<String, Vec<String>>,
    settle: SimDuration,
    lag: SimDuration,
    /// The members' revisions as last read, and when one last moved: members are compared once
    /// nothing has moved for `lag` (an owner's change is on its way to the others until then).
    seen: BTreeMap<String, u64>,
    moved: SimTime,
    compared: bool,
}

impl DistroWatch {
    pub fn new(s: &Scenario) -> Self {
        let mut clusters: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for v in &s.nacos.servers {
            if let Some(c) = &v.cluster {
                clusters.entry(c.clone()).or_default().push(v.name.clone());
            }
        }
        let (settle, lag) = (settle(s), sync_lag(s));
        DistroWatch { clusters, settle, lag, seen: BTreeMap::new(), moved: SimTime::ZERO, compared: false }
    }

    /// Checked before the instant `now`, if the network has been whole since `quiet`: the first
    /// disagreement among running members, described.
    ///
    /// An instance that flaps on its owner — a 1.x client whose beats queue behind a connect to
    /// a dead server it still lists, say — is a change the others see `lag` later, so members
    /// are compared only at instants that follow `lag` without a change on any member.
    pub fn check(
        &mut self,
        now: SimTime,
        world: &World,
        states: &BTreeMap<String, ProcState>,
        quiet: Option<SimTime>,
    ) -> Option<String> {
        let Some(since) = quiet.filter(|q| now >= *q + self.settle) else {
            self.seen.clear();
            return None;
        };
        let running = |m: &&String| states.get(*m) == Some(&ProcState::Running);
        let mut revisions = BTreeMap::new();
        for m in self.clusters.values().flatten().filter(running) {
            if let Some(core) = world.nacos_server(m) {
                revisions.insert(m.clone(), core.borrow().revision());
            }
        }
        if revisions != self.seen {
            self.seen = revisions;
            self.moved = now;
            self.compared = false;
            return None;
        }
        if self.compared || now < self.moved + self.lag {
            return None;
        }
        self.compared = true;
        for (cluster, members) in &self.clusters {
            let cores: Vec<_> =
                members.iter().filter(running).filter_map(|m| Some((m, world.nacos_server(m)?))).collect();
            let blind = verify_blind(&cores);
            let mut sets = cores.iter().map(|(m, c)| (*m, held(&c.borrow(), &blind)));
            let Some((first, reference)) = sets.next() else { continue };
            for (member, other) in sets {
                if other != reference {
                    let only = |a: &Held, b: &Held| -> Vec<String> {
                        a.difference(b)
                            .map(|(s, c, h)| format!("{s} {c}{}", if *h { "" } else { " unhealthy" }))
                            .collect()
                    };
                    return Some(format!(
                        "cluster {cluster}, {} after the network was last whole ({since}) and {} after the last \
                         change on any member: {first} holds [{}] that {member} does not; {member} holds [{}] that \
                         {first} does not",
                        now.since(since),
                        now.since(self.moved),
                        only(&reference, &other).join(", "),
                        only(&other, &reference).join(", "),
                    ));
                }
            }
        }
        None
    }
}
