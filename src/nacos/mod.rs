//! The Nacos ephemeral-instance model (1.x-style HTTP beat client, 2.x server): pure state
//! machines, no actix types.

pub mod notes;
pub mod wire;
