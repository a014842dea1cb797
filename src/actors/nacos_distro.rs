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
//! - **Load** (`DistroLoadDataTask`, submitted at start-up): the member asks the others, in
//!   address order and skipping those not `UP` in its view, for a SNAPSHOT — every connection
//!   client they hold, native or copy — waiting up to 30 s for each; the first answer is applied
//!   (`processSnapshot`: each becomes a copy here) and ends the task. If none answers, the task
//!   runs again 30 s later. Until a snapshot is loaded the member sends no verify
//!   (`DistroVerifyTimedTask#verifyForDataStorage`: `isFinishInitial`).
//! - **Copies expire** (`ConnectionBasedClientManager.ExpiredClientCleaner`, every 5 s from
//!   start): a copy not renewed by a verify for over 3 min goes.
//!
//! Transport: Nacos sends these over its cluster gRPC client (`ClusterRpcClientProxy#asyncRequest`)
//! with the timeouts above; the sim sends them as requests on pooled connections between the two
//! members' processes, so partitions, kills and pauses reach them like any other traffic. Those
//! connections are the member reports' (`nacos_member::REPORT_POOL`), not a pool of their own:
//! Java's cluster client opens its connection at start-up and, when its health check fails
//! (`RpcClient#healthCheck`), drops it and reconnects — which the sim does not model. Sharing
//! the reports' connections stands in for that: a report's read timeout closes a connection lost
//! in a cut, and the next Distro request opens a fresh one (it also fails a Distro request
//! waiting on it, up to 3 s before the request's own timeout would have). The `DistroFilter`
//! proxy, a separate HTTP client in Java, has its own pool.
//!
//! 1.x HTTP clients: their requests reach the responsible member through the `DistroFilter`
//! forward (`actors::nacos_filter`), and the same engine syncs each `IpPortBasedClient` from the
//! member its `DistroMapper` makes responsible to every other (`nacos::naming::synced_ip`): the
//! messages carry the client id, `ip:port#true`, and the core tells the kinds apart by its `#`.
//! When the view moves, responsibility is re-read (`refresh_mapper`) and the beat checks follow.

use crate::actors::env::Env;
use crate::actors::inbox::Local;
use crate::actors::nacos_member::REPORT_POOL;
use crate::actors::nacos_server::NacosServer;
use crate::actors::network::TimerId;
use crate::nacos::cluster::sync::{
    LOAD_RETRY_DELAY, LOAD_TIMEOUT, SYNC_DELAY, SYNC_RETRY_DELAY, SYNC_TIMEOUT, VERIFY_TIMEOUT,
};
use crate::nacos::cluster::{DistroOp, DistroTasks, MemberView, NodeState};
use crate::nacos::naming::NamingServer;
use crate::nacos::notes::NacosNote;
use crate::nacos::wire::{Answer, NacosMsg};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::{ChannelId, MsgId, NodeId};
use crate::sim::packet::{Body, Notice, Packet};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

mod server;
pub use server::{LoadTick, VerifyTick};

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
    /// The server's address: where this part's timers go.
    me: Local<NacosServer>,
    view: Rc<RefCell<MemberView>>,
    core: Rc<RefCell<NamingServer>>,
    nodes: BTreeMap<Arc<str>, NodeId>,
    tasks: DistroTasks,
    timer: Option<(SimTime, TimerId)>,
    inflight: BTreeMap<MsgId, Sent>,
    /// `isFinishInitial`: a snapshot was loaded.
    loaded: bool,
    /// This round's `DistroLoadDataTask`: the peers still to ask, and the request waiting.
    load_queue: Vec<Arc<str>>,
    load_waiting: Option<(MsgId, Arc<str>, Option<ChannelId>)>,
    /// The view revision the core's `DistroMapper` was last built from.
    mapper_at: Option<u64>,
}

impl Distro {
    /// `env` is the server's `distro` part; `nodes` are the other members' processes.
    pub fn new(
        env: Env,
        view: Rc<RefCell<MemberView>>,
        core: Rc<RefCell<NamingServer>>,
        nodes: BTreeMap<Arc<str>, NodeId>,
        me: Local<NacosServer>,
    ) -> Self {
        core.borrow_mut().enable_distro();
        let tasks = DistroTasks::new(env.now());
        let mut distro = Distro {
            env,
            me,
            view,
            core,
            nodes,
            tasks,
            timer: None,
            inflight: BTreeMap::new(),
            loaded: false,
            load_queue: Vec::new(),
            load_waiting: None,
            mapper_at: None,
        };
        distro.refresh_mapper();
        distro
    }

    /// `DistroMapper#onEvent` (a `MembersChangeEvent`): the view moved, so this member's
    /// responsibility for each 1.x client is read again — the checks of a client it now owns
    /// start here, those of one it no longer owns stop. True if anything changed hands.
    fn refresh_mapper(&mut self) -> bool {
        let view = self.view.borrow();
        if self.mapper_at == Some(view.revision()) {
            return false;
        }
        self.mapper_at = Some(view.revision());
        let mapper = crate::nacos::cluster::DistroMapper::from_view(&view);
        drop(view);
        let taken = self.core.borrow_mut().set_mapper(mapper, self.env.now());
        for client in &taken {
            self.env.record(NacosNote::DistroTookOver { client: client.clone() });
        }
        !taken.is_empty()
    }

    /// `DistroLoadDataTask#loadAllDataSnapshotFromRemote`: asks the next peer that is `UP` here;
    /// `Ok` with the request's timeout, or `Err` with the retry delay when the round is over.
    fn load_next(&mut self) -> Result<(MsgId, SimDuration), SimDuration> {
        while !self.load_queue.is_empty() {
            let peer = self.load_queue.remove(0);
            if !self.up(&peer) || !self.env.alive() {
                continue; // `getDatumSnapshot` throws: "target server unhealthy"
            }
            let from = self.view.borrow().me().clone();
            let body = Body::Nacos(NacosMsg::DistroSnapshot { from });
            let sent = self.env.net.send_via_pooled(self.env.node, self.nodes[&peer], body, REPORT_POOL);
            self.load_waiting = Some((sent.id, peer, sent.channel));
            return Ok((sent.id, LOAD_TIMEOUT));
        }
        self.env.record(NacosNote::DistroLoadFailed { retry_in: LOAD_RETRY_DELAY });
        Err(LOAD_RETRY_DELAY)
    }

    /// The snapshot request `id` failed (no answer, refused, closed): the next peer.
    fn load_failed(&mut self, id: MsgId) -> Option<Result<(MsgId, SimDuration), SimDuration>> {
        if self.load_waiting.as_ref().is_none_or(|(w, _, _)| *w != id) {
            return None;
        }
        self.load_waiting = None;
        Some(self.load_next())
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
            DistroOp::Change => Some(Arc::new(self.core.borrow().client_sync_data(&conn)?)),
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
        let sent = self.env.net.send_via_pooled(self.env.node, self.nodes[&target], body, REPORT_POOL);
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
        if !self.env.alive() || !self.loaded {
            return Vec::new();
        }
        let natives = self.core.borrow().verify_data();
        let from = self.view.borrow().me().clone();
        let mut armed = Vec::new();
        let targets: Vec<Arc<str>> = self.nodes.keys().filter(|t| self.up(t)).cloned().collect();
        for target in targets {
            for (conn, revision) in &natives {
                let body =
                    Body::Nacos(NacosMsg::DistroVerify { from: from.clone(), conn: conn.clone(), revision: *revision });
                let sent = self.env.net.send_via_pooled(self.env.node, self.nodes[&target], body, REPORT_POOL);
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
