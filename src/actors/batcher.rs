//! The unregistration batcher actor: `BatchUnregistrationService`.
//!
//! A request arriving at an idle batcher is "taken"; after the processing delay (default 0,
//! the time the thread needs to wake and get the write lock) everything queued by then is drained
//! and sent to the route table as one batch. Requests arriving while a batch is being applied
//! wait for the next one. A full queue drops the request — traced, where Java only logs it.

use crate::actors::env::{Env, Stop};
use crate::actors::inbox::Local;
use crate::actors::namesrv::{ApplyBatch, RouteTable};
use crate::rocketmq::batch::UnregisterQueue;
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::types::UnregisterRequest;
use crate::sim::clock::SimDuration;
use actix::prelude::*;

pub struct Batcher {
    env: Env,
    queue: UnregisterQueue,
    delay: SimDuration,
    /// True from the `take()` until the batch has been applied.
    busy: bool,
    table: Local<RouteTable>,
    /// Its own address: where its timer's message goes.
    me: Local<Batcher>,
}

impl Batcher {
    pub fn new(env: Env, capacity: usize, delay: SimDuration, table: Local<RouteTable>, me: Local<Batcher>) -> Self {
        Batcher { env, queue: UnregisterQueue::new(capacity), delay, busy: false, table, me }
    }

    fn wake(&mut self) {
        if !self.busy && !self.queue.is_empty() {
            self.busy = true;
            self.env.after(self.delay, self.me.clone(), Process);
        }
    }
}

impl Actor for Batcher {
    type Context = Context<Self>;
}

/// `submit(request)`: `queue.offer`, never blocking.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Submit(pub UnregisterRequest);

impl Handler<Submit> for Batcher {
    type Result = ();
    fn handle(&mut self, Submit(request): Submit, _: &mut Context<Self>) {
        let broker = request.to_string();
        if !self.queue.offer(request) {
            self.env.record(RmqNote::QueueFull { broker, capacity: self.queue.capacity() });
        }
        self.wake();
    }
}

#[derive(Message)]
#[rtype(result = "()")]
struct Process;

impl Handler<Process> for Batcher {
    type Result = ();
    fn handle(&mut self, _: Process, ctx: &mut Context<Self>) {
        let batch = self.queue.drain();
        self.env.record(RmqNote::BatchTaken { size: batch.len() });
        // Wait for the table to apply the batch before taking the next one: one thread.
        self.table
            .send(ApplyBatch(batch))
            .into_actor(self)
            .map(|_, act, _| {
                act.busy = false;
                act.wake();
            })
            .spawn(ctx);
    }
}

impl Handler<Stop> for Batcher {
    type Result = ();
    fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
