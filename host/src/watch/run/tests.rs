//! The loop against a scripted API server. Each test lists the answers in
//! the order the loop asks for them, lets the loop play them until it asks
//! for one more, then checks what it asked, when, and what the cache, its
//! changes and the watch's status show. The clock is paused: backoff takes
//! no real time, and the time a call was made is exact up to the jitter.

use std::collections::VecDeque;

use parking_lot::Mutex;
use serde_json::json;
use serde_json::value::RawValue;
use tokio::sync::{Notify, broadcast};
use tokio::task::JoinHandle;

use super::*;
use crate::config::WatchOptions;
use crate::gvk::{Gvk, ResourceInfo};
use crate::kube::{ListMeta, ListPage, WatchStream};
use crate::store::{Change, ChangeType};
use crate::watch::{Denied, Watches};

const FORBIDDEN: &str = r#"pods is forbidden: User "grw" cannot list resource "pods" in API group "" at the cluster scope"#;

/// Backoff of 1 s doubling to 8 s, and of 60 s doubling to 600 s after 401/403.
fn settings() -> WatchSettings {
    WatchSettings {
        page_size: 2,
        // The tests of streaming lists turn it on.
        streaming_list: false,
        backoff: (Duration::from_secs(1), Duration::from_secs(8)),
        denied_backoff: (Duration::from_secs(60), Duration::from_secs(600)),
        ..WatchSettings::default()
    }
}

// ---- The script ----

/// What the server answers to one call of the loop.
enum Answer {
    Page(Result<ListPage, ApiError>),
    Watch(Result<Vec<Step>, ApiError>),
}

/// One step of a scripted watch stream; the stream ends after the last.
enum Step {
    Line(WatchLine),
    /// The connection breaks.
    Broken,
    /// Nothing for this long.
    Quiet(Duration),
}

/// A pod in namespace `ns`; an empty `name` makes an object GRW cannot read.
fn pod(name: &str, rv: u64) -> Box<RawValue> {
    serde_json::value::to_raw_value(&json!({"metadata": {
        "namespace": "ns", "name": name, "uid": format!("uid-{name}"),
        "resourceVersion": rv.to_string(),
    }}))
    .unwrap()
}

/// A LIST page at `rv`; `next` is the continue token of the page after it.
fn page(rv: u64, pods: &[(&str, u64)], next: Option<&str>) -> Answer {
    Answer::Page(Ok(ListPage {
        metadata: ListMeta {
            resource_version: rv.to_string(),
            continue_token: next.map(str::to_string),
        },
        items: pods.iter().map(|(name, rv)| pod(name, *rv)).collect(),
    }))
}

fn watch(steps: Vec<Step>) -> Answer {
    Answer::Watch(Ok(steps))
}

fn added(name: &str, rv: u64) -> Step {
    Step::Line(WatchLine::Change(ChangeType::Added, pod(name, rv)))
}

fn modified(name: &str, rv: u64) -> Step {
    Step::Line(WatchLine::Change(ChangeType::Modified, pod(name, rv)))
}

fn deleted(name: &str, rv: u64) -> Step {
    Step::Line(WatchLine::Change(ChangeType::Deleted, pod(name, rv)))
}

fn bookmark(rv: u64) -> Step {
    Step::Line(WatchLine::Bookmark {
        resource_version: rv.to_string(),
        initial_events_end: false,
    })
}

/// The bookmark that ends a streaming list's initial events.
fn initial_events_end(rv: u64) -> Step {
    Step::Line(WatchLine::Bookmark {
        resource_version: rv.to_string(),
        initial_events_end: true,
    })
}

fn status(code: u16, reason: &str, message: &str) -> ApiError {
    ApiError::Status {
        code,
        reason: reason.into(),
        message: message.into(),
    }
}

fn gone() -> ApiError {
    status(410, "Expired", "too old resource version: 10 (30)")
}

fn forbidden() -> ApiError {
    status(403, "Forbidden", FORBIDDEN)
}

fn unauthorized() -> ApiError {
    status(401, "Unauthorized", "Unauthorized")
}

// ---- The fake ----

/// Answers the loop's calls from a script and records them. A call the
/// script has no answer for yet waits until the test adds one.
#[derive(Clone)]
struct Fake(Arc<Script>);

struct Script {
    started: Instant,
    state: Mutex<ScriptState>,
    /// Woken when the test adds answers.
    more: Notify,
    /// True while a call waits for an answer the script does not have.
    waiting: tokio::sync::watch::Sender<bool>,
}

struct ScriptState {
    answers: VecDeque<Answer>,
    /// Every call and when it was made: `list`, `list continue=t1`,
    /// `watch rv=10`, `reconnect`.
    calls: Vec<(Duration, String)>,
}

impl Fake {
    fn record(&self, call: String) {
        let at = self.0.started.elapsed();
        self.0.state.lock().calls.push((at, call));
    }

    async fn answer(&self, call: String) -> Answer {
        self.record(call);
        loop {
            let next = self.0.state.lock().answers.pop_front();
            if let Some(answer) = next {
                return answer;
            }
            self.0.waiting.send_replace(true);
            self.0.more.notified().await;
        }
    }

    fn add(&self, script: Vec<Answer>) {
        self.0.state.lock().answers.extend(script);
        self.0.waiting.send_replace(false);
        self.0.more.notify_one();
    }
}

impl ListWatch for Fake {
    async fn list_page(
        &self,
        _: &ResourceInfo,
        _: &WatchOptions,
        _: u32,
        continue_token: Option<&str>,
    ) -> Result<ListPage, ApiError> {
        let call = match continue_token {
            Some(token) => format!("list continue={token}"),
            None => "list".to_string(),
        };
        match self.answer(call).await {
            Answer::Page(page) => page,
            Answer::Watch(_) => {
                panic!("the loop asked for a LIST page, the script answers a WATCH")
            }
        }
    }

    async fn watch(
        &self,
        _: &ResourceInfo,
        _: &WatchOptions,
        resource_version: &str,
        _: u32,
    ) -> Result<WatchStream, ApiError> {
        self.stream(format!("watch rv={resource_version}")).await
    }

    async fn watch_list(
        &self,
        _: &ResourceInfo,
        _: &WatchOptions,
        _: u32,
    ) -> Result<WatchStream, ApiError> {
        self.stream("watch-list".to_string()).await
    }

    async fn reconnect(&self) -> Result<(), ApiError> {
        self.record("reconnect".to_string());
        Ok(())
    }
}

impl Fake {
    async fn stream(&self, call: String) -> Result<WatchStream, ApiError> {
        let steps = match self.answer(call).await {
            Answer::Watch(steps) => steps?,
            Answer::Page(_) => panic!("the loop asked for a WATCH, the script answers a LIST page"),
        };
        let lines = futures::stream::iter(steps).filter_map(|step| async move {
            match step {
                Step::Line(line) => Some(Ok(line)),
                Step::Broken => Some(Err(ApiError::broken_connection())),
                Step::Quiet(time) => {
                    tokio::time::sleep(time).await;
                    None
                }
            }
        });
        Ok(lines.boxed())
    }
}

// ---- The loop under test ----

/// A fresh, empty watch of pods in every namespace.
fn pods() -> Arc<Watch> {
    let resource = ResourceInfo {
        gvk: Gvk::new("", "v1", "Pod"),
        plural: "pods".into(),
        namespaced: true,
    };
    // Without a client, `ensure` starts no loop: the test starts its own.
    Watches::new(None, settings(), Arc::new(Metrics::new())).ensure(
        &resource,
        WatchOptions::default(),
        false,
    )
}

/// One watch's loop running against a [`Fake`].
struct Harness {
    fake: Fake,
    watch: Arc<Watch>,
    changes: broadcast::Receiver<Arc<Change>>,
    waiting: tokio::sync::watch::Receiver<bool>,
    task: JoinHandle<()>,
}

impl Harness {
    /// Runs the loop of a fresh watch through `script`.
    async fn run(script: Vec<Answer>) -> Harness {
        Harness::run_on(pods(), script).await
    }

    /// Runs the loop of a fresh watch that syncs by streaming lists first.
    async fn run_streaming(script: Vec<Answer>) -> Harness {
        let settings = WatchSettings {
            streaming_list: true,
            ..settings()
        };
        Harness::run_with(pods(), settings, script).await
    }

    /// Runs the loop of `watch` through `script`, until the loop asks for
    /// an answer the script does not have.
    async fn run_on(watch: Arc<Watch>, script: Vec<Answer>) -> Harness {
        Harness::run_with(watch, settings(), script).await
    }

    async fn run_with(watch: Arc<Watch>, settings: WatchSettings, script: Vec<Answer>) -> Harness {
        let (waiting_tx, waiting) = tokio::sync::watch::channel(false);
        let fake = Fake(Arc::new(Script {
            started: Instant::now(),
            state: Mutex::new(ScriptState {
                answers: script.into(),
                calls: Vec::new(),
            }),
            more: Notify::new(),
            waiting: waiting_tx,
        }));
        let changes = watch.cache.live();
        let task = tokio::spawn(run(
            watch.clone(),
            fake.clone(),
            settings,
            Arc::new(Metrics::new()),
        ));
        let mut harness = Harness {
            fake,
            watch,
            changes,
            waiting,
            task,
        };
        harness.until_waiting().await;
        harness
    }

    /// Plays more answers, until the loop asks for one the script does not have.
    async fn then(&mut self, script: Vec<Answer>) {
        self.fake.add(script);
        self.until_waiting().await;
    }

    /// Plays more answers and lets `time` pass: to look at the loop while it
    /// backs off. [`Harness::until_waiting`] lets it go on.
    async fn then_for(&mut self, script: Vec<Answer>, time: Duration) {
        self.fake.add(script);
        tokio::time::sleep(time).await;
    }

    async fn until_waiting(&mut self) {
        // A day of the paused clock passes at once when nothing else can run:
        // a loop stuck elsewhere than on the script fails instead of hanging.
        let day = Duration::from_secs(24 * 3600);
        let waited = tokio::select! {
            waited = tokio::time::timeout(day, self.waiting.wait_for(|w| *w)) => waited.is_ok(),
            end = &mut self.task => match end {
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                end => panic!("the loop ended: {end:?}"),
            },
        };
        assert!(waited, "the loop is stuck after {:?}", self.calls());
    }

    fn calls(&self) -> Vec<String> {
        let state = self.fake.0.state.lock();
        state.calls.iter().map(|(_, call)| call.clone()).collect()
    }

    /// Time between the call before call `n` and call `n`.
    fn gap(&self, n: usize) -> Duration {
        let state = self.fake.0.state.lock();
        state.calls[n].0 - state.calls[n - 1].0
    }

    /// The changes the cache emitted since this was last asked, as
    /// `ADDED ns/a 1 initial`.
    fn changes(&mut self) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(c) = self.changes.try_recv() {
            seen.push(format!(
                "{} {} {} {}",
                c.kind,
                c.object.key(),
                c.object.resource_version(),
                c.origin.as_str()
            ));
        }
        seen
    }

    /// The cached objects, as `ns/a 1`.
    fn objects(&self) -> Vec<String> {
        let view = self.watch.cache.read();
        view.iter_after(None)
            .map(|o| format!("{} {}", o.key(), o.resource_version()))
            .collect()
    }

    /// `(relists, watch restarts, events)` of the watch's status.
    fn counters(&self) -> (u64, u64, u64) {
        let s = self.watch.status();
        (s.relists, s.watch_restarts, s.events)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Asserts a backoff delay of `base` with its ±20% jitter.
#[track_caller]
fn assert_backoff(delay: Duration, base: Duration) {
    assert!(
        delay >= base.mul_f64(0.8) && delay <= base.mul_f64(1.2),
        "waited {delay:?}, expected {base:?} ± 20%"
    );
}

const SECOND: Duration = Duration::from_secs(1);

// ---- The tests ----

#[tokio::test(start_paused = true)]
async fn the_first_list_follows_continue_tokens_then_watches_from_its_resource_version() {
    let mut h = Harness::run(vec![
        page(10, &[("a", 1), ("b", 2)], Some("t1")),
        page(10, &[("c", 3), ("d", 4)], Some("t2")),
        page(10, &[("e", 5)], None),
    ])
    .await;
    assert_eq!(
        h.calls(),
        [
            "list",
            "list continue=t1",
            "list continue=t2",
            "watch rv=10"
        ]
    );
    assert_eq!(
        h.objects(),
        ["ns/a 1", "ns/b 2", "ns/c 3", "ns/d 4", "ns/e 5"]
    );
    assert_eq!(
        h.changes(),
        [
            "ADDED ns/a 1 initial",
            "ADDED ns/b 2 initial",
            "ADDED ns/c 3 initial",
            "ADDED ns/d 4 initial",
            "ADDED ns/e 5 initial"
        ]
    );
    assert!(h.watch.cache.is_synced());
    assert_eq!(h.watch.cache.read().resource_version(), "10");
    assert_eq!(h.watch.status().phase, Phase::Ready);
    assert_eq!(h.counters(), (0, 0, 0));
    assert_eq!(h.gap(3), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn events_apply_in_order_and_a_clean_end_resumes_from_the_last_one() {
    let mut h = Harness::run(vec![
        page(10, &[("a", 1), ("b", 2)], None),
        watch(vec![
            added("c", 11),
            modified("a", 12),
            // The same version again changes nothing and counts as no event.
            modified("a", 12),
            deleted("b", 13),
        ]),
    ])
    .await;
    assert_eq!(h.calls(), ["list", "watch rv=10", "watch rv=13"]);
    assert_eq!(
        h.changes()[2..],
        [
            "ADDED ns/c 11 watch",
            "MODIFIED ns/a 12 watch",
            "DELETED ns/b 13 watch"
        ]
    );
    assert_eq!(h.objects(), ["ns/a 12", "ns/c 11"]);
    assert_eq!(h.counters(), (0, 1, 3));
    // The watch delivered events: it was healthy, no backoff before the next.
    assert_eq!(h.gap(2), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_bookmark_moves_the_resume_point_without_touching_objects() {
    let mut h = Harness::run(vec![
        page(10, &[("a", 1)], None),
        watch(vec![added("b", 11), bookmark(20)]),
        watch(vec![bookmark(25)]),
    ])
    .await;
    assert_eq!(
        h.calls(),
        ["list", "watch rv=10", "watch rv=20", "watch rv=25"]
    );
    assert_eq!(h.changes(), ["ADDED ns/a 1 initial", "ADDED ns/b 11 watch"]);
    assert_eq!(h.objects(), ["ns/a 1", "ns/b 11"]);
    assert_eq!(h.watch.cache.read().resource_version(), "25");
    assert_eq!(h.counters(), (0, 2, 1));
    // A watch that brought only a bookmark was alive: no backoff.
    assert_eq!(h.gap(3), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn unreadable_objects_are_skipped_and_do_not_move_the_resume_point() {
    let h = Harness::run(vec![
        page(10, &[("a", 1), ("", 2)], None),
        watch(vec![added("b", 11), added("", 12)]),
    ])
    .await;
    assert_eq!(h.calls(), ["list", "watch rv=10", "watch rv=11"]);
    assert_eq!(h.objects(), ["ns/a 1", "ns/b 11"]);
}

#[tokio::test(start_paused = true)]
async fn a_broken_connection_resumes_from_the_last_resource_version_after_backoff() {
    let mut h = Harness::run(vec![
        page(10, &[("a", 1)], None),
        watch(vec![added("b", 11), Step::Broken]),
    ])
    .await;
    assert_eq!(h.calls(), ["list", "watch rv=10", "watch rv=11"]);
    assert_backoff(h.gap(2), SECOND);
    assert_eq!(h.objects(), ["ns/a 1", "ns/b 11"]);
    assert_eq!(h.counters(), (0, 1, 1));
    let status = h.watch.status();
    assert_eq!(status.phase, Phase::Reconnecting);
    let error = status.last_error.unwrap_or_default();
    assert!(error.contains("cannot reach the API server"), "{error}");

    // A WATCH request that fails in turn: the same resourceVersion, after
    // twice the delay; no watch ended, so no restart.
    h.then(vec![Answer::Watch(Err(ApiError::broken_connection()))])
        .await;
    assert_eq!(h.calls()[3..], ["watch rv=11"]);
    assert_backoff(h.gap(3), 2 * SECOND);
    assert_eq!(h.counters(), (0, 1, 1));

    // A watch that ends cleanly after an event starts the backoff over.
    h.then(vec![watch(vec![added("c", 12)]), watch(vec![Step::Broken])])
        .await;
    assert_eq!(h.calls()[4..], ["watch rv=12", "watch rv=12"]);
    assert_eq!(h.gap(4), Duration::ZERO);
    assert_backoff(h.gap(5), SECOND);
    assert_eq!(h.counters(), (0, 3, 2));
}

#[tokio::test(start_paused = true)]
async fn gone_lists_again_and_emits_only_the_difference() {
    let cases = [
        (
            "410 answering the WATCH request",
            Answer::Watch(Err(gone())),
        ),
        (
            "410 as an ERROR line after a bookmark",
            watch(vec![bookmark(15), Step::Line(WatchLine::Error(gone()))]),
        ),
    ];
    for (case, answer) in cases {
        let mut h = Harness::run(vec![
            page(10, &[("same", 1), ("changed", 2), ("vanished", 3)], None),
            answer,
            page(20, &[("same", 1), ("changed", 7), ("new", 8)], None),
        ])
        .await;
        assert_eq!(
            h.calls(),
            ["list", "watch rv=10", "list", "watch rv=20"],
            "{case}"
        );
        assert_eq!(
            h.changes()[3..],
            [
                "MODIFIED ns/changed 7 relist",
                "ADDED ns/new 8 relist",
                "DELETED ns/vanished 3 relist"
            ],
            "{case}"
        );
        assert_eq!(
            h.objects(),
            ["ns/changed 7", "ns/new 8", "ns/same 1"],
            "{case}"
        );
        assert_eq!(h.watch.cache.read().resource_version(), "20", "{case}");
        assert_eq!(h.counters(), (1, 0, 3), "{case}");
        assert_eq!(h.watch.status().phase, Phase::Ready, "{case}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_seeded_cache_resumes_from_its_resource_version_and_lists_against_it() {
    let watch = pods();
    let seed = StoredObject::from_raw(&pod("a", 1), watch.cache.gvk(), false).unwrap();
    watch.cache.seed(vec![seed], "42");
    let mut h = Harness::run_on(
        watch,
        vec![
            Answer::Watch(Err(gone())),
            page(50, &[("a", 1), ("b", 43)], None),
        ],
    )
    .await;
    assert_eq!(h.calls(), ["watch rv=42", "list", "watch rv=50"]);
    assert_eq!(h.changes(), ["ADDED ns/b 43 relist"]);
    assert_eq!(h.counters(), (1, 0, 1));
}

#[tokio::test(start_paused = true)]
async fn an_expired_continue_token_restarts_the_list_from_the_first_page() {
    let mut h = Harness::run(vec![
        page(10, &[("a", 1), ("stale", 2)], Some("t1")),
        Answer::Page(Err(gone())),
        page(12, &[("a", 1), ("b", 11)], Some("t2")),
        page(12, &[("c", 12)], None),
    ])
    .await;
    assert_eq!(
        h.calls(),
        [
            "list",
            "list continue=t1",
            "list",
            "list continue=t2",
            "watch rv=12"
        ]
    );
    assert_eq!(h.objects(), ["ns/a 1", "ns/b 11", "ns/c 12"]);
    assert_eq!(
        h.changes(),
        [
            "ADDED ns/a 1 initial",
            "ADDED ns/b 11 initial",
            "ADDED ns/c 12 initial"
        ]
    );
    assert_eq!(h.watch.cache.read().resource_version(), "12");
    assert_eq!(h.counters(), (0, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_forbidden_list_fails_and_is_retried_slowly_until_a_list_succeeds() {
    let mut h = Harness::run(vec![]).await;
    let refusals = vec![
        Answer::Page(Err(forbidden())),
        Answer::Page(Err(forbidden())),
    ];
    h.then_for(refusals, 30 * SECOND).await;
    let status = h.watch.status();
    assert_eq!(status.phase, Phase::Failed);
    let error = status.last_error.unwrap_or_default();
    assert!(error.contains(FORBIDDEN), "{error}");
    let denied = Some(Denied {
        message: FORBIDDEN.into(),
    });
    assert_eq!(h.watch.denied(), denied);

    h.until_waiting().await;
    assert_eq!(h.calls(), ["list", "list", "list"]);
    assert_backoff(h.gap(1), 60 * SECOND);
    assert_backoff(h.gap(2), 120 * SECOND);
    // The refusal stays known while the list is retried.
    assert_eq!(h.watch.denied(), denied);
    assert!(!h.watch.cache.is_synced());

    h.then(vec![page(5, &[("a", 1)], None)]).await;
    assert_eq!(h.calls()[3..], ["watch rv=5"]);
    assert_eq!(h.watch.denied(), None);
    assert_eq!(h.watch.status().phase, Phase::Ready);
    assert!(h.watch.cache.is_synced());
}

#[tokio::test(start_paused = true)]
async fn a_refused_watch_stays_failed_while_it_retries_and_is_cleared_once_it_resumes() {
    // Refused twice: failed while it waits and while it asks again.
    let mut h = Harness::run(vec![
        Answer::Page(Err(forbidden())),
        Answer::Page(Err(forbidden())),
    ])
    .await;
    assert_eq!(h.calls(), ["list", "list", "list"]);
    assert_eq!(h.watch.status().phase, Phase::Failed);
    assert!(h.watch.denied().is_some());

    // Synced, then its watch is refused (its rights were taken away), and
    // then let in again: open, it is ready and refused no more.
    h.then(vec![
        page(5, &[("a", 1)], None),
        Answer::Watch(Err(forbidden())),
    ])
    .await;
    assert_eq!(h.calls()[3..], ["watch rv=5", "watch rv=5"]);
    assert_eq!(h.watch.status().phase, Phase::Failed);
    assert!(h.watch.denied().is_some());
    h.then_for(vec![watch(vec![Step::Quiet(60 * SECOND)])], SECOND)
        .await;
    assert_eq!(h.watch.status().phase, Phase::Ready);
    assert_eq!(h.watch.denied(), None);
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_held_then_broke_starts_its_backoff_over() {
    // Three broken watches: 1 s, 2 s, 4 s between them.
    let mut h = Harness::run(vec![
        page(10, &[], None),
        watch(vec![Step::Broken]),
        watch(vec![Step::Broken]),
        watch(vec![Step::Broken]),
    ])
    .await;
    assert_backoff(h.gap(4), 4 * SECOND);
    // One that held for a minute before it broke: the next comes after
    // the first delay again, not after 8 s.
    h.then(vec![watch(vec![Step::Quiet(60 * SECOND), Step::Broken])])
        .await;
    assert_eq!(h.calls().len(), 6);
    let after = h.gap(5) - 60 * SECOND;
    assert_backoff(after, SECOND);
    // One that broke at once goes on from there.
    h.then(vec![watch(vec![Step::Broken])]).await;
    assert_backoff(h.gap(6), 2 * SECOND);
}

#[tokio::test(start_paused = true)]
async fn unauthorized_rebuilds_the_credentials_before_the_next_attempt() {
    let cases = [
        (
            vec![],
            Answer::Page(Err(unauthorized())),
            vec!["list", "reconnect", "list"],
        ),
        (
            vec![page(10, &[], None)],
            Answer::Watch(Err(unauthorized())),
            vec!["list", "watch rv=10", "reconnect", "watch rv=10"],
        ),
    ];
    for (before, refusal, calls) in cases {
        let mut h = Harness::run(before).await;
        h.then_for(vec![refusal], 30 * SECOND).await;
        assert_eq!(h.watch.status().phase, Phase::Failed, "{calls:?}");
        // Only a 403 says what is refused.
        assert_eq!(h.watch.denied(), None, "{calls:?}");

        h.until_waiting().await;
        assert_eq!(h.calls(), calls);
        let last = calls.len() - 1;
        assert_backoff(h.gap(last - 1), 60 * SECOND);
        assert_eq!(h.gap(last), Duration::ZERO, "{calls:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_watch_that_ends_at_once_waits_before_the_next() {
    let mut h = Harness::run(vec![page(10, &[], None), watch(vec![]), watch(vec![])]).await;
    assert_eq!(
        h.calls(),
        ["list", "watch rv=10", "watch rv=10", "watch rv=10"]
    );
    assert_backoff(h.gap(2), SECOND);
    assert_backoff(h.gap(3), 2 * SECOND);
    assert_eq!(h.counters(), (0, 2, 0));

    // A quiet watch that lasts its timeout is healthy: the next one opens
    // when it ends, and the backoff starts over.
    h.then(vec![watch(vec![Step::Quiet(290 * SECOND)]), watch(vec![])])
        .await;
    assert_eq!(h.calls()[4..], ["watch rv=10", "watch rv=10"]);
    let quiet = h.gap(4);
    assert!(
        quiet >= 290 * SECOND && quiet < 291 * SECOND,
        "next watch {quiet:?} after the quiet one opened"
    );
    assert_backoff(h.gap(5), SECOND);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_refuses_its_own_lists_resource_version_is_listed_less_and_less() {
    let mut h = Harness::run(vec![
        page(10, &[], None),
        Answer::Watch(Err(gone())),
        page(11, &[], None),
        Answer::Watch(Err(gone())),
        page(12, &[], None),
        Answer::Watch(Err(gone())),
        page(13, &[], None),
    ])
    .await;
    assert_eq!(
        h.calls(),
        [
            "list",
            "watch rv=10",
            "list",
            "watch rv=11",
            "list",
            "watch rv=12",
            "list",
            "watch rv=13"
        ]
    );
    // Each list after the 410 waits, longer each time, though the list
    // itself succeeds.
    assert_backoff(h.gap(2), SECOND);
    assert_backoff(h.gap(4), 2 * SECOND);
    assert_backoff(h.gap(6), 4 * SECOND);
    assert_eq!(h.gap(3), Duration::ZERO, "the watch follows its list");
    assert_eq!(h.counters(), (3, 0, 0));

    // A watch that holds starts the pause over; a 410 to a watch resuming
    // from an older resourceVersion lists again at once.
    h.then(vec![
        watch(vec![added("a", 14), Step::Line(WatchLine::Error(gone()))]),
        page(15, &[("a", 14)], None),
        Answer::Watch(Err(gone())),
        page(16, &[("a", 14)], None),
    ])
    .await;
    assert_eq!(
        h.calls()[8..],
        ["list", "watch rv=15", "list", "watch rv=16"]
    );
    assert_eq!(h.gap(8), Duration::ZERO);
    assert_backoff(h.gap(10), SECOND);
}

// ---- Streaming lists ----

#[tokio::test(start_paused = true)]
async fn a_streaming_list_fills_the_cache_and_goes_on_as_the_watch() {
    let mut h = Harness::run_streaming(vec![watch(vec![
        added("a", 1),
        added("b", 2),
        added("c", 3),
        initial_events_end(10),
        modified("a", 11),
    ])])
    .await;
    // No LIST: the stream's bookmark is the resume point, and after the
    // stream ends the watch resumes from its last change.
    assert_eq!(h.calls(), ["watch-list", "watch rv=11"]);
    assert_eq!(h.objects(), ["ns/a 11", "ns/b 2", "ns/c 3"]);
    assert_eq!(
        h.changes(),
        [
            "ADDED ns/a 1 initial",
            "ADDED ns/b 2 initial",
            "ADDED ns/c 3 initial",
            "MODIFIED ns/a 11 watch"
        ]
    );
    assert!(h.watch.cache.is_synced());
    assert_eq!(h.watch.status().phase, Phase::Ready);
    assert_eq!(h.counters(), (0, 1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_relist_streams_again_and_emits_only_the_difference() {
    let mut h = Harness::run_streaming(vec![
        watch(vec![
            added("same", 1),
            added("changed", 2),
            added("vanished", 3),
            initial_events_end(10),
            Step::Line(WatchLine::Error(gone())),
        ]),
        watch(vec![
            added("same", 1),
            added("changed", 7),
            added("new", 8),
            initial_events_end(20),
        ]),
    ])
    .await;
    assert_eq!(h.calls(), ["watch-list", "watch-list", "watch rv=20"]);
    assert_eq!(
        h.changes()[3..],
        [
            "MODIFIED ns/changed 7 relist",
            "ADDED ns/new 8 relist",
            "DELETED ns/vanished 3 relist"
        ]
    );
    assert_eq!(h.watch.cache.read().resource_version(), "20");
}

#[tokio::test(start_paused = true)]
async fn a_server_without_streaming_lists_is_listed_in_pages_from_then_on() {
    let refused = status(
        422,
        "Invalid",
        r#"ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"#,
    );
    // What servers without them answer: refused as invalid (the feature
    // off), or the parameters ignored: the objects, then a bookmark without
    // the annotation or a change, as a plain watch from now would send.
    let cases = [
        ("refused", Answer::Watch(Err(refused))),
        (
            "bookmark without the annotation",
            watch(vec![added("a", 1), bookmark(10)]),
        ),
        (
            "a change before the end",
            watch(vec![added("a", 1), modified("a", 11)]),
        ),
        ("ended before the end", watch(vec![added("a", 1)])),
    ];
    for (case, answer) in cases {
        let h = Harness::run_streaming(vec![
            answer,
            page(10, &[("a", 1), ("b", 2)], None),
            Answer::Watch(Err(gone())),
            page(20, &[("a", 1)], None),
        ])
        .await;
        assert_eq!(
            h.calls(),
            ["watch-list", "list", "watch rv=10", "list", "watch rv=20"],
            "{case}"
        );
        assert_eq!(h.objects(), ["ns/a 1"], "{case}");
        // Falling back is no failure: no backoff before the LIST.
        assert_eq!(h.gap(1), Duration::ZERO, "{case}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_streaming_list_that_fails_is_retried_after_backoff() {
    let h = Harness::run_streaming(vec![
        Answer::Watch(Err(forbidden())),
        watch(vec![added("a", 1), Step::Broken]),
        watch(vec![added("a", 1), initial_events_end(10)]),
    ])
    .await;
    // Denied and broken are failures, not a sign the server lacks the
    // feature: the loop streams again, after the backoff of each.
    assert_eq!(
        h.calls(),
        ["watch-list", "watch-list", "watch-list", "watch rv=10"]
    );
    assert_backoff(h.gap(1), 60 * SECOND);
    assert_backoff(h.gap(2), SECOND);
    assert_eq!(h.objects(), ["ns/a 1"]);
    assert_eq!(h.watch.denied(), None);
}

#[test]
fn a_watch_started_on_demand_counts_once_the_config_asks_for_its_kind() {
    let resource = ResourceInfo {
        gvk: Gvk::new("", "v1", "Pod"),
        plural: "pods".into(),
        namespaced: true,
    };
    let watches = Watches::new(None, settings(), Arc::new(Metrics::new()));
    // An analyzer's interest started it first.
    let first = watches.ensure(&resource, WatchOptions::default(), true);
    assert!(first.on_demand());
    // Asked for on demand again, it stays so; named by the config, it
    // holds up readiness like any configured kind.
    watches.ensure(&resource, WatchOptions::default(), true);
    assert!(first.on_demand());
    let configured = watches.ensure(&resource, WatchOptions::default(), false);
    assert!(Arc::ptr_eq(&first, &configured));
    assert!(!first.on_demand());
    watches.ensure(&resource, WatchOptions::default(), true);
    assert!(!first.on_demand());
}
