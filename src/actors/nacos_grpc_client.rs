//! The 2.x Nacos client application actor: one process with one `NacosNamingService` whose
//! ephemeral instances go over gRPC (`NamingClientProxyDelegate` → `NamingGrpcClientProxy`).
//!
//! It keeps one connection (`RpcClient`) to one server of its list, chosen by
//! `NamingServerListManager` (`nacos::grpc::client::ServerList`):
//!
//! * **Start** (`RpcClient#start`): up to `retryTimes + 1` = 4 servers are tried in turn; if
//!   none answers, the asynchronous reconnect loop takes over.
//! * **Connect** (`GrpcClient#connectToServer`): a new TCP connection, a `ServerCheckRequest`
//!   answered within 3 s, then the bi-stream's `ConnectionSetupRequest`, on which the server
//!   registers the connection. The sim sends one `Setup` message for both (one round trip
//!   instead of two; the server registers on it) and waits 3 s for its answer.
//! * **Keep-alive** (the second `clientEventExecutor` task): every 5 s the thread wakes; if the
//!   connection has been idle for 5 s it runs `healthCheck` — four `HealthCheckRequest` tries of
//!   3 s, the first after a random sleep under 500 ms. Failed: UNHEALTHY, reconnect.
//! * **Reconnect** (`RpcClient#reconnect`): the next server, again and again, sleeping 100 ms ×
//!   the number of full rounds (at most 5 s) between attempts. The old connection is closed only
//!   once a new one is up — then `NamingGrpcRedoService` hears DISCONNECTED and CONNECTED and its
//!   `RedoScheduledTask` (every 3 s) registers every instance again.
//! * A stream that ends under the client (FIN or RST), or an answer `UN_REGISTER`, also sends it
//!   to reconnect (`switchServerAsync`); a failed request first health-checks
//!   (`switchServerAsyncOnRequestFail` → `reconnect(null, true)`).
//!
//! The server's `ClientDetectionRequest` is answered by the client's built-in handler, which
//! also counts as activity (`handleServerRequest` sets `lastActiveTimeStamp`). Not modelled:
//! gRPC's own HTTP/2 keepalive pings (every 6 min by default, longer than any lesson here), the
//! server-initiated `ConnectResetRequest`, and subscriptions over the stream.

use crate::actors::env::{Env, Stop};
use crate::actors::nacos_app::AppInstance;
use crate::actors::network::{Stop as ProcStop, TimerId};
use crate::nacos::grpc::client::{keep_alive_due, ConnView, HealthCheck, Next, Reconnect, ServerList};
use crate::nacos::grpc::redo::RedoService;
use crate::nacos::grpc::wire::GrpcMsg;
use crate::nacos::grpc::{
    CONNECTION_KEEP_ALIVE, HEALTH_CHECK_JITTER_MS, HEALTH_CHECK_RETRY_TIMES, HEALTH_CHECK_TIMEOUT, REDO_DELAY,
    REQUEST_TIMEOUT, RETRY_TIMES, SERVER_CHECK_TIMEOUT,
};
use crate::nacos::http::Failure;
use crate::nacos::notes::{NacosNote, RegisterReason};
use crate::nacos::wire::NacosMsg;
use crate::sim::clock::SimTime;
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::network::ConnectFailure;
use crate::sim::packet::{Body, MsgId, Notice, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// The connection the client is on.
#[derive(Clone, Debug)]
struct Current {
    server: usize,
    channel: ChannelId,
    conn: Arc<str>,
}

/// What the client's event thread is doing (`RpcClient`'s second `clientEventExecutor` task:
/// one thread polls, health-checks and reconnects, one thing at a time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Thread {
    /// Waiting on `reconnectionSignal.poll(keepAlive)`.
    Polling,
    HealthChecking {
        then_reconnect: bool,
    },
    Reconnecting,
}

/// A request in flight, by message id.
#[derive(Clone, Debug)]
enum Req {
    Setup { server: usize, channel: Option<ChannelId>, startup: bool },
    Health { channel: ChannelId },
    Register { idx: usize, channel: ChannelId },
}

pub struct GrpcApp {
    env: Env,
    name: Arc<str>,
    servers: Vec<(Arc<str>, NodeId)>,
    list: ServerList,
    instances: Vec<AppInstance>,
    redo: RedoService,
    view: Rc<RefCell<ConnView>>,
    /// `rpcClientStatus == RUNNING`.
    running: bool,
    /// `currentConnection`: kept while reconnecting, replaced when a switch succeeds.
    current: Option<Current>,
    /// `lastActiveTimeStamp`.
    last_active: SimTime,
    thread: Thread,
    /// Start-up tries left (`RpcClient#start`), while starting.
    startup_left: Option<u32>,
    reconnect: Reconnect,
    health: Option<HealthCheck>,
    inflight: BTreeMap<MsgId, (Req, TimerId)>,
}

impl GrpcApp {
    pub fn new(
        env: Env,
        name: Arc<str>,
        servers: Vec<(Arc<str>, NodeId)>,
        instances: Vec<AppInstance>,
        view: Rc<RefCell<ConnView>>,
    ) -> Self {
        // `NamingServerListManager`: `currentIndex.set(new Random().nextInt(size))`; with one
        // server there is nothing to draw.
        let n = servers.len();
        let drawn = if n > 1 { env.net.with_rng(|r| r.index(n)) } else { 0 };
        let now = env.now();
        GrpcApp {
            name,
            list: ServerList::new(n, drawn),
            servers,
            instances,
            redo: RedoService::default(),
            view,
            running: false,
            current: None,
            last_active: now,
            thread: Thread::Polling,
            startup_left: Some(RETRY_TIMES),
            reconnect: Reconnect::default(),
            health: None,
            inflight: BTreeMap::new(),
            env,
        }
    }

    fn server_name(&self, i: usize) -> Arc<str> {
        self.servers[i].0.clone()
    }

    /// Sends `msg` as request `req`, with a deadline that fails it.
    fn request(
        &mut self,
        channel: ChannelId,
        msg: GrpcMsg,
        req: Req,
        timeout: crate::sim::clock::SimDuration,
        ctx: &Context<Self>,
    ) {
        let id = self.env.send_on(channel, Body::Nacos(NacosMsg::Grpc(msg)));
        if id == 0 {
            // The channel is closed at our end: the request fails at once.
            self.failed(req, Failure::Closed, ctx);
            return;
        }
        let timer = self.env.after(timeout, ctx.address(), Deadline(id));
        self.inflight.insert(id, (req, timer));
    }

    /// `connectToServer(nextRpcServer())`.
    fn connect(&mut self, startup: bool, ctx: &Context<Self>) {
        let server = self.list.next_server();
        let node = self.servers[server].1;
        let sent = self.env.net.send_via_fresh(
            self.env.node,
            node,
            Body::Nacos(NacosMsg::Grpc(GrpcMsg::Setup { client: self.name.clone() })),
        );
        if !self.env.alive() {
            return;
        }
        // A connect that fails outright comes back as a `SendFailed` notice for this id.
        let timer = self.env.after(SERVER_CHECK_TIMEOUT, ctx.address(), Deadline(sent.id));
        self.inflight.insert(sent.id, (Req::Setup { server, channel: sent.channel, startup }, timer));
    }

    /// A connect attempt failed: the next start-up try, or the reconnect loop's sleep.
    fn connect_failed(
        &mut self,
        server: usize,
        channel: Option<ChannelId>,
        startup: bool,
        failure: Failure,
        ctx: &Context<Self>,
    ) {
        if let Some(ch) = channel {
            // `shuntDownChannel`: the half-made connection is dropped.
            self.env.net.close(self.env.node, ch, "gRPC connect failed");
        }
        let server = self.server_name(server);
        if startup {
            match self.startup_left {
                Some(left) if left > 0 => {
                    self.startup_left = Some(left - 1);
                    self.env.record(NacosNote::GrpcConnectFailed { server, failure, retry_in: None });
                    self.connect(true, ctx);
                }
                _ => {
                    // `RpcClient#start` gave up: `switchServerAsync` → the reconnect loop.
                    self.startup_left = None;
                    let sleep = self.reconnect.failed(self.servers.len());
                    self.env.record(NacosNote::GrpcConnectFailed { server, failure, retry_in: Some(sleep) });
                    self.thread = Thread::Reconnecting;
                    self.env.after(sleep, ctx.address(), ReconnectTry);
                }
            }
            return;
        }
        let sleep = self.reconnect.failed(self.servers.len());
        self.env.record(NacosNote::GrpcConnectFailed { server, failure, retry_in: Some(sleep) });
        self.env.after(sleep, ctx.address(), ReconnectTry);
    }

    /// A connection is up: the start-up one, or a switch (the old one is abandoned and closed).
    fn connected(&mut self, server: usize, channel: ChannelId, conn: Arc<str>, ctx: &Context<Self>) {
        let previous = self.current.take();
        if let Some(old) = &previous {
            self.env.net.close(self.env.node, old.channel, "abandoned: switched server");
            // `closeConnection` → DISCONNECTED → `NamingGrpcRedoService#onDisConnect`.
            self.redo.on_disconnect();
        }
        self.current = Some(Current { server, channel, conn: conn.clone() });
        self.running = true;
        self.startup_left = None;
        self.reconnect = Reconnect::default();
        self.last_active = self.env.now();
        self.redo.on_connected();
        self.view.borrow_mut().set(Some(self.server_name(server)));
        let name = self.server_name(server);
        let first = previous.is_none();
        self.env.record(NacosNote::GrpcConnected { server: name, conn, previous: previous.map(|p| p.conn) });
        if self.thread == Thread::Reconnecting {
            self.poll_again(ctx);
        }
        if first {
            // `RpcClient#start` returned: the `registerInstance` calls that waited behind the
            // synchronous start-up connect go out now.
            for (_, idx) in self.redo.to_redo() {
                self.register(idx, ctx);
            }
        }
    }

    /// The event thread goes back to `poll(keepAlive)`.
    fn poll_again(&mut self, ctx: &Context<Self>) {
        self.thread = Thread::Polling;
        self.env.after(CONNECTION_KEEP_ALIVE, ctx.address(), Poll);
    }

    /// `rpcClientStatus` RUNNING → UNHEALTHY and `switchServerAsync`: the thread reconnects
    /// (at once when it is polling; after its health check otherwise, which this failure ends).
    fn go_unhealthy(&mut self, ctx: &Context<Self>) {
        if !self.running {
            return;
        }
        self.running = false;
        self.view.borrow_mut().set(None);
        if self.thread == Thread::Polling {
            self.start_reconnect(ctx);
        }
    }

    fn start_reconnect(&mut self, ctx: &Context<Self>) {
        self.thread = Thread::Reconnecting;
        self.health = None;
        self.connect(false, ctx);
    }

    /// One health-check try on the current connection, after `sleep`.
    fn health_try(&mut self, next: Next, ctx: &Context<Self>) {
        match next {
            Next::Try(sleep) if sleep.millis() > 0 => {
                self.env.after(sleep, ctx.address(), HealthTry);
            }
            Next::Try(_) => self.send_health(ctx),
            Next::Failed => self.health_failed(Failure::ReadTimeout, ctx),
        }
    }

    fn send_health(&mut self, ctx: &Context<Self>) {
        let Some(c) = self.current.clone() else { return self.health_failed(Failure::Closed, ctx) };
        self.request(c.channel, GrpcMsg::HealthCheck, Req::Health { channel: c.channel }, HEALTH_CHECK_TIMEOUT, ctx);
    }

    /// `healthCheck()` returned false: UNHEALTHY and reconnect.
    fn health_failed(&mut self, why: Failure, ctx: &Context<Self>) {
        self.health = None;
        if let Some(c) = &self.current {
            let tries = HEALTH_CHECK_RETRY_TIMES + 1;
            self.env.record(NacosNote::GrpcHealthFailed { server: self.server_name(c.server), tries, why });
        }
        self.running = false;
        self.view.borrow_mut().set(None);
        self.start_reconnect(ctx);
    }

    /// A request ended without an answer (its deadline, a closed channel, a failed connect).
    fn failed(&mut self, req: Req, failure: Failure, ctx: &Context<Self>) {
        match req {
            Req::Setup { server, channel, startup } => self.connect_failed(server, channel, startup, failure, ctx),
            Req::Health { .. } => {
                let next = self.health.as_mut().map_or(Next::Failed, HealthCheck::try_failed);
                match next {
                    Next::Failed => self.health_failed(failure, ctx),
                    next => self.health_try(next, ctx),
                }
            }
            Req::Register { idx, .. } => {
                let server = self.current.as_ref().map_or_else(|| Arc::from("-"), |c| self.server_name(c.server));
                let instance = self.instances[idx].name.clone();
                self.env.record(NacosNote::GrpcRequestFailed { instance, server, failure });
                // `RpcClient#request` gave up while RUNNING: `switchServerAsyncOnRequestFail` —
                // `reconnect(null, true)` health-checks first and stays if that passes.
                if self.running && self.thread == Thread::Polling {
                    self.running = false;
                    self.view.borrow_mut().set(None);
                    self.begin_health_check(true, ctx);
                }
            }
        }
    }

    fn begin_health_check(&mut self, then_reconnect: bool, ctx: &Context<Self>) {
        self.thread = Thread::HealthChecking { then_reconnect };
        let jitter = self.env.net.with_rng(|r| r.up_to(HEALTH_CHECK_JITTER_MS - 1));
        let (check, first) = HealthCheck::start(jitter);
        self.health = Some(check);
        self.health_try(first, ctx);
    }

    /// `doRegisterService` for instance `idx`, on the current connection.
    fn register(&mut self, idx: usize, ctx: &Context<Self>) {
        let Some(c) = self.current.clone().filter(|_| self.running) else {
            if self.startup_left.is_some() {
                // Still in `RpcClient#start` (the `NacosNamingService` constructor): the call
                // runs once the start-up connect is done (`connected`).
                return;
            }
            let server = self.current.as_ref().map_or_else(|| Arc::from("-"), |c| self.server_name(c.server));
            let instance = self.instances[idx].name.clone();
            // `RpcClient#request`: not RUNNING → "Client not connected"; the redo task retries.
            self.env.record(NacosNote::GrpcRequestFailed { instance, server, failure: Failure::Closed });
            return;
        };
        let i = &self.instances[idx];
        let msg = GrpcMsg::Register { service: i.service.clone(), instance: Arc::new(i.instance.clone()) };
        self.request(c.channel, msg, Req::Register { idx, channel: c.channel }, REQUEST_TIMEOUT, ctx);
    }
}

impl Actor for GrpcApp {
    type Context = Context<Self>;

    /// `NacosNamingService` is built: the redo task and the keep-alive thread start, then
    /// `RpcClient#start` connects; each instance registers at its offset.
    fn started(&mut self, ctx: &mut Context<Self>) {
        self.env.after(REDO_DELAY, ctx.address(), RedoTick);
        self.poll_again(ctx);
        for (idx, i) in self.instances.iter().enumerate() {
            self.env.after(i.offset, ctx.address(), RegisterAt(idx));
        }
        self.connect(true, ctx);
    }
}

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
                    self.go_unhealthy(ctx);
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
                _ => self.connect_failed(server, ch, startup, Failure::Closed, ctx),
            },
            Req::Health { .. } if error.is_none() => {
                self.last_active = now;
                self.health = None;
                let back = matches!(self.thread, Thread::HealthChecking { then_reconnect: true });
                if !self.running && !back {
                    // A switch was asked for while the check ran (a closed stream, an
                    // `UN_REGISTER` answer): the next `poll` returns that signal at once.
                    self.start_reconnect(ctx);
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
                self.poll_again(ctx);
            }
            // An error answer ends the check: `response.isSuccess()` is false, no retry.
            Req::Health { .. } => {
                let message = Arc::from("Connection is unregistered.");
                self.health_failed(Failure::Http { status: error.unwrap_or(0) as u16, message }, ctx)
            }
            Req::Register { idx, .. } => {
                let i = &self.instances[idx];
                let server = self.current.as_ref().map_or_else(|| Arc::from("-"), |c| self.servers[c.server].0.clone());
                if error.is_none() {
                    self.last_active = now;
                    self.redo.registered(&i.service, idx);
                    self.env.record(NacosNote::Registered { instance: i.name.clone(), server });
                    return;
                }
                let message = Arc::from("Connection is unregistered.");
                let failure = Failure::Http { status: error.unwrap_or(0) as u16, message };
                self.env.record(NacosNote::GrpcRequestFailed { instance: i.name.clone(), server, failure });
                // `RpcClient#request`: `UN_REGISTER` → UNHEALTHY, `switchServerAsync`.
                self.go_unhealthy(ctx);
            }
        }
    }
}

/// A request's deadline: the setup's `serverCheckTimeOut`, a health check try's
/// `healthCheckTimeOut`, a request's `timeOutMills`.
#[derive(Message)]
#[rtype(result = "()")]
struct Deadline(MsgId);

impl Handler<Deadline> for GrpcApp {
    type Result = ();
    fn handle(&mut self, Deadline(id): Deadline, ctx: &mut Context<Self>) {
        let Some((req, _)) = self.inflight.remove(&id) else { return };
        let failure = if matches!(req, Req::Setup { .. }) { Failure::ConnectTimeout } else { Failure::ReadTimeout };
        self.failed(req, failure, ctx);
    }
}

/// `reconnectionSignal.poll(keepAlive)` timed out.
#[derive(Message)]
#[rtype(result = "()")]
struct Poll;

impl Handler<Poll> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: Poll, ctx: &mut Context<Self>) {
        if self.thread != Thread::Polling {
            return;
        }
        if self.running && keep_alive_due(self.env.now(), self.last_active) {
            self.begin_health_check(false, ctx);
        } else {
            self.env.after(CONNECTION_KEEP_ALIVE, ctx.address(), Poll);
        }
    }
}

/// The health check's sleep before its first try is over.
#[derive(Message)]
#[rtype(result = "()")]
struct HealthTry;

impl Handler<HealthTry> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: HealthTry, ctx: &mut Context<Self>) {
        if self.health.is_some() {
            self.send_health(ctx);
        }
    }
}

/// The reconnect loop's sleep is over: the next server.
#[derive(Message)]
#[rtype(result = "()")]
struct ReconnectTry;

impl Handler<ReconnectTry> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: ReconnectTry, ctx: &mut Context<Self>) {
        if !self.running {
            self.thread = Thread::Reconnecting;
            self.connect(false, ctx);
        }
    }
}

/// `RedoScheduledTask` runs (fixed delay 3 s).
#[derive(Message)]
#[rtype(result = "()")]
struct RedoTick;

impl Handler<RedoTick> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: RedoTick, ctx: &mut Context<Self>) {
        self.env.after(REDO_DELAY, ctx.address(), RedoTick);
        // `if (!redoService.isConnected()) return`, and `isClientDisabled()` per instance.
        let todo = self.redo.to_redo();
        let Some(c) = self.current.clone().filter(|_| self.running && !todo.is_empty()) else { return };
        let instances = todo.iter().map(|(_, idx)| self.instances[*idx].name.clone()).collect();
        self.env.record(NacosNote::GrpcRedo { server: self.server_name(c.server), instances });
        for (_, idx) in todo {
            self.register(idx, ctx);
        }
    }
}

/// Instance `.0` registers (`NamingGrpcClientProxy#registerService`).
#[derive(Message)]
#[rtype(result = "()")]
struct RegisterAt(usize);

impl Handler<RegisterAt> for GrpcApp {
    type Result = ();
    fn handle(&mut self, RegisterAt(idx): RegisterAt, ctx: &mut Context<Self>) {
        let i = &self.instances[idx];
        self.env.record(NacosNote::Registering {
            instance: i.name.clone(),
            service: i.service.clone(),
            reason: RegisterReason::Grpc,
            first_beat: None,
        });
        // `cacheInstanceForRedo` first: a failed request is left to the redo task.
        let service = i.service.clone();
        self.redo.cache(&service, idx);
        self.register(idx, ctx);
    }
}

/// SIGTERM: `NacosNamingService#shutDown` → `RpcClient#shutdown` closes the connection, and the
/// process exits — its FIN tells the server, which drops the instances at once.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GrpcShutdown;

impl Handler<GrpcShutdown> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: GrpcShutdown, _: &mut Context<Self>) {
        self.env.record(NacosNote::ShutdownComplete);
        self.env.net.stop_process(self.env.node, ProcStop::Exit);
    }
}

impl Handler<Stop> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.view.borrow_mut().set(None);
        ctx.stop();
    }
}
