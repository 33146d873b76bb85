//! One journal entry as it is stored, and the object states it carries.
//!
//! An entry holds its object's state in one of two ways:
//!
//! - **as text** ([`Textual`]), for objects the cache keeps compressed
//!   with its dictionary: whole, as the cache's compressed bytes, or as a
//!   zstd delta from the text of the version before. Writing one parses,
//!   diffs and compresses no object (a delta compresses the new text
//!   against the old, a few µs); the diff is made when it is read.
//! - **as a record** ([`Record`], JSON compressed with zstd), for the
//!   others: whole ("full"), or an RFC 6902 JSON Patch from the state
//!   before.
//!
//! Either way, every [`FULL_EVERY`]th version of an object is whole (and
//! a patch not much smaller than the object too), so a state is rebuilt
//! from at most that many deltas or patches.
//!
//! What a state is: the object without `metadata.managedFields` (who wrote
//! what is the entry's `who`), and for a Secret its metadata and type and
//! a SHA-256 of its `data` only. Its values never reach the journal, nor
//! does the `kubectl.kubernetes.io/last-applied-configuration` annotation,
//! which holds them too.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::dictionaries;
use crate::store::{Dictionary, Writer};

/// At most this many versions of an object follow one another as
/// patches before one is stored whole.
pub(super) const FULL_EVERY: u32 = 32;

/// zstd level of entries: fast, and what is stored is mostly small.
const LEVEL: i32 = 3;

thread_local! {
    /// Each thread's zstd contexts: made once, not per entry.
    static COMPRESSOR: std::cell::RefCell<zstd_safe::CCtx<'static>> =
        std::cell::RefCell::new(zstd_safe::CCtx::create());
    static DECOMPRESSOR: std::cell::RefCell<zstd_safe::DCtx<'static>> =
        std::cell::RefCell::new(zstd_safe::DCtx::create());
}

/// The annotation `kubectl apply` keeps the applied object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A stored entry. Short member names, and the object's identity in one
/// key: an entry of a status update is mostly its patch.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub(super) struct Record {
    /// The object key (see [`object_key`]); empty for a gap.
    #[serde(rename = "k", default)]
    pub key: String,
    /// `group/Kind` (`/Pod` for the core group); empty for a gap. Read
    /// from `key`.
    #[serde(skip)]
    pub kind: String,
    /// Read from `key`.
    #[serde(skip)]
    pub namespace: String,
    /// Read from `key`.
    #[serde(skip)]
    pub name: String,
    /// The object's `apiVersion` (on whole states).
    #[serde(rename = "av", default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The object's uid (on whole states).
    #[serde(rename = "u", default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// `ADDED`, `MODIFIED`, `DELETED`, or `GAP` (GRW was not watching).
    #[serde(rename = "t")]
    pub change: String,
    /// `initial`, `watch` or `relist`.
    #[serde(rename = "o", default, skip_serializing_if = "String::is_empty")]
    pub origin: String,
    #[serde(rename = "rv", default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// Who made the change, from `managedFields`.
    #[serde(rename = "w", default, skip_serializing_if = "Option::is_none")]
    pub who: Option<Writer>,
    /// Whether `who` is a guess ([`crate::store::Managers::likely_writer`]):
    /// no `managedFields` entry moved.
    #[serde(rename = "wg", default, skip_serializing_if = "std::ops::Not::not")]
    pub who_guessed: bool,
    /// The time of that `managedFields` entry, seconds since the epoch.
    #[serde(rename = "wt", default, skip_serializing_if = "Option::is_none")]
    pub who_time: Option<u32>,
    /// For a gap and for what a relist found: the time GRW last saw the
    /// kind and the time it saw it again, microseconds since the epoch.
    #[serde(rename = "g", default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<(u64, u64)>,
    /// The JSON Pointers of what changed from the version before, at most
    /// [`MAX_PATHS`], when it is stored whole (a patch says it).
    #[serde(rename = "c", default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
    /// The labels of this version, for filters: on whole states and when
    /// they changed; `None` when they are the version before's.
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// For an Event: the object it is about, as an object key.
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    /// The whole state.
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    pub full: Option<Box<RawValue>>,
    /// The patch from the state before, as text: read, it is split into
    /// its [`Op`]s without parsing their values.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<Box<RawValue>>,
    /// Read from a [`Textual`] entry: its state is the cache's text, and
    /// what changed is not stored.
    #[serde(skip)]
    pub textual: bool,
    /// A delta entry's state: its text's length, the [`crc`] of the text
    /// before and the zstd frame (see [`Body::Delta`]).
    #[serde(skip)]
    pub delta: Option<(u32, u32, Box<[u8]>)>,
}

/// The first byte of a packed entry ([`Body::Packed`]). Other entries
/// are a zstd frame, whose first byte is 0x28.
const PACKED: u8 = 0xB1;
/// The first byte of a delta entry ([`Body::Delta`]).
const DELTA: u8 = 0xB2;

/// zstd level of deltas: the version before holds nearly all of the text,
/// and a higher level found no shorter matches in it.
const DELTA_LEVEL: i32 = 1;

/// An entry whose state is the object's text as the cache held it, exactly:
/// either whole, or as a delta from the version before's text. Writing one
/// takes no parse of the object, nor a diff; the diff from the version
/// before is made when the entry is read.
///
/// Layout: the first byte ([`PACKED`] or [`DELTA`]); for a packed entry
/// the dictionary's id (`u64`, little-endian), for a delta the [`crc`] of
/// the text before (`u32`); the text's length and the header's (`u32`
/// each); the header (the entry without its state, as JSON); the state.
pub(super) struct Textual<'b> {
    header: &'b [u8],
    /// Length of the state's text.
    len: u32,
    pub body: Body<'b>,
}

/// The CRC-32 of a text: a delta says that of the text it was made from,
/// which reading checks before using the text rebuilt as its dictionary.
pub(super) fn crc(text: &[u8]) -> u32 {
    crc32fast::hash(text)
}

/// Where a [`Textual`] entry's state is.
pub(super) enum Body<'b> {
    /// Whole, as the cache held it: compressed with the cache's dictionary
    /// of this id (kept in the journal's `dictionaries` table). Some 550
    /// bytes for a 6.8 KB Pod; every first version of an object and every
    /// [`FULL_EVERY`]th after.
    Packed { dictionary: u64, body: &'b [u8] },
    /// A zstd frame of the text, compressed with the text of the version
    /// before as its dictionary: some 120 bytes for a
    /// Pod's status update, in 3 to 5 µs, against 450 bytes for its JSON
    /// Patch, whose diff cost ten times more.
    Delta { frame: &'b [u8], before: u32 },
}

impl<'b> Textual<'b> {
    /// The parts of `bytes`, if they are a textual entry.
    pub(super) fn of(bytes: &'b [u8]) -> Option<Textual<'b>> {
        let number = |at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
        };
        let (dictionary, at) = match *bytes.first()? {
            PACKED => (
                Some(u64::from_le_bytes(bytes.get(1..9)?.try_into().ok()?)),
                9,
            ),
            DELTA => (None, 5),
            _ => return None,
        };
        let len = number(at)?;
        let header_len = number(at + 4)? as usize;
        let start = at + 8;
        let header = bytes.get(start..start + header_len)?;
        let rest = bytes.get(start + header_len..)?;
        let body = match dictionary {
            Some(dictionary) => Body::Packed {
                dictionary,
                body: rest,
            },
            None => Body::Delta {
                frame: rest,
                before: number(1)?,
            },
        };
        Some(Textual { header, len, body })
    }

    /// The id of the dictionary a packed entry needs.
    pub(super) fn dictionary(&self) -> Option<u64> {
        match self.body {
            Body::Packed { dictionary, .. } => Some(dictionary),
            Body::Delta { .. } => None,
        }
    }

    /// The state's text, given the text of the version before (which a
    /// delta needs); `None` if it does not read.
    pub(super) fn text(&self, before: Option<&[u8]>) -> Option<Vec<u8>> {
        // The length the frame says, before room is made for it: a
        // damaged entry must not ask for gigabytes.
        let (Body::Packed { body: frame, .. } | Body::Delta { frame, .. }) = self.body;
        if zstd_safe::get_frame_content_size(frame).ok()?? != u64::from(self.len) {
            return None;
        }
        match self.body {
            Body::Packed { dictionary, body } => {
                dictionaries::get(dictionary)?.decompress(body, self.len)
            }
            Body::Delta {
                frame,
                before: made_from,
            } => {
                // Not the text it was made from: it would read as another.
                let before = before.filter(|text| crc(text) == made_from)?;
                let mut out = vec![0u8; self.len as usize];
                let n = DECOMPRESSOR
                    .with_borrow_mut(|dctx| dctx.decompress_using_dict(&mut out[..], frame, before))
                    .ok()?;
                (n == self.len as usize).then_some(out)
            }
        }
    }
}

/// Starts a textual entry of `first` byte: the fixed part, then the header.
fn textual_head(record: &Record, first: u8, id: &[u8], len: u32, room: usize) -> Vec<u8> {
    debug_assert!(
        record.full.is_none() && record.patch.is_none(),
        "the state is the body"
    );
    let mut out = Vec::with_capacity(25 + 256 + room);
    out.push(first);
    out.extend_from_slice(id);
    out.extend_from_slice(&len.to_le_bytes());
    let lengths = out.len();
    out.extend_from_slice(&[0; 4]);
    // A Record of strings always serializes.
    let _ = serde_json::to_writer(&mut out, record);
    let header_len = (out.len() - lengths - 4) as u32;
    out[lengths..lengths + 4].copy_from_slice(&header_len.to_le_bytes());
    out
}

/// One operation of a stored patch, its value left as text.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Op<'a> {
    #[serde(borrow)]
    pub op: Cow<'a, str>,
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    /// Absent for `remove`; a JSON `null` is a value.
    #[serde(
        borrow,
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub value: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The operations of the patch `text` (none if it is not one).
pub(super) fn ops(text: &RawValue) -> Vec<Op<'_>> {
    serde_json::from_str(text.get()).unwrap_or_default()
}

/// The text of a patch of no operation.
pub(super) fn no_ops() -> Box<RawValue> {
    // `[]` is JSON.
    RawValue::from_string("[]".into()).unwrap_or_default()
}

/// The text of `patch`.
pub(super) fn patch_text(patch: &Value) -> Box<RawValue> {
    // A value serializes; what it writes is not parsed again.
    serde_json::value::to_raw_value(patch).unwrap_or_else(|_| no_ops())
}

/// Where every version differs: left out of what changed (the version
/// says its resourceVersion), kept in the patch.
pub(super) const RESOURCE_VERSION: &str = "/metadata/resourceVersion";

/// Changed paths an entry lists at most.
pub(super) const MAX_PATHS: usize = 32;

impl Record {
    /// An entry of the object `key` (see [`object_key`]; empty for a gap)
    /// with the given change type.
    pub(super) fn of(key: &str, change: &str) -> Record {
        let mut record = Record {
            key: key.to_string(),
            change: change.to_string(),
            ..Record::default()
        };
        record.read_key();
        record
    }

    /// Fills in kind, namespace and name from the key.
    fn read_key(&mut self) {
        if let Some((group, kind, namespace, name)) = split_object_key(&self.key) {
            self.kind = kind_key(group, kind);
            self.namespace = namespace.to_string();
            self.name = name.to_string();
        }
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        // A Record of strings and JSON values always serializes.
        let json = serde_json::to_vec(self).unwrap_or_default();
        let mut out = vec![0u8; zstd_safe::compress_bound(json.len())];
        let compressed =
            COMPRESSOR.with_borrow_mut(|cctx| cctx.compress(&mut out[..], &json, LEVEL));
        match compressed {
            Ok(n) => {
                out.truncate(n);
                out
            }
            Err(_) => json,
        }
    }

    /// The entry with its whole state as the cache holds it: `body`, `len`
    /// bytes of JSON compressed with `dictionary` (see [`Body::Packed`]).
    /// The record's own `full` is left empty.
    pub(super) fn encode_packed(&self, dictionary: &Dictionary, len: u32, body: &[u8]) -> Vec<u8> {
        let mut out = textual_head(
            self,
            PACKED,
            &dictionary.id().to_le_bytes(),
            len,
            body.len(),
        );
        out.extend_from_slice(body);
        out
    }

    /// The entry with its state `after` as a delta from `before`, the text
    /// of the version before (see [`Body::Delta`]); `None` should zstd
    /// fail.
    pub(super) fn encode_delta(&self, before: &[u8], after: &[u8]) -> Option<Vec<u8>> {
        let len = u32::try_from(after.len()).ok()?;
        let mut out = textual_head(self, DELTA, &crc(before).to_le_bytes(), len, 256);
        let start = out.len();
        out.resize(start + zstd_safe::compress_bound(after.len()), 0);
        // The text before as a dictionary of raw content: loaded into the
        // context's own tables, sized for this text (a dictionary object
        // made for each delta took three times as long as the delta).
        let n = COMPRESSOR
            .with_borrow_mut(|cctx| {
                cctx.compress_using_dict(&mut out[start..], after, before, DELTA_LEVEL)
            })
            .ok()?;
        out.truncate(start + n);
        Some(out)
    }

    /// Only what a version's answer shows: no whole state, patch with
    /// its `test` ops, labels, paths or uid.
    pub(super) fn shown(self) -> Record {
        Record {
            full: None,
            patch: None,
            labels: None,
            changed: Vec::new(),
            about: None,
            uid: String::new(),
            api_version: String::new(),
            ..self
        }
    }

    /// The entry `bytes` hold, with its state: whole, or the patch or
    /// delta from the state before.
    pub(super) fn decode(bytes: &[u8]) -> Option<Record> {
        let Some(textual) = Textual::of(bytes) else {
            return Record::decode_json(bytes);
        };
        let mut record = Record::decode_header(bytes)?;
        match textual.body {
            // An entry whose state does not read keeps its header.
            Body::Packed { .. } => {
                record.full = textual
                    .text(None)
                    .and_then(|text| String::from_utf8(text).ok())
                    .and_then(|text| RawValue::from_string(text).ok());
            }
            Body::Delta { frame, before } => {
                record.delta = Some((textual.len, before, frame.into()));
            }
        }
        Some(record)
    }

    /// The entry `bytes` hold, without reading the state of a textual one:
    /// what indexes and filters need.
    pub(super) fn decode_header(bytes: &[u8]) -> Option<Record> {
        match Textual::of(bytes) {
            Some(textual) => {
                let mut record: Record = serde_json::from_slice(textual.header).ok()?;
                record.read_key();
                record.textual = true;
                Some(record)
            }
            None => Record::decode_json(bytes),
        }
    }

    /// The text of the state after this textual entry, given the text of
    /// the state before (which a delta needs).
    pub(super) fn text_after(&self, before: Option<&[u8]>) -> Option<Vec<u8>> {
        if let Some(full) = &self.full {
            return Some(full.get().as_bytes().to_vec());
        }
        let (len, made_from, frame) = self.delta.as_ref()?;
        let textual = Textual {
            header: &[],
            len: *len,
            body: Body::Delta {
                frame,
                before: *made_from,
            },
        };
        textual.text(before)
    }

    fn decode_json(bytes: &[u8]) -> Option<Record> {
        let size = zstd_safe::get_frame_content_size(bytes).ok()??;
        let mut json = vec![0u8; usize::try_from(size).ok()?];
        let n = DECOMPRESSOR
            .with_borrow_mut(|dctx| dctx.decompress(&mut json[..], bytes))
            .ok()?;
        json.truncate(n);
        let mut record: Record = serde_json::from_slice(&json).ok()?;
        record.read_key();
        Some(record)
    }

    /// What changed from the version before: the paths of its patch, or
    /// those listed.
    pub(super) fn changed_paths(&self) -> Vec<String> {
        match &self.patch {
            Some(patch) => ops(patch)
                .into_iter()
                .filter(|op| op.op != "test" && op.path != RESOURCE_VERSION)
                .map(|op| op.path.into_owned())
                .take(MAX_PATHS)
                .collect(),
            None => self.changed.clone(),
        }
    }

    /// The state after this entry, given the state before.
    pub(super) fn state_after(&self, before: Option<Value>) -> Option<Value> {
        if let Some(full) = &self.full {
            return serde_json::from_str(full.get()).ok();
        }
        let mut state = before?;
        let patch: json_patch::Patch = serde_json::from_str(self.patch.as_ref()?.get()).ok()?;
        json_patch::patch(&mut state, &patch).ok()?;
        Some(state)
    }
}

/// The state the journal keeps of an object (see the module's comment).
pub(super) fn state_of(object: Value, kind: &str) -> Value {
    let Value::Object(mut map) = object else {
        return object;
    };
    if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
        metadata.remove("managedFields");
    }
    if kind != "/Secret" {
        return Value::Object(map);
    }
    let mut hash = Sha256::new();
    for key in ["data", "stringData"] {
        if let Some(value) = map.get(key) {
            // A map serializes with its keys in order: the same data, the
            // same hash.
            hash.update(serde_json::to_vec(value).unwrap_or_default());
        }
    }
    let mut kept = Map::new();
    for key in ["apiVersion", "kind", "metadata", "type", "immutable"] {
        if let Some(value) = map.remove(key) {
            kept.insert(key.to_string(), value);
        }
    }
    if let Some(Value::Object(annotations)) = kept
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        annotations.remove(LAST_APPLIED);
    }
    let digest: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    kept.insert("dataSha256".into(), Value::String(digest));
    Value::Object(kept)
}

/// The patch from `before` to `after` and the paths it touches (see
/// [`super::diff`]).
pub(super) fn diff(before: &Value, after: &Value) -> (Value, Vec<String>) {
    // Values serialize to JSON without fail.
    super::diff::diff(
        &serde_json::to_vec(before).unwrap_or_default(),
        &serde_json::to_vec(after).unwrap_or_default(),
    )
}

/// `ops` without the `test` ones: what changed, as text.
pub(super) fn changes_only(ops: &[Op]) -> Box<RawValue> {
    let changes: Vec<&Op> = ops.iter().filter(|op| op.op != "test").collect();
    // Strings and JSON texts serialize; what is written is not parsed
    // again.
    serde_json::value::to_raw_value(&changes).unwrap_or_else(|_| no_ops())
}

/// A readable form of the patch `ops` from `before`: one line per
/// operation, `+ path: value`, `- path: value`, `~ path: old → new`.
///
/// A timeline writes hundreds of these: each line is one `String` built
/// by pushes, and a value is copied only once, into its line.
pub(super) fn readable(before: Option<&Value>, ops: &[Op]) -> Vec<String> {
    // The values before: the patch's `test` ops say them, else `before`.
    let tested: BTreeMap<&str, &RawValue> = ops
        .iter()
        .filter(|op| op.op == "test")
        .filter_map(|op| Some((op.path.as_ref(), op.value?)))
        .collect();
    let old = |path: &str| -> Option<Cow<'_, str>> {
        match tested.get(path) {
            Some(value) => Some(Cow::Borrowed(value.get())),
            None => before
                .and_then(|b| b.pointer(path))
                .map(|v| Cow::Owned(v.to_string())),
        }
    };
    ops.iter()
        .filter(|op| op.path != RESOURCE_VERSION && op.op != "test")
        .map(|op| {
            let path = op.path.as_ref();
            let value = op.value.map_or("null", RawValue::get);
            let mut line = String::with_capacity(path.len() + 8 + value.len().min(LINE_VALUE));
            let (sign, old, new) = match op.op.as_ref() {
                "add" => ("+", None, Some(value)),
                "remove" => ("-", old(path), None),
                "replace" => ("~", old(path), Some(value)),
                other => (other, None, None),
            };
            line.push_str(sign);
            line.push(' ');
            line.push_str(path);
            match (old, new) {
                (Some(old), Some(new)) => {
                    line.push_str(": ");
                    push_short(&mut line, &old);
                    line.push_str(" → ");
                    push_short(&mut line, new);
                }
                (Some(value), None) => {
                    line.push_str(": ");
                    push_short(&mut line, &value);
                }
                (None, Some(value)) => {
                    line.push_str(": ");
                    push_short(&mut line, value);
                }
                (None, None) => {}
            }
            line
        })
        .collect()
}

/// Characters of a value a readable line shows at most.
const LINE_VALUE: usize = 120;

/// Pushes `text`, cut to [`LINE_VALUE`] characters with `…` if longer.
fn push_short(line: &mut String, text: &str) {
    let mut chars = text.char_indices();
    match (chars.nth(LINE_VALUE - 1), chars.next()) {
        // More than the limit: all before its last character, and `…`.
        (Some((cut, _)), Some(_)) => {
            line.push_str(&text[..cut]);
            line.push('…');
        }
        _ => line.push_str(text),
    }
}

/// The object key of what an Event (`events.k8s.io/v1` or `v1`) is about.
pub(super) fn event_about(event: &Value) -> Option<String> {
    let about = event
        .get("regarding")
        .or_else(|| event.get("involvedObject"))?;
    let text = |k: &str| about.get(k).and_then(Value::as_str).unwrap_or("");
    let kind = text("kind");
    let name = text("name");
    if kind.is_empty() || name.is_empty() {
        return None;
    }
    let group = text("apiVersion")
        .rsplit_once('/')
        .map_or("", |(group, _)| group);
    Some(object_key(group, kind, text("namespace"), name))
}

/// `group/Kind`.
pub(super) fn kind_key(group: &str, kind: &str) -> String {
    format!("{group}/{kind}")
}

/// `group/Kind`, the namespace and the name, NUL between.
pub(super) fn object_key(group: &str, kind: &str, namespace: &str, name: &str) -> String {
    format!("{group}/{kind}\0{namespace}\0{name}")
}

/// The parts of an object key: group, kind, namespace, name.
pub(super) fn split_object_key(key: &str) -> Option<(&str, &str, &str, &str)> {
    let mut parts = key.split('\0');
    let (kind, namespace, name) = (parts.next()?, parts.next()?, parts.next()?);
    let (group, kind) = kind.split_once('/')?;
    Some((group, kind, namespace, name))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_secret_keeps_its_metadata_and_a_hash_of_its_data() {
        let secret = json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "db", "namespace": "shop", "annotations": {
                LAST_APPLIED: "{\"data\":{\"password\":\"aHVudGVyMg==\"}}", "team": "payments"}},
            "data": {"password": "aHVudGVyMg=="},
            "stringData": {"user": "admin"}
        });
        let state = state_of(secret.clone(), "/Secret");
        let text = state.to_string();
        assert!(!text.contains("aHVudGVyMg"), "{text}");
        assert!(!text.contains("admin"), "{text}");
        assert_eq!(state["metadata"]["annotations"]["team"], "payments");
        assert_eq!(state["type"], "Opaque");
        assert_eq!(state["dataSha256"].as_str().map(str::len), Some(64));
        let mut changed = secret;
        changed["data"]["password"] = json!("b3RoZXI=");
        assert_ne!(
            state_of(changed, "/Secret")["dataSha256"],
            state["dataSha256"]
        );
    }

    #[test]
    fn a_patch_rebuilds_the_state_and_reads_as_lines() {
        let before = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"replicas": 2}});
        let after = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}, "spec": {"replicas": 3}});
        let (patch, paths) = diff(&before, &after);
        assert_eq!(paths, ["/metadata/labels/tier", "/spec/replicas"]);
        let record = Record {
            patch: Some(patch_text(&patch)),
            ..Record::default()
        };
        assert_eq!(record.state_after(Some(before.clone())), Some(after));
        assert_eq!(
            readable(Some(&before), &ops(&patch_text(&patch))),
            [
                "+ /metadata/labels/tier: \"front\"",
                "~ /spec/replicas: 2 → 3"
            ]
        );
        let decoded = Record::decode(&record.encode()).expect("reads back");
        assert_eq!(
            decoded.patch.map(|p| p.get().to_string()),
            Some(patch.to_string())
        );
    }

    #[test]
    fn a_null_value_in_a_patch_is_kept_as_a_value() {
        let before = json!({"spec": {"paused": true}});
        let after = json!({"spec": {"paused": null, "note": null}});
        let (patch, _) = diff(&before, &after);
        let text = patch_text(&patch);
        let ops = ops(&text);
        let changes: Value = serde_json::from_str(changes_only(&ops).get()).unwrap();
        let mut rebuilt = before.clone();
        let changes: json_patch::Patch = serde_json::from_value(changes).unwrap();
        json_patch::patch(&mut rebuilt, &changes).unwrap();
        assert_eq!(rebuilt, after);
        assert_eq!(
            readable(None, &ops),
            ["+ /spec/note: null", "~ /spec/paused: true → null"]
        );
    }

    #[test]
    fn a_readable_line_cuts_a_long_value_and_names_a_removal() {
        let long = "é".repeat(130);
        let exact = "x".repeat(118);
        let before = json!({"data": {"long": "a", "exact": "b", "gone": 1}});
        let after = json!({"data": {"long": long, "exact": exact}});
        let (patch, _) = diff(&before, &after);
        let text = patch_text(&patch);
        let lines = readable(None, &ops(&text));
        // The quoted value is 132 characters: 119 of them, then `…`.
        let cut = format!("\"{}…", "é".repeat(118));
        assert_eq!(
            lines,
            [
                format!("~ /data/exact: \"b\" → \"{exact}\""),
                format!("~ /data/long: \"a\" → {cut}"),
                "- /data/gone: 1".to_string(),
            ]
        );
        // Without the values before, a removal names its path alone.
        let removal =
            RawValue::from_string(r#"[{"op":"remove","path":"/data/gone"}]"#.into()).unwrap();
        assert_eq!(readable(None, &ops(&removal)), ["- /data/gone"]);
    }
}
