//! How the Distro trace events read: in the timeline (`line`) and in `explain` (`story`), each
//! naming the Java that acts.

use crate::nacos::notes::NacosNote;

/// Why a sync to a member this one does not see `UP` fails without being sent
/// (`DistroClientTransportAgent#checkTargetServerStatusUnhealthy`).
pub const NOT_UP: &str = "target not UP in this member's view";

pub(crate) fn line(n: &NacosNote) -> String {
    match n {
        NacosNote::DistroSyncFailed { target, conn, op, why } => {
            format!("Distro {} of {conn} to {target} failed ({why}): again in 3s (DistroProtocol)", op.word())
        }
        NacosNote::DistroVerifyFailed { target, conn } => {
            format!("Distro verify of {conn} failed on {target}: CHANGE to {target} now (DistroProtocol#syncToTarget)")
        }
        NacosNote::DistroCopyExpired { conn, idle } => {
            format!("Distro copy {conn} not verified for {idle}: removed (ConnectionBasedClient#isExpire)")
        }
        NacosNote::DistroLoaded { from, clients } => {
            format!("Distro snapshot from {from} loaded: {clients} clients copied (DistroLoadDataTask)")
        }
        NacosNote::DistroTookOver { client } => {
            format!("Distro: {client} is this member's now; its beat checks run here (DistroMapper#responsible)")
        }
        NacosNote::DistroLoadFailed { retry_in } => {
            format!("Distro snapshot: no peer answered; next try in {retry_in} (DistroLoadDataTask)")
        }
        NacosNote::DistroForwarded { api, client, target } => {
            format!(
                "DistroFilter: {api} for {client} proxied to {target}, its responsible member (DistroFilter#doFilter)"
            )
        }
        NacosNote::DistroForwardFailed { api, client, target, failure } => {
            format!("DistroFilter: {api} for {client} to {target} failed ({failure}): HTTP 500 to the client (HttpClient#request)")
        }
        other => other.to_string(),
    }
}

/// What `explain` says of a Distro event.
pub(crate) fn story(n: &NacosNote) -> String {
    match n {
        NacosNote::DistroSyncFailed { target, conn, op, why } => format!(
            "DistroSync{}Task for {conn} to {target}: DistroClientTransportAgent#syncData failed ({why}) — a target \
             not UP in this member's view fails at once (checkTargetServerStatusUnhealthy), a silent one after the \
             3 s sync timeout → handleFailedTask: the DistroDelayTask is queued again with syncRetryDelayMillis \
             (3 s), for as long as {target} is a member",
            if op.word() == "CHANGE" { "Change" } else { "Delete" }
        ),
        NacosNote::DistroVerifyFailed { target, conn } => format!(
            "DistroVerifyTimedTask (every 5 s): {target} answered the verify of {conn} with a failure \
             (ConnectionBasedClientManager#verifyClient: no copy, or another revision) → ClientVerifyFailedEvent \
             → DistroClientDataProcessor#syncToVerifyFailedServer: a CHANGE to {target} alone, delay 0"
        ),
        NacosNote::DistroCopyExpired { conn, idle } => format!(
            "ConnectionBasedClientManager.ExpiredClientCleaner (every 5 s): the copy of {conn} is not native and \
             was last renewed by its owner's verify {idle} ago, more than clientExpiredTime (3 min, \
             nacos.naming.client.expired.time) → clientDisconnected: the copy and its instances go"
        ),
        NacosNote::DistroLoaded { from, clients } => format!(
            "DistroLoadDataTask (submitted at start-up): loadAllDataSnapshotFromRemote asks the other members in \
             address order, skipping those not UP, each with a 30 s timeout; {from} answered the SNAPSHOT \
             (getDatumSnapshot: all its connection clients, its own and its copies) → processSnapshot: {clients} \
             copies made here (isNative false, lastRenewTime now) → finishInitial: this member's verify task may \
             run from now on"
        ),
        NacosNote::DistroTookOver { client } => format!(
            "DistroMapper#onEvent: a MembersChangeEvent rebuilt this member's healthy list (UP and SUSPICIOUS \
             members, sorted), and distroHash({}) % size now lands on this member. The copy it holds \
             becomes its own: InstanceBeatCheckResponsibleInterceptor stops skipping the client, so \
             ClientBeatCheckTaskV2 checks it at its next 5 s tick, counting silence from the last beat or from \
             the last verify that refreshed the copy (ClientBeatUpdateTask); and its changes are synced from here \
             (DistroClientDataProcessor#isInvalidClient)",
            client.responsible_tag()
        ),
        NacosNote::DistroLoadFailed { retry_in } => format!(
            "DistroLoadDataTask: no member gave a snapshot (each was not UP, or did not answer within 30 s) → \
             submitLoadDataTask again in {retry_in} (loadDataRetryDelayMillis); until then this member sends no \
             verify (isFinishInitial false)"
        ),
        NacosNote::DistroForwarded { api, client, target } => format!(
            "DistroFilter#doFilter: {api} is @CanDistro; DistroIpPortTagGenerator gives the tag {client} (the ip and \
             port parameters) and DistroMapper#responsible says it is not this member's (its sorted UP/SUSPICIOUS \
             list puts distroHash(tag) % size elsewhere) → HttpClient#request to mapSrv(tag) = {target}, same path \
             and parameters, connect and read timeouts 2 s (PROXY_CONNECT_TIMEOUT, PROXY_READ_TIMEOUT); {target}'s \
             answer is relayed to the client as it is"
        ),
        NacosNote::DistroForwardFailed { api, client, target, failure } => format!(
            "DistroFilter#doFilter: the proxied {api} for {client} to {target} failed ({failure}): HttpClient#request \
             catches the exception and returns RestResult(500, e.toString()), which the filter writes back \
             (WebUtils.response) → the client's NamingProxy#reqApi sees a 500 and tries its next server, or \
             fails the call"
        ),
        other => other.to_string(),
    }
}
