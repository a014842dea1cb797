//! Scenarios: load a TOML file, validate it, and get a plan the runner can execute.
//!
//! Loading has two stages, as in ripgrep's low/high args: `raw` mirrors the file (serde), and
//! `validate` turns it into the [`Scenario`] below, applying defaults and reporting *every*
//! problem with its `file:line:column`. Property tests build `Scenario` values directly.

mod ctx;
mod describe;
mod error;
mod events_expect;
mod expects;
mod lifecycle;
mod limits;
mod nacos;
mod nacos_expect;
mod nacos_instance;
mod nacos_subscriber;
#[cfg(test)]
mod nacos_tests;
mod producer;
mod raw;
mod raw_nacos;
mod requests;
mod sends_expect;
mod table_expect;
mod timeline;
mod timeline_nacos;
mod validate;
mod write;
mod write_nacos;

use crate::rocketmq::broker::{BrokerConfig, TopicChange};
use crate::rocketmq::route_table::NamesrvConfig;
use crate::rocketmq::topic_table::TopicConfigs;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::Expectation;
use crate::sim::invariants::Invariant;
pub use ctx::Drawn;
pub use describe::describe;
pub use error::{ScenarioError, ScenarioErrors};
pub use limits::{read_source, MAX_BROKERS, MAX_FILE_BYTES, MAX_INSTANCES};
pub use nacos::{NacosAppSpec, NacosInstanceSpec, NacosServerSpec, NacosSpecs, SubscriberSpec, Transport};
pub use producer::{ProducerSpec, Schedule};
use std::path::{Path, PathBuf};
pub use write::to_toml;

/// The largest seed, in a file (`seed =`) and on the command line (`--seed`) alike: TOML
/// integers are signed 64-bit, and a seed printed in "re-run with --seed N" or written into a
/// shrunk case must load again.
pub const MAX_SEED: u64 = i64::MAX as u64;

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    /// The times the file writes as ranges, and what this seed drew for them (empty for a
    /// scenario without ranges, and for every generated one).
    pub drawn: Vec<Drawn>,
    pub duration: SimDuration,
    pub network: NetworkSpec,
    pub namesrvs: Vec<NamesrvSpec>,
    pub brokers: Vec<BrokerSpec>,
    pub clients: Vec<ClientSpec>,
    /// Producers, each inside one of the clients.
    pub producers: Vec<ProducerSpec>,
    /// Nacos naming servers, application processes and subscribers.
    pub nacos: NacosSpecs,
    pub timeline: Vec<TimedEvent>,
    pub expects: Vec<Expectation>,
    /// Invariants checked at every event (`invariants = [...]` under `[scenario]`).
    pub invariants: Vec<Invariant>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NetworkSpec {
    pub latency: SimDuration,
    pub jitter: SimDuration,
    pub loss: f64,
    pub connect_timeout: SimDuration,
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            latency: SimDuration::from_millis(1),
            jitter: SimDuration::ZERO,
            loss: 0.0,
            connect_timeout: SimDuration::from_secs(3),
        }
    }
}

/// A RocketMQ name server process.
#[derive(Clone, Debug, PartialEq)]
pub struct NamesrvSpec {
    pub name: String,
    pub start: SimTime,
    pub table: NamesrvConfig,
    /// `scanNotActiveBrokerInterval`, default 5 s.
    pub scan_interval: SimDuration,
    /// The scan's initial delay: 5 ms in 5.0.0–5.3.3 (the default), 5 s on develop (#9682).
    pub scan_initial_delay: SimDuration,
    /// `unRegisterBrokerQueueCapacity`, default 3000.
    pub queue_capacity: usize,
    /// Time the batch thread takes between `take()` and applying the batch; default 0.
    pub unregister_delay: SimDuration,
    /// Netty's idle close (`serverChannelMaxIdleTimeSeconds`, 120 s); `None` turns it off.
    pub idle_close: Option<SimDuration>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BrokerSpec {
    pub name: String,
    pub config: BrokerConfig,
    pub namesrvs: Vec<String>,
    pub start: SimTime,
    /// Shared: a run clones its scenario, and at bench size (1,000 brokers × 100 topics) a
    /// second copy of every topic config was a fifth of the memory.
    pub topics: std::sync::Arc<TopicConfigs>,
    /// Netty's idle close on the broker's end (`clientChannelMaxIdleTimeSeconds`, 120 s).
    pub idle_close: Option<SimDuration>,
}

impl BrokerSpec {
    /// What an operator action on this broker changes in the config it persists and registers:
    /// its topics (`updateTopic`, `deleteTopic`), `brokerId`, `brokerPermission`. Any other
    /// action changes nothing here.
    pub fn apply(&mut self, action: &Action) {
        match action {
            Action::Topic { change: TopicChange::Upsert(t), .. } => {
                let topics = std::sync::Arc::make_mut(&mut self.topics);
                topics.retain(|x| x.topic_name != t.topic_name);
                topics.push(t.clone());
            }
            Action::Topic { change: TopicChange::Delete(name), .. } => {
                std::sync::Arc::make_mut(&mut self.topics).retain(|x| &x.topic_name != name)
            }
            Action::SetBrokerId { id, .. } => self.config.broker_id = *id,
            Action::BrokerPermission { perm, .. } => self.config.permission = *perm,
            _ => {}
        }
    }
}

/// A producer or consumer that polls routes.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientSpec {
    pub name: String,
    pub namesrvs: Vec<String>,
    pub topics: Vec<String>,
    /// `pollNameServerInterval`, default 30 s.
    pub poll_interval: SimDuration,
    /// `mqClientApiTimeout`, default 3 s.
    pub timeout: SimDuration,
    pub start: SimTime,
    /// Netty's idle close on the client's end (`clientChannelMaxIdleTimeSeconds`, 120 s).
    pub idle_close: Option<SimDuration>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimedEvent {
    pub at: SimTime,
    /// The name expectations use as an anchor; defaults to the action's description.
    pub name: String,
    pub action: Action,
}

impl Scenario {
    /// Every process in the order views lay out their lanes: the ones that register (brokers,
    /// then Nacos applications), the registries (name servers, then naming servers), then the
    /// ones that read routes (route clients, then subscribers).
    pub fn process_names(&self) -> Vec<String> {
        let brokers = self.brokers.iter().map(|b| b.name.clone());
        let apps = self.nacos.apps.iter().map(|a| a.name.clone());
        let namesrvs = self.namesrvs.iter().map(|n| n.name.clone());
        let servers = self.nacos.servers.iter().map(|s| s.name.clone());
        let clients = self.clients.iter().map(|c| c.name.clone());
        let subscribers = self.nacos.subscribers.iter().map(|s| s.name.clone());
        brokers.chain(apps).chain(namesrvs).chain(servers).chain(clients).chain(subscribers).collect()
    }
}

/// Faults and operator actions.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `kill -9` with the host alive: sockets close, peers see FINs.
    Crash(String),
    /// The host dies: nothing is closed, peers only notice by timeouts.
    HostDown(String),
    /// SIGSTOP.
    Hang(String),
    /// SIGCONT.
    Resume(String),
    /// SIGTERM: the process's shutdown hook runs (a broker unregisters from every name server).
    Shutdown(String),
    /// Start a stopped process again, with empty state.
    Restart(String),
    Partition(Vec<Vec<String>>),
    Block {
        from: String,
        to: String,
    },
    /// Heal one named partition/block, or every cut (`None`).
    Heal(Option<String>),
    /// Packet loss on `from -> to` (and back when `both_ways`).
    Loss {
        from: String,
        to: String,
        rate: f64,
        both_ways: bool,
    },
    Latency {
        from: String,
        to: String,
        base: SimDuration,
        jitter: SimDuration,
        both_ways: bool,
    },
    WipeWritePerm {
        namesrvs: Vec<String>,
        broker_name: String,
    },
    AddWritePerm {
        namesrvs: Vec<String>,
        broker_name: String,
    },
    DeleteTopic {
        namesrvs: Vec<String>,
        topic: String,
        cluster: Option<String>,
    },
    /// REGISTER_TOPIC_IN_NAMESRV from an operator or a test: `RouteInfoManager#registerTopic`
    /// with these QueueData, stored as given.
    RegisterTopic {
        namesrvs: Vec<String>,
        topic: String,
        queues: Vec<crate::rocketmq::types::QueueData>,
    },
    /// UNREGISTER_BROKER sent with this header by someone other than the broker:
    /// `DefaultRequestProcessor#unregisterBroker` queues it like the broker's own.
    UnregisterBroker {
        namesrvs: Vec<String>,
        request: crate::rocketmq::types::UnregisterRequest,
    },
    /// The broker sends one full registration carrying this DataVersion instead of its own
    /// (`register_broker`), as a test drives `RouteInfoManager#registerBroker`.
    RegisterBroker {
        broker: String,
        version: crate::rocketmq::types::DataVersion,
    },
    Topic {
        broker: String,
        change: TopicChange,
    },
    SetBrokerId {
        broker: String,
        id: u64,
    },
    BrokerPermission {
        broker: String,
        perm: u32,
    },
    /// The console's `PUT /nacos/v1/ns/instance` (`InstanceController#update`): replaces the
    /// instance's console metadata on each of `servers` (`update_metadata`).
    UpdateMetadata {
        instance: String,
        servers: Vec<String>,
        metadata: crate::nacos::types::Metadata,
    },
    /// The application calls `NamingService#deregisterInstance` for one instance (`deregister`).
    Deregister {
        instance: String,
        app: String,
    },
    /// `PUT /nacos/v1/ns/operator/switches` on each of `servers` (`nacos_switch`).
    NacosSwitch {
        servers: Vec<String>,
        switches: crate::nacos::naming::Switches,
    },
}

impl Action {
    /// An operator's change to a broker's config or to the topics on name servers: not a
    /// fault, since nothing is lost or delayed by it.
    pub fn is_broker_config(&self) -> bool {
        matches!(
            self,
            Action::Topic { .. }
                | Action::SetBrokerId { .. }
                | Action::BrokerPermission { .. }
                | Action::WipeWritePerm { .. }
                | Action::DeleteTopic { .. }
                | Action::RegisterTopic { .. }
        )
    }

    /// The processes this action touches (none for `heal`).
    pub fn targets(&self) -> Vec<String> {
        match self {
            Action::Crash(p)
            | Action::HostDown(p)
            | Action::Hang(p)
            | Action::Resume(p)
            | Action::Shutdown(p)
            | Action::Restart(p) => {
                vec![p.clone()]
            }
            Action::Partition(groups) => groups.iter().flatten().cloned().collect(),
            Action::Block { from, to } | Action::Loss { from, to, .. } | Action::Latency { from, to, .. } => {
                vec![from.clone(), to.clone()]
            }
            Action::Heal(_) => Vec::new(),
            Action::WipeWritePerm { namesrvs, .. }
            | Action::AddWritePerm { namesrvs, .. }
            | Action::DeleteTopic { namesrvs, .. }
            | Action::RegisterTopic { namesrvs, .. }
            | Action::UnregisterBroker { namesrvs, .. } => namesrvs.clone(),
            Action::Topic { broker, .. }
            | Action::RegisterBroker { broker, .. }
            | Action::SetBrokerId { broker, .. }
            | Action::BrokerPermission { broker, .. } => {
                vec![broker.clone()]
            }
            Action::UpdateMetadata { servers, .. } | Action::NacosSwitch { servers, .. } => servers.clone(),
            Action::Deregister { app, .. } => vec![app.clone()],
        }
    }
}

/// Why a scenario could not be loaded; both are "invalid input" (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Invalid(#[from] ScenarioErrors),
}

/// Reads and validates a scenario file (at most [`MAX_FILE_BYTES`], UTF-8).
pub fn load(path: &Path) -> Result<Scenario, LoadError> {
    load_seeded(path, None)
}

/// [`load`] for a run with `seed` instead of the file's (`--seed`, a sweep): the times the file
/// gives as ranges are drawn from that seed.
pub fn load_seeded(path: &Path, seed: Option<u64>) -> Result<Scenario, LoadError> {
    let source = limits::read_source(path)?;
    Ok(parse_seeded(path, &source, seed)?)
}

/// Validates scenario text; `path` is only used in messages.
pub fn parse(path: &Path, source: &str) -> Result<Scenario, ScenarioErrors> {
    validate::validate(path, source, None)
}

/// [`parse`] with the run's seed given (see [`load_seeded`]).
pub fn parse_seeded(path: &Path, source: &str, seed: Option<u64>) -> Result<Scenario, ScenarioErrors> {
    validate::validate(path, source, seed)
}
