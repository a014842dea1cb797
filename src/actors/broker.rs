//! The broker actor: registers with every name server, heartbeats in acting-master mode, and
//! unregisters on a graceful shutdown. Its decisions live in `rocketmq::broker::BrokerCore`.

use crate::actors::env::{Env, Stop};
use crate::actors::network::{Stop as ProcStop, TimerId};
use crate::rocketmq::broker::{BrokerCore, TopicChange};
use crate::rocketmq::notes::{RegisterReason, RmqNote};
use crate::rocketmq::types::perm;
use crate::rocketmq::wire::{HeartbeatRequest, RmqMsg};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::NodeId;
use crate::sim::packet::{Body, MsgId, Notice, Packet};
use actix::prelude::*;
use std::sync::Arc;

/// `BrokerOuterAPI.unregisterBrokerAll`: `invokeSync(..., 3000)` per name server, in turn.
const UNREGISTER_TIMEOUT: SimDuration = SimDuration::from_secs(3);
/// `BrokerController.start`: the periodic registration starts 10 s after start-up.
const FIRST_PERIODIC_DELAY: SimDuration = SimDuration::from_secs(10);

pub struct Broker {
    env: Env,
    core: BrokerCore,
    namesrvs: Vec<(String, NodeId)>,
    /// Set once `shutdown()` begins: `doRegisterBrokerAll` refuses to register after that.
    shutdown: Option<Unregistering>,
}

/// Progress of `unregisterBrokerAll`: the name server being asked and its timeout.
struct Unregistering {
    next: usize,
    waiting: Option<(MsgId, TimerId)>,
}

impl Broker {
    pub fn new(env: Env, core: BrokerCore, namesrvs: Vec<(String, NodeId)>) -> Self {
        Broker { env, core, namesrvs, shutdown: None }
    }

    fn register(&self, reason: RegisterReason, changed: Option<&[String]>) {
        if self.shutdown.is_some() {
            return;
        }
        let request = match changed {
            Some(topics) => self.core.incremental_registration(topics),
            None => self.core.full_registration(),
        };
        let topics = request.topic_config_wrapper.as_ref().map_or(0, |w| w.topic_config_table.len());
        self.env.record(RmqNote::RegisterSent {
            reason,
            namesrvs: self.namesrvs.iter().map(|(n, _)| n.clone()).collect(),
            topics,
            version: self.core.data_version().to_string(),
            id: request.broker_id,
        });
        let request = Arc::new(request);
        for (_, ns) in &self.namesrvs {
            self.env.send(*ns, Body::Rmq(RmqMsg::RegisterBroker(request.clone())));
        }
    }

    fn heartbeat(&self) {
        let c = &self.core.config;
        let request = Arc::new(HeartbeatRequest {
            cluster: c.cluster.clone(),
            addr: c.addr.clone(),
            broker_name: c.broker_name.clone(),
            broker_id: c.broker_id,
            data_version: self.core.data_version(),
        });
        for (_, ns) in &self.namesrvs {
            self.env.send(*ns, Body::Rmq(RmqMsg::QueryDataVersion(request.clone())));
        }
        self.env.record(RmqNote::HeartbeatSent { namesrvs: self.namesrvs.len() });
    }

    /// Asks the next name server to unregister us, or finishes the shutdown.
    fn unregister_next(&mut self, ctx: &mut Context<Self>) {
        let Some(state) = &mut self.shutdown else { return };
        let Some((name, node)) = self.namesrvs.get(state.next).cloned() else {
            self.env.record(RmqNote::ShutdownComplete);
            self.env.net.stop_process(self.env.node, ProcStop::Exit);
            ctx.stop();
            return;
        };
        state.next += 1;
        let request = self.core.unregister_request();
        let id = self.env.send(node, Body::Rmq(RmqMsg::UnregisterBroker { request: Box::new(request) }));
        let timer = self.env.after(UNREGISTER_TIMEOUT, &ctx.address(), UnregisterTimeout(id));
        if let Some(s) = &mut self.shutdown {
            s.waiting = Some((id, timer));
        }
        self.env.record(RmqNote::UnregisterSent { namesrv: name });
    }

    /// The current unregister request ended (reply, failure or timeout): move on.
    fn unregister_done(&mut self, id: MsgId, ctx: &mut Context<Self>) {
        let Some(state) = &mut self.shutdown else { return };
        if let Some((waiting, timer)) = state.waiting {
            if waiting == id {
                state.waiting = None;
                self.env.net.cancel(timer);
                self.unregister_next(ctx);
            }
        }
    }

    fn namesrv_name(&self, node: NodeId) -> String {
        self.namesrvs.iter().find(|(_, n)| *n == node).map_or_else(|| self.env.net.name(node), |(s, _)| s.clone())
    }
}

impl Actor for Broker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // `BrokerController.start`: one forced registration now, then a fixed-rate task.
        self.register(RegisterReason::Startup, None);
        let first = self.env.now() + FIRST_PERIODIC_DELAY;
        self.env.after(FIRST_PERIODIC_DELAY, &ctx.address(), RegisterTick(first));
        if self.core.config.enable_acting_master {
            let period = self.core.config.heartbeat_interval;
            self.env.after(period, &ctx.address(), HeartbeatTick(self.env.now() + period));
        }
    }
}

/// The fixed-rate registration task, scheduled for the given instant.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RegisterTick(pub SimTime);

impl Handler<RegisterTick> for Broker {
    type Result = ();
    fn handle(&mut self, RegisterTick(scheduled): RegisterTick, ctx: &mut Context<Self>) {
        self.register(RegisterReason::Periodic, None);
        let (next, delay) = self.env.fixed_rate_delay(scheduled, self.core.config.effective_register_period());
        self.env.after(delay, &ctx.address(), RegisterTick(next));
    }
}

/// The 1 s lightweight heartbeat (acting-master mode only).
#[derive(Message)]
#[rtype(result = "()")]
pub struct HeartbeatTick(pub SimTime);

impl Handler<HeartbeatTick> for Broker {
    type Result = ();
    fn handle(&mut self, HeartbeatTick(scheduled): HeartbeatTick, ctx: &mut Context<Self>) {
        if self.shutdown.is_some() {
            return;
        }
        self.heartbeat();
        let (next, delay) = self.env.fixed_rate_delay(scheduled, self.core.config.heartbeat_interval);
        self.env.after(delay, &ctx.address(), HeartbeatTick(next));
    }
}

impl Handler<Packet> for Broker {
    type Result = ();
    fn handle(&mut self, p: Packet, ctx: &mut Context<Self>) {
        match p.body {
            Body::Rmq(RmqMsg::RegisterBrokerReply { ok: false, .. }) => {
                let namesrv = self.namesrv_name(p.from);
                self.env.record(RmqNote::RequestFailed {
                    namesrv,
                    request: "REGISTER_BROKER",
                    reason: "SYSTEM_ERROR register broker failed".into(),
                });
            }
            Body::Rmq(RmqMsg::UnregisterBrokerReply { reply_to, .. }) => self.unregister_done(reply_to, ctx),
            Body::Notice(Notice::SendFailed { msg, to, reason }) => {
                let namesrv = self.namesrv_name(to);
                self.env.record(RmqNote::RequestFailed { namesrv, request: "request", reason: format!("{reason:?}") });
                self.unregister_done(msg, ctx);
            }
            // Replies to successful registrations and channel events need no action: the next
            // registration opens a new channel if this one closed.
            _ => {}
        }
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct UnregisterTimeout(MsgId);

impl Handler<UnregisterTimeout> for Broker {
    type Result = ();
    fn handle(&mut self, UnregisterTimeout(id): UnregisterTimeout, ctx: &mut Context<Self>) {
        self.env.record(RmqNote::RequestFailed {
            namesrv: "?".into(),
            request: "UNREGISTER_BROKER",
            reason: "timed out after 3s".into(),
        });
        self.unregister_done(id, ctx);
    }
}

/// SIGTERM: the shutdown hook unregisters from every configured name server, one at a time.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

impl Handler<Shutdown> for Broker {
    type Result = ();
    fn handle(&mut self, _: Shutdown, ctx: &mut Context<Self>) {
        if self.shutdown.is_none() {
            self.shutdown = Some(Unregistering { next: 0, waiting: None });
            self.unregister_next(ctx);
        }
    }
}

/// An operator changes the broker's topics; it re-registers them at once.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ChangeTopics(pub TopicChange);

impl Handler<ChangeTopics> for Broker {
    type Result = ();
    fn handle(&mut self, ChangeTopics(change): ChangeTopics, _: &mut Context<Self>) {
        let detail = match &change {
            TopicChange::Upsert(t) => format!(
                "upsert {} {}r/{}w {}",
                t.topic_name,
                t.read_queue_nums,
                t.write_queue_nums,
                perm::to_text(t.perm)
            ),
            TopicChange::Delete(t) => format!("delete {t} (no registration is sent for a delete)"),
        };
        let changed = self.core.change_topics(self.env.now(), change);
        self.env.record(RmqNote::TopicsChanged { detail, version: self.core.data_version().to_string() });
        if !changed.is_empty() {
            self.register(RegisterReason::TopicsChanged, Some(&changed));
        }
    }
}

/// `brokerId` changes (a slave promoted); the broker registers under its new id at once.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetBrokerId(pub u64);

impl Handler<SetBrokerId> for Broker {
    type Result = ();
    fn handle(&mut self, SetBrokerId(id): SetBrokerId, _: &mut Context<Self>) {
        let from = self.core.config.broker_id;
        self.core.set_broker_id(id);
        self.env.record(RmqNote::BrokerIdChanged { from, to: id });
        self.register(RegisterReason::IdChanged, None);
    }
}

/// `updateBrokerConfig brokerPermission=N`: new DataVersion, immediate registration.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetPermission(pub u32);

impl Handler<SetPermission> for Broker {
    type Result = ();
    fn handle(&mut self, SetPermission(p): SetPermission, _: &mut Context<Self>) {
        self.core.set_permission(self.env.now(), p);
        self.env.record(RmqNote::PermissionChanged { perm: perm::to_text(p) });
        self.register(RegisterReason::PermissionChanged, None);
    }
}

impl Handler<Stop> for Broker {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
