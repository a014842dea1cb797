//! The name server's route-table actor: the `DefaultRequestProcessor` and
//! `BrokerHousekeepingService` in front of `RouteInfoManager`.
//!
//! It is the name server's network endpoint. Registrations, heartbeats and route queries are
//! applied to the table at once; unregistrations — requested, or caused by a closed channel —
//! only go into the batcher's queue, exactly as in RocketMQ 5.x, and come back later as one
//! batch. That two-phase removal is what lets a fresh registration be wiped (#11043).

use crate::actors::batcher::{Batcher, Submit};
use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::scanner::Scanner;
use crate::rocketmq::notes::{Registration, RmqNote, UnregisterBatch, UnregisterSource};
use crate::rocketmq::route_table::RouteInfoManager;
use crate::rocketmq::tap::{AdminInput, Input};
use crate::rocketmq::types::{broker_label, RegisterBrokerRequest, TopicRouteData, UnregisterRequest};
use crate::rocketmq::wire::RmqMsg;
use crate::sim::ids::ChannelId;
use crate::sim::packet::{Body, CloseKind, Notice, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

pub struct RouteTable {
    env: Env,
    table: Rc<RefCell<RouteInfoManager>>,
    batcher: Local<Batcher>,
    scanner: Local<Scanner>,
    /// Answers already built, valid while the table's revision is unchanged. Java builds a
    /// fresh copy per request; sharing one immutable snapshot gives every client the same data
    /// and spares copying a 1,000-broker route thousands of times an hour.
    answers: BTreeMap<String, Option<Rc<TopicRouteData>>>,
    answers_revision: u64,
}

impl RouteTable {
    pub fn new(
        env: Env,
        table: Rc<RefCell<RouteInfoManager>>,
        batcher: Local<Batcher>,
        scanner: Local<Scanner>,
    ) -> Self {
        RouteTable { env, table, batcher, scanner, answers: BTreeMap::new(), answers_revision: 0 }
    }

    /// `pickupTopicRouteData`, through the snapshot cache.
    fn route(&mut self, topic: &str) -> Option<Rc<TopicRouteData>> {
        let table = self.table.borrow();
        if table.revision() != self.answers_revision {
            self.answers.clear();
            self.answers_revision = table.revision();
        }
        self.answers
            .entry(topic.to_string())
            .or_insert_with(|| table.pickup_topic_route_data(topic).map(Rc::new))
            .clone()
    }

    fn register(&mut self, p: &Packet, req: &RegisterBrokerRequest) {
        let now = self.env.now();
        let mut out = self.table.borrow_mut().register_broker(now, req, p.channel);
        let broker = || broker_label(&req.broker_name, req.broker_id, &req.broker_addr);
        if out.result.is_none() {
            let reason = "single-topic registration for an unknown broker id (#4522 guard): SYSTEM_ERROR";
            self.env.record(RmqNote::RegisterRefused { broker: broker(), reason });
        } else if out.conflict {
            let reason = "an older address with a newer state version is live: ignored";
            self.env.record(RmqNote::RegisterRefused { broker: broker(), reason });
        } else {
            let timeout =
                req.heartbeat_timeout_millis.unwrap_or(crate::rocketmq::types::DEFAULT_BROKER_CHANNEL_EXPIRED_TIME);
            self.env.record(RmqNote::Registered(Registration {
                cluster: req.cluster_name,
                addr: req.broker_addr,
                broker_name: req.broker_name,
                id: req.broker_id,
                channel: p.channel,
                first: out.register_first,
                new_channel: out.previous_channel.is_some_and(|c| c != p.channel),
                topics_updated: std::mem::take(&mut out.topics_updated),
                timeout,
            }));
        }
        if let Some(change) = out.min_broker_id_changed.map(|change| *change) {
            self.env.record(RmqNote::MinBrokerIdChanged {
                broker_name: change.broker_name,
                min_id: change.min_broker_id,
                min_addr: change.min_broker_addr,
                notify: change.notify_addrs,
            });
        }
        let ok = out.result.is_some();
        let (master_addr, ha_server_addr) = out.result.map(|r| (r.master_addr, r.ha_server_addr)).unwrap_or_default();
        let reply = RmqMsg::RegisterBrokerReply { reply_to: p.id, ok, master_addr, ha_server_addr };
        self.env.send_on(p.channel, Body::Rmq(reply));
    }

    /// `BrokerHousekeepingService.onChannelClose/onChannelIdle` → `onChannelDestroy(channel)`:
    /// find the live entry holding this exact channel and queue its unregistration.
    fn channel_destroyed(&mut self, channel: ChannelId) {
        let request = self.table.borrow().on_channel_destroy(channel);
        match request {
            Some(request) => self.submit(request, UnregisterSource::ChannelClosed),
            None => self.env.record(RmqNote::ChannelEventIgnored { channel }),
        }
    }

    /// Hands a conformance run's tap what just arrived (nothing without a tap).
    fn tap(&self, p: &Packet) {
        let input = || match &p.body {
            // The tap may hand it to another thread: a copy of its own (its topics still shared).
            Body::Rmq(RmqMsg::RegisterBroker(req)) => {
                Some(Input::Register { channel: p.channel, request: Arc::new(RegisterBrokerRequest::clone(req)) })
            }
            Body::Rmq(RmqMsg::QueryDataVersion(hb)) => Some(Input::Heartbeat {
                channel: p.channel,
                cluster: hb.cluster.clone(),
                addr: hb.addr.clone(),
                broker_name: hb.broker_name.clone(),
                broker_id: hb.broker_id,
                data_version: hb.data_version,
            }),
            Body::Rmq(RmqMsg::UnregisterBroker { request }) => {
                Some(Input::Unregister { channel: p.channel, request: (**request).clone() })
            }
            Body::Notice(Notice::ChannelClosed { channel, kind, .. }) => {
                Some(Input::ChannelClosed { channel: *channel, idle: *kind == CloseKind::Idle })
            }
            _ => None,
        };
        if self.env.obs.tap.is_some() {
            if let Some(input) = input() {
                self.env.obs.tap(self.env.now(), &self.env.label, || input);
            }
        }
    }

    fn submit(&self, request: UnregisterRequest, source: UnregisterSource) {
        let broker = request.to_string();
        self.env.record(RmqNote::UnregisterQueued { broker, source, queued: true });
        self.batcher.do_send(Submit(request));
    }
}

impl Actor for RouteTable {
    type Context = Context<Self>;
}

impl Handler<Packet> for RouteTable {
    type Result = ();
    fn handle(&mut self, p: Packet, _: &mut Context<Self>) {
        self.tap(&p);
        match &p.body {
            Body::Rmq(RmqMsg::RegisterBroker(req)) => self.register(&p, req),
            Body::Rmq(RmqMsg::QueryDataVersion(hb)) => {
                let now = self.env.now();
                let out =
                    self.table.borrow_mut().query_broker_topic_config(now, &hb.cluster, &hb.addr, &hb.data_version);
                let broker = broker_label(&hb.broker_name, hb.broker_id, &hb.addr);
                if out.refreshed {
                    self.env.record(RmqNote::HeartbeatRefreshed { broker });
                } else {
                    self.env.record(RmqNote::HeartbeatIgnored { broker });
                }
            }
            Body::Rmq(RmqMsg::UnregisterBroker { request }) => {
                // DefaultRequestProcessor#unregisterBroker only queues, then answers SUCCESS.
                self.submit((**request).clone(), UnregisterSource::Request);
                let reply = RmqMsg::UnregisterBrokerReply { reply_to: p.id, ok: true };
                self.env.send_on(p.channel, Body::Rmq(reply));
            }
            Body::Rmq(RmqMsg::GetRouteInfo { topic }) => {
                let route = self.route(topic);
                self.env.record(RmqNote::RouteServed { topic: topic.clone(), found: route.is_some() });
                let reply = RmqMsg::RouteInfo { reply_to: p.id, topic: topic.clone(), route };
                self.env.send_on(p.channel, Body::Rmq(reply));
            }
            Body::Rmq(RmqMsg::GetClusterInfo) => {
                // `getAllClusterInfo`: the answer's content does not matter to routes; the
                // request keeps this channel busy for both ends' idle timers.
                self.env.record(RmqNote::ClusterInfoServed { channel: p.channel });
                let reply = RmqMsg::GetClusterInfoReply { reply_to: p.id };
                self.env.send_on(p.channel, Body::Rmq(reply));
            }
            Body::Notice(Notice::ChannelClosed { channel, kind: CloseKind::Idle, .. }) => {
                // NettyConnectManageHandler#userEventTriggered: ALL_IDLE closes the channel and
                // raises IDLE; the close raises CLOSE (channelInactive) as well. Both reach
                // onChannelDestroy, so the entry is queued twice, like the scan's #3310 pair.
                self.channel_destroyed(*channel);
                self.channel_destroyed(*channel);
            }
            Body::Notice(Notice::ChannelClosed { channel, .. }) => self.channel_destroyed(*channel),
            _ => {}
        }
    }
}

/// A batch from the batcher: `unRegisterBroker(Set)` under one write lock.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ApplyBatch(pub Vec<UnregisterRequest>);

impl Handler<ApplyBatch> for RouteTable {
    type Result = ();
    fn handle(&mut self, ApplyBatch(batch): ApplyBatch, _: &mut Context<Self>) {
        let report = self.table.borrow_mut().un_register_broker(&batch);
        self.env.record(RmqNote::BatchApplied(Box::new(UnregisterBatch {
            size: batch.len(),
            steps: report.explain(),
            live_removed: report
                .requests
                .iter()
                .filter(|r| r.live_removed)
                .map(|r| format!("{}/{}", r.request.cluster_name, r.request.broker_addr))
                .collect(),
            groups_removed: report
                .requests
                .iter()
                .filter(|r| r.broker_name_removed)
                .map(|r| r.request.broker_name.to_string())
                .collect(),
            queue_data_removed: report.queue_data_removed.clone(),
            perm_wiped: report.write_perm_wiped.clone(),
        })));
        for change in &report.notifications {
            self.env.record(RmqNote::MinBrokerIdChanged {
                broker_name: change.broker_name.clone(),
                min_id: change.min_broker_id,
                min_addr: change.min_broker_addr.clone(),
                notify: change.notify_addrs.clone(),
            });
        }
    }
}

/// Operator actions through `mqadmin` (they arrive from the director, not over the network).
#[derive(Message)]
#[rtype(result = "()")]
pub enum Admin {
    WipeWritePerm(String),
    AddWritePerm(String),
    DeleteTopic {
        topic: String,
        cluster: Option<String>,
    },
    /// REGISTER_TOPIC_IN_NAMESRV (`DefaultRequestProcessor#registerTopicToNamesrv`).
    RegisterTopic {
        topic: String,
        queues: Vec<crate::rocketmq::types::QueueData>,
    },
    /// UNREGISTER_BROKER from someone other than the broker: queued like the broker's own.
    Unregister(UnregisterRequest),
}

impl Handler<Admin> for RouteTable {
    type Result = ();
    fn handle(&mut self, msg: Admin, _: &mut Context<Self>) {
        self.env.obs.tap(self.env.now(), &self.env.label, || {
            Input::Admin(match &msg {
                Admin::WipeWritePerm(b) => AdminInput::WipeWritePerm(b.clone()),
                Admin::AddWritePerm(b) => AdminInput::AddWritePerm(b.clone()),
                Admin::DeleteTopic { topic, cluster } => {
                    AdminInput::DeleteTopic { topic: topic.clone(), cluster: cluster.clone() }
                }
                Admin::RegisterTopic { topic, queues } => {
                    AdminInput::RegisterTopic { topic: topic.clone(), queues: queues.clone() }
                }
                Admin::Unregister(r) => AdminInput::Unregister(r.clone()),
            })
        });
        let note = match msg {
            Admin::WipeWritePerm(broker_name) => {
                let topics = self.table.borrow_mut().wipe_write_perm_of_broker(&broker_name);
                RmqNote::WritePermWiped { broker_name, topics }
            }
            Admin::AddWritePerm(broker_name) => {
                let topics = self.table.borrow_mut().add_write_perm_of_broker(&broker_name);
                RmqNote::WritePermAdded { broker_name, topics }
            }
            Admin::DeleteTopic { topic, cluster } => {
                let removed = self.table.borrow_mut().delete_topic(&topic, cluster.as_deref());
                RmqNote::TopicDeleted { topic, cluster, removed }
            }
            Admin::RegisterTopic { topic, queues } => {
                let n = queues.len();
                let complete = self.table.borrow_mut().register_topic(&topic, queues);
                RmqNote::TopicRegistered { topic, queues: n, complete }
            }
            // `submit` writes its own note (UnregisterQueued, source Request).
            Admin::Unregister(request) => return self.submit(request, UnregisterSource::Request),
        };
        self.env.record(note);
    }
}

impl Handler<Stop> for RouteTable {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.batcher.do_send(Stop);
        self.scanner.do_send(Stop);
        ctx.stop();
    }
}
