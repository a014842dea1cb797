//! Virtual time: `SimTime` (an instant) and `SimDuration`, both whole milliseconds.
//!
//! RocketMQ and Nacos measure every timeout in milliseconds (`System.currentTimeMillis()`), so the
//! model does too. The simulation starts at `SimTime::ZERO`; nothing in model code reads the wall
//! clock. Durations in scenario files are written like `"30s"`, `"1m30s"`, `"250ms"` or `"1.5s"`.

use serde::Serialize;
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of virtual time, in milliseconds since the scenario started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A span of virtual time, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);

    pub fn millis(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier`, or zero when `earlier` is in the future.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms)
    }

    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1000)
    }

    pub fn millis(self) -> u64 {
        self.0
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<SimDuration> for SimTime {
    type Output = SimTime;
    fn sub(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(d.0))
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

/// `125.000s`: seconds with millisecond precision, the format of every timeline line.
impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}s", self.0 / 1000, self.0 % 1000)
    }
}

/// The shortest exact spelling: `30s`, `1m30s`, `250ms`, `2h`, `1.5s`.
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        if ms == 0 {
            return f.write_str("0s");
        }
        if ms % 1000 != 0 {
            return if ms > 1000 { write!(f, "{}.{:03}s", ms / 1000, ms % 1000) } else { write!(f, "{ms}ms") };
        }
        let mut s = ms / 1000;
        let (h, m) = (s / 3600, (s % 3600) / 60);
        s %= 60;
        if h > 0 {
            write!(f, "{h}h")?;
        }
        if m > 0 {
            write!(f, "{m}m")?;
        }
        if s > 0 {
            write!(f, "{s}s")?;
        }
        Ok(())
    }
}

/// Why a duration string was rejected; the scenario loader adds the file position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {input:?}: {why} (write it like \"30s\", \"1m30s\", \"250ms\" or \"1.5s\")")]
pub struct DurationError {
    pub input: String,
    pub why: &'static str,
}

/// Parses `"30s"`, `"1m30s"`, `"250ms"`, `"2h"`, `"1.5s"`, `"0s"`.
///
/// Each part is a number followed by a unit (`h`, `m`, `s`, `ms`); units must come in decreasing
/// order and the result must be a whole number of milliseconds.
pub fn parse_duration(input: &str) -> Result<SimDuration, DurationError> {
    let err = |why| DurationError { input: input.to_string(), why };
    let s = input.trim();
    if s.is_empty() {
        return Err(err("it is empty"));
    }
    let mut total_us: u128 = 0;
    let mut rest = s;
    let mut last_rank = u8::MAX;
    while !rest.is_empty() {
        let num_len =
            rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(|| err("a number needs a unit"))?;
        if num_len == 0 {
            return Err(err("expected a number"));
        }
        let (num, after) = rest.split_at(num_len);
        let unit_len = after.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let (scale_us, rank): (u128, u8) = match unit {
            "h" => (3_600_000_000, 3),
            "m" => (60_000_000, 2),
            "s" => (1_000_000, 1),
            "ms" => (1_000, 0),
            "" => return Err(err("a number needs a unit")),
            _ => return Err(err("unknown unit (use h, m, s or ms)")),
        };
        if rank >= last_rank {
            return Err(err("units must go from largest to smallest, each once"));
        }
        last_rank = rank;
        total_us += parse_scaled(num, scale_us).ok_or_else(|| err("not a valid number"))?;
        rest = after;
    }
    if total_us % 1000 != 0 {
        return Err(err("it is not a whole number of milliseconds"));
    }
    u64::try_from(total_us / 1000).map(SimDuration).map_err(|_| err("it is too large"))
}

/// `"1.5"` scaled by `scale` (an integer number of microseconds per unit), exactly.
fn parse_scaled(num: &str, scale: u128) -> Option<u128> {
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty() && frac.is_empty() || frac.contains('.') || frac.len() > 9 {
        return None;
    }
    let int: u128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut value = int.checked_mul(scale)?;
    if !frac.is_empty() {
        let digits: u128 = frac.parse().ok()?;
        let denom = 10u128.pow(frac.len() as u32);
        let scaled = digits * scale;
        if scaled % denom != 0 {
            return None;
        }
        value = value.checked_add(scaled / denom)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_spellings_scenarios_use() {
        assert_eq!(parse_duration("30s"), Ok(SimDuration(30_000)));
        assert_eq!(parse_duration("1m30s"), Ok(SimDuration(90_000)));
        assert_eq!(parse_duration("250ms"), Ok(SimDuration(250)));
        assert_eq!(parse_duration("2h"), Ok(SimDuration(7_200_000)));
        assert_eq!(parse_duration("1.5s"), Ok(SimDuration(1_500)));
        assert_eq!(parse_duration("0s"), Ok(SimDuration(0)));
        assert_eq!(parse_duration("1m5s250ms"), Ok(SimDuration(65_250)));
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        for bad in ["", "30", "s", "5x", "1s1m", "1s1s", "0.0001s", "1..5s", "-5s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn displays_round_trip() {
        for ms in [0, 1, 250, 1000, 1500, 30_000, 90_000, 3_600_000, 3_723_000, 65_250] {
            let d = SimDuration(ms);
            assert_eq!(parse_duration(&d.to_string()), Ok(d), "{d}");
        }
    }

    #[test]
    fn time_arithmetic_saturates_instead_of_wrapping() {
        // A wrapped `now + delay` is an instant in the past: a timer due at once, for ever.
        assert_eq!(SimTime(u64::MAX - 1) + SimDuration(5), SimTime(u64::MAX));
        let mut t = SimTime(u64::MAX);
        t += SimDuration(1);
        assert_eq!(t, SimTime(u64::MAX));
        assert_eq!(SimDuration(u64::MAX) + SimDuration(1), SimDuration(u64::MAX));
        assert_eq!(SimTime(3) - SimDuration(5), SimTime::ZERO);
    }

    #[test]
    fn instants_print_as_seconds_with_millis() {
        assert_eq!(SimTime(125_000).to_string(), "125.000s");
        assert_eq!(SimTime(10).to_string(), "0.010s");
    }
}
