//! The crate's layers only look down (README, "Layout"): ground types → the pure models
//! (`rocketmq/`, `nacos/`) → `actors/` → the run machinery → views → `cli/`. Rust does not stop a
//! module importing one above it, so this test reads the sources and does.
//!
//! Checked here are the two edges that once pointed up: a model must reach into `sim/` only for
//! a ground type, and a ground module must not reach the models or anything above them.

use std::fs;
use std::path::{Path, PathBuf};

/// The ground layer: modules of `sim/` that the models may use, and that use nothing else.
const GROUND: &[&str] = &["clock", "ids", "name", "rng", "keyed", "mutation"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::a::b` path in a file's code as (line, "a", "b"), including each item of a
/// grouped `use crate::sim::{clock::{SimDuration, SimTime}, ids::NodeId}`, however rustfmt wraps
/// it. Comments are skipped: a doc link up to the code that reads a type is how the reader finds
/// it, not a dependency.
fn crate_paths(text: &str) -> Vec<(usize, String, String)> {
    let code: Vec<&str> =
        text.lines().map(|line| if line.trim_start().starts_with("//") { "" } else { line }).collect();
    let code = code.join("\n");
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let line = code[..at].matches('\n').count() + 1;
        let rest = &code[at + "crate::".len()..];
        let top = ident(rest);
        let after = &rest[top.len()..];
        let mut seconds = Vec::new();
        if let Some(group) = after.strip_prefix("::{") {
            // Each item at the group's own depth names a module: `clock` in `clock::{A, B}`.
            let (mut depth, mut item_start) = (0, true);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        seconds.push(ident(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else if let Some(path) = after.strip_prefix("::") {
            seconds.push(ident(path));
        } else {
            seconds.push(String::new());
        }
        for second in seconds {
            found.push((line, top.clone(), second));
        }
    }
    found
}

fn violations(dirs: &[&str], allowed: impl Fn(&str, &str) -> bool) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in dirs {
        let path = root.join(dir);
        if path.is_dir() {
            sources(&path, &mut files);
        } else {
            files.push(path.with_extension("rs"));
        }
    }
    files.sort();
    let mut bad = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for (line, top, second) in crate_paths(&text) {
            if !allowed(&top, &second) {
                let shown = file.strip_prefix(root).unwrap().display();
                bad.push(format!("{shown}:{line}: crate::{top}::{second}"));
            }
        }
    }
    bad
}

#[test]
fn models_use_only_ground_types_from_sim() {
    let bad = violations(&["src/rocketmq", "src/nacos"], |top, second| match top {
        "rocketmq" | "nacos" => true,
        "sim" => GROUND.contains(&second),
        _ => false,
    });
    assert!(bad.is_empty(), "a model imports from above its layer:\n{}", bad.join("\n"));
}

#[test]
fn ground_types_use_nothing_above_them() {
    let dirs: Vec<String> = GROUND.iter().map(|m| format!("src/sim/{m}")).collect();
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let bad = violations(&dirs, |top, second| top == "sim" && GROUND.contains(&second));
    assert!(bad.is_empty(), "a ground module imports from above its layer:\n{}", bad.join("\n"));
}

#[test]
fn the_scanner_sees_grouped_and_nested_paths() {
    let paths = crate_paths(
        "use crate::sim::{clock::SimTime, ids::NodeId};\n/// [`crate::cli`]\nlet x = crate::view::report(1);\n\
         use crate::sim::{\n    clock::{SimDuration, SimTime},\n    observe::Obs,\n};",
    );
    let got: Vec<_> = paths.iter().map(|(l, a, b)| format!("{l}:{a}::{b}")).collect();
    assert_eq!(got, ["1:sim::clock", "1:sim::ids", "3:view::report", "4:sim::clock", "4:sim::observe"]);
}
