//! `routesim conform FILE (--namesrv-bin PATH | --namesrv ADDR) [--scale K]`: hands the run to
//! `routesim-conform`, the conformance driver.
//!
//! The driver speaks the remoting protocol to a real name server, so it lives in its own crate
//! (`conformance/`, out of the default build): `cargo build` here never compiles it. This
//! command only finds it — beside this executable first, then on `PATH` — and passes the
//! arguments and the exit code through.

use super::INVALID;
use std::path::{Path, PathBuf};
use std::process::Command;

const DRIVER: &str = "routesim-conform";

#[derive(clap::Args)]
pub struct ConformArgs {
    /// The RocketMQ scenario to run against the real name server.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Start this name server binary (one process per `[[namesrv]]`, each in a fresh temp dir).
    #[arg(long, value_name = "PATH", required_unless_present = "namesrv", conflicts_with = "namesrv")]
    namesrv_bin: Option<PathBuf>,
    /// Use the name server already running at ADDR (one-name-server scenarios, no restarts).
    #[arg(long, value_name = "ADDR")]
    namesrv: Option<String>,
    /// Model time runs K times faster than real time.
    #[arg(long, value_name = "K", default_value_t = 50)]
    scale: u64,
    /// Real milliseconds between two route polls.
    #[arg(long, value_name = "MS", default_value_t = 10)]
    grid_ms: u64,
    /// Real scheduling slack allowed, on top of one scan interval.
    #[arg(long, value_name = "MS", default_value_t = 40)]
    slack_ms: u64,
}

/// `routesim-conform` beside the running executable, else the first one on `PATH`.
fn find_driver() -> Option<PathBuf> {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|d| d.join(DRIVER)));
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(DRIVER)).collect::<Vec<_>>())
        .unwrap_or_default();
    beside.into_iter().chain(on_path).find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

pub fn conform(args: ConformArgs) -> u8 {
    let Some(driver) = find_driver() else {
        eprintln!(
            "error: {DRIVER} not found beside this executable or on PATH. It is built apart from routesim:\n  \
             (cd conformance && cargo build --target-dir ../target)   # then target/debug/{DRIVER}\n  \
             or: cargo install --path conformance\n\
             and the name server it drives: cargo install --no-default-features rocketmq-namesrv --version 1.0.0 \
             (README, \"Conformance\")"
        );
        return INVALID;
    };
    let mut cmd = Command::new(&driver);
    cmd.arg(&args.file);
    if let Some(bin) = &args.namesrv_bin {
        cmd.arg("--namesrv-bin").arg(bin);
    }
    if let Some(addr) = &args.namesrv {
        cmd.arg("--namesrv").arg(addr);
    }
    cmd.args(["--scale", &args.scale.to_string(), "--grid-ms", &args.grid_ms.to_string()]);
    cmd.args(["--slack-ms", &args.slack_ms.to_string()]);
    match cmd.status() {
        // A driver killed by a signal has no code: that is no verdict, so "invalid" (2).
        Ok(status) => status.code().map_or(INVALID, |c| u8::try_from(c).unwrap_or(INVALID)),
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", driver.display());
            INVALID
        }
    }
}
