//! A Mermaid sequence diagram of a run, built from its trace.
//!
//! Participants are the processes in the scenario's lane order, each followed by its parts: for
//! RocketMQ the brokers, the name servers' route tables, scanners and batchers, the clients; for
//! Nacos the applications, the naming servers with their health checker and push engine, the
//! subscribers. Routine traffic between two interesting moments — periodic registrations, beats,
//! scan ticks that find nothing, unchanged polls — is folded into one `loop` block that names
//! each message once with its count, and steps that repeat (an instance flapping every 5 s) are
//! folded into one loop showing the first repetition (see `diagram`). Everything else is
//! drawn: the fault, the channel closes, the scan's or checker's decision, the unregister batch
//! with its steps, 20404 and the re-registration, pushes and what subscribers now see.

mod diagram;
mod fold;
mod nacos;
mod rocketmq;
#[cfg(test)]
mod tests;

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::notes::{CheckNote, DropReason, FaultNote, FinNote, NetNote, RunNote, What};
use crate::sim::scenario::Scenario;
use crate::sim::trace::{TraceEvent, Watcher};
use crate::view::cast::Cast;
use crate::view::{TooLong, Window};
use diagram::{process, Diagram, ALL};

/// The most arrows, notes and stretches of routine traffic one diagram holds. Mermaid refuses a
/// diagram of more than 50,000 characters unless its `maxTextSize` is raised, a few hundred
/// items; this limit only bounds memory and the file for a run that goes on for days, and names
/// `--window`.
pub const MAX_ITEMS: usize = 20_000;

/// Mermaid's default `maxTextSize`: a longer diagram is refused by a renderer left as it is.
pub const MERMAID_MAX_TEXT: usize = 50_000;

/// How much of a run a diagram too long for Mermaid draws around each fault and check: back to
/// the last registration before it (RocketMQ registers every 30 s, Nacos beats every 5 s), and
/// on to what it set off in the moments after.
const LEAD: SimDuration = SimDuration(60_000);
const TAIL: SimDuration = SimDuration(10_000);

/// The diagram of one run of `scenario`, all of it. `events` must be its kept trace, in order.
pub fn sequence_diagram(scenario: &Scenario, events: &[TraceEvent]) -> String {
    let mut view = DiagramView::new(scenario, Window::whole());
    view.limit = usize::MAX;
    events.iter().for_each(|e| view.event(e));
    view.finish().expect("no limit on a diagram of kept events").text
}

/// A drawn diagram.
pub struct Drawn {
    pub text: String,
    /// When the whole run was too long for Mermaid and no window was asked for: the parts of
    /// the run drawn, around its faults and checks.
    pub around: Option<Vec<(SimTime, SimTime)>>,
}

/// A diagram drawn as the run goes: it holds its items (routine traffic already folded), never
/// the events.
pub struct DiagramView {
    cast: Cast,
    d: Diagram,
    window: Window,
    limit: usize,
    overflow: Option<SimTime>,
}

impl DiagramView {
    pub fn new(scenario: &Scenario, window: Window) -> Self {
        DiagramView { cast: Cast::of(scenario), d: Diagram::default(), window, limit: MAX_ITEMS, overflow: None }
    }

    /// The diagram; a whole run too long for Mermaid is drawn around its faults and checks
    /// instead, first as one stretch from before the first to after the last, then as a
    /// stretch around each.
    pub fn finish(mut self) -> Result<Drawn, TooLong> {
        if let Some(at) = self.overflow {
            return Err(TooLong { what: "diagram", limit: self.limit, items: "arrows, notes and loops", at });
        }
        let order = std::mem::take(&mut self.cast.order);
        let rank = |p: &str| (order.iter().position(|o| o == process(p)).unwrap_or(order.len()), p.contains('/'));
        let text = self.d.render(rank, None);
        let keys = self.d.key_instants().to_vec();
        if text.len() <= MERMAID_MAX_TEXT || !self.window.is_whole() || keys.is_empty() {
            return Ok(Drawn { text, around: None });
        }
        let around = |from: SimTime, to: SimTime| (SimTime(from.millis().saturating_sub(LEAD.millis())), to + TAIL);
        let mut spans = vec![around(keys[0], keys[keys.len() - 1])];
        let mut text = self.d.render(rank, Some(&spans));
        if text.len() > MERMAID_MAX_TEXT {
            spans = Vec::new();
            for &k in &keys {
                let (from, to) = around(k, k);
                match spans.last_mut() {
                    Some((_, end)) if from <= *end => *end = to,
                    _ => spans.push((from, to)),
                }
            }
            text = self.d.render(rank, Some(&spans));
        }
        Ok(Drawn { text, around: Some(spans) })
    }
}

impl Watcher for DiagramView {
    fn event(&mut self, e: &TraceEvent) {
        if self.overflow.is_some() || !self.window.contains(e.t) {
            return;
        }
        draw(&mut self.d, &self.cast, e);
        if self.d.len() > self.limit {
            self.overflow = Some(e.t);
        }
    }
}

/// Seconds with up to millisecond precision: `125s`, `124.999s`.
fn secs(d: SimDuration) -> String {
    let ms = d.millis();
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}

fn draw(d: &mut Diagram, cast: &Cast, e: &TraceEvent) {
    let (a, t) = (&*e.actor, e.t);
    match &e.what {
        What::Fault(FaultNote::Applied { action, targets, .. }) => {
            d.fault(targets, t);
            match targets.as_slice() {
                [one] => d.note(one, t, &format!("FAULT: {action}")),
                _ => d.note(ALL, t, &format!("FAULT: {action}")),
            }
        }
        What::Run(RunNote::ProcessStarted { node }) if t > SimTime::ZERO => {
            d.note(node, t, "process starts (empty state)")
        }
        What::Net(NetNote::Closed { by, peer, reason, fin, .. }) => match fin {
            FinNote::Sent => d.arrow(by, peer, "--)", t, &format!("FIN ({reason})")),
            FinNote::Lost(_) | FinNote::Queued => {
                d.note(by, t, &format!("closes its channel to {peer} ({reason}); the FIN waits for retransmission"))
            }
            FinNote::Unheard => d.note(by, t, &format!("gives up connecting to {peer} ({reason})")),
        },
        // A datagram is gone for good; a lost TCP segment is retransmitted, which the timeline
        // tells. Both fold like the traffic they stand for.
        What::Net(NetNote::Dropped { from, to, msg, reason }) => {
            let why = match reason {
                DropReason::Lost => "lost",
                DropReason::Cut => "dropped, link cut",
                DropReason::NoHost => "dropped, host down",
                DropReason::NoListener => "dropped, nothing listens",
            };
            d.lost(from, to, msg, t, why);
        }
        What::Net(NetNote::Lost { from, to, msg, attempt: 0, .. }) => d.lost(from, to, msg, t, "lost, TCP retransmits"),
        What::Net(NetNote::SlowConnect { from, to, .. }) => {
            d.lost(from, to, "SYN", t, "answered only after the connect timeout")
        }
        What::Net(NetNote::Retransmitted { from, to, waited, .. }) => {
            d.arrow(from, to, "->>", t, &format!("retransmission gets through after {}", secs(*waited)))
        }
        What::Net(NetNote::GaveUp { from, to, orphan, .. }) => {
            let why =
                if *orphan { "closed socket stops retransmitting" } else { "connection timed out (tcp_retries2)" };
            d.note(from, t, &format!("{why}; nothing more reaches {to}"))
        }
        What::Net(NetNote::Reset { from, to, msg, .. }) => {
            d.arrow(to, from, "--x", t, &format!("RST: {msg} hit a closed end"))
        }
        // A producer's refused send is told by its attempt, and folds with the sends around it.
        What::Net(NetNote::ConnectFailed { from, to, msg, .. }) if msg.starts_with("SEND_MESSAGE") => {
            d.routine_lost(from, to, t, &format!("{msg}: connect failed"))
        }
        What::Net(NetNote::ConnectFailed { from, to, msg, .. }) => {
            d.arrow(from, to, "-x", t, &format!("{msg}: connect failed"))
        }
        What::Net(NetNote::Unparked { node, entries }) => {
            d.note(node, t, &format!("resumes, {entries} queued inputs run"))
        }
        What::Rmq(n) => rocketmq::draw(d, cast, a, t, n),
        What::Nacos(n) => nacos::draw(d, cast, a, t, n),
        What::Check(_) => {
            d.key_instant(t);
            draw_check(d, e);
        }
        _ => {}
    }
}

fn draw_check(d: &mut Diagram, e: &TraceEvent) {
    let t = e.t;
    match &e.what {
        What::Check(CheckNote::Held { name, converged }) => {
            let c = converged.map(|c| format!(" (converged after {})", secs(c))).unwrap_or_default();
            d.note(ALL, t, &format!("PASS {name}{c}"));
        }
        What::Check(CheckNote::Failed { name, .. }) => d.note(ALL, t, &format!("FAIL {name}")),
        What::Check(CheckNote::Violated { invariant, .. }) => d.note(ALL, t, &format!("VIOLATED {invariant}")),
        _ => {}
    }
}
