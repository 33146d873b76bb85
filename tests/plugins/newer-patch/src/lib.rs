//! A filter built against `grw:plugin@0.2.1`: the same contract with a newer
//! patch version. It exports `grw:plugin/filter@0.2.1`, which the host must
//! accept as compatible with 0.2.0. It passes every event. `build.rs` derives
//! the WIT from the real one.

mod bindings {
    wit_bindgen::generate!({
        world: "filter-plugin",
        path: concat!(env!("OUT_DIR"), "/wit"),
    });
}

use bindings::exports::grw::plugin::filter::{Event, Guest, Interest, Object};
use bindings::grw::plugin::log;

struct NewerPatch;

impl Guest for NewerPatch {
    fn init(_config: String) -> Result<Interest, String> {
        log::log(
            log::Level::Info,
            "newer-patch plugin (grw:plugin@0.2.1) initialised",
        );
        Ok(Interest {
            kinds: Vec::new(),
            event_types: Vec::new(),
        })
    }

    fn decide(_event: Event, _object: &Object, _old_object: Option<&Object>) -> bool {
        true
    }
}

bindings::export!(NewerPatch with_types_in bindings);
