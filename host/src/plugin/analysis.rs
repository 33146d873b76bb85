//! What an analyzer plugin answers, in host terms ([`Relationship`]), and
//! what it reads GRW's caches through during a call ([`CacheReader`]).
//!
//! The plugin module only carries the guest's lookups to a reader and
//! hands the objects back; the reader (the relations engine) decides what
//! the caches answer and records what was asked, so it can call the
//! analyzer again when a change would answer differently.

use std::sync::Arc;

use crate::gvk::Gvk;
use crate::store::StoredObject;

/// An object a lookup found, with its kind.
pub type Found = (Gvk, Arc<StoredObject>);

/// GRW's caches as one analyzer call sees them.
pub trait CacheReader: Send + Sync {
    /// One object, if it is cached.
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<Found>;
    /// Objects of a kind, in one namespace (`""`: all), matching a label
    /// selector (`""`: all); an error says why the selector is wrong.
    fn list(&self, gvk: &Gvk, namespace: &str, selector: &str) -> Result<Vec<Found>, String>;
    /// Objects of a kind with an owner reference to `owner_uid`.
    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<Found>;
    /// The guest read more of a found object than its identity (kind,
    /// namespace, name, uid): its content now matters to the answer.
    fn read(&self, gvk: &Gvk, object: &StoredObject);
}

/// One relationship an analyzer found for the object it was given.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Relationship {
    /// What the relation is, e.g. `owns`.
    pub relation: String,
    /// From the analyzed object to the target (`true`), or back.
    pub outgoing: bool,
    /// The other end's kind; the version may be empty.
    pub gvk: Gvk,
    /// The other end's namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// The other end's name.
    pub name: String,
    /// Facts about the edge, in the order given.
    pub attributes: Vec<(String, String)>,
}
