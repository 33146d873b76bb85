//! The parsed fields of an object's header (uid, resourceVersion, labels,
//! owners' uids) in one allocation.
//!
//! Kept as separate strings, a Pod's header took a dozen small allocations
//! (each label's key and value, the uid, the owners' uids), each rounded
//! up by the allocator to 32 bytes or more and with its own 16-byte
//! pointer. Together with training the codec after 1 MiB instead of 2,
//! putting them in one allocation took the cache benchmark's Pods from
//! 2,560 to 1,755 bytes of resident memory each (BENCHMARKS.md). Here the
//! strings are written one after another, each
//! after its length, in one boxed slice. Reading one means walking the
//! strings before it: a handful of short hops, as objects have few labels.

/// Strings one after another, each preceded by its length as a LEB128
/// varint: the label count, the owner count, the uid, the
/// resourceVersion, each label's key and value (sorted by key), each
/// owner's uid.
pub(super) struct Header(Box<[u8]>);

impl Header {
    pub(super) fn new<'a>(
        uid: &str,
        resource_version: &str,
        mut labels: Vec<(&'a str, &'a str)>,
        owner_uids: Vec<&'a str>,
    ) -> Header {
        labels.sort_unstable();
        let strings = 2 + 2 * labels.len() + owner_uids.len();
        let text: usize = uid.len()
            + resource_version.len()
            + labels.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
            + owner_uids.iter().map(|u| u.len()).sum::<usize>();
        let mut out = Vec::with_capacity(text + strings + 4);
        put_len(&mut out, labels.len());
        put_len(&mut out, owner_uids.len());
        let mut put = |s: &str| {
            put_len(&mut out, s.len());
            out.extend_from_slice(s.as_bytes());
        };
        put(uid);
        put(resource_version);
        for (k, v) in &labels {
            put(k);
            put(v);
        }
        for owner in &owner_uids {
            put(owner);
        }
        Header(out.into_boxed_slice())
    }

    fn reader(&self) -> (Reader<'_>, usize, usize) {
        let mut reader = Reader(&self.0);
        let labels = reader.len();
        let owners = reader.len();
        (reader, labels, owners)
    }

    pub(super) fn uid(&self) -> &str {
        self.reader().0.string()
    }

    pub(super) fn resource_version(&self) -> &str {
        let mut reader = self.reader().0;
        reader.string();
        reader.string()
    }

    /// The labels, sorted by key.
    pub(super) fn labels(&self) -> impl Iterator<Item = (&str, &str)> {
        let (mut reader, labels, _) = self.reader();
        reader.string();
        reader.string();
        (0..labels).map(move |_| (reader.string(), reader.string()))
    }

    pub(super) fn label(&self, key: &str) -> Option<&str> {
        self.labels()
            .take_while(|(k, _)| *k <= key)
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    pub(super) fn owner_uids(&self) -> impl Iterator<Item = &str> {
        let (mut reader, labels, owners) = self.reader();
        for _ in 0..2 + 2 * labels {
            reader.string();
        }
        (0..owners).map(move |_| reader.string())
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.0.len()
    }
}

fn put_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads what [`Header::new`] wrote, front to back.
struct Reader<'h>(&'h [u8]);

impl<'h> Reader<'h> {
    fn len(&mut self) -> usize {
        let mut n = 0usize;
        let mut shift = 0;
        while let Some((&byte, rest)) = self.0.split_first() {
            self.0 = rest;
            n |= ((byte & 0x7f) as usize) << shift;
            if byte < 0x80 {
                break;
            }
            shift += 7;
        }
        n
    }

    fn string(&mut self) -> &'h str {
        let len = self.len().min(self.0.len());
        let (text, rest) = self.0.split_at(len);
        self.0 = rest;
        // Written from `&str`s by `Header::new`, so always UTF-8.
        std::str::from_utf8(text).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_was_given() {
        let long = "v".repeat(300);
        let header = Header::new(
            "uid-1",
            "42",
            vec![
                ("tier", "front"),
                ("app", "web"),
                ("long", &long),
                ("é", "ü"),
                ("", ""),
            ],
            vec!["rs-1", "", "rs-2"],
        );
        assert_eq!(header.uid(), "uid-1");
        assert_eq!(header.resource_version(), "42");
        assert_eq!(
            header.labels().collect::<Vec<_>>(),
            [
                ("", ""),
                ("app", "web"),
                ("long", &long[..]),
                ("tier", "front"),
                ("é", "ü")
            ]
        );
        assert_eq!(header.label("tier"), Some("front"));
        assert_eq!(header.label("long"), Some(&long[..]));
        assert_eq!(header.label(""), Some(""));
        assert_eq!(header.label("zzz"), None);
        assert_eq!(header.label("b"), None);
        assert_eq!(
            header.owner_uids().collect::<Vec<_>>(),
            ["rs-1", "", "rs-2"]
        );

        let empty = Header::new("", "", Vec::new(), Vec::new());
        assert_eq!((empty.uid(), empty.resource_version()), ("", ""));
        assert_eq!(empty.labels().count() + empty.owner_uids().count(), 0);
        assert_eq!(empty.heap_bytes(), 4);
    }
}
