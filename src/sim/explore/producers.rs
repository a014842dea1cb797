//! Producers in generated RocketMQ clusters: up to two `[[producer]]`s, each in one of the
//! generated clients, sending a few messages a second to one of the cluster's topics for the
//! whole run, in any mode, with or without `sendLatencyFaultEnable`. Few messages, so that a
//! case stays cheap; enough that a broker's death meets sends in every state of the route.

use crate::rocketmq::producer::{CommunicationMode, ProducerConfig};
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::scenario::{ClientSpec, ProducerSpec, Schedule};
use proptest::prelude::*;
use proptest::sample::Index;

#[derive(Clone, Debug)]
pub struct GenProducer {
    client: Index,
    topic: Index,
    mode: CommunicationMode,
    rate: u32,
    latency_fault: bool,
}

pub(super) fn producers() -> impl Strategy<Value = Vec<GenProducer>> {
    // Sync is what most applications call, so most producers are sync.
    let mode = prop_oneof![3 => Just(CommunicationMode::Sync), 1 => Just(CommunicationMode::Async), 1 => Just(CommunicationMode::Oneway)];
    let one = (any::<Index>(), any::<Index>(), mode, 1u32..=4, any::<bool>()).prop_map(
        |(client, topic, mode, rate, latency_fault)| GenProducer { client, topic, mode, rate, latency_fault },
    );
    proptest::collection::vec(one, 0..=2)
}

/// The generated producers as specs, in the clients they name (none without a client), sending
/// from 1 s to `end`; each producer's topic joins its client's polled topics, as the scenario
/// loader does.
pub(super) fn build(
    gen: &[GenProducer],
    clients: &mut [ClientSpec],
    known: &[String],
    end: SimTime,
) -> Vec<ProducerSpec> {
    if clients.is_empty() || known.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, g) in gen.iter().enumerate() {
        let client = &mut clients[g.client.index(clients.len())];
        let topic = g.topic.get(known).clone();
        if !client.topics.contains(&topic) {
            client.topics.push(topic.clone());
        }
        let config = ProducerConfig { send_latency_fault_enable: g.latency_fault, ..ProducerConfig::default() };
        out.push(ProducerSpec {
            name: format!("p{}", i + 1),
            client: client.name.clone(),
            topic,
            schedule: Schedule::Steady { rate: g.rate },
            mode: g.mode,
            from: SimTime::ZERO + SimDuration::from_secs(1),
            until: end,
            config,
        });
    }
    out
}
