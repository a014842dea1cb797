//! `routesim-conform FILE (--namesrv-bin PATH | --namesrv ADDR) [--scale K]`: runs a RocketMQ
//! scenario against a real name server in scaled real time and diffs its routes with the model.
//!
//! # Layout
//!
//! - [`wire`] — the remoting frame (JSON header), pure; [`conn`] — one blocking connection.
//! - [`requests`] — the model's name-server inputs as real requests; [`route`] — a route both
//!   sides can show.
//! - [`model`] — the scenario in simulation, with its inputs tapped and its routes narrated.
//! - [`server`] — the real name server's process; [`driver`] — replay and poll in real time.
//! - [`diff`] — the comparison, pure; [`report`] — what it prints.
//!
//! Exit codes as `routesim run`: 0 the real server agreed with the model throughout, 1 it
//! differed, 2 the input was invalid or the server could not be run.

mod conn;
mod diff;
mod driver;
mod model;
mod report;
mod requests;
mod route;
mod server;
mod wire;

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "routesim-conform",
    about = "Run a RocketMQ scenario against a real name server and diff its routes with routesim's model"
)]
#[command(group(clap::ArgGroup::new("server").required(true).args(["namesrv_bin", "namesrv"])))]
pub struct Args {
    /// The RocketMQ scenario to run.
    file: PathBuf,
    /// The name server binary to start (one process per `[[namesrv]]`, fresh temp dir each).
    #[arg(long, value_name = "PATH")]
    namesrv_bin: Option<PathBuf>,
    /// A name server already running at ADDR (one-name-server scenarios without restarts; it
    /// must have run its first scan already).
    #[arg(long, value_name = "ADDR")]
    namesrv: Option<std::net::SocketAddr>,
    /// Model time runs K times faster than real time (every period and timeout divided by K).
    #[arg(long, value_name = "K", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=1000))]
    scale: u64,
    /// Real milliseconds between two route polls.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    grid_ms: u64,
    /// Real scheduling slack allowed on a loaded machine, on top of one scan interval.
    #[arg(long, value_name = "MS", default_value_t = 40)]
    slack_ms: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match report::conform(&args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
