//! Writing a `meta.k8s.io/v1` Table as JSON, in the order and with the
//! empty values the API server writes: `columnDefinitions` is `null` when
//! left out, a row's `object` is `null` for `includeObject=None`, and
//! `conditions` only appears when a row has some.
//!
//! Objects are copied into rows as the bytes the cache holds, so a Table
//! of whole objects does not serialize them again.

use serde_json::Value;

use super::columns::Column;

/// The Table's version and `metadata`.
pub(crate) struct Meta<'a> {
    /// `v1` or `v1beta1`: the version of `meta.k8s.io` the client asked
    /// for, which the Table and its rows' `PartialObjectMetadata` carry.
    pub(crate) version: &'a str,
    pub(crate) resource_version: &'a str,
    pub(crate) continue_token: Option<&'a str>,
    pub(crate) remaining_item_count: Option<i64>,
}

/// What a row carries as its `object`.
pub(crate) enum RowObject<'a> {
    None,
    /// A `PartialObjectMetadata` around this `metadata`, as JSON text.
    MetadataJson(&'a [u8]),
    /// A `PartialObjectMetadata` around this `metadata`.
    Metadata(&'a Value),
    /// The whole object, as JSON text.
    ObjectJson(&'a [u8]),
    /// The whole object.
    Object(&'a Value),
}

/// A Table being written.
pub(crate) struct TableWriter {
    out: Vec<u8>,
    rows: usize,
    /// `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/VERSION","metadata":`.
    partial: Vec<u8>,
}

// Writing JSON into a Vec cannot fail: the results of `serde_json` writes
// below are ignored.
impl TableWriter {
    /// Starts a Table; `columns` is `None` to leave the definitions out.
    pub(crate) fn start(meta: &Meta, columns: Option<&[Column]>) -> TableWriter {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(br#"{"kind":"Table","apiVersion":"#);
        let _ = serde_json::to_writer(&mut out, &format!("meta.k8s.io/{}", meta.version));
        out.extend_from_slice(br#","metadata":{"#);
        let mut first = true;
        let mut member = |out: &mut Vec<u8>, key: &str| {
            if !first {
                out.push(b',');
            }
            first = false;
            let _ = serde_json::to_writer(&mut *out, key);
            out.push(b':');
        };
        if !meta.resource_version.is_empty() {
            member(&mut out, "resourceVersion");
            let _ = serde_json::to_writer(&mut out, meta.resource_version);
        }
        if let Some(token) = meta.continue_token.filter(|t| !t.is_empty()) {
            member(&mut out, "continue");
            let _ = serde_json::to_writer(&mut out, token);
        }
        if let Some(count) = meta.remaining_item_count {
            member(&mut out, "remainingItemCount");
            let _ = serde_json::to_writer(&mut out, &count);
        }
        out.extend_from_slice(br#"},"columnDefinitions":"#);
        match columns {
            Some(columns) => {
                let definitions: Vec<_> = columns.iter().map(|c| &c.definition).collect();
                let _ = serde_json::to_writer(&mut out, &definitions);
            }
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(br#","rows":["#);
        let mut partial = br#"{"kind":"PartialObjectMetadata","apiVersion":"#.to_vec();
        let _ = serde_json::to_writer(&mut partial, &format!("meta.k8s.io/{}", meta.version));
        partial.extend_from_slice(br#","metadata":"#);
        TableWriter {
            out,
            rows: 0,
            partial,
        }
    }

    /// Adds a row.
    pub(crate) fn row(&mut self, cells: &[Value], conditions: Option<&Value>, object: RowObject) {
        let out = &mut self.out;
        if self.rows > 0 {
            out.push(b',');
        }
        self.rows += 1;
        out.extend_from_slice(br#"{"cells":"#);
        let _ = serde_json::to_writer(&mut *out, cells);
        if let Some(conditions) = conditions {
            out.extend_from_slice(br#","conditions":"#);
            let _ = serde_json::to_writer(&mut *out, conditions);
        }
        out.extend_from_slice(br#","object":"#);
        match object {
            RowObject::None => out.extend_from_slice(b"null"),
            RowObject::MetadataJson(metadata) => {
                out.extend_from_slice(&self.partial);
                out.extend_from_slice(metadata);
                out.push(b'}');
            }
            RowObject::Metadata(metadata) => {
                out.extend_from_slice(&self.partial);
                let _ = serde_json::to_writer(&mut *out, metadata);
                out.push(b'}');
            }
            RowObject::ObjectJson(object) => out.extend_from_slice(object),
            RowObject::Object(object) => {
                let _ = serde_json::to_writer(&mut *out, object);
            }
        }
        out.push(b'}');
    }

    /// The finished Table.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.out.extend_from_slice(b"]}");
        self.out
    }
}
