//! A clustered naming server's Distro part for 2.x gRPC clients: `DistroClientDataProcessor`
//! feeding `DistroProtocol`'s delay engine, the sync and verify sends
//! (`DistroClientTransportAgent`), and the receiving side (`DistroDataRequestHandler`). Not an
//! actor: the server owns it, because replies and network notices come to the server's endpoint.
//! The pure parts are `nacos::cluster::sync` (the engine) and `nacos::naming::synced` (copies).
//!
//! What each member does, read in Nacos 2.5.1:
//!
//! - **Sync** (`DistroProtocol#sync` → `DistroSyncChangeTask` / `DistroSyncDeleteTask`): a change
//!   to a connection client native here is sent to every other member 1 s later, with the data as
//!   it is *then*; a failure — the target not `UP` in this member's view
//!   (`checkTargetServerStatusUnhealthy`), no answer within 3 s, a refused or closed connection —
//!   queues the task again 3 s on, for as long as the target is a member.
//! - **Verify** (`DistroVerifyTimedTask`, every 5 s, first 5 s after start): one
//!   `DistroClientVerifyInfo(clientId, revision)` per native client to every other member that is
//!   `UP` here (the others are skipped: `onFailed`, which only logs). A peer without the copy, or
//!   with another revision, answers with a failure: `ClientVerifyFailedEvent` →
//!   `syncToVerifyFailedServer` queues a CHANGE to that peer alone with delay 0.
//! - **Copies expire** (`ConnectionBasedClientManager.ExpiredClientCleaner`, every 5 s from
//!   start): a copy not renewed by a verify for over 3 min goes.
//!
//! Transport: Nacos sends these over its cluster gRPC client (`ClusterRpcClientProxy#asyncRequest`)
//! with the timeouts above; the sim sends them as requests on a pooled connection between the
//! two members' processes, so partitions, kills and pauses reach them like any other traffic.
//! That pool is the one the member reports use, so a report's read timeout, which closes its
//! connection, also fails a Distro request waiting on it — up to 3 s before the request's own
//! timeout would have. Java's cluster gRPC connection is separate from the HTTP reports'.
//!
//! Not modelled yet: Distro for 1.x HTTP (`IpPortBasedClient`) clients — their responsibility,
//! the `DistroFilter` forward and the copies' beat-check hand-over — and `DistroLoadDataTask`
//! (a restarted member starts empty and gets its copies back through verify failures).

use crate::actors::env::Env;
use crate::actors::nacos_server::NacosServer;
use crate::actors::network::TimerId;
use crate::nacos::cluster::sync::{SYNC_DELAY, SYNC_RETRY_DELAY, SYNC_TIMEOUT, VERIFY_INTERVAL, VERIFY_TIMEOUT};
use crate::nacos::cluster::{DistroOp, DistroTasks, MemberView, NodeState};
use crate::nacos::naming::NamingServer;
use crate::nacos::notes::NacosNote;
use crate::nacos::wire::{Answer, NacosMsg};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, NodeId};
use crate::sim::packet::{Body, MsgId, Notice, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// A sync or verify on the wire.
struct Sent {
    target: Arc<str>,
    conn: Arc<str>,
    /// `None` for a verify.
    op: Option<DistroOp>,
    channel: Option<ChannelId>,
}

pub struct Distro {
    env: Env,
    view: Rc<RefCell<MemberView>>,
    core: Rc<RefCell<NamingServer>>,
    nodes: BTreeMap<Arc<str>, NodeId>,
    tasks: DistroTasks,
    timer: Option<(SimTime, TimerId)>,
    inflight: BTreeMap<MsgId, Sent>,
}

impl Distro {
    /// `env` is the server's `distro` part; `nodes` are the other members' processes.
    pub fn new(
        env: Env,
        view: Rc<RefCell<MemberView>>,
        core: Rc<RefCell<NamingServer>>,
        nodes: BTreeMap<Arc<str>, NodeId>,
    ) -> Self {
        core.borrow_mut().enable_distro();
        let tasks = DistroTasks::new(env.now());
        Distro { env, view, core, nodes, tasks, timer: None, inflight: BTreeMap::new() }
    }

    /// `DistroClientDataProcessor#onEvent` → `syncToAllServer`: every native client that
    /// changed or went becomes a task per other member (`allMembersWithoutSelf`).
    fn collect(&mut self) {
        let now = self.env.now();
        for (conn, deleted) in self.core.borrow_mut().take_distro_dirty() {
            let op = if deleted { DistroOp::Delete } else { DistroOp::Change };
            for target in self.nodes.keys() {
                self.tasks.add(now, target, &conn, op, SYNC_DELAY);
            }
        }
    }

    fn up(&self, target: &str) -> bool {
        self.view.borrow().peer(target).is_some_and(|p| p.state == NodeState::Up)
    }

    /// One `DistroSyncChangeTask` / `DistroSyncDeleteTask`; the deadline to arm, if sent.
    fn send_sync(&mut self, target: Arc<str>, conn: Arc<str>, op: DistroOp) -> Option<(MsgId, SimDuration)> {
        let data = match op {
            // `getDistroData` at run time: a client gone meanwhile is skipped.
            DistroOp::Change => Some(Arc::new(self.core.borrow().conn_sync_data(&conn)?)),
            DistroOp::Delete => None,
        };
        if !self.env.alive() {
            return None; // a dead incarnation's timer
        }
        if !self.up(&target) {
            self.failed(&target, &conn, op, crate::nacos::notes_distro::NOT_UP);
            return None;
        }
        let from = self.view.borrow().me().clone();
        let body = Body::Nacos(NacosMsg::DistroData { from, conn: conn.clone(), data });
        let sent = self.env.net.send_via_pooled(self.env.node, self.nodes[&target], body);
        self.inflight.insert(sent.id, Sent { target, conn, op: Some(op), channel: sent.channel });
        Some((sent.id, SYNC_TIMEOUT))
    }

    /// `handleFailedTask`: the same task again, 3 s on.
    fn failed(&mut self, target: &Arc<str>, conn: &Arc<str>, op: DistroOp, why: &str) {
        self.tasks.add(self.env.now(), target, conn, op, SYNC_RETRY_DELAY);
        let why = Arc::from(why);
        self.env.record(NacosNote::DistroSyncFailed { target: target.clone(), conn: conn.clone(), op, why });
    }

    /// `DistroVerifyTimedTask#run`: a verify per native client to each `UP` peer.
    fn verify(&mut self) -> Vec<(MsgId, SimDuration)> {
        if !self.env.alive() {
            return Vec::new();
        }
        let natives = self.core.borrow().native_conns();
        let from = self.view.borrow().me().clone();
        let mut armed = Vec::new();
        let targets: Vec<Arc<str>> = self.nodes.keys().filter(|t| self.up(t)).cloned().collect();
        for target in targets {
            for (conn, revision) in &natives {
                let body =
                    Body::Nacos(NacosMsg::DistroVerify { from: from.clone(), conn: conn.clone(), revision: *revision });
                let sent = self.env.net.send_via_pooled(self.env.node, self.nodes[&target], body);
                let s = Sent { target: target.clone(), conn: conn.clone(), op: None, channel: sent.channel };
                self.inflight.insert(sent.id, s);
                armed.push((sent.id, VERIFY_TIMEOUT));
            }
        }
        armed
    }

    /// A sync or verify ended: answered (`ok`) or not.
    fn ended(&mut self, id: MsgId, ok: bool, why: &str) {
        let Some(s) = self.inflight.remove(&id) else { return };
        match (s.op, ok) {
            (Some(op), false) => self.failed(&s.target, &s.conn, op, why),
            // `DistroVerifyCallbackWrapper#onResponse` with a failed answer.
            (None, false) if why == VERIFY_REFUSED => {
                self.tasks.add(self.env.now(), &s.target, &s.conn, DistroOp::Change, SimDuration::ZERO);
                self.env.record(NacosNote::DistroVerifyFailed { target: s.target, conn: s.conn });
            }
            _ => {}
        }
    }

    /// A packet for the server: true if it answered or failed one of our sends.
    fn on_packet(&mut self, p: &Packet) -> bool {
        match &p.body {
            Body::Nacos(NacosMsg::Reply { reply_to, answer }) if self.inflight.contains_key(reply_to) => {
                let ok = !matches!(answer, Answer::Error { .. });
                self.ended(*reply_to, ok, if ok { "" } else { VERIFY_REFUSED });
                true
            }
            Body::Notice(Notice::SendFailed { msg, .. }) if self.inflight.contains_key(msg) => {
                self.ended(*msg, false, "connect failed");
                true
            }
            Body::Notice(Notice::ChannelClosed { channel, .. }) => {
                let closed: Vec<MsgId> =
                    self.inflight.iter().filter(|(_, s)| s.channel == Some(*channel)).map(|(id, _)| *id).collect();
                for id in &closed {
                    self.ended(*id, false, "connection closed");
                }
                // Others (the member reports) may be waiting on the same connection.
                false
            }
            _ => false,
        }
    }
}

/// What a peer's failed verify answer says (`DistroDataRequestHandler`: `verify failed`).
const VERIFY_REFUSED: &str = "verify failed";

impl NacosServer {
    /// Queues the syncs that the last changes call for, and arms the engine's next tick.
    pub(crate) fn distro_collect(&mut self, ctx: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        d.collect();
        self.arm_distro(ctx);
    }

    fn arm_distro(&mut self, ctx: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        let Some(at) = d.tasks.next_wake() else { return };
        if d.timer.is_some_and(|(armed, _)| armed <= at) {
            return;
        }
        if let Some((_, old)) = d.timer.take() {
            d.env.net.cancel(old);
        }
        let timer = d.env.after(at.since(d.env.now()), ctx.address(), DistroTick);
        d.timer = Some((at, timer));
    }

    /// `DistroDataRequestHandler`: a peer's CHANGE, DELETE or VERIFY, answered here; and the
    /// answers and notices for our own sends. True if the packet was Distro's.
    pub(crate) fn on_distro(&mut self, p: &Packet, ctx: &mut Context<Self>) -> bool {
        let Some(d) = self.distro() else { return false };
        if d.on_packet(p) {
            self.arm_distro(ctx);
            return true;
        }
        let now = d.env.now();
        let (answer, changes) = match &p.body {
            Body::Nacos(NacosMsg::DistroData { from, conn, data }) => {
                let mut core = d.core.borrow_mut();
                let changes = match data {
                    Some(data) => core.apply_conn_sync(now, from, conn, data),
                    None => core.apply_conn_delete(conn),
                };
                (Answer::Ok, changes)
            }
            Body::Nacos(NacosMsg::DistroVerify { conn, revision, .. }) => {
                if d.core.borrow_mut().verify_conn(now, conn, *revision) {
                    (Answer::Ok, Vec::new())
                } else {
                    (Answer::Error { status: 500, message: Arc::from(VERIFY_REFUSED) }, Vec::new())
                }
            }
            _ => return false,
        };
        d.env.send_on(p.channel, Body::Nacos(NacosMsg::Reply { reply_to: p.id, answer }));
        if !changes.is_empty() {
            self.changed(changes, ctx);
        }
        true
    }
}

/// The delay engine's `ProcessRunnable`, at a tick where a task is ripe.
#[derive(Message)]
#[rtype(result = "()")]
struct DistroTick;

impl Handler<DistroTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: DistroTick, ctx: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        d.timer = None;
        let now = d.env.now();
        for (target, conn, op) in d.tasks.take_due(now) {
            if let Some((id, timeout)) = d.send_sync(target, conn, op) {
                d.env.after(timeout, ctx.address(), DistroTimeout(id));
            }
        }
        self.arm_distro(ctx);
    }
}

/// `DistroVerifyTimedTask` and the copies' `ExpiredClientCleaner`, both every 5 s from start.
#[derive(Message)]
#[rtype(result = "()")]
pub struct VerifyTick;

impl Handler<VerifyTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: VerifyTick, ctx: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        let now = d.env.now();
        let expired = d.core.borrow_mut().expire_copies(now);
        let mut changes = Vec::new();
        for (conn, idle, c) in expired {
            d.env.record(NacosNote::DistroCopyExpired { conn, idle: SimDuration::from_millis(idle) });
            changes.extend(c);
        }
        for (id, timeout) in d.verify() {
            d.env.after(timeout, ctx.address(), DistroTimeout(id));
        }
        d.env.after(VERIFY_INTERVAL, ctx.address(), VerifyTick);
        if !changes.is_empty() {
            self.changed(changes, ctx);
        }
    }
}

/// A sync's or verify's `getTimeout` passed unanswered.
#[derive(Message)]
#[rtype(result = "()")]
struct DistroTimeout(MsgId);

impl Handler<DistroTimeout> for NacosServer {
    type Result = ();
    fn handle(&mut self, DistroTimeout(id): DistroTimeout, ctx: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        d.ended(id, false, "no answer within the timeout");
        self.arm_distro(ctx);
    }
}
