//! "Across phases": the part of a lesson page that shows a distribution instead of one run.
//!
//! A lesson's run puts its failure at one instant, so its convergence times belong to one phase
//! of the cycles the failure meets (30 s registrations and 5 s polls, a 5 s scan, 5 s beats).
//! A catalogue scenario asks for a sweep with a line in its opening comment,
//!
//! ```text
//! # Sweep: 300 runs, "power off b0" at 30s..60s
//! ```
//!
//! and the page then shows, for each `after`/`within` expectation anchored on that event, how
//! long it took over that many seeds with the event drawn anywhere in the range — min, p50,
//! p90, max and a histogram, all counted from the event itself. The numbers come from real runs
//! (`crate::sim::sweep`), so the lessons test keeps them current like the rest of the page.

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::When;
use crate::sim::scenario::parse;
use crate::sim::sweep::{sweep, SweepOptions};
use std::fmt::Write;
use std::path::Path;

/// `# Sweep: N runs, "EVENT" at A..B`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub runs: u64,
    pub event: String,
    pub range: String,
}

/// The directive in `source`'s opening comment, if it has one.
pub fn directive(source: &str) -> Result<Option<Directive>, String> {
    let Some(line) = source.lines().take_while(|l| l.starts_with('#')).find_map(|l| l.strip_prefix("# Sweep:")) else {
        return Ok(None);
    };
    let bad = || format!("`# Sweep:{line}`: write it as `# Sweep: 300 runs, \"power off b0\" at 30s..60s`");
    let (runs, rest) = line.trim().split_once(" runs,").ok_or_else(bad)?;
    let runs: u64 = runs.trim().parse().map_err(|_| bad())?;
    let rest = rest.trim().strip_prefix('"').ok_or_else(bad)?;
    let (event, range) = rest.split_once('"').ok_or_else(bad)?;
    let range = range.trim().strip_prefix("at ").ok_or_else(bad)?.trim();
    if !range.contains("..") || runs == 0 {
        return Err(bad());
    }
    Ok(Some(Directive { runs, event: event.to_string(), range: range.to_string() }))
}

/// The line starting with `key` in the TOML table that holds line `i`, if it has one.
fn key_in_table(lines: &[&str], i: usize, key: &str) -> Option<usize> {
    let start = lines[..i].iter().rposition(|l| l.starts_with('[')).unwrap_or(0);
    let end = lines[i..].iter().position(|l| l.starts_with('[')).map_or(lines.len(), |j| i + j);
    (start..end).find(|&j| lines[j].trim_start().starts_with(key))
}

/// `source` with the `at` of the `[[fault]]`/`[[action]]` named `event` replaced by `range`.
fn with_range(source: &str, d: &Directive) -> Result<String, String> {
    let lines: Vec<&str> = source.lines().collect();
    let named = format!("name = \"{}\"", d.event);
    let start = lines.iter().position(|l| l.trim() == named).ok_or_else(|| format!("no event named {:?}", d.event))?;
    let at = key_in_table(&lines, start, "at =").ok_or_else(|| format!("{:?} has no `at`", d.event))?;
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[at] = format!("at = \"{}\"", d.range);
    Ok(out.join("\n") + "\n")
}

/// `source` with the `within` of every `[[expect]]` whose `after` is `event` set to `within`:
/// a lesson's deadlines fit its one run, and a sweep measures how long the others take.
fn widened(source: &str, event: &str, within: SimDuration) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let after = format!("after = \"{event}\"");
    for (i, _) in lines.iter().enumerate().filter(|(_, l)| l.trim() == after) {
        if let Some(w) = key_in_table(&lines, i, "within =") {
            out[w] = format!("within = \"{within}\"");
        }
    }
    out.join("\n") + "\n"
}

/// The "Across phases" section, or `None` for a scenario without a directive.
pub fn section(path: &str, source: &str) -> Result<Option<String>, String> {
    let Some(d) = directive(source)? else { return Ok(None) };
    let file = Path::new(path);
    let varied = with_range(source, &d).map_err(|e| format!("{path}: # Sweep: {e}"))?;
    let first = parse(file, &varied).map_err(|e| format!("{path}: # Sweep: {e}"))?;
    let latest = first.drawn.iter().map(|x| x.to).max().unwrap_or(SimTime::ZERO);
    let room = (SimTime::ZERO + first.duration).since(latest);
    let varied = widened(&varied, &d.event, room);
    let scenario = parse(file, &varied).map_err(|e| format!("{path}: # Sweep: {e}"))?;
    let event_at = |t| scenario.timeline.iter().any(|e| e.name == d.event && e.at == t);
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get()).min(2);
    let opts = SweepOptions { first_seed: 1, runs: d.runs, jobs, max_events: 10_000_000 };
    let report = sweep(file, &varied, &opts, &|_| {}).map_err(|(seed, e)| format!("{path}: seed {seed}: {e}"))?;
    let mut out = String::new();
    let _ = writeln!(out, "## Across phases\n");
    let _ = writeln!(
        out,
        "The run above is one phase. Over {} runs (seeds 1–{}) with `{}` drawn anywhere in {} — and every other random choice drawn afresh —, counted from `{}` itself, each deadline widened to the end of the run ({room} after the latest draw) so that the times are measured, not cut off:\n",
        d.runs, d.runs, d.event, d.range, d.event
    );
    let _ = writeln!(out, "| expectation | held | min | p50 | p90 | max |\n|---|---|---|---|---|---|");
    let mut charts = String::new();
    for (e, summary) in scenario.expects.iter().zip(&report.expectations) {
        // Only an expectation counted from the varied event measures what the sweep varies.
        let When::By { from, .. } = e.when else { continue };
        if !event_at(from) {
            continue;
        }
        let held = format!("{} of {}", summary.held, summary.runs);
        match &summary.converged {
            Some(dist) => {
                let _ = writeln!(
                    out,
                    "| {} | {held} | {} | {} | {} | {} |",
                    e.name.replace('|', "\\|"),
                    dist.min,
                    dist.p50,
                    dist.p90,
                    dist.max
                );
                let _ = writeln!(charts, "{}:\n\n```text\n{}```\n", e.name, super::sweep::text_histogram(dist, ""));
            }
            None => {
                let _ = writeln!(out, "| {} | {held} | – | – | – | – |", e.name.replace('|', "\\|"));
            }
        }
    }
    let sweep_md = format!("{}sweep.md", super::lesson::docs_link(path));
    let _ = writeln!(out, "\n{charts}Run it yourself: `routesim sweep` on a copy of the scenario with `at = \"{}\"` on `{}` ([docs/sweep.md]({sweep_md})).\n", d.range, d.event);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directive_is_read_from_the_opening_comment() {
        let d = directive("# Question: q?\n# Sweep: 300 runs, \"power off b0\" at 30s..60s\n[scenario]\n").unwrap();
        assert_eq!(d, Some(Directive { runs: 300, event: "power off b0".into(), range: "30s..60s".into() }));
        assert_eq!(directive("# Question: q?\n[scenario]\n# Sweep: 3 runs, \"x\" at 1s..2s\n").unwrap(), None);
        assert!(directive("# Sweep: many runs of \"x\"\n").is_err());
    }

    #[test]
    fn the_named_event_gets_the_range() {
        let d = Directive { runs: 1, event: "kill".into(), range: "1s..2s".into() };
        let src = "[[fault]]\nname = \"other\"\nat = \"5s\"\ncrash = \"a\"\n\n[[fault]]\nname = \"kill\"\nat = \"9s\"\ncrash = \"b\"\n";
        let out = with_range(src, &d).unwrap();
        assert!(out.contains("name = \"other\"\nat = \"5s\""), "{out}");
        assert!(out.contains("name = \"kill\"\nat = \"1s..2s\""), "{out}");
    }
}
