//! Prometheus metrics of the whole process.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    gvk: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WatchLabels {
    gvk: String,
    /// The watched namespace; empty for the whole cluster.
    namespace: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EventLabels {
    gvk: String,
    #[prometheus(flatten)]
    r#type: TypeLabel,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TypeLabel {
    r#type: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PluginLabels {
    plugin: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PluginResultLabels {
    plugin: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SubscriptionLabels {
    subscription: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReviewLabels {
    review: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReviewResultLabels {
    review: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabels {
    code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    status: u16,
}

/// One plugin's `grw_plugin_calls_total{result="ok"}` and
/// `grw_plugin_call_duration_seconds`, from [`Metrics::plugin_call_metrics`].
#[derive(Clone)]
pub struct PluginCallMetrics {
    ok: Counter,
    seconds: Histogram,
}

impl PluginCallMetrics {
    /// Records one call that answered.
    pub fn answered(&self, seconds: f64) {
        self.ok.inc();
        self.seconds.observe(seconds);
    }
}

/// The metrics of `delegated` access checks, resolved once so that a
/// request costs no label lookup; from [`Metrics::access`].
#[derive(Clone)]
pub struct AccessMetrics {
    reviews: Family<ReviewResultLabels, Counter>,
    /// Token and decision cache hits.
    pub hits: [Counter; 2],
    /// Entries in the token and decision caches.
    pub entries: [Gauge; 2],
    /// Reviews in flight to the API server, and waiting for a place.
    pub reviews_at_once: [Gauge; 2],
    refused: Family<CodeLabels, Counter>,
}

/// The two questions `delegated` access asks the API server, as label values.
pub const REVIEWS: [&str; 2] = ["TokenReview", "SubjectAccessReview"];

impl AccessMetrics {
    /// Counts one review made, of [`REVIEWS`]`[review]`, by its result
    /// (`authenticated`, `rejected`, `allowed`, `denied`, `error`).
    pub fn review(&self, review: usize, result: &str) {
        self.reviews
            .get_or_create(&ReviewResultLabels {
                review: REVIEWS[review].to_string(),
                result: result.to_string(),
            })
            .inc();
    }

    /// Counts one request refused with `code` (401, 403, 429 or 503).
    pub fn refused(&self, code: u16) {
        self.refused.get_or_create(&CodeLabels { code }).inc();
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: String,
}

/// The metrics of the query pool ([`crate::query::QueryPool`]), resolved
/// once; from [`Metrics::queries`].
#[derive(Clone)]
pub struct QueryMetrics {
    /// Threads of the pool.
    pub threads: Gauge,
    /// Requests waiting for a thread.
    pub waiting: Gauge,
    /// Requests running.
    pub running: Gauge,
    /// How long requests waited for a thread.
    pub wait_seconds: Histogram,
    /// Objects the pool's requests examined.
    pub examined: Counter,
    /// Answers of `match=` expressions kept for cached objects.
    pub match_answers_kept: Gauge,
    refused: Family<ReasonLabels, Counter>,
}

impl QueryMetrics {
    /// Counts one request refused: `busy` (the queue was full), `waited`
    /// (it waited longer than its budget, at least a second) or `budget`
    /// (it spent it).
    pub fn refused(&self, reason: &str) {
        self.refused
            .get_or_create(&ReasonLabels {
                reason: reason.to_string(),
            })
            .inc();
    }
}

/// Every metric GRW exports at `/metrics`.
pub struct Metrics {
    registry: Registry,
    queries: QueryMetrics,
    objects: Family<KindLabels, Gauge>,
    events: Family<EventLabels, Counter>,
    relists: Family<KindLabels, Counter>,
    watch_restarts: Family<KindLabels, Counter>,
    watch_ready: Family<WatchLabels, Gauge>,
    request_seconds: Family<RequestLabels, Histogram>,
    plugin_calls: Family<PluginResultLabels, Counter>,
    plugin_call_seconds: Family<PluginLabels, Histogram>,
    plugin_loads: Family<PluginResultLabels, Counter>,
    subscription_pending: Family<SubscriptionLabels, Gauge>,
    subscription_oldest_seconds: Family<SubscriptionLabels, Gauge<f64, AtomicU64>>,
    subscription_dead_letters: Family<SubscriptionLabels, Gauge>,
    subscription_deliveries: Family<SubscriptionLabels, Counter>,
    subscription_retries: Family<SubscriptionLabels, Counter>,
    subscription_failures: Family<SubscriptionLabels, Counter>,
    subscription_dead_lettered: Family<SubscriptionLabels, Counter>,
    subscription_filtered: Family<SubscriptionLabels, Counter>,
    subscription_condition_errors: Family<SubscriptionLabels, Counter>,
    subscription_pending_bytes: Family<SubscriptionLabels, Gauge>,
    subscription_dead_letter_bytes: Family<SubscriptionLabels, Gauge>,
    subscription_evicted: Family<SubscriptionLabels, Counter>,
    subscription_dead_letters_dropped: Family<SubscriptionLabels, Counter>,
    feed_buffered_bytes: Family<KindLabels, Gauge>,
    feed_overflows: Family<KindLabels, Counter>,
    leader: Gauge,
    access: AccessMetrics,
    on_demand: OnDemandMetrics,
}

/// The watches callers' queries started (see [`crate::watch::Watches::ensure_on_demand`]).
#[derive(Debug, Clone, Default)]
pub struct OnDemandMetrics {
    /// How many exist now (at most `maxOnDemandWatches`).
    pub watches: Gauge,
    /// How many were removed, idle for `onDemandIdleSeconds`.
    pub removed: Counter,
    /// Queries refused (429) because `maxOnDemandWatches` were in use.
    pub refused: Counter,
}

/// Gauges of one subscription's queue, read at scrape time.
#[derive(Debug, Clone, Copy, Default)]
pub struct QueueGauges {
    /// Deliveries waiting.
    pub pending: u64,
    /// Age of the oldest waiting delivery, seconds (0 when none).
    pub oldest_seconds: f64,
    /// Bytes of the changes waiting.
    pub pending_bytes: u64,
    /// Dead letters kept.
    pub dead_letters: u64,
    /// Bytes of the dead letters' changes.
    pub dead_letter_bytes: u64,
}

/// What happened to one delivery attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The sink took it.
    Delivered,
    /// Failed; tried again later.
    Retried,
    /// Refused; moved to the dead letters.
    DeadLettered,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with every metric at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("grw");
        let objects = Family::<KindLabels, Gauge>::default();
        let events = Family::<EventLabels, Counter>::default();
        let relists = Family::<KindLabels, Counter>::default();
        let watch_restarts = Family::<KindLabels, Counter>::default();
        let watch_ready = Family::<WatchLabels, Gauge>::default();
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica delivers notifications: always without leaderElection, else while it holds the Lease",
            leader.clone(),
        );
        let request_seconds = Family::<RequestLabels, Histogram>::new_with_constructor(|| {
            // 0.1 ms to ~3 s: cache answers are sub-millisecond, waits for a sync are seconds.
            Histogram::new([0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 3.0])
        });
        registry.register(
            "cached_objects",
            "Objects in the cache, per kind",
            objects.clone(),
        );
        registry.register(
            "watch_events",
            "Changes applied to caches, per kind and type",
            events.clone(),
        );
        registry.register(
            "relists",
            "Full relists after the first list, per kind",
            relists.clone(),
        );
        registry.register(
            "watch_restarts",
            "Watch requests re-opened, per kind",
            watch_restarts.clone(),
        );
        registry.register(
            "watch_ready",
            "1 while a watch is synced and watching, 0 while it syncs, reconnects or is refused; per kind and namespace (empty: the whole cluster)",
            watch_ready.clone(),
        );
        let plugin_calls = Family::<PluginResultLabels, Counter>::default();
        let plugin_loads = Family::<PluginResultLabels, Counter>::default();
        let plugin_call_seconds = Family::<PluginLabels, Histogram>::new_with_constructor(|| {
            // 1 µs to 100 ms: a filter call takes microseconds; the default deadline is 100 ms.
            Histogram::new([0.000001, 0.00001, 0.0001, 0.001, 0.01, 0.1])
        });
        registry.register(
            "plugin_calls",
            "Plugin calls, per plugin and result (ok, timeout, memory, trap)",
            plugin_calls.clone(),
        );
        registry.register(
            "plugin_call_duration_seconds",
            "Plugin call latency, per plugin",
            plugin_call_seconds.clone(),
        );
        registry.register(
            "plugin_loads",
            "Plugin load attempts, per plugin and result (ok, error)",
            plugin_loads.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "HTTP API request latency, per route and status",
            request_seconds.clone(),
        );
        let subscription_pending = Family::<SubscriptionLabels, Gauge>::default();
        let subscription_oldest_seconds =
            Family::<SubscriptionLabels, Gauge<f64, AtomicU64>>::default();
        let subscription_dead_letters = Family::<SubscriptionLabels, Gauge>::default();
        let subscription_deliveries = Family::<SubscriptionLabels, Counter>::default();
        let subscription_retries = Family::<SubscriptionLabels, Counter>::default();
        let subscription_failures = Family::<SubscriptionLabels, Counter>::default();
        let subscription_dead_lettered = Family::<SubscriptionLabels, Counter>::default();
        let subscription_filtered = Family::<SubscriptionLabels, Counter>::default();
        let subscription_condition_errors = Family::<SubscriptionLabels, Counter>::default();
        let feed_buffered_bytes = Family::<KindLabels, Gauge>::default();
        let feed_overflows = Family::<KindLabels, Counter>::default();
        let subscription_pending_bytes = Family::<SubscriptionLabels, Gauge>::default();
        let subscription_dead_letter_bytes = Family::<SubscriptionLabels, Gauge>::default();
        let subscription_evicted = Family::<SubscriptionLabels, Counter>::default();
        let subscription_dead_letters_dropped = Family::<SubscriptionLabels, Counter>::default();
        registry.register(
            "subscription_pending_bytes",
            "Bytes of the changes waiting in the outbox, per subscription (at most subscriptionPendingBytes)",
            subscription_pending_bytes.clone(),
        );
        registry.register(
            "subscription_dead_letter_bytes",
            "Bytes of the changes kept as dead letters, per subscription (at most subscriptionDeadLetterBytes)",
            subscription_dead_letter_bytes.clone(),
        );
        registry.register(
            "subscription_evicted",
            "Pending deliveries made dead letters because the subscription's pending deliveries exceeded subscriptionPendingBytes, per subscription",
            subscription_evicted.clone(),
        );
        registry.register(
            "subscription_dead_letters_dropped",
            "Dead letters dropped because the subscription's dead letters exceeded subscriptionDeadLetterBytes, per subscription",
            subscription_dead_letters_dropped.clone(),
        );
        registry.register(
            "subscription_pending_deliveries",
            "Deliveries waiting in the outbox, per subscription",
            subscription_pending.clone(),
        );
        registry.register(
            "subscription_oldest_pending_seconds",
            "Age of the oldest waiting delivery, per subscription",
            subscription_oldest_seconds.clone(),
        );
        registry.register(
            "subscription_dead_letters",
            "Dead letters kept, per subscription",
            subscription_dead_letters.clone(),
        );
        registry.register(
            "subscription_deliveries",
            "Deliveries the destination took, per subscription",
            subscription_deliveries.clone(),
        );
        registry.register(
            "subscription_retries",
            "Attempts that failed and are retried, per subscription",
            subscription_retries.clone(),
        );
        registry.register(
            "subscription_failures",
            "Failed attempts (retried or dead-lettered), per subscription",
            subscription_failures.clone(),
        );
        registry.register(
            "subscription_dead_lettered",
            "Deliveries moved to the dead letters, per subscription",
            subscription_dead_lettered.clone(),
        );
        registry.register(
            "subscription_filtered",
            "Changes the subscription's matchConditions or filter plugins did not let through, per subscription",
            subscription_filtered.clone(),
        );
        registry.register(
            "subscription_condition_errors",
            "Changes on which one of the subscription's matchConditions failed (not delivered), per subscription",
            subscription_condition_errors.clone(),
        );
        registry.register(
            "notification_buffered_bytes",
            "Object bytes of the changes waiting for the notification feed, per watched kind",
            feed_buffered_bytes.clone(),
        );
        registry.register(
            "notification_buffer_overflows",
            "Times the notification feed fell notificationBufferBytes behind and caught up from the cache's state, per watched kind",
            feed_overflows.clone(),
        );
        let reviews = Family::<ReviewResultLabels, Counter>::default();
        registry.register(
            "access_reviews",
            "Reviews GRW asked the API server for, to check its callers (delegated access), per review (TokenReview, SubjectAccessReview) and result",
            reviews.clone(),
        );
        let hits = Family::<ReviewLabels, Counter>::default();
        let entries = Family::<ReviewLabels, Gauge>::default();
        let labels = REVIEWS.map(|review| ReviewLabels {
            review: review.to_string(),
        });
        let access = AccessMetrics {
            reviews,
            hits: [0, 1].map(|i| hits.get_or_create(&labels[i]).clone()),
            entries: [0, 1].map(|i| entries.get_or_create(&labels[i]).clone()),
            reviews_at_once: [Gauge::default(), Gauge::default()],
            refused: Family::default(),
        };
        registry.register(
            "access_reviews_in_flight",
            "Reviews asked of the API server and not answered yet, TokenReviews and SubjectAccessReviews together (at most delegatedAuth.maxConcurrentReviews)",
            access.reviews_at_once[0].clone(),
        );
        registry.register(
            "access_reviews_queued",
            "Reviews waiting for a place among those in flight (at most delegatedAuth.maxQueuedReviews; past it requests are answered 429)",
            access.reviews_at_once[1].clone(),
        );
        registry.register(
            "access_cache_hits",
            "Requests whose caller or decision came from the cache, or from a review another request had started, per review",
            hits,
        );
        registry.register(
            "access_cache_entries",
            "Answers kept and reviews under way in the caches of delegated access, per review (at most delegatedAuth.cacheMaxEntries each)",
            entries,
        );
        registry.register(
            "access_refused_requests",
            "Requests refused by the access check, per HTTP status: 401 (no or bad token), 403 (not allowed), 429 (too many reviews under way), 503 (the API server could not say)",
            access.refused.clone(),
        );
        let queries = QueryMetrics {
            threads: Gauge::default(),
            waiting: Gauge::default(),
            running: Gauge::default(),
            // 1 ms to 10 s: the budget's default is 10 s.
            wait_seconds: Histogram::new([0.001, 0.01, 0.1, 1.0, 10.0]),
            examined: Counter::default(),
            match_answers_kept: Gauge::default(),
            refused: Family::default(),
        };
        registry.register(
            "query_threads",
            "Threads that run the costly part of queries (queries.threads)",
            queries.threads.clone(),
        );
        registry.register(
            "query_waiting",
            "Queries waiting for a query thread (at most queries.queue)",
            queries.waiting.clone(),
        );
        registry.register(
            "query_running",
            "Queries running on the query threads",
            queries.running.clone(),
        );
        registry.register(
            "query_wait_seconds",
            "How long queries waited for a query thread",
            queries.wait_seconds.clone(),
        );
        registry.register(
            "query_examined_objects",
            "Objects the query threads examined (read a field of, rendered, filtered)",
            queries.examined.clone(),
        );
        registry.register(
            "query_match_answers_kept",
            "What match= expressions answered for cached objects, kept so that the same expression asked again evaluates only the objects changed since (at most 1,048,576, all expressions together)",
            queries.match_answers_kept.clone(),
        );
        registry.register(
            "query_refused",
            "Queries refused, per reason: busy (queries.queue full, 429), waited (longer than queries.budgetMillis for a thread, 429), budget (spent queries.budgetMillis of CPU, 504)",
            queries.refused.clone(),
        );
        let on_demand = OnDemandMetrics::default();
        registry.register(
            "on_demand_watches",
            "Watches started by queries and asked for by nothing else (at most maxOnDemandWatches); each is removed after onDemandIdleSeconds unused",
            on_demand.watches.clone(),
        );
        registry.register(
            "on_demand_watches_removed",
            "Watches started by queries removed after onDemandIdleSeconds unused",
            on_demand.removed.clone(),
        );
        registry.register(
            "on_demand_watches_refused",
            "Queries answered 429 because maxOnDemandWatches watches started by queries were in use",
            on_demand.refused.clone(),
        );
        Metrics {
            queries,
            access,
            on_demand,
            subscription_filtered,
            subscription_condition_errors,
            subscription_pending_bytes,
            subscription_dead_letter_bytes,
            subscription_evicted,
            subscription_dead_letters_dropped,
            feed_buffered_bytes,
            feed_overflows,
            subscription_pending,
            subscription_oldest_seconds,
            subscription_dead_letters,
            subscription_deliveries,
            subscription_retries,
            subscription_failures,
            subscription_dead_lettered,
            registry,
            objects,
            events,
            relists,
            watch_restarts,
            watch_ready,
            request_seconds,
            plugin_calls,
            plugin_call_seconds,
            plugin_loads,
            leader,
        }
    }

    /// The handles of the query pool's metrics.
    pub fn queries(&self) -> QueryMetrics {
        self.queries.clone()
    }

    /// The handles of the access checks' metrics.
    pub fn access(&self) -> AccessMetrics {
        self.access.clone()
    }

    /// The metrics of watches started by queries.
    pub fn on_demand(&self) -> &OnDemandMetrics {
        &self.on_demand
    }

    /// Sets whether this replica delivers notifications.
    pub fn leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Records one delivery attempt of a subscription.
    pub fn delivery_attempt(&self, subscription: &str, attempt: Attempt) {
        let labels = SubscriptionLabels {
            subscription: subscription.to_string(),
        };
        match attempt {
            Attempt::Delivered => {
                self.subscription_deliveries.get_or_create(&labels).inc();
            }
            Attempt::Retried => {
                self.subscription_retries.get_or_create(&labels).inc();
                self.subscription_failures.get_or_create(&labels).inc();
            }
            Attempt::DeadLettered => {
                self.subscription_dead_lettered.get_or_create(&labels).inc();
                self.subscription_failures.get_or_create(&labels).inc();
            }
        }
    }

    /// Sets the queue gauges of a subscription.
    pub fn queue(&self, subscription: &str, gauges: QueueGauges) {
        let labels = SubscriptionLabels {
            subscription: subscription.to_string(),
        };
        self.subscription_pending
            .get_or_create(&labels)
            .set(gauges.pending as i64);
        self.subscription_oldest_seconds
            .get_or_create(&labels)
            .set(gauges.oldest_seconds);
        self.subscription_dead_letters
            .get_or_create(&labels)
            .set(gauges.dead_letters as i64);
        self.subscription_pending_bytes
            .get_or_create(&labels)
            .set(gauges.pending_bytes as i64);
        self.subscription_dead_letter_bytes
            .get_or_create(&labels)
            .set(gauges.dead_letter_bytes as i64);
    }

    /// Counts what a subscription's bounds did: pending deliveries made dead
    /// letters, and dead letters dropped.
    pub fn subscription_trimmed(&self, subscription: &str, evicted: u64, dropped: u64) {
        let labels = SubscriptionLabels {
            subscription: subscription.to_string(),
        };
        self.subscription_evicted
            .get_or_create(&labels)
            .inc_by(evicted);
        self.subscription_dead_letters_dropped
            .get_or_create(&labels)
            .inc_by(dropped);
    }

    /// Forgets the metrics of a deleted subscription.
    pub fn forget_subscription(&self, subscription: &str) {
        let labels = SubscriptionLabels {
            subscription: subscription.to_string(),
        };
        self.subscription_pending.remove(&labels);
        self.subscription_oldest_seconds.remove(&labels);
        self.subscription_dead_letters.remove(&labels);
        self.subscription_deliveries.remove(&labels);
        self.subscription_retries.remove(&labels);
        self.subscription_failures.remove(&labels);
        self.subscription_dead_lettered.remove(&labels);
        self.subscription_filtered.remove(&labels);
        self.subscription_condition_errors.remove(&labels);
        self.subscription_pending_bytes.remove(&labels);
        self.subscription_dead_letter_bytes.remove(&labels);
        self.subscription_evicted.remove(&labels);
        self.subscription_dead_letters_dropped.remove(&labels);
    }

    /// Counts a change on which one of a subscription's `matchConditions`
    /// failed.
    pub fn subscription_condition_error(&self, subscription: &str) {
        self.subscription_condition_errors
            .get_or_create(&SubscriptionLabels {
                subscription: subscription.to_string(),
            })
            .inc();
    }

    /// Counts a change a subscription's filter plugins did not let through.
    pub fn subscription_filtered(&self, subscription: &str) {
        self.subscription_filtered
            .get_or_create(&SubscriptionLabels {
                subscription: subscription.to_string(),
            })
            .inc();
    }

    /// Sets the bytes of changes waiting for a watch's notification feed,
    /// and how often it overflowed since the watch started.
    pub fn feed(&self, gvk: &str, buffered_bytes: usize, overflows: u64) {
        let labels = KindLabels {
            gvk: gvk.to_string(),
        };
        self.feed_buffered_bytes
            .get_or_create(&labels)
            .set(buffered_bytes as i64);
        let counter = self.feed_overflows.get_or_create(&labels);
        let counted = counter.get();
        if overflows > counted {
            counter.inc_by(overflows - counted);
        }
    }

    /// Records one plugin call; `failure` is `None` when it answered.
    pub fn plugin_call(&self, plugin: &str, seconds: f64, failure: Option<&str>) {
        let labels = PluginResultLabels {
            plugin: plugin.to_string(),
            result: failure.unwrap_or("ok").to_string(),
        };
        self.plugin_calls.get_or_create(&labels).inc();
        self.plugin_call_seconds
            .get_or_create(&PluginLabels {
                plugin: plugin.to_string(),
            })
            .observe(seconds);
    }

    /// The handles of a plugin's answered calls, resolved once so that a
    /// call costs no label lookup.
    pub fn plugin_call_metrics(&self, plugin: &str) -> PluginCallMetrics {
        PluginCallMetrics {
            ok: self
                .plugin_calls
                .get_or_create(&PluginResultLabels {
                    plugin: plugin.to_string(),
                    result: "ok".to_string(),
                })
                .clone(),
            seconds: self
                .plugin_call_seconds
                .get_or_create(&PluginLabels {
                    plugin: plugin.to_string(),
                })
                .clone(),
        }
    }

    /// Records one plugin load attempt.
    pub fn plugin_load(&self, plugin: &str, ok: bool) {
        let labels = PluginResultLabels {
            plugin: plugin.to_string(),
            result: if ok { "ok" } else { "error" }.to_string(),
        };
        self.plugin_loads.get_or_create(&labels).inc();
    }

    /// Sets whether a watch is synced and watching (read at scrape time).
    pub fn watch_ready(&self, gvk: &str, namespace: Option<&str>, ready: bool) {
        self.watch_ready
            .get_or_create(&WatchLabels {
                gvk: gvk.to_string(),
                namespace: namespace.unwrap_or_default().to_string(),
            })
            .set(i64::from(ready));
    }

    /// Sets the object count of a kind.
    pub fn objects(&self, gvk: &str, count: usize) {
        self.objects
            .get_or_create(&KindLabels {
                gvk: gvk.to_string(),
            })
            .set(count as i64);
    }

    /// Counts one applied change.
    pub fn event(&self, gvk: &str, kind: &str) {
        let labels = EventLabels {
            gvk: gvk.to_string(),
            r#type: TypeLabel {
                r#type: kind.to_string(),
            },
        };
        self.events.get_or_create(&labels).inc();
    }

    /// Counts one relist.
    pub fn relist(&self, gvk: &str) {
        self.relists
            .get_or_create(&KindLabels {
                gvk: gvk.to_string(),
            })
            .inc();
    }

    /// Counts one re-opened watch.
    pub fn watch_restart(&self, gvk: &str) {
        self.watch_restarts
            .get_or_create(&KindLabels {
                gvk: gvk.to_string(),
            })
            .inc();
    }

    /// Records one HTTP request.
    pub fn request(&self, route: &str, status: u16, seconds: f64) {
        self.request_seconds
            .get_or_create(&RequestLabels {
                route: route.to_string(),
                status,
            })
            .observe(seconds);
    }

    /// The text exposition format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_counters_with_labels() {
        let m = Metrics::new();
        m.objects("v1/Pod", 3);
        m.event("v1/Pod", "ADDED");
        m.relist("v1/Pod");
        m.request("/api/v1/objects/{kind}", 200, 0.002);
        let text = m.encode();
        assert!(
            text.contains(r#"grw_cached_objects{gvk="v1/Pod"} 3"#),
            "{text}"
        );
        assert!(
            text.contains(r#"grw_watch_events_total{gvk="v1/Pod",type="ADDED"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"grw_relists_total{gvk="v1/Pod"} 1"#),
            "{text}"
        );
        assert!(
            text.contains("grw_http_request_duration_seconds_count"),
            "{text}"
        );
    }
}
