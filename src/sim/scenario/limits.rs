//! How big a scenario may be, and reading one without trusting its size or its bytes.
//!
//! A run costs memory per process (a Nacos instance that is its own process takes about 22 KB, so
//! 400,000 of them exhaust 8 GB), and the loader's own work grows with every table. The limits
//! below keep the largest accepted scenario well under 2 GB and its loading to a few seconds;
//! they are listed in `docs/scenario-format.md` (Limits). Each sits above the largest scale
//! benchmark (`benches/scale.rs`: 1,000 brokers × 100 topics, 10,000 Nacos instances).

use super::error::{Locator, ScenarioError, ScenarioErrors};
use super::raw::{RawScenario, S};
use super::LoadError;
use std::io::Read;
use std::ops::Range;
use std::path::Path;

/// The largest scenario file: 8 MiB. The 10,000-instance benchmark is under 2 MB.
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;

/// The most tables of each kind, as `(table, limit)`. Name servers and naming servers are few in
/// any real cluster, and each of them holds every broker's or instance's entry.
pub const MAX_NAMESRVS: usize = 16;
pub const MAX_BROKERS: usize = 10_000;
pub const MAX_CLIENTS: usize = 10_000;
pub const MAX_NACOS_SERVERS: usize = 16;
pub const MAX_INSTANCES: usize = 20_000;
pub const MAX_SUBSCRIBERS: usize = 10_000;
/// Faults, actions and expectations, each.
pub const MAX_EVENTS: usize = 10_000;
/// Topics summed over every broker's `topics`: each name server holds one entry per broker and
/// topic, for every broker that registers with it.
pub const MAX_TOPICS: usize = 100_000;

/// Reads a scenario file as UTF-8, refusing a file over [`MAX_FILE_BYTES`] (without reading the
/// rest of it) or one that is not UTF-8 — both with the position where it goes wrong.
pub fn read_source(path: &Path) -> Result<String, LoadError> {
    let io = |source| LoadError::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() > MAX_FILE_BYTES {
        let prefix = String::from_utf8_lossy(&bytes[..MAX_FILE_BYTES]);
        let e = Locator::new(path, &prefix).error(prefix.len()..prefix.len(), too_big(), Some(too_big_help()));
        return Err(ScenarioErrors(vec![e]).into());
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let bad = e.as_bytes()[good];
        let text = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or_default();
        let msg = format!("the file is not valid UTF-8: byte 0x{bad:02x} cannot start or continue a character");
        let help = Some("save the scenario as UTF-8".to_string());
        ScenarioErrors(vec![Locator::new(path, text).error(good..good, msg, help)]).into()
    })
}

fn too_big() -> String {
    format!("the scenario file is larger than {MAX_FILE_BYTES} bytes (8 MiB), the most routesim loads")
}

fn too_big_help() -> String {
    "the limits keep a run within a few GB of memory; see \"Limits\" in docs/scenario-format.md".into()
}

/// The error for text given directly (`parse`) that is over the size limit, at the first byte
/// past it.
pub fn check_size(loc: &Locator, source: &str) -> Option<ScenarioError> {
    (source.len() > MAX_FILE_BYTES).then(|| loc.error(MAX_FILE_BYTES..MAX_FILE_BYTES, too_big(), Some(too_big_help())))
}

/// Errors for every kind of table with more entries than its limit, each at the first entry
/// past the limit. Checked before validation, so an oversized file costs nothing more.
pub fn check_counts(loc: &Locator, raw: &RawScenario) -> Vec<ScenarioError> {
    let tables: [(&str, usize, Option<Range<usize>>); 9] = [
        ("[[namesrv]]", MAX_NAMESRVS, raw.namesrv.get(MAX_NAMESRVS).map(S::span)),
        ("[[broker]]", MAX_BROKERS, raw.broker.get(MAX_BROKERS).map(S::span)),
        ("[[client]]", MAX_CLIENTS, raw.client.get(MAX_CLIENTS).map(S::span)),
        ("[[nacos_server]]", MAX_NACOS_SERVERS, raw.nacos_server.get(MAX_NACOS_SERVERS).map(S::span)),
        ("[[instance]]", MAX_INSTANCES, raw.instance.get(MAX_INSTANCES).map(S::span)),
        ("[[subscriber]]", MAX_SUBSCRIBERS, raw.subscriber.get(MAX_SUBSCRIBERS).map(S::span)),
        ("[[fault]]", MAX_EVENTS, raw.fault.get(MAX_EVENTS).map(S::span)),
        ("[[action]]", MAX_EVENTS, raw.action.get(MAX_EVENTS).map(S::span)),
        ("[[expect]]", MAX_EVENTS, raw.expect.get(MAX_EVENTS).map(S::span)),
    ];
    let mut errors: Vec<ScenarioError> = tables
        .into_iter()
        .filter_map(|(table, limit, past)| {
            let msg = format!("too many {table} tables: routesim loads at most {limit}");
            Some(loc.error(past?, msg, Some(too_big_help())))
        })
        .collect();
    let mut topics = raw.broker.iter().flat_map(|b| &b.get_ref().topics);
    if let Some(past) = topics.nth(MAX_TOPICS) {
        let msg = format!("too many topics: routesim loads at most {MAX_TOPICS}, summed over every broker's `topics`");
        errors.push(loc.error(past.span(), msg, Some(too_big_help())));
    }
    errors
}
