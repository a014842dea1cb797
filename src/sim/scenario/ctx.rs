//! Validation context: collects errors with positions and knows the names defined so far.

use super::error::{nearest, Locator, ScenarioError};
use super::raw::S;
use crate::rocketmq::types::perm;
use crate::sim::clock::{parse_duration, SimDuration, SimTime};
use crate::sim::rng::SimRng;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::Path;

/// The kinds of process a name can refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Namesrv,
    Broker,
    Client,
    NacosServer,
    /// A Nacos application process (one `NamingService`, one or more instances).
    NacosApp,
    Subscriber,
}

impl Kind {
    /// In the order their tables are defined, which is the order names are listed in.
    const ALL: [Kind; 6] =
        [Kind::Namesrv, Kind::Broker, Kind::Client, Kind::NacosServer, Kind::NacosApp, Kind::Subscriber];

    pub fn word(self) -> &'static str {
        match self {
            Kind::Namesrv => "name server",
            Kind::Broker => "broker",
            Kind::Client => "client",
            Kind::NacosServer => "Nacos server",
            Kind::NacosApp => "Nacos instance",
            Kind::Subscriber => "subscriber",
        }
    }

    fn table(self) -> &'static str {
        match self {
            Kind::Namesrv => "[[namesrv]]",
            Kind::Broker => "[[broker]]",
            Kind::Client => "[[client]]",
            Kind::NacosServer => "[[nacos_server]]",
            Kind::NacosApp => "[[instance]]",
            Kind::Subscriber => "[[subscriber]]",
        }
    }
}

/// The longest run a scenario may ask for: 30 days of virtual time. Every other duration in a
/// scenario is capped by it too — a delay longer than any run can never be seen, and the cap keeps
/// every `now + delay` far from the end of `u64` milliseconds.
pub const MAX_DURATION: SimDuration = SimDuration::from_secs(30 * 24 * 3600);

/// The range a duration key accepts. The upper end is always [`MAX_DURATION`]; the lower end is
/// zero where zero means "at once" and costs nothing (latencies, delays), and one millisecond
/// for a period or a timeout: a timer re-armed every 0 ms never lets virtual time move, and the
/// run grows its agenda until memory runs out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Least {
    Zero,
    OneMilli,
}

impl Least {
    fn min(self) -> SimDuration {
        match self {
            Least::Zero => SimDuration::ZERO,
            Least::OneMilli => SimDuration::from_millis(1),
        }
    }
}

/// Java's `Integer.MAX_VALUE`: queue counts, capacities and thread counts are `int`s in RocketMQ
/// and Nacos, so a larger number is a config the real process could not even read.
pub const JAVA_INT_MAX: i64 = i32::MAX as i64;

/// `"between 1ms and 720h (30 days)"`: the allowed range, as error messages print it.
pub fn range_text(least: Least) -> String {
    format!("between {} and {} (30 days)", least.min(), MAX_DURATION)
}

pub struct Ctx<'a> {
    loc: Locator<'a>,
    pub errors: Vec<ScenarioError>,
    pub duration: SimDuration,
    /// Every process name with its kind.
    pub procs: BTreeMap<String, Kind>,
    /// The names of each kind, in definition order. Kept as they are defined so that "all name
    /// servers" (every broker without `namesrvs`) is a lookup, not a scan of every process:
    /// 10,000 brokers used to cost 10,000 scans of 10,000 names.
    by_kind: BTreeMap<Kind, Vec<String>>,
    /// Draws the times written as ranges (`"10m..10m30s"`), from the run's seed: a generator of
    /// its own, so that adding a range to a file does not move the run's other random choices.
    phases: SimRng,
    /// What was drawn, in file order.
    pub drawn: Vec<Drawn>,
}

/// A time written as a range, and the instant drawn for this seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drawn {
    /// Where it was written: `line 12: start`.
    pub what: String,
    pub from: SimTime,
    pub to: SimTime,
    pub value: SimTime,
}

/// Mixed into the seed for the phase generator, so it does not replay the run's own stream.
const PHASE_SALT: u64 = 0x7068_6173_6573_2121;

impl<'a> Ctx<'a> {
    pub fn new(path: &'a Path, source: &'a str) -> Self {
        Ctx {
            loc: Locator::new(path, source),
            errors: Vec::new(),
            duration: SimDuration::ZERO,
            procs: BTreeMap::new(),
            by_kind: BTreeMap::new(),
            phases: SimRng::new(PHASE_SALT),
            drawn: Vec::new(),
        }
    }

    /// The run's seed is known: ranges are drawn from it from now on.
    pub fn seed_phases(&mut self, seed: u64) {
        self.phases = SimRng::new(seed ^ PHASE_SALT);
    }

    /// Where spans point: for checks that build their errors themselves (`limits`).
    pub fn locator(&self) -> &Locator<'a> {
        &self.loc
    }

    pub fn error(&mut self, span: std::ops::Range<usize>, message: impl Into<String>, help: Option<String>) {
        let e = self.loc.error(span, message, help);
        self.errors.push(e);
    }

    /// Records an error and yields `None`, for `?`-style chains.
    pub fn fail<T>(
        &mut self,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
        help: Option<&str>,
    ) -> Option<T> {
        self.error(span, message, help.map(str::to_string));
        None
    }

    pub fn duration(&mut self, v: &S<String>) -> Option<SimDuration> {
        match parse_duration(v.get_ref()) {
            Ok(d) => Some(d),
            Err(e) => {
                let help = match spaced_duration(v.get_ref()) {
                    Some(tight) => format!("write it without spaces: {tight:?}"),
                    None => "write it like \"30s\", \"1m30s\", \"250ms\" or \"1.5s\"".to_string(),
                };
                self.fail(v.span(), format!("invalid duration {:?}: {}", e.input, e.why), Some(&help))
            }
        }
    }

    /// A duration key checked against its range ([`Least`] ..= [`MAX_DURATION`]); the default
    /// when it is absent, or when it is wrong (the error is recorded).
    pub fn duration_in(&mut self, v: &Option<S<String>>, default: SimDuration, key: &str, least: Least) -> SimDuration {
        let Some(v) = v else { return default };
        self.checked(v, key, least, Some(format!("the default is \"{default}\""))).unwrap_or(default)
    }

    /// A required duration key checked against its range; `None` (error recorded) when wrong.
    pub fn checked(&mut self, v: &S<String>, key: &str, least: Least, help: Option<String>) -> Option<SimDuration> {
        let d = self.duration(v)?;
        if d < least.min() || d > MAX_DURATION {
            return self.fail(v.span(), format!("{key} must be {}, got {d}", range_text(least)), help.as_deref());
        }
        Some(d)
    }

    /// An idle time that may be switched off: a duration of 1 ms to 30 days, or `"off"`.
    pub fn idle(&mut self, v: &Option<S<String>>, default: SimDuration) -> Option<SimDuration> {
        match v {
            Some(v) if v.get_ref() == "off" => None,
            Some(v) => {
                let help = format!("write \"off\" to switch idle close off; the default is \"{default}\"");
                Some(self.checked(v, "idle_close", Least::OneMilli, Some(help)).unwrap_or(default))
            }
            None => Some(default),
        }
    }

    /// A point in the run: a duration from the start, no later than the scenario's duration.
    pub fn time(&mut self, v: &S<String>) -> Option<SimTime> {
        let d = self.duration(v)?;
        self.within_run(v.span(), SimTime::ZERO + d)
    }

    /// A process's `start`: a time, or a range `"A..B"` drawn from the seed; zero when absent.
    pub fn time_or_zero(&mut self, v: &Option<S<String>>) -> SimTime {
        v.as_ref().and_then(|v| self.moment(v, "start")).unwrap_or(SimTime::ZERO)
    }

    /// A time that may be written as a range, `"A..B"` (both ends included, `A <= B`, both
    /// within the run): the instant is drawn uniformly, to the millisecond, from the seed, so a
    /// sweep over seeds puts the event at every phase of the cycles it meets.
    pub fn moment(&mut self, v: &S<String>, key: &str) -> Option<SimTime> {
        let Some((a, b)) = v.get_ref().split_once("..") else { return self.time(v) };
        let help = "a range is two times from the start, e.g. \"10m..10m30s\": the instant is drawn from the seed";
        let (from, to) = match (parse_duration(a.trim()), parse_duration(b.trim())) {
            (Ok(a), Ok(b)) => (SimTime::ZERO + a, SimTime::ZERO + b),
            (Err(e), _) | (_, Err(e)) => {
                return self.fail(
                    v.span(),
                    format!("invalid range {:?}: {:?} {}", v.get_ref(), e.input, e.why),
                    Some(help),
                )
            }
        };
        if from > to {
            return self.fail(v.span(), format!("range {:?} ends before it starts", v.get_ref()), Some(help));
        }
        self.within_run(v.span(), to)?;
        let value = from + SimDuration(self.phases.up_to(to.since(from).millis()));
        let line = self.loc.position(v.span().start).0;
        self.drawn.push(Drawn { what: format!("line {line}: {key}"), from, to, value });
        Some(value)
    }

    pub fn within_run(&mut self, span: std::ops::Range<usize>, t: SimTime) -> Option<SimTime> {
        if t.millis() > self.duration.millis() {
            let msg = format!("{t} is past the end of the scenario ({})", self.duration);
            return self.fail(span, msg, Some("raise [scenario] duration or move this earlier"));
        }
        Some(t)
    }

    /// A permission as the docs spell it: `"rw"`, `"r"`, `"w"` or `"-"` — nothing else, so a
    /// typo such as `"wr"` or an empty string is not silently read as something.
    pub fn perm(&mut self, v: &S<String>) -> Option<u32> {
        match perm::from_text(v.get_ref()) {
            Some(p) => Some(p),
            None => self.fail(
                v.span(),
                format!("invalid perm {:?}", v.get_ref()),
                Some("use \"rw\", \"r\", \"w\" or \"-\""),
            ),
        }
    }

    /// A whole number from `min` to Java's `int` maximum: RocketMQ and Nacos read every count
    /// (queues, capacities, cores, threads) into an `int`. The message states both bounds.
    pub fn count(&mut self, v: &S<i64>, what: &str, min: i64) -> Option<u32> {
        let n = *v.get_ref();
        if n < min || n > JAVA_INT_MAX {
            let msg = format!("{what} must be between {min} and {JAVA_INT_MAX} (Java's int), got {n}");
            return self.fail(v.span(), msg, None);
        }
        Some(n as u32)
    }

    /// A `brokerId`: a Java `long` that must not be negative. TOML integers stop at the same
    /// maximum, so only the lower bound can be crossed; the message still states both.
    pub fn broker_id(&mut self, v: &S<i64>) -> Option<u64> {
        self.long(v, "id")
    }

    /// A Java `long` that must not be negative (a `brokerId`, a DataVersion's fields).
    pub fn long(&mut self, v: &S<i64>, what: &str) -> Option<u64> {
        let n = *v.get_ref();
        if n < 0 {
            return self.fail(
                v.span(),
                format!("{what} must be between 0 and {} (Java's long), got {n}", i64::MAX),
                None,
            );
        }
        Some(n as u64)
    }

    /// An IPv4 address written as a dotted quad (`"10.1.0.1"`: four numbers 0–255, no leading
    /// zeros). Both models key their tables by the address text, and neither resolves names:
    /// a RocketMQ broker registers the `ip:port` it will be dialled on, a Nacos client its ip.
    pub fn ipv4(&mut self, v: &S<String>, example: &str) -> Option<Ipv4Addr> {
        match v.get_ref().parse::<Ipv4Addr>() {
            Ok(ip) => Some(ip),
            Err(_) => {
                let help = format!("write an IPv4 address: four numbers from 0 to 255, e.g. {example:?}");
                self.fail(v.span(), format!("invalid ip {:?}", v.get_ref()), Some(&help))
            }
        }
    }

    /// A broker address: `"ip:port"`, an IPv4 literal and a port from 1 to 65535. A hostname is
    /// refused: the name server keys `brokerLiveTable` by this text and clients dial it as is,
    /// so two spellings of one host would be two brokers to the model.
    pub fn addr(&mut self, v: &S<String>) -> Option<()> {
        let text = v.get_ref();
        let help = "write it as \"ip:port\" with an IPv4 address and a port from 1 to 65535, e.g. \"10.0.0.1:10911\"";
        let Some((ip, port)) = text.rsplit_once(':') else {
            return self.fail(v.span(), format!("invalid address {text:?}: no port"), Some(help));
        };
        if ip.parse::<Ipv4Addr>().is_err() {
            return self.fail(v.span(), format!("invalid address {text:?}: {ip:?} is not an IPv4 address"), Some(help));
        }
        match port.parse::<u16>() {
            Ok(p) if p >= 1 => Some(()),
            _ => self.fail(
                v.span(),
                format!("invalid address {text:?}: port must be 1..=65535, got {port:?}"),
                Some(help),
            ),
        }
    }

    /// Defines a process name; duplicates are an error.
    pub fn define(&mut self, name: &S<String>, kind: Kind) -> bool {
        let n = name.get_ref();
        if n.is_empty() || n.contains(char::is_whitespace) {
            self.error(
                name.span(),
                format!("invalid name {n:?}"),
                Some("names are non-empty and have no spaces".into()),
            );
            return false;
        }
        if let Some(prev) = self.procs.get(n) {
            let msg = format!("duplicate name {n:?}: already used by a {}", prev.word());
            self.error(name.span(), msg, Some("every process needs its own name".into()));
            return false;
        }
        self.procs.insert(n.clone(), kind);
        self.by_kind.entry(kind).or_default().push(n.clone());
        true
    }

    /// A reference to a process of one of `kinds`.
    pub fn refer(&mut self, name: &S<String>, kinds: &[Kind]) -> Option<String> {
        let n = name.get_ref();
        match self.procs.get(n) {
            Some(k) if kinds.contains(k) => Some(n.clone()),
            Some(k) => {
                let want: Vec<&str> = kinds.iter().map(|k| k.word()).collect();
                self.fail(name.span(), format!("{n:?} is a {}, expected a {}", k.word(), want.join(" or ")), None)
            }
            None => {
                let candidates: Vec<&str> = Kind::ALL
                    .iter()
                    .filter(|k| kinds.contains(k))
                    .flat_map(|k| self.names(*k))
                    .map(String::as_str)
                    .collect();
                let help = match nearest(n, candidates.iter().copied()) {
                    Some(near) => format!("did you mean {near:?}?"),
                    None if candidates.is_empty() => format!("define it in a {} table", kinds[0].table()),
                    None => format!("defined: {}", candidates.join(", ")),
                };
                let what = if kinds.len() == 1 { kinds[0].word() } else { "process" };
                self.fail(name.span(), format!("unknown {what} {n:?}"), Some(&help))
            }
        }
    }

    /// Names of every process of `kind`, in definition order.
    pub fn names(&self, kind: Kind) -> &[String] {
        self.by_kind.get(&kind).map_or(&[], Vec::as_slice)
    }
}

/// `"5 m"` or `"1m 30s"` spelled tight (`"5m"`, `"1m30s"`), when that is a valid duration: the
/// spaces are then the only mistake, and worth naming (the duration syntax has none).
pub fn spaced_duration(text: &str) -> Option<String> {
    let tight: String = text.split_whitespace().collect();
    (tight != text.trim() && parse_duration(&tight).is_ok()).then_some(tight)
}
