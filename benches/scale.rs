//! Scale benchmark: `cargo bench --bench scale` (or `cargo bench --bench scale -- nacos`).
//!
//! RocketMQ: 1,000 brokers (500 groups, master + slave) × 2 name servers × 100 topics, for one
//! virtual hour, with a wave of 100 failures (50 kill -9s, 50 host failures) at 30 min and 10 clients
//! polling routes. The target is under 2 s of wall time on a 2-core machine.
//!
//! Nacos: 10,000 ephemeral instances across 100 services for one virtual hour, registered the
//! way a Dubbo provider does it — 100 provider processes, each one `NamingService` registering
//! one instance of each of the 100 services from its ip:port — with 10 providers (1,000
//! instances) crashing at 30 min and a subscriber watching two services. Each provider's
//! `BeatReactor` gets a thread per instance (`beat_threads`), so its beats go out together, as
//! `../shared/perf-floor` schedules them. The target is under 5 s.
//!
//! Distro: a 3-member Nacos cluster with 10,000 instances for one virtual hour — 50 providers
//! as 2.x gRPC apps (one connection each), 50 as 1.x HTTP apps whose beats a member's
//! `DistroFilter` proxies to the instance's owner — with one member killed at 30 min. The target
//! is under 10 s. It has no counterpart in `../shared/perf-floor`.
//!
//! RocketMQ with producers: the same cluster, plus 10 producers (one in each client) sending
//! 100 messages a second each, synchronously, to the client's first topic for the whole hour:
//! 3.6 million sends, the ones that pick a failed master in the wave stalling or retrying. It has
//! no counterpart in `../shared/perf-floor`.
//!
//! Each case runs a few times and reports the best and median wall time plus events per second;
//! the process's peak RSS is printed last. `--scale K` multiplies the fleet (`--scale 8`: 8,000
//! brokers; Nacos stops at `--scale 2`, the scenario limit of 20,000 instances), `--hours H`
//! the virtual time (`--hours 24`: a day), `--runs N` the repetitions. `--groups G` runs the
//! RocketMQ cases with G groups instead: `rocketmq --groups 50 --hours 10` does about the bench's
//! work with a tenth of its brokers, whose state stays in the CPU's caches, which shows what the
//! cache misses of the full fleet cost (README, Speed).
//!
//! `cargo bench --bench scale -- scaling` runs the RocketMQ case once at 1×, 2×, 4× and 8× the
//! fleet, each in a child process of this binary so that each peak RSS is that shape's alone, and
//! prints a table with the megabytes each added 1,000 brokers cost and whether that stays linear
//! (`scale/scaling.rs`). `--hours` applies to every shape.
//!
//! `cargo bench --bench scale -- against FLOOR` runs the floor's binary and the RocketMQ and
//! Nacos cases in alternating rounds and prints each round's wall-time ratio, the measure the
//! speed goal is stated in (`scale/against.rs`).
//! Timing belongs here, never in `cargo test`.

// The same allocator as the `routesim` binary.
#[global_allocator]
static ALLOCATOR: routesim::allocator::Allocator = routesim::allocator::Allocator;

use routesim::rocketmq::broker::BrokerConfig;
use routesim::rocketmq::producer::{CommunicationMode, ProducerConfig};
use routesim::rocketmq::route_table::NamesrvConfig;
use routesim::rocketmq::topic_table::TopicConfigs;
use routesim::rocketmq::types::{TopicConfig, NETTY_IDLE_TIME};
use routesim::sim::clock::{SimDuration, SimTime};
use routesim::sim::expect::{Expectation, RouteWant, Subject, When};
use routesim::sim::runner::{run, RunOptions, DEFAULT_MAX_EVENTS};
use routesim::sim::scenario::{
    Action, BrokerSpec, ClientSpec, NamesrvSpec, NetworkSpec, ProducerSpec, Scenario, Schedule, TimedEvent,
};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

// Not `mod scaling;`: that would be `benches/scaling.rs`, which Cargo would take for a bench.
#[path = "scale/against.rs"]
mod against;
#[path = "scale/scaling.rs"]
mod scaling;

/// The shape `../shared/perf-floor` does the same work for, event for event: 4.x-style brokers
/// without the 5.x `refreshMetadata` poll, name servers whose silent brokers expire by the scan
/// (no Netty idle close) with develop's 5 s first scan. The model's defaults add traffic the
/// floor does not count; they are measured by the catalogue and the property tests.
fn rocketmq_scale(groups: usize, topics: usize) -> Scenario {
    let namesrvs: Vec<NamesrvSpec> = (1..=2)
        .map(|i| NamesrvSpec {
            name: format!("ns{i}"),
            start: SimTime::ZERO,
            table: NamesrvConfig::default(),
            scan_interval: SimDuration::from_secs(5),
            scan_initial_delay: SimDuration::from_secs(5),
            queue_capacity: 3000,
            unregister_delay: SimDuration::ZERO,
            idle_close: None,
        })
        .collect();
    let ns_names: Vec<String> = namesrvs.iter().map(|n| n.name.clone()).collect();
    let topic_names: Vec<String> = (0..topics).map(|t| format!("Topic{t:03}")).collect();
    // One list for every broker, shared as a parsed scenario shares a list its brokers repeat
    // (`share_equal_topic_lists`); each broker's table shares it in turn.
    let broker_topics: std::sync::Arc<TopicConfigs> = topic_names
        .iter()
        .map(|t| TopicConfig { read_queue_nums: 8, write_queue_nums: 8, ..TopicConfig::new(t) })
        .collect::<TopicConfigs>()
        .into();
    let mut brokers = Vec::new();
    for g in 0..groups {
        for id in 0..2u64 {
            let addr = format!("10.{}.{}.{}:10911", g / 250, g % 250, id + 1);
            let mut config = BrokerConfig::new("DefaultCluster", &format!("broker-{g:03}"), id, &addr);
            config.refresh_metadata = false;
            brokers.push(BrokerSpec {
                name: format!("b{g:03}-{id}"),
                config,
                namesrvs: ns_names.clone(),
                // Spread start-ups over the first 30 s, as a real fleet would be.
                start: SimTime((g as u64 * 59 + id * 7) % 30_000),
                topics: broker_topics.clone(),
                idle_close: Some(NETTY_IDLE_TIME),
            });
        }
    }
    let clients = (0..10)
        .map(|c| ClientSpec {
            name: format!("client{c}"),
            namesrvs: ns_names.clone(),
            topics: topic_names.iter().skip(c * 10).take(10).cloned().collect(),
            poll_interval: SimDuration::from_secs(30),
            timeout: SimDuration::from_secs(3),
            start: SimTime(c as u64 * 1000),
            idle_close: Some(NETTY_IDLE_TIME),
        })
        .collect();
    let wave = SimTime(30 * 60_000);
    let mut timeline = Vec::new();
    for g in 0..groups.min(100) {
        let action =
            if g % 2 == 0 { Action::Crash(format!("b{g:03}-0")) } else { Action::HostDown(format!("b{g:03}-0")) };
        timeline.push(TimedEvent { at: wave + SimDuration(g as u64 * 10), name: format!("wave {g}"), action });
    }
    // What the wave changes, so that a fast run that skipped it does not pass: each of the 100
    // groups whose master died keeps only its slave (id 1) on ns1, and a client polling
    // Topic000 loses those groups' write queues (no id 0: no publish queues).
    let killed = groups.min(100);
    let slaves: BTreeMap<String, BTreeMap<u64, String>> = (0..killed)
        .map(|g| (format!("broker-{g:03}"), BTreeMap::from([(1, format!("10.{}.{}.2:10911", g / 250, g % 250))])))
        .collect();
    let by = When::By { from: wave, deadline: wave + SimDuration::from_secs(200) };
    let expects = vec![
        Expectation {
            name: "the killed masters leave their groups, the slaves stay".into(),
            when: by,
            subject: Subject::Route {
                namesrv: "ns1".into(),
                topic: "Topic000".into(),
                want: RouteWant { addrs: Some(slaves), ..Default::default() },
            },
            converges: Vec::new(),
        },
        Expectation {
            name: "the client stops writing to those groups".into(),
            when: by,
            subject: Subject::Client {
                client: "client0".into(),
                topic: "Topic000".into(),
                want: RouteWant { writable_queues: Some(8 * (groups - killed) as u32), ..Default::default() },
            },
            converges: Vec::new(),
        },
    ];
    Scenario {
        name: format!("{} brokers x 2 name servers x {topics} topics, 1 h", groups * 2),
        description: None,
        seed: 42,
        drawn: Vec::new(),
        duration: SimDuration::from_secs(3600),
        network: NetworkSpec { jitter: SimDuration::from_millis(2), ..NetworkSpec::default() },
        namesrvs,
        brokers,
        clients,
        producers: Vec::new(),
        timeline,
        expects,
        invariants: Vec::new(),
        nacos: Default::default(),
    }
}

fn nacos_scale(providers: usize, services: usize) -> Scenario {
    let mut t = String::from(
        "[scenario]\nname = \"nacos scale\"\nseed = 42\nduration = \"1h\"\n\n[[nacos_server]]\nname = \"nacos1\"\n",
    );
    for p in 0..providers {
        // Providers come up over the first five seconds; each registers all its services at once.
        let start = (p * 4999) / providers;
        for s in 0..services {
            t += &format!(
                "\n[[instance]]\nname = \"p{p}-s{s}\"\napp = \"provider{p}\"\nservice = \"svc{s}\"\nip = \"10.1.{}.{}\"\nport = 20880\nstart = \"{start}ms\"\nbeat_threads = {services}\n",
                p / 250,
                p % 250
            );
        }
    }
    t += "\n[[subscriber]]\nname = \"gateway\"\nservices = [\"svc0\", \"svc1\"]\n";
    let crashed = providers / 10;
    for p in 0..crashed {
        t += &format!("\n[[fault]]\nname = \"crash provider{p}\"\nat = \"30m\"\ncrash = \"provider{p}\"\n");
    }
    // Unhealthy 15–20 s and deleted 30–35 s after the last beat: all gone within 40 s.
    t += &format!(
        "\n[[expect]]\nname = \"the crashed providers' instances are deleted\"\nafter = \"crash provider0\"\nwithin = \"40s\"\nservice = {{ server = \"nacos1\", service = \"svc0\", total = {}, healthy = {} }}\n",
        providers - crashed,
        providers - crashed
    );
    routesim::sim::scenario::parse(std::path::Path::new("nacos-scale.toml"), &t)
        .expect("the generated scenario is valid")
}

/// A 3-member Nacos cluster with `providers` × `services` instances: the first half of the
/// providers are 2.x gRPC apps registering services g0.., the other half 1.x HTTP apps
/// registering h0.., every app listing all three members. nacos3 is killed at 30 min.
fn distro_scale(providers: usize, services: usize) -> Scenario {
    let mut t = String::from("[scenario]\nname = \"distro scale\"\nseed = 42\nduration = \"1h\"\n");
    for m in 1..=3 {
        t += &format!("\n[[nacos_server]]\nname = \"nacos{m}\"\ncluster = \"east\"\n");
    }
    let grpc = providers / 2;
    for p in 0..providers {
        let start = (p * 4999) / providers;
        let (kind, extra) = if p < grpc {
            ("g", "transport = \"grpc\"\n".to_string())
        } else {
            ("h", format!("beat_threads = {services}\n"))
        };
        for s in 0..services {
            t += &format!(
                "\n[[instance]]\nname = \"p{p}-s{s}\"\napp = \"provider{p}\"\nservice = \"{kind}{s}\"\nip = \"10.1.{}.{}\"\nport = 20880\nstart = \"{start}ms\"\n{extra}",
                p / 250,
                p % 250
            );
        }
    }
    t += "\n[[fault]]\nname = \"kill nacos3\"\nat = \"30m\"\ncrash = \"nacos3\"\n";
    // The gRPC apps on nacos3 see its FIN, reconnect to another member and register again (the
    // redo task, every 3 s); each change reaches the other survivor a second later (Distro
    // sync). The copies nacos3 had synced expire 3 min after its last verify, about 33 min. From
    // then on each survivor holds exactly the 50 gRPC instances of g0, all healthy — as Nacos
    // would. The 1.x clients nacos3 owned are taken over by the survivors that hold their copies
    // (`DistroMapper` re-hashes when nacos3 is DOWN, about 2 s after the kill), and their beats,
    // proxied by `DistroFilter`, reach the new owners within a beat period — long before the 15 s
    // unhealthy timeout — so each survivor holds the 50 HTTP providers of h0, all healthy, too.
    let http = providers - grpc;
    for m in ["nacos1", "nacos2"] {
        t += &format!(
            "\n[[expect]]\nname = \"{m} holds every gRPC provider of g0 once the dead member's copies expire\"\nfrom = \"34m\"\nuntil = \"1h\"\nservice = {{ server = \"{m}\", service = \"g0\", total = {grpc}, healthy = {grpc} }}\n"
        );
        t += &format!(
            "\n[[expect]]\nname = \"{m} holds every 1.x provider of h0, healthy\"\nfrom = \"34m\"\nuntil = \"1h\"\nservice = {{ server = \"{m}\", service = \"h0\", total = {http}, healthy = {http} }}\n"
        );
    }
    routesim::sim::scenario::parse(std::path::Path::new("distro-scale.toml"), &t)
        .expect("the generated scenario is valid")
}

/// Ten producers at 100 messages a second, one in each client, each on the client's first topic.
fn with_producers(mut s: Scenario) -> Scenario {
    let end = SimTime::ZERO + s.duration;
    s.producers = s
        .clients
        .iter()
        .enumerate()
        .map(|(i, c)| ProducerSpec {
            name: format!("p{i}"),
            client: c.name.clone(),
            topic: c.topics[0].clone(),
            schedule: Schedule::Steady { rate: 100 },
            mode: CommunicationMode::Sync,
            from: c.start + SimDuration::from_secs(1),
            until: end,
            config: ProducerConfig::default(),
        })
        .collect();
    s.name.push_str(", 10 producers x 100 msg/s");
    s
}

/// What `measure` found: the events of a run, and the best and median wall times.
struct Measured {
    events: u64,
    best: Duration,
    median: Duration,
}

/// Runs the case `runs` times and prints its line.
fn measure(name: &str, scenario: &Scenario, runs: usize, target: Duration, scale: u64, hours: u64) -> Measured {
    let mut times = Vec::new();
    let mut events = 0;
    for _ in 0..runs {
        let started = Instant::now();
        // The default event budget (50 million) stops a run that loops; the bench's event count
        // grows with the fleet and the hours (Nacos: 6.9 million per hour at --scale 1).
        let max_events = DEFAULT_MAX_EVENTS.max(10_000_000 * scale * hours);
        let report = run(scenario, RunOptions { max_events, ..RunOptions::default() });
        times.push(started.elapsed());
        events = report.events;
        assert!(report.all_held(), "{name}: expectations failed: {:?}", report.verdicts);
    }
    times.sort();
    let (best, median) = (times[0], times[times.len() / 2]);
    let rate = events as f64 / median.as_secs_f64();
    let verdict = if median < target { "within" } else { "OVER" };
    println!("{name}: best {best:.2?}, median {median:.2?} of {runs} runs; {events} events ({rate:.0} events/s); target {target:?}: {verdict}");
    Measured { events, best, median }
}

/// The command line: `cargo bench --bench scale -- [NAME] [--scale K] [--hours H] [--runs N]`.
struct Args {
    /// Runs the cases whose name contains it.
    filter: Option<String>,
    /// Multiplies the fleet: K × 500 RocketMQ groups, K × 100 Nacos providers.
    scale: usize,
    /// `--groups G`: the RocketMQ cases with G groups (2·G brokers) instead of K × 500.
    groups: Option<usize>,
    /// Virtual hours per run; the failures stay at 30 min.
    hours: u64,
    runs: usize,
    /// `scaling`: the table of shapes, each a child process (`scale/scaling.rs`).
    scaling: bool,
    /// `--row`: a child of `scaling` or `against`, which prints its case's figures as one line.
    row: bool,
    /// `against FLOOR`: alternating rounds with the floor's binary (`scale/against.rs`).
    against: Option<std::path::PathBuf>,
    /// `--rounds R`: how many alternating rounds `against` runs.
    rounds: usize,
}

const USAGE: &str = "\
usage: cargo bench --bench scale -- [CASE] [--scale K] [--groups G] [--hours H] [--runs N]
       cargo bench --bench scale -- scaling [--hours H]
       cargo bench --bench scale -- against FLOOR [rocketmq|nacos] [--rounds R] [--scale K] [--hours H] [--runs N]

CASE      run only the cases whose name contains it: rocketmq, nacos, distro, producers
--scale K multiply the fleet by K (Nacos stops at 2)      [default: 1]
--groups G the RocketMQ cases with G groups (2G brokers), in place of 500K: a small fleet's
          state stays in the CPU's caches (`rocketmq --groups 50 --hours 10` does about
          the bench's work with a tenth of its brokers)
--hours H virtual hours per run                          [default: 1]
--runs N  repetitions; best and median are reported      [default: 3]
scaling   the RocketMQ case at 1x, 2x, 4x and 8x, one child process each, with peak RSS
against FLOOR
          the floor's binary (../shared/perf-floor, `cargo build --release` there) and
          routesim in alternating rounds, each best of N, with each round's wall-time ratio
--rounds R rounds of `against`                                [default: 3]";

/// A bad argument: what was wrong and how to call it, exit 2.
fn usage_error(what: &str) -> ! {
    eprintln!("error: {what}\n\n{USAGE}");
    std::process::exit(2);
}

impl Args {
    fn parse() -> Args {
        let mut args = Args {
            filter: None,
            scale: 1,
            groups: None,
            hours: 1,
            runs: 3,
            scaling: false,
            row: false,
            against: None,
            rounds: 3,
        };
        let mut it = std::env::args().skip(1);
        let number = |flag: &str, v: Option<String>| -> u64 {
            match v.as_deref().map(str::parse::<u64>) {
                Some(Ok(n)) => n,
                _ => usage_error(&format!(
                    "{flag} takes a positive whole number, not {}",
                    v.as_deref().unwrap_or("nothing")
                )),
            }
        };
        while let Some(a) = it.next() {
            match a.as_str() {
                "--scale" => args.scale = number("--scale", it.next()).max(1) as usize,
                "--groups" => args.groups = Some(number("--groups", it.next()).max(1) as usize),
                "--hours" => args.hours = number("--hours", it.next()).max(1),
                "--runs" => args.runs = number("--runs", it.next()).max(1) as usize,
                "--row" => args.row = true,
                "--rounds" => args.rounds = number("--rounds", it.next()).max(1) as usize,
                "scaling" => args.scaling = true,
                "against" => match it.next() {
                    Some(floor) if !floor.starts_with('-') => args.against = Some(floor.into()),
                    _ => usage_error("against takes the path of the floor's binary"),
                },
                "-h" | "--help" => {
                    println!("{USAGE}");
                    std::process::exit(0);
                }
                // `cargo bench` passes `--bench`; other harness flags mean nothing here.
                flag if flag.starts_with('-') => {}
                name => args.filter = Some(name.to_string()),
            }
        }
        if args.against.is_some() && args.groups.is_some() {
            usage_error("against runs the bench's shapes, which the floor has: --groups is not one of them");
        }
        args
    }

    /// The case's name with the shape's multipliers, when they differ from the bench's.
    fn label(&self, name: &str) -> String {
        let mut label = name.to_string();
        // `--groups` sets a RocketMQ case's fleet in place of `--scale`.
        match self.groups.filter(|_| name.starts_with("rocketmq")) {
            Some(g) => label += &format!(" [--groups {g}: {} brokers]", 2 * g),
            None if self.scale > 1 => label += &format!(" [x{} fleet]", self.scale),
            None => {}
        }
        if self.hours > 1 {
            label += &format!(" [{} h]", self.hours);
        }
        label
    }

    /// The target grows with the work: linearly in fleet size and hours.
    fn target(&self, secs: u64) -> Duration {
        Duration::from_secs(secs * self.scale as u64 * self.hours)
    }
}

/// The process's peak resident set so far, in MB. One case per process gives that case's peak:
/// run a case alone (`-- rocketmq`) to read its figure.
///
/// Read from `VmHWM` in `/proc/self/status`, which starts afresh when the process image does.
/// `getrusage`'s `ru_maxrss` survives `execve`: under `cargo bench` it reported cargo's own
/// peak at the fork (56 MB), not the bench's (24 MB). It is the fallback where `/proc` is not.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().strip_suffix("kB"));
    if let Some(kb) = hwm.and_then(|kb| kb.trim().parse::<f64>().ok()) {
        return kb / 1024.0;
    }
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0;
    if ok {
        usage.ru_maxrss as f64 / 1024.0
    } else {
        f64::NAN
    }
}

fn main() {
    let args = Args::parse();
    if args.scaling {
        scaling::run(args.hours);
        return;
    }
    let wanted = |n: &str| args.filter.as_deref().is_none_or(|f| n.contains(f));
    if let Some(floor) = &args.against {
        if !floor.is_file() {
            usage_error(&format!(
                "no floor binary at {}: build it with `cargo build --release` in ../shared/perf-floor",
                floor.display()
            ));
        }
        let shape = against::Shape { scale: args.scale, hours: args.hours, runs: args.runs };
        if let Err(e) = against::run(floor, wanted, &shape, args.rounds) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        return;
    }
    let hours = |mut s: Scenario| {
        s.duration = SimDuration::from_secs(3600 * args.hours);
        s
    };
    if wanted("nacos") {
        let s = hours(nacos_scale(100 * args.scale, 100));
        let name = args.label("nacos: 10,000 instances (100 providers x 100 services), 1 h, 1,000 crash");
        let m = measure(&name, &s, args.runs, args.target(5), args.scale as u64, args.hours);
        if args.row {
            println!("{}", scaling::row_line(&m, peak_rss_mb()));
        }
    }
    if wanted("distro") {
        let s = hours(distro_scale(100 * args.scale, 100));
        let name = args.label(
            "distro: 3-member Nacos cluster, 10,000 instances (half 2.x gRPC, half 1.x HTTP), 1 h, a member killed",
        );
        measure(&name, &s, args.runs, args.target(10), args.scale as u64, args.hours);
    }
    let groups = args.groups.unwrap_or(500 * args.scale);
    if wanted("rocketmq") {
        let s = hours(rocketmq_scale(groups, 100));
        let name = args.label("rocketmq: 1000 brokers x 2 namesrv x 100 topics, 1 h, wave of 100 failures");
        let m = measure(&name, &s, args.runs, args.target(2), args.scale as u64, args.hours);
        if args.row {
            println!("{}", scaling::row_line(&m, peak_rss_mb()));
        }
    }
    if wanted("producers") {
        let s = hours(with_producers(rocketmq_scale(groups, 100)));
        let name = args.label("rocketmq+producers: the same, plus 10 producers x 100 msg/s (3.6 million sends)");
        measure(&name, &s, args.runs, args.target(6), args.scale as u64, args.hours);
    }
    println!("peak RSS of this process: {:.1} MB", peak_rss_mb());
}
