//! Following the plugin directory: file events, coalesced into changes,
//! make [`Plugins`] look at the directory again (see [`super::directory`]
//! for what a change does). A file being written is complete when its
//! writer closes it or has been quiet for [`WRITE_QUIET`]; files renamed
//! into place, and the symlink swap of a Kubernetes ConfigMap volume
//! (`..data`), are complete when they appear.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use file_watcher::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use file_watcher::{RecursiveMode, Watcher};

use super::{PluginError, Plugins};

/// File events closer together than this are one change: a rename into
/// place, or a ConfigMap volume's symlink swap, is a burst of events.
const COALESCE: Duration = Duration::from_millis(5);

/// A burst of events is handled after this long at most, however long it
/// goes on.
const COALESCE_AT_MOST: Duration = Duration::from_millis(50);

/// A file being written whose writer neither writes nor closes it for this
/// long is taken as complete (e.g. a writer that keeps it open).
const WRITE_QUIET: Duration = Duration::from_secs(2);

impl Plugins {
    /// Follows the directory: a change is loaded [`COALESCE`] after its
    /// last file event, plus the compile time for content not seen before.
    pub fn watch(self: &Arc<Self>) -> Result<(), PluginError> {
        let Some(dir) = self.dir.clone() else {
            return Ok(());
        };
        let (tx, rx) = std::sync::mpsc::channel::<FileEvent>();
        *self.wake.lock() = Some(tx.clone());
        let mut watcher = file_watcher::recommended_watcher(
            move |event: file_watcher::Result<file_watcher::Event>| {
                if let Ok(event) = event
                    && let Some(event) = FileEvent::of(event)
                {
                    let _ = tx.send(event);
                }
            },
        )
        .map_err(|source| PluginError::Watch {
            dir: dir.clone(),
            source,
        })?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|source| PluginError::Watch {
                dir: dir.clone(),
                source,
            })?;
        *self.watcher.lock() = Some(watcher);
        let plugins = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("grw-plugin-reload".into())
            .spawn(move || {
                let mut writes = Writes::default();
                let mut next = None;
                loop {
                    let first = match next.take() {
                        Some(event) => event,
                        None => match rx.recv() {
                            Ok(event) => event,
                            Err(_) => return,
                        },
                    };
                    writes.expire();
                    writes.note(first);
                    // The rest of the burst.
                    let started = Instant::now();
                    while started.elapsed() < COALESCE_AT_MOST {
                        match rx.recv_timeout(COALESCE) {
                            Ok(event) => writes.note(event),
                            Err(_) => break,
                        }
                    }
                    loop {
                        let Some(plugins) = plugins.upgrade() else {
                            return;
                        };
                        let (_, held_back) = plugins.scan_except(&writes.in_progress());
                        drop(plugins);
                        if !held_back {
                            break;
                        }
                        // A writer is still at work: try again at its next
                        // event, or once it has been quiet long enough.
                        match rx.recv_timeout(writes.quiet_left()) {
                            Ok(event) => {
                                next = Some(event);
                                break;
                            }
                            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => writes.expire(),
                            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                        }
                    }
                }
            })
            .map_err(|source| PluginError::Thread { source })?;
        Ok(())
    }
}

/// A file event that may change what the directory holds.
pub(super) struct FileEvent {
    /// File names (in the plugin directory) it concerns.
    files: Vec<OsString>,
    what: Change,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Written to (or created, or truncated): complete only when closed.
    Writing,
    /// Closed after writing, renamed or removed: complete.
    Done,
}

impl FileEvent {
    /// Not a file event: a request to look at the directory again.
    pub(super) fn rescan() -> FileEvent {
        FileEvent {
            files: Vec::new(),
            what: Change::Done,
        }
    }

    /// The events that matter; opening, reading and closing a file without
    /// writing (GRW's own reads among them) do not.
    fn of(event: file_watcher::Event) -> Option<FileEvent> {
        let what = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => Change::Done,
            EventKind::Access(_) => return None,
            EventKind::Create(_) => Change::Writing,
            EventKind::Modify(ModifyKind::Name(_)) | EventKind::Remove(_) => Change::Done,
            EventKind::Modify(ModifyKind::Metadata(_)) => Change::Done,
            EventKind::Modify(_) => Change::Writing,
            EventKind::Any | EventKind::Other => Change::Done,
        };
        let files = event
            .paths
            .iter()
            .filter_map(|p| p.file_name().map(OsString::from))
            .collect();
        Some(FileEvent { files, what })
    }
}

/// Files being written: seen written to and not yet closed.
#[derive(Default)]
struct Writes {
    open: HashMap<OsString, Instant>,
}

impl Writes {
    fn note(&mut self, event: FileEvent) {
        for file in event.files {
            match event.what {
                Change::Writing => {
                    self.open.insert(file, Instant::now());
                }
                Change::Done => {
                    self.open.remove(&file);
                }
            }
        }
    }

    /// Plugins (by name) one of whose files is being written.
    fn in_progress(&self) -> HashSet<String> {
        self.open
            .keys()
            .filter_map(|f| {
                let path = Path::new(f);
                let ext = path.extension()?;
                (ext == "wasm" || ext == "json")
                    .then(|| path.file_stem()?.to_str().map(str::to_string))?
            })
            .collect()
    }

    /// How long until the longest-quiet writer counts as done.
    fn quiet_left(&self) -> Duration {
        self.open
            .values()
            .map(|t| WRITE_QUIET.saturating_sub(t.elapsed()))
            .min()
            .unwrap_or_default()
    }

    /// Forgets writers quiet for [`WRITE_QUIET`].
    fn expire(&mut self) {
        self.open.retain(|_, t| t.elapsed() < WRITE_QUIET);
    }
}
