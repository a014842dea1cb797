//! `DistroFilter` (Nacos 2.x `naming/web/DistroFilter#doFilter`): which member handles a 1.x HTTP
//! request for an instance. Pure: the actor side is `actors::nacos_filter`.
//!
//! The rules, read in Nacos 2.x:
//!
//! - Only controller methods marked `@CanDistro` are filtered: `InstanceController#register`,
//!   `#deregister`, `#beat` (and `#update`, which the console here does not send over HTTP). A
//!   list query is served by whoever receives it.
//! - The tag is `DistroIpPortTagGenerator#getResponsibleTag`: the request's `ip` and `port`
//!   parameters as `ip:port` — the same tag `IpPortBasedClient#getResponsibleId` gives, so the
//!   member a request goes to is the member [`DistroMapper`] names for its instance.
//! - `distroMapper.responsible(tag)`: handled here. Otherwise, a request that came from a peer
//!   (its `User-Agent` carries `Nacos-Server`) is refused with 400 "receive invalid redirect
//!   request from peer …" — a request is forwarded once at most. Any other goes to
//!   `distroMapper.mapSrv(tag)` with the same path and parameters (`HttpClient#request`, connect
//!   and read timeouts [`PROXY_CONNECT_TIMEOUT`] and [`PROXY_READ_TIMEOUT`]), and its answer —
//!   status and body — is the client's answer.
//! - A proxied call that fails throws inside `HttpClient#request`, which returns
//!   `RestResult(500, e.toString())`; the filter answers that: 500 with the exception's text.

use super::distro::DistroMapper;
use crate::nacos::http::Failure;
use crate::nacos::wire::NacosMsg;
use crate::sim::clock::SimDuration;
use std::sync::Arc;

/// `DistroFilter.PROXY_CONNECT_TIMEOUT` = 2000 ms.
pub const PROXY_CONNECT_TIMEOUT: SimDuration = SimDuration::from_millis(2_000);
/// `DistroFilter.PROXY_READ_TIMEOUT` = 2000 ms.
pub const PROXY_READ_TIMEOUT: SimDuration = SimDuration::from_millis(2_000);

/// What the filter does with one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `filterChain.doFilter`: this member's controller handles it.
    Local,
    /// Proxied to this member.
    Forward(Arc<str>),
    /// Answered 400 at once: a peer's request this member is not responsible for either.
    Refuse { status: u16, message: Arc<str> },
}

/// `DistroIpPortTagGenerator#getResponsibleTag` for the `@CanDistro` requests; `None` for the
/// others (no filtering).
pub fn tag_of(msg: &NacosMsg) -> Option<String> {
    let (ip, port) = match msg {
        NacosMsg::Register(r) => (&r.instance.ip, r.instance.port),
        NacosMsg::Deregister(r) => (&r.ip, r.port),
        NacosMsg::Beat(r) => (&r.ip, r.port),
        _ => return None,
    };
    Some(format!("{ip}:{port}"))
}

/// `DistroFilter#doFilter` for a request with `tag`; `from_peer` names the member that proxied it
/// here, if one did.
pub fn route(mapper: &DistroMapper, tag: &str, from_peer: Option<&str>) -> Route {
    if mapper.responsible(tag) {
        return Route::Local;
    }
    if let Some(peer) = from_peer {
        let message = Arc::from(format!("receive invalid redirect request from peer {peer}"));
        return Route::Refuse { status: 400, message };
    }
    Route::Forward(mapper.map_srv(tag).clone())
}

/// The 500 answer a failed proxied call gives the client: `e.toString()` of what the Apache
/// client threw, as `HttpClient#request` puts it in its `RestResult`.
pub fn failure_answer(failure: &Failure) -> (u16, Arc<str>) {
    let text = match failure {
        Failure::Refused => "java.net.ConnectException: Connection refused".to_string(),
        Failure::ConnectTimeout => "org.apache.http.conn.ConnectTimeoutException: connect timed out".to_string(),
        Failure::ReadTimeout => "java.net.SocketTimeoutException: Read timed out".to_string(),
        Failure::Closed => "org.apache.http.NoHttpResponseException: the target server failed to respond".to_string(),
        // Never built: an HTTP error from the target is relayed as it is.
        Failure::Http { status, message } => return (*status, message.clone()),
    };
    (500, Arc::from(text))
}
