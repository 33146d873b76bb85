//! Glue between the generated bindings and the SDK's types. Used by the
//! `export_*!` macros; not part of the API.

#![allow(missing_docs)]

use std::cell::RefCell;
use std::thread::LocalKey;

#[cfg(target_arch = "wasm32")]
use crate::view::Source;
use crate::{
    Analyzer, Cache, DeliveryError, Direction, Event, EventType, Filter, Gvk, Http, HttpRequest,
    HttpResponse, Interest, Notifier, ObjectView, Origin,
};

pub mod filter_bindings {
    wit_bindgen::generate!({
        world: "filter-plugin",
        path: "../wit",
        // The export macro is invoked from plugin crates, through the SDK's
        // `export_filter!`.
        pub_export_macro: true,
        export_macro_name: "export_filter_world",
    });
}

pub mod notifier_bindings {
    wit_bindgen::generate!({
        world: "notifier-plugin",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "export_notifier_world",
        // One set of shared types and one log import for all three worlds,
        // so conversions are written once.
        with: {
            "grw:plugin/types@0.2.0": crate::__private::filter_bindings::grw::plugin::types,
            "grw:plugin/log@0.2.0": crate::__private::filter_bindings::grw::plugin::log,
        },
    });
}

pub mod analyzer_bindings {
    wit_bindgen::generate!({
        world: "analyzer-plugin",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "export_analyzer_world",
        with: {
            "grw:plugin/types@0.2.0": crate::__private::filter_bindings::grw::plugin::types,
            "grw:plugin/log@0.2.0": crate::__private::filter_bindings::grw::plugin::log,
        },
    });
}

use analyzer_bindings::exports::grw::plugin::analyzer as raw_analyzer;
pub use filter_bindings::grw::plugin::types as raw;
use notifier_bindings::exports::grw::plugin::notifier as raw_notifier;

/// Where an exported plugin keeps its instance between calls. A component
/// instance is single-threaded, so a thread-local holds it without asking
/// plugins to be `Sync`.
pub type PluginCell<T> = LocalKey<RefCell<Option<T>>>;

/// A handle on one of the host's objects, lent for the duration of a call.
/// The SDK's [`Event`] reads through it and is dropped when the call
/// returns, so the handle is never used after the host took it back.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub struct HostObject(u32);

impl HostObject {
    /// The handle of a borrowed `object`.
    pub fn of(object: &raw::Object) -> HostObject {
        HostObject(object.handle())
    }

    #[cfg(target_arch = "wasm32")]
    fn with<R>(&self, f: impl FnOnce(&raw::Object) -> R) -> R {
        // SAFETY: the handle is the one the host lent for the call in
        // progress; `ManuallyDrop` keeps it from being dropped here, as
        // only its owner, the host, may drop it.
        let object = std::mem::ManuallyDrop::new(unsafe { raw::Object::from_handle(self.0) });
        f(&object)
    }
}

#[cfg(target_arch = "wasm32")]
impl crate::ObjectSource for HostObject {
    fn json(&self) -> String {
        self.with(|o| o.json())
    }

    fn get(&self, path: &[String]) -> Option<String> {
        self.with(|o| crate::ObjectSource::get(o, path))
    }

    fn labels(&self) -> Vec<(String, String)> {
        self.with(|o| o.labels())
    }

    fn annotations(&self) -> Vec<(String, String)> {
        self.with(|o| o.annotations())
    }

    fn label(&self, key: &str) -> Option<String> {
        self.with(|o| o.label(key))
    }

    fn gvk(&self) -> Gvk {
        self.with(crate::ObjectSource::gvk)
    }

    fn namespace(&self) -> String {
        self.with(|o| o.namespace())
    }

    fn name(&self) -> String {
        self.with(|o| o.name())
    }

    fn uid(&self) -> String {
        self.with(|o| o.uid())
    }

    fn resource_version(&self) -> String {
        self.with(|o| o.resource_version())
    }
}

/// The host's `object` resource answers for itself.
#[cfg(target_arch = "wasm32")]
impl crate::ObjectSource for raw::Object {
    fn json(&self) -> String {
        raw::Object::json(self)
    }

    fn get(&self, path: &[String]) -> Option<String> {
        raw::Object::get(self, path)
    }

    fn labels(&self) -> Vec<(String, String)> {
        raw::Object::labels(self)
    }

    fn annotations(&self) -> Vec<(String, String)> {
        raw::Object::annotations(self)
    }

    fn label(&self, key: &str) -> Option<String> {
        raw::Object::label(self, key)
    }

    fn gvk(&self) -> Gvk {
        let gvk = raw::Object::gvk(self);
        Gvk::new(gvk.group, gvk.version, gvk.kind)
    }

    fn namespace(&self) -> String {
        raw::Object::namespace(self)
    }

    fn name(&self) -> String {
        raw::Object::name(self)
    }

    fn uid(&self) -> String {
        raw::Object::uid(self)
    }

    fn resource_version(&self) -> String {
        raw::Object::resource_version(self)
    }
}

fn event_from_raw(
    event: raw::Event,
    object: &raw::Object,
    old_object: Option<&raw::Object>,
) -> Event {
    let event_type = match event.event_type {
        raw::EventType::Added => EventType::Added,
        raw::EventType::Modified => EventType::Modified,
        raw::EventType::Deleted => EventType::Deleted,
    };
    let origin = match event.origin {
        raw::Origin::Initial => Origin::Initial,
        raw::Origin::Watch => Origin::Watch,
        raw::Origin::Relist => Origin::Relist,
    };
    #[cfg(target_arch = "wasm32")]
    {
        Event::from_host(
            event_type,
            origin,
            HostObject::of(object),
            old_object.map(HostObject::of),
        )
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        // Natively nothing calls the exports; there is no host to read from.
        let _ = (object, old_object);
        Event::from_parts(event_type, origin, Box::new(String::new()), None)
    }
}

fn event_type_to_raw(event_type: EventType) -> raw::EventType {
    match event_type {
        EventType::Added => raw::EventType::Added,
        EventType::Modified => raw::EventType::Modified,
        EventType::Deleted => raw::EventType::Deleted,
    }
}

fn gvk_to_raw(gvk: &Gvk) -> raw::Gvk {
    raw::Gvk {
        group: gvk.group.clone(),
        version: gvk.version.clone(),
        kind: gvk.kind.clone(),
    }
}

fn interest_to_raw(interest: Interest) -> raw::Interest {
    raw::Interest {
        kinds: interest
            .kinds
            .into_iter()
            .map(|k| raw::KindPattern {
                group: k.group,
                version: k.version,
                kind: k.kind,
            })
            .collect(),
        event_types: interest
            .event_types
            .into_iter()
            .map(event_type_to_raw)
            .collect(),
    }
}

/// Runs the plugin's `init` and keeps the instance. A failed init clears any
/// earlier instance, so later calls report the plugin as uninitialised
/// rather than run with a configuration the operator has replaced.
fn init<T>(
    cell: &'static PluginCell<T>,
    config: String,
    run: impl FnOnce(&str) -> Result<(T, Interest), String>,
) -> Result<raw::Interest, String> {
    cell.with(|c| c.borrow_mut().take());
    let (plugin, interest) = run(&config)?;
    cell.with(|c| *c.borrow_mut() = Some(plugin));
    Ok(interest_to_raw(interest))
}

/// Runs `call` on the instance, or reports (once per call) that there is none.
fn with_plugin<T, R>(
    cell: &'static PluginCell<T>,
    function: &str,
    call: impl FnOnce(&T) -> R,
) -> Option<R> {
    cell.with(|c| match c.borrow().as_ref() {
        Some(plugin) => Some(call(plugin)),
        None => {
            crate::log::error(format!(
                "`{function}` called before a successful `init`; ignoring the event"
            ));
            None
        }
    })
}

pub fn filter_init<T: Filter>(
    cell: &'static PluginCell<T>,
    config: String,
) -> Result<raw::Interest, String> {
    init(cell, config, T::init)
}

pub fn filter_decide<T: Filter>(
    cell: &'static PluginCell<T>,
    event: raw::Event,
    object: &raw::Object,
    old_object: Option<&raw::Object>,
) -> bool {
    let event = event_from_raw(event, object, old_object);
    with_plugin(cell, "decide", |plugin| plugin.decide(&event)).unwrap_or(false)
}

pub fn notifier_init<T: Notifier>(
    cell: &'static PluginCell<T>,
    config: String,
) -> Result<raw::Interest, String> {
    init(cell, config, T::init)
}

pub fn notifier_deliver<T: Notifier>(
    cell: &'static PluginCell<T>,
    event: raw::Event,
    object: &raw::Object,
    old_object: Option<&raw::Object>,
) -> Result<(), raw_notifier::DeliveryError> {
    let event = event_from_raw(event, object, old_object);
    let result = with_plugin(cell, "deliver", |plugin| plugin.deliver(&event, &HostHttp))
        .unwrap_or_else(|| Err(DeliveryError::GiveUp("plugin is not initialised".into())));
    result.map_err(|e| match e {
        DeliveryError::Retry(m) => raw_notifier::DeliveryError::Retry(m),
        DeliveryError::GiveUp(m) => raw_notifier::DeliveryError::GiveUp(m),
    })
}

pub fn analyzer_init<T: Analyzer>(
    cell: &'static PluginCell<T>,
    config: String,
) -> Result<raw::Interest, String> {
    init(cell, config, T::init)
}

pub fn analyzer_analyze<T: Analyzer>(
    cell: &'static PluginCell<T>,
    object: &raw::Object,
) -> Vec<raw_analyzer::Relationship> {
    #[cfg(target_arch = "wasm32")]
    let view = ObjectView::with_source(Source::Host(HostObject::of(object)));
    #[cfg(not(target_arch = "wasm32"))]
    let view = {
        // Natively nothing calls the exports; there is no host to read from.
        let _ = object;
        ObjectView::from_source(Box::new(String::new()))
    };
    with_plugin(cell, "analyze", |plugin| plugin.analyze(&view, &HostCache))
        .unwrap_or_default()
        .into_iter()
        .map(|r| raw_analyzer::Relationship {
            relation: r.relation,
            direction: match r.direction {
                Direction::Outgoing => raw_analyzer::Direction::Outgoing,
                Direction::Incoming => raw_analyzer::Direction::Incoming,
            },
            target: raw::ObjectRef {
                gvk: gvk_to_raw(&r.target.gvk),
                namespace: r.target.namespace,
                name: r.target.name,
            },
            attributes: r.attributes,
        })
        .collect()
}

/// Outbound HTTP through the host's `outbound-http` import.
struct HostHttp;

impl Http for HostHttp {
    #[cfg(target_arch = "wasm32")]
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, String> {
        use notifier_bindings::grw::plugin::outbound_http as host;
        let response = host::send(&host::Request {
            method: request.method.clone(),
            url: request.url.clone(),
            headers: request.headers.clone(),
            body: request.body.clone(),
        })?;
        Ok(HttpResponse {
            status: response.status,
            headers: response.headers,
            body: response.body,
        })
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn send(&self, _request: &HttpRequest) -> Result<HttpResponse, String> {
        Err("outbound HTTP is only available inside GRW; use grw_sdk::testing::RecordingHttp in tests".into())
    }
}

/// Cache lookups through the host's `cache` import.
struct HostCache;

#[cfg(target_arch = "wasm32")]
fn owned(objects: Vec<raw::Object>) -> Vec<ObjectView> {
    objects
        .into_iter()
        .map(|o| ObjectView::with_source(Source::Owned(o)))
        .collect()
}

impl Cache for HostCache {
    #[cfg(target_arch = "wasm32")]
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<ObjectView> {
        let object = analyzer_bindings::grw::plugin::cache::get(&gvk_to_raw(gvk), namespace, name)?;
        Some(ObjectView::with_source(Source::Owned(object)))
    }

    #[cfg(target_arch = "wasm32")]
    fn list(
        &self,
        gvk: &Gvk,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<ObjectView>, String> {
        analyzer_bindings::grw::plugin::cache::list(&gvk_to_raw(gvk), namespace, label_selector)
            .map(owned)
    }

    #[cfg(target_arch = "wasm32")]
    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<ObjectView> {
        owned(analyzer_bindings::grw::plugin::cache::owned_by(
            &gvk_to_raw(gvk),
            owner_uid,
        ))
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn get(&self, _gvk: &Gvk, _namespace: &str, _name: &str) -> Option<ObjectView> {
        None
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn list(
        &self,
        _gvk: &Gvk,
        _namespace: &str,
        _label_selector: &str,
    ) -> Result<Vec<ObjectView>, String> {
        Err(
            "the cache is only available inside GRW; use grw_sdk::testing::MemoryCache in tests"
                .into(),
        )
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn owned_by(&self, _gvk: &Gvk, _owner_uid: &str) -> Vec<ObjectView> {
        Vec::new()
    }
}
