//! How a diagram's routine traffic and repeated steps are folded when it is written.
//!
//! Routine messages are kept one by one ([`Msg`], 16 bytes each) until the diagram is written,
//! because a line drawn later may cite one of them: the expiry that counts from a broker's last
//! registration, the fault that the last beat before it explains. A cited message is drawn as an
//! arrow of its own, at its own time, and the routine traffic on either side of it is folded
//! into a `loop` per stretch:
//!
//! - a stretch of one message is that message's arrow;
//! - a stretch within one instant is an arrow per message (with its count), never a loop
//!   "from 20.008s to 20.008s", which would claim a stretch of time that is not there;
//! - anything longer is one `loop` naming each message once with its count.

use super::diagram::Item;
use crate::sim::clock::SimTime;
use std::collections::{BTreeMap, HashMap};

/// A routine message's identity for folding: (from, to, label, arrow style).
pub type MsgKey = (String, String, String, &'static str);

/// One routine message as drawn.
#[derive(Clone, Copy, Debug)]
pub struct Msg {
    pub t: SimTime,
    /// Index into [`Keys`].
    pub key: u32,
    /// Cited by a later line (or the last one before a fault): drawn outside the folds.
    pub cited: bool,
    /// Drawn when it was sent, before anyone knew whether it would arrive: a loss reported in
    /// the same moment turns it into a lost message instead of a second line.
    pub in_flight: bool,
}

/// Every routine message key seen, interned: a run sends the same few thousand times.
#[derive(Default)]
pub struct Keys {
    all: Vec<MsgKey>,
    ids: HashMap<MsgKey, u32>,
}

impl Keys {
    pub fn id(&mut self, key: MsgKey) -> u32 {
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.all.len() as u32;
        self.all.push(key.clone());
        self.ids.insert(key, id);
        id
    }

    pub fn get(&self, id: u32) -> &MsgKey {
        &self.all[id as usize]
    }
}

/// The items to write for one stretch of routine messages, in time order.
pub fn expand(msgs: &[Msg], keys: &Keys, out: &mut Vec<Item>) {
    let mut stretch: Vec<Msg> = Vec::new();
    for m in msgs {
        if m.cited {
            fold_stretch(&stretch, keys, out);
            stretch.clear();
            out.push(arrow(keys.get(m.key), m.t, 1));
        } else {
            stretch.push(*m);
        }
    }
    fold_stretch(&stretch, keys, out);
}

fn arrow((from, to, label, style): &MsgKey, t: SimTime, n: u32) -> Item {
    let label = if n > 1 { format!("{label} ×{n}") } else { label.clone() };
    Item::Arrow { from: from.clone(), to: to.clone(), style, t, label, in_flight: false }
}

fn fold_stretch(stretch: &[Msg], keys: &Keys, out: &mut Vec<Item>) {
    let (Some(first), Some(last)) = (stretch.first(), stretch.last()) else { return };
    let mut counts: BTreeMap<&MsgKey, u32> = BTreeMap::new();
    for m in stretch {
        *counts.entry(keys.get(m.key)).or_default() += 1;
    }
    if first.t == last.t {
        out.extend(counts.into_iter().map(|(k, n)| arrow(k, first.t, n)));
    } else {
        let counts = counts.into_iter().map(|(k, n)| (k.clone(), n)).collect();
        out.push(Item::Loop { from: first.t, to: last.t, counts });
    }
}

/// The longest block of steps considered when looking for repetitions.
const MAX_PERIOD: usize = 24;
/// Fewer repetitions than this are drawn out in full: two are easy to read, three are a pattern.
const MIN_REPEATS: usize = 3;

/// Replaces each run of at least [`MIN_REPEATS`] identical blocks with one `Repeat`, greedily
/// from the start, preferring the run that covers the most items (then the shortest block).
/// Items count as "the same" when they differ only in times and durations ([`Item::key`]).
pub fn fold_repeats(items: Vec<Item>) -> Vec<Item> {
    let keys: Vec<String> = items.iter().map(Item::key).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut best: Option<(usize, usize)> = None;
        for p in 1..=MAX_PERIOD {
            if i + MIN_REPEATS * p > items.len() {
                break;
            }
            let mut r = 1;
            while i + (r + 1) * p <= items.len() && keys[i + r * p..i + (r + 1) * p] == keys[i..i + p] {
                r += 1;
            }
            if r >= MIN_REPEATS && best.is_none_or(|(bp, br)| r * p > bp * br) {
                best = Some((p, r));
            }
        }
        match best {
            Some((p, r)) => {
                let (from, to) = (items[i].first_t(), items[i + p * r - 1].last_t());
                out.push(Item::Repeat { from, to, times: r, items: items[i..i + p].to_vec() });
                i += p * r;
            }
            None => {
                out.push(items[i].clone());
                i += 1;
            }
        }
    }
    out
}

/// The label with every time or duration (`25.001s`, `1m30s`, `250ms`) and count (`×3`) blanked.
pub fn timeless(label: &str) -> String {
    let b = label.as_bytes();
    let (mut out, mut i) = (String::with_capacity(label.len()), 0);
    while i < b.len() {
        let starts_number = b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if starts_number || label[i..].starts_with('×') {
            let mut j = if b[i].is_ascii_digit() { i } else { i + '×'.len_utf8() };
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.' || matches!(b[j], b'h' | b'm' | b's')) {
                j += 1;
            }
            let unit = label[i..j].ends_with(['h', 'm', 's']);
            if unit || label[i..].starts_with('×') {
                out.push('#');
                i = j;
                continue;
            }
        }
        let c = label[i..].chars().next().expect("in bounds");
        out.push(c);
        i += c.len_utf8();
    }
    out
}
