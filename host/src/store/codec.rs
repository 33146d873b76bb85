//! Objects at rest: compressed with a dictionary trained on the objects of
//! their own cache.
//!
//! Objects of one kind are much alike: a Pod's 4.3 KB of JSON repeats the
//! same keys, images, probes, volume mounts and conditions as its siblings,
//! and differs in names, uids, IPs and timestamps. A compressor working on
//! one Pod at a time sees none of that repetition; given a dictionary of
//! what the cache's Pods have in common, it keeps a Pod in a fraction of its
//! size (see BENCHMARKS.md for the resident memory per Pod, before and
//! after). So each cache has a [`Codec`]: it collects
//! the JSON of the first objects it sees, trains a zstd dictionary on them,
//! and compresses every later object with it.
//!
//! Objects change shape over time (a new workload, a new release of a
//! controller adding fields), and a dictionary trained on the old shape
//! compresses the new one worse. The codec watches the ratio it achieves,
//! window by window; when a window compresses much worse than the first
//! one after training, it collects new samples and trains again. Each
//! compressed object holds the dictionary it was compressed with, so
//! objects compressed with an older dictionary keep reading the same, and
//! an old dictionary is freed when its last object goes. What it takes to
//! compress with a dictionary (zstd's match tables: 440 KB for a 32 KB
//! dictionary, where reading takes 60 KB) is kept only while it is the current
//! one: a list in namespace and name order walks from one workload to the
//! next and retrains as it goes (more than a hundred times over a million
//! generated Pods), and the older dictionaries are only read. Nothing waits
//! for a training: it runs in the writer's thread, outside the cache's
//! lock, while readers keep answering from the objects already stored.
//!
//! Until a cache has seen enough to train on ([`TRAIN_AT_BYTES`] of JSON),
//! its objects stay as they are: a kind with a handful of objects does not
//! pay for a dictionary.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use sha2::{Digest, Sha256};
use zstd_safe::{CCtx, CDict, DCtx, DDict};

use super::object::StoredObject;

/// JSON collected before the first training (and each retraining): zstd's
/// guidance is about 100 times the dictionary's size of samples, and
/// objects stored before the first training stay uncompressed, so it is
/// not more than that.
pub(super) const TRAIN_AT_BYTES: usize = 1 << 20;
/// Fewer objects than this, however large, make a poor dictionary.
const MIN_SAMPLES: usize = 32;
/// The most of one object taken as a sample: its beginning holds what the
/// kind's objects share.
const MAX_SAMPLE: usize = 64 << 10;
/// Dictionary size, a choice not yet tuned by measurement: the dictionary
/// and zstd's tables built from it are kept once per trained cache.
const DICTIONARY_BYTES: usize = 32 << 10;
/// zstd's default level. Levels 1 and -1 stored a Pod no faster in an
/// ingest benchmark (within 1 µs of 34 µs) and kept it 4% and 18% larger.
const LEVEL: i32 = 3;
/// The most room a thread keeps between two compressions.
const KEPT_PACKED_CAPACITY: usize = 1 << 20;
/// The compression achieved is judged over windows of this much JSON.
const WINDOW_BYTES: u64 = 8 << 20;
/// A window compressing to more than this times the size the first window
/// after a training achieved calls for a new dictionary.
const DEGRADED: f64 = 1.5;
/// Trainings that fail in a row (objects with too little in common) before
/// the codec stops trying.
const MAX_FAILED_TRAININGS: u32 = 3;

/// A trained dictionary, shared by the objects compressed with it: what
/// reading them takes, and the trained bytes themselves, so that the
/// journal can keep an object's compressed body as the cache holds it and
/// still read it once the cache has moved on (32 KiB a dictionary).
pub struct Dictionary {
    generation: u32,
    id: u64,
    trained: Box<[u8]>,
    decompress: DDict<'static>,
}

/// The dictionary new objects are compressed with, and zstd's tables for
/// compressing with it, which only the codec holds (and writers while they
/// compress a page).
#[derive(Clone)]
struct Current {
    dictionary: Arc<Dictionary>,
    compress: Arc<CDict<'static>>,
}

impl Dictionary {
    fn train(samples: &Samples, generation: u32) -> Option<Current> {
        let trained = fast_cover(samples)?;
        Some(Current {
            compress: Arc::new(CDict::try_create(&trained, LEVEL)?),
            dictionary: Arc::new(Dictionary::read(&trained, generation)),
        })
    }

    /// A dictionary for reading, from its trained bytes.
    pub fn read(trained: &[u8], generation: u32) -> Dictionary {
        let digest = Sha256::digest(trained);
        let mut id = [0u8; 8];
        id.copy_from_slice(&digest[..8]);
        Dictionary {
            generation,
            id: u64::from_le_bytes(id),
            trained: trained.into(),
            decompress: DDict::create(trained),
        }
    }

    /// Its identity: the first eight bytes of the SHA-256 of its trained
    /// bytes. Two dictionaries with the same id read the same.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The trained bytes: [`Dictionary::read`] makes it again from them.
    pub fn trained(&self) -> &[u8] {
        &self.trained
    }

    /// `bytes` compressed with this dictionary, read back: `None` if they
    /// are not `len` bytes so compressed.
    pub fn decompress(&self, bytes: &[u8], len: u32) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.decompress_into(&mut out, bytes, len).then_some(out)
    }

    /// Appends to `out` what `bytes`, `len` bytes compressed with this
    /// dictionary, read back; whether they did (else `out` is as it was).
    fn decompress_into(&self, out: &mut Vec<u8>, bytes: &[u8], len: u32) -> bool {
        let start = out.len();
        out.resize(start + len as usize, 0);
        let written = DECOMPRESSOR.with_borrow_mut(|dctx| {
            dctx.decompress_using_ddict(&mut out[start..], bytes, &self.decompress)
        });
        if written.ok() == Some(len as usize) {
            return true;
        }
        out.truncate(start);
        false
    }

    /// Which training of its cache made this dictionary: 1 for the first.
    pub fn generation(&self) -> u32 {
        self.generation
    }
}

/// A dictionary trained on `samples` by zstd's fastCover with fixed
/// parameters. zstd's plain `ZDICT_trainFromBuffer` searches for the best
/// segment size `k` by training four dictionaries and compressing part of
/// the samples with each; over the Pods of the benchmarks it settles on
/// dictionaries that keep a Pod no smaller than the one trained with `k` =
/// 2000 (0.093 to 0.094 of its JSON, on three stretches of 20,000 Pods),
/// in a quarter to a third of the time (12 to 15 ms against 40 to 68 ms
/// for 1 MiB of samples). A list of a million Pods trains more than a
/// hundred times.
fn fast_cover(samples: &Samples) -> Option<Vec<u8>> {
    use zstd_safe::zstd_sys::{
        ZDICT_fastCover_params_t, ZDICT_isError, ZDICT_params_t, ZDICT_trainFromBuffer_fastCover,
    };
    let params = ZDICT_fastCover_params_t {
        k: 2000,
        d: 8,
        // zstd's defaults: 2^20 frequency counters, no acceleration.
        f: 20,
        accel: 1,
        // No search: one training on all the samples.
        steps: 0,
        splitPoint: 1.0,
        nbThreads: 0,
        shrinkDict: 0,
        shrinkDictMaxRegression: 0,
        zParams: ZDICT_params_t {
            compressionLevel: LEVEL,
            notificationLevel: 0,
            dictID: 0,
        },
    };
    let mut trained = vec![0u8; DICTIONARY_BYTES];
    let count = u32::try_from(samples.sizes.len()).ok()?;
    // SAFETY: each pointer is valid for the length passed with it:
    // `trained` for its length, `samples.data` for the sum of
    // `samples.sizes` (`Samples::add` grows both together), `samples.sizes`
    // for `count` entries. zstd reads and writes within them and keeps no
    // pointer once it returns.
    let written = unsafe {
        ZDICT_trainFromBuffer_fastCover(
            trained.as_mut_ptr().cast(),
            trained.len(),
            samples.data.as_ptr().cast(),
            samples.sizes.as_ptr(),
            count,
            params,
        )
    };
    // SAFETY: a pure function of the number.
    if unsafe { ZDICT_isError(written) } != 0 {
        return None;
    }
    trained.truncate(written);
    Some(trained)
}

thread_local! {
    static COMPRESSOR: RefCell<CCtx<'static>> = RefCell::new(CCtx::create());
    /// Where an object is compressed before it is copied to a box of its
    /// size: one allocation per object instead of one of the largest
    /// possible size, shrunk.
    static PACKED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static DECOMPRESSOR: RefCell<DCtx<'static>> = RefCell::new(DCtx::create());
}

/// An object's JSON as the cache holds it.
pub(super) enum Body {
    /// As it is.
    Plain(Box<[u8]>),
    /// Compressed with `dictionary`; `len` bytes of JSON.
    Packed {
        bytes: Box<[u8]>,
        len: u32,
        dictionary: Arc<Dictionary>,
    },
}

impl Body {
    /// Length of the JSON.
    pub(super) fn len(&self) -> usize {
        match self {
            Body::Plain(json) => json.len(),
            Body::Packed { len, .. } => *len as usize,
        }
    }

    /// Bytes held for this body alone (not its shared dictionary).
    pub(super) fn heap_bytes(&self) -> usize {
        match self {
            Body::Plain(json) => json.len(),
            Body::Packed { bytes, .. } => bytes.len(),
        }
    }

    /// The compressed bytes, the JSON's length and the dictionary, when
    /// it is compressed.
    pub(super) fn packed(&self) -> Option<(&[u8], u32, &Arc<Dictionary>)> {
        match self {
            Body::Plain(_) => None,
            Body::Packed {
                bytes,
                len,
                dictionary,
            } => Some((bytes, *len, dictionary)),
        }
    }

    /// The dictionary it was compressed with, if any.
    pub(super) fn dictionary(&self) -> Option<&Arc<Dictionary>> {
        match self {
            Body::Plain(_) => None,
            Body::Packed { dictionary, .. } => Some(dictionary),
        }
    }

    /// The JSON: borrowed when plain, decompressed otherwise.
    pub(super) fn json(&self) -> Cow<'_, [u8]> {
        match self {
            Body::Plain(json) => Cow::Borrowed(json),
            Body::Packed { .. } => {
                let mut out = Vec::new();
                self.write_to(&mut out);
                Cow::Owned(out)
            }
        }
    }

    /// Appends the JSON to `out`, decompressing straight into it.
    pub(super) fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Body::Plain(json) => out.extend_from_slice(json),
            Body::Packed {
                bytes,
                len,
                dictionary,
            } => {
                // The bytes were compressed by this process from `len`
                // bytes with this very dictionary; anything else is memory
                // corruption, which no answer should be built from.
                assert!(
                    dictionary.decompress_into(out, bytes, *len),
                    "a stored object failed to decompress"
                );
            }
        }
    }
}

/// JSON of objects to train on, end to end.
#[derive(Default)]
struct Samples {
    data: Vec<u8>,
    sizes: Vec<usize>,
}

impl Samples {
    fn add(&mut self, json: &[u8]) {
        let sample = &json[..json.len().min(MAX_SAMPLE)];
        self.data.extend_from_slice(sample);
        self.sizes.push(sample.len());
    }

    fn ready(&self) -> bool {
        self.data.len() >= TRAIN_AT_BYTES && self.sizes.len() >= MIN_SAMPLES
    }
}

/// How well one cache's objects compress, and the dictionary to compress
/// the next ones with.
#[derive(Default)]
pub(super) struct Codec {
    state: Mutex<CodecState>,
    /// Signalled when a training ends.
    trained: Condvar,
}

#[derive(Default)]
struct CodecState {
    dictionary: Option<Current>,
    /// Collecting samples for the next training; `None` while the current
    /// dictionary does well (or a training is under way).
    samples: Option<Samples>,
    /// JSON bytes in and compressed bytes out in the current window.
    window: (u64, u64),
    /// The ratio of the first window after the last training.
    baseline: Option<f64>,
    trainings: u32,
    failed: u32,
    /// A writer is training a dictionary.
    training: bool,
}

/// What a cache's codec has done, for tests and the benchmarks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompressionStats {
    /// Dictionaries trained so far.
    pub trainings: u32,
    /// Compressed size over JSON size in the window before the current one
    /// (or the current one while it is the first), if any object was
    /// compressed yet.
    pub ratio: Option<f64>,
}

impl Codec {
    pub(super) fn new() -> Codec {
        Codec {
            state: Mutex::new(CodecState {
                samples: Some(Samples::default()),
                ..CodecState::default()
            }),
            trained: Condvar::new(),
        }
    }

    /// Compresses the plain bodies among `objects` (one page of a list, or
    /// one object), training a dictionary first when enough has been seen.
    pub(super) fn pack(&self, objects: &mut [StoredObject]) {
        let current = self.sample_and_train(objects);
        let Some(Current {
            dictionary,
            compress: tables,
        }) = current
        else {
            return;
        };
        let (mut plain, mut packed) = (0u64, 0u64);
        for object in objects {
            let body = object.body_mut();
            let Body::Plain(json) = body else { continue };
            let Some(bytes) = compress(json, &tables) else {
                continue;
            };
            plain += json.len() as u64;
            packed += bytes.len() as u64;
            *body = Body::Packed {
                len: json.len() as u32,
                bytes,
                dictionary: dictionary.clone(),
            };
        }
        self.judge(&dictionary, plain, packed);
    }

    /// The dictionary to compress new objects with as they are read, when
    /// the codec has one and is not collecting samples for the next: then
    /// an object's JSON can go from the text received straight to its
    /// compressed form ([`Packer::body`]), with no plain copy in between.
    /// `None` while objects must go through [`Codec::pack`].
    pub(super) fn packer(&self) -> Option<Packer<'_>> {
        let state = self.state.lock();
        if state.samples.is_some() || state.training {
            return None;
        }
        Some(Packer {
            codec: self,
            current: state.dictionary.clone()?,
            counted: Default::default(),
        })
    }

    /// Adds the bodies to the samples being collected, trains when there
    /// are enough, and returns the dictionary to compress with.
    fn sample_and_train(&self, objects: &[StoredObject]) -> Option<Current> {
        let mut state = self.state.lock();
        // While another writer trains the first dictionary, wait for it
        // rather than keep plain what it is about to compress (pages of a
        // list are stored on several threads).
        while state.training && state.dictionary.is_none() {
            self.trained.wait(&mut state);
        }
        let Some(samples) = &mut state.samples else {
            return state.dictionary.clone();
        };
        for object in objects {
            if let Body::Plain(json) = object.body() {
                samples.add(json);
            }
        }
        if !samples.ready() {
            return state.dictionary.clone();
        }
        let samples = state.samples.take()?;
        let generation = state.trainings + 1;
        state.training = true;
        drop(state);
        // Outside the lock, so the cache keeps answering and other writers
        // compress with the current dictionary meanwhile.
        let trained = Dictionary::train(&samples, generation);
        let mut state = self.state.lock();
        state.training = false;
        self.trained.notify_all();
        match trained {
            Some(dictionary) => {
                tracing::debug!(
                    generation,
                    samples = samples.sizes.len(),
                    "trained a dictionary"
                );
                state.trainings = generation;
                state.failed = 0;
                state.dictionary = Some(dictionary);
                state.window = (0, 0);
                state.baseline = None;
            }
            None => {
                state.failed += 1;
                tracing::debug!(failed = state.failed, "training a dictionary failed");
                if state.failed < MAX_FAILED_TRAININGS {
                    state.samples = Some(Samples::default());
                }
            }
        }
        state.dictionary.clone()
    }

    /// Counts what a pack achieved; starts collecting samples for a new
    /// dictionary when a whole window compressed much worse than the first
    /// window after training.
    fn judge(&self, used: &Dictionary, plain: u64, packed: u64) {
        let mut state = self.state.lock();
        let current = state.dictionary.as_ref().map(|c| c.dictionary.generation);
        if current != Some(used.generation) || plain == 0 {
            return;
        }
        state.window.0 += plain;
        state.window.1 += packed;
        if state.window.0 < WINDOW_BYTES {
            return;
        }
        let ratio = state.window.1 as f64 / state.window.0 as f64;
        state.window = (0, 0);
        match state.baseline {
            None => state.baseline = Some(ratio),
            Some(baseline) if ratio > baseline * DEGRADED && state.samples.is_none() => {
                tracing::debug!(baseline, ratio, "compression degraded, collecting samples");
                state.samples = Some(Samples::default());
            }
            Some(_) => {}
        }
    }

    pub(super) fn stats(&self) -> CompressionStats {
        let state = self.state.lock();
        let (plain, packed) = state.window;
        CompressionStats {
            trainings: state.trainings,
            ratio: state
                .baseline
                .or((plain > 0).then(|| packed as f64 / plain as f64)),
        }
    }
}

/// Compresses a cache's objects one by one, as they are read, with the
/// dictionary that was current when it was made (`Cache::packer`), and
/// tells the cache how well that went when dropped.
pub struct Packer<'c> {
    codec: &'c Codec,
    current: Current,
    /// JSON bytes in and compressed bytes out.
    counted: std::cell::Cell<(u64, u64)>,
}

impl Packer<'_> {
    /// The body of an object whose JSON is `json`: compressed, or a plain
    /// copy when compressing would not make it smaller.
    pub(super) fn body(&self, json: &[u8]) -> Body {
        match compress(json, &self.current.compress) {
            Some(bytes) => {
                let (plain, packed) = self.counted.get();
                self.counted
                    .set((plain + json.len() as u64, packed + bytes.len() as u64));
                Body::Packed {
                    len: json.len() as u32,
                    bytes,
                    dictionary: self.current.dictionary.clone(),
                }
            }
            None => Body::Plain(json.into()),
        }
    }
}

impl Drop for Packer<'_> {
    fn drop(&mut self) {
        let (plain, packed) = self.counted.get();
        self.codec.judge(&self.current.dictionary, plain, packed);
    }
}

/// `json` compressed with a dictionary's `tables`, or `None` when that is
/// no smaller.
fn compress(json: &[u8], tables: &CDict<'static>) -> Option<Box<[u8]>> {
    PACKED.with_borrow_mut(|out| {
        out.clear();
        out.reserve(zstd_safe::compress_bound(json.len()));
        let written =
            COMPRESSOR.with_borrow_mut(|cctx| cctx.compress_using_cdict(&mut *out, json, tables));
        let packed = match written {
            Ok(n) if n < json.len() => Some(Box::from(&out[..])),
            _ => None,
        };
        // A rare large object does not keep its room in every thread.
        if out.capacity() > KEPT_PACKED_CAPACITY {
            *out = Vec::new();
        }
        packed
    })
}

#[cfg(test)]
mod tests;
