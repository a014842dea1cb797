//! The broker actor: `BrokerController`'s registration with every name server, its 5.x
//! `refreshMetadata` poll, the acting-master heartbeat, and the unregistration on a graceful
//! shutdown. Its topic decisions live in `rocketmq::broker::BrokerCore`; its requests go through
//! `remoting::Remoting` (`invokeSync`, whose timeout closes the channel).
//!
//! Two Java threads shape the timing, and both are modelled:
//!
//! * `registerBrokerAll` is `synchronized` and waits on a latch until every name server has
//!   answered or failed (at most `registerBrokerTimeoutMills`, 24 s): registrations never
//!   overlap, and one stuck on a half-open channel lasts 24 s;
//! * the periodic registration and `refreshMetadata` share the one
//!   `BrokerControllerScheduledThread`, so while a registration waits, the poll waits too, and
//!   afterwards the fixed-rate task catches up one run at a time.

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::remoting::{Done, Remoting, RequestTimeouts, Servers};
use crate::rocketmq::broker::{self, BrokerCore};
use crate::rocketmq::notes::{RegisterReason, RmqNote};
use crate::rocketmq::send;
use crate::rocketmq::types::DataVersion;
use crate::rocketmq::wire::{HeartbeatRequest, RmqMsg};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::executor::Executor;
use crate::sim::packet::{Body, Packet};
use actix::prelude::*;
use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;

/// The tasks of `BrokerControllerScheduledThread` that talk to name servers, in the order
/// `start()` schedules them (their sequence numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Task {
    Register,
    Refresh,
}

impl Task {
    fn seq(self) -> u64 {
        self as u64
    }
}

/// What a request is for.
enum Call {
    Register,
    Refresh { scheduled: SimTime },
    Unregister,
}

/// What a registration carries.
enum Content {
    /// `registerBrokerAll`: every topic, the broker's DataVersion.
    Full,
    /// `registerIncrementBrokerData`: these topics only.
    Topics(Vec<String>),
    /// Every topic under a DataVersion a test chose (`register_broker`).
    Version(DataVersion),
}

/// One `registerBrokerAll` (or incremental registration) waiting for the lock or running.
struct Job {
    reason: RegisterReason,
    content: Content,
    /// Set when the scheduled thread runs it (the periodic task, due at this time).
    scheduled: Option<SimTime>,
}

use crate::sim::world::RegisterAnswer;

mod operator;
mod shutdown;
pub use operator::{ChangeTopics, RegisterWithVersion, SetBrokerId, SetPermission};
pub use shutdown::Shutdown;

pub struct Broker {
    env: Env,
    core: BrokerCore,
    remoting: Remoting<Call>,
    /// `topics.json`'s DataVersion, kept across restarts by the director.
    disk: Rc<Cell<Option<DataVersion>>>,
    sched: Executor<Task>,
    /// The registration holding the `synchronized` lock, with the answers it still waits for.
    registering: Option<(Job, usize)>,
    waiting: VecDeque<Job>,
    /// Set once `shutdown()` begins: `doRegisterBrokerAll` refuses to register after that. The
    /// index of the name server being asked to unregister us.
    shutdown: Option<usize>,
    /// Its own address: where its timers' messages go.
    me: Local<Broker>,
}

impl Broker {
    /// `start_index` is the remoting client's random `namesrvIndex` start.
    pub fn new(
        env: Env,
        core: BrokerCore,
        namesrvs: Servers,
        start_index: usize,
        disk: Rc<Cell<Option<DataVersion>>>,
        me: Local<Broker>,
    ) -> Self {
        let remoting = Remoting::new(env.clone(), namesrvs, start_index, me.clone());
        Broker {
            env,
            core,
            remoting,
            disk,
            sched: Executor::new(1),
            registering: None,
            waiting: VecDeque::new(),
            shutdown: None,
            me,
        }
    }

    /// `registerBrokerAll` / `registerIncrementBrokerData`: waits for the lock if another
    /// registration holds it.
    fn register(&mut self, job: Job, ctx: &mut Context<Self>) {
        if self.registering.is_some() {
            self.waiting.push_back(job);
            return;
        }
        let names = self.remoting.names().len();
        if self.shutdown.is_some() || names == 0 {
            return self.registered(job, ctx);
        }
        // The note's topic count and version, read from the core for a full registration: its
        // wrapper is shared and has left the caches since the last one.
        let (request, topics, version) = match &job.content {
            Content::Full => {
                let (topics, version) = self.core.full_shape();
                (self.core.full_registration(), topics, version)
            }
            Content::Topics(topics) => {
                let request = self.core.incremental_registration(topics);
                let wrapper = request.topic_config_wrapper.as_ref().expect("a registration carries its topics");
                let (topics, version) = (wrapper.topic_config_table.len(), wrapper.data_version);
                (request, topics, version)
            }
            Content::Version(version) => {
                (self.core.registration_with_version(*version), self.core.full_shape().0, *version)
            }
        };
        self.env.record(RmqNote::RegisterSent {
            reason: job.reason,
            namesrvs: Arc::clone(self.remoting.names()),
            topics,
            version,
            id: request.broker_id,
        });
        let timeout = self.core.config.register_timeout;
        self.registering = Some((job, names));
        // One task per name server on `brokerOuterExecutor`, all at once, sharing one request.
        for (i, request) in std::iter::repeat_n(Rc::new(request), names).enumerate() {
            self.remoting.invoke_sync(i, RmqMsg::RegisterBroker(request), timeout, Call::Register);
        }
    }

    /// One name server answered or failed; the latch opens when all have.
    fn register_answered(&mut self, ctx: &mut Context<Self>) {
        let Some((_, left)) = &mut self.registering else { return };
        *left -= 1;
        if *left == 0 {
            let (job, _) = self.registering.take().expect("a registration was running");
            self.registered(job, ctx);
        }
    }

    /// A registration finished: release the lock (and the scheduled thread, if it ran there).
    fn registered(&mut self, job: Job, ctx: &mut Context<Self>) {
        if job.reason == RegisterReason::Startup {
            self.schedule_tasks();
        }
        if let Some(scheduled) = job.scheduled {
            self.task_done(Task::Register, scheduled, ctx);
        }
        if let Some(next) = self.waiting.pop_front() {
            self.register(next, ctx);
        }
    }

    /// `start()` schedules its fixed-rate tasks once the start-up registration returned.
    fn schedule_tasks(&mut self) {
        let now = self.env.now();
        let first = now + broker::FIRST_PERIODIC_DELAY;
        self.env.after(broker::FIRST_PERIODIC_DELAY, self.me.clone(), Tick(Task::Register, first));
        if self.core.config.enable_acting_master {
            let period = self.core.config.heartbeat_interval;
            self.env.after(period, self.me.clone(), HeartbeatTick(now + period));
        }
        if self.core.config.refresh_metadata {
            let first = now + broker::REFRESH_DELAY;
            self.env.after(broker::REFRESH_DELAY, self.me.clone(), Tick(Task::Refresh, first));
        }
    }

    fn period(&self, task: Task) -> SimDuration {
        match task {
            Task::Register => self.core.config.effective_register_period(),
            Task::Refresh => broker::REFRESH_PERIOD,
        }
    }

    /// Runs whatever the scheduled thread can take now.
    fn pump(&mut self, ctx: &mut Context<Self>) {
        while let Some((scheduled, task)) = self.sched.take() {
            match task {
                Task::Register => {
                    let job =
                        Job { reason: RegisterReason::Periodic, content: Content::Full, scheduled: Some(scheduled) };
                    self.register(job, ctx);
                }
                Task::Refresh if self.shutdown.is_none() => {
                    // `refreshMetadata` → `getBrokerClusterInfo`: invokeSync(null, ..., 3000).
                    let ns = self.remoting.choose();
                    let call = Call::Refresh { scheduled };
                    self.remoting.invoke_sync(ns, RmqMsg::GetClusterInfo, broker::REFRESH_TIMEOUT, call);
                }
                Task::Refresh => self.task_done(task, scheduled, ctx),
            }
        }
    }

    /// A run ended: the task is due again one period after it was scheduled — at once if that
    /// has passed (`scheduleAtFixedRate` catches up one run at a time).
    fn task_done(&mut self, task: Task, scheduled: SimTime, ctx: &mut Context<Self>) {
        self.sched.done();
        let next = scheduled + self.period(task);
        if next <= self.env.now() {
            self.sched.due(next, task.seq(), task);
        } else {
            self.env.after(next.since(self.env.now()), self.me.clone(), Tick(task, next));
        }
        self.pump(ctx);
    }

    fn done(&mut self, done: Done<Call>, ctx: &mut Context<Self>) {
        let (call, namesrv, failure) = match done {
            Done::Answered { purpose, namesrv, reply } => {
                match (&purpose, reply) {
                    (Call::Register, RmqMsg::RegisterBrokerReply { ok: false, .. }) => {
                        self.failed(namesrv, "REGISTER_BROKER", "SYSTEM_ERROR register broker failed".into());
                    }
                    // What `BrokerController#handleRegisterBrokerResult` reads (a slave's master
                    // and its HA address), kept where expectations can see it.
                    (Call::Register, RmqMsg::RegisterBrokerReply { ok: true, master_addr, ha_server_addr, .. }) => {
                        let answer = RegisterAnswer { at: self.env.now(), master_addr, ha_server_addr };
                        self.env.obs.world.record_registration(&self.env.label, self.remoting.name(namesrv), answer);
                    }
                    _ => {}
                }
                (purpose, namesrv, None)
            }
            Done::Failed { purpose, namesrv, failure } => (purpose, namesrv, Some(failure)),
        };
        match call {
            Call::Register => {
                if let Some(f) = failure {
                    self.failed(namesrv, "REGISTER_BROKER", f.to_string());
                }
                self.register_answered(ctx);
            }
            Call::Refresh { scheduled } => {
                if let Some(f) = failure {
                    self.failed(namesrv, "GET_BROKER_CLUSTER_INFO", f.to_string());
                }
                self.task_done(Task::Refresh, scheduled, ctx);
            }
            Call::Unregister => {
                if let Some(f) = failure {
                    self.failed(namesrv, "UNREGISTER_BROKER", f.to_string());
                }
                self.unregister_next(ctx);
            }
        }
    }

    fn failed(&self, namesrv: usize, request: &'static str, reason: String) {
        let namesrv = self.remoting.name(namesrv).to_string();
        self.env.record(RmqNote::RequestFailed { namesrv, request, reason });
    }

    fn heartbeat(&mut self) {
        let c = &self.core.config;
        let request = Arc::new(HeartbeatRequest {
            cluster: c.cluster.clone(),
            addr: c.addr.clone(),
            broker_name: c.broker_name.clone(),
            broker_id: c.broker_id,
            data_version: self.core.data_version(),
        });
        let names = self.remoting.names().len();
        for i in 0..names {
            self.remoting.invoke_oneway(i, RmqMsg::QueryDataVersion(request.clone()));
        }
        self.env.record(RmqNote::HeartbeatSent { namesrvs: names });
    }

    /// The topic table changed: `TopicConfigManager#persist` writes the new DataVersion.
    fn persist(&self) {
        self.disk.set(Some(self.core.data_version()));
    }
}

impl Actor for Broker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // `BrokerController.start`: one forced registration, waited for; then the fixed-rate
        // tasks are scheduled.
        self.register(Job { reason: RegisterReason::Startup, content: Content::Full, scheduled: None }, ctx);
    }
}

/// A fixed-rate task of the scheduled thread falls due (at the given instant).
#[derive(Message)]
#[rtype(result = "()")]
struct Tick(Task, SimTime);

impl Handler<Tick> for Broker {
    type Result = ();
    fn handle(&mut self, Tick(task, scheduled): Tick, ctx: &mut Context<Self>) {
        self.sched.due(scheduled, task.seq(), task);
        self.pump(ctx);
    }
}

/// The 1 s lightweight heartbeat (acting-master mode only), on its own thread.
#[derive(Message)]
#[rtype(result = "()")]
pub struct HeartbeatTick(pub SimTime);

impl Handler<HeartbeatTick> for Broker {
    type Result = ();
    fn handle(&mut self, HeartbeatTick(scheduled): HeartbeatTick, _: &mut Context<Self>) {
        if self.shutdown.is_some() {
            return;
        }
        self.heartbeat();
        let (next, delay) = self.env.fixed_rate_delay(scheduled, self.core.config.heartbeat_interval);
        self.env.after(delay, self.me.clone(), HeartbeatTick(next));
    }
}

impl Handler<Packet> for Broker {
    type Result = ();
    fn handle(&mut self, p: Packet, ctx: &mut Context<Self>) {
        // A producer's send: answered at once (the store is not modelled), after the link's
        // latency back (see `rocketmq::send` for the checks).
        if let Body::Rmq(RmqMsg::SendMessage { topic, queue_id }) = &p.body {
            let code = send::answer(&self.core, *topic, *queue_id);
            if !code.is_ok() {
                self.env.record(RmqNote::SendRefused { topic: topic.to_string(), queue: *queue_id, code });
            }
            self.env.send_on(p.channel, Body::Rmq(RmqMsg::SendMessageReply { reply_to: p.id, code }));
            return;
        }
        for done in self.remoting.on_packet(p) {
            self.done(done, ctx);
        }
    }
}

impl Handler<RequestTimeouts> for Broker {
    type Result = ();
    fn handle(&mut self, _: RequestTimeouts, ctx: &mut Context<Self>) {
        for done in self.remoting.on_timeouts() {
            self.done(done, ctx);
        }
    }
}

impl Handler<Stop> for Broker {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
