//! Contract `grw:plugin@0.1` (`wit/v0.1/plugin.wit`, frozen), still loaded
//! for filters and notifiers built against it. Its host side delegates to
//! the current contract's ([`super::v0_2`]): its `log` and `outbound-http`
//! calls are those of 0.2 with the same records, and its events are made
//! from the same changes, the objects copied in as JSON text as 0.1 asks.
//! (0.1 analyzers were never run, so they are not loaded.)

use super::guest::GuestState;
use super::interest::Interest;
use super::v0_2;
use crate::gvk::Gvk;
use crate::store::{Change, ChangeType, StoredObject};

/// The `filter-plugin` world of 0.1; owns its `types` and `log`.
pub(super) mod filter {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1/plugin.wit",
        world: "filter-plugin",
    });
}

/// The `notifier-plugin` world of 0.1.
pub(super) mod notifier {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1/plugin.wit",
        world: "notifier-plugin",
        with: {
            "grw:plugin/types": crate::plugin::v0_1::filter::grw::plugin::types,
            "grw:plugin/log": crate::plugin::v0_1::filter::grw::plugin::log,
        },
    });
}

use filter::grw::plugin::log;
use filter::grw::plugin::types as wit;
pub(super) use notifier::exports::grw::plugin::notifier::DeliveryError as WitDeliveryError;
use notifier::grw::plugin::outbound_http;

/// The 0.1 event of a change: its kind and metadata, labels, and the
/// objects as JSON text.
pub(super) fn event(gvk: &Gvk, change: &Change) -> wit::Event {
    let object = &change.object;
    let json = StoredObject::json_string;
    wit::Event {
        event_type: match change.kind {
            ChangeType::Added => wit::EventType::Added,
            ChangeType::Modified => wit::EventType::Modified,
            ChangeType::Deleted => wit::EventType::Deleted,
        },
        gvk: wit::Gvk {
            group: gvk.group.clone(),
            version: gvk.version.clone(),
            kind: gvk.kind.clone(),
        },
        namespace: object.namespace().to_string(),
        name: object.name().to_string(),
        uid: object.uid().to_string(),
        resource_version: object.resource_version().to_string(),
        labels: change
            .object
            .labels()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        object: json(&change.object),
        old_object: change.old.as_deref().map(json),
    }
}

impl From<wit::Interest> for Interest {
    fn from(i: wit::Interest) -> Self {
        let as_current = |t: wit::EventType| match t {
            wit::EventType::Added => v0_2::wit::EventType::Added,
            wit::EventType::Modified => v0_2::wit::EventType::Modified,
            wit::EventType::Deleted => v0_2::wit::EventType::Deleted,
        };
        Interest::from(v0_2::wit::Interest {
            kinds: i
                .kinds
                .into_iter()
                .map(|k| v0_2::wit::KindPattern {
                    group: k.group,
                    version: k.version,
                    kind: k.kind,
                })
                .collect(),
            event_types: i.event_types.into_iter().map(as_current).collect(),
        })
    }
}

impl wit::Host for GuestState {}

impl log::Host for GuestState {
    fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Trace => v0_2::log::Level::Trace,
            log::Level::Debug => v0_2::log::Level::Debug,
            log::Level::Info => v0_2::log::Level::Info,
            log::Level::Warn => v0_2::log::Level::Warn,
            log::Level::Error => v0_2::log::Level::Error,
        };
        v0_2::log::Host::log(self, level, message);
    }
}

impl outbound_http::Host for GuestState {
    fn send(&mut self, request: outbound_http::Request) -> Result<outbound_http::Response, String> {
        let request = v0_2::outbound_http::Request {
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: request.body,
        };
        v0_2::outbound_http::Host::send(self, request).map(|r| outbound_http::Response {
            status: r.status,
            headers: r.headers,
            body: r.body,
        })
    }
}
