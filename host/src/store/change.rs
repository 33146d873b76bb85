//! Changes: what the cache emits when an object is added, modified or deleted.

use std::fmt;
use std::sync::Arc;

use super::object::StoredObject;

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

/// One change of one object.
#[derive(Debug, Clone)]
pub struct Change {
    /// Added, modified or deleted.
    pub kind: ChangeType,
    /// The new state; for deletions, the last known state.
    pub object: Arc<StoredObject>,
    /// The previous state, for modifications.
    pub old: Option<Arc<StoredObject>>,
    /// Watch event, relist diff or initial list.
    pub origin: Origin,
    /// Position in the cache's history: the object's resourceVersion for watch
    /// events, the list's resourceVersion for relist changes.
    pub position: u64,
}

impl Change {
    /// The change that presents an existing object to someone who has not
    /// seen it: an ADDED from the initial state.
    pub fn snapshot(object: Arc<StoredObject>) -> Change {
        Change {
            kind: ChangeType::Added,
            object,
            old: None,
            origin: Origin::Initial,
            position: 0,
        }
    }

    /// Stable id of this change for de-duplication: `uid/resourceVersion/TYPE`.
    pub fn id(&self) -> String {
        format!(
            "{}/{}/{}",
            self.object.uid(),
            self.object.resource_version(),
            self.kind
        )
    }
}
