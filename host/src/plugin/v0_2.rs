//! Contract `grw:plugin@0.2` (`wit/plugin.wit`), the current one: the
//! generated bindings of the filter and notifier worlds, and what the host
//! implements of them: the `object` resource the guest reads the call's
//! objects through, `log`, and `outbound-http` (in [`super::outbound`]).
//!
//! An object crosses as a borrowed handle whose `rep` says which object of
//! the call it is ([`OBJECT`], [`OLD_OBJECT`]); the store holds the objects
//! themselves for the call's duration ([`GuestState::objects`]). So a call
//! copies into the guest only the small envelope, and each method copies
//! only what it returns.

use wasmtime::component::Resource;

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
        self.objects.get(handle.rep() as usize)?.as_deref()
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
}

impl wit::HostObject for GuestState {
    fn gvk(&mut self, _handle: Resource<ObjectHandle>) -> wit::Gvk {
        wit::Gvk {
            group: self.gvk.group.clone(),
            version: self.gvk.version.clone(),
            kind: self.gvk.kind.clone(),
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
        self.metadata(&handle, StoredObject::resource_version)
    }

    fn json(&mut self, handle: Resource<ObjectHandle>) -> String {
        self.object(&handle)
            .map(|o| String::from_utf8_lossy(o.json()).into_owned())
            .unwrap_or_default()
    }

    fn get(&mut self, handle: Resource<ObjectHandle>, path: Vec<String>) -> Option<String> {
        let value = self.object(&handle)?.get(&path)?;
        Some(String::from_utf8_lossy(value).into_owned())
    }

    fn label(&mut self, handle: Resource<ObjectHandle>, key: String) -> Option<String> {
        self.object(&handle)?.label(&key).map(str::to_string)
    }

    fn labels(&mut self, handle: Resource<ObjectHandle>) -> Vec<(String, String)> {
        self.object(&handle)
            .map(|o| {
                o.labels()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn annotation(&mut self, handle: Resource<ObjectHandle>, key: String) -> Option<String> {
        self.object(&handle)?.annotation(&key)
    }

    fn annotations(&mut self, handle: Resource<ObjectHandle>) -> Vec<(String, String)> {
        self.object(&handle)
            .map(StoredObject::annotations)
            .unwrap_or_default()
    }

    fn drop(&mut self, _handle: Resource<ObjectHandle>) -> wasmtime::Result<()> {
        // The host lends only borrowed handles, which are never dropped here.
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

impl outbound_http::Host for GuestState {
    fn send(&mut self, request: outbound_http::Request) -> Result<outbound_http::Response, String> {
        match &self.outbound {
            Some(outbound) => outbound.send(&self.plugin, request),
            None => Err("outbound HTTP is not granted to this plugin".into()),
        }
    }
}
