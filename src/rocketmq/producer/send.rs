//! The sync and oneway send loop of `DefaultMQProducerImpl#sendDefaultImpl`, as a state
//! machine: [`Send::next`] picks a queue and hands out an attempt, [`Send::on_result`] takes
//! its outcome and either hands out the next attempt or ends the send.
//!
//! Async sends make a single attempt here and retry elsewhere; they have their own machine in
//! `async_send`.

use super::attempt::{classify, Failure, Finished, InFlight, Outcome, SendAttempt, SendEnv, SendStatus, Step, Verdict};
use super::attempt::{AttemptRecord, Attempts};
use super::config::{client_error_code, CommunicationMode};
use super::publish_info::MessageQueue;
use crate::sim::clock::{SimDuration, SimTime};

/// One sync or oneway `send`, from `sendDefaultImpl`'s first line to its return or throw.
#[derive(Clone, Debug)]
pub struct Send {
    mode: CommunicationMode,
    /// The `timeout` argument: `sendMsgTimeout` for `send(msg)`.
    timeout: SimDuration,
    /// `beginTimestampFirst`, taken *before* `tryToFindTopicPublishInfo`: a route lookup the
    /// send has to wait for is paid from the same budget.
    begin_first: SimTime,
    /// `timesTotal`: `1 + retryTimesWhenSendFailed` for sync, 1 for oneway.
    times_total: u32,
    /// `times`, the loop counter.
    times: u32,
    /// `mq`: the queue last selected; its broker is `lastBrokerName` for the next selection.
    mq: Option<MessageQueue>,
    in_flight: Option<InFlight>,
    /// `exception`: the last attempt's failure.
    exception: Option<Failure>,
    /// `sendResult`: the last stored answer, kept when a not-OK one is retried.
    send_result: Option<(SendStatus, MessageQueue)>,
    call_timeout: bool,
    attempts: Attempts,
    /// A planted bug, for the property tests only (see [`Self::ignoring_its_timeout`]).
    ignores_timeout: bool,
}

impl Send {
    /// `sendDefaultImpl(msg, mode, null, timeout)` begins at `now`. Async is not handled here.
    pub fn begin(
        now: SimTime,
        mode: CommunicationMode,
        timeout: SimDuration,
        retry_times_when_send_failed: u32,
    ) -> Self {
        assert!(mode != CommunicationMode::Async, "async sends retry in MQClientAPIImpl: use AsyncSend");
        Send {
            mode,
            timeout,
            begin_first: now,
            times_total: if mode == CommunicationMode::Sync { 1 + retry_times_when_send_failed } else { 1 },
            times: 0,
            mq: None,
            in_flight: None,
            exception: None,
            send_result: None,
            call_timeout: false,
            attempts: Attempts::new(),
            ignores_timeout: false,
        }
    }

    /// Test-only: the send with a planted bug — no `timeout < costTime` check, and every attempt
    /// handed the whole `timeout` instead of what is left of it — so the property tests can
    /// show that `send_within_timeout` catches a producer that ignores its timeout.
    #[doc(hidden)]
    pub fn ignoring_its_timeout(mut self) -> Self {
        self.ignores_timeout = true;
        self
    }

    /// The loop from where it stands: select a queue, check the budget, resolve the broker's
    /// address, and hand out the attempt — or end the send. Call once after [`Self::begin`]
    /// (when the publish info is at hand); [`Self::on_result`] calls it for the retries.
    pub fn next(&mut self, now: SimTime, env: &mut SendEnv<'_>) -> Step {
        assert!(self.in_flight.is_none(), "an attempt is still in flight");
        // `if (topicPublishInfo != null && topicPublishInfo.ok())`, checked once.
        if self.times == 0 && self.attempts.is_empty() && !env.tp.ok() {
            return Step::Done(self.finish_with(now, Verdict::NoRouteInfo));
        }
        while self.times < self.times_total {
            let last_broker_name = self.mq.map(|mq| mq.broker_name);
            // `if (times > 0) resetIndex = true` — only read when latency fault is on.
            let reset_index = self.times > 0;
            let selected = env.strategy.select_one_message_queue(now, env.tp, last_broker_name, reset_index, env.rng);
            let Some(mq) = selected else { break };
            self.mq = Some(mq);
            // `costTime = beginTimestampPrev - beginTimestampFirst; if (timeout < costTime)`:
            // strict, so a budget spent to the millisecond still makes a zero-timeout attempt.
            let cost = now.since(self.begin_first);
            if self.timeout < cost && !self.ignores_timeout {
                self.call_timeout = true;
                break;
            }
            let left = if self.ignores_timeout { self.timeout } else { SimDuration(self.timeout.0 - cost.0) };
            let mut cur_timeout = left;
            // 5.3.3's `sendMsgMaxTimeoutPerRequest` caps every attempt that can still be retried.
            let can_retry_again = self.times + 1 < self.times_total;
            if let Some(max) = env.config.send_msg_max_timeout_per_request {
                if can_retry_again && cur_timeout > max {
                    cur_timeout = max;
                }
            }
            match (env.resolve)(mq.broker_name) {
                Some(addr) => {
                    self.in_flight = Some(InFlight { queue: mq, addr, begin: now });
                    return Step::Attempt(SendAttempt { times: self.times, queue: mq, addr, timeout: cur_timeout });
                }
                None => {
                    // `sendKernelImpl` throws MQClientException("The broker[..] not exist")
                    // without sending; the catch updates the item (latency ~0, false, true)
                    // and continues at once. (Java first retries the route lookup; the model
                    // leaves that to the caller's route cache.)
                    let fault = env.strategy.update_fault_item(now, mq.broker_name, SimDuration::ZERO, false, true);
                    let failure = Some(Failure::NoBrokerAddress);
                    let record = AttemptRecord { queue: mq, addr: None, started: now, ended: now, failure, fault };
                    self.attempts.push(record);
                    self.exception = failure;
                    self.times += 1;
                }
            }
        }
        Step::Done(self.finish(now))
    }

    /// The attempt handed out last ended at `now` with `outcome`. Mirrors the body after
    /// `sendKernelImpl` and its four `catch` blocks.
    pub fn on_result(&mut self, now: SimTime, outcome: Outcome, env: &mut SendEnv<'_>) -> Step {
        let flight = self.in_flight.take().expect("on_result without an attempt in flight");
        let latency = now.since(flight.begin);
        let broker = flight.queue.broker_name;
        match classify(outcome) {
            Ok(status) => {
                // `updateFaultItem(brokerName, endTimestamp - beginTimestampPrev, false, true)`.
                let fault = env.strategy.update_fault_item(now, broker, latency, false, true);
                let queue = flight.queue;
                self.attempts.push(flight.record(now, None, fault));
                // ONEWAY returns at once; SYNC retries a not-OK status only when
                // `retryAnotherBrokerWhenNotStoreOK`, keeping it as the fallback result.
                let retry = self.mode == CommunicationMode::Sync
                    && status != SendStatus::SendOk
                    && env.config.retry_another_broker_when_not_store_ok;
                if !retry {
                    return Step::Done(self.finish_with(now, Verdict::Sent { status, queue }));
                }
                self.send_result = Some((status, queue));
            }
            Err(failure @ (Failure::Refused | Failure::TimedOut)) => {
                // `catch (RemotingException e)`: isolate (10 s); mark it unreachable only when
                // the detector is on to bring it back.
                let reachable = !env.strategy.start_detector_enable();
                let fault = env.strategy.update_fault_item(now, broker, latency, true, reachable);
                self.attempts.push(flight.record(now, Some(failure), fault));
                self.exception = Some(failure);
            }
            Err(failure @ Failure::Broker(code)) => {
                // `catch (MQBrokerException e)`: isolate and mark unreachable, whatever the
                // detector setting; retry only the codes in `retryResponseCodes`.
                let fault = env.strategy.update_fault_item(now, broker, latency, true, false);
                self.attempts.push(flight.record(now, Some(failure), fault));
                self.exception = Some(failure);
                if !env.config.retry_response_codes.contains(&code) {
                    let verdict = match self.send_result {
                        Some((status, queue)) => Verdict::Sent { status, queue },
                        None => Verdict::BrokerRejected { code },
                    };
                    return Step::Done(self.finish_with(now, verdict));
                }
            }
            Err(Failure::NoBrokerAddress) => unreachable!("classify never yields it"),
        }
        // `continue`: the for loop's `times++`, then the next selection at once.
        self.times += 1;
        self.next(now, env)
    }

    /// After the loop: a kept result wins, then the call timeout, then the last exception.
    fn finish(&mut self, now: SimTime) -> Finished {
        let verdict = if let Some((status, queue)) = self.send_result {
            Verdict::Sent { status, queue }
        } else if self.call_timeout {
            Verdict::CallTimeout
        } else {
            let last = self.exception.expect("the loop ran at least once and failed");
            Verdict::Failed { last, response_code: response_code_of(last) }
        };
        self.finish_with(now, verdict)
    }

    fn finish_with(&mut self, now: SimTime, verdict: Verdict) -> Finished {
        Finished { verdict, attempts: std::mem::take(&mut self.attempts), elapsed: now.since(self.begin_first) }
    }
}

/// The `setResponseCode` chain at the end of `sendDefaultImpl`. `Failed` is only built from the
/// retried failures, so a broker code here is one in `retryResponseCodes`.
pub(super) fn response_code_of(last: Failure) -> i32 {
    match last {
        Failure::Broker(code) => code,
        Failure::Refused => client_error_code::CONNECT_BROKER_EXCEPTION,
        Failure::TimedOut => client_error_code::ACCESS_BROKER_TIMEOUT,
        Failure::NoBrokerAddress => client_error_code::BROKER_NOT_EXIST_EXCEPTION,
    }
}
