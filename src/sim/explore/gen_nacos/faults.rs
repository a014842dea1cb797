//! The fault half of a generated Nacos scenario: *episodes* (a fault together with how it ends)
//! and their repair into a valid timeline. The repair is a plain function of the episode list,
//! dropping an episode whose target is still busy with an earlier one (see [`Busy`]), so every
//! shrink proptest tries is still a valid scenario.
//!
//! Faults stay on an app's own link or process: partition, one-way block either way, loss and
//! latency between an application (or subscriber) and its one server; crash, host-down,
//! shutdown and hang of applications; crash or host-down (usually with a restart) and hang of
//! servers.

use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::explore::gen::Busy;
use crate::sim::scenario::{Action, NetworkSpec, TimedEvent};
use proptest::prelude::*;

/// A fault with its end. `target` indexes the client processes (apps, then subscribers),
/// `server` the naming servers, both modulo their count.
#[derive(Clone, Debug)]
pub enum Episode {
    /// `kill -9`, or the host dies (`host`); maybe a restart.
    Crash {
        target: usize,
        at: u64,
        host: bool,
        restart_after: Option<u64>,
    },
    Hang {
        target: usize,
        at: u64,
        for_secs: u64,
    },
    /// SIGTERM: an application deregisters its instances first.
    Shutdown {
        target: usize,
        at: u64,
        restart_after: Option<u64>,
    },
    ServerCrash {
        server: usize,
        at: u64,
        host: bool,
        restart_after: Option<u64>,
    },
    /// A JVM pause of the naming server (scenario 10).
    ServerHang {
        server: usize,
        at: u64,
        for_secs: u64,
    },
    /// A fault on the link between a client process and its server.
    Link {
        target: usize,
        at: u64,
        for_secs: u64,
        fault: LinkFault,
    },
}

#[derive(Clone, Debug)]
pub enum LinkFault {
    Partition,
    /// One way only: towards the server (beats vanish) or back (beats arrive, answers vanish).
    Block {
        to_server: bool,
    },
    Loss {
        percent: u8,
    },
    Latency {
        millis: u64,
    },
}

pub(super) fn episode() -> impl Strategy<Value = Episode> {
    let at = 5u64..240;
    let restart = proptest::option::of(1u64..90);
    let server_restart = prop_oneof![3 => (1u64..60).prop_map(Some), 1 => Just(None)];
    let link = prop_oneof![
        Just(LinkFault::Partition),
        any::<bool>().prop_map(|to_server| LinkFault::Block { to_server }),
        (10u8..90).prop_map(|percent| LinkFault::Loss { percent }),
        (5u64..2000).prop_map(|millis| LinkFault::Latency { millis }),
    ];
    prop_oneof![
        1 => (any::<usize>(), at.clone(), any::<bool>(), restart.clone())
            .prop_map(|(target, at, host, restart_after)| Episode::Crash { target, at, host, restart_after }),
        1 => (any::<usize>(), at.clone(), 1u64..90).prop_map(|(target, at, for_secs)| Episode::Hang { target, at, for_secs }),
        1 => (any::<usize>(), at.clone(), restart)
            .prop_map(|(target, at, restart_after)| Episode::Shutdown { target, at, restart_after }),
        1 => (any::<usize>(), at.clone(), any::<bool>(), server_restart)
            .prop_map(|(server, at, host, restart_after)| Episode::ServerCrash { server, at, host, restart_after }),
        1 => (any::<usize>(), at.clone(), 1u64..60)
            .prop_map(|(server, at, for_secs)| Episode::ServerHang { server, at, for_secs }),
        2 => (any::<usize>(), at, 1u64..120, link)
            .prop_map(|(target, at, for_secs, fault)| Episode::Link { target, at, for_secs, fault }),
    ]
}

/// Episodes → a valid, time-ordered timeline: an episode whose target is busy with an earlier
/// one for part of its length is dropped (see [`Busy`]).
pub(super) fn timeline(
    episodes: &[Episode],
    clients: &[(String, String, SimTime)],
    servers: &[String],
    network: &NetworkSpec,
) -> Vec<TimedEvent> {
    let mut busy = Busy::default();
    let mut events: Vec<TimedEvent> = Vec::new();
    for (n, e) in episodes.iter().enumerate() {
        let n = n + 1;
        let client = |i: usize| clients[i % clients.len()].0.clone();
        // A process cannot be stopped before it starts (apps start with their first instance, up
        // to 10 s in): such an episode begins at the start, in whole seconds like every other.
        let not_before = |i: usize, at: u64| at.max(clients[i % clients.len()].2.millis().div_ceil(1000));
        let server = |i: usize| servers[i % servers.len()].clone();
        // (who, from, until, the action that starts it, the one that ends it)
        let (who, at, until, start, end) = match e {
            Episode::Crash { target, at, host, restart_after } => {
                let (who, at) = (client(*target), &not_before(*target, *at));
                let stop = if *host { Action::HostDown(who.clone()) } else { Action::Crash(who.clone()) };
                // Restart 10 s later at the earliest, as after a shutdown.
                (who, *at, restart_after.map(|after| at + after.max(10)), stop, None)
            }
            Episode::Shutdown { target, at, restart_after } => {
                // Shutting down deregisters one instance after another before the process exits.
                let (who, at) = (client(*target), &not_before(*target, *at));
                (who.clone(), *at, restart_after.map(|after| at + after.max(10)), Action::Shutdown(who), None)
            }
            Episode::ServerCrash { server: i, at, host, restart_after } => {
                let who = server(*i);
                let stop = if *host { Action::HostDown(who.clone()) } else { Action::Crash(who.clone()) };
                (who, *at, restart_after.map(|after| at + after), stop, None)
            }
            Episode::Hang { target: i, at, for_secs } | Episode::ServerHang { server: i, at, for_secs } => {
                let (who, at) = match e {
                    Episode::Hang { .. } => (client(*i), &not_before(*i, *at)),
                    _ => (server(*i), at),
                };
                let resume = Action::Resume(who.clone());
                (who.clone(), *at, Some(at + for_secs), Action::Hang(who), Some(resume))
            }
            Episode::Link { target, at, for_secs, fault } => {
                // Links are not claimed: cuts have their own names, and overlapping loss or
                // latency episodes on one link leave network and monitor agreeing.
                let (x, y, _) = clients[target % clients.len()].clone();
                let ((on_name, on), (off_name, off)) = link_actions(n, fault, x, y, network);
                events.push(TimedEvent { at: SimTime(at * 1000), name: on_name, action: on });
                events.push(TimedEvent { at: SimTime((at + for_secs) * 1000), name: off_name, action: off });
                continue;
            }
        };
        // Without an end (a crash that is not restarted) the process stays down for good.
        if !busy.claim(&who, at * 1000, until.unwrap_or(u64::MAX / 1000) * 1000) {
            continue;
        }
        let verb = if matches!(start, Action::Hang(_)) { "hang" } else { "stop" };
        events.push(TimedEvent { at: SimTime(at * 1000), name: format!("e{n} {verb} {who}"), action: start });
        if let Some(until) = until {
            let (verb, end) = match end {
                Some(end) => ("resume", end),
                None => ("restart", Action::Restart(who.clone())),
            };
            events.push(TimedEvent { at: SimTime(until * 1000), name: format!("e{n} {verb} {who}"), action: end });
        }
    }
    events.sort_by_key(|e| e.at);
    events
}

/// The named actions that start and end a link fault between client `x` and server `y`.
fn link_actions(
    n: usize,
    fault: &LinkFault,
    x: String,
    y: String,
    network: &NetworkSpec,
) -> ((String, Action), (String, Action)) {
    let cut = format!("e{n} cut");
    let heal = (format!("e{n} heal"), Action::Heal(Some(cut.clone())));
    match *fault {
        LinkFault::Partition => ((cut, Action::Partition(vec![vec![x], vec![y]])), heal),
        LinkFault::Block { to_server: true } => ((cut, Action::Block { from: x, to: y }), heal),
        LinkFault::Block { to_server: false } => ((cut, Action::Block { from: y, to: x }), heal),
        LinkFault::Loss { percent } => {
            let rate = f64::from(percent) / 100.0;
            let on = Action::Loss { from: x.clone(), to: y.clone(), rate, both_ways: true };
            let off = Action::Loss { from: x, to: y, rate: 0.0, both_ways: true };
            ((format!("e{n} loss"), on), (format!("e{n} no loss"), off))
        }
        LinkFault::Latency { millis } => {
            let (base, jitter) = (SimDuration(millis), SimDuration::ZERO);
            let on = Action::Latency { from: x.clone(), to: y.clone(), base, jitter, both_ways: true };
            let (base, jitter) = (network.latency, network.jitter);
            let off = Action::Latency { from: x, to: y, base, jitter, both_ways: true };
            ((format!("e{n} slow"), on), (format!("e{n} fast"), off))
        }
    }
}
