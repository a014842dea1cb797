//! The servers a remoting client talks to, as one shared list.

use crate::sim::ids::NodeId;
use std::sync::Arc;

/// Server names (for the notes that list them) and their nodes, in the same order.
///
/// Shared rather than owned: the director hands every client with the same list (the thousand
/// brokers of a cluster, all registering with the same name servers) clones of one `Servers`.
/// A broker reads the nodes at every send and counts a reference to the names in every
/// registration note; with lists of its own, those were lines gone cold in the 30 s since its
/// last round (about one second-level miss a round, by cachegrind). Shared, they stay cached.
#[derive(Clone, Debug)]
pub struct Servers {
    names: Arc<[String]>,
    nodes: Arc<[NodeId]>,
}

impl Servers {
    pub fn new(servers: impl IntoIterator<Item = (String, NodeId)>) -> Self {
        let (names, nodes): (Vec<String>, Vec<NodeId>) = servers.into_iter().unzip();
        Servers { names: names.into(), nodes: nodes.into() }
    }

    pub fn names(&self) -> &Arc<[String]> {
        &self.names
    }

    pub fn node(&self, i: usize) -> NodeId {
        self.nodes[i]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}
