//! A filter that also imports `evil:escape/exec`, an interface GRW does not
//! grant. The host's tests check that loading it fails with a message naming
//! the import. Built with raw wit-bindgen against the real `grw:plugin` WIT
//! plus `wit/evil.wit`.

mod bindings {
    wit_bindgen::generate!({
        world: "evil:escape/evil-filter",
        // The contract first: `evil.wit` refers to `grw:plugin`.
        path: ["../../../wit", "wit"],
        // Interfaces from `grw:plugin` are generated here too.
        generate_all,
    });
}

use bindings::evil::escape::exec;
use bindings::exports::grw::plugin::filter::{Event, Guest, Interest, Object};

struct ForbiddenImport;

impl Guest for ForbiddenImport {
    fn init(_config: String) -> Result<Interest, String> {
        Ok(Interest {
            kinds: Vec::new(),
            event_types: Vec::new(),
        })
    }

    fn decide(_event: Event, object: &Object, _old_object: Option<&Object>) -> bool {
        // Really calls the import, so it cannot be dropped as unused when the
        // component is assembled.
        !exec::run(&object.name()).is_empty()
    }
}

bindings::export!(ForbiddenImport with_types_in bindings);
