//! The real-time side: replays the model's name-server inputs on the real server at their
//! scaled instants, and polls its routes on a grid from another thread.
//!
//! The model decides what each broker, link and operator does; the driver only delivers what
//! reached each modelled name server, when it reached it, over the same number of channels:
//! one TCP connection per model channel. So a crash (the model's FIN arriving) closes that
//! connection; a host down, a hang or a partition sends nothing and keeps it open; a name
//! server's crash or restart kills or restarts the process, and a hang SIGSTOPs it.

use crate::conn::Conn;
use crate::model::Key;
use crate::requests::{self, Req};
use crate::route::{Route, CLUSTER_INFO};
use crate::server::Server;
use crate::wire::response;
use routesim::rocketmq::tap::{AdminInput, Input};
use routesim::sim::clock::SimTime;
use routesim::sim::ids::ProcState;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// A route the real server served, with the model time it was seen at.
pub type Samples = BTreeMap<Key, Vec<(SimTime, Route)>>;

/// Real time and model time: model `t` happens at `t0 + paused + t / scale`.
///
/// `paused` is the real time spent starting name-server processes mid-run. The model restarts a
/// name server in an instant; a real one needs tens to hundreds of milliseconds before it
/// listens (400 ms on a loaded machine: 20 s of model time at K = 50), and replaying on would
/// deliver the next inputs late and in a bunch. So model time stands still while a process
/// starts, and the poller drops what it sees meanwhile.
#[derive(Clone)]
pub struct Clock {
    pub t0: Instant,
    pub scale: u64,
    paused_us: Arc<AtomicU64>,
    pausing: Arc<AtomicBool>,
}

impl Clock {
    pub fn new(t0: Instant, scale: u64) -> Clock {
        Clock { t0, scale, paused_us: Arc::default(), pausing: Arc::default() }
    }

    fn start(&self) -> Instant {
        self.t0 + Duration::from_micros(self.paused_us.load(Ordering::SeqCst))
    }

    pub fn real(&self, t: SimTime) -> Instant {
        self.start() + Duration::from_micros(t.millis() * 1000 / self.scale)
    }

    pub fn model(&self, at: Instant) -> SimTime {
        SimTime((at.saturating_duration_since(self.start()).as_micros() as u64 * self.scale) / 1000)
    }

    /// Runs `f` with model time stopped.
    fn stopped<T>(&self, f: impl FnOnce() -> T) -> T {
        self.pausing.store(true, Ordering::SeqCst);
        let began = Instant::now();
        let out = f();
        self.paused_us.fetch_add(began.elapsed().as_micros() as u64, Ordering::SeqCst);
        self.pausing.store(false, Ordering::SeqCst);
        out
    }

    fn is_paused(&self) -> bool {
        self.pausing.load(Ordering::SeqCst)
    }
}

/// Where each name server is, and its process when we started it.
pub struct Namesrvs {
    pub addrs: BTreeMap<String, SocketAddr>,
    pub procs: BTreeMap<String, Server>,
}

/// The replay's own record: inputs it could not deliver, and how late it was.
#[derive(Default)]
pub struct Replay {
    pub errors: Vec<String>,
    pub max_lateness: Duration,
}

/// How long the next input to a name server waits for the answer to the previous one.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// Sends `r`; the `opaque` to await, unless it is oneway (nothing will answer).
fn send(conn: &mut Conn, r: Req) -> std::io::Result<Option<i32>> {
    match r.oneway {
        true => conn.oneway(r.code, &r.fields, r.body).map(|()| None),
        false => conn.send(r.code, &r.fields, r.body).map(Some),
    }
}

/// The model's name server handles its inputs one after another, in the order the tap recorded
/// them; the real one reads each connection on its own and can apply two requests sent on two
/// connections a few microseconds apart in either order. A master and its slave registering in
/// the same model instant then land slave first, and under an acting master the slave is served
/// as id 0, read-only, for a moment — a state the model never had. So before the next input to a
/// name server, the driver waits until the real one has answered the previous request, unless the
/// model has it hung (a SIGSTOPped process answers nothing until it resumes).
fn settle(
    pending: &mut BTreeMap<String, ((String, u64), i32)>,
    conns: &BTreeMap<(String, u64), Conn>,
    name: &str,
    hung: bool,
) -> std::io::Result<()> {
    let Some((key, opaque)) = pending.remove(name) else { return Ok(()) };
    let Some(conn) = conns.get(&key).filter(|_| !hung) else { return Ok(()) };
    match conn.await_answer(opaque, Instant::now() + ANSWER_WAIT) {
        true => Ok(()),
        false => Err(std::io::Error::other(format!(
            "the answer to the previous request (channel {}) was not heard in {ANSWER_WAIT:?}, so this input may have overtaken it",
            key.1
        ))),
    }
}

pub fn replay(inputs: &[(SimTime, String, Input)], ns: &mut Namesrvs, clock: &Clock) -> Replay {
    let mut out = Replay::default();
    let mut conns: BTreeMap<(String, u64), Conn> = BTreeMap::new();
    let mut admin: BTreeMap<String, Conn> = BTreeMap::new();
    let mut up: BTreeMap<String, ProcState> = BTreeMap::new();
    let mut pending: BTreeMap<String, ((String, u64), i32)> = BTreeMap::new();
    for (t, name, input) in inputs {
        let at = clock.real(*t);
        let now = Instant::now();
        if at > now {
            std::thread::sleep(at - now);
        } else {
            out.max_lateness = out.max_lateness.max(now - at);
        }
        let Some(&addr) = ns.addrs.get(name) else { continue };
        let hung = up.get(name) == Some(&ProcState::Hung);
        if let Err(e) = settle(&mut pending, &conns, name, hung) {
            out.errors.push(format!("{t} {name}: {input:?}: {e}"));
        }
        let conn = |conns: &mut BTreeMap<(String, u64), Conn>, channel: u64| -> std::io::Result<()> {
            if let std::collections::btree_map::Entry::Vacant(e) = conns.entry((name.clone(), channel)) {
                let c = Conn::open(addr, IO_TIMEOUT)?;
                c.drain()?;
                e.insert(c);
            }
            Ok(())
        };
        let mut on = |channel: u64, r: Req| -> std::io::Result<()> {
            conn(&mut conns, channel)?;
            let key = (name.clone(), channel);
            if let Some(opaque) = send(conns.get_mut(&key).expect("just opened"), r)? {
                pending.insert(name.clone(), (key, opaque));
            }
            Ok(())
        };
        let res = match input {
            Input::Register { channel, request } => {
                let timeout = request.heartbeat_timeout_millis.map_or(120_000, |d| d.millis());
                on(channel.0, requests::register(request, (timeout / clock.scale).max(1)))
            }
            Input::Heartbeat { channel, cluster, addr, broker_name, broker_id, data_version } => {
                on(channel.0, requests::query_data_version(cluster, addr, broker_name, *broker_id, data_version))
            }
            Input::Unregister { channel, request } => on(channel.0, requests::unregister(request)),
            Input::ChannelClosed { channel, .. } => {
                // The model's end saw the close; the real one sees it a FIN later (microseconds).
                if let Some(c) = conns.remove(&(name.clone(), channel.0)) {
                    c.close();
                }
                Ok(())
            }
            Input::Admin(a) => admin_call(&mut admin, name, addr, a),
            Input::Process(state) => {
                let before = up.insert(name.clone(), *state);
                process(ns, name, (before, *state), &mut conns, &mut admin, clock)
            }
        };
        if let Err(e) = res {
            out.errors.push(format!("{t} {name}: {input:?}: {e}"));
        }
    }
    out
}

fn admin_call(admin: &mut BTreeMap<String, Conn>, name: &str, addr: SocketAddr, a: &AdminInput) -> std::io::Result<()> {
    let r = match a {
        AdminInput::WipeWritePerm(b) => requests::wipe_write_perm(b),
        AdminInput::AddWritePerm(b) => requests::add_write_perm(b),
        AdminInput::DeleteTopic { topic, cluster } => requests::delete_topic(topic, cluster.as_deref()),
        AdminInput::RegisterTopic { topic, queues } => requests::register_topic(topic, queues),
        AdminInput::Unregister(r) => requests::unregister(r),
    };
    if !admin.contains_key(name) {
        admin.insert(name.to_string(), Conn::open(addr, IO_TIMEOUT)?);
    }
    let c = admin.get_mut(name).expect("just inserted");
    let answer = c.call(r.code, &r.fields, r.body);
    if answer.is_err() {
        admin.remove(name);
    }
    let answer = answer?;
    match answer.header.code {
        response::SUCCESS => Ok(()),
        code => Err(std::io::Error::other(format!("answered {code}: {}", answer.header.remark.unwrap_or_default()))),
    }
}

/// A name server's process changed state in the model: do the same to the real one.
fn process(
    ns: &mut Namesrvs,
    name: &str,
    (before, state): (Option<ProcState>, ProcState),
    conns: &mut BTreeMap<(String, u64), Conn>,
    admin: &mut BTreeMap<String, Conn>,
    clock: &Clock,
) -> std::io::Result<()> {
    let Some(server) = ns.procs.get_mut(name) else {
        // Started before the run (the first `Running`), or given by address: nothing to do.
        return match (before, state) {
            (None, ProcState::Running) => Ok(()),
            _ => Err(std::io::Error::other("a name server given by --namesrv cannot be stopped or restarted")),
        };
    };
    match (before, state) {
        (None, ProcState::Running) => {}
        (Some(ProcState::Hung), ProcState::Running) => server.resume(),
        (_, ProcState::Hung) => server.hang(),
        (_, ProcState::Down) => {
            server.kill();
            conns.retain(|(n, _), _| n != name);
            admin.remove(name);
        }
        // Model time stands still until the process listens (see `Clock`).
        (_, ProcState::Running) => {
            clock.stopped(|| server.spawn()).map_err(|e| std::io::Error::other(e.to_string()))?
        }
    }
    Ok(())
}

/// Polls every key every `grid` until `stop`, recording each answer at the model time halfway
/// between asking and hearing.
pub fn poll(
    keys: Vec<Key>,
    addrs: BTreeMap<String, SocketAddr>,
    clock: Clock,
    grid: Duration,
    stop: Arc<AtomicBool>,
) -> Samples {
    let samples = Arc::new(Mutex::new(Samples::new()));
    let mut conns: BTreeMap<String, Conn> = BTreeMap::new();
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        for (ns, topic) in &keys {
            let asked = Instant::now();
            let route = ask(&mut conns, ns, addrs[ns], topic);
            let heard = Instant::now();
            let Some(route) = route else { continue };
            if clock.is_paused() {
                continue; // a name server is starting: model time is not moving
            }
            let t = clock.model(asked + (heard - asked) / 2);
            samples.lock().expect("one thread").entry((ns.clone(), topic.clone())).or_default().push((t, route));
        }
        next += grid;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    let out = std::mem::take(&mut *samples.lock().expect("one thread"));
    out
}

/// One GET_ROUTEINFO_BY_TOPIC, or GET_BROKER_CLUSTER_INFO for [`CLUSTER_INFO`]. `None` when the answer did not come in time (a hung server):
/// nothing was seen, which is not the same as "down".
fn ask(conns: &mut BTreeMap<String, Conn>, ns: &str, addr: SocketAddr, topic: &str) -> Option<Route> {
    if !conns.contains_key(ns) {
        match Conn::open(addr, Duration::from_millis(200)) {
            Ok(c) => conns.insert(ns.to_string(), c),
            Err(_) => return Some(Route::Down),
        };
    }
    let c = conns.get_mut(ns).expect("just inserted");
    let cluster = topic == CLUSTER_INFO;
    let r = if cluster { requests::get_cluster_info() } else { requests::get_route(topic) };
    match c.call(r.code, &r.fields, r.body) {
        Ok(f) if f.header.code == response::SUCCESS && cluster => Route::cluster_from_json(&f.body).ok(),
        Ok(f) if f.header.code == response::TOPIC_NOT_EXIST => Some(Route::Absent),
        Ok(f) if f.header.code == response::SUCCESS => Route::from_json(&f.body).ok(),
        Ok(_) => None,
        Err(e) => {
            if std::env::var_os("CONFORM_DEBUG").is_some() {
                eprintln!("poll {ns} {topic}: {e}");
            }
            conns.remove(ns);
            match e.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => None,
                _ => Some(Route::Down),
            }
        }
    }
}
