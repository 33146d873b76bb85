//! The pieces every route group's request attributes are made of, read the
//! way the Kubernetes API server reads them: the verb of a method, and the
//! few query parameters that change what a request does (`watch`, a
//! `fieldSelector` naming one object). Path parameters are the router's,
//! percent-decoded as the routes read them.

use axum::http::Method;

use crate::selectors::FieldSelector;
use crate::selectors::field::FieldOp;

/// The query parameters that matter to authorization, each its first
/// value (as the API server reads them).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Query {
    /// `watch`.
    pub watch: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `namespace` (the relations routes).
    pub namespace: Option<String>,
}

impl Query {
    /// Reads the raw query string (without `?`); a string that does not
    /// parse counts as none, which the route then refuses.
    pub(super) fn parse(raw: Option<&str>) -> Query {
        let mut query = Query::default();
        let Some(raw) = raw.filter(|r| !r.is_empty()) else {
            return query;
        };
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw).unwrap_or_default();
        for (name, value) in pairs {
            let slot = match name.as_str() {
                "watch" => &mut query.watch,
                "fieldSelector" => &mut query.field_selector,
                "namespace" => &mut query.namespace,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        query
    }

    /// Whether a collection GET is a watch: `watch` given with any value
    /// but `false` or `0` (any case), as the API server decides it.
    pub(super) fn is_watch(&self) -> bool {
        self.watch
            .as_deref()
            .is_some_and(|w| !(w == "0" || w.eq_ignore_ascii_case("false")))
    }

    /// The object a list or watch is narrowed to by `fieldSelector`
    /// (see [`exact_name`]); none if the selector does not parse (the
    /// route then refuses it).
    pub(super) fn selected_name(&self) -> Option<String> {
        let selector: FieldSelector = self.field_selector.as_deref()?.parse().ok()?;
        exact_name(&selector).map(String::from)
    }
}

/// The object a selection is narrowed to by `metadata.name=NAME` (or
/// `==`): the API server authorizes such a list or watch for that one
/// name, so that a grant limited to it allows `kubectl get pod NAME
/// --watch`. A name that could not be a path segment names nothing.
pub(super) fn exact_name(selector: &FieldSelector) -> Option<&str> {
    selector
        .requirements()
        .iter()
        .find(|r| r.op == FieldOp::Equals && r.path == ["metadata", "name"])
        .map(|r| r.value.as_str())
        .filter(|name| {
            !name.is_empty() && *name != "." && *name != ".." && !name.contains(['/', '%'])
        })
}

/// The verb of a request on a resource, from its method: `get` of a named
/// object, `list` or `watch` of a collection, `create`, `update`, `patch`,
/// `delete` (`deletecollection` without a name); any other method by its
/// lower-case name.
pub(super) fn resource_verb(method: &Method, named: bool, query: &Query) -> String {
    let verb = match *method {
        Method::GET | Method::HEAD if named => "get",
        Method::GET | Method::HEAD if query.is_watch() => "watch",
        Method::GET | Method::HEAD => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => return method.as_str().to_ascii_lowercase(),
    };
    verb.to_string()
}

/// The verb of a request on a path that is not a resource: its method, in
/// lower case.
pub(super) fn path_verb(method: &Method) -> String {
    method.as_str().to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_is_any_value_but_false_or_zero() {
        let query = |raw: &str| Query::parse(Some(raw));
        for raw in [
            "watch=true",
            "watch=1",
            "watch=",
            "watch=yes",
            "watch=true&watch=false",
        ] {
            assert!(query(raw).is_watch(), "{raw}");
        }
        for raw in [
            "",
            "watch=false",
            "watch=FALSE",
            "watch=0",
            "watch=0&watch=1",
            "other=1",
        ] {
            assert!(!query(raw).is_watch(), "{raw}");
        }
    }

    #[test]
    fn a_field_selector_on_the_name_names_the_object() {
        let name = |selector: &str| {
            let query = Query {
                field_selector: Some(selector.to_string()),
                ..Query::default()
            };
            query.selected_name()
        };
        assert_eq!(name("metadata.name=web-1").as_deref(), Some("web-1"));
        assert_eq!(name("metadata.name==web-1").as_deref(), Some("web-1"));
        assert_eq!(
            name("status.phase=Running,metadata.name=web-1").as_deref(),
            Some("web-1")
        );
        for none in [
            "metadata.name!=web-1",
            "metadata.namespace=a",
            "metadata.name=",
            "metadata.name=..",
            "metadata.name=a/b",
            "metadata.name=a%2Fb",
            "metadata.name!=a,metadata.name==",
            "status.phase=Running",
        ] {
            assert_eq!(name(none), None, "{none}");
        }
        let parsed = Query::parse(Some("fieldSelector=metadata.name%3Dweb-1&watch=1"));
        assert_eq!(parsed.selected_name().as_deref(), Some("web-1"));
        // Escapes are the selector's: `\,` is a comma in the name.
        assert_eq!(name("metadata.name=a\\,b").as_deref(), Some("a,b"));
    }

    #[test]
    fn verbs_follow_the_method() {
        let plain = Query::default();
        let watch = Query::parse(Some("watch=true"));
        let cases = [
            (Method::GET, true, &plain, "get"),
            (Method::GET, true, &watch, "get"),
            (Method::HEAD, false, &plain, "list"),
            (Method::GET, false, &watch, "watch"),
            (Method::POST, false, &plain, "create"),
            (Method::PUT, true, &plain, "update"),
            (Method::PATCH, true, &plain, "patch"),
            (Method::DELETE, true, &plain, "delete"),
            (Method::DELETE, false, &plain, "deletecollection"),
            (Method::OPTIONS, false, &plain, "options"),
        ];
        for (method, named, query, verb) in cases {
            assert_eq!(
                resource_verb(&method, named, query),
                verb,
                "{method} {named}"
            );
        }
        assert_eq!(path_verb(&Method::GET), "get");
    }
}
