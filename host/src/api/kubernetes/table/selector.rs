//! Labels and label selectors as cells print them: `app=web,tier=fe`,
//! `app=web,env in (dev,prod),!canary`.

use serde_json::{Map, Value};

/// A map of labels as `k=v` pairs sorted by key, or `<none>` when empty or
/// missing (a Service's selector, a DaemonSet's node selector).
pub(crate) fn labels(map: Option<&Value>) -> String {
    let text = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    if text.is_empty() {
        "<none>".to_string()
    } else {
        text
    }
}

/// A `metav1.LabelSelector` as the printers write it after converting it
/// to a selector: requirements sorted by key, `k=v` for `matchLabels`,
/// `k in (a,b)`, `k notin (a,b)`, `k` and `!k` for `matchExpressions`.
/// An absent or empty selector is `""`.
///
/// The API server checked the selector when the object was stored, so only
/// the shape that would make the conversion fail is checked again (an
/// unknown operator, `In` without values, `Exists` with some): `Err` then.
pub(crate) fn selector(selector: Option<&Value>) -> Result<String, ()> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Ok(String::new());
    };
    let Some(selector) = selector.as_object() else {
        return Err(());
    };
    let empty = Map::new();
    let member = |key: &str| -> Result<&Map<String, Value>, ()> {
        match selector.get(key) {
            None | Some(Value::Null) => Ok(&empty),
            Some(Value::Object(m)) => Ok(m),
            Some(_) => Err(()),
        }
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    for (key, value) in member("matchLabels")? {
        let value = value.as_str().ok_or(())?;
        requirements.push((key.clone(), format!("{key}={value}")));
    }
    let expressions = match selector.get("matchExpressions") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(_) => return Err(()),
    };
    for expression in expressions {
        let key = expression.get("key").and_then(Value::as_str).ok_or(())?;
        let mut values = match expression.get("values") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(v)) => v
                .iter()
                .map(|v| v.as_str().ok_or(()))
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return Err(()),
        };
        values.sort_unstable();
        let operator = expression.get("operator").and_then(Value::as_str);
        let text = match operator {
            Some(op @ ("In" | "NotIn")) if !values.is_empty() => {
                let word = if op == "In" { "in" } else { "notin" };
                format!("{key} {word} ({})", values.join(","))
            }
            Some("Exists") if values.is_empty() => key.to_string(),
            Some("DoesNotExist") if values.is_empty() => format!("!{key}"),
            _ => return Err(()),
        };
        requirements.push((key.to_string(), text));
    }
    // Stable, so that a key in both matchLabels and matchExpressions keeps
    // that order.
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(","))
}

/// A selector as most printers show it: `<none>` when empty, `<error>` when
/// it cannot be read.
pub(crate) fn selector_or_none(value: Option<&Value>) -> String {
    match selector(value) {
        Ok(text) if text.is_empty() => "<none>".to_string(),
        Ok(text) => text,
        Err(()) => "<error>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_maps() {
        assert_eq!(
            labels(Some(&json!({"tier": "fe", "app": "web"}))),
            "app=web,tier=fe"
        );
        assert_eq!(labels(Some(&json!({}))), "<none>");
        assert_eq!(labels(None), "<none>");
    }

    #[test]
    fn selectors() {
        let cases: &[(Value, &str)] = &[
            (json!(null), "<none>"),
            (json!({}), "<none>"),
            (json!({"matchLabels": {"app": "webd"}}), "app=webd"),
            (
                json!({"matchLabels": {"pod-template-hash": "6bbd", "app": "webd"}}),
                "app=webd,pod-template-hash=6bbd",
            ),
            (
                json!({"matchLabels": {"tier": "fe"}, "matchExpressions": [
                    {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                    {"key": "zone", "operator": "NotIn", "values": ["b"]},
                    {"key": "canary", "operator": "DoesNotExist"},
                    {"key": "app", "operator": "Exists", "values": []},
                ]}),
                "app,!canary,env in (dev,prod),tier=fe,zone notin (b)",
            ),
            (
                json!({"matchExpressions": [{"key": "env", "operator": "In", "values": []}]}),
                "<error>",
            ),
            (
                json!({"matchExpressions": [{"key": "env", "operator": "Exists", "values": ["x"]}]}),
                "<error>",
            ),
            (
                json!({"matchExpressions": [{"key": "env", "operator": "Gt", "values": ["1"]}]}),
                "<error>",
            ),
            (json!({"matchLabels": "app=web"}), "<error>"),
            (json!("app=web"), "<error>"),
        ];
        for (value, want) in cases {
            assert_eq!(selector_or_none(Some(value)), *want, "{value}");
        }
        assert_eq!(selector(None), Ok(String::new()));
    }
}
