//! `NAME.json`, the optional manifest beside `NAME.wasm`.

use std::time::Duration;

use serde_json::Value;

use super::PluginError;
use crate::config::{AllowedHosts, AllowedHostsError};

/// What kind of plugin a component is, by the world it was built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginKind {
    /// Exports `grw:plugin/filter`.
    Filter,
    /// Exports `grw:plugin/notifier`.
    Notifier,
    /// Exports `grw:plugin/analyzer`.
    Analyzer,
}

impl PluginKind {
    /// The name as manifests and the status API spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Filter => "filter",
            PluginKind::Notifier => "notifier",
            PluginKind::Analyzer => "analyzer",
        }
    }

    /// The exported interface of this kind, without version.
    pub fn interface(self) -> &'static str {
        match self {
            PluginKind::Filter => "grw:plugin/filter",
            PluginKind::Notifier => "grw:plugin/notifier",
            PluginKind::Analyzer => "grw:plugin/analyzer",
        }
    }
}

/// Default `limits.timeoutMs` of a notifier. Its calls include HTTP
/// requests: a webhook receiver answers in tens of milliseconds when well,
/// in seconds when busy; 10 s tells a slow receiver from a dead one without
/// holding a delivery for long.
pub const NOTIFIER_TIMEOUT: Duration = Duration::from_secs(10);

/// Most instances a manifest may ask for: more would hold memory without
/// adding concurrency on any machine GRW runs on.
const MAX_INSTANCES: u64 = 64;

/// What happens when a filter cannot answer (trap, timeout, crash loop).
/// Notifiers do not use it: an event they could not deliver is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FailMode {
    /// The event passes as if the filter said yes.
    Open,
    /// The event is dropped as if the filter said no.
    Closed,
}

/// Limits of one plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Wall-clock deadline of one call.
    #[serde(rename = "timeoutMs", serialize_with = "millis")]
    pub timeout: Duration,
    /// Largest linear memory, in bytes.
    #[serde(rename = "memoryMb", serialize_with = "megabytes")]
    pub memory_bytes: usize,
    /// Failures within [`Limits::breaker_window`] that open the crash-loop breaker.
    pub breaker_failures: u32,
    /// Window of the breaker, and how long it stays open.
    #[serde(rename = "breakerWindowMs", serialize_with = "millis")]
    pub breaker_window: Duration,
    /// Most instances of the plugin at once: concurrent calls beyond this
    /// wait for an instance to be free.
    pub instances: u32,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

fn megabytes<S: serde::Serializer>(bytes: &usize, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64((*bytes >> 20) as u64)
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // A filter judging one event should take microseconds; 100 ms means it is stuck.
            timeout: Duration::from_millis(100),
            memory_bytes: 64 << 20,
            breaker_failures: 5,
            breaker_window: Duration::from_secs(30),
            // Two lets an event stream and a list, or two streams, call a
            // plugin at once, which covers the common case on few cores
            // without holding memory for many: each instance has its own
            // linear memory, about a megabyte at the start for the shipped
            // plugins (at most `memoryMb`). Instances past the first are
            // made only when calls overlap.
            instances: 2,
        }
    }
}

/// A parsed manifest; every member optional.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The kind the operator expects; the component's world must agree.
    pub kind: Option<PluginKind>,
    /// Passed to the plugin's `init` as JSON text.
    pub config: Value,
    /// Fail open (default) or closed.
    pub fail_mode: FailMode,
    /// Limits, defaults applied.
    pub limits: Limits,
    /// Whether `limits.timeoutMs` was written; when not, a notifier gets
    /// [`NOTIFIER_TIMEOUT`] instead of the default of `limits`.
    pub timeout_given: bool,
    /// Hosts a notifier may send requests to (`allowedHosts`); GRW's
    /// `pluginAllowedHosts` must allow them too. Empty = none.
    pub allowed_hosts: AllowedHosts,
}

/// A manifest that is not right; the message names the member.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Not JSON.
    #[error("not valid JSON")]
    NotJson(#[source] serde_json::Error),
    /// JSON, but not an object.
    #[error("must be a JSON object")]
    NotAnObject,
    /// `kind` names no plugin kind.
    #[error("`kind` must be filter, notifier or analyzer, got \"{0}\"")]
    Kind(String),
    /// A limit that is not a positive whole number.
    #[error("`limits.{name}` must be a positive whole number, got {got}")]
    Limit {
        /// The limit.
        name: String,
        /// What it holds, as JSON.
        got: String,
    },
    /// A limit GRW does not have.
    #[error(
        "unknown member `limits.{0}`; accepted: timeoutMs, memoryMb, breakerFailures, breakerWindowMs, instances"
    )]
    UnknownLimit(String),
    /// An `allowedHosts` entry that is not a string.
    #[error(
        "`allowedHosts[{index}]` must be a string (`host`, `host:port` or `*.domain`), got {got}"
    )]
    AllowedHost {
        /// Which entry.
        index: usize,
        /// What it holds, as JSON.
        got: String,
    },
    /// An `allowedHosts` entry that is no host pattern.
    #[error(transparent)]
    AllowedHosts(#[from] AllowedHostsError),
    /// A member of the wrong type.
    #[error("`{key}` must be {want}, got {got}")]
    WrongType {
        /// The member.
        key: String,
        /// What it must be.
        want: &'static str,
        /// What it holds, as JSON.
        got: String,
    },
    /// A member manifests do not have.
    #[error("unknown member `{0}`; accepted: kind, config, failMode, limits, allowedHosts")]
    UnknownMember(String),
    /// `grw plugin --config` is not JSON.
    #[error("--config is not valid JSON")]
    ConfigFlag(#[source] serde_json::Error),
}

impl Manifest {
    /// The manifest of a plugin without `NAME.json`.
    pub fn default_with(limits: Limits) -> Self {
        Manifest {
            kind: None,
            config: Value::Object(Default::default()),
            fail_mode: FailMode::Open,
            limits,
            timeout_given: false,
            allowed_hosts: AllowedHosts::none(),
        }
    }

    /// Parses `NAME.json`; errors name the member and what was expected.
    pub fn parse(text: &str, defaults: Limits) -> Result<Manifest, PluginError> {
        let bad = PluginError::Manifest;
        let value: Value =
            serde_json::from_str(text).map_err(|e| bad(ManifestError::NotJson(e)))?;
        let Value::Object(map) = value else {
            return Err(bad(ManifestError::NotAnObject));
        };
        let mut manifest = Manifest::default_with(defaults);
        for (key, v) in &map {
            match (key.as_str(), v) {
                ("kind", Value::String(s)) => {
                    manifest.kind = Some(match s.as_str() {
                        "filter" => PluginKind::Filter,
                        "notifier" => PluginKind::Notifier,
                        "analyzer" => PluginKind::Analyzer,
                        _ => return Err(bad(ManifestError::Kind(s.clone()))),
                    })
                }
                ("config", v) => manifest.config = v.clone(),
                ("failMode", Value::String(s)) if s == "open" => {
                    manifest.fail_mode = FailMode::Open
                }
                ("failMode", Value::String(s)) if s == "closed" => {
                    manifest.fail_mode = FailMode::Closed
                }
                ("limits", Value::Object(limits)) => {
                    for (name, v) in limits {
                        let n = v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                            bad(ManifestError::Limit {
                                name: name.clone(),
                                got: v.to_string(),
                            })
                        })?;
                        match name.as_str() {
                            "timeoutMs" => {
                                manifest.limits.timeout = Duration::from_millis(n);
                                manifest.timeout_given = true;
                            }
                            "memoryMb" => {
                                manifest.limits.memory_bytes = (n as usize).saturating_mul(1 << 20)
                            }
                            "breakerFailures" => {
                                manifest.limits.breaker_failures = n.min(u64::from(u32::MAX)) as u32
                            }
                            "breakerWindowMs" => {
                                manifest.limits.breaker_window = Duration::from_millis(n)
                            }
                            "instances" => manifest.limits.instances = n.min(MAX_INSTANCES) as u32,
                            other => {
                                return Err(bad(ManifestError::UnknownLimit(other.to_string())));
                            }
                        }
                    }
                }
                ("allowedHosts", Value::Array(items)) => {
                    let patterns = items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            v.as_str().ok_or_else(|| {
                                bad(ManifestError::AllowedHost {
                                    index: i,
                                    got: v.to_string(),
                                })
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    manifest.allowed_hosts = AllowedHosts::parse("allowedHosts", &patterns)
                        .map_err(|e| bad(ManifestError::AllowedHosts(e)))?;
                }
                ("kind" | "failMode" | "limits" | "allowedHosts", v) => {
                    let want = match key.as_str() {
                        "kind" => "filter, notifier or analyzer",
                        "failMode" => "\"open\" or \"closed\"",
                        "allowedHosts" => {
                            "an array of host patterns (`host`, `host:port` or `*.domain`)"
                        }
                        _ => "an object",
                    };
                    return Err(bad(ManifestError::WrongType {
                        key: key.clone(),
                        want,
                        got: v.to_string(),
                    }));
                }
                (other, _) => return Err(bad(ManifestError::UnknownMember(other.to_string()))),
            }
        }
        Ok(manifest)
    }

    /// Applies the defaults that depend on the component's kind: a notifier
    /// without `limits.timeoutMs` gets [`NOTIFIER_TIMEOUT`].
    pub fn apply_kind_defaults(&mut self, kind: PluginKind) {
        if kind == PluginKind::Notifier && !self.timeout_given {
            self.limits.timeout = NOTIFIER_TIMEOUT;
        }
    }

    /// The config as the text `init` receives.
    pub fn config_text(&self) -> String {
        self.config.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_full_manifest() {
        let m = Manifest::parse(
            r#"{"kind": "filter", "config": {"include": ["shop"]}, "failMode": "closed",
                "limits": {"timeoutMs": 50, "memoryMb": 16, "breakerFailures": 2, "breakerWindowMs": 1000, "instances": 3}}"#,
            Limits::default(),
        )
        .unwrap();
        assert_eq!(m.kind, Some(PluginKind::Filter));
        assert_eq!(m.fail_mode, FailMode::Closed);
        assert_eq!(m.config_text(), r#"{"include":["shop"]}"#);
        assert_eq!(m.limits.timeout, Duration::from_millis(50));
        assert_eq!(m.limits.memory_bytes, 16 << 20);
        assert_eq!(m.limits.breaker_failures, 2);
        assert_eq!(m.limits.instances, 3);
        assert_eq!(Limits::default().instances, 2);
        assert!(m.timeout_given);
        let empty = Manifest::parse("{}", Limits::default()).unwrap();
        assert_eq!(empty, Manifest::default_with(Limits::default()));
        assert_eq!(empty.config_text(), "{}");
    }

    #[test]
    fn bad_manifests_say_what_is_wrong() {
        let cases = [
            ("nope", "not valid JSON"),
            ("[]", "must be a JSON object"),
            (
                r#"{"kind": "mapper"}"#,
                "`kind` must be filter, notifier or analyzer, got \"mapper\"",
            ),
            (
                r#"{"kind": 3}"#,
                "`kind` must be filter, notifier or analyzer, got 3",
            ),
            (
                r#"{"failMode": "sometimes"}"#,
                "`failMode` must be \"open\" or \"closed\"",
            ),
            (
                r#"{"limits": {"timeoutMs": 0}}"#,
                "`limits.timeoutMs` must be a positive whole number, got 0",
            ),
            (r#"{"limits": {"cpu": 1}}"#, "unknown member `limits.cpu`"),
            (r#"{"limits": 5}"#, "`limits` must be an object"),
            (
                r#"{"extra": 1}"#,
                "unknown member `extra`; accepted: kind, config, failMode, limits, allowedHosts",
            ),
            (
                r#"{"allowedHosts": "hooks.slack.com"}"#,
                "`allowedHosts` must be an array of host patterns (`host`, `host:port` or `*.domain`), got \"hooks.slack.com\"",
            ),
            (
                r#"{"allowedHosts": ["a.example", 443]}"#,
                "`allowedHosts[1]` must be a string (`host`, `host:port` or `*.domain`), got 443",
            ),
            (
                r#"{"allowedHosts": ["https://hooks.slack.com/services/T0"]}"#,
                "`allowedHosts[0]`: `https://hooks.slack.com/services/T0` is a URL; write the host alone, e.g. `hooks.slack.com`",
            ),
            (
                r#"{"allowedHosts": ["*"]}"#,
                "`allowedHosts[0]`: `*` would allow every host",
            ),
            (
                r#"{"allowedHosts": ["example.com:99999"]}"#,
                "`allowedHosts[0]`: `example.com:99999`: the port must be a number from 1 to 65535",
            ),
        ];
        for (text, want) in cases {
            let err = Manifest::parse(text, Limits::default()).unwrap_err();
            let err = crate::error::Report(&err).to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn allowed_hosts_are_parsed() {
        let m = Manifest::parse(
            r#"{"kind": "notifier", "allowedHosts": ["hooks.slack.com", "*.example.com:8443"]}"#,
            Limits::default(),
        )
        .unwrap();
        assert_eq!(
            m.allowed_hosts.to_string(),
            "hooks.slack.com, *.example.com:8443"
        );
        assert!(m.allowed_hosts.allows("hooks.slack.com", 443));
        assert!(m.allowed_hosts.allows("ci.example.com", 8443));
        assert!(!m.allowed_hosts.allows("ci.example.com", 443));
        assert!(
            Manifest::parse("{}", Limits::default())
                .unwrap()
                .allowed_hosts
                .is_empty()
        );
    }

    #[test]
    fn notifiers_get_a_longer_default_timeout_unless_one_is_given() {
        let mut m = Manifest::parse("{}", Limits::default()).unwrap();
        m.apply_kind_defaults(PluginKind::Filter);
        assert_eq!(m.limits.timeout, Limits::default().timeout);
        m.apply_kind_defaults(PluginKind::Notifier);
        assert_eq!(m.limits.timeout, NOTIFIER_TIMEOUT);
        let mut m =
            Manifest::parse(r#"{"limits": {"timeoutMs": 500}}"#, Limits::default()).unwrap();
        m.apply_kind_defaults(PluginKind::Notifier);
        assert_eq!(m.limits.timeout, Duration::from_millis(500));
    }
}
