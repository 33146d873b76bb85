//! Write GRW plugins in Rust: filters, notifiers and analyzers that GRW runs
//! as sandboxed WebAssembly components.
//!
//! A plugin is a `cdylib` crate that implements one of the traits
//! [`Filter`], [`Notifier`] or [`Analyzer`] and exports it with the matching
//! macro ([`export_filter!`], [`export_notifier!`], [`export_analyzer!`]).
//! Build it with `cargo build --release --target wasm32-wasip2`; the
//! resulting `.wasm` file is the component GRW loads, next to a JSON manifest
//! that names its kind and configuration.
//!
//! # Example
//!
//! A filter that passes events for objects whose labels match a selector
//! from its configuration, e.g. `{"selector": "app in (web,api),tier!=cache"}`:
//!
//! ```rust,standalone_crate
//! use grw_sdk::{Event, Filter, Interest, LabelSelector};
//!
//! #[derive(serde::Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct LabelFilter {
//!     selector: LabelSelector,
//! }
//!
//! impl Filter for LabelFilter {
//!     fn init(config: &str) -> Result<(Self, Interest), String> {
//!         Ok((grw_sdk::parse_config(config)?, Interest::all()))
//!     }
//!
//!     fn decide(&self, event: &Event) -> bool {
//!         self.selector.matches(event)
//!     }
//! }
//!
//! grw_sdk::export_filter!(LabelFilter);
//! # fn main() {
//! #     let (filter, _) = LabelFilter::init(r#"{"selector": "app=web"}"#).unwrap();
//! #     let event = Event::new(grw_sdk::EventType::Added, serde_json::json!({"metadata": {"labels": {"app": "web"}}}));
//! #     assert!(filter.decide(&event));
//! # }
//! ```
//!
//! # Testing plugins natively
//!
//! Plugin logic is plain Rust, so `cargo test` runs it without a WebAssembly
//! runtime: build events with [`Event::new`] (or [`Event::from_parts`] with
//! your own [`ObjectSource`]), and pass
//! [`testing::MemoryCache`] or [`testing::RecordingHttp`] where the host's
//! cache or HTTP client would go. [`log`] functions print to stderr there.
//!
//! # What a plugin sees
//!
//! - [`Event`]: the event type and [`Origin`], and the object, which stays
//!   in GRW until the plugin asks for part of it: [`Event::name`] (and the
//!   kind, namespace, UID, resource version), [`Event::label`],
//!   [`Event::annotation`] and [`Event::field`] fetch just that;
//!   [`Event::object`] fetches the whole JSON and parses it into an
//!   [`Object`]. A plugin that reads only a label or one field never
//!   receives the rest. This is contract `grw:plugin@0.2`
//!   (`wit/plugin.wit`).
//! - [`Object`]: JSON with metadata helpers, paths ([`FieldPath`]) and typed
//!   parsing into [`k8s_openapi`] structs.
//! - [`Interest`]: returned from `init`, so GRW only sends the events the
//!   plugin cares about.
//! - [`parse_config`]: configuration errors that name the offending key.

#![warn(missing_docs)]

mod cache;
mod config;
mod error;
mod event;
mod http;
mod interest;
pub mod log;
mod macros;
mod object;
mod selector;
pub mod testing;
mod view;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use cache::{Cache, Direction, ObjectRef, Relationship};
pub use config::parse_config;
pub use error::Error;
pub use event::{Event, EventType, Gvk, ObjectSource, Origin};
pub use http::{DeliveryError, Http, HttpRequest, HttpResponse};
pub use interest::{Interest, KindPattern};
pub use object::{FieldPath, Object};
pub use selector::{LabelSelector, Labels, Operator, Requirement};
pub use view::ObjectView;

/// Kubernetes API types (`k8s_openapi::api::core::v1::Pod`, ...), for
/// [`Object::parse`]; re-exported so plugins use the version the SDK was
/// built with.
pub use k8s_openapi;
/// JSON values, as found in [`Object`]; re-exported for the same reason.
pub use serde_json;

/// A plugin that decides which events pass.
///
/// GRW calls [`init`](Filter::init) once with the manifest's configuration,
/// then [`decide`](Filter::decide) for each event that matches the returned
/// [`Interest`]. Export the implementation with [`export_filter!`].
pub trait Filter: Sized {
    /// Reads the configuration (JSON text; `{}` when there is none). An error
    /// rejects the plugin; its message is shown to the operator, so name the
    /// offending key ([`parse_config`] does).
    fn init(config: &str) -> Result<(Self, Interest), String>;

    /// Whether `event` passes.
    fn decide(&self, event: &Event) -> bool;
}

/// A plugin that delivers events somewhere, over HTTP.
///
/// Export the implementation with [`export_notifier!`].
pub trait Notifier: Sized {
    /// As for [`Filter::init`].
    fn init(config: &str) -> Result<(Self, Interest), String>;

    /// Delivers one event. `http` only reaches hosts that both the plugin's
    /// manifest (`allowedHosts`) and the operator (`pluginAllowedHosts`)
    /// allow, within what is left of the call's `limits.timeoutMs`. Return
    /// [`DeliveryError::Retry`] for failures that may pass later and
    /// [`DeliveryError::GiveUp`] for ones that never will;
    /// [`Http::deliver`] sends a request and sorts its outcome that way.
    fn deliver(&self, event: &Event, http: &dyn Http) -> Result<(), DeliveryError>;
}

/// A plugin that says how an object relates to others.
///
/// Export the implementation with [`export_analyzer!`].
pub trait Analyzer: Sized {
    /// As for [`Filter::init`]; the interest's kinds are the kinds this
    /// analyzer analyzes.
    fn init(config: &str) -> Result<(Self, Interest), String>;

    /// The relationships of `object` as it is now; `cache` looks up other
    /// objects. They replace what this analyzer said of the object before.
    fn analyze(&self, object: &ObjectView, cache: &dyn Cache) -> Vec<Relationship>;
}
