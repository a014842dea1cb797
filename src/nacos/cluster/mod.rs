//! A Nacos cluster's membership (`ServerMemberManager`): each member's view of the others, fed
//! by `MemberInfoReportTask`'s reports, the `DistroMapper` each member derives from its view, the
//! `DistroFilter`'s routing of 1.x HTTP requests (`filter`), and Distro's delay-task engine (`sync`).
//! Pure: the actor side is `actors::nacos_member`.

pub mod distro;
pub mod filter;
pub mod member;
pub mod sync;

#[cfg(test)]
mod distro_tests;
#[cfg(test)]
mod filter_tests;
#[cfg(test)]
mod member_tests;
#[cfg(test)]
mod sync_tests;

pub use distro::{distro_hash, java_string_hash, DistroMapper};
pub use member::{MemberView, NodeState, Peer, Seen, MAX_FAIL_ACCESS_CNT};
pub use sync::{DistroOp, DistroTasks};
