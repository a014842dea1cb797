//! The Nacos health-check actor: `ClientBeatCheckTaskV2` per client and `ExpiredClientCleaner`,
//! over the naming server's state.
//!
//! It shares the server's `NamingServer` through `Rc<RefCell<..>>` — Nacos runs these tasks on
//! the `com.alibaba.nacos.naming.health` and cleaner executors over the same objects the request
//! threads use. Instead of one timer per client every 5 s it keeps a single alarm at the earliest
//! tick where a check would change something (`nacos::health` explains why that is exact); the
//! server actor sends `Rearm` when an operation makes a client due earlier.

use crate::actors::env::{Env, Stop};
use crate::actors::nacos_server::{NacosServer, Publish};
use crate::actors::network::TimerId;
use crate::nacos::naming::NamingServer;
use crate::nacos::notes::NacosNote;
use actix::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;

pub struct HealthChecker {
    env: Env,
    core: Rc<RefCell<NamingServer>>,
    server: Addr<NacosServer>,
    timer: Option<TimerId>,
}

impl HealthChecker {
    pub fn new(env: Env, core: Rc<RefCell<NamingServer>>, server: Addr<NacosServer>) -> Self {
        HealthChecker { env, core, server, timer: None }
    }

    fn arm(&mut self, ctx: &mut Context<Self>) {
        if let Some(old) = self.timer.take() {
            self.env.net.cancel(old);
        }
        let at = self.core.borrow_mut().arm();
        if let Some(at) = at {
            self.timer = Some(self.env.after(at.since(self.env.now()), &ctx.address(), CheckTick));
        }
    }
}

impl Actor for HealthChecker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.arm(ctx);
    }
}

/// The alarm: every check and cleanup due now runs.
#[derive(Message)]
#[rtype(result = "()")]
struct CheckTick;

impl Handler<CheckTick> for HealthChecker {
    type Result = ();
    fn handle(&mut self, _: CheckTick, ctx: &mut Context<Self>) {
        self.timer = None;
        let changes = self.core.borrow_mut().run_due(self.env.now());
        if !changes.is_empty() {
            // Recorded with the core released: the observer reads it.
            for change in &changes {
                self.env.record(NacosNote::from(change.clone()));
            }
            self.server.do_send(Publish(changes));
        }
        self.arm(ctx);
    }
}

/// Something became due earlier than the alarm: set it again.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Rearm;

impl Handler<Rearm> for HealthChecker {
    type Result = ();
    fn handle(&mut self, _: Rearm, ctx: &mut Context<Self>) {
        self.arm(ctx);
    }
}

impl Handler<Stop> for HealthChecker {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
