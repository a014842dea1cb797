//! The real name server's process: started with a generated config in a fresh directory,
//! killed, restarted on the same port, stopped (SIGSTOP) and resumed (SIGCONT).
//!
//! The port (`rocketmq-namesrv` 1.0.0) reads the Java key names from a TOML file
//! (`NamesrvConfig`, serde aliases). Only `scanNotActiveBrokerInterval` needs scaling: a broker's
//! expiry timeout comes in its REGISTER_BROKER header. Two clocks cannot be changed and shape the
//! driver: the first scan runs 5 s after start (`NamesrvBootstrap`, `initial_delay`), so a run
//! starts only after it; the idle close is fixed at 120 s, so it never fires in a scaled run.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What the port hard-codes as the scan's initial delay.
pub const FIRST_SCAN: Duration = Duration::from_secs(5);

pub struct Config {
    pub scan_interval_ms: u64,
    pub queue_capacity: usize,
    /// The model's `unregister_delay` (a batch thread that waits before applying), scaled: the
    /// port's `unRegisterBrokerBatchTimeMillis` is that wait. Java has none (0), but the port
    /// refuses 0 (it fails to start), so the least is 1 ms.
    pub batch_time_ms: u64,
    pub support_acting_master: bool,
    pub notify_min_broker_id_changed: bool,
    pub delete_topic_with_broker_registration: bool,
}

pub struct Server {
    bin: PathBuf,
    dir: PathBuf,
    pub addr: SocketAddr,
    child: Option<Child>,
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Server {
    pub fn start(bin: &Path, dir: &Path, cfg: &Config) -> anyhow::Result<Server> {
        std::fs::create_dir_all(dir)?;
        let d = dir.display();
        let toml = format!(
            "rocketmqHome = \"{d}\"\nkvConfigPath = \"{d}/kvConfig.json\"\nconfigStorePath = \"{d}/namesrv.properties\"\n\
             scanNotActiveBrokerInterval = {}\nunRegisterBrokerQueueCapacity = {}\nsupportActingMaster = {}\n\
             notifyMinBrokerIdChanged = {}\ndeleteTopicWithBrokerRegistration = {}\nunRegisterBrokerBatchTimeMillis = {}\n",
            cfg.scan_interval_ms.max(1),
            cfg.queue_capacity,
            cfg.support_acting_master,
            cfg.notify_min_broker_id_changed,
            cfg.delete_topic_with_broker_registration,
            cfg.batch_time_ms
        );
        std::fs::write(dir.join("namesrv.toml"), toml)?;
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()?).parse()?;
        let mut s = Server { bin: bin.to_path_buf(), dir: dir.to_path_buf(), addr, child: None };
        s.spawn()?;
        Ok(s)
    }

    /// Starts the process and waits until it accepts connections.
    pub fn spawn(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join("namesrv.log"))?;
        let child = Command::new(&self.bin)
            .arg("--configFile")
            .arg(self.dir.join("namesrv.toml"))
            .arg("--listenPort")
            .arg(self.addr.port().to_string())
            .arg("--bindAddress")
            .arg("127.0.0.1")
            .env("ROCKETMQ_HOME", &self.dir)
            .env("HOME", &self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", self.bin.display()))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                anyhow::bail!("the name server exited ({status}); see {}", self.dir.join("namesrv.log").display());
            }
            if Instant::now() > deadline {
                anyhow::bail!("the name server did not listen on {} within 30 s", self.addr);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// SIGKILL: no goodbye, every channel closes at once (the kernel sends the FINs).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn signal(&self, sig: libc::c_int) {
        if let Some(c) = &self.child {
            // SAFETY: kill(2) on our own child's pid; it cannot touch our memory.
            unsafe {
                libc::kill(c.id() as libc::pid_t, sig);
            }
        }
    }

    /// SIGSTOP: a hung process; its kernel still accepts and buffers.
    pub fn hang(&self) {
        self.signal(libc::SIGSTOP);
    }

    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.resume();
        self.kill();
    }
}
