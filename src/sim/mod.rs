//! The simulation machinery shared by every model: virtual time, ids, network, scenarios,
//! expectations, trace and the runner.
//!
//! Two layers live here. The ground types — `clock`, `ids`, `rng`, `keyed`, `mutation` — sit
//! below the models and import nothing else from the crate. Everything else sits above the
//! actors and may read the models; the models never read it.

pub mod agenda;
pub mod clock;
pub mod digest;
pub mod executor;
pub mod expect;
pub mod explore;
pub mod ids;
pub mod invariants;
pub mod keyed;
pub mod mutation;
pub mod name;
pub mod narrate;
pub mod network;
pub mod notes;
pub mod observe;
pub mod packet;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod sweep;
pub mod timeline;
pub mod trace;
pub mod world;
