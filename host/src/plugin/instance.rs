//! Linking a component against what GRW grants ([`Linked`]), and one live
//! instance of it ([`Instance`]): its store, limits and the calls GRW
//! makes, in the contract version the component was built against.
//!
//! Time budget of one call: a filter's call must finish within
//! `limits.timeoutMs`, enforced by the epoch deadline. A notifier's
//! `limits.timeoutMs` (10 s by default, see [`super::NOTIFIER_TIMEOUT`]) is
//! the wall-clock time a `deliver` may take, its HTTP requests included:
//! each request gets what is left of it as its timeout. Its epoch deadline
//! is set [`AFTER_BUDGET`] later, so a guest whose request used up the
//! budget still has time to turn the host's timeout error into its own
//! `retry`: a slow receiver shows up as the plugin's answer, not as a trap.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, InstancePre, Linker};
use wasmtime::{Engine, Store};

use super::analysis::{CacheReader, Relationship};
use super::engine::deadline_ticks;
use super::guest::GuestState;
use super::loaded::DeliveryError;
use super::manifest::Limits;
use super::outbound::{Outbound, OutboundHttp};
use super::{CallError, Contract, Interest, PluginError, PluginKind, v0_1, v0_2};
use crate::gvk::Gvk;
use crate::store::{Change, StoredObject};

/// The least time instantiating an instance and its `init` get, whatever
/// `limits.timeoutMs` says: they run once per instance, a Python or
/// JavaScript component's take over ten milliseconds, and a busy machine or a
/// CPU-throttled container can stretch that past a filter's 100 ms without
/// anything being wrong with the plugin.
pub const INIT_TIMEOUT: Duration = Duration::from_secs(2);

/// The epoch deadline of making an instance and of its `init`: a call's
/// (`ticks`), or [`INIT_TIMEOUT`]'s if that is later.
fn init_ticks(ticks: u64) -> u64 {
    ticks.max(deadline_ticks(INIT_TIMEOUT))
}

/// Guest time after a notifier's budget: enough to build a result from the
/// host's answer (microseconds of work), with room for a 10 ms epoch tick.
pub const AFTER_BUDGET: Duration = Duration::from_millis(250);

/// A component linked against what GRW grants, ready to instantiate.
pub(super) struct Linked {
    pre: Pre,
    /// Outbound HTTP, for notifiers.
    http: Option<Arc<OutboundHttp>>,
}

/// The worlds GRW links components against: one row per plugin kind and
/// contract version, with its generated bindings. Everything that differs
/// by world (the linker's host functions, the pre-instantiated component,
/// the live exports, `init`) is written here once; calls that exist in
/// some worlds only (`decide`, `deliver`, `analyze`) match on [`Exports`].
macro_rules! worlds {
    ($($world:ident => $bindings:ident::$iface:ident::{$plugin:ident, $pre:ident, $exports:ident};)*) => {
        /// A kind of plugin in one contract version.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(super) enum World {
            $($world,)*
        }

        impl World {
            const ALL: [World; [$(World::$world),*].len()] = [$(World::$world),*];

            /// Adds the world's imports (GRW's host functions) to `linker`.
            fn add_to_linker(self, linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
                match self {
                    $(World::$world => $bindings::$iface::$plugin::add_to_linker::<_, HasSelf<GuestState>>(
                        linker,
                        |s| s,
                    ),)*
                }
            }

            /// Checks that `pre` has the world's exports.
            fn pre(self, pre: InstancePre<GuestState>) -> wasmtime::Result<Pre> {
                Ok(match self {
                    $(World::$world => Pre::$world($bindings::$iface::$pre::new(pre)?),)*
                })
            }
        }

        /// A component linked in its world, not yet instantiated.
        enum Pre {
            $($world($bindings::$iface::$pre<GuestState>),)*
        }

        impl Pre {
            fn engine(&self) -> &Engine {
                match self {
                    $(Pre::$world(p) => p.engine(),)*
                }
            }

            fn instantiate(&self, store: &mut Store<GuestState>) -> wasmtime::Result<Exports> {
                Ok(match self {
                    $(Pre::$world(p) => Exports::$world(p.instantiate(store)?),)*
                })
            }
        }

        /// The exports of a live instance, by world.
        enum Exports {
            $($world($bindings::$iface::$plugin),)*
        }

        impl Exports {
            /// Calls the world's `init`.
            fn init(
                &self,
                store: &mut Store<GuestState>,
                config: &str,
            ) -> wasmtime::Result<Result<Interest, String>> {
                match self {
                    $(Exports::$world(e) => e
                        .$exports()
                        .call_init(store, config)
                        .map(|r| r.map(Interest::from)),)*
                }
            }
        }
    };
}

worlds! {
    Filter => v0_2::filter::{FilterPlugin, FilterPluginPre, grw_plugin_filter};
    Notifier => v0_2::notifier::{NotifierPlugin, NotifierPluginPre, grw_plugin_notifier};
    Analyzer => v0_2::analyzer::{AnalyzerPlugin, AnalyzerPluginPre, grw_plugin_analyzer};
    Filter01 => v0_1::filter::{FilterPlugin, FilterPluginPre, grw_plugin_filter};
    Notifier01 => v0_1::notifier::{NotifierPlugin, NotifierPluginPre, grw_plugin_notifier};
}

impl World {
    /// The world a component of `kind` built against `contract` is linked
    /// in. Analyzers exist from contract 0.2 on.
    pub(super) fn of(kind: PluginKind, contract: Contract) -> Result<World, PluginError> {
        Ok(match (kind, contract) {
            (PluginKind::Filter, Contract::V0_2) => World::Filter,
            (PluginKind::Notifier, Contract::V0_2) => World::Notifier,
            (PluginKind::Analyzer, Contract::V0_2) => World::Analyzer,
            (PluginKind::Filter, Contract::V0_1) => World::Filter01,
            (PluginKind::Notifier, Contract::V0_1) => World::Notifier01,
            (PluginKind::Analyzer, Contract::V0_1) => {
                return Err(PluginError::OldAnalyzer("0.1".into()));
            }
        })
    }
}

/// One linker per world, made once per engine: linking a component then
/// only resolves its imports against host functions already defined.
pub(super) struct Linkers([Linker<GuestState>; World::ALL.len()]);

impl Linkers {
    pub(super) fn new(engine: &Engine) -> Result<Linkers, PluginError> {
        let engine_error = |e| PluginError::Engine(PluginError::source_of(e));
        let mut made = Vec::with_capacity(World::ALL.len());
        for world in World::ALL {
            let mut linker = Linker::<GuestState>::new(engine);
            wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(engine_error)?;
            world.add_to_linker(&mut linker).map_err(engine_error)?;
            made.push(linker);
        }
        let Ok(linkers) = made.try_into() else {
            unreachable!("one linker per world");
        };
        Ok(Linkers(linkers))
    }

    fn get(&self, world: World) -> &Linker<GuestState> {
        &self.0[world as usize]
    }
}

impl Linked {
    /// Links a compiled component in `world` with the engine's linker.
    /// `http` is a notifier's outbound HTTP grant. The caller has checked
    /// its imports ([`super::contract::check_imports`]); linking can still
    /// fail on a mismatched signature.
    pub(super) fn new(
        linkers: &Linkers,
        component: &Component,
        world: World,
        http: Option<OutboundHttp>,
    ) -> Result<Linked, PluginError> {
        let link_error = |e| PluginError::Link(PluginError::source_of(e));
        let pre = linkers
            .get(world)
            .instantiate_pre(component)
            .map_err(link_error)?;
        Ok(Linked {
            pre: world.pre(pre).map_err(link_error)?,
            http: http.map(Arc::new),
        })
    }

    /// A fresh instance with its own store, limits and grants, not yet
    /// initialized.
    pub(super) fn instantiate(
        &self,
        plugin: &Arc<str>,
        limits: &Limits,
    ) -> Result<Instance, PluginError> {
        let mut state = GuestState::new(plugin.clone(), limits.memory_bytes);
        state.outbound = self.http.clone().map(Outbound::new);
        let notifier = state.outbound.is_some();
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        let ticks = if notifier {
            deadline_ticks(limits.timeout + AFTER_BUDGET)
        } else {
            deadline_ticks(limits.timeout)
        };
        store.set_epoch_deadline(init_ticks(ticks));
        let exports = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| PluginError::Instantiate(CallError::new(e)))?;
        Ok(Instance {
            store,
            exports,
            ticks,
            budget: limits.timeout,
            worn_out: false,
        })
    }
}

/// One live instance.
pub(super) struct Instance {
    store: Store<GuestState>,
    exports: Exports,
    /// The epoch deadline of one call, in ticks.
    ticks: u64,
    /// A notifier's wall-clock budget for one call, requests included.
    budget: Duration,
    /// It has handed out so many object handles that it is to be replaced
    /// (see `v0_2::RETIRE_AFTER`).
    worn_out: bool,
}

impl Instance {
    /// Whether this instance is to be replaced by a fresh one rather than
    /// called again.
    pub(super) fn worn_out(&self) -> bool {
        self.worn_out
    }

    /// Starts a call: its deadline, and a notifier's HTTP budget.
    fn start_call(&mut self) {
        self.store.set_epoch_deadline(self.ticks);
        if let Some(outbound) = &mut self.store.data_mut().outbound {
            outbound.deadline = Instant::now() + self.budget;
        }
    }

    /// Calls `init` with the configuration, within at least [`INIT_TIMEOUT`].
    pub(super) fn init(&mut self, config: &str) -> Result<Interest, PluginError> {
        self.start_call();
        self.store.set_epoch_deadline(init_ticks(self.ticks));
        let answer = self.exports.init(&mut self.store, config);
        match answer {
            Ok(Ok(interest)) => Ok(interest),
            Ok(Err(message)) => Err(PluginError::ConfigRejected(message)),
            Err(e) => Err(PluginError::Init(CallError::new(e))),
        }
    }

    /// Calls `decide` on one change of a `gvk` object; `None` when this
    /// instance is no filter.
    pub(super) fn decide(&mut self, gvk: &Gvk, change: &Change) -> Option<Result<bool, CallError>> {
        self.start_call();
        let store = &mut self.store;
        let answer = match &self.exports {
            Exports::Filter(e) => {
                let event = v0_2::event(change);
                let (object, old) = v0_2::lend(store.data_mut(), gvk, change);
                let answer = e
                    .grw_plugin_filter()
                    .call_decide(&mut *store, event, object, old);
                self.worn_out |= v0_2::end_call(store.data_mut());
                answer
            }
            Exports::Filter01(e) => {
                let event = v0_1::event(gvk, change);
                e.grw_plugin_filter().call_decide(store, &event)
            }
            Exports::Notifier(_) | Exports::Notifier01(_) | Exports::Analyzer(_) => return None,
        };
        Some(answer.map_err(CallError::new))
    }

    /// Calls `deliver` on one change of a `gvk` object; `None` when this
    /// instance is no notifier. The outer error is a failed call (trap,
    /// timeout, memory); the inner one the plugin's own answer.
    pub(super) fn deliver(
        &mut self,
        gvk: &Gvk,
        change: &Change,
    ) -> Option<Result<Result<(), DeliveryError>, CallError>> {
        self.start_call();
        let store = &mut self.store;
        let answer = match &self.exports {
            Exports::Notifier(e) => {
                let event = v0_2::event(change);
                let (object, old) = v0_2::lend(store.data_mut(), gvk, change);
                let answer = e
                    .grw_plugin_notifier()
                    .call_deliver(&mut *store, event, object, old);
                self.worn_out |= v0_2::end_call(store.data_mut());
                answer.map(|r| {
                    r.map_err(|e| match e {
                        v0_2::WitDeliveryError::Retry(reason) => DeliveryError::retry(reason),
                        v0_2::WitDeliveryError::GiveUp(reason) => DeliveryError::GiveUp(reason),
                    })
                })
            }
            Exports::Notifier01(e) => {
                let event = v0_1::event(gvk, change);
                e.grw_plugin_notifier()
                    .call_deliver(store, &event)
                    .map(|r| {
                        r.map_err(|e| match e {
                            v0_1::WitDeliveryError::Retry(reason) => DeliveryError::retry(reason),
                            v0_1::WitDeliveryError::GiveUp(reason) => DeliveryError::GiveUp(reason),
                        })
                    })
            }
            Exports::Filter(_) | Exports::Filter01(_) | Exports::Analyzer(_) => return None,
        };
        Some(answer.map_err(CallError::new))
    }

    /// Calls `analyze` on a `gvk` object, its cache lookups answered by
    /// `reader`; `None` when this instance is no analyzer.
    pub(super) fn analyze(
        &mut self,
        gvk: &Gvk,
        object: &Arc<StoredObject>,
        reader: Arc<dyn CacheReader>,
    ) -> Option<Result<Vec<Relationship>, CallError>> {
        if !matches!(self.exports, Exports::Analyzer(_)) {
            return None;
        }
        self.start_call();
        let Exports::Analyzer(e) = &self.exports else {
            return None;
        };
        let store = &mut self.store;
        let handle = v0_2::lend_for_analysis(store.data_mut(), gvk, object, reader);
        let answer = e.grw_plugin_analyzer().call_analyze(&mut *store, handle);
        self.worn_out |= v0_2::end_call(store.data_mut());
        Some(
            answer
                .map(|found| found.into_iter().map(Relationship::from).collect())
                .map_err(CallError::new),
        )
    }
}
