//! Objects straight from the bytes the API server sent, parsed once
//! ([`StoredObject::from_raw`]).
//!
//! A list page or a watch event carries each object as compact JSON (the
//! API server writes no whitespace). Building a `serde_json::Value` of it
//! and writing that out again, as [`StoredObject::from_value`] does, costs
//! several hundred allocations per Pod and most of the ingest time. Here
//! the text is kept as it came: one pass checks that it is compact and
//! finds its top-level members, `metadata` alone (without managedFields) is
//! read into the header's fields, and the stored text is the received one with `kind` and
//! `apiVersion` put in front when missing (list items lack them) and
//! `metadata.managedFields` cut out unless kept. Anything else (text with
//! whitespace, no `metadata` object) takes the `Value` way.

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::header::Header;
use super::{Ingest, Managers, Metadata, ObjectError, ObjectKey, StoredObject};
use crate::gvk::Gvk;
use crate::json_text::TopLevel;
use crate::store::codec::{Body, Packer};

impl StoredObject {
    /// Prepares an object for the cache from its JSON text, as
    /// [`StoredObject::from_value`] does from a parsed value, without
    /// building one. The stored text keeps the members (and their order) of
    /// the text received.
    pub fn from_raw(
        raw: &RawValue,
        gvk: &Gvk,
        ingest: impl Into<Ingest>,
    ) -> Result<StoredObject, ObjectError> {
        Self::from_raw_packed(raw, gvk, ingest, None)
    }

    /// As [`StoredObject::from_raw`], compressing the object with `packer`
    /// (its cache's [`Cache::packer`](crate::store::Cache::packer)) as it
    /// is read: the JSON to store is written to a buffer each thread
    /// keeps, and only its compressed form is allocated. Without a packer
    /// the body stays plain, for [`Cache::pack`](crate::store::Cache::pack).
    pub fn from_raw_packed(
        raw: &RawValue,
        gvk: &Gvk,
        ingest: impl Into<Ingest>,
        packer: Option<&Packer<'_>>,
    ) -> Result<StoredObject, ObjectError> {
        let ingest = ingest.into();
        // A `RawValue` is valid JSON: only its layout is left to check.
        let json = raw.get().as_bytes();
        let Some(received) = Received::read(json) else {
            return by_value(json, gvk, ingest);
        };
        STORED.with_borrow_mut(|out| {
            let stored = received.store(out, gvk, ingest);
            let object = match stored? {
                Read::Parts {
                    key,
                    header,
                    index,
                    managers,
                } => StoredObject {
                    key,
                    header,
                    body: match packer {
                        Some(packer) => packer.body(out),
                        None => Body::Plain(out.as_slice().into()),
                    },
                    index,
                    fields: Box::default(),
                    managers,
                },
                Read::Whole(object) => object,
            };
            // A rare large object does not keep its room in every thread.
            if out.capacity() > KEPT_CAPACITY {
                *out = Vec::new();
            }
            Ok(object)
        })
    }
}

/// The most room a thread keeps for the JSON of the next object.
const KEPT_CAPACITY: usize = 1 << 20;

thread_local! {
    /// Where an object's JSON is written before it is compressed or copied
    /// to a box of its size: no allocation for it per object.
    static STORED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

fn by_value(json: &[u8], gvk: &Gvk, ingest: Ingest) -> Result<StoredObject, ObjectError> {
    let value: Value =
        serde_json::from_slice(json).map_err(|e| ObjectError::InvalidJson(Arc::new(e)))?;
    StoredObject::from_value(value, gvk, ingest)
}

/// What [`Received::store`] read: the parts of an object whose JSON it
/// wrote, or an object it had to build the `Value` way.
enum Read {
    Parts {
        key: ObjectKey,
        header: Header,
        index: TopLevel,
        managers: Managers,
    },
    Whole(StoredObject),
}

/// A compact JSON object and where its top-level members are.
struct Received<'j> {
    json: &'j [u8],
    /// `(key with quotes, value)` of each member, in order.
    members: Vec<(&'j [u8], &'j [u8])>,
    /// Where the value of `metadata` starts in `json`, and where its
    /// members are: found in the same scan.
    metadata: Option<(usize, TopLevel)>,
}

impl<'j> Received<'j> {
    fn read(json: &'j [u8]) -> Option<Received<'j>> {
        // `None` for text with whitespace, too.
        let (index, metadata) = TopLevel::scan_nested(json, b"\"metadata\"")?;
        Some(Received {
            json,
            members: index.members(json).collect(),
            metadata,
        })
    }

    fn member(&self, key: &str) -> Option<&'j [u8]> {
        let quoted =
            |raw: &[u8]| raw.len() == key.len() + 2 && &raw[1..raw.len() - 1] == key.as_bytes();
        self.members
            .iter()
            .find(|(raw, _)| quoted(raw))
            .map(|(_, value)| *value)
    }

    /// Writes the JSON to store to `out` (emptied first) and reads its
    /// header.
    fn store(self, out: &mut Vec<u8>, gvk: &Gvk, ingest: Ingest) -> Result<Read, ObjectError> {
        let keep_managed_fields = ingest.keep_managed_fields;
        if self
            .member("metadata")
            .is_none_or(|text| text.first() != Some(&b'{'))
        {
            return Err(ObjectError::NoName);
        }
        let is_string = |key| self.member(key).is_some_and(|v| v.first() == Some(&b'"'));

        out.clear();
        out.reserve(self.json.len() + 48);
        let mut offsets = Vec::with_capacity(self.members.len() * 2 + 4);
        out.push(b'{');
        let mut put = |out: &mut Vec<u8>, key: &[u8], write: &mut dyn FnMut(&mut Vec<u8>)| {
            if out.len() > 1 {
                out.push(b',');
            }
            offsets.push(out.len() as u32);
            out.extend_from_slice(key);
            out.push(b':');
            offsets.push(out.len() as u32);
            write(out);
        };
        // Serializing a string into a Vec cannot fail.
        if !is_string("apiVersion") {
            put(out, b"\"apiVersion\"", &mut |out| {
                let _ = serde_json::to_writer(out, &gvk.api_version());
            });
        }
        if !is_string("kind") {
            put(out, b"\"kind\"", &mut |out| {
                let _ = serde_json::to_writer(out, &gvk.kind);
            });
        }
        // Where the stored `metadata` is: read from there, without the
        // managedFields the header does not need (a third of a Pod's text).
        let mut metadata_at = 0..0;
        let mut managers = Managers::default();
        for (key, value) in &self.members {
            let replaced = (&key[1..key.len() - 1] == b"apiVersion" && !is_string("apiVersion"))
                || (&key[1..key.len() - 1] == b"kind" && !is_string("kind"));
            if replaced {
                continue;
            }
            if &key[1..key.len() - 1] == b"metadata" {
                put(out, key, &mut |out| {
                    let start = out.len();
                    if ingest.who {
                        let at = value.as_ptr() as usize - self.json.as_ptr() as usize;
                        let fields = match self.metadata.as_ref().filter(|(start, _)| *start == at)
                        {
                            Some((_, index)) => index.get(value, &["managedFields"]),
                            None => TopLevel::scan(value)
                                .and_then(|index| index.get(value, &["managedFields"])),
                        };
                        if let Some(fields) = fields {
                            managers = Managers::read(fields);
                        }
                    }
                    if keep_managed_fields {
                        out.extend_from_slice(value);
                    } else {
                        // The index the first scan made of this very value;
                        // a second `metadata` member is scanned on its own.
                        let at = value.as_ptr() as usize - self.json.as_ptr() as usize;
                        let index = self.metadata.as_ref().filter(|(start, _)| *start == at);
                        without_managed_fields(out, value, index.map(|(_, index)| index));
                    }
                    metadata_at = start..out.len();
                });
            } else {
                put(out, key, &mut |out| out.extend_from_slice(value));
            }
        }
        out.push(b'}');

        // Labels that are not a map of strings and the like: the `Value`
        // way reads what it can of them.
        let Ok(metadata) = serde_json::from_slice::<Metadata>(&out[metadata_at]) else {
            return by_value(self.json, gvk, ingest).map(Read::Whole);
        };
        let (key, header) = metadata.read()?;
        Ok(Read::Parts {
            key,
            header,
            index: TopLevel::new(offsets),
            managers,
        })
    }
}

/// Writes the compact object `metadata` without its `managedFields` member;
/// `index` is where its members are, when the scan of the whole object
/// found them.
fn without_managed_fields(out: &mut Vec<u8>, metadata: &[u8], index: Option<&TopLevel>) {
    let scanned;
    let index = match index {
        Some(index) => index,
        None => match TopLevel::scan(metadata) {
            Some(index) => {
                scanned = index;
                &scanned
            }
            None => {
                out.extend_from_slice(metadata);
                return;
            }
        },
    };
    out.push(b'{');
    let mut first = true;
    for (key, value) in index.members(metadata) {
        if key == b"\"managedFields\"" {
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(key);
        out.push(b':');
        out.extend_from_slice(value);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests;
