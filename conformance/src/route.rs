//! A route as both sides can show it: the model's `TopicRouteData` and the real server's JSON
//! answer to GET_ROUTEINFO_BY_TOPIC, reduced to the same sorted text so they compare with `==`.
//!
//! Kept: each group's addresses by id, and each group's queue counts and perm — what a client
//! routes by. Left out: the filter-server table and the order/mapping extras, which no
//! scenario here sets.

use routesim::rocketmq::types::TopicRouteData;
use routesim::sim::name::Name;
use std::collections::BTreeMap;
use std::fmt;

/// One broker group's part of a route: its addresses by id, and its queues `(read, write,
/// perm)` if the topic has QueueData for it.
pub type Group = (BTreeMap<u64, String>, Option<(u32, u32, u32)>);

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// TOPIC_NOT_EXIST (17): no live group serves the topic.
    Absent,
    /// The name server did not answer (its process is down).
    Down,
    /// brokerName -> its part.
    Present(BTreeMap<String, Group>),
    /// The answer to GET_BROKER_CLUSTER_INFO: `cluster/brokerName` -> the group's addresses by
    /// id, for every name in `clusterAddrTable` (a name without a `brokerAddrTable` entry has
    /// no addresses; one in no cluster is under `?`).
    Cluster(BTreeMap<String, BTreeMap<u64, String>>),
}

/// The pseudo-topic under which a name server's cluster info is polled and compared.
pub const CLUSTER_INFO: &str = "(cluster info)";

impl Route {
    pub fn from_model(route: Option<&TopicRouteData>) -> Route {
        let Some(route) = route else { return Route::Absent };
        let mut groups: BTreeMap<String, Group> = BTreeMap::new();
        for b in &route.broker_datas {
            let addrs = b.broker_addrs.iter().map(|(&id, addr)| (id, addr.to_string())).collect();
            groups.entry(b.broker_name.to_string()).or_default().0 = addrs;
        }
        for q in &route.queue_datas {
            groups.entry(q.broker_name.to_string()).or_default().1 =
                Some((q.read_queue_nums, q.write_queue_nums, q.perm));
        }
        Route::Present(groups)
    }

    /// `RouteInfoManager#getAllClusterInfo` of the model's table.
    pub fn cluster_from_model(
        clusters: &BTreeMap<Name, routesim::sim::keyed::KeyedSet<Name>>,
        groups: impl Iterator<Item = (String, BTreeMap<u64, String>)>,
    ) -> Route {
        let clusters = clusters.iter().map(|(c, n)| (c.to_string(), n.iter().map(|name| name.to_string()).collect()));
        Route::Cluster(cluster_view(clusters, groups))
    }

    /// The body of a GET_BROKER_CLUSTER_INFO answer (`ClusterInfo`: `brokerAddrTable`,
    /// `clusterAddrTable`), with fastjson's bare numeric keys read as in [`Route::from_json`].
    pub fn cluster_from_json(body: &[u8]) -> Result<Route, String> {
        let v = parse(body)?;
        let clusters = v["clusterAddrTable"].as_object().into_iter().flatten().map(|(c, names)| {
            let names = names.as_array().into_iter().flatten().filter_map(|n| Some(n.as_str()?.to_string()));
            (c.clone(), names.collect())
        });
        let groups = v["brokerAddrTable"].as_object().into_iter().flatten().map(|(name, b)| (name.clone(), addrs(b)));
        Ok(Route::Cluster(cluster_view(clusters, groups)))
    }

    /// The body of a SUCCESS answer. Java's fastjson writes `brokerAddrs` with bare numeric
    /// keys (`{0:"10.0.0.1:10911"}`), which is not JSON; both spellings are read.
    pub fn from_json(body: &[u8]) -> Result<Route, String> {
        let v = parse(body)?;
        let mut groups: BTreeMap<String, Group> = BTreeMap::new();
        for b in v["brokerDatas"].as_array().into_iter().flatten() {
            let name = b["brokerName"].as_str().unwrap_or_default().to_string();
            groups.entry(name).or_default().0 = addrs(b);
        }
        for q in v["queueDatas"].as_array().into_iter().flatten() {
            let name = q["brokerName"].as_str().unwrap_or_default().to_string();
            let n = |k: &str| q[k].as_u64().unwrap_or(0) as u32;
            groups.entry(name).or_default().1 = Some((n("readQueueNums"), n("writeQueueNums"), n("perm")));
        }
        Ok(Route::Present(groups))
    }
}

fn parse(body: &[u8]) -> Result<serde_json::Value, String> {
    let text = String::from_utf8_lossy(body);
    serde_json::from_str(&text)
        .or_else(|_| serde_json::from_str(&quote_numeric_keys(&text)))
        .map_err(|e| format!("answer is not JSON: {e}"))
}

/// A `BrokerData`'s `brokerAddrs`, by id.
fn addrs(b: &serde_json::Value) -> BTreeMap<u64, String> {
    let addrs = b["brokerAddrs"].as_object().into_iter().flatten();
    addrs.filter_map(|(id, a)| Some((id.parse().ok()?, a.as_str()?.to_string()))).collect()
}

/// Both sides' cluster info in one shape: `cluster/name` for each name a cluster lists, with
/// that group's addresses (none if `brokerAddrTable` lacks it); `?/name` for a group no cluster
/// lists.
fn cluster_view(
    clusters: impl Iterator<Item = (String, Vec<String>)>,
    groups: impl Iterator<Item = (String, BTreeMap<u64, String>)>,
) -> BTreeMap<String, BTreeMap<u64, String>> {
    let mut groups: BTreeMap<String, BTreeMap<u64, String>> = groups.collect();
    let mut out = BTreeMap::new();
    for (cluster, names) in clusters {
        for name in names {
            let addrs = groups.get(&name).cloned().unwrap_or_default();
            out.insert(format!("{cluster}/{name}"), addrs);
        }
    }
    let listed: Vec<String> = out.keys().filter_map(|k| k.split_once('/').map(|(_, n)| n.to_string())).collect();
    groups.retain(|name, _| !listed.contains(name));
    out.extend(groups.into_iter().map(|(name, addrs)| (format!("?/{name}"), addrs)));
    out
}

/// `{0:"a"}` → `{"0":"a"}`: quotes a run of digits that follows `{` or `,` and precedes `:`.
fn quote_numeric_keys(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < b.len() {
        out.push(b[i] as char);
        if b[i] == b'{' || b[i] == b',' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > start && j < b.len() && b[j] == b':' {
                out.push('"');
                out.push_str(&s[start..j]);
                out.push('"');
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn perm(p: u32) -> &'static str {
    match p & 6 {
        6 => "rw",
        4 => "r",
        2 => "w",
        _ => "-",
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Route::Absent => write!(f, "absent"),
            Route::Down => write!(f, "down"),
            Route::Present(groups) => {
                let parts: Vec<String> = groups
                    .iter()
                    .map(|(name, (addrs, q))| {
                        let ids: Vec<String> = addrs.keys().map(u64::to_string).collect();
                        match q {
                            Some((r, w, p)) => format!("{name}[{}] {r}r/{w}w {}", ids.join(","), perm(*p)),
                            None => format!("{name}[{}] no queues", ids.join(",")),
                        }
                    })
                    .collect();
                write!(f, "{}", parts.join("; "))
            }
            Route::Cluster(groups) if groups.is_empty() => write!(f, "no clusters"),
            Route::Cluster(groups) => {
                let parts: Vec<String> = groups
                    .iter()
                    .map(|(name, addrs)| {
                        let ids: Vec<String> = addrs.keys().map(u64::to_string).collect();
                        format!("{name}[{}]", ids.join(","))
                    })
                    .collect();
                write!(f, "{}", parts.join("; "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fastjson_numeric_keys_are_read_like_quoted_ones() {
        let java = br#"{"brokerDatas":[{"brokerName":"a","brokerAddrs":{0:"10.0.0.1:10911"}}],"queueDatas":[{"brokerName":"a","readQueueNums":4,"writeQueueNums":4,"perm":6}]}"#;
        let json = br#"{"brokerDatas":[{"brokerName":"a","brokerAddrs":{"0":"10.0.0.1:10911"}}],"queueDatas":[{"brokerName":"a","readQueueNums":4,"writeQueueNums":4,"perm":6}]}"#;
        assert_eq!(Route::from_json(java).unwrap(), Route::from_json(json).unwrap());
        assert_eq!(Route::from_json(json).unwrap().to_string(), "a[0] 4r/4w rw");
    }

    #[test]
    fn cluster_info_lists_each_group_under_its_cluster_and_strays_under_a_question_mark() {
        let java = br#"{"brokerAddrTable":{"a":{"cluster":"c1","brokerName":"a","brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"}},"s":{"cluster":"c1","brokerName":"s","brokerAddrs":{}}},"clusterAddrTable":{"c1":["a","b"]}}"#;
        let r = Route::cluster_from_json(java).unwrap();
        assert_eq!(r.to_string(), "?/s[]; c1/a[0,1]; c1/b[]");
        let clusters = BTreeMap::from([(Name::new("c1"), ["a", "b"].into_iter().map(Name::new).collect())]);
        let groups = [
            ("a".to_string(), BTreeMap::from([(0, "10.0.0.1:10911".to_string()), (1, "10.0.0.2:10911".to_string())])),
            ("s".to_string(), BTreeMap::new()),
        ];
        assert_eq!(Route::cluster_from_model(&clusters, groups.into_iter()), r);
        assert_eq!(
            Route::cluster_from_json(br#"{"brokerAddrTable":{},"clusterAddrTable":{}}"#).unwrap().to_string(),
            "no clusters"
        );
    }
}
