//! The Nacos client's HTTP plumbing, shared by the instance and subscriber actors (not an actor).
//!
//! `call` is `NamingProxy#reqApi`: a random start server per call, from the run's seeded RNG,
//! then each server once. A request goes over the process's keep-alive channel to that server
//! (opened if needed). An attempt ends with the answer, a connect failure notice from the
//! network, the channel closing under it, or the read timeout — after which the channel is closed,
//! as the JDK discards a connection whose read timed out. A failed attempt moves on to the next
//! server at once; the caller hears only the final outcome.

use crate::actors::env::Env;
use crate::actors::inbox::Local;
use crate::actors::network::TimerId;
use crate::nacos::http::{Attempt, Failure, InFlight, ReqApi};
use crate::nacos::notes::NacosNote;
use crate::nacos::wire::{Answer, NacosMsg};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::name::Name;
use crate::sim::network::ConnectFailure;
use crate::sim::packet::{Body, Notice, Packet};
use actix::prelude::*;
use std::rc::Rc;
use std::sync::Arc;

/// One `reqApi` call in progress.
pub struct Call<P> {
    purpose: P,
    msg: NacosMsg,
    api: ReqApi,
}

/// How a call ended. An answer is lent from its packet.
///
/// Its tag is a whole word (`repr(u64)`), so that the fields start on the word after it. An
/// answer's outcome is built on the stack, then moved into [`Outcomes`]: with a two-byte tag,
/// the move read the purpose from two bytes past where it had just been written, in 16-byte
/// pieces that straddled the pieces written, which the CPU cannot forward from its store
/// buffer. That one stall per beat was 5.6% of the Nacos bench's sampled time.
#[repr(u64)]
pub enum Outcome<'a, P> {
    /// A 2xx answer from `server`.
    Answered { purpose: P, server: Name, answer: &'a Answer },
    /// Every server failed; `failure` is the last one's reason.
    Failed { purpose: P, api: &'static str, failure: Failure },
}

/// What one packet or alarm ended: nearly always none or one call. The first is kept inline and
/// any more in a vector (empty, so unallocated, almost always), and [`Outcomes::each`] hands
/// them on where they lie. A `SmallVec` cost every beat's answer three copies of the outcome
/// (pushed, moved into its iterator, taken out), each read back at once in other widths than it
/// was written: a stall on the store buffer per copy.
pub struct Outcomes<'a, P> {
    first: Option<Outcome<'a, P>>,
    more: Vec<Outcome<'a, P>>,
}

impl<'a, P> Outcomes<'a, P> {
    fn new() -> Self {
        Outcomes { first: None, more: Vec::new() }
    }

    fn push(&mut self, outcome: Outcome<'a, P>) {
        match self.first {
            None => self.first = Some(outcome),
            Some(_) => self.more.push(outcome),
        }
    }

    /// Shows each outcome to `f`, in the order they came. Lent, not moved: a move is one more
    /// copy, read back at once.
    #[inline(always)]
    pub fn each(&self, mut f: impl FnMut(&Outcome<'a, P>)) {
        if let Some(first) = &self.first {
            f(first);
            self.more.iter().for_each(f);
        }
    }
}

/// The read-timeout alarm of a process's HTTP client.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ReadTimeouts;

pub struct HttpClient<P> {
    env: Env,
    /// Every answer names its server in the caller's trace note.
    servers: Vec<(Name, NodeId)>,
    /// Per server, the channel the last request went on: the network's hint (`Env::send_via`).
    last: Vec<Option<ChannelId>>,
    read_timeout: SimDuration,
    inflight: InFlight<Call<P>>,
    timer: Option<(SimTime, TimerId)>,
    /// Sends `ReadTimeouts` to the actor that owns the client.
    ring: Rc<dyn Fn()>,
}

impl<P> HttpClient<P> {
    /// `owner` is the actor that takes the client's `ReadTimeouts`.
    pub fn new<A>(env: Env, servers: Vec<(Name, NodeId)>, read_timeout: SimDuration, owner: Local<A>) -> Self
    where
        A: Actor<Context = Context<A>> + Handler<ReadTimeouts, Result = ()>,
    {
        let last = vec![None; servers.len()];
        let ring = Rc::new(move || owner.do_send(ReadTimeouts));
        HttpClient { env, servers, last, read_timeout, inflight: InFlight::default(), timer: None, ring }
    }

    /// Starts a call. Outcomes arrive later through `on_packet` / `on_read_timeouts`, except
    /// with no server configured: then it fails at once ("no server available").
    /// Inlined into each caller (a beat is one): as a call of its own, with the request and its
    /// purpose passed through memory and its register saves, it was 30 instructions a beat more.
    #[inline(always)]
    pub fn call(&mut self, purpose: P, msg: NacosMsg) -> Option<Outcome<'static, P>> {
        let n = self.servers.len();
        // `new Random(System.currentTimeMillis()).nextInt(size)`: with one server there is
        // nothing to draw, so no randomness is consumed.
        let start = if n > 1 { self.env.net.with_rng(|r| r.index(n)) } else { 0 };
        let call = Call { purpose, msg, api: ReqApi::new(n, start) };
        let call = self.attempt(call)?;
        let failure = Failure::Http { status: 400, message: Arc::from("no server available") };
        Some(Outcome::Failed { purpose: call.purpose, api: call.msg.kind(), failure })
    }

    /// Sends `call` to its next server; gives the call back when none is left.
    fn attempt(&mut self, mut call: Call<P>) -> Option<Call<P>> {
        let Some(server) = call.api.next_server(self.servers.len()) else { return Some(call) };
        let node = self.servers[server].1;
        let sent = self.env.send_via(node, Body::Nacos(call.msg.copy()), self.last[server]);
        self.last[server] = sent.channel;
        // A connect that failed leaves no channel: its notice ends the attempt instead. The read
        // timeout counts from the connection being up; while its SYN is retried, from the latest
        // it could be up (the connect timeout fails it before that otherwise).
        let now = self.env.now();
        let wire = sent.channel.map(|channel| {
            // The connect timeout is read only while connecting: `map_or` would borrow the
            // network for it on every request.
            let up = sent.up.map_or_else(|| now + self.env.net.connect_timeout(), |up| up.max(now));
            (channel, up + self.read_timeout)
        });
        let deadline = wire.map(|(_, d)| d);
        self.inflight.insert(sent.id, Attempt { call, server: server as u32, wire });
        // Every attempt of this client has the same read timeout, so a new deadline is rarely
        // earlier than the one an armed timer already waits for (only after a slow connect).
        if self.timer.is_none_or(|(armed, _)| deadline.is_some_and(|d| d < armed)) {
            self.arm();
        }
        None
    }

    fn arm(&mut self) {
        let Some(at) = self.inflight.next_deadline() else { return };
        if self.timer.is_some_and(|(armed, _)| armed <= at) {
            return;
        }
        if let Some((_, old)) = self.timer.take() {
            self.env.net.cancel(old);
        }
        let ring = self.ring.clone();
        self.timer = Some((at, self.env.net.after(self.env.node, at.since(self.env.now()), move || ring())));
    }

    /// One attempt failed: trace it and try the next server, or report the call failed.
    fn failed(&mut self, attempt: Attempt<Call<P>>, failure: Failure, out: &mut Outcomes<'_, P>) {
        let Attempt { call, server, .. } = attempt;
        let api = call.msg.kind();
        // The last server's failure is reported with the call's outcome; earlier ones here.
        if let Some(next) = call.api.clone().next_server(self.servers.len()).map(|i| self.servers[i].0) {
            let server = self.servers[server as usize].0;
            self.env.record(NacosNote::AttemptFailed { api, server, failure: failure.clone(), next });
        }
        if let Some(call) = self.attempt(call) {
            out.push(Outcome::Failed { purpose: call.purpose, api, failure });
        }
    }

    /// A packet for this process: an answer, or a network notice about one of our requests.
    /// An answer is lent to the caller, not copied; the attempt it ends is read where it lies.
    /// Every beat's answer comes here, and each copy of an attempt or an outcome cost a stall
    /// on the store buffer: read back at once in other widths than it was written.
    pub fn on_packet<'a>(&mut self, p: &'a Packet) -> Outcomes<'a, P>
    where
        P: Copy,
    {
        let mut out = Outcomes::new();
        match &p.body {
            Body::Nacos(NacosMsg::Reply { reply_to, answer }) => {
                let reply_to = *reply_to;
                if let Answer::Error { status, message } = answer {
                    // An answer after the read timeout finds nothing: the call moved on.
                    if let Some(attempt) = self.inflight.take(reply_to) {
                        let failure = Failure::Http { status: *status, message: message.clone() };
                        self.failed(attempt, failure, &mut out);
                    }
                    return out;
                }
                let Some(attempt) = self.inflight.get(reply_to) else { return out };
                let (purpose, server) = (attempt.call.purpose, self.servers[attempt.server as usize].0);
                // The call's copy of its request goes with it: a light beat's owns nothing
                // (`NacosMsg::owns_nothing`), and the purpose and the rest are plain values.
                if attempt.call.msg.owns_nothing() {
                    self.inflight.forget(reply_to);
                } else {
                    self.inflight.take(reply_to);
                }
                // Built where it is returned: pushed, it was one more copy.
                return Outcomes { first: Some(Outcome::Answered { purpose, server, answer }), more: Vec::new() };
            }
            Body::Notice(Notice::SendFailed { msg, reason, .. }) => {
                if let Some(attempt) = self.inflight.take(*msg) {
                    let failure = match reason {
                        ConnectFailure::Refused => Failure::Refused,
                        ConnectFailure::TimedOut => Failure::ConnectTimeout,
                    };
                    self.failed(attempt, failure, &mut out);
                }
            }
            Body::Notice(Notice::ChannelClosed { channel, .. }) => {
                for (_, attempt) in self.inflight.on_channel(*channel) {
                    self.failed(attempt, Failure::Closed, &mut out);
                }
            }
            _ => {}
        }
        out
    }

    /// The alarm rang: every attempt past its read deadline fails and its channel is closed.
    pub fn on_read_timeouts(&mut self) -> Outcomes<'static, P> {
        self.timer = None;
        let mut out = Outcomes::new();
        for (_, attempt) in self.inflight.expired(self.env.now()) {
            if let Some(channel) = attempt.channel() {
                self.env.net.close(self.env.node, channel, "read timed out");
            }
            self.failed(attempt, Failure::ReadTimeout, &mut out);
        }
        self.arm();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_shown_in_the_order_they_came() {
        // A channel closing under three attempts ends three calls: the first inline, the rest in
        // the vector, all seen in order.
        let answer = Answer::Ok;
        let mut out = Outcomes::new();
        out.push(Outcome::Answered { purpose: 1, server: Name::new("nacos1"), answer: &answer });
        for purpose in [2, 3] {
            out.push(Outcome::Failed { purpose, api: "beat", failure: Failure::Closed });
        }
        let mut seen = Vec::new();
        out.each(|o| {
            seen.push(match o {
                Outcome::Answered { purpose, .. } | Outcome::Failed { purpose, .. } => *purpose,
            })
        });
        assert_eq!(seen, [1, 2, 3]);
        let mut none = 0;
        Outcomes::<u8>::new().each(|_| none += 1);
        assert_eq!(none, 0);
    }
}
