//! A bounded cache of the API server's answers, each kept for a time that
//! depends on the answer, where requests asking the same question at the
//! same time share one review.
//!
//! The least recently used answer goes when the cache is full. A hit (the
//! path of nearly every request) is one hash lookup under a lock and a
//! clone of the answer; a miss also looks for the entry to evict by going
//! through the entries once: 8192 of them take about 10 µs, next to a
//! review's round trip to the API server (a millisecond or more), so an
//! exact LRU costs misses nothing that counts and hits nothing at all.
//!
//! The review runs in a task of its own: a caller that goes away (a client
//! that hung up) does not cancel it for the others waiting, and its answer
//! is kept for the next ones.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;
use tokio::time::Instant;

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// Kept from an earlier review.
    Cache,
    /// A review another request had started.
    Shared,
    /// A review this request started.
    Review,
}

/// Why there is no answer.
#[derive(Debug)]
pub(super) enum Failed<E> {
    /// The review failed.
    Review(Arc<E>),
    /// The review's task ended without an answer (it panicked).
    Lost,
}

impl<E> Clone for Failed<E> {
    fn clone(&self) -> Self {
        match self {
            Failed::Review(e) => Failed::Review(e.clone()),
            Failed::Lost => Failed::Lost,
        }
    }
}

type Answer<V, E> = Option<Result<V, Arc<E>>>;

enum Slot<V, E> {
    Ready {
        value: V,
        expires: Instant,
    },
    Pending {
        id: u64,
        answer: watch::Receiver<Answer<V, E>>,
    },
}

struct Entry<V, E> {
    slot: Slot<V, E>,
    /// When it was last asked for, in lookups since the start.
    used: u64,
}

struct Entries<K, V, E> {
    map: HashMap<K, Entry<V, E>>,
    lookups: u64,
    reviews: u64,
}

/// Answers to questions `K`, at most `max_entries` of them.
pub(super) struct ReviewCache<K, V, E> {
    entries: Mutex<Entries<K, V, E>>,
    max_entries: usize,
    /// The number of entries, for `/metrics`.
    size: Gauge,
}

impl<K, V, E> ReviewCache<K, V, E>
where
    K: Eq + Hash + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    E: Send + Sync + 'static,
{
    /// An empty cache of at most `max_entries` (at least 1) answers, whose
    /// number it keeps in `size`.
    pub(super) fn new(max_entries: usize, size: Gauge) -> Arc<Self> {
        Arc::new(ReviewCache {
            entries: Mutex::new(Entries {
                map: HashMap::new(),
                lookups: 0,
                reviews: 0,
            }),
            max_entries: max_entries.max(1),
            size,
        })
    }

    /// The answer to `key`: kept, being reviewed by another request, or
    /// reviewed now by `review`; kept afterwards for `keep(&answer)` (zero:
    /// not kept). A failed review is not kept: the next request asks again.
    pub(super) async fn get<R, Fut>(
        self: &Arc<Self>,
        key: &K,
        review: R,
        keep: impl FnOnce(&V) -> Duration + Send + 'static,
    ) -> (Result<V, Failed<E>>, Source)
    where
        R: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
    {
        let (answer, source) = {
            let mut entries = self.entries.lock();
            entries.lookups += 1;
            let now_used = entries.lookups;
            let found = entries.map.get_mut(key).and_then(|entry| {
                entry.used = now_used;
                match &entry.slot {
                    Slot::Ready { value, expires } if *expires > Instant::now() => {
                        Some(Ok(value.clone()))
                    }
                    Slot::Pending { answer, .. } => Some(Err(answer.clone())),
                    Slot::Ready { .. } => None,
                }
            });
            match found {
                Some(Ok(value)) => return (Ok(value), Source::Cache),
                Some(Err(pending)) => (pending, Source::Shared),
                None => (
                    self.start(&mut entries, key.clone(), review, keep),
                    Source::Review,
                ),
            }
        };
        (wait(answer).await, source)
    }

    /// Starts a review of `key` in a task of its own; its entry is pending
    /// until the answer comes.
    fn start<R, Fut>(
        self: &Arc<Self>,
        entries: &mut Entries<K, V, E>,
        key: K,
        review: R,
        keep: impl FnOnce(&V) -> Duration + Send + 'static,
    ) -> watch::Receiver<Answer<V, E>>
    where
        R: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
    {
        entries.reviews += 1;
        let id = entries.reviews;
        let (tx, rx) = watch::channel(None);
        if !entries.map.contains_key(&key) && entries.map.len() >= self.max_entries {
            evict(&mut entries.map);
        }
        let used = entries.lookups;
        entries.map.insert(
            key.clone(),
            Entry {
                slot: Slot::Pending {
                    id,
                    answer: rx.clone(),
                },
                used,
            },
        );
        self.size.set(entries.map.len() as i64);
        let mut done = Done {
            cache: self.clone(),
            key: Some(key),
            id,
        };
        let future = review();
        tokio::spawn(async move {
            let outcome = future.await.map_err(Arc::new);
            done.record(&outcome, keep);
            tx.send_replace(Some(outcome));
        });
        rx
    }

    /// The number of answers kept and reviews under way.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.lock().map.len()
    }
}

/// Removes the entry to make room for another: one whose answer expired,
/// else the least recently used.
fn evict<K: Eq + Hash + Clone, V, E>(map: &mut HashMap<K, Entry<V, E>>) {
    let now = Instant::now();
    let expired = map.iter().find_map(|(key, entry)| match entry.slot {
        Slot::Ready { expires, .. } if expires <= now => Some(key.clone()),
        _ => None,
    });
    let victim = expired.or_else(|| {
        map.iter()
            .min_by_key(|(_, entry)| entry.used)
            .map(|(key, _)| key.clone())
    });
    if let Some(key) = victim {
        map.remove(&key);
    }
}

async fn wait<V: Clone, E>(mut answer: watch::Receiver<Answer<V, E>>) -> Result<V, Failed<E>> {
    match answer.wait_for(Option::is_some).await {
        Ok(answer) => match answer.as_ref() {
            Some(Ok(value)) => Ok(value.clone()),
            Some(Err(e)) => Err(Failed::Review(e.clone())),
            None => Err(Failed::Lost),
        },
        Err(_) => Err(Failed::Lost),
    }
}

/// Settles a review's entry: the answer kept, or the entry removed (a
/// failure, or a task that ended without an answer).
struct Done<K: Eq + Hash, V, E> {
    cache: Arc<ReviewCache<K, V, E>>,
    /// `None` once recorded.
    key: Option<K>,
    id: u64,
}

impl<K: Eq + Hash, V, E> Done<K, V, E> {
    fn record(&mut self, outcome: &Result<V, Arc<E>>, keep: impl FnOnce(&V) -> Duration)
    where
        V: Clone,
    {
        let Some(key) = self.key.take() else { return };
        let mut entries = self.cache.entries.lock();
        // The entry may have been evicted, or replaced by a newer review.
        let ours = matches!(
            entries.map.get(&key),
            Some(Entry { slot: Slot::Pending { id, .. }, .. }) if *id == self.id
        );
        if !ours {
            return;
        }
        let keep = match outcome {
            Ok(value) => keep(value),
            Err(_) => Duration::ZERO,
        };
        match (outcome, Instant::now().checked_add(keep)) {
            (Ok(value), Some(expires)) if !keep.is_zero() => {
                if let Some(entry) = entries.map.get_mut(&key) {
                    entry.slot = Slot::Ready {
                        value: value.clone(),
                        expires,
                    };
                }
            }
            _ => {
                entries.map.remove(&key);
            }
        }
        self.cache.size.set(entries.map.len() as i64);
    }
}

impl<K: Eq + Hash, V, E> Drop for Done<K, V, E> {
    fn drop(&mut self) {
        let Some(key) = self.key.take() else { return };
        let mut entries = self.cache.entries.lock();
        let ours = matches!(
            entries.map.get(&key),
            Some(Entry { slot: Slot::Pending { id, .. }, .. }) if *id == self.id
        );
        if ours {
            entries.map.remove(&key);
            self.cache.size.set(entries.map.len() as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    type Cache = ReviewCache<String, bool, String>;

    fn cache(max: usize) -> Arc<Cache> {
        ReviewCache::new(max, Gauge::default())
    }

    /// A review that answers `answer` and counts itself in `made`.
    fn review(
        made: &Arc<AtomicUsize>,
        answer: Result<bool, String>,
    ) -> impl FnOnce() -> std::future::Ready<Result<bool, String>> {
        let made = made.clone();
        move || {
            made.fetch_add(1, Ordering::SeqCst);
            std::future::ready(answer)
        }
    }

    /// Allowed answers are kept 10 s, denied ones 2 s.
    fn keep(allowed: &bool) -> Duration {
        Duration::from_secs(if *allowed { 10 } else { 2 })
    }

    #[tokio::test(start_paused = true)]
    async fn answers_are_kept_for_as_long_as_their_kind_says() {
        let cache = cache(10);
        let made = Arc::new(AtomicUsize::new(0));
        let ask = |key: &'static str, answer| {
            let cache = cache.clone();
            let review = review(&made, answer);
            async move { cache.get(&key.to_string(), review, keep).await }
        };
        assert!(matches!(
            ask("a", Ok(true)).await,
            (Ok(true), Source::Review)
        ));
        assert!(matches!(
            ask("a", Ok(false)).await,
            (Ok(true), Source::Cache)
        ));
        assert!(matches!(
            ask("b", Ok(false)).await,
            (Ok(false), Source::Review)
        ));
        assert_eq!(made.load(Ordering::SeqCst), 2);

        // The denial expires after 2 s, the permission after 10 s.
        tokio::time::advance(Duration::from_secs(3)).await;
        assert!(matches!(
            ask("a", Ok(false)).await,
            (Ok(true), Source::Cache)
        ));
        assert!(matches!(
            ask("b", Ok(true)).await,
            (Ok(true), Source::Review)
        ));
        tokio::time::advance(Duration::from_secs(8)).await;
        assert!(matches!(
            ask("a", Ok(false)).await,
            (Ok(false), Source::Review)
        ));
        assert_eq!(made.load(Ordering::SeqCst), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn failures_are_not_kept() {
        let cache = cache(10);
        let made = Arc::new(AtomicUsize::new(0));
        let (answer, source) = cache
            .get(
                &"a".to_string(),
                review(&made, Err("unreachable".into())),
                keep,
            )
            .await;
        assert!(matches!(answer, Err(Failed::Review(e)) if *e == "unreachable"));
        assert_eq!(source, Source::Review);
        assert_eq!(cache.len(), 0);
        let (answer, _) = cache
            .get(&"a".to_string(), review(&made, Ok(true)), keep)
            .await;
        assert!(matches!(answer, Ok(true)));
        assert_eq!(made.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn the_least_recently_used_goes_when_full() {
        let size = Gauge::default();
        let cache: Arc<Cache> = ReviewCache::new(3, size.clone());
        let made = Arc::new(AtomicUsize::new(0));
        for key in ["a", "b", "c"] {
            let (answer, _) = cache
                .get(&key.to_string(), review(&made, Ok(true)), keep)
                .await;
            assert!(matches!(answer, Ok(true)));
        }
        // `a` is used again, so `b` is the least recently used.
        let (_, source) = cache
            .get(&"a".to_string(), review(&made, Ok(true)), keep)
            .await;
        assert_eq!(source, Source::Cache);
        let (answer, _) = cache
            .get(&"d".to_string(), review(&made, Ok(true)), keep)
            .await;
        assert!(matches!(answer, Ok(true)));
        assert_eq!(cache.len(), 3);
        assert_eq!(size.get(), 3);
        for (key, source) in [
            ("a", Source::Cache),
            ("c", Source::Cache),
            ("d", Source::Cache),
        ] {
            assert_eq!(
                cache
                    .get(&key.to_string(), review(&made, Ok(true)), keep)
                    .await
                    .1,
                source,
                "{key}"
            );
        }
        assert_eq!(made.load(Ordering::SeqCst), 4);
        let (_, source) = cache
            .get(&"b".to_string(), review(&made, Ok(true)), keep)
            .await;
        assert_eq!(source, Source::Review);
        assert_eq!(cache.len(), 3);

        // An expired answer goes before any live one, however recently used.
        tokio::time::advance(Duration::from_secs(5)).await;
        let (answer, _) = cache
            .get(&"x".to_string(), review(&made, Ok(false)), keep)
            .await;
        assert!(matches!(answer, Ok(false)));
        tokio::time::advance(Duration::from_secs(3)).await;
        for key in ["a", "c", "d", "b"] {
            let _ = cache
                .get(&key.to_string(), review(&made, Ok(true)), keep)
                .await;
        }
        assert_eq!(cache.len(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_identical_questions_share_one_review() {
        let cache = cache(10);
        let made = Arc::new(AtomicUsize::new(0));
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let slow = {
            let made = made.clone();
            move || {
                made.fetch_add(1, Ordering::SeqCst);
                async move {
                    let _ = released.await;
                    Ok::<bool, String>(true)
                }
            }
        };
        let first = tokio::spawn({
            let cache = cache.clone();
            async move { cache.get(&"a".to_string(), slow, keep).await }
        });
        tokio::task::yield_now().await;
        let others: Vec<_> = (0..5)
            .map(|_| {
                let cache = cache.clone();
                let made = made.clone();
                tokio::spawn(async move {
                    cache
                        .get(&"a".to_string(), review(&made, Ok(false)), keep)
                        .await
                })
            })
            .collect();
        tokio::task::yield_now().await;
        release.send(()).unwrap();
        assert!(matches!(first.await.unwrap(), (Ok(true), Source::Review)));
        for other in others {
            assert!(matches!(other.await.unwrap(), (Ok(true), Source::Shared)));
        }
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_review_that_panics_is_asked_again() {
        let cache = cache(10);
        let (answer, _) = cache
            .get(
                &"a".to_string(),
                || async {
                    if std::hint::black_box(true) {
                        panic!("a bug in a review");
                    }
                    Ok::<bool, String>(true)
                },
                keep,
            )
            .await;
        assert!(matches!(answer, Err(Failed::Lost)));
        assert_eq!(cache.len(), 0);
        let made = Arc::new(AtomicUsize::new(0));
        let (answer, source) = cache
            .get(&"a".to_string(), review(&made, Ok(true)), keep)
            .await;
        assert!(matches!(answer, Ok(true)));
        assert_eq!(source, Source::Review);
    }
}
