//! A graceful shutdown: the broker's shutdown hook (`BrokerController#shutdown` →
//! `unregisterBrokerAll`) asks every configured name server, one at a time, to unregister it,
//! then the process exits.

use super::{Broker, Call};
use crate::rocketmq::broker;
use crate::rocketmq::notes::RmqNote;
use crate::rocketmq::wire::RmqMsg;
use actix::prelude::*;

/// SIGTERM: the shutdown hook unregisters from every configured name server, one at a time.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

impl Handler<Shutdown> for Broker {
    type Result = ();
    fn handle(&mut self, _: Shutdown, ctx: &mut Context<Self>) {
        if self.shutdown.is_none() {
            self.shutdown = Some(0);
            self.unregister_next(ctx);
        }
    }
}

impl Broker {
    /// `unregisterBrokerAll`: asks the next name server to unregister us, or finishes the
    /// shutdown.
    pub(super) fn unregister_next(&mut self, ctx: &mut Context<Self>) {
        let Some(next) = self.shutdown else { return };
        if next >= self.remoting.names().len() {
            self.env.record(RmqNote::ShutdownComplete);
            self.env.exit();
            ctx.stop();
            return;
        }
        self.shutdown = Some(next + 1);
        let msg = RmqMsg::UnregisterBroker { request: Box::new(self.core.unregister_request()) };
        self.remoting.invoke_sync(next, msg, broker::UNREGISTER_TIMEOUT, Call::Unregister);
        self.env.record(RmqNote::UnregisterSent { namesrv: self.remoting.name(next).to_string() });
    }
}
