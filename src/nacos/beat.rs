//! The client SDK's `BeatReactor` and `BeatTask` (1.4.8 `client/.../naming/beat`), pure.
//!
//! One reactor per `NamingService`, i.e. per application process. It keeps `dom2Beat`, one
//! `BeatInfo` per registered ephemeral instance, and **one reactor-wide** `lightBeatEnabled` flag.
//! A `BeatTask` is a one-shot delayed task that reschedules itself in its `finally` block, so:
//!
//! * the first beat goes out one period *after* `addBeatInfo`, not at registration;
//! * the next delay is counted from the *end* of the previous run (request time included);
//! * after a successful answer the next delay is the server's `clientBeatInterval` when it is
//!   > 0, for that one cycle only (`beatInfo.period` is never overwritten), else the period;
//! * after any failure the next delay is the period: no back-off and no fast retry;
//! * a `20404` answer re-registers at once, inside the same run, with the `BeatInfo`'s original
//!   metadata and weight (#6042: a server-side metadata edit is overwritten), and the next beat
//!   is scheduled only after that registration call returns.
//!
//! The actor performs the HTTP calls; this core decides what to send and what follows.

use crate::nacos::types::{Instance, Metadata, ServiceKey};
use crate::nacos::wire::BeatReply;
use crate::sim::clock::SimDuration;
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A `BeatInfo`: what a full beat's `beat=<json>` body carries.
#[derive(Debug, PartialEq)]
pub struct BeatInfo {
    /// The namespace of the reactor's `NamingService` plus `serviceName` (the grouped name).
    pub service: ServiceKey,
    pub ip: Name,
    pub port: u16,
    pub weight: f64,
    pub cluster: Arc<str>,
    pub metadata: Arc<Metadata>,
    /// `instance.getInstanceHeartBeatInterval()`, fixed when the `BeatInfo` is built.
    pub period: SimDuration,
}

impl BeatInfo {
    /// `BeatReactor#buildBeatInfo`; `period` is the client's reading of
    /// `preserved.heart.beat.interval` (see `types::client_beat_interval`).
    pub fn new(service: ServiceKey, instance: &Instance, period: SimDuration) -> Self {
        BeatInfo {
            service,
            ip: instance.ip,
            port: instance.port,
            weight: instance.weight,
            cluster: instance.cluster.clone(),
            metadata: instance.metadata.clone(),
            period,
        }
    }

    /// The instance `BeatTask` rebuilds on `20404`: healthy, enabled, ephemeral, and the
    /// register-time metadata and weight.
    pub fn to_instance(&self) -> Instance {
        Instance {
            ip: self.ip,
            port: self.port,
            weight: self.weight,
            cluster: self.cluster.clone(),
            metadata: self.metadata.clone(),
            healthy: true,
            enabled: true,
        }
    }
}

/// `dom2Beat`'s key, `serviceName#ip#port`: the cluster is not part of it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct BeatKey {
    pub grouped: Arc<str>,
    pub ip: Name,
    pub port: u16,
}

/// One scheduled `BeatTask` chain. A new `BeatInfo` for the same key starts a new chain and stops
/// the old one. Ids are handed out in order, so a chain's state is `tasks[id - 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TaskId(pub u64);

/// A beat to send now.
#[derive(Clone, Copy, Debug)]
pub struct Beat<'a> {
    pub info: &'a Arc<BeatInfo>,
    /// Send without a body (the reactor-wide flag as it is *now*).
    pub light: bool,
}

/// What follows a beat answer.
#[derive(Clone, Debug, PartialEq)]
pub struct AfterBeat {
    /// Delay until this chain's next beat, or `None` when the chain was stopped meanwhile.
    pub next: Option<SimDuration>,
    /// The answer was `20404`: register the instance now ([`BeatReactor::instance`]), then
    /// schedule `next`. A flag, not the instance: every beat's answer returns this, and with a
    /// whole `Instance` in it each was a hundred bytes moved and dropped for the one in
    /// thousands that re-registers.
    pub reregister: bool,
    /// The reactor-wide light flag changed to this value.
    pub light_changed: Option<bool>,
}

/// A chain's `BeatInfo` and its `stopped` flag, which the Java object carries itself: a stopped
/// chain's beat in flight still gets its answer handled with the same info.
struct Chain {
    info: Arc<BeatInfo>,
    stopped: bool,
}

#[derive(Default)]
pub struct BeatReactor {
    dom2beat: BTreeMap<BeatKey, TaskId>,
    /// Every chain ever started, by id. A vector rather than a map: every beat looks its chain
    /// up, and an application starts one chain per instance (plus one per re-add).
    tasks: Vec<Chain>,
    /// `BeatReactor.lightBeatEnabled`: starts false, so a fresh reactor's first beat is full.
    light_beat_enabled: bool,
    /// Test-only: the planted bug, if any ([`Self::plant`]); `None` in every real run.
    planted: Option<Mutation>,
}

impl BeatReactor {
    pub fn new() -> Self {
        Self::default()
    }

    /// Test-only: plants `mutation` where it touches the beat tasks (`NacosIgnoresNotFound`; any
    /// other changes nothing here). Not reachable from scenario files.
    pub(crate) fn plant(&mut self, mutation: Mutation) {
        self.planted = Some(mutation);
    }

    fn chain(&self, task: TaskId) -> &Chain {
        &self.tasks[task.0 as usize - 1]
    }

    fn chain_mut(&mut self, task: TaskId) -> &mut Chain {
        &mut self.tasks[task.0 as usize - 1]
    }

    /// `addBeatInfo`: replaces (and stops) any chain for the same key and starts a new one whose
    /// first beat is due one `period` from now.
    pub fn add_beat_info(&mut self, info: Arc<BeatInfo>) -> (TaskId, SimDuration) {
        let key = BeatKey { grouped: info.service.grouped.clone(), ip: info.ip, port: info.port };
        let period = info.period;
        self.tasks.push(Chain { info, stopped: false });
        let task = TaskId(self.tasks.len() as u64);
        if let Some(old) = self.dom2beat.insert(key, task) {
            self.chain_mut(old).stopped = true;
        }
        (task, period)
    }

    /// `removeBeatInfo`: stops the chain. A beat already in flight still completes, and its answer
    /// can still re-register the instance (#1733, #9746).
    pub fn remove_beat_info(&mut self, grouped: &Arc<str>, ip: &Name, port: u16) -> bool {
        let key = BeatKey { grouped: grouped.clone(), ip: *ip, port };
        match self.dom2beat.remove(&key) {
            Some(task) => !std::mem::replace(&mut self.chain_mut(task).stopped, true),
            None => false,
        }
    }

    /// `BeatTask.run()` begins: `None` when the chain was stopped (the task just returns).
    pub fn beat(&self, task: TaskId) -> Option<Beat<'_>> {
        let chain = self.chain(task);
        (!chain.stopped).then_some(Beat { info: &chain.info, light: self.light_beat_enabled })
    }

    /// A 2xx answer to a beat sent by chain `task`.
    pub fn on_answer(&mut self, task: TaskId, reply: &BeatReply) -> AfterBeat {
        // Any answer sets the flag, reactor-wide: a missing field reads as false.
        let light_changed = (reply.light_beat_enabled != self.light_beat_enabled).then_some(reply.light_beat_enabled);
        self.light_beat_enabled = reply.light_beat_enabled;
        let chain = self.chain(task);
        // The server's interval only when positive, read afresh from each answer.
        let next = if reply.client_beat_interval > 0 {
            SimDuration(reply.client_beat_interval as u64)
        } else {
            chain.info.period
        };
        // The planted bug has no RESOURCE_NOT_FOUND branch: 20404 reads as any other answer.
        let not_found = reply.code == crate::nacos::types::CODE_RESOURCE_NOT_FOUND
            && self.planted != Some(Mutation::NacosIgnoresNotFound);
        AfterBeat { next: (!chain.stopped).then_some(next), reregister: not_found, light_changed }
    }

    /// The instance chain `task` re-registers after a `20404`: `BeatTask#run` builds it from its
    /// `BeatInfo`, with the original metadata.
    pub fn instance(&self, task: TaskId) -> Instance {
        self.chain(task).info.to_instance()
    }

    /// Every server failed (connect error, HTTP error, read timeout): the next beat follows one
    /// period later. `None` when the chain was stopped meanwhile.
    pub fn on_failure(&self, task: TaskId) -> Option<SimDuration> {
        let chain = self.chain(task);
        (!chain.stopped).then_some(chain.info.period)
    }

    pub fn light_beat_enabled(&self) -> bool {
        self.light_beat_enabled
    }

    /// Number of instances with a live beat chain.
    pub fn len(&self) -> usize {
        self.dom2beat.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dom2beat.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nacos::types::{CODE_OK, CODE_RESOURCE_NOT_FOUND};

    fn info(name: &str, port: u16, period: u64) -> Arc<BeatInfo> {
        let instance = Instance {
            ip: Name::from("10.0.0.1"),
            port,
            weight: 1.0,
            cluster: Arc::from("DEFAULT"),
            metadata: Arc::new(Metadata::from([("k".to_string(), "v".to_string())])),
            healthy: true,
            enabled: true,
        };
        Arc::new(BeatInfo::new(ServiceKey::new("public", "DEFAULT_GROUP", name), &instance, SimDuration(period)))
    }

    fn reply(code: i32, interval: i64, light: bool) -> BeatReply {
        BeatReply { client_beat_interval: interval, code, light_beat_enabled: light }
    }

    #[test]
    fn the_first_beat_is_due_one_period_after_registering_and_is_full() {
        // Nacos BeatReactor#addBeatInfo: executorService.schedule(new BeatTask(beatInfo), period)
        let mut r = BeatReactor::new();
        let (task, delay) = r.add_beat_info(info("orders", 8080, 5000));
        assert_eq!(delay, SimDuration(5000));
        assert!(!r.beat(task).unwrap().light, "a fresh reactor sends a body");
    }

    #[test]
    fn a_light_answer_makes_every_instance_of_the_reactor_send_light_beats() {
        // Nacos BeatTask#run: BeatReactor.this.lightBeatEnabled = lightBeatEnabled (reactor-wide)
        let mut r = BeatReactor::new();
        let (a, _) = r.add_beat_info(info("orders", 8080, 5000));
        let (b, _) = r.add_beat_info(info("pay", 8081, 5000));
        let after = r.on_answer(a, &reply(CODE_OK, 5000, true));
        assert_eq!(after.light_changed, Some(true));
        assert!(r.beat(b).unwrap().light, "b never had an answer yet");
        // An answer without the flag (false) switches the whole reactor back to full beats.
        let after = r.on_answer(a, &reply(CODE_OK, 5000, false));
        assert_eq!(after.light_changed, Some(false));
        assert!(!r.beat(b).unwrap().light);
    }

    #[test]
    fn the_server_interval_wins_only_when_positive_and_only_for_one_cycle() {
        // Nacos BeatTask#run: if (interval > 0) nextTime = interval; beatInfo.period untouched
        let mut r = BeatReactor::new();
        let (t, _) = r.add_beat_info(info("orders", 8080, 5000));
        let i = r.beat(t).unwrap().info.clone();
        assert_eq!(r.on_answer(t, &reply(CODE_OK, 2000, true)).next, Some(SimDuration(2000)));
        assert_eq!(r.on_answer(t, &reply(CODE_OK, 0, true)).next, Some(SimDuration(5000)));
        assert_eq!(r.on_answer(t, &reply(CODE_OK, -1, true)).next, Some(SimDuration(5000)));
        assert_eq!(i.period, SimDuration(5000));
    }

    #[test]
    fn a_failure_retries_after_the_period_without_back_off() {
        // Nacos BeatTask#run: catch (NacosException) ... finally schedule(nextTime = period)
        let mut r = BeatReactor::new();
        let (t, _) = r.add_beat_info(info("orders", 8080, 3000));
        for _ in 0..5 {
            assert_eq!(r.on_failure(t), Some(SimDuration(3000)));
        }
    }

    #[test]
    fn resource_not_found_re_registers_with_the_original_metadata() {
        // Nacos BeatTask#run: code == RESOURCE_NOT_FOUND -> serverProxy.registerService(instance from beatInfo)
        let mut r = BeatReactor::new();
        let (t, _) = r.add_beat_info(info("orders", 8080, 5000));
        let after = r.on_answer(t, &reply(CODE_RESOURCE_NOT_FOUND, 5000, true));
        assert!(after.reregister);
        let instance = r.instance(t);
        assert_eq!(instance.metadata.get("k").map(String::as_str), Some("v"));
        assert!(instance.healthy && instance.enabled);
        assert_eq!(after.next, Some(SimDuration(5000)));
    }

    #[test]
    fn re_adding_an_instance_stops_the_old_chain() {
        // Nacos BeatReactor#addBeatInfo: existBeat.setStopped(true) (fix #1733)
        let mut r = BeatReactor::new();
        let (old, _) = r.add_beat_info(info("orders", 8080, 5000));
        let (new, _) = r.add_beat_info(info("orders", 8080, 5000));
        assert!(r.beat(old).is_none());
        assert!(r.beat(new).is_some());
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn a_beat_in_flight_after_deregistering_can_still_re_register() {
        // Nacos BeatReactor#removeBeatInfo + BeatTask#run (#9746): stopped only stops rescheduling
        let mut r = BeatReactor::new();
        let (t, _) = r.add_beat_info(info("orders", 8080, 5000));
        let i = r.beat(t).unwrap().info.clone();
        assert!(r.remove_beat_info(&i.service.grouped, &i.ip, i.port));
        assert!(r.beat(t).is_none(), "the next run returns at once");
        let after = r.on_answer(t, &reply(CODE_RESOURCE_NOT_FOUND, 5000, true));
        assert!(after.reregister);
        assert_eq!(after.next, None);
    }
}
