//! The name index: the objects whose name contains a text, ignoring case,
//! found at a cost per match rather than per object.
//!
//! Each name is folded ([`fold_name`]) and cut into its trigrams: every
//! three consecutive bytes of the folded UTF-8 text. Each trigram maps to
//! the sorted slot numbers of the names having it. A folded text of three
//! bytes or more can only be inside names that have every one of its
//! trigrams, so intersecting their lists, shortest first, yields every
//! match and perhaps a few names holding the trigrams in other places;
//! the query checks each candidate exactly. A shorter text has no trigram
//! and the index cannot answer it ([`NameIndex::candidates`] says so).
//!
//! Byte trigrams work for any name: a UTF-8 text is inside another exactly
//! when its bytes are, and names in Kubernetes are mostly ASCII, where a
//! byte is a character.
//!
//! Memory: one `u32` per distinct trigram of each name (a name of n bytes
//! has at most n − 2), lists grown by an eighth at a time rather than
//! doubled, plus one 16-byte slot per object. A Deployment's Pod name of
//! 29 bytes (27 distinct trigrams) costs 147 bytes, as measured in
//! BENCHMARKS.md.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::object::ObjectKey;

/// A name folded for comparison: every character lower-cased on its own
/// (Unicode's per-character mapping, `Ä` → `ä`, `İ` → `i̇`), so that the
/// folded form of a part of a name is a part of the folded name. ASCII
/// names already in lower case, as nearly all Kubernetes names are, are
/// borrowed, not copied.
pub fn fold_name(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(text.to_ascii_lowercase())
        } else {
            Cow::Borrowed(text)
        }
    } else {
        Cow::Owned(text.chars().flat_map(char::to_lowercase).collect())
    }
}

/// Objects by the trigrams of their folded names.
#[derive(Default)]
pub struct NameIndex {
    /// Slot → the key whose name it indexes; `None` when free.
    slots: Vec<Option<ObjectKey>>,
    /// Free slots, reused before the table grows.
    free: Vec<u32>,
    /// Trigram → the slots of the names having it, ascending.
    lists: HashMap<u32, Vec<u32>, BuildHasherDefault<TrigramHasher>>,
}

impl NameIndex {
    /// Indexes the name of `key`. Names are immutable (a rename is a new
    /// object), so an update of an object needs no call at all. A name
    /// whose folded form is under three bytes has no trigram and takes no
    /// slot: no text the index answers can be inside it.
    pub fn insert(&mut self, key: &ObjectKey) {
        let trigrams = trigrams(&fold_name(key.name()));
        if trigrams.is_empty() {
            return;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(key.clone());
                slot
            }
            None => {
                self.slots.push(Some(key.clone()));
                (self.slots.len() - 1) as u32
            }
        };
        for trigram in trigrams {
            insert_sorted(self.lists.entry(trigram).or_default(), slot);
        }
    }

    /// Forgets the name of `key`; nothing happens if it is not indexed.
    pub fn remove(&mut self, key: &ObjectKey) {
        let trigrams = trigrams(&fold_name(key.name()));
        // The slot is found in the shortest list of the name's trigrams
        // rather than in a map from keys, which would cost some 40 bytes
        // per object: that list is short for any name with a rare part
        // (a Pod's random suffix: ~50 names at 100,000 Pods).
        let Some(slot) = trigrams
            .iter()
            .filter_map(|t| self.lists.get(t))
            .min_by_key(|list| list.len())
            .and_then(|list| {
                list.iter()
                    .copied()
                    .find(|&s| self.slots[s as usize].as_ref() == Some(key))
            })
        else {
            return;
        };
        for trigram in trigrams {
            if let Some(list) = self.lists.get_mut(&trigram) {
                remove_sorted(list, slot);
                if list.is_empty() {
                    self.lists.remove(&trigram);
                }
            }
        }
        self.slots[slot as usize] = None;
        self.free.push(slot);
    }

    /// At most how many names contain `folded` (a text folded with
    /// [`fold_name`]): the length of its trigrams' shortest list, read in
    /// a few hash lookups. `None` when the text is under three bytes.
    pub fn estimate(&self, folded: &str) -> Option<usize> {
        let trigrams = trigrams(folded);
        trigrams
            .iter()
            .map(|t| self.lists.get(t).map_or(0, Vec::len))
            .min()
    }

    /// The keys whose names may contain `folded` (a text folded with
    /// [`fold_name`]), in key order: every name containing it, and perhaps
    /// some holding its trigrams apart. `None` when the text is under
    /// three bytes, which the index cannot answer.
    pub fn candidates(&self, folded: &str) -> Option<Vec<ObjectKey>> {
        let trigrams = trigrams(folded);
        if trigrams.is_empty() {
            return None;
        }
        let mut lists = Vec::with_capacity(trigrams.len());
        for trigram in &trigrams {
            match self.lists.get(trigram) {
                Some(list) => lists.push(list.as_slice()),
                None => return Some(Vec::new()),
            }
        }
        lists.sort_unstable_by_key(|list| list.len());
        let (shortest, others) = lists.split_first()?;
        // Each other list is searched from where the previous slot was
        // found: the slots come in ascending order.
        let mut from = vec![0; others.len()];
        let mut keys: Vec<ObjectKey> = shortest
            .iter()
            .filter(|slot| {
                others.iter().zip(from.iter_mut()).all(|(list, at)| {
                    match list[*at..].binary_search(slot) {
                        Ok(i) => {
                            *at += i + 1;
                            true
                        }
                        Err(i) => {
                            *at += i;
                            false
                        }
                    }
                })
            })
            .filter_map(|&slot| self.slots[slot as usize].clone())
            .collect();
        keys.sort_unstable();
        Some(keys)
    }

    /// How many names are indexed.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Whether no name is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The distinct trigrams of a folded text, each three bytes in a `u32`.
fn trigrams(folded: &str) -> Vec<u32> {
    let mut out: Vec<u32> = folded
        .as_bytes()
        .windows(3)
        .map(|w| u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2]))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn insert_sorted(list: &mut Vec<u32>, slot: u32) {
    let Err(at) = list.binary_search(&slot) else {
        return;
    };
    // Growing by an eighth keeps unused capacity near 6% where doubling
    // leaves 25% on average, for at most eight copies of each element
    // over a list's life.
    if list.len() == list.capacity() {
        list.reserve_exact((list.len() / 8).max(2));
    }
    list.insert(at, slot);
}

fn remove_sorted(list: &mut Vec<u32>, slot: u32) {
    if let Ok(at) = list.binary_search(&slot) {
        list.remove(at);
        if list.capacity() > 2 * list.len() + 4 {
            list.shrink_to(list.len() + list.len() / 8);
        }
    }
}

/// A hash for trigrams: one multiplication and a fold of the high half
/// into the low one (the map indexes buckets by the low bits), where the
/// default SipHash would spend some 20 ns on each of a name's ~25
/// trigrams. Trigrams come from object names, which the cluster's users
/// choose; at worst a crafted set of names makes some lookups slower.
#[derive(Default)]
struct TrigramHasher(u64);

impl Hasher for TrigramHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        let h = (self.0 ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ns: &str, name: &str) -> ObjectKey {
        ObjectKey::new(ns, name)
    }

    fn found(index: &NameIndex, text: &str) -> Option<Vec<String>> {
        let keys = index.candidates(&fold_name(text))?;
        Some(keys.iter().map(ToString::to_string).collect())
    }

    /// What the index answers, checked exactly as the query does.
    fn matching(index: &NameIndex, text: &str) -> Vec<String> {
        let folded = fold_name(text);
        index
            .candidates(&folded)
            .unwrap()
            .into_iter()
            .filter(|k| fold_name(k.name()).contains(&*folded))
            .map(|k| k.to_string())
            .collect()
    }

    #[test]
    fn folds_per_character() {
        assert!(matches!(fold_name("web-1"), Cow::Borrowed("web-1")));
        assert_eq!(fold_name("Web-1"), "web-1");
        assert_eq!(fold_name("ÄÖÜ-straße"), "äöü-straße");
        // The Kelvin sign lower-cases to an ASCII `k`.
        assert_eq!(fold_name("\u{212A}ube"), "kube");
        // Greek capital sigma folds the same wherever it stands (a
        // whole-text lower-casing would make a final one `ς`).
        assert_eq!(fold_name("ΟΔΟΣ"), "οδοσ");
        assert!(fold_name("ΟΔΟΣ").contains(&*fold_name("Σ")));
    }

    #[test]
    fn finds_names_containing_a_text_in_key_order() {
        let mut index = NameIndex::default();
        for (ns, name) in [
            ("shop", "web-7d9f8c6b5-x2k4q"),
            ("shop", "web-7d9f8c6b5-a8b2c"),
            ("ads", "web-59c7d-x2k4q"),
            ("shop", "cart-0"),
            ("", "node-a"),
        ] {
            index.insert(&key(ns, name));
        }
        assert_eq!(index.len(), 5);
        assert_eq!(
            found(&index, "x2k4q").unwrap(),
            ["ads/web-59c7d-x2k4q", "shop/web-7d9f8c6b5-x2k4q"]
        );
        assert_eq!(
            found(&index, "web-").unwrap(),
            [
                "ads/web-59c7d-x2k4q",
                "shop/web-7d9f8c6b5-a8b2c",
                "shop/web-7d9f8c6b5-x2k4q"
            ]
        );
        assert_eq!(found(&index, "NODE").unwrap(), ["node-a"]);
        assert_eq!(found(&index, "zzz").unwrap(), Vec::<String>::new());
        // Under three bytes: not the index's to answer.
        assert_eq!(found(&index, "we"), None);
        assert_eq!(index.estimate("we"), None);
        assert_eq!(index.estimate("web"), Some(3));
        assert_eq!(index.estimate("web-5"), Some(1));
        assert_eq!(index.estimate("qqq"), Some(0));
    }

    #[test]
    fn candidates_are_a_superset_the_query_narrows() {
        let mut index = NameIndex::default();
        // Both have the trigrams of `abcab`; only one has the text.
        index.insert(&key("a", "abcab"));
        index.insert(&key("a", "bcab-abc"));
        assert_eq!(found(&index, "abcab").unwrap(), ["a/abcab", "a/bcab-abc"]);
        assert_eq!(matching(&index, "abcab"), ["a/abcab"]);
        // Overlapping occurrences, and repeated trigrams in a name.
        index.insert(&key("a", "aaaaaa"));
        assert_eq!(matching(&index, "aaaa"), ["a/aaaaaa"]);
        assert_eq!(index.estimate("aaa"), Some(1));
    }

    #[test]
    fn case_and_unicode() {
        let mut index = NameIndex::default();
        index.insert(&key("", "Système-Ünïcode"));
        index.insert(&key("", "ÅÄÖ"));
        index.insert(&key("", "user:Jane"));
        assert_eq!(matching(&index, "SYSTÈME"), ["Système-Ünïcode"]);
        assert_eq!(matching(&index, "ünï"), ["Système-Ünïcode"]);
        // One character of two bytes: under three, not the index's.
        assert_eq!(index.candidates(&fold_name("Ü")), None);
        assert_eq!(matching(&index, "åä"), ["ÅÄÖ"]);
        assert_eq!(matching(&index, "R:J"), ["user:Jane"]);
        // UTF-8 is self-synchronizing: a text's bytes inside a name's
        // bytes always start at a character.
        assert_eq!(matching(&index, "stè"), ["Système-Ünïcode"]);
        assert_eq!(matching(&index, "èm"), ["Système-Ünïcode"]);
    }

    #[test]
    fn delete_and_re_add_and_slot_reuse() {
        let mut index = NameIndex::default();
        let a = key("shop", "web-1");
        let b = key("shop", "web-2");
        let c = key("other", "web-1");
        for k in [&a, &b, &c] {
            index.insert(k);
        }
        index.remove(&a);
        assert_eq!(matching(&index, "web-1"), ["other/web-1"]);
        assert_eq!(index.len(), 2);
        // Removing what is not there changes nothing.
        index.remove(&a);
        index.remove(&key("x", "never"));
        index.remove(&key("x", "ab"));
        assert_eq!(index.len(), 2);
        // Re-added, it takes the freed slot, and is found again.
        index.insert(&a);
        assert_eq!(index.slots.len(), 3);
        assert_eq!(matching(&index, "web-1"), ["other/web-1", "shop/web-1"]);
        for k in [&a, &b, &c] {
            index.remove(k);
        }
        assert!(index.is_empty());
        assert!(index.lists.is_empty(), "no empty list is kept");
        // Short names are never indexed.
        index.insert(&key("", "ab"));
        assert!(index.is_empty());
    }

    #[test]
    fn agrees_with_a_scan_through_churn() {
        // Names made to share trigrams, inserted, deleted and re-added in
        // an order that reuses slots out of sequence.
        let names: Vec<ObjectKey> = (0..300)
            .map(|i| {
                key(
                    ["a", "b"][i % 2],
                    &format!("app-{}-{:x}", i % 7, i * 7919 % 4096),
                )
            })
            .collect();
        let mut index = NameIndex::default();
        let mut present = std::collections::BTreeSet::new();
        for (step, k) in names.iter().enumerate() {
            index.insert(k);
            present.insert(k.clone());
            if step % 3 == 2 {
                let gone = &names[step * 5 % (step + 1)];
                index.remove(gone);
                present.remove(gone);
            }
        }
        for text in ["app-3", "-1", "APP-6-F", "a", "pp-2-1", "nothing", "-"] {
            let folded = fold_name(text);
            let scan: Vec<&ObjectKey> = present
                .iter()
                .filter(|k| fold_name(k.name()).contains(&*folded))
                .collect();
            match index.candidates(&folded) {
                Some(keys) => {
                    let exact: Vec<&ObjectKey> = keys
                        .iter()
                        .filter(|k| fold_name(k.name()).contains(&*folded))
                        .collect();
                    assert_eq!(exact, scan, "{text}");
                    assert!(index.estimate(&folded).unwrap() >= keys.len(), "{text}");
                }
                None => assert!(folded.len() < 3, "{text}"),
            }
        }
        assert_eq!(index.len(), present.len());
    }

    /// A small deterministic generator (xorshift64*), so a failure
    /// reproduces.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
        }

        /// A text of `len` characters from a few that repeat (so names
        /// share trigrams), in both cases, some of them not ASCII.
        fn text(&mut self, len: usize) -> String {
            const CHARS: [char; 10] = ['a', 'b', 'A', 'B', '-', '1', 'é', 'É', 'ß', '\u{212A}'];
            (0..len).map(|_| CHARS[self.below(CHARS.len())]).collect()
        }
    }

    /// Property: after any sequence of inserts and removes, the index's
    /// candidates checked exactly are what a scan of the present names
    /// finds, for texts cut from present names (case changed) and for
    /// random ones of 1 to 6 characters; texts under three bytes are
    /// refused, never answered wrongly; estimates bound the candidates.
    #[test]
    fn random_operations_agree_with_a_scan() {
        for seed in 1..=20u64 {
            let mut random = Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let universe: Vec<ObjectKey> = (0..120)
                .map(|_| {
                    let len = random.below(12);
                    key(["a", "b"][random.below(2)], &random.text(len))
                })
                .collect();
            let mut index = NameIndex::default();
            let mut present = std::collections::BTreeSet::new();
            for step in 0..600 {
                let k = &universe[random.below(universe.len())];
                if present.remove(k) {
                    index.remove(k);
                } else {
                    index.insert(k);
                    present.insert(k.clone());
                }
                if step % 40 != 39 {
                    continue;
                }
                let indexed = present
                    .iter()
                    .filter(|k| fold_name(k.name()).len() >= 3)
                    .count();
                assert_eq!(index.len(), indexed, "seed {seed} step {step}");
                let mut texts: Vec<String> = (0..10)
                    .map(|_| {
                        let len = 1 + random.below(6);
                        random.text(len)
                    })
                    .collect();
                for k in present.iter().take(10) {
                    let chars: Vec<char> = k.name().chars().collect();
                    if chars.is_empty() {
                        continue;
                    }
                    let from = random.below(chars.len());
                    let to = from + 1 + random.below(chars.len() - from);
                    let cut: String = chars[from..to].iter().collect();
                    texts.push(cut.to_uppercase());
                }
                for text in &texts {
                    let folded = fold_name(text);
                    let scan: Vec<&ObjectKey> = present
                        .iter()
                        .filter(|k| fold_name(k.name()).contains(&*folded))
                        .collect();
                    let Some(candidates) = index.candidates(&folded) else {
                        assert!(folded.len() < 3, "seed {seed}: {text:?} refused");
                        continue;
                    };
                    assert!(candidates.windows(2).all(|w| w[0] < w[1]), "key order");
                    let exact: Vec<&ObjectKey> = candidates
                        .iter()
                        .filter(|k| fold_name(k.name()).contains(&*folded))
                        .collect();
                    assert_eq!(exact, scan, "seed {seed} step {step}: {text:?}");
                    assert!(index.estimate(&folded).unwrap() >= candidates.len());
                }
            }
            for k in &present {
                index.remove(k);
            }
            assert!(index.is_empty() && index.lists.is_empty(), "seed {seed}");
        }
    }
}
