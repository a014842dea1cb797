//! The settings the send path reads, with their RocketMQ 5.3.x defaults, and the response codes
//! it branches on.
//!
//! Java spreads these over `DefaultMQProducer` (send and retry knobs) and its parent
//! `ClientConfig` (latency-fault and detector switches); the model keeps them in one struct.

use crate::sim::clock::SimDuration;
use std::collections::BTreeSet;

/// `ResponseCode` / `RemotingSysResponseCode`: the codes a broker answers a send with.
pub mod response_code {
    /// `RemotingSysResponseCode.SUCCESS`: stored, `SendStatus.SEND_OK`.
    pub const SUCCESS: i32 = 0;
    pub const SYSTEM_ERROR: i32 = 1;
    pub const SYSTEM_BUSY: i32 = 2;
    /// Stored, but the flush did not finish in time: `SendStatus.FLUSH_DISK_TIMEOUT`.
    pub const FLUSH_DISK_TIMEOUT: i32 = 10;
    /// Stored, but no slave to replicate to: `SendStatus.SLAVE_NOT_AVAILABLE`.
    pub const SLAVE_NOT_AVAILABLE: i32 = 11;
    /// Stored, but the slave did not ack in time: `SendStatus.FLUSH_SLAVE_TIMEOUT`.
    pub const FLUSH_SLAVE_TIMEOUT: i32 = 12;
    pub const MESSAGE_ILLEGAL: i32 = 13;
    pub const SERVICE_NOT_AVAILABLE: i32 = 14;
    pub const NO_PERMISSION: i32 = 16;
    pub const TOPIC_NOT_EXIST: i32 = 17;
    pub const NO_BUYER_ID: i32 = 204;
    pub const NOT_IN_CURRENT_UNIT: i32 = 205;
    pub const GO_AWAY: i32 = 1500;
}

/// `ClientErrorCode`: the code `sendDefaultImpl` puts on the `MQClientException` it throws
/// after the last attempt, chosen by the last attempt's exception class.
pub mod client_error_code {
    /// The last attempt failed with `RemotingConnectException`.
    pub const CONNECT_BROKER_EXCEPTION: i32 = 10001;
    /// The last attempt failed with `RemotingTimeoutException`.
    pub const ACCESS_BROKER_TIMEOUT: i32 = 10002;
    /// The last attempt failed with an `MQClientException` (no address for the broker).
    pub const BROKER_NOT_EXIST_EXCEPTION: i32 = 10003;
    /// `MQClientException`'s own default when nothing sets one.
    pub const UNSET: i32 = -1;
}

/// How the message is sent: `CommunicationMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommunicationMode {
    /// `send(msg)`: waits for the broker's answer; retried in `sendDefaultImpl`.
    Sync,
    /// `send(msg, callback)`: answered through the callback; retried in
    /// `MQClientAPIImpl#onExceptionImpl`, not in `sendDefaultImpl` (see `async_send`).
    Async,
    /// `sendOneway(msg)`: written and forgotten; never retried.
    Oneway,
}

/// The producer settings the model reads; `Default` gives RocketMQ 5.3.3's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerConfig {
    /// `DefaultMQProducer.sendMsgTimeout` = 3000 ms: the budget all attempts of one send share.
    pub send_msg_timeout: SimDuration,
    /// `DefaultMQProducer.sendMsgMaxTimeoutPerRequest` = -1 (off; `None` here): caps every
    /// attempt but the last. New in 5.3.3 — 5.3.0–5.3.2 have no such field.
    pub send_msg_max_timeout_per_request: Option<SimDuration>,
    /// `DefaultMQProducer.retryTimesWhenSendFailed` = 2: a sync send makes 1 + 2 attempts.
    pub retry_times_when_send_failed: u32,
    /// `DefaultMQProducer.retryTimesWhenSendAsyncFailed` = 2: retries of an async send after a
    /// network failure (`MQClientAPIImpl#onExceptionImpl`).
    pub retry_times_when_send_async_failed: u32,
    /// `DefaultMQProducer.retryAnotherBrokerWhenNotStoreOK` = false: a stored-but-not-`SEND_OK`
    /// answer is returned as it is instead of retried.
    pub retry_another_broker_when_not_store_ok: bool,
    /// `DefaultMQProducer.retryResponseCodes`: the broker error codes a sync send retries.
    pub retry_response_codes: BTreeSet<i32>,
    /// `ClientConfig.sendLatencyEnable` = false (`-Dcom.rocketmq.sendLatencyEnable`): with it
    /// off, `MQFaultStrategy#updateFaultItem` does nothing and selection ignores broker health.
    pub send_latency_fault_enable: bool,
    /// `ClientConfig.startDetectorEnable` = false (`-Dcom.rocketmq.startDetectorEnable`): lets
    /// the detector probe isolated brokers, and makes a sync `RemotingException` mark its broker
    /// unreachable instead of only isolating it.
    pub start_detector_enable: bool,
    /// `ClientConfig.detectTimeout` = 200 ms: the probe's timeout.
    pub detect_timeout: SimDuration,
    /// `ClientConfig.detectInterval` = 2000 ms: the least time between two probes of one broker.
    pub detect_interval: SimDuration,
}

impl Default for ProducerConfig {
    fn default() -> Self {
        use response_code::*;
        ProducerConfig {
            send_msg_timeout: SimDuration::from_millis(3000),
            send_msg_max_timeout_per_request: None,
            retry_times_when_send_failed: 2,
            retry_times_when_send_async_failed: 2,
            retry_another_broker_when_not_store_ok: false,
            // DefaultMQProducer.retryResponseCodes, in its declaration order.
            retry_response_codes: BTreeSet::from([
                TOPIC_NOT_EXIST,
                SERVICE_NOT_AVAILABLE,
                SYSTEM_ERROR,
                SYSTEM_BUSY,
                NO_PERMISSION,
                NO_BUYER_ID,
                NOT_IN_CURRENT_UNIT,
                GO_AWAY,
            ]),
            send_latency_fault_enable: false,
            start_detector_enable: false,
            detect_timeout: SimDuration::from_millis(200),
            detect_interval: SimDuration::from_millis(2000),
        }
    }
}
