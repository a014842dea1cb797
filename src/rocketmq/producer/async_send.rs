//! The async send: one pass of `sendDefaultImpl` (`timesTotal` is 1 for async), then the retry
//! chain of `MQClientAPIImpl#sendMessageAsync` / `onExceptionImpl`.
//!
//! Async sends *do* retry in 5.3.x, up to `retryTimesWhenSendAsyncFailed` (2) times — but only
//! after a network failure, never after a broker error code, and the retry re-sends the same
//! request (same queue id) to the broker a fresh selection names.

use super::attempt::{
    classify, AttemptRecord, Attempts, Failure, Finished, InFlight, Outcome, SendAttempt, SendEnv, Step, Verdict,
};
use super::config::client_error_code;
use super::send::response_code_of;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;

/// One `send(msg, callback)`, until its callback runs.
#[derive(Clone, Debug)]
pub struct AsyncSend {
    begin_first: SimTime,
    /// `timeoutMillis` of the attempt in flight: the budget left when it started.
    remaining: SimDuration,
    /// `times` (an `AtomicInteger`): retries made so far.
    retries: u32,
    in_flight: Option<InFlight>,
    attempts: Attempts,
}

impl AsyncSend {
    /// `send(msg, callback, timeout)` at `now`. The async executor's queueing (Java checks
    /// `timeout > costTime` again when the task runs) is not modelled: the task runs at once.
    pub fn begin(now: SimTime, timeout: SimDuration) -> Self {
        AsyncSend { begin_first: now, remaining: timeout, retries: 0, in_flight: None, attempts: Attempts::new() }
    }

    /// `sendDefaultImpl(msg, ASYNC, callback, timeout)`: one selection (no last broker, no
    /// index reset), the budget check, and the first attempt. `sendKernelImpl` returns as soon
    /// as the request is handed to Netty, so `sendDefaultImpl` calls
    /// `updateFaultItem(broker, ~0 ms, false, true)` right away; the real latency is reported
    /// again when the answer comes.
    pub fn first(&mut self, now: SimTime, env: &mut SendEnv<'_>) -> Step {
        if !env.tp.ok() {
            return Step::Done(self.finish(now, Verdict::NoRouteInfo));
        }
        let Some(mq) = env.strategy.select_one_message_queue(now, env.tp, None, false, env.rng) else {
            return Step::Done(self.finish(now, Verdict::NoRouteInfo));
        };
        let cost = now.since(self.begin_first);
        if self.remaining < cost {
            return Step::Done(self.finish(now, Verdict::CallTimeout));
        }
        self.remaining = SimDuration(self.remaining.0 - cost.0);
        let Some(addr) = (env.resolve)(mq.broker_name) else {
            // MQClientException("The broker[..] not exist"), caught, loop over (timesTotal 1).
            let fault = env.strategy.update_fault_item(now, mq.broker_name, SimDuration::ZERO, false, true);
            let failure = Some(Failure::NoBrokerAddress);
            self.attempts.push(AttemptRecord { queue: mq, addr: None, started: now, ended: now, failure, fault });
            let last = Failure::NoBrokerAddress;
            return Step::Done(self.finish(now, Verdict::Failed { last, response_code: response_code_of(last) }));
        };
        env.strategy.update_fault_item(now, mq.broker_name, SimDuration::ZERO, false, true);
        self.launch(now, mq, addr)
    }

    /// The answer (or failure) of the attempt in flight, `InvokeCallback#operationSucceed` /
    /// `operationFail`.
    pub fn on_result(&mut self, now: SimTime, outcome: Outcome, env: &mut SendEnv<'_>) -> Step {
        let flight = self.in_flight.take().expect("on_result without an attempt in flight");
        let cost = now.since(flight.begin);
        let broker = flight.queue.broker_name;
        let queue = flight.queue;
        // Every completion reports its latency; a failure isolates, but never marks the broker
        // unreachable (the sync path's `!startDetectorEnable` rule does not exist here).
        let failed = classify(outcome).err();
        let fault = env.strategy.update_fault_item(now, broker, cost, failed.is_some(), true);
        self.attempts.push(flight.record(now, failed, fault));
        let failure = match classify(outcome) {
            // onSuccess, whatever the status: async never retries a not-OK store.
            Ok(status) => return Step::Done(self.finish(now, Verdict::Sent { status, queue })),
            Err(f) => f,
        };
        if let Failure::Broker(code) = failure {
            // processSendResponse threw inside operationSucceed: onExceptionImpl(needRetry=false).
            self.retries += 1;
            return Step::Done(self.finish(now, Verdict::BrokerRejected { code }));
        }
        // operationFail: onExceptionImpl(needRetry=true) with `timeoutMillis - cost` left.
        let left = self.remaining.0 as i64 - cost.0 as i64;
        self.retries += 1; // `curTimes.incrementAndGet()`
        if self.retries > env.config.retry_times_when_send_async_failed || left <= 0 {
            let verdict = Verdict::Failed { last: failure, response_code: client_error_code::UNSET };
            return Step::Done(self.finish(now, verdict));
        }
        self.remaining = SimDuration(left as u64);
        // `producer.selectOneMessageQueue(topicPublishInfo, brokerName, false)`: only the
        // chosen queue's *broker* is used; the request, queue id included, is sent unchanged.
        let chosen = env.strategy.select_one_message_queue(now, env.tp, Some(broker), false, env.rng);
        let retry_broker = chosen.map_or(broker, |mq| mq.broker_name);
        let Some(addr) = (env.resolve)(retry_broker) else {
            // Java would call invokeAsync(null, ...), which picks a *name server* channel;
            // the model ends the send instead.
            let verdict = Verdict::Failed { last: failure, response_code: client_error_code::UNSET };
            return Step::Done(self.finish(now, verdict));
        };
        let mq = super::publish_info::MessageQueue { broker_name: retry_broker, ..queue };
        self.launch(now, mq, addr)
    }

    fn launch(&mut self, now: SimTime, queue: super::publish_info::MessageQueue, addr: Name) -> Step {
        self.in_flight = Some(InFlight { queue, addr, begin: now });
        Step::Attempt(SendAttempt { times: self.retries, queue, addr, timeout: self.remaining })
    }

    fn finish(&mut self, now: SimTime, verdict: Verdict) -> Finished {
        Finished { verdict, attempts: std::mem::take(&mut self.attempts), elapsed: now.since(self.begin_first) }
    }
}
