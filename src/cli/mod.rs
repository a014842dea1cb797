//! The command line: `routesim run`, `check`, `explore`, `explain`, `lesson`, `sweep`, `conform`,
//! `completions`.
//!
//! Exit codes are a contract: 0 every expectation held, 1 an expectation failed, 2 the input
//! was invalid (or could not be read or written). Errors never panic.

mod check;
mod completions;
mod conform;
mod explain;
mod explore;
mod explore_merge;
mod files;
mod json;
mod lesson;
mod output;
mod progress;
mod run;
mod sweep;
mod sweep_json;

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
// Each subcommand's `--help` ends with one example to copy: a newcomer learns the shape of a
// command faster from one real line than from the list of flags above it.
enum Command {
    /// Run scenarios and print their timeline, verdicts and trace digest.
    #[command(after_help = "Example:\n  routesim run scenarios/rocketmq/01-kill-vs-silent.toml --seed 7")]
    Run(run::RunArgs),
    /// Run every scenario under a folder, in parallel; one verdict line each.
    #[command(after_help = "Example:\n  routesim check scenarios --jobs 2 --timeout 1m")]
    Check(check::CheckArgs),
    /// Generate random clusters and fault schedules and check every invariant; save failures.
    #[command(after_help = "Example:\n  routesim explore --model nacos --cases 50 --out target/failures")]
    Explore(explore::ExploreArgs),
    /// Walk through a run's key moments, naming the real methods, with tables before and after.
    #[command(after_help = "Example:\n  routesim explain scenarios/rocketmq/01-kill-vs-silent.toml --at 55s")]
    Explain(explain::ExplainArgs),
    /// Print a scenario's lesson page (Markdown): question, commands, verdicts, diagram, why.
    #[command(after_help = "Example:\n  routesim lesson scenarios/nacos/01-crash.toml > crash.md")]
    Lesson(lesson::LessonArgs),
    /// Run one scenario over many seeds: how often each expectation held, and the distribution
    /// of its convergence time.
    Sweep(sweep::SweepArgs),
    /// Run a RocketMQ scenario against a real name server, scaled in time, and diff its routes
    /// with the model's (needs `routesim-conform`, built from `conformance/`).
    #[command(
        after_help = "Example:\n  routesim conform scenarios/rocketmq/10-wipe-write-perm.toml --namesrv-bin ~/.cache/routesim/rocketmq-namesrv-1.0.0/bin/rocketmq-namesrv-rust"
    )]
    Conform(conform::ConformArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell) on stdout.
    #[command(
        after_help = "Example (bash):\n  routesim completions bash > ~/.local/share/bash-completion/completions/routesim"
    )]
    Completions(completions::CompletionsArgs),
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
        Command::Sweep(args) => sweep::sweep(args),
        Command::Conform(args) => conform::conform(args),
        Command::Completions(args) => completions::completions::<Cli>(args),
    };
    ExitCode::from(code)
}

/// Threads for `work` independent items, from `--jobs`. Each thread costs a stack and (in
/// `check`) an actor system, and runs simulations that never wait on I/O: more threads than
/// cores only share the same cores, and more than items sit idle. So `--jobs` is a ceiling:
/// the count is capped at both, and omitting it means one per core. `--jobs 0` is refused
/// rather than quietly read as 1 or as "default", which would each surprise someone.
fn threads(jobs: Option<usize>, work: usize) -> Result<usize, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match jobs {
        Some(0) => Err("--jobs 0: give at least 1 thread, or leave --jobs out for one per core".into()),
        Some(n) => Ok(n.min(cores).min(work).max(1)),
        None => Ok(cores.min(work).max(1)),
    }
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

#[cfg(test)]
mod tests {
    use super::threads;

    #[test]
    fn jobs_are_capped_at_the_work_and_the_cores_and_0_is_refused() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads(Some(1 << 40), 3), Ok(3.min(cores)), "no thread without an item");
        assert_eq!(threads(Some(usize::MAX), usize::MAX), Ok(cores), "no more threads than cores");
        assert_eq!(threads(None, 1_000), Ok(cores));
        assert_eq!(threads(Some(1), 1_000), Ok(1));
        assert_eq!(threads(Some(5), 0), Ok(1), "nothing to do still takes a (short) thread");
        assert!(threads(Some(0), 10).unwrap_err().starts_with("--jobs 0"));
    }
}
