//! What counts as an arrival: the deliveries the monitor takes as ground truth — what reached a
//! server, not what the server made of it — and the record it keeps of them.

use crate::nacos::types::{ClientKey, ServiceKey};
use crate::nacos::wire::NacosMsg;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::clock::SimTime;
use crate::sim::packet::Body;

/// A delivery the monitor takes as ground truth: what *arrived*, not what a server believes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// A broker's registration or heartbeat reached a name server.
    Rmq,
    /// An instance's beat, registration or deregistration reached a naming server.
    Nacos(NacosArrival),
}

impl Arrival {
    /// Picks the arrivals out of everything delivered (cheap: no names are looked up).
    pub fn of(body: &Body) -> Option<Arrival> {
        match body {
            Body::Rmq(RmqMsg::RegisterBroker(_) | RmqMsg::QueryDataVersion(_)) => Some(Arrival::Rmq),
            Body::Nacos(msg) => NacosArrival::of(msg).map(Arrival::Nacos),
            _ => None,
        }
    }
}

/// A request from an instance that reached a naming server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NacosArrival {
    pub service: ServiceKey,
    pub client: ClientKey,
    pub kind: ArrivalKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrivalKind {
    /// A full beat (with its `BeatInfo`): refreshes `lastHeartBeatTime`, or registers.
    Beat,
    /// A light beat (no body): refreshes `lastHeartBeatTime`, or gets 20404 if the server does
    /// not publish the instance.
    LightBeat,
    /// A registration: the instance is (re)published with `lastHeartBeatTime = now`.
    Register,
    /// A deregistration: only the client's `lastUpdatedTime` moves.
    Deregister,
}

impl NacosArrival {
    /// The arrival a Nacos message stands for, if it is one. A full beat's body names the
    /// instance, as `InstanceController#beat` reads it.
    pub fn of(msg: &NacosMsg) -> Option<Self> {
        let (service, client, kind) = match msg {
            NacosMsg::Beat(req) => {
                let (ip, port) = req.body.as_ref().map_or((&req.ip, req.port), |b| (&b.ip, b.port));
                let kind = if req.body.is_some() { ArrivalKind::Beat } else { ArrivalKind::LightBeat };
                (&req.service, ClientKey::new(ip, port), kind)
            }
            NacosMsg::Register(req) => {
                (&req.service, ClientKey::new(&req.instance.ip, req.instance.port), ArrivalKind::Register)
            }
            NacosMsg::Deregister(req) => (&req.service, ClientKey::new(&req.ip, req.port), ArrivalKind::Deregister),
            _ => return None,
        };
        Some(NacosArrival { service: service.clone(), client, kind })
    }
}

/// The last two arrivals from one instance at one server. A check at `t` and a beat arriving at
/// `t` race (in Java as here), so a check is judged against the last arrival *before* `t`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Seen {
    pub(super) last: SimTime,
    prev: Option<SimTime>,
}

impl Seen {
    pub(super) fn first(at: SimTime) -> Self {
        Seen { last: at, prev: None }
    }

    /// Another arrival at `now` (several in one instant count as one).
    pub(super) fn again(&mut self, now: SimTime) {
        if self.last < now {
            *self = Seen { last: now, prev: Some(self.last) };
        }
    }

    pub(super) fn before(&self, now: SimTime) -> Option<SimTime> {
        if self.last < now {
            Some(self.last)
        } else {
            self.prev
        }
    }
}
