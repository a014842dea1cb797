//! Per-producer charts of the report, on the swimlanes' time axis: the sends that ended in each
//! time bucket, stacked ok / retried-ok / failed, and the slowest send and the p99 of each bucket.
//! A broker's death and the route dropping it show as a shape: retries or failures begin, then stop.

use super::model::{process, Builder};
use crate::sim::clock::{SimDuration, SimTime};
use crate::view::Window;
use std::collections::BTreeMap;
use std::fmt::Write;

/// At most this many buckets per producer, however long the window: a 30-day run keeps about
/// 2000 buckets a producer, not one per second.
pub const MAX_BUCKETS: u64 = 2000;

/// The narrowest bucket. A producer sends at most once a millisecond, and a second is the unit
/// its rate is written in.
const MIN_WIDTH: SimDuration = SimDuration::from_secs(1);

/// At most this many distinct latencies kept per bucket for its p99. The simulator's latencies
/// take a handful of values (round trips, the 3 s budget), so this is exact in practice; past it
/// the two closest values merge into the larger one, so the p99 may grow a little, never shrink.
const MAX_LATENCIES: usize = 64;

/// What the sends that ended in one bucket did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bucket {
    /// Stored at the first attempt.
    pub ok: u64,
    /// Stored after more than one attempt.
    pub retried: u64,
    /// Ended with an exception.
    pub failed: u64,
    /// The slowest send, exactly.
    pub max: SimDuration,
    /// Latency in milliseconds → how many sends took it (bounded by [`MAX_LATENCIES`]).
    latencies: BTreeMap<u64, u64>,
}

impl Bucket {
    fn add(&mut self, ok: bool, attempts: u32, elapsed: SimDuration) {
        match (ok, attempts) {
            (true, 0 | 1) => self.ok += 1,
            (true, _) => self.retried += 1,
            (false, _) => self.failed += 1,
        }
        self.max = self.max.max(elapsed);
        *self.latencies.entry(elapsed.millis()).or_default() += 1;
        if self.latencies.len() > MAX_LATENCIES {
            self.merge_closest();
        }
    }

    /// Folds the smaller of the two closest latencies into the larger.
    fn merge_closest(&mut self) {
        let keys: Vec<u64> = self.latencies.keys().copied().collect();
        let Some(lo) = keys.windows(2).min_by_key(|w| w[1] - w[0]).map(|w| w[0]) else { return };
        let hi = keys[keys.iter().position(|&k| k == lo).expect("a key") + 1];
        let n = self.latencies.remove(&lo).unwrap_or(0);
        *self.latencies.entry(hi).or_default() += n;
    }

    pub fn sends(&self) -> u64 {
        self.ok + self.retried + self.failed
    }

    /// The 99th percentile, by nearest rank like the `sends` expectation's figures.
    pub fn p99(&self) -> SimDuration {
        let rank = (self.sends() * 99).div_ceil(100).max(1);
        let mut seen = 0;
        for (&ms, &n) in &self.latencies {
            seen += n;
            if seen >= rank {
                return SimDuration(ms);
            }
        }
        SimDuration::ZERO
    }
}

/// Every producer's buckets, filled as the run goes. Only sends that end inside the window count.
pub struct SendCharts {
    from: SimTime,
    /// The window's end, or the run's if it ends first.
    to: SimTime,
    pub width: SimDuration,
    /// Producer actor (`client/producer`) → bucket index → bucket.
    producers: BTreeMap<String, BTreeMap<u64, Bucket>>,
}

impl SendCharts {
    /// Buckets of `max(1 s, drawn length / MAX_BUCKETS)`, rounded up to whole seconds so their
    /// edges read cleanly, over the window as far as the run's `end`.
    pub fn new(window: Window, end: SimTime) -> Self {
        let to = window.to.min(end).max(window.from);
        let per = to.since(window.from).millis().div_ceil(MAX_BUCKETS).div_ceil(1000) * 1000;
        SendCharts { from: window.from, to, width: SimDuration(per).max(MIN_WIDTH), producers: BTreeMap::new() }
    }

    /// One finished send (`RmqNote::SendDone`) of the producer `actor`, ended at `t`.
    pub fn record(&mut self, actor: &str, t: SimTime, ok: bool, attempts: u32, elapsed: SimDuration) {
        if t < self.from || t > self.to {
            return;
        }
        // A send ending exactly at the window's end belongs to the last bucket, not a new one.
        let last = self.to.since(self.from).millis().saturating_sub(1) / self.width.millis();
        let i = (t.since(self.from).millis() / self.width.millis()).min(last);
        // The key is built only for a producer's first send, not on every event.
        if !self.producers.contains_key(actor) {
            self.producers.insert(actor.to_string(), BTreeMap::new());
        }
        let buckets = self.producers.get_mut(actor).expect("inserted above");
        buckets.entry(i).or_default().add(ok, attempts, elapsed);
    }
}

/// One producer's two chart rows, ready to draw.
pub struct Chart {
    /// The producer's name, without its client.
    pub producer: String,
    pub sends_row: usize,
    pub latency_row: usize,
    /// Each bucket with sends, by its start; the last may be cut to the window.
    pub buckets: Vec<(SimTime, SimTime, Bucket)>,
    pub max_sends: u64,
    pub max_latency: SimDuration,
}

/// Adds the charts' rows to the model and counts their rects toward the report's limit.
pub(super) fn draw(b: &mut Builder) {
    let sends = std::mem::replace(&mut b.sends, SendCharts::new(Window::whole(), SimTime::ZERO));
    let per = sends.width;
    for (actor, buckets) in sends.producers {
        let actor = actor.as_str();
        let name = actor.rsplit('/').next().unwrap_or(actor);
        let max_sends = buckets.values().map(Bucket::sends).max().unwrap_or(0);
        let max_latency = buckets.values().map(|x| x.max).max().unwrap_or_default();
        let sends_row = b.row(&format!("{name} · sends/{per} (max {max_sends})"), "sends", process(actor));
        let latency_row = b.row(&format!("{name} · latency (max {max_latency})"), "latency", process(actor));
        let producer = name.to_string();
        let mut chart = Chart { producer, sends_row, latency_row, buckets: Vec::new(), max_sends, max_latency };
        for (i, bucket) in buckets {
            let from = sends.from + SimDuration(i * per.millis());
            let to = (from + per).min(sends.to);
            let rects = [bucket.ok, bucket.retried, bucket.failed].iter().filter(|&&n| n > 0).count() + 2;
            if !(0..rects).all(|_| b.room(from)) {
                return;
            }
            chart.buckets.push((from, to, bucket));
        }
        b.m.charts.push(chart);
    }
}

/// What each chart class means, for the legend.
/// The classes of the chart's bars; their colours and meanings are in `legend.rs`, whose tests
/// check each has an entry.
#[cfg(test)]
pub const CLASSES: &[&str] = &["sent-ok", "sent-retried", "sent-failed", "lat-max", "lat-p99"];

pub const CSS: &str = r#"
.chart { vector-effect: non-scaling-stroke; }
.lane.sends rect, .lane.latency rect { fill: #fcfcf7; }
"#;

/// Appends a chart's rects, each row in its own coordinates (top at 0): its sends to `sends`,
/// its latency to `latency`, both `h` high, each scaled to its own maximum.
pub fn svg(sends: &mut String, latency: &mut String, c: &Chart, h: u64) {
    let room = h.saturating_sub(4) as f64;
    let scale = |v: u64, max: u64| if max == 0 { 0.0 } else { v as f64 * room / max as f64 };
    for (from, to, k) in &c.buckets {
        let (x, w) = (from.millis(), to.since(*from).millis().max(1));
        let attrs = format!(r#"data-from="{x}" data-producer="{}""#, super::html::esc(&c.producer));
        let tip =
            format!("{from}–{to}: {} sends: {} ok, {} retried-ok, {} failed", k.sends(), k.ok, k.retried, k.failed);
        // Stacked from the floor of the row: ok, then retried-ok, then failed on top.
        let mut floor = h.saturating_sub(2) as f64;
        for (class, n) in [("sent-ok", k.ok), ("sent-retried", k.retried), ("sent-failed", k.failed)] {
            if n == 0 {
                continue;
            }
            let bar = scale(n, c.max_sends);
            floor -= bar;
            let _ = write!(
                sends,
                r#"<rect class="chart {class}" {attrs} x="{x}" y="{floor:.2}" width="{w}" height="{bar:.2}"><title>{tip}</title></rect>"#
            );
        }
        let tip = format!("{from}–{to}: slowest {}, p99 {} over {} sends", k.max, k.p99(), k.sends());
        // The slowest send behind, the p99 in front: the p99 is never above it.
        for (class, v) in [("lat-max", k.max), ("lat-p99", k.p99())] {
            let bar = scale(v.millis(), c.max_latency.millis()).max(0.5);
            let top = h.saturating_sub(2) as f64 - bar;
            let _ = write!(
                latency,
                r#"<rect class="chart {class}" {attrs} x="{x}" y="{top:.2}" width="{w}" height="{bar:.2}"><title>{tip}</title></rect>"#
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimDuration {
        SimDuration(n)
    }

    fn charts(to_secs: u64) -> SendCharts {
        SendCharts::new(Window::whole(), SimTime(to_secs * 1000))
    }

    #[test]
    fn sends_split_into_ok_retried_and_failed_by_the_bucket_they_ended_in() {
        let mut c = charts(300);
        // Second 65: two first-attempt sends, one stored on its second attempt, one that failed.
        c.record("app1/p", SimTime(65_002), true, 1, ms(2));
        c.record("app1/p", SimTime(65_500), true, 1, ms(2));
        c.record("app1/p", SimTime(65_900), true, 2, ms(4));
        c.record("app1/p", SimTime(65_999), false, 3, ms(3000));
        // Second 66 starts a new bucket.
        c.record("app1/p", SimTime(66_000), true, 1, ms(2));
        let b = &c.producers["app1/p"];
        assert_eq!(c.width, SimDuration::from_secs(1));
        assert_eq!((b[&65].ok, b[&65].retried, b[&65].failed), (2, 1, 1));
        assert_eq!((b[&66].ok, b[&66].retried, b[&66].failed), (1, 0, 0));
        assert_eq!(b.len(), 2, "no bucket for the seconds without sends");
    }

    #[test]
    fn p99_takes_the_nearest_rank_and_max_the_slowest() {
        let mut k = Bucket::default();
        // 99 sends of 2 ms and one of 3 s: rank 99 of 100 is still 2 ms.
        (0..99).for_each(|_| k.add(true, 1, ms(2)));
        k.add(false, 3, ms(3000));
        assert_eq!((k.p99(), k.max), (ms(2), ms(3000)));
        // A second slow one makes rank 100 of 101 slow.
        k.add(false, 3, ms(3000));
        assert_eq!(k.p99(), ms(3000));
        // One send is its own p99.
        let mut one = Bucket::default();
        one.add(true, 1, ms(7));
        assert_eq!((one.p99(), one.max), (ms(7), ms(7)));
    }

    #[test]
    fn a_bucket_keeps_a_bounded_number_of_latencies_and_its_p99_never_shrinks() {
        let mut k = Bucket::default();
        // 1000 sends of 1000 distinct latencies, 1..=1000 ms: the exact p99 is 990 ms.
        (1..=1000).for_each(|l| k.add(true, 1, ms(l)));
        assert!(k.latencies.len() <= MAX_LATENCIES);
        assert_eq!(k.latencies.values().sum::<u64>(), 1000);
        assert!(k.p99() >= ms(990) && k.p99() <= ms(1000), "{}", k.p99());
        assert_eq!(k.max, ms(1000));
    }

    #[test]
    fn a_thirty_day_window_keeps_at_most_two_thousand_buckets_a_producer() {
        let mut c = charts(30 * 24 * 3600);
        assert_eq!(c.width, SimDuration::from_secs(1296), "30 days / 2000, in whole seconds");
        // One send a second for 30 days.
        for s in 0..=30 * 24 * 3600 {
            c.record("app1/p", SimTime(s * 1000), true, 1, ms(2));
        }
        let b = &c.producers["app1/p"];
        assert!(b.len() as u64 <= MAX_BUCKETS, "{} buckets", b.len());
        assert_eq!(
            b.values().map(Bucket::sends).sum::<u64>(),
            30 * 24 * 3600 + 1,
            "the last second joins the last bucket"
        );
    }

    #[test]
    fn only_sends_inside_the_window_count() {
        let w = Window { from: SimTime(60_000), to: SimTime(70_000) };
        let mut c = SendCharts::new(w, SimTime(300_000));
        c.record("app1/p", SimTime(59_999), true, 1, ms(2));
        c.record("app1/p", SimTime(60_000), true, 1, ms(2));
        c.record("app1/p", SimTime(70_001), true, 1, ms(2));
        let b = &c.producers["app1/p"];
        assert_eq!(b.keys().copied().collect::<Vec<_>>(), vec![0]);
        assert_eq!(c.from, SimTime(60_000), "buckets count from the window's start");
    }
}
