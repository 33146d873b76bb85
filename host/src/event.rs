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

/// Where a change came from: the SDK's, so that plugins and the host
/// speak of the same three.
pub use grw_sdk::Origin;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changes_origin_is_the_sdks_own_and_reads_back_from_its_name() {
        // One type: what the store records is what plugins are given.
        let recorded: grw_sdk::Origin = crate::store::Origin::Relist;
        assert_eq!(recorded, grw_sdk::Origin::Relist);
        for origin in [Origin::Initial, Origin::Watch, Origin::Relist] {
            assert_eq!(Origin::parse(origin.as_str()), Some(origin));
        }
        assert_eq!(Origin::parse("list"), None);
    }
}
