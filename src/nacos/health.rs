//! The server's health checks — `ClientBeatCheckTaskV2` running `UnhealthyInstanceChecker` then
//! `ExpiredInstanceChecker`, and `ExpiredClientCleaner` — and the scheduler that runs them only
//! at the ticks where they change something.
//!
//! # The Java timing
//!
//! Every `IpPortBasedClient` gets its own fixed-delay check task, first run 5 s after the client
//! object is created, then every 5 s: its ticks lie on a grid `created + 5 s + 5 s·k`. At each tick,
//! for each instance the client publishes:
//!
//! * unhealthy when `healthy && now - lastHeartBeatTime > beatTimeout` — strictly greater;
//! * deleted when `expireInstance && now - lastHeartBeatTime > deleteTimeout` — whatever the
//!   health, so both can fire in the same pass (and with `deleteTimeout < beatTimeout` an instance
//!   is deleted without ever being seen unhealthy).
//!
//! One cleaner task per server runs every 5 s from start-up (initial delay 0) and removes a client
//! when `(no instances && idle > 30 s && (no subscriptions || idle > pushCacheMillis)) || idle >
//! clientExpiredTime`, idle being `now - lastUpdatedTime`. With `expireInstance = false` that last
//! clause (3 minutes by default) is what finally removes a dead instance.
//!
//! # Why skipping ticks is exact
//!
//! A check changes something only if one of its comparisons holds, and each comparison is
//! `tick > threshold` for a threshold that depends only on the client's state
//! (`lastHeartBeatTime + timeout`, `lastUpdatedTime + idle limit`). While that state does not change, every tick
//! before the first one past the threshold does nothing at all — no state, no event. So for each
//! client we compute that first effective tick on its own grid (its *due* tick), keep the clients
//! in an index ordered by due tick, recompute a client's due whenever an operation changes it,
//! and let the checker actor wake only at the earliest due tick. A wake that finds a stale entry
//! just files it again. `health_tests.rs` drives random histories through this scheduler and
//! through a naive one that visits every tick, and compares every change and its time.
//!
//! Two more rules keep the skipping scheduler equal to the naive one:
//!
//! * **Filing is lazy.** A beat only moves a due tick *later*, so the index entry is left where it
//!   is (an entry may be early, never late); it is moved only when a due tick becomes earlier.
//!   This keeps a beat's cost to a few field writes.
//! * **A pause re-phases the grids.** Java's fixed-delay tasks that were due while the JVM was
//!   stopped all run once at resume, and their next runs follow from there: `resume` moves every
//!   grid that had a tick in the pause to the resume instant.
//!
//! Within one millisecond, checks run before the cleaner, in client order; an operation handled
//! before the checker wakes counts as before the tick (Java leaves both races open).

use crate::nacos::due_index::DueIndex;
use crate::nacos::naming::{Change, IpPortClient, NamingConfig, NamingServer, Published};
use crate::nacos::types::{ClientKey, ServiceKey, DEFAULT_HEART_BEAT_INTERVAL, DEFAULT_IP_DELETE_TIMEOUT};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::mutation::Mutation;

/// `ClientBeatCheckTaskV2`'s and `ExpiredClientCleaner`'s period, both hard-coded 5 s.
pub const CHECK_PERIOD: u64 = DEFAULT_HEART_BEAT_INTERVAL;

/// One client's place in the schedule.
#[derive(Clone, Debug)]
pub(crate) struct ClientSched {
    /// The check grid's origin: ticks at `grid + 5 s·k`, `k ≥ 0`.
    pub(crate) grid: SimTime,
    check_due: Option<SimTime>,
    clean_due: Option<SimTime>,
    /// Where the client's one index entry sits (never later than the due tick).
    check_filed: Option<SimTime>,
    clean_filed: Option<SimTime>,
}

impl ClientSched {
    pub(crate) fn new(created: SimTime) -> Self {
        let grid = created + SimDuration(CHECK_PERIOD);
        ClientSched { grid, check_due: None, clean_due: None, check_filed: None, clean_filed: None }
    }
}

/// The server-wide part: the two indexes, the cleaner's grid and the checker's alarm.
pub(crate) struct Schedule {
    checks: DueIndex,
    cleans: DueIndex,
    pub(crate) cleaner_grid: SimTime,
    armed: Option<SimTime>,
    /// Test-only planted bug, if any: `NacosUnhealthyAtTimeout` (the unhealthy checker compares
    /// with `>=`) or `NacosNeverDeletes` (the expired checker never deletes). Only
    /// [`NamingServer::plant`] sets it.
    pub(crate) planted: Option<Mutation>,
}

impl Schedule {
    pub(crate) fn new(start: SimTime) -> Self {
        let (checks, cleans) = (DueIndex::default(), DueIndex::default());
        Schedule { checks, cleans, cleaner_grid: start, armed: None, planted: None }
    }

    /// The checkers' two knobs as the planted bug (if any) sets them: whether an instance silent
    /// for exactly its heart-beat timeout is already unhealthy, and whether the expired checker
    /// deletes at all (`expireInstance`, unless it is made to read it as off).
    fn checker_rules(&self, config: &NamingConfig) -> (bool, bool) {
        let at_timeout = self.planted == Some(Mutation::NacosUnhealthyAtTimeout);
        let expire = config.expire_instance && self.planted != Some(Mutation::NacosNeverDeletes);
        (at_timeout, expire)
    }

    /// Recomputes `client`'s due ticks after its state changed at `now`, and files them.
    pub(crate) fn reschedule(
        &mut self,
        client: &mut IpPortClient,
        key: &ClientKey,
        config: &NamingConfig,
        now: SimTime,
    ) {
        let (at_timeout, expire) = self.checker_rules(config);
        let check = check_threshold(client, expire, at_timeout).and_then(|t| first_tick(client.sched.grid, now, t));
        let clean = first_tick(self.cleaner_grid, now, clean_threshold(client, config));
        let s = &mut client.sched;
        (s.check_due, s.clean_due) = (check, clean);
        file(&mut self.checks, &mut s.check_filed, check, key);
        file(&mut self.cleans, &mut s.clean_filed, clean, key);
    }
}

/// The first tick `grid + period·k` (`k ≥ 0`) that is at or after `from` and strictly after
/// `after`; `None` when it lies beyond any run (a timeout of `Long.MAX_VALUE`).
pub(crate) fn first_tick(grid: SimTime, from: SimTime, after: i128) -> Option<SimTime> {
    let (grid, period) = (grid.millis() as i128, CHECK_PERIOD as i128);
    let lo = grid.max(from.millis() as i128).max(after.saturating_add(1));
    let t = grid + (lo - grid + period - 1) / period * period;
    u64::try_from(t).ok().filter(|t| *t < u64::MAX / 2).map(SimTime)
}

/// Whether the grid has a tick in `[since, until)`.
pub(crate) fn has_tick(grid: SimTime, since: SimTime, until: SimTime) -> bool {
    first_tick(grid, since, i128::MIN).is_some_and(|t| t < until)
}

/// The earliest instant at which a beat check would change something: a healthy instance going
/// unhealthy, or (if expiry is on) any instance being deleted. Instances with
/// `enableClientBeat=true` are never checked. (`at_timeout`: the planted `>=` bug, which fires
/// one millisecond earlier.)
fn check_threshold(client: &IpPortClient, expire: bool, at_timeout: bool) -> Option<i128> {
    if !client.responsible {
        return None; // another member checks it (`InstanceBeatCheckResponsibleInterceptor`)
    }
    let mut earliest: Option<i128> = None;
    for p in client.publishers.values().filter(|p| !p.timeouts.skip) {
        let last = p.last_heart_beat.millis() as i128;
        let unhealthy = p.healthy.then(|| last + p.timeouts.beat as i128 - i128::from(at_timeout));
        let delete = expire.then(|| last + p.timeouts.delete as i128);
        for t in [unhealthy, delete].into_iter().flatten() {
            earliest = Some(earliest.map_or(t, |e| e.min(t)));
        }
    }
    earliest
}

/// `ExpiredClientCleaner#isExpireClient` as a threshold on `now`.
fn clean_threshold(client: &IpPortClient, config: &NamingConfig) -> i128 {
    let updated = client.last_updated.millis() as i128;
    let expired = config.client_expired_time as i128;
    if !client.publishers.is_empty() {
        return updated + expired;
    }
    let idle = if client.subscriptions.is_empty() {
        DEFAULT_IP_DELETE_TIMEOUT as i128
    } else {
        (DEFAULT_IP_DELETE_TIMEOUT as i128).max(config.push_cache_millis as i128)
    };
    updated + idle.min(expired)
}

/// Puts a client's entry at `due` if that is earlier than where it is filed (or it is not filed).
fn file(index: &mut DueIndex, filed: &mut Option<SimTime>, due: Option<SimTime>, key: &ClientKey) {
    let Some(due) = due else { return };
    if filed.is_some_and(|f| f <= due) {
        return;
    }
    if let Some(old) = filed.take() {
        index.remove(old, key);
    }
    index.insert(due, key);
    *filed = Some(due);
}

impl NamingServer {
    /// Recomputes `key`'s due ticks after its state changed at `now`.
    pub(crate) fn reschedule(&mut self, key: &ClientKey, now: SimTime) {
        let NamingServer { clients, schedule, config, .. } = self;
        if let Some(client) = clients.get_mut(key) {
            schedule.reschedule(client, key, config, now);
        }
    }

    /// Runs every check and cleanup due at or before `now`; returns what they changed. Clients
    /// run in key order whatever their (possibly early) index entries say.
    pub fn run_due(&mut self, now: SimTime) -> Vec<Change> {
        let mut out = Vec::new();
        for key in self.take_due(now, Task::Check) {
            self.check_client(&key, now, &mut out);
            self.reschedule(&key, now);
        }
        for key in self.take_due(now, Task::Clean) {
            if !self.clean_client(&key, now, &mut out) {
                self.reschedule(&key, now);
            }
        }
        self.metadata_events(now, &out);
        out
    }

    /// Pops every index entry at or before `now`; files stale ones again at their real due tick
    /// and returns the clients that are really due, sorted.
    fn take_due(&mut self, now: SimTime, task: Task) -> Vec<ClientKey> {
        let NamingServer { clients, schedule, .. } = self;
        let index = match task {
            Task::Check => &mut schedule.checks,
            Task::Clean => &mut schedule.cleans,
        };
        let mut due_now = Vec::new();
        let mut refile = Vec::new();
        while let Some(key) = index.pop_due(now) {
            let Some(client) = clients.get_mut(&key) else { continue };
            let s = &mut client.sched;
            let (filed, due) = match task {
                Task::Check => (&mut s.check_filed, s.check_due),
                Task::Clean => (&mut s.clean_filed, s.clean_due),
            };
            *filed = None;
            match due {
                Some(d) if d <= now => due_now.push(key),
                Some(d) => refile.push((d, key)),
                None => {}
            }
        }
        for (due, key) in refile {
            let s = &mut clients.get_mut(&key).expect("present").sched;
            let filed = match task {
                Task::Check => &mut s.check_filed,
                Task::Clean => &mut s.clean_filed,
            };
            file(index, filed, Some(due), &key);
        }
        due_now.sort();
        due_now
    }

    /// `ClientBeatCheckTaskV2#doHealthCheck` for one client at `now`: both checkers, in order, for
    /// every published service.
    pub(crate) fn check_client(&mut self, key: &ClientKey, now: SimTime, out: &mut Vec<Change>) {
        let (at_timeout, expire) = self.schedule.checker_rules(&self.config);
        let Some(client) = self.clients.get_mut(key).filter(|c| c.responsible) else { return };
        let (mut expired, mut changed) = (Vec::new(), false);
        // Strictly greater, as UnhealthyInstanceChecker#doCheck (unless the bug is planted).
        let too_long =
            |millis: i128, limit: i64| if at_timeout { millis >= limit as i128 } else { millis > limit as i128 };
        let fires = |p: &Published| {
            let millis = now.since(p.last_heart_beat).millis() as i128;
            !p.timeouts.skip
                && ((p.healthy && too_long(millis, p.timeouts.beat)) || (expire && millis > p.timeouts.delete as i128))
        };
        // Most checks find nothing to do: find the instances that change first, and sort only
        // those, so that changes come out in service order.
        let mut services: Vec<ServiceKey> =
            client.publishers.iter().filter(|(_, p)| fires(p)).map(|(k, _)| k.clone()).collect();
        services.sort_unstable();
        for service in &services {
            let p = client.publishers.get_mut(service).expect("listed above");
            let silent = now.since(p.last_heart_beat);
            let (millis, t) = (silent.millis() as i128, p.timeouts);
            if p.healthy && too_long(millis, t.beat) {
                p.healthy = false;
                changed = true;
                let delete_timeout = expire.then_some(t.delete);
                let (service, client) = (service.clone(), key.clone());
                out.push(Change::Unhealthy { service, client, silent, timeout: t.beat, delete_timeout });
            }
            if expire && millis > t.delete as i128 {
                expired.push(service.clone());
                out.push(Change::Expired { service: service.clone(), client: key.clone(), silent, timeout: t.delete });
            }
        }
        changed |= !expired.is_empty();
        // removeServiceInstance: neither lastUpdatedTime nor the client's revision moves.
        for service in &expired {
            client.publishers.swap_remove(service);
        }
        for service in &expired {
            self.unindex_publisher(service, key);
        }
        if changed {
            self.bump();
            // Both checkers publish a `ClientChangedEvent`: the copies on the other members
            // learn the new health, or lose the instance, by Distro.
            self.mark_ip_dirty(key, false);
        }
    }

    /// `ExpiredClientCleaner` for one client: removes it (`clientDisconnected`) if expired.
    pub(crate) fn clean_client(&mut self, key: &ClientKey, now: SimTime, out: &mut Vec<Change>) -> bool {
        let Some(client) = self.clients.get(key) else { return false };
        if (now.millis() as i128) <= clean_threshold(client, &self.config) {
            return false;
        }
        let idle = now.since(client.last_updated);
        let (client, published) = self.remove_ip_client(key).expect("present");
        out.push(Change::ClientRemoved {
            client: key.clone(),
            idle,
            published,
            subscribed: client.subscriptions.len(),
        });
        true
    }

    /// The instant the checker must next wake, if any.
    pub fn next_wake(&self) -> Option<SimTime> {
        match (self.schedule.checks.first(), self.schedule.cleans.first()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether something is due before the checker's alarm (it must be re-armed).
    pub fn wake_earlier(&self) -> bool {
        match (self.next_wake(), self.schedule.armed) {
            (Some(next), Some(armed)) => next < armed,
            (next, None) => next.is_some(),
            _ => false,
        }
    }

    /// The checker sets its alarm: returns when (and remembers it).
    pub fn arm(&mut self) -> Option<SimTime> {
        self.schedule.armed = self.next_wake();
        self.schedule.armed
    }

    /// The JVM was stopped from `since` until `now`: every fixed-delay task that was due in
    /// between runs once now and continues from now, so each grid with a tick in the pause moves
    /// to `now`. Then every due tick is recomputed.
    pub fn resume(&mut self, since: SimTime, now: SimTime) {
        for client in self.clients.values_mut() {
            if has_tick(client.sched.grid, since, now) {
                client.sched.grid = now;
            }
        }
        if has_tick(self.schedule.cleaner_grid, since, now) {
            self.schedule.cleaner_grid = now;
        }
        let mut keys: Vec<ClientKey> = self.clients.keys().cloned().collect();
        keys.sort_unstable();
        for key in keys {
            self.reschedule(&key, now);
        }
    }
}

#[derive(Clone, Copy)]
enum Task {
    Check,
    Clean,
}
