//! Changes: what the cache emits when an object is added, modified or deleted.

use std::sync::Arc;

use super::object::StoredObject;
pub use crate::event::{ChangeType, Origin};

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
