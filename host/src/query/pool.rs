//! The threads that do the costly part of queries, so that no caller's
//! query holds up another's.
//!
//! What costs per object (reading a field of a compressed object, a filter
//! plugin, a Table row) never runs on the runtime's threads, which answer
//! every request and apply every watch event, and never under a cache's
//! lock, which the watch loop waits for: a list takes the `Arc`s of its
//! candidates under a short lock and hands the rest to this pool. (Only
//! writing the answer stays on the runtime: 256 KB at a time, as the
//! connection takes it, see `api/list_body.rs`.) The pool has a fixed number of threads (`queries.threads`, by
//! default one fewer than the cores, at least one, so that a core is left
//! for the runtime however many costly queries there are), a bounded queue
//! (`queries.queue`) in front of them, and gives each request a budget of
//! CPU time (`queries.budgetMillis`):
//!
//! - a request that finds the queue full, or waited in it longer than the
//!   budget, is refused at once: `429` with `Retry-After`, as the API
//!   server's priority and fairness answers a saturated level;
//! - a request that spends its budget is stopped where it is: `504`, as
//!   the API server's request timeout, naming what it read and how to
//!   narrow it.
//!
//! On two cores, four clients looping a full-scan field selector over
//! 100,000 Pods leave the other callers' exact GETs at the figures of
//! BENCHMARKS.md ("one heavy query does not stall everyone").

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::{Page, PageRequest, Query};
use crate::metrics::QueryMetrics;
use crate::store::Cache;

/// The longest any request may wait for a thread is its budget, but at
/// least this: a thread takes up to a few milliseconds to wake on a busy
/// machine, which a small budget must not turn into refusals.
const MIN_WAIT: Duration = Duration::from_secs(1);

/// Objects examined between two readings of the thread's CPU clock: one
/// reading costs about 0.2 µs, an object at least that.
const CHECK_EVERY: u32 = 64;

/// How the pool is sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSettings {
    /// Threads running queries.
    pub threads: usize,
    /// Requests that may wait for a thread.
    pub queue: usize,
    /// CPU time one request may take, and also the longest it may wait in
    /// the queue (at least a second).
    pub budget: Duration,
}

impl PoolSettings {
    /// The threads `queries.threads` stands for when unset: one fewer than
    /// the cores, at least one, so that a core is left for the runtime.
    pub fn default_threads() -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        cores.saturating_sub(1).max(1)
    }
}

/// Why the pool did not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// Every thread is busy and the queue is full, or the request waited
    /// longer than its budget (at least a second) for a thread.
    #[error(
        "GRW is answering as many costly queries as it can ({threads} at a time, {queue} waiting); retry in a moment, or narrow the query (a namespace, a label selector, an indexed field) so it costs less"
    )]
    Busy {
        /// `queries.threads`.
        threads: usize,
        /// `queries.queue`.
        queue: usize,
    },
    /// The request spent its budget.
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
    /// A `match=` expression spent its cost limit on one object.
    #[error(transparent)]
    MatchTooCostly(MatchTooCostly),
    /// The work panicked: a bug in GRW, logged.
    #[error("the query failed unexpectedly; the daemon logged why")]
    Failed,
}

/// Why a request's work stopped before its answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Stopped {
    /// It spent its CPU budget.
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
    /// Its `match=` expression spent its cost limit on an object.
    #[error(transparent)]
    MatchTooCostly(#[from] MatchTooCostly),
}

impl From<Stopped> for PoolError {
    fn from(stopped: Stopped) -> PoolError {
        match stopped {
            Stopped::OverBudget(over) => PoolError::OverBudget(over),
            Stopped::MatchTooCostly(costly) => PoolError::MatchTooCostly(costly),
        }
    }
}

/// A query's `match=` expression spent its cost limit on an object: the
/// request is refused rather than answered without that object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "query parameter `match`: evaluating it on {object} cost more than the limit of {limit}; iterate over fewer or smaller lists (`all`, `exists`, `map`, `filter`), or nest them less",
    limit = crate::cel::COST_LIMIT
)]
pub struct MatchTooCostly {
    /// The object, `namespace/name` (or `name`).
    pub object: String,
}

/// A request spent its CPU budget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the query was stopped after {} ms of CPU time (queries.budgetMillis), having examined {examined} objects; narrow it with a namespace, a label selector or an indexed field (see /api/v1/kinds), or page it with a smaller `limit`",
    .spent.as_millis()
)]
pub struct OverBudget {
    /// CPU time spent.
    pub spent: Duration,
    /// Objects examined when it was stopped.
    pub examined: usize,
}

/// The CPU time one request may still spend, charged as it examines
/// objects.
pub struct Budget {
    started: Duration,
    limit: Duration,
    examined: usize,
    until_check: u32,
    /// CPU spent for the request on other threads (scan helpers).
    elsewhere: Duration,
    /// Whether a long read may be shared with the scan helpers: on a pool
    /// thread, holding no lock.
    shared: bool,
}

impl Budget {
    pub(super) fn start(limit: Duration) -> Budget {
        Budget {
            started: thread_cpu_time(),
            limit,
            examined: 0,
            until_check: CHECK_EVERY,
            elsewhere: Duration::ZERO,
            shared: true,
        }
    }

    /// A budget nothing is charged against, for work that runs where no
    /// budget applies (tests, and the few callers that are not requests).
    pub fn unlimited() -> Budget {
        Budget {
            started: Duration::ZERO,
            limit: Duration::MAX,
            examined: 0,
            until_check: u32::MAX,
            elsewhere: Duration::ZERO,
            shared: false,
        }
    }

    /// Charges one object examined; `Err` once the budget is spent.
    pub fn charge(&mut self) -> Result<(), OverBudget> {
        self.examined += 1;
        self.until_check -= 1;
        if self.until_check > 0 {
            return Ok(());
        }
        self.until_check = CHECK_EVERY;
        self.check()
    }

    /// Charges what other threads spent and read for this request; the
    /// next check counts it.
    pub(super) fn charge_elsewhere(&mut self, cpu: Duration, examined: usize) {
        self.elsewhere += cpu;
        self.examined += examined;
    }

    /// `Err` once the budget is spent.
    pub(super) fn check(&self) -> Result<(), OverBudget> {
        let spent = thread_cpu_time().saturating_sub(self.started) + self.elsewhere;
        if spent > self.limit {
            return Err(OverBudget {
                spent,
                examined: self.examined,
            });
        }
        Ok(())
    }

    /// Objects examined so far.
    pub fn examined(&self) -> usize {
        self.examined
    }

    /// Whether a long read may be shared with the scan helpers
    /// ([`super::scan`]): only on a pool thread, which holds no lock.
    pub(super) fn shared(&self) -> bool {
        self.shared
    }
}

/// A request's work, given how long it waited for a thread.
type Job = Box<dyn FnOnce(Duration) + Send>;

/// The pool; see the module's documentation.
pub struct QueryPool {
    sender: SyncSender<(Instant, Job)>,
    settings: PoolSettings,
    metrics: QueryMetrics,
}

impl QueryPool {
    /// Starts the pool's threads.
    pub fn new(settings: PoolSettings, metrics: QueryMetrics) -> Arc<QueryPool> {
        let settings = PoolSettings {
            threads: settings.threads.max(1),
            queue: settings.queue.max(1),
            ..settings
        };
        let (sender, receiver) = std::sync::mpsc::sync_channel(settings.queue);
        let receiver = Arc::new(Mutex::new(receiver));
        for n in 0..settings.threads {
            let receiver = receiver.clone();
            let metrics = metrics.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("grw-query-{n}"))
                .spawn(move || serve(&receiver, &metrics));
            if let Err(error) = spawned {
                tracing::error!(%error, "cannot start a query thread");
            }
        }
        metrics.threads.set(settings.threads as i64);
        Arc::new(QueryPool {
            sender,
            settings,
            metrics,
        })
    }

    /// How the pool is sized.
    pub fn settings(&self) -> PoolSettings {
        self.settings
    }

    /// Runs `work` on a pool thread with the request's budget, and returns
    /// what it returned. A request whose caller went away meanwhile (the
    /// client closed the connection) is not run.
    pub async fn run<T, F>(&self, work: F) -> Result<T, PoolError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Budget) -> Result<T, Stopped> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let budget = self.settings.budget;
        let busy = self.busy();
        let metrics = self.metrics.clone();
        let refused = busy.clone();
        let job: Job = Box::new(move |waited| {
            if tx.is_closed() {
                return;
            }
            if waited > budget.max(MIN_WAIT) {
                metrics.refused("waited");
                let _ = tx.send(Err(refused));
                return;
            }
            let mut charged = Budget::start(budget);
            let answer = work(&mut charged).map_err(|stopped| {
                if let Stopped::OverBudget(_) = stopped {
                    metrics.refused("budget");
                }
                PoolError::from(stopped)
            });
            metrics.examined.inc_by(charged.examined() as u64);
            let _ = tx.send(answer);
        });
        self.metrics.waiting.inc();
        match self.sender.try_send((Instant::now(), job)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.metrics.waiting.dec();
                self.metrics.refused("busy");
                return Err(busy);
            }
        }
        // Dropped unanswered: the work panicked.
        rx.await.unwrap_or(Err(PoolError::Failed))
    }

    fn busy(&self) -> PoolError {
        PoolError::Busy {
            threads: self.settings.threads,
            queue: self.settings.queue,
        }
    }
}

/// A list's answer and the cache's state it was read at.
pub struct Listed {
    /// The page.
    pub page: Page,
    /// How many objects later pages hold, when asked for and known.
    pub rest: Option<usize>,
    /// The cache's resourceVersion when the candidates were taken.
    pub resource_version: String,
    /// Its position then ([`crate::store::CacheView::position`]).
    pub position: u64,
    /// The oldest resourceVersion one could resume from then.
    pub oldest_resumable: u64,
}

impl QueryPool {
    /// Runs `query` over `cache`. Its candidates are taken under a short
    /// read lock ([`Query::collect`]); a query that reads objects (a field
    /// no index holds, an annotation) reads them on a pool thread, within
    /// its budget, and a query by part of a name first builds the cache's
    /// name index there if it has none. A query answered from the indexes
    /// and headers alone does no work per object beyond taking its page,
    /// and runs where it is called.
    pub async fn list(
        &self,
        cache: &Arc<Cache>,
        query: Query,
        page: PageRequest,
        count_rest: bool,
    ) -> Result<Listed, PoolError> {
        let reads_objects = query.reads_objects(cache.field_paths());
        let needs_names = query.name_contains.is_some() && !cache.read().has_name_index();
        if !reads_objects && !needs_names {
            return Ok(list_now(
                cache,
                &query,
                &page,
                count_rest,
                &mut Budget::unlimited(),
            )?);
        }
        let cache = cache.clone();
        self.run(move |budget| {
            if needs_names {
                cache.build_name_index();
            }
            list_now(&cache, &query, &page, count_rest, budget)
        })
        .await
    }
}

fn list_now(
    cache: &Cache,
    query: &Query,
    page: &PageRequest,
    count_rest: bool,
    budget: &mut Budget,
) -> Result<Listed, Stopped> {
    let (collected, resource_version, position, oldest_resumable) = {
        let view = cache.read();
        (
            query.collect(&view, page, count_rest),
            view.resource_version().to_string(),
            view.position(),
            view.oldest_resumable(),
        )
    };
    let rest = collected.rest();
    Ok(Listed {
        page: query.finish(collected, page, budget)?,
        rest,
        resource_version,
        position,
        oldest_resumable,
    })
}

/// One pool thread: takes jobs until the pool is dropped.
fn serve(receiver: &Mutex<Receiver<(Instant, Job)>>, metrics: &QueryMetrics) {
    loop {
        let next = receiver.lock().recv();
        let Ok((queued, job)) = next else {
            return;
        };
        metrics.waiting.dec();
        let waited = queued.elapsed();
        metrics.wait_seconds.observe(waited.as_secs_f64());
        metrics.running.inc();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| job(waited)));
        metrics.running.dec();
        if outcome.is_err() {
            tracing::error!("a query panicked; it was answered 500");
        }
    }
}

/// CPU time this thread has used.
pub(super) fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write to.
    let result = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if result != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

#[cfg(test)]
mod tests;
