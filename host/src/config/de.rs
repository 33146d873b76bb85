//! Typed values out of JSON, with the rules of the config file.
//!
//! The types of the config (and the subscription definitions of the API)
//! derive or implement [`Deserialize`]; [`from_value`] reads them out of a
//! parsed JSON [`Value`] through [`ValueDeserializer`], wrapped in
//! `serde_path_to_error` so that every error names its full key. The
//! deserializer applies the rules of the format:
//! - in an object read as a struct, a `null` member counts as missing, and a
//!   member the struct does not know is a warning naming its full key (the
//!   struct may refuse it instead, with `deny_unknown_fields`);
//! - a whole number may be written `3000` or `3000.0`;
//! - an error about a value says what was expected and shows the value,
//!   shortened ([`show`]): `expected a number from 1 to 65535, got "abc"`.
//!
//! Members of a struct are read in the order the struct declares them, so the
//! first error reported (and the order of the warnings) does not depend on
//! the order of the keys in the file.

use std::cell::RefCell;
use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::Value;

/// Longest rendering of an offending value in an error message, in characters.
pub(crate) const SHOWN_VALUE_CHARS: usize = 60;

/// A value that cannot be read, with the key it is at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidKey {
    /// Full path of the key from the value read, e.g.
    /// `initialWatchingResources[0].kind` or `webhook.url`; empty for the
    /// value itself.
    pub key: String,
    /// What was expected and what was found.
    pub message: String,
}

impl fmt::Display for InvalidKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for InvalidKey {}

/// Reads a `T` out of `value`; unknown keys are added to `warnings` as
/// ``config key `KEY` is not known and is ignored``.
pub(crate) fn from_value<'de, T: Deserialize<'de>>(
    value: &'de Value,
    warnings: &mut Vec<String>,
) -> Result<T, InvalidKey> {
    let unknown = RefCell::new(Vec::new());
    let deserializer = ValueDeserializer {
        value,
        path: String::new(),
        unknown: &unknown,
    };
    let result = serde_path_to_error::deserialize(deserializer);
    warnings.extend(unknown.into_inner());
    result.map_err(|e| {
        let mut segments: Vec<String> = e
            .path()
            .iter()
            .filter_map(|segment| match segment {
                serde_path_to_error::Segment::Seq { index } => Some(format!("[{index}]")),
                serde_path_to_error::Segment::Map { key } => Some(format!(".{key}")),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
        let error = e.into_inner();
        match error.kind {
            // The path ends at the unknown key; the message names it.
            Kind::UnknownField => {
                segments.pop();
            }
            Kind::MissingField(field) => segments.push(format!(".{field}")),
            Kind::Expected | Kind::Done => {}
        }
        let key = segments.concat();
        InvalidKey {
            key: key.strip_prefix('.').unwrap_or(&key).to_string(),
            message: error.message,
        }
    })
}

/// A JSON value as an error message shows it: compact, cut after
/// [`SHOWN_VALUE_CHARS`] characters.
pub(crate) fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_VALUE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(SHOWN_VALUE_CHARS).collect();
    cut.push('…');
    cut
}

/// The error of [`ValueDeserializer`].
#[derive(Debug)]
pub(crate) struct DeError {
    kind: Kind,
    message: String,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `message` is what was expected; the value found is still to be added.
    Expected,
    /// `message` is complete.
    Done,
    /// A struct refused a key; the message names it.
    UnknownField,
    /// A required key is missing; the message says what it holds.
    MissingField(&'static str),
}

impl DeError {
    /// Completes an "expected ..." error with the value that was found.
    fn got(self, value: &Value) -> DeError {
        match self.kind {
            Kind::Expected => DeError {
                kind: Kind::Done,
                message: format!("expected {}, got {}", self.message, show(value)),
            },
            _ => self,
        }
    }

    fn expected(what: impl fmt::Display) -> DeError {
        DeError {
            kind: Kind::Expected,
            message: what.to_string(),
        }
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Expected => write!(f, "expected {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        DeError {
            kind: Kind::Done,
            message: message.to_string(),
        }
    }

    fn invalid_type(_: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        DeError::expected(expected)
    }

    fn invalid_value(_: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        DeError::expected(expected)
    }

    fn invalid_length(_: usize, expected: &dyn de::Expected) -> Self {
        DeError::expected(expected)
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        let known: Vec<String> = expected.iter().map(|k| format!("`{k}`")).collect();
        DeError {
            kind: Kind::UnknownField,
            message: format!(
                "unknown field `{field}`, expected one of {}",
                known.join(", ")
            ),
        }
    }

    fn missing_field(field: &'static str) -> Self {
        DeError {
            kind: Kind::MissingField(field),
            message: format!("expected {}; the key is missing", required(field)),
        }
    }
}

/// What a required key holds, for the message saying it is missing.
fn required(field: &str) -> &'static str {
    match field {
        "webhookUrls" => super::accepted::URLS_EXPECTED,
        "url" => "a URL",
        "name" | "version" | "kind" => super::accepted::NAME_EXPECTED,
        _ => "a value",
    }
}

/// Deserializes from a borrowed JSON value with the rules of the config file;
/// see the module documentation.
#[derive(Clone)]
pub(crate) struct ValueDeserializer<'de, 'w> {
    value: &'de Value,
    /// Full key of `value`, for warnings.
    path: String,
    unknown: &'w RefCell<Vec<String>>,
}

impl<'de, 'w> ValueDeserializer<'de, 'w> {
    fn child(&self, value: &'de Value, segment: fmt::Arguments<'_>) -> Self {
        ValueDeserializer {
            value,
            path: format!("{}{segment}", self.path),
            unknown: self.unknown,
        }
    }

    fn key_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn member(&self, key: &str, value: &'de Value) -> Self {
        ValueDeserializer {
            value,
            path: self.key_of(key),
            unknown: self.unknown,
        }
    }
}

/// A whole number, written with or without a zero fraction.
fn whole_number(value: &Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    // 2^64: the first float above every u64.
    (f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&f)).then_some(f as u64)
}

macro_rules! whole_numbers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            match whole_number(self.value) {
                Some(n) => visitor.visit_u64::<DeError>(n).map_err(|e| e.got(self.value)),
                None => self.deserialize_any(visitor),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for ValueDeserializer<'de, '_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let value = self.value;
        let result: Result<V::Value, DeError> = match value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                (None, None) => visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Items {
                parent: &self,
                items: items.iter().enumerate(),
            }),
            Value::Object(map) => visitor.visit_map(Members {
                parent: &self,
                entries: map.iter().map(|(k, v)| (k.as_str(), v)).collect(),
                next: 0,
                value: None,
            }),
        };
        result.map_err(|e| e.got(value))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            value => visitor.visit_some(self.clone()).map_err(|e| e.got(value)),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            value => Err(DeError::expected("true or false").got(value)),
        }
    }

    whole_numbers! {
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Number(n) => visitor
                .visit_f64::<DeError>(n.as_f64().unwrap_or(f64::NAN))
                .map_err(|e| e.got(self.value)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let value = self.value;
        visitor.visit_newtype_struct(self).map_err(|e| e.got(value))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let Value::Object(map) = self.value else {
            // Not as an array of the members, as serde would allow.
            let error: DeError =
                de::Error::invalid_type(de::Unexpected::Other("a value"), &visitor);
            return Err(error.got(self.value));
        };
        #[cfg(test)]
        super::keys::record(&self.path, fields);
        // Known keys in the struct's order, then the others, which the
        // struct ignores (after the warning) or refuses.
        let present = |(k, v): (&'de String, &'de Value)| (!v.is_null()).then_some((k.as_str(), v));
        let mut entries: Vec<(&str, &Value)> = fields
            .iter()
            .filter_map(|f| map.get_key_value(*f))
            .filter_map(present)
            .collect();
        let mut unknown: Vec<&str> = Vec::new();
        for (k, v) in map.iter().filter(|(k, _)| !fields.contains(&k.as_str())) {
            unknown.push(k);
            entries.extend(present((k, v)));
        }
        unknown.sort_unstable();
        self.unknown
            .borrow_mut()
            .extend(unknown.into_iter().map(|k| {
                format!(
                    "config key `{}` is not known and is ignored",
                    self.key_of(k)
                )
            }));
        visitor
            .visit_map(Members {
                parent: &self,
                entries,
                next: 0,
                value: None,
            })
            .map_err(|e| e.got(self.value))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.value {
            Value::String(s) => visitor
                .visit_enum(BorrowedStrDeserializer::<DeError>::new(s))
                .map_err(|e| e.got(self.value)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
    }
}

struct Items<'p, 'de, 'w, I> {
    parent: &'p ValueDeserializer<'de, 'w>,
    items: I,
}

impl<'de, I: Iterator<Item = (usize, &'de Value)>> SeqAccess<'de> for Items<'_, 'de, '_, I> {
    type Error = DeError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, DeError> {
        let Some((i, item)) = self.items.next() else {
            return Ok(None);
        };
        seed.deserialize(self.parent.child(item, format_args!("[{i}]")))
            .map(Some)
            .map_err(|e| e.got(item))
    }
}

struct Members<'p, 'de, 'w> {
    parent: &'p ValueDeserializer<'de, 'w>,
    entries: Vec<(&'de str, &'de Value)>,
    next: usize,
    value: Option<(&'de str, &'de Value)>,
}

impl<'de> MapAccess<'de> for Members<'_, 'de, '_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some(&(key, value)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        self.value = Some((key, value));
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, DeError> {
        let (key, value) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value was asked for before its key"))?;
        seed.deserialize(self.parent.member(key, value))
            .map_err(|e| e.got(value))
    }
}

/// An array whose items are `T`; `what` describes the whole array.
pub(crate) fn array<'de, D, T>(deserializer: D, what: &'static str) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ArrayVisitor<T> {
        what: &'static str,
        item: std::marker::PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de>> Visitor<'de> for ArrayVisitor<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.what)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(ArrayVisitor {
        what,
        item: std::marker::PhantomData,
    })
}

/// A string, for `T` to check; `what` says what is expected.
pub(crate) fn string_then<'de, D, T>(
    deserializer: D,
    what: &'static str,
    check: impl FnOnce(&str) -> Result<T, Refusal>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct StringVisitor<F> {
        what: &'static str,
        check: F,
    }
    impl<'de, T, F: FnOnce(&str) -> Result<T, Refusal>> Visitor<'de> for StringVisitor<F> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.what)
        }

        fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
            let what = self.what;
            (self.check)(s).map_err(|refusal| match refusal {
                Refusal::Expected => E::invalid_value(de::Unexpected::Str(s), &what),
                Refusal::Message(message) => E::custom(message),
            })
        }
    }
    deserializer.deserialize_str(StringVisitor { what, check })
}

/// Why [`string_then`]'s check refused a string.
pub(crate) enum Refusal {
    /// Not what was expected: the message says what was, and shows the value.
    Expected,
    /// A message of its own, complete.
    Message(String),
}

/// One of the names of a table.
pub(crate) fn choose<'de, D, T: Copy>(
    deserializer: D,
    options: &'static [(&'static str, T)],
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    struct OneOf<T: 'static>(&'static [(&'static str, T)]);
    impl<T> fmt::Display for OneOf<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let names: Vec<&str> = self.0.iter().map(|(name, _)| *name).collect();
            write!(f, "one of {}", names.join(", "))
        }
    }
    struct ChoiceVisitor<T: 'static>(&'static [(&'static str, T)]);
    impl<'de, T: Copy> Visitor<'de> for ChoiceVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{}", OneOf(self.0))
        }

        fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
            self.0
                .iter()
                .find(|(name, _)| *name == s)
                .map(|(_, value)| *value)
                .ok_or_else(|| E::invalid_value(de::Unexpected::Str(s), &self))
        }
    }
    deserializer.deserialize_str(ChoiceVisitor(options))
}

/// An optional string; empty counts as missing.
pub(crate) fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(deserializer)?;
    Ok(Some(s).filter(|s| !s.is_empty()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", expecting = "an object")]
    struct Inner {
        count: u16,
        #[serde(default)]
        flag: Option<bool>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", default)]
    struct Outer {
        items: Vec<Inner>,
        label: Option<String>,
    }

    impl Default for Outer {
        fn default() -> Self {
            Outer {
                items: Vec::new(),
                label: Some("default".into()),
            }
        }
    }

    fn read<'de, T: Deserialize<'de>>(value: &'de Value) -> (Result<T, InvalidKey>, Vec<String>) {
        let mut warnings = Vec::new();
        let result = from_value(value, &mut warnings);
        (result, warnings)
    }

    #[test]
    fn nulls_are_missing_and_whole_floats_are_numbers() {
        let value = json!({"items": [{"count": 3.0, "flag": null}], "label": null});
        let (outer, warnings) = read::<Outer>(&value);
        assert_eq!(
            outer.unwrap(),
            Outer {
                items: vec![Inner {
                    count: 3,
                    flag: None
                }],
                label: Some("default".into()),
            }
        );
        assert!(warnings.is_empty());
    }

    #[test]
    fn errors_name_the_key_and_show_the_value() {
        let cases = [
            (
                json!({"items": [{"count": 1}, {"count": "x"}]}),
                "items[1].count",
                "expected u16, got \"x\"",
            ),
            (
                json!({"items": [{"count": 1.5}]}),
                "items[0].count",
                "expected u16, got 1.5",
            ),
            (
                json!({"items": [{"count": 1, "flag": 1}]}),
                "items[0].flag",
                "expected true or false, got 1",
            ),
            (
                json!({"items": [5]}),
                "items[0]",
                "expected an object, got 5",
            ),
            (
                json!({"items": [{}]}),
                "items[0].count",
                "expected a value; the key is missing",
            ),
        ];
        for (value, key, message) in cases {
            let (result, _) = read::<Outer>(&value);
            let error = result.unwrap_err();
            assert_eq!(
                (error.key.as_str(), error.message.as_str()),
                (key, message),
                "{value}"
            );
        }
    }

    #[test]
    fn unknown_keys_warn_in_the_order_of_the_struct() {
        let value =
            json!({"zz": 1, "label": "x", "items": [{"count": 1, "b": 2, "a": null}], "aa": 2});
        let mut warnings = Vec::new();
        from_value::<Outer>(&value, &mut warnings).unwrap();
        assert_eq!(
            warnings,
            [
                "config key `aa` is not known and is ignored",
                "config key `zz` is not known and is ignored",
                "config key `items[0].a` is not known and is ignored",
                "config key `items[0].b` is not known and is ignored",
            ]
        );
    }

    #[test]
    fn long_values_are_shortened() {
        let long = json!("y".repeat(100));
        let shown = show(&long);
        assert_eq!(shown.chars().count(), SHOWN_VALUE_CHARS + 1);
        assert!(shown.ends_with('…'));
    }
}
