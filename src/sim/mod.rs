//! The simulation machinery shared by every model: virtual time, ids, network, scenarios,
//! expectations, trace and the runner.

pub mod clock;
pub mod ids;
