//! The health checks and their scheduler: each checker rule, the metadata overrides, the cleaner,
//! and a randomized proof that skipping ticks changes nothing.

use crate::nacos::health::{first_tick, has_tick, CHECK_PERIOD};
use crate::nacos::naming::tests::{full, instance, light, svc};
use crate::nacos::naming::{Change, NamingConfig, NamingServer, RegisterSource};
use crate::nacos::types::{ClientKey, HEART_BEAT_TIMEOUT_KEY, IP_DELETE_TIMEOUT_KEY};
use crate::nacos::wire::ListReq;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::name::Name;
use crate::sim::rng::SimRng;
use std::sync::Arc;

fn server(config: NamingConfig) -> NamingServer {
    NamingServer::new(config, SimTime::ZERO)
}

/// Runs the skipping scheduler from `from` to `until`, waking only when it asks to.
fn run_until(s: &mut NamingServer, until: SimTime) -> Vec<(SimTime, Change)> {
    let mut out = Vec::new();
    while let Some(t) = s.next_wake().filter(|t| *t <= until) {
        out.extend(s.run_due(t).into_iter().map(|c| (t, c)));
    }
    out
}

fn kinds(log: &[(SimTime, Change)]) -> Vec<(u64, &'static str)> {
    log.iter()
        .map(|(t, c)| {
            let k = match c {
                Change::Unhealthy { .. } => "unhealthy",
                Change::Expired { .. } => "expired",
                Change::ClientRemoved { .. } => "client removed",
                _ => "other",
            };
            (t.millis(), k)
        })
        .collect()
}

#[test]
fn the_check_grid_starts_five_seconds_after_the_client_appears() {
    // Nacos HealthCheckReactor#scheduleCheck: scheduleNamingHealth(task, 5000, 5000)
    assert_eq!(first_tick(SimTime(5_001), SimTime(0), 15_001), Some(SimTime(20_001)));
    assert_eq!(first_tick(SimTime(5_001), SimTime(0), 15_000), Some(SimTime(15_001)));
    assert!(has_tick(SimTime(5_001), SimTime(9_000), SimTime(10_002)));
    assert!(!has_tick(SimTime(5_001), SimTime(5_002), SimTime(10_001)));
}

#[test]
fn a_silent_instance_is_unhealthy_strictly_after_15s_and_deleted_strictly_after_30s() {
    // Nacos UnhealthyInstanceChecker#doCheck and ExpiredInstanceChecker#doCheck: now - last > timeout
    let mut s = server(NamingConfig::default());
    // Created at 0: ticks at 5, 10, 15, ... A beat at exactly 0 puts 15 s and 30 s on ticks.
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let log = run_until(&mut s, SimTime(40_000));
    // 15.000 s of silence at the 15 s tick is not > 15 s; the 20 s tick marks it.
    // The client published nothing more and was idle > 30 s: the cleaner's 35 s tick removes it.
    assert_eq!(kinds(&log), [(20_000, "unhealthy"), (35_000, "expired"), (35_000, "client removed")]);
}

#[test]
fn both_checkers_can_fire_in_one_pass() {
    // Nacos InstanceBeatCheckTask#passIntercept: CHECKERS run in order, each independently
    let md = [(HEART_BEAT_TIMEOUT_KEY, "3000"), (IP_DELETE_TIMEOUT_KEY, "3000")];
    let mut s = server(NamingConfig::default());
    s.register(SimTime(0), &svc("orders"), &instance(8080, &md), RegisterSource::Request);
    let log = run_until(&mut s, SimTime(10_000));
    assert_eq!(kinds(&log), [(5_000, "unhealthy"), (5_000, "expired")]);
}

#[test]
fn metadata_timeouts_override_the_defaults() {
    // Nacos UnhealthyInstanceChecker#getTimeout: extendDatum[preserved.heart.beat.timeout]
    let md = [(HEART_BEAT_TIMEOUT_KEY, "6000"), (IP_DELETE_TIMEOUT_KEY, "11000")];
    let mut s = server(NamingConfig::default());
    s.register(SimTime(0), &svc("orders"), &instance(8080, &md), RegisterSource::Request);
    assert_eq!(kinds(&run_until(&mut s, SimTime(20_000))), [(10_000, "unhealthy"), (15_000, "expired")]);
}

#[test]
fn a_delete_timeout_below_the_beat_timeout_deletes_without_an_unhealthy_phase() {
    // Nacos ExpiredInstanceChecker#doCheck: regardless of healthy
    let md = [(IP_DELETE_TIMEOUT_KEY, "6000")];
    let mut s = server(NamingConfig::default());
    s.register(SimTime(0), &svc("orders"), &instance(8080, &md), RegisterSource::Request);
    assert_eq!(kinds(&run_until(&mut s, SimTime(20_000))), [(10_000, "expired")]);
}

#[test]
fn a_non_numeric_timeout_flaps_the_instance_at_every_tick() {
    // Nacos UnhealthyInstanceChecker#getTimeout -> ConvertUtils.toLong("15s") = 0
    let md = [(HEART_BEAT_TIMEOUT_KEY, "15s")];
    let mut s = server(NamingConfig::default());
    s.register(SimTime(0), &svc("orders"), &instance(8080, &md), RegisterSource::Request);
    let mut flips = Vec::new();
    for beat in [2_000, 7_000, 12_000] {
        flips.extend(kinds(&run_until(&mut s, SimTime(beat - 1))));
        let (_, changes) = s.handle_beat(SimTime(beat), &light("orders", 8080));
        flips.extend(
            changes.iter().map(|c| (beat, if matches!(c, Change::HealthyAgain { .. }) { "healthy" } else { "?" })),
        );
    }
    assert_eq!(flips, [(5_000, "unhealthy"), (7_000, "healthy"), (10_000, "unhealthy"), (12_000, "healthy")]);
}

#[test]
fn enable_client_beat_in_metadata_switches_the_checks_off() {
    // Nacos InstanceEnableBeatCheckInterceptor#isInterceptType: enableClientBeat=true skips the checkers
    let mut s = server(NamingConfig::default());
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[("enableClientBeat", "true")]), RegisterSource::Request);
    let log = run_until(&mut s, SimTime(100_000));
    assert!(log.iter().all(|(_, c)| !matches!(c, Change::Unhealthy { .. } | Change::Expired { .. })));
}

#[test]
fn with_expire_instance_off_the_client_cleaner_removes_the_instance_after_three_minutes() {
    // Nacos ExpiredInstanceChecker#doCheck (expireInstance) + EphemeralIpPortClientManager.ExpiredClientCleaner
    let mut s = server(NamingConfig { expire_instance: false, ..NamingConfig::default() });
    s.register(SimTime(1), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let log = run_until(&mut s, SimTime(300_000));
    // Unhealthy on the client's grid (5.001 + 5k); removed on the cleaner's grid (0 + 5k) once
    // idle > 180 s: 180.001 s is not a cleaner tick, 185 s is.
    assert_eq!(kinds(&log), [(20_001, "unhealthy"), (185_000, "client removed")]);
    assert!(matches!(&log[1].1, Change::ClientRemoved { published, .. } if published == &[svc("orders")]));
}

#[test]
fn an_empty_client_is_removed_after_30s_of_idleness() {
    // Nacos ExpiredClientCleaner#isExpirePublishedClient: publishers empty && idle > 30000
    let mut s = server(NamingConfig::default());
    s.register(SimTime(0), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    let mut log = Vec::new();
    for t in (5_000..=20_000).step_by(5_000) {
        s.handle_beat(SimTime(t), &light("orders", 8080));
    }
    // Deleted at 50 s (last beat at 20 s), then removed by the cleaner at the next tick past
    // lastUpdatedTime (20 s) + 30 s: the 55 s tick (50 s is not > 30 s of idleness).
    log.extend(run_until(&mut s, SimTime(100_000)));
    assert_eq!(kinds(&log), [(40_000, "unhealthy"), (55_000, "expired"), (55_000, "client removed")]);
}

#[test]
fn a_subscriber_client_stays_while_it_polls_and_goes_30s_after_it_stops() {
    // Nacos ExpiredClientCleaner#isExpireSubscriberClient and EphemeralClientOperationServiceImpl#subscribeService
    let mut s = server(NamingConfig::default());
    let req =
        ListReq { service: svc("orders"), client_ip: Name::from("10.9.0.1"), udp_port: 54951, healthy_only: false };
    for t in (0..=60_000).step_by(10_000) {
        s.list(SimTime(t), &req);
        assert!(run_until(&mut s, SimTime(t + 9_999)).is_empty());
    }
    assert_eq!(kinds(&run_until(&mut s, SimTime(200_000))), [(95_000, "client removed")]);
}

#[test]
fn a_pause_moves_the_grids_to_the_resume_instant() {
    // Nacos ScheduledThreadPoolExecutor#scheduleWithFixedDelay: an overdue run, then +5 s from it
    let mut s = server(NamingConfig::default());
    s.register(SimTime(1), &svc("orders"), &instance(8080, &[]), RegisterSource::Request);
    s.handle_beat(SimTime(5_000), &light("orders", 8080));
    // Paused from 6 s to 27.5 s: ticks 10.001 .. 25.001 were due; one overdue run at 27.5 s.
    s.resume(SimTime(6_000), SimTime(27_500));
    let log = run_until(&mut s, SimTime(60_000));
    assert_eq!(kinds(&log), [(27_500, "unhealthy"), (37_500, "expired"), (37_500, "client removed")]);
}

// ---- the randomized proof ----

/// One step of a random history.
#[derive(Debug, Clone)]
enum Op {
    Register(u16, u8),
    Beat(u16, u8, bool),
    Deregister(u16, u8),
    List(u16),
    Pause(u64),
}

/// The naive scheduler: at every millisecond, each client whose grid ticks now is checked, then
/// the cleaner runs if it ticks now. It shares only the check and cleanup functions.
fn naive_step(s: &mut NamingServer, now: SimTime, out: &mut Vec<(SimTime, Change)>) {
    let on_grid = |grid: SimTime| now >= grid && (now.millis() - grid.millis()) % CHECK_PERIOD == 0;
    let keys: Vec<ClientKey> = s.clients().map(|(k, _)| k.clone()).collect();
    let mut changes = Vec::new();
    for k in &keys {
        if s.clients.get(k).is_some_and(|c| on_grid(c.sched.grid)) {
            s.check_client(k, now, &mut changes);
        }
    }
    if on_grid(s.schedule.cleaner_grid) {
        for k in &keys {
            s.clean_client(k, now, &mut changes);
        }
    }
    out.extend(changes.into_iter().map(|c| (now, c)));
}

fn apply(s: &mut NamingServer, now: SimTime, op: &Op, out: &mut Vec<(SimTime, Change)>) {
    let names = ["a", "b", "c"];
    let changes = match op {
        Op::Register(p, n) => {
            let md = [(HEART_BEAT_TIMEOUT_KEY, ["15000", "7000", "x", "-1"][*p as usize % 4])];
            s.register(now, &svc(names[*n as usize]), &instance(*p, &md), RegisterSource::Request)
        }
        Op::Beat(p, n, true) => s.handle_beat(now, &full(names[*n as usize], *p, &[])).1,
        Op::Beat(p, n, false) => s.handle_beat(now, &light(names[*n as usize], *p)).1,
        Op::Deregister(p, n) => {
            let req = crate::nacos::wire::DeregisterReq {
                service: svc(names[*n as usize]),
                cluster: Arc::from("DEFAULT"),
                ip: Name::from("10.0.0.1"),
                port: *p,
            };
            s.deregister(now, &req)
        }
        Op::List(p) => {
            let req =
                ListReq { service: svc("a"), client_ip: Name::from("10.9.0.9"), udp_port: *p, healthy_only: false };
            s.list(now, &req).1
        }
        Op::Pause(_) => Vec::new(),
    };
    out.extend(changes.into_iter().map(|c| (now, c)));
}

fn random_history(rng: &mut SimRng) -> Vec<(SimTime, Op)> {
    let mut t = 0;
    let mut ops = Vec::new();
    for _ in 0..rng.up_to(120) + 20 {
        // Bursts and long silences, on and off the 5 s grids.
        t += [rng.up_to(3), rng.up_to(2_500), rng.up_to(20_000), 5_000][rng.index(4)];
        let (p, n) = (rng.up_to(3) as u16 + 1, rng.index(3) as u8);
        let op = match rng.index(12) {
            0..=2 => Op::Register(p, n),
            3..=8 => Op::Beat(p, n, rng.chance(0.3)),
            9 => Op::Deregister(p, n),
            10 => Op::List(rng.up_to(1) as u16 + 100),
            _ => Op::Pause(rng.up_to(20_000) + 1),
        };
        ops.push((SimTime(t), op));
    }
    ops
}

/// The next instant after `now` at which the naive scheduler has a tick.
fn naive_next(s: &NamingServer, now: SimTime) -> SimTime {
    let after = |grid: SimTime| first_tick(grid, now + SimDuration(1), i128::MIN).unwrap_or(SimTime(u64::MAX));
    let clients = s.clients.values().map(|c| after(c.sched.grid));
    clients.chain([after(s.schedule.cleaner_grid)]).min().expect("the cleaner always ticks")
}

#[test]
fn skipping_ticks_changes_nothing_compared_with_checking_every_tick() {
    // Nacos ClientBeatCheckTaskV2 (per client, every 5 s) and ExpiredClientCleaner (every 5 s)
    let mut seeds = SimRng::new(2024);
    for case in 0..400 {
        let mut rng = SimRng::new(seeds.next_seed());
        let config = NamingConfig {
            expire_instance: rng.chance(0.7),
            client_expired_time: [180_000, 40_000, 12_000][rng.index(3)],
            push_cache_millis: [10_000, 45_000][rng.index(2)],
            ..NamingConfig::default()
        };
        let history = random_history(&mut rng);
        let end = SimTime(history.last().map_or(0, |(t, _)| t.millis()) + 400_000);
        let (mut naive, mut skip) = (server(config.clone()), server(config));
        let (mut naive_log, mut skip_log) = (Vec::new(), Vec::new());
        let mut ops = history.iter().peekable();
        let mut paused: Option<(SimTime, SimTime)> = None;
        let mut now = SimTime::ZERO;
        while now <= end {
            if let Some((since, until)) = paused.filter(|(_, until)| *until == now) {
                naive.resume(since, until);
                skip.resume(since, until);
                paused = None;
            }
            // Operations first (those that waited out a pause run at its end), then the ticks.
            while let Some((_, op)) = ops.next_if(|(t, _)| *t <= now && paused.is_none()) {
                match op {
                    Op::Pause(d) => paused = Some((now, now + SimDuration(*d))),
                    op => {
                        apply(&mut naive, now, op, &mut naive_log);
                        apply(&mut skip, now, op, &mut skip_log);
                    }
                }
            }
            if let Some((_, until)) = paused {
                now = until;
                continue;
            }
            naive_step(&mut naive, now, &mut naive_log);
            if skip.next_wake().is_some_and(|t| t <= now) {
                skip_log.extend(skip.run_due(now).into_iter().map(|c| (now, c)));
            }
            assert!(skip.next_wake().is_none_or(|t| t > now), "case {case}: still due at {now}");
            let next_op = ops.peek().map_or(SimTime(u64::MAX), |(t, _)| *t);
            now = naive_next(&naive, now).min(next_op).min(skip.next_wake().unwrap_or(SimTime(u64::MAX)));
        }
        if let Some(i) = (0..skip_log.len().max(naive_log.len())).find(|i| skip_log.get(*i) != naive_log.get(*i)) {
            panic!(
                "case {case}: first difference at change {i}:\n  skipping: {:?}\n  naive:    {:?}\nhistory: {history:?}",
                skip_log.get(i),
                naive_log.get(i)
            );
        }
        assert_eq!(skip.revision(), naive.revision(), "case {case}");
    }
}
