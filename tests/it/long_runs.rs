//! Long runs and runaway scenarios: what `run`'s views and `check` do when a scenario goes on
//! for days or never ends. Each runs the binary, as a user or a CI job would.

use std::path::{Path, PathBuf};

use crate::common::{routesim, text};

/// One broker registering with one name server every 30 s for `duration`: the routine traffic
/// (registrations, heartbeats, scan ticks) of a quiet cluster, and nothing else.
fn quiet_cluster(dir: &Path, duration: &str) -> PathBuf {
    let path = dir.join("quiet.toml");
    let body = format!(
        "[scenario]\nname = \"a quiet cluster\"\nduration = \"{duration}\"\n\n[[namesrv]]\nname = \"ns1\"\n\n\
         [[broker]]\nname = \"a0\"\nbroker_name = \"broker-a\"\naddr = \"10.0.0.1:10911\"\n\
         topics = [{{ name = \"Orders\" }}]\n"
    );
    std::fs::write(&path, body).unwrap();
    path
}

/// The report draws a mark per registration, heartbeat and scan tick: about 1,700 an hour for
/// one broker. 80 hours pass the report's limit of 100,000 marks and spans (at about 59 h), so
/// the report is refused with the option that draws part of the run, instead of holding every
/// event (1,000 h once needed 545 MB and wrote 118 MB of HTML).
#[test]
fn a_report_past_its_limit_is_refused_naming_the_window_and_a_window_draws_it() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = quiet_cluster(dir.path(), "80h");
    let html = dir.path().join("r.html");
    let (s, h) = (scenario.to_str().unwrap(), html.to_str().unwrap());
    let o = routesim(&["run", "-q", s, "--report", h]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.contains("seed 1  events "), "the verdicts still print: {out}");
    assert!(err.contains("more than 100000 marks and spans") && err.contains("--window FROM..TO"), "{err}");
    assert!(!html.exists(), "no report is written");

    let o = routesim(&["run", "-q", s, "--report", h, "--window", "10h..11h"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("(--window)"), "the header says that part of the run is drawn");
    // Every mark and span is inside the window: 10 h = 36,000,000 ms, 11 h = 39,600,000 ms.
    let times: Vec<u64> = page.split("data-t=\"").skip(1).map(|r| r[..r.find('"').unwrap()].parse().unwrap()).collect();
    assert!(times.len() > 1000, "an hour of one broker draws its ticks: {}", times.len());
    assert!(times.iter().all(|t| (36_000_000..=39_600_000).contains(t)), "all inside 10h..11h");
}

/// The diagram folds routine traffic, so a long quiet run stays small; `--window` draws only
/// what happened inside it.
#[test]
fn a_window_limits_the_diagram_to_its_part_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = quiet_cluster(dir.path(), "3h");
    let mmd = dir.path().join("d.mmd");
    let (s, d) = (scenario.to_str().unwrap(), mmd.to_str().unwrap());
    assert_eq!(routesim(&["run", "-q", s, "--diagram", d]).status.code(), Some(0));
    let whole = std::fs::read_to_string(&mmd).unwrap();
    assert!(whole.contains("process starts") || whole.contains("REGISTER_BROKER"), "{whole}");
    assert_eq!(routesim(&["run", "-q", s, "--diagram", d, "--window", "1h..2h"]).status.code(), Some(0));
    let part = std::fs::read_to_string(&mmd).unwrap();
    // Registrations and scans at 1 h + 5 ms (the first scan runs 5 ms after start) up to the
    // last ones before 2 h.
    assert!(part.contains("loop routine traffic 3600.005s to 7195.005s"), "only 1h..2h is drawn:\n{part}");
    assert!(!part.contains(" 0.000s"), "nothing from before the window:\n{part}");
    // --diagram-window chooses the diagram's part alone, and wins over --window there.
    let html = dir.path().join("r.html");
    let args = ["run", "-q", s, "--diagram", d, "--report", html.to_str().unwrap(), "--window", "1h..2h"];
    let o = routesim(&[&args[..], &["--diagram-window", "30m..40m"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let part = std::fs::read_to_string(&mmd).unwrap();
    assert!(part.contains("loop routine traffic 1800.005s to 2395.005s"), "only 30m..40m is drawn:\n{part}");
    assert!(std::fs::read_to_string(&html).unwrap().contains("data-t=\"3600005\""), "the report keeps 1h..2h");
    let o = routesim(&["run", "-q", s, "--diagram-window", "30m..40m"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--diagram-window chooses what --diagram draws"), "{}", text(&o).1);
}

#[test]
fn a_bad_window_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = quiet_cluster(dir.path(), "1h");
    let out = dir.path().join("r.html");
    let (s, r) = (scenario.to_str().unwrap(), out.to_str().unwrap());
    for (window, says) in [
        ("2m..1m", "FROM must come before TO"),
        ("2h..3h", "starts after the run, which ends at"),
        ("1m", "must be FROM..TO"),
        ("1x..2m", "invalid duration"),
    ] {
        let o = routesim(&["run", "-q", s, "--report", r, "--window", window]);
        let (stdout, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{window}: {stdout}{err}");
        assert!(err.contains(says) && stdout.is_empty(), "{window}: {err}");
    }
    let o = routesim(&["run", "-q", s, "--window", "0s..1m"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--window chooses what --diagram and --report draw"));
}

/// One scenario that runs too long in wall time gets its own TIMEOUT line; the others keep
/// their verdicts and the summary still prints. A month of one broker is 1.2 million events,
/// seconds of work even in a release build, far past a 200 ms limit.
#[test]
fn check_stops_a_scenario_past_its_timeout_and_reports_the_others() {
    let dir = tempfile::tempdir().unwrap();
    quiet_cluster(dir.path(), "720h");
    std::fs::copy("scenarios/rocketmq/01-kill-vs-silent.toml", dir.path().join("kill.toml")).unwrap();
    let o = routesim(&["check", "--jobs", "2", "--timeout", "200ms", dir.path().to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(out.contains("PASS") && out.contains("kill.toml"), "the other scenario has its verdict:\n{out}");
    assert!(
        out.contains("TIMEOUT") && out.contains("quiet.toml") && out.contains("stopped by its timeout at "),
        "{out}"
    );
    assert!(out.contains("2 scenarios: 1 passed, 0 failed, 1 invalid"), "{out}");
    assert!(err.contains("raise --timeout"), "{err}");

    let o = routesim(&["check", "--timeout", "0s", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("give at least 1ms"), "{}", text(&o).1);
}
