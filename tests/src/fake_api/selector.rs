//! Label and field selectors, parsed from `labelSelector` / `fieldSelector`.
//!
//! Label selectors go through `grw-selector`, which has the API server's
//! grammar and validation, so the fake accepts and rejects exactly what a
//! real server does.

use grw_selector::LabelSelector;

use super::state::StoredObject;

/// One field requirement: `path=value`, `path==value` or `path!=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldReq {
    path: String,
    value: String,
    negated: bool,
}

/// A parsed label selector plus field selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selector {
    labels: LabelSelector,
    fields: Vec<FieldReq>,
}

impl Selector {
    /// Parses both selectors; the error text is meant for a 400 Status.
    pub(crate) fn parse(label: Option<&str>, field: Option<&str>) -> Result<Selector, String> {
        let mut sel = Selector::default();
        if let Some(label) = label {
            sel.labels = label.parse::<LabelSelector>().map_err(|e| e.to_string())?;
        }
        if let Some(field) = field {
            for term in split_terms(field) {
                sel.fields.push(parse_field_term(term)?);
            }
        }
        Ok(sel)
    }

    /// Whether the selector has no requirements.
    pub(crate) fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Whether `obj` satisfies every requirement.
    pub(crate) fn matches(&self, obj: &StoredObject) -> bool {
        self.labels
            .matches(|key| obj.labels.get(key).map(String::as_str))
            && self.fields.iter().all(|req| {
                let actual = match req.path.as_str() {
                    "metadata.name" => obj.name.clone(),
                    "metadata.namespace" => obj.namespace.clone(),
                    path => obj.field_value(path),
                };
                (actual == req.value) != req.negated
            })
    }
}

/// Splits on commas that are not inside parentheses; drops empty terms.
fn split_terms(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn parse_field_term(term: &str) -> Result<FieldReq, String> {
    let (path, value, negated) = if let Some((k, v)) = term.split_once("!=") {
        (k, v, true)
    } else if let Some((k, v)) = term.split_once("==") {
        (k, v, false)
    } else if let Some((k, v)) = term.split_once('=') {
        (k, v, false)
    } else {
        return Err(format!(
            "invalid selector: '{term}'; can't understand '{term}'"
        ));
    };
    Ok(FieldReq {
        path: path.trim().to_string(),
        value: value.trim().to_string(),
        negated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn obj(labels: &[(&str, &str)]) -> StoredObject {
        StoredObject::for_test(
            "shop",
            "web-1",
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            br#"{"metadata":{"name":"web-1"},"spec":{"nodeName":"node-a"},"status":{"phase":"Running"}}"#,
        )
    }

    fn m(label: &str, o: &StoredObject) -> bool {
        Selector::parse(Some(label), None).unwrap().matches(o)
    }

    #[test]
    fn label_terms() {
        let o = obj(&[("app", "web"), ("tier", "front")]);
        assert!(m("app=web", &o));
        assert!(m("app==web,tier", &o));
        assert!(!m("app!=web", &o));
        assert!(m("missing!=x", &o));
        assert!(m("!debug", &o));
        assert!(!m("!app", &o));
        assert!(m("app in (db, web),tier notin (back)", &o));
        assert!(!m("app notin (web)", &o));
        assert!(m("", &o));
        assert!(Selector::parse(Some("a b"), None).is_err());
    }

    #[test]
    fn label_grammar_is_the_api_servers() {
        let o = obj(&[("app", "web"), ("replicas", "3")]);
        assert!(m("replicas>2,replicas<4", &o));
        assert!(!m("replicas>3", &o));
        assert!(!m("app>1", &o));
        assert!(m("app in (web,),in notin (x)", &o));
        let err = |s: &str| Selector::parse(Some(s), None).unwrap_err();
        assert!(
            err("replicas>x").contains("for 'Gt', 'Lt' operators, the value must be an integer"),
            "{}",
            err("replicas>x")
        );
        assert!(err("a=b,").contains("trailing `,`"));
        assert!(err("Bad_=x").contains("not a valid label key"));
        assert!(err("a=-x").contains("not a valid label value"));
        assert!(err("a gt 1").contains("not an operator"));
    }

    #[test]
    fn field_terms() {
        let o = obj(&[]);
        let f = |s: &str| Selector::parse(None, Some(s)).unwrap().matches(&o);
        assert!(f("metadata.name=web-1,metadata.namespace=shop"));
        assert!(!f("metadata.name!=web-1"));
        assert!(f("status.phase=Running,spec.nodeName==node-a"));
        assert!(f("spec.missing="));
        assert!(Selector::parse(None, Some("nonsense")).is_err());
    }
}
