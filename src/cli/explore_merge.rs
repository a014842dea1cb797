//! `routesim explore --merge SUMMARY...`: the `--json` summaries of a sharded sweep, combined as
//! if one machine had run it. They must be shards of one sweep — the same model, seed and case
//! count, every shard `0/N .. N-1/N` exactly once — or the merge refuses (exit 2), naming what
//! is missing or doubled: a merge that quietly lacked a shard would report a clean sweep that
//! never ran.

use super::{FAILED, HELD, INVALID};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The summaries given: files as they are, folders by their `*.json` files, sorted.
fn summaries(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries = std::fs::read_dir(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    if out.is_empty() {
        return Err("no summaries found: give the shards' --json files, or folders holding them".into());
    }
    Ok(out)
}

/// One shard's summary, read and checked for the fields a merge needs.
struct Part {
    file: PathBuf,
    doc: Value,
    index: u64,
    count: u64,
}

fn read(file: &Path) -> Result<Part, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not an explore --json summary: {e}", file.display()))?;
    if doc["command"] != "explore" {
        return Err(format!("{}: not an explore --json summary (its command is {})", file.display(), doc["command"]));
    }
    let shard = doc["shard"].as_str().unwrap_or("0/1");
    let s = crate::sim::explore::Shard::parse(shard).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(Part { file: file.to_path_buf(), doc, index: s.index, count: s.count })
}

pub fn merge(paths: &[PathBuf], as_json: bool) -> u8 {
    match combine(paths) {
        Ok(doc) => {
            let mut out = std::io::stdout().lock();
            let written = if as_json { super::json::print(&mut out, &doc) } else { print(&mut out, &doc) };
            let code = if doc["failures"].as_array().is_some_and(|f| !f.is_empty()) { FAILED } else { HELD };
            match written {
                Ok(()) => code,
                Err(e) => super::output::output_failed(&e, code),
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            INVALID
        }
    }
}

fn combine(paths: &[PathBuf]) -> Result<Value, String> {
    let parts = summaries(paths)?.iter().map(|f| read(f)).collect::<Result<Vec<_>, _>>()?;
    let first = &parts[0];
    let sweep = |p: &Part| (p.doc["model"].clone(), p.doc["seed"].clone(), p.doc["sweep_cases"].clone(), p.count);
    for p in &parts[1..] {
        if sweep(p) != sweep(first) {
            return Err(format!(
                "{} and {} are not shards of one sweep (model, seed, --cases, N: {:?} vs {:?})",
                first.file.display(),
                p.file.display(),
                sweep(first),
                sweep(p)
            ));
        }
    }
    let mut by_index: BTreeMap<u64, Vec<&Path>> = BTreeMap::new();
    for p in &parts {
        by_index.entry(p.index).or_default().push(&p.file);
    }
    let doubled: Vec<String> = by_index
        .iter()
        .filter(|(_, f)| f.len() > 1)
        .map(|(k, f)| {
            format!(
                "{k}/{} in {}",
                first.count,
                f.iter().map(|x| x.display().to_string()).collect::<Vec<_>>().join(" and ")
            )
        })
        .collect();
    let missing: Vec<String> =
        (0..first.count).filter(|k| !by_index.contains_key(k)).map(|k| format!("{k}/{}", first.count)).collect();
    if !doubled.is_empty() || !missing.is_empty() {
        return Err(format!("the shards do not make one sweep: missing {missing:?}, doubled {doubled:?}"));
    }
    let sum = |key: &str| parts.iter().map(|p| p.doc[key].as_u64().unwrap_or(0)).sum::<u64>();
    let mut failures: Vec<Value> =
        parts.iter().flat_map(|p| p.doc["failures"].as_array().cloned().unwrap_or_default()).collect();
    failures.sort_by_key(|f| (f["case"].as_u64(), f["saved"].as_str().map(str::to_string)));
    Ok(json!({
        "command": "explore-merge",
        "model": first.doc["model"],
        "seed": first.doc["seed"],
        "sweep_cases": first.doc["sweep_cases"],
        "shards": first.count,
        "cases": sum("cases"),
        "events": sum("events"),
        "failures": failures,
    }))
}

fn print(out: &mut impl Write, doc: &Value) -> std::io::Result<()> {
    let failures = doc["failures"].as_array().cloned().unwrap_or_default();
    writeln!(
        out,
        "{} {} cases of {} (seed {}, {} shards), {} events simulated, {} violations",
        doc["cases"],
        doc["model"].as_str().unwrap_or("?"),
        doc["sweep_cases"],
        doc["seed"],
        doc["shards"],
        doc["events"],
        failures.len()
    )?;
    for f in &failures {
        let path = f["saved"].as_str().unwrap_or("?");
        writeln!(
            out,
            "VIOLATION {}\n  case {}, saved: {path} (replay: routesim run {path})",
            f["message"].as_str().unwrap_or("?"),
            f["case"]
        )?;
    }
    out.flush()
}
