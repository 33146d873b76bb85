//! The resolved configuration: every key with its default applied, every
//! value checked and in its typed form.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::accepted::{ApiAuth, AuthType, LogLevel, LogType};
use super::allowed_hosts::AllowedHosts;
use super::compat_body::NotifierFilter;
use super::subscription::SubscriptionConfig;
use super::values::Parsed;
use crate::event::ChangeType;
use crate::gvk::Gvk;
use crate::selectors::{FieldSelector, LabelSelector};

/// The daemon's whole configuration, after the file, the environment and
/// command-line flags were merged (flags win over the file).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Log threshold (`minLogLevel`).
    pub log_level: LogLevel,
    /// Log format (`logType`).
    pub log_type: LogType,
    /// Address the HTTP API binds (`listenAddress`, default `127.0.0.1`).
    pub listen_address: IpAddr,
    /// Port of the HTTP API (`listenPort`, default 3000).
    pub listen_port: u16,
    /// Where the Kubernetes API is served on the API listener
    /// (`kubeApiPathPrefix`, default `/kube`).
    pub kube_api_path_prefix: String,
    /// The web console's base URL as users reach it (`consoleUrl`, without a
    /// trailing `/`); none = deliveries carry no link to it.
    pub console_url: Option<String>,
    /// Kinds watched from start-up (`initialWatchingResources`).
    pub initial_resources: Vec<WatchedResource>,
    /// Receive every event of every initial kind (`globalWebhookUrls`).
    pub global_webhook_urls: Vec<String>,
    /// Re-read discovery periodically (`enableSyncApiGroups`, default true).
    pub sync_api_groups: bool,
    /// Period of the discovery re-read (`apiGroupsSyncIntervalSecond`, default 30 s).
    pub api_groups_sync_interval: Duration,
    /// How to reach the API server (`k8sClientConfig`).
    pub client: ClientConfig,
    /// Keep `metadata.managedFields` in cached objects (`keepManagedFields`, default false).
    pub keep_managed_fields: bool,
    /// Sync each watch with a streaming list where the API server offers
    /// one, in LIST pages where it does not (`streamingList`, default true).
    pub streaming_list: bool,
    /// A query for a kind not yet watched starts its watch (`onDemandWatch`, default true).
    pub on_demand_watch: bool,
    /// Allow on-demand watches of Secrets (`allowOnDemandSecrets`, default false).
    pub allow_on_demand_secrets: bool,
    /// How long a query waits for a new watch to sync (`syncTimeoutSecond`, default 30 s).
    pub sync_timeout: Duration,
    /// A watch a query started is removed after this long unused
    /// (`onDemandIdleSeconds`, default 600 s).
    pub on_demand_idle: Duration,
    /// How many watches queries may have started at once
    /// (`maxOnDemandWatches`, default 100); over it, a query that needs a
    /// new one is answered 429.
    pub max_on_demand_watches: usize,
    /// The longest an event stream lasts (`watchStreamMaxSeconds`, default
    /// 3600 s): one without `timeoutSeconds` lasts half of it to all of it,
    /// a longer `timeoutSeconds` is cut to it.
    pub watch_stream_max: Duration,
    /// File holding the bearer token that API clients must send (`apiTokenFile`).
    pub api_token_file: Option<PathBuf>,
    /// How the API listener decides who may read what (`apiAuth`); `None`
    /// is the default, which [`Config::api_auth`] resolves.
    pub api_auth: Option<ApiAuth>,
    /// The caches of `delegated` access checks (`delegatedAuth`).
    pub delegated_auth: DelegatedAuth,
    /// A second API listener, serving TLS (`tlsListener`); none = no such listener.
    pub tls_listener: Option<TlsListener>,
    /// Serve a recorded event file instead of a cluster (`replayFile`, `--replay`).
    pub replay_file: Option<PathBuf>,
    /// Events kept per kind for resuming event streams (`eventHistorySize`, default 10000).
    pub event_history_size: usize,
    /// Bytes of changes kept per kind, counting each change's object at its
    /// stored (compressed) size (`eventHistoryBytes`, default 64 MiB): the
    /// history ends at whichever of this and `eventHistorySize` it reaches
    /// first, so a kind of large objects cannot hold gigabytes of history.
    pub event_history_bytes: usize,
    /// Largest accepted request body (`maxRequestBodyBytes`, default 1 MiB).
    pub max_request_body_bytes: usize,
    /// Directory of plugin components (`pluginDir`); none = no plugins.
    pub plugin_dir: Option<PathBuf>,
    /// The analyzers compiled into GRW that run (`builtinAnalyzers`:
    /// `true`, the default, for all of [`BUILT_IN_ANALYZERS`], `false` for
    /// none, or a list of their names).
    pub builtin_analyzers: Vec<String>,
    /// Where compiled plugins are cached (`pluginCacheDir`, default
    /// `$TMPDIR/grw-plugin-cache-<uid>`).
    pub plugin_cache_dir: Option<PathBuf>,
    /// The most bytes of compiled plugins the cache holds
    /// (`pluginCacheMaxBytes`, default 1 GiB); the least recently used go.
    pub plugin_cache_max_bytes: u64,
    /// Hosts notifier plugins may reach (`pluginAllowedHosts`): `host`,
    /// `host:port` or `*.domain`. A plugin's own manifest must allow the host
    /// too. Empty = no outbound HTTP for plugins.
    pub plugin_allowed_hosts: AllowedHosts,
    /// Where pending deliveries, subscriptions and the last announced state
    /// live (`dataDir`); none = in memory, lost on restart.
    pub data_dir: Option<PathBuf>,
    /// Native subscriptions (`subscriptions`), checked; their names are
    /// unique.
    pub subscriptions: Vec<SubscriptionConfig>,
    /// Most object bytes of changes that may wait for a watch's notification
    /// feed (`notificationBufferBytes`, default 64 MiB); past it the feed
    /// catches up from the cache's state once it can write again.
    pub notification_buffer_bytes: usize,
    /// Most bytes of changes one subscription's pending deliveries may hold
    /// (`subscriptionPendingBytes`, default 256 MiB); past it the oldest
    /// become dead letters.
    pub subscription_pending_bytes: u64,
    /// Most bytes of changes one subscription's dead letters may hold
    /// (`subscriptionDeadLetterBytes`, default 64 MiB); past it the oldest
    /// are dropped.
    pub subscription_dead_letter_bytes: u64,
    /// Several replicas, one of which delivers notifications
    /// (`leaderElection`); none = this process delivers.
    pub leader_election: Option<LeaderElection>,
    /// How queries are run and which fields are indexed (`queries`).
    pub queries: Queries,
    /// The journal of changes (`journal`).
    pub journal: JournalConfig,
}

impl Config {
    /// How the API listener decides who may read what: `apiAuth`, else
    /// `token` when `apiTokenFile` is set, else `none`.
    pub fn api_auth(&self) -> ApiAuth {
        match (self.api_auth, &self.api_token_file) {
            (Some(auth), _) => auth,
            (None, Some(_)) => ApiAuth::Token,
            (None, None) => ApiAuth::None,
        }
    }

    /// Where the journal watches Events (`journal.events`): `None` when it
    /// does not (no journal, `events: false`, or a replay), `Some(Some(ns))`
    /// in namespace `ns` when every configured watch and subscription is
    /// in `ns` (a sidecar's Role then covers it), `Some(None)` in the whole
    /// cluster otherwise.
    pub fn journal_events(&self) -> Option<Option<String>> {
        if !self.journal.enabled || !self.journal.events || self.replay_file.is_some() {
            return None;
        }
        let mut namespaces = self
            .initial_resources
            .iter()
            .map(|r| r.options.namespace.as_deref())
            .chain(self.subscriptions.iter().map(|s| s.namespace.as_deref()));
        let first = namespaces.next().flatten();
        Some(
            first
                .filter(|ns| namespaces.all(|other| other == Some(*ns)))
                .map(str::to_string),
        )
    }

    /// Whether a listener checks callers with the API server.
    pub fn delegates_access(&self) -> bool {
        self.api_auth() == ApiAuth::Delegated
            || self
                .tls_listener
                .as_ref()
                .is_some_and(|tls| tls.auth == ApiAuth::Delegated)
    }
}

/// `delegatedAuth`: how long the API server's answers about callers are
/// reused, and how many are kept.
///
/// The defaults are those of the Kubernetes API server's own delegating
/// authenticator and authorizer (what an aggregated API server or a
/// kubelet uses): every answer kept 10 s, "very low for responsiveness, but
/// high enough to handle storms", and at most 8192 decisions, the size of
/// its webhook authorizer's LRU cache. A revoked permission is thus still
/// honoured for up to 10 s, as by those servers; a busy client costs one
/// review per 10 s per distinct request, not one per request.
#[derive(Debug, Clone, PartialEq)]
pub struct DelegatedAuth {
    /// `cacheAllowedSeconds` (10): how long an allowed decision is reused.
    pub cache_allowed: Duration,
    /// `cacheDeniedSeconds` (10): how long a denied decision, or a token the
    /// API server did not accept, is reused.
    pub cache_denied: Duration,
    /// `tokenCacheSeconds` (10): how long who a token belongs to is reused.
    pub token_cache: Duration,
    /// `cacheMaxEntries` (8192): the most decisions kept, and the most
    /// tokens; the least recently used go first.
    pub cache_max_entries: usize,
    /// `widen` (true): a read is asked in its widest form first (the
    /// resource everywhere, then in the namespace), which is sound when an
    /// allow over every namespace holds for each of them, as in RBAC; off,
    /// each request is asked exactly, for an authorizer (a webhook) that may
    /// deny in one namespace what it allows cluster-wide.
    pub widen: bool,
    /// `maxConcurrentReviews` (32): the most reviews (TokenReviews and
    /// SubjectAccessReviews together) asked of the API server at once.
    pub max_concurrent_reviews: usize,
    /// `maxQueuedReviews` (256): the most reviews waiting for one of those
    /// places; a request whose review finds no place is answered 429.
    pub max_queued_reviews: usize,
}

impl Default for DelegatedAuth {
    fn default() -> Self {
        DelegatedAuth {
            cache_allowed: Duration::from_secs(10),
            cache_denied: Duration::from_secs(10),
            token_cache: Duration::from_secs(10),
            cache_max_entries: 8192,
            widen: true,
            // The API server's own default for a client is 5 requests per
            // second with bursts of 10 (client-go); 32 at once is a burst
            // a busy GRW may need, and far from what its API Priority and
            // Fairness would reject for one client. 256 waiting behind
            // them is 8 rounds of reviews, a few hundred milliseconds.
            max_concurrent_reviews: 32,
            max_queued_reviews: 256,
        }
    }
}

/// `queries`: the threads that run the costly part of queries, and the
/// fields the caches index for field selectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Queries {
    /// `threads`: threads running queries; `None` (the default) means one
    /// fewer than the cores, at least one.
    pub threads: Option<usize>,
    /// `queue` (64): queries that may wait for a thread; more are refused
    /// with 429.
    pub queue: usize,
    /// `budgetMillis` (10000): CPU time one query may take on its thread,
    /// and the longest it may wait for one.
    pub budget: Duration,
    /// `scanHelpers`: low-priority threads that share a query's long read
    /// of objects; `None` (the default) means one fewer than the cores, 0
    /// none.
    pub scan_helpers: Option<usize>,
    /// `indexedFields`: fields indexed besides Pods' `spec.nodeName` and
    /// `status.phase`.
    pub indexed_fields: Vec<IndexedFields>,
}

impl Default for Queries {
    fn default() -> Self {
        Queries {
            threads: None,
            queue: 64,
            budget: Duration::from_secs(10),
            scan_helpers: None,
            indexed_fields: Vec::new(),
        }
    }
}

/// `journal`: the record of every change of the watched kinds (see
/// docs/timeline.md).
#[derive(Debug, Clone, PartialEq)]
pub struct JournalConfig {
    /// `enabled` (true): keep a journal.
    pub enabled: bool,
    /// `maxAgeSeconds` (7 days): changes older than this are dropped.
    pub max_age: Duration,
    /// `maxBytes`: the most bytes the journal holds; the oldest changes go
    /// first. `None` is the default: 1 GiB on disk (with `dataDir`), 64 MiB
    /// in memory.
    pub max_bytes: Option<u64>,
    /// `events` (true): watch Kubernetes Events (`events.k8s.io/v1`) so
    /// that timelines show them, in the namespace every configured watch
    /// is in or else in the whole cluster ([`Config::journal_events`]).
    /// Events of a watched Event kind are journaled either way. The watch
    /// holds up no readiness, and a refusal (RBAC) is logged, not fatal.
    pub events: bool,
    /// `kinds`: per-kind settings, over the defaults.
    pub kinds: Vec<JournalKind>,
}

impl Default for JournalConfig {
    fn default() -> Self {
        JournalConfig {
            enabled: true,
            max_age: Duration::from_secs(7 * 24 * 3600),
            max_bytes: None,
            events: true,
            kinds: Vec::new(),
        }
    }
}

/// One entry of `journal.kinds`.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalKind {
    /// `group` (`""`, the core group).
    pub group: String,
    /// `kind`.
    pub kind: String,
    /// `journal`: whether its changes are kept (Leases, Endpoints and
    /// EndpointSlices are not, unless set to true here).
    pub journal: Option<bool>,
    /// `maxAgeSeconds`: its own age limit.
    pub max_age: Option<Duration>,
    /// `maxBytes`: the most bytes its changes may hold.
    pub max_bytes: Option<u64>,
}

/// One kind's fields to index: `{"group", "kind", "fields"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFields {
    /// API group, `""` for the core group; any version of the kind.
    pub group: String,
    /// Kind, as in `kind` of its objects (`Pod`, `Deployment`).
    pub kind: String,
    /// Field paths, as field selectors write them, split into segments.
    pub fields: Vec<Vec<String>>,
}

impl Queries {
    /// The fields a cache of `gvk` indexes: Pods' `spec.nodeName` and
    /// `status.phase` (the Pod fields the API server's own cache indexes
    /// or clients select on most: `kubectl describe node`, the kubelet,
    /// and `kubectl get pods --field-selector status.phase=...`), then
    /// the configured ones.
    pub fn indexed_fields_of(&self, gvk: &Gvk) -> Vec<Vec<String>> {
        let mut fields = Vec::new();
        if gvk.group.is_empty() && gvk.kind == "Pod" {
            for path in [["spec", "nodeName"], ["status", "phase"]] {
                fields.push(path.map(String::from).to_vec());
            }
        }
        for configured in &self.indexed_fields {
            if configured.group == gvk.group && configured.kind == gvk.kind {
                fields.extend(configured.fields.iter().cloned());
            }
        }
        fields
    }
}

/// `tlsListener`: a second listener serving the same API over TLS.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsListener {
    /// `address` (default `0.0.0.0`: it is meant for clients elsewhere).
    pub address: IpAddr,
    /// `port` (default 8443).
    pub port: u16,
    /// `certFile`, required: the certificate chain (PEM), read again when it changes.
    pub cert_file: PathBuf,
    /// `keyFile`, required: its private key (PEM), read again when it changes.
    pub key_file: PathBuf,
    /// `auth` (default `delegated`).
    pub auth: ApiAuth,
}

/// `leaderElection`: which replica delivers notifications, chosen by a
/// `coordination.k8s.io/v1` Lease. The periods work as in client-go.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderElection {
    /// `leaseName`, default `grw`.
    pub lease_name: String,
    /// `leaseNamespace`; default the `POD_NAMESPACE` environment variable,
    /// else the service account's namespace, else `default`.
    pub lease_namespace: Option<String>,
    /// `identity` of this replica; default `POD_NAME`, else the host name,
    /// with the process id.
    pub identity: Option<String>,
    /// `leaseDurationSeconds` (15): how long others wait after the last
    /// renewal they saw before taking over.
    pub lease_duration: Duration,
    /// `renewDeadlineSeconds` (10): a leader that could not renew for this
    /// long stops delivering.
    pub renew_deadline: Duration,
    /// `retryPeriodSeconds` (2): how often the Lease is read or renewed.
    pub retry_period: Duration,
}

impl Default for LeaderElection {
    fn default() -> Self {
        LeaderElection {
            lease_name: "grw".into(),
            lease_namespace: None,
            identity: None,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// One entry of `initialWatchingResources`.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchedResource {
    /// The kind to watch; the version may be empty only if discovery should pick the preferred one.
    pub gvk: Gvk,
    /// `watchOptions`.
    pub options: WatchOptions,
    /// `notifiers` (delivered by the notification engine).
    pub notifiers: Vec<NotifierConfig>,
}

/// `watchOptions` of a watched resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct WatchOptions {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Label selector; its text is passed to the API server.
    pub label_selector: Option<Parsed<LabelSelector>>,
    /// Field selector; its text is passed to the API server.
    pub field_selector: Option<Parsed<FieldSelector>>,
    /// Extra query parameters for LIST and WATCH requests (`additionalK8sApiQueryParams`), sorted by name.
    pub extra_params: Vec<(String, String)>,
}

/// One entry of a resource's `notifiers`.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifierConfig {
    /// Receivers (`webhookUrls`, required, at least one).
    pub webhook_urls: Vec<String>,
    /// Event types wanted (`eventTypes`), each once, in the order written;
    /// empty = all.
    pub event_types: Vec<ChangeType>,
    /// `filter`, same shape as the compat query body; `None` = everything.
    pub filter: Option<NotifierFilter>,
    /// `matchConditions`, as a subscription's: CEL conditions every
    /// change must meet.
    pub match_conditions: Vec<super::subscription::MatchCondition>,
}

/// `k8sClientConfig`: how to reach the API server.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientConfig {
    /// Use the pod's service account (`autoInClusterConfig`, or env `AUTO_INCLUSTER_CONFIG=true`).
    pub in_cluster: bool,
    /// `authType`; `None` = kubeconfig.
    pub auth_type: Option<AuthType>,
    /// `kubeConfigFilePath` (`KUBECONFIG` wins, then this, then `~/.kube/config`).
    pub kubeconfig_path: Option<PathBuf>,
    /// `apiServerUrl`, required for `BearerToken` and `ClientCertificate`.
    pub api_server_url: Option<String>,
    /// `tokenFilePath`.
    pub token_file: Option<PathBuf>,
    /// `caCertPath`.
    pub ca_cert_path: Option<PathBuf>,
    /// `caCertDataPemBase64`, decoded.
    pub ca_cert_pem: Option<Vec<u8>>,
    /// `clientCertPath`.
    pub client_cert_path: Option<PathBuf>,
    /// `clientKeyPath`.
    pub client_key_path: Option<PathBuf>,
    /// `clientCertDataPemBase64`, decoded.
    pub client_cert_pem: Option<Vec<u8>>,
    /// `clientKeyDataPemBase64`, decoded.
    pub client_key_pem: Option<Vec<u8>>,
}
