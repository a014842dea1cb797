//! Planted bugs: the one switch the pure models read from the run machinery's test kit.
//!
//! It sits with the ground types (clock, ids, rng) so that `rocketmq/` and `nacos/` can consult
//! it without importing upwards from `invariants/`, which reads the models' output.

/// A known bug planted on purpose, so tests can prove the invariants catch it. Test-only: no
/// scenario key reaches it, only [`crate::sim::runner::RunOptions::mutation`].
///
/// Each stands for a bug the real code could have — one method of apache/rocketmq or
/// alibaba/nacos getting one step wrong. All but the two comparison bugs (`ScanAtTimeout`,
/// `NacosUnhealthyAtTimeout`) are chosen so that exactly one invariant catches them: on the
/// saved counterexample the others hold (`tests/it/properties.rs` checks both). A bug that broke
/// tables for good would be seen by `convergence` as well, so the RocketMQ ones leave damage the
/// next registration repairs, or damage only one invariant looks at. (The `>=` health check is
/// sometimes caught by `nacos_recovery` too: an instance whose timeout equals its interval is
/// flipped unhealthy at every check tick its beat lands on.)
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// The scanner expires entries with `last + timeout <= now` instead of `<`.
    ScanAtTimeout,
    /// `RouteInfoManager#unRegisterBroker` runs step 5 — taking the broker name out of its
    /// cluster's set in `clusterAddrTable` — for every request, without its `if
    /// (removeBrokerName)` guard: a slave that goes takes its whole group out of the cluster while
    /// the master still serves it. `consistent_tables` sees it at once ("group ... is not in that
    /// cluster's set"); the next registration of any member puts the name back (step 1), so the
    /// tables have converged again long before the end, and routes never read that table.
    UnregisterAlwaysLeavesCluster,
    /// `RouteInfoManager#scanNotActiveBroker` compares every entry with the 4.x constant
    /// `DEFAULT_BROKER_CHANNEL_EXPIRED_TIME` (120 s) instead of the entry's own
    /// `heartbeatTimeoutMillis` — the 10 s an acting-master broker registers with. A silent
    /// acting-master broker stays 120 s instead of 10–15 s: late (`bounded_expiry`), never early,
    /// and gone in the end.
    ScanIgnoresBrokerTimeout,
    /// `TopicRouteData#topicRouteDataChanged` — which `MQClientInstance#updateTopicRouteInfoFromNameServer`
    /// asks before replacing its cached route — compares only the queue datas, not the broker
    /// datas: a route whose addresses changed (a slave gone or back, a master taken out) but whose
    /// queues did not is "unchanged", and the client keeps the old addresses. Only `convergence`
    /// reads client routes.
    RouteChangeIgnoresBrokers,
    /// Nacos's `ExpiredInstanceChecker#doCheck` never deletes, as if it read the `expireInstance`
    /// switch as off: a silent instance turns unhealthy on time but stays listed until the
    /// `ExpiredClientCleaner` takes its client, 45 s or 3 min after its last beat instead of 30 s
    /// (`nacos_bounded_expiry`). A beat that comes back finds it and makes it healthy again.
    NacosNeverDeletes,
    /// The 1.x client's `BeatTask#run` without its `RESOURCE_NOT_FOUND` branch: a `20404` answer
    /// (a light beat for an instance the server has deleted or forgotten) is taken as a normal
    /// answer and the instance is never registered again — what users of #9959 saw when beats got
    /// a 500 instead. Only `nacos_recovery` asks for a running instance to come back; the others
    /// say nothing about an absent one.
    NacosIgnoresNotFound,
    /// Nacos's `UnhealthyInstanceChecker` marks an instance unhealthy when
    /// `now - lastHeartBeatTime >= timeout` instead of `>`: wrong only when a check tick lands
    /// exactly on the timeout. Two generated shapes make that happen: a silent instance whose
    /// beats arrived in phase with the check grid (0 ms latency), and — more often — an instance
    /// whose timeout equals its interval (`checkInstanceIsLegal` allows it), whose next beat
    /// arrives in the very instant of the check and so does not count.
    NacosUnhealthyAtTimeout,
    /// The producer hands each attempt the whole `sendMsgTimeout` instead of what is left of it
    /// — `sendKernelImpl(..., timeout)` for `timeout - costTime` in `sendDefaultImpl` — so the
    /// attempts of one send can wait three timeouts between them. Only a send whose attempts
    /// time out twice shows it (a cluster of one group whose master hangs or loses its host,
    /// or a producer cut off from its brokers), and only `send_within_timeout` measures it.
    ProducerIgnoresTimeout,
    /// Distro's verify answers "ok" without renewing the copy
    /// (`ConnectionBasedClientManager#verifyClient` without `setLastRenewTime`,
    /// `EphemeralIpPortClientManager#verifyClient` without `ClientBeatUpdateTask`): every copy
    /// expires 3 min after the sync that made it, the next verify finds it missing and the owner
    /// re-sends it, so the members disagree for a few seconds every 3 minutes. Only
    /// `distro_agreement` compares members.
    DistroVerifyDoesNotRenew,
    /// The member does nothing when a 2.x client's TCP connection closes (no
    /// `AddressTransportFilter#transportTerminated` → `ConnectionManager#unregister`): a killed
    /// client stays registered until the ejector finds its connection idle 20 s and the
    /// detection fails — 20–28 s instead of a millisecond. Only `grpc_gone_in_time` times it.
    GrpcIgnoresTransportTerminated,
}
