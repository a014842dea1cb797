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
use crate::actors::inbox::Local;
use crate::actors::nacos_app::AppInstance;
use crate::actors::network::TimerId;
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
use crate::sim::ids::{ChannelId, MsgId, NodeId};
use crate::sim::name::Name;
use crate::sim::network::ConnectFailure;
use crate::sim::packet::{Body, Notice, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

mod stream;
mod timers;
pub use timers::GrpcShutdown;
use timers::{Deadline, HealthTry, Poll, ReconnectTry, RedoTick, RegisterAt};

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
    /// The trace notes name them.
    servers: Vec<(Name, NodeId)>,
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
    /// Its own address: where its timers' messages go.
    me: Local<GrpcApp>,
}

impl GrpcApp {
    pub fn new(
        env: Env,
        name: Arc<str>,
        servers: Vec<(Name, NodeId)>,
        instances: Vec<AppInstance>,
        view: Rc<RefCell<ConnView>>,
        me: Local<GrpcApp>,
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
            me,
            env,
        }
    }

    fn server_name(&self, i: usize) -> Name {
        self.servers[i].0
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
        let timer = self.env.after(timeout, self.me.clone(), Deadline(id));
        self.inflight.insert(id, (req, timer));
    }

    /// `connectToServer(nextRpcServer())`.
    fn connect(&mut self, startup: bool) {
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
        let timer = self.env.after(SERVER_CHECK_TIMEOUT, self.me.clone(), Deadline(sent.id));
        self.inflight.insert(sent.id, (Req::Setup { server, channel: sent.channel, startup }, timer));
    }

    /// A connect attempt failed: the next start-up try, or the reconnect loop's sleep.
    fn connect_failed(&mut self, server: usize, channel: Option<ChannelId>, startup: bool, failure: Failure) {
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
                    self.connect(true);
                }
                _ => {
                    // `RpcClient#start` gave up: `switchServerAsync` → the reconnect loop.
                    self.startup_left = None;
                    let sleep = self.reconnect.failed(self.servers.len());
                    self.env.record(NacosNote::GrpcConnectFailed { server, failure, retry_in: Some(sleep) });
                    self.thread = Thread::Reconnecting;
                    self.env.after(sleep, self.me.clone(), ReconnectTry);
                }
            }
            return;
        }
        let sleep = self.reconnect.failed(self.servers.len());
        self.env.record(NacosNote::GrpcConnectFailed { server, failure, retry_in: Some(sleep) });
        self.env.after(sleep, self.me.clone(), ReconnectTry);
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
            self.poll_again();
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
    fn poll_again(&mut self) {
        self.thread = Thread::Polling;
        self.env.after(CONNECTION_KEEP_ALIVE, self.me.clone(), Poll);
    }

    /// `rpcClientStatus` RUNNING → UNHEALTHY and `switchServerAsync`: the thread reconnects
    /// (at once when it is polling; after its health check otherwise, which this failure ends).
    fn go_unhealthy(&mut self) {
        if !self.running {
            return;
        }
        self.running = false;
        self.view.borrow_mut().set(None);
        if self.thread == Thread::Polling {
            self.start_reconnect();
        }
    }

    fn start_reconnect(&mut self) {
        self.thread = Thread::Reconnecting;
        self.health = None;
        self.connect(false);
    }

    /// One health-check try on the current connection, after `sleep`.
    fn health_try(&mut self, next: Next, ctx: &Context<Self>) {
        match next {
            Next::Try(sleep) if sleep.millis() > 0 => {
                self.env.after(sleep, self.me.clone(), HealthTry);
            }
            Next::Try(_) => self.send_health(ctx),
            Next::Failed => self.health_failed(Failure::ReadTimeout),
        }
    }

    fn send_health(&mut self, ctx: &Context<Self>) {
        let Some(c) = self.current.clone() else { return self.health_failed(Failure::Closed) };
        self.request(c.channel, GrpcMsg::HealthCheck, Req::Health { channel: c.channel }, HEALTH_CHECK_TIMEOUT, ctx);
    }

    /// `healthCheck()` returned false: UNHEALTHY and reconnect.
    fn health_failed(&mut self, why: Failure) {
        self.health = None;
        if let Some(c) = &self.current {
            let tries = HEALTH_CHECK_RETRY_TIMES + 1;
            self.env.record(NacosNote::GrpcHealthFailed { server: self.server_name(c.server), tries, why });
        }
        self.running = false;
        self.view.borrow_mut().set(None);
        self.start_reconnect();
    }

    /// A request ended without an answer (its deadline, a closed channel, a failed connect).
    fn failed(&mut self, req: Req, failure: Failure, ctx: &Context<Self>) {
        match req {
            Req::Setup { server, channel, startup } => self.connect_failed(server, channel, startup, failure),
            Req::Health { .. } => {
                let next = self.health.as_mut().map_or(Next::Failed, HealthCheck::try_failed);
                match next {
                    Next::Failed => self.health_failed(failure),
                    next => self.health_try(next, ctx),
                }
            }
            Req::Register { idx, .. } => {
                let server = self.current.as_ref().map_or_else(|| Name::new("-"), |c| self.server_name(c.server));
                let instance = self.instances[idx].name;
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
            let server = self.current.as_ref().map_or_else(|| Name::new("-"), |c| self.server_name(c.server));
            let instance = self.instances[idx].name;
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
    fn started(&mut self, _: &mut Context<Self>) {
        self.env.after(REDO_DELAY, self.me.clone(), RedoTick);
        self.poll_again();
        for (idx, i) in self.instances.iter().enumerate() {
            self.env.after(i.offset, self.me.clone(), RegisterAt(idx));
        }
        self.connect(true);
    }
}
