//! The RFC 6902 JSON Patch from one version of an object to the next,
//! read from their compact JSON text.
//!
//! Most changes touch a small part of an object (a Pod's status update
//! leaves its spec, and most of its metadata, as they were), so the texts
//! are compared before anything is parsed into values: a member whose
//! text is the same in both is equal and is skipped whole; only objects
//! and arrays whose text differs are split into their members, without
//! copying them; only values that changed are parsed. A status update of
//! a Pod parses its status and little else.
//!
//! Members of an object are compared by name; elements of an array by
//! position, the longer array's extra elements added or removed at its
//! end. Each value a `replace` or `remove` op changes is said first by a
//! `test` op, so the patch reads as a diff without the state before.
//! `metadata.managedFields` is left out on both sides: the journal keeps
//! who wrote what in the entry's `who`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Value, json};

use super::record::{MAX_PATHS, RESOURCE_VERSION};
use crate::json_text;

/// The patch from `before` to `after` (compact JSON texts of an object)
/// and the paths it changes, at most [`MAX_PATHS`], without
/// `/metadata/resourceVersion`, which every version changes.
pub(super) fn diff(before: &[u8], after: &[u8]) -> (Value, Vec<String>) {
    let mut patch = Patch::default();
    patch.value(before, after, &mut String::new(), Place::Root);
    let paths: Vec<String> = patch
        .ops
        .iter()
        .filter(|op| op["op"] != "test")
        .filter_map(|op| op["path"].as_str())
        .filter(|path| *path != RESOURCE_VERSION)
        .take(MAX_PATHS)
        .map(str::to_string)
        .collect();
    (Value::Array(patch.ops), paths)
}

fn parse(text: &[u8]) -> Value {
    serde_json::from_slice(text).unwrap_or(Value::Null)
}

/// Where in the object a value is: the members of these are compared
/// with `managedFields` left out.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Root,
    Metadata,
    Other,
}

#[derive(Default)]
struct Patch {
    ops: Vec<Value>,
}

impl Patch {
    /// Compares two values' texts. Text that is not compact JSON (which
    /// the cache never holds) is compared as parsed values.
    fn value(&mut self, before: &[u8], after: &[u8], path: &mut String, place: Place) {
        if before == after {
            return;
        }
        match (before.first(), after.first()) {
            (Some(b'{'), Some(b'{')) => match (members(before, place), members(after, place)) {
                (Some(before), Some(after)) => self.object(&before, &after, path, place),
                _ => self.scalar(&parse(before), &parse(after), path),
            },
            (Some(b'['), Some(b'[')) => match (
                json_text::array_elements(before),
                json_text::array_elements(after),
            ) {
                (Some(before), Some(after)) => self.array(&before, &after, path),
                _ => self.scalar(&parse(before), &parse(after), path),
            },
            _ => self.scalar(&parse(before), &parse(after), path),
        }
    }

    fn object(
        &mut self,
        before: &[(Cow<'_, str>, &[u8])],
        after: &[(Cow<'_, str>, &[u8])],
        path: &mut String,
        place: Place,
    ) {
        let inner = |key: &str| match (place, key) {
            (Place::Root, "metadata") => Place::Metadata,
            _ => Place::Other,
        };
        let at = path.len();
        // One serializer wrote both versions, so their members are most
        // often the same names in the same order: paired by position then,
        // with no lookup.
        let same_names = before.len() == after.len()
            && before
                .iter()
                .zip(after)
                .all(|((old, _), (new, _))| old == new);
        if same_names {
            for ((key, old), (_, new)) in before.iter().zip(after) {
                if old != new {
                    push_token(path, key);
                    self.value(old, new, path, inner(key));
                    path.truncate(at);
                }
            }
            return;
        }
        let olds: HashMap<&str, &[u8]> = before.iter().map(|(k, v)| (&**k, *v)).collect();
        let news: HashMap<&str, &[u8]> = after.iter().map(|(k, v)| (&**k, *v)).collect();
        for (key, new) in after {
            push_token(path, key);
            match olds.get(&**key) {
                Some(old) => self.value(old, new, path, inner(key)),
                None => self
                    .ops
                    .push(json!({"op": "add", "path": path, "value": parse(new)})),
            }
            path.truncate(at);
        }
        for (key, old) in before {
            if !news.contains_key(&**key) {
                push_token(path, key);
                self.remove(old, path);
                path.truncate(at);
            }
        }
    }

    fn array(&mut self, before: &[&[u8]], after: &[&[u8]], path: &mut String) {
        let at = path.len();
        for (i, (old, new)) in before.iter().zip(after).enumerate() {
            push_token(path, &i.to_string());
            self.value(old, new, path, Place::Other);
            path.truncate(at);
        }
        for (i, new) in after.iter().enumerate().skip(before.len()) {
            push_token(path, &i.to_string());
            self.ops
                .push(json!({"op": "add", "path": path, "value": parse(new)}));
            path.truncate(at);
        }
        // Each removed at the same place: the one after it moves there.
        for old in before.iter().skip(after.len()) {
            push_token(path, &after.len().to_string());
            self.remove(old, path);
            path.truncate(at);
        }
    }

    fn scalar(&mut self, before: &Value, after: &Value, path: &str) {
        if before == after {
            return;
        }
        if path != RESOURCE_VERSION {
            self.ops
                .push(json!({"op": "test", "path": path, "value": before}));
        }
        self.ops
            .push(json!({"op": "replace", "path": path, "value": after}));
    }

    fn remove(&mut self, old: &[u8], path: &str) {
        self.ops
            .push(json!({"op": "test", "path": path, "value": parse(old)}));
        self.ops.push(json!({"op": "remove", "path": path}));
    }
}

/// Appends `/token` to a JSON Pointer, escaped (RFC 6901).
fn push_token(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// The members of a compact JSON object, in their order, borrowed from
/// its text; in `metadata`, without `managedFields`. `None` when the text
/// is not one.
fn members(text: &[u8], place: Place) -> Option<Vec<(Cow<'_, str>, &[u8])>> {
    let mut members = Vec::new();
    for (quoted, value) in json_text::object_members(text)? {
        let name = name(quoted)?;
        if place == Place::Metadata && name == "managedFields" {
            continue;
        }
        members.push((name, value));
    }
    Some(members)
}

/// A member's name from its quoted text: borrowed unless it has escapes.
fn name(quoted: &[u8]) -> Option<Cow<'_, str>> {
    let inner = quoted.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if inner.contains(&b'\\') {
        return serde_json::from_slice::<String>(quoted)
            .ok()
            .map(Cow::Owned);
    }
    std::str::from_utf8(inner).ok().map(Cow::Borrowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patched(before: &Value, patch: &Value) -> Value {
        let mut state = before.clone();
        let patch: json_patch::Patch = serde_json::from_value(patch.clone()).expect("a patch");
        json_patch::patch(&mut state, &patch).expect("the patch applies, its tests hold");
        state
    }

    fn check(before: Value, after: Value) -> (Value, Vec<String>) {
        let (patch, paths) = diff(
            &serde_json::to_vec(&before).unwrap(),
            &serde_json::to_vec(&after).unwrap(),
        );
        assert_eq!(patched(&before, &patch), after, "{patch}");
        (patch, paths)
    }

    #[test]
    fn a_status_update_is_the_members_that_changed() {
        let before = json!({
            "metadata": {"name": "web-1", "resourceVersion": "10", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "web:1"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "app", "restartCount": 0, "state": {"running": {"startedAt": "t0"}}}]}
        });
        let mut after = before.clone();
        after["metadata"]["resourceVersion"] = json!("11");
        after["status"]["containerStatuses"][0]["restartCount"] = json!(1);
        after["status"]["containerStatuses"][0]["state"] = json!({"running": {"startedAt": "t1"}});
        let (patch, paths) = check(before, after);
        assert_eq!(
            paths,
            [
                "/status/containerStatuses/0/restartCount",
                "/status/containerStatuses/0/state/running/startedAt"
            ]
        );
        // A test op says each value replaced, except the resourceVersion.
        assert_eq!(
            patch[0],
            json!({"op": "replace", "path": "/metadata/resourceVersion", "value": "11"})
        );
        assert_eq!(
            patch[1],
            json!({"op": "test", "path": "/status/containerStatuses/0/restartCount", "value": 0})
        );
    }

    #[test]
    fn members_and_elements_come_and_go() {
        let (_, paths) = check(
            json!({"a": [1, 2, 3, 4], "b": {"x": 1, "y/z~": 2}, "gone": null, "t": "s"}),
            json!({"a": [1, 5], "b": {"x": 1}, "new": {"k": [true]}, "t": 7}),
        );
        assert_eq!(
            paths,
            ["/a/1", "/a/2", "/a/2", "/b/y~1z~0", "/new", "/t", "/gone"]
        );
        check(json!({"a": [1]}), json!({"a": [1, {"b": 2}, [3]]}));
        check(json!({"a": {"b": 1}}), json!({"a": [1]}));
        check(
            json!({"a": "\u{e9}\"\\"}),
            json!({"a": "b", "\u{e9}": "\n"}),
        );
        check(json!([1, 2]), json!({"a": 1}));
        check(json!(1), json!(1.5));
    }

    #[test]
    fn members_are_paired_by_name_in_any_order() {
        // The same names in another order: nothing changed but `b`.
        let (patch, paths) = diff(
            br#"{"a":1,"b":{"c":2,"d":3}}"#,
            br#"{"b":{"d":3,"c":4},"a":1}"#,
        );
        assert_eq!(paths, ["/b/c"]);
        assert_eq!(
            patch,
            json!([
                {"op": "test", "path": "/b/c", "value": 2},
                {"op": "replace", "path": "/b/c", "value": 4}
            ])
        );
        // Same order, one name different: an add and a removal, not a
        // replacement at that position.
        let (patch, _) = diff(br#"{"a":1,"b":2}"#, br#"{"a":1,"c":2}"#);
        assert_eq!(
            patch,
            json!([
                {"op": "add", "path": "/c", "value": 2},
                {"op": "test", "path": "/b", "value": 2},
                {"op": "remove", "path": "/b"}
            ])
        );
    }

    #[test]
    fn managed_fields_are_left_out() {
        let (patch, paths) = diff(
            br#"{"metadata":{"managedFields":[{"manager":"a"}],"labels":{"x":"1"}}}"#,
            br#"{"metadata":{"labels":{"x":"1"},"managedFields":[{"manager":"b"}]}}"#,
        );
        assert_eq!((patch, paths), (json!([]), Vec::<String>::new()));
        // Only in the object's own metadata.
        let (_, paths) = check(
            json!({"spec": {"managedFields": 1}}),
            json!({"spec": {"managedFields": 2}}),
        );
        assert_eq!(paths, ["/spec/managedFields"]);
    }

    #[test]
    fn names_with_escapes_are_read_and_written_as_pointers() {
        let (_, paths) = check(
            json!({"a\"b": 1, "caf\u{e9}": {"x/y": 1}, "tab\t": 0}),
            json!({"a\"b": 2, "caf\u{e9}": {"x/y": 2}, "tab\t": 0}),
        );
        assert_eq!(paths, ["/a\"b", "/caf\u{e9}/x~1y"]);
        // Escaped as serde_json may write them (`\u00e9`), read the same.
        let (patch, _) = diff(br#"{"caf\u00e9":1}"#, br#"{"caf\u00e9":2}"#);
        assert_eq!(
            patch[1],
            json!({"op": "replace", "path": "/caf\u{e9}", "value": 2})
        );
    }

    #[test]
    fn text_with_spaces_is_compared_as_values() {
        // The cache holds compact text; other text is still diffed right,
        // as a whole.
        let (patch, paths) = diff(b"{\"a\": 1, \"b\": 2}", b"{\"a\": 1, \"b\": 3}");
        assert_eq!(paths, [""]);
        assert_eq!(
            patched(&json!({"a": 1, "b": 2}), &patch),
            json!({"a": 1, "b": 3})
        );
    }

    #[test]
    fn text_that_is_not_json_is_compared_as_null() {
        let (patch, _) = diff(b"{\"a\": 1}", b"{\"a\": ");
        assert_eq!(
            patch,
            json!([
                {"op": "test", "path": "", "value": {"a": 1}},
                {"op": "replace", "path": "", "value": null}
            ])
        );
    }
}
