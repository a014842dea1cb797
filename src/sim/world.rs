//! Read handles on the state expectations look at.
//!
//! Actors own their cores; the world only lends the observer a way to *read* them (name servers'
//! route tables, clients' route caches). Nothing in the model talks through the world — actors
//! reach each other only by messages — and the director swaps an entry when a process restarts
//! with empty tables.

use crate::rocketmq::client::RouteClientCore;
use crate::rocketmq::route_table::RouteInfoManager;
use crate::sim::clock::SimTime;
use crate::sim::name::Name;
use rustc_hash::FxHashMap;
use std::cell::{Ref, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

mod nacos;
mod sends;
pub use nacos::NacosInstanceFacts;
pub use sends::{percentile, SendLog, SendRecord, SendStats};

/// A process's current core, or `None` while it is down. `generation` changes on every swap,
/// so an observer can tell "same tables, new revision" from "new tables".
struct Slot<T> {
    generation: u64,
    core: Option<Rc<RefCell<T>>>,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot { generation: 0, core: None }
    }
}

/// Static facts about a broker process that subjects refer to by the broker's name.
#[derive(Clone, Debug)]
pub struct BrokerFacts {
    pub cluster: String,
    pub broker_name: String,
    pub addr: String,
}

#[derive(Default)]
pub struct World {
    namesrvs: RefCell<BTreeMap<String, Slot<RouteInfoManager>>>,
    clients: RefCell<BTreeMap<String, Slot<RouteClientCore>>>,
    pub brokers: BTreeMap<String, BrokerFacts>,
    nacos_servers: RefCell<BTreeMap<String, Slot<crate::nacos::naming::NamingServer>>>,
    nacos_subscribers: RefCell<BTreeMap<String, Slot<crate::nacos::subscriber::SubscriberCore>>>,
    /// Each clustered naming server's view of its fellow members.
    nacos_members: RefCell<BTreeMap<String, Slot<crate::nacos::cluster::MemberView>>>,
    /// Each 2.x client's current connection, for the `connection` subject.
    grpc_clients: RefCell<BTreeMap<String, Slot<crate::nacos::grpc::client::ConnView>>>,
    /// Static facts about each Nacos instance, by its scenario name, and the way back.
    nacos_instances: BTreeMap<String, NacosInstanceFacts>,
    nacos_names: BTreeMap<(crate::nacos::types::ServiceKey, crate::nacos::types::ClientKey), String>,
    /// The sends of the producers some expectation asks about: by producer, then by the broker
    /// name of the send's last attempt (`None`: all of the producer's sends).
    sends: RefCell<BTreeMap<String, BTreeMap<Option<String>, SendLog>>>,
    /// Each broker's last answer to REGISTER_BROKER from each name server (broker, then name
    /// server), with a revision. Hashed: it is written on every answer (4,000 a minute at the
    /// scale bench) and only ever read by key, so no order of it reaches output.
    registrations: RefCell<FxHashMap<String, FxHashMap<String, Answered>>>,
    /// Whether an expectation reads `registrations`; if none does, answers are not kept.
    registrations_watched: bool,
}

/// How many answers a broker got from one name server, and the last.
type Answered = (u64, RegisterAnswer);

/// The REGISTER_BROKER answer a broker last got from one name server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterAnswer {
    pub at: SimTime,
    pub master_addr: Option<Name>,
    pub ha_server_addr: Option<Name>,
}

/// A borrowed core with its generation, or the fact that the process is down.
pub enum View<'a, T> {
    Up(Ref<'a, T>),
    Down,
}

fn set<T>(map: &RefCell<BTreeMap<String, Slot<T>>>, name: &str, core: Option<Rc<RefCell<T>>>) {
    let mut map = map.borrow_mut();
    let slot = map.entry(name.to_string()).or_default();
    slot.generation += 1;
    slot.core = core;
}

fn revision<T>(map: &RefCell<BTreeMap<String, Slot<T>>>, name: &str, rev: impl Fn(&T) -> u64) -> (u64, u64) {
    let map = map.borrow();
    match map.get(name) {
        Some(Slot { generation, core: Some(c) }) => (*generation, rev(&c.borrow())),
        Some(Slot { generation, core: None }) => (*generation, 0),
        None => (0, 0),
    }
}

fn core<T>(map: &RefCell<BTreeMap<String, Slot<T>>>, name: &str) -> Option<Rc<RefCell<T>>> {
    map.borrow().get(name).and_then(|s| s.core.clone())
}

impl World {
    pub fn new(brokers: BTreeMap<String, BrokerFacts>) -> Self {
        World { brokers, ..Default::default() }
    }

    pub fn set_namesrv(&self, name: &str, core: Option<Rc<RefCell<RouteInfoManager>>>) {
        set(&self.namesrvs, name, core);
    }

    pub fn set_client(&self, name: &str, core: Option<Rc<RefCell<RouteClientCore>>>) {
        set(&self.clients, name, core);
    }

    pub fn namesrv(&self, name: &str) -> Option<Rc<RefCell<RouteInfoManager>>> {
        core(&self.namesrvs, name)
    }

    pub fn client(&self, name: &str) -> Option<Rc<RefCell<RouteClientCore>>> {
        core(&self.clients, name)
    }

    /// Changes whenever anything an observer can see of that name server changes.
    pub fn namesrv_revision(&self, name: &str) -> (u64, u64) {
        revision(&self.namesrvs, name, |t| t.revision())
    }

    pub fn client_revision(&self, name: &str) -> (u64, u64) {
        revision(&self.clients, name, |c| c.revision())
    }

    /// Keep the sends of `producer` (to `broker`, or all of them): an expectation asks.
    pub fn watch_sends(&self, producer: &str, broker: Option<&str>) {
        let mut sends = self.sends.borrow_mut();
        sends.entry(producer.to_string()).or_default().entry(broker.map(str::to_string)).or_default();
    }

    /// A producer finished a send whose last attempt went to `broker` (if any). Kept only where
    /// watched: a long run at a high rate would otherwise keep millions of records for nothing.
    pub fn record_send(&self, producer: &str, broker: Option<&str>, record: SendRecord) {
        let mut sends = self.sends.borrow_mut();
        let Some(logs) = sends.get_mut(producer) else { return };
        // The producer's own log and the one of the broker it last tried, if watched: a handful
        // of logs, looked at without building a key for each send.
        for (to, log) in logs.iter_mut() {
            if to.is_none() || to.as_deref() == broker {
                log.push(record);
            }
        }
    }

    /// Reads a watched log.
    pub fn with_sends<R>(&self, producer: &str, broker: Option<&str>, read: impl FnOnce(&SendLog) -> R) -> Option<R> {
        let sends = self.sends.borrow();
        sends.get(producer)?.get(&broker.map(str::to_string)).map(read)
    }

    /// Keep the REGISTER_BROKER answers: an expectation asks about one.
    pub fn watch_registrations(&mut self) {
        self.registrations_watched = true;
    }

    /// Keeps `answer` as `broker`'s latest from `namesrv`, if an expectation asks about any
    /// (a run without one would otherwise look up two names for nothing on each of its
    /// 4,000 answers a minute at the scale bench). The names are copied only the first time the
    /// pair answers; every later answer finds its slot by the borrowed names.
    pub fn record_registration(&self, broker: &str, namesrv: &str, answer: RegisterAnswer) {
        if !self.registrations_watched {
            return;
        }
        let mut all = self.registrations.borrow_mut();
        if !all.contains_key(broker) {
            all.insert(broker.to_string(), FxHashMap::default());
        }
        let by_namesrv = all.get_mut(broker).expect("just ensured");
        match by_namesrv.get_mut(namesrv) {
            Some(slot) => *slot = (slot.0 + 1, answer),
            None => {
                by_namesrv.insert(namesrv.to_string(), (1, answer));
            }
        }
    }

    fn registration_slot<R>(&self, broker: &str, namesrv: &str, read: impl FnOnce(&Answered) -> R) -> Option<R> {
        self.registrations.borrow().get(broker).and_then(|m| m.get(namesrv)).map(read)
    }

    pub fn registration(&self, broker: &str, namesrv: &str) -> Option<RegisterAnswer> {
        self.registration_slot(broker, namesrv, |(_, a)| a.clone())
    }

    pub fn registration_revision(&self, broker: &str, namesrv: &str) -> (u64, u64) {
        (self.registration_slot(broker, namesrv, |(r, _)| *r).unwrap_or(0), 0)
    }

    /// Names of the name servers, in order.
    pub fn namesrv_names(&self) -> Vec<String> {
        self.namesrvs.borrow().keys().cloned().collect()
    }
}
