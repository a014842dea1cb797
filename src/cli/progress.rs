//! A progress line for long commands: shown on a terminal, silent when output is piped.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

pub struct Progress {
    what: &'static str,
    total: u64,
    enabled: bool,
    last: Mutex<Option<Instant>>,
}

impl Progress {
    pub fn new(what: &'static str, total: u64) -> Self {
        Progress { what, total, enabled: std::io::stderr().is_terminal(), last: Mutex::new(None) }
    }

    /// Redraws at most ten times a second.
    pub fn update(&self, done: u64) {
        if !self.enabled {
            return;
        }
        let mut last = self.last.lock().expect("no panics while held");
        if last.is_some_and(|t| t.elapsed().as_millis() < 100) && done < self.total {
            return;
        }
        *last = Some(Instant::now());
        let width = 30;
        let filled = (done * width / self.total.max(1)).min(width) as usize;
        let bar = format!("{}{}", "=".repeat(filled), " ".repeat(width as usize - filled));
        let _ = write!(std::io::stderr(), "\r[{bar}] {done}/{} {}", self.total, self.what);
        let _ = std::io::stderr().flush();
    }

    pub fn finish(&self) {
        if self.enabled {
            let _ = write!(std::io::stderr(), "\r{}\r", " ".repeat(60));
        }
    }
}
