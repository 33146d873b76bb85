//! The one wasmtime engine of the process, the epoch clock that bounds every
//! call, and compilation with an on-disk cache of compiled artifacts.
//!
//! The artifact cache is a directory of `HASH-ENGINE.cwasm` files (the
//! component's SHA-256, and a hash of what makes an artifact loadable by
//! this engine: wasmtime's version, the target and the settings) beside a
//! `FORMAT` file naming its layout ([`CACHE_FORMAT`]). A directory of a
//! newer layout is left alone (the cache is off, and says why). It holds at
//! most [`ArtifactCache::max_bytes`]: after each artifact written, the
//! least recently used ones go (a load from the cache counts as a use).
//! Beside each artifact, a pack of the functions its compile compiled
//! (`HASH-ENGINE.functions`) lets later compiles reuse their machine code
//! ([`super::functions`]); packs count towards the bound too.
//!
//! Loading an artifact runs the machine code in it, and wasmtime does not
//! check it: a corrupt file (a bad disk, a copy cut short) would be
//! undefined behaviour. So an artifact starts with [`ARTIFACT_MAGIC`] and
//! the SHA-256 of what follows, checked before wasmtime sees it; one that
//! does not match is removed and compiled again. Every file is written
//! under a temporary name of its own (process, counter, random) and renamed
//! into place, and concurrent compiles of the same bytes in one process
//! compile once: the others wait and take its component.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use parking_lot::{Condvar, Mutex};
use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use super::PluginError;
use super::functions::{FunctionReuse, FunctionStore};
use super::instance::Linkers;

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

/// The layout of the artifact cache this GRW writes and reads (see the
/// module's documentation); raised when it changes. 2: artifacts start with
/// [`ARTIFACT_MAGIC`] and their SHA-256. A cache of format 1 is taken over:
/// its artifacts fail the check and are compiled again.
pub const CACHE_FORMAT: u32 = 2;

/// The first bytes of an artifact file; the SHA-256 of the rest follows.
pub const ARTIFACT_MAGIC: &[u8; 8] = b"GRWART2\n";

/// Bytes before the serialized component: the magic and the digest.
const ARTIFACT_HEADER: usize = ARTIFACT_MAGIC.len() + 32;

/// The file of the artifact cache that names its layout.
const FORMAT_FILE: &str = "FORMAT";

/// What the `FORMAT` file says before the number.
const FORMAT_PREFIX: &str = "grw-plugin-artifact-cache ";

/// How much the artifact cache holds unless `pluginCacheMaxBytes` says
/// otherwise: a compiled Rust plugin is 1 to 3 MB, a Python or JavaScript
/// one 40 to 60 MB, so this keeps a few versions of a dozen plugins.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 1 << 30;

/// Where compiled artifacts are kept, and how much they may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactCache {
    /// The directory (created with mode 0700).
    pub dir: PathBuf,
    /// The most bytes of artifacts it holds; the least recently used go
    /// past it (the one just written always stays).
    pub max_bytes: u64,
}

impl ArtifactCache {
    /// A cache in `dir` of [`DEFAULT_CACHE_MAX_BYTES`].
    pub fn new(dir: PathBuf) -> ArtifactCache {
        ArtifactCache {
            dir,
            max_bytes: DEFAULT_CACHE_MAX_BYTES,
        }
    }
}

/// The engine plus where compiled artifacts are kept.
pub struct PluginEngine {
    engine: Engine,
    /// One linker per world GRW links components in.
    linkers: Linkers,
    cache: Option<ArtifactCache>,
    /// The compiled functions of the cache's packs, while compiles run.
    functions: Option<Arc<FunctionStore>>,
    /// Why the configured cache is not used, if it is not.
    cache_refused: Option<String>,
    /// Identifies artifacts this engine can load: wasmtime version, target and settings.
    compatibility: String,
    /// Compiles running now, at most [`PARALLEL_COMPILES`].
    compiling: Mutex<usize>,
    compile_done: Condvar,
    /// Per component hash, while a compile of it runs: a compile of the same
    /// bytes waits on it and takes the component made.
    by_hash: Mutex<HashMap<String, Arc<Mutex<Option<Component>>>>>,
}

/// A compiled component and how it was obtained.
pub struct Compiled {
    /// The component, ready to link.
    pub component: Component,
    /// SHA-256 of the `.wasm` file, hex.
    pub hash: String,
    /// Whether it came from the artifact cache.
    pub from_cache: bool,
    /// When it was compiled with an artifact cache: how many of its
    /// functions were compiled, and how many reused from earlier compiles.
    pub functions: Option<FunctionReuse>,
}

impl PluginEngine {
    /// An engine with the component model and epoch interruption, and a
    /// thread that advances the epoch every [`EPOCH_TICK`]. `cache`: where
    /// compiled artifacts go; `None` = no cache.
    pub fn new(cache: Option<ArtifactCache>) -> Result<Arc<PluginEngine>, PluginError> {
        let (cache, cache_refused) = match cache {
            Some(cache) => match prepare_cache_dir(&cache.dir) {
                Ok(()) => (Some(cache), None),
                Err(e) => {
                    let refused = format!(
                        "plugin artifact cache {} not used: {e}; every plugin is compiled at each start",
                        cache.dir.display()
                    );
                    tracing::warn!("{refused}");
                    (None, Some(refused))
                }
            },
            None => (None, None),
        };
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            // Plugin calls are synchronous. Without this, every call would
            // also set up (and tear down) the bookkeeping of the component
            // model's async tasks, a measurable share of a filter call.
            .concurrency_support(false);
        let functions = cache
            .as_ref()
            .map(|cache| Arc::new(FunctionStore::new(cache.dir.clone())));
        if let Some(store) = &functions {
            config
                .enable_incremental_compilation(store.clone())
                .map_err(|e| PluginError::Engine(PluginError::source_of(e)))?;
        }
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
        // (The function store is not part of this hash: artifacts load
        // alike whether their functions were reused or not.)
        let mut hasher = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let compatibility = format!("{:016x}", hasher.finish());
        if let Some(cache) = &cache {
            prune(cache, &[]);
        }
        Ok(Arc::new(PluginEngine {
            linkers: Linkers::new(&engine)?,
            engine,
            cache,
            functions,
            cache_refused,
            compatibility,
            compiling: Mutex::new(0),
            compile_done: Condvar::new(),
            by_hash: Mutex::new(HashMap::new()),
        }))
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine's linkers, one per world.
    pub(super) fn linkers(&self) -> &Linkers {
        &self.linkers
    }

    /// The artifact cache in use, if any.
    pub fn cache(&self) -> Option<&ArtifactCache> {
        self.cache.as_ref()
    }

    /// Why the artifact cache asked for is not used, if it is not.
    pub fn cache_refused(&self) -> Option<&str> {
        self.cache_refused.as_deref()
    }

    /// Compiles `wasm`, or loads the artifact compiled earlier from the same
    /// bytes by a compatible engine. Compiling takes from tens of milliseconds
    /// to seconds; loading a cached artifact takes milliseconds.
    pub fn compile(&self, wasm: &[u8]) -> Result<Compiled, PluginError> {
        let hash = component_hash(wasm);
        let key = hash.clone();
        let slot = self.by_hash.lock().entry(key.clone()).or_default().clone();
        let result = {
            // A compile of the same bytes under way finishes first.
            let mut made = slot.lock();
            match made.clone() {
                Some(component) => Ok(Compiled {
                    component: component.clone(),
                    hash,
                    from_cache: false,
                    functions: None,
                }),
                None => {
                    let compiled = self.compile_once(wasm, hash);
                    if let Ok(compiled) = &compiled {
                        *made = Some(compiled.component.clone());
                    }
                    compiled
                }
            }
        };
        // Each call lets go of the slot under the map's lock, so the last
        // one finds only the map's reference and removes it.
        let mut by_hash = self.by_hash.lock();
        drop(slot);
        if by_hash.get(&key).is_some_and(|s| Arc::strong_count(s) == 1) {
            by_hash.remove(&key);
        }
        result
    }

    /// [`PluginEngine::compile`] without looking for a compile of the same
    /// bytes under way.
    fn compile_once(&self, wasm: &[u8], hash: String) -> Result<Compiled, PluginError> {
        let cached = self.cache.as_ref().map(|cache| {
            cache
                .dir
                .join(format!("{hash}-{}.cwasm", self.compatibility))
        });
        if let Some(path) = &cached
            && trusted_artifact(path)
        {
            match load_artifact(&self.engine, path) {
                Ok(component) => {
                    touch(path);
                    return Ok(Compiled {
                        component,
                        hash,
                        from_cache: true,
                        functions: None,
                    });
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cached plugin artifact unusable; removing it and compiling again");
                    if let Err(e) = std::fs::remove_file(path) {
                        tracing::debug!(path = %path.display(), error = %e, "cannot remove the unusable plugin artifact");
                    }
                }
            }
        }
        let (component, functions) = {
            let _slot = self.compile_slot();
            let session = self
                .functions
                .as_ref()
                .map(|store| store.begin(&self.compatibility));
            let component = Component::new(&self.engine, wasm)
                .map_err(|e| PluginError::Invalid(PluginError::source_of(e)))?;
            let stored = match (&cached, &self.cache) {
                (Some(path), Some(_)) => match store_artifact(path, &component) {
                    Ok(()) => Some(path),
                    Err(e) => {
                        tracing::warn!(path = %path.display(), error = %e, "cannot cache the compiled plugin");
                        None
                    }
                },
                _ => None,
            };
            let pack = stored.map(|path| FunctionStore::pack_of(path));
            let functions = session.map(|session| session.finish(pack.as_deref()));
            if let (Some(path), Some(pack), Some(cache)) = (stored, &pack, &self.cache) {
                prune(cache, &[path, pack]);
            }
            (component, functions)
        };
        Ok(Compiled {
            component,
            hash,
            from_cache: false,
            functions,
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

/// The SHA-256 of a component's bytes, in hex: what names its compiled
/// artifact in the cache ([`Compiled::hash`]).
pub fn component_hash(wasm: &[u8]) -> String {
    hex(&Sha256::digest(wasm))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Makes `dir` the cache's private directory, and checks (or writes) its
/// format.
fn prepare_cache_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let meta = std::fs::metadata(dir)?;
    if meta.uid() != euid() {
        return Err(std::io::Error::other(
            "the directory belongs to another user",
        ));
    }
    let format_file = dir.join(FORMAT_FILE);
    match std::fs::read_to_string(&format_file) {
        Ok(text) => {
            let found = text
                .trim()
                .strip_prefix(FORMAT_PREFIX)
                .and_then(|n| n.parse::<u32>().ok());
            match found {
                // An older layout is taken over: its artifacts fail the
                // check when loaded, and are compiled again.
                Some(found) if found < CACHE_FORMAT => write_private(
                    &format_file,
                    format!("{FORMAT_PREFIX}{CACHE_FORMAT}\n").as_bytes(),
                ),
                Some(CACHE_FORMAT) => Ok(()),
                Some(found) => Err(std::io::Error::other(format!(
                    "it has format {found}, written by a newer GRW (this one reads format {CACHE_FORMAT}); set pluginCacheDir to another directory, or remove this one"
                ))),
                None => Err(std::io::Error::other(format!(
                    "its {FORMAT_FILE} file does not say `{FORMAT_PREFIX}N`; set pluginCacheDir to another directory, or remove this one"
                ))),
            }
        }
        // A cache of before the format was written has this one's layout.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_private(
            &format_file,
            format!("{FORMAT_PREFIX}{CACHE_FORMAT}\n").as_bytes(),
        ),
        Err(e) => Err(e),
    }
}

/// Marks an artifact as used now, for [`prune`].
pub(super) fn touch(path: &Path) {
    let touched = std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(SystemTime::now()));
    if let Err(e) = touched {
        tracing::debug!(path = %path.display(), error = %e, "cannot mark the plugin artifact as used");
    }
}

/// Removes the least recently used artifacts and packs while the cache
/// holds more than its bound, never those of `keep` (the artifact just
/// written and its pack).
fn prune(cache: &ArtifactCache, keep: &[&Path]) {
    let Ok(entries) = std::fs::read_dir(&cache.dir) else {
        return;
    };
    let entries: Vec<std::fs::DirEntry> = entries.flatten().collect();
    // Temporary files of writes a crash interrupted: a write takes seconds.
    let abandoned = SystemTime::now()
        .checked_sub(ABANDONED_AFTER)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    for entry in &entries {
        let path = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < abandoned);
        if old && path.extension().is_some_and(|x| x == "tmp") {
            let _ = std::fs::remove_file(&path);
        }
    }
    let mut artifacts: Vec<(SystemTime, u64, PathBuf)> = entries
        .iter()
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "cwasm" || x == "functions")
        })
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut total: u64 = artifacts.iter().map(|(_, len, _)| len).sum();
    if total <= cache.max_bytes {
        return;
    }
    artifacts.sort();
    let (mut removed, mut freed) = (0, 0);
    for (_, len, path) in artifacts {
        if total <= cache.max_bytes {
            break;
        }
        if keep.contains(&path.as_path()) {
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => {
                total -= len;
                removed += 1;
                freed += len;
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot remove a plugin artifact")
            }
        }
    }
    tracing::info!(
        dir = %cache.dir.display(), removed, freed_bytes = freed, held_bytes = total,
        max_bytes = cache.max_bytes, "plugin artifact cache trimmed to its bound (least recently used first)"
    );
}

/// How old a temporary file of the cache must be to be taken for one a
/// crash left behind: far longer than any write of an artifact.
const ABANDONED_AFTER: Duration = Duration::from_secs(3600);

/// Only artifacts this user wrote into its private directory are loaded.
pub(super) fn trusted_artifact(path: &Path) -> bool {
    let private = |p: &Path, forbidden: u32| {
        std::fs::metadata(p).is_ok_and(|m| m.uid() == euid() && m.mode() & forbidden == 0)
    };
    path.parent().is_some_and(|dir| private(dir, 0o077)) && private(path, 0o022)
}

/// Why an artifact in the cache is not loaded.
#[derive(Debug, thiserror::Error)]
enum ArtifactError {
    #[error("cannot read it")]
    Read(#[source] std::io::Error),
    #[error("it is not a GRW artifact of this format (no `GRWART2` header)")]
    NotOurs,
    #[error("its content does not match its SHA-256: the file is corrupt")]
    Corrupt,
    #[error("wasmtime refused it")]
    Refused(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The bytes of an artifact file: [`ARTIFACT_MAGIC`], the SHA-256 of the
/// serialized component, the serialized component.
fn artifact_bytes(component: &Component) -> std::io::Result<Vec<u8>> {
    let serialized = component.serialize().map_err(std::io::Error::other)?;
    let mut bytes = Vec::with_capacity(ARTIFACT_HEADER + serialized.len());
    bytes.extend_from_slice(ARTIFACT_MAGIC);
    bytes.extend_from_slice(&Sha256::digest(&serialized));
    bytes.extend_from_slice(&serialized);
    Ok(bytes)
}

/// Loads an artifact after checking its digest.
fn load_artifact(engine: &Engine, path: &Path) -> Result<Component, ArtifactError> {
    let bytes = std::fs::read(path).map_err(ArtifactError::Read)?;
    if bytes.len() < ARTIFACT_HEADER || !bytes.starts_with(ARTIFACT_MAGIC) {
        return Err(ArtifactError::NotOurs);
    }
    let (digest, serialized) = bytes[ARTIFACT_MAGIC.len()..].split_at(32);
    if Sha256::digest(serialized).as_slice() != digest {
        return Err(ArtifactError::Corrupt);
    }
    // SAFETY: wasmtime requires that deserialized artifacts come from a
    // trusted source and are not corrupt. `trusted_artifact` checked that
    // the file lives in our own 0700 directory, is owned by our user and
    // writable only by it, so only this process's user could have written
    // it, and GRW writes artifacts only from `Component::serialize`; the
    // digest just checked is the one computed from those bytes then.
    unsafe { Component::deserialize(engine, serialized) }
        .map_err(|e| ArtifactError::Refused(PluginError::source_of(e)))
}

/// Writes through a temporary file and a rename, so a crash never leaves a
/// truncated artifact under the final name.
fn store_artifact(path: &Path, component: &Component) -> std::io::Result<()> {
    write_private(path, &artifact_bytes(component)?)
}

/// A name for a temporary file beside `path` that no other write uses: the
/// process, a counter and a random number. (`x.cwasm` and `x.functions`
/// of one compile, and two processes writing the same file, each get
/// their own.) It ends in `.tmp`, which [`prune`] does not count.
fn temporary_name(path: &Path) -> PathBuf {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let random =
        std::collections::hash_map::RandomState::new().hash_one(WRITES.load(Ordering::Relaxed));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(
        ".{name}.{}.{}.{random:016x}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Writes a file of mode 0600 through a temporary file and a rename.
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temporary_name(path);
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
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

    /// Three different components, in the binary format (GRW's wasmtime
    /// reads no text): `(component)`, `(component (core module))` and
    /// `(component (core module (func)))`. A component's preamble is
    /// `\0asm`, version 0x0d, layer 1; a core module is its section 1.
    const COMPONENTS: [&[u8]; 3] = [
        b"\0asm\x0d\0\x01\0",
        b"\0asm\x0d\0\x01\0\x01\x08\0asm\x01\0\0\0",
        // The module's type (() -> ()), function and code sections.
        b"\0asm\x0d\0\x01\0\x01\x18\0asm\x01\0\0\0\x01\x04\x01\x60\0\0\x03\x02\x01\0\x0a\x04\x01\x02\0\x0b",
    ];

    /// `(component (core module (func) (func nop)))`: the function of
    /// `COMPONENTS[2]`, and another.
    const TWO_FUNCTIONS: &[u8] = b"\0asm\x0d\0\x01\0\x01\x1d\0asm\x01\0\0\0\x01\x04\x01\x60\0\0\x03\x03\x02\0\0\x0a\x08\x02\x02\0\x0b\x03\0\x01\x0b";

    fn artifacts(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".cwasm"))
            .collect();
        names.sort();
        names
    }

    fn artifact_of(dir: &Path, wasm: &[u8]) -> String {
        let hash = component_hash(wasm);
        artifacts(dir)
            .into_iter()
            .find(|n| n.starts_with(&hash))
            .unwrap_or_else(|| panic!("no artifact of {wasm:?}"))
    }

    #[test]
    fn the_cache_names_its_format_and_refuses_a_newer_one() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::new(dir.path().join("c"));
        let engine = PluginEngine::new(Some(cache.clone())).unwrap();
        assert!(engine.cache().is_some());
        let format = std::fs::read_to_string(cache.dir.join(FORMAT_FILE)).unwrap();
        assert_eq!(
            format,
            format!("grw-plugin-artifact-cache {CACHE_FORMAT}\n")
        );
        assert!(!engine.compile(COMPONENTS[0]).unwrap().from_cache);
        assert!(engine.compile(COMPONENTS[0]).unwrap().from_cache);

        std::fs::write(
            cache.dir.join(FORMAT_FILE),
            format!("grw-plugin-artifact-cache {}\n", CACHE_FORMAT + 1),
        )
        .unwrap();
        let engine = PluginEngine::new(Some(cache.clone())).unwrap();
        assert!(engine.cache().is_none());
        assert_eq!(
            engine.cache_refused().unwrap(),
            format!(
                "plugin artifact cache {} not used: it has format {}, written by a newer GRW (this one reads format {CACHE_FORMAT}); set pluginCacheDir to another directory, or remove this one; every plugin is compiled at each start",
                cache.dir.display(),
                CACHE_FORMAT + 1
            )
        );
        // Plugins still load, compiled, and the newer cache is left alone.
        assert!(!engine.compile(COMPONENTS[0]).unwrap().from_cache);
        assert_eq!(artifacts(&cache.dir).len(), 1);
    }

    #[test]
    fn the_cache_keeps_to_its_bound_dropping_the_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let unbounded = ArtifactCache {
            dir: dir.path().join("c"),
            max_bytes: u64::MAX,
        };
        let engine = PluginEngine::new(Some(unbounded.clone())).unwrap();
        let mut sizes = Vec::new();
        for wasm in COMPONENTS {
            engine.compile(wasm).unwrap();
            let name = artifact_of(&unbounded.dir, wasm);
            sizes.push(std::fs::metadata(unbounded.dir.join(name)).unwrap().len());
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(artifacts(&unbounded.dir).len(), 3);
        let c = artifact_of(&unbounded.dir, COMPONENTS[2]);
        std::fs::remove_file(unbounded.dir.join(&c)).unwrap();

        // Room for the three minus a byte: one must go when C comes back.
        let bounded = ArtifactCache {
            max_bytes: sizes.iter().sum::<u64>() - 1,
            ..unbounded.clone()
        };
        let engine = PluginEngine::new(Some(bounded.clone())).unwrap();
        // A is used again: B is now the least recently used.
        assert!(engine.compile(COMPONENTS[0]).unwrap().from_cache);
        std::thread::sleep(Duration::from_millis(20));
        assert!(!engine.compile(COMPONENTS[2]).unwrap().from_cache);
        let a = artifact_of(&bounded.dir, COMPONENTS[0]);
        assert_eq!(artifacts(&bounded.dir), {
            let mut kept = vec![a, c];
            kept.sort();
            kept
        });

        // A bound below one artifact keeps the one just written.
        let tiny = ArtifactCache {
            max_bytes: 1,
            ..unbounded
        };
        let engine = PluginEngine::new(Some(tiny.clone())).unwrap();
        assert!(artifacts(&tiny.dir).is_empty(), "trimmed when opened");
        engine.compile(COMPONENTS[1]).unwrap();
        assert_eq!(
            artifacts(&tiny.dir),
            [artifact_of(&tiny.dir, COMPONENTS[1])]
        );
    }

    #[test]
    fn a_compile_reuses_the_functions_of_an_earlier_one() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::new(dir.path().join("c"));
        let engine = PluginEngine::new(Some(cache.clone())).unwrap();
        let first = engine.compile(COMPONENTS[2]).unwrap();
        let first = first.functions.unwrap();
        assert!(first.compiled > 0, "{first:?}");
        let artifact = artifact_of(&cache.dir, COMPONENTS[2]);
        let pack = cache.dir.join(artifact.replace(".cwasm", ".functions"));
        assert!(pack.exists(), "no pack beside {artifact}");

        // After a restart, a component with that function and another
        // compiles only the other.
        let engine = PluginEngine::new(Some(cache.clone())).unwrap();
        let second = engine.compile(TWO_FUNCTIONS).unwrap();
        // Everything the first compiled (the function, and the trampolines
        // of its type) comes again; only the `nop` function is new.
        assert_eq!(
            second.functions,
            Some(FunctionReuse {
                reused: first.compiled,
                compiled: 1
            })
        );
        // What it wrote is only what it compiled; both packs are used by
        // a third compile, which compiles nothing.
        std::fs::remove_file(cache.dir.join(artifact_of(&cache.dir, TWO_FUNCTIONS))).unwrap();
        let third = engine.compile(TWO_FUNCTIONS).unwrap();
        assert!(!third.from_cache);
        assert_eq!(third.functions.map(|f| f.compiled), Some(0));

        // Without a cache, nothing is kept or reused, or counted.
        let uncached = PluginEngine::new(None).unwrap();
        assert_eq!(uncached.compile(TWO_FUNCTIONS).unwrap().functions, None);
    }

    #[test]
    fn a_corrupt_artifact_is_removed_and_compiled_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::new(dir.path().join("c"));
        let engine = PluginEngine::new(Some(cache.clone())).unwrap();
        assert!(!engine.compile(COMPONENTS[2]).unwrap().from_cache);
        let path = cache.dir.join(artifact_of(&cache.dir, COMPONENTS[2]));
        let good = std::fs::read(&path).unwrap();
        assert!(good.starts_with(ARTIFACT_MAGIC));

        // One byte of the machine code changed: never handed to wasmtime.
        let mut corrupt = good.clone();
        let last = corrupt.len() - 1;
        corrupt[last] ^= 0xff;
        std::fs::write(&path, &corrupt).unwrap();
        assert!(matches!(
            load_artifact(engine.engine(), &path),
            Err(ArtifactError::Corrupt)
        ));
        assert!(!engine.compile(COMPONENTS[2]).unwrap().from_cache);
        assert!(
            load_artifact(engine.engine(), &path).is_ok(),
            "written again"
        );
        assert!(engine.compile(COMPONENTS[2]).unwrap().from_cache);

        // Cut short, and an artifact of the earlier layout (no header).
        for bad in [&good[..20], &good[ARTIFACT_HEADER..]] {
            std::fs::write(&path, bad).unwrap();
            assert!(matches!(
                load_artifact(engine.engine(), &path),
                Err(ArtifactError::NotOurs)
            ));
            assert!(!engine.compile(COMPONENTS[2]).unwrap().from_cache);
            assert!(engine.compile(COMPONENTS[2]).unwrap().from_cache);
        }
    }

    #[test]
    fn a_cache_of_the_earlier_format_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::new(dir.path().join("c"));
        std::fs::create_dir_all(&cache.dir).unwrap();
        std::fs::write(cache.dir.join(FORMAT_FILE), "grw-plugin-artifact-cache 1\n").unwrap();
        let engine = PluginEngine::new(Some(cache.clone())).unwrap();
        assert!(engine.cache().is_some());
        assert_eq!(
            std::fs::read_to_string(cache.dir.join(FORMAT_FILE)).unwrap(),
            format!("grw-plugin-artifact-cache {CACHE_FORMAT}\n")
        );
    }

    #[test]
    fn every_write_has_a_temporary_name_of_its_own() {
        let artifact = Path::new("/c/abc-123.cwasm");
        let pack = FunctionStore::pack_of(artifact);
        let names = [
            temporary_name(artifact),
            temporary_name(artifact),
            temporary_name(&pack),
        ];
        for (i, name) in names.iter().enumerate() {
            assert_eq!(name.parent(), Some(Path::new("/c")));
            assert_eq!(name.extension().unwrap(), "tmp", "{name:?}");
            for other in &names[i + 1..] {
                assert_ne!(name, other);
            }
        }
        let file = names[2].file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            file.starts_with(&format!(".abc-123.functions.{}.", std::process::id())),
            "{file}"
        );
        // A file written through one is complete, private, and leaves no
        // temporary file behind.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.cwasm");
        write_private(&path, b"one").unwrap();
        write_private(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn concurrent_compiles_of_the_same_bytes_compile_once() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ArtifactCache::new(dir.path().join("c"));
        let engine = PluginEngine::new(Some(cache.clone())).unwrap();
        let barrier = std::sync::Barrier::new(4);
        let results: Vec<Compiled> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        engine.compile(TWO_FUNCTIONS).unwrap()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        // Only a compile reports the functions it compiled; the others
        // took its component, or its artifact.
        let compiled = results.iter().filter(|c| c.functions.is_some()).count();
        assert_eq!(compiled, 1);
        assert!(engine.by_hash.lock().is_empty(), "nothing is kept after");
        assert_eq!(artifacts(&cache.dir).len(), 1);
    }
}
