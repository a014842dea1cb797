//! The Nacos client application actor: one process with one `NacosNamingService` — one
//! `BeatReactor`, one server list — registering one or more ephemeral instances.
//!
//! Each instance registers at its start offset (`registerInstance`: `addBeatInfo`, then `POST`),
//! and its `BeatTask` chain sends a beat one period later and then after each answer or failure,
//! as `nacos::beat::BeatReactor` decides. A `20404` answer re-registers at once and the next beat
//! is scheduled when that registration returns. SIGTERM deregisters every instance in turn
//! (`removeBeatInfo`, then `DELETE`) and exits. Several instances in one process share the
//! reactor's light-beat flag: that is how "light beats are reactor-wide" shows.
//!
//! The reactor's `ScheduledThreadPoolExecutor` has `beat_threads` threads (`max(1, cores / 2)`
//! by default), and a `BeatTask` holds its thread for its whole `sendBeat` — every retry, read
//! timeout and 20404 re-registration included. A beat stuck on a black-holed server therefore
//! keeps the other instances' beats waiting once every thread is stuck.

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::nacos_http::{HttpClient, Outcome, ReadTimeouts};
use crate::nacos::beat::{BeatInfo, BeatReactor, TaskId};
use crate::nacos::notes::{NacosNote, RegisterReason};
use crate::nacos::types::{Instance, ServiceKey};
use crate::nacos::wire::{Answer, BeatReq, NacosMsg, RegisterReq};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::NodeId;
use crate::sim::name::Name;
use crate::sim::packet::Packet;
use crate::sim::timeline::Timeline;
use actix::prelude::*;
use std::sync::Arc;

mod deregister;
pub use deregister::DeregisterInstance;

/// One instance the application registers.
#[derive(Clone, Debug)]
pub struct AppInstance {
    /// The scenario's name for it, used in the trace.
    pub name: Name,
    pub service: ServiceKey,
    pub instance: Instance,
    /// When it registers, counted from the process start.
    pub offset: SimDuration,
    /// `getInstanceHeartBeatInterval()`, as the client reads the metadata.
    pub period: SimDuration,
}

/// What an HTTP call is for.
#[derive(Clone, Copy)]
enum Purpose {
    /// `then` is set for a `BeatTask`'s 20404 re-registration: the chain to resume (if it was
    /// not stopped meanwhile) when the registration returns. `idx` is a `u32` so that a call in
    /// flight (`nacos_http::Call`) stays within the size the compiler moves inline.
    Register { idx: u32, then: Option<Option<(TaskId, SimDuration)>> },
    /// `instance` is the instance's trace name, carried for the answer's note.
    Beat { idx: usize, task: TaskId, light: bool, instance: Name },
    /// `shutdown`: one of the shutdown hook's, which goes on with the next instance.
    Deregister { idx: usize, shutdown: bool },
}

/// An instance's two beat requests, light and full, built once per chain: the query parameters
/// and body never change for a `BeatInfo`, so a beat copies one (see `BeatReq`). The instance's trace
/// name sits beside them, because a beat reads this slot anyway and its answer's note needs the
/// name: read from `instances` when the answer came, it was one more cache miss per beat (10,000
/// instances' worth of entries are touched between two beats of one instance).
#[derive(Clone)]
struct BeatRequests {
    chain: TaskId,
    light: NacosMsg,
    full: NacosMsg,
    instance: Name,
}

pub struct NacosApp {
    env: Env,
    reactor: BeatReactor,
    http: HttpClient<Purpose>,
    instances: Vec<AppInstance>,
    registered: Vec<bool>,
    /// During shutdown: the next instance to deregister.
    shutdown: Option<usize>,
    /// The reactor's scheduled `BeatTask` runs, by due time then scheduling order. The
    /// application wakes once for all runs due in the same instant — as one executor thread
    /// would run them back to back — instead of once per instance.
    /// A run is nearly always scheduled one period out, later than any already waiting, so it
    /// goes on the back, and runs come off the front in the order they were filed: no heap to
    /// sift, and memory read front to back.
    due: Timeline<(usize, TaskId)>,
    /// The instant the one wake-up timer is set for.
    armed: Option<SimTime>,
    /// Each instance's two beat requests (see [`BeatRequests`]).
    requests: Vec<Option<BeatRequests>>,
    /// The executor's threads, and how many a `BeatTask` holds now.
    threads: usize,
    busy: usize,
    /// Our address: the wake-up timer is set again at nearly every beat instant.
    me: Local<NacosApp>,
}

impl NacosApp {
    /// `servers` is the `NamingService`'s server list; `read_timeout` its `rtimeout`;
    /// `threads` its `BeatReactor`'s thread count.
    pub fn new(
        env: Env,
        servers: Vec<(Name, NodeId)>,
        read_timeout: SimDuration,
        threads: usize,
        instances: Vec<AppInstance>,
        me: Local<NacosApp>,
    ) -> Self {
        let registered = vec![false; instances.len()];
        let requests = vec![None; instances.len()];
        let http = HttpClient::new(env.clone(), servers, read_timeout, me.clone());
        let mut reactor = BeatReactor::new();
        if let Some(m) = env.mutation {
            reactor.plant(m);
        }
        NacosApp {
            env,
            reactor,
            http,
            instances,
            registered,
            shutdown: None,
            due: Timeline::default(),
            armed: None,
            requests,
            threads: threads.max(1),
            busy: 0,
            me,
        }
    }

    fn register(
        &mut self,
        idx: usize,
        instance: Instance,
        then: Option<Option<(TaskId, SimDuration)>>,
        ctx: &mut Context<Self>,
    ) {
        let service = self.instances[idx].service.clone();
        let msg = NacosMsg::Register(Arc::new(RegisterReq { service, instance }));
        if let Some(o) = self.http.call(Purpose::Register { idx: idx as u32, then }, msg) {
            self.outcome(&o, ctx);
        }
    }

    /// Inlined: once a beat, and as a call its register saves and restores were a third of it.
    #[inline(always)]
    fn schedule_beat(&mut self, idx: usize, task: TaskId, delay: SimDuration) {
        self.due.file(self.env.now() + delay, (idx, task));
        self.arm();
    }

    /// Keeps one timer set for the earliest scheduled run, while a thread is free to run it (a
    /// thread that frees up looks for due runs itself). Asked twice a beat, and nearly always
    /// answered "the timer set will do": inlined, that answer saved 1.5% of the Nacos bench.
    #[inline]
    fn arm(&mut self) {
        let Some(at) = self.due.first() else { return };
        if self.busy >= self.threads || self.armed.is_some_and(|armed| armed <= at) {
            return;
        }
        self.arm_at(at);
    }

    #[inline(never)]
    fn arm_at(&mut self, at: SimTime) {
        self.armed = Some(at);
        self.env.after(at.since(self.env.now()), self.me.clone(), Wake(at));
    }

    /// Runs the due `BeatTask`s, as many as there are free threads, earliest first.
    fn run_due(&mut self, ctx: &mut Context<Self>) {
        let now = self.env.now();
        while self.busy < self.threads {
            let Some((idx, task)) = self.due.pop_due(now) else { break };
            self.beat(idx, task, ctx);
        }
        self.arm();
    }

    /// A `BeatTask` run ended (its beat, and any re-registration it made, returned).
    fn release(&mut self, ctx: &mut Context<Self>) {
        self.busy = self.busy.saturating_sub(1);
        self.run_due(ctx);
    }

    /// A `BeatTask` run: it holds a thread until its request ends.
    fn beat(&mut self, idx: usize, task: TaskId, ctx: &mut Context<Self>) {
        let Some(beat) = self.reactor.beat(task) else {
            self.requests[idx] = None;
            return;
        };
        self.busy += 1;
        let requests = match &mut self.requests[idx] {
            Some(requests) if requests.chain == task => requests,
            slot => {
                let info = beat.info;
                let cluster = Name::new(&info.cluster);
                let req = |body| {
                    let (service, ip, port) = (info.service.clone(), info.ip, info.port);
                    NacosMsg::Beat(BeatReq { service, cluster, ip, port, body })
                };
                let (light, full) = (req(None), req(Some(info.clone())));
                slot.insert(BeatRequests { chain: task, light, full, instance: self.instances[idx].name })
            }
        };
        let msg = if beat.light { requests.light.copy() } else { requests.full.copy() };
        let purpose = Purpose::Beat { idx, task, light: beat.light, instance: requests.instance };
        if let Some(o) = self.http.call(purpose, msg) {
            self.outcome(&o, ctx);
        }
    }

    fn outcome(&mut self, outcome: &Outcome<'_, Purpose>, ctx: &mut Context<Self>) {
        match *outcome {
            Outcome::Answered { purpose: Purpose::Beat { idx, task, light, instance }, server, answer } => {
                let Answer::Beat(reply) = answer else { return };
                let after = self.reactor.on_answer(task, reply);
                if let Some(enabled) = after.light_changed {
                    self.env.record(NacosNote::LightBeats { enabled, server });
                }
                self.env.record_beat(instance, server, light, reply.code, after.next);
                if after.reregister {
                    // The BeatTask registers inside its run: its thread stays busy until then.
                    self.record_registering(idx, RegisterReason::NotFound, None);
                    let then = Some(after.next.map(|d| (task, d)));
                    self.register(idx, self.reactor.instance(task), then, ctx);
                } else {
                    if let Some(d) = after.next {
                        self.schedule_beat(idx, task, d);
                    }
                    self.release(ctx);
                }
            }
            Outcome::Answered { purpose: Purpose::Register { idx, then }, server, .. } => {
                let idx = idx as usize;
                self.env.record(NacosNote::Registered { instance: self.instances[idx].name, server });
                self.beat_task_registered(idx, then, ctx);
            }
            Outcome::Answered { purpose: Purpose::Deregister { idx, shutdown }, server, .. } => {
                self.env.record(NacosNote::Deregistered { instance: self.instances[idx].name, server: Some(server) });
                if shutdown {
                    self.deregister_next(ctx);
                }
            }
            Outcome::Failed { purpose: Purpose::Beat { idx, task, instance, .. }, api, ref failure } => {
                let next_beat = self.reactor.on_failure(task);
                self.env.record(NacosNote::CallFailed { instance, api, failure: failure.clone(), next_beat });
                if let Some(d) = next_beat {
                    self.schedule_beat(idx, task, d);
                }
                self.release(ctx);
            }
            Outcome::Failed { purpose: Purpose::Register { idx, then }, api, ref failure } => {
                let idx = idx as usize;
                // The BeatTask ignores a failed re-registration and carries on.
                let instance = self.instances[idx].name;
                let next_beat = then.flatten().map(|(_, d)| d);
                self.env.record(NacosNote::CallFailed { instance, api, failure: failure.clone(), next_beat });
                self.beat_task_registered(idx, then, ctx);
            }
            Outcome::Failed { purpose: Purpose::Deregister { idx, shutdown }, .. } => {
                self.env.record(NacosNote::Deregistered { instance: self.instances[idx].name, server: None });
                if shutdown {
                    self.deregister_next(ctx);
                }
            }
        }
    }

    /// A registration returned. `then` is set when a `BeatTask` made it (on 20404): the task
    /// schedules its next beat, if its chain still runs, and frees its thread.
    fn beat_task_registered(
        &mut self,
        idx: usize,
        then: Option<Option<(TaskId, SimDuration)>>,
        ctx: &mut Context<Self>,
    ) {
        let Some(then) = then else { return };
        if let Some((task, d)) = then {
            self.schedule_beat(idx, task, d);
        }
        self.release(ctx);
    }

    fn record_registering(&self, idx: usize, reason: RegisterReason, first_beat: Option<SimDuration>) {
        let i = &self.instances[idx];
        self.env.record(NacosNote::Registering { instance: i.name, service: i.service.clone(), reason, first_beat });
    }

    /// Deregisters the next registered instance, or exits when none is left.
    fn deregister_next(&mut self, ctx: &mut Context<Self>) {
        let Some(from) = self.shutdown else { return };
        let Some(idx) = (from..self.instances.len()).find(|i| self.registered[*i]) else {
            self.env.record(NacosNote::ShutdownComplete);
            self.env.exit();
            ctx.stop();
            return;
        };
        self.shutdown = Some(idx + 1);
        self.deregister(idx, true, ctx);
    }
}

impl Actor for NacosApp {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        for (idx, i) in self.instances.iter().enumerate() {
            self.env.after(i.offset, self.me.clone(), RegisterNow(idx));
        }
    }
}

/// `registerInstance` for one instance.
#[derive(Message)]
#[rtype(result = "()")]
struct RegisterNow(usize);

impl Handler<RegisterNow> for NacosApp {
    type Result = ();
    fn handle(&mut self, RegisterNow(idx): RegisterNow, ctx: &mut Context<Self>) {
        if self.shutdown.is_some() {
            return;
        }
        self.registered[idx] = true;
        let i = &self.instances[idx];
        let info = Arc::new(BeatInfo::new(i.service.clone(), &i.instance, i.period));
        let (task, first) = self.reactor.add_beat_info(info);
        self.schedule_beat(idx, task, first);
        self.record_registering(idx, RegisterReason::Startup, Some(first));
        let instance = self.instances[idx].instance.clone();
        self.register(idx, instance, None, ctx);
    }
}

/// The wake-up for the runs scheduled at the given instant (stale when re-armed earlier).
#[derive(Message)]
#[rtype(result = "()")]
struct Wake(SimTime);

impl Handler<Wake> for NacosApp {
    type Result = ();
    fn handle(&mut self, Wake(at): Wake, ctx: &mut Context<Self>) {
        if self.armed != Some(at) {
            return;
        }
        self.armed = None;
        self.run_due(ctx);
    }
}

impl Handler<Packet> for NacosApp {
    type Result = ();
    /// Inlined at both of the endpoint's calls (see `packet_endpoint!`): left a call, a beat's
    /// answer cost 16 instructions more on the Nacos bench.
    #[inline(always)]
    fn handle(&mut self, p: Packet, ctx: &mut Context<Self>) {
        self.http.on_packet(&p).each(|o| self.outcome(o, ctx));
        p.discard();
    }
}

impl Handler<ReadTimeouts> for NacosApp {
    type Result = ();
    fn handle(&mut self, _: ReadTimeouts, ctx: &mut Context<Self>) {
        self.http.on_read_timeouts().each(|o| self.outcome(o, ctx));
    }
}

/// SIGTERM: the shutdown hook deregisters every instance, then the process exits.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

impl Handler<Shutdown> for NacosApp {
    type Result = ();
    fn handle(&mut self, _: Shutdown, ctx: &mut Context<Self>) {
        if self.shutdown.is_none() {
            self.shutdown = Some(0);
            self.deregister_next(ctx);
        }
    }
}

impl Handler<Stop> for NacosApp {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
