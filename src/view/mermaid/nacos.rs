//! Nacos in the sequence diagram: beats folded into loops with their counts; registrations,
//! 20404 and the re-registration; the health checker's unhealthy/deleted decisions and
//! `ClientBeatProcessorV2` flipping an instance back; pushes and what each subscriber now sees.
//!
//! Server-side events name an instance by `(service, ip:port)`; the [`Cast`] turns that back into
//! the scenario's instance and the application process its beats come from.

use super::diagram::Diagram;
use super::secs;
use crate::nacos::naming::RegisterSource;
use crate::nacos::notes::{NacosNote, RegisterReason, ViewSource};
use crate::nacos::types::{ClientKey, ServiceKey, CODE_OK, CODE_RESOURCE_NOT_FOUND};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
use crate::view::cast::{client_text, service_text, Cast};

/// `15s`, or `0ms` / `-5ms` for the timeouts metadata can turn into nonsense.
fn timeout(ms: i64) -> String {
    if ms > 0 {
        secs(SimDuration(ms as u64))
    } else {
        format!("{ms}ms")
    }
}

/// `1 instance`, `3 instances`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

pub(super) fn draw(d: &mut Diagram, cast: &Cast, a: &str, t: SimTime, n: &NacosNote) {
    use NacosNote::*;
    let server = || super::process(a).to_string();
    match n {
        // ---- the application's NamingService ----
        Registering { instance, reason: RegisterReason::NotFound, .. } => {
            d.note(a, t, &format!("BeatTask: 20404, so registerService {instance} again with its original metadata"))
        }
        Beat { instance, server, light, code, .. } if *code == CODE_OK => {
            let kind = if *light { "light beat" } else { "full beat" };
            d.routine(a, server, t, &format!("{kind} {instance}: 10200"));
        }
        Beat { server, code, .. } => {
            let answer =
                if *code == CODE_RESOURCE_NOT_FOUND { "20404 RESOURCE_NOT_FOUND".into() } else { code.to_string() };
            d.arrow(server, a, "-->>", t, &answer);
        }
        LightBeats { enabled, server } => {
            let then =
                if *enabled { "every beat of this process is light (no body) from now on" } else { "full beats again" };
            d.note(a, t, &format!("{server} answers lightBeatEnabled={enabled}: {then}"));
        }
        AttemptFailed { api, server, failure, next } => {
            d.arrow(a, server, "-x", t, &format!("{api}: {failure}, trying {next}"))
        }
        CallFailed { instance, api, failure, next_beat } => {
            let next = next_beat.map(|n| format!(", next beat in {}", secs(n))).unwrap_or_default();
            d.note(a, t, &format!("{instance}: {api} failed on every server ({failure}){next}"));
        }
        ShutdownComplete => d.note(a, t, "shutdown complete: process exits"),
        Registering { .. } | Registered { .. } | Deregistering { .. } | Deregistered { .. } => {}

        // ---- the naming server ----
        InstanceRegistered { service, client, new_client, source } => {
            let (who, app) = (cast.instance(service, client), cast.app(service, client));
            let new = if *new_client { " (new client: checked every 5s from 5s on)" } else { "" };
            match source {
                RegisterSource::Distro => d.note(a, t, &format!("Distro copy: {who} in {}", service_text(service))),
                RegisterSource::Request => {
                    let what =
                        format!("POST instance {who}: registerInstance in {}, healthy{new}", service_text(service));
                    d.arrow(&app, a, "->>", t, &what);
                }
                RegisterSource::Grpc => {
                    d.arrow(
                        &app,
                        a,
                        "->>",
                        t,
                        &format!("gRPC InstanceRequest {who}: registerInstance in {}", service_text(service)),
                    );
                }
                RegisterSource::FullBeat => {
                    d.arrow(&app, a, "->>", t, &format!("full beat {who} (BeatInfo in the body)"));
                    d.note(
                        a,
                        t,
                        &format!("handleBeat (B): unknown {who} registered from the beat's body, healthy{new}"),
                    );
                }
            }
        }
        InstanceDeregistered { service, client } => {
            let (who, app) = (cast.instance(service, client), cast.app(service, client));
            d.arrow(&app, a, "->>", t, &format!("DELETE instance {who}: deregisterInstance, removed at once"));
        }
        BeatNotFound { service, client } => {
            let (who, app) = (cast.instance(service, client), cast.app(service, client));
            d.arrow(&app, a, "->>", t, &format!("light beat {who}"));
            d.note(a, t, &format!("handleBeat (A): no {who} here and a light beat has no body to rebuild it from"));
        }
        BeatFailed { service, client, status, message } => {
            let (who, app) = (cast.instance(service, client), cast.app(service, client));
            d.arrow(&app, a, "->>", t, &format!("beat {who}"));
            d.note(a, t, &format!("handleBeat (C): HTTP {status} {message}"));
        }
        HealthyAgain { service, client, silent } => {
            let (who, app) = (cast.instance(service, client), cast.app(service, client));
            let why = format!("ClientBeatProcessorV2 flips it healthy again after {} of silence", secs(*silent));
            d.arrow(&app, a, "->>", t, &format!("beat {who}: {why}"));
        }
        Subscribed { service, subscriber } => {
            let who = cast.subscriber(subscriber);
            d.note(a, t, &format!("{who} subscribed to {} (UDP push)", service_text(service)));
        }

        // ---- the health checker ----
        Unhealthy { service, client, silent, timeout: limit, .. } => {
            let who = cast.instance(service, client);
            cite_last_beat(d, cast, service, client, &server(), t);
            let why = format!("no beat for {} > {}", secs(*silent), timeout(*limit));
            d.arrow(a, &server(), "->>", t, &format!("UnhealthyInstanceChecker: {who} {why}: healthy=false"));
        }
        Expired { service, client, silent, timeout: limit } => {
            let who = cast.instance(service, client);
            cite_last_beat(d, cast, service, client, &server(), t);
            let why = format!("no beat for {} > {}", secs(*silent), timeout(*limit));
            d.arrow(a, &server(), "->>", t, &format!("ExpiredInstanceChecker: {who} {why}: deleted"));
        }
        ClientRemoved { client, idle, services, .. } => {
            let took = match services.as_slice() {
                [] => String::new(),
                s => {
                    let names: Vec<String> = s.iter().map(|svc| cast.instance(svc, client)).collect();
                    format!(", and with it {}", names.join(", "))
                }
            };
            let idle = secs(*idle);
            d.note(a, t, &format!("ExpiredClientCleaner: client {} idle {idle}: removed{took}", client_text(client)));
        }

        // ---- 2.x gRPC connections ----
        GrpcConnected { server, conn, previous } => {
            d.arrow(a, server, "->>", t, &format!("gRPC ServerCheck + ConnectionSetup: connection {conn}"));
            if let Some(old) = previous {
                d.note(a, t, &format!("switched: abandons and closes {old} (RpcClient#reconnect)"));
            }
        }
        // The network draws the failed connect itself.
        GrpcConnectFailed { .. } => {}
        GrpcHealthOk { server } => d.routine(a, server, t, "HealthCheckRequest"),
        GrpcHealthFailed { server, tries, why } => {
            d.arrow(a, server, "-x", t, &format!("HealthCheckRequest x{tries}: {why}"));
            d.note(a, t, "healthCheck failed: UNHEALTHY, switchServerAsync");
        }
        GrpcStreamClosed { server, .. } => {
            d.note(a, t, &format!("gRPC stream to {server} ended (FIN/RST): switchServerAsync"))
        }
        // The registration's own arrow follows (`InstanceRegistered`).
        GrpcRedo { instances, .. } => d.note(
            a,
            t,
            &format!(
                "RedoScheduledTask: register {} again",
                instances.iter().map(Name::as_str).collect::<Vec<_>>().join(", ")
            ),
        ),
        GrpcRequestFailed { instance, server, failure } => {
            d.arrow(a, server, "-x", t, &format!("InstanceRequest {instance}: {failure}"))
        }
        ConnRegistered { .. } => {}
        ConnDetecting { conn, client, idle } => d.note(
            a,
            t,
            &format!(
                "ConnectionManager: {conn} ({client}) idle {}: ClientDetectionRequest, latch up to 5s",
                secs(*idle)
            ),
        ),
        ConnDetected { conn, .. } => d.note(a, t, &format!("{conn} answered the detection: active again")),
        ConnUnregistered { conn, client, ejected_idle: Some(idle) } => d.note(
            a,
            t,
            &format!("{conn} ({client}) no answer, idle {}: unregistered (NacosRuntimeConnectionEjector)", secs(*idle)),
        ),
        ConnUnregistered { conn, client, ejected_idle: None } => {
            d.note(a, t, &format!("{conn} ({client}) TCP closed: unregistered (transportTerminated)"))
        }
        ConnectionReleased { services, instances, .. } => {
            let names: Vec<String> = services.iter().zip(instances).map(|(s, c)| cast.instance(s, c)).collect();
            if !names.is_empty() {
                d.note(a, t, &format!("clientDisconnected: {} removed at once", names.join(", ")));
            }
        }

        // ---- the push engine and subscribers ----
        Pushed { subscribers: 0, .. } => {}
        Pushed { service, hosts, healthy, subscribers } => {
            let what =
                format!("{} ({healthy} healthy) to {}", plural(*hosts, "instance"), plural(*subscribers, "subscriber"));
            d.note(a, t, &format!("PushExecuteTask {}: {what}", service_text(service)));
        }
        PushResent { service, subscriber } => d.note(
            a,
            t,
            &format!("no ack from {} in 10 s: push of {} sent again", client_text(subscriber), service_text(service)),
        ),
        PushGaveUp { service, subscriber } => d.note(
            a,
            t,
            &format!("push of {} to {} given up after one resend", service_text(service), client_text(subscriber)),
        ),
        ViewChanged { service, source, server, view, .. } => {
            let service = service_text(service);
            match source {
                ViewSource::Push => {
                    d.arrow(&format!("{server}/push"), a, "-->>", t, &format!("UDP push {service}: now sees {view}"))
                }
                ViewSource::Poll => {
                    d.arrow(a, server, "->>", t, &format!("GET instance/list {service}"));
                    d.note(a, t, &format!("now sees {view}"));
                }
            }
        }
        Polled { service, server, .. } => {
            d.routine(a, server, t, &format!("GET instance/list {}: unchanged", service_text(service)))
        }
        PushUnchanged { service, server } => {
            d.routine(&format!("{server}/push"), a, t, &format!("UDP push {}: unchanged", service_text(service)))
        }
        PollFailed { service, failure, .. } => {
            d.note(a, t, &format!("poll of {} failed ({failure})", service_text(service)))
        }

        // ---- the operator ----
        MetadataUpdated { service, client, metadata, timeouts, .. } => {
            let who = cast.instance(service, client);
            let then = timeouts.as_ref().map(crate::nacos::notes_ops::timeouts_text);
            let then = then.unwrap_or_else(|| "not registered here: it waits".into());
            let map = crate::nacos::notes_ops::map_text(metadata);
            d.note(a, t, &format!("updateInstance (console) {who}: metadata {map}; {then}"));
        }
        MetadataRefused { service, client, message } => {
            d.note(a, t, &format!("updateInstance {} refused: {message}", cast.instance(service, client)))
        }
        SwitchesSet { set, .. } => {
            d.note(a, t, &format!("updateSwitch: {}", crate::nacos::notes_ops::switches_text(set)))
        }
        OperationMissed { .. } => {}

        // ---- cluster membership (MemberInfoReportTask) ----
        MemberProbed { peer, failure: None, from, to, .. } if from == to => {
            d.routine(a, peer, t, &format!("cluster/report: {peer} still {to}"))
        }
        MemberProbed { peer, failure: None, from, to, .. } => {
            d.note(a, t, &format!("report to {peer} answered: {peer} {from} -> {to} (MemberUtil#onSuccess)"))
        }
        MemberProbed { peer, failure: Some(failure), from, to, fail_count } => {
            if n.is_routine() {
                d.routine(a, peer, t, &format!("cluster/report: {failure}, {peer} still {to}"));
                return;
            }
            d.arrow(a, peer, "-x", t, &format!("cluster/report: {failure}"));
            if from != to {
                d.note(a, t, &format!("{peer} {from} -> {to}, failAccessCnt {fail_count} (MemberUtil#onFail)"));
            }
        }
        MemberReportIn { peer, from, .. } => {
            d.note(a, t, &format!("report from {peer}: {peer} {from} -> UP (NacosClusterController#report)"))
        }

        // ---- Distro ----
        DistroSyncFailed { target, op, why, .. } => {
            d.arrow(a, target, "-x", t, &format!("Distro {}: {why}", op.word()))
        }
        DistroVerifyFailed { target, conn } => d.note(a, t, &format!("{target} failed the verify of {conn}: resync")),
        DistroCopyExpired { conn, idle } => d.note(a, t, &format!("copy {conn} expired ({idle} unverified)")),
        DistroLoaded { from, clients } => d.note(a, t, &format!("snapshot from {from}: {clients} clients copied")),
        DistroTookOver { client } => d.note(a, t, &format!("{client} is mine now: checks run here")),
        DistroLoadFailed { retry_in } => d.note(a, t, &format!("no snapshot: next try in {retry_in}")),
        DistroForwarded { api, target, .. } => d.arrow(a, target, "->>", t, &format!("DistroFilter: {api}")),
        DistroForwardFailed { target, failure, .. } => d.arrow(a, target, "-x", t, &format!("DistroFilter: {failure}")),
    }
}

/// The checker counts from the instance's last beat: that beat keeps its own arrow, out of the
/// folds, so the diagram shows what "no beat for 15.001s" counts from.
fn cite_last_beat(d: &mut Diagram, cast: &Cast, service: &ServiceKey, client: &ClientKey, server: &str, t: SimTime) {
    let who = cast.instance(service, client);
    d.cite(&cast.app(service, client), server, &format!(" {who}: 10200"), t);
}
