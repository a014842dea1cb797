//! The route client actor: a producer's or consumer's `MQClientInstance` route refresh.
//!
//! 10 ms after start and then every `poll_interval` (fixed rate) it runs
//! `updateTopicRouteInfoFromNameServer()`: for each topic in turn, `GET_ROUTEINFO_BY_TOPIC` to
//! its chosen name server (`invokeSync(null, ..., mqClientApiTimeout = 3 s)`), each request
//! waiting for the one before. A request that times out closes the channel, so the next one
//! chooses another name server; a dead name server therefore costs one timeout per round, not
//! one per topic. The cache logic — including keeping a stale route on `TOPIC_NOT_EXIST` — is
//! `rocketmq::client::RouteClientCore`.

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::remoting::{Done, Remoting, RequestTimeouts};
use crate::rocketmq::client::{RouteClientCore, RouteUpdate};
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::types::TopicRouteData;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::subject::describe_route_brief;
use crate::sim::packet::Packet;
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// `MQClientInstance.startScheduledTask`: the first route refresh runs 10 ms after start.
const FIRST_POLL_DELAY: SimDuration = SimDuration::from_millis(10);
/// `MQClientInstance.startScheduledTask`: `cleanOfflineBroker` (with the broker heartbeats, which
/// the model does not send) runs 1 s after start, then every `heartbeatBrokerInterval`, 30 s.
const FIRST_CLEAN_DELAY: SimDuration = SimDuration::from_millis(1_000);
const CLEAN_INTERVAL: SimDuration = SimDuration::from_millis(30_000);
/// Groups listed in a trace line about a route; bigger routes are counted, not listed.
const VIEW_GROUPS: usize = 8;

pub struct RouteClient {
    env: Env,
    core: Rc<RefCell<RouteClientCore>>,
    remoting: Remoting<String>,
    topics: Vec<String>,
    poll_interval: SimDuration,
    timeout: SimDuration,
    /// The round in progress: when it was scheduled, and the topics still to ask for.
    round: Option<(SimTime, VecDeque<String>)>,
    /// A `cleanOfflineBroker` that came due during a round: both tasks run on the client's one
    /// scheduler thread, so it waits for the round to end.
    clean_waiting: bool,
    /// Whether the process has producers (which take the brokers' traffic themselves: see
    /// `Net::share_endpoint`).
    producers: bool,
    /// Its own address: where its timers' messages go.
    me: Local<RouteClient>,
}

impl RouteClient {
    /// `remoting` is the process's client to the name servers, whose alarm rings `me`.
    pub fn new(
        env: Env,
        core: Rc<RefCell<RouteClientCore>>,
        remoting: Remoting<String>,
        topics: Vec<String>,
        poll_interval: SimDuration,
        timeout: SimDuration,
        me: Local<RouteClient>,
    ) -> Self {
        RouteClient {
            env,
            core,
            remoting,
            topics,
            poll_interval,
            timeout,
            round: None,
            clean_waiting: false,
            producers: false,
            me,
        }
    }

    /// The process has producers: the client then also runs `cleanOfflineBroker`.
    pub fn with_producers(mut self) -> Self {
        self.producers = true;
        self
    }

    /// Asks for the next topic of the round, or ends the round.
    fn next_topic(&mut self) {
        let Some((scheduled, queue)) = &mut self.round else { return };
        let Some(topic) = queue.pop_front() else {
            // `scheduleAtFixedRate`: the next round is one period after this one was due.
            let scheduled = *scheduled;
            self.round = None;
            let (next, delay) = self.env.fixed_rate_delay(scheduled, self.poll_interval);
            self.env.after(delay, self.me.clone(), PollTick(next));
            if std::mem::take(&mut self.clean_waiting) {
                self.core.borrow_mut().clean_offline_broker();
            }
            return;
        };
        let ns = self.remoting.choose();
        self.core.borrow_mut().set_current(ns);
        let msg = RmqMsg::GetRouteInfo { topic: topic.clone() };
        self.remoting.invoke_sync(ns, msg, self.timeout, topic);
    }

    fn done(&mut self, done: Done<String>) {
        match done {
            Done::Answered { purpose: topic, namesrv, reply: RmqMsg::RouteInfo { route, .. } } => {
                let namesrv = self.remoting.name(namesrv).to_string();
                self.answered(&topic, namesrv, route);
            }
            Done::Answered { .. } => {}
            Done::Failed { namesrv, failure, .. } => {
                let namesrv = self.remoting.name(namesrv).to_string();
                self.env.record(RmqNote::PollFailed { namesrv, reason: failure.to_string() });
            }
        }
        self.next_topic();
    }

    fn answered(&mut self, topic: &str, namesrv: String, route: Option<Rc<TopicRouteData>>) {
        let update = self.core.borrow_mut().on_route(topic, route);
        let view = || describe_route_brief(self.core.borrow().route(topic), VIEW_GROUPS);
        let topic = topic.to_string();
        let note = match update {
            RouteUpdate::Changed => {
                let brokers = self
                    .core
                    .borrow()
                    .route(&topic)
                    .map(|r| r.queue_datas.iter().map(|q| q.broker_name).collect())
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

    fn started(&mut self, _: &mut Context<Self>) {
        let first = self.env.now() + FIRST_POLL_DELAY;
        self.env.after(FIRST_POLL_DELAY, self.me.clone(), PollTick(first));
        // Only a producer reads the broker address table.
        if self.producers {
            let first = self.env.now() + FIRST_CLEAN_DELAY;
            self.env.after(FIRST_CLEAN_DELAY, self.me.clone(), CleanTick(first));
        }
    }
}

/// The fixed-rate `cleanOfflineBroker`, scheduled for the given instant.
#[derive(Message)]
#[rtype(result = "()")]
struct CleanTick(SimTime);

impl Handler<CleanTick> for RouteClient {
    type Result = ();
    fn handle(&mut self, CleanTick(scheduled): CleanTick, _: &mut Context<Self>) {
        match self.round {
            Some(_) => self.clean_waiting = true,
            None => self.core.borrow_mut().clean_offline_broker(),
        }
        let (next, delay) = self.env.fixed_rate_delay(scheduled, CLEAN_INTERVAL);
        self.env.after(delay, self.me.clone(), CleanTick(next));
    }
}

/// The fixed-rate route refresh, scheduled for the given instant.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PollTick(pub SimTime);

impl Handler<PollTick> for RouteClient {
    type Result = ();
    fn handle(&mut self, PollTick(scheduled): PollTick, _: &mut Context<Self>) {
        self.round = Some((scheduled, self.topics.iter().cloned().collect()));
        self.next_topic();
    }
}

impl Handler<RequestTimeouts> for RouteClient {
    type Result = ();
    fn handle(&mut self, _: RequestTimeouts, _: &mut Context<Self>) {
        for done in self.remoting.on_timeouts() {
            self.done(done);
        }
    }
}

impl Handler<Packet> for RouteClient {
    type Result = ();
    fn handle(&mut self, p: Packet, _: &mut Context<Self>) {
        for done in self.remoting.on_packet(p) {
            self.done(done);
        }
    }
}

impl Handler<Stop> for RouteClient {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
