//! The network as an actor's `Env` uses it: who may send.

use super::*;
use crate::rocketmq::wire::RmqMsg;
use crate::sim::expect::checker::Checker;
use crate::sim::network::LinkParams;
use crate::sim::trace::{Trace, TraceOptions};
use crate::sim::world::World;

fn request() -> Body {
    Body::Rmq(RmqMsg::GetClusterInfo)
}

/// How many entries the agenda holds: a send that goes out adds one (its segment or its SYN).
fn pending(net: &Net) -> usize {
    net.0.borrow().agenda.len()
}

/// `send_via_live` and `send_on_live` check the sender's incarnation under the send's own
/// borrow: a killed process, or an earlier incarnation of a restarted one, sends nothing and
/// gets id 0; a stopped one (SIGSTOP) still sends what its handler wrote before the stop.
#[test]
fn only_the_live_incarnation_of_a_process_sends() {
    let idle = IdleGate::default();
    idle.clone().block_on(async move {
        let obs =
            Obs::new(Trace::new(TraceOptions::default()), Checker::new(Vec::new()), World::new(Default::default()));
        let net = Net::new(LinkRules::new(LinkParams::default()), SimDuration::from_secs(3), 1, obs, idle);
        let (client, server) = (net.add_node("client"), net.add_node("server"));
        let first = net.start_process(client, None);
        let server_epoch = net.start_process(server, None);

        let sent = net.send_via_live(client, first, server, request(), None);
        assert_ne!(sent.id, 0, "a running process sends");
        let channel = sent.channel.expect("the send opened a channel");
        let before = pending(&net);
        assert_ne!(net.send_on_live(server, server_epoch, channel, request()), 0, "the server answers");
        assert_eq!(pending(&net), before + 1);

        net.hang(client);
        assert_ne!(net.send_via_live(client, first, server, request(), Some(channel)).id, 0, "stopped, it still sends");
        net.resume(client);

        net.stop_process(client, Stop::Kill);
        let before = pending(&net);
        let ghost = net.send_via_live(client, first, server, request(), Some(channel));
        assert_eq!((ghost.id, ghost.channel, ghost.up), (0, None, None), "a killed process sends nothing");
        assert_eq!(pending(&net), before);

        let second = net.start_process(client, None);
        assert_eq!(net.send_via_live(client, first, server, request(), None).id, 0, "nor does its earlier life");
        assert_eq!(pending(&net), before);
        assert_ne!(net.send_via_live(client, second, server, request(), None).id, 0, "the new one does");

        net.stop_process(server, Stop::Kill);
        let before = pending(&net);
        assert_eq!(net.send_on_live(server, server_epoch, channel, request()), 0, "a killed server answers nothing");
        assert_eq!(pending(&net), before);
    });
}

/// A packet's entry is written into its agenda bucket field by field (`Due::write_deliver`),
/// past the bucket's capacity as well: it comes out as the `Due::Deliver` it would have been
/// as a value, in order among the instant's other entries, and owns what its body holds.
#[test]
fn a_delivery_written_in_place_comes_out_whole() {
    use crate::nacos::wire::NacosMsg;
    use std::sync::Arc;
    let from: Arc<str> = Arc::from("10.0.0.1:8848");
    let mut agenda: Agenda<Due> = Agenda::default();
    let at = SimTime(5);
    agenda.push(at, Due::Syn { channel: ChannelId(7) });
    for i in 1..=20u64 {
        let body = Body::Nacos(NacosMsg::MemberReport { from: from.clone() });
        let packet = Packet { id: i, from: NodeId(1), to: NodeId(2), channel: ChannelId(100 + i), body };
        let mut room = agenda.room(at);
        // SAFETY: the room's slot is free and written whole.
        unsafe {
            Due::write_deliver(room.slot(), packet);
            room.filled();
        }
    }
    assert_eq!(Arc::strong_count(&from), 21, "each entry owns its body");
    let mut taken = Vec::new();
    assert!(agenda.take_due(at, &mut taken));
    assert!(matches!(taken[0], Due::Syn { channel: ChannelId(7) }));
    for (i, due) in (1..=20u64).zip(&taken[1..]) {
        let Due::Deliver(p) = due else { panic!("entry {i} is not a delivery") };
        assert_eq!((p.id, p.from, p.to, p.channel), (i, NodeId(1), NodeId(2), ChannelId(100 + i)));
        assert!(matches!(&p.body, Body::Nacos(NacosMsg::MemberReport { from: f }) if Arc::ptr_eq(f, &from)));
    }
    drop(taken);
    assert_eq!(Arc::strong_count(&from), 1, "and frees it");
}
