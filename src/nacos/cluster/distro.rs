//! `DistroMapper`: which member of the cluster is responsible for a client, as one member sees
//! it. Each member hashes over *its own* healthy list, so two members whose views differ (a
//! partition, a peer one of them has marked `DOWN`) can both think they own a client — or
//! neither.
//!
//! The rules, read in Nacos 2.5.1 `naming/.../core/DistroMapper.java`:
//!
//! - `onEvent(MembersChangeEvent)`: the healthy list is every member (self included:
//!   `ServerMemberManager#notifyMemberChange` sends `allMembers()`) whose state is `UP` or
//!   `SUSPICIOUS`, as addresses, **sorted** ("the node list must be sorted to ensure that all
//!   nacos-server's node list is in the same order"). A `SUSPICIOUS` peer still owns its share:
//!   re-hashing waits for `DOWN`. `MemberUtil#onFail`/`#onSuccess` publish the event only when a
//!   state changes, and so the list is rebuilt exactly when [`MemberView::revision`] moves.
//! - `distroHash(tag) = Math.abs(tag.hashCode() % Integer.MAX_VALUE)`, Java `String.hashCode`.
//! - `responsible(tag)`: true if self is not in the list (`lastIndex < 0 || index < 0`), false
//!   if the list is empty ("distro config is not ready yet"), else
//!   `distroHash(tag) % servers.size()` is self's index.
//! - `mapSrv(tag)`: `servers.get(distroHash(tag) % servers.size())`, self if the list is empty.
//!
//! The tag of a 1.x HTTP client is its `ip:port` (`IpPortBasedClient#getResponsibleId`); a gRPC
//! client's owner is not hashed at all: it is the member its connection is on.
//!
//! Addresses: Nacos sorts `ip:port` strings; the sim's members are named, and name order stands
//! in for address order (as in [`MemberView`]).

use super::member::MemberView;
use std::sync::Arc;

/// Java's `String.hashCode`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16 code units, wrapping in
/// 32 bits.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `DistroMapper#distroHash`: `Math.abs(tag.hashCode() % Integer.MAX_VALUE)`. The remainder is
/// taken first, so even `Integer.MIN_VALUE` (whose `Math.abs` would stay negative) lands at 1.
pub fn distro_hash(tag: &str) -> usize {
    (java_string_hash(tag) % i32::MAX).unsigned_abs() as usize
}

/// One member's `DistroMapper`: its sorted healthy list and itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistroMapper {
    me: Arc<str>,
    healthy: Vec<Arc<str>>,
}

impl DistroMapper {
    /// `DistroMapper#onEvent`, from `view` (self is `UP` in its own eyes: `ServerMemberManager#init`
    /// builds `self` with `singleParse`, which sets `UP`).
    pub fn from_view(view: &MemberView) -> Self {
        let peers = view.peers().filter(|(_, p)| p.state.is_healthy()).map(|(n, _)| n.clone());
        let mut healthy: Vec<Arc<str>> = peers.chain([view.me().clone()]).collect();
        healthy.sort();
        DistroMapper { me: view.me().clone(), healthy }
    }

    /// The sorted `UP`/`SUSPICIOUS` members, self included.
    pub fn healthy_list(&self) -> &[Arc<str>] {
        &self.healthy
    }

    /// `DistroMapper#mapSrv`: the member this one believes owns `tag`.
    pub fn map_srv(&self, tag: &str) -> &Arc<str> {
        if self.healthy.is_empty() {
            return &self.me;
        }
        &self.healthy[distro_hash(tag) % self.healthy.len()]
    }

    /// `DistroMapper#responsible`.
    pub fn responsible(&self, tag: &str) -> bool {
        if self.healthy.is_empty() {
            return false;
        }
        // A member's name appears once, so `indexOf == lastIndex` and the range check is equality.
        let Some(index) = self.healthy.iter().position(|m| *m == self.me) else { return true };
        distro_hash(tag) % self.healthy.len() == index
    }
}
