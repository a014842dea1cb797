//! A clustered naming server's `DistroFilter` (Nacos 2.x `naming/web/DistroFilter`): a 1.x
//! client's register, deregister or beat for an instance that another member is responsible for,
//! in this member's own view, is proxied to that member, and its answer relayed. Not an actor: the
//! server owns it, because the client's requests, the target's answers and the network's notices
//! all come to the server's endpoint. The decision is `nacos::cluster::filter`.
//!
//! Transport: Java proxies with the naming module's synchronous `HttpClient#request` (its own
//! Apache connection pool), connect and read timeouts 2 s each. The sim sends it as a request on
//! a pooled connection between the two members' processes (`PROXY_POOL`, apart from the member
//! reports' and Distro's), so partitions, kills and pauses reach it like any other traffic. A
//! connect still in progress after 2 s is abandoned, and a connection whose answer did not come
//! within the 2 s read timeout is closed (Apache's pool discards it): the next proxied call
//! connects anew.

use crate::actors::env::Env;
use crate::actors::inbox::Local;
use crate::actors::nacos_server::NacosServer;
use crate::nacos::cluster::filter::{failure_answer, route, tag_of, Route, PROXY_CONNECT_TIMEOUT, PROXY_READ_TIMEOUT};
use crate::nacos::cluster::{DistroMapper, MemberView};
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

/// The proxy's HTTP client (naming's `HttpClient#request`, a synchronous rest template): its own
/// connections, apart from the member reports' (and Distro's, which share those).
pub const PROXY_POOL: Pool = Pool(2);

/// One proxied request waiting for the target's answer.
struct Proxy {
    /// The client's request: where and to what the answer goes.
    client_channel: ChannelId,
    client_msg: MsgId,
    api: &'static str,
    tag: Arc<str>,
    target: Arc<str>,
    channel: Option<ChannelId>,
}

pub struct DistroFilter {
    env: Env,
    /// The server's address: where this part's timers go.
    me: Local<NacosServer>,
    view: Rc<RefCell<MemberView>>,
    nodes: BTreeMap<Arc<str>, NodeId>,
    /// `DistroMapper#onEvent`: rebuilt when the view's revision moves.
    mapper: Option<(u64, DistroMapper)>,
    inflight: BTreeMap<MsgId, Proxy>,
}

impl DistroFilter {
    /// `env` is the server's `filter` part; `nodes` are the other members' processes.
    pub fn new(
        env: Env,
        view: Rc<RefCell<MemberView>>,
        nodes: BTreeMap<Arc<str>, NodeId>,
        me: Local<NacosServer>,
    ) -> Self {
        DistroFilter { env, me, view, nodes, mapper: None, inflight: BTreeMap::new() }
    }

    /// `DistroFilter#doFilter`'s decision for `tag`, from this member's current view.
    fn route(&mut self, tag: &str, from_peer: Option<&str>) -> Route {
        let revision = self.view.borrow().revision();
        if self.mapper.as_ref().is_none_or(|(r, _)| *r != revision) {
            self.mapper = Some((revision, DistroMapper::from_view(&self.view.borrow())));
        }
        route(&self.mapper.as_ref().expect("set above").1, tag, from_peer)
    }

    /// `HttpClient#request` to `target`; the delay after which to look at it again, if sent.
    fn proxy(&mut self, p: &Packet, msg: &NacosMsg, tag: String, target: Arc<str>) -> Option<(MsgId, SimDuration)> {
        let node = *self.nodes.get(&target)?;
        if !self.env.alive() {
            return None;
        }
        let from = self.view.borrow().me().clone();
        let body = Body::Nacos(NacosMsg::Proxied { from, req: Arc::new(msg.clone()) });
        let sent = self.env.net.send_via_pooled(self.env.node, node, body, PROXY_POOL);
        let (api, tag) = (msg.kind(), Arc::<str>::from(tag));
        self.env.record(NacosNote::DistroForwarded { api, client: tag.clone(), target: target.clone() });
        let proxy = Proxy { client_channel: p.channel, client_msg: p.id, api, tag, target, channel: sent.channel };
        self.inflight.insert(sent.id, proxy);
        // Connected: the read timeout runs from now (or from when the connection is up); still
        // connecting: the connect timeout first (see `ProxyTimeout`).
        let now = self.env.now();
        let wait = match sent.up {
            Some(up) => (up.max(now) + PROXY_READ_TIMEOUT).since(now),
            None => PROXY_CONNECT_TIMEOUT,
        };
        Some((sent.id, wait))
    }

    /// The target's answer (relayed as it is: `WebUtils.response(resp, data, result.getCode())`).
    fn relay(&mut self, id: MsgId, answer: &Answer) {
        let Some(proxy) = self.inflight.remove(&id) else { return };
        let reply = NacosMsg::Reply { reply_to: proxy.client_msg, answer: answer.clone() };
        self.env.send_on(proxy.client_channel, Body::Nacos(reply));
    }

    /// The proxied call failed: `RestResult(500, e.toString())` to the client.
    fn fail(&mut self, id: MsgId, failure: Failure) {
        let Some(proxy) = self.inflight.remove(&id) else { return };
        let (status, message) = failure_answer(&failure);
        let Proxy { api, tag: client, target, .. } = proxy;
        self.env.record(NacosNote::DistroForwardFailed { api, client, target, failure });
        let reply = NacosMsg::Reply { reply_to: proxy.client_msg, answer: Answer::Error { status, message } };
        self.env.send_on(proxy.client_channel, Body::Nacos(reply));
    }
}

impl NacosServer {
    /// Makes this member proxy 1.x requests for instances it is not responsible for.
    pub fn set_filter(&mut self, filter: DistroFilter) {
        self.filter = Some(filter);
    }

    fn filter(&mut self) -> Option<&mut DistroFilter> {
        self.filter.as_mut()
    }

    /// The filter's part of a packet: a client's request to proxy, a peer's proxied request, the
    /// answers and notices for our own proxied calls. True if the packet was consumed.
    pub(crate) fn on_filter(&mut self, p: &Packet, ctx: &mut Context<Self>) -> bool {
        let Some(f) = self.filter() else { return false };
        match &p.body {
            Body::Nacos(NacosMsg::Reply { reply_to, answer }) if f.inflight.contains_key(reply_to) => {
                f.relay(*reply_to, answer);
                true
            }
            Body::Notice(Notice::SendFailed { msg, reason, .. }) if f.inflight.contains_key(msg) => {
                let failure = match reason {
                    ConnectFailure::Refused => Failure::Refused,
                    ConnectFailure::TimedOut => Failure::ConnectTimeout,
                };
                f.fail(*msg, failure);
                true
            }
            Body::Notice(Notice::ChannelClosed { channel, .. }) => {
                let closed: Vec<MsgId> =
                    f.inflight.iter().filter(|(_, x)| x.channel == Some(*channel)).map(|(id, _)| *id).collect();
                for id in closed {
                    f.fail(id, Failure::Closed);
                }
                false // the reports and Distro may be waiting on the same connection
            }
            Body::Nacos(NacosMsg::Proxied { from, req }) => {
                let Some(tag) = tag_of(req) else { return true };
                match f.route(&tag, Some(from)) {
                    Route::Refuse { status, message } => {
                        let reply = NacosMsg::Reply { reply_to: p.id, answer: Answer::Error { status, message } };
                        f.env.send_on(p.channel, Body::Nacos(reply));
                    }
                    // Responsible here: the controller handles it as a client's own request.
                    _ => {
                        let inner = Packet {
                            id: p.id,
                            from: p.from,
                            to: p.to,
                            channel: p.channel,
                            body: Body::Nacos((**req).clone()),
                        };
                        <Self as Handler<Packet>>::handle(self, inner, ctx);
                    }
                }
                true
            }
            Body::Nacos(msg) => {
                let Some(tag) = tag_of(msg) else { return false };
                let Route::Forward(target) = f.route(&tag, None) else { return false };
                if let Some((id, wait)) = f.proxy(p, msg, tag, target) {
                    f.env.after(wait, f.me.clone(), ProxyTimeout(id));
                }
                true
            }
            _ => false,
        }
    }
}

/// A proxied call's connect or read deadline (`PROXY_CONNECT_TIMEOUT`, `PROXY_READ_TIMEOUT`).
#[derive(Message)]
#[rtype(result = "()")]
struct ProxyTimeout(MsgId);

impl Handler<ProxyTimeout> for NacosServer {
    type Result = ();
    fn handle(&mut self, ProxyTimeout(id): ProxyTimeout, _: &mut Context<Self>) {
        let Some(f) = self.filter() else { return };
        let Some(channel) = f.inflight.get(&id).map(|x| x.channel) else { return };
        let now = f.env.now();
        match channel.map(|c| (c, f.env.net.connected_at(c))) {
            // Connected meanwhile: the read timeout runs from then.
            Some((_, Some(up))) if up + PROXY_READ_TIMEOUT > now => {
                f.env.after((up + PROXY_READ_TIMEOUT).since(now), f.me.clone(), ProxyTimeout(id));
            }
            // Apache's client discards a connection whose response timed out (it cannot be read
            // past): the next proxied call opens a fresh one.
            Some((c, Some(_))) => {
                f.fail(id, Failure::ReadTimeout);
                f.env.net.close(f.env.node, c, "read timed out");
            }
            // Still connecting after 2 s: the connect is given up.
            Some((c, None)) => {
                f.fail(id, Failure::ConnectTimeout);
                f.env.net.close(f.env.node, c, "connect timed out");
            }
            None => f.fail(id, Failure::ConnectTimeout),
        }
    }
}
