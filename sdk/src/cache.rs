//! Lookups into GRW's caches, for analyzers.

use crate::{Gvk, Object, ObjectView};

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

/// Which way a [`Relationship`] points, seen from the analyzed object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// From the analyzed object to the other: this Service `selects` that
    /// Pod.
    Outgoing,
    /// From the other object to the analyzed one: that ReplicaSet `owns`
    /// this Pod.
    Incoming,
}

/// One relationship between the analyzed object and another.
///
/// ```
/// use grw_sdk::{Direction, Gvk, ObjectRef, Relationship};
///
/// let owner = ObjectRef::new(Gvk::new("apps", "v1", "ReplicaSet"), "shop", "web-7d9f");
/// let edge = Relationship::incoming("owns", owner).with("controller", "true");
/// assert_eq!(edge.direction, Direction::Incoming);
/// assert_eq!(edge.attributes, [("controller".to_string(), "true".to_string())]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Relationship {
    /// What the relation is, e.g. `owns`, `selects`, `runs-on`: lowercase
    /// words joined by `-`.
    pub relation: String,
    /// Which way it points.
    pub direction: Direction,
    /// The other object. It need not exist. An empty version in its kind
    /// means whichever version GRW serves.
    pub target: ObjectRef,
    /// Facts about the edge, e.g. `controller` = `true`.
    pub attributes: Vec<(String, String)>,
}

impl Relationship {
    /// The analyzed object `relation` `target`.
    pub fn outgoing(relation: impl Into<String>, target: ObjectRef) -> Self {
        Self {
            relation: relation.into(),
            direction: Direction::Outgoing,
            target,
            attributes: Vec::new(),
        }
    }

    /// `source` `relation` the analyzed object.
    pub fn incoming(relation: impl Into<String>, source: ObjectRef) -> Self {
        Self {
            direction: Direction::Incoming,
            ..Self::outgoing(relation, source)
        }
    }

    /// The same relationship with one more attribute.
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.attributes.push((key.into(), value.into()));
        self
    }
}

/// Read-only lookups into GRW's caches.
///
/// Inside GRW this is backed by the host; in unit tests, use
/// [`crate::testing::MemoryCache`]. Answers are [`ObjectView`]s, read on
/// request like an event's object. GRW records each lookup an analyzer
/// makes and analyzes the object again when a change would answer it
/// differently. A kind GRW does not watch yet is watched from the first
/// lookup on; until it is synced, its objects are not found.
pub trait Cache {
    /// One object; `namespace` is empty for cluster-scoped objects.
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<ObjectView>;

    /// Objects of a kind, within one namespace (empty for all), that match
    /// a label selector (`""` for all). An error means the selector is
    /// malformed or the kind cannot be listed.
    fn list(
        &self,
        gvk: &Gvk,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<ObjectView>, String>;

    /// Objects of a kind that have an owner reference to `owner_uid`.
    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<ObjectView>;
}
