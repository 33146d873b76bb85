//! What a plugin's store holds: an empty WASI context (no files, no
//! environment, no sockets), its memory limit ([`MemoryLimit`]), its
//! stdout/stderr forwarded into GRW's log with the plugin's name, the
//! objects of the call in progress, and, for notifiers, the one network
//! capability GRW grants ([`Outbound`]).

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{ResourceTable, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::analysis::{CacheReader, Found};
use super::outbound::Outbound;
use crate::gvk::Gvk;
use crate::store::StoredObject;

/// Longest guest output line kept; longer lines are cut so a guest cannot
/// make GRW buffer without bound.
const MAX_LINE: usize = 4096;

/// Per-store state of one plugin instance.
pub(super) struct GuestState {
    pub(super) plugin: Arc<str>,
    wasi: WasiCtx,
    table: ResourceTable,
    pub(super) limits: MemoryLimit,
    /// Outbound HTTP; `None` for kinds that do not import it.
    pub(super) outbound: Option<Outbound>,
    /// The objects of the call in progress, which the guest reads through
    /// its `object` handles: `[0]` the object, `[1]` its previous state.
    /// Empty between calls.
    pub(super) objects: [Option<Arc<StoredObject>>; 2],
    /// The kind of the call's objects (of the last call, between calls).
    pub(super) gvk: Gvk,
    /// For analyzers: the objects the call's cache lookups found, which
    /// the guest reads through handles from `FIRST_FOUND` on. Empty
    /// between calls.
    pub(super) found: Vec<Found>,
    /// What `found` costs the host, counted by `v0_2`: at most the memory
    /// limit. Zero between calls.
    pub(super) found_bytes: usize,
    /// For analyzers: what the call's cache lookups ask. `None` between
    /// calls.
    pub(super) cache: Option<Arc<dyn CacheReader>>,
    /// The `rep` of the call's first object handle: every handle of an
    /// earlier call is below it (see `v0_2`).
    pub(super) base: u32,
}

impl GuestState {
    pub(super) fn new(plugin: Arc<str>, memory_bytes: usize) -> Self {
        let wasi = WasiCtxBuilder::new()
            .stdout(GuestOutput::new(plugin.clone(), "stdout"))
            .stderr(GuestOutput::new(plugin.clone(), "stderr"))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        GuestState {
            wasi,
            table: ResourceTable::new(),
            limits: MemoryLimit { memory_bytes },
            gvk: Gvk::default(),
            outbound: None,
            objects: [None, None],
            found: Vec::new(),
            found_bytes: 0,
            cache: None,
            base: 0,
            plugin,
        }
    }
}

/// The error a guest traps with when it grows its memory past
/// `limits.memoryMb`. GRW's own type, so a failed call is classified by it
/// ([`super::CallFailure::classify`]) rather than by wasmtime's wording.
#[derive(Debug, thiserror::Error)]
#[error("memory would grow to {desired} bytes, over the limit of {limit} bytes (limits.memoryMb)")]
pub struct MemoryLimitExceeded {
    /// The size asked for.
    pub desired: usize,
    /// The limit.
    pub limit: usize,
}

/// Caps a store's linear memory. Growing past the cap traps (with
/// [`MemoryLimitExceeded`]) rather than failing the guest's allocation:
/// the trap names the cause, a failed allocation would surface somewhere
/// inside the guest instead.
pub(super) struct MemoryLimit {
    memory_bytes: usize,
}

impl MemoryLimit {
    /// `limits.memoryMb`, in bytes.
    pub(super) fn bytes(&self) -> usize {
        self.memory_bytes
    }
}

/// Most table elements an instance may have: far more than any plugin's
/// function table needs.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for MemoryLimit {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            return Err(wasmtime::Error::new(MemoryLimitExceeded {
                desired,
                limit: self.memory_bytes,
            }));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

impl WasiView for GuestState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// A guest's stdout or stderr: complete lines go to the log at once.
#[derive(Clone)]
struct GuestOutput {
    plugin: Arc<str>,
    stream: &'static str,
    pending: Arc<Mutex<Vec<u8>>>,
}

impl GuestOutput {
    fn new(plugin: Arc<str>, stream: &'static str) -> Self {
        GuestOutput {
            plugin,
            stream,
            pending: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn emit(&self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end();
        if !text.is_empty() {
            tracing::info!(plugin = %self.plugin, stream = self.stream, "{text}");
        }
    }
}

impl OutputStream for GuestOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let mut pending = self.pending.lock();
        pending.extend_from_slice(&bytes);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            self.emit(&line);
        }
        if pending.len() > MAX_LINE {
            self.emit(&pending[..MAX_LINE]);
            pending.clear();
        }
        Ok(())
    }

    /// A line goes to the log when it is complete: Python flushes after
    /// every piece of a `print`, which would otherwise make a record each.
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for GuestOutput {
    async fn ready(&mut self) {}
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        // Only WASIp3 guests write through this; GRW links WASIp2.
        Box::new(tokio::io::sink())
    }
}
