//! A filter whose `decide` never returns, so the host's tests can check that
//! a runaway plugin is interrupted (fuel or epoch deadline) and that the
//! plugin's fail mode then applies. `init` succeeds with any configuration.

use grw_sdk::{Event, Filter, Interest};

/// Spins in `decide`.
pub struct LoopForever;

impl Filter for LoopForever {
    fn init(_config: &str) -> Result<(Self, Interest), String> {
        Ok((LoopForever, Interest::all()))
    }

    fn decide(&self, event: &Event) -> bool {
        let mut spins: u64 = 0;
        // `black_box` keeps the optimiser from proving the loop useless and
        // deleting it; the loop has no exit by design.
        loop {
            spins = std::hint::black_box(spins.wrapping_add(event.name().len() as u64 + 1));
        }
    }
}

grw_sdk::export_filter!(LoopForever);
