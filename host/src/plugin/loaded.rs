//! A loaded plugin: its linked code and pool of instances (or, for the
//! analyzers compiled into GRW, the analyzer itself), and the calls the
//! rest of GRW makes (`decide` for filters, `deliver` for notifiers,
//! `analyze` for analyzers), each within its limits, counted, and behind a
//! crash-loop breaker.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::analysis::{CacheReader, Relationship};
use super::builtin::{self, BuiltIn, Native};
use super::contract::{ComponentNames, ExportedWorld, check_imports, exported_world};
use super::instance::{Instance, Linked, World};
use super::outbound::OutboundHttp;
use super::pool::{Pool, Taken};
use super::{
    CallError, CallFailure, Contract, FailMode, FunctionReuse, Interest, Limits, Manifest,
    PluginEngine, PluginError, PluginKind, Stats, Toolchain,
};
use crate::config::AllowedHosts;
use crate::error::Report;
use crate::gvk::Gvk;
use crate::metrics::{Metrics, PluginCallMetrics};
use crate::store::{Change, StoredObject};

/// Why a notifier plugin did not deliver a change: the plugin module's own
/// outcome, which the notification engine maps onto its retry and
/// dead-letter handling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// Worth trying again: the plugin said `retry`, or its call failed
    /// (trap, timeout, memory) or was not made (crash-loop breaker open).
    #[error("{reason}")]
    Retry {
        /// What happened, for logs and the status API.
        reason: String,
        /// Wait at least this long before the next attempt.
        after: Option<Duration>,
    },
    /// Will never succeed: the plugin said `give-up`, or this is no notifier.
    #[error("{0}")]
    GiveUp(String),
}

impl DeliveryError {
    /// A retry without a delay.
    pub fn retry(reason: impl Into<String>) -> DeliveryError {
        DeliveryError::Retry {
            reason: reason.into(),
            after: None,
        }
    }
}

/// A loaded plugin: one version of one `.wasm` file with its manifest, or
/// an analyzer compiled into GRW.
///
/// A component's calls run on a pool of up to `limits.instances`
/// instances, so concurrent callers do not wait for each other unless every
/// instance is busy. A notifier's call includes its HTTP requests.
pub struct Plugin {
    /// File name without `.wasm`.
    pub name: Arc<str>,
    /// Filter, notifier or analyzer.
    pub kind: PluginKind,
    /// The WIT version its export names.
    pub wit_version: String,
    /// The contract GRW speaks to it in.
    pub contract: Contract,
    /// Where its code comes from.
    pub origin: Origin,
    /// Its manifest, defaults applied.
    pub manifest: Manifest,
    /// What it declared at `init`.
    pub interest: Interest,
    /// How long loading took (compile or cache load, link, instantiate, init).
    pub load_time: Duration,
    code: Code,
    /// Apart from the pool, so that status reads never wait for a call.
    health: Mutex<Health>,
    stats: Stats,
    metrics: Arc<Metrics>,
    /// This plugin's metric handles, resolved once.
    answered: PluginCallMetrics,
}

/// Where a plugin's code comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `NAME.wasm` of the plugin directory.
    File {
        /// SHA-256 of the `.wasm` file.
        hash: String,
        /// Whether the compiled code came from the artifact cache.
        from_cache: bool,
        /// When it was compiled with an artifact cache: functions
        /// compiled, and reused from earlier compiles.
        functions: Option<FunctionReuse>,
    },
    /// Compiled into GRW (see [`super::BUILT_IN`]).
    BuiltIn,
}

/// What runs a plugin's calls.
enum Code {
    /// A WebAssembly component, linked, and its instances.
    Component { linked: Linked, pool: Pool },
    /// An analyzer compiled into GRW.
    BuiltIn(Box<dyn Native>),
}

/// Recent failures and the crash-loop breaker.
#[derive(Default)]
struct Health {
    recent_failures: VecDeque<Instant>,
    open_until: Option<Instant>,
    last_error: Option<String>,
}

/// Why a call that was made produced no answer.
#[derive(Debug, thiserror::Error)]
pub enum CallFailed {
    /// It trapped, ran past its deadline or over its memory.
    #[error(transparent)]
    Call(CallError),
    /// No instance could be made for it.
    #[error("could not be started again")]
    Restart(#[source] PluginError),
    /// A built-in analyzer panicked.
    #[error("panicked: {0}")]
    Panic(String),
    /// The plugin is not of the kind the call is for.
    #[error("is no {} plugin", .0.as_str())]
    NotOfKind(PluginKind),
}

impl CallFailed {
    /// The kind of failure, as counted.
    pub fn failure(&self) -> CallFailure {
        match self {
            CallFailed::Call(e) => e.failure,
            CallFailed::Restart(PluginError::Instantiate(c) | PluginError::Init(c)) => c.failure,
            CallFailed::Restart(_) | CallFailed::Panic(_) | CallFailed::NotOfKind(_) => {
                CallFailure::Trap
            }
        }
    }
}

/// Why an analyzer gave no relationships for an object.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The plugin is no analyzer.
    #[error("plugin `{name}` is a {} plugin, not an analyzer", kind.as_str())]
    NotAnAnalyzer {
        /// The plugin.
        name: Arc<str>,
        /// Its kind.
        kind: PluginKind,
    },
    /// The call was made and failed.
    #[error(transparent)]
    Failed(#[from] CallFailed),
    /// The call was not made: the crash-loop breaker is open.
    #[error("keeps failing and is resting (crash-loop breaker open); last error: {last_error}")]
    Resting {
        /// The failure that opened the breaker, or the last one since.
        last_error: String,
    },
}

/// Why a call produced no answer.
enum Unanswered {
    /// The breaker is open for this much longer.
    Resting(Duration),
    /// The call failed.
    Failed(CallFailed),
}

/// The world a component exports, if GRW loads it as a plugin of that
/// kind: one the manifest (when it names a kind) agrees with, importing only
/// what GRW grants such a plugin.
fn admit(
    names: &ComponentNames,
    manifest: &Manifest,
    built_with: Option<Toolchain>,
) -> Result<ExportedWorld, PluginError> {
    let world = exported_world(names, built_with)?;
    if let Some(expected) = manifest.kind
        && expected != world.kind
    {
        return Err(PluginError::KindMismatch {
            manifest: expected,
            component: world.kind,
            version: world.version,
        });
    }
    check_imports(names, world.kind, built_with)?;
    Ok(world)
}

impl Plugin {
    /// Checks the world, version and imports, compiles (or loads from
    /// cache), links, instantiates and initializes a plugin. A notifier may
    /// reach the hosts that both its manifest (`allowedHosts`) and
    /// `operator_hosts` (GRW's `pluginAllowedHosts`) allow.
    pub fn load(
        engine: &PluginEngine,
        name: &str,
        wasm: &[u8],
        mut manifest: Manifest,
        operator_hosts: &AllowedHosts,
        metrics: Arc<Metrics>,
    ) -> Result<Plugin, PluginError> {
        let started = Instant::now();
        let built_with = Toolchain::of(wasm);
        // Checked before compiling when the binary says what it imports and
        // exports, so that a component GRW would refuse costs no compile.
        let admitted = ComponentNames::read(wasm)
            .map(|names| admit(&names, &manifest, built_with))
            .transpose()?;
        let compiled = engine.compile(wasm)?;
        let world = match admitted {
            Some(world) => world,
            None => admit(
                &ComponentNames::of(engine, &compiled.component),
                &manifest,
                built_with,
            )?,
        };
        let kind = world.kind;
        manifest.apply_kind_defaults(kind);
        if kind != PluginKind::Notifier && !manifest.allowed_hosts.is_empty() {
            tracing::warn!(
                plugin = name,
                kind = kind.as_str(),
                "the manifest's allowedHosts is ignored: only notifier plugins send requests"
            );
        }
        let http = match kind {
            PluginKind::Notifier => Some(OutboundHttp::new(
                manifest.allowed_hosts.clone(),
                operator_hosts.clone(),
            )?),
            _ => None,
        };
        let linked = Linked::new(
            engine.linkers(),
            &compiled.component,
            World::of(kind, world.contract)?,
            http,
        )?;
        let name: Arc<str> = name.into();
        let (first, interest) = start(&linked, &name, &manifest)?;
        Ok(Plugin {
            answered: metrics.plugin_call_metrics(&name),
            name,
            kind,
            wit_version: world.version,
            contract: world.contract,
            origin: Origin::File {
                hash: compiled.hash,
                from_cache: compiled.from_cache,
                functions: compiled.functions,
            },
            interest,
            load_time: started.elapsed(),
            code: Code::Component {
                pool: Pool::new(manifest.limits.instances as usize, first),
                linked,
            },
            health: Mutex::new(Health::default()),
            stats: Stats::default(),
            metrics,
            manifest,
        })
    }

    /// Starts an analyzer compiled into GRW, with its shipped manifest.
    pub fn built_in(analyzer: &BuiltIn, metrics: Arc<Metrics>) -> Result<Plugin, PluginError> {
        let started = Instant::now();
        let mut manifest = Manifest::parse(analyzer.manifest, Limits::default())?;
        manifest.apply_kind_defaults(PluginKind::Analyzer);
        let (native, interest) = analyzer.start(&manifest.config_text())?;
        let (major, minor, patch) = super::WIT_VERSION;
        let name: Arc<str> = analyzer.name.into();
        Ok(Plugin {
            answered: metrics.plugin_call_metrics(&name),
            name,
            kind: PluginKind::Analyzer,
            wit_version: format!("{major}.{minor}.{patch}"),
            contract: Contract::V0_2,
            origin: Origin::BuiltIn,
            interest,
            load_time: started.elapsed(),
            code: Code::BuiltIn(native),
            health: Mutex::new(Health::default()),
            stats: Stats::default(),
            metrics,
            manifest,
        })
    }

    /// What tells this version from others of the same name: the file's
    /// hash, or `built-in`.
    pub fn version(&self) -> &str {
        match &self.origin {
            Origin::File { hash, .. } => hash,
            Origin::BuiltIn => "built-in",
        }
    }

    /// Whether a change passes this filter. A filter's interest is what it
    /// wants to let through: changes outside it do not pass, without a call.
    /// When the plugin cannot answer (trap, timeout, memory, open breaker),
    /// its fail mode decides; so it does when this plugin is no filter.
    ///
    /// Blocks for up to `limits.timeoutMs` (plus the wait for an instance
    /// when all are busy): call it off async threads.
    pub fn decide(&self, gvk: &Gvk, change: &Change) -> bool {
        let pass_on_failure = self.manifest.fail_mode == FailMode::Open;
        if self.kind != PluginKind::Filter {
            tracing::warn!(plugin = %self.name, kind = self.kind.as_str(), "asked to filter, but this is no filter plugin; its fail mode decides");
            return pass_on_failure;
        }
        if !self.interest.wants(gvk, change.kind) {
            return false;
        }
        self.call(&change.object, |instance| instance.decide(gvk, change))
            .unwrap_or(pass_on_failure)
    }

    /// Hands a change to this notifier. A change outside its interest is
    /// not its business and counts as delivered, without a call.
    ///
    /// The plugin's `retry` answer is [`DeliveryError::Retry`], `give-up`
    /// [`DeliveryError::GiveUp`]. A call that fails (trap, timeout, memory)
    /// or is not made (crash-loop breaker open) is a retry: the change may
    /// well be delivered once the plugin is fixed or rested.
    ///
    /// Blocks for up to `limits.timeoutMs` (plus a moment): call it from
    /// `tokio::task::spawn_blocking` or a plain thread, never from inside
    /// an async task (its HTTP requests wait on the runtime).
    pub fn deliver(&self, gvk: &Gvk, change: &Change) -> Result<(), DeliveryError> {
        if self.kind != PluginKind::Notifier {
            return Err(DeliveryError::GiveUp(format!(
                "plugin `{}` is a {} plugin, not a notifier",
                self.name,
                self.kind.as_str()
            )));
        }
        if !self.interest.wants(gvk, change.kind) {
            return Ok(());
        }
        match self.call(&change.object, |instance| instance.deliver(gvk, change)) {
            Ok(delivered) => delivered,
            Err(Unanswered::Failed(why)) => Err(DeliveryError::retry(format!(
                "notifier plugin `{}` {}",
                self.name,
                Report(&why)
            ))),
            Err(Unanswered::Resting(left)) => Err(DeliveryError::Retry {
                reason: format!(
                    "notifier plugin `{}` keeps failing and is resting (crash-loop breaker open); last error: {}",
                    self.name,
                    self.last_call_error().as_deref().unwrap_or("unknown")
                ),
                after: Some(left),
            }),
        }
    }

    /// The relationships of a `gvk` object, its cache lookups answered by
    /// `reader`. An object outside the analyzer's interest has none,
    /// without a call. The error says why there is no answer: the call
    /// failed (trap, timeout, memory), was not made (crash-loop breaker
    /// open), or this is no analyzer.
    ///
    /// Blocks for up to `limits.timeoutMs`: call it off async threads.
    pub fn analyze(
        &self,
        gvk: &Gvk,
        object: &Arc<StoredObject>,
        reader: Arc<dyn CacheReader>,
    ) -> Result<Vec<Relationship>, AnalyzeError> {
        if self.kind != PluginKind::Analyzer {
            return Err(AnalyzeError::NotAnAnalyzer {
                name: self.name.clone(),
                kind: self.kind,
            });
        }
        if !self.interest.wants_kind(gvk) {
            return Ok(Vec::new());
        }
        let answer = match &self.code {
            Code::BuiltIn(native) => self.call_native(object, || {
                builtin::analyze(native.as_ref(), gvk, object, reader)
            }),
            Code::Component { .. } => {
                self.call(object, |instance| instance.analyze(gvk, object, reader))
            }
        };
        match answer {
            Ok(found) => Ok(found),
            Err(Unanswered::Failed(why)) => Err(AnalyzeError::Failed(why)),
            Err(Unanswered::Resting(_)) => Err(AnalyzeError::Resting {
                last_error: self.last_call_error().unwrap_or_else(|| "unknown".into()),
            }),
        }
    }

    /// Runs `op` on an instance of the pool (a fresh one when none is idle
    /// and the pool has room), within the breaker, counting the call.
    fn call<R>(
        &self,
        object: &StoredObject,
        op: impl FnOnce(&mut Instance) -> Option<Result<R, CallError>>,
    ) -> Result<R, Unanswered> {
        let started = Instant::now();
        if let Some(left) = self.resting(started) {
            self.stats.skipped();
            return Err(Unanswered::Resting(left));
        }
        let Code::Component { linked, pool } = &self.code else {
            return self.answered(object, started, Err(CallFailed::NotOfKind(self.kind)));
        };
        let instance = match pool.take() {
            Taken::Idle(instance) => Ok(instance),
            Taken::Make => start(linked, &self.name, &self.manifest)
                .map(|(instance, _)| instance)
                .inspect_err(|_| pool.discard()),
        };
        let result = match instance {
            Ok(mut instance) => match op(&mut instance) {
                Some(Ok(answer)) => {
                    if instance.worn_out() {
                        pool.discard();
                    } else {
                        pool.put(instance);
                    }
                    Ok(answer)
                }
                Some(Err(failure)) => {
                    // The instance is dropped: its state may be corrupt after a trap.
                    pool.discard();
                    tracing::debug!(plugin = %self.name, detail = %failure.detail, "the failed call, as wasmtime reports it");
                    Err(CallFailed::Call(failure))
                }
                None => {
                    pool.put(instance);
                    Err(CallFailed::NotOfKind(self.kind))
                }
            },
            Err(e) => Err(CallFailed::Restart(e)),
        };
        self.answered(object, started, result)
    }

    /// Runs a built-in analyzer's call within the breaker, counting it; a
    /// panic is a trap.
    fn call_native<R>(
        &self,
        object: &StoredObject,
        op: impl FnOnce() -> Result<R, CallFailed>,
    ) -> Result<R, Unanswered> {
        let started = Instant::now();
        if let Some(left) = self.resting(started) {
            self.stats.skipped();
            return Err(Unanswered::Resting(left));
        }
        let result = op();
        self.answered(object, started, result)
    }

    /// Counts a call that started at `started`, and records a failure.
    fn answered<R>(
        &self,
        object: &StoredObject,
        started: Instant,
        result: Result<R, CallFailed>,
    ) -> Result<R, Unanswered> {
        let elapsed = started.elapsed();
        match result {
            Ok(answer) => {
                self.stats.call(elapsed);
                self.answered.answered(elapsed.as_secs_f64());
                Ok(answer)
            }
            Err(failed) => {
                let failure = failed.failure();
                let message = Report(&failed).to_string();
                self.stats.failure(elapsed, failure);
                self.metrics
                    .plugin_call(&self.name, elapsed.as_secs_f64(), Some(failure.as_str()));
                tracing::warn!(plugin = %self.name, reason = failure.as_str(), error = %message, object = %object.key(), "plugin call failed");
                self.record_failure(started, &message);
                Err(Unanswered::Failed(failed))
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

    /// Instances that exist now (idle or in a call); `None` for a
    /// built-in analyzer, which has none.
    pub fn instances(&self) -> Option<usize> {
        match &self.code {
            Code::Component { pool, .. } => Some(pool.counts().0),
            Code::BuiltIn(_) => None,
        }
    }
}

/// A fresh instance, initialized with the manifest's configuration.
fn start(
    linked: &Linked,
    name: &Arc<str>,
    manifest: &Manifest,
) -> Result<(Instance, Interest), PluginError> {
    let mut instance = linked.instantiate(name, &manifest.limits)?;
    let interest = instance.init(&manifest.config_text())?;
    Ok((instance, interest))
}
