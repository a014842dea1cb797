//! The RocketMQ name-server checks: no entry expired while its broker was still heard from
//! (`NoFalseExpiry`), no silent entry kept past its bound (`BoundedExpiry`), and tables that
//! agree with one another (`ConsistentTables`).

use super::{Arrived, Horizon, Monitor};
use crate::rocketmq::types::BrokerAddrInfo;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::ids::ProcState;
use crate::sim::invariants::{Invariant, Violation};
use crate::sim::world::World;

impl Monitor {
    /// `NoFalseExpiry`: the scan may expire an entry only when nothing arrived from the broker
    /// for longer than the timeout its config gives it (whatever timeout the scan reports).
    pub(super) fn check_expiry(
        &mut self,
        now: SimTime,
        actor: &str,
        cluster: &str,
        addr: &str,
        reported: SimDuration,
    ) -> Option<Violation> {
        let ns = crate::sim::trace::process_of(actor).to_string();
        let (broker, timeout) = self.brokers_by_addr.get(&BrokerAddrInfo::new(cluster, addr))?.clone();
        let arrived = self.arrivals.get(&ns)?.get(&broker)?;
        // The scan runs on its own thread, the registration on a Netty worker: one arriving in
        // the very millisecond of the scan may be processed after it, in Java as here. So the
        // scan answers for the arrivals *before* its instant only.
        let last = if arrived.last == now { arrived.before? } else { arrived.last };
        if now.since(last) > timeout {
            return None;
        }
        let used = if reported == timeout { String::new() } else { format!(" (the scan used {reported})") };
        let detail = format!(
            "{ns} expired {broker} ({cluster}/{addr}) at {now}, but a registration or heartbeat from it arrived at {last}, {} ago, within its {timeout} timeout{used}",
            now.since(last),
        );
        self.violate(Invariant::NoFalseExpiry, now, detail)
    }

    pub(super) fn check_consistency(&mut self, now: SimTime, world: &World) -> Vec<Violation> {
        let mut out = Vec::new();
        for ns in self.namesrvs.keys().cloned().collect::<Vec<_>>() {
            let revision = world.namesrv_revision(&ns);
            if self.revisions.get(&ns) == Some(&revision) {
                continue;
            }
            self.revisions.insert(ns.clone(), revision);
            let Some(table) = world.namesrv(&ns) else { continue };
            let problems = table.borrow().check_consistency();
            if !problems.is_empty() {
                let detail = format!("{ns}: {}", problems.join("; "));
                out.extend(self.violate(Invariant::ConsistentTables, now, detail));
            }
        }
        out
    }

    /// `BoundedExpiry` for RocketMQ name servers.
    pub(super) fn check_bounded_expiry(&mut self, now: SimTime, world: &World) -> Vec<Violation> {
        if !self.enabled.contains(&Invariant::BoundedExpiry) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (ns, facts) in &self.namesrvs {
            if self.state.get(ns) != Some(&ProcState::Running) {
                continue;
            }
            let Some(table) = world.namesrv(ns) else { continue };
            let table = table.borrow();
            let started = self.ns_started.get(ns).copied().unwrap_or_default();
            let resumed = self.ns_resumed.get(ns).copied().unwrap_or_default();
            let Some(arrivals) = self.arrivals.get(ns) else { continue };
            let revision = world.namesrv_revision(ns);
            if self.horizons.get(ns).is_some_and(|h| h.revision == revision && now <= h.until) {
                continue;
            }
            let mut until = SimTime(u64::MAX);
            for (key, live) in table.broker_live_table() {
                let Some(&(ref broker, timeout)) = self.brokers_by_addr.get(key) else { continue };
                let Some(&Arrived { last, .. }) = arrivals.get(broker) else { continue };
                let first_scan = started + facts.scan_initial_delay;
                let bound = (last + timeout).max(first_scan).max(resumed) + facts.scan_interval + facts.batch_delay;
                if now <= bound {
                    until = until.min(bound);
                    continue;
                }
                // Orphans (an address no group lists) are never removed by RocketMQ (§2.4). Asked
                // only past the bound: it walks every group, and this check runs every instant.
                let listed = table
                    .broker_addr_table()
                    .unordered()
                    .any(|(_, g)| g.broker_addrs.values().any(|a| a == &key.broker_addr));
                if listed {
                    let detail = format!(
                        "{ns} still holds {broker} ({key}) at {now}: nothing arrived from it since {last}, so it should be gone by {bound} (timeout {timeout} + scan {} + batch delay {}; the table holds {})",
                        facts.scan_interval, facts.batch_delay, live.heartbeat_timeout_millis
                    );
                    out.push((Invariant::BoundedExpiry, detail));
                    break;
                }
            }
            if out.is_empty() {
                self.horizons.insert(ns.clone(), Horizon { revision, until });
            }
        }
        out.into_iter().filter_map(|(i, d)| self.violate(i, now, d)).collect()
    }
}
