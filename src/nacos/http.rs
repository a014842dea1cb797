//! The naming client's HTTP layer, pure: `NamingProxy#reqApi`'s server rotation and the
//! bookkeeping of requests in flight with their read timeouts.
//!
//! `reqApi` draws a random start index **per call**, tries each configured server once in order,
//! and fails after all of them failed. A list of exactly one server is different: the
//! `NamingProxy` constructor takes it as the *domain* (`nacosDomain = serverList`), and a domain
//! is tried `namingRequestDomainMaxRetryCount` times (`REQUEST_DOMAIN_RETRY_COUNT` = 3), each
//! retry at once. A server attempt fails on a refused or timed-out connect, on a non-2xx answer,
//! on a connection closed under the request, and on the read timeout
//! (`com.alibaba.nacos.client.naming.rtimeout`, 50 s by default) — the only way a request on an
//! established connection that went silent (a partition after connecting, a stopped server) ever
//! ends.
//!
//! Read timeouts are kept in one ordered index per process, so the actor needs a single timer for
//! the earliest deadline instead of one per request.

use crate::sim::clock::SimTime;
use crate::sim::ids::{ChannelId, MsgId};
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

/// Why one server attempt failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// Nothing listens (the server process is down on a live host).
    Refused,
    /// No answer to the connect (host down, partition): `ctimeout`.
    ConnectTimeout,
    /// Connected, but no answer within `rtimeout`.
    ReadTimeout,
    /// The connection closed under the request (the server died, or another timeout closed it).
    Closed,
    /// A non-2xx status (`NacosException(httpCode, msg)`).
    Http { status: u16, message: Arc<str> },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Refused => f.write_str("connection refused"),
            Failure::ConnectTimeout => f.write_str("connect timed out"),
            Failure::ReadTimeout => f.write_str("read timed out"),
            Failure::Closed => f.write_str("connection closed"),
            Failure::Http { status, message } => write!(f, "HTTP {status} {message}"),
        }
    }
}

/// `UtilAndComs.REQUEST_DOMAIN_RETRY_COUNT`: how often a one-server list (a domain) is tried.
pub const REQUEST_DOMAIN_RETRY_COUNT: usize = 3;

/// One `reqApi` call's walk over the server list. It holds only where the walk is: the list's
/// length is the client's, passed in, so that a request in flight stays small enough to be
/// moved without a `memcpy` call (an app keeps one per beat: three moves each).
#[derive(Clone, Debug)]
pub struct ReqApi {
    index: u32,
    tried: u32,
}

impl ReqApi {
    /// `start` is `random.nextInt(servers)`, so nearly always within the list already: the
    /// remainder (an integer division, tens of cycles) is taken only when it is not.
    pub fn new(servers: usize, start: usize) -> Self {
        let index = if start < servers { start } else { start % servers.max(1) };
        ReqApi { index: index as u32, tried: 0 }
    }

    /// The next of `servers` to try, or `None` once the call has used its attempts: every
    /// server once, or a domain (a one-server list) `REQUEST_DOMAIN_RETRY_COUNT` times.
    pub fn next_server(&mut self, servers: usize) -> Option<usize> {
        let tries = if servers == 1 { REQUEST_DOMAIN_RETRY_COUNT } else { servers };
        if self.tried as usize >= tries {
            return None;
        }
        let i = self.index as usize;
        self.tried += 1;
        // Java's `index = (index + 1) % servers.size()`. The index is always within the list,
        // so the remainder is a wrap to 0 at the end, written as one: a division per request
        // was tens of cycles on the path of every beat.
        let next = i + 1;
        self.index = if next >= servers { 0 } else { next as u32 };
        Some(i)
    }
}

/// A request on the wire: what it is for, which server, over which channel, until when.
#[derive(Debug)]
pub struct Attempt<C> {
    pub call: C,
    /// The server's index in the client's list.
    pub server: u32,
    /// The channel it was written to and its read deadline; `None` while the connect is pending
    /// (its outcome arrives as a network notice, and the connect timeout applies instead). One
    /// `Option` for both, as they come together: it keeps the attempt at 120 bytes.
    pub wire: Option<(ChannelId, SimTime)>,
}

impl<C> Attempt<C> {
    pub fn channel(&self) -> Option<ChannelId> {
        self.wire.map(|(channel, _)| channel)
    }

    /// The read deadline.
    pub fn deadline(&self) -> Option<SimTime> {
        self.wire.map(|(_, deadline)| deadline)
    }
}

/// Requests in flight, by message id, with their read deadlines in order.
pub struct InFlight<C> {
    /// In message-id order, which is send order: answers mostly come back in that order too, so
    /// the one taken is usually at the front, and any other is a binary search away. No node is
    /// allocated and freed per beat, as a map would.
    attempts: VecDeque<(MsgId, Attempt<C>)>,
}

impl<C> Default for InFlight<C> {
    fn default() -> Self {
        InFlight { attempts: VecDeque::new() }
    }
}

impl<C> InFlight<C> {
    /// Ids are handed out in send order, so a new one nearly always goes at the back. (A dead
    /// incarnation's sends get id 0; they still sort into place.)
    pub fn insert(&mut self, msg: MsgId, attempt: Attempt<C>) {
        if self.attempts.back().is_none_or(|(last, _)| *last < msg) {
            self.attempts.push_back((msg, attempt));
        } else {
            let at = self.attempts.partition_point(|(m, _)| *m < msg);
            self.attempts.insert(at, (msg, attempt));
        }
    }

    /// The attempt `msg` answers, left where it is: an answer reads two of its fields, and then
    /// [`take`](Self::take)s it. Nearly always the oldest attempt: that case is inlined into the
    /// answer's handling, the search is a call.
    #[inline(always)]
    pub fn get(&self, msg: MsgId) -> Option<&Attempt<C>> {
        match self.attempts.front() {
            Some((m, a)) if *m == msg => Some(a),
            _ => self.get_searched(msg),
        }
    }

    #[inline(never)]
    fn get_searched(&self, msg: MsgId) -> Option<&Attempt<C>> {
        self.attempts.get(self.position(msg)?).map(|(_, a)| a)
    }

    /// Removes attempt `msg` without dropping it: for an attempt that owns nothing to free.
    #[inline(always)]
    pub fn forget(&mut self, msg: MsgId) {
        if let Some(attempt) = self.take(msg) {
            std::mem::forget(attempt);
        }
    }

    /// Takes attempt `msg` out: for a failure that goes on with its call, or an answer that ends
    /// it. Nearly always the oldest attempt, as in `get`.
    #[inline(always)]
    pub fn take(&mut self, msg: MsgId) -> Option<Attempt<C>> {
        if self.attempts.front().is_some_and(|(m, _)| *m == msg) {
            return self.attempts.pop_front().map(|(_, a)| a);
        }
        self.take_searched(msg)
    }

    #[inline(never)]
    fn take_searched(&mut self, msg: MsgId) -> Option<Attempt<C>> {
        self.attempts.remove(self.position(msg)?).map(|(_, a)| a)
    }

    /// Where attempt `msg` is kept, by binary search (the queue is in message-id order).
    fn position(&self, msg: MsgId) -> Option<usize> {
        self.attempts.binary_search_by_key(&msg, |(m, _)| *m).ok()
    }

    /// Attempts whose read deadline has passed, by deadline then by message id.
    pub fn expired(&mut self, now: SimTime) -> Vec<(MsgId, Attempt<C>)> {
        let mut out = self.take_where(|a| a.deadline().is_some_and(|d| d <= now));
        out.sort_by_key(|(m, a)| (a.deadline(), *m));
        out
    }

    /// Attempts on `channel`, by message id.
    pub fn on_channel(&mut self, channel: ChannelId) -> Vec<(MsgId, Attempt<C>)> {
        self.take_where(|a| a.channel() == Some(channel))
    }

    /// Removes the attempts `pick` chooses, in message-id order (the order they are kept in).
    fn take_where(&mut self, pick: impl Fn(&Attempt<C>) -> bool) -> Vec<(MsgId, Attempt<C>)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.attempts.len() {
            if pick(&self.attempts[i].1) {
                out.extend(self.attempts.remove(i));
            } else {
                i += 1;
            }
        }
        out
    }

    pub fn next_deadline(&self) -> Option<SimTime> {
        self.attempts.iter().filter_map(|(_, a)| a.deadline()).min()
    }

    pub fn is_empty(&self) -> bool {
        self.attempts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn req_api_tries_every_server_once_from_its_random_start() {
        // Nacos NamingProxy#reqApi: index = random.nextInt(size); index = (index + 1) % size
        let mut r = ReqApi::new(3, 2);
        let order: Vec<usize> = std::iter::from_fn(|| r.next_server(3)).collect();
        assert_eq!(order, [2, 0, 1]);
    }

    #[test]
    fn a_single_server_is_a_domain_and_is_tried_three_times() {
        // Nacos 1.4.x NamingProxy(): serverList.size() == 1 → nacosDomain; reqApi retries the
        // domain maxRetry = REQUEST_DOMAIN_RETRY_COUNT (3) times, any NacosException each time.
        let mut r = ReqApi::new(1, 0);
        let order: Vec<usize> = std::iter::from_fn(|| r.next_server(1)).collect();
        assert_eq!(order, [0, 0, 0]);
    }

    #[test]
    fn read_deadlines_expire_in_order_and_answered_requests_leave_the_index() {
        // Nacos NamingHttpClientManager: read timeout per request
        let mut f: InFlight<&str> = InFlight::default();
        let at = |d| Attempt { call: "beat", server: 0, wire: Some((ChannelId(1), SimTime(d))) };
        f.insert(1, at(50_000));
        f.insert(2, at(55_000));
        f.insert(3, Attempt { call: "connecting", server: 0, wire: None });
        assert!(f.take(1).is_some());
        assert_eq!(f.next_deadline(), Some(SimTime(55_000)));
        let gone: Vec<MsgId> = f.expired(SimTime(60_000)).into_iter().map(|(m, _)| m).collect();
        assert_eq!(gone, [2]);
        assert_eq!(f.on_channel(ChannelId(1)).len(), 0);
        assert!(!f.is_empty(), "the connecting request waits for its notice");
    }
}
