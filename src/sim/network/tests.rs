use super::*;

fn net() -> (NetCore, NodeId, NodeId, SimRng) {
    let mut n = NetCore::new(LinkRules::new(LinkParams::default()), SimDuration::from_secs(3));
    let a = n.add_node("a");
    let b = n.add_node("b");
    n.start(a);
    n.start(b);
    (n, a, b, SimRng::new(1))
}

const M1: Seg = Seg::Data(1);
const M2: Seg = Seg::Data(2);
const M3: Seg = Seg::Data(3);

fn delivered(out: SendOutcome) -> (ChannelId, SimTime) {
    match out {
        SendOutcome::Deliver { channel, at, .. } => (channel, at),
        other => panic!("expected a delivery, got {other:?}"),
    }
}

#[test]
fn the_first_send_waits_for_the_handshake_and_later_sends_reuse_the_channel() {
    // A connect is a round trip (SYN, SYN-ACK) before the first byte leaves: 2 ms + 1 ms.
    let (mut n, a, b, mut rng) = net();
    let first = n.send(SimTime(0), a, b, M1, &mut rng);
    let SendOutcome::Deliver { channel, at, opened: true } = first else { panic!("{first:?}") };
    assert_eq!(at, SimTime(3));
    let second = n.send(SimTime(5), a, b, M2, &mut rng);
    assert_eq!(second, SendOutcome::Deliver { channel, at: SimTime(6), opened: false });
}

#[test]
fn connecting_to_a_dead_process_on_a_live_host_is_refused_after_one_round_trip() {
    let (mut n, a, b, mut rng) = net();
    n.set_state(b, ProcState::Down, true);
    let out = n.send(SimTime(10), a, b, M1, &mut rng);
    assert_eq!(out, SendOutcome::ConnectFailed { at: SimTime(12), reason: ConnectFailure::Refused });
}

#[test]
fn connecting_across_a_partition_times_out() {
    // No SYN-ACK comes back: the SYN is sent again after 1 s (TCP_TIMEOUT_INIT), and the
    // application's connect timeout (3 s) ends the attempt — it wins a tie with the 3 s retry.
    let (mut n, a, b, mut rng) = net();
    n.rules.block("cut", b, a);
    let out = n.send(SimTime(0), a, b, M1, &mut rng);
    let SendOutcome::Connecting { channel, miss: Miss::Cut, syn_at } = out else { panic!("{out:?}") };
    assert_eq!(syn_at, SimTime(1000));
    let again = n.syn_retry(syn_at, channel, &mut rng);
    assert_eq!(again, Handshake::Again { from: a, to: b, miss: Miss::Cut, attempt: 1, next: SimTime(3000) });
    let failed = n.syn_retry(SimTime(3000), channel, &mut rng);
    let reason = ConnectFailure::TimedOut;
    assert_eq!(failed, Handshake::Failed { from: a, to: b, at: SimTime(3000), reason, segs: vec![M1] });
    assert!(n.channel(channel).is_none());
}

#[test]
fn a_handshake_answered_only_after_the_connect_timeout_times_out() {
    // Netty's CONNECT_TIMEOUT_MILLIS is a timer from the connect: with 1.5 s each way, the
    // SYN-ACK would land at 3 s, which the 3 s timeout wins. No SYN is lost, so none is
    // retransmitted on the trace; the connect fails at the timeout, its write unsent.
    let (mut n, a, b, mut rng) = net();
    for (from, to) in [(a, b), (b, a)] {
        n.rules.set_params(from, to, |p| p.latency = SimDuration::from_millis(1_500));
    }
    let out = n.send(SimTime(0), a, b, M1, &mut rng);
    let SendOutcome::Connecting { channel, miss: Miss::Slow, syn_at } = out else { panic!("{out:?}") };
    assert_eq!(syn_at, SimTime(3000));
    let failed = n.syn_retry(syn_at, channel, &mut rng);
    let reason = ConnectFailure::TimedOut;
    assert_eq!(failed, Handshake::Failed { from: a, to: b, at: SimTime(3000), reason, segs: vec![M1] });
}

#[test]
fn a_syn_sent_again_that_gets_through_too_late_waits_for_the_connect_timeout() {
    // Cut at first; the SYN sent again at 1 s gets through, but over links of 1 s each way
    // its answer would land at 3 s: the connect times out then instead.
    let (mut n, a, b, mut rng) = net();
    n.rules.block("cut", a, b);
    for (from, to) in [(a, b), (b, a)] {
        n.rules.set_params(from, to, |p| p.latency = SimDuration::from_millis(1_000));
    }
    let SendOutcome::Connecting { channel, syn_at, .. } = n.send(SimTime(0), a, b, M1, &mut rng) else { panic!() };
    n.rules.heal(None);
    let again = n.syn_retry(syn_at, channel, &mut rng);
    assert_eq!(again, Handshake::Again { from: a, to: b, miss: Miss::Slow, attempt: 1, next: SimTime(3000) });
    let failed = n.syn_retry(SimTime(3000), channel, &mut rng);
    assert!(matches!(failed, Handshake::Failed { reason: ConnectFailure::TimedOut, .. }), "{failed:?}");
}

#[test]
fn a_syn_sent_again_after_the_heal_connects_and_the_waiting_request_follows() {
    // A cut that heals within the first second costs one SYN retransmission, not a failure.
    let (mut n, a, b, mut rng) = net();
    n.rules.partition("p", vec![[a].into(), [b].into()]);
    let SendOutcome::Connecting { channel, syn_at, .. } = n.send(SimTime(0), a, b, M1, &mut rng) else { panic!() };
    let queued = n.send(SimTime(10), a, b, M2, &mut rng);
    assert_eq!(queued, SendOutcome::Held { channel, opened: false, miss: None, retransmit_at: None });
    n.rules.heal(None);
    let out = n.syn_retry(syn_at, channel, &mut rng);
    let delivered = vec![(M1, SimTime(1003)), (M2, SimTime(1003))];
    assert_eq!(out, Handshake::Connected { from: a, to: b, connected: SimTime(1002), delivered, retransmit_at: None });
}

#[test]
fn a_segment_lost_in_a_partition_is_retransmitted_with_a_doubling_timeout_and_lands_after_the_heal() {
    // Linux tcp_retransmit_timer: RTO = RTT + TCP_RTO_MIN (202 ms here), doubled per expiry.
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.rules.partition("p", vec![[a].into(), [b].into()]);
    let out = n.send(SimTime(1000), a, b, M2, &mut rng);
    assert_eq!(
        out,
        SendOutcome::Held { channel, opened: false, miss: Some(Miss::Cut), retransmit_at: Some(SimTime(1202)) }
    );
    assert!(n.channel(channel).unwrap().open_at_server, "half-open: the server never heard");
    let mut due = SimTime(1202);
    let mut fired = Vec::new();
    while due < SimTime(20_000) {
        fired.push(due.millis());
        let Retransmission::Failed { next, miss: Miss::Cut, .. } = n.retransmit(due, channel, 0, &mut rng) else {
            panic!("still cut at {due}")
        };
        due = next;
    }
    assert_eq!(fired, [1202, 1606, 2414, 4030, 7262, 13726]);
    n.rules.heal(None);
    let out = n.retransmit(due, channel, 0, &mut rng);
    let Retransmission::Delivered { segs, attempt: 7, waited, again: None, .. } = out else { panic!("{out:?}") };
    assert_eq!(segs, vec![(M2, SimTime(26_655))]);
    assert_eq!(waited, SimDuration(25_654));
}

#[test]
fn what_is_sent_behind_a_lost_segment_waits_and_arrives_in_order() {
    // TCP hands data to the reader in sequence: a later segment never overtakes a lost one.
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.rules.block("cut", a, b);
    let SendOutcome::Held { retransmit_at: Some(due), .. } = n.send(SimTime(10), a, b, M2, &mut rng) else { panic!() };
    n.rules.heal(None);
    let queued = n.send(SimTime(11), a, b, M3, &mut rng);
    assert_eq!(queued, SendOutcome::Held { channel, opened: false, miss: None, retransmit_at: None });
    let Retransmission::Delivered { segs, .. } = n.retransmit(due, channel, 0, &mut rng) else { panic!() };
    assert_eq!(segs, vec![(M2, due + SimDuration(1)), (M3, due + SimDuration(1))]);
    let (_, at) = delivered(n.send(due, a, b, Seg::Data(4), &mut rng));
    assert_eq!(at, due + SimDuration(1), "the stream flows again");
    assert!(n.channel(channel).unwrap().is_in_one_line(), "the stall's backlog and timer are let go");
}

#[test]
fn a_connect_that_retried_its_syn_keeps_nothing_boxed_once_connected() {
    // The SYN and the writes that waited for it live outside the channel's line only meanwhile.
    let (mut n, a, b, mut rng) = net();
    n.rules.block("cut", a, b);
    let SendOutcome::Connecting { channel, syn_at, .. } = n.send(SimTime(0), a, b, M1, &mut rng) else { panic!() };
    assert!(!n.channel(channel).unwrap().is_in_one_line(), "the SYN's timer and the write wait aside");
    n.rules.heal(None);
    let Handshake::Connected { delivered, .. } = n.syn_retry(syn_at, channel, &mut rng) else { panic!() };
    assert_eq!(delivered.len(), 1, "the write that waited goes out");
    assert!(n.channel(channel).unwrap().is_in_one_line());
}

#[test]
fn loss_on_a_tcp_link_delays_every_segment_but_loses_none() {
    use std::collections::BTreeSet;
    // One retransmission timer firing: what arrived, and when to fire next.
    fn fire(n: &mut NetCore, t: SimTime, ch: ChannelId, timers: &mut BTreeSet<SimTime>, rng: &mut SimRng) -> Vec<Seg> {
        match n.retransmit(t, ch, 0, rng) {
            Retransmission::Failed { next, .. } => {
                timers.insert(next);
                Vec::new()
            }
            Retransmission::Delivered { segs, again, .. } => {
                timers.extend(again);
                segs.into_iter().map(|(s, _)| s).collect()
            }
            other => panic!("{other:?}"),
        }
    }
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, Seg::Data(0), &mut rng));
    n.rules.set_params(a, b, |p| p.loss = 0.3);
    let (mut timers, mut arrived) = (BTreeSet::new(), Vec::new());
    for i in 1..=200u64 {
        let now = SimTime(i * 1000);
        while let Some(t) = timers.first().copied().filter(|t| *t <= now) {
            timers.remove(&t);
            arrived.extend(fire(&mut n, t, channel, &mut timers, &mut rng));
        }
        match n.send(now, a, b, Seg::Data(i), &mut rng) {
            SendOutcome::Deliver { .. } => arrived.push(Seg::Data(i)),
            SendOutcome::Held { retransmit_at, .. } => timers.extend(retransmit_at),
            other => panic!("{other:?}"),
        }
    }
    while let Some(t) = timers.pop_first() {
        arrived.extend(fire(&mut n, t, channel, &mut timers, &mut rng));
    }
    assert_eq!(arrived, (1..=200).map(Seg::Data).collect::<Vec<_>>());
}

#[test]
fn an_open_connection_times_out_after_the_tcp_retries2_budget() {
    // Linux tcp_write_timeout: retransmits_timed_out(sk, tcp_retries2 = 15) → ETIMEDOUT.
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.set_state(b, ProcState::Down, false);
    let SendOutcome::Held { miss: Some(Miss::NoHost), retransmit_at: Some(mut due), .. } =
        n.send(SimTime(100), a, b, M2, &mut rng)
    else {
        panic!()
    };
    loop {
        match n.retransmit(due, channel, 0, &mut rng) {
            Retransmission::Failed { next, .. } => due = next,
            Retransmission::GaveUp { segs, orphan: false, waited, .. } => {
                assert_eq!(segs, vec![M2]);
                assert!(waited >= tcp::OPEN_BUDGET && waited < tcp::OPEN_BUDGET + tcp::RTO_MAX, "{waited}");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(!n.channel(channel).unwrap().open_at_client, "the sender's end is reset");
}

#[test]
fn a_closed_socket_keeps_retransmitting_its_data_and_fin_for_the_orphan_budget_only() {
    // Linux tcp_orphan_retries(): 0 → 8 retries, about 100 s; then the socket is dropped.
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.rules.partition("p", vec![[a].into(), [b].into()]);
    let SendOutcome::Held { retransmit_at: Some(mut due), .. } = n.send(SimTime(10), a, b, M2, &mut rng) else {
        panic!()
    };
    let closing = n.close(SimTime(24_010), channel, a, &mut rng).unwrap();
    assert_eq!(closing.fin, FinFate::Held { miss: None, retransmit_at: None }, "the FIN queues behind M2");
    loop {
        match n.retransmit(due, channel, 0, &mut rng) {
            Retransmission::Failed { next, .. } => due = next,
            Retransmission::GaveUp { segs, orphan: true, waited, .. } => {
                assert_eq!(segs, vec![M2, Seg::Fin]);
                assert!(waited >= tcp::ORPHAN_BUDGET && waited < tcp::OPEN_BUDGET, "{waited}");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(n.channel(channel).unwrap().open_at_server, "the FIN never arrived: b's end stays half-open");
}

#[test]
fn an_orphan_that_outlives_the_cut_delivers_its_data_and_then_its_fin() {
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.rules.partition("p", vec![[a].into(), [b].into()]);
    let SendOutcome::Held { retransmit_at: Some(mut due), .. } = n.send(SimTime(10), a, b, M2, &mut rng) else {
        panic!()
    };
    n.close(SimTime(3_010), channel, a, &mut rng).unwrap();
    while due < SimTime(20_000) {
        let Retransmission::Failed { next, .. } = n.retransmit(due, channel, 0, &mut rng) else { panic!() };
        due = next;
    }
    n.rules.heal(None);
    let Retransmission::Delivered { segs, .. } = n.retransmit(due, channel, 0, &mut rng) else { panic!() };
    assert_eq!(segs.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [M2, Seg::Fin]);
}

#[test]
fn a_host_that_comes_back_resets_the_retransmissions_it_no_longer_knows() {
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.set_state(b, ProcState::Down, false);
    assert!(n.host_down(b).is_empty());
    let SendOutcome::Held { retransmit_at: Some(due), .. } = n.send(SimTime(10), a, b, M2, &mut rng) else { panic!() };
    n.start(b);
    let Retransmission::Delivered { segs, .. } = n.retransmit(due, channel, 0, &mut rng) else { panic!() };
    assert_eq!(segs.len(), 1);
    assert_eq!(n.arrive(segs[0].1, channel, b), Arrival::Reset, "the new process has no such connection");
}

#[test]
fn each_end_idles_by_its_own_reads_and_writes() {
    // Netty IdleStateHandler: lastReadTime/lastWriteTime of *this* channel end only.
    let (mut n, a, b, mut rng) = net();
    let (channel, at) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    assert_eq!(n.arrive(at, channel, b), Arrival::Accept);
    n.rules.block("cut", a, b);
    let idle = SimDuration::from_secs(120);
    // a keeps writing into the cut: its own end is busy, b's end hears nothing.
    n.send(SimTime(100_000), a, b, M2, &mut rng);
    assert_eq!(n.idle_check(SimTime(120_003), channel, b, idle), IdleCheck::Fire);
    assert_eq!(n.idle_check(SimTime(120_003), channel, a, idle), IdleCheck::Later(SimTime(220_000)));
}

#[test]
fn a_lost_datagram_is_gone() {
    // UDP: no connection, no retransmission.
    let (mut n, a, b, mut rng) = net();
    n.rules.block("cut", a, b);
    assert_eq!(n.datagram(SimTime(0), a, b, &mut rng), Datagram::Dropped(Miss::Cut));
    n.rules.heal(None);
    assert_eq!(n.datagram(SimTime(5), a, b, &mut rng), Datagram::Arrives(SimTime(6)));
    assert!(n.open_channels_of(a).is_empty(), "no connection is involved");
}

#[test]
fn packets_on_one_channel_never_overtake_each_other() {
    let (mut n, a, b, mut rng) = net();
    n.rules.set_params(a, b, |p| p.jitter = SimDuration::from_millis(50));
    let mut last = SimTime::ZERO;
    for t in 0..50 {
        // No loss on this link: every packet must be delivered, or the order check is vacuous.
        let SendOutcome::Deliver { at, .. } = n.send(SimTime(t), a, b, Seg::Data(t), &mut rng) else {
            panic!("packet sent at {t} was not delivered");
        };
        assert!(at >= last, "packet sent at {t} arrives at {at} before {last}");
        last = at;
    }
}

#[test]
fn a_fin_sent_into_a_cut_is_retransmitted_and_closing_twice_does_nothing() {
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.rules.block("cut", a, b);
    let closing = n.close(SimTime(10), channel, a, &mut rng).unwrap();
    assert_eq!(closing.peer, b);
    assert_eq!(closing.fin, FinFate::Held { miss: Some(Miss::Cut), retransmit_at: Some(SimTime(212)) });
    assert!(n.close(SimTime(11), channel, a, &mut rng).is_none(), "closing twice does nothing");
}

#[test]
fn a_packet_to_a_closed_end_is_reset_and_a_hung_process_parks_it() {
    let (mut n, a, b, mut rng) = net();
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.set_state(b, ProcState::Hung, true);
    assert_eq!(n.arrive(SimTime(3), channel, b), Arrival::Park);
    n.close(SimTime(4), channel, b, &mut rng);
    assert_eq!(n.arrive(SimTime(5), channel, b), Arrival::Reset);
}

#[test]
fn after_a_close_the_next_send_opens_a_new_channel() {
    let (mut n, a, b, mut rng) = net();
    let (first, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    n.close(SimTime(5), first, b, &mut rng);
    n.peer_closed(first, a);
    let SendOutcome::Deliver { channel: second, opened, .. } = n.send(SimTime(7), a, b, M2, &mut rng) else { panic!() };
    assert!(opened);
    assert_ne!(first, second, "channel identity changes on reconnect");
}

#[test]
fn a_channel_is_open_only_at_its_two_ends() {
    let (mut n, a, b, mut rng) = net();
    let c = n.add_node("c");
    n.start(c);
    let (channel, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    assert_eq!(n.open_channels_of(a), vec![channel]);
    assert_eq!(n.open_channels_of(b), vec![channel]);
    assert!(n.open_channels_of(c).is_empty(), "a bystander holds no end");
}

#[test]
fn a_send_naming_a_channel_that_is_no_longer_current_goes_on_the_current_one() {
    // `Lease::Reuse(Some(last))` is a hint that saves the table's look-up; it must never pick a
    // channel the table would not.
    let (mut n, a, b, mut rng) = net();
    let reuse = |last| Lease::Reuse(Some(last));
    let (first, _) = delivered(n.send(SimTime(0), a, b, M1, &mut rng));
    // A new connection of a `Fresh` lease becomes current while the first is still open.
    let SendOutcome::Deliver { channel: fresh, opened: true, .. } =
        n.send_how(SimTime(5), a, b, M2, &mut rng, Lease::Fresh)
    else {
        panic!("a fresh lease opens a channel")
    };
    let SendOutcome::Deliver { channel, opened, .. } = n.send_how(SimTime(7), a, b, M3, &mut rng, reuse(first)) else {
        panic!()
    };
    assert_eq!((channel, opened), (fresh, false), "the first channel is open but no longer current");
    // Closed by the peer, the current channel is forgotten: naming it opens a new one.
    n.close(SimTime(9), fresh, b, &mut rng);
    n.peer_closed(fresh, a);
    let SendOutcome::Deliver { channel, opened, .. } = n.send_how(SimTime(11), a, b, M1, &mut rng, reuse(fresh)) else {
        panic!()
    };
    assert!(opened && channel != fresh && channel != first);
}
