//! The one wasmtime engine of the process, the epoch clock that bounds every
//! call, and compilation with an on-disk cache of compiled artifacts.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use super::PluginError;

/// How often the epoch advances. A call's deadline is counted in these ticks,
/// so deadlines are accurate to about this much; a tick costs one atomic
/// increment.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// A deadline of `timeout` in epoch ticks. One extra tick, because the
/// current tick may be almost over when the deadline is set.
pub(super) fn deadline_ticks(timeout: Duration) -> u64 {
    (timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64 + 1
}

/// How many components compile at once; further compiles wait for a slot.
/// wasmtime already spreads one compile over every core, so more at once
/// would not finish sooner, while each holds hundreds of megabytes until it
/// is done (a Python component: about 250 MiB): a start with many new
/// plugins would only peak higher. Two rather than one, so that a small
/// plugin is not stuck behind a big one for the whole of its compile.
/// Loads from the artifact cache take no slot.
pub const PARALLEL_COMPILES: usize = 2;

/// Where compiled artifacts are kept unless `pluginCacheDir` says
/// otherwise: `$TMPDIR/grw-plugin-cache-<uid>`. The daemon and `grw plugin
/// check`/`test` share it, so a component checked once loads from it.
pub fn default_cache_dir() -> PathBuf {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    std::env::temp_dir().join(format!("grw-plugin-cache-{uid}"))
}

/// The engine plus where compiled artifacts are kept.
pub struct PluginEngine {
    engine: Engine,
    cache_dir: Option<PathBuf>,
    /// Identifies artifacts this engine can load: wasmtime version, target and settings.
    compatibility: String,
    /// Compiles running now, at most [`PARALLEL_COMPILES`].
    compiling: Mutex<usize>,
    compile_done: Condvar,
}

/// A compiled component and how it was obtained.
pub struct Compiled {
    /// The component, ready to link.
    pub component: Component,
    /// SHA-256 of the `.wasm` file, hex.
    pub hash: String,
    /// Whether it came from the artifact cache.
    pub from_cache: bool,
}

impl PluginEngine {
    /// An engine with the component model and epoch interruption, and a
    /// thread that advances the epoch every [`EPOCH_TICK`]. `cache_dir`:
    /// where compiled artifacts go (created with mode 0700); `None` = no cache.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Arc<PluginEngine>, PluginError> {
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            // Plugin calls are synchronous. Without this, every call would
            // also set up (and tear down) the bookkeeping of the component
            // model's async tasks, a measurable share of a filter call.
            .concurrency_support(false);
        let engine =
            Engine::new(&config).map_err(|e| PluginError::Engine(PluginError::source_of(e)))?;
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("grw-plugin-epoch".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .map_err(|e| PluginError::Engine(Box::new(e)))?;
        let mut hasher = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let compatibility = format!("{:016x}", hasher.finish());
        let cache_dir = match cache_dir {
            Some(dir) => match prepare_cache_dir(&dir) {
                Ok(()) => Some(dir),
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "plugin artifact cache disabled");
                    None
                }
            },
            None => None,
        };
        Ok(Arc::new(PluginEngine {
            engine,
            cache_dir,
            compatibility,
            compiling: Mutex::new(0),
            compile_done: Condvar::new(),
        }))
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compiles `wasm`, or loads the artifact compiled earlier from the same
    /// bytes by a compatible engine. Compiling takes from tens of milliseconds
    /// to seconds; loading a cached artifact takes milliseconds.
    pub fn compile(&self, wasm: &[u8]) -> Result<Compiled, PluginError> {
        let hash = hex(&Sha256::digest(wasm));
        let cached = self
            .cache_dir
            .as_ref()
            .map(|dir| dir.join(format!("{hash}-{}.cwasm", self.compatibility)));
        if let Some(path) = &cached
            && trusted_artifact(path)
        {
            // SAFETY: wasmtime requires that deserialized artifacts come from a
            // trusted source. `trusted_artifact` checked that this file lives in
            // our own 0700 directory, is owned by our user and writable only by
            // it: only this process's user could have written it, and GRW writes
            // artifacts only from `Component::serialize`.
            match unsafe { Component::deserialize_file(&self.engine, path) } {
                Ok(component) => {
                    return Ok(Compiled {
                        component,
                        hash,
                        from_cache: true,
                    });
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cached plugin artifact unusable; compiling again")
                }
            }
        }
        let component = {
            let _slot = self.compile_slot();
            Component::new(&self.engine, wasm)
                .map_err(|e| PluginError::Invalid(PluginError::source_of(e)))?
        };
        if let Some(path) = &cached
            && let Err(e) = store_artifact(path, &component)
        {
            tracing::warn!(path = %path.display(), error = %e, "cannot cache the compiled plugin");
        }
        Ok(Compiled {
            component,
            hash,
            from_cache: false,
        })
    }
}

impl PluginEngine {
    /// Waits for one of the [`PARALLEL_COMPILES`] slots; it is given back
    /// when the guard drops.
    fn compile_slot(&self) -> CompileSlot<'_> {
        let mut compiling = self.compiling.lock();
        while *compiling >= PARALLEL_COMPILES {
            self.compile_done.wait(&mut compiling);
        }
        *compiling += 1;
        CompileSlot(self)
    }
}

struct CompileSlot<'a>(&'a PluginEngine);

impl Drop for CompileSlot<'_> {
    fn drop(&mut self) {
        *self.0.compiling.lock() -= 1;
        self.0.compile_done.notify_one();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn prepare_cache_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let meta = std::fs::metadata(dir)?;
    if meta.uid() != euid() {
        return Err(std::io::Error::other(
            "the directory belongs to another user",
        ));
    }
    Ok(())
}

/// Only artifacts this user wrote into its private directory are loaded.
fn trusted_artifact(path: &Path) -> bool {
    let private = |p: &Path, forbidden: u32| {
        std::fs::metadata(p).is_ok_and(|m| m.uid() == euid() && m.mode() & forbidden == 0)
    };
    path.parent().is_some_and(|dir| private(dir, 0o077)) && private(path, 0o022)
}

/// Writes through a temporary file and a rename, so a crash never leaves a
/// truncated artifact under the final name.
fn store_artifact(path: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component.serialize().map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(&bytes)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[test]
    fn compiles_beyond_the_slots_wait_for_one_to_free() {
        let engine = PluginEngine::new(None).unwrap();
        let held: Vec<_> = (0..PARALLEL_COMPILES)
            .map(|_| engine.compile_slot())
            .collect();
        let got_one = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _slot = engine.compile_slot();
                got_one.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(Duration::from_millis(200));
            assert!(
                !got_one.load(Ordering::SeqCst),
                "a compile started while {PARALLEL_COMPILES} held every slot"
            );
            drop(held);
        });
        assert!(got_one.load(Ordering::SeqCst));
        assert_eq!(*engine.compiling.lock(), 0, "every slot is given back");
    }
}
