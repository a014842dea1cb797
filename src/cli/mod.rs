//! The command line: `routesim run`, `check`, `explore`, `explain`, `lesson`.
//!
//! Exit codes are a contract: 0 every expectation held, 1 an expectation failed, 2 the input
//! was invalid (or could not be read or written). Errors never panic.

mod check;
mod explain;
mod explore;
mod lesson;
mod output;
mod progress;
mod run;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit statuses.
pub const HELD: u8 = 0;
pub const FAILED: u8 = 1;
pub const INVALID: u8 = 2;

#[derive(Parser)]
#[command(
    name = "routesim",
    version,
    about = "Simulate route expiry in RocketMQ name servers and Nacos, from TOML scenarios"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenarios and print their timeline, verdicts and trace digest.
    Run(run::RunArgs),
    /// Run every scenario under a folder, in parallel; one verdict line each.
    Check(check::CheckArgs),
    /// Generate random clusters and fault schedules and check every invariant; save failures.
    Explore(explore::ExploreArgs),
    /// Walk through a run's key moments, naming the real methods, with tables before and after.
    Explain(explain::ExplainArgs),
    /// Print a scenario's lesson page (Markdown): question, commands, verdicts, diagram, why.
    Lesson(lesson::LessonArgs),
}

pub fn main() -> ExitCode {
    restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { INVALID } else { HELD });
        }
    };
    let code = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Check(args) => check::check(args),
        Command::Explore(args) => explore::explore(args),
        Command::Explain(args) => explain::explain(args),
        Command::Lesson(args) => lesson::lesson(args),
    };
    ExitCode::from(code)
}

/// Scenario files under `dir`, sorted, recursively.
fn scenario_files(dir: &std::path::Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `routesim run big.toml | head` must end quietly when `head` has read enough, as `cat` would.
/// Rust starts programs with SIGPIPE ignored, so a write to the closed pipe fails and `println!`
/// panics with a backtrace; with the default action the kernel ends the process instead.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; setting a signal's
    // disposition to its default has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
