//! A filter whose `decide` takes `millis` milliseconds (config, default
//! 500), busy-waiting on the WASI monotonic clock, then passes the event.
//! GRW's tests run several calls of it at once to see that they do not
//! queue behind one instance. Its `init` takes `initMillis` (default 0).

use std::time::{Duration, Instant};

use grw_sdk::{Event, Filter, Interest};

/// The configured duration of one call.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slow {
    #[serde(default = "default_millis")]
    millis: u64,
    #[serde(default, rename = "initMillis")]
    init_millis: u64,
}

fn default_millis() -> u64 {
    500
}

impl Filter for Slow {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let slow: Slow = grw_sdk::parse_config(config)?;
        busy(slow.init_millis);
        Ok((slow, Interest::all()))
    }

    fn decide(&self, _event: &Event) -> bool {
        busy(self.millis);
        true
    }
}

fn busy(millis: u64) {
    let started = Instant::now();
    let wait = Duration::from_millis(millis);
    while started.elapsed() < wait {
        std::hint::spin_loop();
    }
}

grw_sdk::export_filter!(Slow);
