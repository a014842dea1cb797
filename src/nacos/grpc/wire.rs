//! What a 2.x client and a server say over their gRPC connection. Each message is one segment on
//! the connection's TCP stream (`docs/network-model.md`); requests in either direction carry the
//! sim's message id, and a `Response` names the one it answers.

use crate::nacos::types::{Instance, ServiceKey};
use crate::sim::ids::MsgId;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub enum GrpcMsg {
    /// `GrpcClient#connectToServer`: the `ServerCheckRequest` and the bi-stream's
    /// `ConnectionSetupRequest`, folded into one round trip (see `actors::nacos_grpc_client`).
    /// `client` is the process, as the server's `ConnectionMeta.clientIp` names it.
    Setup { client: Arc<str> },
    /// `HealthCheckRequest` (client → server), answered by `HealthCheckRequestHandler`.
    HealthCheck,
    /// `InstanceRequest` of type `registerInstance` (client → server).
    Register { service: ServiceKey, instance: Arc<Instance> },
    /// `ClientDetectionRequest` (server → client, on the stream), answered by the client's
    /// built-in handler with a `ClientDetectionResponse`.
    ClientDetection,
    /// The answer to `reply_to`: success, or an error code (`UN_REGISTER` for a connection the
    /// server no longer knows). A setup's answer carries the connection id.
    Response { reply_to: MsgId, error: Option<i32>, conn: Option<Arc<str>> },
}

impl GrpcMsg {
    /// The request type's simple name, for trace lines.
    pub fn kind(&self) -> &'static str {
        match self {
            GrpcMsg::Setup { .. } => "gRPC ConnectionSetupRequest",
            GrpcMsg::HealthCheck => "gRPC HealthCheckRequest",
            GrpcMsg::Register { .. } => "gRPC InstanceRequest",
            GrpcMsg::ClientDetection => "gRPC ClientDetectionRequest",
            GrpcMsg::Response { .. } => "gRPC response",
        }
    }
}
