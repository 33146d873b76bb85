//! What the configuration accepts by name, and the phrases its messages
//! use for what is expected: the vocabulary the other parts of `config`
//! share, at the bottom of them.

use crate::event::ChangeType;

/// Log threshold; `silly` is an alias of `trace`, `fatal` of `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Everything.
    Trace,
    /// Debugging detail.
    Debug,
    /// Normal operation.
    Info,
    /// Something went wrong but GRW carries on.
    Warn,
    /// Errors only.
    Error,
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogType {
    /// One JSON object per line.
    Json,
    /// Human-readable lines.
    Pretty,
    /// No logs at all.
    Hidden,
}

/// `k8sClientConfig.authType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthType {
    /// A kubeconfig file.
    KubeConfig,
    /// A bearer token file plus `apiServerUrl`.
    BearerToken,
    /// A client certificate and key plus `apiServerUrl`.
    ClientCertificate,
}

/// How a listener decides who may read what (`apiAuth`, `tlsListener.auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiAuth {
    /// No check: GRW's own credentials decide what every caller reads.
    None,
    /// Every caller sends the shared bearer token of `apiTokenFile`.
    Token,
    /// Every caller sends its own Kubernetes bearer token; the API server
    /// says who it is (TokenReview) and what it may read
    /// (SubjectAccessReview).
    Delegated,
}

/// Names accepted by `apiAuth` and `tlsListener.auth`.
pub(super) const API_AUTHS: &[(&str, ApiAuth)] = &[
    ("none", ApiAuth::None),
    ("token", ApiAuth::Token),
    ("delegated", ApiAuth::Delegated),
];

/// Names accepted by `minLogLevel` and `--log-level`.
pub(super) const LOG_LEVELS: &[(&str, LogLevel)] = &[
    ("silly", LogLevel::Trace),
    ("trace", LogLevel::Trace),
    ("debug", LogLevel::Debug),
    ("info", LogLevel::Info),
    ("warn", LogLevel::Warn),
    ("error", LogLevel::Error),
    ("fatal", LogLevel::Error),
];

/// Names accepted by `logType` and `--log-type`.
pub(super) const LOG_TYPES: &[(&str, LogType)] = &[
    ("json", LogType::Json),
    ("pretty", LogType::Pretty),
    ("hidden", LogType::Hidden),
];

pub(super) const AUTH_TYPES: &[(&str, AuthType)] = &[
    ("KubeConfig", AuthType::KubeConfig),
    ("BearerToken", AuthType::BearerToken),
    ("ClientCertificate", AuthType::ClientCertificate),
];

pub(super) const URL_EXPECTED: &str = "an http:// or https:// URL with a host";
pub(super) const URLS_EXPECTED: &str = "a non-empty array of http(s) URLs";
pub(super) const NAME_EXPECTED: &str = "a non-empty string";

/// Names accepted by `eventTypes`.
pub(super) const EVENT_TYPES: &[(&str, ChangeType)] = &[
    ("ADDED", ChangeType::Added),
    ("MODIFIED", ChangeType::Modified),
    ("DELETED", ChangeType::Deleted),
];

/// The analyzers compiled into GRW (the shipped `plugins/ownership`,
/// `references`, `services` and `istio-gateways`), which
/// `builtinAnalyzers` may name.
pub const BUILT_IN_ANALYZERS: [&str; 4] = ["istio-gateways", "ownership", "references", "services"];

/// The first path segments of GRW's own routes, which the Kubernetes API's
/// prefix (`kubeApiPathPrefix`) must not take.
pub const OWN_ROUTE_SEGMENTS: &[&str] = &[
    "analyze",
    "api",
    "healthz",
    "manage",
    "metrics",
    "readyz",
    "resources",
];
