//! The "Versions" section of a lesson page: which RocketMQ or Nacos releases its timings hold
//! for, and what differs in the others.
//!
//! Most of it follows from the scenario: which system it models and which features it turns on
//! (acting master, Netty's idle close, producers, subscribers). A lesson adds what only it knows
//! with a `# Versions: …` paragraph in its opening comment. Every claim below is checked against
//! the tagged sources listed in `docs/versions.md`; change one there first.

use crate::sim::scenario::Scenario;
use std::fmt::Write;

/// What a scenario uses that versions differ on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    pub rocketmq: bool,
    pub nacos: bool,
    /// A broker heartbeats under `enableSlaveActingMaster`, or a name server has `supportActingMaster`.
    pub acting_master: bool,
    /// A name server or broker closes idle connections (Netty `IdleStateHandler`).
    pub idle_close: bool,
    pub producers: bool,
    pub subscribers: bool,
    /// More than one Nacos server.
    pub nacos_cluster: bool,
    /// A 2.x client keeps a gRPC connection (`transport = "grpc"`).
    pub grpc: bool,
}

impl Features {
    pub fn of(s: &Scenario) -> Features {
        Features {
            rocketmq: !s.namesrvs.is_empty() || !s.brokers.is_empty(),
            nacos: !s.nacos.servers.is_empty(),
            acting_master: s.brokers.iter().any(|b| b.config.enable_acting_master)
                || s.namesrvs.iter().any(|n| n.table.support_acting_master),
            idle_close: s.namesrvs.iter().any(|n| n.idle_close.is_some())
                || s.brokers.iter().any(|b| b.idle_close.is_some()),
            producers: !s.producers.is_empty(),
            subscribers: !s.nacos.subscribers.is_empty(),
            nacos_cluster: s.nacos.servers.len() > 1,
            grpc: s.nacos.apps.iter().any(|a| a.transport == crate::sim::scenario::Transport::Grpc),
        }
    }
}

/// The section's Markdown (without its heading): the versions the timings hold for, then a list
/// of what differs elsewhere, then the lesson's own note (`# Versions:` in its comment), if any,
/// and a link to `docs/versions.md` (`versions_md`, relative to the page).
pub fn section(f: Features, own: Option<&str>, versions_md: &str) -> String {
    let mut out = String::new();
    if f.rocketmq {
        rocketmq(&mut out, f);
    }
    if f.nacos {
        nacos(&mut out, f);
    }
    if let Some(own) = own {
        let _ = writeln!(out, "\nFor this lesson: {own}");
    }
    let _ = writeln!(out, "\nWhere each claim was checked in the source: [versions]({versions_md}).");
    out
}

fn rocketmq(out: &mut String, f: Features) {
    let _ = writeln!(
        out,
        "The timings hold for **RocketMQ 5.0.0–5.3.3** (read at `rocketmq-all-5.3.3`, the newest release): \
         `NamesrvController#startScheduleService` runs `scanNotActiveBroker` first 5 ms after start, then \
         every `scanNotActiveBrokerInterval` = 5 s; a broker is dropped after \
         `DEFAULT_BROKER_CHANNEL_EXPIRED_TIME` = 120 s of silence (or its own `heartbeatTimeoutMillis`); \
         unregistrations queue through `BatchUnregistrationService`.\n"
    );
    let _ = writeln!(out, "In other versions:\n");
    let _ = writeln!(
        out,
        "- **4.x** (read at `rocketmq-all-4.9.8`): the scan runs first 5 s after start, then every 10 s, \
         against a fixed `BROKER_CHANNEL_EXPIRED_TIME` = 120 s, so a silent broker goes 120–130 s after its \
         last registration instead of 120–125 s; `onChannelDestroy` unregisters at once, with no \
         `BatchUnregistrationService`; `brokerLiveTable` is keyed by address alone, not cluster + address."
    );
    if f.acting_master {
        let _ = writeln!(
            out,
            "- **4.x has no acting master**: `enableSlaveActingMaster`, the 1 s broker heartbeat with \
             `brokerNotActiveTimeoutMillis` = 10 s, and the name server's `supportActingMaster` arrive in \
             5.0.0. On 4.x a master-less group keeps its write perm and the name server never answers with a \
             slave moved to id 0 (`pickupTopicRouteData`)."
        );
    }
    let _ = writeln!(
        out,
        "- **develop after 5.3.3** (commit `809bfe6cb8`, issue #9682, in no release yet): the scan's first \
         run moves from 5 ms to 5 s after start; later ticks are unchanged."
    );
    if f.idle_close {
        let _ = writeln!(
            out,
            "- The 120 s Netty idle close (`NettyServerConfig.serverChannelMaxIdleTimeSeconds`, \
             `NettySystemConfig.clientChannelMaxIdleTimeSeconds`) has the same default in 4.9.8 and 5.3.3."
        );
    }
    if f.producers {
        let _ = writeln!(
            out,
            "- The producer's code (`DefaultMQProducerImpl`, `MQFaultStrategy`) was read at 5.3.3 only; \
             its timings are not claimed for other versions."
        );
    }
}

fn nacos(out: &mut String, f: Features) {
    let _ = writeln!(
        out,
        "The timings hold for a **Nacos 1.x HTTP client against a 2.x server**, as routesim models them: \
         the client is 1.4.8's `BeatReactor` (the same logic as the HTTP client inside 2.0.0–2.1.2), beating \
         every 5 s; the server is 2.1.2's (its beat handling unchanged in 2.5.1), where \
         `ClientBeatCheckTaskV2` marks an instance unhealthy after 15 s without a beat and deletes it after \
         30 s, checking every 5 s.\n"
    );
    let _ = writeln!(out, "In other versions:\n");
    let _ = writeln!(
        out,
        "- **2.x Java clients** register ephemeral instances over one gRPC connection and send no beats \
         (`NamingClientProxyDelegate#getExecuteClientProxy`, 2.0.0): an instance lives as long as its \
         connection, has no unhealthy phase, and ignores `preserved.heart.beat.*`. Their `BeatReactor` is \
         removed in 2.2.0. routesim models them where an instance has `transport = \"grpc\"`."
    );
    let _ = writeln!(
        out,
        "- **A 1.x server** (1.4.8) checks beats in `ClientBeatCheckTask` with the same defaults (15 s, \
         30 s, beats every 5 s); routesim models only the 2.x server."
    );
    if f.grpc {
        let _ = writeln!(
            out,
            "- The gRPC client and connection rules are **2.5.1**'s (`RpcClient`, `NamingGrpcRedoService`, \
             `NacosRuntimeConnectionEjector`): probe after 20 s idle, 5 s detection timeout and latch, every 3 s. \
             2.1.2's `ConnectionManager` probed with a 1 s timeout and a 3 s latch; 2.2.0–2.2.4 never ejected a \
             silent connection (#10773, fixed in 2.3.0)."
        );
    }
    if f.subscribers {
        let _ = writeln!(
            out,
            "- Pushes to 1.x subscribers go over UDP (`PushExecutorUdpImpl`, 2.1.2; `PushService` in 1.4.8); \
             2.x subscribers receive them on their gRPC connection (`PushExecutorRpcImpl`)."
        );
    }
    if f.nacos_cluster {
        let _ = writeln!(
            out,
            "- Between servers, the Distro routing and sync modelled here are 2.1.2's; 1.x routed beats by \
             service name, not by ip:port."
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acting_master_lessons_say_4x_has_none_and_others_do_not() {
        let plain = Features { rocketmq: true, ..Default::default() };
        let acting = Features { acting_master: true, ..plain };
        assert!(!section(plain, None, "v.md").contains("4.x has no acting master"));
        assert!(section(acting, None, "v.md").contains("4.x has no acting master"));
    }

    #[test]
    fn a_lesson_note_is_appended_and_nacos_pages_name_the_grpc_client() {
        let nacos = Features { nacos: true, ..Default::default() };
        let text = section(nacos, Some("light beats exist since 1.x."), "v.md");
        assert!(text.contains("gRPC"));
        assert!(text.contains("For this lesson: light beats exist since 1.x."));
        assert!(!text.contains("RocketMQ"));
    }
}
