//! RocketMQ's `NettyRemotingClient` as brokers and clients use it (not an actor).
//!
//! `invokeSync` sends a request and waits for its answer until a timeout. The ways it ends are
//! the ways RocketMQ's own failure handling starts:
//!
//! * the answer arrives;
//! * no connection could be made (`RemotingConnectException`: refused at once, or after the
//!   3 s `connectTimeoutMillis` when nothing answers the SYN);
//! * the channel closed under the request (a FIN or RST arrived; `failFast` fails every request
//!   of that channel: `RemotingSendRequestException`);
//! * the timeout passed (`RemotingTimeoutException`). With `clientCloseSocketIfTimeout` (true by
//!   default) `invokeSync` then **closes the channel**, so the next request to that address
//!   opens a fresh connection instead of writing into a half-open one.
//!
//! `invokeSync(null, ...)` goes to the chosen name server ([`NamesrvChooser`]); a oneway
//! request expects nothing back.

use crate::actors::env::Env;
use crate::actors::network::TimerId;
use crate::rocketmq::client::NamesrvChooser;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, MsgId, NodeId};
use crate::sim::network::ConnectFailure;
use crate::sim::packet::{Body, Notice, Packet};
use actix::prelude::*;
use smallvec::{smallvec, SmallVec};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// How a request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// `RemotingConnectException`.
    Connect(ConnectFailure),
    /// `RemotingTimeoutException`; the channel was closed (`clientCloseSocketIfTimeout`).
    Timeout(SimDuration),
    /// An async request's timeout, found by `scanResponseTable`; the channel stays open.
    ScanTimeout(SimDuration),
    /// The channel closed under the request (`failFast` → `RemotingSendRequestException`).
    Closed,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Connect(ConnectFailure::Refused) => f.write_str("connection refused"),
            Failure::Connect(ConnectFailure::TimedOut) => f.write_str("connect timed out"),
            Failure::Timeout(d) => {
                write!(f, "no answer within {d}: channel closed (clientCloseSocketIfTimeout)")
            }
            Failure::ScanTimeout(d) => write!(f, "no answer within {d}: removed by scanResponseTable"),
            Failure::Closed => f.write_str("the channel closed under the request"),
        }
    }
}

/// How requests ended: one at most for an answer, the common case, so kept without a heap
/// allocation; a closed channel or an alarm may end several.
pub type Dones<P> = SmallVec<[Done<P>; 1]>;

/// How one request ended.
pub enum Done<P> {
    Answered { purpose: P, namesrv: usize, reply: RmqMsg },
    Failed { purpose: P, namesrv: usize, failure: Failure },
}

struct Pending<P> {
    purpose: P,
    namesrv: usize,
    channel: Option<ChannelId>,
    timeout: SimDuration,
    deadline: SimTime,
    wait: Wait,
}

/// Who finds a request's timeout.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// `invokeSync`'s own wait, at the deadline; it then closes the channel.
    Sync,
    /// `scanResponseTable`, for `invokeAsync`: a run at least 1 s past the deadline.
    Scanned,
}

/// `NettyRemotingClient#start`: `scanResponseTable` runs 3 s after the client starts, then again
/// 1 s after each run.
const FIRST_SCAN: u64 = 3_000;
const SCAN_PERIOD: u64 = 1_000;
/// `scanResponseTable` removes a request once `beginTimestamp + timeoutMillis + 1000 <= now`.
const SCAN_GRACE: u64 = 1_000;

/// The remoting client's alarm: the earliest request deadline has come (Netty's
/// `scanResponseTable` plays this part in RocketMQ; `invokeSync` waits on its own future).
#[derive(Message)]
#[rtype(result = "()")]
pub struct RequestTimeouts;

pub struct Remoting<P> {
    env: Env,
    /// The name servers' names, shared by every note that lists them (a broker's registration,
    /// every 30 s), and beside them their nodes, in the same order.
    names: Arc<[String]>,
    nodes: Vec<NodeId>,
    chooser: NamesrvChooser,
    /// A handful at most (one per name server being registered with, one poll), in send order.
    pending: Vec<(MsgId, Pending<P>)>,
    /// One timer for the earliest deadline, not one per request: a broker registers with every
    /// name server every 30 s, and almost every request is answered long before its deadline.
    alarm: Option<(SimTime, TimerId)>,
    /// Rings the alarm: sends `RequestTimeouts` to the owning actor, through one address made
    /// at the first arming (see [`crate::actors::env::Me`]).
    ring: Option<Rc<dyn Fn()>>,
    /// When the client started: the phase of its `scanResponseTable` runs.
    started: SimTime,
}

impl<P> Remoting<P> {
    /// `start_index` is `namesrvIndex`'s random start (`random.nextInt(999)`).
    pub fn new(env: Env, namesrvs: Vec<(String, NodeId)>, start_index: usize) -> Self {
        let chooser = NamesrvChooser::new(namesrvs.len(), start_index);
        let (names, nodes): (Vec<String>, Vec<NodeId>) = namesrvs.into_iter().unzip();
        let started = env.now();
        Remoting { env, names: names.into(), nodes, chooser, pending: Vec::new(), alarm: None, ring: None, started }
    }

    /// The name servers' names, in order, as one shared list.
    pub fn names(&self) -> &Arc<[String]> {
        &self.names
    }

    pub fn name(&self, namesrv: usize) -> &str {
        &self.names[namesrv]
    }

    fn open_to(&self, namesrv: usize) -> bool {
        self.env.net.current_channel(self.env.node, self.nodes[namesrv]).is_some()
    }

    /// `getAndCreateNameserverChannelAsync`: the chosen name server while its channel is open,
    /// else the next one round-robin.
    pub fn choose(&mut self) -> usize {
        let ok = self.chooser.chosen().is_some_and(|i| self.open_to(i));
        self.chooser.choose(ok)
    }

    /// The name server `invokeSync(null, ...)` would use now, if one was chosen.
    pub fn chosen(&self) -> Option<usize> {
        self.chooser.chosen()
    }

    /// `invokeSync(addr, request, timeout)`.
    pub fn invoke_sync<A>(&mut self, namesrv: usize, msg: RmqMsg, timeout: SimDuration, purpose: P, ctx: &Context<A>)
    where
        A: Actor<Context = Context<A>> + Handler<RequestTimeouts>,
    {
        self.invoke(namesrv, msg, timeout, Wait::Sync, purpose, ctx);
    }

    /// `invokeAsync(addr, request, timeout, callback)`. Nothing waits on an async request: its
    /// `ResponseFuture` sits in `responseTable` until the answer comes or `scanResponseTable`
    /// removes it, at its first run at least 1 s past the deadline — so an async timeout
    /// surfaces 1–2 s late — and without closing the channel (`clientCloseSocketIfTimeout` is
    /// `invokeSync`'s). (The scan's `HashedWheelTimer` ticks every 100 ms, which makes Java's
    /// runs drift a little later still; the model keeps them on the second.)
    pub fn invoke_async<A>(&mut self, namesrv: usize, msg: RmqMsg, timeout: SimDuration, purpose: P, ctx: &Context<A>)
    where
        A: Actor<Context = Context<A>> + Handler<RequestTimeouts>,
    {
        self.invoke(namesrv, msg, timeout, Wait::Scanned, purpose, ctx);
    }

    fn invoke<A>(&mut self, namesrv: usize, msg: RmqMsg, timeout: SimDuration, wait: Wait, purpose: P, ctx: &Context<A>)
    where
        A: Actor<Context = Context<A>> + Handler<RequestTimeouts>,
    {
        let sent = self.env.send_via(self.nodes[namesrv], Body::Rmq(msg));
        if sent.id == 0 {
            return; // this incarnation is dead
        }
        let deadline = match wait {
            Wait::Sync => self.env.now() + timeout,
            Wait::Scanned => {
                let due = self.env.now().0 + timeout.0 + SCAN_GRACE;
                let first = self.started.0 + FIRST_SCAN;
                SimTime(if due <= first { first } else { first + (due - first).div_ceil(SCAN_PERIOD) * SCAN_PERIOD })
            }
        };
        let pending = Pending { purpose, namesrv, channel: sent.channel, timeout, deadline, wait };
        self.pending.push((sent.id, pending));
        if self.alarm.is_none_or(|(at, _)| deadline < at) {
            self.arm(deadline, ctx);
        }
    }

    fn arm<A>(&mut self, at: SimTime, ctx: &Context<A>)
    where
        A: Actor<Context = Context<A>> + Handler<RequestTimeouts>,
    {
        if let Some((_, old)) = self.alarm.take() {
            self.env.net.cancel(old);
        }
        let ring = self.ring.get_or_insert_with(|| {
            let to = ctx.address();
            Rc::new(move || to.do_send(RequestTimeouts))
        });
        let ring = ring.clone();
        self.alarm = Some((at, self.env.net.after(self.env.node, at.since(self.env.now()), move || ring())));
    }

    /// `invokeOneway(addr, request)`: written and forgotten.
    pub fn invoke_oneway(&mut self, namesrv: usize, msg: RmqMsg) {
        self.env.send(self.nodes[namesrv], Body::Rmq(msg));
    }

    /// An answered or failed request leaves the table; with none left the alarm is cancelled,
    /// which spares the run an instant (a registration is answered in milliseconds, its alarm
    /// would ring 24 s later for nothing).
    fn finish(&mut self, id: MsgId) -> Option<Pending<P>> {
        let i = self.pending.iter().position(|(m, _)| *m == id)?;
        let (_, done) = self.pending.remove(i);
        if self.pending.is_empty() {
            if let Some((_, timer)) = self.alarm.take() {
                self.env.net.cancel(timer);
            }
        }
        Some(done)
    }

    /// An answer, or a network notice about our requests.
    pub fn on_packet(&mut self, p: Packet) -> Dones<P> {
        match p.body {
            Body::Rmq(reply) => {
                let Some(id) = reply.reply_to() else { return Dones::new() };
                let Some(req) = self.finish(id) else { return Dones::new() };
                smallvec![Done::Answered { purpose: req.purpose, namesrv: req.namesrv, reply }]
            }
            Body::Notice(Notice::SendFailed { msg, reason, .. }) => match self.finish(msg) {
                Some(req) => {
                    smallvec![Done::Failed {
                        purpose: req.purpose,
                        namesrv: req.namesrv,
                        failure: Failure::Connect(reason)
                    }]
                }
                None => Dones::new(),
            },
            Body::Notice(Notice::ChannelClosed { channel, .. }) => {
                let ids: Vec<MsgId> =
                    self.pending.iter().filter(|(_, r)| r.channel == Some(channel)).map(|(id, _)| *id).collect();
                ids.into_iter()
                    .filter_map(|id| self.finish(id))
                    .map(|r| Done::Failed { purpose: r.purpose, namesrv: r.namesrv, failure: Failure::Closed })
                    .collect()
            }
            _ => Dones::new(),
        }
    }

    /// The alarm rang: every request past its deadline fails, and its channel is closed
    /// (`clientCloseSocketIfTimeout`). The alarm is set again for the next deadline.
    pub fn on_timeouts<A>(&mut self, ctx: &Context<A>) -> Dones<P>
    where
        A: Actor<Context = Context<A>> + Handler<RequestTimeouts>,
    {
        self.alarm = None;
        let now = self.env.now();
        let expired: Vec<MsgId> = self.pending.iter().filter(|(_, r)| r.deadline <= now).map(|(id, _)| *id).collect();
        let mut out = Dones::new();
        for id in expired {
            let Some(i) = self.pending.iter().position(|(m, _)| *m == id) else { continue };
            let (_, req) = self.pending.remove(i);
            if req.wait == Wait::Scanned {
                let failure = Failure::ScanTimeout(req.timeout);
                out.push(Done::Failed { purpose: req.purpose, namesrv: req.namesrv, failure });
                continue;
            }
            if let Some(channel) = req.channel {
                self.env.net.close(self.env.node, channel, "request timed out");
            }
            let failure = Failure::Timeout(req.timeout);
            out.push(Done::Failed { purpose: req.purpose, namesrv: req.namesrv, failure });
        }
        if let Some(next) = self.pending.iter().map(|(_, r)| r.deadline).min() {
            self.arm(next, ctx);
        }
        out
    }
}
