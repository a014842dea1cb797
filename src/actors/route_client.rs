//! The route client actor: a producer's or consumer's `MQClientInstance` route refresh.
//!
//! 10 ms after start and then every `poll_interval` it asks its chosen name server for each
//! topic's route (`GET_ROUTEINFO_BY_TOPIC`, 3 s timeout). A failed or timed-out request closes
//! the channel and makes the next poll choose another name server. The cache logic — including
//! keeping a stale route on `TOPIC_NOT_EXIST` — is `rocketmq::client::RouteClientCore`.

use crate::actors::env::{Env, Stop};
use crate::actors::network::TimerId;
use crate::rocketmq::client::{RouteClientCore, RouteUpdate};
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::subject::describe_route_brief;
use crate::sim::ids::NodeId;
use crate::sim::packet::{Body, MsgId, Notice, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// `MQClientInstance.startScheduledTask`: the first route refresh runs 10 ms after start.
const FIRST_POLL_DELAY: SimDuration = SimDuration::from_millis(10);
/// Groups listed in a trace line about a route; bigger routes are counted, not listed.
const VIEW_GROUPS: usize = 8;

pub struct RouteClient {
    env: Env,
    core: Rc<RefCell<RouteClientCore>>,
    namesrvs: BTreeMap<String, NodeId>,
    topics: Vec<String>,
    poll_interval: SimDuration,
    timeout: SimDuration,
    /// Requests in flight: id → (topic, name server, timeout timer).
    pending: BTreeMap<MsgId, (String, String, TimerId)>,
}

impl RouteClient {
    pub fn new(
        env: Env,
        core: Rc<RefCell<RouteClientCore>>,
        namesrvs: BTreeMap<String, NodeId>,
        topics: Vec<String>,
        poll_interval: SimDuration,
        timeout: SimDuration,
    ) -> Self {
        RouteClient { env, core, namesrvs, topics, poll_interval, timeout, pending: BTreeMap::new() }
    }

    fn poll(&mut self, ctx: &mut Context<Self>) {
        for topic in self.topics.clone() {
            let ns = self.core.borrow_mut().namesrv().to_string();
            let id = self.env.send(self.namesrvs[&ns], Body::Rmq(RmqMsg::GetRouteInfo { topic: topic.clone() }));
            let timer = self.env.after(self.timeout, &ctx.address(), PollTimeout(id));
            self.pending.insert(id, (topic, ns, timer));
        }
    }

    fn failed(&mut self, id: MsgId, reason: String) {
        let Some((_, ns, timer)) = self.pending.remove(&id) else { return };
        self.env.net.cancel(timer);
        self.core.borrow_mut().channel_failed(&ns);
        self.env.record(RmqNote::PollFailed { namesrv: ns, reason });
    }

    fn answered(
        &mut self,
        id: MsgId,
        topic: &str,
        route: Option<std::sync::Arc<crate::rocketmq::types::TopicRouteData>>,
    ) {
        let Some((_, namesrv, timer)) = self.pending.remove(&id) else { return };
        self.env.net.cancel(timer);
        let update = self.core.borrow_mut().on_route(topic, route);
        let view = || describe_route_brief(self.core.borrow().route(topic), VIEW_GROUPS);
        let topic = topic.to_string();
        let note = match update {
            RouteUpdate::Changed => {
                let brokers = self
                    .core
                    .borrow()
                    .route(&topic)
                    .map(|r| r.queue_datas.iter().map(|q| q.broker_name.clone()).collect())
                    .unwrap_or_default();
                RmqNote::RouteChanged { view: view(), topic, namesrv, brokers }
            }
            RouteUpdate::Unchanged => RmqNote::RoutePolled { topic, namesrv },
            RouteUpdate::NotExistKeptOld => RmqNote::TopicNotExistKeptOld { view: view(), topic, namesrv },
            RouteUpdate::NotExist => RmqNote::TopicNotExist { topic, namesrv },
        };
        self.env.record(note);
    }
}

impl Actor for RouteClient {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let first = self.env.now() + FIRST_POLL_DELAY;
        self.env.after(FIRST_POLL_DELAY, &ctx.address(), PollTick(first));
    }
}

/// The fixed-rate route refresh, scheduled for the given instant.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PollTick(pub SimTime);

impl Handler<PollTick> for RouteClient {
    type Result = ();
    fn handle(&mut self, PollTick(scheduled): PollTick, ctx: &mut Context<Self>) {
        self.poll(ctx);
        let (next, delay) = self.env.fixed_rate_delay(scheduled, self.poll_interval);
        self.env.after(delay, &ctx.address(), PollTick(next));
    }
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct PollTimeout(MsgId);

impl Handler<PollTimeout> for RouteClient {
    type Result = ();
    fn handle(&mut self, PollTimeout(id): PollTimeout, _: &mut Context<Self>) {
        // clientCloseSocketIfTimeout: the timed-out channel is closed, so the next request
        // chooses a name server again.
        if let Some((_, ns, _)) = self.pending.get(&id) {
            if let Some(channel) = self.env.net.current_channel(self.env.node, self.namesrvs[ns]) {
                self.env.net.close(self.env.node, channel, "request timed out");
            }
        }
        self.failed(id, format!("no answer within {}", self.timeout));
    }
}

impl Handler<Packet> for RouteClient {
    type Result = ();
    fn handle(&mut self, p: Packet, _: &mut Context<Self>) {
        match p.body {
            Body::Rmq(RmqMsg::RouteInfo { reply_to, topic, route }) => self.answered(reply_to, &topic, route),
            Body::Notice(Notice::SendFailed { msg, reason, .. }) => self.failed(msg, format!("{reason:?}")),
            _ => {}
        }
    }
}

impl Handler<Stop> for RouteClient {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
