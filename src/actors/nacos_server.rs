//! The Nacos naming server actor: `InstanceController` in front of the 2.x ephemeral client
//! model, and the push engine that tells UDP subscribers.
//!
//! It is the server's network endpoint. Registrations, deregistrations, beats and list queries go
//! to `nacos::naming::NamingServer` and are answered at once. Every change the core reports
//! becomes a trace line and a `PushDelayTask`; the merged tasks run on the push engine's 100 ms
//! grid, at least 500 ms later, and each sends the service's current data to its subscribers. The
//! beat checks run in a second actor, `nacos_health::HealthChecker`, over the same core — as
//! Nacos runs them on another thread over the same objects. The push side is `nacos_server/push.rs`.

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::nacos_health::{HealthChecker, Rearm};
use crate::actors::network::TimerId;
use crate::nacos::naming::{Change, NamingServer};
use crate::nacos::notes::NacosNote;
use crate::nacos::push::PushEngine;
use crate::nacos::types::{ClientKey, ServiceInfo, CODE_RESOURCE_NOT_FOUND};
use crate::nacos::wire::{Answer, BeatReq, NacosMsg};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::NodeId;
use crate::sim::packet::{Body, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

mod push;
pub use push::PushResumed;

pub struct NacosServer {
    env: Env,
    push_env: Env,
    core: Rc<RefCell<NamingServer>>,
    checker: Option<Local<HealthChecker>>,
    /// Its own address: where its timers' messages go.
    me: Local<NacosServer>,
    push: PushEngine,
    push_timer: Option<(SimTime, TimerId)>,
    /// Where each UDP subscriber (`clientIP:udpPort`) lives, learned from its list queries.
    udp: BTreeMap<ClientKey, NodeId>,
    /// `UdpConnector.ackMap`: pushes sent and not acknowledged yet, by ack key.
    unacked: BTreeMap<u64, Unacked>,
    next_ack: u64,
    /// `ServerMemberManager`'s report task, for a server in a `cluster`.
    member: Option<crate::actors::nacos_member::Membership>,
    /// The gRPC side (`ConnectionManager`), when the scenario has 2.x clients.
    grpc: Option<crate::actors::nacos_grpc_server::GrpcConnections>,
    /// Distro, for a cluster member serving 2.x clients.
    distro: Option<crate::actors::nacos_distro::Distro>,
    /// `DistroFilter`, for a cluster member: 1.x requests for other members' instances.
    pub(super) filter: Option<crate::actors::nacos_filter::DistroFilter>,
}

/// A push waiting for its ack (`AckEntry`).
struct Unacked {
    service: crate::nacos::types::ServiceKey,
    subscriber: ClientKey,
    node: NodeId,
    data: Arc<ServiceInfo>,
    /// `AckEntry.retryTimes`: 1 after the first send.
    sends: u32,
}

/// `Constants.ACK_TIMEOUT_NANOS`: a push not acknowledged within 10 s is sent again.
pub const UDP_ACK_TIMEOUT: SimDuration = SimDuration::from_secs(10);
/// `Constants.UDP_MAX_RETRY_TIMES`: one resend; then the push is given up.
pub const UDP_MAX_RETRY_TIMES: u32 = 1;

impl NacosServer {
    pub fn new(env: Env, core: Rc<RefCell<NamingServer>>, push_delay: SimDuration, me: Local<NacosServer>) -> Self {
        let push = PushEngine::new(env.now(), push_delay.millis());
        NacosServer {
            push_env: env.part("push"),
            env,
            core,
            checker: None,
            me,
            push,
            push_timer: None,
            udp: BTreeMap::new(),
            unacked: BTreeMap::new(),
            next_ack: 0,
            member: None,
            grpc: None,
            distro: None,
            filter: None,
        }
    }

    /// Serves 2.x gRPC clients; the director arms the first `EjectTick`.
    pub fn set_grpc(&mut self, grpc: crate::actors::nacos_grpc_server::GrpcConnections) {
        self.grpc = Some(grpc);
    }

    pub(crate) fn grpc(&mut self) -> Option<&mut crate::actors::nacos_grpc_server::GrpcConnections> {
        self.grpc.as_mut()
    }

    /// Makes this server a cluster member; the director arms its first `MemberTick`.
    pub fn set_membership(&mut self, member: crate::actors::nacos_member::Membership) {
        self.member = Some(member);
    }

    /// Makes this member sync its gRPC clients with the others; the director arms the first
    /// `VerifyTick`.
    pub fn set_distro(&mut self, distro: crate::actors::nacos_distro::Distro) {
        self.distro = Some(distro);
    }

    pub(crate) fn distro(&mut self) -> Option<&mut crate::actors::nacos_distro::Distro> {
        self.distro.as_mut()
    }

    pub(crate) fn membership(&mut self) -> Option<&mut crate::actors::nacos_member::Membership> {
        self.member.as_mut()
    }

    /// The health checker that takes this server's `Rearm`s (each knows the other's address).
    pub fn set_checker(&mut self, checker: Local<HealthChecker>) {
        self.checker = Some(checker);
    }

    fn reply(&self, p: &Packet, answer: Answer) {
        self.env.send_on(p.channel, Body::Nacos(NacosMsg::Reply { reply_to: p.id, answer }));
    }

    /// `InstanceController#beat`, answered; the changes it made are returned, for
    /// [`changed`](Self::changed) to trace and push.
    /// Nearly every beat keeps a healthy instance healthy: answered, nothing changed. Such a
    /// beat only moves its client's thresholds later, so it makes no client due before the
    /// health checker's alarm (a request that did has told the checker already): unlike every
    /// other request, it needs no look at the checker (`wake_checker`; 2% of the Nacos bench's
    /// instructions when each beat asked). Returns whether it was one.
    fn steady_beat(&mut self, p: &Packet, req: &BeatReq, now: SimTime) -> bool {
        let steady = self.core.borrow_mut().beat_steady(now, req);
        if let Some(reply) = steady {
            self.reply(p, Answer::Beat(reply));
        }
        steady.is_some()
    }

    /// Any other beat: an unknown instance (20404), a health flip, an error.
    fn beat(&mut self, p: &Packet, req: &BeatReq, now: SimTime) -> Vec<Change> {
        let (answer, changes) = self.core.borrow_mut().handle_beat(now, req);
        let client = || ClientKey::new(&req.ip, req.port);
        match &answer {
            Answer::Beat(r) if r.code == CODE_RESOURCE_NOT_FOUND => {
                self.env.record(NacosNote::BeatNotFound { service: req.service.clone(), client: client() })
            }
            Answer::Error { status, message } => self.env.record(NacosNote::BeatFailed {
                service: req.service.clone(),
                client: client(),
                status: *status,
                message: message.clone(),
            }),
            _ => {}
        }
        self.reply(p, answer);
        changes
    }

    /// Traces the changes, queues their pushes, and wakes the checker if a client became due
    /// earlier than it planned to wake.
    pub(crate) fn changed(&mut self, changes: Vec<Change>) {
        for change in changes {
            self.queue_pushes(&change);
            self.env.record(NacosNote::from(change));
        }
        self.rearm_push();
        self.wake_checker();
        self.distro_collect();
    }

    pub(crate) fn wake_checker(&self) {
        if self.core.borrow().wake_earlier() {
            if let Some(checker) = &self.checker {
                checker.do_send(Rearm);
            }
        }
    }
}

impl Actor for NacosServer {
    type Context = Context<Self>;
}

impl Handler<Packet> for NacosServer {
    type Result = ();
    fn handle(&mut self, p: Packet, ctx: &mut Context<Self>) {
        if self.on_filter(&p, ctx) {
            return;
        }
        if self.member.as_mut().is_some_and(|m| m.on_packet(&p)) {
            self.distro_refresh();
            return;
        }
        if self.on_grpc(&p) {
            return;
        }
        if self.on_distro(&p) {
            return;
        }
        let Body::Nacos(msg) = &p.body else { return };
        let now = self.env.now();
        let changes = match msg {
            NacosMsg::Register(req) => {
                let source = crate::nacos::naming::RegisterSource::Request;
                let changes = self.core.borrow_mut().register(now, &req.service, &req.instance, source);
                self.reply(&p, Answer::Ok);
                changes
            }
            NacosMsg::Deregister(req) => {
                let changes = self.core.borrow_mut().deregister(now, req);
                self.reply(&p, Answer::Ok);
                changes
            }
            NacosMsg::Beat(req) => {
                if self.steady_beat(&p, req, now) {
                    return p.discard();
                }
                self.beat(&p, req, now)
            }
            NacosMsg::List(req) => {
                self.udp.insert(ClientKey::new(&req.client_ip, req.udp_port), p.from);
                let (info, changes) = self.core.borrow_mut().list(now, req);
                self.reply(&p, Answer::List(info));
                changes
            }
            NacosMsg::PushAck { ack } => {
                // UdpReceiver: the ack removes the AckEntry; no retry will follow.
                self.unacked.remove(ack);
                return;
            }
            NacosMsg::MemberReport { from } => {
                if let Some(member) = &mut self.member {
                    member.on_report_from(from);
                }
                self.distro_refresh();
                self.reply(&p, Answer::Ok);
                return;
            }
            // Replies and pushes are not for a server; gRPC went to `grpc` above (none: no 2.x
            // clients in the scenario, so nobody sends any).
            NacosMsg::Reply { .. }
            | NacosMsg::Push { .. }
            | NacosMsg::Grpc(_)
            | NacosMsg::DistroData { .. }
            | NacosMsg::DistroVerify { .. }
            | NacosMsg::DistroSnapshot { .. }
            | NacosMsg::DistroSnapshotData { .. }
            | NacosMsg::Proxied { .. } => return,
        };
        if !changes.is_empty() {
            self.changed(changes);
        } else {
            self.wake_checker();
        }
    }
}

/// Changes found by the health checker: they need pushes like the server's own.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Publish(pub Vec<Change>);

impl Handler<Publish> for NacosServer {
    type Result = ();
    fn handle(&mut self, Publish(changes): Publish, _: &mut Context<Self>) {
        for change in &changes {
            self.queue_pushes(change);
        }
        self.rearm_push();
        // The owner's checks change its 1.x clients: Distro sends them on.
        self.distro_collect();
    }
}

impl Handler<Stop> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        if let Some(checker) = &self.checker {
            checker.do_send(Stop);
        }
        ctx.stop();
    }
}

/// The console's `PUT /nacos/v1/ns/instance` (`InstanceController#update`): see
/// `nacos::naming::NamingServer::update_instance`.
#[derive(Message, Clone)]
#[rtype(result = "()")]
pub struct UpdateInstance {
    pub service: crate::nacos::types::ServiceKey,
    pub client: ClientKey,
    pub cluster: Arc<str>,
    pub metadata: Arc<crate::nacos::types::Metadata>,
}

impl Handler<UpdateInstance> for NacosServer {
    type Result = ();
    fn handle(&mut self, m: UpdateInstance, _: &mut Context<Self>) {
        let now = self.env.now();
        let result = self.core.borrow_mut().update_instance(now, &m.service, &m.client, &m.cluster, m.metadata);
        match result {
            Ok(changes) => self.changed(changes),
            Err(message) => self.env.record(NacosNote::MetadataRefused {
                service: m.service,
                client: m.client,
                message: Arc::from(message),
            }),
        }
    }
}

/// `PUT /nacos/v1/ns/operator/switches` (`OperatorController#updateSwitch`).
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetSwitches(pub crate::nacos::naming::Switches);

impl Handler<SetSwitches> for NacosServer {
    type Result = ();
    fn handle(&mut self, SetSwitches(set): SetSwitches, _: &mut Context<Self>) {
        self.core.borrow_mut().set_switches(set);
        let config = self.core.borrow().config().clone();
        self.env.record(NacosNote::SwitchesSet {
            set,
            client_beat_interval: config.client_beat_interval,
            light_beat_enabled: config.light_beat_enabled,
        });
    }
}
