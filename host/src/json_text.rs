//! Reading fields out of an object's stored JSON without parsing it whole:
//! the cache's index of an object's top-level members, and the scans that
//! CEL conditions read objects with ([`crate::cel`]).
//!
//! Objects are kept as compact JSON ([`crate::store::StoredObject::json`]). Most
//! questions about an object touch one field (`status.phase`, one
//! annotation), so parsing the whole text into a `serde_json::Value` for
//! each of them would cost far more than the answer. Instead each object
//! carries a small index of its top-level members, made while it is
//! serialized (or by one scan of text GRW wrote earlier), and a lookup jumps
//! to the member it needs and scans only inside it.
//!
//! The index is two `u32` per top-level member (where its key and its value
//! start): 40 bytes for a typical object of five members.

/// Where each top-level member of a JSON object starts: for member `i`,
/// `[2i]` is the offset of its key's opening quote and `[2i + 1]` the offset
/// of its value. Members are in the order of the text.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct TopLevel(Box<[u32]>);

impl TopLevel {
    pub(crate) fn new(offsets: Vec<u32>) -> Self {
        TopLevel(offsets.into_boxed_slice())
    }

    /// Bytes held on the heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.len() * std::mem::size_of::<u32>()
    }

    /// Indexes the top level of compact JSON text (no whitespace outside
    /// strings), as serde_json writes it. `None` when the text is not a
    /// compact JSON object: one pass both checks the layout and indexes.
    pub(crate) fn scan(json: &[u8]) -> Option<TopLevel> {
        TopLevel::scan_nested(json, b"").map(|(index, _)| index)
    }

    /// As [`TopLevel::scan`], and indexes in the same pass the first member
    /// whose quoted key is `nested` (`b"\"metadata\""`), when its value is
    /// an object: where that value starts, and its own index, whose offsets
    /// count from there.
    pub(crate) fn scan_nested(json: &[u8], nested: &[u8]) -> Option<(TopLevel, Option<Nested>)> {
        if json.last() != Some(&b'}') {
            return None;
        }
        let (index, end, inner) = object(json, nested)?;
        (end == json.len()).then_some((index, inner))
    }

    /// `(key with its quotes, value)` of each member of `json` (the text
    /// this index was made of), in order.
    pub(crate) fn members<'j>(&self, json: &'j [u8]) -> impl Iterator<Item = (&'j [u8], &'j [u8])> {
        (0..self.0.len() / 2).map(move |m| {
            let key_start = self.0[2 * m] as usize;
            let value_start = self.0[2 * m + 1] as usize;
            let value_end = match self.0.get(2 * m + 2) {
                Some(next_key) => *next_key as usize - 1,
                None => json.len() - 1,
            };
            (
                &json[key_start..value_start - 1],
                &json[value_start..value_end],
            )
        })
    }

    /// The value of the top-level member `key`, as a slice of `json`.
    fn member<'j>(&self, json: &'j [u8], key: &str) -> Option<&'j [u8]> {
        let members = self.0.len() / 2;
        (0..members).find_map(|m| {
            let key_start = self.0[2 * m] as usize;
            let value_start = self.0[2 * m + 1] as usize;
            // Compact text: `"key":value`, so the key's closing quote is two
            // bytes before the value.
            let raw_key = json.get(key_start..value_start.checked_sub(1)?)?;
            if !key_matches(raw_key, key) {
                return None;
            }
            let value_end = match self.0.get(2 * m + 2) {
                Some(next_key) => *next_key as usize - 1,
                None => json.len() - 1,
            };
            json.get(value_start..value_end)
        })
    }

    /// The value at `path` inside `json` (the text this index was made of):
    /// object keys, or array indexes in decimal. The empty path is the whole
    /// text.
    pub(crate) fn get<'j, S: AsRef<str>>(&self, json: &'j [u8], path: &[S]) -> Option<&'j [u8]> {
        let Some((first, rest)) = path.split_first() else {
            return Some(json);
        };
        let mut value = self.member(json, first.as_ref())?;
        for segment in rest {
            value = child(value, segment.as_ref())?;
        }
        Some(value)
    }
}

/// Whether the quoted JSON string `raw` (quotes included) is `key`.
fn key_matches(raw: &[u8], key: &str) -> bool {
    let inner = &raw[1..raw.len() - 1];
    if !inner.contains(&b'\\') {
        // Without escapes the text is the key itself.
        return inner == key.as_bytes();
    }
    serde_json::from_slice::<String>(raw).is_ok_and(|k| k == key)
}

/// The value of key `segment` of an object, or of element `segment` of an
/// array, inside the compact JSON value `value`.
fn child<'j>(value: &'j [u8], segment: &str) -> Option<&'j [u8]> {
    match value.first()? {
        b'{' => {
            let mut i = 1;
            if value.get(i) == Some(&b'}') {
                return None;
            }
            loop {
                let key_start = i;
                i = skip_string(value, i)?;
                let matches = key_matches(value.get(key_start..i)?, segment);
                if value.get(i) != Some(&b':') {
                    return None;
                }
                let start = i + 1;
                i = skip_value(value, start)?;
                if matches {
                    return value.get(start..i);
                }
                match value.get(i)? {
                    b',' => i += 1,
                    _ => return None,
                }
            }
        }
        b'[' => {
            // Only plain decimal indexes: `01` or `+1` name nothing.
            if segment.is_empty()
                || !segment.bytes().all(|b| b.is_ascii_digit())
                || (segment.len() > 1 && segment.starts_with('0'))
            {
                return None;
            }
            let wanted: usize = segment.parse().ok()?;
            let mut i = 1;
            if value.get(i) == Some(&b']') {
                return None;
            }
            let mut index = 0;
            loop {
                let start = i;
                i = skip_value(value, start)?;
                if index == wanted {
                    return value.get(start..i);
                }
                index += 1;
                match value.get(i)? {
                    b',' => i += 1,
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

/// The members of the compact JSON object `value`, as `(quoted key, value)`
/// text, in order; `None` when `value` is not a compact object. For readers
/// that walk an object's nested values (CEL conditions).
pub(crate) fn object_members(value: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    if value.first() != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    let mut i = 1;
    if value.get(i) == Some(&b'}') {
        return Some(members);
    }
    loop {
        let key_start = i;
        i = skip_string(value, i)?;
        let key = value.get(key_start..i)?;
        if value.get(i) != Some(&b':') {
            return None;
        }
        let start = i + 1;
        i = skip_value(value, start)?;
        members.push((key, value.get(start..i)?));
        match value.get(i)? {
            b',' => i += 1,
            b'}' => return Some(members),
            _ => return None,
        }
    }
}

/// The elements of the compact JSON array `value`, as text, in order;
/// `None` when `value` is not a compact array.
pub(crate) fn array_elements(value: &[u8]) -> Option<Vec<&[u8]>> {
    if value.first() != Some(&b'[') {
        return None;
    }
    let mut elements = Vec::new();
    let mut i = 1;
    if value.get(i) == Some(&b']') {
        return Some(elements);
    }
    loop {
        let start = i;
        i = skip_value(value, start)?;
        elements.push(value.get(start..i)?);
        match value.get(i)? {
            b',' => i += 1,
            b']' => return Some(elements),
            _ => return None,
        }
    }
}

/// Where the value of key `key` of the compact JSON object at the start
/// of `text` begins: `text` from there to its end. Only the members before
/// it are skipped, so a large value (an object's `metadata` with its
/// `managedFields`) costs nothing to reach into; the value's own end is
/// found by whoever reads it (its closing bracket ends a scan of it).
pub(crate) fn member_from<'j>(text: &'j [u8], key: &str) -> Option<&'j [u8]> {
    if text.first() != Some(&b'{') || text.get(1) == Some(&b'}') {
        return None;
    }
    let mut i = 1;
    loop {
        let key_start = i;
        i = skip_string(text, i)?;
        let matches = key_matches(text.get(key_start..i)?, key);
        if text.get(i) != Some(&b':') {
            return None;
        }
        if matches {
            return text.get(i + 1..);
        }
        i = skip_value(text, i + 1)?;
        match text.get(i)? {
            b',' => i += 1,
            _ => return None,
        }
    }
}

/// Where element `index` of the compact JSON array at the start of `text`
/// begins, as [`member_from`] for objects.
pub(crate) fn element_from(text: &[u8], index: usize) -> Option<&[u8]> {
    if text.first() != Some(&b'[') || text.get(1) == Some(&b']') {
        return None;
    }
    let mut i = 1;
    for _ in 0..index {
        i = skip_value(text, i)?;
        match text.get(i)? {
            b',' => i += 1,
            _ => return None,
        }
    }
    text.get(i..)
}

/// The compact JSON value at the start of `text` (which may go on after
/// it), alone.
pub(crate) fn value_at(text: &[u8]) -> Option<&[u8]> {
    text.get(..skip_value(text, 0)?)
}

/// Where a nested object starts in the text scanned, and its index.
pub(crate) type Nested = (usize, TopLevel);

/// Indexes the compact object at the start of `json`: its members, where
/// it ends, and (see [`TopLevel::scan_nested`]) the member `nested`.
fn object(json: &[u8], nested: &[u8]) -> Option<(TopLevel, usize, Option<Nested>)> {
    if json.first() != Some(&b'{') {
        return None;
    }
    let mut offsets = Vec::new();
    let mut inner = None;
    let mut i = 1;
    if json.get(i) == Some(&b'}') {
        return Some((TopLevel::new(offsets), 2, None));
    }
    loop {
        let key_start = i;
        offsets.push(u32::try_from(i).ok()?);
        i = skip_string(json, i)?;
        if json.get(i) != Some(&b':') {
            return None;
        }
        let is_nested = inner.is_none() && !nested.is_empty() && &json[key_start..i] == nested;
        i += 1;
        offsets.push(u32::try_from(i).ok()?);
        if is_nested && json.get(i) == Some(&b'{') {
            let (index, len, _) = object(&json[i..], b"")?;
            inner = Some((i, index));
            i += len;
        } else {
            i = skip_value(json, i)?;
        }
        match json.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Some((TopLevel::new(offsets), i + 1, inner)),
            _ => return None,
        }
    }
}

/// The offset just after the string that starts (with its quote) at `start`.
fn skip_string(json: &[u8], start: usize) -> Option<usize> {
    if json.get(start) != Some(&b'"') {
        return None;
    }
    let mut i = start + 1;
    loop {
        i = quote_or_backslash(json, i)?;
        match json[i] {
            b'"' => return Some(i + 1),
            // An escape: skip the backslash and the escaped byte (`\uXXXX`
            // goes on with plain hex digits).
            _ => i += 2,
        }
    }
}

/// The offset of the first `"` or `\\` at or after `from`. Eight bytes at
/// a time: most strings of an object are short keys and values, for which
/// setting up a vectorised search costs more than it saves.
fn quote_or_backslash(json: &[u8], mut from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `word` equal to `byte` (and possibly of
    // bytes after the first such one, which the caller does not look at).
    let equal = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    while let Some(chunk) = json.get(from..from + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let found = equal(word, b'"') | equal(word, b'\\');
        if found != 0 {
            return Some(from + found.trailing_zeros() as usize / 8);
        }
        from += 8;
    }
    let tail = json.get(from..)?;
    tail.iter()
        .position(|&b| b == b'"' || b == b'\\')
        .map(|at| from + at)
}

/// The offset just after the compact JSON value that starts at `start`;
/// `None` at whitespace outside a string, so that a scan that succeeds has
/// also checked that the text is compact.
fn skip_value(json: &[u8], start: usize) -> Option<usize> {
    match *json.get(start)? {
        b'"' => skip_string(json, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match *json.get(i)? {
                    b'"' => {
                        i = skip_string(json, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    b' ' | b'\n' | b'\r' | b'\t' => return None,
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            // A number, `true`, `false` or `null`: up to the next delimiter
            // (whitespace ends it too, and the caller then finds no delimiter).
            let len = json[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))
                .unwrap_or(json.len() - start);
            (len > 0).then_some(start + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index(value: &serde_json::Value) -> (Vec<u8>, TopLevel) {
        let text = serde_json::to_vec(value).unwrap();
        let index = TopLevel::scan(&text).expect("compact object");
        (text, index)
    }

    fn get(value: &serde_json::Value, path: &[&str]) -> Option<String> {
        let (text, index) = index(value);
        index
            .get(&text, path)
            .map(|s| String::from_utf8(s.to_vec()).unwrap())
    }

    #[test]
    fn finds_values_at_any_depth() {
        let pod = json!({
            "apiVersion": "v1",
            "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "web", "a\"b": "q"},
                         "annotations": {"note": "a \"quoted\" \\ text", "n": 3}},
            "spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}, {"name": "b", "image": "x:1"}],
                     "replicas": 3, "paused": false, "x": null, "f": -1.5e3},
            "status": {"phase": "Running"}
        });
        assert_eq!(
            get(&pod, &["status", "phase"]).as_deref(),
            Some("\"Running\"")
        );
        assert_eq!(get(&pod, &["spec", "replicas"]).as_deref(), Some("3"));
        assert_eq!(get(&pod, &["spec", "paused"]).as_deref(), Some("false"));
        assert_eq!(get(&pod, &["spec", "x"]).as_deref(), Some("null"));
        assert_eq!(get(&pod, &["spec", "f"]).as_deref(), Some("-1500.0"));
        assert_eq!(
            get(&pod, &["spec", "containers", "1", "image"]).as_deref(),
            Some("\"x:1\"")
        );
        assert_eq!(
            get(&pod, &["spec", "containers", "0", "ports", "0"]).as_deref(),
            Some(r#"{"containerPort":80}"#)
        );
        assert_eq!(
            get(&pod, &["metadata", "labels", "app.kubernetes.io/name"]).as_deref(),
            Some("\"web\"")
        );
        assert_eq!(
            get(&pod, &["metadata", "labels", "a\"b"]).as_deref(),
            Some("\"q\"")
        );
        assert_eq!(
            get(&pod, &["metadata", "annotations", "note"]).as_deref(),
            Some(r#""a \"quoted\" \\ text""#)
        );
        assert_eq!(
            get(&pod, &["metadata", "annotations", "n"]).as_deref(),
            Some("3")
        );
        assert_eq!(get(&pod, &["apiVersion"]).as_deref(), Some("\"v1\""));
        let whole = get(&pod, &[]).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&whole).unwrap(),
            pod
        );
        let status = get(&pod, &["status"]).unwrap();
        assert_eq!(status, r#"{"phase":"Running"}"#);
    }

    #[test]
    fn absent_paths_are_none() {
        let object = json!({"a": {"b": [1, 2], "c": {}}, "d": [], "e": "s"});
        for path in [
            &["x"][..],
            &["a", "x"],
            &["a", "b", "2"],
            &["a", "b", "01"],
            &["a", "b", "-1"],
            &["a", "b", ""],
            &["a", "c", "x"],
            &["d", "0"],
            &["e", "0"],
            &["a", "b", "0", "x"],
        ] {
            assert_eq!(get(&object, path), None, "{path:?}");
        }
        assert_eq!(get(&object, &["a", "b", "1"]).as_deref(), Some("2"));
    }

    #[test]
    fn scan_rejects_what_is_not_a_compact_object() {
        for text in [
            "",
            "[]",
            "{",
            "{\"a\":1",
            "{\"a\" :1}",
            "{ \"a\":1}",
            "{\"a\":1,}",
            "{\"a\":}",
            "{a:1}",
            // Whitespace anywhere outside a string, however deep.
            "{\"a\": 1}",
            "{\"a\":1 }",
            "{\"a\":{\"b\":[1, 2]}}",
            "{\"a\":{\"b\":true\n}}",
            "{\"a\":[{}\t]}",
        ] {
            assert_eq!(TopLevel::scan(text.as_bytes()), None, "{text}");
        }
        assert_eq!(TopLevel::scan(b"{}"), Some(TopLevel::default()));
        // Inside strings whitespace is text.
        let spaced = br#"{"a":{"b":["x y","\t\n"," "]}}"#;
        assert!(TopLevel::scan(spaced).is_some());
    }

    #[test]
    fn the_end_of_a_string_is_found_at_every_offset_and_length() {
        // Every position of the first quote or backslash, in texts long
        // and short enough to end inside a word of eight bytes or after.
        for len in 0..40 {
            for at in 0..=len {
                for special in [b'"', b'\\'] {
                    let mut text = vec![b'a'; len];
                    if at < len {
                        text[at] = special;
                        // Later quotes and backslashes change nothing.
                        for later in (at + 1..len).step_by(3) {
                            text[later] = b'"';
                        }
                    }
                    let found = quote_or_backslash(&text, 0);
                    assert_eq!(found, (at < len).then_some(at), "{len} {at} {special}");
                }
            }
        }
        // Bytes next to the two searched for are not taken for them.
        let near = [b'!', b'#', b'[', b']', 0x22 ^ 0x80, 0x5c ^ 0x80, 0x00, 0xff];
        assert_eq!(quote_or_backslash(&near, 0), None);
        assert_eq!(quote_or_backslash(b"ab\\\"", 1), Some(2));
        assert_eq!(quote_or_backslash(b"ab", 3), None);
        // Through escapes to the closing quote.
        let text = br#""a\"b\\c\u0041d""#;
        assert_eq!(skip_string(text, 0), Some(text.len()));
    }

    #[test]
    fn a_nested_member_is_indexed_in_the_same_scan() {
        let pod = json!({
            "apiVersion": "v1",
            "metadata": {"name": "web", "managedFields": [{"manager": "m"}], "labels": {"a": "b"}},
            "spec": {"metadata": {"not": "this one"}},
        });
        let text = serde_json::to_vec(&pod).unwrap();
        let (top, nested) = TopLevel::scan_nested(&text, b"\"metadata\"").unwrap();
        assert_eq!(top, TopLevel::scan(&text).unwrap());
        let (at, metadata) = nested.expect("metadata is an object");
        let value = top.get(&text, &["metadata"]).unwrap();
        assert_eq!(at, value.as_ptr() as usize - text.as_ptr() as usize);
        assert_eq!(Some(metadata), TopLevel::scan(value));

        // Only the first member of that name, and only when it is an object.
        let twice = br#"{"metadata":{"a":1},"metadata":{"b":2}}"#;
        let (_, nested) = TopLevel::scan_nested(twice, b"\"metadata\"").unwrap();
        assert_eq!(nested.map(|(at, _)| at), Some(12));
        let text = br#"{"metadata":"web"}"#;
        assert_eq!(
            TopLevel::scan_nested(text, b"\"metadata\"").map(|(_, nested)| nested),
            Some(None)
        );
        // Text that is not one compact object is refused as by `scan`.
        for text in [
            &br#"{"metadata":{"a":1}"#[..],
            br#"{"metadata":{"a": 1}}"#,
            br#"{"metadata":{}}x"#,
        ] {
            assert_eq!(TopLevel::scan_nested(text, b"\"metadata\""), None);
        }
    }
}
