//! Contract `grw:plugin@0.2` (`wit/plugin.wit`), the current one: the
//! generated bindings of the filter, notifier and analyzer worlds, and what
//! the host implements of them: the `object` resource the guest reads the
//! call's objects through, `log`, `cache` (for analyzers, answered by the
//! call's [`CacheReader`]) and `outbound-http` (in [`super::outbound`]).
//!
//! An object crosses as a handle whose `rep` says which object of the call
//! it is: [`OBJECT`] and [`OLD_OBJECT`] are borrowed, and from
//! [`FIRST_FOUND`] on come the objects the call's cache lookups returned
//! (owned by the guest, which drops them). The store holds the objects
//! themselves for the call's duration ([`GuestState::objects`],
//! [`GuestState::found`]). So a call copies into the guest only the small
//! envelope, and each method copies only what it returns.

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

/// What the guest's `object` handles stand for: an index into
/// [`GuestState::objects`], never a value of this type.
pub struct ObjectHandle;

/// The `rep` of the handle on the call's object.
pub(super) const OBJECT: u32 = 0;
/// The `rep` of the handle on the previous state.
pub(super) const OLD_OBJECT: u32 = 1;
/// The `rep` of the first object a cache lookup returned; the next ones
/// follow.
pub(super) const FIRST_FOUND: u32 = 2;

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
    (
        Resource::new_borrow(OBJECT),
        change
            .old
            .as_ref()
            .map(|_| Resource::new_borrow(OLD_OBJECT)),
    )
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
    /// The object a handle stands for, while its call lasts.
    fn object(&self, handle: &Resource<ObjectHandle>) -> Option<&StoredObject> {
        match handle.rep() {
            rep @ (OBJECT | OLD_OBJECT) => self.objects[rep as usize].as_deref(),
            rep => self
                .found
                .get((rep - FIRST_FOUND) as usize)
                .map(|(_, o)| &**o),
        }
    }

    /// The object a handle stands for, to read more than its identity: a
    /// read of an object a lookup found is told to the call's reader.
    fn content(&self, handle: &Resource<ObjectHandle>) -> Option<&StoredObject> {
        if handle.rep() < FIRST_FOUND {
            return self.object(handle);
        }
        let (gvk, object) = self.found.get((handle.rep() - FIRST_FOUND) as usize)?;
        if let Some(reader) = &self.cache {
            reader.read(gvk, object);
        }
        Some(object)
    }

    /// One metadata string of a handle's object.
    fn metadata(
        &self,
        handle: &Resource<ObjectHandle>,
        field: fn(&StoredObject) -> &str,
    ) -> String {
        self.object(handle)
            .map(field)
            .unwrap_or_default()
            .to_string()
    }

    /// Hands a found object to the guest.
    fn give(&mut self, found: Found) -> Resource<ObjectHandle> {
        let rep = FIRST_FOUND + self.found.len() as u32;
        self.found.push(found);
        Resource::new_own(rep)
    }
}

impl wit::HostObject for GuestState {
    fn gvk(&mut self, handle: Resource<ObjectHandle>) -> wit::Gvk {
        let gvk = match handle.rep() {
            OBJECT | OLD_OBJECT => &self.gvk,
            rep => match self.found.get((rep - FIRST_FOUND) as usize) {
                Some((gvk, _)) => gvk,
                None => &self.gvk,
            },
        };
        wit::Gvk {
            group: gvk.group.clone(),
            version: gvk.version.clone(),
            kind: gvk.kind.clone(),
        }
    }

    fn namespace(&mut self, handle: Resource<ObjectHandle>) -> String {
        self.metadata(&handle, StoredObject::namespace)
    }

    fn name(&mut self, handle: Resource<ObjectHandle>) -> String {
        self.metadata(&handle, StoredObject::name)
    }

    fn uid(&mut self, handle: Resource<ObjectHandle>) -> String {
        self.metadata(&handle, StoredObject::uid)
    }

    fn resource_version(&mut self, handle: Resource<ObjectHandle>) -> String {
        self.content(&handle)
            .map(StoredObject::resource_version)
            .unwrap_or_default()
            .to_string()
    }

    fn json(&mut self, handle: Resource<ObjectHandle>) -> String {
        self.content(&handle)
            .map(|o| String::from_utf8_lossy(o.json()).into_owned())
            .unwrap_or_default()
    }

    fn get(&mut self, handle: Resource<ObjectHandle>, path: Vec<String>) -> Option<String> {
        let value = self.content(&handle)?.get(&path)?;
        Some(String::from_utf8_lossy(value).into_owned())
    }

    fn label(&mut self, handle: Resource<ObjectHandle>, key: String) -> Option<String> {
        self.content(&handle)?.label(&key).map(str::to_string)
    }

    fn labels(&mut self, handle: Resource<ObjectHandle>) -> Vec<(String, String)> {
        self.content(&handle)
            .map(|o| {
                o.labels()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn annotation(&mut self, handle: Resource<ObjectHandle>, key: String) -> Option<String> {
        self.content(&handle)?.annotation(&key)
    }

    fn annotations(&mut self, handle: Resource<ObjectHandle>) -> Vec<(String, String)> {
        self.content(&handle)
            .map(StoredObject::annotations)
            .unwrap_or_default()
    }

    fn drop(&mut self, _handle: Resource<ObjectHandle>) -> wasmtime::Result<()> {
        // Found objects stay in the store until the call ends; the
        // borrowed ones are never dropped here.
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
    ) -> Option<Resource<ObjectHandle>> {
        let found = self.cache.as_ref()?.get(
            &Gvk::new(&gvk.group, &gvk.version, &gvk.kind),
            &namespace,
            &name,
        )?;
        Some(self.give(found))
    }

    fn list(
        &mut self,
        gvk: wit::Gvk,
        namespace: String,
        label_selector: String,
    ) -> Result<Vec<Resource<ObjectHandle>>, String> {
        let Some(reader) = &self.cache else {
            return Ok(Vec::new());
        };
        let found = reader.list(
            &Gvk::new(&gvk.group, &gvk.version, &gvk.kind),
            &namespace,
            &label_selector,
        )?;
        Ok(found.into_iter().map(|f| self.give(f)).collect())
    }

    fn owned_by(&mut self, gvk: wit::Gvk, owner_uid: String) -> Vec<Resource<ObjectHandle>> {
        let Some(reader) = &self.cache else {
            return Vec::new();
        };
        let found = reader.owned_by(&Gvk::new(&gvk.group, &gvk.version, &gvk.kind), &owner_uid);
        found.into_iter().map(|f| self.give(f)).collect()
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
    Resource::new_borrow(OBJECT)
}

/// Forgets the call's objects and reader.
pub(super) fn end_analysis(state: &mut GuestState) {
    state.objects = [None, None];
    state.found.clear();
    state.cache = None;
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
