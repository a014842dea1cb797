//! Explain mode: a narrated walk through the key moments of a run, naming the real methods and
//! showing how the registries' tables changed at each step.
//!
//! The explainer watches the trace like any observer. It keeps a snapshot of every RocketMQ
//! name server's and every Nacos naming server's tables, one sorted line per row; when an event
//! changes them, the moment gets the rows of the affected tables before and after. Timestamps
//! that only refresh (`lastUpdateTimestamp`, `lastHeartBeatTime`) do not make a moment: routine
//! traffic is skipped, except that the first beat of each Nacos instance is narrated once, with
//! the row it refreshed, to show what every later beat does.
//!
//! The narration lives beside each model: `rocketmq.rs` and `nacos.rs`.

mod nacos;
mod rocketmq;

pub use rocketmq::table_lines;

use crate::sim::clock::SimTime;
use crate::sim::notes::{CheckNote, FaultNote, FinNote, NetNote, What};
use crate::sim::trace::TraceEvent;
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::sim::narrate::Narrator;
pub use crate::sim::narrate::{Moment, TableChange};

/// The narrator a run is given to walk through its key moments (`RunOptions::narrator`).
pub fn narrator() -> Box<dyn Narrator> {
    Box::new(Explainer::default())
}

impl Narrator for Explainer {
    fn on_event(&mut self, event: &TraceEvent, world: &World) {
        Explainer::on_event(self, event, world)
    }

    fn take_moments(&mut self) -> Vec<Moment> {
        std::mem::take(&mut self.moments)
    }
}

/// The table a row belongs to: its first word.
fn table_of(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or("")
}

/// A row without its refresh timestamp: a registration or beat that only moves
/// `lastUpdateTimestamp` / `lastHeartBeatTime` is routine, not a change worth a moment.
fn shape(line: &str) -> String {
    if let Some(i) = line.find(", last beat ").or_else(|| line.find(", last updated ")) {
        return line[..i].to_string();
    }
    match (line.find("last update "), line.find(", timeout")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &line[..a], &line[b..]),
        _ => line.to_string(),
    }
}

/// What a narrated event asks to be shown beyond the tables it changed.
pub(crate) enum Focus {
    /// Nothing more.
    None,
    /// The last refresh of one row, found by a piece of its text (a beat's instance).
    Row { server: String, needle: String },
}

#[derive(Default)]
pub struct Explainer {
    /// Each registry's rows as last seen.
    snapshots: BTreeMap<String, BTreeSet<String>>,
    /// The last change of each row (by shape): its line before and after.
    history: BTreeMap<(String, String), (String, String)>,
    /// Nacos instances whose first beat was narrated.
    beats_told: BTreeSet<String>,
    pub moments: Vec<Moment>,
}

impl Explainer {
    pub fn on_event(&mut self, e: &TraceEvent, world: &World) {
        let (story, focus) = self.story(e, world);
        let mut changes = Vec::new();
        let rmq = world.namesrv_names().into_iter().map(|ns| {
            let rows = world.namesrv(&ns).map(|t| table_lines(&t.borrow())).unwrap_or_default();
            (ns, rows)
        });
        let nacos = world.nacos_server_names().into_iter().map(|s| {
            let rows = world.nacos_server(&s).map(|c| nacos::table_lines(&c.borrow(), world)).unwrap_or_default();
            (s, rows)
        });
        for (server, now) in rmq.chain(nacos).collect::<Vec<_>>() {
            if let Some(change) = self.compare(&server, now) {
                changes.push(change);
            }
        }
        if let Focus::Row { server, needle } = focus {
            changes.extend(self.last_change(&server, &needle));
        }
        if story.is_empty() && changes.is_empty() {
            return;
        }
        let story = if story.is_empty() { vec![e.what.to_string()] } else { story };
        self.moments.push(Moment { t: e.t, actor: e.actor.to_string(), story, changes });
    }

    /// Records `now` as the server's rows and returns the affected tables, if their shape changed.
    fn compare(&mut self, server: &str, now: BTreeSet<String>) -> Option<TableChange> {
        let old = self.snapshots.remove(server).unwrap_or_default();
        let old_by_shape: BTreeMap<String, &String> = old.iter().map(|l| (shape(l), l)).collect();
        for line in now.difference(&old) {
            if let Some(before) = old_by_shape.get(&shape(line)) {
                self.history.insert((server.to_string(), shape(line)), ((*before).clone(), line.clone()));
            }
        }
        let (old_shape, now_shape): (BTreeSet<String>, BTreeSet<String>) =
            (old_by_shape.keys().cloned().collect(), now.iter().map(|l| shape(l)).collect());
        let touched: BTreeSet<&str> = old_shape.symmetric_difference(&now_shape).map(|l| table_of(l)).collect();
        let change = (!touched.is_empty()).then(|| {
            let rows = |set: &BTreeSet<String>| set.iter().filter(|l| touched.contains(table_of(l))).cloned().collect();
            TableChange { server: server.to_string(), before: rows(&old), after: rows(&now) }
        });
        self.snapshots.insert(server.to_string(), now);
        change
    }

    /// The last refresh of the row of `server` containing `needle`.
    fn last_change(&self, server: &str, needle: &str) -> Option<TableChange> {
        let line = self.snapshots.get(server)?.iter().find(|l| l.contains(needle))?;
        let (before, after) = self.history.get(&(server.to_string(), shape(line)))?;
        Some(TableChange { server: server.to_string(), before: vec![before.clone()], after: vec![after.clone()] })
    }

    /// The narration of one event (nothing for routine ones), and what else to show.
    fn story(&mut self, e: &TraceEvent, world: &World) -> (Vec<String>, Focus) {
        let story = match &e.what {
            What::Fault(FaultNote::Applied { action, .. }) => {
                vec![format!("FAULT {action}: {}", fault_meaning(action))]
            }
            What::Net(NetNote::Closed { channel, by, peer, reason, fin }) => {
                let servers = world.nacos_server_names();
                let http = servers.contains(by) || servers.contains(peer);
                vec![match (fin, http) {
                    (FinNote::Sent, true) => format!(
                        "{by} closes {channel} ({reason}); {peer} receives the FIN: the HTTP keep-alive connection is \
                         gone, the next request opens a new one"
                    ),
                    (FinNote::Sent, false) => {
                        format!("{by} closes {channel} ({reason}); {peer} receives the FIN: its Netty pipeline raises CLOSE")
                    }
                    (FinNote::Lost(_) | FinNote::Queued, _) => format!(
                        "{by} closes {channel} ({reason}); the FIN cannot reach {peer} now, so {by}'s kernel keeps \
                         retransmitting it (an orphaned socket, about 100 s); until it lands {peer}'s end stays half-open"
                    ),
                    (FinNote::Unheard, _) => {
                        format!("{by} gives up connecting to {peer} on {channel} ({reason}); nothing was ever sent")
                    }
                }]
            }
            What::Net(NetNote::GaveUp { channel, from, to, waited, orphan, .. }) => {
                vec![if *orphan {
                    format!(
                        "{from}'s kernel stops retransmitting on the closed {channel} after {} (tcp_orphan_retries): \
                         what it still held for {to} never arrives",
                        waited
                    )
                } else {
                    format!(
                        "{from}'s kernel gives up on {channel} after {} of retransmissions (tcp_retries2 = 15): \
                         the connection to {to} is dead and {from}'s application sees it close",
                        waited
                    )
                }]
            }
            What::Net(NetNote::Reset { channel, from, to, msg }) => {
                vec![format!("{msg} from {from} hits {to}'s closed end of {channel}: RST, {from} reconnects next time")]
            }
            What::Rmq(n) => rocketmq::story(n),
            What::Nacos(n) => return nacos::story(n, &e.actor, world, &mut self.beats_told),
            What::Check(CheckNote::Held { name, converged }) => {
                let c = converged.map(|c| format!(", converged after {c}")).unwrap_or_default();
                vec![format!("expectation \"{name}\" held{c}")]
            }
            What::Check(CheckNote::Failed { name, at, detail }) => {
                vec![format!("expectation \"{name}\" FAILED at {at}: {detail}")]
            }
            What::Check(CheckNote::Violated { invariant, at, detail }) => {
                vec![format!("invariant {invariant} VIOLATED at {at}: {detail}")]
            }
            _ => Vec::new(),
        };
        (story, Focus::None)
    }
}

fn fault_meaning(action: &str) -> &'static str {
    match action.split_whitespace().next() {
        Some("crash") => "kill -9 with the host alive: the OS closes every socket of the process",
        Some("host_down") => "the host dies: no socket is closed, peers keep half-open channels",
        Some("hang") => "SIGSTOP: sockets stay open, input waits, no task runs",
        Some("resume") => "SIGCONT: buffered input and overdue scheduled tasks run now",
        Some("shutdown") => {
            "SIGTERM: the shutdown hook runs (a broker calls unregisterBrokerAll, a Nacos client deregisters \
             its instances)"
        }
        Some("restart") => "the process starts again with empty in-memory tables",
        Some("partition") | Some("block") => "packets across the cut vanish; nothing is closed",
        Some("heal") => "the cut is gone",
        _ => "an operator command",
    }
}

/// The walk as text, from `from` on.
pub fn render(title: &str, moments: &[Moment], from: SimTime) -> String {
    let mut out = format!("== {title}: key moments from {from}\n");
    for m in moments.iter().filter(|m| m.t >= from) {
        let _ = writeln!(out, "\n{} {}", m.t, m.actor);
        for line in &m.story {
            let _ = writeln!(out, "    {line}");
        }
        for c in &m.changes {
            write_change(&mut out, c);
        }
    }
    out
}

/// A change as `explain` prints it: the rows before and after, indented under their server.
pub fn change_text(c: &TableChange) -> String {
    let mut out = String::new();
    write_change(&mut out, c);
    out
}

/// The rows before (`-` marks one that left or changed) and after (`+` one that arrived or
/// changed). A refresh shows as `-`/`+` only when nothing but its timestamp moved.
fn write_change(out: &mut String, c: &TableChange) {
    let refresh = c.before.len() == 1 && c.after.len() == 1 && c.before != c.after;
    write_side(out, &c.server, "before", &c.before, &c.after, refresh, '-');
    write_side(out, &c.server, "after", &c.after, &c.before, refresh, '+');
}

/// One side of a change: its rows, `mark`ed unless a row of the same shape is on the `other`
/// side (and the change is not a lone refresh).
fn write_side(
    out: &mut String,
    server: &str,
    side: &str,
    rows: &[String],
    other: &[String],
    refresh: bool,
    mark: char,
) {
    let other: Vec<String> = other.iter().map(|l| shape(l)).collect();
    let _ = writeln!(out, "    {server} {side}:");
    for l in rows {
        let mark = if other.contains(&shape(l)) && !refresh { ' ' } else { mark };
        let _ = writeln!(out, "      {mark} {l}");
    }
    if rows.is_empty() {
        let _ = writeln!(out, "        (empty)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_differing_only_in_its_refresh_time_has_the_same_shape() {
        let a = "instances    orders 10.1.0.1:8080#true (orders-1): healthy, timeouts 15s/30s, last beat 5.001s";
        let b = "instances    orders 10.1.0.1:8080#true (orders-1): healthy, timeouts 15s/30s, last beat 10.003s";
        assert_eq!(shape(a), shape(b));
        assert_ne!(shape(a), shape(&a.replace("healthy,", "UNHEALTHY,")));
        let r = "brokerLiveTable   c/10.0.0.1:10911: last update 40.001s, timeout 2m, ch#1";
        assert_eq!(shape(r), "brokerLiveTable   c/10.0.0.1:10911: , timeout 2m, ch#1");
    }

    #[test]
    fn a_refresh_is_drawn_as_one_row_leaving_and_one_arriving() {
        let c = TableChange {
            server: "nacos1".into(),
            before: vec!["x, last beat 1s".into()],
            after: vec!["x, last beat 6s".into()],
        };
        let mut out = String::new();
        write_change(&mut out, &c);
        assert!(out.contains("- x, last beat 1s") && out.contains("+ x, last beat 6s"), "{out}");
    }
}
