//! A progress line for long commands (`check`, `explore`): drawn on stderr when it is a
//! terminal, silent when output is piped — so logs and CI output carry only results.
//!
//! Wall-clock time is fine here: it only throttles redrawing and never reaches a run.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

/// The line's text: `[=========                     ] 7/22 scenarios`.
fn line(done: u64, total: u64, what: &str) -> String {
    let width = 30;
    let filled = (done * width / total.max(1)).min(width) as usize;
    format!("\r[{}{}] {done}/{total} {what}", "=".repeat(filled), " ".repeat(width as usize - filled))
}

/// Where the line is drawn, when it last was, and the widest it has been (in characters).
type Screen = Mutex<(Box<dyn Write + Send>, Option<Instant>, usize)>;

pub struct Progress {
    what: &'static str,
    total: u64,
    /// `None` draws nothing.
    out: Option<Screen>,
}

impl Progress {
    /// A progress line on stderr if stderr is a terminal.
    pub fn new(what: &'static str, total: u64) -> Self {
        Self::on(what, total, Box::new(std::io::stderr()), std::io::stderr().is_terminal())
    }

    /// A progress line on `out` if it is a terminal, none otherwise.
    fn on(what: &'static str, total: u64, out: Box<dyn Write + Send>, terminal: bool) -> Self {
        Self::to(what, total, terminal.then_some(out))
    }

    /// A progress line drawn on `out`, or nowhere.
    pub fn to(what: &'static str, total: u64, out: Option<Box<dyn Write + Send>>) -> Self {
        Progress { what, total, out: out.map(|o| Mutex::new((o, None, 0))) }
    }

    /// Redraws at most ten times a second, and always for the last item. Safe to call from
    /// every worker thread.
    pub fn update(&self, done: u64) {
        let Some(out) = &self.out else { return };
        let mut guard = out.lock().expect("no panics while held");
        let (out, last, widest) = &mut *guard;
        if last.is_some_and(|t| t.elapsed().as_millis() < 100) && done < self.total {
            return;
        }
        *last = Some(Instant::now());
        let text = line(done, self.total, self.what);
        *widest = (*widest).max(text.chars().count());
        let _ = write!(out, "{text}");
        let _ = out.flush();
    }

    /// Erases the line so the results print on a clean one. As wide as the widest line drawn:
    /// a fixed 60 columns left the tail of a long run's `86400/86400 virtual seconds` on screen
    /// under output piped elsewhere. (Spaces rather than an ANSI erase: any terminal has them.)
    pub fn finish(&self) {
        if let Some(out) = &self.out {
            let (out, _, widest) = &mut *out.lock().expect("no panics while held");
            if *widest > 0 {
                let _ = write!(out, "\r{}\r", " ".repeat(*widest));
                let _ = out.flush();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_line_fills_in_proportion_and_names_what_is_counted() {
        assert_eq!(line(0, 4, "cases"), format!("\r[{}] 0/4 cases", " ".repeat(30)));
        assert_eq!(line(2, 4, "cases"), format!("\r[{}{}] 2/4 cases", "=".repeat(15), " ".repeat(15)));
        assert_eq!(line(9, 4, "cases"), format!("\r[{}] 9/4 cases", "=".repeat(30)), "never overflows");
    }

    #[test]
    fn the_last_item_is_always_drawn_and_finish_erases_the_line() {
        let buf = Shared::default();
        let p = Progress::to("scenarios", 3, Some(Box::new(buf.clone())));
        p.update(1);
        p.update(2); // usually within 100 ms of the first, so skipped (not asserted: wall clock)
        p.update(3);
        p.finish();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("1/3 scenarios") && text.contains("3/3 scenarios"), "{text:?}");
        let width = line(3, 3, "scenarios").chars().count();
        assert!(text.ends_with(&format!("\r{}\r", " ".repeat(width))), "{text:?}");
    }

    #[test]
    fn finish_erases_a_line_longer_than_sixty_columns_and_nothing_when_none_was_drawn() {
        // A day-long run's line is 61 characters with its leading `\r`; the erase used to be 60.
        let buf = Shared::default();
        let p = Progress::to("virtual seconds", 86_400, Some(Box::new(buf.clone())));
        p.update(86_400);
        p.finish();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let (drawn, erase) = text.split_at(text.rfind('\r').map(|end| text[..end].rfind('\r').unwrap()).unwrap());
        assert!(drawn.chars().count() > 60, "{drawn:?}");
        assert!(erase.chars().filter(|c| *c == ' ').count() >= drawn.chars().count(), "erased whole: {text:?}");
        // A command that never drew leaves the terminal as it was.
        let quiet = Shared::default();
        Progress::to("cases", 5, Some(Box::new(quiet.clone()))).finish();
        assert!(quiet.0.lock().unwrap().is_empty());
    }

    #[test]
    fn without_a_terminal_nothing_is_drawn() {
        let piped = Shared::default();
        let p = Progress::on("scenarios", 3, Box::new(piped.clone()), false);
        p.update(3);
        p.finish();
        assert!(piped.0.lock().unwrap().is_empty(), "a pipe gets no progress text");
        // The control: the same calls on a terminal draw.
        let terminal = Shared::default();
        let p = Progress::on("scenarios", 3, Box::new(terminal.clone()), true);
        p.update(3);
        assert!(!terminal.0.lock().unwrap().is_empty(), "a terminal gets the line");
    }
}
