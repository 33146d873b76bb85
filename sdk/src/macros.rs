//! The `export_*!` macros that turn a type into a plugin component.

/// Exports a [`Filter`](crate::Filter) implementation as the component's
/// `grw:plugin/filter` interface.
///
/// Use it once per plugin crate (a `cdylib`), at module level. The macro
/// keeps the instance that `init` returns and hands every event to
/// `decide`; an event that arrives without a successful `init` is logged and
/// does not pass. See the [crate-level example](crate#example).
#[macro_export]
macro_rules! export_filter {
    ($plugin:ty) => {
        const _: () = {
            ::std::thread_local! {
                static GRW_PLUGIN: ::core::cell::RefCell<::core::option::Option<$plugin>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }

            #[allow(dead_code, reason = "constructed only by the component exports")]

            struct GrwFilterExport;

            impl $crate::__private::filter_bindings::exports::grw::plugin::filter::Guest
                for GrwFilterExport
            {
                fn init(
                    config: ::std::string::String,
                ) -> ::core::result::Result<$crate::__private::raw::Interest, ::std::string::String>
                {
                    $crate::__private::filter_init::<$plugin>(&GRW_PLUGIN, config)
                }

                fn decide(
                    event: $crate::__private::raw::Event,
                    object: &$crate::__private::raw::Object,
                    old_object: ::core::option::Option<&$crate::__private::raw::Object>,
                ) -> bool {
                    $crate::__private::filter_decide::<$plugin>(
                        &GRW_PLUGIN,
                        event,
                        object,
                        old_object,
                    )
                }
            }

            // Exports exist only in the component: natively their names (`grw:plugin/...`)

            // are not valid symbol names for the linker, and nothing calls them.

            #[cfg(target_arch = "wasm32")]

            $crate::__private::filter_bindings::export_filter_world!(
                GrwFilterExport with_types_in $crate::__private::filter_bindings
            );
        };
    };
}

/// Exports a [`Notifier`](crate::Notifier) implementation as the component's
/// `grw:plugin/notifier` interface.
///
/// Use it once per plugin crate (a `cdylib`), at module level. `deliver`
/// receives an [`Http`](crate::Http) backed by the host's outbound HTTP. A
/// delivery that arrives without a successful `init` is logged and fails
/// with [`DeliveryError::GiveUp`](crate::DeliveryError::GiveUp).
///
/// ```rust,standalone_crate
/// use grw_sdk::{DeliveryError, Event, Http, HttpRequest, Interest, Notifier};
///
/// struct Webhook {
///     url: String,
/// }
///
/// impl Notifier for Webhook {
///     fn init(config: &str) -> Result<(Self, Interest), String> {
///         let config: serde_json::Value = grw_sdk::parse_config(config)?;
///         let url = config["url"].as_str().ok_or("config needs `url`")?.to_owned();
///         Ok((Webhook { url }, Interest::all()))
///     }
///
///     fn deliver(&self, event: &Event, http: &dyn Http) -> Result<(), DeliveryError> {
///         let request = HttpRequest::post(&self.url)
///             .json(&serde_json::json!({"type": event.event_type.as_str(), "name": event.name()}))
///             .map_err(|e| DeliveryError::GiveUp(e.to_string()))?;
///         // 2xx delivered; refused, unreachable, 408, 429, 5xx retried; the rest given up.
///         http.deliver(&request).map(drop)
///     }
/// }
///
/// grw_sdk::export_notifier!(Webhook);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_notifier {
    ($plugin:ty) => {
        const _: () = {
            ::std::thread_local! {
                static GRW_PLUGIN: ::core::cell::RefCell<::core::option::Option<$plugin>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }

            #[allow(dead_code, reason = "constructed only by the component exports")]

            struct GrwNotifierExport;

            impl $crate::__private::notifier_bindings::exports::grw::plugin::notifier::Guest for GrwNotifierExport {
                fn init(
                    config: ::std::string::String,
                ) -> ::core::result::Result<$crate::__private::raw::Interest, ::std::string::String> {
                    $crate::__private::notifier_init::<$plugin>(&GRW_PLUGIN, config)
                }

                fn deliver(
                    event: $crate::__private::raw::Event,
                    object: &$crate::__private::raw::Object,
                    old_object: ::core::option::Option<&$crate::__private::raw::Object>,
                ) -> ::core::result::Result<
                    (),
                    $crate::__private::notifier_bindings::exports::grw::plugin::notifier::DeliveryError,
                > {
                    $crate::__private::notifier_deliver::<$plugin>(&GRW_PLUGIN, event, object, old_object)
                }
            }

            // Exports exist only in the component: natively their names (`grw:plugin/...`)

            // are not valid symbol names for the linker, and nothing calls them.

            #[cfg(target_arch = "wasm32")]

            $crate::__private::notifier_bindings::export_notifier_world!(
                GrwNotifierExport with_types_in $crate::__private::notifier_bindings
            );
        };
    };
}

/// Exports an [`Analyzer`](crate::Analyzer) implementation as the
/// component's `grw:plugin/analyzer` interface.
///
/// Use it once per plugin crate (a `cdylib`), at module level. `analyze`
/// receives a [`Cache`](crate::Cache) backed by the host's caches. A call
/// that arrives without a successful `init` is logged and yields no
/// relationships.
///
/// ```rust,standalone_crate
/// use grw_sdk::{Analyzer, Cache, Gvk, Interest, KindPattern, ObjectView, Relationship};
///
/// /// Links each ReplicaSet to the Pods it owns.
/// struct OwnedPods;
///
/// impl Analyzer for OwnedPods {
///     fn init(_config: &str) -> Result<(Self, Interest), String> {
///         Ok((OwnedPods, Interest::all().kinds([KindPattern::group_kind("apps", "ReplicaSet")])))
///     }
///
///     fn analyze(&self, replica_set: &ObjectView, cache: &dyn Cache) -> Vec<Relationship> {
///         cache
///             .owned_by(&Gvk::new("", "v1", "Pod"), replica_set.uid())
///             .iter()
///             .map(|pod| Relationship::outgoing("owns", pod.to_ref()))
///             .collect()
///     }
/// }
///
/// grw_sdk::export_analyzer!(OwnedPods);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_analyzer {
    ($plugin:ty) => {
        const _: () = {
            ::std::thread_local! {
                static GRW_PLUGIN: ::core::cell::RefCell<::core::option::Option<$plugin>> =
                    const { ::core::cell::RefCell::new(::core::option::Option::None) };
            }

            #[allow(dead_code, reason = "constructed only by the component exports")]

            struct GrwAnalyzerExport;

            impl $crate::__private::analyzer_bindings::exports::grw::plugin::analyzer::Guest for GrwAnalyzerExport {
                fn init(
                    config: ::std::string::String,
                ) -> ::core::result::Result<$crate::__private::raw::Interest, ::std::string::String> {
                    $crate::__private::analyzer_init::<$plugin>(&GRW_PLUGIN, config)
                }

                fn analyze(
                    object: &$crate::__private::raw::Object,
                ) -> ::std::vec::Vec<
                    $crate::__private::analyzer_bindings::exports::grw::plugin::analyzer::Relationship,
                > {
                    $crate::__private::analyzer_analyze::<$plugin>(&GRW_PLUGIN, object)
                }
            }

            // Exports exist only in the component: natively their names (`grw:plugin/...`)

            // are not valid symbol names for the linker, and nothing calls them.

            #[cfg(target_arch = "wasm32")]

            $crate::__private::analyzer_bindings::export_analyzer_world!(
                GrwAnalyzerExport with_types_in $crate::__private::analyzer_bindings
            );
        };
    };
}
