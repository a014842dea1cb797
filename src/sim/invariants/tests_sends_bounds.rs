//! The three producer invariants at their exact bounds, on `tests_sends`' hand-built cluster
//! (`a0` = broker-a at 10.0.0.1, `b0` = broker-b at 10.0.0.2, four queues of `T` each, client
//! `c1`, producer `p1`). Each bound is asked one millisecond before and at its edge.
//!
//! Bounds are written out from the Java numbers, never from `sends`' or `monitor`'s own
//! constants, so a constant that drifts fails here:
//! - `DefaultMQProducer#sendMsgTimeout` 3 s (the scenario's `send_timeout` default);
//! - `NettyClientConfig#connectTimeoutMillis` 3 s (the scenario's `connect_timeout` default);
//! - `DefaultMQProducer#retryTimesWhenSendFailed` 2, so three attempts (`times` 0, 1, 2).

use super::derive::Configs;
use super::sends::{AttemptSeen, Settled};
use super::tests_sends::{Fixture, BOTH, CLUSTER};
use super::Invariant;
use crate::rocketmq::types::{perm, BrokerData, QueueData, TopicRouteData};
use crate::sim::clock::SimTime;
use crate::sim::ids::ProcState;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A sync send's bound with the defaults: `sendMsgTimeout` 3 s + `connectTimeoutMillis` 3 s.
const BOUND: u64 = 3_000 + 3_000;

fn t(ms: u64) -> SimTime {
    SimTime(ms)
}

/// `CLUSTER` with `p1`'s block given `extra` lines and a `[network]` block of `network` lines.
fn cluster_with(producer: &str, network: &str) -> String {
    let with_producer = CLUSTER.replace("rate = 1\n", &format!("rate = 1\n{producer}\n"));
    format!("{with_producer}\n[network]\n{network}\n")
}

/// Send `id` of `p1` begins at `ms`, the last fault having ended at `quiet_since` ms.
fn start(f: &mut Fixture, ms: u64, id: u64, quiet_since: Option<u64>) {
    let configs = Configs::new(&f.scenario);
    let settled = Settled { quiet_since: quiet_since.map(SimTime), state: &f.state, configs: &configs };
    f.watch.started(t(ms), "p1", id, &f.world, settled);
}

/// Attempt `attempt` (0 for the first) of send `id`, as the producer actor reports it.
fn attempt(
    f: &mut Fixture,
    id: u64,
    attempt: u32,
    broker: &str,
    addr: &str,
    queue: u32,
) -> Option<(Invariant, String)> {
    let seen = AttemptSeen { producer: "p1", send: id, attempt, broker, addr, queue };
    f.watch.attempt(&seen, &f.world)
}

fn kinds(found: &[(Invariant, String)]) -> Vec<Invariant> {
    found.iter().map(|(i, _)| *i).collect()
}

/// One broker of a hand-built route.
struct Group<'a> {
    name: &'a str,
    master: &'a str,
    slave: Option<&'a str>,
    write: u32,
    read: u32,
    perm: u32,
}

fn group<'a>(name: &'a str, master: &'a str) -> Group<'a> {
    Group { name, master, slave: None, write: 4, read: 4, perm: perm::READ_WRITE }
}

fn set_groups(f: &mut Fixture, groups: &[Group<'_>]) {
    let mut r =
        TopicRouteData { queue_datas: Vec::new(), broker_datas: Vec::new(), filter_server_table: BTreeMap::new() };
    for g in groups {
        let q = QueueData {
            broker_name: g.name.into(),
            read_queue_nums: g.read,
            write_queue_nums: g.write,
            perm: g.perm,
            topic_sys_flag: 0,
        };
        r.queue_datas.push(q.into());
        let mut b = BrokerData::new("DefaultCluster", g.name);
        b.broker_addrs.insert(0, g.master.into());
        if let Some(slave) = g.slave {
            b.broker_addrs.insert(1, slave.into());
        }
        r.broker_datas.push(b.into());
    }
    f.client.borrow_mut().on_route("T", Some(Rc::new(r)));
}

// ---- send_within_timeout -------------------------------------------------------------------

#[test]
fn a_sync_send_is_overdue_one_millisecond_after_3_s_plus_3_s_not_at_it() {
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    // Still running: the check runs before each instant; at 16.000 s the send may still end.
    assert_eq!(f.watch.before_instant(t(10_000 + BOUND)), None);
    let (i, detail) = f.watch.before_instant(t(10_000 + BOUND + 1)).expect("running 1 ms past 6 s");
    assert_eq!(i, Invariant::SendWithinTimeout);
    assert!(detail.contains("was still running at 16.001s"), "{detail}");

    // Ended: at the bound is allowed, 1 ms later is not (told by `SendDone`, with no check of
    // the instants between).
    start(&mut f, 20_000, 2, None);
    assert!(f.watch.done(t(20_000 + BOUND), "p1", 2, false, "timeout").is_empty());
    start(&mut f, 30_000, 3, None);
    let found = f.watch.done(t(30_000 + BOUND + 1), "p1", 3, false, "timeout");
    assert_eq!(kinds(&found), [Invariant::SendWithinTimeout]);
    assert!(found[0].1.contains("took until 36.001s"), "{}", found[0].1);
    // A success is held to the same bound.
    start(&mut f, 40_000, 4, None);
    assert_eq!(kinds(&f.watch.done(t(40_000 + BOUND + 1), "p1", 4, true, "SendOk")), [Invariant::SendWithinTimeout]);
}

#[test]
fn a_send_that_ended_in_time_is_never_reported_later() {
    // Control: the overdue entry goes with the send.
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    assert!(f.watch.done(t(12_000), "p1", 1, true, "SendOk").is_empty());
    assert_eq!(f.watch.before_instant(t(600_000)), None);
}

#[test]
fn a_non_default_send_timeout_and_connect_timeout_make_the_bound() {
    // `send_timeout = "1500ms"` (`sendMsgTimeout`) + `connect_timeout = "2s"`
    // (`connectTimeoutMillis`): 3.5 s.
    let toml = cluster_with("send_timeout = \"1500ms\"", "connect_timeout = \"2s\"");
    let mut f = Fixture::from_toml(&toml);
    let bound = 1_500 + 2_000;
    start(&mut f, 10_000, 1, None);
    assert_eq!(f.watch.before_instant(t(10_000 + bound)), None);
    assert_eq!(f.watch.before_instant(t(10_000 + bound + 1)).map(|(i, _)| i), Some(Invariant::SendWithinTimeout));
    start(&mut f, 20_000, 2, None);
    assert!(f.watch.done(t(20_000 + bound), "p1", 2, false, "timeout").is_empty());
    start(&mut f, 30_000, 3, None);
    assert_eq!(kinds(&f.watch.done(t(30_000 + bound + 1), "p1", 3, false, "timeout")), [Invariant::SendWithinTimeout]);
}

#[test]
fn an_async_send_has_no_bound() {
    // `CommunicationMode.ASYNC`: a retry in `MQClientAPIImpl#onExceptionImpl` gets what is left
    // of the budget (`timeoutMillis - cost`), but a lost answer is failed only by
    // `scanResponseTable`, at its first run 1 s or more past the deadline (it runs every 1 s
    // from 3 s after the client starts, on a 100 ms wheel), and a connect holds no
    // `ResponseFuture` for the scan to find; `sends` checks sync sends only.
    let mut f = Fixture::from_toml(&cluster_with("mode = \"async\"", ""));
    start(&mut f, 10_000, 1, None);
    assert_eq!(f.watch.before_instant(t(10_000 + BOUND + 1)), None);
    assert_eq!(f.watch.before_instant(t(600_000)), None);
    assert!(f.watch.done(t(600_000), "p1", 1, false, "timeout").is_empty());
}

#[test]
fn a_oneway_send_has_no_bound_to_check_as_it_returns_before_its_connection_is_up() {
    // Since RocketMQ 5.3.0 (ISSUE #7815), `NettyRemotingClient#invokeOneway` takes its channel
    // from `getAndCreateChannelAsync` and writes in the connect future's listener: `sendOneway`
    // returns before the connection is up, and a failed connect drops the message silently. (Up
    // to 5.2 it waited in `getAndCreateChannel`, up to `connectTimeoutMillis`.) The model's oneway
    // send ends in the instant it is handed to the network, so `send_within_timeout` holds the
    // sync sends only, and a oneway one that ended late is not its to report.
    let mut f = Fixture::from_toml(&cluster_with("mode = \"oneway\"", ""));
    start(&mut f, 10_000, 1, None);
    assert_eq!(f.watch.before_instant(t(10_000 + BOUND + 1)), None);
    assert!(f.watch.done(t(10_000 + BOUND + 1), "p1", 1, true, "SendOk").is_empty());
}

#[test]
fn a_send_is_excused_while_its_client_is_paused_and_a_later_send_is_not() {
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    f.watch.process(t(11_000), "c1", ProcState::Hung);
    f.state.insert("c1".into(), ProcState::Hung);
    // Paused at 11 s and never resumed: the send may run as long as the pause.
    assert_eq!(f.watch.before_instant(t(600_000)), None);
    // A send that begins in the instant of the pause is the pause's too.
    start(&mut f, 600_000, 2, None);
    assert_eq!(f.watch.before_instant(t(600_000 + BOUND + 1)), None);
    assert!(f.watch.done(t(900_000), "p1", 2, false, "timeout").is_empty());
    // Resumed: a send begun after the resume has the whole bound and no more; one that ran
    // through the pause has its bound moved out by the pause (889 s here).
    f.watch.process(t(900_000), "c1", ProcState::Running);
    f.state.insert("c1".into(), ProcState::Running);
    assert!(f.watch.done(t(900_000), "p1", 1, false, "timeout").is_empty());
    start(&mut f, 1_000_000, 3, None);
    assert_eq!(f.watch.before_instant(t(1_000_000 + BOUND)), None);
    assert_eq!(f.watch.before_instant(t(1_000_000 + BOUND + 1)).map(|(i, _)| i), Some(Invariant::SendWithinTimeout));
}

/// A pause excuses a sync send for the pause's length, not for ever (it once did).
#[test]
fn a_pause_excuses_a_send_only_until_the_resume() {
    // Send #1 begins at 10 s; `c1` is paused at 11 s and resumed at 12 s; the send is still
    // running at 60 s: reported. It must have ended by max(10 s + 3 s + 3 s, the 12 s resume) =
    // 16 s; the invariant allows the generous "bound + the pause's length", 10 s + 3 s + 3 s +
    // 1 s = 17 s.
    // Java: the send loop's budget (`System.currentTimeMillis() - beginTimestampFirst`), the
    // response wait (`ResponseFuture#waitResponse` on a `CountDownLatch` with a timeout) and the
    // connect wait (`awaitUninterruptibly(connectTimeoutMillis)`) all run on the wall clock, which
    // a SIGSTOP does not stop: on SIGCONT every wait that came due meanwhile ends at once, and
    // the loop finds its budget spent. (The simulator parks a paused process's timers and fires
    // them at the resume, the same.)
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    f.watch.process(t(11_000), "c1", ProcState::Hung);
    f.watch.process(t(12_000), "c1", ProcState::Running);
    assert_eq!(f.watch.before_instant(t(17_000)), None);
    let (invariant, detail) = f.watch.before_instant(t(60_000)).expect("overdue");
    assert_eq!(invariant, Invariant::SendWithinTimeout);
    assert!(detail.contains("connect timeout (6s), and the 1s its client was paused"), "{detail}");
    assert_eq!(kinds(&f.watch.done(t(60_000), "p1", 1, false, "timeout")), [Invariant::SendWithinTimeout]);
}

// ---- sends_follow_route --------------------------------------------------------------------

#[test]
fn an_attempt_to_a_broker_or_queue_the_route_does_not_list_as_writable_is_reported() {
    let mut f = Fixture::new();
    // broker-a readable only (`wipeWritePerm`); broker-b with 8 read but 4 write queues.
    let a = Group { perm: perm::READ, ..group("broker-a", "10.0.0.1:10911") };
    let b = Group { read: 8, ..group("broker-b", "10.0.0.2:10911") };
    set_groups(&mut f, &[a, b]);
    start(&mut f, 10_000, 1, None);
    let (i, detail) = attempt(&mut f, 1, 0, "broker-a", "10.0.0.1:10911", 0).expect("broker-a is read-only");
    assert_eq!(i, Invariant::SendsFollowRoute);
    assert!(detail.contains("when the send began at 10.000s has no such writable queue"), "{detail}");
    // The write queues are 0..4: queue 3 is the last; 4 is readable, not writable.
    assert_eq!(attempt(&mut f, 1, 0, "broker-b", "10.0.0.2:10911", 3), None);
    assert_eq!(
        attempt(&mut f, 1, 0, "broker-b", "10.0.0.2:10911", 4).map(|(i, _)| i),
        Some(Invariant::SendsFollowRoute)
    );
    // A retry (sync: it picks its own queue in `selectOneMessageQueue`) is checked the same.
    assert_eq!(
        attempt(&mut f, 1, 1, "broker-b", "10.0.0.2:10911", 7).map(|(i, _)| i),
        Some(Invariant::SendsFollowRoute)
    );
}

#[test]
fn an_attempt_to_a_slave_address_is_reported() {
    // `findBrokerAddressInPublish` returns the brokerId-0 address only.
    let mut f = Fixture::new();
    let a = Group { slave: Some("10.0.0.11:10911"), ..group("broker-a", "10.0.0.1:10911") };
    set_groups(&mut f, &[a, group("broker-b", "10.0.0.2:10911")]);
    start(&mut f, 10_000, 1, None);
    assert_eq!(attempt(&mut f, 1, 0, "broker-a", "10.0.0.1:10911", 0), None);
    let (i, detail) = attempt(&mut f, 1, 0, "broker-a", "10.0.0.11:10911", 0).expect("a slave");
    assert_eq!(i, Invariant::SendsFollowRoute);
    assert!(
        detail.contains("since the send began at 10.000s, nor any it holds now, has 10.0.0.11:10911 as its master"),
        "{detail}"
    );
}

#[test]
fn an_async_retry_keeps_its_first_queue_id_and_only_its_broker_is_checked() {
    // `MQClientAPIImpl#onExceptionImpl` re-sends the same request (queue id and all) to the broker
    // `selectOneMessageQueue` names; a sync retry picks a queue of that broker.
    let mut f = Fixture::from_toml(&cluster_with("mode = \"async\"", ""));
    let a = Group { write: 8, read: 8, ..group("broker-a", "10.0.0.1:10911") };
    set_groups(&mut f, &[a, group("broker-b", "10.0.0.2:10911")]);
    start(&mut f, 10_000, 1, None);
    assert_eq!(attempt(&mut f, 1, 0, "broker-a", "10.0.0.1:10911", 7), None);
    assert_eq!(attempt(&mut f, 1, 1, "broker-b", "10.0.0.2:10911", 7), None, "queue 7 of broker-a, to broker-b");
    // Its broker still must be a writable one of the route, at its master address.
    assert!(attempt(&mut f, 1, 1, "broker-c", "10.0.0.3:10911", 7).is_some());
    assert!(attempt(&mut f, 1, 1, "broker-b", "10.0.0.1:10911", 7).is_some());
}

#[test]
fn a_retry_may_use_the_route_its_send_began_with_until_the_send_ends() {
    // Java: `sendDefaultImpl` reads `tryToFindTopicPublishInfo` once, before its loop, and every
    // retry selects from that `TopicPublishInfo`.
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    f.set_route(&BOTH[1..]); // broker-a leaves the route
    assert_eq!(attempt(&mut f, 1, 1, "broker-a", "10.0.0.1:10911", 3), None);
    // A second send begins on the new route, while #1 still runs: #1 keeps its right, #2 has none.
    start(&mut f, 11_000, 2, None);
    assert_eq!(attempt(&mut f, 1, 2, "broker-a", "10.0.0.1:10911", 3), None);
    assert!(attempt(&mut f, 2, 0, "broker-a", "10.0.0.1:10911", 3).is_some());
    // #1 ends: the old route is forgotten, and #2 still may not use it.
    assert!(f.watch.done(t(12_000), "p1", 1, true, "SendOk").is_empty());
    assert!(attempt(&mut f, 2, 1, "broker-a", "10.0.0.1:10911", 3).is_some());
    // The route a send began with is the last one seen at or before its start (the same instant
    // counts).
    start(&mut f, 13_000, 3, None);
    f.set_route(BOTH);
    start(&mut f, 13_000, 4, None);
    assert_eq!(attempt(&mut f, 4, 0, "broker-a", "10.0.0.1:10911", 0), None);
}

#[test]
fn a_new_master_address_for_a_broker_of_the_start_route_is_allowed() {
    // The address is read at each attempt from the client's broker address table
    // (`findBrokerAddressInPublish`), which a route update replaces: a failover moves it.
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    f.set_route(&[("broker-a", "10.0.0.9:10911", 4), BOTH[1]]);
    assert_eq!(attempt(&mut f, 1, 1, "broker-a", "10.0.0.9:10911", 0), None);
}

#[test]
fn a_master_address_known_from_another_topics_route_is_allowed() {
    // `findBrokerAddressInPublish` reads `brokerAddrTable`, which every changed route of the
    // client updates (`updateTopicRouteInfoFromNameServer`: `brokerAddrTable.put`), whatever its
    // topic: a poll round that reaches topic U first knows broker-a's new master before T's
    // route does.
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    f.client.borrow_mut().on_route("U", Some(super::tests_sends::route(&[("broker-a", "10.0.0.9:10911", 4)])));
    assert_eq!(attempt(&mut f, 1, 1, "broker-a", "10.0.0.9:10911", 0), None);
    // An address no route of the client lists is still reported.
    let (i, detail) = attempt(&mut f, 1, 2, "broker-a", "10.0.0.8:10911", 0).expect("listed nowhere");
    assert_eq!(i, Invariant::SendsFollowRoute);
    assert!(detail.contains("has 10.0.0.8:10911 as its master"), "{detail}");
}

#[test]
fn a_route_that_changes_in_the_instant_a_send_began_is_not_the_sends() {
    // Found by `explore --model rocketmq --seed 2202`: a client resumed from a pause runs, in
    // one instant, sends that begin on its old route and the poll answer that replaces it. A
    // send that began before the change holds the old publish info; one after, the new.
    let mut f = Fixture::new();
    start(&mut f, 10_000, 1, None);
    f.set_route(&BOTH[1..]);
    start(&mut f, 10_000, 2, None);
    assert_eq!(attempt(&mut f, 1, 1, "broker-a", "10.0.0.1:10911", 0), None);
    assert!(attempt(&mut f, 2, 0, "broker-a", "10.0.0.1:10911", 0).is_some());
}

#[test]
fn a_retry_may_not_use_a_broker_only_a_newer_route_lists() {
    // Inputs: the route lists broker-b only when send #1 begins at 10 s; the client's route then
    // adds broker-a; attempt 2 (a sync retry) goes to broker-a queue 0 at its master address.
    // Java's `sendDefaultImpl` calls `tryToFindTopicPublishInfo` once before the loop, and
    // `selectOneMessageQueue(topicPublishInfo, lastBrokerName)` picks from that object's queue
    // list (a route update puts a new `TopicPublishInfo` in the table; it does not change the
    // one the send holds), so no attempt of that send can name broker-a. Only the address may
    // come from a newer route (see the failover test above). (The check once accepted any route
    // held since the start, because the producer model's retries read the publish info as it
    // was at the latest send's start; each send now holds its own.)
    let mut f = Fixture::new();
    f.set_route(&BOTH[1..]);
    start(&mut f, 10_000, 1, None);
    f.set_route(BOTH);
    let (i, detail) = attempt(&mut f, 1, 1, "broker-a", "10.0.0.1:10911", 0).expect("not in the send's route");
    assert_eq!(i, Invariant::SendsFollowRoute);
    assert!(detail.contains("when the send began at 10.000s has no such writable queue"), "{detail}");
    // A send begun on the newer route may.
    start(&mut f, 11_000, 2, None);
    assert_eq!(attempt(&mut f, 2, 0, "broker-a", "10.0.0.1:10911", 0), None);
}

// ---- sends_recover -------------------------------------------------------------------------

/// `monitor::SETTLE` from its terms, with the scenario defaults: `RouteInfoManager`'s
/// `DEFAULT_BROKER_CHANNEL_EXPIRED_TIME` 120 s, `NamesrvConfig#scanNotActiveBrokerInterval` 5 s
/// (the scenario's `scan_interval` default), two `BrokerConfig#registerNameServerPeriod` of 30 s
/// and two `ClientConfig#pollNameServerInterval` of 30 s: 245 s. (The constant once said 240 s,
/// the scan left out.) The producer's own terms are small: `retryTimesWhenSendFailed` 2 gives
/// three attempts within one send, and the latency fault table (`MQFaultStrategy`) only steers
/// the choice of queue.
const SETTLE_README: u64 = 120_000 + 5_000 + 2 * 30_000 + 2 * 30_000;

#[test]
fn sends_recover_claims_a_send_from_245_s_after_the_last_fault() {
    let mut f = Fixture::new();
    let healed = 60_000;
    // 1 ms short: no claim, the failure is allowed.
    start(&mut f, healed + SETTLE_README - 1, 1, Some(healed));
    assert!(f.watch.done(t(healed + SETTLE_README), "p1", 1, false, "sendDefaultImpl call timeout").is_empty());
    // At the settling time: a failure over a sound route is reported, and says why it was claimed.
    start(&mut f, healed + SETTLE_README, 2, Some(healed));
    let found = f.watch.done(t(healed + SETTLE_README + 500), "p1", 2, false, "sendDefaultImpl call timeout");
    assert_eq!(kinds(&found), [Invariant::SendsRecover]);
    let detail = &found[0].1;
    assert!(detail.contains("begun at 305.000s with every fault healed for at least 4m5s,"), "{detail}");
    assert!(detail.contains("broker-a (10.0.0.1:10911, 4 queues), broker-b (10.0.0.2:10911, 4 queues)"), "{detail}");
}

#[test]
fn sends_recover_control_a_success_or_a_send_begun_under_a_fault_is_not_reported() {
    let mut f = Fixture::new();
    // Long settled, and the send succeeds: nothing.
    start(&mut f, 1_000_000, 1, Some(60_000));
    assert!(f.watch.done(t(1_000_100), "p1", 1, true, "SendOk").is_empty());
    // A fault in force when the send begins (`quiet_since` `None`): no claim.
    start(&mut f, 1_000_000, 2, None);
    assert!(f.watch.done(t(1_000_100), "p1", 2, false, "x").is_empty());
    // A paused client's send: a pause is a fault in force, so `quiet_since` is `None`.
    f.state.insert("c1".into(), ProcState::Hung);
    start(&mut f, 1_000_000, 3, None);
    f.state.insert("c1".into(), ProcState::Running);
    assert!(f.watch.done(t(1_000_100), "p1", 3, false, "x").is_empty());
    // A route whose broker-b master is listed at an address no broker has: no claim.
    f.set_route(&[BOTH[0], ("broker-b", "10.0.0.7:10911", 4)]);
    start(&mut f, 1_100_000, 4, Some(60_000));
    assert!(f.watch.done(t(1_100_100), "p1", 4, false, "x").is_empty());
    // A route with no writable queue at all: no claim.
    let a = Group { perm: perm::READ, ..group("broker-a", "10.0.0.1:10911") };
    set_groups(&mut f, &[a]);
    start(&mut f, 1_200_000, 5, Some(60_000));
    assert!(f.watch.done(t(1_200_100), "p1", 5, false, "x").is_empty());
    // A stopped client takes its sends with it.
    f.set_route(BOTH);
    start(&mut f, 1_300_000, 6, Some(60_000));
    f.watch.process(t(1_300_050), "c1", ProcState::Down);
    assert!(f.watch.done(t(1_300_100), "p1", 6, false, "x").is_empty());
}

/// A claimed send that a fault fails mid-send (the claim was once kept to the send's end).
#[test]
fn a_fault_that_strikes_during_a_claimed_send_lifts_the_claim() {
    // The last fault healed at 60 s; send #1 begins 245 s later (claimed: both masters running
    // and storing `T`), its first attempt goes to broker-a; then broker-a's host goes down and
    // the send fails 6 s on with "sendDefaultImpl call timeout". Nothing may be reported: the
    // send began settled but did not run settled.
    // Java: a host that vanishes mid-request leaves `invokeSync` waiting its whole `left`
    // (3 s, `ResponseFuture#waitResponse`) — `RemotingTimeoutException` at 3.000 s; `timeout <
    // costTime` is false at exactly 3000 ms, so attempt 2 runs with 0 ms and `invokeSync` throws
    // at once (`timeoutMillis <= costTime`); attempt 3 finds `timeout < costTime` and the send
    // ends "sendDefaultImpl call timeout". A correct producer fails that send.
    // End to end (`routesim run`, seed 1): brokers a0/b0 with 4 queues of `T` each, one
    // producer at rate 10, no fault before, `host_down = "b0"` at 250.001 s was reported once:
    // "sends_recover VIOLATED at 253.000s: p1's send #2491, begun at 250.000s ... failed: Send [3]
    // times, still failed (code 10002)" — the same three attempts as above.
    let mut f = Fixture::new();
    let healed = 60_000;
    start(&mut f, healed + SETTLE_README, 1, Some(healed));
    assert_eq!(attempt(&mut f, 1, 0, "broker-a", "10.0.0.1:10911", 0), None);
    // What the monitor does at every applied fault (`Monitor::note_fault`).
    f.watch.fault();
    f.state.insert("a0".into(), ProcState::Down);
    let found = f.watch.done(t(healed + SETTLE_README + BOUND), "p1", 1, false, "sendDefaultImpl call timeout");
    assert!(found.is_empty(), "{found:?}");
}

/// A claimed send that a pause of its own client fails (it was once reported).
#[test]
fn a_pause_of_the_client_during_a_claimed_send_lifts_the_claim() {
    // The last fault healed at 60 s; send #1 begins 245 s later (claimed); `c1` is paused and
    // resumed at 310 s; the send fails then with "sendDefaultImpl call timeout". Nothing may be
    // reported: the pause excuses the failure as it excuses the time (`Flight::excused`).
    // Java: a SIGSTOP does not stop the wall clock: on SIGCONT the attempt's wait
    // (`waitResponse`) is long past its timeout and `sendDefaultImpl` finds its 3 s budget spent
    // (`timeout < costTime`): the send fails, correctly.
    // End to end (`routesim run`, seed 1, the cluster of the test above): `hang = "c1"` at
    // 250.001 s, `resume = "c1"` at 260 s was reported once: "sends_recover VIOLATED at
    // 260.000s: p1's send #2491, begun at 250.000s ... failed: sendDefaultImpl call timeout".
    let mut f = Fixture::new();
    let healed = 60_000;
    start(&mut f, healed + SETTLE_README, 1, Some(healed));
    f.watch.process(t(305_500), "c1", ProcState::Hung);
    f.watch.process(t(310_000), "c1", ProcState::Running);
    let found = f.watch.done(t(310_000), "p1", 1, false, "sendDefaultImpl call timeout");
    assert!(found.is_empty(), "{found:?}");
}
