//! The producer's send path (RocketMQ 5.3.x `DefaultMQProducerImpl`), pure.
//!
//! A send picks a write queue round robin from the topic's `TopicPublishInfo`, puts one attempt
//! on the wire, and on failure tries again — elsewhere if it can — until it succeeds, runs out
//! of attempts, or spends its `sendMsgTimeout`. With `sendLatencyFaultEnable` on, every attempt
//! also tells `MQFaultStrategy` how its broker did, and slow or failing brokers are skipped for
//! a while. Nothing here does I/O: the actor layer delivers each [`SendAttempt`] over the
//! simulated network and reports its [`Outcome`].
//!
//! # Layout
//!
//! - [`config`] — `DefaultMQProducer`/`ClientConfig` settings and defaults, response codes.
//! - [`publish_info`] — `TopicPublishInfo` built from a route, its round-robin index.
//! - [`latency`] — `LatencyFaultToleranceImpl`: fault items, isolation, the detector.
//! - [`strategy`] — `MQFaultStrategy`: queue selection and the latency → isolation table.
//! - [`attempt`] — the data exchanged with the actor layer: attempts, outcomes, verdicts.
//! - [`send`] — the sync/oneway loop of `sendDefaultImpl`.
//! - [`async_send`] — the async send and its retries in `MQClientAPIImpl#onExceptionImpl`.
//!
//! # Driving a send
//!
//! ```text
//! Send::begin(now, mode, timeout, retries)
//!   └─ next(now, env) ──▶ Step::Attempt(a) ──actor: deliver a, wait ≤ a.timeout──▶ on_result(now, outcome, env)
//!                    └──▶ Step::Done(finished)                                        └─▶ Step::Attempt | Step::Done
//! ```
//!
//! See `docs/producer-model.md` for what is modelled, from which Java methods, and what is not.

pub mod async_send;
pub mod attempt;
pub mod config;
pub mod latency;
pub mod publish_info;
pub mod send;
pub mod strategy;

#[cfg(test)]
mod tests;

pub use async_send::AsyncSend;
pub use attempt::{AttemptRecord, Failure, Finished, Outcome, SendAttempt, SendEnv, SendStatus, Step, Verdict};
pub use config::{CommunicationMode, ProducerConfig};
pub use latency::{DetectAction, FaultItem, LatencyFaultTolerance};
pub use publish_info::{MessageQueue, SendWhichQueue, TopicPublishInfo};
pub use send::Send;
pub use strategy::{FaultUpdate, MQFaultStrategy};
