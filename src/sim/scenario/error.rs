//! Scenario errors: every one names the file, line and column, says what is wrong and, where
//! it can, what would be right.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub help: Option<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.column, self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// All problems found in one file, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}

/// Turns byte spans into `line:column` (both 1-based, columns in characters).
///
/// The start of every line is found once: a file with thousands of errors then costs a binary
/// search and one line's characters per error, not a scan from the top of the file each time.
pub struct Locator<'a> {
    file: &'a Path,
    source: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Locator<'a> {
    pub fn new(file: &'a Path, source: &'a str) -> Self {
        let line_starts = std::iter::once(0).chain(source.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Locator { file, source, line_starts }
    }

    /// The 1-based line and column of byte `at` (clamped to the end of the text).
    pub fn position(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.source.len());
        // The last line starting at or before `at`.
        let line = self.line_starts.partition_point(|&s| s <= at);
        let start = self.line_starts[line - 1];
        let column = self.source.get(start..at).map_or(at - start, |l| l.chars().count()) + 1;
        (line, column)
    }

    pub fn error(&self, span: Range<usize>, message: impl Into<String>, help: Option<String>) -> ScenarioError {
        let (line, column) = self.position(span.start);
        ScenarioError { file: self.file.to_path_buf(), line, column, message: message.into(), help }
    }
}

/// The candidate nearest to `word`, if it is close enough to be a plausible typo: at most one
/// edit per three characters (`a1` → `a0`, `scan_intervall` → `scan_interval`).
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(edits, c)| *edits <= (word.len().max(c.len()) / 3).max(1))
        .min_by_key(|(edits, _)| *edits)
        .map(|(_, c)| c)
}

/// The help for a TOML syntax error at byte `at` that is really an unquoted duration
/// (`duration = 7m`, `at = 30s`): TOML has no duration type, so the parser stops at the unit
/// with "expected newline" — true, and no help to someone who wrote a time.
pub fn unquoted_duration(source: &str, at: usize) -> Option<String> {
    let at = at.min(source.len());
    if !source.is_char_boundary(at) {
        return None;
    }
    // Where the run of characters satisfying `keep` that ends `text` begins (a byte index on a
    // character boundary, whatever comes before).
    let tail = |text: &str, keep: fn(char) -> bool| {
        text.char_indices().rev().find(|(_, c)| !keep(*c)).map_or(0, |(i, c)| i + c.len_utf8())
    };
    let is_token = |c: char| c.is_ascii_alphanumeric() || c == '.';
    let start = tail(&source[..at], is_token);
    let end = source[at..].find(|c: char| !is_token(c)).map_or(source.len(), |i| at + i);
    let token = &source[start..end];
    // A bare number is a TOML integer: its error is a type error, not this one.
    if token.parse::<f64>().is_ok() || crate::sim::clock::parse_duration(token).is_err() {
        return None;
    }
    // The key it was given to, if it is on the same line: `latency = { base = 5ms }` → `base`.
    let before = source[..start].rsplit('\n').next().unwrap_or("").trim_end();
    let key = before.strip_suffix('=').map(|k| {
        let k = k.trim_end();
        &k[tail(k, |c| c.is_ascii_alphanumeric() || c == '_')..]
    });
    Some(match key {
        Some(key) if !key.is_empty() => format!("durations and times are quoted strings: {key} = \"{token}\""),
        _ => format!("durations and times are quoted strings: \"{token}\""),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_become_one_based_lines_and_columns() {
        let src = "a = 1\nbb = 2\n";
        let loc = Locator::new(Path::new("x.toml"), src);
        let e = loc.error(9..10, "bad", None);
        assert_eq!((e.line, e.column), (2, 4));
        assert_eq!(e.to_string(), "x.toml:2:4: bad");
        // The first byte, a newline itself, and the very end.
        assert_eq!(loc.position(0), (1, 1));
        assert_eq!(loc.position(5), (1, 6));
        assert_eq!(loc.position(6), (2, 1));
        assert_eq!(loc.position(99), (3, 1));
    }

    #[test]
    fn an_unquoted_duration_gets_its_quoted_spelling() {
        let src = "duration = 7m\nlatency = { base = 1.5s, jitter = \"0s\" }\nseed = 12x\n";
        let hint = |at| unquoted_duration(src, at);
        // The parser stops at the unit: `m` of `7m`, `s` of `1.5s`.
        assert_eq!(hint(12).as_deref(), Some("durations and times are quoted strings: duration = \"7m\""));
        assert_eq!(
            hint(src.find("s,").unwrap()).as_deref(),
            Some("durations and times are quoted strings: base = \"1.5s\"")
        );
        assert_eq!(hint(src.find("x").unwrap()), None, "12x is no duration");
        // Multi-byte text around the error never splits a character.
        assert_eq!(unquoted_duration("é = 7m", 6).as_deref(), Some("durations and times are quoted strings: \"7m\""));
        assert_eq!(unquoted_duration("ü", 1), None);
    }

    #[test]
    fn typos_find_their_key() {
        assert_eq!(nearest("scan_intervall", ["name", "scan_interval", "start"]), Some("scan_interval"));
        assert_eq!(nearest("zzz", ["name", "start"]), None);
    }
}
