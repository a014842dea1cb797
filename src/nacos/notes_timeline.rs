//! How the beat, registration, health and subscription events read in the timeline: the
//! `Display` of [`NacosNote`] for them (split from `notes.rs` to keep each file short; the
//! gRPC, Distro, member and operator events have their own `notes_*` files).
use crate::nacos::naming::RegisterSource;
use crate::nacos::notes::{ms, secs, NacosNote, RegisterReason, ViewSource};
use crate::nacos::types::{CODE_OK, CODE_RESOURCE_NOT_FOUND};
use crate::sim::clock::SimDuration;
use std::fmt;

fn next(d: &Option<SimDuration>) -> String {
    match d {
        Some(d) => format!("next beat in {}", secs(*d)),
        None => "chain stopped, no next beat".into(),
    }
}

impl fmt::Display for NacosNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use NacosNote::*;
        match self {
            Registering { instance, service, reason: RegisterReason::Startup, first_beat } => {
                let beat = first_beat.map_or(String::new(), |d| format!("addBeatInfo (first beat in {}), ", secs(d)));
                write!(f, "registerInstance {instance} in {service}: {beat}POST /nacos/v1/ns/instance")
            }
            Registering { instance, service, reason: RegisterReason::NotFound, .. } => write!(
                f,
                "{instance} in {service}: 20404 RESOURCE_NOT_FOUND -> re-register now with the original metadata"
            ),
            Registering { instance, service, reason: RegisterReason::Grpc, .. } => write!(
                f,
                "registerInstance {instance} in {service}: cacheInstanceForRedo, InstanceRequest over gRPC"
            ),
            Registered { instance, server } => write!(f, "{instance} registered on {server}"),
            Beat { instance, server, light, code, next: n } => {
                let kind = if *light { "light beat (no body)" } else { "full beat" };
                let answer = match *code {
                    CODE_OK => "10200".to_string(),
                    CODE_RESOURCE_NOT_FOUND => "20404 RESOURCE_NOT_FOUND".to_string(),
                    other => other.to_string(),
                };
                write!(f, "{instance} {kind} -> {server}: {answer}, {}", next(n))
            }
            LightBeats { enabled: true, server } => {
                write!(f, "{server} answered lightBeatEnabled=true: every beat of this reactor is now light")
            }
            LightBeats { enabled: false, server } => {
                write!(f, "{server} answered lightBeatEnabled=false: this reactor sends full beats again")
            }
            AttemptFailed { api, server, failure, next } => {
                write!(f, "{api} to {server} failed: {failure}; trying {next}")
            }
            CallFailed { instance, api, failure, next_beat: Some(d) } => write!(
                f,
                "{instance}: {api} failed after all servers tried ({failure}): next beat in {} (no back-off)",
                secs(*d)
            ),
            CallFailed { instance, api, failure, next_beat: None } => {
                write!(f, "{instance}: {api} failed after all servers tried ({failure})")
            }
            Deregistering { instance } => {
                write!(f, "deregisterInstance {instance}: removeBeatInfo, DELETE /nacos/v1/ns/instance")
            }
            Deregistered { instance, server: Some(s) } => write!(f, "{instance} deregistered on {s}"),
            Deregistered { instance, server: None } => write!(f, "{instance}: deregistration failed on every server"),
            ShutdownComplete => write!(f, "shutdown complete: process exits"),
            InstanceRegistered { service, client, new_client, source } => {
                let how = match source {
                    RegisterSource::Request => "registerInstance",
                    RegisterSource::FullBeat => "full beat from an unknown instance: registered from its body",
                    RegisterSource::Grpc => "InstanceRequest over gRPC (ConnectionBasedClient)",
                    RegisterSource::Distro => "Distro copy of another member's client (upgradeClient)",
                };
                let new = if *new_client { " (new client, checks every 5s from 5s on)" } else { "" };
                // A copy takes the owner's health, whatever it is; the others register healthy.
                let health = if *source == RegisterSource::Distro { "" } else { ", healthy" };
                write!(f, "{service} {client}: {how}{health}{new}")
            }
            InstanceDeregistered { service, client } => write!(f, "{service} {client}: deregistered"),
            BeatNotFound { service, client } => {
                write!(f, "{service} {client}: light beat from an unknown instance -> 20404 RESOURCE_NOT_FOUND")
            }
            BeatFailed { service, client, status, message } => {
                write!(f, "{service} {client}: beat -> HTTP {status} {message}")
            }
            HealthyAgain { service, client, silent } => write!(
                f,
                "{service} {client}: beat after {} of silence -> healthy again (ClientBeatProcessorV2)",
                secs(*silent)
            ),
            Subscribed { service, subscriber } => write!(f, "{service}: UDP subscriber {subscriber} added"),
            MetadataUpdated { .. } | MetadataRefused { .. } | SwitchesSet { .. } | OperationMissed { .. } => {
                f.write_str(&super::notes_ops::line(self))
            }
            MemberProbed { .. } | MemberReportIn { .. } => f.write_str(&super::notes_member::line(self)),
            DistroSyncFailed { .. }
            | DistroVerifyFailed { .. }
            | DistroCopyExpired { .. }
            | DistroLoaded { .. }
            | DistroTookOver { .. }
            | DistroLoadFailed { .. }
            | DistroForwarded { .. }
            | DistroForwardFailed { .. } => f.write_str(&super::notes_distro::line(self)),
            GrpcConnected { .. }
            | GrpcConnectFailed { .. }
            | GrpcHealthOk { .. }
            | GrpcHealthFailed { .. }
            | GrpcStreamClosed { .. }
            | GrpcRedo { .. }
            | GrpcRequestFailed { .. }
            | ConnRegistered { .. }
            | ConnDetecting { .. }
            | ConnDetected { .. }
            | ConnUnregistered { .. }
            | ConnectionReleased { .. } => f.write_str(&super::notes_grpc::line(self)),
            Unhealthy { service, client, silent, timeout, .. } => write!(
                f,
                "{service} {client}: no beat for {} > {}: unhealthy (UnhealthyInstanceChecker)",
                secs(*silent),
                ms(*timeout)
            ),
            Expired { service, client, silent, timeout } => write!(
                f,
                "{service} {client}: no beat for {} > {}: deleted (ExpiredInstanceChecker)",
                secs(*silent),
                ms(*timeout)
            ),
            ClientRemoved { client, idle, instances, subscriptions, .. } => write!(
                f,
                "client {client} not updated for {}, {instances} instances, {subscriptions} subscriptions: removed \
                 (ExpiredClientCleaner)",
                secs(*idle)
            ),
            Pushed { service, hosts, healthy, subscribers } => {
                let s = if *subscribers == 1 { "" } else { "s" };
                write!(f, "PushExecuteTask {service}: {hosts} instances ({healthy} healthy) -> {subscribers} UDP subscriber{s}")
            }
            ViewChanged { service, source, server, view, .. } => {
                let how = match source {
                    ViewSource::Push => "push",
                    ViewSource::Poll => "poll",
                };
                write!(f, "{service} by {how} from {server}: {view}")
            }
            Polled { service, server, refresh_only, next: n } => {
                let what = if *refresh_only { "refreshOnly (a push came since)" } else { "unchanged" };
                write!(f, "{service} poll to {server}: {what}; next poll in {}", secs(*n))
            }
            PushUnchanged { service, server } => write!(f, "{service} push from {server}: unchanged"),
            PushResent { service, subscriber } => {
                write!(f, "{service} push to {subscriber}: no ack within 10s, sent again (UdpRetrySender)")
            }
            PushGaveUp { service, subscriber } => write!(
                f,
                "{service} push to {subscriber}: still no ack after the resend; given up until its next poll (UDP_MAX_RETRY_TIMES = 1)"
            ),
            PollFailed { service, failure, next: n } => {
                write!(f, "{service} poll failed ({failure}); next poll in {}", secs(*n))
            }
        }
    }
}
