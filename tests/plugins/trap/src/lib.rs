//! A filter that panics (which traps the component) when the object's name
//! contains `boom`, and passes every other event. The host's tests use it to
//! check fail-open/fail-closed handling and recovery after a trap.

use grw_sdk::{Event, Filter, Interest};

/// Panics on `*boom*`.
pub struct Trap;

impl Filter for Trap {
    fn init(_config: &str) -> Result<(Self, Interest), String> {
        Ok((Trap, Interest::all()))
    }

    fn decide(&self, event: &Event) -> bool {
        if event.name().contains("boom") {
            panic!("object {:?} went boom", event.name());
        }
        true
    }
}

grw_sdk::export_filter!(Trap);

#[cfg(test)]
mod tests {
    use super::*;
    use grw_sdk::EventType;

    fn event(name: &str) -> Event {
        Event::new(
            EventType::Added,
            grw_sdk::serde_json::json!({"metadata": {"name": name}}),
        )
    }

    #[test]
    fn passes_ordinary_names() {
        assert!(Trap.decide(&event("quiet")));
    }

    #[test]
    #[should_panic(expected = "went boom")]
    fn panics_on_boom() {
        Trap.decide(&event("ka-boom-1"));
    }
}
