//! The model's side of a conformance run: the scenario run in simulation, with a tap that
//! keeps every name server's inputs (to replay on the real server) and a narrator that keeps
//! each polled route every time it changes (to compare with what the real server serves).

use crate::route::{Route, CLUSTER_INFO};
use routesim::rocketmq::tap::{Input, InputTap};
use routesim::sim::clock::SimTime;
use routesim::sim::expect::{Expectation, Subject, Verdict, When};
use routesim::sim::narrate::{Moment, Narrator};
use routesim::sim::runner::{run, RunOptions};
use routesim::sim::scenario::Scenario;
use routesim::sim::trace::TraceEvent;
use routesim::sim::world::World;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// (name server, topic): what the driver polls and the diff compares.
pub type Key = (String, String);

/// Each key's route at every change: a step function from time 0.
pub type Steps = BTreeMap<Key, Vec<(SimTime, Route)>>;

/// What the model did and served.
pub struct ModelRun {
    /// Every name server input, in handling order, with its model time.
    pub inputs: Vec<(SimTime, String, Input)>,
    /// Per key, the route at each change (a step function, starting at 0).
    pub routes: Steps,
    pub verdicts: Vec<(Expectation, Verdict)>,
    pub seed: u64,
}

/// What to poll: every topic a broker of the scenario holds, and the cluster info, on every
/// name server.
pub fn keys(s: &Scenario) -> Vec<Key> {
    let mut keys: Vec<Key> = Vec::new();
    for ns in &s.namesrvs {
        keys.push((ns.name.clone(), CLUSTER_INFO.to_string()));
        for b in &s.brokers {
            for t in b.topics.iter() {
                let k = (ns.name.clone(), t.topic_name.clone());
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
    }
    keys
}

struct Tap(Rc<RefCell<Vec<(SimTime, String, Input)>>>, Vec<String>);

impl InputTap for Tap {
    fn input(&mut self, t: SimTime, namesrv: &str, input: Input) {
        // Process changes come for every process; only the name servers' matter here.
        if self.1.iter().any(|n| n == namesrv) {
            self.0.borrow_mut().push((t, namesrv.to_string(), input));
        }
    }
}

/// Reads the polled routes out of the world after every event and keeps their changes.
struct Routes {
    keys: Vec<Key>,
    out: Rc<RefCell<Steps>>,
    revisions: BTreeMap<String, (u64, u64)>,
}

impl Narrator for Routes {
    fn on_event(&mut self, event: &TraceEvent, world: &World) {
        for (ns, topic) in &self.keys {
            let rev = world.namesrv_revision(ns);
            if self.revisions.get(ns) == Some(&rev) && self.out.borrow().contains_key(&(ns.clone(), topic.clone())) {
                continue;
            }
            let route = match world.namesrv(ns) {
                None => Route::Down,
                Some(table) if topic == CLUSTER_INFO => {
                    let table = table.borrow();
                    let groups = table.broker_addr_table().iter().map(|(n, b)| {
                        (n.to_string(), b.broker_addrs.iter().map(|(&id, a)| (id, a.to_string())).collect())
                    });
                    Route::cluster_from_model(table.cluster_addr_table(), groups)
                }
                Some(table) => Route::from_model(table.borrow().pickup_topic_route_data(topic).as_ref()),
            };
            let mut out = self.out.borrow_mut();
            let steps = out.entry((ns.clone(), topic.clone())).or_default();
            if steps.last().is_none_or(|(_, r)| *r != route) {
                steps.push((event.t, route));
            }
        }
        for ns in self.keys.iter().map(|(n, _)| n) {
            self.revisions.insert(ns.clone(), world.namesrv_revision(ns));
        }
    }

    fn take_moments(&mut self) -> Vec<Moment> {
        Vec::new()
    }
}

pub fn run_model(s: &Scenario) -> ModelRun {
    let inputs = Rc::new(RefCell::new(Vec::new()));
    let routes = Rc::new(RefCell::new(BTreeMap::new()));
    let names = s.namesrvs.iter().map(|n| n.name.clone()).collect();
    let narrator = Routes { keys: keys(s), out: routes.clone(), revisions: BTreeMap::new() };
    let opts = RunOptions {
        tap: Some(Box::new(Tap(inputs.clone(), names))),
        narrator: Some(Box::new(narrator)),
        ..Default::default()
    };
    let report = run(s, opts);
    let inputs = std::mem::take(&mut *inputs.borrow_mut());
    let routes = std::mem::take(&mut *routes.borrow_mut());
    ModelRun { inputs, routes, verdicts: report.verdicts, seed: report.seed }
}

/// The (name server, topic) and model-time window an expectation looks at, if it is about a
/// route; other subjects (the live table, clients, sends) cannot be polled over the protocol.
pub fn window(e: &Expectation) -> Option<(Key, SimTime, SimTime)> {
    let Subject::Route { namesrv, topic, .. } = &e.subject else { return None };
    let (from, to) = match e.when {
        When::At(t) => (t, t),
        When::By { from, deadline } => (from, deadline),
        When::During { from, until } => (from, until),
    };
    Some(((namesrv.clone(), topic.clone()), from, to))
}
