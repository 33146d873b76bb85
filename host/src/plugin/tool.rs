//! The developer loop: `grw plugin check FILE.wasm` says what a component is
//! and whether it loads and accepts its config; `grw plugin test FILE.wasm
//! --events RECORDING.jsonl` runs it over recorded events and prints each
//! decision. Both run the real component, so they work for plugins written
//! in any language.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::{Limits, Manifest, Plugin, PluginEngine, PluginError, exported_kind};
use crate::config::PluginArgs;
use crate::gvk::Gvk;
use crate::metrics::Metrics;
use crate::store::{Change, ChangeType, ObjectKey, Origin, StoredObject};
use crate::watch::Recording;

/// Why a tool run failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The plugin does not load.
    #[error("{0}")]
    Plugin(#[from] PluginError),
    /// The recording cannot be read.
    #[error("{0}")]
    Recording(#[from] crate::watch::ReplayError),
    /// Writing the report failed.
    #[error("cannot write the report: {0}")]
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
                .map_err(|e| PluginError::Io(format!("{}: {e}", path.display())))?;
            Manifest::parse(&text, Limits::default())?
        }
        None => Manifest::default_with(Limits::default()),
    };
    if let Some(config) = &args.config {
        manifest.config = serde_json::from_str(config)
            .map_err(|e| PluginError::Manifest(format!("--config is not valid JSON: {e}")))?;
    }
    Ok(manifest)
}

fn load(args: &PluginArgs) -> Result<(Plugin, usize), PluginError> {
    let wasm = std::fs::read(&args.file)
        .map_err(|e| PluginError::Io(format!("{}: {e}", args.file.display())))?;
    let engine = PluginEngine::new(None)?;
    let name = args
        .file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plugin");
    let plugin = Plugin::load(
        &engine,
        name,
        &wasm,
        manifest(args)?,
        Arc::new(Metrics::new()),
    )?;
    Ok((plugin, wasm.len()))
}

/// `grw plugin check`: writes what the component is and whether it loads.
pub fn check(args: &PluginArgs, out: &mut dyn Write) -> Result<(), ToolError> {
    let wasm = std::fs::read(&args.file)
        .map_err(|e| PluginError::Io(format!("{}: {e}", args.file.display())))?;
    let engine = PluginEngine::new(None)?;
    let compiled = engine.compile(&wasm)?;
    writeln!(
        out,
        "file:      {} ({} bytes, sha256 {})",
        args.file.display(),
        wasm.len(),
        compiled.hash
    )?;
    let ty = compiled.component.component_type();
    let imports: Vec<String> = ty
        .imports(engine.engine())
        .map(|(n, _)| n.to_string())
        .collect();
    let exports: Vec<String> = ty
        .exports(engine.engine())
        .map(|(n, _)| n.to_string())
        .collect();
    writeln!(out, "exports:   {}", exports.join(", "))?;
    writeln!(
        out,
        "imports:   {}",
        if imports.is_empty() {
            "none".into()
        } else {
            imports.join(", ")
        }
    )?;
    let (kind, version) = exported_kind(&engine, &compiled.component)?;
    writeln!(
        out,
        "world:     {}-plugin, grw:plugin@{version}",
        kind.as_str()
    )?;
    let (plugin, _) = load(args)?;
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
    writeln!(
        out,
        "config:    accepted ({})",
        plugin.manifest.config_text()
    )?;
    writeln!(out, "loaded in: {} ms", plugin.load_time.as_millis())?;
    Ok(())
}

/// Totals of a `grw plugin test` run.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TestSummary {
    /// Events the plugin let through.
    pub passed: usize,
    /// Events it dropped.
    pub dropped: usize,
    /// Calls that failed (the fail mode decided).
    pub failures: u64,
}

/// `grw plugin test`: runs the plugin over every recorded event, in order,
/// with the previous state of each object as `old-object` for MODIFIED events.
pub fn test(
    args: &PluginArgs,
    events: &Path,
    out: &mut dyn Write,
) -> Result<TestSummary, ToolError> {
    let recording = Recording::read(events)?;
    let (plugin, _) = load(args)?;
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
        let pass = plugin.decide(&gvk, &change);
        if pass {
            summary.passed += 1;
        } else {
            summary.dropped += 1;
        }
        writeln!(
            out,
            "{} {:<8} {} {}",
            if pass { "PASS" } else { "DROP" },
            kind.as_str(),
            gvk,
            change.object.key()
        )?;
    }
    let stats = plugin.stats().snapshot();
    summary.failures = stats.failures.timeout + stats.failures.memory + stats.failures.trap;
    writeln!(
        out,
        "{} passed, {} dropped, {} failed calls; latency p50 {} µs, p99 {} µs",
        summary.passed,
        summary.dropped,
        summary.failures,
        stats.latency_micros.p50,
        stats.latency_micros.p99
    )?;
    Ok(summary)
}
