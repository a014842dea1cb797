//! A producer or consumer's route cache (`MQClientInstance`), pure.
//!
//! The client reads every route from one chosen name server (`NettyRemotingClient` keeps
//! `namesrvAddrChoosed` and moves round-robin only when that channel fails), refreshes each topic
//! every `pollNameServerInterval` (30 s), and — the reason clients route to dead brokers for so
//! long — keeps its old route when the answer is `TOPIC_NOT_EXIST`.

use crate::rocketmq::types::{perm, BrokerAddrs, TopicRouteData, MASTER_ID};
use crate::sim::mutation::Mutation;
use crate::sim::name::Name;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::rc::Rc;

/// What a route answer did to the client's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteUpdate {
    /// The route differs from the cached one and replaced it (`topicRouteDataChanged`).
    Changed,
    /// Same as before.
    Unchanged,
    /// `TOPIC_NOT_EXIST`: the exception is logged and the old route kept (PRs #1681/#1685/#1686
    /// proposed dropping it; none was merged).
    NotExistKeptOld,
    /// `TOPIC_NOT_EXIST` and nothing cached.
    NotExist,
}

/// `NettyRemotingClient`'s choice of name server for `invokeSync(null, ...)`
/// (`getAndCreateNameserverChannelAsync`): it keeps `namesrvAddrChoosed` while that channel is
/// OK (open), and otherwise moves `namesrvIndex` on by one and takes the next in the list. A
/// client therefore reads everything from one name server until its channel to it fails or
/// closes — a timed-out request closes it (`clientCloseSocketIfTimeout`).
#[derive(Clone, Debug)]
pub struct NamesrvChooser {
    count: usize,
    /// `namesrvIndex`: starts at a random value, advanced on every re-choice.
    index: usize,
    chosen: Option<usize>,
}

impl NamesrvChooser {
    /// `start_index` is drawn from the run's RNG (Java: `random.nextInt(999)`).
    pub fn new(count: usize, start_index: usize) -> Self {
        NamesrvChooser { count, index: start_index, chosen: None }
    }

    /// The name server to ask now; `chosen_ok` says whether the chosen one's channel is open.
    pub fn choose(&mut self, chosen_ok: bool) -> usize {
        match self.chosen {
            Some(i) if chosen_ok => i,
            _ => {
                self.index = self.index.wrapping_add(1);
                let i = self.index % self.count.max(1);
                self.chosen = Some(i);
                i
            }
        }
    }

    pub fn chosen(&self) -> Option<usize> {
        self.chosen
    }
}

pub struct RouteClientCore {
    namesrvs: Vec<String>,
    /// The name server the client asked last (`namesrvAddrChoosed`), set by its remoting client.
    current: Option<usize>,
    routes: BTreeMap<String, Rc<TopicRouteData>>,
    /// `brokerAddrTable`: each broker name's addresses by id, as the last changed route that
    /// listed the name gave them. A broker that leaves every route keeps its entry until
    /// [`Self::clean_offline_broker`] runs, so a send can still reach it meanwhile.
    /// A send looks it up at every attempt, by the interned name in its `MessageQueue`: hashed
    /// by the name's stored hash, never listed, so no order is kept.
    broker_addrs: FxHashMap<Name, BrokerAddrs>,
    /// The route revision the last clean saw: with no route changed since, it has nothing to
    /// remove (entries come only with changed routes), and a client of a hundred big topics
    /// would otherwise gather every address of every route every 30 s for nothing.
    cleaned_at: Option<u64>,
    /// Whether `broker_addrs` is kept at all: only producers read it (see
    /// [`Self::keep_broker_addrs`]).
    keeps_addrs: bool,
    revision: u64,
    /// Test-only: the planted bug, if any ([`Self::plant`]); `None` in every real run.
    planted: Option<Mutation>,
}

impl RouteClientCore {
    pub fn new(namesrvs: Vec<String>) -> Self {
        RouteClientCore {
            namesrvs,
            current: None,
            routes: BTreeMap::new(),
            broker_addrs: FxHashMap::default(),
            cleaned_at: None,
            keeps_addrs: false,
            revision: 0,
            planted: None,
        }
    }

    /// Keeps `brokerAddrTable` from now on. Java keeps it in every client, but in the model only
    /// a producer's send reads it (the consumers and heartbeats that also do are not modelled),
    /// and the route client runs `cleanOfflineBroker` only for a client with producers. Without
    /// one, updating it cost every changed route a map search per group: 4% of the RocketMQ
    /// bench, whose clients hold ten routes of five hundred groups and never send.
    pub fn keep_broker_addrs(&mut self) {
        self.keeps_addrs = true;
    }

    /// Test-only: plants `mutation` where it touches the route cache
    /// (`RouteChangeIgnoresBrokers`; any other changes nothing here). Not reachable from
    /// scenario files.
    pub(crate) fn plant(&mut self, mutation: Mutation) {
        self.planted = Some(mutation);
    }

    /// The client's remoting client chose name server `i` for its route queries.
    pub fn set_current(&mut self, i: usize) {
        self.current = Some(i);
    }

    /// The name server the client currently reads from, if it has chosen one.
    pub fn current_namesrv(&self) -> Option<&str> {
        self.current.map(|i| self.namesrvs[i].as_str())
    }

    /// The topics it holds a route for.
    pub fn topics(&self) -> impl Iterator<Item = &str> {
        self.routes.keys().map(String::as_str)
    }

    /// `updateTopicRouteInfoFromNameServer(topic)` with the answer (`None` = TOPIC_NOT_EXIST).
    pub fn on_route(&mut self, topic: &str, route: Option<Rc<TopicRouteData>>) -> RouteUpdate {
        match route {
            None if self.routes.contains_key(topic) => RouteUpdate::NotExistKeptOld,
            None => RouteUpdate::NotExist,
            Some(new) => {
                // The same snapshot (the usual case) is unchanged without comparing contents.
                // (The planted bug compares the queue datas only.)
                let queues_only = self.planted == Some(Mutation::RouteChangeIgnoresBrokers);
                let same = |old: &TopicRouteData| match queues_only {
                    true => old.queue_datas == new.queue_datas,
                    false => *old == *new,
                };
                if self.routes.get(topic).is_some_and(|old| Rc::ptr_eq(old, &new) || same(old)) {
                    return RouteUpdate::Unchanged;
                }
                self.put_broker_addrs(&new);
                self.routes.insert(topic.to_string(), new);
                self.revision += 1;
                RouteUpdate::Changed
            }
        }
    }

    pub fn route(&self, topic: &str) -> Option<&TopicRouteData> {
        self.routes.get(topic).map(|r| &**r)
    }

    /// The cached route as shared: a new `Rc` exactly when the route changed, so a reader can
    /// tell by pointer whether what it derived from the route is still current.
    pub fn route_shared(&self, topic: &str) -> Option<&Rc<TopicRouteData>> {
        self.routes.get(topic)
    }

    /// `if (changed)` in `updateTopicRouteInfoFromNameServer`: every BrokerData's address map
    /// replaces its name's entry in `brokerAddrTable` (when the table is kept at all). Written in
    /// place, and only where it differs: a route changes when one group of hundreds does, and
    /// copying every group's map costs a map node each.
    fn put_broker_addrs(&mut self, route: &TopicRouteData) {
        if !self.keeps_addrs {
            return;
        }
        for bd in &route.broker_datas {
            match self.broker_addrs.get_mut(&bd.broker_name) {
                Some(addrs) if *addrs == bd.broker_addrs => {}
                Some(addrs) => addrs.clone_from(&bd.broker_addrs),
                None => {
                    self.broker_addrs.insert(bd.broker_name, bd.broker_addrs.clone());
                }
            }
        }
    }

    /// `findBrokerAddressInPublish(brokerName)`: the master's address in `brokerAddrTable`.
    pub fn find_broker_address_in_publish(&self, broker_name: impl Into<Name>) -> Option<Name> {
        self.broker_addrs.get(&broker_name.into())?.get(&MASTER_ID).copied()
    }

    /// `MQClientInstance#cleanOfflineBroker`, which the client runs 1 s after it starts and then
    /// every `heartbeatBrokerInterval` (30 s), before its heartbeats: every address that no
    /// cached route lists (under any name or id, `isBrokerAddrExistInTopicRouteTable`) leaves
    /// the table, and a name left with none goes too.
    pub fn clean_offline_broker(&mut self) {
        if self.cleaned_at.replace(self.revision) == Some(self.revision) {
            return;
        }
        // Only asked whether an address is listed: hashed by the name's stored hash, no order.
        let listed: HashSet<Name, rustc_hash::FxBuildHasher> = self
            .routes
            .values()
            .flat_map(|r| r.broker_datas.iter().flat_map(|bd| bd.broker_addrs.values().copied()))
            .collect();
        self.broker_addrs.retain(|_, addrs| {
            addrs.retain(|_, addr| listed.contains(addr));
            !addrs.is_empty()
        });
    }

    /// Bumped whenever a cached route changes.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The producer's queues (`topicRouteData2TopicPublishInfo`): `writeQueueNums` queues for
    /// every writable QueueData whose group has a master (id 0) in the route. Groups without a
    /// master, or with a wiped write perm, vanish from producers at the next poll.
    pub fn publish_queues(&self, topic: &str) -> BTreeMap<String, u32> {
        let Some(route) = self.routes.get(topic) else { return BTreeMap::new() };
        // The groups with a master, looked up once each (a big topic has hundreds of groups).
        let mastered: BTreeSet<&str> = route
            .broker_datas
            .iter()
            .filter(|b| b.broker_addrs.contains_key(&MASTER_ID))
            .map(|b| b.broker_name.as_str())
            .collect();
        route
            .queue_datas
            .iter()
            .filter(|q| perm::is_writeable(q.perm) && mastered.contains(q.broker_name.as_str()))
            .map(|q| (q.broker_name.to_string(), q.write_queue_nums))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocketmq::types::{BrokerData, QueueData};

    fn route(broker: &str, ids: &[u64], perm: u32) -> TopicRouteData {
        let mut bd = BrokerData::new("c", broker);
        for &id in ids {
            bd.broker_addrs.insert(id, format!("10.0.0.{id}:10911").into());
        }
        let qd =
            QueueData { broker_name: broker.into(), read_queue_nums: 4, write_queue_nums: 4, perm, topic_sys_flag: 0 };
        TopicRouteData { queue_datas: vec![qd.into()], broker_datas: vec![bd.into()], ..Default::default() }
    }

    #[test]
    fn topic_not_exist_keeps_the_stale_route() {
        // RocketMQ MQClientInstance#updateTopicRouteInfoFromNameServer: MQClientException caught
        let mut c = RouteClientCore::new(vec!["ns1".into()]);
        assert_eq!(c.on_route("T", Some(Rc::new(route("a", &[0], 6)))), RouteUpdate::Changed);
        assert_eq!(c.on_route("T", None), RouteUpdate::NotExistKeptOld);
        assert!(c.route("T").is_some());
        assert_eq!(c.revision(), 1);
    }

    #[test]
    fn producers_skip_groups_without_a_master_or_without_write_perm() {
        // RocketMQ MQClientInstance#topicRouteData2TopicPublishInfo
        let mut c = RouteClientCore::new(vec!["ns1".into()]);
        c.on_route("T", Some(Rc::new(route("a", &[1], 6))));
        assert!(c.publish_queues("T").is_empty(), "slave only: no id 0");
        c.on_route("T", Some(Rc::new(route("a", &[0, 1], 4))));
        assert!(c.publish_queues("T").is_empty(), "read-only");
        c.on_route("T", Some(Rc::new(route("a", &[0, 1], 6))));
        assert_eq!(c.publish_queues("T"), BTreeMap::from([("a".to_string(), 4)]));
    }

    #[test]
    fn a_broker_that_left_every_route_keeps_its_address_until_the_offline_clean() {
        // RocketMQ MQClientInstance#updateTopicRouteInfoFromNameServer puts each BrokerData's
        // addresses when a route changed; only cleanOfflineBroker removes an address that no
        // cached route lists.
        let mut c = RouteClientCore::new(vec!["ns1".into()]);
        c.keep_broker_addrs();
        let both = TopicRouteData {
            broker_datas: [route("a", &[0], 6), route("b", &[1], 6)].into_iter().flat_map(|r| r.broker_datas).collect(),
            ..route("a", &[0], 6)
        };
        c.on_route("T", Some(Rc::new(both)));
        assert_eq!(c.find_broker_address_in_publish("a").map(|a| a.to_string()), Some("10.0.0.0:10911".into()));
        assert_eq!(c.find_broker_address_in_publish("b"), None, "a slave's address is not the master's");
        // b leaves the route: its entry stays until the clean; a, still listed, stays after it.
        c.on_route("T", Some(Rc::new(route("a", &[0], 6))));
        assert_eq!(c.broker_addrs.len(), 2, "b's entry outlives the route change");
        c.clean_offline_broker();
        assert!(c.find_broker_address_in_publish("a").is_some());
        assert_eq!(c.broker_addrs.len(), 1, "b's only address is in no route");
        // A master that moves is found at its new address from the change on.
        let mut moved = route("a", &[1], 6);
        moved.broker_datas = vec![BrokerData {
            broker_addrs: BrokerAddrs::from([(MASTER_ID, Name::new("10.0.0.9:10911"))]),
            ..(*moved.broker_datas[0]).clone()
        }
        .into()];
        c.on_route("T", Some(Rc::new(moved)));
        assert_eq!(c.find_broker_address_in_publish("a").map(|a| a.to_string()), Some("10.0.0.9:10911".into()));
    }

    #[test]
    fn the_client_sticks_to_one_name_server_until_its_channel_is_not_ok() {
        // RocketMQ NettyRemotingClient#getAndCreateNameserverChannelAsync: cw.isOK() keeps it,
        // otherwise namesrvIndex.incrementAndGet() % size
        let mut c = NamesrvChooser::new(3, 998);
        assert_eq!(c.choose(false), 0, "999 % 3");
        assert_eq!(c.choose(true), 0);
        assert_eq!(c.choose(false), 1, "closed: the next one");
        assert_eq!(c.choose(false), 2);
        assert_eq!(c.choose(false), 0);
    }
}
