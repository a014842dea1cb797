//! Property-based exploration: random clusters and fault schedules, every invariant checked at
//! every event, and each failure shrunk and saved as a scenario file that replays it.
//!
//! `routesim explore` and the property tests both come here: the generators are in [`gen`]
//! (RocketMQ) and [`gen_nacos`] (Nacos), the properties in [`check`], and [`explore`] drives
//! proptest's runner across threads.

pub mod gen;
pub mod gen_nacos;
mod operator;

use crate::sim::invariants::{Mutation, Violation};
use crate::sim::runner::{run, RunOptions};
use crate::sim::scenario::{to_toml, Scenario};
use proptest::prelude::{prop_oneof, BoxedStrategy, Strategy};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Why a generated scenario failed a property.
#[derive(Clone, Debug)]
pub enum Failure {
    /// An invariant broke during the run.
    Violated(Violation),
    /// Two runs of the same scenario and seed gave different traces.
    Nondeterministic { first: String, second: String },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Violated(v) => write!(f, "{v}"),
            Failure::Nondeterministic { first, second } => {
                write!(f, "determinism violated: the same seed gave trace digests {first} and {second}")
            }
        }
    }
}

impl Failure {
    fn property(&self) -> &'static str {
        match self {
            Failure::Violated(v) => v.invariant.key(),
            Failure::Nondeterministic { .. } => "determinism",
        }
    }
}

/// Runs `s` twice: every invariant must hold, and both runs must give the same trace digest.
/// Returns the number of events simulated.
pub fn check(s: &Scenario, mutation: Option<Mutation>) -> Result<u64, Failure> {
    let first = run(s, RunOptions { mutation, ..Default::default() });
    if let Some(v) = first.violations.first() {
        return Err(Failure::Violated(v.clone()));
    }
    let second = run(s, RunOptions { mutation, ..Default::default() });
    if first.digest != second.digest {
        return Err(Failure::Nondeterministic { first: first.digest, second: second.digest });
    }
    Ok(first.events + second.events)
}

/// A shrunk failure, saved.
#[derive(Clone, Debug)]
pub struct SavedFailure {
    /// The property that failed: an invariant's key, or `determinism`.
    pub invariant: &'static str,
    pub failure: String,
    pub path: PathBuf,
    pub seed: u64,
}

/// Which system the generated scenarios model (`routesim explore --model`). The variants' doc
/// lines are the CLI help; the generators are [`gen::scenario`] and [`gen_nacos::scenario`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    /// RocketMQ name servers, brokers and route clients.
    Rocketmq,
    /// Nacos naming servers, beating instances and subscribers.
    Nacos,
    /// Each case picks one of the two at random, half and half.
    //
    // A failure shrinks within its model; once a Nacos case shrinks no further, proptest's union
    // also tries the RocketMQ case of the same draw, and keeps it only if that fails too.
    #[default]
    Both,
}

impl Model {
    /// The spelling on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Model::Rocketmq => "rocketmq",
            Model::Nacos => "nacos",
            Model::Both => "rocketmq+nacos",
        }
    }

    /// The generator for this model. Every case is a whole [`Scenario`] either way, so the
    /// checking, shrinking and saving below do not care which.
    pub fn strategy(self) -> BoxedStrategy<Scenario> {
        match self {
            Model::Rocketmq => gen::scenario().boxed(),
            Model::Nacos => gen_nacos::scenario().boxed(),
            Model::Both => prop_oneof![gen::scenario(), gen_nacos::scenario()].boxed(),
        }
    }
}

pub struct ExploreOptions {
    pub cases: u32,
    pub model: Model,
    pub seed: u64,
    pub jobs: usize,
    /// Where shrunk failures are written.
    pub out_dir: PathBuf,
    /// Test-only planted bug.
    pub mutation: Option<Mutation>,
    /// Shrinking runs at most this many candidate cases per failure.
    pub max_shrink_iters: u32,
    /// Stop every thread once one failure has been saved (for tests that only need one).
    pub stop_at_first: bool,
}

pub struct ExploreReport {
    pub cases: u64,
    pub events: u64,
    pub failures: Vec<SavedFailure>,
    pub elapsed: Duration,
}

/// Writes `s` as a scenario that replays the failure, with the failure in its opening comment.
pub fn save(dir: &Path, s: &Scenario, failure: &Failure) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut s = s.clone();
    s.name = format!("shrunk counterexample: {}", failure.property());
    s.description = Some(format!(
        "Found by routesim explore and shrunk by proptest.\n{failure}\nReplay: routesim run <this file> (seed {})",
        s.seed
    ));
    let text = to_toml(&s);
    let digest = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
    let path = dir.join(format!("{}-seed{}-{}.toml", failure.property(), s.seed, &digest[..8]));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Generates and checks `cases` scenarios on `jobs` threads. `progress` is called with the
/// number of cases run so far (shrink runs not counted).
pub fn explore(opts: &ExploreOptions, progress: &(dyn Fn(u64) + Sync)) -> ExploreReport {
    let started = Instant::now();
    let (cases, events) = (AtomicU64::new(0), AtomicU64::new(0));
    let failures = std::sync::Mutex::new(Vec::new());
    let stop = std::sync::atomic::AtomicBool::new(false);
    // A thread beyond the cases would have no share; capping here also keeps `jobs` within u32,
    // where the shares are counted (2^32 threads used to wrap to a division by zero).
    let jobs = u32::try_from(opts.jobs).unwrap_or(u32::MAX).clamp(1, opts.cases.max(1));
    std::thread::scope(|scope| {
        for job in 0..jobs {
            let share = opts.cases / jobs + u32::from(job < opts.cases % jobs);
            let (cases, events, failures, stop) = (&cases, &events, &failures, &stop);
            scope.spawn(move || {
                // Boxed strategies are not `Send`: each thread builds its own.
                let strategy = opts.model.strategy();
                let mut left = share;
                let mut round = 0u64;
                while left > 0 && !stop.load(Ordering::Relaxed) {
                    let seed = opts.seed
                        ^ u64::from(job).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        ^ round.wrapping_mul(0xD1B5_4A32_D192_ED03);
                    let mut seed_bytes = [0u8; 32];
                    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
                    let config = Config {
                        cases: left,
                        failure_persistence: None,
                        max_shrink_iters: opts.max_shrink_iters,
                        ..Config::default()
                    };
                    let mut runner =
                        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
                    let shrinking = std::sync::atomic::AtomicBool::new(false);
                    let ran = std::sync::atomic::AtomicU32::new(0);
                    let result = runner.run(&strategy, |s| {
                        if stop.load(Ordering::Relaxed) && !shrinking.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        if !shrinking.load(Ordering::Relaxed) {
                            ran.fetch_add(1, Ordering::Relaxed);
                            progress(cases.fetch_add(1, Ordering::Relaxed) + 1);
                        }
                        match check(&s, opts.mutation) {
                            Ok(n) => {
                                events.fetch_add(n, Ordering::Relaxed);
                                Ok(())
                            }
                            Err(f) => {
                                shrinking.store(true, Ordering::Relaxed);
                                Err(TestCaseError::fail(f.to_string()))
                            }
                        }
                    });
                    left = left.saturating_sub(ran.into_inner().max(1));
                    if let Err(TestError::Fail(_, minimal)) = result {
                        // Re-check the minimal case for its exact failure (the message proptest
                        // kept may belong to a larger case).
                        if let Err(f) = check(&minimal, opts.mutation) {
                            let saved = save(&opts.out_dir, &minimal, &f).map(|path| SavedFailure {
                                invariant: f.property(),
                                failure: f.to_string(),
                                path,
                                seed: minimal.seed,
                            });
                            if let Ok(saved) = saved {
                                failures.lock().expect("no panics while held").push(saved);
                                if opts.stop_at_first {
                                    stop.store(true, Ordering::Relaxed);
                                }
                            }
                        }
                    }
                    round += 1;
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("threads joined");
    failures.sort_by(|a, b| a.path.cmp(&b.path));
    ExploreReport { cases: cases.into_inner(), events: events.into_inner(), failures, elapsed: started.elapsed() }
}
