//! [`Name`]: an interned name (a cluster, a broker group, an `ip:port`), copied as one pointer
//! and compared as one.
//!
//! A name server looks its tables up by these names at every registration and heartbeat: 2,000
//! registrations a minute for a thousand brokers, each finding its cluster, its group and its
//! live entry. With `String` keys each lookup hashed the name's bytes and compared them with the
//! stored key's, both read from wherever the allocator had put them, and a registration request
//! carried reference-counted copies. A `Name` is made once, when a process is configured; from
//! then on it is a pointer to the one copy of its text, with that text's hash stored beside it.
//!
//! * **Equality is identity.** The interner gives every distinct text exactly one entry, so two
//!   names are equal exactly when they point at the same entry: no byte is read.
//! * **Hashing writes the stored hash**, computed once from the text with Fx (no per-process
//!   seed), so a map's layout is the same on every run and in every thread.
//! * **Order is the text's order**, as `String`'s was: every sorted view, trace line and digest
//!   reads exactly as it did. Nothing ever orders or prints by address.
//!
//! Entries are never freed. A run makes a few names per process, and every run in a process
//! (an `explore` sweep, the test suite) draws on the same small vocabulary, so the interner
//! stays at a few thousand entries however long the process lives.

use rustc_hash::FxHasher;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

/// An interned name. See the module docs.
#[derive(Clone, Copy)]
pub struct Name(&'static Entry);

/// One cache line holds what the hot paths read: the block the trace digest copies, the hash a
/// map lookup writes, and the text. A trace event's instance name is one of thousands and rarely
/// in cache; when the block was a separate allocation, writing it cost two misses in a row (the
/// entry, then the block), the larger part of the digest's time in the Nacos bench.
#[repr(C, align(64))]
struct Entry {
    /// `prefixed`, then zeros to [`BLOCK`] bytes, if it fits in that; a longer name's first
    /// [`BLOCK`] bytes (see [`Name::prefixed_block`]).
    block: [u8; BLOCK],
    hash: u64,
    text: &'static str,
    /// The text after its length as four little-endian bytes, in one piece: the form in which
    /// the trace digest writes every string, so writing a name there is one copy, not two.
    /// `text` is the tail of it.
    prefixed: &'static [u8],
}

/// The width of a name's fixed-size copy.
pub const BLOCK: usize = 32;

type Table = HashMap<&'static str, &'static Entry, rustc_hash::FxBuildHasher>;

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

impl Name {
    /// The name for `text`, interning it on first use. Takes a process-wide lock: call it where
    /// a name enters the model (configuration, a scenario, an operator's command), not per event.
    /// The one exception is a Distro message's ip-port client id, read back from its text
    /// (`nacos::naming::synced_ip::ip_client_key` says why that is bounded and no dearer).
    pub fn new(text: &str) -> Name {
        // A panic elsewhere while holding the lock leaves the table intact (an insert is one
        // call), so a poisoned lock is still safe to use.
        let mut table = table().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(entry) = table.get(text) {
            return Name(entry);
        }
        let len = u32::try_from(text.len()).expect("a name is shorter than 4 GiB");
        let prefixed: &'static [u8] = Box::leak([&len.to_le_bytes(), text.as_bytes()].concat().into_boxed_slice());
        let mut block = [0; BLOCK];
        let head = prefixed.len().min(BLOCK);
        block[..head].copy_from_slice(&prefixed[..head]);
        let text = std::str::from_utf8(&prefixed[4..]).expect("the tail is the text it was made from");
        let mut hasher = FxHasher::default();
        text.hash(&mut hasher);
        let entry: &'static Entry = Box::leak(Box::new(Entry { block, hash: hasher.finish(), text, prefixed }));
        table.insert(text, entry);
        Name(entry)
    }

    /// The name for `text` if anything has made it: a lookup by a name nobody ever used can
    /// stop here, without adding it.
    pub fn find(text: &str) -> Option<Name> {
        let table = table().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        table.get(text).map(|entry| Name(entry))
    }

    pub fn as_str(&self) -> &'static str {
        self.0.text
    }

    /// Whether the text is empty, without reading it: the empty text is interned once, so this
    /// is one pointer compare. A name server asks it of the address each registration finds
    /// under the broker's id (`StringUtils.isEmpty(oldAddr)`), an entry that is rarely in the
    /// cache: reading its length there was a miss per registration in the RocketMQ bench.
    pub fn is_empty(&self) -> bool {
        *self == Name::default()
    }

    /// The text after its length as four little-endian bytes (the trace digest's form of a
    /// string), made once with the name.
    pub fn length_prefixed(&self) -> &'static [u8] {
        self.0.prefixed
    }

    /// `length_prefixed`, followed by zeros to [`BLOCK`] bytes, if it fits in that; with it, how
    /// many of the block's bytes are the name's. The trace digest copies a name with it: a copy
    /// of constant width is a few register moves, where `length_prefixed`'s is a `memcpy` call
    /// that branches on the length (4.7–7% of the Nacos bench's time, nearly all for names).
    #[inline(always)]
    pub fn prefixed_block(&self) -> Option<(&'static [u8; BLOCK], usize)> {
        // The length is the block's first four bytes: nothing outside the block is read.
        let block = &self.0.block;
        let used = 4 + u32::from_le_bytes([block[0], block[1], block[2], block[3]]) as usize;
        (used <= BLOCK).then_some((block, used))
    }
}

/// The empty name, interned once and kept: no lock after the first.
impl Default for Name {
    fn default() -> Self {
        static EMPTY: OnceLock<Name> = OnceLock::new();
        *EMPTY.get_or_init(|| Name::new(""))
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Name {}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Name) -> std::cmp::Ordering {
        if self == other {
            std::cmp::Ordering::Equal
        } else {
            self.0.text.cmp(other.0.text)
        }
    }
}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl std::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.text
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.0.text
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.0.text == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.0.text == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        self.0.text == other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == other.0.text
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == other.0.text
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        self == other.0.text
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Name {
        Name::new(text)
    }
}

impl From<&Name> for Name {
    fn from(name: &Name) -> Name {
        *name
    }
}

impl From<&String> for Name {
    fn from(text: &String) -> Name {
        Name::new(text)
    }
}

impl From<String> for Name {
    fn from(text: String) -> Name {
        Name::new(&text)
    }
}

/// As a `str`'s, width and alignment included: `{:<14}` pads a name as it padded a `String`.
impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.0.text)
    }
}

/// As a string's: `"broker-a"`, quoted, so a `Debug` view reads as it did with `String`.
impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0.text, f)
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.text)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(Name::new(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::Name;
    use std::collections::BTreeSet;

    #[test]
    fn one_text_is_one_name_and_order_is_the_texts() {
        let a = Name::new("broker-a");
        let owned = String::from("broker-a");
        assert_eq!(a, Name::new(&owned));
        assert!(std::ptr::eq(a.as_str(), Name::from(owned).as_str()));
        assert_ne!(a, Name::new("broker-b"));
        // Made in reverse order, sorted as text: creation order must not leak into output.
        let made: Vec<Name> = ["z-last", "m-middle", "a-first"].into_iter().map(Name::new).collect();
        let sorted: Vec<&str> = made.iter().copied().collect::<BTreeSet<_>>().iter().map(|n| n.as_str()).collect();
        assert_eq!(sorted, ["a-first", "m-middle", "z-last"]);
        assert_eq!(format!("{a} {a:?}"), "broker-a \"broker-a\"");
        assert_eq!(format!("[{a:<10}] [{a:>9}]"), "[broker-a  ] [ broker-a]");
        assert_eq!(a, "broker-a");
        assert_eq!("broker-a", a);
        // Empty exactly when its text is, made from a `String` or from `Default` alike.
        assert!(!a.is_empty() && !Name::new(" ").is_empty());
        assert!(Name::new("").is_empty() && Name::default().is_empty() && Name::from(String::new()).is_empty());
    }

    #[test]
    fn names_made_on_other_threads_are_the_same_names() {
        let here = Name::new("10.0.0.7:10911");
        let there = std::thread::spawn(|| Name::new("10.0.0.7:10911")).join().expect("thread ran");
        assert_eq!(here, there);
        let hash = |n: Name| std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, n);
        assert_eq!(hash(here), hash(there));
        assert_eq!(Name::find("never-made-by-anyone"), None);
        assert_eq!(Name::find("10.0.0.7:10911"), Some(here));
    }

    #[test]
    fn a_short_names_block_is_its_prefixed_text_then_zeros() {
        let short = Name::new("ns1");
        let (block, used) = short.prefixed_block().expect("3 bytes fit");
        assert_eq!(used, 7);
        assert_eq!(&block[..7], b"\x03\0\0\0ns1");
        assert!(block[7..].iter().all(|&b| b == 0));
        assert_eq!(short.length_prefixed(), b"\x03\0\0\0ns1");
        assert!(Name::new(&"x".repeat(28)).prefixed_block().is_some());
        let long = Name::new(&"y".repeat(29));
        assert_eq!(long.prefixed_block(), None);
        assert_eq!(long.length_prefixed().len(), 33);
    }

    #[test]
    fn serialises_as_its_text() {
        let n = Name::new("DefaultCluster");
        assert_eq!(serde_json::to_string(&n).expect("serialises"), "\"DefaultCluster\"");
        let back: Name = serde_json::from_str("\"DefaultCluster\"").expect("parses");
        assert_eq!(back, n);
    }
}
