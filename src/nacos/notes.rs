//! Nacos trace events and how the timeline words them.
//!
//! Each line says what happened and why, in Nacos's own vocabulary, e.g.
//! `nacos1/health  DEFAULT_GROUP@@orders 10.1.0.1:8080#true: no beat for 19.978s > 15s: unhealthy
//! (UnhealthyInstanceChecker)`. An ordinary beat — answered 10200, nothing changed — is one
//! routine event, hidden from the default timeline.

use crate::nacos::cluster::NodeState;
use crate::nacos::http::Failure;
use crate::nacos::naming::{Change, RegisterSource, Switches, Timeouts};
use crate::nacos::types::{ClientKey, Metadata, ServiceKey, CODE_OK};
use crate::sim::clock::SimDuration;
use crate::sim::name::Name;
use serde::Serialize;
use std::sync::Arc;

/// Why a client registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegisterReason {
    /// The application registers at start-up.
    Startup,
    /// `BeatTask` got `20404` and registers again at once.
    NotFound,
    /// A 2.x client's `registerInstance` over its gRPC connection.
    Grpc,
}

/// Where a subscriber's new view came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewSource {
    Push,
    Poll,
}

/// One host in a subscriber's cached list: the instance's scenario name (or `ip:port`) and health.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeenHost {
    pub instance: Arc<str>,
    pub healthy: bool,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum NacosNote {
    // ---- client: NacosNamingService, BeatReactor, NamingProxy ----
    Registering {
        instance: Name,
        service: ServiceKey,
        reason: RegisterReason,
        first_beat: Option<SimDuration>,
    },
    Registered {
        instance: Name,
        server: Name,
    },
    Beat {
        instance: Name,
        server: Name,
        light: bool,
        code: i32,
        next: Option<SimDuration>,
    },
    LightBeats {
        enabled: bool,
        server: Name,
    },
    AttemptFailed {
        api: &'static str,
        server: Name,
        failure: Failure,
        next: Name,
    },
    CallFailed {
        instance: Name,
        api: &'static str,
        failure: Failure,
        next_beat: Option<SimDuration>,
    },
    Deregistering {
        instance: Name,
    },
    Deregistered {
        instance: Name,
        server: Option<Name>,
    },
    ShutdownComplete,

    // ---- naming server ----
    InstanceRegistered {
        service: ServiceKey,
        client: ClientKey,
        new_client: bool,
        source: RegisterSource,
    },
    InstanceDeregistered {
        service: ServiceKey,
        client: ClientKey,
    },
    BeatNotFound {
        service: ServiceKey,
        client: ClientKey,
    },
    BeatFailed {
        service: ServiceKey,
        client: ClientKey,
        status: u16,
        message: Arc<str>,
    },
    HealthyAgain {
        service: ServiceKey,
        client: ClientKey,
        silent: SimDuration,
    },
    Subscribed {
        service: ServiceKey,
        subscriber: ClientKey,
    },

    // ---- operator: console and switches (words in `notes_ops.rs`) ----
    /// `InstanceOperatorClientImpl#updateInstance` stored console metadata; `timeouts` are the
    /// registered instance's new readings (`None`: not registered here, the metadata waits).
    MetadataUpdated {
        service: ServiceKey,
        client: ClientKey,
        cluster: Arc<str>,
        metadata: Arc<Metadata>,
        timeouts: Option<Timeouts>,
    },
    /// `updateInstance` refused with INVALID_PARAM: no service singleton here.
    MetadataRefused {
        service: ServiceKey,
        client: ClientKey,
        message: Arc<str>,
    },
    /// `SwitchManager#update`: what was set, and the two switches now in force.
    SwitchesSet {
        set: Switches,
        client_beat_interval: i64,
        light_beat_enabled: bool,
    },
    /// An operator call for a server that is not running: it reaches nobody.
    OperationMissed {
        operation: String,
        server: Arc<str>,
        why: &'static str,
    },

    // ---- cluster membership (words in `notes_member.rs`) ----
    /// `MemberInfoReportTask`: the report to `peer` was answered (`failure` none) or failed.
    MemberProbed {
        peer: Arc<str>,
        failure: Option<Failure>,
        from: NodeState,
        to: NodeState,
        fail_count: u32,
    },
    /// `NacosClusterController#report`: `peer`'s own report set it `UP` here (recorded on change).
    MemberReportIn {
        peer: Arc<str>,
        from: NodeState,
        fail_count: u32,
    },

    // ---- Distro between cluster members (words in `notes_distro.rs`) ----
    /// `DistroSyncChangeTask`/`DistroSyncDeleteTask` to `target` about client `conn` failed;
    /// the task is queued again 3 s on (`handleFailedTask`).
    DistroSyncFailed {
        target: Arc<str>,
        conn: Arc<str>,
        op: crate::nacos::cluster::DistroOp,
        why: Arc<str>,
    },
    /// `target` answered a verify of `conn` with a failure (no copy, or another revision):
    /// `ClientVerifyFailedEvent` → a CHANGE to it alone, at once.
    DistroVerifyFailed {
        target: Arc<str>,
        conn: Arc<str>,
    },
    /// `DistroLoadDataTask`: the snapshot from `from` was applied (`processSnapshot`): `clients`
    /// connection clients, now copies here; verify may run (`finishInitial`).
    DistroLoaded {
        from: Arc<str>,
        clients: usize,
    },
    /// `DistroMapper#onEvent`: this member's view changed and now maps the 1.x client `client`
    /// (its `ip:port`) to this member, whose beat checks take it over from the copy it holds.
    DistroTookOver {
        client: ClientKey,
    },
    /// `DistroLoadDataTask`: no peer gave a snapshot this round; the next round in 30 s.
    DistroLoadFailed {
        retry_in: SimDuration,
    },
    /// `ConnectionBasedClientManager.ExpiredClientCleaner`: the copy of `conn` was not renewed
    /// for `idle` (> `clientExpiredTime`) and goes.
    DistroCopyExpired {
        conn: Arc<str>,
        idle: SimDuration,
    },
    /// `DistroFilter#doFilter`: a client's `api` request for the instance `client` (its `ip:port`
    /// tag) is another member's in this member's view: proxied to `target`.
    DistroForwarded {
        api: &'static str,
        client: Arc<str>,
        target: Arc<str>,
    },
    /// The proxied call to `target` failed (`HttpClient#request` caught it): the client is
    /// answered 500 with the exception's text, and its `reqApi` moves on.
    DistroForwardFailed {
        api: &'static str,
        client: Arc<str>,
        target: Arc<str>,
        failure: Failure,
    },

    // ---- 2.x gRPC client and the server's connections (words in `notes_grpc.rs`) ----
    /// `RpcClient`: connected to `server` (`conn` is the id its `ServerCheckResponse` gave);
    /// `previous` is the connection it abandons and closes (a switch), if any.
    GrpcConnected {
        server: Name,
        conn: Arc<str>,
        previous: Option<Arc<str>>,
    },
    /// A connect attempt failed; `retry_in` is the reconnect loop's sleep (`None`: a start-up
    /// try, which moves on to the next server at once).
    GrpcConnectFailed {
        server: Name,
        failure: Failure,
        retry_in: Option<SimDuration>,
    },
    /// The keep-alive `HealthCheckRequest` was answered (routine).
    GrpcHealthOk {
        server: Name,
    },
    /// `RpcClient#healthCheck` failed after `tries` tries (`why`: the last try's failure), so the
    /// client goes UNHEALTHY and reconnects (`switchServerAsync`).
    GrpcHealthFailed {
        server: Name,
        tries: u32,
        why: Failure,
    },
    /// The connection's stream ended under the client (FIN or RST: `onError` / `onCompleted`):
    /// `switchServerAsync`.
    GrpcStreamClosed {
        server: Name,
        conn: Arc<str>,
    },
    /// `RedoScheduledTask`: the instances not registered on the current connection, sent again.
    GrpcRedo {
        server: Name,
        instances: Vec<Name>,
    },
    /// An `InstanceRequest` failed (`failure`); the redo task will try it again.
    GrpcRequestFailed {
        instance: Name,
        server: Name,
        failure: Failure,
    },
    /// Server: `ConnectionManager#register` took connection `conn` from `client`.
    ConnRegistered {
        conn: Arc<str>,
        client: Arc<str>,
    },
    /// Server: `NacosRuntimeConnectionEjector` found `conn` idle for `idle` and sent it a
    /// `ClientDetectionRequest`.
    ConnDetecting {
        conn: Arc<str>,
        client: Arc<str>,
        idle: SimDuration,
    },
    /// Server: the client answered the detection: active again.
    ConnDetected {
        conn: Arc<str>,
        client: Arc<str>,
    },
    /// Server: `ConnectionManager#unregister` — `ejected_idle` set when the ejector did it (no
    /// answer to the detection), else the TCP connection closed (`transportTerminated`).
    ConnUnregistered {
        conn: Arc<str>,
        client: Arc<str>,
        ejected_idle: Option<SimDuration>,
    },
    /// Server: `ConnectionBasedClientManager#clientDisconnected` removed the connection's client
    /// and, at once, every instance it published.
    ConnectionReleased {
        conn: Arc<str>,
        services: Vec<ServiceKey>,
        instances: Vec<ClientKey>,
    },

    // ---- health checker ----
    /// `silent` is the time since the last beat, so the last beat was at `t - silent`;
    /// `delete_timeout` is `None` when `ExpiredInstanceChecker` is off (`expireInstance=false`).
    Unhealthy {
        service: ServiceKey,
        client: ClientKey,
        silent: SimDuration,
        timeout: i64,
        delete_timeout: Option<i64>,
    },
    Expired {
        service: ServiceKey,
        client: ClientKey,
        silent: SimDuration,
        timeout: i64,
    },
    /// `services` are the ones the client still published: their instances go with it.
    ClientRemoved {
        client: ClientKey,
        idle: SimDuration,
        instances: usize,
        subscriptions: usize,
        services: Vec<ServiceKey>,
    },

    // ---- push engine ----
    Pushed {
        service: ServiceKey,
        hosts: usize,
        healthy: usize,
        subscribers: usize,
    },
    /// `UdpRetrySender`: no ack within 10 s, the same datagram is sent again.
    PushResent {
        service: ServiceKey,
        subscriber: ClientKey,
    },
    /// The resend went unacknowledged too: the push is given up (no new push task).
    PushGaveUp {
        service: ServiceKey,
        subscriber: ClientKey,
    },

    // ---- subscriber ----
    /// `view` is `hosts` in one line, for reading.
    ViewChanged {
        service: ServiceKey,
        source: ViewSource,
        server: Name,
        view: String,
        hosts: Vec<SeenHost>,
    },
    Polled {
        service: ServiceKey,
        server: Name,
        refresh_only: bool,
        next: SimDuration,
    },
    PushUnchanged {
        service: ServiceKey,
        server: Name,
    },
    PollFailed {
        service: ServiceKey,
        failure: Failure,
        next: SimDuration,
    },
}

impl NacosNote {
    /// Routine: a beat answered 10200, a poll or push that changed nothing, a push task with
    /// nobody to push to, a member report that leaves the peer `UP` or `DOWN` as it was.
    pub fn is_routine(&self) -> bool {
        match self {
            NacosNote::Beat { code, .. } => *code == CODE_OK,
            NacosNote::Pushed { subscribers, .. } => *subscribers == 0,
            NacosNote::Polled { .. } | NacosNote::PushUnchanged { .. } | NacosNote::GrpcHealthOk { .. } => true,
            // A report answered by a peer already UP, or failing again at a peer already DOWN.
            NacosNote::MemberProbed { failure, from, to, .. } => {
                from == to && (failure.is_none() || *to == NodeState::Down)
            }
            // A retry that fails at once because the target is still not UP: the first failure,
            // on the wire, is the news; its 3 s repeats are Java's warn log lines.
            NacosNote::DistroSyncFailed { why, .. } => why.starts_with(crate::nacos::notes_distro::NOT_UP),
            // A beat proxied to its owner is a beat: the owner's answer tells what came of it.
            NacosNote::DistroForwarded { api, .. } => *api == crate::nacos::wire::API_BEAT,
            _ => false,
        }
    }
}

/// How the server's and checker's changes read in the trace.
impl From<Change> for NacosNote {
    fn from(c: Change) -> Self {
        match c {
            Change::Registered { service, client, new_client, source } => {
                NacosNote::InstanceRegistered { service, client, new_client, source }
            }
            Change::Deregistered { service, client } => NacosNote::InstanceDeregistered { service, client },
            Change::HealthyAgain { service, client, silent } => NacosNote::HealthyAgain { service, client, silent },
            Change::Unhealthy { service, client, silent, timeout, delete_timeout } => {
                NacosNote::Unhealthy { service, client, silent, timeout, delete_timeout }
            }
            Change::Expired { service, client, silent, timeout } => {
                NacosNote::Expired { service, client, silent, timeout }
            }
            Change::ClientRemoved { client, idle, published, subscribed } => NacosNote::ClientRemoved {
                client,
                idle,
                instances: published.len(),
                subscriptions: subscribed,
                services: published,
            },
            Change::Subscribed { service, subscriber } => NacosNote::Subscribed { service, subscriber },
            Change::ConnectionReleased { conn, published, instances } => {
                NacosNote::ConnectionReleased { conn, services: published, instances }
            }
            Change::MetadataUpdated { service, client, cluster, metadata, timeouts } => {
                NacosNote::MetadataUpdated { service, client, cluster, metadata, timeouts }
            }
        }
    }
}

/// `15s`, `19.978s`, `250ms`.
pub(crate) fn secs(d: SimDuration) -> String {
    d.to_string()
}

pub(crate) fn ms(v: i64) -> String {
    if v >= 0 {
        secs(SimDuration(v as u64))
    } else {
        format!("{v}ms")
    }
}
