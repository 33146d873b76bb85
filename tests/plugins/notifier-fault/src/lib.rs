//! A notifier that misbehaves on request: `deliver` panics (traps) when the
//! object's name contains `boom`, never returns when it contains `spin`, and
//! accepts every other event without sending anything. The host's tests use
//! it to check that a failed delivery is retried and the plugin recovers.

use grw_sdk::{DeliveryError, Event, Http, Interest, Notifier};

/// Fails by name.
pub struct NotifierFault;

impl Notifier for NotifierFault {
    fn init(_config: &str) -> Result<(Self, Interest), String> {
        Ok((NotifierFault, Interest::all()))
    }

    fn deliver(&self, event: &Event, _http: &dyn Http) -> Result<(), DeliveryError> {
        if event.name().contains("boom") {
            panic!("object {:?} went boom", event.name());
        }
        if event.name().contains("spin") {
            let mut spins: u64 = 0;
            // `black_box` keeps the optimiser from deleting the endless loop.
            loop {
                spins = std::hint::black_box(spins.wrapping_add(1));
            }
        }
        Ok(())
    }
}

grw_sdk::export_notifier!(NotifierFault);
