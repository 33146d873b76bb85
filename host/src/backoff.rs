//! Capped exponential backoff with jitter.

use std::time::Duration;

/// Delays that double from `initial` up to `max`, each with ±20% jitter so
/// that many watches failing together do not retry in lockstep.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    /// A backoff starting at `initial`, never above `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            next: initial,
        }
    }

    /// The delay before the next attempt.
    pub fn next_delay(&mut self) -> Duration {
        let base = self.next;
        self.next = (self.next * 2).min(self.max);
        // Jitter from the clock's nanoseconds: good enough to spread retries,
        // and no random-number dependency for it.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let factor = 0.8 + 0.4 * (f64::from(nanos % 1000) / 1000.0);
        base.mul_f64(factor).min(self.max)
    }

    /// Starts again from the initial delay (after a success).
    pub fn reset(&mut self) {
        self.next = self.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_cap_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(700));
        let delays: Vec<u128> = (0..6).map(|_| b.next_delay().as_millis()).collect();
        let bases = [100, 200, 400, 700, 700, 700];
        for (d, base) in delays.iter().zip(bases) {
            assert!(*d >= base * 8 / 10 && *d <= 700, "{delays:?}");
        }
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(120));
    }
}
