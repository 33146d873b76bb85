//! The lifecycle of watches queries start: removed when idle, kept while
//! read or once GRW itself asks for them, and counted against the quota.
//! Without an API server no loop runs, which is all these tests need; the
//! clock is paused, so idle periods take no real time.

use super::*;
use crate::gvk::Gvk;

const IDLE: Duration = Duration::from_secs(60);

fn watches(max: usize) -> (Watches, Arc<Metrics>) {
    let metrics = Arc::new(Metrics::new());
    let settings = WatchSettings {
        on_demand_idle: IDLE,
        max_on_demand: max,
        ..WatchSettings::default()
    };
    (Watches::new(None, settings, metrics.clone()), metrics)
}

fn kind(kind: &str, plural: &str) -> ResourceInfo {
    ResourceInfo {
        gvk: Gvk::new("", "v1", kind),
        plural: plural.into(),
        namespaced: true,
    }
}

fn in_namespace(namespace: &str) -> WatchOptions {
    WatchOptions {
        namespace: Some(namespace.into()),
        ..WatchOptions::default()
    }
}

fn listed(watches: &Watches) -> usize {
    watches.all().len()
}

/// Lets the clock run `seconds` (the removal timers fire on the way).
async fn after(seconds: u64) {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
}

#[tokio::test(start_paused = true)]
async fn a_watch_a_query_started_is_removed_once_unused_for_the_idle_period() {
    let (watches, metrics) = watches(10);
    let watch = watches
        .ensure_on_demand(&kind("Pod", "pods"), WatchOptions::default())
        .unwrap();
    assert!(watch.caller_made());
    assert_eq!(metrics.on_demand().watches.get(), 1);
    after(59).await;
    assert_eq!(listed(&watches), 1, "removed before its idle period");
    after(2).await;
    assert_eq!(listed(&watches), 0, "not removed after its idle period");
    assert_eq!(metrics.on_demand().watches.get(), 0);
    assert_eq!(metrics.on_demand().removed.get(), 1);
    // The next query starts it again.
    let again = watches
        .ensure_on_demand(&kind("Pod", "pods"), WatchOptions::default())
        .unwrap();
    assert!(!Arc::ptr_eq(&watch, &again));
}

#[tokio::test(start_paused = true)]
async fn reads_and_open_streams_keep_it() {
    let (watches, _) = watches(10);
    let pods = kind("Pod", "pods");
    let watch = watches
        .ensure_on_demand(&pods, WatchOptions::default())
        .unwrap();
    after(50).await;
    // A later query of the same watch reads it: a new idle period starts.
    watches
        .ensure_on_demand(&pods, WatchOptions::default())
        .unwrap();
    after(50).await;
    assert_eq!(
        listed(&watches),
        1,
        "a read did not restart the idle period"
    );
    watch.touch();
    let stream = watch.streaming();
    after(600).await;
    assert_eq!(listed(&watches), 1, "removed while a stream read it");
    drop(stream);
    after(59).await;
    assert_eq!(
        listed(&watches),
        1,
        "the idle period began before the stream ended"
    );
    after(62).await;
    assert_eq!(listed(&watches), 0);
}

#[tokio::test(start_paused = true)]
async fn a_watch_grw_itself_asks_for_stays() {
    let (watches, metrics) = watches(10);
    let pods = kind("Pod", "pods");
    let watch = watches
        .ensure_on_demand(&pods, WatchOptions::default())
        .unwrap();
    // An analyzer follows the kind (on demand, but not a caller's).
    watches.ensure(&pods, WatchOptions::default(), true);
    assert!(!watch.caller_made());
    assert_eq!(metrics.on_demand().watches.get(), 0);
    // A configured watch is never removable, whoever asks for it later.
    let configured = watches.ensure(
        &kind("ConfigMap", "configmaps"),
        WatchOptions::default(),
        false,
    );
    watches
        .ensure_on_demand(&configured.resource, WatchOptions::default())
        .unwrap();
    assert!(!configured.caller_made());
    after(3600).await;
    assert_eq!(listed(&watches), 2);
    assert_eq!(metrics.on_demand().removed.get(), 0);
}

#[tokio::test(start_paused = true)]
async fn over_the_quota_a_new_watch_is_refused_until_one_is_idle() {
    let (watches, metrics) = watches(2);
    let pods = kind("Pod", "pods");
    // A configured watch does not count.
    watches.ensure(&kind("Node", "nodes"), WatchOptions::default(), false);
    let a = watches.ensure_on_demand(&pods, in_namespace("a")).unwrap();
    after(20).await;
    let b = watches.ensure_on_demand(&pods, in_namespace("b")).unwrap();
    after(10).await;
    let Err(refused) = watches.ensure_on_demand(&pods, in_namespace("c")) else {
        panic!("a watch over the quota was started");
    };
    // `a` is idle in 30 s.
    assert_eq!(
        refused,
        TooManyWatches {
            max: 2,
            retry_after: Duration::from_secs(30)
        }
    );
    assert!(
        refused
            .to_string()
            .starts_with("GRW already holds 2 watches that queries started (maxOnDemandWatches)"),
        "{refused}"
    );
    assert_eq!(metrics.on_demand().refused.get(), 1);
    // Watches already there are still served.
    assert!(Arc::ptr_eq(
        &watches.ensure_on_demand(&pods, in_namespace("b")).unwrap(),
        &b
    ));
    // Both streamed: nothing will be idle before a stream ends; try again
    // after an idle period.
    let (_sa, _sb) = (a.streaming(), b.streaming());
    let Err(refused) = watches.ensure_on_demand(&pods, in_namespace("c")) else {
        panic!("a watch over the quota was started");
    };
    assert_eq!(refused.retry_after, IDLE);
    drop(_sa);
    after(61).await;
    let c = watches.ensure_on_demand(&pods, in_namespace("c")).unwrap();
    assert!(c.caller_made());
    assert!(watches.exact(&pods.gvk, &in_namespace("a")).is_none());
    assert_eq!(metrics.on_demand().watches.get(), 2);
}

#[tokio::test(start_paused = true)]
async fn the_quota_removes_idle_watches_before_refusing() {
    let (watches, metrics) = watches(1);
    let pods = kind("Pod", "pods");
    let a = watches.ensure_on_demand(&pods, in_namespace("a")).unwrap();
    // Idle, but its own timer has not seen it yet: a stream held it until
    // now, and no await lets the timer run before the next query.
    let stream = a.streaming();
    after(10).await;
    drop(stream);
    *a.last_used.lock() = tokio::time::Instant::now() - IDLE;
    assert!(a.removable(IDLE));
    let b = watches.ensure_on_demand(&pods, in_namespace("b")).unwrap();
    assert!(b.caller_made());
    assert!(watches.exact(&pods.gvk, &in_namespace("a")).is_none());
    assert_eq!(metrics.on_demand().removed.get(), 1);
    assert_eq!(metrics.on_demand().refused.get(), 0);
}
