//! Columns of custom resources: the `additionalPrinterColumns` of the CRD's
//! version, after the Name column; a version without any gets an Age
//! column (`date`, at `.metadata.creationTimestamp`), as the API server
//! gives it.
//!
//! A cell is the first value the column's JSONPath selects, typed by the
//! column's type as the API server types it: `integer` (a float is
//! truncated), `number`, `boolean`, `date` (an age; `<invalid>` when the
//! text is not a timestamp) and `string` (any value, printed the way Go's
//! `fmt` prints it: `[a b]` for an array, `map[k:v]` for an object). A
//! value of another type, a path that selects nothing or fails, and an
//! unknown column type give an empty (`null`) cell.

use std::borrow::Cow;

use serde_json::Value;

use super::age::{self, Instant};
use super::columns::{AGE_DESCRIPTION, Column, Definition, NAME, Source};
use super::jsonpath::{JsonPath, PathError};

/// A CRD column whose JSONPath cannot be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "CustomResourceDefinition `{crd}`, version {version}: printer column {column:?} cannot be used: \
     {source}. Tables of this kind show only the columns before it, as the API server's do; fix \
     the column's jsonPath in the CRD"
)]
pub(crate) struct BadColumn {
    /// The CRD's name.
    pub(crate) crd: String,
    /// The version whose columns were read.
    pub(crate) version: String,
    /// The column's name.
    pub(crate) column: String,
    /// What is wrong with its path.
    #[source]
    pub(crate) source: PathError,
    /// The columns before it, which tables use instead.
    pub(crate) columns: Vec<Column>,
}

/// The columns of `version` of a CRD object.
pub(crate) fn columns(crd: &Value, version: &str) -> Result<Vec<Column>, Box<BadColumn>> {
    let printer_columns = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|versions| {
            versions
                .iter()
                .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        })
        .and_then(|v| v.get("additionalPrinterColumns"))
        .and_then(Value::as_array)
        .filter(|columns| !columns.is_empty());
    let Some(printer_columns) = printer_columns else {
        return Ok(default_columns());
    };
    let mut columns = vec![NAME.column()];
    for column in printer_columns {
        let text = |key: &str| {
            column
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let json_path = text("jsonPath");
        let path = match JsonPath::parse(&json_path) {
            Ok(path) => path,
            Err(source) => {
                return Err(Box::new(BadColumn {
                    crd: crd
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    version: version.to_string(),
                    column: text("name"),
                    source,
                    columns,
                }));
            }
        };
        let description = match text("description") {
            d if d.is_empty() => {
                format!("Printer column of the CustomResourceDefinition, at {json_path}")
            }
            d => d,
        };
        let priority = column.get("priority").and_then(Value::as_i64).unwrap_or(0);
        columns.push(Column {
            definition: Definition {
                name: text("name").into(),
                kind: text("type").into(),
                format: text("format").into(),
                description: description.into(),
                priority: i32::try_from(priority).unwrap_or(0),
            },
            source: Source::Path(path),
        });
    }
    Ok(columns)
}

/// Name and Age: what the API server shows for a CRD version without
/// printer columns, and what GRW shows for any other kind it has no printer
/// for.
pub(crate) fn default_columns() -> Vec<Column> {
    let age = Column {
        definition: Definition {
            name: Cow::Borrowed("Age"),
            kind: Cow::Borrowed("date"),
            format: Cow::Borrowed(""),
            description: Cow::Borrowed(AGE_DESCRIPTION),
            priority: 0,
        },
        source: Source::Path(JsonPath::keys(&["metadata", "creationTimestamp"])),
    };
    vec![NAME.column(), age]
}

/// The cell of a column of type `kind` at `path`.
pub(crate) fn cell(kind: &str, path: &JsonPath, object: &Value, now: Instant) -> Value {
    let first = match path.find(object) {
        Ok(values) => match values.first() {
            Some(v) => *v,
            None => return Value::Null,
        },
        Err(_) => return Value::Null,
    };
    match (kind, first) {
        ("string", value) => go_text(value).into(),
        (_, Value::Null) => Value::Null,
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => i.into(),
            // Go converts a float to int64 by truncating (saturating here).
            None => (n.as_f64().unwrap_or(0.0).trunc() as i64).into(),
        },
        ("number", Value::Number(n)) => number(n.as_f64().unwrap_or(0.0)),
        ("boolean", Value::Bool(b)) => Value::Bool(*b),
        ("date", Value::String(text)) => date(text, now).into(),
        _ => Value::Null,
    }
}

/// A float cell; a whole one is written without a fraction (`3`, not
/// `3.0`), as Go writes float64s.
fn number(f: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if f.fract() == 0.0 && f.abs() < EXACT {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// The age of a date cell: `<unknown>` for an empty text (the zero time),
/// `<invalid>` for text that is not a timestamp.
fn date(text: &str, now: Instant) -> String {
    if text.is_empty() || text == "null" {
        return "<unknown>".to_string();
    }
    match age::parse_time(text) {
        Some(_) => age::age(Some(text), now),
        None => "<invalid>".to_string(),
    }
}

/// A value as Go's `fmt.Print` writes a decoded JSON value: text as is,
/// `[a b]` for arrays, `map[k:v]` for objects (keys sorted), `<nil>` inside
/// them for `null`; a `null` on its own is `<no value>`, as kubectl's
/// JSONPath printer writes it.
fn go_text(value: &Value) -> String {
    match value {
        Value::Null => "<no value>".to_string(),
        other => {
            let mut out = String::new();
            go_print(other, &mut out);
            out
        }
    }
}

fn go_print(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => out.push_str(&go_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                go_print(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push_str("map[");
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                go_print(item, out);
            }
            out.push(']');
        }
    }
}

/// A float as Go's `%v` writes it: the shortest digits that read back the
/// same, in exponent form (`1e+06`, `1.5e-05`) when the decimal exponent is
/// below -4 or at least 6.
fn go_float(f: f64) -> String {
    let scientific = format!("{f:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return f.to_string();
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        return f.to_string();
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Instant {
        age::parse_time("2026-11-26T06:28:13Z").unwrap()
    }

    fn cell_of(kind: &str, path: &str, object: &Value) -> Value {
        cell(kind, &JsonPath::parse(path).unwrap(), object, now())
    }

    #[test]
    fn cells_are_typed_by_the_column_type() {
        let object = json!({
            "metadata": {"creationTimestamp": "2026-11-26T06:28:09Z"},
            "spec": {"size": 3, "ratio": 2.75, "whole": 4.0, "color": "blue", "on": true,
                "hosts": ["a.example.com", "b.example.com"], "nested": {"b": [1, null], "a": {"x": 1.5}},
                "nothing": null, "when": "2026-11-26T06:00:00Z", "bad": "tuesday", "empty": ""},
        });
        let cases: &[(&str, &str, Value)] = &[
            ("integer", ".spec.size", json!(3)),
            ("integer", ".spec.ratio", json!(2)),
            ("integer", ".spec.color", json!(null)),
            ("integer", ".spec.nothing", json!(null)),
            ("number", ".spec.ratio", json!(2.75)),
            ("number", ".spec.size", json!(3)),
            ("number", ".spec.whole", json!(4)),
            ("boolean", ".spec.on", json!(true)),
            ("boolean", ".spec.color", json!(null)),
            ("string", ".spec.color", json!("blue")),
            ("string", ".spec.size", json!("3")),
            ("string", ".spec.ratio", json!("2.75")),
            ("string", ".spec.on", json!("true")),
            (
                "string",
                ".spec.hosts",
                json!("[a.example.com b.example.com]"),
            ),
            ("string", ".spec.hosts[*]", json!("a.example.com")),
            (
                "string",
                ".spec.nested",
                json!("map[a:map[x:1.5] b:[1 <nil>]]"),
            ),
            ("string", ".spec.nothing", json!("<no value>")),
            ("string", ".spec.missing", json!(null)),
            ("string", ".spec.hosts[5]", json!(null)),
            ("date", ".metadata.creationTimestamp", json!("4s")),
            ("date", ".spec.when", json!("28m")),
            ("date", ".spec.bad", json!("<invalid>")),
            ("date", ".spec.empty", json!("<unknown>")),
            ("date", ".spec.size", json!(null)),
            ("date", ".spec.nothing", json!(null)),
            ("color", ".spec.color", json!(null)),
        ];
        for (kind, path, want) in cases {
            assert_eq!(cell_of(kind, path, &object), *want, "{kind} {path}");
        }
    }

    #[test]
    fn floats_as_go_prints_them() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (2.0, "2"),
            (2.75, "2.75"),
            (-0.5, "-0.5"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-1.5e-7, "-1.5e-07"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
        ];
        for (f, want) in cases {
            assert_eq!(go_float(*f), *want, "{f}");
        }
    }

    fn crd(columns: Value) -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "versions": [
                {"name": "v1alpha1", "served": true, "additionalPrinterColumns": [
                    {"name": "Old", "type": "string", "jsonPath": ".spec.old"}]},
                {"name": "v1", "served": true, "additionalPrinterColumns": columns},
            ]},
        })
    }

    fn definitions(columns: &[Column]) -> Vec<(String, String, String, i32)> {
        columns
            .iter()
            .map(|c| {
                let d = &c.definition;
                (
                    d.name.to_string(),
                    d.kind.to_string(),
                    d.format.to_string(),
                    d.priority,
                )
            })
            .collect()
    }

    #[test]
    fn columns_of_the_served_version() {
        let columns = columns(
            &crd(json!([
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                {"name": "Color", "type": "string", "priority": 1, "jsonPath": ".spec.color",
                    "description": "The widget's color."},
                {"name": "Created", "type": "date", "format": "date-time", "jsonPath": ".metadata.creationTimestamp"},
            ])),
            "v1",
        )
        .unwrap();
        assert_eq!(
            definitions(&columns),
            [
                ("Name".into(), "string".into(), "name".into(), 0),
                ("Size".into(), "integer".into(), "".into(), 0),
                ("Color".into(), "string".into(), "".into(), 1),
                ("Created".into(), "date".into(), "date-time".into(), 0),
            ]
        );
        assert_eq!(columns[2].definition.description, "The widget's color.");
        assert!(columns[1].definition.description.contains(".spec.size"));

        // No columns for the version (or no such version): Name and Age.
        for version in ["v1", "v2"] {
            let defaults = super::columns(&crd(json!([])), version).unwrap();
            assert_eq!(
                definitions(&defaults),
                [
                    ("Name".into(), "string".into(), "name".into(), 0),
                    ("Age".into(), "date".into(), "".into(), 0),
                ]
            );
        }
        let defaults = default_columns();
        let object =
            json!({"metadata": {"name": "w", "creationTimestamp": "2026-11-26T06:28:09Z"}});
        assert_eq!(defaults[1].cell(&object, now()), json!("4s"));
        assert_eq!(
            defaults[1].cell(&json!({"metadata": {}}), now()),
            json!(null)
        );
    }

    #[test]
    fn a_bad_path_is_an_error_that_keeps_the_columns_before_it() {
        let err = columns(
            &crd(json!([
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready'].status"},
                {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
            ])),
            "v1",
        )
        .unwrap_err();
        assert_eq!(err.column, "Ready");
        assert_eq!(
            definitions(&err.columns),
            [
                ("Name".into(), "string".into(), "name".into(), 0),
                ("Size".into(), "integer".into(), "".into(), 0),
            ]
        );
        let message = err.to_string();
        assert!(message.starts_with("CustomResourceDefinition `widgets.example.com`, version v1: printer column \"Ready\""), "{message}");
        assert!(message.contains("fix the column's jsonPath"), "{message}");
        let source = std::error::Error::source(&err)
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(source.contains("to close the filter"), "{source}");
    }
}
