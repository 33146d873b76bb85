//! Filter plugins: linking a component against the `filter-plugin` world
//! (`FilterPre`), instantiating it with its limits (`FilterInstance`), and
//! calling it.

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store};

use super::bindings::{self, filter::FilterPlugin, filter::FilterPluginPre};
use super::engine::deadline_ticks;
use super::guest::GuestState;
use super::{CallFailure, Interest, PluginError};
use crate::gvk::Gvk;
use crate::plugin::manifest::Limits;
use crate::store::Change;

/// A filter component linked against what GRW grants, ready to instantiate.
#[derive(Clone)]
pub struct FilterPre {
    pre: FilterPluginPre<GuestState>,
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
        FilterPlugin::add_to_linker::<GuestState, HasSelf<GuestState>>(&mut linker, |s| s)
            .map_err(|e| PluginError::Engine(format!("{e:#}")))?;
        let instance_pre = linker
            .instantiate_pre(component)
            .map_err(|e| PluginError::Link(format!("{e:#}")))?;
        let pre =
            FilterPluginPre::new(instance_pre).map_err(|e| PluginError::Link(format!("{e:#}")))?;
        Ok(FilterPre { pre })
    }

    /// A fresh instance with its own store and limits.
    pub fn instantiate(
        &self,
        plugin: &Arc<str>,
        limits: &Limits,
    ) -> Result<FilterInstance, PluginError> {
        let ticks = deadline_ticks(limits.timeout);
        let mut store = Store::new(
            self.pre.engine(),
            GuestState::new(plugin.clone(), limits.memory_bytes),
        );
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(ticks);
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| PluginError::Instantiate(format!("{e:#}")))?;
        Ok(FilterInstance {
            store,
            bindings,
            ticks,
        })
    }
}

/// One live instance of a filter.
pub struct FilterInstance {
    store: Store<GuestState>,
    bindings: FilterPlugin,
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
        let event = bindings::event(gvk, change);
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
