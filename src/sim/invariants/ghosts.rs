//! Groups a name server keeps with no address: what a refused registration leaves behind.
//!
//! `RouteInfoManager#registerBroker` adds the broker's name to its cluster in `clusterAddrTable`
//! and creates its group's `BrokerData` in `brokerAddrTable` (steps 1–3) before the two checks
//! that can refuse the registration: the #4522 guard against a one-topic registration from a
//! broker id the group does not have yet (a topic change's `registerIncrementBrokerData`
//! reaching a name server that restarted since the broker's last full registration), and the
//! state-version conflict. A refused registration makes no live entry, so neither the scanner
//! nor a closed channel (`onChannelDestroy` looks the channel up in `brokerLiveTable` only) ever
//! unregisters anything for it; and a group is only removed when an unregistration takes its
//! last address out. A group that never got an address therefore
//! stays, empty, with its name in its cluster, until the name server restarts, even after its
//! broker is long dead. (If the broker lives, its next periodic registration fills it.)
//!
//! `convergence` derives what the tables hold from the running brokers, which have no such group,
//! so the comparison leaves out a group that is empty at the end, at a name server that refused a
//! registration while that group was empty and accepted none of it since, unless a running
//! broker belongs to it.

use super::derive::Groups;
use crate::sim::world::World;
use std::collections::{BTreeMap, BTreeSet};

/// Name server → the groups it held empty right after refusing a registration, since it last
/// started.
#[derive(Default)]
pub struct Ghosts(BTreeMap<String, BTreeSet<String>>);

impl Ghosts {
    /// Name server `ns` refused a registration: note the groups it now holds with no address.
    pub fn refused(&mut self, ns: &str, world: &World) {
        let Some(table) = world.namesrv(ns) else { return };
        let table = table.borrow();
        let empty = table.broker_addr_table().iter().filter(|(_, g)| g.broker_addrs.is_empty());
        self.0.entry(ns.to_string()).or_default().extend(empty.map(|(name, _)| name.to_string()));
    }

    /// `ns` accepted a registration of `group`: the group has an address now, and a later
    /// emptying (an unregistration removes an emptied group in Java) is no leftover.
    pub fn filled(&mut self, ns: &str, group: &str) {
        if let Some(ghosts) = self.0.get_mut(ns) {
            ghosts.remove(group);
        }
    }

    /// `ns` started afresh, with empty tables.
    pub fn restarted(&mut self, ns: &str) {
        self.0.remove(ns);
    }

    /// Takes `ns`'s empty leftovers out of its actual `groups` and `clusters`, unless the
    /// derived tables (`want`) have the group; a cluster left with no name goes too.
    pub fn leave_out(
        &self,
        ns: &str,
        want: &Groups,
        groups: &mut Groups,
        clusters: &mut BTreeMap<String, BTreeSet<String>>,
    ) {
        let Some(ghosts) = self.0.get(ns) else { return };
        let gone: Vec<String> = groups
            .iter()
            .filter(|(name, addrs)| addrs.is_empty() && ghosts.contains(*name) && !want.contains_key(*name))
            .map(|(name, _)| name.clone())
            .collect();
        for name in &gone {
            groups.remove(name);
            for names in clusters.values_mut() {
                names.remove(name);
            }
        }
        if !gone.is_empty() {
            clusters.retain(|_, names| !names.is_empty());
        }
    }
}
