//! A filter built against `grw:plugin@0.1.0`, the frozen first contract
//! (`wit/v0.1/plugin.wit`), with raw wit-bindgen as a plugin of that time
//! was. GRW must still load it and speak 0.1 to it: labels in the event,
//! the object as JSON text. It passes an event when its `app` label starts
//! with `calm` and the object's JSON text names the object (so both the
//! labels and the text must have arrived).

mod bindings {
    wit_bindgen::generate!({
        world: "filter-plugin",
        path: "../../../wit/v0.1/plugin.wit",
    });
}

use bindings::exports::grw::plugin::filter::{Event, Guest, Interest};
use bindings::grw::plugin::log;

struct LegacyFilter;

impl Guest for LegacyFilter {
    fn init(_config: String) -> Result<Interest, String> {
        log::log(
            log::Level::Info,
            "legacy filter (grw:plugin@0.1.0) initialised",
        );
        Ok(Interest {
            kinds: Vec::new(),
            event_types: Vec::new(),
        })
    }

    fn decide(event: Event) -> bool {
        let calm = event
            .labels
            .iter()
            .any(|(k, v)| k == "app" && v.starts_with("calm"));
        calm && event
            .object
            .contains(&format!("\"name\":\"{}\"", event.name))
    }
}

bindings::export!(LegacyFilter with_types_in bindings);
