//! Call statistics of one plugin.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde::Serialize;

use super::CallFailure;

/// Latencies kept for percentiles: enough for a stable p99, 4 KB of memory.
const LATENCY_SAMPLES: usize = 1024;

/// Counters and recent latencies.
#[derive(Default)]
pub struct Stats {
    calls: AtomicU64,
    timeouts: AtomicU64,
    memory: AtomicU64,
    traps: AtomicU64,
    skipped: AtomicU64,
    latencies_us: Mutex<VecDeque<u32>>,
}

/// A snapshot for the status API.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct StatsSnapshot {
    /// Calls made, failed ones included.
    pub calls: u64,
    /// Failed calls, by cause.
    pub failures: Failures,
    /// Calls not made because the crash-loop breaker was open.
    pub skipped: u64,
    /// Latency percentiles of recent calls, microseconds.
    pub latency_micros: Percentiles,
}

/// Failed calls by cause.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Failures {
    /// Deadline passed.
    pub timeout: u64,
    /// Memory limit hit.
    pub memory: u64,
    /// Other traps.
    pub trap: u64,
}

/// Percentiles; zero without samples.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Percentiles {
    /// Median.
    pub p50: u32,
    /// 90th percentile.
    pub p90: u32,
    /// 99th percentile.
    pub p99: u32,
}

impl Stats {
    pub(super) fn call(&self, elapsed: Duration) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let mut samples = self.latencies_us.lock();
        if samples.len() == LATENCY_SAMPLES {
            samples.pop_front();
        }
        samples.push_back(elapsed.as_micros().min(u128::from(u32::MAX)) as u32);
    }

    pub(super) fn failure(&self, elapsed: Duration, failure: CallFailure) {
        self.call(elapsed);
        let counter = match failure {
            CallFailure::Timeout => &self.timeouts,
            CallFailure::Memory => &self.memory,
            CallFailure::Trap => &self.traps,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn skipped(&self) {
        self.skipped.fetch_add(1, Ordering::Relaxed);
    }

    /// The current figures.
    pub fn snapshot(&self) -> StatsSnapshot {
        let mut samples: Vec<u32> = self.latencies_us.lock().iter().copied().collect();
        samples.sort_unstable();
        let at = |q: f64| -> u32 {
            if samples.is_empty() {
                return 0;
            }
            let i = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1;
            samples[i]
        };
        StatsSnapshot {
            calls: self.calls.load(Ordering::Relaxed),
            failures: Failures {
                timeout: self.timeouts.load(Ordering::Relaxed),
                memory: self.memory.load(Ordering::Relaxed),
                trap: self.traps.load(Ordering::Relaxed),
            },
            skipped: self.skipped.load(Ordering::Relaxed),
            latency_micros: Percentiles {
                p50: at(0.50),
                p90: at(0.90),
                p99: at(0.99),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_counters() {
        let stats = Stats::default();
        assert_eq!(
            stats.snapshot().latency_micros,
            Percentiles {
                p50: 0,
                p90: 0,
                p99: 0
            }
        );
        for us in 1..=100 {
            stats.call(Duration::from_micros(us));
        }
        stats.failure(Duration::from_micros(5000), CallFailure::Timeout);
        stats.skipped();
        let s = stats.snapshot();
        assert_eq!(
            (s.calls, s.failures.timeout, s.failures.trap, s.skipped),
            (101, 1, 0, 1)
        );
        assert_eq!(s.latency_micros.p50, 51);
        assert_eq!(s.latency_micros.p99, 100);
    }
}
