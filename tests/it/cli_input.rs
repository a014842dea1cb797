//! Input the `routesim` command refuses before any run, with exit 2 and a message that says
//! where and what would be right: files too large or not UTF-8, seeds out of range, and an
//! `explain --at` past the scenario's end.

use crate::common::{routesim, write};
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const KILL: &str = "scenarios/rocketmq/01-kill-vs-silent.toml";

#[test]
fn a_file_over_8_mib_is_refused_where_it_crosses_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // 9 MiB of comment lines, 1 KiB each: byte 8 MiB is the first of line 8193.
    let line = format!("#{}\n", "x".repeat(1022));
    let file = write(dir.path(), "huge.toml", line.repeat(9 * 1024).as_bytes());
    let o = routesim(&["run", file.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("huge.toml:8193:1: the scenario file is larger than 8388608 bytes (8 MiB)"), "{err}");
    assert!(err.contains("Limits"), "the help points at the documented limits: {err}");
}

#[test]
fn invalid_utf8_is_reported_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bytes.toml", b"[scenario]\nname = \"t\xc3\xa9\xff\"\n");
    let o = routesim(&["run", file.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // Column 11: after `name = "t` and the two-byte é, which counts as one character.
    assert!(err.contains("bytes.toml:2:11: the file is not valid UTF-8: byte 0xff"), "{err}");
}

#[test]
fn seed_on_the_command_line_takes_the_range_of_seed_in_a_file() {
    let top = i64::MAX.to_string();
    let o = routesim(&["run", "--quiet", KILL, "--seed", &top]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = routesim(&["run", "--quiet", KILL, "--seed", "9223372036854775808"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("9223372036854775807"), "the message gives the range: {}", stderr(&o));
}

#[test]
fn explain_at_past_the_end_exits_2_with_the_range() {
    // The scenario runs for 5 minutes.
    let o = routesim(&["explain", KILL, "--at", "10m"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--at 10m: past the end of the scenario; give a time from 0s to 5m"), "{err}");
}
