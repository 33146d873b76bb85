//! The developer loop: `grw plugin check FILE.wasm` says what a component is
//! and whether it loads and accepts its config; `grw plugin test FILE.wasm
//! --events RECORDING.jsonl` runs it over recorded events and prints each
//! decision (filters) or delivery outcome (notifiers). Both run the real
//! component, so they work for plugins written in any language.
//!
//! A notifier under test really sends its requests. The developer running
//! the tool stands in for the operator: the hosts the manifest's
//! `allowedHosts` asks for are allowed, and no others (the daemon also
//! requires them in `pluginAllowedHosts`).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::PluginArgs;
use crate::gvk::Gvk;
use crate::metrics::Metrics;
use crate::plugin::{
    ArtifactCache, ComponentNames, DeliveryError, Limits, Manifest, ManifestError, Plugin,
    PluginEngine, PluginError, PluginKind, Toolchain, component_hash, default_cache_dir,
    exported_world,
};
use crate::store::{Change, ChangeType, ObjectKey, Origin, StoredObject};
use crate::watch::Recording;

/// Why a tool run failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The plugin does not load.
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The recording cannot be read.
    #[error(transparent)]
    Recording(#[from] crate::watch::ReplayError),
    /// Writing the report failed.
    #[error("cannot write the report")]
    Output(#[from] std::io::Error),
}

fn manifest(args: &PluginArgs) -> Result<Manifest, PluginError> {
    let path = args.manifest.clone().or_else(|| {
        let sibling = args.file.with_extension("json");
        sibling.exists().then_some(sibling)
    });
    let mut manifest = match path {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|source| PluginError::Io { path, source })?;
            Manifest::parse(&text, Limits::default())?
        }
        None => Manifest::default_with(Limits::default()),
    };
    if let Some(config) = &args.config {
        manifest.config = serde_json::from_str(config)
            .map_err(|e| PluginError::Manifest(ManifestError::ConfigFlag(e)))?;
    }
    Ok(manifest)
}

/// The engine of `grw plugin`: with the daemon's default artifact cache,
/// so that checking, testing and then serving a component compiles it once.
fn engine() -> Result<Arc<PluginEngine>, PluginError> {
    PluginEngine::new(Some(ArtifactCache::new(default_cache_dir())))
}

fn load(args: &PluginArgs, engine: &PluginEngine) -> Result<(Plugin, usize), PluginError> {
    let wasm = read(&args.file)?;
    let name = args
        .file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plugin");
    let manifest = manifest(args)?;
    let operator_hosts = manifest.allowed_hosts.clone();
    // `init` may send requests, which must not wait inside the caller's runtime.
    let plugin = off_runtime(|| {
        Plugin::load(
            engine,
            name,
            &wasm,
            manifest,
            &operator_hosts,
            Arc::new(Metrics::new()),
        )
    })?;
    Ok((plugin, wasm.len()))
}

/// Runs `f` on a thread of its own: the plugin's HTTP requests block their
/// thread, which `grw`'s async `main` must not have them do to its own.
fn off_runtime<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| match scope.spawn(f).join() {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

fn read(file: &Path) -> Result<Vec<u8>, PluginError> {
    std::fs::read(file).map_err(|source| PluginError::Io {
        path: file.to_path_buf(),
        source,
    })
}

/// `grw plugin check`: writes what the component is and whether it loads.
/// What keeps it from loading is the error, in words its author can act on:
/// the world or contract version it was built for, or an import GRW does
/// not grant.
pub fn check(args: &PluginArgs, out: &mut dyn Write) -> Result<(), ToolError> {
    let wasm = read(&args.file)?;
    let engine = engine()?;
    // Read from the binary, so that a component of the wrong world is
    // explained without compiling it first; bytes that do not parse as a
    // component are compiled, which says what is wrong with them.
    let names = match ComponentNames::read(&wasm) {
        Some(names) => names,
        None => ComponentNames::of(&engine, &engine.compile(&wasm)?.component),
    };
    writeln!(
        out,
        "file:      {} ({} bytes, sha256 {})",
        args.file.display(),
        wasm.len(),
        component_hash(&wasm)
    )?;
    writeln!(out, "exports:   {}", names.exports.join(", "))?;
    writeln!(
        out,
        "imports:   {}",
        if names.imports.is_empty() {
            "none".into()
        } else {
            names.imports.join(", ")
        }
    )?;
    let built_with = Toolchain::of(&wasm);
    if let Some(toolchain) = built_with {
        writeln!(out, "language:  {}", toolchain.language())?;
    }
    let world = exported_world(&names, built_with)?;
    writeln!(
        out,
        "world:     {}-plugin, grw:plugin@{}{}",
        world.kind.as_str(),
        world.version,
        if world.contract == crate::plugin::LOADABLE[0] {
            ""
        } else {
            " (an earlier contract, still loaded: rebuild against the current wit/plugin.wit for lazy object access)"
        }
    )?;
    let (plugin, _) = load(args, &engine)?;
    let interest = &plugin.interest;
    let kinds: Vec<String> = interest
        .kinds
        .iter()
        .map(|(g, v, k)| {
            format!(
                "{}/{}/{}",
                g.as_deref().unwrap_or("*"),
                v.as_deref().unwrap_or("*"),
                k.as_deref().unwrap_or("*")
            )
        })
        .collect();
    writeln!(
        out,
        "kinds:     {}",
        if kinds.is_empty() {
            "all".into()
        } else {
            kinds.join(", ")
        }
    )?;
    writeln!(
        out,
        "events:    {}",
        if interest.event_types.is_empty() {
            "all".into()
        } else {
            interest.event_types.join(", ")
        }
    )?;
    if plugin.kind == PluginKind::Notifier {
        writeln!(
            out,
            "hosts:     {} (allowedHosts; the daemon's pluginAllowedHosts must allow them too)",
            plugin.manifest.allowed_hosts
        )?;
        writeln!(
            out,
            "timeout:   {} ms per delivery, requests included",
            plugin.manifest.limits.timeout.as_millis()
        )?;
    }
    writeln!(
        out,
        "config:    accepted ({})",
        plugin.manifest.config_text()
    )?;
    writeln!(out, "loaded in: {} ms", plugin.load_time.as_millis())?;
    if let crate::plugin::Origin::File {
        functions: Some(functions),
        ..
    } = plugin.origin
    {
        writeln!(
            out,
            "compiled:  {} functions; {} more had the code of functions compiled before (kept in the artifact cache)",
            functions.compiled, functions.reused
        )?;
    }
    Ok(())
}

/// Totals of a `grw plugin test` run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TestSummary {
    /// Events a filter let through.
    pub passed: usize,
    /// Events a filter dropped.
    pub dropped: usize,
    /// Events a notifier delivered.
    pub delivered: usize,
    /// Events a notifier (or GRW, for failed calls) asked to retry.
    pub retried: usize,
    /// Events a notifier gave up on.
    pub given_up: usize,
    /// Events outside a notifier's interest: not handed to it.
    pub skipped: usize,
    /// Calls that failed (trap, timeout, memory).
    pub failures: u64,
}

/// `grw plugin test`: runs the plugin over every recorded event, in order,
/// with the previous state of each object as `old-object` for MODIFIED
/// events. A filter's decision is printed as `PASS` or `DROP`; a notifier's
/// delivery as `OK`, `RETRY`, `GIVE-UP` (with the reason) or `SKIP` (not of
/// interest).
pub fn test(
    args: &PluginArgs,
    events: &Path,
    out: &mut dyn Write,
) -> Result<TestSummary, ToolError> {
    let recording = Recording::read(events)?;
    let (plugin, _) = load(args, &*engine()?)?;
    let mut last: HashMap<(Gvk, ObjectKey), Arc<StoredObject>> = HashMap::new();
    let mut summary = TestSummary::default();
    for (gvk, kind, value) in recording.events {
        let Ok(object) = StoredObject::from_value(value, &gvk, false) else {
            continue;
        };
        let object = Arc::new(object);
        let key = (gvk.clone(), object.key().clone());
        let old = match kind {
            ChangeType::Deleted => last.remove(&key),
            _ => last.insert(key, object.clone()),
        };
        let change = Change {
            kind,
            old: old.filter(|_| kind == ChangeType::Modified),
            object,
            origin: Origin::Watch,
            position: 0,
        };
        let (verdict, reason) = if plugin.kind == PluginKind::Notifier {
            notifier_outcome(&plugin, &gvk, &change, &mut summary)
        } else if plugin.decide(&gvk, &change) {
            summary.passed += 1;
            ("PASS", None)
        } else {
            summary.dropped += 1;
            ("DROP", None)
        };
        write!(
            out,
            "{verdict} {:<8} {} {}",
            kind.as_str(),
            gvk,
            change.object.key()
        )?;
        match reason {
            Some(reason) => writeln!(out, ": {reason}")?,
            None => writeln!(out)?,
        }
    }
    let stats = plugin.stats().snapshot();
    summary.failures = stats.failures.timeout + stats.failures.memory + stats.failures.trap;
    let totals = if plugin.kind == PluginKind::Notifier {
        format!(
            "{} delivered, {} to retry, {} given up, {} skipped",
            summary.delivered, summary.retried, summary.given_up, summary.skipped
        )
    } else {
        format!("{} passed, {} dropped", summary.passed, summary.dropped)
    };
    writeln!(
        out,
        "{totals}, {} failed calls; latency p50 {} µs, p99 {} µs",
        summary.failures, stats.latency_micros.p50, stats.latency_micros.p99
    )?;
    Ok(summary)
}

/// Delivers one change and counts the outcome: the verdict word and the
/// reason for a failure.
fn notifier_outcome(
    plugin: &Plugin,
    gvk: &Gvk,
    change: &Change,
    summary: &mut TestSummary,
) -> (&'static str, Option<String>) {
    if !plugin.interest.wants(gvk, change.kind) {
        summary.skipped += 1;
        return ("SKIP", None);
    }
    match off_runtime(|| plugin.deliver(gvk, change)) {
        Ok(()) => {
            summary.delivered += 1;
            ("OK", None)
        }
        Err(DeliveryError::Retry { reason, .. }) => {
            summary.retried += 1;
            ("RETRY", Some(reason))
        }
        Err(DeliveryError::GiveUp(reason)) => {
            summary.given_up += 1;
            ("GIVE-UP", Some(reason))
        }
    }
}
