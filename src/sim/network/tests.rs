use super::*;

fn net() -> (NetCore, NodeId, NodeId, SimRng) {
    let mut n = NetCore::new(LinkRules::new(LinkParams::default()), SimDuration::from_secs(3));
    let a = n.add_node("a");
    let b = n.add_node("b");
    n.start(a);
    n.start(b);
    (n, a, b, SimRng::new(1))
}

#[test]
fn the_first_send_opens_a_channel_and_later_sends_reuse_it() {
    let (mut n, a, b, mut rng) = net();
    let first = n.send(SimTime(0), a, b, &mut rng);
    let SendOutcome::Deliver { channel, at, opened: true } = first else { panic!("{first:?}") };
    assert_eq!(at, SimTime(1));
    let second = n.send(SimTime(5), a, b, &mut rng);
    assert_eq!(second, SendOutcome::Deliver { channel, at: SimTime(6), opened: false });
}

#[test]
fn connecting_to_a_dead_process_on_a_live_host_is_refused_after_one_round_trip() {
    let (mut n, a, b, mut rng) = net();
    n.set_state(b, ProcState::Down, true);
    let out = n.send(SimTime(10), a, b, &mut rng);
    assert_eq!(out, SendOutcome::ConnectFailed { at: SimTime(12), reason: ConnectFailure::Refused });
}

#[test]
fn connecting_across_a_partition_times_out() {
    let (mut n, a, b, mut rng) = net();
    n.rules.block("cut", b, a);
    let out = n.send(SimTime(0), a, b, &mut rng);
    assert_eq!(out, SendOutcome::ConnectFailed { at: SimTime(3000), reason: ConnectFailure::TimedOut });
}

#[test]
fn a_partition_drops_packets_but_keeps_the_channel_open() {
    let (mut n, a, b, mut rng) = net();
    let SendOutcome::Deliver { channel, .. } = n.send(SimTime(0), a, b, &mut rng) else { panic!() };
    n.rules.partition("p", vec![[a].into(), [b].into()]);
    assert_eq!(n.send(SimTime(1), a, b, &mut rng), SendOutcome::Cut { channel });
    assert!(n.channel(channel).unwrap().open_at_server, "half-open: the server never heard");
}

#[test]
fn packets_on_one_channel_never_overtake_each_other() {
    let (mut n, a, b, mut rng) = net();
    n.rules.set_params(a, b, |p| p.jitter = SimDuration::from_millis(50));
    let mut last = SimTime::ZERO;
    for t in 0..50 {
        if let SendOutcome::Deliver { at, .. } = n.send(SimTime(t), a, b, &mut rng) {
            assert!(at >= last, "packet sent at {t} arrives at {at} before {last}");
            last = at;
        }
    }
}

#[test]
fn a_close_sends_a_fin_only_over_a_reachable_link() {
    let (mut n, a, b, mut rng) = net();
    let SendOutcome::Deliver { channel, .. } = n.send(SimTime(0), a, b, &mut rng) else { panic!() };
    n.rules.block("cut", a, b);
    let fin = n.close(SimTime(10), channel, a).unwrap();
    assert_eq!(fin, Fin { peer: b, arrives: None });
    assert!(n.close(SimTime(11), channel, a).is_none(), "closing twice does nothing");
}

#[test]
fn a_packet_to_a_closed_end_is_reset_and_a_hung_process_parks_it() {
    let (mut n, a, b, mut rng) = net();
    let SendOutcome::Deliver { channel, .. } = n.send(SimTime(0), a, b, &mut rng) else { panic!() };
    n.set_state(b, ProcState::Hung, true);
    assert_eq!(n.arrive(SimTime(1), channel, b), Arrival::Park);
    n.close(SimTime(2), channel, b);
    assert_eq!(n.arrive(SimTime(3), channel, b), Arrival::Reset);
}

#[test]
fn after_a_close_the_next_send_opens_a_new_channel() {
    let (mut n, a, b, mut rng) = net();
    let SendOutcome::Deliver { channel: first, .. } = n.send(SimTime(0), a, b, &mut rng) else { panic!() };
    n.close(SimTime(1), first, b);
    n.peer_closed(first, a);
    let SendOutcome::Deliver { channel: second, opened, .. } = n.send(SimTime(2), a, b, &mut rng) else { panic!() };
    assert!(opened);
    assert_ne!(first, second, "channel identity changes on reconnect");
}

#[test]
fn a_channel_is_open_only_at_its_two_ends() {
    let (mut n, a, b, mut rng) = net();
    let c = n.add_node("c");
    n.start(c);
    let SendOutcome::Deliver { channel, .. } = n.send(SimTime(0), a, b, &mut rng) else { panic!() };
    assert_eq!(n.open_channels_of(a), vec![channel]);
    assert_eq!(n.open_channels_of(b), vec![channel]);
    assert!(n.open_channels_of(c).is_empty(), "a bystander holds no end");
}
