//! Filter plugins: linking a component against the `filter-plugin` world
//! (`FilterPre`), instantiating it with its limits (`FilterInstance`), and
//! calling it.

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store};

use super::guest::GuestState;
use super::{CallFailure, PluginError};
use crate::gvk::Gvk;
use crate::plugin::manifest::Limits;
use crate::store::{Change, ChangeType};

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "filter-plugin",
    });
}

use bindings::grw::plugin::types as wit;

/// What a filter declared at `init`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Interest {
    /// `(group, version, kind)` patterns, `None` parts match anything; empty = all kinds.
    pub kinds: Vec<(Option<String>, Option<String>, Option<String>)>,
    /// `ADDED`/`MODIFIED`/`DELETED`; empty = all types.
    pub event_types: Vec<&'static str>,
}

impl Interest {
    /// Whether an event of this kind and type is of interest.
    pub fn wants(&self, gvk: &Gvk, kind: ChangeType) -> bool {
        let part = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        (self.kinds.is_empty()
            || self.kinds.iter().any(|(g, v, k)| {
                part(
                    &g.as_ref()
                        .map(|g| crate::gvk::normalize_group(g).to_string()),
                    &gvk.group,
                ) && part(v, &gvk.version)
                    && part(k, &gvk.kind)
            }))
            && (self.event_types.is_empty() || self.event_types.contains(&kind.as_str()))
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

/// A filter component linked against what GRW grants, ready to instantiate.
#[derive(Clone)]
pub struct FilterPre {
    pre: bindings::FilterPluginPre<GuestState>,
}

impl FilterPre {
    /// Links a compiled component. Fails, naming the import, when the
    /// component needs something GRW does not grant.
    pub fn new(
        engine: &Engine,
        component: &wasmtime::component::Component,
    ) -> Result<Self, PluginError> {
        let mut linker = Linker::<GuestState>::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| PluginError::Engine(format!("{e:#}")))?;
        bindings::FilterPlugin::add_to_linker::<GuestState, HasSelf<GuestState>>(
            &mut linker,
            |s| s,
        )
        .map_err(|e| PluginError::Engine(format!("{e:#}")))?;
        let instance_pre = linker
            .instantiate_pre(component)
            .map_err(|e| PluginError::Link(format!("{e:#}")))?;
        let pre = bindings::FilterPluginPre::new(instance_pre)
            .map_err(|e| PluginError::Link(format!("{e:#}")))?;
        Ok(FilterPre { pre })
    }

    /// A fresh instance with its own store and limits.
    pub fn instantiate(
        &self,
        plugin: &Arc<str>,
        limits: &Limits,
    ) -> Result<FilterInstance, PluginError> {
        let mut store = Store::new(
            self.pre.engine(),
            GuestState::new(plugin.clone(), limits.memory_bytes),
        );
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(deadline_ticks(limits));
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| PluginError::Instantiate(format!("{e:#}")))?;
        Ok(FilterInstance {
            store,
            bindings,
            ticks: deadline_ticks(limits),
        })
    }
}

fn deadline_ticks(limits: &Limits) -> u64 {
    (limits.timeout.as_millis() / super::engine::EPOCH_TICK.as_millis()).max(1) as u64 + 1
}

/// One live instance of a filter.
pub struct FilterInstance {
    store: Store<GuestState>,
    bindings: bindings::FilterPlugin,
    ticks: u64,
}

impl FilterInstance {
    /// Calls `init` with the configuration.
    pub fn init(&mut self, config: &str) -> Result<Interest, PluginError> {
        self.store.set_epoch_deadline(self.ticks);
        match self
            .bindings
            .grw_plugin_filter()
            .call_init(&mut self.store, config)
        {
            Ok(Ok(interest)) => Ok(interest.into()),
            Ok(Err(message)) => Err(PluginError::ConfigRejected(message)),
            Err(e) => Err(PluginError::Init(CallFailure::classify(&e).describe(&e))),
        }
    }

    /// Calls `decide` on one change of a `gvk` object.
    pub fn decide(&mut self, gvk: &Gvk, change: &Change) -> Result<bool, (CallFailure, String)> {
        let event = event(gvk, change);
        self.store.set_epoch_deadline(self.ticks);
        self.bindings
            .grw_plugin_filter()
            .call_decide(&mut self.store, &event)
            .map_err(|e| {
                let failure = CallFailure::classify(&e);
                (failure, failure.describe(&e))
            })
    }
}

/// The WIT envelope of a change. Objects cross as JSON text: the stored
/// bytes are already JSON, so this is one copy each.
fn event(gvk: &Gvk, change: &Change) -> wit::Event {
    let json = |o: &crate::store::StoredObject| String::from_utf8_lossy(o.json()).into_owned();
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

impl bindings::grw::plugin::log::Host for GuestState {
    fn log(&mut self, level: bindings::grw::plugin::log::Level, message: String) {
        use bindings::grw::plugin::log::Level;
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

impl bindings::grw::plugin::types::Host for GuestState {}
