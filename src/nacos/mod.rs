//! The Nacos ephemeral-instance model (1.x-style HTTP beat client, 2.x server): pure state
//! machines, no actix types.
//!
//! The actors in `crate::actors` (`nacos_*.rs`) wrap these; everything here takes `now` as an
//! argument and returns what happened as data, so it is unit-tested without a runtime. Each test
//! names the Nacos method it pins.
//!
//! - [`types`] — service and client identities, instances, `ServiceInfo`, constants, and the two
//!   readings of `preserved.*` metadata (client: digits or default; server: `toLong` or 0).
//! - [`beat`] — the client's `BeatReactor` / `BeatTask`.
//! - [`http`] — the client's `reqApi` server rotation and read timeouts.
//! - [`naming`] — the server's clients, instances, indexes and HTTP operations.
//! - [`health`] — the beat checkers and client cleaner, and the tick-skipping scheduler.
//! - [`push`] — the merged 500 ms push delay engine.
//! - [`subscriber`] — a 1.x subscriber's `HostReactor` cache, polls and local filter.
//! - [`grpc`] — the 2.x gRPC client's connection rules and redo, the server's connection
//!   table and ejector.
//! - [`cluster`] — a cluster member's view of the others (`ServerMemberManager`, `MemberUtil`),
//!   its `DistroMapper`, and Distro's delay-task engine.
//! - [`wire`] — the HTTP calls and the UDP push; [`notes`] — trace events (`notes_ops` words the
//!   operator's: console metadata and switches).

pub mod beat;
pub mod cluster;
mod due_index;
pub mod grpc;
pub mod health;
pub mod http;
pub mod naming;
pub mod notes;
pub mod notes_distro;
pub mod notes_grpc;
pub mod notes_member;
pub mod notes_ops;
mod notes_timeline;
pub mod push;
pub mod subscriber;
pub mod types;
pub mod wire;

#[cfg(test)]
mod health_tests;
