//! A mutation fuzzer over the catalogue: take a scenario, break it the ways a typo, a generator
//! or an adversary would (a value swapped for an extreme one, a line lost or doubled, a block
//! copied, bytes that are not UTF-8, the file cut short), and run the real binary on it.
//!
//! Whatever the input, routesim must answer with an exit code it documents — 0 held, 1 failed,
//! 2 invalid or stopped — within a bounded time and memory, and never panic. Each case runs in
//! its own process under a 1 GiB address-space limit and a wall-clock limit; `--max-events`
//! bounds the work of a valid but long scenario.
//!
//! `cargo test` runs a short search (200 cases). A long one:
//! `ROUTESIM_FUZZ_CASES=20000 cargo test --release --test it fuzz:: -- --nocapture`
//! (`ROUTESIM_FUZZ_SEED` picks another search; the outcome counts print at the end).

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Values that have broken loaders before: zero and overflowing periods, numbers past Java's
/// `int` and Rust's `u64`, empty and malformed strings, addresses out of range, a name that
/// reads as a time, and the wrong type altogether.
const TOKENS: &[&str] = &[
    "\"0s\"",
    "\"0ms\"",
    "\"1ms\"",
    "\"18446744073709551615ms\"",
    "\"720h\"",
    "\"721h\"",
    "\"-5s\"",
    "\"5 m\"",
    "\"1.0005s\"",
    "\"\"",
    "\"61s\"",
    "\"abc\"",
    "\"ns1\"",
    "\"a0\"",
    "\"nacos1\"",
    "\"999.0.0.1:99999999999\"",
    "\"10.0.0.1:65536\"",
    "\"localhost:10911\"",
    "\"10.1.0.256\"",
    "\"wr\"",
    "\"r\"",
    "\"\\u0000\"",
    "0",
    "-1",
    "1",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "nan",
    "inf",
    "0.5",
    "true",
    "[]",
    "[\"\"]",
    "{}",
    "[{ name = \"Orders\" }]",
];

/// Bytes inserted as they are: invalid UTF-8, NUL, and TOML's own punctuation.
const BYTES: &[&[u8]] = &[b"\xff", b"\xc3", b"\0", b"[", b"\"", b"\n", b"=", b"[[broker]]\n", b"#"];

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the value of the n-th `key = value` line.
    SetValue(usize, usize),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// Copy the table (`[[...]]` block) around line n to the end: duplicate names and addresses.
    DuplicateBlock(usize),
    /// Give the n-th `key = "string"` line the string of the m-th: names wired to the wrong kind.
    CrossWire(usize, usize),
    InsertBytes(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let n = 0..10_000usize;
    prop_oneof![
        4 => (n.clone(), 0..TOKENS.len()).prop_map(|(l, t)| Mutation::SetValue(l, t)),
        1 => n.clone().prop_map(Mutation::DeleteLine),
        1 => n.clone().prop_map(Mutation::DuplicateLine),
        1 => (n.clone(), n.clone()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        1 => n.clone().prop_map(Mutation::DuplicateBlock),
        2 => (n.clone(), n.clone()).prop_map(|(a, b)| Mutation::CrossWire(a, b)),
        1 => (n.clone(), 0..BYTES.len()).prop_map(|(p, b)| Mutation::InsertBytes(p, b)),
        1 => n.prop_map(Mutation::Truncate),
    ]
}

fn catalogue() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for family in ["rocketmq", "nacos"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(family);
        for entry in std::fs::read_dir(dir).expect("the catalogue is there") {
            let path = entry.expect("readable").path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Lines with `key = value`, as indices into `lines`.
fn assignments(lines: &[Vec<u8>], quoted: bool) -> Vec<usize> {
    let is = |l: &Vec<u8>| {
        let text = String::from_utf8_lossy(l);
        let t = text.trim_start();
        !t.starts_with('#') && t.contains(" = ") && (!quoted || t.contains(" = \""))
    };
    lines.iter().enumerate().filter(|(_, l)| is(l)).map(|(i, _)| i).collect()
}

fn apply(source: &[u8], m: &Mutation) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = source.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    let pick = |n: usize, len: usize| n % len.max(1);
    match *m {
        Mutation::SetValue(n, t) => {
            let targets = assignments(&lines, false);
            if let Some(&i) = targets.get(pick(n, targets.len())) {
                let text = String::from_utf8_lossy(&lines[i]).into_owned();
                let (key, _) = text.split_once(" = ").expect("an assignment");
                lines[i] = format!("{key} = {}", TOKENS[t]).into_bytes();
            }
        }
        Mutation::DeleteLine(n) => {
            let i = pick(n, lines.len());
            lines.remove(i);
        }
        Mutation::DuplicateLine(n) => {
            let i = pick(n, lines.len());
            lines.insert(i, lines[i].clone());
        }
        Mutation::SwapLines(a, b) => {
            let (a, b) = (pick(a, lines.len()), pick(b, lines.len()));
            lines.swap(a, b);
        }
        Mutation::DuplicateBlock(n) => {
            let i = pick(n, lines.len());
            let start = (0..=i).rev().find(|&j| lines[j].starts_with(b"[["));
            if let Some(start) = start {
                let end = (start + 1..lines.len()).find(|&j| lines[j].starts_with(b"[")).unwrap_or(lines.len());
                let block: Vec<Vec<u8>> = lines[start..end].to_vec();
                lines.push(Vec::new());
                lines.extend(block);
            }
        }
        Mutation::CrossWire(a, b) => {
            let targets = assignments(&lines, true);
            if !targets.is_empty() {
                let (to, from) = (targets[pick(a, targets.len())], targets[pick(b, targets.len())]);
                let value = |i: usize| {
                    let text = String::from_utf8_lossy(&lines[i]).into_owned();
                    text.split_once(" = ").map(|(k, v)| (k.to_string(), v.to_string())).expect("an assignment")
                };
                let ((key, _), (_, v)) = (value(to), value(from));
                lines[to] = format!("{key} = {v}").into_bytes();
            }
        }
        Mutation::InsertBytes(p, b) => {
            let mut joined = lines.join(&b'\n');
            let at = pick(p, joined.len() + 1);
            joined.splice(at..at, BYTES[b].iter().copied());
            return joined;
        }
        Mutation::Truncate(p) => {
            let mut joined = lines.join(&b'\n');
            joined.truncate(pick(p, joined.len() + 1));
            return joined;
        }
    }
    lines.join(&b'\n')
}

/// How a command may be asked about a scenario.
const COMMANDS: usize = 3;

/// What one case did: its exit code, or why it has none.
fn run_case(dir: &Path, file: &Path, command: usize) -> Result<i32, String> {
    let file = file.to_str().expect("a UTF-8 temp path");
    let (report, diagram) = (dir.join("r.html"), dir.join("d.mmd"));
    let args: Vec<&str> = match command {
        0 => vec!["run", "-q", "--max-events", "1000000", file],
        1 => vec![
            "run",
            "-q",
            "--max-events",
            "1000000",
            file,
            "--report",
            report.to_str().unwrap(),
            "--diagram",
            diagram.to_str().unwrap(),
        ],
        _ => vec!["explain", "--max-events", "1000000", file],
    };
    // The address-space limit is set by the shell the binary replaces: no unsafe code here.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_routesim"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let limit = Duration::from_secs(60);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {limit:?}: {args:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut stderr = String::new();
    use std::io::Read;
    let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut stderr));
    if stderr.contains("panicked") {
        return Err(format!("panicked: {stderr}"));
    }
    match status.code() {
        Some(c @ 0..=2) => Ok(c),
        Some(c) => Err(format!("exit {c}: {stderr}")),
        None => Err(format!("killed by a signal ({status}): {stderr}")),
    }
}

fn cases() -> u32 {
    std::env::var("ROUTESIM_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200)
}

#[test]
fn no_mutant_of_the_catalogue_crashes_hangs_or_exhausts_routesim() {
    let files = catalogue();
    let sources: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).expect("readable")).collect();
    let dir = tempfile::tempdir().unwrap();
    let seed: u64 = std::env::var("ROUTESIM_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config { cases: cases(), failure_persistence: None, max_shrink_iters: 200, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let outcomes: Mutex<BTreeMap<i32, u32>> = Mutex::new(BTreeMap::new());
    let strategy = (0..files.len(), prop::collection::vec(mutation(), 1..4), 0..COMMANDS);
    let result = runner.run(&strategy, |(f, mutations, command)| {
        let mutant = mutations.iter().fold(sources[f].clone(), |text, m| apply(&text, m));
        let path = dir.path().join("mutant.toml");
        std::fs::write(&path, &mutant).expect("the temp dir is writable");
        match run_case(dir.path(), &path, command) {
            Ok(code) => {
                *outcomes.lock().unwrap().entry(code).or_default() += 1;
                Ok(())
            }
            Err(why) => {
                let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failure.toml");
                let _ = std::fs::write(&keep, &mutant);
                Err(TestCaseError::fail(format!(
                    "{why}\nfrom {} with {mutations:?}, command {command}; the input is saved as {}",
                    files[f].display(),
                    keep.display()
                )))
            }
        }
    });
    let outcomes = outcomes.into_inner().unwrap();
    eprintln!("fuzz: {} cases (seed {seed}), exit codes {outcomes:?}", outcomes.values().sum::<u32>());
    if let Err(e) = result {
        panic!("{e}");
    }
    // The search reaches both sides of the loader: inputs it refuses and inputs it runs.
    let (runs, refused) = (outcomes.get(&0).copied().unwrap_or(0), outcomes.get(&2).copied().unwrap_or(0));
    assert!(runs > 0 && refused > 0, "a search that only ever hits one outcome tests little: {outcomes:?}");
}
