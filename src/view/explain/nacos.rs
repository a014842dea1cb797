//! Nacos in explain mode: a naming server's tables as rows, and the narration of each
//! `NacosNote` in the code's own terms — the client's `BeatTask` and `NamingProxy`, the
//! server's `handleBeat` branches (A)–(D) and `ClientBeatProcessorV2`, the
//! `UnhealthyInstanceChecker` and `ExpiredInstanceChecker` of `ClientBeatCheckTaskV2`, the
//! `ExpiredClientCleaner`, 20404 and the re-registration, and the pushes.
//!
//! The tables are the ones those methods read and write: `services` (`ServiceManager`
//! singletons), `clients` (`EphemeralIpPortClientManager`'s `IpPortBasedClient`s with their
//! `lastUpdatedTime`), `instances` (each client's publish info: healthy, timeouts,
//! `lastHeartBeatTime`) and `subscribers` (the UDP subscriber index).

use super::Focus;
use crate::nacos::naming::{NamingServer, RegisterSource};
use crate::nacos::notes::{NacosNote, RegisterReason, ViewSource};
use crate::nacos::notes_ops;
use crate::nacos::types::{ClientKey, ServiceKey, CODE_OK, CODE_RESOURCE_NOT_FOUND};
use crate::sim::clock::SimDuration;
use crate::sim::world::World;
use std::collections::BTreeSet;

/// `15s`; `0ms` or `-5ms` for the timeouts metadata can turn into nonsense.
fn ms(v: i64) -> String {
    if v > 0 {
        SimDuration(v as u64).to_string()
    } else {
        format!("{v}ms")
    }
}

/// Every row of a naming server's tables, one sorted line each. Refresh times come last, after
/// `, last beat ` / `, last updated `, so that a beat alone does not count as a change.
pub fn table_lines(s: &NamingServer, world: &World) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for service in s.services() {
        out.insert(format!("services     {service}"));
        let subs: Vec<String> = s.subscribers_of(service).map(|c| c.to_string()).collect();
        if !subs.is_empty() {
            out.insert(format!("subscribers  {service}: [{}]", subs.join(", ")));
        }
    }
    for (key, client) in s.clients() {
        let publishes: Vec<String> = client.published().iter().map(|(k, _)| k.to_string()).collect();
        let subscribes: Vec<String> = client.subscriptions.iter().map(|k| k.to_string()).collect();
        out.insert(format!(
            "clients      {key}: publishes [{}], subscribes [{}], last updated {}",
            publishes.join(", "),
            subscribes.join(", "),
            client.last_updated
        ));
        for (service, p) in client.published() {
            let name = world.nacos_instance_name(service, key).map(|n| format!(" ({n})")).unwrap_or_default();
            let health = if p.healthy { "healthy" } else { "UNHEALTHY" };
            let checks = if p.timeouts.skip {
                "checks skipped (enableClientBeat)".to_string()
            } else {
                format!("unhealthy after {}, deleted after {}", ms(p.timeouts.beat), ms(p.timeouts.delete))
            };
            out.insert(format!(
                "instances    {service} {key}{name}: {health}, {checks}, last beat {}",
                p.last_heart_beat
            ));
        }
    }
    out
}

/// The narration of one event, and what else to show. The first beat of each instance is told
/// once (with the instance's row before and after), later ones are routine.
pub(super) fn story(n: &NacosNote, actor: &str, world: &World, told: &mut BTreeSet<String>) -> (Vec<String>, Focus) {
    use NacosNote::*;
    let server_of = |a: &str| crate::sim::trace::process_of(a).to_string();
    let who = |service: &ServiceKey, client: &ClientKey| {
        world.nacos_instance_name(service, client).map_or_else(|| client.to_string(), str::to_string)
    };
    let line = match n {
        Registering { instance, reason: RegisterReason::Startup, first_beat, .. } => {
            let beat = first_beat.map(|d| format!(" (its first BeatTask runs in {d})")).unwrap_or_default();
            format!(
                "NacosNamingService#registerInstance({instance}) → BeatReactor#addBeatInfo{beat} → \
                 NamingProxy#registerService: POST /nacos/v1/ns/instance"
            )
        }
        Registering { instance, reason: RegisterReason::Grpc, .. } => format!(
            "NacosNamingService#registerInstance({instance}) → NamingClientProxyDelegate (ephemeral: gRPC) → \
             NamingGrpcClientProxy#registerService: NamingGrpcRedoService#cacheInstanceForRedo, then an \
             InstanceRequest on the connection; no BeatReactor, no beats — the connection is the heartbeat"
        ),
        Registering { instance, reason: RegisterReason::NotFound, .. } => format!(
            "BeatTask#run: the answer is 20404 RESOURCE_NOT_FOUND → NamingProxy#registerService({instance}) again with \
             the BeatInfo's original metadata, in the same run; the next beat is scheduled only after it returns"
        ),
        Beat { instance, server, light, code, next } if *code == CODE_OK => {
            if !told.insert(instance.to_string()) {
                return (Vec::new(), Focus::None);
            }
            let body = if *light { "light: no body" } else { "full: the BeatInfo JSON in the body" };
            let then = next.map(|d| format!("schedules the next beat in {d}")).unwrap_or_else(|| "stops".into());
            let story = vec![format!(
                "BeatTask#run → NamingProxy#sendBeat({instance}, {body}) → {server}: InstanceController#beat → \
                 InstanceOperatorClientImpl#handleBeat finds the instance → (D) ClientBeatProcessorV2#run refreshes \
                 lastHeartBeatTime (and the client's lastUpdatedTime) → 10200; BeatTask {then}. Every later beat does \
                 the same and is skipped here."
            )];
            return (story, Focus::Row { server: server.to_string(), needle: format!("({instance}):") });
        }
        // The re-registration that follows tells the story of a 20404.
        Beat { code: CODE_RESOURCE_NOT_FOUND, .. } => return (Vec::new(), Focus::None),
        Beat { instance, server, code, .. } => format!("BeatTask#run: {server} answers {code} to {instance}'s beat"),
        LightBeats { enabled, server } => format!(
            "BeatTask#run: {server}'s answer says lightBeatEnabled={enabled} → BeatReactor.lightBeatEnabled = {enabled} \
             for the whole reactor: NamingProxy#sendBeat {} the BeatInfo body of every instance of this process",
            if *enabled { "drops" } else { "sends again" }
        ),
        AttemptFailed { api, server, failure, next } => {
            format!("NamingProxy#reqApi: {api} to {server} failed ({failure}) → tries {next}")
        }
        CallFailed { instance, api, failure, next_beat } => {
            let then = next_beat.map(|d| format!(" → BeatTask#run schedules the next beat in {d} anyway, no back-off"));
            format!("NamingProxy#reqApi: {api} for {instance} failed on every server ({failure}){}", then.unwrap_or_default())
        }
        Deregistering { instance } => format!(
            "NacosNamingService#deregisterInstance({instance}) → BeatReactor#removeBeatInfo (its BeatTask stops) → \
             NamingProxy#deregisterService: DELETE /nacos/v1/ns/instance"
        ),
        Registered { .. } | Deregistered { .. } => return (Vec::new(), Focus::None),
        ShutdownComplete => "the shutdown hook has run: the process exits".to_string(),
        InstanceRegistered { service, client, source: RegisterSource::Distro, .. } => format!(
            "DistroDataRequestHandler → DistroProtocol#onReceive → DistroClientDataProcessor#processData: \
             syncClientConnected (ClientManagerDelegate by the client id: a connection's copy, isNative false, \
             or for a 1.x id ip:port#true an IpPortBasedClient whose beat checks run only on the member \
             DistroMapper makes responsible) + upgradeClient put {} for {service} → ClientRegisterServiceEvent → \
             ServiceChangedEvent (a push 500 ms on, to this member's subscribers)",
            who(service, client)
        ),
        InstanceRegistered { service, client, new_client, source } => {
            let new = if *new_client {
                "createIpPortClientIfAbsent: a new IpPortBasedClient whose ClientBeatCheckTaskV2 runs every 5s from 5s \
                 on; "
            } else {
                ""
            };
            let how = match source {
                RegisterSource::Request | RegisterSource::Distro => {
                    "InstanceController#register → InstanceOperatorClientImpl#registerInstance"
                }
                RegisterSource::Grpc => {
                    "GrpcRequestAcceptor (refreshActiveTime) → InstanceRequestHandler → the connection's \
                     ConnectionBasedClient"
                }
                RegisterSource::FullBeat => {
                    "InstanceOperatorClientImpl#handleBeat (B): unknown instance, but a full beat carries its BeatInfo → \
                     BeatInfoInstanceBuilder → registerInstance"
                }
            };
            format!(
                "{how}({}, {service}) → EphemeralClientOperationServiceImpl#registerInstance: {new}the publish info \
                 is replaced: healthy, lastHeartBeatTime = now → ServiceChangedEvent (a push 500 ms on)",
                who(service, client)
            )
        }
        InstanceDeregistered { service, client } => format!(
            "InstanceController#deregister → EphemeralClientOperationServiceImpl#deregisterInstance({}): the publish \
             info is removed → ServiceChangedEvent; the empty client stays until ExpiredClientCleaner finds it idle",
            who(service, client)
        ),
        BeatNotFound { service, client } => format!(
            "InstanceController#beat → InstanceOperatorClientImpl#handleBeat (A): client {client} publishes no instance of \
             {service} and a light beat has no body to rebuild {} from → 20404 RESOURCE_NOT_FOUND",
            who(service, client)
        ),
        BeatFailed { service, client, status, message } => format!(
            "InstanceOperatorClientImpl#handleBeat (C) for {} in {service}: HTTP {status} {message}",
            who(service, client)
        ),
        HealthyAgain { service, client, silent } => format!(
            "handleBeat (D) → ClientBeatProcessorV2#run: {} was unhealthy, a beat after {silent} of silence sets healthy \
             = true → ServiceChangedEvent (a push 500 ms on)",
            who(service, client)
        ),
        Subscribed { service, subscriber } => format!(
            "InstanceController#list with udpPort → NamingSubscriberServiceV2Impl: UDP subscriber {subscriber} added to \
             {service} → ServiceSubscribedEvent (a push to it alone)"
        ),
        Unhealthy { service, client, silent, timeout, .. } => format!(
            "ClientBeatCheckTaskV2 → UnhealthyInstanceChecker#doCheck({}): now - lastHeartBeatTime = {silent} > {} \
             (preserved.heart.beat.timeout, default 15s) → healthy = false → ServiceChangedEvent; still listed",
            who(service, client),
            ms(*timeout)
        ),
        Expired { service, client, silent, timeout } => format!(
            "ClientBeatCheckTaskV2 → ExpiredInstanceChecker#doCheck({}): now - lastHeartBeatTime = {silent} > {} \
             (preserved.ip.delete.timeout, default 30s) and expireInstance is on → deleteIp → \
             ClientDeregisterServiceEvent → ServiceChangedEvent",
            who(service, client),
            ms(*timeout)
        ),
        ClientRemoved { client, idle, instances, subscriptions, .. } => format!(
            "EphemeralIpPortClientManager.ExpiredClientCleaner: client {client} not updated for {idle} → \
             clientDisconnected: its {instances} instances and {subscriptions} subscriptions go with it"
        ),
        Pushed { subscribers: 0, .. } => return (Vec::new(), Focus::None),
        Pushed { service, hosts, healthy, subscribers } => format!(
            "PushDelayTaskExecuteEngine → PushExecuteTask({service}): ServiceStorage refreshed, {hosts} instances \
             ({healthy} healthy) → PushExecutorUdpImpl sends it to {subscribers} UDP subscriber(s) of {}",
            server_of(actor)
        ),
        PushResent { service, subscriber } => format!(
            "UdpConnector: no push-ack from {subscriber} for {service} within 10 s (ACK_TIMEOUT_NANOS) → \
             UdpRetrySender sends the same datagram again"
        ),
        PushGaveUp { service, subscriber } => format!(
            "UdpRetrySender: the resend to {subscriber} went unacknowledged too (UDP_MAX_RETRY_TIMES = 1) → the push \
             of {service} fails with NoRequiredRetryException and no new task is made; the subscriber learns at its \
             next poll"
        ),
        ViewChanged { service, source: ViewSource::Push, server, view, .. } => format!(
            "PushReceiver → HostReactor#processServiceJson: the UDP push from {server} replaces the cached {service}, \
             now {view}; selectInstances(healthy = true) picks from it locally"
        ),
        ViewChanged { service, source: ViewSource::Poll, server, view, .. } => format!(
            "HostReactor UpdateTask → NamingProxy#queryList({service}) from {server}: the cached list is now {view}"
        ),
        PollFailed { service, failure, next } => {
            format!("HostReactor UpdateTask: queryList({service}) failed ({failure}) → the cached list stays, next try in {next}")
        }
        Polled { .. } | PushUnchanged { .. } => return (Vec::new(), Focus::None),
        MetadataUpdated { service, client, cluster, metadata, timeouts } => {
            let then = match timeouts {
                Some(t) => format!(
                    "UnhealthyInstanceChecker / ExpiredInstanceChecker#getTimeout and getHeartBeatInterval read it \
                     before the register-time metadata, key by key: {}",
                    notes_ops::timeouts_text(t)
                ),
                None => "the instance is not registered here: the metadata waits for it".into(),
            };
            format!(
                "InstanceController#update → InstanceOperatorClientImpl#updateInstance({}, metadataId {}:{}:{cluster}): \
                 NamingMetadataManager stores {} (replacing any earlier edit; the client's own metadata is \
                 untouched) → ServiceChangedEvent (a push 500 ms on); {then}",
                who(service, client),
                client.ip,
                client.port,
                notes_ops::map_text(metadata)
            )
        }
        MetadataRefused { service, client, message } => format!(
            "InstanceOperatorClientImpl#updateInstance({} in {service}): no service singleton here → INVALID_PARAM \
             \"{message}\"; nothing is stored",
            who(service, client)
        ),
        SwitchesSet { set, .. } => format!(
            "OperatorController#updateSwitch → SwitchManager#update on {}: {}",
            server_of(actor),
            notes_ops::switches_text(set)
        ),
        OperationMissed { operation, server, why } => format!("{operation}: {server} is {why}; nobody answers"),
        GrpcHealthOk { .. } => return (Vec::new(), Focus::None),
        GrpcConnected { .. }
        | GrpcConnectFailed { .. }
        | GrpcHealthFailed { .. }
        | GrpcStreamClosed { .. }
        | GrpcRedo { .. }
        | GrpcRequestFailed { .. }
        | ConnRegistered { .. }
        | ConnDetecting { .. }
        | ConnDetected { .. }
        | ConnUnregistered { .. }
        | ConnectionReleased { .. } => crate::nacos::notes_grpc::story(n),
        MemberProbed { .. } if n.is_routine() => return (Vec::new(), Focus::None),
        MemberProbed { .. } | MemberReportIn { .. } => member_story(n, &server_of(actor)),
        DistroSyncFailed { .. }
        | DistroVerifyFailed { .. }
        | DistroCopyExpired { .. }
        | DistroLoaded { .. }
        | DistroTookOver { .. }
        | DistroLoadFailed { .. }
        | DistroForwarded { .. }
        | DistroForwardFailed { .. } => crate::nacos::notes_distro::story(n),
    };
    (vec![line], Focus::None)
}

/// The membership events of `me`'s `ServerMemberManager`, in the terms of `MemberInfoReportTask`
/// and `MemberUtil`.
fn member_story(n: &NacosNote, me: &str) -> String {
    use crate::nacos::cluster::MAX_FAIL_ACCESS_CNT;
    use crate::nacos::http::Failure;
    match n {
        NacosNote::MemberProbed { peer, failure: None, from, .. } => format!(
            "MemberInfoReportTask on {me} (every 2 s, one peer in turn): POST /v1/core/cluster/report to {peer} was \
             answered → MemberUtil#onSuccess: {peer} goes from {from} to UP in {me}'s view, failAccessCnt back to 0"
        ),
        NacosNote::MemberProbed { peer, failure: Some(failure), from, to, fail_count } => {
            let rule = if *failure == Failure::Refused {
                "the error says \"Connection refused\" (nothing listens on a live host), so DOWN at once".to_string()
            } else if *fail_count > MAX_FAIL_ACCESS_CNT {
                format!("failAccessCnt is {fail_count} > nacos.core.member.fail-access-cnt ({MAX_FAIL_ACCESS_CNT}), so DOWN")
            } else {
                format!(
                    "SUSPICIOUS with failAccessCnt {fail_count}; DOWN only once it passes {MAX_FAIL_ACCESS_CNT} \
                     (SUSPICIOUS members still count for Distro)"
                )
            };
            format!(
                "MemberInfoReportTask on {me}: the report to {peer} failed ({failure}) → MemberUtil#onFail: {rule}; \
                 {peer} was {from}, is now {to} in {me}'s view (other members decide for themselves)"
            )
        }
        NacosNote::MemberReportIn { peer, from, fail_count } => format!(
            "NacosClusterController#report on {me}: {peer} reported itself → ServerMemberManager#update copies it as \
             UP (was {from}); MemberUtil#copy leaves failAccessCnt at {fail_count}, so one more failed report can \
             take it straight back to DOWN"
        ),
        other => other.to_string(),
    }
}
