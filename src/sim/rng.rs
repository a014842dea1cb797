//! The one seeded random number generator of a run.
//!
//! Every random choice — link jitter, packet loss, a client's first name server, start phases —
//! is drawn from this generator, in the order the single-threaded simulation asks for them. The
//! same seed therefore replays the same run. ChaCha8 is used because its output is specified and
//! stable across `rand` releases, unlike `StdRng`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub struct SimRng {
    inner: ChaCha8Rng,
}

impl SimRng {
    pub fn new(seed: u64) -> Self {
        SimRng { inner: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// A value in `0..=max`.
    #[inline(always)]
    pub fn up_to(&mut self, max: u64) -> u64 {
        if max == 0 {
            0
        } else {
            self.inner.gen_range(0..=max)
        }
    }

    /// An index in `0..len` (`len` must be positive).
    pub fn index(&mut self, len: usize) -> usize {
        self.inner.gen_range(0..len)
    }

    /// True with probability `p` (0 never draws, so a loss-free network consumes no randomness).
    #[inline(always)]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.inner.gen::<f64>() < p
    }

    /// A fresh seed for a sub-generator (property tests derive per-case seeds this way).
    pub fn next_seed(&mut self) -> u64 {
        self.inner.gen()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_values() {
        let (mut a, mut b) = (SimRng::new(7), SimRng::new(7));
        let xs: Vec<u64> = (0..20).map(|_| a.up_to(1000)).collect();
        let ys: Vec<u64> = (0..20).map(|_| b.up_to(1000)).collect();
        assert_eq!(xs, ys);
    }

    #[test]
    fn zero_probability_consumes_nothing() {
        let (mut a, mut b) = (SimRng::new(1), SimRng::new(1));
        assert!(!a.chance(0.0));
        assert_eq!(a.up_to(1 << 40), b.up_to(1 << 40));
    }
}
