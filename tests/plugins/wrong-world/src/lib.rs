//! A valid notifier component (it exports `grw:plugin/notifier@0.1.0` and
//! nothing else). The host's tests load it where a filter is expected and
//! check that it is rejected for lacking `grw:plugin/filter`.

use grw_sdk::{DeliveryError, Event, Http, Interest, Notifier};

/// Accepts every delivery without sending anything.
pub struct WrongWorld;

impl Notifier for WrongWorld {
    fn init(_config: &str) -> Result<(Self, Interest), String> {
        Ok((WrongWorld, Interest::all()))
    }

    fn deliver(&self, _event: &Event, _http: &dyn Http) -> Result<(), DeliveryError> {
        Ok(())
    }
}

grw_sdk::export_notifier!(WrongWorld);
