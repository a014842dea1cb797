//! Small copyable identities (and a process's run state) shared by the network and the models.
//!
//! Ids come from counters in creation order, never from addresses or hashes, so they are the
//! same on every run of the same scenario.

use serde::Serialize;
use std::fmt;

/// A simulated process (broker, name server, client, Nacos server or instance).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct NodeId(pub u32);

/// One TCP connection. RocketMQ's `BrokerHousekeepingService` finds a broker by the identity of
/// its Netty channel (`onChannelDestroy(Channel)`), so a reconnect must yield a new id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ChannelId(pub u64);

impl fmt::Display for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ch#{}", self.0)
    }
}

/// Every packet gets an id from a counter; replies and failure notices name the packet they
/// answer, which is how a sender matches them with its outstanding requests.
pub type MsgId = u64;

/// What a process is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcState {
    Running,
    /// SIGSTOP: its kernel still accepts connections and buffers input, but none of its code runs.
    Hung,
    /// Not running (killed, shut down, or its host is off).
    Down,
}
