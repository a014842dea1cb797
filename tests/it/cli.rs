//! The `routesim` command: exit codes are a contract (0 held, 1 failed, 2 invalid input), and
//! its output carries the verdicts, the seed and the digest.

use crate::common::{routesim, text, write, FAILING};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KILL: &str = "scenarios/rocketmq/01-kill-vs-silent.toml";

#[test]
fn a_passing_scenario_exits_0_with_timeline_verdicts_seed_and_digest() {
    let o = routesim(&["run", KILL]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("** crash a0  [kill a0]"), "the timeline shows the fault:\n{out}");
    assert!(out.contains("silent 125.0s > 120.0s"), "the timeline explains the expiry:\n{out}");
    assert!(out.contains("PASS  the killed broker is gone within 10 ms"), "{out}");
    assert!(out.contains("converged after 1ms"), "{out}");
    assert!(out.lines().last().unwrap().starts_with("seed 1  events "), "{out}");
    assert!(out.contains("trace digest "), "{out}");
}

#[test]
fn a_failed_expectation_exits_1_and_shows_expected_and_got() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "fail.toml", FAILING);
    let o = routesim(&["run", "--quiet", file.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  route survives a kill  [at 60.000s]"), "{out}");
    assert!(out.contains("expected: brokers [broker-a]"), "{out}");
    assert!(out.contains("got:      absent (TOPIC_NOT_EXIST)"), "{out}");
    assert!(out.contains("re-run with --seed 5"), "{out}");
}

#[test]
fn invalid_input_exits_2_with_a_positioned_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.toml", FAILING.replace("crash = \"a0\"", "crash = \"a9\""));
    let o = routesim(&["run", file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("bad.toml:18:9: unknown process \"a9\""), "{err}");
    assert!(err.contains("did you mean \"a0\"?"), "{err}");
    assert!(out.is_empty(), "nothing runs when any input is invalid: {out}");
}

#[test]
fn a_missing_file_or_bad_arguments_exit_2() {
    let o = routesim(&["run", "no/such/file.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("no/such/file.toml: cannot read"), "{}", text(&o).1);
    assert_eq!(routesim(&["run"]).status.code(), Some(2), "FILE is required");
    assert_eq!(routesim(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(routesim(&["run", KILL, "--seed", "x"]).status.code(), Some(2));
}

#[test]
fn seed_overrides_and_the_trace_file_holds_one_json_object_per_event() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let o = routesim(&["run", "-q", KILL, "--seed", "99", "--trace", trace.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("seed 99  events "), "{out}");
    let events: usize = out.split("events ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    let lines = std::fs::read_to_string(&trace).unwrap();
    assert_eq!(lines.lines().count(), events, "one line per event");
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("every line is JSON");
        assert!(v["t"].is_u64() && v["actor"].is_string() && v["area"].is_string() && v["event"].is_string(), "{line}");
    }
}

#[test]
fn check_runs_a_folder_and_sums_up() {
    let o = routesim(&["check", "scenarios/rocketmq"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.lines().filter(|l| l.starts_with("PASS")).count() >= 8, "{out}");
    assert!(out.lines().last().unwrap().contains("passed, 0 failed, 0 invalid"), "{out}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(KILL, dir.path().join("a.toml")).unwrap();
    write(dir.path(), "b.toml", FAILING);
    let o = routesim(&["check", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).0);
    write(dir.path(), "c.toml", "[scenario]\nname = 1\n");
    let o = routesim(&["check", dir.path().to_str().unwrap(), "--jobs", "1"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("INVALID") && err.contains("c.toml:2:8"), "{out}{err}");
}

#[test]
fn check_piped_prints_results_only_and_no_progress_line() {
    let o = routesim(&["check", "scenarios/nacos", "--jobs", "2"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.is_empty(), "no progress when stderr is not a terminal: {err:?}");
    assert!(!out.contains('\r') && !out.contains("] "), "no progress text in the results: {out:?}");
    assert!(out.lines().all(|l| l.starts_with("PASS ") || l.contains(" scenarios: ")), "{out}");
}

#[test]
fn explore_reports_cases_events_and_violations() {
    // The default model draws each case from RocketMQ or Nacos; the summary names it.
    let dir = tempfile::tempdir().unwrap();
    let o = routesim(&["explore", "--cases", "6", "--seed", "4", "--jobs", "2", "--out", dir.path().to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.starts_with("6 rocketmq+nacos cases, ") && out.contains(" events simulated, 0 violations in "),
        "{out}"
    );
    assert!(err.is_empty(), "no progress bar when stderr is not a terminal: {err:?}");
}

#[test]
fn lesson_prints_the_committed_page_and_refuses_a_scenario_without_a_question() {
    let o = routesim(&["lesson", "scenarios/nacos/01-crash.toml"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lessons/nacos/01-crash.md"))
        .expect("the committed lesson page");
    assert_eq!(out, page, "`routesim lesson` is what docs/lessons holds");

    let dir = tempfile::tempdir().unwrap();
    let bare = write(dir.path(), "bare.toml", FAILING);
    let o = routesim(&["lesson", bare.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("# Question:"), "the error says what the opening comment needs: {err}");
}

/// A long run with its timeline off (or piped) shows how far the virtual clock has got, on a
/// terminal only; the piped run's stderr stays empty.
#[test]
fn a_piped_run_draws_no_progress() {
    let piped = routesim(&["run", "--quiet", KILL]);
    let (out, err) = text(&piped);
    assert_eq!(piped.status.code(), Some(0), "{out}{err}");
    assert!(err.is_empty(), "no progress when stderr is not a terminal: {err:?}");
    // The terminal half is `run_on_a_terminal_shows_virtual_time_progress` in tests/tools.rs.
}

#[test]
fn explore_can_search_nacos_alone_and_rejects_an_unknown_model() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let o = routesim(&["explore", "--model", "nacos", "--cases", "8", "--jobs", "1", "--out", out_dir]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("8 nacos cases, ") && out.contains(", 0 violations in "), "{out}");
    // A model that does not exist is invalid input, not a search that finds nothing.
    let o = routesim(&["explore", "--model", "zookeeper", "--cases", "1", "--out", out_dir]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
}

#[test]
fn a_reader_that_stops_early_ends_the_run_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    // `routesim run -q scenarios/nacos/*.toml | head -1`: the reader goes away after one line,
    // while the later scenarios still have verdicts to print.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/nacos");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut child = Command::new(env!("CARGO_BIN_EXE_routesim"))
        .arg("run")
        .arg("-q")
        .args(&files)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!first.is_empty());
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
}

/// The number in "after N events": where the budget stopped the run.
fn events_after(text: &str) -> u64 {
    let tail = text.split("after ").nth(1).unwrap_or_else(|| panic!("no 'after N events' in:\n{text}"));
    tail.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no count in:\n{text}"))
}

#[test]
fn a_run_past_its_event_budget_stops_with_exit_2_and_says_where() {
    let o = routesim(&["run", "--quiet", "--max-events", "40", KILL]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.contains("stopped: event budget exceeded at "), "{out}");
    assert!(!out.contains("PASS") && !out.contains("FAIL"), "no verdicts from a run cut short:\n{out}");
    assert!(err.contains("event budget exceeded at ") && err.contains("raise --max-events"), "{err}");
    let n = events_after(&err);
    assert!((40..200).contains(&n), "stopped soon after 40 events, not at the end (122): {n}\n{err}");
    // The default budget leaves an ordinary scenario alone.
    assert_eq!(routesim(&["run", "--quiet", KILL]).status.code(), Some(0));
    assert_eq!(routesim(&["run", "--max-events", "0", KILL]).status.code(), Some(2), "a budget of 0 is refused");
}

#[test]
fn check_counts_a_run_past_its_budget_as_over_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(KILL, dir.path().join("kill.toml")).unwrap();
    let o = routesim(&["check", "--max-events", "40", dir.path().to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.contains("OVER") && out.contains("event budget exceeded at "), "{out}");
    assert!(out.contains("1 scenarios: 0 passed, 0 failed, 1 invalid"), "{out}");
}

#[test]
fn a_zero_poll_interval_exits_2_with_its_position_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let body = FAILING
        .replace("[[fault]]", "[[client]]\nname = \"c\"\ntopics = [\"Orders\"]\npoll_interval = \"0s\"\n\n[[fault]]");
    let path = write(dir.path(), "zero.toml", &body);
    let o = routesim(&["run", path.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("zero.toml:19:17: poll_interval must be between 1ms and 720h (30 days), got 0s"), "{err}");
}

/// Runs routesim with its stdout on `/dev/full`, where every write fails with ENOSPC.
#[cfg(target_os = "linux")]
fn routesim_into_full_disk(args: &[&str]) -> Output {
    use std::process::Stdio;
    let full = std::fs::File::create("/dev/full").expect("/dev/full exists on Linux");
    Command::new(env!("CARGO_BIN_EXE_routesim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .expect("the binary runs")
}

/// A full disk is not a reader that went away: it is an error worth one line, and exit 2 —
/// never `println!`'s panic (exit 101) with a backtrace hint.
#[cfg(target_os = "linux")]
#[test]
fn stdout_on_a_full_disk_is_one_error_line_and_exit_2_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(KILL, dir.path().join("a.toml")).unwrap();
    let out_dir = dir.path().join("failures");
    let commands: [&[&str]; 6] = [
        &["run", KILL],
        &["run", "--quiet", KILL],
        &["check", dir.path().to_str().unwrap()],
        &["explain", KILL],
        &["lesson", "scenarios/nacos/01-crash.toml"],
        &["explore", "--cases", "1", "--jobs", "1", "--out", out_dir.to_str().unwrap()],
    ];
    for args in commands {
        let o = routesim_into_full_disk(args);
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("error: writing output: "), "{args:?}: {err}");
    }
}

#[test]
fn jobs_0_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    for args in [
        &["explore", "--cases", "1", "--jobs", "0", "--out", out_dir][..],
        &["check", "scenarios/nacos", "--jobs", "0"],
    ] {
        let o = routesim(args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(err.contains("--jobs 0") && err.lines().count() == 1, "{args:?}: {err}");
    }
}

/// `jobs as u32` made 2^32 threads a division by zero; any number beyond the cases or the cores
/// is capped, so a huge one neither panics nor starts a thread per job.
#[test]
fn explore_caps_a_huge_jobs_at_the_cases() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let o = routesim(&["explore", "--cases", "2", "--seed", "4", "--jobs", "4294967296", "--out", out_dir]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.starts_with("2 rocketmq+nacos cases, "), "{out}");
}

/// `run f.toml --trace f.toml` used to replace the scenario with its own trace.
#[test]
fn an_output_that_names_an_input_or_another_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("f.toml");
    std::fs::copy(KILL, &scenario).unwrap();
    let before = std::fs::read(&scenario).unwrap();
    let d = dir.path().to_str().unwrap();
    let same_file = format!("{d}/./f.toml");
    let (x, x_again) = (format!("{d}/x.out"), format!("{d}/sub/../x.out"));
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--trace", scenario.to_str().unwrap()], "--trace"),
        (&["--report", &same_file], "--report"),
        (&["--trace", &x, "--diagram", &x], "--diagram"),
        (&["--report", &x, "--trace", &x_again], "--trace"),
    ];
    for (outputs, flag) in cases {
        let mut args = vec!["run", "-q", scenario.to_str().unwrap()];
        args.extend_from_slice(outputs);
        let o = routesim(&args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(err.starts_with("error: ") && err.contains(flag) && err.lines().count() == 1, "{args:?}: {err}");
        assert!(out.is_empty(), "nothing runs: {out}");
        assert_eq!(std::fs::read(&scenario).unwrap(), before, "{args:?}: the scenario is untouched");
        assert!(!dir.path().join("x.out").exists(), "{args:?}: no output written");
    }
}

/// Output files are written beside their target and renamed into place when complete: a run
/// that does not finish leaves the previous file whole, and no temporary file behind.
#[cfg(target_os = "linux")]
#[test]
fn an_unfinished_run_keeps_the_previous_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = ["t.jsonl", "d.mmd", "r.html"].map(|n| dir.path().join(n));
    for path in &outputs {
        std::fs::write(path, "the previous run\n").unwrap();
    }
    let [trace, diagram, report] = outputs.each_ref().map(|p| p.to_str().unwrap());
    let args = ["run", KILL, "--trace", trace, "--diagram", diagram, "--report", report];
    // Stdout on a full disk stops the run before it completes.
    assert_eq!(routesim_into_full_disk(&args).status.code(), Some(2));
    for path in &outputs {
        assert_eq!(std::fs::read_to_string(path).unwrap(), "the previous run\n", "{}", path.display());
    }
    let names = |d: &Path| {
        let mut n: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        n.sort();
        n
    };
    assert_eq!(names(dir.path()), ["d.mmd", "r.html", "t.jsonl"], "no temporary file is left");
    // A finished run replaces all three, and leaves nothing else.
    let o = routesim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(std::fs::read_to_string(&outputs[0]).unwrap().starts_with("{\"t\":"));
    assert!(std::fs::read_to_string(&outputs[1]).unwrap().contains("sequenceDiagram"));
    assert!(std::fs::read_to_string(&outputs[2]).unwrap().contains("<html"));
    assert_eq!(names(dir.path()), ["d.mmd", "r.html", "t.jsonl"], "no temporary file is left");
}
