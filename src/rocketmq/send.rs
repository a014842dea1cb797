//! A broker's answer to `SEND_MESSAGE`, pure: the checks a send meets before the store takes it.
//!
//! What decides the answer in 5.3.x, in the order the broker applies it:
//!
//! 1. `NettyRemotingAbstract#processRequestCommand` asks the processor `rejectRequest()` first.
//!    `SendMessageProcessor#rejectRequest` rejects every send on a slave unless
//!    `enableSlaveActingMaster` is on, and the remoting layer answers `SYSTEM_BUSY` ("\[REJECTREQUEST\]
//!    system busy, start flow control for a while"). (It also rejects while the OS page cache is
//!    busy; the model has no page cache.)
//! 2. `AbstractSendMessageProcessor#msgCheck`: a broker whose `brokerPermission` has lost write
//!    answers `NO_PERMISSION` **only for an order topic**; an ordinary topic is still stored. What
//!    stops producers writing to a wiped broker is their route: the registration narrows every
//!    queue's perm to the broker's, and `topicRouteData2TopicPublishInfo` leaves out queues that
//!    are not writeable. Then an unknown topic is `TOPIC_NOT_EXIST` (with `autoCreateTopicEnable`
//!    a broker holding `TBW102` would create it instead; the model's brokers hold no `TBW102`),
//!    and a queue id at or past `max(writeQueueNums, readQueueNums)` is `INVALID_PARAMETER`.
//! 3. `HookUtils#checkBeforePutMessage`: a store in the SLAVE role refuses with
//!    `SERVICE_NOT_AVAILABLE` (reached by an acting-master slave, which step 1 lets through).
//!
//! Everything else is `SUCCESS`, which the producer reads as `SEND_OK`. Order topics are not
//! modelled, so a send is never answered `NO_PERMISSION`.

use crate::rocketmq::broker::BrokerCore;
use crate::rocketmq::types::MASTER_ID;
use crate::sim::name::Name;
use std::fmt;

/// The response codes a send can get (`ResponseCode`, `RemotingSysResponseCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SendCode {
    /// `SUCCESS` (0): stored; `SendStatus.SEND_OK`.
    Success,
    /// `SYSTEM_BUSY` (2): the slave rejected the request before reading it.
    SystemBusy,
    /// `SERVICE_NOT_AVAILABLE` (14): the store is a slave's.
    ServiceNotAvailable,
    /// `TOPIC_NOT_EXIST` (17): the broker has no such topic (deleted since the route was read).
    TopicNotExist,
    /// `INVALID_PARAMETER` (29): the queue id is past the topic's queues (they shrank).
    InvalidParameter,
}

impl SendCode {
    pub fn code(self) -> u16 {
        match self {
            SendCode::Success => 0,
            SendCode::SystemBusy => 2,
            SendCode::ServiceNotAvailable => 14,
            SendCode::TopicNotExist => 17,
            SendCode::InvalidParameter => 29,
        }
    }

    pub fn is_ok(self) -> bool {
        self == SendCode::Success
    }
}

impl fmt::Display for SendCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            SendCode::Success => "SEND_OK",
            SendCode::SystemBusy => "SYSTEM_BUSY",
            SendCode::ServiceNotAvailable => "SERVICE_NOT_AVAILABLE",
            SendCode::TopicNotExist => "TOPIC_NOT_EXIST",
            SendCode::InvalidParameter => "INVALID_PARAMETER",
        };
        f.write_str(name)
    }
}

/// How `broker` answers one message for `topic` on queue `queue_id`.
pub fn answer(broker: &BrokerCore, topic: Name, queue_id: u32) -> SendCode {
    let c = &broker.config;
    let slave = c.broker_id != MASTER_ID;
    if slave && !c.enable_acting_master {
        return SendCode::SystemBusy;
    }
    let Some(t) = broker.topics().get_named(topic) else { return SendCode::TopicNotExist };
    if queue_id >= t.write_queue_nums.max(t.read_queue_nums) {
        return SendCode::InvalidParameter;
    }
    if slave {
        return SendCode::ServiceNotAvailable;
    }
    SendCode::Success
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocketmq::broker::{BrokerConfig, TopicChange};
    use crate::rocketmq::types::perm;
    use crate::sim::clock::SimTime;

    fn broker(id: u64, acting: bool) -> BrokerCore {
        let mut config = BrokerConfig::new("DefaultCluster", "broker-a", id, "10.0.0.1:10911");
        config.enable_acting_master = acting;
        BrokerCore::new(config, crate::rocketmq::topic_table::topic_list(&["Orders"]), SimTime::ZERO, None)
    }

    #[test]
    fn a_master_stores_a_send_to_a_topic_and_queue_it_has() {
        let b = broker(MASTER_ID, false);
        assert_eq!(answer(&b, "Orders".into(), 0), SendCode::Success);
        assert_eq!(answer(&b, "Orders".into(), 15), SendCode::Success, "16 queues by default: ids 0..=15");
        assert_eq!(answer(&b, "Orders".into(), 16), SendCode::InvalidParameter);
        assert_eq!(answer(&b, "Payments".into(), 0), SendCode::TopicNotExist);
    }

    /// `msgCheck` refuses a wiped broker only for order topics: an ordinary send is stored.
    #[test]
    fn a_wiped_write_perm_still_stores_an_ordinary_send() {
        let mut b = broker(MASTER_ID, false);
        b.config.permission = perm::READ;
        assert_eq!(answer(&b, "Orders".into(), 3), SendCode::Success);
    }

    #[test]
    fn a_deleted_topic_is_topic_not_exist() {
        let mut b = broker(MASTER_ID, false);
        b.change_topics(SimTime(5), TopicChange::Delete("Orders".into()));
        assert_eq!(answer(&b, "Orders".into(), 0), SendCode::TopicNotExist);
    }

    #[test]
    fn a_slave_rejects_before_reading_and_an_acting_master_slave_store_refuses() {
        assert_eq!(answer(&broker(1, false), "Orders".into(), 0), SendCode::SystemBusy);
        assert_eq!(answer(&broker(1, true), "Orders".into(), 0), SendCode::ServiceNotAvailable);
        assert_eq!(
            answer(&broker(1, true), "Nope".into(), 0),
            SendCode::TopicNotExist,
            "msgCheck runs before the store"
        );
    }
}
