//! Invariants: properties checked at every event of a run, not only at the end.
//!
//! A scenario opts in with `invariants = [...]` under `[scenario]`; property tests and
//! `routesim explore` turn on those of the scenario's family. Each is stated so that it is true
//! of the real system — where a RocketMQ or Nacos quirk makes the natural statement false, the
//! quirk is named next to it.
//!
//! - [`monitor`] — the watcher: arrivals, process life, faults; the RocketMQ checks.
//! - `arrival` — which deliveries count as ground truth.
//! - `nacos` — the Nacos checks, fed by the same monitor; `nacos_bounds` — their deadlines as
//!   plain functions of what arrived.
//! - `sends` — the producer checks, fed by the same monitor from the producer actor's instants.

mod arrival;
mod derive;
mod distro;
mod ghosts;
mod grpc;
pub mod monitor;
mod nacos;
mod nacos_bounds;
mod sends;
#[cfg(test)]
mod tests_bounded;
#[cfg(test)]
mod tests_convergence;
#[cfg(test)]
mod tests_grpc;
#[cfg(test)]
mod tests_nacos;
#[cfg(test)]
mod tests_nacos_recovery;
#[cfg(test)]
mod tests_sends;
#[cfg(test)]
mod tests_sends_bounds;

use crate::sim::clock::SimTime;
pub use arrival::{Arrival, ArrivalKind, NacosArrival};
pub use distro::settle as distro_settle;
pub use sends::AttemptSeen;
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
    /// server's tables equal those derived from the running brokers' configs as the operator's
    /// actions changed them (history-dependent queues left out: `derive::Configs`), and every
    /// running client's route equals its name server's answer — except a topic no name server
    /// has any more, which clients keep (TOPIC_NOT_EXIST keeps the old route).
    Convergence,
    /// A naming server marks an instance unhealthy (`UnhealthyInstanceChecker`) only when no beat
    /// or registration from it has *arrived* there for longer than its heart-beat timeout
    /// (strictly), deletes it (`ExpiredInstanceChecker`) only after longer than its delete
    /// timeout, and drops its client (`ExpiredClientCleaner`) only after longer than
    /// `client_expired_time` — so an instance whose beats keep arriving within its timeout stays
    /// healthy. "Arrived" means accepted by the running server process, read off the network.
    ///
    /// The timeouts are the *server's* reading of the metadata (`ConvertUtils.toLong`: a
    /// non-numeric value is 0 ms), so the flapping trap of scenario 05 is not a violation: it
    /// is the server doing what it reads. An arrival in the very instant of the check does not
    /// count: the check and the request race in Java too.
    NacosStaysHealthy,
    /// An instance silent towards its server since its last arrival `L` is unhealthy (or gone)
    /// there by `L + heart-beat timeout + 5 s` and absent by `L + delete timeout + 5 s` — the 5 s
    /// being the check period. With `expire_instance = false` nothing is deleted by the check,
    /// and "absent" is due from the client cleaner instead, by `U + client_expired_time + 5 s`,
    /// `U` being the last arrival of anything from that `ip:port`. A server that was paused
    /// re-phases its grids on resume and runs what fell due, so both bounds are at least the
    /// resume + 5 s; while paused it is not checked. Instances with `enableClientBeat=true` are
    /// never checked by Nacos and are left out.
    NacosBoundedExpiry,
    /// Once every fault is healed (no cut, loss, slow link or paused process left), an instance
    /// whose application runs (and is not shutting down) is registered and healthy on its one
    /// server within `max(read_timeout, connect_timeout) + handshake + queue + beat cycle + 3
    /// one-way latencies` of the last fault, its app's (re)start plus its start offset, or its
    /// server's restart — whichever is latest — and stays so. The read timeout is there because
    /// a beat sent into a black hole before the heal may block its `BeatTask` for up to
    /// `rtimeout` (50 s by default; TCP usually delivers it sooner, scenario 06), after which the
    /// one-server retry connects afresh (the handshake); `queue` is the wait for one of the app's
    /// beat threads behind its other beats; the three latencies are a beat, its 20404 answer and
    /// the re-registration.
    ///
    /// Left out, because Nacos does not promise it for them: instances whose app lists several
    /// servers (without Distro a 1.x client spreads its beats at random, scenario 08), and
    /// instances whose timeouts leave no room for the beat cycle plus a round trip. Two quirks
    /// make that room larger than it looks: `checkInstanceIsLegal` accepts a timeout equal to
    /// the interval, but beats arrive every interval *plus* a round trip; and a 20404 answer
    /// carries the server's *default* interval (5 s), not the instance's, because the instance
    /// it would read it from is gone — so an instance with a 1 s interval and a 2 s delete
    /// timeout, once deleted, is deleted again at every check tick after re-registering, for
    /// ever (`nacos_bounds::beat_cycle`).
    NacosRecovery,
    /// Once every fault has been healed for the settling time (`distro::settle`: a restarted
    /// member's last snapshot and the copy expiry after it, or membership and client recovery,
    /// then Distro's sync retry and verify repair — 269.2 s with the defaults and three members),
    /// the running members of each Nacos cluster hold the same instances of every service, with
    /// the same health. Before that they may disagree: that is
    /// Distro's eventual consistency (lessons 16–19).
    DistroAgreement,
    /// A 2.x client's connection set up (as the client sees it) after the run's last fault is
    /// never unregistered by its
    /// member (closed, or ejected after an unanswered `ClientDetectionRequest`) while the client
    /// runs and no fault is in force: a running client answers the detection, and its health
    /// checks keep the connection busy.
    GrpcStaysConnected,
    /// A 2.x client that dies — and nothing fails after it — is gone from every running member
    /// within its detection (a kill: the FIN's latency; a host down: `KEEP_ALIVE_TIME` 20 s + the
    /// ejector's 3 s period + the 5 s detection) plus the Distro sync lag — not before the members
    /// have recovered from the fault before it, nor, for a client that had moved members, before
    /// its older connection's copies can have expired (see `grpc`).
    GrpcGoneInTime,
    /// A synchronous send ends no later than its `sendMsgTimeout` plus the connect timeout after
    /// it began, and does end. `DefaultMQProducerImpl#sendDefaultImpl` starts no attempt once
    /// `timeout < costTime` and gives each attempt only what is left; but an attempt that must
    /// open a connection first waits for it in `NettyRemotingClient#getAndCreateChannel`
    /// (`awaitUninterruptibly()` on a future Netty fails after `connectTimeoutMillis`, 3 s), and
    /// only then finds its time spent (`left <= 0`): the budget does not cut the connect. So the
    /// natural statement — never longer than the timeout — is false in Java. Async sends are left
    /// out (their timeouts come from `scanResponseTable`, one to two seconds late), and so is a send whose
    /// client was paused while it ran. Measured from the actor's instants, not the note's.
    SendWithinTimeout,
    /// Every attempt goes to a broker name and write queue that the route the producer's client
    /// held when the send began lists as writable, at the master address a route of the topic
    /// held since then, or any route the client holds now, gives that name. The queue is the start route's: Java's retries choose from the
    /// `TopicPublishInfo` the send looked up before its loop (`sendDefaultImpl`), which a route
    /// update replaces without changing. The address is read from `brokerAddrTable` as it is at
    /// the attempt (`findBrokerAddressInPublish`), which every changed route of the client, of
    /// any topic, updates: a failover moves it. An async retry's queue id is not checked: it
    /// re-sends the first request, queue id and all, to another broker
    /// (`MQClientAPIImpl#onExceptionImpl`).
    SendsFollowRoute,
    /// Once every fault has been healed for the settling time (245 s, as for `convergence`), a
    /// send that begins while its client's route lists only running masters that store the
    /// topic with at least the route's queues succeeds, unless a fault or a pause of its client
    /// overtakes it while it runs (Java fails such a send correctly). Sends are not promised anything when the
    /// route is not sound that way — RocketMQ keeps routing to a broker whose topic was deleted
    /// (TOPIC_NOT_EXIST, retried elsewhere by a sync send, not by an async one), to a topic no
    /// name server has any more (the client keeps its last route), or to queues an
    /// `updateTopic` took away until the route catches up.
    SendsRecover,
}

impl Invariant {
    pub const ALL: [Invariant; 13] = [
        Invariant::ConsistentTables,
        Invariant::NoFalseExpiry,
        Invariant::BoundedExpiry,
        Invariant::Convergence,
        Invariant::NacosStaysHealthy,
        Invariant::NacosBoundedExpiry,
        Invariant::NacosRecovery,
        Invariant::DistroAgreement,
        Invariant::GrpcStaysConnected,
        Invariant::GrpcGoneInTime,
        Invariant::SendWithinTimeout,
        Invariant::SendsFollowRoute,
        Invariant::SendsRecover,
    ];

    /// The invariants about RocketMQ name servers, brokers, clients and producers.
    pub const ROCKETMQ: [Invariant; 7] = [
        Invariant::ConsistentTables,
        Invariant::NoFalseExpiry,
        Invariant::BoundedExpiry,
        Invariant::Convergence,
        Invariant::SendWithinTimeout,
        Invariant::SendsFollowRoute,
        Invariant::SendsRecover,
    ];

    /// The invariants about Nacos naming servers and their ephemeral instances.
    pub const NACOS: [Invariant; 3] =
        [Invariant::NacosStaysHealthy, Invariant::NacosBoundedExpiry, Invariant::NacosRecovery];

    /// The spelling in scenario files.
    pub fn key(self) -> &'static str {
        match self {
            Invariant::ConsistentTables => "consistent_tables",
            Invariant::NoFalseExpiry => "no_false_expiry",
            Invariant::BoundedExpiry => "bounded_expiry",
            Invariant::Convergence => "convergence",
            Invariant::NacosStaysHealthy => "nacos_stays_healthy",
            Invariant::NacosBoundedExpiry => "nacos_bounded_expiry",
            Invariant::NacosRecovery => "nacos_recovery",
            Invariant::DistroAgreement => "distro_agreement",
            Invariant::GrpcStaysConnected => "grpc_stays_connected",
            Invariant::GrpcGoneInTime => "grpc_gone_in_time",
            Invariant::SendWithinTimeout => "send_within_timeout",
            Invariant::SendsFollowRoute => "sends_follow_route",
            Invariant::SendsRecover => "sends_recover",
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
