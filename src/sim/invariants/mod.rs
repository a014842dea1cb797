//! Invariants: properties checked at every event of a run, not only at the end.
//!
//! A scenario opts in with `invariants = [...]` under `[scenario]`; property tests and
//! `routesim explore` turn them all on. Each is stated so that it is true of the real system —
//! where a RocketMQ quirk makes the natural statement false, the quirk is named next to it.

mod derive;
pub mod monitor;

use crate::sim::clock::SimTime;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// `clusterAddrTable`, `brokerAddrTable`, `topicQueueTable` and `brokerLiveTable` agree
    /// with each other (`RouteInfoManager::check_consistency`), after every event.
    ConsistentTables,
    /// A name server expires a broker only when no registration or heartbeat from it has
    /// *arrived* there for longer than its timeout (strictly). "Arrived" is read off the network,
    /// not the table, so a table that forgets a refresh is caught.
    NoFalseExpiry,
    /// A broker silent towards a name server since its last arrival `L` has no live entry there
    /// after `L + timeout + scan interval + batch delay` (plus the scan's initial delay after a
    /// name-server start). Orphan entries — an address no group lists any more — never expire
    /// in RocketMQ (§2.4) and are left out.
    BoundedExpiry,
    /// At the end of a run whose faults have all been healed long enough, every running name
    /// server's tables equal those derived from the running brokers' configs, and every
    /// running client's route equals its name server's answer — except a topic no name server
    /// has any more, which clients keep (TOPIC_NOT_EXIST keeps the old route).
    Convergence,
}

impl Invariant {
    pub const ALL: [Invariant; 4] =
        [Invariant::ConsistentTables, Invariant::NoFalseExpiry, Invariant::BoundedExpiry, Invariant::Convergence];

    /// The spelling in scenario files.
    pub fn key(self) -> &'static str {
        match self {
            Invariant::ConsistentTables => "consistent_tables",
            Invariant::NoFalseExpiry => "no_false_expiry",
            Invariant::BoundedExpiry => "bounded_expiry",
            Invariant::Convergence => "convergence",
        }
    }

    pub fn from_key(key: &str) -> Option<Invariant> {
        Invariant::ALL.into_iter().find(|i| i.key() == key)
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A known bug planted on purpose, so tests can prove the invariants catch it. Test-only: no
/// scenario key reaches it, only [`crate::sim::runner::RunOptions::mutation`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// The scanner expires entries with `last + timeout <= now` instead of `<`.
    ScanAtTimeout,
}

/// One broken invariant: which, when, and what the tables looked like against what they
/// should have been.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: Invariant,
    pub at: SimTime,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} violated at {}: {}", self.invariant, self.at, self.detail)
    }
}
