//! Columns: what a Table's `columnDefinitions` say of each, and where each
//! cell comes from.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::age::Instant;
use super::cells::Cell;
use super::crd;
use super::jsonpath::JsonPath;

/// One entry of `columnDefinitions`, as the API server writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Definition {
    /// The header kubectl shows (upper-cased).
    pub(crate) name: Cow<'static, str>,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    #[serde(rename = "type")]
    pub(crate) kind: Cow<'static, str>,
    /// `name` for the column that names the object, else usually empty.
    pub(crate) format: Cow<'static, str>,
    /// What the column shows, for people.
    pub(crate) description: Cow<'static, str>,
    /// 0: always shown; 1 and more: shown by `-o wide` only.
    pub(crate) priority: i32,
}

/// A column and how to fill its cells.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub(crate) definition: Definition,
    pub(crate) source: Source,
}

/// Where a cell comes from.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// A built-in printer's rule.
    Cell(Cell),
    /// A CRD column's JSONPath, its value typed by the column's type.
    Path(JsonPath),
}

impl Column {
    /// The cell of this column for `object`.
    pub(crate) fn cell(&self, object: &Value, now: Instant) -> Value {
        match &self.source {
            Source::Cell(cell) => cell.eval(object, now),
            Source::Path(path) => crd::cell(&self.definition.kind, path, object, now),
        }
    }
}

/// A built-in column, written as constant data in [`super::kinds`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Builtin {
    pub(crate) name: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) format: &'static str,
    pub(crate) priority: i32,
    pub(crate) description: &'static str,
    pub(crate) cell: Cell,
}

impl Builtin {
    /// A column shown by default.
    pub(crate) const fn new(
        name: &'static str,
        kind: &'static str,
        description: &'static str,
        cell: Cell,
    ) -> Builtin {
        Builtin {
            name,
            kind,
            format: "",
            priority: 0,
            description,
            cell,
        }
    }

    /// A column shown by `-o wide` only.
    pub(crate) const fn wide(
        name: &'static str,
        kind: &'static str,
        description: &'static str,
        cell: Cell,
    ) -> Builtin {
        Builtin {
            priority: 1,
            ..Builtin::new(name, kind, description, cell)
        }
    }

    /// The same column with a `format`.
    pub(crate) const fn formatted(self, format: &'static str) -> Builtin {
        Builtin { format, ..self }
    }

    pub(crate) fn column(&self) -> Column {
        Column {
            definition: Definition {
                name: Cow::Borrowed(self.name),
                kind: Cow::Borrowed(self.kind),
                format: Cow::Borrowed(self.format),
                description: Cow::Borrowed(self.description),
                priority: self.priority,
            },
            source: Source::Cell(self.cell),
        }
    }
}

/// Text of the column that names the object.
pub(crate) const NAME_DESCRIPTION: &str =
    "The object's name, unique among the objects of its kind in its namespace.";

/// Text of the columns that show the object's age.
pub(crate) const AGE_DESCRIPTION: &str =
    "How long ago the object was created (metadata.creationTimestamp).";

/// The column that names the object.
pub(crate) const NAME: Builtin =
    Builtin::new("Name", "string", NAME_DESCRIPTION, Cell::Name).formatted("name");

/// The age of the object.
pub(crate) const AGE: Builtin = Builtin::new("Age", "string", AGE_DESCRIPTION, Cell::Age);

/// When the object was created: the column the API server shows beside
/// the name for its own kinds that have no printer.
pub(crate) const CREATED_AT: Builtin = Builtin::new(
    "Created At",
    "date",
    "When the object was created (metadata.creationTimestamp), in UTC.",
    Cell::CreatedAt,
);
