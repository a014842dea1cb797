//! A Nacos cluster's membership (`ServerMemberManager`): each member's view of the others, fed
//! by `MemberInfoReportTask`'s reports. Pure: the actor side is `actors::nacos_member`.

pub mod member;

#[cfg(test)]
mod member_tests;

pub use member::{MemberView, NodeState, Peer, Seen, MAX_FAIL_ACCESS_CNT};
