use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::metrics::Metrics;

fn pool(threads: usize, queue: usize, budget: Duration) -> (Arc<QueryPool>, Metrics) {
    let metrics = Metrics::new();
    let settings = PoolSettings {
        threads,
        queue,
        budget,
    };
    (QueryPool::new(settings, metrics.queries()), metrics)
}

/// Holds the pool's one thread until the returned sender is dropped.
async fn occupy(pool: &Arc<QueryPool>) -> std::sync::mpsc::Sender<()> {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (started, running) = tokio::sync::oneshot::channel();
    let busy = pool.clone();
    tokio::spawn(async move {
        busy.run(move |_| {
            let _ = started.send(());
            let _ = held.recv();
            Ok(())
        })
        .await
    });
    running.await.unwrap();
    release
}

/// Queues work that counts its runs; the count, and the request's task.
fn counted(
    pool: &Arc<QueryPool>,
) -> (
    Arc<AtomicUsize>,
    tokio::task::JoinHandle<Result<(), PoolError>>,
) {
    let ran = Arc::new(AtomicUsize::new(0));
    let (pool, counter) = (pool.clone(), ran.clone());
    let task = tokio::spawn(async move {
        pool.run(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .await
    });
    (ran, task)
}

#[tokio::test]
async fn work_runs_on_a_pool_thread_and_answers() {
    let (pool, _) = pool(1, 4, Duration::from_secs(10));
    let name = pool
        .run(|_| Ok(std::thread::current().name().map(str::to_string)))
        .await
        .unwrap();
    assert_eq!(name.as_deref(), Some("grw-query-0"));
}

#[tokio::test]
async fn a_full_queue_is_refused_at_once_and_counted() {
    let (pool, metrics) = pool(1, 1, Duration::from_secs(10));
    let release = occupy(&pool).await;
    // One waits in the queue; the next finds it full.
    let waiting = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.run(|_| Ok(1)).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = pool.run(|_| Ok(2)).await;
    assert_eq!(
        refused,
        Err(PoolError::Busy {
            threads: 1,
            queue: 1
        })
    );
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("retry in a moment"),
        "the message says what to do"
    );
    drop(release);
    assert_eq!(waiting.await.unwrap(), Ok(1));
    let text = metrics.encode();
    assert!(
        text.contains("grw_query_refused_total{reason=\"busy\"} 1"),
        "{text}"
    );
}

#[tokio::test]
async fn a_request_that_waited_longer_than_its_budget_is_refused_not_run() {
    let (pool, metrics) = pool(1, 4, Duration::from_millis(1500));
    let release = occupy(&pool).await;
    let (ran, late) = counted(&pool);
    tokio::time::sleep(Duration::from_millis(1700)).await;
    drop(release);
    assert!(matches!(late.await.unwrap(), Err(PoolError::Busy { .. })));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(
        metrics
            .encode()
            .contains("grw_query_refused_total{reason=\"waited\"} 1")
    );
}

#[tokio::test]
async fn work_past_its_cpu_budget_is_stopped_with_what_it_examined() {
    let (pool, metrics) = pool(1, 4, Duration::from_millis(20));
    let answer = pool
        .run(|budget| {
            let mut sum = 0u64;
            loop {
                budget.charge()?;
                // About a microsecond of CPU per object.
                for i in 0..1000u64 {
                    sum = std::hint::black_box(sum.wrapping_add(i));
                }
            }
            #[allow(unreachable_code)]
            Ok(sum)
        })
        .await;
    let Err(PoolError::OverBudget(over)) = answer else {
        panic!("{answer:?}");
    };
    assert!(over.spent >= Duration::from_millis(20), "{over:?}");
    assert!(over.examined > 64, "{over:?}");
    let message = over.to_string();
    assert!(message.contains("queries.budgetMillis"), "{message}");
    assert!(message.contains("narrow it"), "{message}");
    assert!(
        metrics
            .encode()
            .contains("grw_query_refused_total{reason=\"budget\"} 1")
    );
}

#[tokio::test]
async fn a_panic_answers_failed_and_the_thread_serves_on() {
    let (pool, _) = pool(1, 4, Duration::from_secs(10));
    let failed: Result<(), PoolError> = pool.run(|_| panic!("a bug")).await;
    assert_eq!(failed, Err(PoolError::Failed));
    assert_eq!(pool.run(|_| Ok(7)).await, Ok(7));
}

#[tokio::test]
async fn work_whose_caller_went_away_is_not_run() {
    let (pool, _) = pool(1, 4, Duration::from_secs(10));
    let release = occupy(&pool).await;
    let (ran, abandoned) = counted(&pool);
    tokio::time::sleep(Duration::from_millis(50)).await;
    abandoned.abort();
    let _ = abandoned.await;
    drop(release);
    // The next request runs after the abandoned one would have.
    pool.run(|_| Ok(())).await.unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_small_budget_still_waits_a_second_for_a_thread() {
    let (pool, _) = pool(1, 4, Duration::from_millis(1));
    let release = occupy(&pool).await;
    let queued = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.run(|_| Ok(3)).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(release);
    assert_eq!(queued.await.unwrap(), Ok(3));
}
