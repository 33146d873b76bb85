//! A fake Kubernetes API server that speaks the real wire protocol.
//!
//! It serves plain HTTP on `127.0.0.1` (random port): classic discovery
//! (`/api`, `/apis`, ...), `GET` of single objects, LIST with paging and
//! selectors, and WATCH as chunked JSON lines with bookmarks and 410s. Objects
//! live in memory with a global resourceVersion counter and an event log.
//! Tests drive it through [`FakeApiServer`]: they change objects, load a
//! recording, inject faults (dropped watches, compaction, failing requests,
//! token changes) and inspect the requests it received. It answers
//! `TokenReview` and `SubjectAccessReview` from an RBAC model the test
//! sets ([`FakeApiServer::add_token`], [`FakeApiServer::grant`]).
//!
//! Served resources: core `v1` Namespace, Node, Pod, ConfigMap, Secret,
//! Service, PersistentVolume, PersistentVolumeClaim; `apps/v1` Deployment,
//! ReplicaSet, StatefulSet, DaemonSet; `batch/v1` Job; `discovery.k8s.io/v1`
//! EndpointSlice; `apiextensions.k8s.io/v1` CustomResourceDefinition; plus
//! CRD-backed kinds added with [`FakeApiServer::add_crd`] (the Istio Gateway
//! and VirtualService, in `v1beta1` and `v1`, unless
//! [`FakeApiOptions::istio_crds_installed`] is `false`). `/openapi/v2` and
//! `/openapi/v3` serve small documents of Pods and Deployments.
//!
//! Differences from a real server worth knowing: only `GET` is served (changes
//! come from the test through the handle); deleting a Namespace does not delete
//! its contents; aggregated discovery is answered with the classic documents.

mod discovery;
mod faults;
mod http;
mod list;
mod openapi;
mod params;
mod recording;
mod review;
mod selector;
mod state;
mod status;
mod util;
mod watch;
mod write;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;
use tokio::task::JoinHandle;

pub use self::faults::{Pace, StreamingLists};
pub use self::review::{Rule, Subject};

use self::discovery::ResourceDef;
use self::faults::Faults;
use self::state::{Change, Store};

/// How to start a [`FakeApiServer`].
#[derive(Debug, Clone)]
pub struct FakeApiOptions {
    /// Bearer token every request must carry; `None` disables authentication.
    pub token: Option<String>,
    /// How often open watches that allow bookmarks get a BOOKMARK event.
    pub bookmark_interval: Duration,
    /// Whether the Istio Gateway and VirtualService CRDs exist from the start.
    pub istio_crds_installed: bool,
}

impl Default for FakeApiOptions {
    /// No token, a bookmark every second, Istio CRDs installed.
    fn default() -> Self {
        FakeApiOptions {
            token: None,
            bookmark_interval: Duration::from_secs(1),
            istio_crds_installed: true,
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `GET`.
    pub method: String,
    /// URL path, e.g. `/api/v1/pods`.
    pub path: String,
    /// Raw (still percent-encoded) query string without `?`; empty if none.
    pub query: String,
    /// Whether the query asked for a watch (`watch=true` or `watch=1`).
    pub watch: bool,
}

/// State shared by the handle, the HTTP handlers and the watch tasks.
pub(crate) struct Shared {
    pub(crate) store: Mutex<Store>,
    pub(crate) faults: Mutex<Faults>,
    pub(crate) requests: Mutex<Vec<RecordedRequest>>,
    pub(crate) rbac: Mutex<review::Rbac>,
    /// The current resourceVersion; watch tasks wait for it to change.
    pub(crate) rv_tx: tokio::sync::watch::Sender<u64>,
    /// Bumped by [`FakeApiServer::drop_watches`].
    pub(crate) drop_tx: tokio::sync::watch::Sender<u64>,
    /// Set when the server shuts down.
    pub(crate) shutdown_tx: tokio::sync::watch::Sender<bool>,
    pub(crate) open_watches: AtomicUsize,
    /// Events sent on watch streams so far: changes, initial events and
    /// the bookmark closing them, errors; periodic bookmarks are not counted.
    pub(crate) watch_events_sent: AtomicUsize,
    pub(crate) bookmark_interval: Duration,
    pub(crate) addr: SocketAddr,
}

impl Shared {
    /// Runs `f` on the store, then wakes watches if the resourceVersion moved.
    fn mutate<R>(&self, f: impl FnOnce(&mut Store) -> R) -> R {
        let (result, rv) = {
            let mut store = self.store.lock();
            let result = f(&mut store);
            (result, store.rv)
        };
        self.rv_tx.send_if_modified(|current| {
            let changed = *current != rv;
            *current = rv;
            changed
        });
        result
    }
}

/// Shuts the server down when the last handle is dropped.
struct Lifecycle {
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Lifecycle {
    fn drop(&mut self) {
        self.shared.shutdown_tx.send_replace(true);
    }
}

/// A running fake API server. Clones are handles to the same server; it shuts
/// down when the last one is dropped (or on [`FakeApiServer::shutdown`]).
#[derive(Clone)]
pub struct FakeApiServer {
    shared: Arc<Shared>,
    lifecycle: Arc<Lifecycle>,
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer")
            .field("addr", &self.shared.addr)
            .finish_non_exhaustive()
    }
}

impl FakeApiServer {
    /// Binds `127.0.0.1` on a random port and starts serving on the current
    /// Tokio runtime.
    ///
    /// # Panics
    /// If no local port can be bound.
    pub async fn start(options: FakeApiOptions) -> FakeApiServer {
        let any_port = SocketAddr::from(([127, 0, 0, 1], 0));
        FakeApiServer::start_at(any_port, options)
            .await
            .expect("binding the fake API server to 127.0.0.1")
    }

    /// Binds `addr` (port 0: a free one) and starts serving on the current
    /// Tokio runtime; fails if the address cannot be bound.
    pub async fn start_at(
        addr: SocketAddr,
        options: FakeApiOptions,
    ) -> std::io::Result<FakeApiServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let mut store = Store::new(discovery::builtin_resources());
        if options.istio_crds_installed {
            for def in discovery::istio_resources() {
                store.install_crd(def).expect("installing the Istio CRDs");
            }
        }
        let (rv_tx, _) = tokio::sync::watch::channel(store.rv);
        let (drop_tx, _) = tokio::sync::watch::channel(0);
        let (shutdown_tx, _) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            store: Mutex::new(store),
            faults: Mutex::new(Faults::with_token(options.token)),
            requests: Mutex::new(Vec::new()),
            rbac: Mutex::new(review::Rbac::default()),
            rv_tx,
            drop_tx,
            shutdown_tx,
            open_watches: AtomicUsize::new(0),
            watch_events_sent: AtomicUsize::new(0),
            bookmark_interval: options.bookmark_interval,
            addr,
        });
        let router = axum::Router::new()
            .fallback(http::handle)
            .with_state(shared.clone());
        let mut shutdown = shared.shutdown_tx.subscribe();
        let task = tokio::spawn(async move {
            let signal = async move {
                let _ = shutdown.wait_for(|stop| *stop).await;
            };
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(signal)
                .await;
        });
        Ok(FakeApiServer {
            lifecycle: Arc::new(Lifecycle {
                shared: shared.clone(),
                task: Mutex::new(Some(task)),
            }),
            shared,
        })
    }

    /// Stops accepting connections, ends open watches and waits (up to five
    /// seconds) for the server to finish. Other handles become unusable.
    pub async fn shutdown(&self) {
        self.shared.shutdown_tx.send_replace(true);
        let task = self.lifecycle.task.lock().take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    /// The latest resourceVersion handed out.
    pub fn current_rv(&self) -> u64 {
        self.shared.store.lock().rv
    }

    /// The compaction point: watches from older resourceVersions, and list
    /// continuations of older snapshots, get 410 Expired.
    pub fn compacted_rv(&self) -> u64 {
        self.shared.store.lock().compacted_rv
    }

    /// Applies one change as the API server would: `ADDED`/`MODIFIED` upsert,
    /// `DELETED` deletes (the object must exist; the given body is the DELETED
    /// event's object). Returns the new resourceVersion.
    ///
    /// The object's resourceVersion is replaced by a fresh global one; `uid`
    /// and `creationTimestamp` are kept (taken from the stored object or
    /// generated if absent); `kind` and `apiVersion` select the resource, and
    /// an unknown pair is an error. Namespaced kinds need `metadata.namespace`.
    pub fn apply(&self, event_type: &str, object: Value) -> anyhow::Result<u64> {
        let change = match event_type {
            "ADDED" | "MODIFIED" => Change::Upsert,
            "DELETED" => Change::Delete,
            other => anyhow::bail!("unsupported event type {other:?}"),
        };
        self.shared.mutate(|s| s.apply(change, object, None))
    }

    /// Creates an object; fails if it already exists. Returns the new resourceVersion.
    pub fn create(&self, object: Value) -> anyhow::Result<u64> {
        self.shared
            .mutate(|s| s.apply(Change::Create, object, None))
    }

    /// Replaces an existing object; fails if it does not exist. Returns the new resourceVersion.
    pub fn update(&self, object: Value) -> anyhow::Result<u64> {
        self.shared
            .mutate(|s| s.apply(Change::Update, object, None))
    }

    /// Deletes an object (its stored state becomes the DELETED event's
    /// object). Returns the new resourceVersion.
    pub fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> anyhow::Result<u64> {
        self.shared
            .mutate(|s| s.delete(api_version, kind, namespace, name))
    }

    /// Loads a recording (JSON lines of `{"type", "object"}` watch events) by
    /// applying its events in order, at most `max_events` of them. Recorded
    /// resourceVersions are kept while they increase, so after the shared
    /// recording the state and resourceVersions equal its snapshot. Events of
    /// kinds that are not served (e.g. Istio kinds while their CRDs are not
    /// installed) are skipped. Returns the number of events applied.
    pub fn load_recording(&self, path: &Path, max_events: Option<usize>) -> anyhow::Result<usize> {
        self.shared.mutate(|s| recording::load(s, path, max_events))
    }

    /// One current object with the given `apiVersion` and `kind` set, if it exists.
    pub fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        self.shared
            .store
            .lock()
            .get(api_version, kind, namespace, name)
    }

    /// All current objects of a kind (with `apiVersion`/`kind` set), in namespace/name order.
    pub fn objects(&self, api_version: &str, kind: &str) -> Vec<Value> {
        self.shared.store.lock().objects(api_version, kind)
    }

    /// Abruptly ends every open watch stream: the connection is closed
    /// without the terminating chunk.
    pub fn drop_watches(&self) {
        self.shared.drop_tx.send_modify(|epoch| *epoch += 1);
    }

    /// Takes the server away from its clients: every watch ends and every
    /// request fails with 503 until [`clear_failures`](Self::clear_failures).
    /// Returns once no watch is open, or `false` after `timeout`. Failing
    /// every kind, not one, is what leaves no watch open: a client's watches
    /// that were open a second or more may reconnect at once.
    pub async fn cut_off(&self, timeout: Duration) -> bool {
        self.fail_requests("/", 503, usize::MAX);
        self.drop_watches();
        let deadline = tokio::time::Instant::now() + timeout;
        while self.open_watches() > 0 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    /// Moves the compaction point to the current resourceVersion. Later
    /// watches from older resourceVersions get an `ERROR` 410 event, and list
    /// continuations of older snapshots a 410 response. Open watches go on.
    pub fn compact(&self) {
        let mut store = self.shared.store.lock();
        store.compacted_rv = store.rv;
    }

    /// Makes the next `count` requests whose path (or `path?query`) contains
    /// `path_contains` fail with `status` and a matching `Status` body;
    /// `usize::MAX` fails them until [`clear_failures`](Self::clear_failures).
    /// Authentication is checked first, so a 401 for a bad token does not
    /// use up a failure.
    pub fn fail_requests(&self, path_contains: &str, status: u16, count: usize) {
        self.shared.faults.lock().add(path_contains, status, count);
    }

    /// Removes all injected failures.
    pub fn clear_failures(&self) {
        self.shared.faults.lock().clear();
    }

    /// Changes the required bearer token; `None` accepts every request.
    pub fn set_token(&self, token: Option<String>) {
        self.shared.faults.lock().token = token;
    }

    /// Authorizes requests as if the client's only grant were a Role in
    /// `namespace` for `user` (e.g. `system:serviceaccount:shop:shop`):
    /// resources there are served, any at the cluster scope or in another
    /// namespace answer 403 with the API server's message. Discovery stays
    /// open. `None` allows everything again.
    pub fn grant_only_namespace(&self, grant: Option<(&str, &str)>) {
        self.shared.faults.lock().namespace_only =
            grant.map(|(namespace, user)| faults::NamespaceOnly {
                namespace: namespace.to_string(),
                user: user.to_string(),
            });
    }

    /// Makes `token` a valid bearer token of `user`, in `groups` (and, as
    /// every authenticated user, `system:authenticated`), for TokenReviews.
    pub fn add_token(&self, token: &str, user: &str, groups: &[&str]) {
        self.shared.rbac.lock().add_token(token, user, groups);
    }

    /// Removes `system:discovery`'s binding to every authenticated user,
    /// as a cluster's administrator may: the discovery paths are then
    /// allowed only by a grant of their own.
    pub fn unbind_discovery(&self) {
        self.shared.rbac.lock().discovery_unbound = true;
    }

    /// Grants `rule` to `subject`, for SubjectAccessReviews.
    pub fn grant(&self, subject: Subject, rule: Rule) {
        self.shared.rbac.lock().grant(subject, rule);
    }

    /// Makes a webhook authorizer in front of RBAC deny `rule` to
    /// `subject`, for SubjectAccessReviews that ask about it exactly.
    pub fn deny(&self, subject: Subject, rule: Rule) {
        self.shared.rbac.lock().deny(subject, rule);
    }

    /// Takes every rule granted to `subject` away.
    pub fn revoke(&self, subject: &Subject) {
        self.shared.rbac.lock().revoke(subject);
    }

    /// The TokenReviews received so far, by the token's user (`None`: a
    /// token it does not know).
    pub fn token_reviews(&self) -> Vec<Option<String>> {
        self.shared.rbac.lock().token_reviews.clone()
    }

    /// The `spec` of every SubjectAccessReview received so far.
    pub fn access_reviews(&self) -> Vec<Value> {
        self.shared.rbac.lock().access_reviews.clone()
    }

    /// Sets how watches asking for `sendInitialEvents` are answered.
    pub fn set_streaming_lists(&self, answer: StreamingLists) {
        self.shared.faults.lock().streaming_lists = answer;
    }

    /// The number of streaming lists (watches with `sendInitialEvents=true`)
    /// whose path equals `path`.
    pub fn streaming_list_requests(&self, path: &str) -> usize {
        self.shared
            .requests
            .lock()
            .iter()
            .filter(|r| r.watch && r.path == path && r.query.contains("sendInitialEvents=true"))
            .count()
    }

    /// The number of times a client read the whole collection at `path`:
    /// LIST requests (each page counted) plus streaming lists.
    pub fn sync_requests(&self, path: &str) -> usize {
        self.list_requests(path) + self.streaming_list_requests(path)
    }

    /// Makes every list request, and the initial events of every
    /// streaming list, wait this long before they are sent.
    pub fn set_list_delay(&self, delay: Duration) {
        self.shared.faults.lock().list_delay = delay;
    }

    /// Makes every TokenReview and SubjectAccessReview wait `delay` before
    /// its answer.
    pub fn set_review_delay(&self, delay: Duration) {
        self.shared.faults.lock().review_delay = delay;
    }

    /// Hands out list items and the initial events of streaming lists no
    /// faster than `pace` (`None`: as fast as the connection takes them).
    pub fn set_list_pace(&self, pace: Option<Pace>) {
        self.shared.faults.lock().list_pace = pace;
    }

    /// Serves a custom resource: it appears in discovery, and a
    /// `CustomResourceDefinition` named `<plural>.<group>` is created (ADDED)
    /// or, when the resource already exists in another version, updated with
    /// the extra version (MODIFIED).
    pub fn add_crd(&self, group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) {
        let def = ResourceDef::custom(group, version, kind, plural, namespaced);
        self.shared
            .mutate(|s| s.install_crd(def))
            .expect("creating the CustomResourceDefinition object");
    }

    /// Like [`FakeApiServer::add_crd`], with `additionalPrinterColumns`
    /// (`[{"name", "type", "jsonPath", ...}]`) in its versions.
    pub fn add_crd_with_columns(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        columns: Value,
    ) {
        let mut def = ResourceDef::custom(group, version, kind, plural, true);
        def.printer_columns = columns.as_array().cloned().unwrap_or_default();
        self.shared
            .mutate(|s| s.install_crd(def))
            .expect("creating the CustomResourceDefinition object");
    }

    /// Installs the Istio Gateway and VirtualService CRDs (`networking.istio.io`,
    /// `v1beta1` and `v1`), as [`FakeApiOptions::istio_crds_installed`] does at start.
    pub fn add_istio_crds(&self) {
        self.shared.mutate(|s| {
            for def in discovery::istio_resources() {
                s.install_crd(def).expect("creating the Istio CRD objects");
            }
        });
    }

    /// Removes a custom resource: its objects are deleted (DELETED events),
    /// then its `CustomResourceDefinition` (DELETED), then it leaves discovery
    /// and its open watches end. Does nothing for built-in or unknown resources.
    pub fn remove_crd(&self, group: &str, plural: &str) {
        self.shared
            .mutate(|s| s.uninstall_crd(group, plural))
            .expect("deleting the custom resource");
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().clone()
    }

    /// The number of watch requests whose path equals `path`.
    pub fn watch_requests(&self, path: &str) -> usize {
        self.shared
            .requests
            .lock()
            .iter()
            .filter(|r| r.watch && r.path == path)
            .count()
    }

    /// The number of non-watch `GET` requests whose path equals `path`.
    pub fn list_requests(&self, path: &str) -> usize {
        self.shared
            .requests
            .lock()
            .iter()
            .filter(|r| !r.watch && r.method == "GET" && r.path == path)
            .count()
    }

    /// The number of watch streams currently open.
    pub fn open_watches(&self) -> usize {
        self.shared.open_watches.load(Ordering::SeqCst)
    }

    /// The number of events sent on watch streams since the server started:
    /// changes, initial events and the bookmark closing them, errors;
    /// periodic bookmarks are not counted.
    pub fn watch_events_sent(&self) -> usize {
        self.shared.watch_events_sent.load(Ordering::SeqCst)
    }
}
