//! The server's side of Distro: the timers that drive the engine (the sync tick, the verify
//! round, the snapshot load and its timeouts) and the answers that reach the server's endpoint.
//! The member's own state and the requests it sends are the parent module's `Distro`.

use super::VERIFY_REFUSED;
use crate::actors::nacos_server::NacosServer;
use crate::nacos::cluster::sync::VERIFY_INTERVAL;
use crate::nacos::notes::NacosNote;
use crate::nacos::wire::{Answer, NacosMsg};
use crate::sim::clock::SimDuration;
use crate::sim::ids::MsgId;
use crate::sim::packet::{Body, Notice, Packet};
use actix::prelude::*;
use std::sync::Arc;

impl NacosServer {
    /// After the member view may have moved: re-reads responsibility, and wakes the checker if
    /// it now has clients to check sooner.
    pub(crate) fn distro_refresh(&mut self) {
        if self.distro().is_some_and(|d| d.refresh_mapper()) {
            self.wake_checker();
        }
    }

    /// Queues the syncs that the last changes call for, and arms the engine's next tick.
    pub(crate) fn distro_collect(&mut self) {
        let Some(d) = self.distro() else { return };
        d.collect();
        self.arm_distro();
    }

    fn arm_distro(&mut self) {
        let Some(d) = self.distro() else { return };
        let Some(at) = d.tasks.next_wake() else { return };
        if d.timer.is_some_and(|(armed, _)| armed <= at) {
            return;
        }
        if let Some((_, old)) = d.timer.take() {
            d.env.net.cancel(old);
        }
        let timer = d.env.after(at.since(d.env.now()), d.me.clone(), DistroTick);
        d.timer = Some((at, timer));
    }

    /// `DistroDataRequestHandler`: a peer's CHANGE, DELETE or VERIFY, answered here; and the
    /// answers and notices for our own sends. True if the packet was Distro's.
    pub(crate) fn on_distro(&mut self, p: &Packet) -> bool {
        let Some(d) = self.distro() else { return false };
        let load_failed = match &p.body {
            Body::Notice(Notice::SendFailed { msg, .. }) => d.load_failed(*msg).map(|next| (next, true)),
            Body::Notice(Notice::ChannelClosed { channel, .. }) => {
                let id = d.load_waiting.as_ref().filter(|(_, _, c)| *c == Some(*channel)).map(|(id, _, _)| *id);
                id.and_then(|id| d.load_failed(id)).map(|next| (next, false))
            }
            _ => None,
        };
        if let Some((next, consumed)) = load_failed {
            self.after_load(next);
            if consumed {
                return true;
            }
        }
        let Some(d) = self.distro() else { return false };
        if d.on_packet(p) {
            self.arm_distro();
            return true;
        }
        let now = d.env.now();
        let (answer, changes) = match &p.body {
            Body::Nacos(NacosMsg::DistroData { from, conn, data }) => {
                let mut core = d.core.borrow_mut();
                let changes = match data {
                    Some(data) => core.apply_sync(now, from, conn, data),
                    None => core.apply_delete(conn),
                };
                (Answer::Ok, changes)
            }
            Body::Nacos(NacosMsg::DistroSnapshot { .. }) => {
                let clients = Arc::new(d.core.borrow().snapshot());
                d.env.send_on(p.channel, Body::Nacos(NacosMsg::DistroSnapshotData { reply_to: p.id, clients }));
                return true;
            }
            Body::Nacos(NacosMsg::DistroSnapshotData { reply_to, clients }) => {
                if d.load_waiting.as_ref().is_none_or(|(w, _, _)| w != reply_to) {
                    return true; // an answer after its timeout: the task moved on
                }
                let (_, peer, _) = d.load_waiting.take().expect("checked");
                let mut core = d.core.borrow_mut();
                let changes: Vec<_> =
                    clients.iter().flat_map(|(conn, data)| core.apply_sync(now, &peer, conn, data)).collect();
                drop(core);
                d.loaded = true;
                d.env.record(NacosNote::DistroLoaded { from: peer, clients: clients.len() });
                if !changes.is_empty() {
                    self.changed(changes);
                }
                return true;
            }
            Body::Nacos(NacosMsg::DistroVerify { conn, revision, .. }) => {
                if d.core.borrow_mut().verify_client(now, conn, *revision) {
                    (Answer::Ok, Vec::new())
                } else {
                    (Answer::Error { status: 500, message: Arc::from(VERIFY_REFUSED) }, Vec::new())
                }
            }
            _ => return false,
        };
        d.env.send_on(p.channel, Body::Nacos(NacosMsg::Reply { reply_to: p.id, answer }));
        if !changes.is_empty() {
            self.changed(changes);
        }
        true
    }
}

impl NacosServer {
    /// Arms what follows a load step: the request's timeout, or the next round.
    fn after_load(&mut self, next: Result<(MsgId, SimDuration), SimDuration>) {
        let Some(d) = self.distro() else { return };
        match next {
            Ok((id, timeout)) => d.env.after(timeout, d.me.clone(), LoadTimeout(id)),
            Err(delay) => d.env.after(delay, d.me.clone(), LoadTick),
        };
    }
}

/// `DistroLoadDataTask#run`: one round over the other members (at start-up, then every 30 s
/// until a snapshot is loaded).
#[derive(Message)]
#[rtype(result = "()")]
pub struct LoadTick;

impl Handler<LoadTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: LoadTick, _: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        // `DistroLoadDataTask#load` waits while `allMembersWithoutSelf` is empty: a member alone
        // in its cluster.conf never finishes loading (and has nobody to verify with).
        if d.loaded || d.nodes.is_empty() {
            return;
        }
        d.load_queue = d.nodes.keys().cloned().collect();
        let next = d.load_next();
        self.after_load(next);
    }
}

/// A SNAPSHOT request's 30 s (`loadDataTimeoutMillis`) passed unanswered: the next member.
#[derive(Message)]
#[rtype(result = "()")]
struct LoadTimeout(MsgId);

impl Handler<LoadTimeout> for NacosServer {
    type Result = ();
    fn handle(&mut self, LoadTimeout(id): LoadTimeout, _: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        if let Some(next) = d.load_failed(id) {
            self.after_load(next);
        }
    }
}

/// The delay engine's `ProcessRunnable`, at a tick where a task is ripe.
#[derive(Message)]
#[rtype(result = "()")]
struct DistroTick;

impl Handler<DistroTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: DistroTick, _: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        d.timer = None;
        let now = d.env.now();
        for (target, conn, op) in d.tasks.take_due(now) {
            if let Some((id, timeout)) = d.send_sync(target, conn, op) {
                d.env.after(timeout, d.me.clone(), DistroTimeout(id));
            }
        }
        self.arm_distro();
    }
}

/// `DistroVerifyTimedTask` and the copies' `ExpiredClientCleaner`, both every 5 s from start.
#[derive(Message)]
#[rtype(result = "()")]
pub struct VerifyTick;

impl Handler<VerifyTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: VerifyTick, _: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        let now = d.env.now();
        let expired = d.core.borrow_mut().expire_copies(now);
        let mut changes = Vec::new();
        for (conn, idle, c) in expired {
            d.env.record(NacosNote::DistroCopyExpired { conn, idle: SimDuration::from_millis(idle) });
            changes.extend(c);
        }
        for (id, timeout) in d.verify() {
            d.env.after(timeout, d.me.clone(), DistroTimeout(id));
        }
        d.env.after(VERIFY_INTERVAL, d.me.clone(), VerifyTick);
        if !changes.is_empty() {
            self.changed(changes);
        }
    }
}

/// A sync's or verify's `getTimeout` passed unanswered.
#[derive(Message)]
#[rtype(result = "()")]
struct DistroTimeout(MsgId);

impl Handler<DistroTimeout> for NacosServer {
    type Result = ();
    fn handle(&mut self, DistroTimeout(id): DistroTimeout, _: &mut Context<Self>) {
        let Some(d) = self.distro() else { return };
        d.ended(id, false, "no answer within the timeout");
        self.arm_distro();
    }
}
