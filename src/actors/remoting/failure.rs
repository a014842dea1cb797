//! How a remoting request ends: answered, or failed in one of the ways `invokeSync` and
//! `scanResponseTable` fail a request (see the parent module).

use crate::rocketmq::wire::RmqMsg;
use crate::sim::clock::SimDuration;
use crate::sim::network::ConnectFailure;
use smallvec::SmallVec;
use std::fmt;

/// How a request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// `RemotingConnectException`.
    Connect(ConnectFailure),
    /// `RemotingTimeoutException`; the channel was closed (`clientCloseSocketIfTimeout`).
    Timeout(SimDuration),
    /// `RemotingTimeoutException` with the channel kept open: the connect left only `left` of
    /// the request's `timeout`, at most 100 ms and at most a quarter of it (`shouldClose`).
    TimeoutKept { timeout: SimDuration, left: SimDuration },
    /// `RemotingTimeoutException` before writing: the connect came up only after the whole
    /// timeout had passed (`left <= 0`); nothing was sent and the channel stays open.
    ConnectedTooLate(SimDuration),
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
            Failure::TimeoutKept { timeout, left } => {
                write!(f, "no answer within {timeout}, {left} of it left after the connect: channel kept open")
            }
            Failure::ConnectedTooLate(d) => write!(f, "connected only after the whole {d}: nothing written"),
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
