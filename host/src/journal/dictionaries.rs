//! The cache's dictionaries that packed entries ([`super::record::Packed`])
//! were compressed with.
//!
//! Each is kept in the journal's `dictionaries` table, with the count of
//! entries and bases that use it in `dictionaryUses`; it goes when the
//! last of them goes. While a journal is open, its dictionaries are also
//! in this process's registry, where decoding an entry finds them by id
//! (an id is a hash of the dictionary's bytes, so two journals sharing
//! one id share the same dictionary).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use crate::store::Dictionary;

/// A dictionary, and how many open journals hold it.
type Known = (Arc<Dictionary>, usize);

/// Every open journal's dictionaries, by id.
static KNOWN: LazyLock<Mutex<HashMap<u64, Known>>> = LazyLock::new(Mutex::default);

/// The dictionary of id `id`, if an open journal holds it.
pub(super) fn get(id: u64) -> Option<Arc<Dictionary>> {
    KNOWN
        .lock()
        .get(&id)
        .map(|(dictionary, _)| dictionary.clone())
}

/// The dictionaries one journal holds in the registry; released when it
/// is dropped (the journal and its writer both gone).
#[derive(Default)]
pub(super) struct Held {
    ids: Mutex<HashSet<u64>>,
}

impl Held {
    /// Puts `dictionary` in the registry for this journal.
    pub(super) fn hold(&self, dictionary: &Arc<Dictionary>) {
        if !self.ids.lock().insert(dictionary.id()) {
            return;
        }
        KNOWN
            .lock()
            .entry(dictionary.id())
            .or_insert_with(|| (dictionary.clone(), 0))
            .1 += 1;
    }

    /// Takes the dictionary `id` out of the registry for this journal.
    pub(super) fn release(&self, id: u64) {
        if self.ids.lock().remove(&id) {
            release(id);
        }
    }
}

fn release(id: u64) {
    let mut known = KNOWN.lock();
    if let Some((_, holders)) = known.get_mut(&id) {
        *holders -= 1;
        if *holders == 0 {
            known.remove(&id);
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        for id in self.ids.get_mut().drain() {
            release(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dictionary_is_found_while_a_journal_holds_it() {
        let dictionary = Arc::new(Dictionary::read(b"a dictionary of no use", 1));
        let id = dictionary.id();
        let (first, second) = (Held::default(), Held::default());
        first.hold(&dictionary);
        first.hold(&dictionary);
        second.hold(&dictionary);
        assert!(get(id).is_some());
        first.release(id);
        assert!(get(id).is_some(), "the second journal still holds it");
        drop(second);
        assert!(get(id).is_none());
    }
}
