//! Whole sends, driven the way the actor layer will drive them: hand out an attempt, report its
//! outcome at the virtual time it ends. Every number comes from the cited Java code.

use super::config::{client_error_code, response_code};
use super::*;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
use crate::sim::rng::SimRng;

fn ms(v: u64) -> SimDuration {
    SimDuration::from_millis(v)
}

/// A producer's borrowed state: queues a#0, b#0, c#0 (or the brokers given), a round-robin index
/// whose first pick is the first broker, and a master address `<broker>:10911` for each.
struct Producer {
    tp: TopicPublishInfo,
    strategy: MQFaultStrategy,
    config: ProducerConfig,
    rng: SimRng,
    addressless: Vec<&'static str>,
}

impl Producer {
    fn new(brokers: &[&str], config: ProducerConfig) -> Self {
        let qs = brokers.iter().map(|b| MessageQueue::new("T", *b, 0)).collect();
        Producer {
            tp: TopicPublishInfo::with_queues(qs, SendWhichQueue::starting_at(-1)),
            strategy: MQFaultStrategy::new(&config),
            config,
            rng: SimRng::new(42),
            addressless: Vec::new(),
        }
    }

    fn with<R>(&mut self, f: impl FnOnce(&mut SendEnv<'_>) -> R) -> R {
        let addressless = self.addressless.clone();
        let resolve = move |b: Name| (!addressless.contains(&b.as_str())).then(|| Name::new(&format!("{b}:10911")));
        let mut env = SendEnv {
            tp: &mut self.tp,
            strategy: &mut self.strategy,
            config: &self.config,
            resolve: &resolve,
            rng: &mut self.rng,
        };
        f(&mut env)
    }

    /// `send(msg)` at `now` (sync, `sendMsgTimeout`).
    fn sync(&mut self, now: SimTime) -> (Send, Step) {
        let mut send = Send::begin(
            now,
            CommunicationMode::Sync,
            self.config.send_msg_timeout,
            self.config.retry_times_when_send_failed,
        );
        let step = self.with(|env| send.next(now, env));
        (send, step)
    }
}

fn attempt(step: Step) -> SendAttempt {
    match step {
        Step::Attempt(a) => a,
        Step::Done(f) => panic!("expected an attempt, got {f:?}"),
    }
}

fn done(step: Step) -> Finished {
    match step {
        Step::Done(f) => f,
        Step::Attempt(a) => panic!("expected the end, got {a:?}"),
    }
}

#[test]
fn a_killed_brokers_refused_attempt_is_retried_on_another_broker_at_once() {
    // DefaultMQProducerImpl#sendDefaultImpl: catch RemotingException -> continue; the next
    // selection avoids lastBrokerName (MQFaultStrategy.BrokerFilter); curTimeout = 3000 - cost.
    let mut p = Producer::new(&["a", "b", "c"], ProducerConfig::default());
    let (mut send, step) = p.sync(SimTime(0));
    let first = attempt(step);
    assert_eq!((first.queue.broker_name.as_str(), first.timeout), ("a", ms(3000)));
    // A killed process: the connection is refused after one round trip, 1 ms.
    let second = attempt(p.with(|env| send.on_result(SimTime(1), Outcome::Refused, env)));
    assert_eq!((second.queue.broker_name.as_str(), second.timeout, second.times), ("b", ms(2999), 1));
    let end = done(p.with(|env| send.on_result(SimTime(3), Outcome::Stored(SendStatus::SendOk), env)));
    assert!(end.ok());
    assert_eq!((end.attempts.len(), end.elapsed), (2, ms(3)));
}

#[test]
fn a_black_holed_broker_burns_the_whole_budget_and_the_send_fails_with_access_broker_timeout() {
    // sendDefaultImpl: `if (timeout < costTime)` is strict, so after a timeout of exactly
    // 3000 ms the next attempts start with curTimeout 0, which NettyRemotingClient#invokeSync
    // turns into RemotingTimeoutException before writing (`left <= 0`). After 1 + 2 attempts the
    // loop ends: MQClientException "Send [3] times", code ACCESS_BROKER_TIMEOUT (10002).
    let mut p = Producer::new(&["a", "b", "c"], ProducerConfig::default());
    let (mut send, step) = p.sync(SimTime(0));
    assert_eq!(attempt(step).timeout, ms(3000));
    let second = attempt(p.with(|env| send.on_result(SimTime(3000), Outcome::TimedOut, env)));
    assert_eq!((second.queue.broker_name.as_str(), second.timeout), ("b", SimDuration::ZERO));
    let third = attempt(p.with(|env| send.on_result(SimTime(3000), Outcome::TimedOut, env)));
    assert_eq!((third.queue.broker_name.as_str(), third.timeout), ("c", SimDuration::ZERO));
    let end = done(p.with(|env| send.on_result(SimTime(3000), Outcome::TimedOut, env)));
    let response_code = client_error_code::ACCESS_BROKER_TIMEOUT;
    assert_eq!(end.verdict, Verdict::Failed { last: Failure::TimedOut, response_code });
    assert_eq!((end.attempts.len(), end.elapsed), (3, ms(3000)));
}

#[test]
fn an_attempt_that_overruns_the_budget_ends_the_send_with_call_timeout() {
    // sendDefaultImpl: costTime 3001 > timeout 3000 -> callTimeout = true; break; then
    // RemotingTooMuchRequestException("sendDefaultImpl call timeout"), no further attempt.
    let mut p = Producer::new(&["a", "b", "c"], ProducerConfig::default());
    let (mut send, _) = p.sync(SimTime(0));
    let end = done(p.with(|env| send.on_result(SimTime(3001), Outcome::Refused, env)));
    assert_eq!(end.verdict, Verdict::CallTimeout);
    assert_eq!(end.attempts.len(), 1);
}

#[test]
fn a_route_lookup_that_took_the_whole_budget_ends_in_call_timeout_before_any_attempt() {
    // sendDefaultImpl takes beginTimestampFirst before tryToFindTopicPublishInfo.
    let mut p = Producer::new(&["a"], ProducerConfig::default());
    let mut send = Send::begin(SimTime(0), CommunicationMode::Sync, ms(3000), 2);
    let end = done(p.with(|env| send.next(SimTime(3001), env)));
    assert_eq!(end.verdict, Verdict::CallTimeout);
    assert!(end.attempts.is_empty());
}

#[test]
fn retry_falls_back_to_the_last_broker_when_it_is_the_only_one() {
    // MQFaultStrategy#selectOneMessageQueue: BrokerFilter finds nothing, then
    // tpInfo.selectOneMessageQueue() returns the only broker again. Last failure
    // RemotingConnectException -> CONNECT_BROKER_EXCEPTION (10001).
    let mut p = Producer::new(&["a"], ProducerConfig::default());
    let (mut send, _) = p.sync(SimTime(0));
    let second = attempt(p.with(|env| send.on_result(SimTime(1), Outcome::Refused, env)));
    assert_eq!(second.queue.broker_name, "a");
    let third = attempt(p.with(|env| send.on_result(SimTime(2), Outcome::Refused, env)));
    assert_eq!((third.queue.broker_name.as_str(), third.times), ("a", 2));
    let end = done(p.with(|env| send.on_result(SimTime(3), Outcome::Refused, env)));
    let response_code = client_error_code::CONNECT_BROKER_EXCEPTION;
    assert_eq!(end.verdict, Verdict::Failed { last: Failure::Refused, response_code });
}

#[test]
fn a_retryable_broker_code_is_retried_and_any_other_is_thrown_at_once() {
    // sendDefaultImpl catch MQBrokerException: retryResponseCodes contains SYSTEM_BUSY (2);
    // MESSAGE_ILLEGAL (13) is not in it -> `throw e`.
    let mut p = Producer::new(&["a", "b"], ProducerConfig::default());
    let (mut send, _) = p.sync(SimTime(0));
    let busy = Outcome::from_response_code(response_code::SYSTEM_BUSY);
    let second = attempt(p.with(|env| send.on_result(SimTime(5), busy, env)));
    assert_eq!(second.queue.broker_name, "b");
    let illegal = Outcome::from_response_code(response_code::MESSAGE_ILLEGAL);
    let end = done(p.with(|env| send.on_result(SimTime(9), illegal, env)));
    assert_eq!(end.verdict, Verdict::BrokerRejected { code: response_code::MESSAGE_ILLEGAL });
    assert_eq!(end.attempts.len(), 2);
}

#[test]
fn a_stored_but_not_ok_answer_is_returned_unless_retry_another_broker_when_not_store_ok() {
    // sendDefaultImpl case SYNC: `if (sendStatus != SEND_OK && retryAnotherBrokerWhenNotStoreOK)
    // continue;` else return. After the loop, `if (sendResult != null) return sendResult`.
    let flush = Outcome::from_response_code(response_code::FLUSH_DISK_TIMEOUT);
    let mut p = Producer::new(&["a", "b"], ProducerConfig::default());
    let (mut send, _) = p.sync(SimTime(0));
    let end = done(p.with(|env| send.on_result(SimTime(5), flush, env)));
    assert!(matches!(end.verdict, Verdict::Sent { status: SendStatus::FlushDiskTimeout, .. }));

    let config = ProducerConfig { retry_another_broker_when_not_store_ok: true, ..Default::default() };
    let mut p = Producer::new(&["a", "b"], config);
    let (mut send, _) = p.sync(SimTime(0));
    attempt(p.with(|env| send.on_result(SimTime(5), flush, env)));
    attempt(p.with(|env| send.on_result(SimTime(10), Outcome::Refused, env)));
    let end = done(p.with(|env| send.on_result(SimTime(15), Outcome::Refused, env)));
    // Three attempts, the last two failed: the first attempt's not-OK result is returned.
    assert!(
        matches!(end.verdict, Verdict::Sent { status: SendStatus::FlushDiskTimeout, ref queue } if queue.broker_name == "a")
    );
    assert_eq!(end.attempts.len(), 3);
}

#[test]
fn with_latency_fault_on_a_refused_broker_is_isolated_for_10_s_and_later_sends_skip_it() {
    // sendDefaultImpl catch RemotingException: updateFaultItem(broker, latency, true, true)
    // (detector off) -> computeNotAvailableDuration(10000) = 10000 ms.
    let config = ProducerConfig { send_latency_fault_enable: true, ..Default::default() };
    let mut p = Producer::new(&["a", "b"], config);
    let (mut send, _) = p.sync(SimTime(0));
    attempt(p.with(|env| send.on_result(SimTime(1), Outcome::Refused, env)));
    let refused = &p.strategy.tolerance.item("a").unwrap().clone();
    assert_eq!((refused.start_timestamp, refused.reachable), (SimTime(10_001), true));
    // New sends before 10 001 ms never pick a; at 10 001 ms they may again.
    for t in [100, 5_000, 10_000] {
        let (_, step) = p.sync(SimTime(t));
        assert_eq!(attempt(step).queue.broker_name, "b", "at {t} ms");
    }
    let picks: Vec<Name> = (0..4).map(|_| attempt(p.sync(SimTime(10_001)).1).queue.broker_name).collect();
    assert!(picks.iter().any(|b| b == "a"), "isolation over: {picks:?}");
}

#[test]
fn with_the_detector_on_a_remoting_failure_marks_the_broker_unreachable() {
    // sendDefaultImpl catch RemotingException: `isStartDetectorEnable()` ->
    // updateFaultItem(broker, latency, true, false).
    let config = ProducerConfig { send_latency_fault_enable: true, start_detector_enable: true, ..Default::default() };
    let mut p = Producer::new(&["a", "b"], config);
    let (mut send, _) = p.sync(SimTime(0));
    attempt(p.with(|env| send.on_result(SimTime(1), Outcome::TimedOut, env)));
    assert!(!p.strategy.tolerance.is_reachable("a"));
}

#[test]
fn a_slow_successful_send_isolates_its_broker_by_the_latency_table() {
    // sendDefaultImpl: updateFaultItem(broker, endTimestamp - beginTimestampPrev, false, true);
    // 1800 <= 2000 < 3000 -> notAvailableDuration[3] = 5000 ms.
    let config = ProducerConfig { send_latency_fault_enable: true, ..Default::default() };
    let mut p = Producer::new(&["a", "b"], config);
    let (mut send, _) = p.sync(SimTime(0));
    let end = done(p.with(|env| send.on_result(SimTime(2000), Outcome::Stored(SendStatus::SendOk), env)));
    assert_eq!(end.attempts[0].fault.not_available, Some(ms(5000)));
    assert!(!p.strategy.tolerance.is_available(SimTime(6_999), "a"));
    assert!(p.strategy.tolerance.is_available(SimTime(7_000), "a"));
}

#[test]
fn with_latency_fault_off_failures_leave_no_fault_items() {
    // MQFaultStrategy#updateFaultItem does nothing unless sendLatencyFaultEnable (default false).
    let mut p = Producer::new(&["a", "b"], ProducerConfig::default());
    let (mut send, _) = p.sync(SimTime(0));
    attempt(p.with(|env| send.on_result(SimTime(1), Outcome::Refused, env)));
    assert!(p.strategy.tolerance.item("a").is_none());
    assert_eq!(attempt(p.sync(SimTime(2)).1).queue.broker_name, "a", "round robin resumes at a");
}

#[test]
fn a_broker_without_an_address_is_skipped_without_sending() {
    // sendKernelImpl: brokerAddr == null -> MQClientException("The broker[a] not exist");
    // sendDefaultImpl catch MQClientException -> continue.
    let mut p = Producer::new(&["a", "b"], ProducerConfig::default());
    p.addressless = vec!["a"];
    let (mut send, step) = p.sync(SimTime(0));
    let a = attempt(step);
    assert_eq!((a.queue.broker_name.as_str(), a.times), ("b", 1));
    let end = done(p.with(|env| send.on_result(SimTime(2), Outcome::Stored(SendStatus::SendOk), env)));
    assert_eq!(end.attempts[0].failure, Some(Failure::NoBrokerAddress));
}

#[test]
fn the_per_request_cap_applies_to_every_attempt_but_the_last() {
    // 5.3.3 sendDefaultImpl: `maxSendTimeoutPerRequest > -1 && canRetryAgain && curTimeout > max`.
    let config = ProducerConfig { send_msg_max_timeout_per_request: Some(ms(1000)), ..Default::default() };
    let mut p = Producer::new(&["a", "b", "c"], config);
    let (mut send, step) = p.sync(SimTime(0));
    assert_eq!(attempt(step).timeout, ms(1000));
    assert_eq!(attempt(p.with(|env| send.on_result(SimTime(1000), Outcome::TimedOut, env))).timeout, ms(1000));
    assert_eq!(attempt(p.with(|env| send.on_result(SimTime(2000), Outcome::TimedOut, env))).timeout, ms(1000));
}

#[test]
fn oneway_makes_one_attempt() {
    // sendDefaultImpl: timesTotal = 1 unless SYNC.
    let mut p = Producer::new(&["a", "b"], ProducerConfig::default());
    let mut send = Send::begin(SimTime(0), CommunicationMode::Oneway, ms(3000), 2);
    p.with(|env| send.next(SimTime(0), env));
    let end = done(p.with(|env| send.on_result(SimTime(1), Outcome::Refused, env)));
    assert!(matches!(end.verdict, Verdict::Failed { last: Failure::Refused, .. }));
}

#[test]
fn a_topic_without_queues_fails_with_no_route_info() {
    // sendDefaultImpl: topicPublishInfo.ok() false -> "No route info of this topic".
    let mut p = Producer::new(&[], ProducerConfig::default());
    assert_eq!(done(p.sync(SimTime(0)).1).verdict, Verdict::NoRouteInfo);
}

fn async_send(p: &mut Producer) -> (AsyncSend, Step) {
    let mut send = AsyncSend::begin(SimTime(0), p.config.send_msg_timeout);
    let step = p.with(|env| send.first(SimTime(0), env));
    (send, step)
}

#[test]
fn async_retries_a_network_failure_on_another_broker_with_what_is_left_of_the_budget() {
    // MQClientAPIImpl#sendMessageAsync operationFail -> onExceptionImpl(needRetry = true):
    // ++times <= retryTimesWhenSendAsyncFailed (2) && timeoutMillis - cost > 0; the broker from
    // selectOneMessageQueue(tp, brokerName, false), the request (queue id) unchanged.
    let mut p = Producer::new(&["a", "b"], ProducerConfig::default());
    p.tp = TopicPublishInfo::with_queues(
        vec![MessageQueue::new("T", "a", 3), MessageQueue::new("T", "b", 0)],
        SendWhichQueue::starting_at(-1),
    );
    let (mut send, step) = async_send(&mut p);
    assert_eq!(attempt(step).timeout, ms(3000));
    let retry = attempt(p.with(|env| send.on_result(SimTime(1000), Outcome::TimedOut, env)));
    assert_eq!((retry.queue.broker_name.as_str(), retry.queue.queue_id), ("b", 3));
    assert_eq!((retry.timeout, retry.times), (ms(2000), 1));
    let third = attempt(p.with(|env| send.on_result(SimTime(1500), Outcome::Refused, env)));
    assert_eq!((third.queue.broker_name.as_str(), third.timeout, third.times), ("a", ms(1500), 2));
    // The third failure makes times 3 > 2: onException.
    let end = done(p.with(|env| send.on_result(SimTime(1600), Outcome::Refused, env)));
    assert!(matches!(end.verdict, Verdict::Failed { last: Failure::Refused, .. }));
    assert_eq!(end.attempts.len(), 3);
}

#[test]
fn async_does_not_retry_a_broker_error_or_a_spent_budget() {
    // operationSucceed: processSendResponse throws MQBrokerException -> onExceptionImpl(needRetry
    // = false). operationFail after the whole budget: `timeoutMillis > 0` fails.
    let mut p = Producer::new(&["a", "b"], ProducerConfig::default());
    let (mut send, _) = async_send(&mut p);
    let busy = Outcome::from_response_code(response_code::SYSTEM_BUSY);
    let end = done(p.with(|env| send.on_result(SimTime(5), busy, env)));
    assert_eq!(end.verdict, Verdict::BrokerRejected { code: response_code::SYSTEM_BUSY });

    let (mut send, _) = async_send(&mut p);
    let end = done(p.with(|env| send.on_result(SimTime(3000), Outcome::TimedOut, env)));
    assert!(matches!(end.verdict, Verdict::Failed { last: Failure::TimedOut, .. }));
    assert_eq!(end.attempts.len(), 1);
}

#[test]
fn async_failures_isolate_but_never_mark_the_broker_unreachable() {
    // MQClientAPIImpl#sendMessageAsync operationFail: updateFaultItem(broker, cost, true, true),
    // even with the detector on (the sync path would pass reachable = false).
    let config = ProducerConfig { send_latency_fault_enable: true, start_detector_enable: true, ..Default::default() };
    let mut p = Producer::new(&["a", "b"], config);
    let (mut send, _) = async_send(&mut p);
    attempt(p.with(|env| send.on_result(SimTime(1), Outcome::Refused, env)));
    let a = p.strategy.tolerance.item("a").unwrap();
    assert_eq!((a.start_timestamp, a.reachable), (SimTime(10_001), true));
}
