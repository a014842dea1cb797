//! A clustered naming server's `MemberInfoReportTask`: the plumbing between the pure view
//! (`nacos::cluster::MemberView`) and the simulated network. Not an actor: the server actor owns
//! it, because the replies and the network's notices come to the server's endpoint.
//!
//! Which transport, and why HTTP. Nacos 2.0–2.2 (`ServerMemberManager.MemberInfoReportTask#executeBody`)
//! posts the member's own `Member` to `/v1/core/cluster/report` with the shared
//! `NacosAsyncRestTemplate`: asynchronous, so the task re-arms itself 2 s after it *started* a
//! report (`Task#run` → `after()` → `scheduleByCommon(this, 2_000L)`), whatever the report's fate,
//! and a failure is counted when the callback runs — after the connect or read timeout. Its
//! client (`DefaultHttpClientFactory`) connects within `nacos.http.timeout` = 5 s and reads within
//! half of that, 2.5 s; a refused connect fails at once with a `ConnectException` whose message
//! contains "Connection refused", which `MemberUtil#onFail` turns into `DOWN` on the spot.
//! 2.3 and later report over the cluster gRPC client instead (`reportByGrpc`), which is not
//! modelled: there a refused connect never reaches `onFail` as "Connection refused", a timed-out
//! request is not counted at all, and an extra `UnhealthyMemberInfoReportTask` re-reports to every
//! non-`UP` member each 5 s.
//!
//! The connect timeout is the scenario's `[network] connect_timeout` (the sim has one for every
//! process); set it to `5s` to match this client exactly. The first report goes out 5 s after the
//! server starts (`onApplicationEvent` → `scheduleByCommon(infoReportTask, DEFAULT_TASK_DELAY_TIME
//! = 5_000L)`).

use crate::actors::env::Env;
use crate::actors::inbox::Local;
use crate::actors::nacos_server::NacosServer;
use crate::nacos::cluster::{MemberView, Seen};
use crate::nacos::http::Failure;
use crate::nacos::notes::NacosNote;
use crate::nacos::wire::{Answer, NacosMsg};
use crate::sim::clock::SimDuration;
use crate::sim::ids::{ChannelId, MsgId, NodeId};
use crate::sim::network::{ConnectFailure, Pool};
use crate::sim::packet::{Body, Notice, Packet};
use actix::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// `ServerMemberManager.DEFAULT_TASK_DELAY_TIME`: the first report, after the web server is up.
pub const FIRST_REPORT_DELAY: SimDuration = SimDuration::from_secs(5);
/// `MemberInfoReportTask#after`: `scheduleByCommon(this, 2_000L)`.
pub const REPORT_PERIOD: SimDuration = SimDuration::from_millis(2_000);
/// `DefaultHttpClientFactory`: read timeout `nacos.http.timeout >> 1` = 2.5 s.
pub const REPORT_READ_TIMEOUT: SimDuration = SimDuration::from_millis(2_500);

/// The member reports' HTTP client (`ServerMemberManager`'s `NacosAsyncRestTemplate`): its own
/// connections, apart from the `DistroFilter` proxy's. Distro shares them (see `nacos_distro`).
pub const REPORT_POOL: Pool = Pool(1);

/// One report on the wire.
struct Probe {
    peer: Arc<str>,
    channel: Option<ChannelId>,
}

pub struct Membership {
    env: Env,
    /// The server's address: where this part's timers go.
    me: Local<NacosServer>,
    view: Rc<RefCell<MemberView>>,
    nodes: BTreeMap<Arc<str>, NodeId>,
    inflight: BTreeMap<MsgId, Probe>,
}

impl Membership {
    /// `env` is the server's `member` part; `nodes` are the other members' processes.
    pub fn new(
        env: Env,
        view: Rc<RefCell<MemberView>>,
        nodes: BTreeMap<Arc<str>, NodeId>,
        me: Local<NacosServer>,
    ) -> Self {
        Membership { env, me, view, nodes, inflight: BTreeMap::new() }
    }

    /// One run of `MemberInfoReportTask#executeBody`: reports to the next peer. Gives the id of
    /// the report and when it times out, for the caller to arm; nothing in a cluster of one.
    pub fn report(&mut self) -> Option<(MsgId, SimDuration)> {
        let peer = self.view.borrow_mut().next_target()?;
        let node = self.nodes[&peer];
        let me = self.view.borrow().me().clone();
        // Apache's async client pools connections: a report does not queue behind the previous
        // report's connect still in progress (a silent peer: each connect waits its full
        // timeout), it opens its own, so each report fails on its own deadline.
        if !self.env.alive() {
            return None; // a dead incarnation's timer
        }
        let body = Body::Nacos(NacosMsg::MemberReport { from: me });
        let sent = self.env.net.send_via_pooled(self.env.node, node, body, REPORT_POOL);
        // Connected: the read timeout runs from now (or from when the connection is up). Still
        // connecting (or no channel at all): the network's connect failure ends it earlier; this
        // deadline only bounds a connect that succeeded late.
        let now = self.env.now();
        let deadline = match sent.up {
            Some(up) => up.max(now) + REPORT_READ_TIMEOUT,
            None => now + self.env.net.connect_timeout() + REPORT_READ_TIMEOUT,
        };
        self.inflight.insert(sent.id, Probe { peer, channel: sent.channel });
        Some((sent.id, deadline.since(now)))
    }

    /// A packet for the server: true if it was about one of our reports (an answer or a network
    /// notice), which is then handled here.
    pub fn on_packet(&mut self, p: &Packet) -> bool {
        match &p.body {
            Body::Nacos(NacosMsg::Reply { reply_to, answer }) => {
                let Some(probe) = self.inflight.remove(reply_to) else { return false };
                match answer {
                    // `onReceive`: `result.ok()` → `handleReportResult` → `onSuccess`.
                    Answer::Error { status, message } => {
                        let failure = Failure::Http { status: *status, message: message.clone() };
                        self.failed(&probe.peer, failure);
                    }
                    _ => {
                        let seen = self.view.borrow_mut().on_success(&probe.peer);
                        self.note(seen, None);
                    }
                }
                true
            }
            // `onError(throwable)` → `onFail(manager, target, throwable)`.
            Body::Notice(Notice::SendFailed { msg, reason, .. }) => {
                let Some(probe) = self.inflight.remove(msg) else { return false };
                let failure = match reason {
                    ConnectFailure::Refused => Failure::Refused,
                    ConnectFailure::TimedOut => Failure::ConnectTimeout,
                };
                self.failed(&probe.peer, failure);
                true
            }
            Body::Notice(Notice::ChannelClosed { channel, .. }) => {
                let closed: Vec<MsgId> =
                    self.inflight.iter().filter(|(_, p)| p.channel == Some(*channel)).map(|(id, _)| *id).collect();
                for id in &closed {
                    let probe = self.inflight.remove(id).expect("listed");
                    self.failed(&probe.peer, Failure::Closed);
                }
                !closed.is_empty()
            }
            _ => false,
        }
    }

    /// The report's deadline passed unanswered: the client gives the connection up (a
    /// `SocketTimeoutException`, not "Connection refused").
    pub fn on_timeout(&mut self, id: MsgId) {
        let Some(probe) = self.inflight.remove(&id) else { return };
        if let Some(channel) = probe.channel {
            self.env.net.close(self.env.node, channel, "read timed out");
        }
        self.failed(&probe.peer, Failure::ReadTimeout);
    }

    /// A peer's own report reached us (`NacosClusterController#report`).
    pub fn on_report_from(&mut self, peer: &str) {
        let Some(seen) = self.view.borrow_mut().on_report_from(peer) else { return };
        if seen.changed() {
            self.env.record(NacosNote::MemberReportIn {
                peer: seen.peer,
                from: seen.from,
                fail_count: seen.fail_access_cnt,
            });
        }
    }

    fn failed(&mut self, peer: &str, failure: Failure) {
        let refused = failure == Failure::Refused;
        let seen = self.view.borrow_mut().on_fail(peer, refused);
        self.note(seen, Some(failure));
    }

    fn note(&self, seen: Option<Seen>, failure: Option<Failure>) {
        let Some(s) = seen else { return };
        self.env.record(NacosNote::MemberProbed {
            peer: s.peer,
            failure,
            from: s.from,
            to: s.to,
            fail_count: s.fail_access_cnt,
        });
    }
}

/// `MemberInfoReportTask` runs: one report, and the next run 2 s on (`Task#after`).
#[derive(Message)]
#[rtype(result = "()")]
pub struct MemberTick;

impl Handler<MemberTick> for NacosServer {
    type Result = ();
    fn handle(&mut self, _: MemberTick, _: &mut Context<Self>) {
        let Some(member) = self.membership() else { return };
        if let Some((id, timeout)) = member.report() {
            member.env.after(timeout, member.me.clone(), ReportTimeout(id));
        }
        member.env.after(REPORT_PERIOD, member.me.clone(), MemberTick);
    }
}

/// A member report's connect-or-read deadline.
#[derive(Message)]
#[rtype(result = "()")]
struct ReportTimeout(MsgId);

impl Handler<ReportTimeout> for NacosServer {
    type Result = ();
    fn handle(&mut self, ReportTimeout(id): ReportTimeout, _: &mut Context<Self>) {
        if let Some(member) = self.membership() {
            member.on_timeout(id);
        }
        self.distro_refresh();
    }
}
