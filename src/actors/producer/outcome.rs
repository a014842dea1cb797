//! How a producer's request to a broker ended, in the send loop's terms: the broker's answer,
//! or the remoting exception Java would throw, in words for the trace.

use crate::actors::remoting::{Done, Failure as NetFailure};
use crate::rocketmq::producer::Outcome;
use crate::rocketmq::wire::RmqMsg;

/// How a request to a broker ended, as the send loop reads it, and in words when it failed.
pub(super) fn outcome(done: Done<(usize, u64)>) -> ((usize, u64), Outcome, Option<String>) {
    match done {
        Done::Answered { purpose, reply: RmqMsg::SendMessageReply { code, .. }, .. } => {
            let outcome = Outcome::from_response_code(i32::from(code.code()));
            let why = (!code.is_ok()).then(|| format!("MQBrokerException: {code} ({})", code.code()));
            (purpose, outcome, why)
        }
        // No other answer can come back to a send.
        Done::Answered { purpose, .. } => (purpose, Outcome::TimedOut, Some("an unexpected answer".into())),
        Done::Failed { purpose, failure: f @ NetFailure::Connect(_), .. } => {
            (purpose, Outcome::Refused, Some(format!("RemotingConnectException: {f}")))
        }
        // A timeout, or the channel closing under the request (`RemotingSendRequestException`):
        // the send loop treats every `RemotingException` alike.
        Done::Failed {
            purpose,
            failure: f @ (NetFailure::Timeout(_) | NetFailure::TimeoutKept { .. } | NetFailure::ConnectedTooLate(_)),
            ..
        } => (purpose, Outcome::TimedOut, Some(format!("RemotingTimeoutException: {f}"))),
        // `operationFail` with the scan's `RemotingTimeoutException`: `sendMessageAsync` wraps
        // it as "wait response timeout" for `onExceptionImpl`.
        Done::Failed { purpose, failure: f @ NetFailure::ScanTimeout(_), .. } => {
            (purpose, Outcome::TimedOut, Some(format!("MQClientException: wait response timeout: {f}")))
        }
        Done::Failed { purpose, failure: f @ NetFailure::Closed, .. } => {
            (purpose, Outcome::TimedOut, Some(format!("RemotingSendRequestException: {f}")))
        }
    }
}
