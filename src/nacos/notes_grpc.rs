//! How the 2.x gRPC trace events read in the timeline: the client's connection (connect, switch,
//! health check, redo) and the server's (`ConnectionManager`, the ejector, the client manager).

use crate::nacos::grpc::{CONNECTION_KEEP_ALIVE, DETECTION_TIMEOUT, KEEP_ALIVE_TIME};
use crate::nacos::notes::{secs, NacosNote};
use crate::sim::name::Name;

pub(crate) fn line(n: &NacosNote) -> String {
    use NacosNote::*;
    match n {
        GrpcConnected { server, conn, previous: None } => format!("gRPC connected to {server} (connection {conn})"),
        GrpcConnected { server, conn, previous: Some(old) } => {
            format!("gRPC switched to {server} (connection {conn}); abandons and closes {old} (RpcClient#reconnect)")
        }
        GrpcConnectFailed { server, failure, retry_in: None } => {
            format!("gRPC connect to {server} failed ({failure}) on start-up; next server at once")
        }
        GrpcConnectFailed { server, failure, retry_in: Some(d) } => {
            format!("gRPC connect to {server} failed ({failure}); reconnect loop sleeps {}", secs(*d))
        }
        GrpcHealthOk { server } => {
            format!("idle {} -> HealthCheckRequest to {server} answered", secs(CONNECTION_KEEP_ALIVE))
        }
        GrpcHealthFailed { server, tries, why } => format!(
            "HealthCheckRequest to {server} failed {tries} time(s) (last: {why}): UNHEALTHY, switchServerAsync \
             (RpcClient#healthCheck)"
        ),
        GrpcStreamClosed { server, conn } => {
            format!("gRPC stream to {server} ({conn}) ended (FIN/RST): UNHEALTHY, switchServerAsync")
        }
        GrpcRedo { server, instances } => {
            format!(
                "RedoScheduledTask: register again on {server}: {}",
                instances.iter().map(Name::as_str).collect::<Vec<_>>().join(", ")
            )
        }
        GrpcRequestFailed { instance, server, failure } => {
            format!("InstanceRequest for {instance} to {server} failed ({failure}); the redo task retries it")
        }
        ConnRegistered { conn, client } => {
            format!("connection {conn} from {client} registered (ConnectionManager#register)")
        }
        ConnDetecting { conn, client, idle } => format!(
            "connection {conn} ({client}) idle {} >= {}: ClientDetectionRequest, waits up to {} \
             (NacosRuntimeConnectionEjector)",
            secs(*idle),
            secs(KEEP_ALIVE_TIME),
            secs(DETECTION_TIMEOUT)
        ),
        ConnDetected { conn, client } => format!("connection {conn} ({client}) answered the detection: active again"),
        ConnUnregistered { conn, client, ejected_idle: Some(idle) } => format!(
            "connection {conn} ({client}) did not answer the detection (idle {}): unregistered \
             (NacosRuntimeConnectionEjector)",
            secs(*idle)
        ),
        ConnUnregistered { conn, client, ejected_idle: None } => {
            format!("connection {conn} ({client}) closed by TCP: unregistered (transportTerminated)")
        }
        ConnectionReleased { conn, services, instances } => {
            let list: Vec<String> = services.iter().zip(instances).map(|(s, i)| format!("{s} {i}")).collect();
            let what = if list.is_empty() { "no instances".to_string() } else { list.join(", ") };
            // A Distro DELETE names a 1.x client by its `ip:port#true` id (`synced_ip`).
            let manager =
                if conn.contains('#') { "EphemeralIpPortClientManager" } else { "ConnectionBasedClientManager" };
            format!("client {conn} released, instances removed at once: {what} ({manager}#clientDisconnected)")
        }
        other => other.to_string(),
    }
}

/// The narration `explain` gives each event: the Java path that decides it.
pub(crate) fn story(n: &NacosNote) -> String {
    use NacosNote::*;
    let why = match n {
        GrpcConnected { previous: None, .. } => {
            "RpcClient#start → GrpcClient#connectToServer: ServerCheckRequest, then the bi-stream's \
             ConnectionSetupRequest; the server registers the connection and a ConnectionBasedClient for it"
        }
        GrpcConnected { .. } => {
            "RpcClient#reconnect: the new connection is up, so the old one is abandoned and closed; the \
             DISCONNECTED then CONNECTED events make NamingGrpcRedoService mark every instance unregistered, and \
             RedoScheduledTask registers them again at its next 3 s run"
        }
        GrpcConnectFailed { .. } => {
            "GrpcClient#connectToServer returned null (no ServerCheckResponse within 3 s, or refused): \
             RpcClient#reconnect tries the next server of NamingServerListManager after its sleep"
        }
        GrpcHealthFailed { .. } => {
            "RpcClient keep-alive thread: idle >= 5 s → healthCheck(): 4 tries of 3 s each (healthCheckRetryTimes = \
             3 counts retries); failed → UNHEALTHY → reconnect. The old connection stays open until a new one is up"
        }
        GrpcStreamClosed { .. } => {
            "GrpcClient#bindRequestStream onError/onCompleted: the stream ended while RUNNING → UNHEALTHY → \
             switchServerAsync"
        }
        GrpcRedo { .. } => {
            "RedoScheduledTask#redoForInstances (every 3 s, only while connected): instances not marked registered \
             are sent again with doRegisterService"
        }
        GrpcRequestFailed { .. } => {
            "RpcClient#request failed (timeout or error answer); NamingGrpcRedoService keeps the instance \
             unregistered, so the redo task tries again"
        }
        ConnRegistered { .. } => "GrpcBiStreamRequestAcceptor: ConnectionSetupRequest → ConnectionManager#register",
        ConnDetecting { .. } => {
            "NacosRuntimeConnectionEjector#ejectOutdatedConnection (every 3 s, fixed delay): now - lastActiveTime >= \
             KEEP_ALIVE_TIME (20 s) → ClientDetectionRequest with a 5 s timeout; the run waits on its latch up to 5 s"
        }
        ConnDetected { .. } => "the ClientDetectionResponse arrived: Connection#freshActiveTime, not ejected",
        ConnUnregistered { ejected_idle: Some(_), .. } => {
            "the latch ran out without a successful answer → ConnectionManager#unregister"
        }
        ConnUnregistered { .. } => {
            "AddressTransportFilter#transportTerminated (the TCP connection closed) → ConnectionManager#unregister"
        }
        ConnectionReleased { conn, .. } if conn.contains('#') => {
            "a Distro DELETE from the client's owner → DistroClientDataProcessor#processData → \
             EphemeralIpPortClientManager#clientDisconnected: the copy and all its instances go at once \
             (ClientDisconnectEvent → ServiceChangedEvent → a push 500 ms on)"
        }
        ConnectionReleased { .. } => {
            "ConnectionBasedClientManager#clientDisConnected → clientDisconnected: the client and all its instances \
             go at once (ClientDisconnectEvent → ServiceChangedEvent → a push 500 ms on) — no unhealthy phase"
        }
        _ => "",
    };
    format!("{}: {why}", line(n))
}
