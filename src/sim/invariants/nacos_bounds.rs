//! The Nacos invariants' deadlines, as plain functions of what arrived and when — no actors, no
//! world — so each bound can be checked against the catalogue's worked examples.
//!
//! All of them rest on two facts about the 2.x server (`nacos::health` has the details):
//!
//! * every check compares `now - lastHeartBeatTime` *strictly* with a timeout, and
//! * checks run on a 5 s grid that starts 5 s after the client object appeared — never before
//!   its first arrival — and that a pause moves to the resume instant.
//!
//! So the first tick past `L + timeout` is at most one check period later, unless the server was
//! paused then; in that case it is the resume itself, and the tick after it at the latest.

use crate::nacos::health::CHECK_PERIOD;
use crate::nacos::naming::Timeouts;
use crate::nacos::types::{
    Metadata, DEFAULT_HEART_BEAT_TIMEOUT, DEFAULT_IP_DELETE_TIMEOUT, ENABLE_CLIENT_BEAT_KEY, HEART_BEAT_INTERVAL_KEY,
    HEART_BEAT_TIMEOUT_KEY, IP_DELETE_TIMEOUT_KEY,
};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::scenario::{Action, Scenario};
use std::collections::BTreeSet;

/// `ClientBeatCheckTaskV2`'s and `ExpiredClientCleaner`'s period (hard-coded 5 s, #5216).
pub const CHECK: SimDuration = SimDuration(CHECK_PERIOD);

/// The timeouts the server's checkers must apply to an instance, read from the scenario's
/// metadata by the documented rules — on purpose not through the model's own reading
/// (`Timeouts::from_metadata`), so that a bug there shows up as a violation instead of moving the
/// bound along with it. `UnhealthyInstanceChecker#getTimeout` and `ExpiredInstanceChecker#getTimeout`
/// take a present key through `ConvertUtils.toLong` and an absent one as the default (15 s,
/// 30 s); `enableClientBeat` goes through `ConvertUtils.toBoolean`.
pub fn documented_timeouts(metadata: &Metadata) -> Timeouts {
    let read = |key: &str, default: i64| metadata.get(key).map_or(default, |v| java_to_long(v));
    Timeouts {
        beat: read(HEART_BEAT_TIMEOUT_KEY, DEFAULT_HEART_BEAT_TIMEOUT),
        delete: read(IP_DELETE_TIMEOUT_KEY, DEFAULT_IP_DELETE_TIMEOUT),
        skip: metadata
            .get(ENABLE_CLIENT_BEAT_KEY)
            .is_some_and(|v| ["y", "yes", "on", "true", "t"].contains(&v.to_lowercase().as_str())),
        interval: metadata.get(HEART_BEAT_INTERVAL_KEY).map(|v| java_to_long(v)),
    }
}

/// `ConvertUtils.toLong(String)`: 0 for a blank string, else `Long.parseLong` — an optional sign
/// and decimal digits, nothing else, not even surrounding spaces — and 0 when that throws.
/// (Java's `Character.digit` also accepts non-ASCII decimal digits; neither reading here does.)
pub fn java_to_long(value: &str) -> i64 {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    value.parse().unwrap_or(0)
}

/// The instant by which a server must have acted on a silence that began at `last`: the first
/// check tick with more than `timeout` of silence lies at most one period after `last + timeout`,
/// or after the resume when the server was paused past that point. A negative timeout (a
/// metadata value such as "-1", which `toLong` keeps) acts as 0: the first tick fires.
pub fn acted_by(last: SimTime, timeout_ms: i64, resumed: Option<SimTime>) -> SimTime {
    let due = last + SimDuration(timeout_ms.max(0) as u64);
    due.max(resumed.unwrap_or(SimTime::ZERO)) + CHECK
}

/// Whether marking an instance at `now` was premature: something from it arrived at
/// `last_before` (the last arrival strictly before `now`), no more than `limit` earlier. Checks
/// compare strictly, so exactly `limit` of silence is still too little.
pub fn premature(now: SimTime, last_before: SimTime, limit_ms: i64) -> bool {
    (now.since(last_before).millis() as i128) <= i128::from(limit_ms)
}

/// The longest a `BeatTask` waits between two beats: after a failure the client's `period`;
/// after an answer the answer's `clientBeatInterval` — the instance's
/// `preserved.heart.beat.interval` (`toLong`; ≤ 0 is ignored) when the server still has the
/// instance, but the server's *default* (the `clientBeatInterval` switch, 5 s) in a 20404 answer,
/// since the instance whose metadata it would read is gone.
///
/// That last case is a trap: an instance that beats every 1 s with a 2 s delete timeout is
/// fine until it is deleted once; then the 20404 answer makes it wait 5 s, the re-registered
/// instance is deleted at the next check tick, the next beat gets 20404 again, and so on for
/// ever (`InstanceOperatorClientImpl#getHeartBeatInterval` + `BeatTask#run`).
pub fn beat_cycle(period: SimDuration, instance_interval: Option<i64>, server_default: i64) -> SimDuration {
    let answered = [instance_interval.unwrap_or(server_default), server_default];
    answered.into_iter().filter(|i| *i > 0).map(|i| SimDuration(i as u64)).fold(period, SimDuration::max)
}

/// The worst time for one beat chain to reach its server again once the network is whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The longest a request sent before the heal can keep the `BeatTask` busy: its read
    /// timeout (a black-holed request on an open connection) or the connect timeout, and then
    /// the handshake of the retry a one-server list makes at once (`reqApi`'s domain retries).
    pub stall: SimDuration,
    /// The longest a due `BeatTask` waits for a free thread of its app's `BeatReactor` behind
    /// the app's other beats (each a round trip, a handshake, maybe a 20404 re-registration).
    pub queue: SimDuration,
    /// The most latency any link had during the faults: packets still in flight keep it, and a
    /// channel delivers in order, so a fresh request may queue behind them.
    pub slowest: SimDuration,
    /// The longest wait between two beats ([`beat_cycle`]).
    pub cycle: SimDuration,
    /// One way across a healthy link: latency plus jitter.
    pub hop: SimDuration,
}

impl Recovery {
    /// From `quiet` (the later of the last fault and the instance's own registration), the
    /// chain finishes whatever it had in flight (`stall`, `slowest`), waits at most one `cycle`,
    /// and its beat arrives; if the instance was deleted the beat gets 20404 and the
    /// re-registration follows: three hops in all.
    pub fn by(&self, quiet: SimTime) -> SimTime {
        quiet + self.stall + self.queue + self.slowest + self.cycle + SimDuration(3 * self.hop.millis())
    }

    /// For an instance of an app with `instances` instances on `threads` beat threads.
    pub fn queue_for(instances: usize, threads: usize, hop: SimDuration) -> SimDuration {
        let ahead = instances.saturating_sub(1).div_ceil(threads.max(1)) as u64;
        SimDuration(ahead * 6 * hop.millis())
    }

    /// Whether the timeouts leave room for the beat cycle: beats arrive at most `cycle + 2 hops`
    /// apart (a beat, its answer, the next beat), and a check fires only past a timeout. With
    /// less room the instance flaps by design, however healthy the network.
    pub fn has_room(&self, t: &Timeouts) -> bool {
        let gap = (self.cycle.millis() + self.queue.millis() + 2 * self.hop.millis()) as i64;
        !t.skip && t.beat >= gap && t.delete >= gap
    }
}

/// The instances whose console metadata the scenario edits (`update_metadata`): their timeouts
/// are no longer the documented register-time ones, so they are left out of every Nacos
/// invariant.
pub fn edited_instances(s: &Scenario) -> BTreeSet<&str> {
    let edits = s.timeline.iter().filter_map(|e| match &e.action {
        Action::UpdateMetadata { instance, .. } => Some(instance.as_str()),
        _ => None,
    });
    edits.collect()
}

/// Every `clientBeatInterval` switch `server` holds in the run: the start-up one and any a
/// `nacos_switch` sets later.
pub fn answered_intervals(s: &Scenario, server: &str) -> Vec<i64> {
    let set = s.timeline.iter().filter_map(|e| match &e.action {
        Action::NacosSwitch { servers, switches } if servers.iter().any(|v| v == server) => {
            switches.client_beat_interval
        }
        _ => None,
    });
    let start = s.nacos.servers.iter().filter(|v| v.name == server).map(|v| v.config.client_beat_interval);
    start.chain(set).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts(beat: i64, delete: i64) -> Timeouts {
        Timeouts { beat, delete, skip: false, interval: None }
    }

    #[test]
    fn metadata_is_read_as_convert_utils_reads_it() {
        // ConvertUtils.toLong: blank → 0, Long.parseLong (sign allowed, no spaces), 0 on a throw.
        for (text, want) in [("", 0), ("  ", 0), ("100", 100), ("+100", 100), ("-1", -1), (" 100", 0)] {
            assert_eq!(java_to_long(text), want, "{text:?}");
        }
        for text in ["10s", "1e3", "+", "-", "9223372036854775808"] {
            assert_eq!(java_to_long(text), 0, "{text:?} makes parseLong throw");
        }
        let md = |pairs: &[(&str, &str)]| -> Metadata {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        assert_eq!(
            documented_timeouts(&md(&[])),
            Timeouts { beat: 15_000, delete: 30_000, skip: false, interval: None }
        );
        let t = documented_timeouts(&md(&[(HEART_BEAT_TIMEOUT_KEY, "abc"), (ENABLE_CLIENT_BEAT_KEY, "Yes")]));
        assert_eq!(
            (t.beat, t.delete, t.skip),
            (0, 30_000, true),
            "a present but unreadable value is 0, not the default"
        );
    }

    #[test]
    fn the_model_reads_metadata_as_the_invariants_expect() {
        // The invariants do not trust the server's own reading; where the two part, a scenario
        // shows it as a violation. This pins the agreement on the awkward values.
        let values = ["", " ", "0", "1000", "+1000", "-1", " 1000", "1000 ", "10s", "true", "YES", "on", "T", "n"];
        for key in [HEART_BEAT_TIMEOUT_KEY, IP_DELETE_TIMEOUT_KEY, HEART_BEAT_INTERVAL_KEY, ENABLE_CLIENT_BEAT_KEY] {
            for v in values {
                let md: Metadata = [(key.to_string(), v.to_string())].into_iter().collect();
                assert_eq!(Timeouts::from_metadata(&md), documented_timeouts(&md), "{key} = {v:?}");
            }
        }
    }

    #[test]
    fn a_crashed_instance_is_acted_on_by_its_last_beat_plus_timeout_plus_one_check_period() {
        // scenarios/nacos/01-crash.toml: last beat 10.003 s; ticks at 25.003 s (exactly 15 s: too
        // early, strict >) and 30.003 s; deleted at 45.003 s. Both bounds are met exactly.
        assert_eq!(acted_by(SimTime(10_003), 15_000, None), SimTime(30_003));
        assert_eq!(acted_by(SimTime(10_003), 30_000, None), SimTime(45_003));
    }

    #[test]
    fn a_paused_server_is_given_one_check_period_after_its_resume() {
        // scenarios/nacos/10-server-gc-pause.toml: paused 40.5–70.5 s; the overdue checks run at
        // the resume, and the bound allows one period more.
        assert_eq!(acted_by(SimTime(40_000), 15_000, Some(SimTime(70_500))), SimTime(75_500));
        // A resume long before the silence does not matter.
        assert_eq!(acted_by(SimTime(40_000), 15_000, Some(SimTime(1_000))), SimTime(60_000));
    }

    #[test]
    fn a_negative_timeout_acts_as_zero() {
        // ConvertUtils.toLong("-1") = -1: every tick finds the instance too quiet.
        assert_eq!(acted_by(SimTime(1_000), -1, None), SimTime(6_000));
    }

    #[test]
    fn exactly_the_timeout_of_silence_is_not_enough_to_mark_an_instance() {
        // UnhealthyInstanceChecker#doCheck: now - lastHeartBeatTime > timeout, strictly.
        assert!(premature(SimTime(20_001), SimTime(5_001), 15_000));
        assert!(!premature(SimTime(20_002), SimTime(5_001), 15_000));
    }

    #[test]
    fn a_beat_stuck_on_a_dead_connection_delays_recovery_by_at_most_its_read_timeout() {
        // A beat sent into a cut just before the heal waits for its 50 s read timeout at worst
        // (TCP usually delivers it earlier, at its next retransmission); the one-server retry
        // that follows needs a handshake; then one beat cycle and three hops.
        let r = Recovery {
            stall: SimDuration(50_002),
            queue: SimDuration::ZERO,
            slowest: SimDuration::ZERO,
            cycle: SimDuration::from_secs(5),
            hop: SimDuration(1),
        };
        assert_eq!(r.by(SimTime(80_500)), SimTime(135_505));
    }

    #[test]
    fn a_beat_may_wait_behind_the_other_beats_of_its_app() {
        // BeatReactor's ScheduledThreadPoolExecutor: three instances on one thread wait for two
        // others' round trips at most.
        assert_eq!(Recovery::queue_for(3, 1, SimDuration(1)), SimDuration(12));
        assert_eq!(Recovery::queue_for(3, 2, SimDuration(1)), SimDuration(6));
        assert_eq!(Recovery::queue_for(1, 1, SimDuration(1)), SimDuration::ZERO);
    }

    #[test]
    fn after_a_20404_the_next_beat_waits_for_the_servers_default_interval() {
        // InstanceOperatorClientImpl#getHeartBeatInterval: the instance's metadata while it is
        // registered; the clientBeatInterval switch (5 s) once it is gone.
        assert_eq!(beat_cycle(SimDuration(1_000), Some(1_000), 5_000), SimDuration(5_000));
        // A non-numeric interval reads as 0 on the server: the client keeps its own period.
        assert_eq!(beat_cycle(SimDuration(5_000), Some(0), 5_000), SimDuration(5_000));
        assert_eq!(beat_cycle(SimDuration(5_000), Some(8_000), 5_000), SimDuration(8_000));
        assert_eq!(beat_cycle(SimDuration(5_000), None, 2_000), SimDuration(5_000));
    }

    #[test]
    fn a_timeout_equal_to_the_interval_leaves_no_room_for_the_round_trip() {
        // NamingUtils#checkInstanceIsLegal accepts timeout == interval, but beats arrive every
        // interval plus a round trip.
        let r = Recovery {
            stall: SimDuration::from_secs(3),
            queue: SimDuration::ZERO,
            slowest: SimDuration::ZERO,
            cycle: SimDuration::from_secs(1),
            hop: SimDuration(1),
        };
        assert!(!r.has_room(&timeouts(1_000, 30_000)));
        assert!(r.has_room(&timeouts(1_002, 1_002)));
        assert!(!r.has_room(&Timeouts { skip: true, ..timeouts(15_000, 30_000) }));
    }
}
