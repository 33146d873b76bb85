//! The Rust side of `wit/plugin.wit`: one generated module per world, all
//! sharing the `types` and `log` interfaces, plus how GRW's values cross
//! into the guest and back.

use super::guest::GuestState;
use super::interest::Interest;
use crate::gvk::Gvk;
use crate::store::{Change, ChangeType, StoredObject};

/// The `filter-plugin` world; owns the shared `types` and `log` interfaces.
pub(super) mod filter {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "filter-plugin",
    });
}

/// The `notifier-plugin` world.
pub(super) mod notifier {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "notifier-plugin",
        with: {
            "grw:plugin/types": crate::plugin::bindings::filter::grw::plugin::types,
            "grw:plugin/log": crate::plugin::bindings::filter::grw::plugin::log,
        },
    });
}

use filter::grw::plugin::log;
pub(super) use filter::grw::plugin::types as wit;

/// The WIT envelope of a change. Objects cross as JSON text: the stored
/// bytes are already JSON, so this is one copy each.
pub(super) fn event(gvk: &Gvk, change: &Change) -> wit::Event {
    let json = |o: &StoredObject| String::from_utf8_lossy(o.json()).into_owned();
    let object = &change.object;
    wit::Event {
        event_type: match change.kind {
            ChangeType::Added => wit::EventType::Added,
            ChangeType::Modified => wit::EventType::Modified,
            ChangeType::Deleted => wit::EventType::Deleted,
        },
        gvk: wit::Gvk {
            group: gvk.group.clone(),
            version: gvk.version.clone(),
            kind: gvk.kind.clone(),
        },
        namespace: object.namespace().to_string(),
        name: object.name().to_string(),
        uid: object.uid().to_string(),
        resource_version: object.resource_version().to_string(),
        labels: object
            .labels()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        object: json(object),
        old_object: change.old.as_deref().map(json),
    }
}

impl From<wit::Interest> for Interest {
    fn from(i: wit::Interest) -> Self {
        Interest {
            kinds: i
                .kinds
                .into_iter()
                .map(|k| (k.group, k.version, k.kind))
                .collect(),
            event_types: i
                .event_types
                .into_iter()
                .map(|t| match t {
                    wit::EventType::Added => "ADDED",
                    wit::EventType::Modified => "MODIFIED",
                    wit::EventType::Deleted => "DELETED",
                })
                .collect(),
        }
    }
}

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

impl wit::Host for GuestState {}
