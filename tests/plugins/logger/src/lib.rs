//! A filter that writes one line each to stdout, stderr and the host's `log`
//! import on `init` and on every `decide`, then passes everything. The
//! host's tests check that all three end up in GRW's log under the plugin's
//! name. Each line names the event, so tests can match them exactly:
//!
//! - stdout: `logger stdout: decide <namespace>/<name>`
//! - stderr: `logger stderr: decide <namespace>/<name>`
//! - log (info): `logger log: decide <namespace>/<name>`
//!
//! and the same with `init` (and no object) from `init`.

use grw_sdk::{Event, Filter, Interest};

/// Logs and passes.
pub struct Logger;

fn say(what: &str) {
    println!("logger stdout: {what}");
    eprintln!("logger stderr: {what}");
    grw_sdk::log::info(format!("logger log: {what}"));
}

impl Filter for Logger {
    fn init(_config: &str) -> Result<(Self, Interest), String> {
        say("init");
        Ok((Logger, Interest::all()))
    }

    fn decide(&self, event: &Event) -> bool {
        say(&format!("decide {}/{}", event.namespace(), event.name()));
        true
    }
}

grw_sdk::export_filter!(Logger);
