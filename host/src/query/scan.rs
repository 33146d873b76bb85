//! A long read of objects shared with helper threads, so that one query
//! over many objects uses the cores nobody else needs.
//!
//! The query pool keeps a core for the runtime: on two cores it has one
//! thread, so a `match=` or an unindexed field selector over 10,000 Pods
//! (decompressing each, about 2 µs) would run on one core while the other
//! sits idle. A query thread that has many candidates to read cuts them
//! into chunks that it and the *scan helpers* claim in turn; the answer is
//! put back together in key order, exactly as one thread would make it.
//!
//! - The helpers are one fewer than the cores (`queries.scanHelpers`), and
//!   run at a lower priority (`nice` [`HELPER_NICE`]): on a core the
//!   runtime or another query needs, a helper gets a small share of it, so
//!   the pool's bound still holds; on an idle core it runs at full speed.
//! - A helper that is busy with another query's chunks is not waited for:
//!   the query thread claims every chunk left itself. It waits only for
//!   the chunks a helper has started, which are small ([`CHUNK`] objects).
//! - The CPU helpers spend on a request, and the objects they read, are
//!   charged to its budget (`queries.budgetMillis`) as if its own thread
//!   had spent it.
//! - A page with a `limit` stops claiming chunks once the chunks read in
//!   order hold more matches than the page takes.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::pool::{Budget, Stopped, thread_cpu_time};
use super::{MatchTooCostly, Query};
use crate::store::{FieldPaths, StoredObject};

/// Fewer candidates than this are read by the query thread alone: waking a
/// helper costs more than it saves.
pub(super) const MIN_SPLIT: usize = 1024;

/// Objects a thread claims at a time: small, so that the query thread
/// waits little for a helper's last chunk (a helper at `nice` 10 on a busy
/// core reads 64 Pods in a few ms), and large enough that claiming costs
/// nothing next to reading them (a Pod is 2 to 10 µs).
pub(super) const CHUNK: usize = 64;

/// The helpers' `nice`: under contention a thread at 10 gets about a tenth
/// of the CPU a thread at 0 gets.
pub const HELPER_NICE: i32 = 10;

/// The helper threads, started on first use.
struct Helpers {
    sender: SyncSender<Arc<Scan>>,
    count: usize,
}

/// The helpers `queries.scanHelpers` asks for; unset, one fewer than the
/// cores.
static WANTED: AtomicUsize = AtomicUsize::new(usize::MAX);

static HELPERS: OnceLock<Helpers> = OnceLock::new();

/// Sets how many helpers start (`queries.scanHelpers`; `None`, one fewer
/// than the cores): before the first query that reads many objects, after
/// which they are running.
pub fn configure(helpers: Option<usize>) {
    WANTED.store(helpers.unwrap_or(usize::MAX), Ordering::Relaxed);
    if HELPERS
        .get()
        .is_some_and(|running| running.count != wanted())
    {
        tracing::warn!("queries.scanHelpers changes only at the next start");
    }
}

/// The helpers to start, as configured.
fn wanted() -> usize {
    match WANTED.load(Ordering::Relaxed) {
        usize::MAX => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            cores.saturating_sub(1)
        }
        wanted => wanted,
    }
}

/// Whether there are helpers to share a read with.
pub(super) fn helping() -> bool {
    helpers().count > 0
}

fn helpers() -> &'static Helpers {
    HELPERS.get_or_init(|| {
        let wanted = wanted();
        let (sender, receiver) = std::sync::mpsc::sync_channel(wanted.max(1));
        let receiver = Arc::new(Mutex::new(receiver));
        let mut count = 0;
        for n in 0..wanted {
            let receiver = receiver.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("grw-scan-{n}"))
                .spawn(move || help(&receiver));
            match spawned {
                Ok(_) => count += 1,
                Err(error) => tracing::warn!(%error, "cannot start a scan helper thread"),
            }
        }
        Helpers { sender, count }
    })
}

/// One helper: lowers its priority, then reads the chunks of the scans it
/// is given until none is left.
fn help(receiver: &Mutex<Receiver<Arc<Scan>>>) {
    // On Linux, `PRIO_PROCESS` with 0 names the calling thread alone.
    // SAFETY: setpriority reads no memory of ours.
    let lowered = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, HELPER_NICE) };
    if lowered != 0 {
        tracing::debug!("a scan helper runs at the normal priority");
    }
    loop {
        let next = receiver.lock().recv();
        let Ok(scan) = next else {
            return;
        };
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| scan.work(None)));
        if read.is_err() {
            // The query thread stops waiting for what it claimed, and
            // fails as a panic of its own would.
            scan.fail();
            tracing::error!("a scan helper panicked");
        }
    }
}

/// What a chunk's read gave: the positions of the candidates that match.
type ChunkResult = Result<Vec<u32>, MatchTooCostly>;

/// One query's candidates, shared by the threads reading them.
struct Scan {
    query: Query,
    paths: FieldPaths,
    candidates: Vec<Arc<StoredObject>>,
    chunks: usize,
    /// CPU the helpers spent on it, in ns, not yet charged.
    helpers_cpu: AtomicU64,
    /// Objects the helpers read, not yet charged.
    helpers_read: AtomicUsize,
    /// Chunks helpers read.
    helped_chunks: AtomicUsize,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The next chunk to claim.
    next: usize,
    /// Chunks claimed and not yet done.
    running: usize,
    /// No chunk is claimed once set: the answer is known, or will not be.
    stop: bool,
    /// Each chunk's result, once read.
    results: Vec<Option<ChunkResult>>,
    /// A helper panicked.
    failed: bool,
}

/// What [`split`] found: the matches in key order, at most `limit`, and
/// whether more followed.
pub(super) struct Split {
    pub items: Vec<Arc<StoredObject>>,
    pub more: bool,
}

/// Reads `candidates` for `query` with the helpers, charging `budget`.
pub(super) fn split(
    query: &Query,
    paths: &FieldPaths,
    candidates: Vec<Arc<StoredObject>>,
    limit: usize,
    budget: &mut Budget,
) -> Result<Split, Stopped> {
    let scan = Scan::new(query, paths, candidates);
    let helpers = helpers();
    for _ in 0..helpers.count.min(scan.chunks.saturating_sub(1)) {
        // A full queue means every helper is busy: this thread reads alone.
        if helpers.sender.try_send(scan.clone()).is_err() {
            break;
        }
    }
    scan.finish(budget, limit)
}

impl Scan {
    fn new(query: &Query, paths: &FieldPaths, candidates: Vec<Arc<StoredObject>>) -> Arc<Scan> {
        let chunks = candidates.len().div_ceil(CHUNK);
        Arc::new(Scan {
            query: query.clone(),
            paths: paths.clone(),
            candidates,
            chunks,
            helpers_cpu: AtomicU64::new(0),
            helpers_read: AtomicUsize::new(0),
            helped_chunks: AtomicUsize::new(0),
            state: Mutex::new(State {
                results: (0..chunks).map(|_| None).collect(),
                ..State::default()
            }),
            changed: Condvar::new(),
        })
    }

    /// The query thread's part: reads chunks until none is left, waits for
    /// those helpers started, charges what they spent, and puts the answer
    /// together in key order.
    fn finish(&self, budget: &mut Budget, limit: usize) -> Result<Split, Stopped> {
        self.work(Some((budget, limit)))?;
        let mut state = self.state.lock();
        while state.running > 0 && !state.failed {
            self.changed.wait(&mut state);
        }
        // Answered 500 by the pool, as any query that panics.
        assert!(!state.failed, "a scan helper panicked");
        self.charge_helpers(budget);
        budget.check()?;
        let mut items = Vec::new();
        let mut more = false;
        'chunks: for result in state.results.iter_mut() {
            let Some(result) = result.take() else {
                break;
            };
            for at in result? {
                if items.len() == limit {
                    more = true;
                    break 'chunks;
                }
                items.push(self.candidates[at as usize].clone());
            }
        }
        Ok(Split { items, more })
    }

    /// Claims and reads chunks until none is left. The query thread passes
    /// its budget and the page's limit: it charges the budget as it reads
    /// (with what the helpers spent so far), and stops everyone once the
    /// chunks read in order hold more than `limit` matches.
    fn work(&self, mut own: Option<(&mut Budget, usize)>) -> Result<(), Stopped> {
        // How far the chunks read in order go, and the matches they hold.
        let (mut in_order, mut matches) = (0, 0);
        loop {
            let chunk = {
                let mut state = self.state.lock();
                if state.stop || state.next == self.chunks {
                    return Ok(());
                }
                state.next += 1;
                state.running += 1;
                state.next - 1
            };
            let read = match own.as_mut() {
                Some((budget, _)) => self.read(chunk, Some(budget)),
                None => {
                    let started = thread_cpu_time();
                    let read = self.read(chunk, None);
                    let spent = thread_cpu_time().saturating_sub(started);
                    self.helpers_cpu
                        .fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
                    self.helped_chunks.fetch_add(1, Ordering::Relaxed);
                    read
                }
            };
            let mut state = self.state.lock();
            state.running -= 1;
            let stops = match read {
                Ok(result) => {
                    let costly = result.is_err();
                    state.results[chunk] = Some(result);
                    costly.then_some(Ok(()))
                }
                Err(stopped) => Some(Err(stopped)),
            };
            self.changed.notify_all();
            if let Some(outcome) = stops {
                // Chunks are claimed in order: those before this one are
                // read, those after it are not needed.
                state.stop = true;
                return outcome;
            }
            let Some((budget, limit)) = own.as_mut() else {
                continue;
            };
            self.charge_helpers(budget);
            while let Some(Some(result)) = state.results.get(in_order) {
                matches += result.as_ref().map_or(0, Vec::len);
                in_order += 1;
            }
            if matches > *limit {
                state.stop = true;
                return Ok(());
            }
        }
    }

    /// Charges `budget` with what the helpers spent and read since the
    /// last charge.
    fn charge_helpers(&self, budget: &mut Budget) {
        budget.charge_elsewhere(
            Duration::from_nanos(self.helpers_cpu.swap(0, Ordering::Relaxed)),
            self.helpers_read.swap(0, Ordering::Relaxed),
        );
    }

    /// Reads one chunk: the positions of its matches. The query thread
    /// charges its budget for each object; a helper counts what it read.
    fn read(
        &self,
        chunk: usize,
        mut budget: Option<&mut &mut Budget>,
    ) -> Result<ChunkResult, Stopped> {
        let start = chunk * CHUNK;
        let end = (start + CHUNK).min(self.candidates.len());
        let mut found = Vec::new();
        for (at, object) in self.candidates[start..end].iter().enumerate() {
            if let Some(budget) = budget.as_mut() {
                budget.charge()?;
            }
            match self.query.matches_object(object, &self.paths, Some(object)) {
                Ok(true) => found.push((start + at) as u32),
                Ok(false) => {}
                Err(costly) => return Ok(Err(costly)),
            }
        }
        if budget.is_none() {
            self.helpers_read.fetch_add(end - start, Ordering::Relaxed);
        }
        Ok(Ok(found))
    }

    /// A helper panicked: the query thread stops waiting and fails.
    fn fail(&self) {
        let mut state = self.state.lock();
        state.stop = true;
        state.failed = true;
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests;
