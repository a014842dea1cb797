//! The client's timers and operator messages: request deadlines, the keep-alive poll, the
//! health check's first try, the reconnect loop's sleep, the redo task, each instance's
//! registration, SIGTERM and stop.

use super::*;

/// A request's deadline: the setup's `serverCheckTimeOut`, a health check try's
/// `healthCheckTimeOut`, a request's `timeOutMills`.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct Deadline(pub(super) MsgId);

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
pub(super) struct Poll;

impl Handler<Poll> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: Poll, ctx: &mut Context<Self>) {
        if self.thread != Thread::Polling {
            return;
        }
        if self.running && keep_alive_due(self.env.now(), self.last_active) {
            self.begin_health_check(false, ctx);
        } else {
            self.env.after(CONNECTION_KEEP_ALIVE, self.me.clone(), Poll);
        }
    }
}

/// The health check's sleep before its first try is over.
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct HealthTry;

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
pub(super) struct ReconnectTry;

impl Handler<ReconnectTry> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: ReconnectTry, _: &mut Context<Self>) {
        if !self.running {
            self.thread = Thread::Reconnecting;
            self.connect(false);
        }
    }
}

/// `RedoScheduledTask` runs (fixed delay 3 s).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct RedoTick;

impl Handler<RedoTick> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: RedoTick, ctx: &mut Context<Self>) {
        self.env.after(REDO_DELAY, self.me.clone(), RedoTick);
        // `if (!redoService.isConnected()) return`, and `isClientDisabled()` per instance.
        let todo = self.redo.to_redo();
        let Some(c) = self.current.clone().filter(|_| self.running && !todo.is_empty()) else { return };
        let instances = todo.iter().map(|(_, idx)| self.instances[*idx].name).collect();
        self.env.record(NacosNote::GrpcRedo { server: self.server_name(c.server), instances });
        for (_, idx) in todo {
            self.register(idx, ctx);
        }
    }
}

/// Instance `.0` registers (`NamingGrpcClientProxy#registerService`).
#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct RegisterAt(pub(super) usize);

impl Handler<RegisterAt> for GrpcApp {
    type Result = ();
    fn handle(&mut self, RegisterAt(idx): RegisterAt, ctx: &mut Context<Self>) {
        let i = &self.instances[idx];
        self.env.record(NacosNote::Registering {
            instance: i.name,
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
        self.env.exit();
    }
}

impl Handler<Stop> for GrpcApp {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        self.view.borrow_mut().set(None);
        ctx.stop();
    }
}
