//! How verdicts and summaries are printed.

use super::INVALID;
use crate::sim::expect::{Verdict, When};
use crate::sim::runner::{BudgetExceeded, RunReport};
use crate::sim::scenario::Scenario;
use std::io::{self, Write};
use std::path::Path;

/// The exit status once a write to stdout has failed. `println!` would panic (exit 101) instead,
/// so commands write with `writeln!` and come here with the error:
///
/// - a reader that went away (EPIPE: `routesim run ... | head`) ends the command quietly with
///   the status it had so far, as `cat` does. On Unix the default SIGPIPE action ends the process
///   before the error is even seen (see `restore_sigpipe`); this is the path elsewhere;
/// - anything else (a full disk, a failing device) means the output asked for is not there:
///   one line on stderr and [`INVALID`], never a partial result that looks complete.
pub fn output_failed(e: &io::Error, code: u8) -> u8 {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return code;
    }
    eprintln!("error: writing output: {e}");
    INVALID
}

/// The `==` line naming the scenario, then one line per time the file gives as a range, with
/// what this seed drew for it.
pub fn scenario_header(s: &Scenario, file: &Path) -> String {
    let mut out = format!("== {}  ({})", s.name, file.display());
    for d in &s.drawn {
        out.push_str(&format!("\n   drawn  {}  {}..{}  ->  {}", d.what, d.from, d.to, d.value));
    }
    out
}

/// An expectation's time frame as the verdict lines print it: `at 60.000s`, `by ... (from ...)`.
pub fn frame(when: &When) -> String {
    match when {
        When::At(t) => format!("at {t}"),
        When::By { from, deadline } => format!("by {deadline} (from {from})"),
        When::During { from, until } => format!("during {from}..{until}"),
    }
}

/// The expectations block and the closing seed/digest line.
pub fn print_report(out: &mut impl Write, r: &RunReport) -> io::Result<()> {
    writeln!(out, "expectations:")?;
    if r.verdicts.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for (i, (exp, verdict)) in r.verdicts.iter().enumerate() {
        match verdict {
            Verdict::Held { converged: Some(d) } => {
                writeln!(out, "  PASS  {}  [{}]  converged after {d}", exp.name, frame(&exp.when))?
            }
            Verdict::Held { converged: None } => writeln!(out, "  PASS  {}  [{}]", exp.name, frame(&exp.when))?,
            Verdict::Failed { at, mismatch } => {
                writeln!(out, "  FAIL  {}  [{}]  at {at}", exp.name, frame(&exp.when))?;
                writeln!(out, "        expected: {}", mismatch.expected)?;
                writeln!(out, "        got:      {}", mismatch.got)?;
            }
        }
        if let (true, Some(Some(figures))) = (verdict.held(), r.figures.get(i)) {
            writeln!(out, "        measured: {figures}")?;
        }
    }
    if !r.violations.is_empty() {
        writeln!(out, "invariants:")?;
        for v in &r.violations {
            writeln!(out, "  VIOLATED  {} at {}", v.invariant, v.at)?;
            writeln!(out, "        {}", v.detail)?;
        }
    }
    let failed = r.verdicts.iter().filter(|(_, v)| !v.held()).count();
    if failed > 0 || !r.violations.is_empty() {
        writeln!(
            out,
            "{failed} of {} expectations failed, {} invariants violated; re-run with --seed {} to replay",
            r.verdicts.len(),
            r.violations.len(),
            r.seed
        )?;
    }
    writeln!(out, "seed {}  events {}  trace digest {}", r.seed, r.events, r.digest)
}

/// The error line for a run its event budget stopped: where, and what to change.
pub fn over_budget(file: &Path, over: &BudgetExceeded) {
    eprintln!("error: {}: {over} (raise --max-events, or shorten the scenario)", file.display());
}
