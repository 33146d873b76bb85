//! Objects as CEL values, read from their JSON text as an expression reaches
//! into them.
//!
//! An expression touches a few fields of an object (`object.status.phase`,
//! a container's `restartCount`), so turning the whole object into CEL maps
//! and lists first would cost far more than the answer: about 20 µs for a
//! Pod, against under 1 µs to find the two members it reads. A map or list
//! here is a range of the object's compact JSON text; indexing it scans
//! that range for the member, and only iterating it (`all`, `exists`,
//! `map`...) lists its entries, which the [budget](super::budget) counts.
//! Scalars become CEL's own values: strings, `int` for integral numbers,
//! `double` for others, `bool` and `null`.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use cel::ExecutionError;
use cel::common::traits::{Container, Indexer, Iterable, Iterator as CelIterator, Sizer};
use cel::common::types::{
    CelBool, CelDouble, CelInt, CelNull, CelString, LIST_TYPE, MAP_TYPE, Type,
};
use cel::common::value::{CowVal, StaticVal, Val};

use super::budget;
use crate::json_text::{array_elements, element_from, member_from, object_members, value_at};

static MAP: Type = MAP_TYPE;
static LIST: Type = LIST_TYPE;

/// Shared JSON text, from where a value starts. The range may go on past
/// the value's end: a value reached by a key is not skipped to find its end
/// (see [`member_from`]); reading it stops at its own closing bracket.
#[derive(Clone)]
struct Text {
    all: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl Text {
    fn whole(all: Arc<Vec<u8>>) -> Text {
        let range = 0..all.len();
        Text { all, range }
    }

    fn bytes(&self) -> &[u8] {
        &self.all[self.range.clone()]
    }

    /// The value alone.
    fn value(&self) -> &[u8] {
        value_at(self.bytes()).unwrap_or_default()
    }

    /// The bytes of `range` of the whole text.
    fn at(&self, range: &Range<usize>) -> &[u8] {
        &self.all[range.clone()]
    }

    /// Where `part`, a slice of [`Text::bytes`], is in the whole text.
    fn range_of(&self, part: &[u8]) -> Range<usize> {
        let start = part.as_ptr() as usize - self.all.as_ptr() as usize;
        start..start + part.len()
    }

    /// The text of `part`, a slice of [`Text::bytes`].
    fn part(&self, part: &[u8]) -> Text {
        let start = part.as_ptr() as usize - self.all.as_ptr() as usize;
        Text {
            all: self.all.clone(),
            range: start..start + part.len(),
        }
    }
}

/// The CEL value of the compact JSON value at the start of `text`.
fn value(text: Text) -> Box<dyn Val> {
    match text.bytes().first() {
        Some(b'{') => Box::new(JsonMap::new(text, None)),
        Some(b'[') => Box::new(JsonList::new(text)),
        Some(b'"') => Box::new(CelString::from(string(text.value()))),
        Some(b't') => Box::new(CelBool::from(true)),
        Some(b'f') => Box::new(CelBool::from(false)),
        Some(b'n') | None => Box::new(CelNull),
        Some(_) => number(text.value()),
    }
}

/// A JSON string (quotes included) as text.
fn string(quoted: &[u8]) -> String {
    if quoted.len() < 2 {
        return String::new();
    }
    let inner = &quoted[1..quoted.len() - 1];
    if !inner.contains(&b'\\') {
        return match std::str::from_utf8(inner) {
            Ok(text) => text.to_owned(),
            Err(_) => String::from_utf8_lossy(inner).into_owned(),
        };
    }
    serde_json::from_slice(quoted).unwrap_or_else(|_| String::from_utf8_lossy(inner).into_owned())
}

/// An integral number as an `int` (as the API server's CEL sees an
/// `integer` field), any other as a `double`.
fn number(text: &[u8]) -> Box<dyn Val> {
    let text = std::str::from_utf8(text).unwrap_or("");
    match text.parse::<i64>() {
        Ok(n) => Box::new(CelInt::from(n)),
        Err(_) => Box::new(CelDouble::from(text.parse::<f64>().unwrap_or(f64::NAN))),
    }
}

/// Whether the quoted key `raw` is `key`.
fn key_is(raw: &[u8], key: &str) -> bool {
    if raw.len() < 2 {
        return false;
    }
    let inner = &raw[1..raw.len() - 1];
    match inner.contains(&b'\\') {
        false => inner == key.as_bytes(),
        true => string(raw) == key,
    }
}

/// The key an index names, for maps.
fn key_of(idx: &dyn Val) -> Result<&str, ExecutionError> {
    idx.downcast_ref::<CelString>()
        .map(|key| key.inner())
        .ok_or_else(|| ExecutionError::UnexpectedType {
            got: idx.get_type().name().to_owned(),
            want: "string".to_owned(),
        })
}

/// The whole value as CEL's own map or list, for equality.
fn materialized(text: &Text) -> Option<Box<dyn Val>> {
    let json: serde_json::Value = serde_json::from_slice(text.value()).ok()?;
    let value = cel::to_value(json).ok()?;
    Box::<dyn Val>::try_from(value).ok()
}

/// Equality of a JSON map or list with any value. Two values read from
/// objects compare as JSON (the same text at once, else parsed: member
/// order does not matter); with anything else, both are made CEL's own.
fn equals(text: &Text, other: &dyn Val) -> bool {
    let theirs = if let Some(map) = other.downcast_ref::<JsonMap>() {
        &map.text
    } else if let Some(list) = other.downcast_ref::<JsonList>() {
        &list.text
    } else {
        return materialized(text).is_some_and(|mine| mine.equals(other));
    };
    let (mine, theirs) = (text.value(), theirs.value());
    mine == theirs
        || serde_json::from_slice::<serde_json::Value>(mine)
            .ok()
            .zip(serde_json::from_slice::<serde_json::Value>(theirs).ok())
            .is_some_and(|(a, b)| a == b)
}

/// Lends the values of a slice.
struct Items<'b> {
    items: std::slice::Iter<'b, Box<dyn Val>>,
}

impl<'b, 'v> CelIterator<'b, 'v> for Items<'b> {
    fn next(&mut self) -> Option<&'b (dyn Val + 'v)> {
        self.items.next().map(|item| &**item as &(dyn Val + 'v))
    }
}

/// What a JSON map and a JSON list are alike as CEL values: their text,
/// indexed, iterated (over `entries`: a map's keys, a list's elements,
/// `len` of them charged first), sized, searched with `in` and compared; a
/// copy reads the same text afresh.
macro_rules! json_value {
    ($name:ident, $type:ident, $fresh:expr) => {
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&String::from_utf8_lossy(self.text.value()))
            }
        }

        impl Val for $name {
            fn get_type(&self) -> &Type {
                &$type
            }

            fn cel_type() -> &'static Type {
                &$type
            }

            fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
            where
                Self: 'v,
            {
                Some(self)
            }

            fn as_iterable<'b, 'v>(&'b self) -> Option<&'b (dyn Iterable + 'v)>
            where
                Self: 'v,
            {
                Some(self)
            }

            fn as_sizer(&self) -> Option<&dyn Sizer> {
                Some(self)
            }

            fn as_container(&self) -> Option<&dyn Container> {
                Some(self)
            }

            fn equals(&self, other: &dyn Val) -> bool {
                equals(&self.text, other)
            }

            fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v>
            where
                Self: 'v,
            {
                let fresh: fn(Text) -> $name = $fresh;
                Box::new(fresh(self.text.clone()))
            }

            fn as_any(&self) -> Option<&dyn std::any::Any> {
                Some(self)
            }
        }

        impl StaticVal for $name {}

        impl Iterable for $name {
            fn iter<'b, 'v>(&'b self) -> Box<dyn CelIterator<'b, 'v> + 'b>
            where
                Self: 'v,
            {
                let items: &[Box<dyn Val>] = match budget::charge(self.len()) {
                    true => self.entries(),
                    false => &[],
                };
                Box::new(Items {
                    items: items.iter(),
                })
            }
        }
    };
}

/// A JSON object.
pub(super) struct JsonMap {
    text: Text,
    /// Where each member's quoted key is in the text, and its value, once
    /// listed.
    members: OnceLock<Vec<(Range<usize>, Text)>>,
    /// The keys as values, once iterated.
    keys: OnceLock<Vec<Box<dyn Val>>>,
}

impl JsonMap {
    fn new(text: Text, members: Option<Vec<(Range<usize>, Text)>>) -> JsonMap {
        JsonMap {
            text,
            members: members.map(OnceLock::from).unwrap_or_default(),
            keys: OnceLock::new(),
        }
    }

    /// The object `json`, whose top-level members are already known
    /// (a cached object's index): `(quoted key, value)`, slices of `json`.
    pub(super) fn root<'j>(
        json: Arc<Vec<u8>>,
        members: impl Iterator<Item = (&'j [u8], &'j [u8])>,
    ) -> JsonMap {
        let text = Text::whole(json);
        let members = members
            .map(|(key, value)| (text.range_of(key), text.part(value)))
            .collect();
        JsonMap::new(text, Some(members))
    }

    /// The object `json`.
    pub(super) fn of(json: Arc<Vec<u8>>) -> Box<dyn Val> {
        value(Text::whole(json))
    }

    fn len(&self) -> usize {
        self.members().len()
    }

    /// The keys, as values.
    fn entries(&self) -> &[Box<dyn Val>] {
        self.keys.get_or_init(|| {
            self.members()
                .iter()
                .map(|(key, _)| {
                    Box::new(CelString::from(string(self.text.at(key)))) as Box<dyn Val>
                })
                .collect()
        })
    }

    fn members(&self) -> &[(Range<usize>, Text)] {
        self.members.get_or_init(|| {
            object_members(self.text.bytes())
                .unwrap_or_default()
                .into_iter()
                .map(|(key, value)| (self.text.range_of(key), self.text.part(value)))
                .collect()
        })
    }

    fn find(&self, key: &str) -> Option<Text> {
        match self.members.get() {
            Some(members) => members
                .iter()
                .find(|(k, _)| key_is(self.text.at(k), key))
                .map(|(_, v)| v.clone()),
            // One lookup scans for the member instead of listing them all.
            None => member_from(self.text.bytes(), key).map(|value| self.text.part(value)),
        }
    }
}

json_value!(JsonMap, MAP, |text| JsonMap::new(text, None));

impl Indexer for JsonMap {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let key = key_of(idx)?;
        match self.find(key) {
            Some(text) => Ok(CowVal::Owned(value(text))),
            None => Err(ExecutionError::no_such_key(key)),
        }
    }

    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

impl Sizer for JsonMap {
    fn size(&self) -> CelInt {
        CelInt::from(self.len() as i64)
    }
}

impl Container for JsonMap {
    fn contains(&self, value: &dyn Val) -> Result<bool, ExecutionError> {
        Ok(self.find(key_of(value)?).is_some())
    }
}

/// A JSON array.
pub(super) struct JsonList {
    text: Text,
    /// The elements as values, once listed.
    elements: OnceLock<Vec<Box<dyn Val>>>,
}

impl JsonList {
    fn new(text: Text) -> JsonList {
        JsonList {
            text,
            elements: OnceLock::new(),
        }
    }

    fn len(&self) -> usize {
        self.elements().len()
    }

    fn entries(&self) -> &[Box<dyn Val>] {
        self.elements()
    }

    fn elements(&self) -> &[Box<dyn Val>] {
        self.elements.get_or_init(|| {
            array_elements(self.text.bytes())
                .unwrap_or_default()
                .into_iter()
                .map(|element| value(self.text.part(element)))
                .collect()
        })
    }
}

json_value!(JsonList, LIST, JsonList::new);

impl Indexer for JsonList {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let Some(index) = idx.downcast_ref::<CelInt>().map(|i| *i.inner()) else {
            return Err(ExecutionError::UnexpectedType {
                got: idx.get_type().name().to_owned(),
                want: "int".to_owned(),
            });
        };
        let out_of_bounds = || ExecutionError::IndexOutOfBounds(cel::Value::Int(index));
        let index = usize::try_from(index).map_err(|_| out_of_bounds())?;
        let element = match self.elements.get() {
            Some(elements) => elements.get(index).map(|e| e.clone_as_boxed()),
            None => {
                element_from(self.text.bytes(), index).map(|element| value(self.text.part(element)))
            }
        };
        element.map(CowVal::Owned).ok_or_else(out_of_bounds)
    }

    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

impl Sizer for JsonList {
    fn size(&self) -> CelInt {
        CelInt::from(self.len() as i64)
    }
}

impl Container for JsonList {
    fn contains(&self, value: &dyn Val) -> Result<bool, ExecutionError> {
        let elements = self.elements();
        if !budget::charge(elements.len()) {
            return Ok(false);
        }
        Ok(elements.iter().any(|element| element.equals(value)))
    }
}
