//! Claims on a name server's tables beyond routes: a live entry's fields (`live`), and the
//! topic-list queries (`topics`).

use super::Mismatch;
use crate::rocketmq::route_table::{RouteInfoManager, TopicQuery};
use crate::rocketmq::types::BrokerLiveInfo;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
use crate::sim::world::RegisterAnswer;
use std::collections::BTreeSet;

/// What a present live entry must hold; `None` fields are not checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveWant {
    /// `dataVersion.counter`: how many times the broker's topic config changed.
    pub data_version: Option<u64>,
    /// `lastUpdateTimestamp`: when the last registration or heartbeat was taken.
    pub last_update: Option<SimTime>,
    /// `heartbeatTimeoutMillis`: 120 s, or 10 s from an acting-master broker.
    pub timeout: Option<SimDuration>,
}

impl LiveWant {
    pub fn is_empty(&self) -> bool {
        *self == LiveWant::default()
    }

    /// The entry's fields that differ from the claim, as (expected, got) texts.
    pub fn check(&self, entry: &BrokerLiveInfo) -> Result<(), (String, String)> {
        let mut want = Vec::new();
        let mut got = Vec::new();
        if let Some(v) = self.data_version.filter(|v| *v != entry.data_version.counter) {
            want.push(format!("dataVersion counter {v}"));
            got.push(format!("dataVersion counter {}", entry.data_version.counter));
        }
        if let Some(t) = self.last_update.filter(|t| *t != entry.last_update_timestamp) {
            want.push(format!("last update {t}"));
            got.push(format!("last update {}", entry.last_update_timestamp));
        }
        if let Some(d) = self.timeout.filter(|d| *d != entry.heartbeat_timeout_millis) {
            want.push(format!("timeout {d}"));
            got.push(format!("timeout {}", entry.heartbeat_timeout_millis));
        }
        match want.is_empty() {
            true => Ok(()),
            false => Err((want.join(", "), got.join(", "))),
        }
    }
}

/// A `TopicList` claim: exactly these topics, or some in and some out, and for the system
/// list the broker address it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicsWant {
    pub query: TopicQuery,
    pub exactly: Option<BTreeSet<String>>,
    pub includes: BTreeSet<String>,
    pub excludes: BTreeSet<String>,
    pub broker_addr: Option<String>,
}

impl TopicsWant {
    pub fn check(&self, table: Option<&RouteInfoManager>) -> Result<(), Mismatch> {
        let Some(table) = table else {
            return Err(Mismatch { expected: self.describe(), got: "the name server is down".into() });
        };
        let list = table.topic_list(&self.query);
        let missing: Vec<&String> = self.includes.difference(&list.topics).collect();
        let unwanted: Vec<&String> = self.excludes.intersection(&list.topics).collect();
        let exact = self.exactly.as_ref().is_none_or(|e| *e == list.topics);
        let addr = self.broker_addr.is_none() || self.broker_addr == list.broker_addr;
        if exact && missing.is_empty() && unwanted.is_empty() && addr {
            return Ok(());
        }
        let mut got = format!("[{}]", list.topics.iter().cloned().collect::<Vec<_>>().join(", "));
        if self.broker_addr.is_some() {
            got += &format!(", broker address {}", list.broker_addr.as_deref().unwrap_or("none"));
        }
        Err(Mismatch { expected: self.describe(), got })
    }

    fn describe(&self) -> String {
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if let Some(e) = &self.exactly {
            parts.push(format!("exactly [{}]", join(e)));
        }
        if !self.includes.is_empty() {
            parts.push(format!("including [{}]", join(&self.includes)));
        }
        if !self.excludes.is_empty() {
            parts.push(format!("without [{}]", join(&self.excludes)));
        }
        if let Some(a) = &self.broker_addr {
            parts.push(format!("broker address {a}"));
        }
        format!("{} {}", query_name(&self.query), parts.join(", "))
    }
}

/// The Java method a query is.
pub fn query_name(q: &TopicQuery) -> String {
    match q {
        TopicQuery::All => "getAllTopicList".into(),
        TopicQuery::Cluster(c) => format!("getTopicsByCluster({c})"),
        TopicQuery::System => "getSystemTopicList".into(),
        TopicQuery::Unit => "getUnitTopics".into(),
        TopicQuery::UnitSub => "getHasUnitSubTopicList".into(),
        TopicQuery::UnitSubNotUnit => "getHasUnitSubUnUnitTopicList".into(),
    }
}

/// What a broker's last REGISTER_BROKER answer must say; `Some(None)` claims Java's null (a
/// master's answer, or a slave's whose master is not live), written `""` in a scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistrationWant {
    pub master_addr: Option<Option<String>>,
    pub ha_server_addr: Option<Option<String>>,
}

impl RegistrationWant {
    pub fn check(&self, broker: &str, answer: Option<RegisterAnswer>) -> Result<(), Mismatch> {
        let text = |v: Option<&str>| v.unwrap_or("null").to_string();
        let expected = || {
            let mut parts = Vec::new();
            if let Some(m) = &self.master_addr {
                parts.push(format!("masterAddr {}", text(m.as_deref())));
            }
            if let Some(h) = &self.ha_server_addr {
                parts.push(format!("haServerAddr {}", text(h.as_deref())));
            }
            format!("{broker}'s last REGISTER_BROKER answer: {}", parts.join(", "))
        };
        let Some(a) = answer else {
            return Err(Mismatch { expected: expected(), got: "no answer yet".into() });
        };
        let same = |want: &Option<String>, got: Option<Name>| want.as_deref() == got.as_ref().map(Name::as_str);
        let master_ok = self.master_addr.as_ref().is_none_or(|m| same(m, a.master_addr));
        let ha_ok = self.ha_server_addr.as_ref().is_none_or(|h| same(h, a.ha_server_addr));
        if master_ok && ha_ok {
            return Ok(());
        }
        let got = format!(
            "masterAddr {}, haServerAddr {} (answered at {})",
            text(a.master_addr.as_ref().map(Name::as_str)),
            text(a.ha_server_addr.as_ref().map(Name::as_str)),
            a.at
        );
        Err(Mismatch { expected: expected(), got })
    }
}
