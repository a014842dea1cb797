//! The server's push engine side (`PushDelayTaskExecuteEngine` and `UdpPushService`): changes
//! become push tasks, ripe tasks send the service's data to its UDP subscribers, and a push whose
//! ack does not come is sent again, up to Nacos's limit.

use super::{NacosServer, Unacked, UDP_ACK_TIMEOUT, UDP_MAX_RETRY_TIMES};
use crate::nacos::naming::Change;
use crate::nacos::notes::NacosNote;
use crate::nacos::push::Targets;
use crate::nacos::types::{ClientKey, ServiceInfo};
use crate::nacos::wire::NacosMsg;
use crate::sim::clock::SimTime;
use crate::sim::packet::Body;
use actix::prelude::*;
use std::sync::Arc;

impl NacosServer {
    pub(super) fn queue_pushes(&mut self, change: &Change) {
        let now = self.env.now();
        for service in change.changed_services() {
            self.push.add(service, Targets::All, now);
        }
        if let Change::Subscribed { service, subscriber } = change {
            self.push.add(service, Targets::Clients([subscriber.clone()].into()), now);
        }
    }

    pub(super) fn rearm_push(&mut self) {
        let Some(at) = self.push.next_wake() else { return };
        if self.push_timer.is_some_and(|(armed, _)| armed <= at) {
            return;
        }
        if let Some((_, old)) = self.push_timer.take() {
            self.env.net.cancel(old);
        }
        let timer = self.env.after(at.since(self.env.now()), self.me.clone(), PushTick);
        self.push_timer = Some((at, timer));
    }

    /// `UdpConnector#sendDataWithCallback`: one datagram, and a retry timer for its ack.
    fn send_push(
        &mut self,
        service: &crate::nacos::types::ServiceKey,
        subscriber: &ClientKey,
        data: &Arc<ServiceInfo>,
    ) {
        let Some(&node) = self.udp.get(subscriber) else { return };
        self.next_ack += 1;
        let ack = self.next_ack;
        self.push_env.net.send_datagram(
            self.push_env.node,
            node,
            Body::Nacos(NacosMsg::Push { data: data.clone(), ack }),
        );
        let pending =
            Unacked { service: service.clone(), subscriber: subscriber.clone(), node, data: data.clone(), sends: 1 };
        self.unacked.insert(ack, pending);
        self.push_env.after(UDP_ACK_TIMEOUT, self.me.clone(), AckTimeout(ack));
    }

    /// `PushExecuteTask`: refresh the service's cached data and send it to its subscribers here.
    fn push_service(&mut self, service: &crate::nacos::types::ServiceKey, targets: Targets) {
        let now = self.env.now();
        let (data, subscribers) = {
            let mut core = self.core.borrow_mut();
            let data = core.push_data(now, service);
            let subscribers: Vec<ClientKey> = match targets {
                Targets::All => core.subscribers_of(service).cloned().collect(),
                Targets::Clients(set) => core.subscribers_of(service).filter(|c| set.contains(*c)).cloned().collect(),
            };
            (data, subscribers)
        };
        // Pushes select enabled instances only (`selectInstancesWithHealthyProtection`).
        let data = if data.hosts.iter().all(|h| h.enabled) {
            data
        } else {
            let hosts = data.hosts.iter().filter(|h| h.enabled).cloned().collect();
            Arc::new(ServiceInfo { hosts, ..(*data).clone() })
        };
        let healthy = data.hosts.iter().filter(|h| h.healthy).count();
        for subscriber in &subscribers {
            self.send_push(service, subscriber, &data);
        }
        self.push_env.record(NacosNote::Pushed {
            service: service.clone(),
            hosts: data.hosts.len(),
            healthy,
            subscribers: subscribers.len(),
        });
    }
}

/// A poll of the push engine that has ripe tasks.
#[derive(Message)]
#[rtype(result = "()")]
struct PushTick;

impl Handler<PushTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: PushTick, _: &mut Context<Self>) {
        self.push_timer = None;
        for (service, targets) in self.push.take_ripe(self.env.now()) {
            self.push_service(&service, targets);
        }
        self.rearm_push();
    }
}

/// `UdpRetrySender`: the ack of push `ack` did not come within 10 s.
#[derive(Message)]
#[rtype(result = "()")]
struct AckTimeout(u64);

impl Handler<AckTimeout> for NacosServer {
    type Result = ();
    fn handle(&mut self, AckTimeout(ack): AckTimeout, _: &mut Context<Self>) {
        let Some(p) = self.unacked.get_mut(&ack) else { return };
        let (service, subscriber) = (p.service.clone(), p.subscriber.clone());
        if p.sends > UDP_MAX_RETRY_TIMES {
            // "max re-push times reached": the callback fails with NoRequiredRetryException, so
            // no new push task is made; the subscriber catches up at its next poll.
            self.unacked.remove(&ack);
            self.push_env.record(NacosNote::PushGaveUp { service, subscriber });
            return;
        }
        p.sends += 1;
        let body = Body::Nacos(NacosMsg::Push { data: p.data.clone(), ack });
        self.push_env.net.send_datagram(self.push_env.node, p.node, body);
        self.push_env.after(UDP_ACK_TIMEOUT, self.me.clone(), AckTimeout(ack));
        self.push_env.record(NacosNote::PushResent { service, subscriber });
    }
}

/// The JVM was stopped since `since` and runs again: the push engine's fixed-delay poll
/// re-phases (sent by the health checker, which handles the rest of the resume).
#[derive(Message)]
#[rtype(result = "()")]
pub struct PushResumed {
    pub since: SimTime,
}

impl Handler<PushResumed> for NacosServer {
    type Result = ();
    fn handle(&mut self, PushResumed { since }: PushResumed, _: &mut Context<Self>) {
        self.push.resume(since, self.env.now());
        if let Some((_, old)) = self.push_timer.take() {
            self.env.net.cancel(old);
        }
        self.rearm_push();
    }
}
