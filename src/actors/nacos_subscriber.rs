//! The Nacos subscriber actor: a 1.x client's `HostReactor` and `PushReceiver` subscribed to some
//! services — a gateway or a consumer that needs the instance list.
//!
//! At start it queries each service (`updateServiceNow`, giving its UDP port, which subscribes it
//! on the server that answered) and then runs the service's `UpdateTask`: 1 s later, then every
//! `cacheMillis`. UDP pushes replace the cached list when they arrive. The cache logic, including
//! the back-off and the "a push came since the last poll" rule, is `nacos::subscriber`.

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::nacos_http::{HttpClient, Outcome, ReadTimeouts};
use crate::nacos::notes::{NacosNote, SeenHost, ViewSource};
use crate::nacos::subscriber::{PollKind, SubscriberCore, DEFAULT_DELAY};
use crate::nacos::types::{ClientKey, ServiceInfo, ServiceKey};
use crate::nacos::wire::{Answer, ListReq, NacosMsg};
use crate::sim::clock::SimDuration;
use crate::sim::ids::NodeId;
use crate::sim::name::Name;
use crate::sim::packet::{Body, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// One query in flight: which service, which kind, and whether it is the first (`updateServiceNow`).
#[derive(Clone, Copy)]
struct Poll {
    idx: usize,
    kind: PollKind,
    first: bool,
}

pub struct NacosSubscriber {
    env: Env,
    core: Rc<RefCell<SubscriberCore>>,
    http: HttpClient<Poll>,
    services: Vec<ServiceKey>,
    /// `clientIP` and the `PushReceiver`'s UDP port.
    ip: Name,
    udp_port: u16,
    /// Its own address: where its timers' messages go.
    me: Local<NacosSubscriber>,
}

impl NacosSubscriber {
    pub fn new(
        env: Env,
        core: Rc<RefCell<SubscriberCore>>,
        servers: Vec<(Name, NodeId)>,
        read_timeout: SimDuration,
        services: Vec<ServiceKey>,
        (ip, udp_port): (Name, u16),
        me: Local<NacosSubscriber>,
    ) -> Self {
        let http = HttpClient::new(env.clone(), servers, read_timeout, me.clone());
        NacosSubscriber { env, core, http, services, ip, udp_port, me }
    }

    fn query(&mut self, idx: usize, kind: PollKind, first: bool) {
        let req = ListReq {
            service: self.services[idx].clone(),
            client_ip: self.ip,
            udp_port: self.udp_port,
            healthy_only: false,
        };
        if let Some(o) = self.http.call(Poll { idx, kind, first }, NacosMsg::List(Arc::new(req))) {
            self.outcome(&o);
        }
    }

    /// The cached hosts by scenario name (or `ip:port`), and in one line:
    /// `[orders-1 healthy, orders-2 UNHEALTHY]`.
    fn view(&self, service: &ServiceKey) -> (String, Vec<SeenHost>) {
        let core = self.core.borrow();
        let hosts: Vec<SeenHost> = core
            .all_instances(service)
            .iter()
            .map(|h| {
                let key = ClientKey::new(&h.ip, h.port);
                let instance = self
                    .env
                    .obs
                    .world
                    .nacos_instance_name(service, &key)
                    .map_or_else(|| Arc::from(format!("{}:{}", h.ip, h.port)), Arc::from);
                SeenHost { instance, healthy: h.healthy }
            })
            .collect();
        let line: Vec<String> = hosts
            .iter()
            .map(|h| format!("{} {}", h.instance, if h.healthy { "healthy" } else { "UNHEALTHY" }))
            .collect();
        (format!("[{}]", line.join(", ")), hosts)
    }

    fn view_changed(&self, service: &ServiceKey, source: ViewSource, server: Name) {
        let (view, hosts) = self.view(service);
        self.env.record(NacosNote::ViewChanged { service: service.clone(), source, server, view, hosts });
    }

    fn outcome(&mut self, outcome: &Outcome<'_, Poll>) {
        let (Poll { idx, kind, first }, answer, server) = match *outcome {
            Outcome::Answered { purpose, server, answer: Answer::List(info) } => {
                (purpose, Some(info.clone()), Some(server))
            }
            Outcome::Answered { .. } => return,
            Outcome::Failed { purpose, ref failure, .. } => {
                let failure = failure.clone();
                let service = self.services[purpose.idx].clone();
                let next = if purpose.first {
                    SimDuration(DEFAULT_DELAY)
                } else {
                    self.core.borrow_mut().polled(&service, purpose.kind, None).1
                };
                self.env.record(NacosNote::PollFailed { service, failure, next });
                self.env.after(next, self.me.clone(), UpdateTick(purpose.idx));
                return;
            }
        };
        let service = self.services[idx].clone();
        let (changed, next) = match (first, answer) {
            (true, Some(info)) => (self.core.borrow_mut().process(info), SimDuration(DEFAULT_DELAY)),
            (_, answer) => self.core.borrow_mut().polled(&service, kind, answer),
        };
        let server = server.unwrap_or_else(|| Name::new("?"));
        if changed {
            self.view_changed(&service, ViewSource::Poll, server);
        } else {
            let refresh_only = kind == PollKind::RefreshOnly;
            self.env.record(NacosNote::Polled { service, server, refresh_only, next });
        }
        self.env.after(next, self.me.clone(), UpdateTick(idx));
    }

    fn pushed(&mut self, info: Arc<ServiceInfo>, from: NodeId) {
        let service = info.service.clone();
        let changed = self.core.borrow_mut().process(info);
        // A node's name, interned on its first push (a bounded set: the scenario's servers).
        let server = Name::new(&self.env.net.name(from));
        if changed {
            self.view_changed(&service, ViewSource::Push, server);
        } else {
            self.env.record(NacosNote::PushUnchanged { service, server });
        }
    }
}

impl Actor for NacosSubscriber {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        for idx in 0..self.services.len() {
            self.core.borrow_mut().subscribe(&self.services[idx]);
            self.query(idx, PollKind::Update, true);
        }
    }
}

/// A run of one service's `UpdateTask`.
#[derive(Message)]
#[rtype(result = "()")]
struct UpdateTick(usize);

impl Handler<UpdateTick> for NacosSubscriber {
    type Result = ();
    fn handle(&mut self, UpdateTick(idx): UpdateTick, _: &mut Context<Self>) {
        let kind = self.core.borrow().poll_kind(&self.services[idx]);
        self.query(idx, kind, false);
    }
}

impl Handler<Packet> for NacosSubscriber {
    type Result = ();
    fn handle(&mut self, p: Packet, _: &mut Context<Self>) {
        if let Body::Nacos(NacosMsg::Push { data, ack }) = &p.body {
            // PushReceiver#run: process the data, then answer the sender's address with a
            // push-ack datagram, which stops the server's retries.
            self.pushed(data.clone(), p.from);
            self.env.net.send_datagram(self.env.node, p.from, Body::Nacos(NacosMsg::PushAck { ack: *ack }));
            return;
        }
        self.http.on_packet(&p).each(|o| self.outcome(o));
    }
}

impl Handler<ReadTimeouts> for NacosSubscriber {
    type Result = ();
    fn handle(&mut self, _: ReadTimeouts, _: &mut Context<Self>) {
        self.http.on_read_timeouts().each(|o| self.outcome(o));
    }
}

impl Handler<Stop> for NacosSubscriber {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
