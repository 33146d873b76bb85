//! Reading the journal: an object's versions with their diffs, its state
//! at a time, recent changes across the cluster, and the entries of a set
//! of objects (for timelines).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use redb::{ReadOnlyTable, ReadTransaction, ReadableTable};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::diff;
use super::record::{self, Record, object_key};
use super::tables::*;
use super::write::StoreError;

/// An object's state while its entries are read in order: text, from
/// entries that keep the cache's text ([`record::Textual`]), whose deltas
/// need the exact text before; or a value, from entries that keep JSON
/// Patches.
pub(super) enum State {
    Text(Vec<u8>),
    Value(Value),
}

impl State {
    /// The state after `record`, this being the state before (`None`: the
    /// object did not exist, or is not known).
    pub(super) fn after(before: Option<&State>, record: &Record) -> Option<State> {
        if record.change == "DELETED" {
            return None;
        }
        if record.textual {
            let before = before.map(State::text);
            return record.text_after(before.as_deref()).map(State::Text);
        }
        record
            .state_after(before.and_then(State::to_value))
            .map(State::Value)
    }

    /// [`State::after`], this state taken: a patch applies to it without
    /// a copy.
    pub(super) fn into_after(before: Option<State>, record: &Record) -> Option<State> {
        match before {
            Some(State::Value(value)) if !record.textual && record.change != "DELETED" => {
                record.state_after(Some(value)).map(State::Value)
            }
            before => State::after(before.as_ref(), record),
        }
    }

    /// As text: a value serialized.
    pub(super) fn text(&self) -> Cow<'_, [u8]> {
        match self {
            State::Text(text) => Cow::Borrowed(text),
            // A value serializes.
            State::Value(value) => Cow::Owned(serde_json::to_vec(value).unwrap_or_default()),
        }
    }

    /// As a value: a text parsed.
    pub(super) fn to_value(&self) -> Option<Value> {
        match self {
            State::Text(text) => serde_json::from_slice(text).ok(),
            State::Value(value) => Some(value.clone()),
        }
    }
}

/// The state of the object `key` after its last entry at or before
/// `stamp`, and that entry's stamp; `None` if it has none (or was deleted).
pub(super) fn state_at(
    objects: &impl ReadableTable<(&'static str, u64), u8>,
    entries: &impl ReadableTable<u64, &'static [u8]>,
    bases: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
    stamp: u64,
) -> Result<Option<(Value, u64)>, StoreError> {
    Ok(version_at(objects, entries, bases, key, stamp)?
        .and_then(|(state, stamp)| Some((state.to_value()?, stamp))))
}

/// [`state_at`], the state as it was rebuilt.
pub(super) fn version_at(
    objects: &impl ReadableTable<(&'static str, u64), u8>,
    entries: &impl ReadableTable<u64, &'static [u8]>,
    bases: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
    stamp: u64,
) -> Result<Option<(State, u64)>, StoreError> {
    let mut chain = Vec::new();
    let mut from_base = true;
    for row in objects.range((key, 0)..=(key, stamp))?.rev() {
        let (k, flags) = row?;
        chain.push(k.value().1);
        if flags.value() & FULL != 0 {
            from_base = false;
            break;
        }
    }
    let Some(&last) = chain.first() else {
        return Ok(None);
    };
    let mut state = if from_base {
        bases.get(key)?.and_then(|v| decode_base(v.value()))
    } else {
        None
    };
    for stamp in chain.iter().rev() {
        let record = entries
            .get(*stamp)?
            .and_then(|v| Record::decode(v.value()))
            .unwrap_or_default();
        state = State::into_after(state, &record);
    }
    Ok(state.map(|s| (s, last)))
}

/// The state a base (an object's state when its older entries went)
/// holds.
pub(super) fn decode_base(bytes: &[u8]) -> Option<State> {
    // As text, as stored: a base made of a value is that value's text.
    let full = Record::decode(bytes)?.full?;
    Some(State::Text(full.get().as_bytes().to_vec()))
}

/// One version of an object, as answers show it.
pub struct Version {
    /// When GRW saw it, µs since the epoch.
    pub stamp: u64,
    pub(super) record: Record,
    /// The state after it (none after a deletion).
    pub state: Option<Value>,
    /// RFC 6902 patch from the version before, as text: what changed (no
    /// `test` ops).
    pub patch: Box<RawValue>,
    /// The patch as lines.
    pub lines: Vec<String>,
}

/// A [`Version`] as answers show it, borrowed: a timeline of hundreds of
/// versions is written out without copying their patches into a tree.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionView<'a> {
    time: String,
    #[serde(rename = "type")]
    change: &'a str,
    origin: &'a str,
    kind: &'a str,
    group: &'a str,
    namespace: &'a str,
    name: &'a str,
    resource_version: &'a str,
    who: Option<WhoView<'a>>,
    diff: &'a RawValue,
    diff_text: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    gap: Option<GapView>,
    /// The whole object, with `full`: `null` after a deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Option<&'a Value>>,
    /// In a timeline: how the object relates to the asked-for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a RawValue>,
}

/// Who made a change, as answers show it.
#[derive(Serialize)]
struct WhoView<'a> {
    manager: &'a str,
    operation: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    subresource: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    guessed: bool,
}

impl WhoView<'_> {
    fn of(record: &Record) -> Option<WhoView<'_>> {
        let w = record.who.as_ref()?;
        Some(WhoView {
            manager: &w.manager,
            operation: &w.operation,
            subresource: &w.subresource,
            time: record
                .who_time
                .map(|t| crate::time::rfc3339(std::time::Duration::from_secs(u64::from(t)))),
            guessed: record.who_guessed,
        })
    }
}

/// The time GRW was not watching, as answers show it.
#[derive(Serialize)]
struct GapView {
    from: String,
    until: String,
}

impl Version {
    /// The version as answers show it; `full` adds the whole object.
    pub fn view(&self, full: bool) -> VersionView<'_> {
        let r = &self.record;
        VersionView {
            time: super::rfc3339_micros(self.stamp),
            change: &r.change,
            origin: &r.origin,
            kind: r.kind.rsplit_once('/').map_or(r.kind.as_str(), |(_, k)| k),
            group: r.kind.split_once('/').map_or("", |(g, _)| g),
            namespace: &r.namespace,
            name: &r.name,
            resource_version: &r.resource_version,
            who: WhoView::of(r),
            diff: &self.patch,
            diff_text: &self.lines,
            gap: r.gap.map(|(from, until)| GapView {
                from: super::rfc3339_micros(from),
                until: super::rfc3339_micros(until),
            }),
            object: full.then_some(self.state.as_ref()),
            path: None,
        }
    }

    /// The version as JSON; `full` adds the whole object. Answers write
    /// [`Version::view`] out directly; tests read this.
    #[cfg(test)]
    pub(crate) fn to_json(&self, full: bool) -> Value {
        // Strings and JSON values always serialize.
        serde_json::to_value(self.view(full)).unwrap_or_default()
    }

    /// About how many bytes it holds, its whole object aside.
    pub(super) fn size(&self) -> usize {
        let r = &self.record;
        std::mem::size_of::<Version>()
            + self.patch.get().len()
            + self.lines.iter().map(|l| l.len() + 24).sum::<usize>()
            + r.key.len() * 2
            + r.change.len()
            + r.origin.len()
            + r.resource_version.len()
            + r.who.as_ref().map_or(0, |w| {
                w.manager.len() + w.operation.len() + w.subresource.len() + 64
            })
    }

    /// Who made it: the manager, if known.
    pub fn manager(&self) -> Option<&str> {
        self.record.who.as_ref().map(|w| w.manager.as_str())
    }

    /// `ADDED`, `MODIFIED`, `DELETED` or `GAP`.
    pub fn change(&self) -> &str {
        &self.record.change
    }
}

/// The versions of object `key` seen in `since..=until`, newest first, at
/// most `limit`, each with its diff from the one before.
///
/// Without `states`, the versions carry no whole object, and the state
/// before is rebuilt only for a version stored whole (a patch says what
/// it changed by itself).
pub(super) fn history(
    txn: &ReadTransaction,
    decoded: &Decoded,
    key: &str,
    since: u64,
    until: u64,
    limit: usize,
    states: bool,
) -> Result<Vec<Arc<Version>>, StoreError> {
    let tables = VersionTables::open(txn, decoded)?;
    if !states {
        return tables.light(key, since, until, limit);
    }
    let VersionTables {
        objects,
        entries,
        bases,
        ..
    } = tables;
    let mut stamps = Vec::new();
    for row in objects
        .range((key, since)..=(key, until))?
        .rev()
        .take(limit)
    {
        stamps.push(row?.0.value().1);
    }
    stamps.reverse();
    let Some(&oldest) = stamps.first() else {
        return Ok(Vec::new());
    };
    let mut before = match oldest.checked_sub(1) {
        Some(previous) => version_at(&objects, &entries, &bases, key, previous)?.map(|(s, _)| s),
        None => None,
    };
    // A first entry that is a patch or delta builds on the object's base.
    if before.is_none() && objects.range((key, 0)..(key, oldest))?.next().is_none() {
        before = bases.get(key)?.and_then(|v| decode_base(v.value()));
    }
    let mut versions = Vec::with_capacity(stamps.len());
    for stamp in stamps {
        let record = entries
            .get(stamp)?
            .and_then(|v| Record::decode(v.value()))
            .unwrap_or_default();
        let state = State::after(before.as_ref(), &record);
        let (patch, lines) = match (&before, &state) {
            (Some(b), Some(a)) => diffed(b, a),
            (None, Some(_)) => (record::no_ops(), vec!["created".to_string()]),
            (_, None) if record.change == "DELETED" => {
                (record::no_ops(), vec!["deleted".to_string()])
            }
            _ => (record::no_ops(), Vec::new()),
        };
        versions.push(Arc::new(Version {
            stamp,
            record,
            state: state.as_ref().and_then(State::to_value),
            patch,
            lines,
        }));
        before = state;
    }
    versions.reverse();
    Ok(versions)
}

/// Most bytes [`Decoded`] holds (an estimate: the diffs' text and the
/// entries' strings). A timeline of 500 versions of Pods holds about
/// 1 MiB of them.
const DECODED_BYTES: usize = 8 << 20;

/// Versions as [`VersionTables::light`] reads them, by stamp, without
/// their whole objects: an entry never changes once written, so the same
/// version read again (a timeline asked again, or a console refreshing
/// one) is not decompressed, split and written as lines again. The
/// oldest read go first.
pub(super) struct Decoded {
    inner: Mutex<DecodedInner>,
    budget: usize,
}

#[derive(Default)]
struct DecodedInner {
    versions: HashMap<u64, Arc<Version>>,
    /// Stamps in the order they were kept, with their sizes.
    order: VecDeque<(u64, usize)>,
    bytes: usize,
}

impl Default for Decoded {
    fn default() -> Decoded {
        Decoded::new(DECODED_BYTES)
    }
}

impl Decoded {
    pub(super) fn new(budget: usize) -> Decoded {
        Decoded {
            inner: Mutex::default(),
            budget,
        }
    }

    pub(super) fn get(&self, stamp: u64) -> Option<Arc<Version>> {
        self.inner.lock().versions.get(&stamp).cloned()
    }

    pub(super) fn keep(&self, version: &Arc<Version>) {
        let size = version.size();
        if size > self.budget {
            return;
        }
        let mut inner = self.inner.lock();
        if inner
            .versions
            .insert(version.stamp, version.clone())
            .is_some()
        {
            return;
        }
        inner.order.push_back((version.stamp, size));
        inner.bytes += size;
        while inner.bytes > self.budget {
            let Some((stamp, size)) = inner.order.pop_front() else {
                break;
            };
            inner.versions.remove(&stamp);
            inner.bytes -= size;
        }
    }

    /// How many versions are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.inner.lock().versions.len()
    }
}

/// The tables versions are read from, opened once for many objects.
pub(super) struct VersionTables<'d> {
    objects: ReadOnlyTable<(&'static str, u64), u8>,
    entries: ReadOnlyTable<u64, &'static [u8]>,
    bases: ReadOnlyTable<&'static str, &'static [u8]>,
    decoded: &'d Decoded,
}

impl VersionTables<'_> {
    pub(super) fn open<'d>(
        txn: &ReadTransaction,
        decoded: &'d Decoded,
    ) -> Result<VersionTables<'d>, StoreError> {
        Ok(VersionTables {
            objects: txn.open_table(OBJECTS)?,
            entries: txn.open_table(ENTRIES)?,
            bases: txn.open_table(BASES)?,
            decoded,
        })
    }

    /// [`history`] without states: the versions of `key` in
    /// `since..=until`, newest first, at most `limit`.
    pub(super) fn light(
        &self,
        key: &str,
        since: u64,
        until: u64,
        limit: usize,
    ) -> Result<Vec<Arc<Version>>, StoreError> {
        let mut versions = Vec::new();
        for row in self
            .objects
            .range((key, since)..=(key, until))?
            .rev()
            .take(limit)
        {
            let stamp = row?.0.value().1;
            if let Some(version) = self.decoded.get(stamp) {
                versions.push(version);
                continue;
            }
            let version = Arc::new(light_version(
                &self.objects,
                &self.entries,
                &self.bases,
                key,
                stamp,
            )?);
            self.decoded.keep(&version);
            versions.push(version);
        }
        Ok(versions)
    }
}

/// One version without its whole object: a patch entry's diff is its
/// patch; an entry stored whole is diffed with the state before it.
fn light_version(
    objects: &impl ReadableTable<(&'static str, u64), u8>,
    entries: &impl ReadableTable<u64, &'static [u8]>,
    bases: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
    stamp: u64,
) -> Result<Version, StoreError> {
    let record = entries
        .get(stamp)?
        .and_then(|v| Record::decode(v.value()))
        .unwrap_or_default();
    let (patch, lines) = if record.change == "DELETED" {
        (record::no_ops(), vec!["deleted".to_string()])
    } else if let Some(patch) = &record.patch {
        let ops = record::ops(patch);
        (record::changes_only(&ops), record::readable(None, &ops))
    } else {
        let before = match stamp.checked_sub(1) {
            Some(previous) => version_at(objects, entries, bases, key, previous)?.map(|(s, _)| s),
            None => None,
        };
        let before = match before {
            Some(state) => Some(state),
            // A first entry after the ones before it went.
            None if objects.range((key, 0)..(key, stamp))?.next().is_none() => {
                bases.get(key)?.and_then(|v| decode_base(v.value()))
            }
            None => None,
        };
        // A first version is "created" as it is, not read.
        match before.map(|b| (State::after(Some(&b), &record), b)) {
            Some((Some(a), b)) => diffed(&b, &a),
            Some((None, _)) => (record::no_ops(), Vec::new()),
            None => (record::no_ops(), vec!["created".to_string()]),
        }
    };
    Ok(Version {
        stamp,
        record: record.shown(),
        state: None,
        patch,
        lines,
    })
}

/// What changed from `before` to `after`: the patch (no `test` ops) and
/// its lines, from the texts of the two (the patch's `test` ops say the
/// values before).
fn diffed(before: &State, after: &State) -> (Box<RawValue>, Vec<String>) {
    let (patch, _) = diff::diff(&before.text(), &after.text());
    let text = record::patch_text(&patch);
    let ops = record::ops(&text);
    (record::changes_only(&ops), record::readable(None, &ops))
}

/// The stamps of the versions of `keys` and of the Events about them in
/// `since..=until`: the newest `limit` of them all, newest first, read
/// from the indexes alone. Each with the index of its key in `keys` and
/// whether it is an Event's.
///
/// Each object's index is read backwards, and only as far as the newest
/// `limit` reach: an object with a long history in the window costs no
/// more than its entries among them.
pub(super) fn stamps(
    txn: &ReadTransaction,
    keys: &[String],
    since: u64,
    until: u64,
    limit: usize,
) -> Result<Vec<(u64, usize, bool)>, StoreError> {
    type Stamps<'t> = Box<dyn Iterator<Item = Result<u64, StoreError>> + 't>;
    let objects = txn.open_table(OBJECTS)?;
    let about = txn.open_table(ABOUT)?;
    let mut readers: Vec<(Stamps, usize, bool)> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let key = key.as_str();
        let versions = objects
            .range((key, since)..=(key, until))?
            .rev()
            .map(|row| Ok(row?.0.value().1));
        let events = about
            .range((key, since)..=(key, until))?
            .rev()
            .map(|row| Ok(row?.0.value().1));
        readers.push((Box::new(versions), i, false));
        readers.push((Box::new(events), i, true));
    }
    // The newest stamp of each reader; the newest of them all is taken
    // and that reader read on.
    let mut heads = std::collections::BinaryHeap::new();
    for (slot, (reader, _, _)) in readers.iter_mut().enumerate() {
        if let Some(stamp) = reader.next() {
            heads.push((stamp?, slot));
        }
    }
    let mut stamps = Vec::new();
    while stamps.len() < limit {
        let Some((stamp, slot)) = heads.pop() else {
            break;
        };
        let (reader, i, event) = &mut readers[slot];
        stamps.push((stamp, *i, *event));
        if let Some(next) = reader.next() {
            heads.push((next?, slot));
        }
    }
    Ok(stamps)
}

/// What [`super::Journal::as_of`] found.
#[derive(Debug)]
pub enum AsOf {
    /// The object as it was, and the resourceVersion it had.
    Found(Value),
    /// It was the version the cache holds now: no entry after.
    Current {
        /// Its resourceVersion, to compare with the cache's.
        resource_version: String,
    },
    /// It did not exist then; the message says why.
    Missing(String),
    /// The journal no longer reaches that time (or never did).
    Gone(String),
}

pub(super) fn as_of(
    txn: &ReadTransaction,
    kind: &str,
    key: &str,
    at: u64,
) -> Result<AsOf, StoreError> {
    let meta = txn.open_table(META)?;
    let first = meta
        .get(format!("first/{kind}").as_str())?
        .map(|v| v.value());
    let reach = meta
        .get(format!("reach/{kind}").as_str())?
        .map_or(0, |v| v.value());
    let Some(first) = first else {
        return Ok(AsOf::Gone(format!(
            "the journal holds no changes of kind {} (not watched, or excluded from the journal)",
            kind.trim_start_matches('/')
        )));
    };
    let floor = first.max(reach);
    if at < floor {
        return Ok(AsOf::Gone(format!(
            "the journal reaches back to {} for this kind; {} is before",
            super::rfc3339_micros(floor),
            super::rfc3339_micros(at)
        )));
    }
    let objects = txn.open_table(OBJECTS)?;
    let entries = txn.open_table(ENTRIES)?;
    let bases = txn.open_table(BASES)?;
    let last = objects
        .range((key, 0)..=(key, at))?
        .next_back()
        .transpose()?;
    if let Some((k, flags)) = last {
        let stamp = k.value().1;
        if flags.value() & DELETED != 0 {
            return Ok(AsOf::Missing(format!(
                "it was deleted at {}",
                super::rfc3339_micros(stamp)
            )));
        }
        return Ok(match state_at(&objects, &entries, &bases, key, at)? {
            Some((state, _)) => AsOf::Found(state),
            None => AsOf::Gone("its state at that time is no longer kept".into()),
        });
    }
    if let Some(state) = bases
        .get(key)?
        .and_then(|base| decode_base(base.value()))
        .and_then(|state| state.to_value())
    {
        return Ok(AsOf::Found(state));
    }
    let next = objects
        .range((key, at)..=(key, u64::MAX))?
        .next()
        .transpose()?;
    if let Some((k, _)) = next {
        let stamp = k.value().1;
        let record = entries
            .get(stamp)?
            .and_then(|v| Record::decode(v.value()))
            .unwrap_or_default();
        return Ok(if record.change == "ADDED" && record.origin != "initial" {
            AsOf::Missing(format!(
                "it did not exist yet: it was created at {}",
                super::rfc3339_micros(stamp)
            ))
        } else {
            AsOf::Gone("its state at that time is no longer kept".into())
        });
    }
    let latest = txn
        .open_table(LATEST)?
        .get(key)?
        .and_then(|v| Latest::decode(v.value()));
    Ok(match latest {
        Some(l) if !l.deleted => AsOf::Current {
            resource_version: l.resource_version,
        },
        Some(_) => AsOf::Missing("it had been deleted by then".into()),
        None => {
            AsOf::Missing("the journal has never seen it: it did not exist at that time".into())
        }
    })
}

/// Which recent changes to list.
#[derive(Debug, Clone, Default)]
pub struct ChangesFilter {
    /// From this stamp on.
    pub since: u64,
    /// Up to this stamp.
    pub until: u64,
    /// Only these `group/Kind`s; empty: any.
    pub kinds: Vec<String>,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only versions whose labels match.
    pub labels: Option<grw_selector::LabelSelector>,
    /// Only changes whose manager contains this.
    pub who: Option<String>,
    /// At most this many.
    pub limit: usize,
}

/// One entry of a list of changes (no diff: the changed paths).
pub struct Listed {
    /// µs since the epoch.
    pub stamp: u64,
    pub(super) record: Record,
    /// For an Event in a timeline: what it says ([`event_detail`]).
    pub(super) detail: Option<Value>,
}

impl Listed {
    /// The object key of the entry (`None` for a gap).
    pub fn object_key(&self) -> Option<String> {
        let (group, kind) = self.record.kind.split_once('/')?;
        Some(object_key(
            group,
            kind,
            &self.record.namespace,
            &self.record.name,
        ))
    }

    /// `group`, `Kind`, namespace of the entry.
    pub fn kind_and_namespace(&self) -> (&str, &str, &str) {
        let (group, kind) = self.record.kind.split_once('/').unwrap_or(("", ""));
        (group, kind, &self.record.namespace)
    }

    /// As JSON.
    pub fn to_json(&self) -> Value {
        let r = &self.record;
        let (group, kind, _) = self.kind_and_namespace();
        let mut out = json!({
            "time": super::rfc3339_micros(self.stamp),
            "type": r.change,
            "origin": r.origin,
            "group": group,
            "kind": kind,
            "namespace": r.namespace,
            "name": r.name,
            "resourceVersion": r.resource_version,
            "who": WhoView::of(r),
            "changed": r.changed_paths(),
        });
        if let Some(detail) = &self.detail {
            out["event"] = detail.clone();
        }
        if let Some((from, until)) = r.gap {
            out["gap"] =
                json!({"from": super::rfc3339_micros(from), "until": super::rfc3339_micros(until)});
        }
        out
    }
}

pub(super) fn changes(
    txn: &ReadTransaction,
    filter: &ChangesFilter,
) -> Result<Vec<Listed>, StoreError> {
    let entries = txn.open_table(ENTRIES)?;
    let wanted = |stamp: u64, record: &Record| {
        (filter.kinds.is_empty() || filter.kinds.contains(&record.kind))
            && filter
                .namespace
                .as_ref()
                .is_none_or(|ns| *ns == record.namespace)
            && filter.who.as_ref().is_none_or(|who| {
                record
                    .who
                    .as_ref()
                    .is_some_and(|w| w.manager.contains(who.as_str()))
            })
            && filter.labels.as_ref().is_none_or(|selector| {
                let labels = record.labels.as_ref();
                selector.matches(|k| labels.and_then(|l| l.get(k)).map(String::as_str))
            })
            && stamp >= filter.since
    };
    let mut found = Vec::new();
    let mut take = |stamp: u64| -> Result<bool, StoreError> {
        if let Some(record) = entries
            .get(stamp)?
            .and_then(|v| Record::decode_header(v.value()))
            && wanted(stamp, &record)
        {
            found.push(Listed {
                stamp,
                record,
                detail: None,
            });
        }
        Ok(found.len() >= filter.limit)
    };
    // The narrowest index first.
    if let Some(namespace) = &filter.namespace {
        let index = txn.open_table(NAMESPACES)?;
        for row in index
            .range((namespace.as_str(), filter.since)..=(namespace.as_str(), filter.until))?
            .rev()
        {
            if take(row?.0.value().1)? {
                break;
            }
        }
    } else if filter.kinds.len() == 1 {
        let index = txn.open_table(KINDS)?;
        let kind = filter.kinds[0].as_str();
        for row in index
            .range((kind, filter.since)..=(kind, filter.until))?
            .rev()
        {
            if take(row?.0.value().1)? {
                break;
            }
        }
    } else {
        for row in entries.range(filter.since..=filter.until)?.rev() {
            if take(row?.0.value())? {
                break;
            }
        }
    }
    changed_of_textual(txn, &entries, &mut found)?;
    Ok(found)
}

/// Fills in what changed in the textual entries of `listed` (which keep
/// the object's text, not what changed): the paths of the diff from the
/// version before, made now.
fn changed_of_textual(
    txn: &ReadTransaction,
    entries: &ReadOnlyTable<u64, &'static [u8]>,
    listed: &mut [Listed],
) -> Result<(), StoreError> {
    let wanted = |l: &Listed| l.record.textual && l.record.change == "MODIFIED";
    if !listed.iter().any(wanted) {
        return Ok(());
    }
    let objects = txn.open_table(OBJECTS)?;
    let bases = txn.open_table(BASES)?;
    for l in listed.iter_mut().filter(|l| wanted(l)) {
        let key = l.record.key.clone();
        let key = key.as_str();
        let before = match version_at(&objects, entries, &bases, key, l.stamp.saturating_sub(1))? {
            Some((state, _)) => Some(state),
            None if objects.range((key, 0)..(key, l.stamp))?.next().is_none() => {
                bases.get(key)?.and_then(|v| decode_base(v.value()))
            }
            None => None,
        };
        let record = entries
            .get(l.stamp)?
            .and_then(|v| Record::decode(v.value()));
        let after = record.and_then(|r| State::after(before.as_ref(), &r));
        if let (Some(before), Some(after)) = (before, after) {
            l.record.changed = diff::diff(&before.text(), &after.text()).1;
        }
    }
    Ok(())
}

/// The stamps of Events about `key` in the window.
pub(super) fn events_about(
    txn: &ReadTransaction,
    key: &str,
    since: u64,
    until: u64,
) -> Result<Vec<Listed>, StoreError> {
    let about = txn.open_table(ABOUT)?;
    let entries = txn.open_table(ENTRIES)?;
    let objects = txn.open_table(OBJECTS)?;
    let bases = txn.open_table(BASES)?;
    let mut records = Vec::new();
    for row in about.range((key, since)..=(key, until))? {
        let stamp = row?.0.value().1;
        if let Some(record) = entries.get(stamp)?.and_then(|v| Record::decode(v.value())) {
            records.push((stamp, record));
        }
    }
    // The API server serves each Event as `events.k8s.io/v1` and as `v1`:
    // when both are watched, it is told once, as `events.k8s.io`.
    let version = |r: &Record| {
        (
            r.namespace.clone(),
            r.name.clone(),
            r.resource_version.clone(),
        )
    };
    let told: std::collections::HashSet<_> = records
        .iter()
        .filter(|(_, r)| r.kind != "/Event")
        .map(|(_, r)| version(r))
        .collect();
    let mut found = Vec::new();
    for (stamp, record) in records {
        if record.kind == "/Event" && told.contains(&version(&record)) {
            continue;
        }
        let detail = state_at(&objects, &entries, &bases, &record.key, stamp)?
            .map(|(event, _)| event_detail(&event));
        found.push(Listed {
            stamp,
            record,
            detail,
        });
    }
    Ok(found)
}

/// What an Event (`events.k8s.io/v1` or `v1`) says: its type, reason,
/// note, count, and who reported it.
fn event_detail(event: &Value) -> Value {
    let text = |paths: &[&str]| {
        paths
            .iter()
            .find_map(|p| event.pointer(p).filter(|v| !v.is_null()).cloned())
            .unwrap_or(Value::Null)
    };
    json!({
        "type": text(&["/type"]),
        "reason": text(&["/reason"]),
        "note": text(&["/note", "/message"]),
        "count": text(&["/series/count", "/deprecatedCount", "/count"]),
        "reportedBy": text(&["/reportingController", "/source/component", "/deprecatedSource/component"]),
    })
}

/// Edges that appeared or went in the window, oldest first.
pub(super) fn edges(
    txn: &ReadTransaction,
    since: u64,
    until: u64,
) -> Result<Vec<(u64, EdgeRecord)>, StoreError> {
    let table = txn.open_table(EDGES)?;
    let mut found = Vec::new();
    for row in table.range(since..=until)? {
        let (k, v) = row?;
        if let Ok(edge) = serde_json::from_slice(v.value()) {
            found.push((k.value(), edge));
        }
    }
    Ok(found)
}

/// The journal's sizes per kind, and how far back it reaches.
pub(super) fn kinds(txn: &ReadTransaction) -> Result<BTreeMap<String, (u64, u64)>, StoreError> {
    let meta = txn.open_table(META)?;
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for row in meta.range("bytes/"..="bytes/\u{10FFFF}")? {
        let (k, v) = row?;
        out.entry(k.value()["bytes/".len()..].to_string())
            .or_default()
            .0 = v.value();
    }
    for row in meta.range("first/"..="first/\u{10FFFF}")? {
        let (k, v) = row?;
        let kind = k.value()["first/".len()..].to_string();
        let reach = meta
            .get(format!("reach/{kind}").as_str())?
            .map_or(0, |r| r.value());
        out.entry(kind).or_default().1 = v.value().max(reach);
    }
    Ok(out)
}
