//! The `events` subject: how many trace events of one kind happened in the window.
//!
//! `events = { kind = "unhealthy", actor = "nacos1", instance = "orders-1", count = 3 }` counts
//! what the trace records (`--trace` writes the same events as JSON lines), so anything the
//! timeline says can be counted: "flaps on every tick", "exactly one push", "no registration
//! reached ns2", "marked unhealthy and deleted in the same pass".
//!
//! The window is the frame's: `at = T` counts from the run's start to the end of instant `T`;
//! `after = T` counts the events after instant `T`, and holds at the first event that meets the
//! claim; `from`/`until` counts the events after instant `from` up to the end of instant `until`
//! and is judged when the window closes (a count is about the whole window, not each moment of
//! it).

use super::Mismatch;
use crate::sim::clock::SimTime;
use crate::sim::trace::{process_of, TraceEvent};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventsWant {
    /// The trace's `event` name (`unhealthy`, `registered`, `pushed`, ...).
    pub kind: String,
    /// The trace's `area` (`rmq`, `nacos`, `net`, ...), when a kind exists in two.
    pub area: Option<String>,
    /// A process (`nacos1`: also its parts, `nacos1/health`) or one actor (`ns1/scanner`).
    pub actor: Option<String>,
    /// A broker or instance the event must be about (see [`Mention`]).
    pub about: Option<Mention>,
    /// Top-level fields of the event, each equal to its JSON value (a string as is).
    pub fields: BTreeMap<String, String>,
    pub at_least: Option<u64>,
    pub at_most: Option<u64>,
}

/// What an event must mention to be about a scenario process: the process's name as a string
/// field (`"instance": "orders-1"`, `"from": "a0"`), its address in one (`"addr":
/// "10.0.0.1:10911"`), or, for a Nacos instance, its `client` and `service`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// `broker a0`, `instance orders-1`: for messages.
    pub what: String,
    pub name: String,
    /// `ip:port`.
    pub addr: String,
    /// A Nacos instance's grouped service name (`DEFAULT_GROUP@@orders`).
    pub service: Option<String>,
}

/// The counts an `events` expectation keeps as the run goes.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub count: u64,
    /// The first few matching events' times, for the verdict's message.
    pub times: Vec<SimTime>,
}

/// How many matching times a message lists.
const TIMES_SHOWN: usize = 5;

impl Tally {
    /// `none`, or `2 (at 30.003s, 35.003s)`.
    pub fn text(&self) -> String {
        let times: Vec<String> = self.times.iter().map(|t| t.to_string()).collect();
        let more = if self.count as usize > times.len() { ", ..." } else { "" };
        match self.count {
            0 => "none".to_string(),
            n => format!("{n} (at {}{more})", times.join(", ")),
        }
    }

    pub fn add(&mut self, t: SimTime) {
        self.count += 1;
        if self.times.len() < TIMES_SHOWN {
            self.times.push(t);
        }
    }
}

impl EventsWant {
    /// Whether `e`, as `json` (its `What` serialised), is one this subject counts.
    pub fn matches(&self, e: &TraceEvent, json: &Value) -> bool {
        let field = |k: &str| json.get(k).and_then(Value::as_str);
        if field("event") != Some(self.kind.as_str()) || self.area.as_deref().is_some_and(|a| field("area") != Some(a))
        {
            return false;
        }
        if let Some(actor) = &self.actor {
            if *e.actor != **actor && process_of(&e.actor) != actor {
                return false;
            }
        }
        let fields_match = self.fields.iter().all(|(k, want)| match json.get(k) {
            Some(Value::String(s)) => s == want,
            // Numbers and booleans as the scenario wrote them: `10200`, `true`.
            Some(other) => {
                let text = other.to_string();
                text == *want
            }
            None => false,
        });
        fields_match && self.about.as_ref().is_none_or(|m| m.in_event(e, json))
    }

    /// Whether a count has passed its `at_most`: a count only grows, so that is final, where
    /// one short of its `at_least` may still get there.
    pub fn overshot(&self, tally: &Tally) -> bool {
        self.at_most.is_some_and(|m| tally.count > m)
    }

    /// The claim against a tally.
    pub fn judge(&self, tally: &Tally) -> Result<(), Mismatch> {
        let n = tally.count;
        if self.at_least.is_none_or(|l| n >= l) && self.at_most.is_none_or(|m| n <= m) {
            return Ok(());
        }
        Err(Mismatch { expected: self.describe(), got: tally.text() })
    }

    /// `exactly 3 "unhealthy" events of nacos1 about instance orders-1`.
    pub fn describe(&self) -> String {
        let how_many = match (self.at_least, self.at_most) {
            (Some(l), Some(m)) if l == m => format!("exactly {l}"),
            (Some(l), Some(m)) => format!("{l} to {m}"),
            (Some(l), None) => format!("at least {l}"),
            (None, Some(m)) => format!("at most {m}"),
            (None, None) => "any number of".into(),
        };
        let mut s = format!("{how_many} {:?} events", self.kind);
        if let Some(a) = &self.actor {
            s += &format!(" of {a}");
        }
        if let Some(m) = &self.about {
            s += &format!(" about {}", m.what);
        }
        for (k, v) in &self.fields {
            s += &format!(" with {k} = {v:?}");
        }
        s
    }
}

impl Mention {
    fn in_event(&self, e: &TraceEvent, json: &Value) -> bool {
        if process_of(&e.actor) == self.name {
            return true;
        }
        if let (Some(service), Some(client)) = (&self.service, json.get("client")) {
            let (ip, port) = (client.get("ip").and_then(Value::as_str), client.get("port").and_then(Value::as_u64));
            let grouped = json.get("service").and_then(|s| s.get("grouped")).and_then(Value::as_str);
            if let (Some(ip), Some(port)) = (ip, port) {
                return format!("{ip}:{port}") == self.addr && grouped.is_none_or(|g| g == service);
            }
        }
        self.mentioned(json)
    }

    fn mentioned(&self, v: &Value) -> bool {
        match v {
            Value::String(s) => *s == self.name || s.contains(&self.addr),
            Value::Array(items) => items.iter().any(|i| self.mentioned(i)),
            Value::Object(map) => map.iter().any(|(k, v)| k != "event" && k != "area" && self.mentioned(v)),
            _ => false,
        }
    }
}
