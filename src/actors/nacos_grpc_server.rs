//! A naming server's gRPC side: `GrpcRequestAcceptor` / `GrpcBiStreamRequestAcceptor` in front
//! of `ConnectionManager` (`nacos::grpc::connections`) and the connection clients of
//! `nacos::naming`. Not an actor: the server actor owns it, because the connections' requests
//! and the network's notices come to the server's endpoint, and the changes it makes need the
//! server's trace lines and pushes.
//!
//! * A `Setup` registers the connection (`ConnectionManager#register`) and its
//!   `ConnectionBasedClient` (`clientConnected`), and answers with the connection id.
//! * Any other request on a registered connection first refreshes its active time
//!   (`GrpcRequestAcceptor#request` → `refreshActiveTime`), then is handled; on a connection the
//!   server does not know it is answered `UN_REGISTER` ("Connection is unregistered.").
//! * The ejector (`EjectTick`, every 3 s with a fixed delay, from 1 s after start) probes idle
//!   connections and unregisters those that do not answer within 5 s.
//! * A closed TCP connection (a FIN or RST reaching the server, the kernel giving up) unregisters
//!   its connection at once (`AddressTransportFilter#transportTerminated`).
//!
//! Unregistering closes the server's end and releases the client: every instance it published
//! is removed in the same instant.

use crate::actors::env::Env;
use crate::actors::inbox::Local;
use crate::actors::nacos_server::NacosServer;
use crate::nacos::grpc::connections::ConnectionTable;
use crate::nacos::grpc::wire::GrpcMsg;
use crate::nacos::grpc::{DETECTION_TIMEOUT, EJECTOR_DELAY, UN_REGISTER};
use crate::nacos::naming::{Change, NamingServer};
use crate::nacos::notes::NacosNote;
use crate::nacos::wire::NacosMsg;
use crate::sim::clock::SimDuration;
use crate::sim::ids::{ChannelId, MsgId};
use crate::sim::packet::{Body, Notice, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

pub struct GrpcConnections {
    env: Env,
    /// The server's address: where this part's timers go.
    me: Local<NacosServer>,
    core: Rc<RefCell<NamingServer>>,
    table: ConnectionTable,
    /// `ClientDetectionRequest`s waiting for their answer, by message id.
    probes: BTreeMap<MsgId, Arc<str>>,
    /// Which ejector run the armed latch deadline belongs to.
    run: u64,
}

fn response(reply_to: MsgId, error: Option<i32>, conn: Option<Arc<str>>) -> Body {
    Body::Nacos(NacosMsg::Grpc(GrpcMsg::Response { reply_to, error, conn }))
}

/// What a packet did on the gRPC side.
#[derive(Default)]
pub struct Handled {
    pub changes: Vec<Change>,
    /// An ejector run ended (its latch reached zero): the next run is due `EJECTOR_DELAY` on.
    pub run_ended: bool,
}

impl GrpcConnections {
    pub fn new(env: Env, core: Rc<RefCell<NamingServer>>, me: Local<NacosServer>) -> Self {
        GrpcConnections { env, me, core, table: ConnectionTable::default(), probes: BTreeMap::new(), run: 0 }
    }

    /// A packet for the server: `Some` if it was about a gRPC connection (handled here), `None`
    /// to leave it to the HTTP side.
    pub fn on_packet(&mut self, p: &Packet) -> Option<Handled> {
        match &p.body {
            Body::Nacos(NacosMsg::Grpc(m)) => Some(self.on_msg(p, m)),
            Body::Notice(Notice::ChannelClosed { channel, .. }) => self.on_closed(*channel),
            _ => None,
        }
    }

    fn on_msg(&mut self, p: &Packet, m: &GrpcMsg) -> Handled {
        let now = self.env.now();
        match m {
            GrpcMsg::Setup { client } => {
                // `AddressTransportFilter#transportReady`: `currentTimeMillis + "_" + remoteIp +
                // "_" + remotePort`; the channel number stands in for the client's port.
                let id: Arc<str> = Arc::from(format!("{}_{}_{}", now.millis(), client, p.channel.0));
                self.table.register(id.clone(), client.clone(), p.channel, now);
                self.core.borrow_mut().connect_client(&id);
                self.env.record(NacosNote::ConnRegistered { conn: id.clone(), client: client.clone() });
                self.env.send_on(p.channel, response(p.id, None, Some(id)));
                Handled::default()
            }
            GrpcMsg::Response { reply_to, error, .. } => self.on_detection_answer(*reply_to, error.is_none()),
            GrpcMsg::ClientDetection => Handled::default(),
            GrpcMsg::HealthCheck | GrpcMsg::Register { .. } => {
                // `GrpcRequestAcceptor#request`: `checkValid`, `refreshActiveTime`, the handler.
                let Some(conn) = self.table.on_channel(p.channel).cloned() else {
                    self.env.send_on(p.channel, response(p.id, Some(UN_REGISTER), None));
                    return Handled::default();
                };
                self.table.refresh(&conn, now);
                let changes = match m {
                    GrpcMsg::Register { service, instance } => {
                        self.core.borrow_mut().register_grpc(now, &conn, service, instance).unwrap_or_default()
                    }
                    _ => Vec::new(),
                };
                self.env.send_on(p.channel, response(p.id, None, None));
                Handled { changes, run_ended: false }
            }
        }
    }

    /// `GrpcBiStreamRequestAcceptor#onNext` (a `Response`): `refreshActiveTime`, and the
    /// ejector's callback counts the latch down. Ends the run early if it was the last.
    fn on_detection_answer(&mut self, reply_to: MsgId, ok: bool) -> Handled {
        let Some(conn) = self.probes.remove(&reply_to) else { return Handled::default() };
        let now = self.env.now();
        self.table.refresh(&conn, now);
        let last = if ok { self.table.detection_answered(&conn, now) } else { self.table.detection_failed(&conn) };
        if let Some(c) = self.table.get(&conn).filter(|_| ok) {
            self.env.record(NacosNote::ConnDetected { conn: conn.clone(), client: c.client.clone() });
        }
        if last {
            return Handled { changes: self.finish_run(), run_ended: true };
        }
        Handled::default()
    }

    /// `transportTerminated`: the TCP connection of a registered connection closed.
    fn on_closed(&mut self, channel: ChannelId) -> Option<Handled> {
        if self.core.borrow().planted() == Some(crate::sim::mutation::Mutation::GrpcIgnoresTransportTerminated) {
            return None; // the planted bug: only the ejector will find the connection gone
        }
        let conn = self.table.on_channel(channel)?.clone();
        let c = self.table.unregister(&conn)?;
        self.env.record(NacosNote::ConnUnregistered { conn: conn.clone(), client: c.client, ejected_idle: None });
        let mut changes = self.core.borrow_mut().disconnect_client(&conn);
        // A probe to it counts down the latch (`onException`).
        let mut run_ended = false;
        if self.table.detection_failed(&conn) {
            changes.extend(self.finish_run());
            run_ended = true;
        }
        Some(Handled { changes, run_ended })
    }

    /// One `doEject` run: `Ok(delay)` when nothing is outdated (the next run is `delay` on),
    /// else the probes are out and `Err((run, wait))` is the latch's deadline to arm.
    pub fn start_run(&mut self) -> Result<SimDuration, (u64, SimDuration)> {
        let outdated = self.table.start_run(self.env.now());
        if outdated.is_empty() {
            return Ok(EJECTOR_DELAY);
        }
        for (conn, idle) in outdated {
            let Some(c) = self.table.get(&conn).cloned() else { continue };
            let id = self.env.send_on(c.channel, Body::Nacos(NacosMsg::Grpc(GrpcMsg::ClientDetection)));
            self.probes.insert(id, conn.clone());
            self.env.record(NacosNote::ConnDetecting { conn, client: c.client, idle });
        }
        self.run += 1;
        Err((self.run, DETECTION_TIMEOUT))
    }

    /// The latch deadline of run `run` passed: ends it, unless it ended early.
    pub fn latch_timeout(&mut self, run: u64) -> Option<Vec<Change>> {
        (run == self.run && self.table.running()).then(|| self.finish_run())
    }

    /// The latch is done: every probed connection without a success is unregistered (its end
    /// closed: `remove.close()`) and its client released.
    fn finish_run(&mut self) -> Vec<Change> {
        self.run += 1;
        self.probes.clear();
        let ended = self.table.finish_run(self.env.now(), EJECTOR_DELAY);
        let mut changes = Vec::new();
        for (conn, c, idle) in ended.ejected {
            self.env.net.close(self.env.node, c.channel, "connection ejected");
            self.env.record(NacosNote::ConnUnregistered {
                conn: conn.clone(),
                client: c.client,
                ejected_idle: Some(idle),
            });
            changes.extend(self.core.borrow_mut().disconnect_client(&conn));
        }
        changes
    }
}

impl NacosServer {
    /// A packet about a gRPC connection: handled here (true), with its changes traced and
    /// pushed and, if it ended an ejector run, the next run armed.
    pub(crate) fn on_grpc(&mut self, p: &Packet) -> bool {
        let Some(grpc) = self.grpc() else { return false };
        let Some(h) = grpc.on_packet(p) else { return false };
        if h.run_ended {
            grpc.env.after(EJECTOR_DELAY, grpc.me.clone(), EjectTick);
        }
        if !h.changes.is_empty() {
            self.changed(h.changes);
        }
        true
    }
}

/// `ConnectionManager`'s ejector runs (`doEject`).
#[derive(Message)]
#[rtype(result = "()")]
pub struct EjectTick;

impl Handler<EjectTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: EjectTick, _: &mut Context<Self>) {
        let Some(grpc) = self.grpc() else { return };
        match grpc.start_run() {
            Ok(delay) => {
                grpc.env.after(delay, grpc.me.clone(), EjectTick);
            }
            Err((run, wait)) => {
                grpc.env.after(wait, grpc.me.clone(), LatchTimeout(run));
            }
        }
    }
}

/// `latch.await(5000L)` of ejector run `.0` gave up.
#[derive(Message)]
#[rtype(result = "()")]
struct LatchTimeout(u64);

impl Handler<LatchTimeout> for NacosServer {
    type Result = ();
    fn handle(&mut self, LatchTimeout(run): LatchTimeout, _: &mut Context<Self>) {
        let Some(grpc) = self.grpc() else { return };
        let Some(changes) = grpc.latch_timeout(run) else { return };
        grpc.env.after(EJECTOR_DELAY, grpc.me.clone(), EjectTick);
        self.changed(changes);
    }
}
