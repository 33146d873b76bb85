//! The daemon: wires the source (an API server or a recording), discovery,
//! watches and the HTTP API together, and runs until asked to stop.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::api::tls::{ReloadingCertificate, TlsListener};
use crate::api::{self, Access, AppState};
use crate::config::{Config, WatchOptions};
use crate::gvk::{Gvk, KindRef, ResourceInfo};
use crate::journal::{EdgeRecord, Journal};
use crate::kube::{Catalog, CrdFollowing, Discovery, KubeClient};
use crate::leader::{Candidate, Elector};
use crate::metrics::Metrics;
use crate::notify::Notifications;
use crate::plugin::{ArtifactCache, Limits, Plugins};
use crate::query::{PoolSettings, QueryPool};
use crate::relations::Relations;
use crate::store::{Change, Origin, StoredObject};
use crate::watch::{Pending, Recording, WatchSettings, Watches};

/// After a stop signal, open event streams get this long before the process exits.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// At a stop, how long the API server gets to take the leader's Lease back.
const RELEASE_WAIT: Duration = Duration::from_secs(3);

/// Changes to CRDs often come in bursts (an operator installing twenty);
/// one discovery refresh after the burst settles is enough.
const CRD_DEBOUNCE: Duration = Duration::from_millis(300);

/// Why GRW stopped before it was asked to, or could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A listener's access check cannot be made (`apiTokenFile` cannot be read...).
    #[error(transparent)]
    Access(#[from] crate::api::AccessError),
    /// The TLS listener's certificate cannot be used.
    #[error(transparent)]
    Certificate(#[from] crate::api::tls::CertificateError),
    /// The TLS settings cannot be made.
    #[error("cannot set up TLS for tlsListener")]
    Tls(#[source] rustls::Error),
    /// The recording cannot be replayed.
    #[error(transparent)]
    Replay(#[from] crate::watch::ReplayError),
    /// No client for the API server can be made.
    #[error(transparent)]
    Client(#[from] crate::kube::ApiError),
    /// `pluginDir` is not a directory.
    #[error("pluginDir {} is not a directory", .0.display())]
    PluginDir(std::path::PathBuf),
    /// The plugins cannot be set up.
    #[error(transparent)]
    Plugins(#[from] crate::plugin::PluginError),
    /// The journal cannot open.
    #[error(transparent)]
    Journal(#[from] crate::journal::OpenError),
    /// The notification engine cannot start.
    #[error(transparent)]
    Notifications(#[from] crate::notify::OpenError),
    /// An API listener's address cannot be listened on.
    #[error("cannot listen on {address}")]
    Listen {
        /// `listenAddress:listenPort`, or the TLS listener's.
        address: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The API server failed.
    #[error("the HTTP API failed")]
    Serve(#[source] std::io::Error),
    /// A task of start-up or of the API ended in a panic.
    #[error("a task failed")]
    Task(#[from] tokio::task::JoinError),
}

/// The query pool as `queries` sizes it.
pub fn query_pool_settings(config: &Config) -> PoolSettings {
    PoolSettings {
        threads: config
            .queries
            .threads
            .unwrap_or_else(PoolSettings::default_threads),
        queue: config.queries.queue,
        budget: config.queries.budget,
    }
}

/// Runs GRW until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    let config = Arc::new(config);
    let metrics = Arc::new(Metrics::new());
    let journal_scope = config.journal.enabled.then(|| {
        Arc::new(
            crate::journal::Scope::new(&config.journal, config.data_dir.is_some())
                .with_managed_fields_kept(config.keep_managed_fields),
        )
    });
    let who = match &journal_scope {
        Some(scope) => {
            let scope = scope.clone();
            crate::watch::WhoKinds::new(move |gvk| scope.covers(&gvk.group, &gvk.kind))
        }
        None => crate::watch::WhoKinds::none(),
    };
    let settings = WatchSettings {
        keep_managed_fields: config.keep_managed_fields,
        who,
        streaming_list: config.streaming_list,
        history_size: config.event_history_size,
        history_bytes: config.event_history_bytes,
        queries: Arc::new(config.queries.clone()),
        on_demand_idle: config.on_demand_idle,
        max_on_demand: config.max_on_demand_watches,
        ..WatchSettings::default()
    };
    let journal = match &journal_scope {
        Some(scope) => Some(Journal::open(scope.clone(), config.data_dir.as_deref())?),
        None => None,
    };
    let (discovery, watches, client) = match &config.replay_file {
        Some(path) => {
            let recording = Recording::read(path)?;
            let watches = Arc::new(Watches::new(None, settings, metrics.clone()));
            let replayed = replay(&recording, &watches, &metrics, config.keep_managed_fields);
            if let Some(journal) = &journal {
                journal.replayed(replayed).await;
            }
            tracing::info!(file = %path.display(), events = recording.events.len(), kinds = recording.resources.len(), "serving a recording");
            let discovery = Arc::new(Discovery::fixed(Catalog::fixed(recording.resources)));
            (discovery, watches, None)
        }
        None => {
            let client = KubeClient::connect(&config.client).await?;
            let discovery = Arc::new(Discovery::new(client.clone()));
            let watches = Arc::new(Watches::new(
                Some(client.clone()),
                settings,
                metrics.clone(),
            ));
            watches.await_discovery();
            for resource in &config.initial_resources {
                let kind = KindRef {
                    group: Some(resource.gvk.group.clone()),
                    version: Some(resource.gvk.version.clone()).filter(|v| !v.is_empty()),
                    name: resource.gvk.kind.clone(),
                };
                watches.add_pending(Pending {
                    kind,
                    options: resource.options.clone(),
                    reason: "waiting for discovery".into(),
                    optional: false,
                });
            }
            if let Some(namespace) = config.journal_events().filter(|_| journal.is_some()) {
                // Timelines show Events.
                watches.add_pending(Pending {
                    kind: KindRef {
                        group: Some("events.k8s.io".into()),
                        version: None,
                        name: "Event".into(),
                    },
                    options: WatchOptions {
                        namespace,
                        ..WatchOptions::default()
                    },
                    reason: "waiting for discovery (journal.events)".into(),
                    optional: true,
                });
            }
            (discovery, watches, Some(client))
        }
    };
    let plugins = load_plugins(&config, &metrics).await?;
    let notifications = Notifications::open(
        &config,
        watches.clone(),
        discovery.clone(),
        plugins.clone(),
        metrics.clone(),
    )?;
    notifications.start();
    let relations = Relations::start(watches.clone(), discovery.clone(), plugins.clone());
    if let Some(journal) = &journal {
        journal.follow_watches(&watches);
        let recording = journal.clone();
        relations.on_edge_changes(Arc::new(move |changes| {
            recording.edges(
                changes
                    .into_iter()
                    .map(|(edge, added)| EdgeRecord {
                        from: crate::journal::node_key(&edge.from),
                        relation: edge.relation.to_string(),
                        to: crate::journal::node_key(&edge.to),
                        analyzer: edge.analyzer.to_string(),
                        added,
                    })
                    .collect(),
            );
        }));
    }
    let elector = match (&config.leader_election, &client) {
        (Some(election), Some(client)) => {
            let candidate = Candidate::new(election, &|name| std::env::var(name).ok());
            let elector = Elector::new(
                client.clone(),
                election.clone(),
                candidate,
                notifications.clone(),
            );
            Some(elector)
        }
        _ => None,
    };
    let elector = elector.map(|elector| {
        let elector = Arc::new(tokio::sync::Mutex::new(elector));
        let running = elector.clone();
        tokio::spawn(Elector::run(running));
        elector
    });
    if client.is_some() {
        tokio::spawn(keep_discovery(
            discovery.clone(),
            watches.clone(),
            notifications.clone(),
            config.clone(),
        ));
    }
    let access = Access::new(&config, client.as_ref(), &metrics)?;
    let guard = access.guard(config.api_auth())?;
    crate::query::scan::configure(config.queries.scan_helpers);
    let queries = QueryPool::new(query_pool_settings(&config), metrics.queries());
    let state = Arc::new(AppState {
        config: config.clone(),
        discovery,
        watches,
        metrics,
        client,
        plugins,
        notifications,
        relations,
        queries,
        journal,
    });
    // The TLS listener's certificate is read before anything listens: a
    // file that cannot be used stops GRW at once.
    let tls = match &config.tls_listener {
        Some(tls) => {
            let provider = api::tls::crypto_provider();
            let certificate = Arc::new(ReloadingCertificate::load(
                tls.cert_file.clone(),
                tls.key_file.clone(),
                provider.clone(),
            )?);
            let settings = api::tls::server_config(certificate, provider).map_err(RunError::Tls)?;
            Some((tls, settings, access.guard(tls.auth)?))
        }
        None => None,
    };
    let listener = bind(config.listen_address, config.listen_port).await?;
    tracing::info!(address = %local_address(&listener)?, auth = ?config.api_auth(), "API listening");
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut stop = stop_rx.clone();
        async move {
            let _ = stop.wait_for(|stop| *stop).await;
        }
    };
    // Without Nagle's algorithm: a list answer is written in chunks, and
    // its last short segment would otherwise wait for the client's delayed
    // acknowledgement of the one before (40 ms on Linux).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server =
        axum::serve(listener, api::router(state.clone(), guard)).with_graceful_shutdown(stopped());
    let mut servers = vec![tokio::spawn(async move { server.await })];
    if let Some((tls, settings, guard)) = tls {
        let tcp = bind(tls.address, tls.port).await?;
        let address = local_address(&tcp)?;
        let listener = TlsListener::new(tcp, settings).map_err(|source| RunError::Listen {
            address: address.to_string(),
            source,
        })?;
        tracing::info!(address = %address, auth = ?tls.auth, "TLS API listening");
        let server =
            axum::serve(listener, api::router(state, guard)).with_graceful_shutdown(stopped());
        servers.push(tokio::spawn(async move { server.await }));
    }
    shutdown.await;
    tracing::info!("stopping");
    if let Some(elector) = elector {
        let release = async { elector.lock().await.release().await };
        if tokio::time::timeout(RELEASE_WAIT, release).await.is_err() {
            tracing::warn!("the API server did not answer in time; the lease is left to expire");
        }
    }
    let _ = stop_tx.send(true);
    let all = futures::future::join_all(servers);
    match tokio::time::timeout(SHUTDOWN_GRACE, all).await {
        Ok(results) => {
            for result in results {
                result?.map_err(RunError::Serve)?;
            }
        }
        Err(_) => tracing::info!("event streams still open after the grace period; exiting"),
    }
    Ok(())
}

async fn bind(address: std::net::IpAddr, port: u16) -> Result<TcpListener, RunError> {
    TcpListener::bind((address, port))
        .await
        .map_err(|source| RunError::Listen {
            address: std::net::SocketAddr::from((address, port)).to_string(),
            source,
        })
}

fn local_address(listener: &TcpListener) -> Result<std::net::SocketAddr, RunError> {
    listener.local_addr().map_err(|source| RunError::Listen {
        address: "the bound address".to_string(),
        source,
    })
}

/// How long start-up waits for the plugin directory to load before the API
/// answers: enough for every plugin loaded from the artifact cache, while
/// a component compiled for the first time goes on in the background.
const PLUGINS_AT_START: Duration = Duration::from_secs(2);

/// Starts the built-in analyzers, loads the plugin directory (see
/// [`PLUGINS_AT_START`]), then follows it.
async fn load_plugins(config: &Config, metrics: &Arc<Metrics>) -> Result<Arc<Plugins>, RunError> {
    let Some(dir) = config.plugin_dir.clone() else {
        let plugins = Plugins::none(metrics.clone());
        plugins.start_built_in(&config.builtin_analyzers)?;
        return Ok(plugins);
    };
    if !dir.is_dir() {
        return Err(RunError::PluginDir(dir));
    }
    let cache = ArtifactCache {
        dir: config
            .plugin_cache_dir
            .clone()
            .unwrap_or_else(crate::plugin::default_cache_dir),
        max_bytes: config.plugin_cache_max_bytes,
    };
    let plugins = Plugins::new(
        dir,
        Some(cache),
        Limits::default(),
        config.plugin_allowed_hosts.clone(),
        metrics.clone(),
    )?;
    plugins.start_built_in(&config.builtin_analyzers)?;
    let scanning = plugins.clone();
    tokio::task::spawn_blocking(move || scanning.scan_at_start(PLUGINS_AT_START)).await?;
    plugins.watch()?;
    Ok(plugins)
}

/// Applies the recording to caches, and returns its changes for the
/// journal, each at a time that keeps their spacing (read from who wrote
/// each, `managedFields`) and ends now.
fn replay(
    recording: &Recording,
    watches: &Watches,
    metrics: &Metrics,
    keep_managed_fields: bool,
) -> Vec<(Gvk, Arc<Change>, u64)> {
    let mut replayed: Vec<(Gvk, Arc<Change>, u64)> = Vec::new();
    let mut last_time = 0u64;
    let ingest = crate::store::Ingest {
        keep_managed_fields,
        who: true,
    };
    let caches: Vec<_> = recording
        .resources
        .iter()
        .map(|r| {
            (
                r.gvk.clone(),
                watches.ensure(r, WatchOptions::default(), false),
            )
        })
        .collect();
    let cache_of = |gvk: &Gvk| caches.iter().find(|(g, _)| g == gvk).map(|(_, w)| w);
    for (gvk, kind, object) in &recording.events {
        let Some(watch) = cache_of(gvk) else { continue };
        match StoredObject::from_value(object.clone(), gvk, ingest) {
            Ok(object) => {
                let written = object.managers().entries().iter().map(|m| m.time).max();
                last_time = last_time.max(written.map_or(0, |t| u64::from(t) * 1_000_000));
                if let Some(change) = watch.cache.apply(*kind, object, Origin::Watch) {
                    metrics.event(&gvk.to_string(), kind.as_str());
                    watch.update_status(|s| s.events += 1);
                    replayed.push((gvk.clone(), change, last_time));
                }
            }
            Err(e) => tracing::warn!(gvk = %gvk, error = %e, "recorded event skipped"),
        }
    }
    for (gvk, watch) in &caches {
        watch.cache.mark_synced();
        watch.update_status(|s| s.phase = crate::watch::Phase::Ready);
        metrics.objects(&gvk.to_string(), watch.cache.read().len());
    }
    // The recording's times, moved so that its last change is now, each
    // after the one before.
    let shift = crate::journal::now_micros().saturating_sub(last_time);
    for (_, _, seen) in &mut replayed {
        *seen = seen.saturating_add(shift);
    }
    replayed
}

/// Keeps discovery current: at start (retrying until the server answers),
/// every `apiGroupsSyncIntervalSecond`, and soon after a CRD is added or
/// removed. After each refresh, configured kinds that were missing are
/// watched if they now exist.
async fn keep_discovery(
    discovery: Arc<Discovery>,
    watches: Arc<Watches>,
    notifications: Arc<Notifications>,
    config: Arc<Config>,
) {
    let mut backoff =
        crate::backoff::Backoff::new(Duration::from_millis(500), Duration::from_secs(30));
    while let Err(e) = discovery.refresh().await {
        let delay = backoff.next_delay();
        tracing::warn!(error = %crate::error::Report(&e), retry_in_ms = delay.as_millis() as u64, "discovery failed; configured kinds wait for it");
        tokio::time::sleep(delay).await;
    }
    start_pending(&discovery, &watches);
    watches.discovery_applied();
    notifications.attach_waiting();
    let crds = discovery
        .catalog()
        .get(&Gvk::new(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
        ))
        .cloned();
    let mut crd_changes = match crds {
        Some(crds) => follow_crds(&discovery, &watches, &crds, &config).await,
        None => None,
    };
    let period = config.api_groups_sync_interval;
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        tokio::select! {
            _ = ticker.tick(), if config.sync_api_groups => {}
            changed = next_crd_change(&mut crd_changes) => {
                if !changed {
                    crd_changes = None;
                    continue;
                }
                tokio::time::sleep(CRD_DEBOUNCE).await;
                if let Some(rx) = &mut crd_changes {
                    while rx.try_recv().is_ok() {}
                }
                tracing::info!("a CustomResourceDefinition changed; reading discovery again");
            }
        }
        match discovery.refresh().await {
            Ok(_) => {
                start_pending(&discovery, &watches);
                notifications.attach_waiting();
            }
            Err(e) => {
                tracing::warn!(error = %crate::error::Report(&e), "discovery refresh failed; keeping the previous one")
            }
        }
    }
}

/// Watches CRDs if GRW may list them; otherwise (a sidecar with a
/// namespaced Role) says once, in the log and in `/api/v1/kinds`, that new
/// CRDs are noticed by the periodic discovery refresh only. The watch is
/// not started to be refused: it would keep readiness waiting for ever.
async fn follow_crds(
    discovery: &Discovery,
    watches: &Watches,
    crds: &ResourceInfo,
    config: &Config,
) -> Option<broadcast::Receiver<Arc<Change>>> {
    let refresh_seconds = config
        .sync_api_groups
        .then_some(config.api_groups_sync_interval.as_secs());
    match watches.may_list(crds, &WatchOptions::default()).await {
        Ok(()) => {
            discovery.set_crd_following(CrdFollowing {
                watched: true,
                refresh_seconds,
                warning: None,
            });
            Some(crd_watch(watches, crds))
        }
        Err(denied) => {
            let then = match refresh_seconds {
                Some(s) => format!("CRDs installed or removed are noticed by reading discovery every {s} s (apiGroupsSyncIntervalSecond), and when a query names a kind discovery does not know"),
                None => "with enableSyncApiGroups off, CRDs installed or removed are noticed only when a query names a kind discovery does not know".to_string(),
            };
            let warning = format!(
                "GRW may not list CustomResourceDefinitions ({}): {then}; grant `list` and `watch` on customresourcedefinitions.apiextensions.k8s.io cluster-wide to notice them at once",
                denied.message
            );
            tracing::warn!("{warning}");
            discovery.set_crd_following(CrdFollowing {
                watched: false,
                refresh_seconds,
                warning: Some(warning),
            });
            None
        }
    }
}

/// Watches CRDs and returns their live changes.
fn crd_watch(watches: &Watches, crds: &ResourceInfo) -> broadcast::Receiver<Arc<Change>> {
    watches
        .ensure(crds, WatchOptions::default(), false)
        .cache
        .live()
}

/// Waits for a CRD change; `false` if the CRD watch went away. The first
/// list counts too: a CRD installed between the first discovery and that list
/// would otherwise be noticed only by the periodic re-read.
async fn next_crd_change(rx: &mut Option<broadcast::Receiver<Arc<Change>>>) -> bool {
    let Some(rx) = rx else {
        return std::future::pending().await;
    };
    match rx.recv().await {
        Ok(_) | Err(RecvError::Lagged(_)) => true,
        Err(RecvError::Closed) => false,
    }
}

fn start_pending(discovery: &Discovery, watches: &Watches) {
    let catalog = discovery.catalog();
    let ready = watches.take_resolvable(|kind| catalog.resolve(kind));
    for (resource, options, optional) in ready {
        watches.ensure(&resource, options, optional);
    }
}
