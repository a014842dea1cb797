//! What a newcomer trips on (issue 13): the command line telling them what failed, how to
//! install it, and what each subcommand looks like in use.

use crate::common::{routesim, text, write, FAILING, HOLDS};

/// [`FAILING`] with an expectation that holds, which the failure lines must not name.
fn failing() -> String {
    format!("{FAILING}{HOLDS}")
}

#[test]
fn check_names_each_failed_expectation_under_its_fail_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "fail.toml", failing());
    let o = routesim(&["check", dir.path().to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("FAIL    ") && lines[0].contains("(1/2 expectations"), "{out}");
    // The failed one is named with its frame and when it was found false; the held one is not.
    assert_eq!(lines[1], "        failed:   route survives a kill  [at 60.000s]  at 60.000s", "{out}");
    assert!(!out.contains("route is there before the kill"), "{out}");
    assert!(lines[2].contains(" scenarios: 0 passed, 1 failed"), "{out}");
}

const SUBCOMMANDS: [&str; 6] = ["run", "check", "explore", "explain", "lesson", "completions"];

#[test]
fn completions_name_every_subcommand_in_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let o = routesim(&["completions", shell]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{shell}: {err}");
        for sub in SUBCOMMANDS {
            assert!(out.contains(sub), "{shell} completions offer `{sub}`");
        }
        // Flags too: the script is built from the same definitions that parse the line.
        assert!(out.contains("max-events") && out.contains("json"), "{shell} completions offer flags");
    }
    let o = routesim(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is bad input");
}

#[test]
fn each_subcommand_help_ends_with_an_example_of_itself() {
    for sub in SUBCOMMANDS {
        let o = routesim(&[sub, "--help"]);
        let (out, _) = text(&o);
        assert_eq!(o.status.code(), Some(0));
        let example = out.split("Example").nth(1).unwrap_or_else(|| panic!("`{sub} --help` has an example:\n{out}"));
        assert!(example.contains(&format!("routesim {sub} ")), "`{sub} --help`'s example runs {sub}:\n{out}");
    }
}

/// The timeline's times, in the order printed.
fn timeline_times(out: &str) -> Vec<(f64, String)> {
    out.lines()
        .filter_map(|l| {
            let (time, rest) = l.trim_start().split_once("s ")?;
            Some((time.parse().ok()?, rest.trim_start().to_string()))
        })
        .collect()
}

#[test]
fn verdict_lines_carry_the_instant_checked_and_time_never_goes_back() {
    // Nothing happens between the crash's aftermath (30.001s) and the end (1m): the `at 45.5s`
    // verdict is only decided when the clock next moves, but it is about 45.5s; and the `at 1m`
    // one, decided 1 ms past the end, belongs before "scenario ends" at 60.000s.
    let dir = tempfile::tempdir().unwrap();
    let scenario = failing().replace("duration = \"2m\"", "duration = \"1m\"")
        + "\n[[expect]]\nname = \"gone mid-run\"\nat = \"45.5s\"\nroute = { namesrv = \"ns1\", topic = \"Orders\", absent = true }\n";
    let file = write(dir.path(), "t.toml", scenario);
    let o = routesim(&["run", "--full", file.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let times = timeline_times(&out);
    let at =
        |needle: &str| times.iter().find(|(_, l)| l.contains(needle)).unwrap_or_else(|| panic!("{needle}:\n{out}")).0;
    assert_eq!(at("\"gone mid-run\" held"), 45.5, "{out}");
    assert_eq!(at("\"route survives a kill\" FAILED"), 60.0, "{out}");
    for pair in times.windows(2) {
        assert!(pair[0].0 <= pair[1].0, "time went back from {:?} to {:?}:\n{out}", pair[0], pair[1]);
    }
    assert!(times.last().unwrap().1.starts_with("run "), "the run's end is the last line: {out}");
}
