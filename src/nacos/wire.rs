//! The Nacos naming HTTP calls the model exchanges (1.x OpenAPI, served by a 2.x server), and the
//! UDP push.
//!
//! Requests travel over the network's keep-alive channels like RocketMQ's remoting calls; every
//! HTTP request gets exactly one `Reply` (a 2xx body or an HTTP error). Large parts are behind
//! `Arc`s so a packet is cheap to build and to clone.

use crate::nacos::beat::BeatInfo;
use crate::nacos::types::{Instance, ServiceInfo, ServiceKey};
use crate::sim::ids::MsgId;
use crate::sim::name::Name;
use std::sync::Arc;

pub const API_REGISTER: &str = "POST /nacos/v1/ns/instance";
pub const API_DEREGISTER: &str = "DELETE /nacos/v1/ns/instance";
pub const API_BEAT: &str = "PUT /nacos/v1/ns/instance/beat";
pub const API_LIST: &str = "GET /nacos/v1/ns/instance/list";
/// `MemberInfoReportTask#executeBody` (2.0–2.2): `POST /nacos/v1/core/cluster/report`.
pub const API_MEMBER_REPORT: &str = "POST /nacos/v1/core/cluster/report";

#[derive(Clone, Debug)]
pub enum NacosMsg {
    /// `registerService`: `namespaceId, serviceName (grouped), groupName, clusterName, ip, port,
    /// weight, enable, healthy, ephemeral, metadata`.
    Register(Arc<RegisterReq>),
    /// `deregisterService`: `namespaceId, serviceName, clusterName, ip, port, ephemeral`.
    Deregister(Arc<DeregisterReq>),
    /// `sendBeat`: query `namespaceId, serviceName, clusterName, ip, port`, plus a `beat=<json>`
    /// form body unless the beat is light. Carried by value (see [`BeatReq`]).
    Beat(BeatReq),
    /// `queryList`: `udpPort > 0` also subscribes the caller for UDP pushes on that server.
    List(Arc<ListReq>),
    /// The HTTP response to request `reply_to`.
    Reply { reply_to: MsgId, answer: Answer },
    /// A UDP push of a service's current data (`PushExecutorUdpImpl`). `ack` is the key the
    /// subscriber's acknowledgement names (`AckEntry`: its address and the data's `lastRefTime`).
    Push { data: Arc<ServiceInfo>, ack: u64 },
    /// A cluster member reports itself (`getSelf()`) to a peer; answered `Ok` (Nacos answers
    /// with the receiver's own `Member` as JSON, which `onSuccess` reads the same way).
    MemberReport { from: Arc<str> },
    /// The `PushReceiver`'s UDP answer to a push: `{"type": "push-ack", "lastRefTime": ...}`.
    PushAck { ack: u64 },
    /// A 2.x client's gRPC connection (`crate::nacos::grpc::wire`).
    Grpc(crate::nacos::grpc::wire::GrpcMsg),
    /// Distro's `DistroDataRequest` from member `from` about its client `conn`: a CHANGE with the
    /// client's data, or a DELETE (`None`). Answered `Ok`.
    DistroData { from: Arc<str>, conn: Arc<str>, data: Option<Arc<crate::nacos::naming::ConnSyncData>> },
    /// Distro's VERIFY (`DistroClientVerifyInfo`): answered `Ok` if the copy was renewed, an
    /// error if the receiver lacks it or holds another revision.
    DistroVerify { from: Arc<str>, conn: Arc<str>, revision: u64 },
    /// Distro's SNAPSHOT request (`DistroLoadDataTask` → `getDatumSnapshot`).
    DistroSnapshot { from: Arc<str> },
    /// The answer to SNAPSHOT request `reply_to`: every connection client the peer holds.
    DistroSnapshotData { reply_to: MsgId, clients: Arc<Vec<(Arc<str>, crate::nacos::naming::ConnSyncData)>> },
    /// A client's register, deregister or beat that member `from`'s `DistroFilter` proxies to
    /// the member responsible for it: the same path and parameters, with the peer's
    /// `User-Agent: Nacos-Server` (which forbids a second forward). Answered like `req`.
    Proxied { from: Arc<str>, req: Arc<NacosMsg> },
}

#[derive(Debug)]
pub struct RegisterReq {
    pub service: ServiceKey,
    pub instance: Instance,
}

#[derive(Debug)]
pub struct DeregisterReq {
    pub service: ServiceKey,
    pub cluster: Arc<str>,
    pub ip: Name,
    pub port: u16,
}

/// A beat's query (and body). Its names are interned, so a light beat's request is 40 bytes
/// that copy without touching a reference count: an instance's app, its HTTP client's in-flight
/// record and the packet each hold their own. As one shared `Arc`, the two clones and two drops
/// per beat were locked instructions, 6% of the Nacos bench. A full beat shares its body.
#[derive(Clone, Debug)]
pub struct BeatReq {
    pub service: ServiceKey,
    pub cluster: Name,
    pub ip: Name,
    pub port: u16,
    /// The full beat's body; `None` for a light beat.
    pub body: Option<Arc<BeatInfo>>,
}

#[derive(Clone, Debug)]
pub struct ListReq {
    pub service: ServiceKey,
    /// `clientIP` and `udpPort`: the subscriber's UDP address (`ip:udpPort#true` client).
    pub client_ip: Name,
    pub udp_port: u16,
    pub healthy_only: bool,
}

/// `InstanceController#beat`'s JSON answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BeatReply {
    pub client_beat_interval: i64,
    pub code: i32,
    pub light_beat_enabled: bool,
}

#[derive(Clone, Debug)]
pub enum Answer {
    /// `"ok"` (register, deregister).
    Ok,
    Beat(BeatReply),
    List(Arc<ServiceInfo>),
    /// A non-2xx status: the client's `reqApi` tries the next server.
    Error {
        status: u16,
        message: Arc<str>,
    },
}

impl NacosMsg {
    /// Whether the message holds nothing to count down or free: a light beat's request, or a
    /// beat's or a plain `ok` answer. Each beat drops three of these (its request, its answer,
    /// and the request's copy kept for a retry); the drop glue of a type with this many variants
    /// is a call and a jump table, about 13 instructions for nothing, so the three places that
    /// drop them ask this first ([`Packet::discard`](crate::sim::packet::Packet::discard)).
    #[inline(always)]
    pub fn owns_nothing(&self) -> bool {
        match self {
            NacosMsg::Beat(b) => b.body.is_none(),
            NacosMsg::Reply { answer: Answer::Ok | Answer::Beat(_), .. } => true,
            _ => false,
        }
    }

    /// A copy: the message's bytes when it owns nothing, else `clone`.
    ///
    /// A beat's request is copied where it is sent, and its copy moved into the call at once.
    /// `clone` writes a copy field by field, and the move reads it back in 16-byte pieces, each
    /// across several of those narrower stores: the CPU cannot forward such a read from its
    /// store buffer and waits for them to reach its cache, a stall per beat. A message that owns
    /// nothing is copied as it lies in memory instead, in pieces the move's reads line up with.
    #[inline(always)]
    pub fn copy(&self) -> NacosMsg {
        if self.owns_nothing() {
            // SAFETY: nothing in it is counted or freed (`owns_nothing`), so the two values, this
            // and the one read here, are as independent as a clone's.
            unsafe { std::ptr::read(self) }
        } else {
            self.clone()
        }
    }

    /// The HTTP method and path (or `UDP push`), for trace lines.
    pub fn kind(&self) -> &'static str {
        match self {
            NacosMsg::Register(_) => API_REGISTER,
            NacosMsg::Deregister(_) => API_DEREGISTER,
            NacosMsg::Beat(_) => API_BEAT,
            NacosMsg::List(_) => API_LIST,
            NacosMsg::Reply { .. } => "HTTP response",
            NacosMsg::Push { .. } => "UDP push",
            NacosMsg::PushAck { .. } => "UDP push-ack",
            NacosMsg::MemberReport { .. } => API_MEMBER_REPORT,
            NacosMsg::Grpc(m) => m.kind(),
            NacosMsg::DistroData { data: Some(_), .. } => "DistroDataRequest CHANGE",
            NacosMsg::DistroData { data: None, .. } => "DistroDataRequest DELETE",
            NacosMsg::DistroVerify { .. } => "DistroDataRequest VERIFY",
            NacosMsg::DistroSnapshot { .. } => "DistroDataRequest SNAPSHOT",
            NacosMsg::DistroSnapshotData { .. } => "DistroDataResponse SNAPSHOT",
            NacosMsg::Proxied { req, .. } => req.kind(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nacos::types::Metadata;
    use crate::sim::clock::SimDuration;

    /// A beat of instance 10.0.0.1:8080 of `orders`, light or full, and the full beat's body.
    fn beats() -> (impl Fn(Option<Arc<BeatInfo>>) -> NacosMsg, Arc<BeatInfo>) {
        let instance = Instance {
            ip: Name::from("10.0.0.1"),
            port: 8080,
            weight: 1.0,
            cluster: Arc::from("DEFAULT"),
            metadata: Arc::new(Metadata::new()),
            healthy: true,
            enabled: true,
        };
        let service = ServiceKey::new("public", "DEFAULT_GROUP", "orders");
        let info = Arc::new(BeatInfo::new(service.clone(), &instance, SimDuration(5000)));
        let beat = move |body| {
            NacosMsg::Beat(BeatReq {
                service: service.clone(),
                cluster: Name::from("DEFAULT"),
                ip: instance.ip,
                port: 8080,
                body,
            })
        };
        (beat, info)
    }

    /// `owns_nothing` lets a handler forget a message instead of dropping it: it must say yes
    /// only where forgetting leaks nothing.
    #[test]
    fn only_light_beats_and_plain_answers_own_nothing() {
        let (beat, info) = beats();
        let reply = |answer| NacosMsg::Reply { reply_to: 7, answer };
        let beat_reply = BeatReply { client_beat_interval: 5000, code: 10200, light_beat_enabled: true };
        assert!(beat(None).owns_nothing(), "a light beat");
        assert!(!beat(Some(info)).owns_nothing(), "a full beat shares its body");
        assert!(reply(Answer::Ok).owns_nothing());
        assert!(reply(Answer::Beat(beat_reply)).owns_nothing());
        assert!(!reply(Answer::Error { status: 500, message: Arc::from("boom") }).owns_nothing());
        assert!(!NacosMsg::MemberReport { from: Arc::from("nacos1") }.owns_nothing());
        // What the two plain answers and a light beat are made of has nothing to drop.
        assert!(!std::mem::needs_drop::<BeatReply>() && !std::mem::needs_drop::<Name>());
        assert!(!std::mem::needs_drop::<ServiceKey>());
    }

    /// `copy` is a clone: bytes for a message that owns nothing, a counted share otherwise.
    #[test]
    fn a_copy_is_a_clone() {
        let (beat, info) = beats();
        let light = beat(None);
        let NacosMsg::Beat(copy) = light.copy() else { panic!("a beat copies to a beat") };
        let NacosMsg::Beat(original) = &light else { unreachable!() };
        assert!(copy.service == original.service && (copy.ip, copy.port) == (original.ip, 8080) && copy.body.is_none());
        let full = beat(Some(info.clone()));
        let copies: Vec<NacosMsg> = (0..3).map(|_| full.copy()).collect();
        assert_eq!(Arc::strong_count(&info), 5, "each copy of a full beat holds its body");
        drop((copies, full));
        assert_eq!(Arc::strong_count(&info), 1);
        let reply = NacosMsg::Reply { reply_to: 7, answer: Answer::Error { status: 500, message: Arc::from("boom") } };
        let NacosMsg::Reply { reply_to: 7, answer: Answer::Error { message, .. } } = reply.copy() else { panic!() };
        assert_eq!(&*message, "boom");
    }
}
