//! The conditions of the earlier GRW's query body, which its notifiers'
//! `filter` shares: `name`, `namespace` and `uid`, and the flat
//! `[key1, value1, key2, value2, ...]` arrays `labelSelectors`,
//! `annotationSelectors` and `fieldMatches`. Read once here, by the
//! configuration (a notifier's [`NotifierFilter`]) and by the compat query
//! route, into values the query engine turns into a query.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::de::show;
use crate::selectors::{LabelSelector, SelectorError};

/// Body members holding flat pairs.
pub const PAIR_MEMBERS: [&str; 3] = ["labelSelectors", "annotationSelectors", "fieldMatches"];

/// Members a notifier's `filter` may have: the query body's. `group`,
/// `version` and `kind` are accepted and ignored (the notifier's resource
/// names the kind).
pub(super) const FILTER_MEMBERS: [&str; 9] = [
    "name",
    "namespace",
    "uid",
    "labelSelectors",
    "annotationSelectors",
    "fieldMatches",
    "group",
    "version",
    "kind",
];

/// The conditions of the pair members: all must hold.
#[derive(Debug, Clone, Default)]
pub struct PairConditions {
    /// `labelSelectors`: each pair an equality, checked as the API server
    /// checks label keys and values.
    pub labels: LabelSelector,
    /// `annotationSelectors`: annotations that must be present with these
    /// values.
    pub annotations: Vec<(String, String)>,
    /// `fieldMatches`: dotted paths whose JSON value must equal the value
    /// given, type-sensitively.
    pub json_fields: Vec<(Vec<String>, Value)>,
}

/// A pair member that is not what the body's format says.
#[derive(Debug, thiserror::Error)]
pub enum PairError {
    /// Not an array, or one of odd length.
    #[error(
        "`{member}` must be a flat array of key, value pairs: [key1, value1, key2, value2, ...]"
    )]
    NotPairs {
        /// The member.
        member: &'static str,
    },
    /// A key that is not a non-empty string.
    #[error("`{member}`: keys must be non-empty strings, got {got}")]
    Key {
        /// The member.
        member: &'static str,
        /// The key found, as JSON.
        got: String,
    },
    /// A value that must be a string and is not.
    #[error("`{member}`: the value of `{key}` must be a string, got {got}")]
    Value {
        /// The member.
        member: &'static str,
        /// The key.
        key: String,
        /// The value found, as JSON.
        got: String,
    },
    /// Label pairs that do not make a valid selector.
    #[error("`labelSelectors`: {0}")]
    Labels(#[source] SelectorError),
    /// A `fieldMatches` key that is not a dotted path.
    #[error("`fieldMatches`: `{path}` is not a dotted path such as `spec.nodeName`")]
    Path {
        /// The key as written.
        path: String,
    },
}

impl PairConditions {
    /// The pair members of `body` (a missing or `null` member is empty).
    pub fn from_body(body: &Map<String, Value>) -> Result<PairConditions, PairError> {
        Ok(PairConditions {
            labels: label_pairs(body)?,
            annotations: string_pairs(body, "annotationSelectors")?,
            json_fields: field_matches(body)?,
        })
    }
}

/// A flat `[key1, value1, key2, value2, ...]` array.
fn pairs<'b>(
    body: &'b Map<String, Value>,
    member: &'static str,
) -> Result<Vec<(String, &'b Value)>, PairError> {
    let Some(value) = body.get(member).filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let items = value
        .as_array()
        .filter(|a| a.len() % 2 == 0)
        .ok_or(PairError::NotPairs { member })?;
    items
        .chunks(2)
        .map(|pair| match &pair[0] {
            Value::String(k) if !k.is_empty() => Ok((k.clone(), &pair[1])),
            other => Err(PairError::Key {
                member,
                got: other.to_string(),
            }),
        })
        .collect()
}

fn string_pairs(
    body: &Map<String, Value>,
    member: &'static str,
) -> Result<Vec<(String, String)>, PairError> {
    pairs(body, member)?
        .into_iter()
        .map(|(key, v)| match v {
            Value::String(s) => Ok((key, s.clone())),
            other => Err(PairError::Value {
                member,
                key,
                got: other.to_string(),
            }),
        })
        .collect()
}

/// Label pairs are equality conditions, validated as Kubernetes would
/// validate keys and values, through the selector parser.
fn label_pairs(body: &Map<String, Value>) -> Result<LabelSelector, PairError> {
    let text = string_pairs(body, "labelSelectors")?
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(",");
    text.parse::<LabelSelector>().map_err(PairError::Labels)
}

fn field_matches(body: &Map<String, Value>) -> Result<Vec<(Vec<String>, Value)>, PairError> {
    pairs(body, "fieldMatches")?
        .into_iter()
        .map(|(path, value)| {
            let segments: Vec<String> = path.split('.').map(String::from).collect();
            if segments.iter().any(String::is_empty) {
                return Err(PairError::Path { path });
            }
            Ok((segments, value.clone()))
        })
        .collect()
}

/// The `filter` of a compat notifier: conditions on the object, in the shape
/// of the compat query body (`name`, `namespace`, `uid`, `labelSelectors`,
/// `annotationSelectors`, `fieldMatches`); all must hold.
#[derive(Debug, Clone)]
pub struct NotifierFilter {
    /// The object as written; part of the definition that names the
    /// notifier's subscriptions.
    pub written: Value,
    /// `name`.
    pub name: Option<String>,
    /// `namespace`.
    pub namespace: Option<String>,
    /// `uid`.
    pub uid: Option<String>,
    /// The pair members.
    pub pairs: PairConditions,
}

/// Two filters are the same when they were written the same.
impl PartialEq for NotifierFilter {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

/// A notifier `filter` that is not the query body's shape.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// Not a JSON object.
    #[error("expected an object (the same shape as a query body), got {0}")]
    NotAnObject(String),
    /// A member the body does not have.
    #[error("unknown member `{0}`; accepted: {members}", members = FILTER_MEMBERS.join(", "))]
    UnknownMember(String),
    /// `name`, `namespace` or `uid` that is not a string.
    #[error("`{member}` must be a string, got {got}")]
    NotAString {
        /// The member.
        member: &'static str,
        /// What it holds, shortened.
        got: String,
    },
    /// A pair member.
    #[error(transparent)]
    Pairs(#[from] PairError),
}

impl NotifierFilter {
    /// Reads a compat notifier `filter`: the shape of the compat query body,
    /// every member optional.
    pub fn from_json(written: Value) -> Result<NotifierFilter, FilterError> {
        let Some(map) = written.as_object() else {
            return Err(FilterError::NotAnObject(show(&written)));
        };
        if let Some(unknown) = map.keys().find(|k| !FILTER_MEMBERS.contains(&k.as_str())) {
            return Err(FilterError::UnknownMember(unknown.clone()));
        }
        let text = |member: &'static str| -> Result<Option<String>, FilterError> {
            match map.get(member) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(FilterError::NotAString {
                    member,
                    got: show(other),
                }),
            }
        };
        Ok(NotifierFilter {
            name: text("name")?,
            namespace: text("namespace")?,
            uid: text("uid")?,
            pairs: PairConditions::from_body(map)?,
            written,
        })
    }
}

impl<'de> Deserialize<'de> for NotifierFilter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        NotifierFilter::from_json(Value::deserialize(deserializer)?)
            .map_err(serde::de::Error::custom)
    }
}
