//! One topic's row of `topicQueueTable`: brokerName -> QueueData, stored as the QueueData alone.
//!
//! # Why not a map
//!
//! Java keys the row by broker name, and the name is also the QueueData's own `brokerName`;
//! every write here keys a QueueData by its own name (the consistency check holds that). A
//! `BTreeMap<String, Rc<QueueData>>` therefore stored every name twice, once as a key of its own
//! allocation, and paid B-tree node slack on top: at bench size (2 name servers × 100 topics ×
//! 500 groups) the rows were most of a name server's memory. Here a row is the `Rc`s alone,
//! sorted by broker name: eight bytes an entry, the same lookups by binary search, and iteration
//! in the same key order as the map it replaces, so every answer and trace reads as before.
//!
//! A QueueData is immutable once shared (`Rc::make_mut` copies it), so one allocation may stand
//! in many rows: `registerBroker` gives every topic of a pass with equal queue counts and perm the
//! same one (see `register_topics.rs`).

use crate::rocketmq::types::QueueData;
use crate::sim::name::Name;
use std::fmt;
use std::rc::Rc;

/// brokerName -> QueueData for one topic, in broker-name order (see the module comment).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct QueueTable {
    by_name: Vec<Rc<QueueData>>,
}

impl QueueTable {
    fn find(&self, broker_name: &str) -> Result<usize, usize> {
        self.by_name.binary_search_by(|q| q.broker_name.as_str().cmp(broker_name))
    }

    pub fn get(&self, broker_name: &str) -> Option<&Rc<QueueData>> {
        self.find(broker_name).ok().map(|i| &self.by_name[i])
    }

    /// For a change of anything but the name (perm): the row's order rests on the names.
    pub(super) fn get_mut(&mut self, broker_name: &str) -> Option<&mut Rc<QueueData>> {
        self.find(broker_name).ok().map(|i| &mut self.by_name[i])
    }

    pub fn contains_key(&self, broker_name: &str) -> bool {
        self.find(broker_name).is_ok()
    }

    /// Puts `queue_data` under its own broker name; returns the one it replaced.
    pub(super) fn insert(&mut self, queue_data: Rc<QueueData>) -> Option<Rc<QueueData>> {
        match self.find(&queue_data.broker_name) {
            Ok(i) => Some(std::mem::replace(&mut self.by_name[i], queue_data)),
            Err(i) => {
                self.by_name.insert(i, queue_data);
                None
            }
        }
    }

    /// Puts what `make` builds under `broker_name`, unless the row holds a QueueData for that
    /// name which `stands`: one search for the question and the edit. True if the row changed.
    ///
    /// `hint` is where the name was in the row the caller looked at before, and is left where it
    /// is in this one. A registration walks its topics' rows one after another, and brokers that
    /// serve the same topics sit at the same place in each row, so the hint is nearly always
    /// right: one identity compare instead of a binary search whose every probe reads another
    /// group's name from memory. A name new to the rows (a group's first registration, which
    /// puts it in each of its topics' rows) is not at the hint but belongs there, which the two
    /// neighbours tell. A wrong hint costs those compares, and the search runs as before.
    pub(super) fn put_unless(
        &mut self,
        broker_name: Name,
        hint: &mut usize,
        stands: impl FnOnce(&QueueData) -> bool,
        make: impl FnOnce() -> Rc<QueueData>,
    ) -> bool {
        let at = match self.by_name.get(*hint) {
            Some(q) if q.broker_name == broker_name => Ok(*hint),
            _ if self.belongs_at(*hint, broker_name) => Err(*hint),
            _ => self.find(&broker_name),
        };
        match at {
            Ok(i) if stands(&self.by_name[i]) => {
                *hint = i;
                false
            }
            Ok(i) => {
                self.by_name[i] = make();
                *hint = i;
                true
            }
            Err(i) => {
                self.by_name.insert(i, make());
                *hint = i;
                true
            }
        }
    }

    /// Whether `broker_name`, absent from the row, would be inserted at `i`: after the name
    /// before it and before the name at it.
    fn belongs_at(&self, i: usize, broker_name: Name) -> bool {
        let after_prev = i == 0 || self.by_name.get(i - 1).is_some_and(|q| q.broker_name < broker_name);
        after_prev && self.by_name.get(i).is_none_or(|q| broker_name < q.broker_name)
    }

    pub(super) fn remove(&mut self, broker_name: &str) -> Option<Rc<QueueData>> {
        self.find(broker_name).ok().map(|i| self.by_name.remove(i))
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The broker names, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Name> + ExactSizeIterator + Clone {
        self.by_name.iter().map(|q| &q.broker_name)
    }

    /// The QueueData, in broker-name order.
    pub fn values(&self) -> std::slice::Iter<'_, Rc<QueueData>> {
        self.by_name.iter()
    }

    /// `(brokerName, QueueData)` pairs, as the map's entries were.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Name, &Rc<QueueData>)> + ExactSizeIterator + Clone {
        self.by_name.iter().map(|q| (&q.broker_name, q))
    }
}

impl<'a> IntoIterator for &'a QueueTable {
    type Item = (&'a Name, &'a Rc<QueueData>);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, Rc<QueueData>>, fn(&Rc<QueueData>) -> (&Name, &Rc<QueueData>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.by_name.iter().map(|q| (&q.broker_name, q))
    }
}

impl std::ops::Index<&str> for QueueTable {
    type Output = Rc<QueueData>;

    fn index(&self, broker_name: &str) -> &Rc<QueueData> {
        self.get(broker_name).unwrap_or_else(|| panic!("no QueueData of {broker_name}"))
    }
}

/// Reads as the map it replaced did (`{"broker-a": QueueData { .. }}`).
impl fmt::Debug for QueueTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qd(name: &str, perm: u32) -> Rc<QueueData> {
        Rc::new(QueueData {
            broker_name: name.into(),
            read_queue_nums: 4,
            write_queue_nums: 4,
            perm,
            topic_sys_flag: 0,
        })
    }

    #[test]
    fn a_row_keeps_broker_name_order_and_replaces_by_name() {
        let mut row = QueueTable::default();
        for name in ["b", "c", "a"] {
            assert!(row.insert(qd(name, 6)).is_none());
        }
        assert_eq!(row.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(row.insert(qd("b", 4)).map(|q| q.perm), Some(6));
        assert_eq!(row["b"].perm, 4);
        assert_eq!(row.remove("a").map(|q| q.broker_name).as_deref(), Some("a"));
        assert!(!row.contains_key("a") && row.len() == 2);
        assert_eq!(format!("{row:?}").matches("QueueData").count(), 2);
    }

    /// A hint is only a first guess: any hint, right, wrong or past the end, leaves the row
    /// as a binary search alone would, and is left at the name's place.
    #[test]
    fn put_unless_lands_in_name_order_whatever_the_hint() {
        let names = ["d", "b", "f", "a", "e", "c", "b", "f"];
        for start in [0, 1, 3, 7, 100] {
            let mut row = QueueTable::default();
            let mut hint = start;
            for (k, name) in names.iter().enumerate() {
                let perm = if k % 2 == 0 { 6 } else { 4 };
                let changed = row.put_unless(Name::new(name), &mut hint, |q| q.perm == perm, || qd(name, perm));
                assert_eq!(row.keys().nth(hint).map(|n| n.as_str()), Some(*name), "hint {start}, put {k}");
                assert!(changed, "every put here changes the row (a new name, or a new perm)");
                hint = (hint + k) % 9;
            }
            assert_eq!(row.keys().map(|n| n.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "d", "e", "f"]);
            let mut hint = 4;
            assert!(!row.put_unless(Name::new("e"), &mut hint, |_| true, || unreachable!("it stands")));
            assert_eq!(hint, 4);
            // A new name goes where it belongs, the hint right or wrong.
            for start in [2, 0, 6, 9] {
                let (mut row, mut hint) = (row.clone(), start);
                assert!(row.put_unless(Name::new("bb"), &mut hint, |_| true, || qd("bb", 6)));
                assert_eq!(hint, 2);
                assert_eq!(row.keys().map(|n| n.as_str()).collect::<Vec<_>>(), ["a", "b", "bb", "c", "d", "e", "f"]);
            }
        }
    }
}
