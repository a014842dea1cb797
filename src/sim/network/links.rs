//! Link rules: latency, jitter and loss per direction, symmetric partitions, one-way blocks.
//!
//! A rule table in the style of turmoil's: the network asks `reachable(from, to)` and
//! `params(from, to)` for every packet; faults edit the table.

use crate::sim::clock::SimDuration;
use crate::sim::ids::NodeId;
use std::collections::{BTreeMap, BTreeSet};

/// How one direction of a link behaves when it is reachable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkParams {
    /// One-way base latency.
    pub latency: SimDuration,
    /// Extra latency drawn uniformly from `0..=jitter` per packet.
    pub jitter: SimDuration,
    /// Probability that a packet is lost.
    pub loss: f64,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams { latency: SimDuration::from_millis(1), jitter: SimDuration::ZERO, loss: 0.0 }
    }
}

/// A named cut: nodes in different groups cannot reach each other, in either direction.
#[derive(Clone, Debug, PartialEq)]
struct Partition {
    name: String,
    groups: Vec<BTreeSet<NodeId>>,
}

impl Partition {
    fn separates(&self, a: NodeId, b: NodeId) -> bool {
        let group_of = |n| self.groups.iter().position(|g| g.contains(&n));
        matches!((group_of(a), group_of(b)), (Some(x), Some(y)) if x != y)
    }
}

#[derive(Clone, Debug, Default)]
pub struct LinkRules {
    default: LinkParams,
    overrides: BTreeMap<(NodeId, NodeId), LinkParams>,
    partitions: Vec<Partition>,
    /// One-way blocks: (from, to, name of the fault that set it).
    blocks: Vec<(NodeId, NodeId, String)>,
}

impl LinkRules {
    pub fn new(default: LinkParams) -> Self {
        LinkRules { default, ..Default::default() }
    }

    /// Asked for every packet, like `reachable`, and like the RNG's `chance` and `up_to` that
    /// follow it there: each was a call of a few instructions until marked to inline always.
    /// Most runs override no link: that case answers without searching the (empty) tree, which
    /// was a call into `BTreeMap::get` and back on every request.
    #[inline(always)]
    pub fn params(&self, from: NodeId, to: NodeId) -> LinkParams {
        if self.overrides.is_empty() {
            return self.default;
        }
        self.overrides.get(&(from, to)).copied().unwrap_or(self.default)
    }

    /// Changes one direction of a link; `edit` starts from its current parameters.
    pub fn set_params(&mut self, from: NodeId, to: NodeId, edit: impl FnOnce(&mut LinkParams)) {
        let mut p = self.params(from, to);
        edit(&mut p);
        self.overrides.insert((from, to), p);
    }

    /// Asked for every packet, and nearly every packet of a run crosses no cut at all: that
    /// case is answered inline, the search of the cuts is a call apart.
    #[inline]
    pub fn reachable(&self, from: NodeId, to: NodeId) -> bool {
        (self.partitions.is_empty() && self.blocks.is_empty()) || self.crosses_no_cut(from, to)
    }

    #[inline(never)]
    fn crosses_no_cut(&self, from: NodeId, to: NodeId) -> bool {
        !self.partitions.iter().any(|p| p.separates(from, to))
            && !self.blocks.iter().any(|(f, t, _)| *f == from && *t == to)
    }

    pub fn partition(&mut self, name: &str, groups: Vec<BTreeSet<NodeId>>) {
        self.partitions.push(Partition { name: name.to_string(), groups });
    }

    pub fn block(&mut self, name: &str, from: NodeId, to: NodeId) {
        self.blocks.push((from, to, name.to_string()));
    }

    /// Removes the partition or block set by the fault `name`; `None` heals every cut.
    /// Returns how many cuts were removed.
    pub fn heal(&mut self, name: Option<&str>) -> usize {
        let before = self.partitions.len() + self.blocks.len();
        match name {
            None => {
                self.partitions.clear();
                self.blocks.clear();
            }
            Some(n) => {
                self.partitions.retain(|p| p.name != n);
                self.blocks.retain(|(_, _, b)| b != n);
            }
        }
        before - self.partitions.len() - self.blocks.len()
    }

    /// True while any partition or block is in force.
    pub fn has_cuts(&self) -> bool {
        !self.partitions.is_empty() || !self.blocks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[u32]) -> BTreeSet<NodeId> {
        ids.iter().map(|&i| NodeId(i)).collect()
    }

    #[test]
    fn a_partition_cuts_both_directions_between_its_groups_only() {
        let mut r = LinkRules::default();
        r.partition("p", vec![set(&[1]), set(&[2, 3])]);
        assert!(!r.reachable(NodeId(1), NodeId(2)));
        assert!(!r.reachable(NodeId(3), NodeId(1)));
        assert!(r.reachable(NodeId(2), NodeId(3)), "same group");
        assert!(r.reachable(NodeId(1), NodeId(4)), "node outside every group");
    }

    #[test]
    fn a_block_cuts_one_direction() {
        let mut r = LinkRules::default();
        r.block("b", NodeId(1), NodeId(2));
        assert!(!r.reachable(NodeId(1), NodeId(2)));
        assert!(r.reachable(NodeId(2), NodeId(1)));
    }

    #[test]
    fn heal_by_name_keeps_other_cuts() {
        let mut r = LinkRules::default();
        r.block("b1", NodeId(1), NodeId(2));
        r.block("b2", NodeId(3), NodeId(4));
        assert_eq!(r.heal(Some("b1")), 1);
        assert!(r.reachable(NodeId(1), NodeId(2)));
        assert!(!r.reachable(NodeId(3), NodeId(4)));
        assert_eq!(r.heal(None), 1);
        assert!(!r.has_cuts());
    }

    #[test]
    fn overrides_are_per_direction() {
        let mut r = LinkRules::new(LinkParams::default());
        r.set_params(NodeId(1), NodeId(2), |p| p.loss = 0.5);
        assert_eq!(r.params(NodeId(1), NodeId(2)).loss, 0.5);
        assert_eq!(r.params(NodeId(2), NodeId(1)).loss, 0.0);
    }
}
