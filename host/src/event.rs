//! What happened to an object, in the words of Kubernetes watch events
//! ([`ChangeType`]: `ADDED`, `MODIFIED`, `DELETED`), and where GRW learned it
//! ([`Origin`]). A leaf of the module graph: the configuration reads event
//! types, the store's changes carry both.

use std::fmt;

/// Type of a change, as in Kubernetes watch events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeType {
    /// The object appeared.
    Added,
    /// The object changed.
    Modified,
    /// The object went away; the change carries its last known state.
    Deleted,
}

impl ChangeType {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }

    /// Parses `ADDED`, `MODIFIED` or `DELETED`.
    pub fn parse(s: &str) -> Option<ChangeType> {
        match s {
            "ADDED" => Some(ChangeType::Added),
            "MODIFIED" => Some(ChangeType::Modified),
            "DELETED" => Some(ChangeType::Deleted),
            _ => None,
        }
    }
}

impl fmt::Display for ChangeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a change came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The first list of a watch: the object existed before GRW looked.
    Initial,
    /// A watch event.
    Watch,
    /// The diff of a relist against the cache (after `410 Gone` or a lost watch).
    Relist,
}

impl Origin {
    /// `initial`, `watch` or `relist`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Initial => "initial",
            Origin::Watch => "watch",
            Origin::Relist => "relist",
        }
    }

    /// Parses what [`Origin::as_str`] writes.
    pub fn parse(s: &str) -> Option<Origin> {
        match s {
            "initial" => Some(Origin::Initial),
            "watch" => Some(Origin::Watch),
            "relist" => Some(Origin::Relist),
            _ => None,
        }
    }
}
