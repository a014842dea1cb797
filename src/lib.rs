//! # routesim
//!
//! An actor-model simulator of the moment a node dies, for the two most used "heartbeat +
//! expiry" registries of the Java middleware world: Apache RocketMQ name servers and Nacos
//! ephemeral instances. Scenarios (TOML) describe a cluster, inject faults at virtual times and
//! assert how routes converge; a run of hours of cluster time takes milliseconds and is
//! byte-for-byte repeatable from its seed.
//!
//! # Layout
//!
//! - [`sim`] — the ground types every layer shares (`clock`, `ids`, `name`, `rng`, `keyed`, `mutation`)
//!   and, above the actors, the machinery: the agenda, the network model, scenarios,
//!   expectations, the trace, the runner. The models use only the ground types
//!   (`tests/it/layers.rs` checks it).
//! - [`rocketmq`] — pure state machines of the name server (`RouteInfoManager`), the broker's
//!   registration, the unregistration queue, the client's route cache and the producer's send
//!   path (queue selection, retries, latency fault tolerance).
//! - [`nacos`] — pure state machines of the Nacos beat client and naming server.
//! - [`actors`] — thin actix actors around those cores, one per file.
//! - [`view`] — what a finished run can be turned into: a Mermaid sequence diagram, an HTML
//!   swimlane report, a narrated explanation, the lesson pages (with their glossary links and
//!   Versions section).
//! - [`cli`] — the `routesim` command.
//! - [`allocator`] — the global allocator of the `routesim` binary and the benches: mimalloc,
//!   called through its plain entry points wherever a word's alignment will do.
//!
//! # Flow
//!
//! ```text
//!  scenario.toml ──validate──▶ Scenario ──runner──▶ actix actors (virtual clock)
//!                                                   │
//!      director ──faults──▶ brokers ◀──packets──▶ network ◀──packets──▶ name servers
//!                                                   │  (agenda: every timer and packet)
//!                                                   ▼
//!                               trace ──▶ timeline / JSONL / digest
//!                                 └────▶ expectations (at / by / during) ──▶ PASS / FAIL
//! ```

pub mod actors;
pub mod allocator;
pub mod cli;
pub mod nacos;
pub mod rocketmq;
pub mod sim;
pub mod view;
