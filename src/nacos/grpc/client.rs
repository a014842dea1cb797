//! The 2.x client's connection rules (`RpcClient`, `NamingServerListManager`), as small pure
//! pieces the client actor combines: which server comes next, how long the reconnect loop
//! sleeps, when the keep-alive thread health-checks, and how many tries a health check gets.

use super::{CONNECTION_KEEP_ALIVE, HEALTH_CHECK_JITTER_MS, HEALTH_CHECK_RETRY_TIMES};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;

/// `NamingServerListManager`: `currentIndex` starts at a random index, and `genNextServer` is
/// `currentIndex.incrementAndGet() % size` — so the first server tried is the one *after* the
/// drawn index, and each failure moves one on, round the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerList {
    len: usize,
    index: usize,
}

impl ServerList {
    /// `drawn` is `new Random().nextInt(size)` (the actor draws it from the run's seeded RNG).
    pub fn new(len: usize, drawn: usize) -> Self {
        ServerList { len, index: drawn }
    }

    /// `genNextServer`.
    pub fn next_server(&mut self) -> usize {
        self.index += 1;
        self.index % self.len
    }
}

/// `RpcClient#reconnect`'s loop state: `reConnectTimes` and `retryTurns`. After every failed
/// attempt the loop sleeps `min(retryTurns + 1, 50) * 100` ms (the client is not RUNNING while
/// it reconnects), and `retryTurns` grows once per full round of the server list — so a client
/// with one server waits 100, 200, 300 ... ms, up to 5 s, between attempts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reconnect {
    times: u32,
    turns: u32,
}

impl Reconnect {
    /// One attempt failed: the sleep before the next.
    pub fn failed(&mut self, servers: usize) -> SimDuration {
        if self.times > 0 && self.times % servers.max(1) as u32 == 0 {
            self.turns = if self.turns == u32::MAX { 50 } else { self.turns + 1 };
        }
        self.times += 1;
        SimDuration::from_millis(u64::from((self.turns + 1).min(50)) * 100)
    }

    /// Attempts made so far.
    pub fn attempts(&self) -> u32 {
        self.times
    }
}

/// The keep-alive thread (`RpcClient#start`, the second `clientEventExecutor` task) waits on
/// `reconnectionSignal.poll(keepAlive)`; when the poll times out it health-checks only if
/// `now - lastActiveTimeStamp >= keepAlive`. `lastActiveTimeStamp` moves on every answered
/// request and every request the server sends (`handleServerRequest`), so a busy connection is
/// never probed.
pub fn keep_alive_due(now: SimTime, last_active: SimTime) -> bool {
    now.since(last_active) >= CONNECTION_KEEP_ALIVE
}

/// One `RpcClient#healthCheck` call: `reTryTimes = healthCheckRetryTimes` (3), `while
/// (reTryTimes >= 0) { reTryTimes--; ... }` — four tries, each with its own 3 s timeout, the
/// first after a random sleep below 500 ms (`if (reTryTimes > 1)`, true only on the first pass).
/// An *answer* ends the check either way: `return response != null && response.isSuccess()`,
/// so an error answer (the server no longer knows the connection) fails it without retrying.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthCheck {
    left: i64,
}

/// What a health check does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Send the next try (after this sleep).
    Try(SimDuration),
    /// Out of tries: the check failed.
    Failed,
}

impl HealthCheck {
    /// A new check; `jitter` is the drawn `random.nextInt(500)`. Returns the first try.
    pub fn start(jitter: u64) -> (Self, Next) {
        let mut c = HealthCheck { left: i64::from(HEALTH_CHECK_RETRY_TIMES) };
        let first = c.next(jitter);
        (c, first)
    }

    fn next(&mut self, jitter: u64) -> Next {
        if self.left < 0 {
            return Next::Failed;
        }
        self.left -= 1;
        let sleep = if self.left > 1 { jitter.min(HEALTH_CHECK_JITTER_MS - 1) } else { 0 };
        Next::Try(SimDuration::from_millis(sleep))
    }

    /// A try failed by an exception (timeout, closed channel): the next try, or failed.
    pub fn try_failed(&mut self) -> Next {
        self.next(0)
    }
}

/// What the `connection` subject reads: the server a client is RUNNING on, or none — before its
/// first connection, and while it reconnects. (Java's `currentConnection` still names the old
/// server during a reconnect, until a new connection is up; the client sends nothing on it then
/// but health checks, so "none" is what it can use.)
#[derive(Clone, Debug, Default)]
pub struct ConnView {
    server: Option<Name>,
    revision: u64,
}

impl ConnView {
    pub fn server(&self) -> Option<Name> {
        self.server
    }

    pub fn set(&mut self, server: Option<Name>) {
        if self.server != server {
            self.server = server;
            self.revision += 1;
        }
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }
}
