//! Property-based exploration: random clusters and fault schedules, every invariant checked at
//! every event, and each failure shrunk and saved as a scenario file that replays it.
//!
//! `routesim explore` and the property tests both come here: the generators are in [`gen`]
//! (RocketMQ) and [`gen_nacos`] (Nacos), the properties in [`check`], and [`explore`] draws the
//! cases, spreads them over threads and shrinks the failures.

pub mod gen;
pub mod gen_nacos;
mod operator;
mod producers;

use crate::sim::invariants::Violation;
use crate::sim::mutation::Mutation;
use crate::sim::runner::{run, RunOptions};
use crate::sim::scenario::{to_toml, Scenario};
use proptest::prelude::{prop_oneof, BoxedStrategy, Strategy};
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
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
    /// Which case of the sweep it was found in.
    pub case: u64,
}

/// A slice of a sweep's cases (`--shard K/N`): case `i` is shard `i % N`'s. The whole sweep is
/// shard `0/1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn owns(&self, case: u64) -> bool {
        case % self.count == self.index
    }

    /// `K/N`, `0 <= K < N`: a Kubernetes Indexed Job's completion index and its completions.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("--shard must be K/N with 0 <= K < N (e.g. 0/4), got {text:?}");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (k.trim().parse::<u64>().map_err(|_| bad())?, n.trim().parse::<u64>().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Which system the generated scenarios model (`routesim explore --model`). The variants' doc
/// lines are the CLI help; the generators are [`gen::scenario`] and [`gen_nacos::scenario`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Model {
    /// RocketMQ name servers, brokers and route clients.
    Rocketmq,
    /// Nacos naming servers, beating instances and subscribers.
    Nacos,
    /// A Nacos Distro cluster of 1-5 members with 1.x and 2.x clients, faults on members, clients
    /// and the links between members (checked by `distro_agreement`).
    NacosCluster,
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
            Model::NacosCluster => "nacos-cluster",
            Model::Both => "rocketmq+nacos",
        }
    }

    /// The generator for this model. Every case is a whole [`Scenario`] either way, so the
    /// checking, shrinking and saving below do not care which.
    pub fn strategy(self) -> BoxedStrategy<Scenario> {
        match self {
            Model::Rocketmq => gen::scenario().boxed(),
            Model::Nacos => gen_nacos::scenario().boxed(),
            Model::NacosCluster => gen_nacos::cluster::scenario().boxed(),
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
    /// Which of the `cases` this process runs.
    pub shard: Shard,
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

/// Generates and checks the cases of `opts.shard` on `jobs` threads. `progress` is called with
/// the number of cases run so far (shrink runs not counted).
///
/// Case `i` of a sweep is generated from its own generator, seeded from `(seed, i)`, never from
/// what an earlier case drew: so which cases run, and what each is, depends neither on the
/// number of threads nor on the shard, and the shards `0/N .. N-1/N` of a sweep run exactly its
/// cases between them. A failing case is shrunk (proptest's simplify/complicate walk over its
/// value tree, at most `max_shrink_iters` runs) and saved.
pub fn explore(opts: &ExploreOptions, progress: &(dyn Fn(u64) + Sync)) -> ExploreReport {
    let started = Instant::now();
    let ours: Vec<u64> = (0..u64::from(opts.cases)).filter(|i| opts.shard.owns(*i)).collect();
    let (next, cases, events) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let failures = std::sync::Mutex::new(Vec::new());
    let stop = std::sync::atomic::AtomicBool::new(false);
    // A thread beyond the cases would have nothing to do.
    let jobs = opts.jobs.clamp(1, ours.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let (next, cases, events, failures, stop, ours) = (&next, &cases, &events, &failures, &stop, &ours);
            scope.spawn(move || {
                // Boxed strategies are not `Send`: each thread builds its own.
                let strategy = opts.model.strategy();
                while !stop.load(Ordering::Relaxed) {
                    let Some(&case) = ours.get(next.fetch_add(1, Ordering::Relaxed) as usize) else { break };
                    progress(cases.fetch_add(1, Ordering::Relaxed) + 1);
                    let mut runner = TestRunner::new_with_rng(
                        Config { failure_persistence: None, ..Config::default() },
                        TestRng::from_seed(RngAlgorithm::ChaCha, &case_seed(opts.seed, case)),
                    );
                    let Ok(mut tree) = strategy.new_tree(&mut runner) else { continue };
                    let failure = match check(&tree.current(), opts.mutation) {
                        Ok(n) => {
                            events.fetch_add(n, Ordering::Relaxed);
                            continue;
                        }
                        Err(f) => f,
                    };
                    let (minimal, failure) = shrink(&mut *tree, failure, opts);
                    let saved = save(&opts.out_dir, &minimal, &failure).map(|path| SavedFailure {
                        invariant: failure.property(),
                        failure: failure.to_string(),
                        path,
                        seed: minimal.seed,
                        case,
                    });
                    if let Ok(saved) = saved {
                        failures.lock().expect("no panics while held").push(saved);
                        if opts.stop_at_first {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("threads joined");
    failures.sort_by(|a, b| a.path.cmp(&b.path));
    ExploreReport { cases: cases.into_inner(), events: events.into_inner(), failures, elapsed: started.elapsed() }
}

/// The 32 seed bytes of case `i` of the sweep seeded `seed` (SplitMix64 over both, so nearby
/// seeds and indices give unrelated streams).
fn case_seed(seed: u64, i: u64) -> [u8; 32] {
    let mut state = seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut out = [0u8; 32];
    for chunk in out.chunks_mut(8) {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out
}

/// proptest's shrinking walk: simplify while the case still fails, complicate when a step went
/// too far, until neither moves or the budget is spent. Returns the smallest failing case and
/// its own failure (the first failure may belong to a larger case).
fn shrink(tree: &mut dyn ValueTree<Value = Scenario>, failure: Failure, opts: &ExploreOptions) -> (Scenario, Failure) {
    let mut best = (tree.current(), failure);
    let mut runs = 0;
    if !tree.simplify() {
        return best;
    }
    while runs < opts.max_shrink_iters {
        runs += 1;
        let candidate = tree.current();
        let moved = match check(&candidate, opts.mutation) {
            Err(f) => {
                best = (candidate, f);
                tree.simplify()
            }
            Ok(_) => tree.complicate(),
        };
        if !moved {
            break;
        }
    }
    best
}
