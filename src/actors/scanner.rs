//! The scanner actor: `NamesrvController`'s `scanNotActiveBroker` task.
//!
//! Every `scan_interval` it reads the live table and, for each broker with
//! `lastUpdateTimestamp + timeout < now` (strictly), closes its channel and submits an
//! unregister request. It removes nothing itself: in 5.x removal happens later, on the batch
//! thread. (4.x removed the entry inside the scan.)

use crate::actors::batcher::{Batcher, Submit};
use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::route_table::RouteInfoManager;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::mutation::Mutation;
use actix::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;

pub struct Scanner {
    env: Env,
    /// Read-only: the Java scan iterates `brokerLiveTable` without taking the lock.
    table: Rc<RefCell<RouteInfoManager>>,
    batcher: Local<Batcher>,
    interval: SimDuration,
    initial_delay: SimDuration,
    /// Its own address: where its timer's message goes.
    me: Local<Scanner>,
}

impl Scanner {
    pub fn new(
        env: Env,
        table: Rc<RefCell<RouteInfoManager>>,
        batcher: Local<Batcher>,
        interval: SimDuration,
        initial_delay: SimDuration,
        me: Local<Scanner>,
    ) -> Self {
        Scanner { env, table, batcher, interval, initial_delay, me }
    }
}

impl Actor for Scanner {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        let first = self.env.now() + self.initial_delay;
        self.env.after(self.initial_delay, self.me.clone(), ScanTick(first));
    }
}

/// One run of the fixed-rate scan task, scheduled for the given instant.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ScanTick(pub SimTime);

impl Handler<ScanTick> for Scanner {
    type Result = ();
    fn handle(&mut self, ScanTick(scheduled): ScanTick, _: &mut Context<Self>) {
        let now = self.env.now();
        // The planted bug moves the scan one millisecond ahead: `last + timeout <= now`.
        let planted = self.env.mutation == Some(Mutation::ScanAtTimeout);
        let scan_at = if planted { now + SimDuration(1) } else { now };
        let (expired, live) = {
            let table = self.table.borrow();
            (table.scan_not_active_broker(scan_at), table.broker_live_table().len())
        };
        self.env.record(RmqNote::ScanTick { live, expired: expired.len() });
        for e in expired {
            self.env.record(RmqNote::Expired {
                cluster: e.addr_info.cluster_name.to_string(),
                addr: e.addr_info.broker_addr.to_string(),
                last_update: e.last_update,
                silent: now.since(e.last_update),
                timeout: e.timeout,
                queued: e.request.is_some(),
            });
            // RemotingHelper.closeChannel: this fires a CLOSE event on our side too, which the
            // housekeeping service turns into a second, duplicate request (#3310) if the entry
            // is still there when it runs.
            self.env.net.close(self.env.node, e.channel, "expired by scan");
            if let Some(request) = e.request {
                self.batcher.do_send(Submit(request));
            }
        }
        let (next, delay) = self.env.fixed_rate_delay(scheduled, self.interval);
        self.env.after(delay, self.me.clone(), ScanTick(next));
    }
}

impl Handler<Stop> for Scanner {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
