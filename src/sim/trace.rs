//! The trace: every event of a run, in order, with its virtual time and the actor it happened in.
//!
//! One stream feeds every output: the readable timeline (`routesim run`), the JSON-lines file
//! (`--trace out.jsonl`, one object per event), the watchers that build a view as the run goes
//! (the diagram and the report: they hold what they draw, not the events, so their memory does not
//! grow with every routine beat of a long run), the events kept in memory for tests, and the
//! digest. The digest is XXH3-128 over a compact binary encoding (`sim::digest`) of every event, so two
//! runs have the same digest exactly when they produced the same events — and since the text and
//! JSON forms are pure functions of the events, the same bytes.

use crate::sim::clock::SimTime;
use crate::sim::name::Name;
use serde::Serialize;
use std::cell::RefCell;
use std::fmt;
use std::io::{self, Write};
use std::rc::Rc;

pub use crate::sim::notes::{CheckNote, FaultNote, NetNote, RunNote, What};

/// The process an actor belongs to: actors are named `process` or `process/part`
/// (`ns1/scanner` → `ns1`).
pub fn process_of(actor: &str) -> &str {
    actor.split('/').next().unwrap_or(actor)
}

/// One thing that happened.
#[derive(Clone, Debug, Serialize)]
pub struct TraceEvent {
    /// Virtual time, milliseconds.
    pub t: SimTime,
    /// `a0`, `ns1`, `ns1/scanner`, `net`, `fault`, ...: interned, so recording an event copies a
    /// pointer rather than counting a reference up and down.
    pub actor: Name,
    #[serde(flatten)]
    pub what: What,
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>10} {:<14} {}", self.t.to_string(), self.actor, self.what)
    }
}

/// Which events the readable timeline shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Detail {
    /// Everything but routine traffic (refreshing registrations, beats, polls that change nothing).
    #[default]
    Story,
    /// Every event.
    Full,
}

/// Something built from the events as they happen, such as a diagram or a report.
pub trait Watcher {
    fn event(&mut self, event: &TraceEvent);
}

/// The caller keeps one handle and lends the run another, then reads the result once the run
/// (which needs `'static` parts: it runs inside actors) has dropped its handle.
impl<W: Watcher> Watcher for Rc<RefCell<W>> {
    fn event(&mut self, event: &TraceEvent) {
        self.borrow_mut().event(event)
    }
}

/// Where the trace goes. Everything is optional except the digest.
#[derive(Default)]
pub struct TraceOptions {
    pub timeline: Option<(Box<dyn Write>, Detail)>,
    pub jsonl: Option<Box<dyn Write>>,
    pub watchers: Vec<Box<dyn Watcher>>,
    /// Keep every event in memory (`RunReport::kept`): for tests and short runs; a view of a run
    /// of any length is a [`Watcher`].
    pub keep: bool,
}

/// How many encoded bytes wait before they are hashed.
const HASH_CHUNK: usize = 8 * 1024;

pub struct Trace {
    opts: TraceOptions,
    hasher: xxhash_rust::xxh3::Xxh3,
    scratch: Vec<u8>,
    kept: Vec<TraceEvent>,
    count: u64,
    io_error: Option<io::Error>,
    /// No output but the digest: no timeline, JSON lines, watcher or kept events.
    digest_only: bool,
}

impl Trace {
    pub fn new(opts: TraceOptions) -> Self {
        let digest_only = opts.timeline.is_none() && opts.jsonl.is_none() && opts.watchers.is_empty() && !opts.keep;
        Trace {
            digest_only,
            opts,
            hasher: xxhash_rust::xxh3::Xxh3::new(),
            scratch: Vec::with_capacity(HASH_CHUNK + 1024),
            kept: Vec::new(),
            count: 0,
            io_error: None,
        }
    }

    // The one function every simulated event goes through: inlined, and the event is lent, not
    // moved (an event is 112 bytes: a move is a copy, and one read back at once can stall).
    #[inline]
    pub fn record(&mut self, event: &TraceEvent) {
        self.count += 1;
        // Events are encoded back to back and hashed a few kilobytes at a time: XXH3's streaming
        // digest of the concatenation is the same whichever way it is cut, and one large update
        // skips the copy into the hasher's own 256-byte buffer that a small one pays.
        crate::sim::digest::encode_event(event.t, event.actor, &event.what, &mut self.scratch);
        self.hash_if_full();
        if let Some((out, detail)) = &mut self.opts.timeline {
            if *detail == Detail::Full || !event.what.is_routine() {
                if let Err(e) = writeln!(out, "{event}") {
                    self.io_error.get_or_insert(e);
                }
            }
        }
        if let Some(out) = &mut self.opts.jsonl {
            let line =
                serde_json::to_writer(&mut *out, &event).map_err(io::Error::from).and_then(|_| out.write_all(b"\n"));
            if let Err(e) = line {
                self.io_error.get_or_insert(e);
            }
        }
        for watcher in &mut self.opts.watchers {
            watcher.event(event);
        }
        if self.opts.keep {
            self.kept.push(event.clone());
        }
    }

    /// Whether the digest is the only output: then a beat can be recorded from its fields
    /// ([`record_beat`](Self::record_beat)) instead of as an event.
    pub fn digest_only(&self) -> bool {
        self.digest_only
    }

    /// `record` of `(t, actor, What::Nacos(NacosNote::Beat { .. }))` for a trace that only
    /// digests: the same bytes, encoded from the fields where they arrive. A big Nacos run is
    /// almost all answered beats; building each as a 112-byte event only for the encoder to
    /// read it back cost about 65 instructions a beat, 2.8% of the Nacos bench's instructions.
    #[inline]
    pub fn record_beat(&mut self, t: SimTime, actor: Name, beat: crate::sim::digest::BeatFields) {
        debug_assert!(self.digest_only, "a beat for another output must be recorded as an event");
        self.count += 1;
        crate::sim::digest::encode_beat(t, actor, beat, &mut self.scratch);
        self.hash_if_full();
    }

    /// Events are encoded back to back and hashed a few kilobytes at a time.
    #[inline(always)]
    fn hash_if_full(&mut self) {
        if self.scratch.len() >= HASH_CHUNK {
            self.hasher.update(&self.scratch);
            self.scratch.clear();
        }
    }

    /// Number of events so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Hex digest of the events so far (XXH3, 128 bits). Not cryptographic: it tells two runs
    /// apart, which is all it is for, and costs a fraction of a cryptographic hash per event.
    pub fn digest(&self) -> String {
        let mut hasher = self.hasher.clone();
        hasher.update(&self.scratch);
        format!("{:032x}", hasher.digest128())
    }

    /// Flushes the outputs and hands back the kept events and the first I/O error.
    pub fn finish(mut self) -> (Vec<TraceEvent>, Option<io::Error>) {
        if let Some((out, _)) = &mut self.opts.timeline {
            if let Err(e) = out.flush() {
                self.io_error.get_or_insert(e);
            }
        }
        if let Some(out) = &mut self.opts.jsonl {
            if let Err(e) = out.flush() {
                self.io_error.get_or_insert(e);
            }
        }
        (self.kept, self.io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_beat_recorded_from_its_fields_digests_as_the_event_would() {
        use crate::nacos::notes::NacosNote;
        use crate::sim::clock::SimDuration;
        use crate::sim::digest::BeatFields;
        let (mut fields, mut events) = (Trace::new(TraceOptions::default()), Trace::new(TraceOptions::default()));
        // Names that fit their blocks and one that does not; with and without a next beat.
        let long = Name::new(&"i".repeat(200));
        for (i, instance) in [Name::new("p1-s1"), long].into_iter().enumerate() {
            for next in [Some(SimDuration::from_secs(5)), None] {
                let t = SimTime(1000 + i as u64);
                let (actor, server) = (Name::new("provider1"), Name::new("nacos1"));
                let beat = BeatFields { instance, server, light: i == 0, code: 10200, next };
                fields.record_beat(t, actor, beat);
                let what = What::Nacos(NacosNote::Beat { instance, server, light: i == 0, code: 10200, next });
                events.record(&TraceEvent { t, actor, what });
            }
        }
        assert_eq!((fields.count(), fields.digest()), (events.count(), events.digest()));
    }

    #[test]
    fn an_event_stays_within_two_cache_lines() {
        // Every event is built, lent to every output and dropped: a note that grows `What` makes
        // each of them move more. A large note is boxed instead (`RmqNote::BatchApplied`).
        assert!(std::mem::size_of::<What>() <= 96, "What is {} bytes", std::mem::size_of::<What>());
        assert!(std::mem::size_of::<TraceEvent>() <= 128, "an event is {} bytes", std::mem::size_of::<TraceEvent>());
    }
}
