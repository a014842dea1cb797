//! What reaches the client over the network: answers to its requests, the server's
//! `ClientDetectionRequest`, failed connects and closed connections.

use super::*;
use crate::sim::name::Name;

impl Handler<Packet> for GrpcApp {
    type Result = ();
    fn handle(&mut self, p: Packet, ctx: &mut Context<Self>) {
        match &p.body {
            Body::Nacos(NacosMsg::Grpc(GrpcMsg::Response { reply_to, error, conn })) => {
                let Some((req, timer)) = self.inflight.remove(reply_to) else { return };
                self.env.net.cancel(timer);
                self.answered(req, p.channel, *error, conn.clone(), ctx);
            }
            Body::Nacos(NacosMsg::Grpc(GrpcMsg::ClientDetection)) => {
                // `handleServerRequest`: activity; the built-in handler answers
                // `ClientDetectionResponse`.
                self.last_active = self.env.now();
                let body = GrpcMsg::Response { reply_to: p.id, error: None, conn: None };
                self.env.send_on(p.channel, Body::Nacos(NacosMsg::Grpc(body)));
            }
            Body::Notice(Notice::SendFailed { msg, reason, .. }) => {
                let Some((req, timer)) = self.inflight.remove(msg) else { return };
                self.env.net.cancel(timer);
                let failure = match reason {
                    ConnectFailure::Refused => Failure::Refused,
                    ConnectFailure::TimedOut => Failure::ConnectTimeout,
                };
                self.failed(req, failure, ctx);
            }
            Body::Notice(Notice::ChannelClosed { channel, kind, .. }) => {
                let current = self.current.as_ref().filter(|c| c.channel == *channel).cloned();
                if let Some(c) = current.filter(|_| *kind != crate::sim::packet::CloseKind::Local && self.running) {
                    // `bindRequestStream` `onError` / `onCompleted` while RUNNING.
                    self.env.record(NacosNote::GrpcStreamClosed { server: self.server_name(c.server), conn: c.conn });
                    self.go_unhealthy();
                }
                let on_it: Vec<MsgId> = self
                    .inflight
                    .iter()
                    .filter(|(_, (r, _))| match r {
                        Req::Setup { channel: c, .. } => *c == Some(*channel),
                        Req::Health { channel: c } | Req::Register { channel: c, .. } => c == channel,
                    })
                    .map(|(id, _)| *id)
                    .collect();
                for id in on_it {
                    let (req, timer) = self.inflight.remove(&id).expect("listed");
                    self.env.net.cancel(timer);
                    self.failed(req, Failure::Closed, ctx);
                }
            }
            _ => {}
        }
    }
}

impl GrpcApp {
    /// An answer to one of our requests.
    fn answered(
        &mut self,
        req: Req,
        channel: ChannelId,
        error: Option<i32>,
        conn: Option<Arc<str>>,
        ctx: &Context<Self>,
    ) {
        let now = self.env.now();
        match req {
            Req::Setup { server, channel: ch, startup } => match conn {
                Some(conn) if error.is_none() => self.connected(server, channel, conn, ctx),
                _ => self.connect_failed(server, ch, startup, Failure::Closed),
            },
            Req::Health { .. } if error.is_none() => {
                self.last_active = now;
                self.health = None;
                let back = matches!(self.thread, Thread::HealthChecking { then_reconnect: true });
                if !self.running && !back {
                    // A switch was asked for while the check ran (a closed stream, an
                    // `UN_REGISTER` answer): the next `poll` returns that signal at once.
                    self.start_reconnect();
                    return;
                }
                if let Some(c) = &self.current {
                    self.env.record(NacosNote::GrpcHealthOk { server: self.server_name(c.server) });
                    if back {
                        // `reconnect(null, true)`: the check passed, RUNNING again.
                        self.running = true;
                        let server = self.server_name(c.server);
                        self.view.borrow_mut().set(Some(server));
                    }
                }
                self.poll_again();
            }
            // An error answer ends the check: `response.isSuccess()` is false, no retry.
            Req::Health { .. } => {
                let message = Arc::from("Connection is unregistered.");
                self.health_failed(Failure::Http { status: error.unwrap_or(0) as u16, message })
            }
            Req::Register { idx, .. } => {
                let i = &self.instances[idx];
                let server = self.current.as_ref().map_or_else(|| Name::new("-"), |c| self.servers[c.server].0);
                if error.is_none() {
                    self.last_active = now;
                    self.redo.registered(&i.service, idx);
                    self.env.record(NacosNote::Registered { instance: i.name, server });
                    return;
                }
                let message = Arc::from("Connection is unregistered.");
                let failure = Failure::Http { status: error.unwrap_or(0) as u16, message };
                self.env.record(NacosNote::GrpcRequestFailed { instance: i.name, server, failure });
                // `RpcClient#request`: `UN_REGISTER` → UNHEALTHY, `switchServerAsync`.
                self.go_unhealthy();
            }
        }
    }
}
