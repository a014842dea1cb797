//! The integration tests, as one binary: each module below was its own `tests/*.rs` file, and each
//! of those linked the whole crate and its dependencies again. Run one group by its module path, e.g.
//! `cargo test --test it lessons::` or `cargo test --test it nacos_ops::restarts_and_views::`.
//!
//! The checks that need a browser or a terminal are a second binary, `tests/tools.rs` (see the
//! comment on its `[[test]]` in Cargo.toml).

mod common;

mod catalogue;
mod cli;
mod cli_input;
mod fuzz;
mod json_output;
mod layers;
mod lessons;
mod long_runs;
mod nacos_distro;
mod nacos_grpc;
mod nacos_members;
mod nacos_ops;
mod newcomer;
mod producer_input;
mod properties;
mod regressions;
mod scenario_errors;
mod scenario_validation;
mod sweep;
mod transport;
mod views;
