//! Contract `grw:plugin@0.2` (`wit/plugin.wit`), the current one: the
//! generated bindings of the filter, notifier and analyzer worlds, and what
//! the host implements of them: the `object` resource the guest reads the
//! call's objects through, `log`, `cache` (for analyzers, answered by the
//! call's [`CacheReader`]) and `outbound-http` (in [`super::outbound`]).
//!
//! An object crosses as a handle whose `rep` says which object of the call
//! it is: counted from the call's [`GuestState::base`], [`OBJECT`] and
//! [`OLD_OBJECT`] are borrowed, and from [`FIRST_FOUND`] on come the
//! objects the call's cache lookups returned (owned by the guest, which
//! drops them). The store holds the objects themselves for the call's
//! duration ([`GuestState::objects`], [`GuestState::found`]). So a call
//! copies into the guest only the small envelope, and each method copies
//! only what it returns.
//!
//! A handle lasts for the call that made it. Each call's handles get reps
//! above every earlier call's (the base moves past them when the call
//! ends), so a handle a guest kept from an earlier call is below the base
//! and its use traps ([`StaleHandle`]) instead of reading whatever object
//! the current call has in that place. An instance whose base has passed
//! [`RETIRE_AFTER`] is replaced by a fresh one before the reps could wrap.
//!
//! The objects a call's lookups found stay in the host until the call ends,
//! however many handles the guest dropped, so they count against the
//! plugin's memory limit (`limits.memoryMb`): each at its JSON size plus
//! [`FOUND_ENTRY_BYTES`]. A `list` that would take the call past it answers
//! an error the guest sees ([`LookupLimitExceeded`]'s message), a `get` or
//! `owned-by` (whose results have no error) traps with it.

use wasmtime::component::Resource;

use super::analysis::{CacheReader, Found, Relationship};
use super::guest::GuestState;
use super::interest::Interest;
use crate::gvk::Gvk;
use crate::store::{Change, ChangeType, Origin, StoredObject};

/// The `filter-plugin` world; owns the shared `types` and `log` interfaces.
pub(super) mod filter {
    wasmtime::component::bindgen!({
        path: "../wit/plugin.wit",
        world: "filter-plugin",
        with: {
            "grw:plugin/types.object": super::ObjectHandle,
        },
        // A handle from an earlier call traps (see `StaleHandle`).
        imports: { "grw:plugin/types": trappable },
    });
}

/// The `notifier-plugin` world.
pub(super) mod notifier {
    wasmtime::component::bindgen!({
        path: "../wit/plugin.wit",
        world: "notifier-plugin",
        with: {
            "grw:plugin/types": crate::plugin::v0_2::filter::grw::plugin::types,
            "grw:plugin/log": crate::plugin::v0_2::filter::grw::plugin::log,
        },
    });
}

/// The `analyzer-plugin` world.
pub(super) mod analyzer {
    wasmtime::component::bindgen!({
        path: "../wit/plugin.wit",
        world: "analyzer-plugin",
        with: {
            "grw:plugin/types": crate::plugin::v0_2::filter::grw::plugin::types,
            "grw:plugin/log": crate::plugin::v0_2::filter::grw::plugin::log,
        },
        imports: { "grw:plugin/cache": trappable },
    });
}

pub(super) use analyzer::exports::grw::plugin::analyzer::{
    Direction as WitDirection, Relationship as WitRelationship,
};
pub(super) use analyzer::grw::plugin::cache;
pub(super) use filter::grw::plugin::log;
pub(super) use filter::grw::plugin::types as wit;
pub(super) use notifier::exports::grw::plugin::notifier::DeliveryError as WitDeliveryError;
pub(super) use notifier::grw::plugin::outbound_http;

/// What the guest's `object` handles stand for: a place among the call's
/// objects, never a value of this type.
pub struct ObjectHandle;

/// The `rep` of the handle on the call's object, from the call's base.
pub(super) const OBJECT: u32 = 0;
/// The `rep` of the handle on the previous state, from the call's base.
pub(super) const OLD_OBJECT: u32 = 1;
/// The `rep` of the first object a cache lookup returned, from the call's
/// base; the next ones follow.
pub(super) const FIRST_FOUND: u32 = 2;

/// An instance whose calls have handed out this many handles is replaced
/// once its call ends: far below `u32::MAX`, so no call can push the reps
/// past it (a call would need two billion found objects in memory), and
/// far above what an instance sees in a long life (a million calls with a
/// thousand lookup answers each).
pub(super) const RETIRE_AFTER: u32 = 1 << 31;

/// What one found object costs the host besides its JSON: its entry in the
/// call's list (the kind's three strings and the object's `Arc`, about 90
/// bytes), rounded up, so that a list of many small objects counts too.
pub(super) const FOUND_ENTRY_BYTES: usize = 128;

/// The objects a call's cache lookups found would pass the plugin's memory
/// limit.
#[derive(Debug, thiserror::Error)]
#[error(
    "this call's cache lookups would hold {wanted} bytes of objects, over the plugin's memory limit of {limit} bytes (limits.memoryMb); look up fewer objects in one call (a narrower namespace or label selector), or raise limits.memoryMb"
)]
pub struct LookupLimitExceeded {
    /// What the call's lookups would hold with this one.
    pub wanted: usize,
    /// `limits.memoryMb`, in bytes.
    pub limit: usize,
}

/// The trap of a guest that used an object handle its call did not make.
#[derive(Debug, thiserror::Error)]
#[error(
    "the plugin used an object handle from an earlier call; a handle lasts only for the call that made it"
)]
pub struct StaleHandle;

/// Which of the call's objects a handle stands for.
enum Place {
    /// The object (0) or its previous state (1).
    Lent(usize),
    /// The n-th object the call's lookups found.
    Found(usize),
}

/// The envelope of a change: its type and origin. Everything else the
/// guest reads through the object handle, when it asks.
pub(super) fn event(change: &Change) -> wit::Event {
    wit::Event {
        event_type: event_type(change.kind),
        origin: match change.origin {
            Origin::Initial => wit::Origin::Initial,
            Origin::Watch => wit::Origin::Watch,
            Origin::Relist => wit::Origin::Relist,
        },
    }
}

fn event_type(kind: ChangeType) -> wit::EventType {
    match kind {
        ChangeType::Added => wit::EventType::Added,
        ChangeType::Modified => wit::EventType::Modified,
        ChangeType::Deleted => wit::EventType::Deleted,
    }
}

/// Puts the change's objects where the guest's handles reach them, and
/// returns the handles.
pub(super) fn lend(
    state: &mut GuestState,
    gvk: &Gvk,
    change: &Change,
) -> (Resource<ObjectHandle>, Option<Resource<ObjectHandle>>) {
    state.objects = [Some(change.object.clone()), change.old.clone()];
    // An instance sees one kind after another of the same; copied only
    // when it changes.
    if state.gvk != *gvk {
        state.gvk = gvk.clone();
    }
    let base = state.base;
    (
        Resource::new_borrow(base + OBJECT),
        change
            .old
            .as_ref()
            .map(|_| Resource::new_borrow(base + OLD_OBJECT)),
    )
}

/// Ends a call: forgets its objects and reader, and moves the base past
/// every handle the call made. Whether the instance has handed out so
/// many handles that it should be replaced ([`RETIRE_AFTER`]).
pub(super) fn end_call(state: &mut GuestState) -> bool {
    let made = FIRST_FOUND + state.found.len() as u32;
    state.base = state.base.saturating_add(made);
    state.objects = [None, None];
    state.found.clear();
    state.found_bytes = 0;
    state.cache = None;
    state.base >= RETIRE_AFTER
}

impl From<wit::Interest> for Interest {
    fn from(i: wit::Interest) -> Self {
        Interest::new(
            i.kinds
                .into_iter()
                .map(|k| (k.group, k.version, k.kind))
                .collect(),
            i.event_types
                .into_iter()
                .map(|t| match t {
                    wit::EventType::Added => ChangeType::Added,
                    wit::EventType::Modified => ChangeType::Modified,
                    wit::EventType::Deleted => ChangeType::Deleted,
                })
                .collect(),
        )
    }
}

impl GuestState {
    /// Where a handle of this call points; a handle of an earlier call
    /// traps.
    fn place(&self, handle: &Resource<ObjectHandle>) -> wasmtime::Result<Place> {
        let made = FIRST_FOUND as usize + self.found.len();
        match handle.rep().checked_sub(self.base) {
            Some(offset) if (offset as usize) < made => Ok(match offset {
                OBJECT | OLD_OBJECT => Place::Lent(offset as usize),
                found => Place::Found((found - FIRST_FOUND) as usize),
            }),
            _ => Err(wasmtime::Error::new(StaleHandle)),
        }
    }

    /// The object a handle stands for, while its call lasts, with its kind.
    fn object(
        &self,
        handle: &Resource<ObjectHandle>,
    ) -> wasmtime::Result<Option<(&Gvk, &StoredObject)>> {
        Ok(match self.place(handle)? {
            Place::Lent(i) => self.objects[i].as_deref().map(|o| (&self.gvk, o)),
            Place::Found(i) => self.found.get(i).map(|(gvk, o)| (gvk, &**o)),
        })
    }

    /// The object a handle stands for, to read more than its identity: a
    /// read of an object a lookup found is told to the call's reader.
    fn content(&self, handle: &Resource<ObjectHandle>) -> wasmtime::Result<Option<&StoredObject>> {
        let found = matches!(self.place(handle)?, Place::Found(_));
        let object = self.object(handle)?;
        if found && let (Some((gvk, object)), Some(reader)) = (object, &self.cache) {
            reader.read(gvk, object);
        }
        Ok(object.map(|(_, o)| o))
    }

    /// One metadata string of a handle's object.
    fn metadata(
        &self,
        handle: &Resource<ObjectHandle>,
        field: fn(&StoredObject) -> &str,
    ) -> wasmtime::Result<String> {
        Ok(self
            .object(handle)?
            .map(|(_, o)| field(o))
            .unwrap_or_default()
            .to_string())
    }

    /// Counts `found` against the call's share of the memory limit; refuses
    /// what would pass it, keeping nothing of it.
    fn admit(&mut self, found: &[Found]) -> Result<(), LookupLimitExceeded> {
        let cost: usize = found
            .iter()
            .map(|(_, object)| object.json_len() + FOUND_ENTRY_BYTES)
            .sum();
        let wanted = self.found_bytes.saturating_add(cost);
        let limit = self.limits.bytes();
        if wanted > limit {
            return Err(LookupLimitExceeded { wanted, limit });
        }
        self.found_bytes = wanted;
        Ok(())
    }

    /// Hands a found object to the guest.
    fn give(&mut self, found: Found) -> Resource<ObjectHandle> {
        let rep = self.base + FIRST_FOUND + self.found.len() as u32;
        self.found.push(found);
        Resource::new_own(rep)
    }
}

impl wit::HostObject for GuestState {
    fn gvk(&mut self, handle: Resource<ObjectHandle>) -> wasmtime::Result<wit::Gvk> {
        let gvk = match self.place(&handle)? {
            Place::Lent(_) => &self.gvk,
            Place::Found(i) => self.found.get(i).map_or(&self.gvk, |(gvk, _)| gvk),
        };
        Ok(wit::Gvk {
            group: gvk.group.clone(),
            version: gvk.version.clone(),
            kind: gvk.kind.clone(),
        })
    }

    fn namespace(&mut self, handle: Resource<ObjectHandle>) -> wasmtime::Result<String> {
        self.metadata(&handle, StoredObject::namespace)
    }

    fn name(&mut self, handle: Resource<ObjectHandle>) -> wasmtime::Result<String> {
        self.metadata(&handle, StoredObject::name)
    }

    fn uid(&mut self, handle: Resource<ObjectHandle>) -> wasmtime::Result<String> {
        self.metadata(&handle, StoredObject::uid)
    }

    fn resource_version(&mut self, handle: Resource<ObjectHandle>) -> wasmtime::Result<String> {
        Ok(self
            .content(&handle)?
            .map(StoredObject::resource_version)
            .unwrap_or_default()
            .to_string())
    }

    fn json(&mut self, handle: Resource<ObjectHandle>) -> wasmtime::Result<String> {
        Ok(self
            .content(&handle)?
            .map(StoredObject::json_string)
            .unwrap_or_default())
    }

    fn get(
        &mut self,
        handle: Resource<ObjectHandle>,
        path: Vec<String>,
    ) -> wasmtime::Result<Option<String>> {
        Ok(self
            .content(&handle)?
            .and_then(|o| o.get(&path))
            .map(|value| String::from_utf8_lossy(&value).into_owned()))
    }

    fn label(
        &mut self,
        handle: Resource<ObjectHandle>,
        key: String,
    ) -> wasmtime::Result<Option<String>> {
        Ok(self
            .content(&handle)?
            .and_then(|o| o.label(&key))
            .map(str::to_string))
    }

    fn labels(
        &mut self,
        handle: Resource<ObjectHandle>,
    ) -> wasmtime::Result<Vec<(String, String)>> {
        Ok(self
            .content(&handle)?
            .map(|o| {
                o.labels()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn annotation(
        &mut self,
        handle: Resource<ObjectHandle>,
        key: String,
    ) -> wasmtime::Result<Option<String>> {
        Ok(self.content(&handle)?.and_then(|o| o.annotation(&key)))
    }

    fn annotations(
        &mut self,
        handle: Resource<ObjectHandle>,
    ) -> wasmtime::Result<Vec<(String, String)>> {
        Ok(self
            .content(&handle)?
            .map(StoredObject::annotations)
            .unwrap_or_default())
    }

    fn drop(&mut self, _handle: Resource<ObjectHandle>) -> wasmtime::Result<()> {
        // Found objects stay in the store until the call ends; the
        // borrowed ones are never dropped here. A guest may drop a kept
        // handle after its call: that reads nothing, so it is no fault.
        Ok(())
    }
}

impl wit::Host for GuestState {}

impl log::Host for GuestState {
    fn log(&mut self, level: log::Level, message: String) {
        use log::Level;
        let plugin = &*self.plugin;
        match level {
            Level::Trace => tracing::trace!(plugin, "{message}"),
            Level::Debug => tracing::debug!(plugin, "{message}"),
            Level::Info => tracing::info!(plugin, "{message}"),
            Level::Warn => tracing::warn!(plugin, "{message}"),
            Level::Error => tracing::error!(plugin, "{message}"),
        }
    }
}

impl cache::Host for GuestState {
    fn get(
        &mut self,
        gvk: wit::Gvk,
        namespace: String,
        name: String,
    ) -> wasmtime::Result<Option<Resource<ObjectHandle>>> {
        let Some(reader) = &self.cache else {
            return Ok(None);
        };
        let found = reader.get(
            &Gvk::new(&gvk.group, &gvk.version, &gvk.kind),
            &namespace,
            &name,
        );
        let Some(found) = found else {
            return Ok(None);
        };
        self.admit(std::slice::from_ref(&found))
            .map_err(wasmtime::Error::new)?;
        Ok(Some(self.give(found)))
    }

    fn list(
        &mut self,
        gvk: wit::Gvk,
        namespace: String,
        label_selector: String,
    ) -> wasmtime::Result<Result<Vec<Resource<ObjectHandle>>, String>> {
        let Some(reader) = &self.cache else {
            return Ok(Ok(Vec::new()));
        };
        let found = match reader.list(
            &Gvk::new(&gvk.group, &gvk.version, &gvk.kind),
            &namespace,
            &label_selector,
        ) {
            Ok(found) => found,
            Err(e) => return Ok(Err(e)),
        };
        if let Err(e) = self.admit(&found) {
            return Ok(Err(e.to_string()));
        }
        Ok(Ok(found.into_iter().map(|f| self.give(f)).collect()))
    }

    fn owned_by(
        &mut self,
        gvk: wit::Gvk,
        owner_uid: String,
    ) -> wasmtime::Result<Vec<Resource<ObjectHandle>>> {
        let Some(reader) = &self.cache else {
            return Ok(Vec::new());
        };
        let found = reader.owned_by(&Gvk::new(&gvk.group, &gvk.version, &gvk.kind), &owner_uid);
        self.admit(&found).map_err(wasmtime::Error::new)?;
        Ok(found.into_iter().map(|f| self.give(f)).collect())
    }
}

/// Lends the analyzed object to the guest and sets the call's reader.
pub(super) fn lend_for_analysis(
    state: &mut GuestState,
    gvk: &Gvk,
    object: &std::sync::Arc<StoredObject>,
    reader: std::sync::Arc<dyn CacheReader>,
) -> Resource<ObjectHandle> {
    state.objects = [Some(object.clone()), None];
    if state.gvk != *gvk {
        state.gvk = gvk.clone();
    }
    state.cache = Some(reader);
    Resource::new_borrow(state.base + OBJECT)
}

impl From<WitRelationship> for Relationship {
    fn from(r: WitRelationship) -> Self {
        Relationship {
            relation: r.relation,
            outgoing: matches!(r.direction, WitDirection::Outgoing),
            gvk: Gvk::new(
                &r.target.gvk.group,
                &r.target.gvk.version,
                &r.target.gvk.kind,
            ),
            namespace: r.target.namespace,
            name: r.target.name,
            attributes: r.attributes,
        }
    }
}

impl outbound_http::Host for GuestState {
    fn send(&mut self, request: outbound_http::Request) -> Result<outbound_http::Response, String> {
        match &self.outbound {
            Some(outbound) => outbound.send(&self.plugin, request),
            None => Err("outbound HTTP is not granted to this plugin".into()),
        }
    }
}
