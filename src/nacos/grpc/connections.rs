//! The server's `ConnectionManager` and its `NacosRuntimeConnectionEjector`, pure: which gRPC
//! connections are registered, when each was last active, and the ejector's runs.
//!
//! * **Activity.** `GrpcRequestAcceptor#request` calls `connectionManager.refreshActiveTime`
//!   before handling any request on a registered connection — registrations and the client's own
//!   `HealthCheckRequest`s alike — and `GrpcBiStreamRequestAcceptor#onNext` does the same for
//!   every *response* the client sends back on the stream (to a `ClientDetectionRequest` or a
//!   push). A healthy idle client health-checks every 5 s, so its connection never reaches 20 s.
//! * **Ejection.** `ConnectionManager#start` runs `doEject` with `scheduleWithFixedDelay(1000,
//!   3000)`. A run collects every connection with `now - lastActiveTime >= KEEP_ALIVE_TIME`
//!   (20 s), sends each a `ClientDetectionRequest` (5 s callback timeout), and waits on a latch
//!   for all of them, up to 5 s. Then it unregisters every probed connection that did not
//!   answer successfully. Because the delay is *fixed*, a run that waited on its latch pushes
//!   every later run back by that wait.
//! * **Close.** A TCP close (`AddressTransportFilter#transportTerminated`) unregisters the
//!   connection at once; so does the ejector. `unregister` closes the server's end and tells
//!   `ConnectionBasedClientManager#clientDisConnected`, which removes the client and every
//!   instance it published.

use super::{DETECTION_TIMEOUT, KEEP_ALIVE_TIME};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ChannelId;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A registered connection (`ConnectionMeta`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conn {
    /// The client process (the sim's name for `clientIp`).
    pub client: Arc<str>,
    pub channel: ChannelId,
    /// `lastActiveTime`.
    pub last_active: SimTime,
}

/// One ejector run waiting on its latch.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Run {
    started: SimTime,
    /// Probed and not answered yet (`latch` counts these).
    waiting: BTreeSet<Arc<str>>,
    /// `successConnections`.
    ok: BTreeSet<Arc<str>>,
    probed: Vec<Arc<str>>,
}

/// What an ejector run ended with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ejected {
    /// Probed connections that did not answer, with their idle time: unregistered now.
    pub ejected: Vec<(Arc<str>, Conn, SimDuration)>,
    /// When the next run starts (fixed delay from now).
    pub next_run: SimTime,
}

#[derive(Clone, Debug, Default)]
pub struct ConnectionTable {
    conns: BTreeMap<Arc<str>, Conn>,
    by_channel: BTreeMap<ChannelId, Arc<str>>,
    run: Option<Run>,
}

impl ConnectionTable {
    /// `ConnectionManager#register` (from `GrpcBiStreamRequestAcceptor` on the
    /// `ConnectionSetupRequest`): active from now.
    pub fn register(&mut self, id: Arc<str>, client: Arc<str>, channel: ChannelId, now: SimTime) {
        self.by_channel.insert(channel, id.clone());
        self.conns.insert(id, Conn { client, channel, last_active: now });
    }

    /// The connection on `channel`, if registered (`checkValid`).
    pub fn on_channel(&self, channel: ChannelId) -> Option<&Arc<str>> {
        self.by_channel.get(&channel)
    }

    pub fn get(&self, id: &str) -> Option<&Conn> {
        self.conns.get(id)
    }

    /// Every registered connection, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &Conn)> {
        self.conns.iter()
    }

    /// `refreshActiveTime` / `freshActiveTime`.
    pub fn refresh(&mut self, id: &str, now: SimTime) {
        if let Some(c) = self.conns.get_mut(id) {
            c.last_active = now;
        }
    }

    /// `ConnectionManager#unregister`: gone from the table (and from a run still waiting, whose
    /// `getConnection` would now find nothing).
    pub fn unregister(&mut self, id: &str) -> Option<Conn> {
        let conn = self.conns.remove(id)?;
        self.by_channel.remove(&conn.channel);
        Some(conn)
    }

    /// Whether a run is waiting on its latch.
    pub fn running(&self) -> bool {
        self.run.is_some()
    }

    /// `ejectOutdatedConnection`, first half: the connections idle `>= KEEP_ALIVE_TIME`, to be
    /// sent a `ClientDetectionRequest` each, with their idle time. Empty: the run is over at
    /// once (the caller schedules the next after `EJECTOR_DELAY`).
    pub fn start_run(&mut self, now: SimTime) -> Vec<(Arc<str>, SimDuration)> {
        let outdated: Vec<(Arc<str>, SimDuration)> = self
            .conns
            .iter()
            .map(|(id, c)| (id.clone(), now.since(c.last_active)))
            .filter(|(_, idle)| *idle >= KEEP_ALIVE_TIME)
            .collect();
        if !outdated.is_empty() {
            let ids: Vec<Arc<str>> = outdated.iter().map(|(id, _)| id.clone()).collect();
            self.run =
                Some(Run { started: now, waiting: ids.iter().cloned().collect(), ok: BTreeSet::new(), probed: ids });
        }
        outdated
    }

    /// When the waiting run's latch gives up (`latch.await(5000L)`).
    pub fn latch_deadline(&self) -> Option<SimTime> {
        self.run.as_ref().map(|r| r.started + DETECTION_TIMEOUT)
    }

    /// The client answered the detection (`onResponse`: `isSuccess` → `freshActiveTime` and
    /// `successConnections.add`). True when that was the last one the latch waited for: the run
    /// ends now.
    pub fn detection_answered(&mut self, id: &str, now: SimTime) -> bool {
        let Some(run) = &mut self.run else { return false };
        if !run.waiting.remove(id) {
            return false;
        }
        run.ok.insert(Arc::from(id));
        if let Some(c) = self.conns.get_mut(id) {
            c.last_active = now;
        }
        run.waiting.is_empty()
    }

    /// A probe failed before its timeout (`onException`, or the connection was already closed):
    /// counted down, not a success. True when the latch is now at zero.
    pub fn detection_failed(&mut self, id: &str) -> bool {
        let Some(run) = &mut self.run else { return false };
        run.waiting.remove(id) && run.waiting.is_empty()
    }

    /// `ejectOutdatedConnection`, second half (the latch reached zero or timed out): every probed
    /// connection without a success is unregistered; the next run is `EJECTOR_DELAY` from now.
    pub fn finish_run(&mut self, now: SimTime, delay: SimDuration) -> Ejected {
        let mut ejected = Vec::new();
        if let Some(run) = self.run.take() {
            for id in run.probed.iter().filter(|id| !run.ok.contains(*id)) {
                if let Some(c) = self.unregister(id) {
                    let idle = now.since(c.last_active);
                    ejected.push((id.clone(), c, idle));
                }
            }
        }
        Ejected { ejected, next_run: now + delay }
    }
}
