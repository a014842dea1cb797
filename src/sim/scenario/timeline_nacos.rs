//! The Nacos operations of `[[action]]` tables: `update_metadata` (the console's
//! `updateInstance`), `deregister` (the application's `NamingService#deregisterInstance`) and
//! `nacos_switch` (`OperatorController#updateSwitch`).

use super::ctx::{range_text, Ctx, Kind, Least, MAX_DURATION};
use super::error::nearest;
use super::raw::{RawEvent, S};
use super::raw_nacos::RawMillis;
use super::{Action, NacosAppSpec, NacosInstanceSpec, NacosSpecs};
use crate::nacos::naming::Switches;
use crate::nacos::types::check_instance_is_legal;
use crate::sim::clock::parse_duration;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// The instances an operation may name, and the ones already reported as wrong.
pub struct NacosRefs<'a> {
    instances: BTreeMap<&'a str, (&'a NacosInstanceSpec, &'a NacosAppSpec)>,
    broken: &'a BTreeSet<String>,
}

impl<'a> NacosRefs<'a> {
    pub fn new(specs: &'a NacosSpecs, broken: &'a BTreeSet<String>) -> Self {
        let instances =
            specs.apps.iter().flat_map(|a| a.instances.iter().map(move |i| (i.name.as_str(), (i, a)))).collect();
        NacosRefs { instances, broken }
    }
}

/// The verb's action, if `raw` holds one of these verbs (`None` when it is wrong: reported).
pub fn nacos_action(ctx: &mut Ctx, raw: &RawEvent, refs: &NacosRefs) -> Option<Action> {
    if let Some(u) = &raw.update_metadata {
        let u = u.get_ref();
        let (i, app) = instance(ctx, refs, &u.instance)?;
        let servers = match &u.server {
            Some(s) => vec![ctx.refer(s, &[Kind::NacosServer])?],
            None => app.servers.clone(),
        };
        let metadata = u.metadata.get_ref().clone();
        // Nacos 2.x `InstanceOperatorClientImpl#updateInstance` starts with
        // `NamingUtils.checkInstanceIsLegal(instance)` on the request's metadata alone.
        if let Err(why) = check_instance_is_legal(&metadata) {
            let help = "InstanceOperatorClientImpl#updateInstance runs NamingUtils.checkInstanceIsLegal and answers \
                        400 INVALID_PARAM: keep preserved.heart.beat.interval at most both timeouts";
            return ctx.fail(u.metadata.span(), format!("update_metadata of {}: {why}", i.name), Some(help));
        }
        return Some(Action::UpdateMetadata { instance: i.name.clone(), servers, metadata });
    }
    if let Some(d) = &raw.deregister {
        let (i, app) = instance(ctx, refs, d)?;
        if app.transport == super::nacos::Transport::Grpc {
            let help = "not modelled for a 2.x client yet; `shutdown` its app instead (the closed connection removes \
                        its instances at once)";
            return ctx.fail(d.span(), format!("deregister of {}: a gRPC instance", i.name), Some(help));
        }
        return Some(Action::Deregister { instance: i.name.clone(), app: app.name.clone() });
    }
    let s = raw.nacos_switch.as_ref()?;
    let r = s.get_ref();
    let servers = match &r.server {
        Some(v) => vec![ctx.refer(v, &[Kind::NacosServer])?],
        None => ctx.names(Kind::NacosServer).to_vec(),
    };
    if servers.is_empty() {
        return ctx.fail(s.span(), "nacos_switch: there is no [[nacos_server]] to switch", None);
    }
    let client_beat_interval = match &r.client_beat_interval {
        Some(v) => Some(interval(ctx, v)?),
        None => None,
    };
    let switches = Switches { client_beat_interval, light_beat_enabled: r.light_beat_enabled };
    if switches == Switches::default() {
        let help = "give client_beat_interval, light_beat_enabled or both";
        return ctx.fail(s.span(), "nacos_switch sets nothing", Some(help));
    }
    Some(Action::NacosSwitch { servers, switches })
}

/// An `[[instance]]` by name, with its application.
fn instance<'a>(
    ctx: &mut Ctx,
    refs: &NacosRefs<'a>,
    v: &S<String>,
) -> Option<(&'a NacosInstanceSpec, &'a NacosAppSpec)> {
    let name = v.get_ref();
    if let Some(found) = refs.instances.get(name.as_str()) {
        return Some(*found);
    }
    if refs.broken.contains(name) {
        return None;
    }
    let help = match nearest(name, refs.instances.keys().copied()) {
        Some(n) => format!("did you mean {n:?}?"),
        None if refs.instances.is_empty() => "define it in an [[instance]] table".to_string(),
        None => "name one of the [[instance]] tables".to_string(),
    };
    ctx.fail(v.span(), format!("no [[instance]] is named {name:?}"), Some(&help))
}

/// `client_beat_interval`: a duration, or milliseconds as `SwitchManager#update` parses them
/// (`Long.parseLong`, no range check: 0 and negative values are taken).
fn interval(ctx: &mut Ctx, v: &S<RawMillis>) -> Option<i64> {
    let too_long = |ctx: &mut Ctx, span: Range<usize>, got: String| {
        let msg = format!("client_beat_interval must be at most {MAX_DURATION} (30 days), got {got}");
        ctx.fail::<i64>(span, msg, None)
    };
    match v.get_ref() {
        RawMillis::Millis(ms) if *ms > MAX_DURATION.millis() as i64 => too_long(ctx, v.span(), format!("{ms}")),
        RawMillis::Millis(ms) => Some(*ms),
        RawMillis::Text(text) => match parse_duration(text) {
            Ok(d) if d > MAX_DURATION => too_long(ctx, v.span(), d.to_string()),
            Ok(d) => Some(d.millis() as i64),
            Err(e) => {
                let help = format!(
                    "a duration {}, e.g. \"2s\", or milliseconds as the switch API takes them, e.g. 2000, 0 or -1",
                    range_text(Least::Zero)
                );
                ctx.fail(
                    v.span(),
                    format!("client_beat_interval: invalid duration {:?}: {}", e.input, e.why),
                    Some(&help),
                )
            }
        },
    }
}
