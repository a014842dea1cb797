//! What an operator or a test does to a running broker: change its topics, its id or its
//! permission (each re-registers at once, as the admin commands make the broker do), or make
//! it send one registration under a DataVersion of the test's choosing.

use super::{Broker, Content, Job};
use crate::rocketmq::broker::TopicChange;
use crate::rocketmq::notes::{RegisterReason, RmqNote};
use crate::rocketmq::types::{perm, DataVersion};
use actix::prelude::*;

/// An operator changes the broker's topics; it re-registers them at once.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ChangeTopics(pub TopicChange);

impl Handler<ChangeTopics> for Broker {
    type Result = ();
    fn handle(&mut self, ChangeTopics(change): ChangeTopics, ctx: &mut Context<Self>) {
        let detail = match &change {
            TopicChange::Upsert(t) => format!(
                "upsert {} {}r/{}w {}",
                t.topic_name,
                t.read_queue_nums,
                t.write_queue_nums,
                perm::to_text(t.perm)
            ),
            TopicChange::Delete(t) => format!("delete {t} (no registration is sent for a delete)"),
        };
        let changed = self.core.change_topics(self.env.now(), change);
        self.persist();
        self.env.record(RmqNote::TopicsChanged { detail, version: self.core.data_version().to_string() });
        if !changed.is_empty() {
            let job = Job { reason: RegisterReason::TopicsChanged, content: Content::Topics(changed), scheduled: None };
            self.register(job, ctx);
        }
    }
}

/// `brokerId` changes (a slave promoted); the broker registers under its new id at once.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetBrokerId(pub u64);

impl Handler<SetBrokerId> for Broker {
    type Result = ();
    fn handle(&mut self, SetBrokerId(id): SetBrokerId, ctx: &mut Context<Self>) {
        let from = self.core.config.broker_id;
        self.core.set_broker_id(id);
        self.env.record(RmqNote::BrokerIdChanged { from, to: id });
        self.register(Job { reason: RegisterReason::IdChanged, content: Content::Full, scheduled: None }, ctx);
    }
}

/// `updateBrokerConfig brokerPermission=N`: new DataVersion, immediate registration.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetPermission(pub u32);

impl Handler<SetPermission> for Broker {
    type Result = ();
    fn handle(&mut self, SetPermission(p): SetPermission, ctx: &mut Context<Self>) {
        self.core.set_permission(self.env.now(), p);
        self.persist();
        self.env.record(RmqNote::PermissionChanged { perm: perm::to_text(p) });
        self.register(Job { reason: RegisterReason::PermissionChanged, content: Content::Full, scheduled: None }, ctx);
    }
}

/// `register_broker`: one full registration, on the broker's own channels to every name server
/// it knows, carrying `DataVersion` = the given one instead of its own. It queues behind a
/// running registration like any other (`registerBrokerAll` is `synchronized`).
///
/// This is how `RouteInfoManagerBrokerRegisterTest` drives `registerBroker` with a version of
/// its choosing, through the real channel: equal to what the name server holds, a topic the
/// table already has for the group is not re-read (`isTopicConfigChanged` is false); different,
/// every topic is (`isBrokerTopicConfigChanged`), and the name server
/// keeps the given version until the broker's next registration brings its own.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RegisterWithVersion(pub DataVersion);

impl Handler<RegisterWithVersion> for Broker {
    type Result = ();
    fn handle(&mut self, RegisterWithVersion(version): RegisterWithVersion, ctx: &mut Context<Self>) {
        let job = Job { reason: RegisterReason::ChosenVersion, content: Content::Version(version), scheduled: None };
        self.register(job, ctx);
    }
}
