//! Runs one scenario: builds the actor system on a virtual clock, lets it play out, and collects
//! the verdicts and the trace digest.
//!
//! Each run owns an executor on its thread (`actors::runtime`), every actor a task of it: the
//! network's driver moves virtual time whenever they all run out of work, so a run is
//! single-threaded and its virtual time jumps from event to event. Runs are
//! independent; `routesim check` runs several on separate threads.

use crate::actors::director::Director;
use crate::actors::network::{IdleGate, Net};
use crate::rocketmq::tap::InputTap;
use crate::sim::clock::SimTime;
use crate::sim::expect::checker::Checker;
use crate::sim::expect::{Expectation, Verdict};
use crate::sim::invariants::monitor::Monitor;
use crate::sim::invariants::{Invariant, Violation};
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use crate::sim::narrate::{Moment, Narrator};
use crate::sim::network::{LinkParams, LinkRules};
use crate::sim::notes::{RunNote, What};
use crate::sim::observe::Obs;
use crate::sim::scenario::Scenario;
use crate::sim::trace::{Trace, TraceEvent, TraceOptions};
use crate::sim::world::{BrokerFacts, World};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The default event budget: 50 million events. The biggest run we know of (`cargo bench --bench
/// scale`) has about 6.9 million; a scenario that goes past seven times that is more likely stuck
/// in a loop than busy.
pub const DEFAULT_MAX_EVENTS: u64 = 50_000_000;

pub struct RunOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    pub trace: TraceOptions,
    /// Narrate the key moments (explain mode): `view::explain::narrator()`.
    pub narrator: Option<Box<dyn Narrator>>,
    /// Called with the virtual time at each new instant: a progress line for long runs. It
    /// sees time pass; it cannot touch the run.
    pub progress: Option<Box<dyn Fn(SimTime)>>,
    /// Test-only: plant a known bug (see [`Mutation`]).
    #[doc(hidden)]
    pub mutation: Option<Mutation>,
    /// The event budget: once the trace has this many events the run stops where it is (see
    /// [`BudgetExceeded`]). Virtual time is capped by the scenario's duration; this caps the work.
    pub max_events: u64,
    /// Set from another thread to stop the run at its next instant, as the budget does: how
    /// `check --timeout` ends a scenario that runs too long in wall time. The run never reads
    /// the wall clock itself.
    pub stop: Option<Arc<AtomicBool>>,
    /// Receives every name server's inputs (conformance runs replay them on a real server).
    pub tap: Option<Box<dyn InputTap>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: None,
            trace: TraceOptions::default(),
            narrator: None,
            progress: None,
            mutation: None,
            max_events: DEFAULT_MAX_EVENTS,
            stop: None,
            tap: None,
        }
    }
}

/// A run stopped before its end: at which virtual time, after how many events, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetExceeded {
    pub at: SimTime,
    pub events: u64,
    /// Stopped by [`RunOptions::stop`] (a wall-clock timeout), not by the event budget.
    pub stopped: bool,
}

impl std::fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = if self.stopped { "stopped by its timeout" } else { "event budget exceeded" };
        write!(f, "{why} at {} after {} events", self.at, self.events)
    }
}

pub struct RunReport {
    pub scenario: String,
    pub seed: u64,
    pub end: SimTime,
    pub verdicts: Vec<(Expectation, Verdict)>,
    /// Beside each verdict, what its subject measured (`sends`: counts and latencies), if anything.
    pub figures: Vec<Option<String>>,
    /// The invariants the scenario enabled, checked at every event.
    pub invariants: Vec<Invariant>,
    /// Invariants broken during the run (only those the scenario enabled).
    pub violations: Vec<Violation>,
    pub digest: String,
    pub events: u64,
    /// The events, when `TraceOptions::keep` was set.
    pub kept: Vec<TraceEvent>,
    /// The first error writing the timeline or trace file.
    pub io_error: Option<std::io::Error>,
    /// Explain mode's key moments.
    pub moments: Vec<Moment>,
    /// Set when the run stopped at its event budget, before the scenario's end: its verdicts
    /// are then those of a run cut short.
    pub budget_exceeded: Option<BudgetExceeded>,
}

impl RunReport {
    /// Every expectation held and no invariant was violated, in a run that reached its end.
    pub fn all_held(&self) -> bool {
        self.budget_exceeded.is_none() && self.verdicts.iter().all(|(_, v)| v.held()) && self.violations.is_empty()
    }
}

fn world_for(scenario: &Scenario) -> World {
    let brokers = scenario
        .brokers
        .iter()
        .map(|b| {
            let facts = BrokerFacts {
                cluster: b.config.cluster.clone(),
                broker_name: b.config.broker_name.clone(),
                addr: b.config.addr.clone(),
            };
            (b.name.clone(), facts)
        })
        .collect();
    let mut world = World::new(brokers);
    world.set_nacos_instances(scenario.nacos.instance_facts());
    for e in &scenario.expects {
        match &e.subject {
            crate::sim::expect::Subject::Sends(w) => world.watch_sends(&w.producer, w.to_broker.as_deref()),
            crate::sim::expect::Subject::Registration { .. } => world.watch_registrations(),
            _ => {}
        }
    }
    world
}

pub fn run(scenario: &Scenario, opts: RunOptions) -> RunReport {
    let seed = opts.seed.unwrap_or(scenario.seed);
    let end = SimTime::ZERO + scenario.duration;
    // No tokio timers and no I/O: the driver moves virtual time itself, whenever the actors run
    // dry (`IdleGate`).
    let idle = IdleGate::default();
    let (name, invariants) = (scenario.name.clone(), scenario.invariants.clone());
    let scenario = scenario.clone();
    let obs = idle.clone().block_on(async move {
        let checker = Checker::new(scenario.expects.clone());
        let mut obs = Obs::new(Trace::new(opts.trace), checker, world_for(&scenario));
        if !scenario.invariants.is_empty() {
            obs = obs.with_monitor(Monitor::new(&scenario));
        }
        if let Some(narrator) = opts.narrator {
            obs = obs.with_narrator(narrator);
        }
        obs.progress = opts.progress.map(Rc::from);
        obs.tap = opts.tap.map(|t| Rc::new(RefCell::new(t)));
        obs.end = end;
        let n = &scenario.network;
        let rules = LinkRules::new(LinkParams { latency: n.latency, jitter: n.jitter, loss: n.loss });
        let net = Net::new(rules, n.connect_timeout, seed, obs.clone(), idle);
        let run = Name::new("run");
        let begin = RunNote::Begin { scenario: scenario.name.clone(), seed, duration: scenario.duration };
        obs.record(SimTime::ZERO, run, What::Run(begin));
        let director = crate::actors::inbox::Local::new();
        director.start(Director::new(net.clone(), obs.clone(), scenario, opts.mutation, director.clone()));
        let stop = opts.stop.clone();
        let stopped = net.start_driver(end, opts.max_events, opts.stop).await;
        let events = obs.trace.borrow().count();
        obs.record(stopped.unwrap_or(end), run, What::Run(RunNote::End { events: events + 1 }));
        let by_stop = stop.is_some_and(|s| s.load(Ordering::Relaxed)) && events < opts.max_events;
        let budget_exceeded = stopped.map(|at| BudgetExceeded { at, events, stopped: by_stop });
        (obs, budget_exceeded)
    });
    let (obs, budget_exceeded) = obs;
    let (verdicts, figures) = (obs.checker.borrow().verdicts(), obs.checker.borrow().figures());
    let moments = obs.narrator.as_ref().map(|x| x.borrow_mut().take_moments()).unwrap_or_default();
    let violations = obs.monitor.as_ref().map(|m| m.borrow().violations().to_vec()).unwrap_or_default();
    let trace = std::mem::replace(&mut *obs.trace.borrow_mut(), Trace::new(TraceOptions::default()));
    let (digest, events) = (trace.digest(), trace.count());
    let (kept, io_error) = trace.finish();
    RunReport {
        scenario: name,
        seed,
        end,
        verdicts,
        figures,
        invariants,
        violations,
        digest,
        events,
        kept,
        io_error,
        moments,
        budget_exceeded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::clock::SimDuration;
    use std::path::Path;

    const POLLING: &str = r#"
[scenario]
name = "a client that polls"
duration = "10m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders" }]

[[client]]
name = "c"
topics = ["Orders"]
"#;

    #[test]
    fn the_budget_stops_a_loop_that_never_lets_time_move() {
        // Loading refuses a 0 ms poll interval; a scenario built in code can still have one.
        // Without a budget this run never returns (and its agenda grows until memory runs out).
        let mut s = crate::sim::scenario::parse(Path::new("t.toml"), POLLING).expect("valid");
        s.clients[0].poll_interval = SimDuration::ZERO;
        let report = run(&s, RunOptions { max_events: 10_000, ..Default::default() });
        let over = report.budget_exceeded.expect("the budget stopped the run");
        assert!(over.at < SimTime::ZERO + s.duration, "stopped before the end: {over}");
        assert!((10_000..20_000).contains(&over.events), "{over}");
        assert!(!report.all_held(), "a run cut short holds nothing");
        assert!(over.to_string().starts_with("event budget exceeded at "), "{over}");
    }

    #[test]
    fn the_default_budget_leaves_an_ordinary_run_alone() {
        let s = crate::sim::scenario::parse(Path::new("t.toml"), POLLING).expect("valid");
        let report = run(&s, RunOptions::default());
        assert_eq!(report.budget_exceeded, None);
        assert!(report.all_held());
    }

    /// What a tap was handed: (time, name server, kind).
    type Inputs = Rc<RefCell<Vec<(SimTime, String, &'static str)>>>;

    /// Keeps what a tap is handed.
    struct Kept(Inputs);

    impl InputTap for Kept {
        fn input(&mut self, t: SimTime, namesrv: &str, input: crate::rocketmq::tap::Input) {
            use crate::rocketmq::tap::Input;
            let kind = match input {
                Input::Register { .. } => "register",
                Input::ChannelClosed { .. } => "closed",
                Input::Process(crate::sim::ids::ProcState::Down) => "down",
                Input::Process(_) => "process",
                _ => "other",
            };
            self.0.borrow_mut().push((t, namesrv.to_string(), kind));
        }
    }

    #[test]
    fn a_tap_sees_each_registration_and_the_crash_as_the_name_server_does() {
        // a0 registers at start: a new connection (SYN 1 ms, SYN-ACK 1 ms), the request lands at
        // 3 ms and its answer at 4 ms ends `BrokerController#start`'s first registerBrokerAll;
        // the periodic task then starts (scheduleAtFixedRate, 10 s initial delay, every 30 s
        // here): sends at 10.004 and 40.004 s, on the open connection, land 1 ms later. Killed
        // at 45 s, its FIN reaches ns1 1 ms later.
        let source = POLLING.replace("duration = \"10m\"", "duration = \"1m\"")
            + "\n[[fault]]\nname = \"kill\"\nat = \"45s\"\ncrash = \"a0\"\n";
        let s = crate::sim::scenario::parse(Path::new("t.toml"), &source).expect("valid");
        let kept = Rc::new(RefCell::new(Vec::new()));
        let report = run(&s, RunOptions { tap: Some(Box::new(Kept(kept.clone()))), ..Default::default() });
        let without = run(&s, RunOptions::default());
        assert_eq!(report.digest, without.digest, "a tap changes nothing in the run");
        let kept = kept.borrow();
        let at_ns1: Vec<_> = kept.iter().filter(|(_, n, _)| n == "ns1").map(|(t, _, k)| (t.millis(), *k)).collect();
        // Every process's life comes through (the tap keeps what it wants): here ns1's start
        // and a0's crash.
        assert!(kept.iter().any(|(t, n, k)| n == "a0" && *k == "down" && t.millis() == 45_000));
        assert_eq!(
            at_ns1,
            [(0, "process"), (3, "register"), (10_005, "register"), (40_005, "register"), (45_001, "closed")],
        );
    }
}
