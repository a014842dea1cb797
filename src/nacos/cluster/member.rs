//! One member's view of its Nacos cluster: `ServerMemberManager`'s member list with each peer's
//! `NodeState` and `failAccessCnt`, and `MemberInfoReportTask`'s round-robin cursor.
//!
//! Every member keeps its own view, fed only by what *it* sees: the reports it sends (answered or
//! failed) and the reports it receives. Nothing is gossiped, so during a partition two members can
//! hold different pictures of the same peer, and each picture heals on its own.
//!
//! The rules, as read in Nacos 2.2 (`core/.../cluster/MemberUtil.java`, `ServerMemberManager.java`,
//! `NacosClusterController.java`):
//!
//! - Every member starts `UP` with `failAccessCnt` 0 (`MemberUtil#singleParse` builds members
//!   from `cluster.conf` with `state(NodeState.UP)`).
//! - A failed report (`MemberUtil#onFail`) makes the peer `SUSPICIOUS` and counts the failure;
//!   once the count passes `nacos.core.member.fail-access-cnt` (3), or at once if the error's
//!   message contains "Connection refused", the peer is `DOWN`.
//! - An answered report (`MemberUtil#onSuccess`) makes it `UP` and resets the count.
//! - A report *received* from a peer (`NacosClusterController#report` → `ServerMemberManager#update`
//!   → `MemberUtil#copy`) makes it `UP` too, but `copy` does not copy `failAccessCnt`: the count
//!   stays, so the next failed report may take the peer straight to `DOWN`.
//!
//! `DistroMapper` (`distro.rs`) reads this view: each member hashes clients over the members it
//! itself sees `UP` or `SUSPICIOUS`.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// `nacos.core.member.fail-access-cnt`'s default (`MemberUtil.DEFAULT_MEMBER_FAIL_ACCESS_CNT`).
pub const MAX_FAIL_ACCESS_CNT: u32 = 3;

/// `NodeState` as a peer can be seen. (`STARTING` and `ISOLATION` exist too; the report task
/// never sets them.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeState {
    Up,
    Suspicious,
    Down,
}

impl NodeState {
    /// As Nacos spells it (and a scenario writes it).
    pub fn word(self) -> &'static str {
        match self {
            NodeState::Up => "UP",
            NodeState::Suspicious => "SUSPICIOUS",
            NodeState::Down => "DOWN",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "UP" => NodeState::Up,
            "SUSPICIOUS" => NodeState::Suspicious,
            "DOWN" => NodeState::Down,
            _ => return None,
        })
    }

    /// Whether Distro counts it (`DistroMapper#onEvent`: `UP` or `SUSPICIOUS`); see
    /// [`super::DistroMapper`].
    pub fn is_healthy(self) -> bool {
        matches!(self, NodeState::Up | NodeState::Suspicious)
    }
}

impl fmt::Display for NodeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// One peer as this member sees it (`Member.state`, `Member.failAccessCnt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub state: NodeState,
    pub fail_access_cnt: u32,
}

/// What one event did to a peer: its state before and after, and the count after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub peer: Arc<str>,
    pub from: NodeState,
    pub to: NodeState,
    pub fail_access_cnt: u32,
}

impl Seen {
    pub fn changed(&self) -> bool {
        self.from != self.to
    }
}

#[derive(Clone, Debug)]
pub struct MemberView {
    me: Arc<str>,
    /// `serverList` without self. Nacos keys it by `ip:port` in a `ConcurrentSkipListMap`, so
    /// `allMembersWithoutSelf` is in address order; the sim's members are named, and name order
    /// stands in for address order.
    peers: BTreeMap<Arc<str>, Peer>,
    /// `MemberInfoReportTask.cursor`, 0 at start.
    cursor: usize,
    /// Bumped on every state change, for the expectation checker.
    revision: u64,
}

impl MemberView {
    /// `me` and the other members of its cluster (self is left out if listed).
    pub fn new(me: &str, members: impl IntoIterator<Item = Arc<str>>) -> Self {
        let up = Peer { state: NodeState::Up, fail_access_cnt: 0 };
        let peers = members.into_iter().filter(|m| **m != *me).map(|m| (m, up)).collect();
        MemberView { me: Arc::from(me), peers, cursor: 0, revision: 0 }
    }

    pub fn me(&self) -> &Arc<str> {
        &self.me
    }

    pub fn peer(&self, name: &str) -> Option<Peer> {
        self.peers.get(name).copied()
    }

    pub fn peers(&self) -> impl Iterator<Item = (&Arc<str>, &Peer)> {
        self.peers.iter()
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// `MemberInfoReportTask#executeBody`: the peer this run reports to, or none in a cluster of
    /// one (`if (members.isEmpty()) return;`). The cursor is advanced *before* it is used
    /// (`cursor = (cursor + 1) % members.size()`), so the first report goes to the second peer in
    /// address order, not the first.
    pub fn next_target(&mut self) -> Option<Arc<str>> {
        if self.peers.is_empty() {
            return None;
        }
        self.cursor = (self.cursor + 1) % self.peers.len();
        self.peers.keys().nth(self.cursor).cloned()
    }

    /// `MemberUtil#onSuccess`: `UP`, `failAccessCnt` 0.
    pub fn on_success(&mut self, peer: &str) -> Option<Seen> {
        self.apply(peer, |p| {
            p.state = NodeState::Up;
            p.fail_access_cnt = 0;
        })
    }

    /// `MemberUtil#onFail`: `SUSPICIOUS` and one more failure; `DOWN` when
    /// `failAccessCnt > maxFailAccessCnt` or the error message contains "Connection refused"
    /// (`refused`).
    pub fn on_fail(&mut self, peer: &str, refused: bool) -> Option<Seen> {
        self.apply(peer, |p| {
            p.state = NodeState::Suspicious;
            p.fail_access_cnt += 1;
            if p.fail_access_cnt > MAX_FAIL_ACCESS_CNT || refused {
                p.state = NodeState::Down;
            }
        })
    }

    /// A report received from `peer` (`NacosClusterController#report` sets the reported member
    /// `UP`; `MemberUtil#copy` copies the state but not `failAccessCnt`). `None` if `peer` is not a
    /// member here (`ServerMemberManager#update` returns false and changes nothing).
    pub fn on_report_from(&mut self, peer: &str) -> Option<Seen> {
        self.apply(peer, |p| p.state = NodeState::Up)
    }

    fn apply(&mut self, peer: &str, f: impl FnOnce(&mut Peer)) -> Option<Seen> {
        let (name, p) = self.peers.iter_mut().find(|(n, _)| ***n == *peer)?;
        let from = p.state;
        f(p);
        let seen = Seen { peer: name.clone(), from, to: p.state, fail_access_cnt: p.fail_access_cnt };
        if seen.changed() {
            self.revision += 1;
        }
        Some(seen)
    }
}
