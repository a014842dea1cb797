//! The Nacos health-check actor: `ClientBeatCheckTaskV2` per client and `ExpiredClientCleaner`,
//! over the naming server's state.
//!
//! It shares the server's `NamingServer` through `Rc<RefCell<..>>` — Nacos runs these tasks on
//! the `com.alibaba.nacos.naming.health` and cleaner executors over the same objects the request
//! threads use. Instead of one timer per client every 5 s it keeps a single alarm at the earliest
//! tick where a check would change something (`nacos::health` explains why that is exact); the
//! server actor sends `Rearm` when an operation makes a client due earlier.
//!
//! After a SIGSTOP the director sends `Resumed` here first. Every check that fell due during the
//! pause runs at once, with the clock of the resume — *before* the server handles the beats that
//! waited in its socket buffers. Java leaves that race open; this order is the one that produces
//! what users report after long GC pauses: everyone unhealthy or deleted at once (#8090).

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::nacos_server::{NacosServer, Publish, PushResumed};
use crate::actors::network::TimerId;
use crate::nacos::naming::NamingServer;
use crate::nacos::notes::NacosNote;
use crate::sim::clock::SimTime;
use actix::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;

pub struct HealthChecker {
    env: Env,
    core: Rc<RefCell<NamingServer>>,
    server: Local<NacosServer>,
    timer: Option<TimerId>,
    /// Its own address: where its timer's message goes.
    me: Local<HealthChecker>,
}

impl HealthChecker {
    fn run(&mut self) {
        let changes = self.core.borrow_mut().run_due(self.env.now());
        if !changes.is_empty() {
            // Recorded with the core released: the observer reads it.
            for change in &changes {
                self.env.record(NacosNote::from(change.clone()));
            }
            self.server.do_send(Publish(changes));
        }
    }

    pub fn new(
        env: Env,
        core: Rc<RefCell<NamingServer>>,
        server: Local<NacosServer>,
        me: Local<HealthChecker>,
    ) -> Self {
        HealthChecker { env, core, server, timer: None, me }
    }

    fn arm(&mut self) {
        if let Some(old) = self.timer.take() {
            self.env.net.cancel(old);
        }
        let at = self.core.borrow_mut().arm();
        if let Some(at) = at {
            self.timer = Some(self.env.after(at.since(self.env.now()), self.me.clone(), CheckTick));
        }
    }
}

impl Actor for HealthChecker {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        self.arm();
    }
}

/// The alarm: every check and cleanup due now runs.
#[derive(Message)]
#[rtype(result = "()")]
struct CheckTick;

impl Handler<CheckTick> for HealthChecker {
    type Result = ();
    fn handle(&mut self, _: CheckTick, _: &mut Context<Self>) {
        self.timer = None;
        self.run();
        self.arm();
    }
}

/// Something became due earlier than the alarm: set it again.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Rearm;

impl Handler<Rearm> for HealthChecker {
    type Result = ();
    fn handle(&mut self, _: Rearm, _: &mut Context<Self>) {
        self.arm();
    }
}

/// SIGCONT after a SIGSTOP that began at `since`: the fixed-delay tasks that fell due in the
/// pause run now and continue from now (`nacos::health` re-phases the grids).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Resumed {
    pub since: SimTime,
}

impl Handler<Resumed> for HealthChecker {
    type Result = ();
    fn handle(&mut self, Resumed { since }: Resumed, _: &mut Context<Self>) {
        self.core.borrow_mut().resume(since, self.env.now());
        self.run();
        self.server.do_send(PushResumed { since });
        self.arm();
    }
}

impl Handler<Stop> for HealthChecker {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
