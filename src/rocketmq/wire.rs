//! The RocketMQ remoting requests the model exchanges, named by their request codes.

use crate::rocketmq::send::SendCode;
use crate::rocketmq::types::{DataVersion, RegisterBrokerRequest, TopicRouteData, UnregisterRequest};
use crate::sim::ids::MsgId;
use crate::sim::name::Name;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Debug)]
pub enum RmqMsg {
    /// `REGISTER_BROKER` (103): the broker's full (or incremental) topic config. One request
    /// is shared by the copies sent to every name server.
    RegisterBroker(Rc<RegisterBrokerRequest>),
    RegisterBrokerReply {
        reply_to: MsgId,
        ok: bool,
        /// `RegisterBrokerResponseHeader`: a slave's master address and the master's HA
        /// address (`None` for a master, or a slave whose master is not live).
        master_addr: Option<Name>,
        ha_server_addr: Option<Name>,
    },
    /// `UNREGISTER_BROKER` (104), sent by a broker shutting down gracefully.
    UnregisterBroker {
        request: Box<UnregisterRequest>,
    },
    UnregisterBrokerReply {
        reply_to: MsgId,
        ok: bool,
    },
    /// `QUERY_DATA_VERSION` (322): the acting-master broker's 1 s lightweight heartbeat
    /// (`compatibleWithOldNameSrv = true`, so not `BROKER_HEARTBEAT`). Oneway.
    QueryDataVersion(Arc<HeartbeatRequest>),
    /// `GET_ROUTEINFO_BY_TOPIC` (105).
    GetRouteInfo {
        topic: String,
    },
    /// The answer; `None` is `TOPIC_NOT_EXIST` (17). Shared: a name server answers every
    /// client with the same immutable snapshot until its tables change.
    RouteInfo {
        reply_to: MsgId,
        topic: String,
        route: Option<Rc<TopicRouteData>>,
    },
    /// `GET_BROKER_CLUSTER_INFO` (106): a 5.x broker's `refreshMetadata` every 5 s. What the
    /// broker does with the answer (static-topic metadata) does not touch routes; what matters
    /// here is the traffic on the chosen name server's channel.
    GetClusterInfo,
    GetClusterInfoReply {
        reply_to: MsgId,
    },
    /// `SEND_MESSAGE_V2` (310): one message for one queue of a topic, from a producer.
    SendMessage {
        topic: Name,
        queue_id: u32,
    },
    /// The broker's answer (see [`crate::rocketmq::send`]).
    SendMessageReply {
        reply_to: MsgId,
        code: SendCode,
    },
}

/// The lightweight heartbeat's fields; one request is shared by the copies sent to every name
/// server. (Boxed so that the common messages, and with them every packet, stay small.)
#[derive(Debug)]
pub struct HeartbeatRequest {
    pub cluster: String,
    pub addr: String,
    pub broker_name: String,
    pub broker_id: u64,
    pub data_version: DataVersion,
}

impl RmqMsg {
    pub fn code_name(&self) -> &'static str {
        match self {
            RmqMsg::RegisterBroker(_) => "REGISTER_BROKER",
            RmqMsg::RegisterBrokerReply { .. } => "REGISTER_BROKER reply",
            RmqMsg::UnregisterBroker { .. } => "UNREGISTER_BROKER",
            RmqMsg::UnregisterBrokerReply { .. } => "UNREGISTER_BROKER reply",
            RmqMsg::QueryDataVersion(_) => "QUERY_DATA_VERSION",
            RmqMsg::GetRouteInfo { .. } => "GET_ROUTEINFO_BY_TOPIC",
            RmqMsg::RouteInfo { .. } => "GET_ROUTEINFO_BY_TOPIC reply",
            RmqMsg::GetClusterInfo => "GET_BROKER_CLUSTER_INFO",
            RmqMsg::GetClusterInfoReply { .. } => "GET_BROKER_CLUSTER_INFO reply",
            RmqMsg::SendMessage { .. } => "SEND_MESSAGE_V2",
            RmqMsg::SendMessageReply { .. } => "SEND_MESSAGE_V2 reply",
        }
    }

    /// The request an answer answers (`opaque`), for the remoting client's response table.
    pub fn reply_to(&self) -> Option<MsgId> {
        match self {
            RmqMsg::RegisterBrokerReply { reply_to, .. }
            | RmqMsg::UnregisterBrokerReply { reply_to, .. }
            | RmqMsg::RouteInfo { reply_to, .. }
            | RmqMsg::GetClusterInfoReply { reply_to }
            | RmqMsg::SendMessageReply { reply_to, .. } => Some(*reply_to),
            _ => None,
        }
    }
}
