//! A Mermaid sequence diagram of a run, built from its trace.
//!
//! Participants are the actors (brokers, name-server route tables, scanners, batchers,
//! clients) in the order they first appear. Routine traffic between two interesting moments —
//! periodic registrations, heartbeats, scan ticks that find nothing, unchanged polls — is folded
//! into one `loop` block that names each message once with its count. Everything else is drawn:
//! the fault, the channel closes, the scan's decision, the batch with its unregister steps as a
//! note, and the clients' next polls.

use crate::rocketmq::notes::{RegisterReason, RmqNote, UnregisterSource};
use crate::sim::clock::SimTime;
use crate::sim::notes::{CheckNote, FaultNote, NetNote, RunNote, What};
use crate::sim::trace::TraceEvent;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A participant id Mermaid accepts: letters, digits and `_`.
fn id(actor: &str) -> String {
    actor.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Text safe inside a Mermaid message or note (`;` ends a statement, `#` starts an entity).
fn text(s: &str) -> String {
    s.replace(';', ",").replace('#', "").replace("-->", "→").replace("->", "→")
}

/// The process an actor belongs to (`ns1/scanner` → `ns1`).
fn process(actor: &str) -> &str {
    actor.split('/').next().unwrap_or(actor)
}

#[derive(Default)]
struct Diagram {
    participants: Vec<String>,
    lines: Vec<String>,
    /// Routine messages since the last interesting one: (from, to, label) → count.
    folded: BTreeMap<(String, String, String), u32>,
    fold_from: Option<SimTime>,
    fold_to: SimTime,
}

impl Diagram {
    fn touch(&mut self, actor: &str) -> String {
        if !self.participants.iter().any(|p| p == actor) {
            self.participants.push(actor.to_string());
        }
        id(actor)
    }

    fn arrow(&mut self, from: &str, to: &str, style: &str, t: SimTime, label: &str) {
        self.flush();
        let (f, to) = (self.touch(from), self.touch(to));
        self.lines.push(format!("    {f}{style}{to}: {t} {}", text(label)));
    }

    fn note(&mut self, over: &str, t: SimTime, label: &str) {
        self.flush();
        let o = self.touch(over);
        self.lines.push(format!("    Note over {o}: {t} {}", text(label)));
    }

    fn routine(&mut self, from: &str, to: &str, t: SimTime, label: &str) {
        self.touch(from);
        self.touch(to);
        self.fold_from.get_or_insert(t);
        self.fold_to = t;
        *self.folded.entry((from.to_string(), to.to_string(), label.to_string())).or_default() += 1;
    }

    fn flush(&mut self) {
        let Some(from) = self.fold_from.take() else { return };
        let folded = std::mem::take(&mut self.folded);
        self.lines.push(format!("    loop routine traffic {from} to {}", self.fold_to));
        for ((f, t, label), n) in folded {
            let times = if n > 1 { format!(" ×{n}") } else { String::new() };
            self.lines.push(format!("        {}->>{}: {}{times}", id(&f), id(&t), text(&label)));
        }
        self.lines.push("    end".into());
    }
}

/// Stands for "across every participant" until the participant list is known.
const ALL: &str = "\u{1}all";

/// Renders the diagram. Events must be in trace order; `order` lists process names in the
/// order their lanes should appear (a process's parts, like `ns1/scanner`, follow it).
pub fn sequence_diagram(events: &[TraceEvent], order: &[String]) -> String {
    let mut d = Diagram::default();
    for e in events {
        draw(&mut d, e);
    }
    d.flush();
    let rank = |p: &String| order.iter().position(|o| o == process(p)).unwrap_or(order.len());
    let mut participants = d.participants.clone();
    participants.retain(|p| p != ALL);
    participants.sort_by_key(|p| (rank(p), p.contains('/'), d.participants.iter().position(|x| x == p)));
    let span = match (participants.first(), participants.last()) {
        (Some(a), Some(b)) if a != b => format!("{},{}", id(a), id(b)),
        (Some(a), _) => id(a),
        _ => "all".into(),
    };
    let mut out = String::from("sequenceDiagram\n");
    for p in &participants {
        let _ = writeln!(out, "    participant {} as {}", id(p), text(p));
    }
    for l in &d.lines {
        let _ = writeln!(out, "{}", l.replace(&id(ALL), &span));
    }
    out
}

/// Seconds with up to millisecond precision: `125s`, `124.999s`.
fn secs(d: crate::sim::clock::SimDuration) -> String {
    let ms = d.millis();
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}

fn draw(d: &mut Diagram, e: &TraceEvent) {
    let (a, t) = (&*e.actor, e.t);
    match &e.what {
        What::Fault(FaultNote::Applied { action, targets, .. }) => match targets.as_slice() {
            [one] => d.note(one, t, &format!("FAULT: {action}")),
            _ => d.note(ALL, t, &format!("FAULT: {action}")),
        },
        What::Run(RunNote::ProcessStarted { node }) if t > SimTime::ZERO => {
            d.note(node, t, "process starts (empty state)")
        }
        What::Net(NetNote::Closed { by, peer, reason, fin, .. }) => {
            if *fin {
                d.arrow(by, peer, "--)", t, &format!("FIN ({reason})"));
            } else {
                d.note(by, t, &format!("closes its channel to {peer} ({reason}), no FIN reaches it"));
            }
        }
        // A cut link drops every periodic message: fold them like the traffic they replace.
        What::Net(NetNote::Dropped { from, to, msg, reason }) => {
            let why = match reason {
                crate::sim::notes::DropReason::Lost => "lost",
                crate::sim::notes::DropReason::Cut => "dropped, link cut",
                crate::sim::notes::DropReason::NoHost => "dropped, host down",
            };
            d.routine(from, to, t, &format!("{msg} {why}"));
        }
        What::Net(NetNote::Reset { from, to, msg, .. }) => {
            d.arrow(to, from, "--x", t, &format!("RST: {msg} hit a closed end"))
        }
        What::Net(NetNote::ConnectFailed { from, to, msg, .. }) => {
            d.arrow(from, to, "-x", t, &format!("{msg}: connect failed"))
        }
        What::Net(NetNote::Unparked { node, entries }) => {
            d.note(node, t, &format!("resumes, {entries} queued inputs run"))
        }
        What::Rmq(n) => draw_rmq(d, a, t, n),
        What::Check(CheckNote::Held { name, converged }) => {
            let c = converged.map(|c| format!(" (converged after {})", secs(c))).unwrap_or_default();
            d.note(ALL, t, &format!("PASS {name}{c}"));
        }
        What::Check(CheckNote::Failed { name, .. }) => d.note(ALL, t, &format!("FAIL {name}")),
        What::Check(CheckNote::Violated { invariant, .. }) => d.note(ALL, t, &format!("VIOLATED {invariant}")),
        _ => {}
    }
}

fn draw_rmq(d: &mut Diagram, a: &str, t: SimTime, n: &RmqNote) {
    let owner = process(a);
    match n {
        RmqNote::RegisterSent { reason, namesrvs, .. } => {
            for ns in namesrvs {
                if *reason == RegisterReason::Periodic {
                    d.routine(a, ns, t, "REGISTER_BROKER (periodic)");
                } else {
                    d.arrow(a, ns, "->>", t, &format!("REGISTER_BROKER ({})", reason_text(*reason)));
                }
            }
        }
        RmqNote::HeartbeatSent { .. } => d.routine(a, a, t, "QUERY_DATA_VERSION heartbeat to every name server"),
        RmqNote::Registered { broker, first, new_channel, .. } if *first || *new_channel => {
            let what =
                if *first { "first registration" } else { "re-registered on a new channel, old entry still there" };
            d.note(a, t, &format!("registerBroker {broker}: {what}"));
        }
        RmqNote::HeartbeatIgnored { broker } => {
            d.note(a, t, &format!("heartbeat from {broker} ignored: cannot resurrect"))
        }
        RmqNote::RegisterRefused { broker, reason } => d.note(a, t, &format!("{broker} refused: {reason}")),
        RmqNote::UnregisterSent { namesrv } => d.arrow(a, namesrv, "->>", t, "UNREGISTER_BROKER"),
        RmqNote::ScanTick { expired: 0, .. } => d.routine(a, a, t, "scanNotActiveBroker: nothing expired"),
        RmqNote::Expired { addr, silent, timeout, .. } => {
            d.note(a, t, &format!("scanNotActiveBroker: {addr} silent {} > {}", secs(*silent), secs(*timeout)));
            d.arrow(a, &format!("{owner}/batcher"), "->>", t, &format!("submit unregister {addr}"));
        }
        RmqNote::UnregisterQueued { broker, source, .. } => {
            let why = match source {
                UnregisterSource::ChannelClosed => "onChannelDestroy",
                UnregisterSource::Request => "UNREGISTER_BROKER",
                UnregisterSource::Scan => "scan",
            };
            d.arrow(a, &format!("{owner}/batcher"), "->>", t, &format!("submit unregister {broker} ({why})"));
        }
        RmqNote::QueueFull { broker, .. } => d.note(a, t, &format!("queue full: {broker} dropped")),
        RmqNote::BatchTaken { size } => d.arrow(a, owner, "->>", t, &format!("unRegisterBroker(batch of {size})")),
        RmqNote::BatchApplied { steps, .. } => d.note(a, t, &steps.join("<br/>")),
        RmqNote::RouteChanged { topic, namesrv, brokers, .. } => {
            d.arrow(a, namesrv, "->>", t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}"));
            d.arrow(namesrv, a, "-->>", t, &format!("route [{}]", brokers.join(", ")));
        }
        RmqNote::TopicNotExistKeptOld { topic, namesrv, .. } => {
            d.arrow(a, namesrv, "->>", t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}"));
            d.arrow(namesrv, a, "-->>", t, "TOPIC_NOT_EXIST");
            d.note(a, t, "keeps its old route");
        }
        RmqNote::TopicNotExist { topic, namesrv } => {
            d.arrow(a, namesrv, "->>", t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}"));
            d.arrow(namesrv, a, "-->>", t, "TOPIC_NOT_EXIST");
        }
        RmqNote::RoutePolled { topic, namesrv } => {
            d.routine(a, namesrv, t, &format!("GET_ROUTEINFO_BY_TOPIC {topic}: unchanged"))
        }
        RmqNote::PollFailed { namesrv, reason } => d.note(a, t, &format!("poll to {namesrv} failed: {reason}")),
        RmqNote::WritePermWiped { broker_name, topics } => {
            d.note(a, t, &format!("wipeWritePerm {broker_name}: {topics} topics"))
        }
        RmqNote::WritePermAdded { broker_name, topics } => {
            d.note(a, t, &format!("addWritePerm {broker_name}: {topics} topics"))
        }
        RmqNote::TopicDeleted { topic, .. } => d.note(a, t, &format!("deleteTopic {topic}")),
        RmqNote::TopicsChanged { detail, .. } => d.note(a, t, &format!("topics changed: {detail}")),
        RmqNote::BrokerIdChanged { from, to } => d.note(a, t, &format!("brokerId {from} → {to}")),
        RmqNote::PermissionChanged { perm } => d.note(a, t, &format!("brokerPermission {perm}")),
        RmqNote::ShutdownComplete => d.note(a, t, "shutdown complete"),
        RmqNote::MinBrokerIdChanged { broker_name, min_id, .. } => {
            d.note(a, t, &format!("notifyMinBrokerIdChanged {broker_name}: min id {min_id}"))
        }
        _ => {}
    }
}

fn reason_text(r: RegisterReason) -> &'static str {
    match r {
        RegisterReason::Startup => "start-up",
        RegisterReason::Periodic => "periodic",
        RegisterReason::TopicsChanged => "topics changed",
        RegisterReason::IdChanged => "broker id changed",
        RegisterReason::PermissionChanged => "permission changed",
    }
}
