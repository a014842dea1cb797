//! How the cluster-membership trace events read in the timeline: each member's reports to its
//! peers and what they did to its view (`MemberUtil#onSuccess` / `#onFail`), and reports received.

use crate::nacos::cluster::MAX_FAIL_ACCESS_CNT;
use crate::nacos::http::Failure;
use crate::nacos::notes::NacosNote;

pub(crate) fn line(n: &NacosNote) -> String {
    match n {
        NacosNote::MemberProbed { peer, failure: None, from, to, .. } if from == to => {
            format!("member report to {peer} answered: still {to} (MemberUtil#onSuccess)")
        }
        NacosNote::MemberProbed { peer, failure: None, from, to, .. } => {
            format!("member report to {peer} answered: {from} -> {to}, failAccessCnt reset to 0 (MemberUtil#onSuccess)")
        }
        NacosNote::MemberProbed { peer, failure: Some(failure), from, to, fail_count } => {
            let why = if *failure == Failure::Refused {
                "\"Connection refused\": DOWN at once".to_string()
            } else if *fail_count > MAX_FAIL_ACCESS_CNT {
                format!("failAccessCnt {fail_count} > {MAX_FAIL_ACCESS_CNT}: DOWN")
            } else {
                format!("failAccessCnt {fail_count} (DOWN once > {MAX_FAIL_ACCESS_CNT})")
            };
            let change = if from == to { format!("still {to}") } else { format!("{from} -> {to}") };
            format!("member report to {peer} failed ({failure}): {why}; {change} (MemberUtil#onFail)")
        }
        NacosNote::MemberReportIn { peer, from, fail_count } => format!(
            "member report received from {peer}: {from} -> UP (NacosClusterController#report; MemberUtil#copy keeps \
             failAccessCnt {fail_count})"
        ),
        other => other.to_string(),
    }
}
