//! Compiled functions kept from one compile to the next, so that a component
//! compiles only the functions no earlier compile did.
//!
//! A Python plugin is a component of about 19 MB, nearly all of it the
//! CPython interpreter that every Python plugin carries, byte for byte; a
//! new version of any plugin changes a few of its functions. Before
//! compiling a function, Cranelift hashes its input (the function, the
//! target and the settings) and asks a store for machine code of that hash
//! (wasmtime's incremental compilation); what it had to compile, it hands to
//! the store.
//!
//! This store lives in the artifact cache. Each compile that was written
//! to the cache also writes the functions it compiled into a *pack*,
//! `HASH-ENGINE.functions` beside its `HASH-ENGINE.cwasm`; each compile
//! looks functions up in every pack of the cache. Packs are trimmed with
//! the artifacts, least recently used first, and a pack that gave a compile
//! any function counts as used then. A function whose pack is gone is
//! compiled again.
//!
//! A pack is `MAGIC`, the number of functions (u32), one index entry per
//! function (the 32-byte hash, the offset of its code in the file as u64,
//! the code's length as u32, little-endian, and the SHA-256 of the code),
//! then the code. A pack that does not read as one is not used; a
//! function whose code does not match its digest (a damaged disk, a write
//! cut short) is compiled again rather than run, as a damaged artifact is
//! (see [`super::engine`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::RwLock;
use sha2::{Digest, Sha256};
use wasmtime::CacheStore;

use super::engine::{touch, trusted_artifact, write_private};

/// The first bytes of a pack; the digit names the layout.
const MAGIC: &[u8; 8] = b"GRWFUNC2";

/// Bytes of one index entry: hash, offset, length, digest.
const ENTRY: usize = 32 + 8 + 4 + 32;

/// The hash Cranelift names a function's input by (SHA-256).
type Key = [u8; 32];

/// A pack's index: each function's hash, and its code's place and digest.
type PackIndex = Vec<(Key, Packed)>;

/// Where a function's code is in its pack, and its SHA-256.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Packed {
    offset: u64,
    len: u32,
    digest: [u8; 32],
}

/// The packs of one artifact cache, read while compiles run.
pub(super) struct FunctionStore {
    dir: PathBuf,
    /// Open while at least one compile runs; the packs' indexes and the
    /// functions compiled since it opened.
    session: RwLock<Option<Session>>,
}

struct Session {
    /// Compiles using the session.
    users: usize,
    index: HashMap<Key, Place>,
    packs: Vec<Pack>,
    /// Functions compiled in this session; `fresh[..written]` are in a pack.
    fresh: Vec<(Key, Vec<u8>)>,
    written: usize,
    /// Functions given to a compile, and handed over by one.
    reused: AtomicUsize,
    compiled: AtomicUsize,
}

struct Pack {
    path: PathBuf,
    file: File,
    /// Whether it gave a compile of this session a function.
    served: AtomicBool,
}

enum Place {
    Packed { pack: usize, at: Packed },
    Fresh(usize),
}

/// How a compile's functions were obtained.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FunctionReuse {
    /// Functions whose machine code came from an earlier compile.
    pub reused: usize,
    /// Functions compiled.
    pub compiled: usize,
}

impl FunctionStore {
    /// The store of the artifact cache in `dir`.
    pub(super) fn new(dir: PathBuf) -> FunctionStore {
        FunctionStore {
            dir,
            session: RwLock::new(None),
        }
    }

    /// The pack of the component whose artifact is `artifact`.
    pub(super) fn pack_of(artifact: &Path) -> PathBuf {
        artifact.with_extension("functions")
    }

    /// Opens the session for one compile (reading the index of every pack
    /// of `engine`, the engine's compatibility hash, if no other compile
    /// has it open); [`Compiling::finish`] closes it.
    pub(super) fn begin(&self, engine: &str) -> Compiling<'_> {
        let mut session = self.session.write();
        let session = session.get_or_insert_with(|| self.open(engine));
        session.users += 1;
        Compiling {
            store: self,
            start: session.counts(),
            done: false,
        }
    }

    fn open(&self, engine: &str) -> Session {
        let suffix = format!("-{engine}.functions");
        let mut session = Session {
            users: 0,
            index: HashMap::new(),
            packs: Vec::new(),
            fresh: Vec::new(),
            written: 0,
            reused: AtomicUsize::new(0),
            compiled: AtomicUsize::new(0),
        };
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return session;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let ours = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&suffix));
            if !ours || !trusted_artifact(&path) {
                continue;
            }
            let Some((file, index)) = read_index(&path) else {
                tracing::debug!(path = %path.display(), "not a pack of compiled functions; not used");
                continue;
            };
            let pack = session.packs.len();
            for (key, at) in index {
                session
                    .index
                    .entry(key)
                    .or_insert(Place::Packed { pack, at });
            }
            session.packs.push(Pack {
                path,
                file,
                served: AtomicBool::new(false),
            });
        }
        session
    }

    /// Writes the session's functions not yet in a pack to `pack`, and
    /// closes the session for one compile; the session's counts then.
    fn end(&self, pack: Option<&Path>) -> FunctionReuse {
        let mut guard = self.session.write();
        let Some(session) = guard.as_mut() else {
            return FunctionReuse::default();
        };
        if let Some(path) = pack
            && session.written < session.fresh.len()
        {
            match write_pack(path, &session.fresh[session.written..]) {
                Ok(()) => session.written = session.fresh.len(),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot keep the compiled functions")
                }
            }
        }
        for pack in &session.packs {
            if pack.served.swap(false, Ordering::Relaxed) {
                touch(&pack.path);
            }
        }
        let counts = session.counts();
        session.users -= 1;
        if session.users == 0 {
            *guard = None;
        }
        counts
    }
}

impl Session {
    fn counts(&self) -> FunctionReuse {
        FunctionReuse {
            reused: self.reused.load(Ordering::Relaxed),
            compiled: self.compiled.load(Ordering::Relaxed),
        }
    }
}

/// One compile's use of the store. Dropped without [`finish`](Self::finish)
/// (the compile failed), it keeps nothing.
pub(super) struct Compiling<'a> {
    store: &'a FunctionStore,
    start: FunctionReuse,
    done: bool,
}

impl Compiling<'_> {
    /// Writes the functions compiled since the session opened to `pack`
    /// (unless another compile of the session wrote them already), and
    /// says how this compile's functions were obtained. When two compiles
    /// run at once, each one's figures include the other's.
    pub(super) fn finish(mut self, pack: Option<&Path>) -> FunctionReuse {
        self.done = true;
        let now = self.store.end(pack);
        FunctionReuse {
            reused: now.reused - self.start.reused,
            compiled: now.compiled - self.start.compiled,
        }
    }
}

impl Drop for Compiling<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.store.end(None);
        }
    }
}

impl std::fmt::Debug for FunctionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionStore")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl CacheStore for FunctionStore {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        let key: &Key = key.try_into().ok()?;
        let session = self.session.read();
        let session = session.as_ref()?;
        let code = match session.index.get(key)? {
            Place::Fresh(at) => session.fresh[*at].1.clone(),
            Place::Packed { pack, at } => {
                let pack = &session.packs[*pack];
                let code = read_code(pack, at)?;
                pack.served.store(true, Ordering::Relaxed);
                code
            }
        };
        session.reused.fetch_add(1, Ordering::Relaxed);
        Some(Cow::Owned(code))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let Ok(key) = Key::try_from(key) else {
            return false;
        };
        let mut session = self.session.write();
        let Some(session) = session.as_mut() else {
            return false;
        };
        session.compiled.fetch_add(1, Ordering::Relaxed);
        if session.index.contains_key(&key) {
            return false;
        }
        session.fresh.push((key, value));
        session
            .index
            .insert(key, Place::Fresh(session.fresh.len() - 1));
        true
    }
}

/// The code at `at` in `pack`, if it is what its digest says.
fn read_code(pack: &Pack, at: &Packed) -> Option<Vec<u8>> {
    let mut code = vec![0; at.len as usize];
    pack.file.read_exact_at(&mut code, at.offset).ok()?;
    if Sha256::digest(&code).as_slice() != at.digest {
        tracing::warn!(path = %pack.path.display(), offset = at.offset, "a compiled function does not match its digest; it is compiled again");
        return None;
    }
    Some(code)
}

/// The index of the pack at `path`, checked against its length.
fn read_index(path: &Path) -> Option<(File, PackIndex)> {
    let file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut head = [0; 12];
    file.read_exact_at(&mut head, 0).ok()?;
    if &head[..8] != MAGIC {
        return None;
    }
    let count = u32::from_le_bytes(head[8..].try_into().ok()?) as usize;
    let index_end = 12 + (count as u64).checked_mul(ENTRY as u64)?;
    if index_end > size {
        return None;
    }
    let mut raw = vec![0; count * ENTRY];
    file.read_exact_at(&mut raw, 12).ok()?;
    let mut index = Vec::with_capacity(count);
    for entry in raw.chunks_exact(ENTRY) {
        let key: Key = entry[..32].try_into().ok()?;
        let offset = u64::from_le_bytes(entry[32..40].try_into().ok()?);
        let len = u32::from_le_bytes(entry[40..44].try_into().ok()?);
        let digest = entry[44..].try_into().ok()?;
        if offset < index_end || offset.checked_add(u64::from(len))? > size {
            return None;
        }
        index.push((
            key,
            Packed {
                offset,
                len,
                digest,
            },
        ));
    }
    Some((file, index))
}

/// Writes `functions` as a pack at `path` (mode 0600, through a rename).
fn write_pack(path: &Path, functions: &[(Key, Vec<u8>)]) -> std::io::Result<()> {
    let count = u32::try_from(functions.len()).map_err(std::io::Error::other)?;
    let index_end = 12 + functions.len() * ENTRY;
    let code: usize = functions.iter().map(|(_, code)| code.len()).sum();
    let mut bytes = Vec::with_capacity(index_end + code);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&count.to_le_bytes());
    let mut offset = index_end as u64;
    for (key, code) in functions {
        let len = u32::try_from(code.len()).map_err(std::io::Error::other)?;
        bytes.extend_from_slice(key);
        bytes.extend_from_slice(&offset.to_le_bytes());
        bytes.extend_from_slice(&len.to_le_bytes());
        bytes.extend_from_slice(&Sha256::digest(code));
        offset += u64::from(len);
    }
    for (_, code) in functions {
        bytes.extend_from_slice(code);
    }
    write_private(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> Key {
        [n; 32]
    }

    #[test]
    fn a_pack_reads_back_and_a_damaged_one_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a-e.functions");
        write_pack(
            &path,
            &[(key(1), b"one".to_vec()), (key(2), b"two!".to_vec())],
        )
        .unwrap();
        let (file, index) = read_index(&path).unwrap();
        assert_eq!(index.len(), 2);
        let pack = Pack {
            path: path.clone(),
            file,
            served: AtomicBool::new(false),
        };
        let code = read_code(&pack, &index[1].1).unwrap();
        assert_eq!((index[1].0, code.as_slice()), (key(2), &b"two!"[..]));

        let bytes = std::fs::read(&path).unwrap();
        // One byte of a function's code changed: that function is not
        // used, the other is.
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        let (file, index) = read_index(&path).unwrap();
        let pack = Pack {
            path: path.clone(),
            file,
            served: AtomicBool::new(false),
        };
        assert_eq!(read_code(&pack, &index[1].1), None);
        assert_eq!(read_code(&pack, &index[0].1).as_deref(), Some(&b"one"[..]));
        // The first layout, without digests, is not read.
        let mut first = bytes.clone();
        first[7] = b'1';
        std::fs::write(&path, &first).unwrap();
        assert!(read_index(&path).is_none());
        // Cut short: the last function's code would end past the file.
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(read_index(&path).is_none());
        // Another layout.
        let mut other = bytes.clone();
        other[7] = b'3';
        std::fs::write(&path, &other).unwrap();
        assert!(read_index(&path).is_none());
        // More functions than the file has room for.
        let mut other = bytes;
        other[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &other).unwrap();
        assert!(read_index(&path).is_none());
    }

    #[test]
    fn functions_of_one_compile_serve_the_next_and_a_failed_compile_keeps_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let store = FunctionStore::new(dir.path().to_path_buf());
        // Outside a compile, nothing is kept or given.
        assert!(!store.insert(&key(1), b"one".to_vec()));
        assert!(store.get(&key(1)).is_none());

        let first = store.begin("e");
        assert!(store.insert(&key(1), b"one".to_vec()));
        // Within the compile that made it, too (a component may hold one
        // function twice).
        assert_eq!(store.get(&key(1)).unwrap().as_ref(), b"one");
        let pack = dir.path().join("a-e.functions");
        assert_eq!(
            first.finish(Some(&pack)),
            FunctionReuse {
                reused: 1,
                compiled: 1
            }
        );

        let failed = store.begin("e");
        assert_eq!(store.get(&key(1)).unwrap().as_ref(), b"one");
        assert!(store.insert(&key(2), b"two".to_vec()));
        drop(failed);
        let next = store.begin("e");
        assert!(
            store.get(&key(2)).is_none(),
            "a failed compile keeps nothing"
        );
        assert_eq!(store.get(&key(1)).unwrap().as_ref(), b"one");
        next.finish(None);

        // Packs of another engine, or not private, are not read.
        std::fs::rename(&pack, dir.path().join("a-f.functions")).unwrap();
        let other = store.begin("e");
        assert!(store.get(&key(1)).is_none());
        other.finish(None);
        std::fs::rename(dir.path().join("a-f.functions"), &pack).unwrap();
        std::fs::set_permissions(&pack, std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .unwrap();
        let open = store.begin("e");
        assert!(store.get(&key(1)).is_none());
        open.finish(None);
    }
}
