//! Notifier plugins: linking a component against the `notifier-plugin`
//! world (`NotifierPre`), instantiating it with its limits and its outbound
//! HTTP grant (`NotifierInstance`), and calling it.
//!
//! Time budget of one call: `limits.timeoutMs` (10 s by default for
//! notifiers, see [`super::manifest::NOTIFIER_TIMEOUT`]) is the wall-clock
//! time a `deliver` may take, its HTTP requests included: each request gets
//! what is left of it as its timeout. The epoch deadline, which traps a
//! guest that computes too long, is set [`AFTER_BUDGET`] later, so a guest
//! whose request used up the budget still has time to turn the host's
//! timeout error into its own `retry` — a slow receiver shows up as the
//! plugin's answer, not as a trap of the plugin.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store};

use super::bindings::notifier::exports::grw::plugin::notifier::DeliveryError;
use super::bindings::notifier::{NotifierPlugin, NotifierPluginPre};
use super::bindings::{self};
use super::engine::deadline_ticks;
use super::guest::GuestState;
use super::outbound::{Outbound, OutboundHttp};
use super::{CallFailure, Interest, PluginError};
use crate::gvk::Gvk;
use crate::notify::SendError;
use crate::plugin::manifest::Limits;
use crate::store::Change;

/// Guest time after the call's budget: enough to build a result from the
/// host's answer (microseconds of work), with room for a 10 ms epoch tick.
pub const AFTER_BUDGET: Duration = Duration::from_millis(250);

/// A notifier component linked against what GRW grants, ready to instantiate.
#[derive(Clone)]
pub struct NotifierPre {
    pre: NotifierPluginPre<GuestState>,
    http: Arc<OutboundHttp>,
}

impl NotifierPre {
    /// Links a compiled component; its instances send HTTP through `http`.
    /// Fails, naming the import, when the component needs something GRW
    /// does not grant.
    pub(super) fn new(
        engine: &Engine,
        component: &wasmtime::component::Component,
        http: OutboundHttp,
    ) -> Result<Self, PluginError> {
        let mut linker = Linker::<GuestState>::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| PluginError::Engine(format!("{e:#}")))?;
        NotifierPlugin::add_to_linker::<GuestState, HasSelf<GuestState>>(&mut linker, |s| s)
            .map_err(|e| PluginError::Engine(format!("{e:#}")))?;
        let instance_pre = linker
            .instantiate_pre(component)
            .map_err(|e| PluginError::Link(format!("{e:#}")))?;
        let pre = NotifierPluginPre::new(instance_pre)
            .map_err(|e| PluginError::Link(format!("{e:#}")))?;
        Ok(NotifierPre {
            pre,
            http: Arc::new(http),
        })
    }

    /// A fresh instance with its own store, limits and HTTP grant.
    pub fn instantiate(
        &self,
        plugin: &Arc<str>,
        limits: &Limits,
    ) -> Result<NotifierInstance, PluginError> {
        let mut state = GuestState::new(plugin.clone(), limits.memory_bytes);
        state.outbound = Some(Outbound::new(self.http.clone()));
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(deadline_ticks(limits.timeout + AFTER_BUDGET));
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| PluginError::Instantiate(format!("{e:#}")))?;
        Ok(NotifierInstance {
            store,
            bindings,
            budget: limits.timeout,
        })
    }
}

/// One live instance of a notifier.
pub struct NotifierInstance {
    store: Store<GuestState>,
    bindings: NotifierPlugin,
    budget: Duration,
}

impl NotifierInstance {
    /// Starts a call: its HTTP budget, and the guest's deadline after it.
    fn start_call(&mut self) {
        let now = Instant::now();
        if let Some(outbound) = &mut self.store.data_mut().outbound {
            outbound.deadline = now + self.budget;
        }
        self.store
            .set_epoch_deadline(deadline_ticks(self.budget + AFTER_BUDGET));
    }

    /// Calls `init` with the configuration.
    pub fn init(&mut self, config: &str) -> Result<Interest, PluginError> {
        self.start_call();
        match self
            .bindings
            .grw_plugin_notifier()
            .call_init(&mut self.store, config)
        {
            Ok(Ok(interest)) => Ok(interest.into()),
            Ok(Err(message)) => Err(PluginError::ConfigRejected(message)),
            Err(e) => Err(PluginError::Init(CallFailure::classify(&e).describe(&e))),
        }
    }

    /// Calls `deliver` on one change of a `gvk` object. The outer error is
    /// a failed call (trap, timeout, memory); the inner one is the plugin's
    /// own answer: `retry` becomes [`SendError::Retry`], `give-up`
    /// [`SendError::Reject`].
    pub fn deliver(
        &mut self,
        gvk: &Gvk,
        change: &Change,
    ) -> Result<Result<(), SendError>, (CallFailure, String)> {
        let event = bindings::event(gvk, change);
        self.start_call();
        let answer = self
            .bindings
            .grw_plugin_notifier()
            .call_deliver(&mut self.store, &event)
            .map_err(|e| {
                let failure = CallFailure::classify(&e);
                (failure, failure.describe(&e))
            })?;
        Ok(answer.map_err(|e| match e {
            DeliveryError::Retry(reason) => SendError::retry(reason),
            DeliveryError::GiveUp(reason) => SendError::Reject(reason),
        }))
    }
}
