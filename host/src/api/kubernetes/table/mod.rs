//! Tables: the `meta.k8s.io` `Table` answers that `kubectl get` asks for
//! (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), with the
//! columns and cells a real API server sends, so that kubectl pointed at
//! GRW prints what it prints against the cluster.
//!
//! A [`Printer`] holds the columns of one kind, chosen by group and kind
//! ([`requested`] finds the one of a request, reading a custom resource's
//! CRD from GRW's cache):
//! - built-in kinds have the API server's columns (names, types, formats,
//!   priorities), written as data in `kinds.rs`, each cell a path into the
//!   object or a named rule (`cells.rs` and the files per area: `pod.rs`,
//!   `network.rs`, `node.rs`, `workloads.rs`, `storage.rs`, `event.rs`);
//! - custom resources have their CRD's `additionalPrinterColumns` for the
//!   version served, evaluated with `jsonpath.rs` (`crd.rs`);
//! - the API server's own kinds without a printer (Role, ClusterRole,
//!   LimitRange...) get Name and `Created At` (the timestamp itself, in
//!   UTC), as its default convertor writes them;
//! - any other kind gets Name and Age, and so does a custom resource whose
//!   CRD GRW cannot read, and a CRD version without columns (see
//!   `lookup.rs`). A custom resource of one of the API server's own
//!   groups is a custom resource like any other: its CRD's columns.
//!
//! Cells are computed for every column, `-o wide` ones included (priority
//! 1): the API server does the same and kubectl hides what it does not
//! show. Ages are relative to the `now` each call is given, so the
//! functions here are pure and their tests exact.
//!
//! Three answers use a printer:
//! - a list: [`Printer::list`], with the list's `resourceVersion`,
//!   `continue` and `remainingItemCount`;
//! - one object (a GET): [`Printer::one`], a one-row Table whose
//!   `resourceVersion` is the object's;
//! - a watch (`kubectl get -w`): [`Printer::watch`] gives a [`WatchTables`]
//!   that turns each event's object into a one-row Table. As in the API
//!   server, only the first event of the stream carries the column
//!   definitions (later ones have `columnDefinitions: null`); a DELETED
//!   event's row shows the object's last state; a BOOKMARK's object (empty
//!   but for its `resourceVersion`, and annotations) becomes a row like any
//!   other (`""` name, `<unknown>` age...), its Table carrying the
//!   bookmark's `resourceVersion` (the bookmark ending the initial events
//!   always carries its metadata as the row's object, whatever
//!   `includeObject` says, so that clients see its annotation); an ERROR
//!   event's `Status` is sent as it
//!   is. Whatever comes first uses up the column definitions.
//!
//! Each row's `object` follows `includeObject` ([`IncludeObject`]).

mod age;
mod cells;
mod columns;
mod crd;
mod event;
mod include;
mod jsonpath;
mod kinds;
mod lookup;
mod network;
mod node;
mod pod;
mod render;
mod selector;
mod storage;
mod workloads;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use self::age::Instant;
use self::columns::Column;
use self::render::{Meta, RowObject, TableWriter};
use super::read::ListMeta;
use crate::gvk::Gvk;
use crate::store::StoredObject;

pub(crate) use self::crd::BadColumn;
pub(crate) use self::include::{BadIncludeObject, IncludeObject};
pub(crate) use self::lookup::requested;

/// The columns of one kind, and how to fill them.
#[derive(Debug, Clone)]
pub(crate) struct Printer {
    columns: Vec<Column>,
    /// Whether rows of finished pods get a `Completed` row condition.
    pod_conditions: bool,
    /// The `meta.k8s.io` version of the Tables: `v1` unless
    /// [`Printer::in_version`] says otherwise.
    version: &'static str,
}

impl Printer {
    /// The printer of `gvk`. `crd` is the CustomResourceDefinition object
    /// when the kind is a custom resource: its columns for `gvk.version`
    /// are used. A column whose JSONPath cannot be read is an error that
    /// names the CRD and column; [`BadColumn::printer`] gives the printer
    /// the API server falls back to (the columns before the bad one).
    pub(crate) fn for_kind(gvk: &Gvk, crd: Option<&Value>) -> Result<Printer, Box<BadColumn>> {
        if let Some(crd) = crd {
            return Ok(Printer::of_columns(crd::columns(crd, &gvk.version)?));
        }
        Ok(match kinds::find(&gvk.group, &gvk.kind) {
            Some(kind) => Printer {
                pod_conditions: kind.pod_conditions,
                ..Printer::of_columns(kind.columns.iter().map(|c| c.column()).collect())
            },
            None if lookup::api_server_group(&gvk.group) => Printer::created_at(),
            None => Printer::of_columns(crd::default_columns()),
        })
    }

    /// Name and `Created At`: the API server's own kinds without a printer.
    pub(crate) fn created_at() -> Printer {
        Printer::of_columns(vec![columns::NAME.column(), columns::CREATED_AT.column()])
    }

    fn of_columns(columns: Vec<Column>) -> Printer {
        Printer {
            columns,
            pod_conditions: false,
            version: "v1",
        }
    }

    /// The same printer writing Tables of `meta.k8s.io/{version}` (`v1`
    /// or `v1beta1`, as the client's `Accept` asked).
    pub(crate) fn in_version(self, version: &'static str) -> Printer {
        Printer { version, ..self }
    }

    /// A list as a Table, as JSON.
    #[cfg(test)]
    pub(crate) fn list(
        &self,
        objects: &[Arc<StoredObject>],
        include: IncludeObject,
        meta: &ListMeta,
        now: SystemTime,
    ) -> Vec<u8> {
        let uncharged = self.list_charged(objects, include, meta, now, || {
            Ok::<(), std::convert::Infallible>(())
        });
        match uncharged {
            Ok(table) => table,
            Err(never) => match never {},
        }
    }

    /// [`Printer::list`], calling `charge` before each row and stopping at
    /// its first error: a Table of many objects costs a few microseconds a
    /// row, which a request's budget pays.
    pub(crate) fn list_charged<E>(
        &self,
        objects: &[Arc<StoredObject>],
        include: IncludeObject,
        meta: &ListMeta,
        now: SystemTime,
        mut charge: impl FnMut() -> Result<(), E>,
    ) -> Result<Vec<u8>, E> {
        let now = Instant::from_system(now);
        let mut table = TableWriter::start(
            &Meta {
                version: self.version,
                resource_version: meta.resource_version,
                continue_token: meta.continue_token,
                remaining_item_count: meta.remaining_item_count,
            },
            Some(&self.columns),
        );
        for object in objects {
            charge()?;
            self.stored_row(&mut table, object, include, now);
        }
        Ok(table.finish())
    }

    /// One object as a one-row Table (a GET), as JSON.
    pub(crate) fn one(
        &self,
        object: &StoredObject,
        include: IncludeObject,
        now: SystemTime,
    ) -> Vec<u8> {
        let mut table = TableWriter::start(
            &Meta {
                version: self.version,
                resource_version: object.resource_version(),
                continue_token: None,
                remaining_item_count: None,
            },
            Some(&self.columns),
        );
        self.stored_row(&mut table, object, include, Instant::from_system(now));
        table.finish()
    }

    /// The Tables of one watch stream.
    pub(crate) fn watch(self, include: IncludeObject) -> WatchTables {
        WatchTables {
            printer: self,
            include,
            columns_sent: false,
        }
    }

    fn cells(&self, object: &Value, now: Instant) -> Vec<Value> {
        self.columns.iter().map(|c| c.cell(object, now)).collect()
    }

    fn conditions(&self, object: &Value) -> Option<Value> {
        self.pod_conditions
            .then(|| pod::row_conditions(object))
            .flatten()
    }

    fn stored_row(
        &self,
        table: &mut TableWriter,
        object: &StoredObject,
        include: IncludeObject,
        now: Instant,
    ) {
        let json = object.json();
        // The bytes were written by serde_json from a valid `Value`.
        let value = serde_json::from_slice(&json).unwrap_or(Value::Null);
        let row_object = match include {
            IncludeObject::None => RowObject::None,
            IncludeObject::Metadata => {
                RowObject::MetadataJson(object.field(&json, &["metadata"]).unwrap_or(b"{}"))
            }
            IncludeObject::Object => RowObject::ObjectJson(&json),
        };
        table.row(
            &self.cells(&value, now),
            self.conditions(&value).as_ref(),
            row_object,
        );
    }
}

impl BadColumn {
    /// The printer the API server uses for such a CRD: the columns before
    /// the bad one.
    pub(crate) fn printer(self) -> Printer {
        Printer::of_columns(self.columns)
    }
}

/// The Tables of one watch stream, in order: see the module's
/// documentation for what each event carries.
pub(crate) struct WatchTables {
    printer: Printer,
    include: IncludeObject,
    columns_sent: bool,
}

impl WatchTables {
    /// The `object` of the next event, given the event's object (a cached
    /// object, a bookmark, or an ERROR event's `Status`), as JSON.
    pub(crate) fn object(&mut self, object: &Value, now: SystemTime) -> Vec<u8> {
        let columns = (!self.columns_sent).then_some(self.printer.columns.as_slice());
        self.columns_sent = true;
        let is_status = object.get("kind").and_then(Value::as_str) == Some("Status")
            && object.get("apiVersion").and_then(Value::as_str) == Some("v1");
        if is_status {
            return serde_json::to_vec(object).unwrap_or_default();
        }
        let resource_version = object
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut table = TableWriter::start(
            &Meta {
                version: self.printer.version,
                resource_version,
                continue_token: None,
                remaining_item_count: None,
            },
            columns,
        );
        let empty = Value::Object(serde_json::Map::new());
        // The bookmark ending the initial events always carries its
        // metadata (the annotation that says so), as in the API server.
        let include = if ends_initial_events(object) {
            IncludeObject::Metadata
        } else {
            self.include
        };
        let row_object = match include {
            IncludeObject::None => RowObject::None,
            IncludeObject::Metadata => {
                RowObject::Metadata(object.get("metadata").unwrap_or(&empty))
            }
            IncludeObject::Object => RowObject::Object(object),
        };
        let now = Instant::from_system(now);
        let conditions = self.printer.conditions(object);
        table.row(
            &self.printer.cells(object, now),
            conditions.as_ref(),
            row_object,
        );
        table.finish()
    }
}

/// Whether an object is the bookmark that ends a watch's initial events.
fn ends_initial_events(object: &Value) -> bool {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get("k8s.io/initial-events-end"))
        .and_then(Value::as_str)
        == Some("true")
}
