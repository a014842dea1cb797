//! Nacos rows of the report.
//!
//! * Each application's lane gets its beats as ticks (and registrations, 20404s, failures).
//! * Each naming server gets a row per instance (`nacos1 · orders-1`): a healthy or unhealthy
//!   span while it is registered, the beats that reached it as ticks, and — when a checker acts
//!   — its deadlines measured from the last beat: "alive until" (last beat + heart-beat
//!   timeout, `UnhealthyInstanceChecker`) and "deleted after" (last beat + delete timeout,
//!   `ExpiredInstanceChecker`). The checkers only look every 5 s, so the flip or deletion lands
//!   on the first tick *after* the deadline; the gap is the lesson.
//! * Each subscriber gets a row per instance it has seen (`gateway · orders · orders-1`),
//!   healthy or unhealthy as its cached list said, from pushes and polls.

use super::model::{process, Builder};
use crate::nacos::notes::{NacosNote, ViewSource};
use crate::nacos::types::{ClientKey, ServiceKey, CODE_OK};
use crate::sim::clock::{SimDuration, SimTime};
use crate::view::cast::{service_text, Cast};

/// The row of an instance at a naming server.
fn instance_row(b: &mut Builder, cast: &Cast, server: &str, service: &ServiceKey, client: &ClientKey) -> usize {
    b.row(&format!("{server} · {}", cast.instance(service, client)), "instance", server)
}

/// A deadline bar from the last beat: `silent` before `t`, plus `timeout` (non-positive
/// timeouts, which metadata can produce, give a one-tick bar at the last beat).
/// `acted` names the checker and the tick it acted at, when that is known yet (the deletion
/// deadline is drawn at the unhealthy flip, before the deleting tick).
fn deadline(
    b: &mut Builder,
    row: usize,
    (t, silent): (SimTime, SimDuration),
    timeout: i64,
    class: &'static str,
    what: &str,
    acted: Option<&str>,
) {
    let last = SimTime(t.millis().saturating_sub(silent.millis()));
    let limit = SimDuration(timeout.max(0) as u64);
    let mut detail = format!("{what} {} (last beat {last} + {limit})", last + limit);
    if let Some(checker) = acted {
        detail += &format!("; {checker} acted at {t}");
    }
    b.bar(row, last, last + limit, class, detail);
}

pub(super) fn rows(b: &mut Builder, cast: &Cast, a: &str, t: SimTime, n: &NacosNote, text: &str) {
    use NacosNote::*;
    let server = process(a).to_string();
    let detail = || text.to_string();
    match n {
        // ---- the application ----
        Beat { instance, server, code, .. } => {
            let class = if *code == CODE_OK { "heartbeat" } else { "notfound" };
            b.mark(a, t, class, detail());
            let row = b.row(&format!("{server} · {instance}"), "instance", server);
            b.mark_row(row, t, class, format!("{text} (as the answer reached the client)"));
        }
        Registering { .. } | Registered { .. } | Deregistering { .. } | Deregistered { .. } => {
            b.mark(a, t, "register", detail())
        }
        AttemptFailed { .. } | CallFailed { .. } => b.mark(a, t, "drop", detail()),
        LightBeats { .. } | ShutdownComplete => b.mark(a, t, "other", detail()),

        // ---- the naming server ----
        InstanceRegistered { service, client, .. } => {
            b.mark(a, t, "register", detail());
            let row = instance_row(b, cast, &server, service, client);
            let who = cast.instance(service, client);
            b.switch_bar(row, t, "healthy", format!("{who} registered and healthy at {server}"));
        }
        InstanceDeregistered { service, client } => {
            b.mark(a, t, "register", detail());
            let row = instance_row(b, cast, &server, service, client);
            b.close_bar(row, t);
        }
        BeatNotFound { service, client } | BeatFailed { service, client, .. } => {
            b.mark(a, t, "notfound", detail());
            let row = instance_row(b, cast, &server, service, client);
            b.mark_row(row, t, "notfound", detail());
        }
        HealthyAgain { service, client, .. } => {
            b.mark(a, t, "healthy", detail());
            let row = instance_row(b, cast, &server, service, client);
            let who = cast.instance(service, client);
            b.switch_bar(row, t, "healthy", format!("{who} healthy again at {server} (ClientBeatProcessorV2)"));
        }
        Subscribed { .. } => b.mark(a, t, "other", detail()),

        // ---- the health checker ----
        Unhealthy { service, client, silent, timeout, delete_timeout } => {
            b.mark(a, t, "unhealthy", detail());
            let row = instance_row(b, cast, &server, service, client);
            let who = cast.instance(service, client);
            b.switch_bar(row, t, "unhealthy", format!("{who} unhealthy at {server} (UnhealthyInstanceChecker)"));
            deadline(b, row, (t, *silent), *timeout, "alive", "alive until", Some("UnhealthyInstanceChecker"));
            if let Some(d) = delete_timeout {
                deadline(b, row, (t, *silent), *d, "deadline", "deleted after", None);
            }
        }
        Expired { service, client, silent, timeout } => {
            b.mark(a, t, "expire", detail());
            let row = instance_row(b, cast, &server, service, client);
            b.close_bar(row, t);
            // Drawn at the unhealthy flip already (the tick that deletes is named now), unless
            // both checkers acted in one pass.
            let last = SimTime(t.millis().saturating_sub(silent.millis()));
            let acted = format!("; ExpiredInstanceChecker acted at {t}");
            match b.m.bars.iter_mut().find(|x| x.row == row && x.class == "deadline" && x.from == last) {
                Some(bar) => bar.detail += &acted,
                None => deadline(
                    b,
                    row,
                    (t, *silent),
                    *timeout,
                    "deadline",
                    "deleted after",
                    Some("ExpiredInstanceChecker"),
                ),
            }
        }
        ClientRemoved { client, services, .. } => {
            b.mark(a, t, "expire", detail());
            for service in services {
                let row = instance_row(b, cast, &server, service, client);
                b.close_bar(row, t);
            }
        }

        // ---- 2.x gRPC connections ----
        GrpcHealthOk { .. } => b.mark(a, t, "heartbeat", detail()),
        GrpcConnected { .. } | GrpcRedo { .. } => b.mark(a, t, "register", detail()),
        GrpcConnectFailed { .. } | GrpcHealthFailed { .. } | GrpcRequestFailed { .. } | GrpcStreamClosed { .. } => {
            b.mark(a, t, "drop", detail())
        }
        ConnRegistered { .. } | ConnDetecting { .. } | ConnDetected { .. } => b.mark(a, t, "other", detail()),
        ConnUnregistered { .. } => b.mark(a, t, "expire", detail()),
        ConnectionReleased { services, instances, .. } => {
            b.mark(a, t, "expire", detail());
            for (service, client) in services.iter().zip(instances) {
                let row = instance_row(b, cast, &server, service, client);
                b.close_bar(row, t);
            }
        }

        // ---- the push engine and subscribers ----
        Pushed { subscribers: 0, .. } => {}
        Pushed { .. } | PushResent { .. } | PushGaveUp { .. } => b.mark(a, t, "push", detail()),
        ViewChanged { service, source, hosts, .. } => {
            b.mark(a, t, if *source == ViewSource::Push { "push" } else { "poll" }, detail());
            let prefix = format!("{a} · {} · ", service_text(service));
            for row in b.rows_with_prefix("view", &prefix) {
                let name = &b.m.rows[row].label[prefix.len()..];
                if !hosts.iter().any(|h| &*h.instance == name) {
                    b.close_bar(row, t);
                }
            }
            for h in hosts {
                let row = b.row(&format!("{prefix}{}", h.instance), "view", a);
                let (class, state) = if h.healthy { ("healthy", "healthy") } else { ("unhealthy", "UNHEALTHY") };
                b.switch_bar(row, t, class, format!("{a} sees {} {state}", h.instance));
            }
        }
        Polled { .. } => b.mark(a, t, "poll", detail()),
        PushUnchanged { .. } => b.mark(a, t, "push", detail()),
        PollFailed { .. } => b.mark(a, t, "drop", detail()),
        MetadataUpdated { .. } | MetadataRefused { .. } | SwitchesSet { .. } | OperationMissed { .. } => {
            b.mark(a, t, "other", detail())
        }
        // ---- cluster membership: a tick per report, an event where a view changes ----
        MemberProbed { from, to, failure, .. } if from == to => {
            b.mark(a, t, if failure.is_none() { "heartbeat" } else { "drop" }, detail())
        }
        MemberProbed { to, .. } => {
            b.mark(a, t, if *to == crate::nacos::cluster::NodeState::Up { "healthy" } else { "unhealthy" }, detail())
        }
        MemberReportIn { .. } => b.mark(a, t, "healthy", detail()),
        DistroSyncFailed { .. } | DistroVerifyFailed { .. } => b.mark(a, t, "drop", detail()),
        DistroCopyExpired { .. } => b.mark(a, t, "unhealthy", detail()),
        DistroLoaded { .. } | DistroTookOver { .. } => b.mark(a, t, "other", detail()),
        DistroLoadFailed { .. } => b.mark(a, t, "drop", detail()),
        DistroForwarded { .. } => b.mark(a, t, "other", detail()),
        DistroForwardFailed { .. } => b.mark(a, t, "drop", detail()),
    }
}
