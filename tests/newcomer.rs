//! What a newcomer trips on (issue 13): the command line telling them what failed, how to
//! install it, and what each subcommand looks like in use.

mod common;
use common::{routesim, text, write};

/// A scenario whose one expectation cannot hold: the route of a killed broker never comes back.
const FAILING: &str = r#"
[scenario]
name = "expects the impossible"
seed = 5
duration = "2m"

[[namesrv]]
name = "ns1"

[[broker]]
name = "a0"
broker_name = "broker-a"
addr = "10.0.0.1:10911"
topics = [{ name = "Orders", read = 4, write = 4 }]

[[fault]]
at = "30s"
crash = "a0"

[[expect]]
name = "route survives a kill"
at = "1m"
route = { namesrv = "ns1", topic = "Orders", brokers = ["broker-a"] }

[[expect]]
name = "route is there before the kill"
after = "0s"
within = "10s"
route = { namesrv = "ns1", topic = "Orders", brokers = ["broker-a"] }
"#;

#[test]
fn check_names_each_failed_expectation_under_its_fail_line() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "fail.toml", FAILING);
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
