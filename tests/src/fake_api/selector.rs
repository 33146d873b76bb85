//! Label and field selectors, parsed from `labelSelector` / `fieldSelector`.

use super::state::StoredObject;

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelReq {
    /// `k=v` or `k==v`
    Equals(String, String),
    /// `k!=v` (also true when the label is absent)
    NotEquals(String, String),
    /// `k in (a,b)`
    In(String, Vec<String>),
    /// `k notin (a,b)` (also true when the label is absent)
    NotIn(String, Vec<String>),
    /// `k`
    Exists(String),
    /// `!k`
    DoesNotExist(String),
}

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
    labels: Vec<LabelReq>,
    fields: Vec<FieldReq>,
}

impl Selector {
    /// Parses both selectors; the error text is meant for a 400 Status.
    pub(crate) fn parse(label: Option<&str>, field: Option<&str>) -> Result<Selector, String> {
        let mut sel = Selector::default();
        if let Some(label) = label {
            for term in split_terms(label) {
                sel.labels.push(parse_label_term(term)?);
            }
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
        self.labels.iter().all(|req| label_matches(req, obj))
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

fn label_matches(req: &LabelReq, obj: &StoredObject) -> bool {
    let get = |k: &str| obj.labels.get(k).map(String::as_str);
    match req {
        LabelReq::Equals(k, v) => get(k) == Some(v),
        LabelReq::NotEquals(k, v) => get(k) != Some(v),
        LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
        LabelReq::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
        LabelReq::Exists(k) => get(k).is_some(),
        LabelReq::DoesNotExist(k) => get(k).is_none(),
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

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn check_key(k: &str, term: &str) -> Result<String, String> {
    if valid_key(k) {
        Ok(k.to_string())
    } else {
        Err(format!(
            "unable to parse requirement: invalid label key {k:?} in {term:?}"
        ))
    }
}

fn parse_label_term(term: &str) -> Result<LabelReq, String> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(LabelReq::DoesNotExist(check_key(key.trim(), term)?));
    }
    if let Some((k, v)) = term.split_once("!=") {
        return Ok(LabelReq::NotEquals(
            check_key(k.trim(), term)?,
            v.trim().to_string(),
        ));
    }
    if let Some((k, v)) = term.split_once("==") {
        return Ok(LabelReq::Equals(
            check_key(k.trim(), term)?,
            v.trim().to_string(),
        ));
    }
    if let Some((k, v)) = term.split_once('=') {
        return Ok(LabelReq::Equals(
            check_key(k.trim(), term)?,
            v.trim().to_string(),
        ));
    }
    if let Some((k, set)) = split_set_op(term, " notin ") {
        return Ok(LabelReq::NotIn(check_key(k, term)?, parse_set(set, term)?));
    }
    if let Some((k, set)) = split_set_op(term, " in ") {
        return Ok(LabelReq::In(check_key(k, term)?, parse_set(set, term)?));
    }
    Ok(LabelReq::Exists(check_key(term, term)?))
}

fn split_set_op<'a>(term: &'a str, op: &str) -> Option<(&'a str, &'a str)> {
    let (k, rest) = term.split_once(op)?;
    Some((k.trim(), rest.trim()))
}

fn parse_set(set: &str, term: &str) -> Result<Vec<String>, String> {
    let inner = set
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| {
            format!("unable to parse requirement: expected a (value set) in {term:?}")
        })?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
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
