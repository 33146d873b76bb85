//! A filter built against `grw:plugin@0.3.0`, a version this GRW does not
//! speak. It exports `grw:plugin/filter@0.3.0`; the host must reject it with
//! a message naming both versions. It would pass every event. `build.rs`
//! derives the WIT from the real one.

mod bindings {
    wit_bindgen::generate!({
        world: "filter-plugin",
        path: concat!(env!("OUT_DIR"), "/wit"),
    });
}

use bindings::exports::grw::plugin::filter::{Event, Guest, Interest, Object};

struct Incompatible;

impl Guest for Incompatible {
    fn init(_config: String) -> Result<Interest, String> {
        Ok(Interest {
            kinds: Vec::new(),
            event_types: Vec::new(),
        })
    }

    fn decide(_event: Event, _object: &Object, _old_object: Option<&Object>) -> bool {
        true
    }
}

bindings::export!(Incompatible with_types_in bindings);
