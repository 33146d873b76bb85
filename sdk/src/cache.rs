//! Lookups into GRW's caches, for analyzers.

use crate::{Gvk, Object};

/// Names one object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// The object's group/version/kind.
    pub gvk: Gvk,
    /// Namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// A reference from its parts.
    pub fn new(gvk: Gvk, namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            gvk,
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// A reference to `object`, if it has `apiVersion`, `kind` and a name.
    pub fn of(object: &Object) -> Option<Self> {
        Some(Self::new(
            object.gvk()?,
            object.namespace().unwrap_or_default(),
            object.name()?,
        ))
    }
}

/// One relationship from the analyzed object to another.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Relationship {
    /// What the relation is, e.g. `owns`, `selects`, `binds`, `routes-to`.
    pub relation: String,
    /// The other object.
    pub target: ObjectRef,
}

impl Relationship {
    /// A relationship from its parts.
    pub fn new(relation: impl Into<String>, target: ObjectRef) -> Self {
        Self {
            relation: relation.into(),
            target,
        }
    }
}

/// Read-only lookups into GRW's caches.
///
/// Inside GRW this is backed by the host; in unit tests, use
/// [`crate::testing::MemoryCache`]. Objects that are not cached (because no
/// watch covers their kind) are simply not found.
pub trait Cache {
    /// One object; `namespace` is empty for cluster-scoped objects.
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<Object>;

    /// Objects of a kind, within one namespace (empty for all), that match
    /// a label selector (`""` for all). An error means the selector is
    /// malformed or the kind cannot be listed.
    fn list(&self, gvk: &Gvk, namespace: &str, label_selector: &str)
    -> Result<Vec<Object>, String>;

    /// Objects of a kind that have an owner reference to `owner_uid`.
    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<Object>;
}
