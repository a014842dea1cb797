//! What the send state machines hand the actor layer and get back from it: one attempt on the
//! wire, its outcome, and the final verdict.

use super::config::ProducerConfig;
use super::publish_info::{MessageQueue, TopicPublishInfo};
use super::strategy::{FaultUpdate, MQFaultStrategy};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
use crate::sim::rng::SimRng;
use smallvec::SmallVec;

/// `SendStatus`: the answers that mean "stored" (`MQClientAPIImpl#processSendResponse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendStatus {
    /// `SUCCESS` (0).
    SendOk,
    /// `FLUSH_DISK_TIMEOUT` (10).
    FlushDiskTimeout,
    /// `FLUSH_SLAVE_TIMEOUT` (12).
    FlushSlaveTimeout,
    /// `SLAVE_NOT_AVAILABLE` (11).
    SlaveNotAvailable,
}

impl SendStatus {
    /// The status as a trace reads it: its Rust name, as `{:?}` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            SendStatus::SendOk => "SendOk",
            SendStatus::FlushDiskTimeout => "FlushDiskTimeout",
            SendStatus::FlushSlaveTimeout => "FlushSlaveTimeout",
            SendStatus::SlaveNotAvailable => "SlaveNotAvailable",
        }
    }
}

/// How one attempt ended, as the actor layer saw it on the simulated network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The broker answered with a storing code. For a oneway send: the request was written.
    Stored(SendStatus),
    /// `RemotingConnectException`: no connection (a killed process's port refuses at once; a
    /// powered-off host makes the connect wait for `connectTimeoutMillis`, 3 s, first).
    Refused,
    /// `RemotingTimeoutException`: no answer within the attempt's timeout (a black hole, or an
    /// open connection to a host that went silent). Also stands for the other
    /// `RemotingException`s, which the send loop treats alike.
    TimedOut,
    /// Any other response code: `MQBrokerException(code)`.
    BrokerError(i32),
}

impl Outcome {
    /// `MQClientAPIImpl#processSendResponse`: the four storing codes are statuses; any other
    /// code throws `MQBrokerException`.
    pub fn from_response_code(code: i32) -> Outcome {
        use super::config::response_code::*;
        match code {
            SUCCESS => Outcome::Stored(SendStatus::SendOk),
            FLUSH_DISK_TIMEOUT => Outcome::Stored(SendStatus::FlushDiskTimeout),
            FLUSH_SLAVE_TIMEOUT => Outcome::Stored(SendStatus::FlushSlaveTimeout),
            SLAVE_NOT_AVAILABLE => Outcome::Stored(SendStatus::SlaveNotAvailable),
            other => Outcome::BrokerError(other),
        }
    }
}

/// Why an attempt failed, kept as the send's `exception`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// `RemotingConnectException`.
    Refused,
    /// `RemotingTimeoutException`.
    TimedOut,
    /// `MQBrokerException` with this response code.
    Broker(i32),
    /// `MQClientException("The broker[..] not exist")` from `sendKernelImpl`: no master address.
    NoBrokerAddress,
}

/// One request to put on the wire: send to `addr` and report within `timeout`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendAttempt {
    /// 0 for the first attempt (Java's `times`; for async, the retry count so far).
    pub times: u32,
    pub queue: MessageQueue,
    pub addr: Name,
    /// The remaining budget (`curTimeout`), possibly capped by `sendMsgMaxTimeoutPerRequest`.
    /// Zero is possible: Java's `NettyRemotingClient#invokeSync` then throws
    /// `RemotingTimeoutException` before writing (`left <= 0`), so report `TimedOut` at once.
    pub timeout: SimDuration,
}

/// One finished attempt, for traces and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRecord {
    pub queue: MessageQueue,
    /// `None` when no address was found and nothing was sent.
    pub addr: Option<Name>,
    pub started: SimTime,
    pub ended: SimTime,
    pub failure: Option<Failure>,
    /// The `updateFaultItem` call this attempt made.
    pub fault: FaultUpdate,
}

/// A send's attempts. Nearly every send makes one, and a bench hour makes millions of sends:
/// the first attempt is kept inline, so a send that goes through allocates nothing for it.
pub type Attempts = SmallVec<[AttemptRecord; 1]>;

/// How the whole send ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A `SendResult` was returned (sync), the callback's `onSuccess` ran (async), or the
    /// request was written (oneway). `status` may be a stored-but-not-OK one.
    Sent { status: SendStatus, queue: MessageQueue },
    /// `RemotingTooMuchRequestException("sendDefaultImpl call timeout")`: the budget was spent
    /// before an attempt could start.
    CallTimeout,
    /// `MQClientException("Send [n] times, still failed ...")` with `response_code` taken from
    /// the last failure (`ClientErrorCode` or the broker's code). For async, the exception the
    /// callback's `onException` gets after the last try.
    Failed { last: Failure, response_code: i32 },
    /// `MQBrokerException` thrown as is: a broker code not in `retryResponseCodes` (sync), or
    /// any broker error code (async, never retried).
    BrokerRejected { code: i32 },
    /// `MQClientException("No route info of this topic")`: no publish info, or no queues.
    NoRouteInfo,
}

/// The end of a send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    pub verdict: Verdict,
    /// Every attempt, including ones that failed without reaching the wire.
    pub attempts: Attempts,
    /// From the send's start to its end.
    pub elapsed: SimDuration,
}

impl Finished {
    pub fn ok(&self) -> bool {
        matches!(self.verdict, Verdict::Sent { .. })
    }
}

/// What to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Attempt(SendAttempt),
    Done(Finished),
}

/// What a send borrows from its producer while it decides: Java's `DefaultMQProducerImpl`
/// fields (`topicPublishInfoTable` entry, `mqFaultStrategy`, `defaultMQProducer`), its
/// `MQClientInstance#findBrokerAddressInPublish` (the master address of a broker name, from the
/// shared route cache), and the run's RNG.
pub struct SendEnv<'a> {
    pub tp: &'a mut TopicPublishInfo,
    pub strategy: &'a mut MQFaultStrategy,
    pub config: &'a ProducerConfig,
    pub resolve: &'a dyn Fn(Name) -> Option<Name>,
    pub rng: &'a mut SimRng,
}

/// The attempt in flight.
#[derive(Clone, Debug)]
pub(super) struct InFlight {
    pub queue: MessageQueue,
    pub addr: Name,
    pub begin: SimTime,
}

impl InFlight {
    pub fn record(self, now: SimTime, failure: Option<Failure>, fault: FaultUpdate) -> AttemptRecord {
        AttemptRecord { queue: self.queue, addr: Some(self.addr), started: self.begin, ended: now, failure, fault }
    }
}

/// `MQClientAPIImpl#processSendResponse`'s reading of an outcome: a status, or the exception.
pub(super) fn classify(outcome: Outcome) -> Result<SendStatus, Failure> {
    match outcome {
        Outcome::Stored(status) => Ok(status),
        Outcome::Refused => Err(Failure::Refused),
        Outcome::TimedOut => Err(Failure::TimedOut),
        Outcome::BrokerError(code) => Err(Failure::Broker(code)),
    }
}
