//! A filter whose `decide` allocates until the allocation fails, so the
//! host's tests can check that the plugin's memory limit holds and that the
//! resulting trap is contained. `init` succeeds with any configuration.

use std::sync::Mutex;

use grw_sdk::{Event, Filter, Interest};

/// Kept in a static so that nothing is freed between allocations, or across
/// calls if the host lets the instance live on.
static HOARD: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Allocates forever in `decide`.
pub struct MemoryHog;

impl Filter for MemoryHog {
    fn init(_config: &str) -> Result<(Self, Interest), String> {
        Ok((MemoryHog, Interest::all()))
    }

    fn decide(&self, _event: &Event) -> bool {
        let mut hoard = HOARD.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            // Filled rather than zeroed, so every page is really written and
            // the allocation cannot be optimised into lazily-zeroed memory.
            let chunk = std::hint::black_box(vec![0xA5u8; 1 << 20]);
            hoard.push(chunk);
        }
    }
}

grw_sdk::export_filter!(MemoryHog);
