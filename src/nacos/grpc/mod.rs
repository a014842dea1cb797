//! The Nacos 2.x gRPC client and the server's connection bookkeeping, pure (issue 11 item 3).
//!
//! A 2.x `NacosNamingService` keeps **one long-lived connection** (`RpcClient` / `GrpcClient`) to
//! one server of its list and registers its ephemeral instances over it
//! (`NamingGrpcClientProxy`). Liveness is per connection, not per instance: the client probes an
//! idle connection (`RpcClient#healthCheck`) and the server ejects one it has not heard from
//! (`NacosRuntimeConnectionEjector`). When a connection ends, the server drops every instance it
//! carried at once (`ConnectionBasedClientManager#clientDisconnected`): there is no 15 s
//! unhealthy phase and no 30 s delete for a gRPC instance.
//!
//! - [`client`] — the client's timing rules: server rotation, the reconnect loop's sleeps, the
//!   keep-alive check and the health check's tries.
//! - [`redo`] — `NamingGrpcRedoService`: what to register again after a reconnect.
//! - [`connections`] — the server's `ConnectionManager` and its ejector.
//! - [`wire`] — the requests and responses on a connection.
//!
//! Versions: Nacos 2.5.1 (the latest 2.x release), `common/.../remote/client/RpcClient.java`,
//! `core/.../remote/ConnectionManager.java`, `NacosRuntimeConnectionEjector.java`. 2.1.2's
//! `ConnectionManager` ejected with a 1 s probe and a 3 s latch; 2.2.0–2.2.4 did not eject silent
//! connections at all (#10773, fixed in 2.3.0); the sim follows 2.5.1.

pub mod client;
pub mod connections;
pub mod redo;
pub mod wire;

#[cfg(test)]
mod tests;

use crate::sim::clock::SimDuration;

/// `DefaultGrpcClientConfig.Builder.connectionKeepAlive` (`nacos.remote.client.grpc.connect.keep.alive`):
/// the client health-checks a connection idle this long.
pub const CONNECTION_KEEP_ALIVE: SimDuration = SimDuration::from_millis(5_000);
/// `DefaultGrpcClientConfig.Builder.healthCheckRetryTimes`: 3 — which `RpcClient#healthCheck`'s
/// `while (reTryTimes >= 0)` loop turns into **4** tries.
pub const HEALTH_CHECK_RETRY_TIMES: u32 = 3;
/// `DefaultGrpcClientConfig.Builder.healthCheckTimeOut`: each try waits this long for its answer.
pub const HEALTH_CHECK_TIMEOUT: SimDuration = SimDuration::from_millis(3_000);
/// `RpcClient#healthCheck`: `Thread.sleep(random.nextInt(500))` before the first try only.
pub const HEALTH_CHECK_JITTER_MS: u64 = 500;
/// `DefaultGrpcClientConfig.Builder.serverCheckTimeOut`: how long `GrpcClient#connectToServer`
/// waits for the `ServerCheckResponse`.
pub const SERVER_CHECK_TIMEOUT: SimDuration = SimDuration::from_millis(3_000);
/// `DefaultGrpcClientConfig.Builder.timeOutMills`: a request's (`InstanceRequest`'s) deadline.
pub const REQUEST_TIMEOUT: SimDuration = SimDuration::from_millis(3_000);
/// `DefaultGrpcClientConfig.Builder.retryTimes`: `RpcClient#start` tries `retryTimes + 1` servers
/// synchronously before it falls back to the asynchronous reconnect loop.
pub const RETRY_TIMES: u32 = 3;
/// `Constants.DEFAULT_REDO_DELAY_TIME`: `RedoScheduledTask` runs with this fixed delay.
pub const REDO_DELAY: SimDuration = SimDuration::from_millis(3_000);

/// `RuntimeConnectionEjector.KEEP_ALIVE_TIME`: a connection idle at least this long is probed.
pub const KEEP_ALIVE_TIME: SimDuration = SimDuration::from_millis(20_000);
/// `ConnectionManager#start`: `scheduleWithFixedDelay(doEject, 1000L, 3000L)` — first run 1 s
/// after start, then 3 s after the previous run *ended*.
pub const EJECTOR_INITIAL_DELAY: SimDuration = SimDuration::from_millis(1_000);
pub const EJECTOR_DELAY: SimDuration = SimDuration::from_millis(3_000);
/// `NacosRuntimeConnectionEjector#ejectOutdatedConnection`: the `ClientDetectionRequest`'s
/// callback timeout and the `latch.await` are both 5000 ms (2.1.2: 1000 ms and 3000 ms).
pub const DETECTION_TIMEOUT: SimDuration = SimDuration::from_millis(5_000);

/// `NacosException.UN_REGISTER`: what `GrpcRequestAcceptor` answers on a connection the server
/// no longer knows ("Connection is unregistered.").
pub const UN_REGISTER: i32 = 301;
