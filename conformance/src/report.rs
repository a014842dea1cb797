//! One conformance run from end to end, and what it prints: the model run, the real server
//! driven through the same inputs, then the diff, key by key and expectation by expectation.

use crate::diff::{changes, disagreements};
use crate::driver::{self, Clock, Namesrvs};
use crate::model::{self, ModelRun};
use crate::route::Route;
use crate::server::{self, Server};
use crate::Args;
use routesim::sim::clock::{SimDuration, SimTime};
use routesim::sim::scenario::{load_seeded, Scenario};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn conform(args: &Args) -> anyhow::Result<u8> {
    let s = match load_seeded(&args.file, None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(2);
        }
    };
    if s.namesrvs.is_empty() {
        eprintln!("error: {}: no [[namesrv]]: conformance runs RocketMQ scenarios only", args.file.display());
        return Ok(2);
    }
    let scale = args.scale;
    let scan = s.namesrvs.iter().map(|n| n.scan_interval).max().unwrap_or(SimDuration::from_secs(5));
    let tol = SimDuration::from_millis(scan.millis() + args.slack_ms * scale);
    println!("conform {} (seed {}): scale 1/{scale}, tolerance {tol} = one scan interval {scan} + {} ms real slack x {scale}",
        s.name, s.seed, args.slack_ms);
    let m = model::run_model(&s);
    let (mut ns, _dir) = start(args, &s, scale)?;
    let clock = Clock::new(Instant::now(), scale);
    let stop = Arc::new(AtomicBool::new(false));
    let poller = {
        let (keys, addrs, stop, clock) = (model::keys(&s), ns.addrs.clone(), stop.clone(), clock.clone());
        let grid = Duration::from_millis(args.grid_ms);
        std::thread::spawn(move || driver::poll(keys, addrs, clock, grid, stop))
    };
    let replay = driver::replay(&m.inputs, &mut ns, &clock);
    let end = SimTime(s.duration.millis());
    let now = Instant::now();
    if clock.real(end) > now {
        std::thread::sleep(clock.real(end) - now);
    }
    stop.store(true, Ordering::Relaxed);
    let samples = poller.join().map_err(|_| anyhow::anyhow!("the poller panicked"))?;
    println!(
        "replayed {} name-server inputs; latest {:.1} ms late (real)",
        m.inputs.len(),
        replay.max_lateness.as_secs_f64() * 1e3
    );
    for e in &replay.errors {
        println!("  input not delivered: {e}");
    }
    let differed = print_diff(&m, &samples, tol, end, (args.grid_ms, scale));
    Ok(if differed || !replay.errors.is_empty() { 1 } else { 0 })
}

/// The name servers: started by us (each in its own temp dir, past its fixed 5 s first scan),
/// or the one given by address.
fn start(args: &Args, s: &Scenario, scale: u64) -> anyhow::Result<(Namesrvs, Option<PathBuf>)> {
    let mut ns = Namesrvs { addrs: BTreeMap::new(), procs: BTreeMap::new() };
    if let Some(addr) = args.namesrv {
        anyhow::ensure!(
            s.namesrvs.len() == 1,
            "--namesrv ADDR drives one name server; this scenario has {}",
            s.namesrvs.len()
        );
        ns.addrs.insert(s.namesrvs[0].name.clone(), addr);
        return Ok((ns, None));
    }
    let bin = args.namesrv_bin.as_ref().expect("clap requires one of the two");
    let dir = std::env::temp_dir().join(format!("routesim-conform-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for n in &s.namesrvs {
        let cfg = server::Config {
            scan_interval_ms: n.scan_interval.millis() / scale,
            queue_capacity: n.queue_capacity,
            batch_time_ms: (n.unregister_delay.millis() / scale).max(1),
            support_acting_master: n.table.support_acting_master,
            notify_min_broker_id_changed: n.table.notify_min_broker_id_changed,
            delete_topic_with_broker_registration: n.table.delete_topic_with_broker_registration,
        };
        let server = Server::start(bin, &dir.join(&n.name), &cfg)?;
        ns.addrs.insert(n.name.clone(), server.addr);
        ns.procs.insert(n.name.clone(), server);
    }
    // The port's first scan comes 5 s after start whatever the interval: before it, nothing
    // expires. Start the scenario once it has run.
    std::thread::sleep(server::FIRST_SCAN + Duration::from_millis(200));
    Ok((ns, Some(dir)))
}

use std::path::PathBuf;

fn print_diff(
    m: &ModelRun,
    samples: &driver::Samples,
    tol: SimDuration,
    end: SimTime,
    (grid_ms, scale): (u64, u64),
) -> bool {
    let mut differed = false;
    let mut lags: Vec<i64> = Vec::new();
    for (key, steps) in &m.routes {
        // A name server that starts later in the scenario was started with the others: before
        // its start the model shows it down and the real one serves nothing; not compared.
        let started = steps.iter().find(|(_, r)| *r != Route::Down).map_or(end, |(t, _)| *t);
        let real: Vec<_> = samples.get(key).into_iter().flatten().filter(|(t, _)| *t >= started).cloned().collect();
        let real = real.as_slice();
        let grid = SimDuration::from_millis(grid_ms * scale);
        // A poll that timed out (200 ms real) records nothing: a long gap is time in which the
        // real server was not observed, and agreement there is vacuous. Said, not judged.
        let times = std::iter::once(started).chain(real.iter().map(|(t, _)| *t)).chain(std::iter::once(end));
        let gap = times.clone().zip(times.skip(1)).map(|(a, b)| b.millis().saturating_sub(a.millis())).max();
        println!(
            "\n{} {}: {} model changes, {} real samples, longest gap {}",
            key.0,
            key.1,
            steps.len().saturating_sub(1),
            real.len(),
            SimDuration::from_millis(gap.unwrap_or(0))
        );
        for (i, c) in changes(steps, real, tol, end).into_iter().enumerate() {
            let lasted = steps.get(i + 2).map_or(end, |(t, _)| *t).millis() - c.at.millis();
            match c.lag_ms {
                None if lasted < grid.millis() => {
                    println!(
                        "  {:>10}  {}  (lasted {lasted} ms: shorter than the poll grid)",
                        c.at.to_string(),
                        c.route
                    )
                }
                Some(l) => {
                    lags.push(l);
                    println!("  {:>10}  {}  real {:+} ms", c.at.to_string(), c.route, l)
                }
                None => {
                    // A state the model held for a whole poll period or more is one the real
                    // server should have served at least once.
                    differed = true;
                    println!(
                        "  {:>10}  {}  NOT SEEN on the real server (the model held it {lasted} ms)",
                        c.at.to_string(),
                        c.route
                    )
                }
            }
        }
        for d in disagreements(steps, real, tol) {
            differed = true;
            println!("  DIFFERED {}..{}: real served {}; the model {}", d.from, d.to, d.real, d.model);
        }
    }
    println!("\nexpectations (model verdict; real agreement over the window ± tolerance):");
    for (e, v) in &m.verdicts {
        let verdict = if v.held() { "held" } else { "FAILED" };
        match model::window(e) {
            Some((key, from, to)) => {
                let steps = m.routes.get(&key).map(Vec::as_slice).unwrap_or(&[]);
                let real: Vec<_> = samples
                    .get(&key)
                    .into_iter()
                    .flatten()
                    .filter(|(t, _)| {
                        t.millis() + tol.millis() >= from.millis() && t.millis() <= to.millis() + tol.millis()
                    })
                    .cloned()
                    .collect();
                let agree = disagreements(steps, &real, tol).is_empty();
                println!("  {verdict:6} {:5} {}", if agree { "same" } else { "DIFF" }, e.name);
            }
            None => println!("  {verdict:6} {:5} {} (not a route: not observable over the protocol)", "infer", e.name),
        }
    }
    lags.sort();
    let worst = lags.iter().map(|l| l.abs()).max().unwrap_or(0);
    println!(
        "\n{}: {} changes seen, worst lag {worst} ms model time (tolerance {tol}); seed {}",
        if differed { "DIFFERED" } else { "AGREED" },
        lags.len(),
        m.seed
    );
    differed
}
