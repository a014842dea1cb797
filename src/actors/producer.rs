//! The producers of one client process: each `[[producer]]` sends on its schedule through the
//! client's `MQClientInstance` — the same route cache the route client refreshes, and one
//! remoting client (one channel per broker) for all of them, as in Java.
//!
//! The send logic is `rocketmq::producer`'s ([`Send`], [`AsyncSend`]); this actor starts sends on
//! time, puts each attempt on the simulated network as a `SEND_MESSAGE_V2` with the attempt's
//! timeout, and reports how it ended: the broker's answer, `RemotingConnectException` (the
//! connection refused, or no SYN answered within the connect timeout), or a timeout.
//!
//! Simplifications, each a choice about the Java threads around the send: sends run
//! concurrently (as from a pool of sending threads), each starting on schedule however long the
//! others take; a publish info has one round-robin index (`ThreadLocalIndex` is per thread); a
//! oneway send counts as written when it is handed to the network (which is Java's too since
//! 5.3.0: `NettyRemotingClient#invokeOneway` returns without waiting for the connection,
//! `getAndCreateChannelAsync`); a process that starts or restarts after a producer's `from`
//! begins at the schedule's next tick, not with the ticks it missed.

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::remoting::{Remoting, RequestTimeouts, Servers};
use crate::rocketmq::client::RouteClientCore;
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::producer::{
    AsyncSend, CommunicationMode, Finished, MQFaultStrategy, Outcome, Send, SendAttempt, SendEnv, SendStatus,
    SendWhichQueue, Step, TopicPublishInfo, Verdict,
};
use crate::rocketmq::types::TopicRouteData;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::clock::SimTime;
use crate::sim::ids::NodeId;
use crate::sim::invariants::AttemptSeen;
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use crate::sim::packet::Packet;
use crate::sim::scenario::ProducerSpec;
use crate::sim::world::SendRecord;
use actix::prelude::*;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

mod outcome;
use outcome::outcome;

/// A send in progress: its state machine and the attempt on the wire.
enum Machine {
    Sync(Send),
    Async(AsyncSend),
}

/// A `TopicPublishInfo` as sends hold it. `sendDefaultImpl` looks the topic's publish info up
/// once, before its loop, and every retry selects from that object
/// (`selectOneMessageQueue(topicPublishInfo, lastBrokerName, ...)`; an async retry gets it
/// passed down to `MQClientAPIImpl#onExceptionImpl`). A route update puts a *new* object in
/// `topicPublishInfoTable` (`MQClientInstance#updateTopicRouteInfoFromNameServer`), so a send in
/// flight keeps choosing among the queues it began with, and moves the index of the old one.
type Held = Rc<RefCell<TopicPublishInfo>>;

struct Flight {
    machine: Machine,
    tp: Held,
    attempt: SendAttempt,
    started: SimTime,
}

struct Producer {
    spec: ProducerSpec,
    /// `spec.name`, interned: every send's trace lines carry it.
    name: Name,
    env: Env,
    topic: Name,
    strategy: MQFaultStrategy,
    /// The publish info a send beginning now takes (`topicPublishInfoTable`'s entry).
    tp: Held,
    /// The route `tp` was built from.
    built_from: Option<Rc<TopicRouteData>>,
    next_send: u64,
    /// The schedule's next tick.
    tick: u64,
    /// Sends with an attempt on the wire, by id. Only looked up by id: a hash map moves a
    /// flight in and out once, where a B-tree shifted its neighbours in the node.
    flights: FxHashMap<u64, Flight>,
}

pub struct Producers {
    env: Env,
    core: Rc<RefCell<RouteClientCore>>,
    /// One remoting client for the process; its targets are every broker address.
    remoting: Remoting<(usize, u64)>,
    /// Broker address -> its index among `remoting`'s targets. Only looked up, never listed.
    targets: FxHashMap<Name, usize>,
    producers: Vec<Producer>,
    /// Our address: every tick of every producer's schedule is sent to it.
    me: Local<Producers>,
}

impl Producers {
    /// `brokers`: every broker's address and node, which routes name by address.
    pub fn new(
        env: Env,
        core: Rc<RefCell<RouteClientCore>>,
        brokers: Vec<(String, NodeId)>,
        specs: Vec<ProducerSpec>,
        me: Local<Producers>,
    ) -> Self {
        let targets = brokers.iter().enumerate().map(|(i, (addr, _))| (Name::new(addr), i)).collect();
        let producers = specs
            .into_iter()
            .map(|spec| Producer {
                env: env.part(&spec.name),
                name: Name::new(&spec.name),
                topic: Name::new(&spec.topic),
                strategy: MQFaultStrategy::new(&spec.config),
                tp: Rc::new(RefCell::new(TopicPublishInfo::with_queues(Vec::new(), SendWhichQueue::starting_at(0)))),
                built_from: None,
                next_send: 1,
                tick: 0,
                flights: FxHashMap::default(),
                spec,
            })
            .collect();
        let remoting = Remoting::new(env.clone(), Servers::new(brokers), 0, me.clone()).keeping_the_alarm();
        Producers { env, core, remoting, targets, producers, me }
    }

    /// The next tick of producer `i`'s schedule, if it is still before its `until`.
    fn schedule(&mut self, i: usize) {
        let p = &self.producers[i];
        let (offset, _) = p.spec.schedule.tick(p.tick);
        let at = p.spec.from + offset;
        if at <= p.spec.until {
            let delay = at.since(self.env.now().min(at));
            self.env.after(delay, self.me.clone(), SendTick(i));
        }
    }

    /// `topicRouteData2TopicPublishInfo` again whenever the client's route for the topic changed
    /// (told by pointer: the cache keeps an unchanged route's `Arc`; comparing a route of
    /// hundreds of groups on every send would cost more than the send).
    fn refresh(&mut self, i: usize) {
        let core = self.core.borrow();
        let p = &mut self.producers[i];
        let route = core.route_shared(&p.spec.topic);
        let same = match (route, &p.built_from) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        p.built_from = route.cloned();
        // A new object, not an update of the old one: sends in flight keep theirs.
        p.tp = Rc::new(RefCell::new(match route {
            Some(r) => self.env.net.with_rng(|rng| TopicPublishInfo::from_route(&p.spec.topic, r, rng)),
            None => TopicPublishInfo::with_queues(Vec::new(), SendWhichQueue::starting_at(0)),
        }));
    }

    fn start_send(&mut self, i: usize) {
        self.refresh(i);
        let now = self.env.now();
        let p = &mut self.producers[i];
        let id = p.next_send;
        p.next_send += 1;
        p.env.obs.send_started(now, &p.spec.name, id);
        let c = &p.spec.config;
        let mut machine = match p.spec.mode {
            CommunicationMode::Async => Machine::Async(AsyncSend::begin(now, c.send_msg_timeout)),
            mode => {
                let send = Send::begin(now, mode, c.send_msg_timeout, c.retry_times_when_send_failed);
                match p.env.mutation == Some(Mutation::ProducerIgnoresTimeout) {
                    true => Machine::Sync(send.ignoring_its_timeout()),
                    false => Machine::Sync(send),
                }
            }
        };
        let tp = p.tp.clone();
        let step = self.step(
            i,
            |m, now, env| match m {
                Machine::Sync(s) => s.next(now, env),
                Machine::Async(a) => a.first(now, env),
            },
            &mut machine,
            &tp,
        );
        self.follow(i, id, machine, tp, step);
    }

    /// Runs one call of the send's state machine with what it borrows from the producer, and
    /// the publish info `tp` the send holds.
    fn step(
        &mut self,
        i: usize,
        call: impl FnOnce(&mut Machine, SimTime, &mut SendEnv<'_>) -> Step,
        machine: &mut Machine,
        tp: &Held,
    ) -> Step {
        let now = self.env.now();
        let p = &mut self.producers[i];
        // `findBrokerAddressInPublish`: the master's address of a broker name, from the client's
        // broker address table as it is at this attempt.
        let core = self.core.borrow();
        let resolve = |name: Name| core.find_broker_address_in_publish(name);
        self.env.net.with_rng(|rng| {
            let tp = &mut tp.borrow_mut();
            let mut env = SendEnv { tp, strategy: &mut p.strategy, config: &p.spec.config, resolve: &resolve, rng };
            call(machine, now, &mut env)
        })
    }

    /// Puts the next attempt on the wire, or ends the send.
    fn follow(&mut self, i: usize, id: u64, mut machine: Machine, tp: Held, mut step: Step) {
        loop {
            let attempt = match step {
                Step::Done(finished) => return self.finished(i, id, &finished),
                Step::Attempt(a) => a,
            };
            let target = self.targets.get(&attempt.addr).copied();
            if attempt.timeout.millis() > 0 {
                let (p, q) = (&self.producers[i], &attempt.queue);
                let now = self.env.now();
                let seen = AttemptSeen {
                    producer: &p.spec.name,
                    send: id,
                    attempt: attempt.times,
                    broker: &q.broker_name,
                    addr: &attempt.addr,
                    queue: q.queue_id,
                };
                p.env.obs.send_attempt(now, &seen);
            }
            let msg = RmqMsg::SendMessage { topic: self.producers[i].topic, queue_id: attempt.queue.queue_id };
            // Outcomes known without waiting, with what failed: an attempt with no time left
            // (`invokeSync` throws before writing), an address no broker listens on, a oneway
            // write.
            let at_once = match (target, self.producers[i].spec.mode) {
                _ if attempt.timeout.millis() == 0 => {
                    Some((Outcome::TimedOut, Some("RemotingTimeoutException: no time left before writing".to_string())))
                }
                (None, _) => {
                    Some((Outcome::Refused, Some(format!("RemotingConnectException: no broker at {}", attempt.addr))))
                }
                (Some(t), CommunicationMode::Oneway) => {
                    self.remoting.invoke_oneway(t, msg);
                    Some((Outcome::Stored(SendStatus::SendOk), None))
                }
                (Some(t), CommunicationMode::Async) => {
                    self.remoting.invoke_async(t, msg, attempt.timeout, (i, id));
                    None
                }
                (Some(t), _) => {
                    self.remoting.invoke_sync(t, msg, attempt.timeout, (i, id));
                    None
                }
            };
            match at_once {
                Some((outcome, why)) => {
                    if let Some(why) = why {
                        self.note_failure(i, id, &attempt, why, self.env.now());
                    }
                    step = self.step(i, |m, now, env| on_result(m, now, outcome, env), &mut machine, &tp);
                }
                None => {
                    let started = self.env.now();
                    self.producers[i].flights.insert(id, Flight { machine, tp, attempt, started });
                    return;
                }
            }
        }
    }

    fn answered(&mut self, (i, id): (usize, u64), outcome: Outcome, why: Option<String>) {
        let Some(Flight { mut machine, tp, attempt, started }) = self.producers[i].flights.remove(&id) else { return };
        if let Some(why) = why {
            self.note_failure(i, id, &attempt, why, started);
        }
        let step = self.step(i, |m, now, env| on_result(m, now, outcome, env), &mut machine, &tp);
        self.follow(i, id, machine, tp, step);
    }

    fn note_failure(&self, i: usize, id: u64, a: &SendAttempt, why: String, started: SimTime) {
        let p = &self.producers[i];
        p.env.record(RmqNote::SendAttemptFailed {
            producer: p.name,
            send: id,
            attempt: a.times,
            broker: a.queue.broker_name,
            queue: a.queue.queue_id,
            why,
            latency: self.env.now().since(started),
        });
    }

    fn finished(&mut self, i: usize, id: u64, f: &Finished) {
        let p = &self.producers[i];
        let last = f.attempts.last();
        let broker = last.map(|a| a.queue.broker_name);
        let (ok, result): (bool, Cow<'static, str>) = match &f.verdict {
            Verdict::Sent { status, .. } => (true, status.as_str().into()),
            Verdict::CallTimeout => (false, "sendDefaultImpl call timeout".into()),
            Verdict::Failed { response_code, .. } => {
                (false, format!("Send [{}] times, still failed (code {response_code})", f.attempts.len()).into())
            }
            Verdict::BrokerRejected { code } => (false, format!("MQBrokerException, code {code}").into()),
            Verdict::NoRouteInfo => (false, "No route info of this topic".into()),
        };
        let record = SendRecord { end: self.env.now(), latency: f.elapsed, ok, retried: f.attempts.len() > 1 };
        p.env.obs.world.record_send(&p.spec.name, broker.as_deref(), record);
        p.env.record(RmqNote::SendDone {
            producer: p.name,
            send: id,
            ok,
            attempts: f.attempts.len() as u32,
            broker,
            queue: last.map(|a| a.queue.queue_id),
            elapsed: f.elapsed,
            result,
        });
    }
}

fn on_result(m: &mut Machine, now: SimTime, outcome: Outcome, env: &mut SendEnv<'_>) -> Step {
    match m {
        Machine::Sync(s) => s.on_result(now, outcome, env),
        Machine::Async(a) => a.on_result(now, outcome, env),
    }
}

impl Actor for Producers {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        // A process that starts after `from` (a late `start`, a restart) begins at its next
        // tick: the ticks it was not running for are not sent late, all in one instant.
        let now = self.env.now();
        for i in 0..self.producers.len() {
            let p = &mut self.producers[i];
            if now > p.spec.from {
                p.tick = p.spec.schedule.first_tick_from(now.since(p.spec.from));
            }
            self.schedule(i);
        }
    }
}

/// Producer `i`'s schedule is due.
#[derive(Message)]
#[rtype(result = "()")]
struct SendTick(usize);

impl Handler<SendTick> for Producers {
    type Result = ();
    fn handle(&mut self, SendTick(i): SendTick, _: &mut Context<Self>) {
        // A tick due in the instant the process died, before its `Stop` arrives: a dead
        // process sends nothing.
        if !self.env.alive() {
            return;
        }
        let p = &mut self.producers[i];
        let (_, count) = p.spec.schedule.tick(p.tick);
        p.tick += 1;
        for _ in 0..count {
            self.start_send(i);
        }
        self.schedule(i);
    }
}

impl Handler<Packet> for Producers {
    type Result = ();
    fn handle(&mut self, p: Packet, _: &mut Context<Self>) {
        for done in self.remoting.on_packet(p) {
            let (key, outcome, why) = outcome(done);
            self.answered(key, outcome, why);
        }
    }
}

impl Handler<RequestTimeouts> for Producers {
    type Result = ();
    fn handle(&mut self, _: RequestTimeouts, _: &mut Context<Self>) {
        for done in self.remoting.on_timeouts() {
            let (key, outcome, why) = outcome(done);
            self.answered(key, outcome, why);
        }
    }
}

impl Handler<Stop> for Producers {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
