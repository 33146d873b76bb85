//! Conditions written as flat `[key1, value1, key2, value2, ...]` arrays:
//! the `labelSelectors`, `annotationSelectors` and `fieldMatches` members of
//! the compat query body, also used by compat notifier filters.

use serde_json::{Map, Value};

use super::{LabelSelector, Query};

/// Body members holding flat pairs.
pub const PAIR_MEMBERS: [&str; 3] = ["labelSelectors", "annotationSelectors", "fieldMatches"];

/// Adds the pair members of `body` to `query`. Errors name the member and
/// say what is expected.
pub fn add_pair_conditions(body: &Map<String, Value>, query: &mut Query) -> Result<(), String> {
    query.labels = label_pairs(body)?;
    query.annotations = string_pairs(body, "annotationSelectors")?;
    query.json_fields = field_matches(body)?;
    Ok(())
}

/// A flat `[key1, value1, key2, value2, ...]` array.
fn pairs<'b>(
    body: &'b Map<String, Value>,
    member: &str,
) -> Result<Vec<(String, &'b Value)>, String> {
    let Some(value) = body.get(member).filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let items = value
        .as_array()
        .filter(|a| a.len() % 2 == 0)
        .ok_or_else(|| {
            format!("`{member}` must be a flat array of key, value pairs: [key1, value1, key2, value2, ...]")
        })?;
    items
        .chunks(2)
        .map(|pair| match &pair[0] {
            Value::String(k) if !k.is_empty() => Ok((k.clone(), &pair[1])),
            other => Err(format!(
                "`{member}`: keys must be non-empty strings, got {other}"
            )),
        })
        .collect()
}

fn string_pairs(body: &Map<String, Value>, member: &str) -> Result<Vec<(String, String)>, String> {
    pairs(body, member)?
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s.clone())),
            other => Err(format!(
                "`{member}`: the value of `{k}` must be a string, got {other}"
            )),
        })
        .collect()
}

/// Label pairs are equality conditions, validated as Kubernetes would
/// validate keys and values, through the selector parser.
fn label_pairs(body: &Map<String, Value>) -> Result<LabelSelector, String> {
    let text = string_pairs(body, "labelSelectors")?
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect::<Vec<_>>()
        .join(",");
    text.parse::<LabelSelector>()
        .map_err(|e| format!("`labelSelectors`: {e}"))
}

fn field_matches(body: &Map<String, Value>) -> Result<Vec<(Vec<String>, Value)>, String> {
    pairs(body, "fieldMatches")?
        .into_iter()
        .map(|(path, value)| {
            let segments: Vec<String> = path.split('.').map(String::from).collect();
            if segments.iter().any(String::is_empty) {
                return Err(format!(
                    "`fieldMatches`: `{path}` is not a dotted path such as `spec.nodeName`"
                ));
            }
            Ok((segments, value.clone()))
        })
        .collect()
}
