//! Links from lesson pages to `docs/glossary.md`: the table of terms a page may use, and the
//! pass that turns each term's first use on a page into a link to its glossary entry.
//!
//! The glossary itself is written by hand (it defines, a run cannot); this file only holds what
//! the generator needs, so the pages stay generated. `tests/it/lessons.rs` checks that every anchor
//! below is a heading of `docs/glossary.md`.

use std::collections::BTreeSet;

/// Which lesson family a term is linked in. Most terms are one system's own; a few (`L`, a
/// single letter) would be mislinked anywhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Any,
    RocketMq,
    Nacos,
}

/// One spelling of a glossary term: the text as lessons write it, the anchor of its entry, and
/// where it is linked. Several spellings may share an anchor; only the page's first use of any of
/// them is linked.
pub struct Term {
    pub text: &'static str,
    pub anchor: &'static str,
    pub scope: Scope,
}

const fn t(text: &'static str, anchor: &'static str, scope: Scope) -> Term {
    Term { text, anchor, scope }
}

use Scope::{Any, Nacos, RocketMq};

/// Every linked term. The anchor is the GitHub slug of the entry's heading in `docs/glossary.md`
/// (see [`slug`]). Matching is case-sensitive and on whole words; a trailing plural `s` is taken
/// into the link.
pub const TERMS: &[Term] = &[
    // RocketMQ: the name server's model.
    t("L", "l", RocketMq),
    t("broker id 0", "broker-id-0-master-slave", RocketMq),
    t("master", "broker-id-0-master-slave", RocketMq),
    t("slave", "broker-id-0-master-slave", RocketMq),
    t("acting master", "acting-master", RocketMq),
    t("enableSlaveActingMaster", "acting-master", RocketMq),
    t("supportActingMaster", "acting-master", RocketMq),
    t("half-open", "half-open-channel", RocketMq),
    t("idle close", "idle-close", RocketMq),
    t("IdleStateHandler", "idle-close", RocketMq),
    t("scanNotActiveBroker", "scannotactivebroker", RocketMq),
    t("DEFAULT_BROKER_CHANNEL_EXPIRED_TIME", "scannotactivebroker", RocketMq),
    t("heartbeatTimeoutMillis", "heartbeattimeoutmillis", RocketMq),
    t("BatchUnregistrationService", "batchunregistrationservice", RocketMq),
    t("onChannelDestroy", "onchanneldestroy", RocketMq),
    t("unRegisterBroker", "unregisterbroker", RocketMq),
    t("BrokerHousekeepingService", "onchanneldestroy", RocketMq),
    t("DataVersion", "dataversion", RocketMq),
    t("perm", "perm", RocketMq),
    t("write perm", "perm", RocketMq),
    t("wipeWritePerm", "wipewriteperm-addwriteperm", RocketMq),
    t("addWritePerm", "wipewriteperm-addwriteperm", RocketMq),
    t("brokerPermission", "perm", RocketMq),
    t("system topics", "system-topics", RocketMq),
    t("SELF_TEST_TOPIC", "system-topics", RocketMq),
    t("TBW102", "system-topics", RocketMq),
    t("QueueData", "queuedata", RocketMq),
    t("BrokerData", "brokerdata", RocketMq),
    t("TopicRouteData", "topicroutedata", RocketMq),
    t("pickupTopicRouteData", "topicroutedata", RocketMq),
    t("brokerLiveTable", "brokerlivetable", RocketMq),
    t("BrokerLiveInfo", "brokerlivetable", RocketMq),
    t("brokerAddrTable", "brokeraddrtable", RocketMq),
    t("topicQueueTable", "topicqueuetable", RocketMq),
    t("clusterAddrTable", "clusteraddrtable", RocketMq),
    t("REGISTER_BROKER", "register_broker", RocketMq),
    t("registerBroker", "register_broker", RocketMq),
    t("registerBrokerAll", "registerbrokerall", RocketMq),
    t("refreshMetadata", "refreshmetadata", RocketMq),
    t("UNREGISTER_BROKER", "unregister_broker", RocketMq),
    t("QUERY_DATA_VERSION", "query_data_version", RocketMq),
    t("GET_ROUTEINFO_BY_TOPIC", "get_routeinfo_by_topic", RocketMq),
    t("SYSTEM_ERROR", "response-codes", RocketMq),
    t("TOPIC_NOT_EXIST", "response-codes", RocketMq),
    t("SERVICE_NOT_AVAILABLE", "response-codes", RocketMq),
    t("sendLatencyFaultEnable", "sendlatencyfaultenable", RocketMq),
    // Nacos: ephemeral instances and their beats.
    t("ephemeral", "ephemeral-instance", Nacos),
    t("beat", "beat", Nacos),
    t("BeatReactor", "beat", Nacos),
    t("light beat", "light-beat", Nacos),
    t("lightBeatEnabled", "light-beat", Nacos),
    t("clientBeatInterval", "clientbeatinterval", Nacos),
    t("handleBeat", "handlebeat-branches-ad", Nacos),
    t("ServiceChangedEvent", "servicechangedevent", Nacos),
    t("10200", "10200", Nacos),
    t("20404", "20404", Nacos),
    t("RESOURCE_NOT_FOUND", "20404", Nacos),
    t("DEFAULT_GROUP@@orders", "service-names-default_grouporders", Nacos),
    t("healthy", "healthy-unhealthy-deleted", Nacos),
    t("unhealthy", "healthy-unhealthy-deleted", Nacos),
    t("ClientBeatCheckTaskV2", "clientbeatchecktaskv2", Nacos),
    t("IpPortBasedClient", "ipportbasedclient", Nacos),
    t("ExpiredClientCleaner", "expiredclientcleaner", Nacos),
    t("preserved.heart.beat.timeout", "preservedheartbeat-metadata", Nacos),
    t("preserved.heart.beat.interval", "preservedheartbeat-metadata", Nacos),
    t("preserved.ip.delete.timeout", "preservedheartbeat-metadata", Nacos),
    t("push", "subscriber-push-udp", Nacos),
    t("UDP", "subscriber-push-udp", Nacos),
    t("Distro", "distro", Nacos),
    t("protect threshold", "protect-threshold", Nacos),
    t("gRPC", "1x-http-client-vs-2x-grpc", Nacos),
];

/// The GitHub anchor of a Markdown heading's text: lower case, punctuation other than `-` and
/// `_` dropped, spaces turned into `-`. `` `DEFAULT_GROUP@@orders` `` → `default_grouporders`.
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The terms of one lesson family (`"rocketmq"`, `"nacos"`), longest first: a longer spelling
/// (`acting master`) claims its words before a shorter one inside it (`master`) is looked for.
pub fn terms_for(family: &str) -> Vec<&'static Term> {
    let mut terms: Vec<&Term> = TERMS
        .iter()
        .filter(|t| match t.scope {
            Any => true,
            RocketMq => family == "rocketmq",
            Nacos => family == "nacos",
        })
        .collect();
    terms.sort_by_key(|t| std::cmp::Reverse(t.text.len()));
    terms
}

/// Links, in `text`, the first use of every term whose anchor is not yet in `seen` (a page's
/// texts are passed in reading order, sharing `seen`). `glossary` is the path from the page to
/// `docs/glossary.md`. Existing links and code spans are left alone, except a code span that is
/// exactly a term (`` `scanNotActiveBroker` ``), which becomes the link's text.
pub fn link_first_uses(text: &str, terms: &[&Term], glossary: &str, seen: &mut BTreeSet<&'static str>) -> String {
    let protected = protected_spans(text);
    let mut chosen: Vec<(usize, usize, &str)> = Vec::new();
    for term in terms {
        if seen.contains(term.anchor) {
            continue;
        }
        let Some((start, end)) = first_use(text, term.text, &protected, &chosen) else { continue };
        seen.insert(term.anchor);
        chosen.push((start, end, term.anchor));
    }
    chosen.sort_by_key(|c| c.0);
    let mut out = String::with_capacity(text.len() + 64 * chosen.len());
    let mut at = 0;
    for (start, end, anchor) in chosen {
        out.push_str(&text[at..start]);
        out.push_str(&format!("[{}]({glossary}#{anchor})", &text[start..end]));
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// Byte ranges a link must not enter: code spans and existing `[text](target)` links.
fn protected_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => {
                let end = text[i + 1..].find('`').map_or(text.len(), |e| i + 1 + e + 1);
                spans.push((i, end));
                i = end;
            }
            b'[' => {
                // Only `[...](...)`: a bracket that does not open a link (`broker-a[0]`) protects itself alone.
                let close = text[i..].find(']').filter(|m| text[i + m + 1..].starts_with('('));
                let end = close.and_then(|m| text[i + m..].find(')').map(|e| i + m + e + 1)).unwrap_or(i + 1);
                spans.push((i, end));
                i = end;
            }
            _ => i += 1,
        }
    }
    spans
}

/// The first whole-word use of `term` outside `protected` and the already `chosen` ranges, as the
/// byte range the link covers (with its backticks when the use is a code span of the term alone,
/// with a trailing plural `s`).
fn first_use(
    text: &str,
    term: &str,
    protected: &[(usize, usize)],
    chosen: &[(usize, usize, &str)],
) -> Option<(usize, usize)> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    for (start, _) in text.match_indices(term) {
        let mut end = start + term.len();
        if text[end..].starts_with('s') && !word(text[end + 1..].chars().next()) {
            end += 1;
        }
        // `Class#method` and `Type.field` are one name: neither half is linked on its own.
        let joined = |c: Option<char>| c == Some('#') || c == Some('.');
        let before = text[..start].chars().next_back();
        let mut after = text[end..].chars();
        let (next, next2) = (after.next(), after.next());
        if word(before) || joined(before) || word(next) || (joined(next) && word(next2)) {
            continue;
        }
        let (start, end) = match protected.iter().find(|(s, e)| *s <= start && start < *e) {
            // A code span holding exactly the term: link the whole span.
            Some(&(s, e)) if s + 1 == start && e == end + 1 && text[s..].starts_with('`') => (s, e),
            Some(_) => continue,
            None => (start, end),
        };
        if chosen.iter().any(|&(s, e, _)| start < e && s < end) {
            continue;
        }
        return Some((start, end));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(texts: &[&str], family: &str) -> Vec<String> {
        let terms = terms_for(family);
        let mut seen = BTreeSet::new();
        texts.iter().map(|t| link_first_uses(t, &terms, "G", &mut seen)).collect()
    }

    #[test]
    fn only_the_first_use_on_a_page_is_linked() {
        let out = link(&["the scanNotActiveBroker task", "then scanNotActiveBroker again"], "rocketmq");
        assert_eq!(out, ["the [scanNotActiveBroker](G#scannotactivebroker) task", "then scanNotActiveBroker again"]);
    }

    #[test]
    fn a_longer_term_claims_its_words_before_a_shorter_one_inside_it() {
        let out = link(&["with acting master on, the master dies"], "rocketmq");
        assert_eq!(out, ["with [acting master](G#acting-master) on, the [master](G#broker-id-0-master-slave) dies"]);
    }

    #[test]
    fn a_code_span_of_the_term_alone_becomes_the_link_text_and_others_are_left_alone() {
        let out = link(&["`RouteInfoManager#scanNotActiveBroker` then `scanNotActiveBroker`"], "rocketmq");
        assert_eq!(out, ["`RouteInfoManager#scanNotActiveBroker` then [`scanNotActiveBroker`](G#scannotactivebroker)"]);
    }

    #[test]
    fn words_inside_other_words_and_existing_links_are_not_linked() {
        let out = link(&["remastered [the master](x.md) heartbeats, then light beats"], "nacos");
        assert_eq!(out, ["remastered [the master](x.md) heartbeats, then [light beats](G#light-beat)"]);
        let joined = link(&["BrokerHousekeepingService#onChannelClose and BrokerData.enableActingMaster"], "rocketmq");
        assert_eq!(joined, ["BrokerHousekeepingService#onChannelClose and BrokerData.enableActingMaster"]);
        let rocket = link(&["L + 155 s"], "nacos");
        assert_eq!(rocket, ["L + 155 s"], "L is a RocketMQ term only");
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(slug("`DEFAULT_GROUP@@orders` service names"), "default_grouporders-service-names");
        assert_eq!(slug("1.x HTTP client vs 2.x gRPC"), "1x-http-client-vs-2x-grpc");
        assert_eq!(slug("broker id 0, master, slave"), "broker-id-0-master-slave");
    }
}
