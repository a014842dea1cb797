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
//!   opens a fresh connection instead of writing into a half-open one — unless the connect took
//!   so much of the budget that at most 100 ms, and at most a quarter of it, was left
//!   (`shouldClose`, RocketMQ 5.3.1 and later);
//! * the connect itself outlasted the budget. `invokeSync` first waits for its channel in
//!   `getAndCreateChannel` (`awaitUninterruptibly()`, bounded only by Netty's
//!   `connectTimeoutMillis`, 3 s), and only then computes `left`: a request whose deadline passes
//!   during the connect ends with the connect — `RemotingConnectException` when it fails,
//!   `RemotingTimeoutException` before writing anything when it succeeds.
//!
//! `invokeSync(null, ...)` goes to the chosen name server ([`NamesrvChooser`]); a oneway
//! request expects nothing back.

use crate::actors::env::Env;
use crate::actors::inbox::Local;
use crate::actors::network::{Alarm, TimerId};
use crate::rocketmq::client::NamesrvChooser;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, MsgId};
use crate::sim::network::ConnectFailure;
use crate::sim::packet::{Body, Notice, Packet};
use actix::prelude::*;
use smallvec::{smallvec, SmallVec};
use std::rc::Rc;
use std::sync::Arc;

mod failure;
mod servers;
pub use failure::{Done, Dones, Failure};
pub use servers::Servers;

struct Pending<P> {
    purpose: P,
    namesrv: usize,
    channel: Option<ChannelId>,
    timeout: SimDuration,
    /// When the call began: `invokeSync`'s `left` is the timeout less what the connect took.
    begin: SimTime,
    deadline: SimTime,
    wait: Wait,
    /// Sent while its channel's SYN was still unanswered: when that connect began (it may fail
    /// under the request).
    handshake_began: Option<SimTime>,
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
/// `NettyRemotingClient.MIN_CLOSE_TIMEOUT_MILLIS`: a timed-out request closes its channel only
/// if more than this, or more than a quarter of its timeout, was left after the connect.
const MIN_CLOSE_TIMEOUT: u64 = 100;

/// The earliest deadline of the requests pending, if any.
fn earliest<P>(pending: &[(MsgId, Pending<P>)]) -> Option<SimTime> {
    pending.iter().map(|(_, r)| r.deadline).min()
}

/// The remoting client's alarm: the earliest request deadline has come (Netty's
/// `scanResponseTable` plays this part in RocketMQ; `invokeSync` waits on its own future).
#[derive(Message)]
#[rtype(result = "()")]
pub struct RequestTimeouts;

pub struct Remoting<P> {
    env: Env,
    /// The name servers' names, shared by every note that lists them (a broker's registration,
    /// every 30 s), and their nodes (see [`Servers`]).
    servers: Servers,
    chooser: NamesrvChooser,
    /// Per name server, the channel the last request went on: the network's hint
    /// (`Env::send_via`). In line for two name servers: a vector's buffer of its own was one
    /// more cold cache line at each broker's registration.
    last: SmallVec<[Option<ChannelId>; 2]>,
    /// A handful at most (one per name server being registered with, one poll), in send order.
    pending: Vec<(MsgId, Pending<P>)>,
    /// One timer for the earliest deadline, not one per request: a broker registers with every
    /// name server every 30 s, and almost every request is answered long before its deadline.
    alarm: Option<(SimTime, TimerId)>,
    /// Rings the alarm: sends `RequestTimeouts` to the owning actor.
    ring: Rc<dyn Fn()>,
    /// When the client started: the phase of its `scanResponseTable` runs.
    started: SimTime,
    /// Instead of `alarm`, an alarm that follows the earliest deadline (see
    /// [`Self::keeping_the_alarm`]); made at the first request.
    kept: Option<Rc<Alarm>>,
    keep_alarm: bool,
}

impl<P> Remoting<P> {
    /// `start_index` is `namesrvIndex`'s random start (`random.nextInt(999)`); `owner` is the
    /// actor that takes the alarm's `RequestTimeouts`.
    pub fn new<A>(env: Env, servers: Servers, start_index: usize, owner: Local<A>) -> Self
    where
        A: Actor<Context = Context<A>> + Handler<RequestTimeouts, Result = ()>,
    {
        let chooser = NamesrvChooser::new(servers.len(), start_index);
        let started = env.now();
        Remoting {
            env,
            last: smallvec![None; servers.len()],
            servers,
            chooser,
            pending: Vec::new(),
            alarm: None,
            ring: Rc::new(move || owner.do_send(RequestTimeouts)),
            started,
            kept: None,
            keep_alarm: false,
        }
    }

    /// For a client whose requests follow one another closely (a producer sends every few
    /// milliseconds, each answered in a few): its alarm is an [`Alarm`], which stays in the
    /// agenda and follows the earliest deadline, instead of a timer set at every request and
    /// cancelled at every answer (see `network/alarm.rs`). Not for a broker or a route client:
    /// after a registration or a poll every 30 s, answered in milliseconds, the entry would come
    /// up for nothing, where cancelling it spares the run that instant.
    pub fn keeping_the_alarm(mut self) -> Self {
        self.keep_alarm = true;
        self
    }

    /// The name servers' names, in order, as one shared list.
    pub fn names(&self) -> &Arc<[String]> {
        self.servers.names()
    }

    pub fn name(&self, namesrv: usize) -> &str {
        &self.servers.names()[namesrv]
    }

    fn open_to(&self, namesrv: usize) -> bool {
        self.env.net.current_channel(self.env.node, self.servers.node(namesrv)).is_some()
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
    pub fn invoke_sync(&mut self, namesrv: usize, msg: RmqMsg, timeout: SimDuration, purpose: P) {
        self.invoke(namesrv, msg, timeout, Wait::Sync, purpose);
    }

    /// `invokeAsync(addr, request, timeout, callback)`. Nothing waits on an async request: its
    /// `ResponseFuture` sits in `responseTable` until the answer comes or `scanResponseTable`
    /// removes it, at its first run at least 1 s past the deadline — so an async timeout
    /// surfaces 1–2 s late — and without closing the channel (`clientCloseSocketIfTimeout` is
    /// `invokeSync`'s). (The scan's `HashedWheelTimer` ticks every 100 ms, which makes Java's
    /// runs drift a little later still; the model keeps them on the second.)
    pub fn invoke_async(&mut self, namesrv: usize, msg: RmqMsg, timeout: SimDuration, purpose: P) {
        self.invoke(namesrv, msg, timeout, Wait::Scanned, purpose);
    }

    fn invoke(&mut self, namesrv: usize, msg: RmqMsg, timeout: SimDuration, wait: Wait, purpose: P) {
        let sent = self.env.send_via(self.servers.node(namesrv), Body::Rmq(msg), self.last[namesrv]);
        self.last[namesrv] = sent.channel;
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
        let begin = self.env.now();
        // Only a send whose connect is still unanswered (`up` unknown) asks when it began.
        let handshake = sent.channel.filter(|_| sent.up.is_none()).and_then(|c| self.env.net.handshake(c));
        let handshake_began = handshake.map(|(began, _)| began);
        let channel = sent.channel;
        let pending = Pending { purpose, namesrv, channel, timeout, begin, deadline, wait, handshake_began };
        self.pending.push((sent.id, pending));
        if self.keep_alarm {
            self.follow_deadlines();
        } else if self.alarm.is_none_or(|(at, _)| deadline < at) {
            self.arm(deadline);
        }
    }

    /// Points the kept alarm at the earliest deadline pending, or at none.
    fn follow_deadlines(&mut self) {
        if self.kept.is_none() {
            let ring = self.ring.clone();
            self.kept = Some(Alarm::new(move || ring()));
        }
        self.move_kept_alarm();
    }

    fn arm(&mut self, at: SimTime) {
        if let Some((_, old)) = self.alarm.take() {
            self.env.net.cancel(old);
        }
        let ring = self.ring.clone();
        self.alarm = Some((at, self.env.net.after(self.env.node, at.since(self.env.now()), move || ring())));
    }

    /// `invokeOneway(addr, request)`: written and forgotten.
    pub fn invoke_oneway(&mut self, namesrv: usize, msg: RmqMsg) {
        self.env.send(self.servers.node(namesrv), Body::Rmq(msg));
    }

    /// A sync request past its deadline whose channel is still connecting: `invokeSync` is still
    /// in `getAndCreateChannel`, whose wait the budget does not cut. It ends with the handshake,
    /// so the request waits for the handshake's next step (a SYN retransmission, its answer, or
    /// the connect timeout). Its write is taken back now: whenever the connect comes up, `left`
    /// will be spent, and Java writes nothing then. `None` when the request is not waiting for
    /// a connect.
    fn connect_wait(&self, id: MsgId, req: &Pending<P>, now: SimTime) -> Option<SimTime> {
        if req.wait != Wait::Sync {
            return None;
        }
        let channel = req.channel?;
        if let Some((_, due)) = self.env.net.handshake(channel) {
            self.env.net.withdraw(id, channel);
            return Some(due.max(now));
        }
        // Connected, with the answer to the SYN still on its way: the wait ends when it lands,
        // and the write, which the network scheduled to leave then, is taken back as well.
        let up = self.env.net.connected_at(channel).filter(|up| *up > now)?;
        self.env.net.withdraw(id, channel);
        Some(up)
    }

    /// How a sync request that reached its deadline ends (an async one: `scanResponseTable`).
    fn timed_out(&self, req: &Pending<P>, now: SimTime) -> Failure {
        if req.wait == Wait::Scanned {
            return Failure::ScanTimeout(req.timeout);
        }
        let Some(channel) = req.channel else { return Failure::Timeout(req.timeout) };
        let Some(up) = self.env.net.connected_at(channel) else {
            let Some(began) = req.handshake_began else { return Failure::Timeout(req.timeout) };
            // The handshake failed while the request waited for it: refused when that was
            // before the connect timeout, timed out otherwise. (At its deadline's own instant
            // the network's notice of it may not have reached the actor yet; and a request
            // that outwaited its deadline had its write, and so its notice, taken back.)
            let timed_out = now.since(began) >= self.env.net.connect_timeout();
            let how = if timed_out { ConnectFailure::TimedOut } else { ConnectFailure::Refused };
            return Failure::Connect(how);
        };
        // `left = timeoutMillis - costTime`, the cost being the wait for the channel.
        let spent = up.since(req.begin);
        if spent >= req.timeout {
            return Failure::ConnectedTooLate(req.timeout);
        }
        let left = SimDuration(req.timeout.0 - spent.0);
        // `shouldClose = left > MIN_CLOSE_TIMEOUT_MILLIS (100) || left > timeoutMillis / 4`.
        if left.0 > MIN_CLOSE_TIMEOUT || left.0 > req.timeout.0 / 4 {
            self.env.net.close(self.env.node, channel, "request timed out");
            Failure::Timeout(req.timeout)
        } else {
            Failure::TimeoutKept { timeout: req.timeout, left }
        }
    }

    /// The kept alarm, if there is one, to the earliest deadline pending (see `finish` for why
    /// out of line).
    #[inline(never)]
    fn move_kept_alarm(&self) {
        if let Some(alarm) = &self.kept {
            self.env.net.set_alarm(self.env.node, alarm, earliest(&self.pending));
        }
    }

    /// An answered or failed request leaves the table; with none left the alarm is cancelled,
    /// which spares the run an instant (a registration is answered in milliseconds, its alarm
    /// would ring 24 s later for nothing); a kept alarm moves to the next deadline.
    /// (Inlined into the answer's handling, with the kept alarm's branch out of line: it was
    /// before that branch, and out of line a broker's answer cost 20 more instructions. Either
    /// half alone did not bring it back.)
    #[inline]
    fn finish(&mut self, id: MsgId) -> Option<Pending<P>> {
        let i = self.pending.iter().position(|(m, _)| *m == id)?;
        let (_, done) = self.pending.remove(i);
        if self.kept.is_some() {
            self.move_kept_alarm();
        } else if self.pending.is_empty() {
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
    /// (`clientCloseSocketIfTimeout`, see `timed_out`), unless it is still waiting for
    /// its connect. The alarm is set again for the next deadline.
    pub fn on_timeouts(&mut self) -> Dones<P> {
        self.alarm = None;
        let now = self.env.now();
        let expired: Vec<MsgId> = self.pending.iter().filter(|(_, r)| r.deadline <= now).map(|(id, _)| *id).collect();
        let mut out = Dones::new();
        for id in expired {
            let Some(i) = self.pending.iter().position(|(m, _)| *m == id) else { continue };
            if let Some(wait_until) = self.connect_wait(id, &self.pending[i].1, now) {
                self.pending[i].1.deadline = wait_until;
                continue;
            }
            let (_, req) = self.pending.remove(i);
            let failure = self.timed_out(&req, now);
            out.push(Done::Failed { purpose: req.purpose, namesrv: req.namesrv, failure });
        }
        if self.keep_alarm {
            self.follow_deadlines();
        } else if let Some(next) = earliest(&self.pending) {
            self.arm(next);
        }
        out
    }
}
