//! The RocketMQ name-server model: pure state machines, no actix types.
//!
//! The actors in `crate::actors` wrap these; everything here takes `now` as an argument and
//! returns what happened as data, so it is unit-tested without a runtime.

pub mod batch;
pub mod broker;
pub mod broker_addrs;
pub mod client;
pub mod notes;
pub mod producer;
pub mod route_table;
pub mod send;
pub mod tap;
pub mod topic_table;
pub mod types;
pub mod wire;
