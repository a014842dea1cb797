//! The transport's rules, end to end through the actors: each test runs a small scenario and
//! reads its trace. The pure rules (RTO, backoff, retry budgets, per-end idle clocks) have unit
//! tests in `src/sim/network/`; these pin how the clients and servers use them.

use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::parse;
use routesim::sim::trace::TraceOptions;
use std::path::Path;

/// Runs a scenario and returns its trace as `time actor text` lines.
fn trace(toml: &str) -> Vec<String> {
    let scenario = parse(Path::new("test.toml"), toml).unwrap_or_else(|e| panic!("{e}"));
    let report =
        run(&scenario, RunOptions { trace: TraceOptions { keep: true, ..Default::default() }, ..Default::default() });
    report.kept.iter().map(|e| format!("{} {} {}", e.t, e.actor, e.what)).collect()
}

fn lines<'a>(trace: &'a [String], needle: &str) -> Vec<&'a str> {
    trace.iter().filter(|l| l.contains(needle)).map(String::as_str).collect()
}

const ONE_NAMESRV: &str = r#"
[[namesrv]]
name = "ns1"
{ns}

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders" }]

[[client]]
name = "producer"
topics = ["Orders"]
{client}
"#;

fn rocketmq(duration: &str, ns: &str, client: &str, faults: &str) -> String {
    let body = ONE_NAMESRV.replace("{ns}", ns).replace("{client}", client);
    format!("[scenario]\nname = \"t\"\nduration = \"{duration}\"\n{body}\n{faults}")
}

#[test]
fn a_timed_out_request_closes_its_channel_so_the_next_one_connects_afresh() {
    // RocketMQ NettyRemotingClient#invokeSync: RemotingTimeoutException, and with
    // clientCloseSocketIfTimeout (NettySystemConfig, default true) closeChannel(addr, channel).
    // ns1 is stopped (SIGSTOP) over the producer's poll at 60.010 s: no answer within 3 s.
    let faults = "[[fault]]\nat = \"55s\"\nhang = \"ns1\"\n\n[[fault]]\nat = \"70s\"\nresume = \"ns1\"\n";
    let t = trace(&rocketmq("100s", "", "", faults));
    let closed = lines(&t, "producer<->ns1 closed by producer (request timed out)");
    assert_eq!(closed.len(), 1, "{t:#?}");
    assert!(closed[0].starts_with("63.010s"), "{closed:?}");
    let opened = lines(&t, "opened producer -> ns1");
    assert_eq!(opened.len(), 2, "the poll after the timeout needs a new connection: {opened:?}");
    assert!(opened[1].starts_with("90.010s"), "{opened:?}");
}

#[test]
fn each_end_closes_a_channel_idle_for_120_seconds() {
    // Netty IdleStateHandler(0, 0, 120 s) on both ends (serverChannelMaxIdleTimeSeconds,
    // clientChannelMaxIdleTimeSeconds), each counting its own reads and writes. A client polling
    // every 150 s leaves its channel idle for 120 s between polls.
    let client = "poll_interval = \"150s\"";
    let by_client = trace(&rocketmq("3m", "idle_close = \"off\"", client, ""));
    let idle = lines(&by_client, "producer<->ns1 closed by producer (idle)");
    assert_eq!(idle.len(), 1, "the client's own end times out: {by_client:#?}");
    assert!(idle[0].starts_with("120.014s"), "last read: the answer at 0.014 s: {idle:?}");
    let by_server = trace(&rocketmq("3m", "", &format!("{client}\nidle_close = \"off\""), ""));
    let idle = lines(&by_server, "ns1<->producer closed by ns1 (idle)");
    assert_eq!(idle.len(), 1, "the name server's end times out: {by_server:#?}");
    assert!(idle[0].starts_with("120.013s"), "last read and write: the poll at 0.013 s: {idle:?}");
}

const NACOS: &str = r#"
[scenario]
name = "t"
duration = "{duration}"

[[nacos_server]]
name = "nacos1"

[[instance]]
name = "a"
app = "shop"
service = "orders"
ip = "10.1.0.1"
{extra}

[[instance]]
name = "b"
app = "shop"
service = "pay"
ip = "10.1.0.1"
{extra}
"#;

fn nacos(duration: &str, extra: &str, faults: &str) -> String {
    format!("{}\n{faults}", NACOS.replace("{duration}", duration).replace("{extra}", extra))
}

#[test]
fn a_client_with_one_server_tries_it_three_times_at_once() {
    // Nacos 1.4.x NamingProxy: one server is the domain, and reqApi retries a domain
    // REQUEST_DOMAIN_RETRY_COUNT = 3 times, at once, on any NacosException.
    let t = trace(&nacos("20s", "", "[[fault]]\nat = \"7s\"\ncrash = \"nacos1\"\n"));
    // a's beat at 10.002 s is refused three times, a round trip apart; only then does its
    // BeatTask give up (and free the one beat thread for b's).
    let refused = lines(&t, "PUT /nacos/v1/ns/instance/beat shop -> nacos1 failed: connection refused");
    let times: Vec<&str> = refused.iter().take(3).map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(times, ["10.002s", "10.004s", "10.006s"], "{refused:#?}");
    let gave_up = lines(&t, "a: PUT /nacos/v1/ns/instance/beat failed after all servers tried");
    assert!(gave_up[0].starts_with("10.008s"), "{gave_up:?}");
}

#[test]
fn a_beat_blocked_on_a_stopped_server_holds_its_thread() {
    // Nacos BeatReactor: a ScheduledThreadPoolExecutor of namingClientBeatThreadCount threads,
    // and BeatTask#run holds one for its whole sendBeat. nacos1 stops (SIGSTOP) at 7 s: a's beat
    // at 10 s gets no answer until it resumes at 30 s. With one thread b's beat waits for it; with
    // two it goes out on time and waits in nacos1's socket buffer too.
    let faults = "[[fault]]\nat = \"7s\"\nhang = \"nacos1\"\n\n[[fault]]\nat = \"30s\"\nresume = \"nacos1\"\n";
    let b_back = |threads: &str| -> String {
        let t = trace(&nacos("40s", &format!("beat_threads = {threads}"), faults));
        let back = lines(&t, "DEFAULT_GROUP@@pay 10.1.0.1:8080#true: beat after");
        back[0].split(' ').next().unwrap().to_string()
    };
    // One thread: a's beat holds it until nacos1 answers at the resume; only then does b's go out.
    assert_eq!(b_back("1"), "30.002s");
    // Two threads: b's beat went out on time and waited in nacos1's socket buffer with a's.
    assert_eq!(b_back("2"), "30.000s");
}

#[test]
fn an_unacknowledged_push_is_sent_once_more_then_given_up() {
    // Nacos UdpConnector: UdpRetrySender resends after ACK_TIMEOUT_NANOS (10 s) while
    // retryTimes <= UDP_MAX_RETRY_TIMES (1), then fails with NoRequiredRetryException.
    let toml = format!(
        "{}\n[[subscriber]]\nname = \"gw\"\nservices = [\"orders\"]\n\n[[fault]]\nat = \"20s\"\nblock = {{ from = \"nacos1\", to = \"gw\" }}\n\n[[fault]]\nat = \"21s\"\ncrash = \"shop\"\n",
        NACOS.replace("{duration}", "2m").replace("{extra}", "")
    );
    let t = trace(&toml);
    let resent = lines(&t, "no ack within 10s, sent again");
    let gave_up = lines(&t, "given up until its next poll");
    assert!(!resent.is_empty() && !gave_up.is_empty(), "{t:#?}");
    let secs = |l: &str| -> f64 { l.split('s').next().unwrap().parse().unwrap() };
    assert_eq!(secs(resent[0]) - 10.0, secs(lines(&t, "UDP push nacos1 -> gw dropped")[0]));
    assert_eq!(secs(gave_up[0]), secs(resent[0]) + 10.0);
}

#[test]
fn an_async_request_times_out_at_the_response_scan_after_its_deadline_and_keeps_its_channel() {
    // RocketMQ 5.3.3: nothing waits on an async request. NettyRemotingAbstract#scanResponseTable
    // removes its ResponseFuture once `beginTimestamp + timeoutMillis + 1000 <= now`, and runs
    // 3 s after NettyRemotingClient#start, then 1 s after each run; the callback's
    // operationFail gets the timeout, and nothing closes the channel (clientCloseSocketIfTimeout
    // is invokeSync's). The client starts at 0 s, so the scan runs at 3 s, 4 s, 5 s, ...; the
    // send begins at 5.5 s with sendMsgTimeout 3 s: removable from 9.5 s, removed at 10 s.
    // A sync send the same way fails at 8.5 s and closes its channel (the test above).
    let producer = r#"
[[producer]]
name = "p1"
client = "producer"
topic = "Orders"
mode = "async"
rate = 1
from = "5.5s"
until = "5.5s""#;
    let faults =
        "[[fault]]\nname = \"pause a0\"\nat = \"5s\"\nhang = \"a0\"\n\n[network]\nlatency = \"0s\"\njitter = \"0s\"\n";
    let t = trace(&rocketmq("20s", "", producer, faults));
    let failed = lines(&t, "p1 send #1 attempt 1 to broker-a ");
    assert_eq!(failed.len(), 1, "{t:#?}");
    assert!(failed[0].starts_with("10.000s "), "{}", failed[0]);
    assert!(failed[0].contains("after 4.500s: MQClientException: wait response timeout"), "{}", failed[0]);
    assert!(failed[0].contains("removed by scanResponseTable"), "{}", failed[0]);
    // The budget is spent (3 s - 4.5 s < 0): onExceptionImpl does not retry.
    assert_eq!(lines(&t, "p1 send #1: FAILED").len(), 1, "{t:#?}");
    assert!(lines(&t, "closed by producer (request timed out)").is_empty(), "{t:#?}");
}

/// A producer sending to `Orders` on a0 (broker-a) and, when `with_b0`, on b0 (broker-b), with
/// a fixed 1 ms latency.
fn producer_scenario(with_b0: bool, producer: &str, faults: &str) -> String {
    let b0 = if with_b0 {
        "[[broker]]\nname = \"b0\"\nbroker_name = \"broker-b\"\naddr = \"10.0.0.2:10911\"\ntopics = [{ name = \"Orders\" }]\n"
    } else {
        ""
    };
    let network = "[network]\nlatency = \"1ms\"\njitter = \"0s\"\n";
    let head = rocketmq("40s", "", producer, faults);
    head.replacen("[[client]]", &format!("{b0}\n{network}\n[[client]]"), 1)
}

const SENDS: &str = r#"
[[producer]]
name = "p1"
client = "producer"
topic = "Orders"
rate = 1
from = "20s"
until = "{until}"
{config}"#;

#[test]
fn a_connect_outlasts_the_request_budget_and_fails_as_a_connect() {
    // RocketMQ 5.3.3 NettyRemotingClient#invokeSync: getAndCreateChannel waits for the connect
    // (`awaitUninterruptibly()`, which Netty's CONNECT_TIMEOUT_MILLIS = connectTimeoutMillis,
    // 3 s, ends), and only then computes `left`. A connect to a dead host therefore fails with
    // RemotingConnectException 3 s after it began, whatever budget the request had left.
    // a0 is killed (refused at once) and b0's host is down (SYNs unanswered) at 10 s.
    // Send #1 (20 s) opens the connect to b0 and fails with it at 23 s, its whole 3 s budget.
    // Send #2 (21 s) waits on that same connect and fails with it at 23 s, is refused by
    // broker-a at 23.002 s, and its third attempt opens a new connect to b0 with 998 ms of its
    // budget left: it still ends with that connect, at 26.002 s, 5.002 s into the send (the
    // `send_within_timeout` bound is the budget plus the connect timeout).
    let sends = SENDS.replace("{until}", "22s").replace("{config}", "");
    let faults = "[[fault]]\nat = \"10s\"\ncrash = \"a0\"\n\n[[fault]]\nat = \"10s\"\nhost_down = \"b0\"\n";
    let t = trace(&producer_scenario(true, &sends, faults));
    let first = lines(&t, "p1 send #1 attempt 1 to broker-b");
    assert!(first.len() == 1 && first[0].starts_with("23.000s "), "{first:?}");
    assert!(first[0].contains("after 3s: RemotingConnectException: connect timed out"), "{}", first[0]);
    let late = lines(&t, "p1 send #2 attempt 3 to broker-b");
    assert!(late.len() == 1 && late[0].starts_with("26.002s "), "{t:#?}");
    assert!(late[0].contains("after 3s: RemotingConnectException: connect timed out"), "{}", late[0]);
    assert_eq!(lines(&t, "p1 send #2: FAILED Send [3] times, still failed (code 10001)").len(), 1, "{t:#?}");
    // No request's deadline abandons a connect: only connects that timed out end.
    assert!(lines(&t, "closed by producer (request timed out)").is_empty(), "{t:#?}");
}

/// One sync send at 20 s with budget `send_timeout`, no retries, whose connect to a0 is late:
/// a0 is cut off from 15 s to 20.6 s, so the SYN at 20 s is lost, and its retransmission at
/// 21 s is answered and the connection is up at 21.002 s. Returns the attempt's one line (and
/// checks that nothing closed the channel), with `more_faults` added.
fn late_connect(send_timeout: &str, more_faults: &str) -> String {
    let config = format!("send_timeout = \"{send_timeout}\"\nretry_times = 0");
    let sends = SENDS.replace("{until}", "20s").replace("{config}", &config);
    let faults = format!(
        "[[fault]]\nname = \"cut\"\nat = \"15s\"\npartition = [[\"producer\"], [\"a0\"]]\n\n\
         [[fault]]\nat = \"20.6s\"\nheal = \"cut\"\n{more_faults}"
    );
    let t = trace(&producer_scenario(false, &sends, &faults));
    assert!(lines(&t, "closed by producer").is_empty(), "{t:#?}");
    let failed = lines(&t, "p1 send #1 attempt 1 to broker-a");
    assert_eq!(failed.len(), 1, "{t:#?}");
    failed[0].to_string()
}

#[test]
fn a_connect_that_comes_up_after_the_budget_writes_nothing_and_stays_open() {
    // The same wait, when the connect succeeds, up at 21.002 s: past the 500 ms budget.
    // invokeSync's `left <= 0` throws RemotingTimeoutException before writing, and
    // `shouldClose` (left > 100 ms or left > timeout / 4) is false: the channel stays open for
    // the next send.
    let failed = late_connect("500ms", "");
    assert!(failed.starts_with("21.002s "), "{failed}");
    assert!(failed.contains("RemotingTimeoutException: connected only after the whole 500ms"), "{failed}");
}

#[test]
fn a_deadline_between_the_syn_getting_through_and_the_connection_being_up_writes_nothing() {
    // The SYN retransmitted at 21 s gets through; its SYN-ACK lands at 21.002 s, when the
    // connection is up at the producer. A 1,001 ms budget ends at 21.001 s, inside that round
    // trip: invokeSync is still waiting in getAndCreateChannel, finds `left <= 0` once the
    // connect returns, and throws RemotingTimeoutException without writing. Broker-a lost
    // Orders at 20.5 s, so a write that reached it would be answered TOPIC_NOT_EXIST.
    let removed = "\n[[action]]\nat = \"20.5s\"\nremove_topic = { broker = \"a0\", topic = \"Orders\" }\n";
    let config = "send_timeout = \"1001ms\"\nretry_times = 0";
    let sends = SENDS.replace("{until}", "20s").replace("{config}", config);
    let faults = format!(
        "[[fault]]\nname = \"cut\"\nat = \"15s\"\npartition = [[\"producer\"], [\"a0\"]]\n\n\
         [[fault]]\nat = \"20.6s\"\nheal = \"cut\"\n{removed}"
    );
    let t = trace(&producer_scenario(false, &sends, &faults));
    let failed = lines(&t, "p1 send #1 attempt 1 to broker-a");
    assert!(failed.len() == 1 && failed[0].starts_with("21.002s "), "{t:#?}");
    assert!(failed[0].contains("RemotingTimeoutException: connected only after the whole 1.001s"), "{}", failed[0]);
    assert!(lines(&t, "TOPIC_NOT_EXIST").is_empty(), "the write reached the broker: {t:#?}");
}

#[test]
fn a_request_left_with_little_time_after_its_connect_keeps_the_channel_on_timeout() {
    // `shouldClose` (RocketMQ 5.3.1+): after the same connect, a 1,050 ms budget has 48 ms left,
    // under 100 ms and under a quarter of it. a0 is stopped, so no answer comes:
    // RemotingTimeoutException at 21.050 s, and the channel is not closed.
    let failed = late_connect("1050ms", "\n[[fault]]\nat = \"20.5s\"\nhang = \"a0\"\n");
    assert!(failed.starts_with("21.050s "), "{failed}");
    assert!(failed.contains("48ms of it left after the connect: channel kept open"), "{failed}");
}
