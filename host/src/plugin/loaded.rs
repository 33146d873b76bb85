//! A loaded plugin: its linked code, its live instance, and the calls the
//! rest of GRW makes (`decide` for filters, `deliver` for notifiers), each
//! within its limits, counted, and behind a crash-loop breaker.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::allowed_hosts::AllowedHosts;
use super::filter::{FilterInstance, FilterPre};
use super::notifier::{NotifierInstance, NotifierPre};
use super::outbound::OutboundHttp;
use super::{
    CallFailure, FailMode, Interest, Manifest, PluginEngine, PluginError, PluginKind, Stats,
    exported_kind,
};
use crate::gvk::Gvk;
use crate::metrics::Metrics;
use crate::notify::SendError;
use crate::store::Change;

/// A loaded plugin: one version of one `.wasm` file with its manifest.
///
/// Calls to one plugin take turns: they share its one instance. A
/// notifier's call includes its HTTP requests, so a slow receiver delays
/// the plugin's other deliveries by up to `limits.timeoutMs`.
pub struct Plugin {
    /// File name without `.wasm`.
    pub name: Arc<str>,
    /// Filter, notifier or analyzer.
    pub kind: PluginKind,
    /// The WIT version its export names.
    pub wit_version: String,
    /// SHA-256 of the `.wasm` file.
    pub hash: String,
    /// Its manifest, defaults applied.
    pub manifest: Manifest,
    /// What it declared at `init`.
    pub interest: Interest,
    /// Whether the compiled code came from the artifact cache.
    pub from_cache: bool,
    /// How long loading took (compile or cache load, link, instantiate, init).
    pub load_time: Duration,
    pre: Pre,
    /// The live instance; `None` after a failed call, until the next one.
    instance: Mutex<Option<Instance>>,
    /// Apart from the instance, so that status reads never wait for a call.
    health: Mutex<Health>,
    stats: Stats,
    metrics: Arc<Metrics>,
}

/// Linked code, by kind.
enum Pre {
    Filter(FilterPre),
    Notifier(NotifierPre),
}

/// A live instance, by kind.
enum Instance {
    Filter(FilterInstance),
    Notifier(NotifierInstance),
}

impl Pre {
    /// A fresh instance, initialized with the manifest's configuration.
    fn start(
        &self,
        name: &Arc<str>,
        manifest: &Manifest,
    ) -> Result<(Instance, Interest), PluginError> {
        let config = manifest.config_text();
        match self {
            Pre::Filter(pre) => {
                let mut instance = pre.instantiate(name, &manifest.limits)?;
                let interest = instance.init(&config)?;
                Ok((Instance::Filter(instance), interest))
            }
            Pre::Notifier(pre) => {
                let mut instance = pre.instantiate(name, &manifest.limits)?;
                let interest = instance.init(&config)?;
                Ok((Instance::Notifier(instance), interest))
            }
        }
    }
}

/// Recent failures and the crash-loop breaker.
#[derive(Default)]
struct Health {
    recent_failures: VecDeque<Instant>,
    open_until: Option<Instant>,
    last_error: Option<String>,
}

/// Why a call produced no answer.
enum Unanswered {
    /// The breaker is open for this much longer.
    Resting(Duration),
    /// The call failed (trap, timeout, memory); the description.
    Failed(String),
}

impl Plugin {
    /// Compiles (or loads from cache), checks the world and version, links,
    /// instantiates and initializes a plugin. A notifier may reach the
    /// hosts that both its manifest (`allowedHosts`) and `operator_hosts`
    /// (GRW's `pluginAllowedHosts`) allow.
    pub fn load(
        engine: &PluginEngine,
        name: &str,
        wasm: &[u8],
        mut manifest: Manifest,
        operator_hosts: &AllowedHosts,
        metrics: Arc<Metrics>,
    ) -> Result<Plugin, PluginError> {
        let started = Instant::now();
        let compiled = engine.compile(wasm)?;
        let (kind, wit_version) = exported_kind(engine, &compiled.component)?;
        if let Some(expected) = manifest.kind
            && expected != kind
        {
            return Err(PluginError::WrongWorld(format!(
                "the manifest says `{}` but the component is a {} plugin (it exports {}@{wit_version})",
                expected.as_str(),
                kind.as_str(),
                kind.interface()
            )));
        }
        manifest.apply_kind_defaults(kind);
        if kind != PluginKind::Notifier && !manifest.allowed_hosts.is_empty() {
            tracing::warn!(
                plugin = name,
                kind = kind.as_str(),
                "the manifest's allowedHosts is ignored: only notifier plugins send requests"
            );
        }
        let pre = match kind {
            PluginKind::Filter => {
                Pre::Filter(FilterPre::new(engine.engine(), &compiled.component)?)
            }
            PluginKind::Notifier => {
                let http =
                    OutboundHttp::new(manifest.allowed_hosts.clone(), operator_hosts.clone())?;
                Pre::Notifier(NotifierPre::new(
                    engine.engine(),
                    &compiled.component,
                    http,
                )?)
            }
            PluginKind::Analyzer => {
                return Err(PluginError::WrongWorld(
                    "analyzer plugins are not supported by this GRW yet; only filter and notifier plugins are".into(),
                ));
            }
        };
        let name: Arc<str> = name.into();
        let (instance, interest) = pre.start(&name, &manifest)?;
        Ok(Plugin {
            name,
            kind,
            wit_version,
            hash: compiled.hash,
            interest,
            from_cache: compiled.from_cache,
            load_time: started.elapsed(),
            pre,
            instance: Mutex::new(Some(instance)),
            health: Mutex::new(Health::default()),
            stats: Stats::default(),
            metrics,
            manifest,
        })
    }

    /// Whether a change passes this filter. A filter's interest is what it
    /// wants to let through: changes outside it do not pass, without a call.
    /// When the plugin cannot answer (trap, timeout, memory, open breaker),
    /// its fail mode decides; so it does when this plugin is no filter.
    pub fn decide(&self, gvk: &Gvk, change: &Change) -> bool {
        let pass_on_failure = self.manifest.fail_mode == FailMode::Open;
        if self.kind != PluginKind::Filter {
            tracing::warn!(plugin = %self.name, kind = self.kind.as_str(), "asked to filter, but this is no filter plugin; its fail mode decides");
            return pass_on_failure;
        }
        if !self.interest.wants(gvk, change.kind) {
            return false;
        }
        let answer = self.call(change, |instance| match instance {
            Instance::Filter(filter) => filter.decide(gvk, change),
            Instance::Notifier(_) => Err((CallFailure::Trap, "not a filter".into())),
        });
        answer.unwrap_or(pass_on_failure)
    }

    /// Hands a change to this notifier. A change outside its interest is
    /// not its business and counts as delivered, without a call.
    ///
    /// The plugin's `retry` answer becomes [`SendError::Retry`], `give-up`
    /// [`SendError::Reject`]. A call that fails (trap, timeout, memory) or
    /// is not made (crash-loop breaker open) is [`SendError::Retry`]: the
    /// change may well be delivered once the plugin is fixed or rested.
    ///
    /// Blocks for up to `limits.timeoutMs` (plus a moment): call it from
    /// `tokio::task::spawn_blocking` or a plain thread, never from inside
    /// an async task (its HTTP requests wait on the runtime).
    pub fn deliver(&self, gvk: &Gvk, change: &Change) -> Result<(), SendError> {
        if self.kind != PluginKind::Notifier {
            return Err(SendError::Reject(format!(
                "plugin `{}` is a {} plugin, not a notifier",
                self.name,
                self.kind.as_str()
            )));
        }
        if !self.interest.wants(gvk, change.kind) {
            return Ok(());
        }
        let answer = self.call(change, |instance| match instance {
            Instance::Notifier(notifier) => notifier.deliver(gvk, change),
            Instance::Filter(_) => Err((CallFailure::Trap, "not a notifier".into())),
        });
        match answer {
            Ok(delivered) => delivered,
            Err(Unanswered::Failed(why)) => Err(SendError::retry(format!(
                "notifier plugin `{}` {why}",
                self.name
            ))),
            Err(Unanswered::Resting(left)) => Err(SendError::Retry {
                reason: format!(
                    "notifier plugin `{}` keeps failing and is resting (crash-loop breaker open); last error: {}",
                    self.name,
                    self.last_call_error().as_deref().unwrap_or("unknown")
                ),
                after: Some(left),
            }),
        }
    }

    /// Runs `op` on the live instance (a fresh one after a failure), within
    /// the breaker, counting the call.
    fn call<R>(
        &self,
        change: &Change,
        op: impl FnOnce(&mut Instance) -> Result<R, (CallFailure, String)>,
    ) -> Result<R, Unanswered> {
        let now = Instant::now();
        if let Some(left) = self.resting(now) {
            self.stats.skipped();
            return Err(Unanswered::Resting(left));
        }
        let mut slot = self.instance.lock();
        let started = Instant::now();
        let result = match slot.take() {
            Some(instance) => Ok(instance),
            None => self
                .pre
                .start(&self.name, &self.manifest)
                .map(|(instance, _)| instance)
                .map_err(|e| (CallFailure::Trap, e.to_string())),
        }
        .and_then(|mut instance| {
            let answer = op(&mut instance)?;
            Ok((instance, answer))
        });
        let elapsed = started.elapsed();
        match result {
            Ok((instance, answer)) => {
                *slot = Some(instance);
                self.stats.call(elapsed);
                self.metrics
                    .plugin_call(&self.name, elapsed.as_secs_f64(), None);
                Ok(answer)
            }
            Err((failure, message)) => {
                // The instance is gone: its state may be corrupt after a trap.
                drop(slot);
                self.stats.failure(elapsed, failure);
                self.metrics
                    .plugin_call(&self.name, elapsed.as_secs_f64(), Some(failure.as_str()));
                tracing::warn!(plugin = %self.name, reason = failure.as_str(), error = %message, object = %change.object.key(), "plugin call failed");
                self.record_failure(now, &message);
                Err(Unanswered::Failed(message))
            }
        }
    }

    /// How much longer the breaker stays open, if it is; closes it when its
    /// time is up.
    fn resting(&self, now: Instant) -> Option<Duration> {
        let mut health = self.health.lock();
        let until = health.open_until?;
        if now < until {
            return Some(until - now);
        }
        health.open_until = None;
        tracing::info!(plugin = %self.name, "crash-loop breaker closed; trying the plugin again");
        None
    }

    fn record_failure(&self, now: Instant, message: &str) {
        let limits = &self.manifest.limits;
        let mut health = self.health.lock();
        health.last_error = Some(message.to_string());
        health.recent_failures.push_back(now);
        while health
            .recent_failures
            .front()
            .is_some_and(|t| now.duration_since(*t) > limits.breaker_window)
        {
            health.recent_failures.pop_front();
        }
        if health.recent_failures.len() >= limits.breaker_failures as usize {
            health.open_until = Some(now + limits.breaker_window);
            health.recent_failures.clear();
            tracing::warn!(plugin = %self.name, failures = limits.breaker_failures, window_ms = limits.breaker_window.as_millis() as u64, "plugin keeps failing; crash-loop breaker open, not calling it for a while");
        }
    }

    /// Whether the crash-loop breaker is open now.
    pub fn breaker_open(&self) -> bool {
        self.health
            .lock()
            .open_until
            .is_some_and(|t| Instant::now() < t)
    }

    /// The last call failure, if any.
    pub fn last_call_error(&self) -> Option<String> {
        self.health.lock().last_error.clone()
    }

    /// Call statistics.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}
