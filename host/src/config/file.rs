//! The config file: JSON text → [`Config`], with defaults, validation and
//! warnings.
//!
//! Rules that hold for every key:
//! - every key is optional; a missing key keeps its default;
//! - `null` counts as a missing key (files of the earlier GRW write
//!   `"watchOptions": null`);
//! - an empty string counts as a missing key for optional strings and paths
//!   (the earlier GRW wrote `"kubeConfigFilePath": ""`);
//! - a leading `~` of a path is replaced by `$HOME`;
//! - numbers may be written as `3000` or `3000.0`;
//! - an unknown key is a warning, a wrong type or value is an error naming the
//!   full key path (`initialWatchingResources[0].notifiers[1].webhookUrls`).
//!
//! The file is read into the structs below (and the types of `types` and
//! `subscription`) by serde, through `de`, which applies these rules; each
//! value is checked as it is read (`values`). What remains here is what
//! involves several keys or the environment: the port of `listenAddress`,
//! the paths, `KUBECONFIG`, `AUTO_INCLUSTER_CONFIG` and `HOME`, and the keys
//! each `authType` needs.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::accepted::{ApiAuth, AuthType, BUILT_IN_ANALYZERS, LogLevel, LogType, URLS_EXPECTED};
use super::allowed_hosts::AllowedHosts;
use super::compat_body::NotifierFilter;
use super::de::{self, show};
use super::error::ConfigError;
use super::subscription::SubscriptionConfig;
use super::types::{
    ClientConfig, Config, DelegatedAuth, IndexedFields, JournalConfig, JournalKind, LeaderElection,
    NotifierConfig, Queries, TlsListener, WatchOptions, WatchedResource,
};
use super::values::{
    ApiGroup, Count, FieldPath, HttpUrl, ListenAddress, Name, Parsed, PathPrefix, Port, Seconds,
    allowed_hosts, built_in_analyzers, console_url, event_types, expand_home, namespace,
    optional_parsed, optional_url, pem_base64, query_params,
};
use crate::gvk::Gvk;

/// Every default documented on [`Config`]. The kubeconfig path is left unset
/// here: [`parse`] resolves it from the environment.
impl Default for Config {
    fn default() -> Self {
        Config {
            log_level: LogLevel::Info,
            log_type: LogType::Json,
            listen_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            listen_port: 3000,
            kube_api_path_prefix: "/kube".into(),
            console_url: None,
            initial_resources: Vec::new(),
            global_webhook_urls: Vec::new(),
            sync_api_groups: true,
            api_groups_sync_interval: Duration::from_secs(30),
            client: ClientConfig::default(),
            keep_managed_fields: false,
            streaming_list: true,
            on_demand_watch: true,
            allow_on_demand_secrets: false,
            sync_timeout: Duration::from_secs(30),
            on_demand_idle: Duration::from_secs(600),
            max_on_demand_watches: 100,
            watch_stream_max: Duration::from_secs(3600),
            api_token_file: None,
            api_auth: None,
            delegated_auth: DelegatedAuth::default(),
            tls_listener: None,
            replay_file: None,
            plugin_dir: None,
            builtin_analyzers: BUILT_IN_ANALYZERS.map(String::from).to_vec(),
            plugin_cache_dir: None,
            plugin_cache_max_bytes: 1 << 30,
            plugin_allowed_hosts: AllowedHosts::none(),
            data_dir: None,
            subscriptions: Vec::new(),
            event_history_size: 10_000,
            event_history_bytes: 64 << 20,
            max_request_body_bytes: 1024 * 1024,
            notification_buffer_bytes: 64 << 20,
            subscription_pending_bytes: 256 << 20,
            subscription_dead_letter_bytes: 64 << 20,
            leader_election: None,
            queries: Queries::default(),
            journal: JournalConfig::default(),
        }
    }
}

/// Parses the text of a config file into a [`Config`] plus warnings (unknown
/// keys, ignored environment values).
///
/// `env` looks up environment variables: `KUBECONFIG`, `AUTO_INCLUSTER_CONFIG`
/// and `HOME` are consulted, so an empty object `{}` may still yield a
/// kubeconfig path. Command-line flags are not applied here; see
/// [`Config::apply_flags`].
pub fn parse(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Config, Vec<String>), ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| syntax_error(&e))?;
    if !value.is_object() {
        return Err(ConfigError::NotAnObject {
            file: None,
            got: show(&value),
        });
    }
    let mut warnings = Vec::new();
    let file: File =
        de::from_value(&value, &mut warnings).map_err(|e| invalid(e.key, e.message))?;
    let mut resolver = Resolver { env, warnings };
    let config = resolver.config(file)?;
    Ok((config, resolver.warnings))
}

fn syntax_error(e: &serde_json::Error) -> ConfigError {
    let full = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    let message = full.strip_suffix(&position).unwrap_or(&full).to_string();
    ConfigError::Syntax {
        file: None,
        line: e.line(),
        column: e.column(),
        message,
    }
}

/// `delegatedAuth`, with the defaults of [`DelegatedAuth`].
fn delegated_auth(file: Option<DelegatedAuthFile>) -> DelegatedAuth {
    let defaults = DelegatedAuth::default();
    let file = file.unwrap_or_default();
    DelegatedAuth {
        cache_allowed: file
            .cache_allowed_seconds
            .map_or(defaults.cache_allowed, Seconds::duration),
        cache_denied: file
            .cache_denied_seconds
            .map_or(defaults.cache_denied, Seconds::duration),
        token_cache: file
            .token_cache_seconds
            .map_or(defaults.token_cache, Seconds::duration),
        cache_max_entries: file
            .cache_max_entries
            .map_or(defaults.cache_max_entries, |c| c.0),
        widen: file.widen.unwrap_or(defaults.widen),
        max_concurrent_reviews: file
            .max_concurrent_reviews
            .map_or(defaults.max_concurrent_reviews, |c| c.0),
        max_queued_reviews: file
            .max_queued_reviews
            .map_or(defaults.max_queued_reviews, |c| c.0),
    }
}

fn journal(file: Option<JournalFile>) -> JournalConfig {
    let defaults = JournalConfig::default();
    let file = file.unwrap_or_default();
    JournalConfig {
        enabled: file.enabled.unwrap_or(defaults.enabled),
        max_age: file
            .max_age_seconds
            .map_or(defaults.max_age, Seconds::duration),
        max_bytes: file.max_bytes.map(|c| c.0 as u64),
        events: file.events.unwrap_or(defaults.events),
        kinds: file
            .kinds
            .into_iter()
            .map(|k| JournalKind {
                group: k
                    .group
                    .map(|g| crate::gvk::normalize_group(&g.0).to_string())
                    .unwrap_or_default(),
                kind: k.kind.0,
                journal: k.journal,
                max_age: k.max_age_seconds.map(Seconds::duration),
                max_bytes: k.max_bytes.map(|c| c.0 as u64),
            })
            .collect(),
    }
}

fn queries(file: Option<QueriesFile>) -> Queries {
    let defaults = Queries::default();
    let file = file.unwrap_or_default();
    Queries {
        threads: file.threads.map(|c| c.0),
        queue: file.queue.map_or(defaults.queue, |c| c.0),
        budget: file
            .budget_millis
            .map_or(defaults.budget, |c| Duration::from_millis(c.0 as u64)),
        scan_helpers: file.scan_helpers.map(|c| c.0),
        indexed_fields: file
            .indexed_fields
            .into_iter()
            .map(|f| IndexedFields {
                group: f
                    .group
                    .map(|g| crate::gvk::normalize_group(&g.0).to_string())
                    .unwrap_or_default(),
                kind: f.kind.0,
                fields: f.fields.into_iter().map(|p| p.0).collect(),
            })
            .collect(),
    }
}

/// The port of `tlsListener` when none is given: the usual alternative
/// HTTPS port.
const TLS_PORT: u16 = 8443;

/// Checks what the listeners' access modes need of the rest of the
/// configuration: `token` a token file, `delegated` an API server, and the
/// two listeners different ports. Run after the file and again after the
/// command-line flags, which may change `apiTokenFile` and `replayFile`.
pub(super) fn check_access(config: &Config) -> Result<(), ConfigError> {
    let mut modes = vec![("apiAuth", config.api_auth())];
    if let Some(tls) = &config.tls_listener {
        modes.push(("tlsListener.auth", tls.auth));
    }
    for (key, mode) in modes {
        match mode {
            ApiAuth::Token if config.api_token_file.is_none() => {
                return Err(invalid(
                    key,
                    "`token` checks the shared bearer token of `apiTokenFile`, which is not set; set `apiTokenFile` (or --api-token-file), or choose `none` or `delegated`",
                ));
            }
            ApiAuth::Delegated if config.replay_file.is_some() => {
                return Err(invalid(
                    key,
                    "`delegated` asks the API server who each caller is and what it may read, and a replayed recording (`replayFile`, --replay) has no API server; choose `none` or `token`",
                ));
            }
            _ => {}
        }
    }
    if let Some(tls) = &config.tls_listener {
        let overlap = tls.address == config.listen_address
            || tls.address.is_unspecified()
            || config.listen_address.is_unspecified();
        if tls.port == config.listen_port && overlap {
            return Err(invalid(
                "tlsListener.port",
                format!(
                    "{} is the port of the API listener too (`listenPort`); choose another",
                    tls.port
                ),
            ));
        }
    }
    Ok(())
}

/// `leaderElection`, with client-go's defaults, the periods checked against
/// each other.
fn leader_election(file: LeaderElectionFile) -> Result<LeaderElection, ConfigError> {
    let defaults = LeaderElection::default();
    let election = LeaderElection {
        lease_name: file.lease_name.map_or(defaults.lease_name, |n| n.0),
        lease_namespace: file.lease_namespace.map(|n| n.0),
        identity: file.identity.map(|n| n.0),
        lease_duration: file
            .lease_duration_seconds
            .map_or(defaults.lease_duration, Seconds::duration),
        renew_deadline: file
            .renew_deadline_seconds
            .map_or(defaults.renew_deadline, Seconds::duration),
        retry_period: file
            .retry_period_seconds
            .map_or(defaults.retry_period, Seconds::duration),
    };
    if election.renew_deadline >= election.lease_duration {
        return Err(invalid(
            "leaderElection.renewDeadlineSeconds",
            format!(
                "must be shorter than leaseDurationSeconds ({}), so that a leader that cannot renew stops delivering before another may take over",
                election.lease_duration.as_secs_f64()
            ),
        ));
    }
    if election.retry_period >= election.renew_deadline {
        return Err(invalid(
            "leaderElection.retryPeriodSeconds",
            format!(
                "must be shorter than renewDeadlineSeconds ({}), so that the leader tries to renew more than once",
                election.renew_deadline.as_secs_f64()
            ),
        ));
    }
    Ok(election)
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        file: None,
        key: key.into(),
        message: message.into(),
    }
}

// The file, as serde reads it. Members are read in the order declared here.

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct File {
    min_log_level: Option<LogLevel>,
    log_type: Option<LogType>,
    listen_address: Option<ListenAddress>,
    listen_port: Option<Port>,
    kube_api_path_prefix: Option<PathPrefix>,
    #[serde(deserialize_with = "console_url")]
    console_url: Option<String>,
    #[serde(deserialize_with = "resources")]
    initial_watching_resources: Vec<WatchedResource>,
    #[serde(deserialize_with = "global_urls")]
    global_webhook_urls: Vec<String>,
    enable_sync_api_groups: Option<bool>,
    api_groups_sync_interval_second: Option<Seconds>,
    k8s_client_config: Option<ClientFile>,
    keep_managed_fields: Option<bool>,
    streaming_list: Option<bool>,
    on_demand_watch: Option<bool>,
    allow_on_demand_secrets: Option<bool>,
    sync_timeout_second: Option<Seconds>,
    on_demand_idle_seconds: Option<Seconds<604_800>>,
    max_on_demand_watches: Option<Count<1>>,
    watch_stream_max_seconds: Option<Seconds<86_400>>,
    #[serde(deserialize_with = "de::text")]
    api_token_file: Option<String>,
    api_auth: Option<ApiAuth>,
    delegated_auth: Option<DelegatedAuthFile>,
    tls_listener: Option<TlsListenerFile>,
    #[serde(deserialize_with = "de::text")]
    replay_file: Option<String>,
    #[serde(deserialize_with = "de::text")]
    plugin_dir: Option<String>,
    #[serde(deserialize_with = "built_in_analyzers")]
    builtin_analyzers: Option<Vec<String>>,
    #[serde(deserialize_with = "de::text")]
    plugin_cache_dir: Option<String>,
    plugin_cache_max_bytes: Option<Count<1>>,
    #[serde(deserialize_with = "allowed_hosts")]
    plugin_allowed_hosts: AllowedHosts,
    #[serde(deserialize_with = "de::text")]
    data_dir: Option<String>,
    #[serde(deserialize_with = "subscriptions")]
    subscriptions: Vec<SubscriptionConfig>,
    event_history_size: Option<Count<0>>,
    event_history_bytes: Option<Count<0>>,
    max_request_body_bytes: Option<Count<1>>,
    notification_buffer_bytes: Option<Count<1>>,
    subscription_pending_bytes: Option<Count<1>>,
    subscription_dead_letter_bytes: Option<Count<0>>,
    leader_election: Option<LeaderElectionFile>,
    queries: Option<QueriesFile>,
    journal: Option<JournalFile>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, expecting = "an object")]
struct JournalFile {
    enabled: Option<bool>,
    max_age_seconds: Option<Seconds>,
    max_bytes: Option<Count<1>>,
    events: Option<bool>,
    kinds: Vec<JournalKindFile>,
}

#[derive(Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an object with `kind` and any of `group`, `journal`, `maxAgeSeconds`, `maxBytes`"
)]
struct JournalKindFile {
    #[serde(default)]
    group: Option<ApiGroup>,
    kind: Name,
    #[serde(default)]
    journal: Option<bool>,
    #[serde(default)]
    max_age_seconds: Option<Seconds>,
    #[serde(default)]
    max_bytes: Option<Count<1>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, expecting = "an object")]
struct QueriesFile {
    threads: Option<Count<1>>,
    queue: Option<Count<1>>,
    budget_millis: Option<Count<1>>,
    scan_helpers: Option<Count<0>>,
    indexed_fields: Vec<IndexedFieldsFile>,
}

#[derive(Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an object with `group`, `kind` and `fields`"
)]
struct IndexedFieldsFile {
    #[serde(default)]
    group: Option<ApiGroup>,
    kind: Name,
    fields: Vec<FieldPath>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, expecting = "an object")]
struct DelegatedAuthFile {
    cache_allowed_seconds: Option<Seconds>,
    cache_denied_seconds: Option<Seconds>,
    token_cache_seconds: Option<Seconds>,
    cache_max_entries: Option<Count<1>>,
    widen: Option<bool>,
    max_concurrent_reviews: Option<Count<1>>,
    max_queued_reviews: Option<Count<0>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, expecting = "an object")]
struct TlsListenerFile {
    address: Option<ListenAddress>,
    port: Option<Port>,
    #[serde(deserialize_with = "de::text")]
    cert_file: Option<String>,
    #[serde(deserialize_with = "de::text")]
    key_file: Option<String>,
    auth: Option<ApiAuth>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct LeaderElectionFile {
    lease_name: Option<Name>,
    lease_namespace: Option<Name>,
    identity: Option<Name>,
    lease_duration_seconds: Option<Seconds>,
    renew_deadline_seconds: Option<Seconds>,
    retry_period_seconds: Option<Seconds>,
}

#[derive(Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an object with `group`, `version` and `kind`"
)]
struct ResourceFile {
    #[serde(default)]
    group: Option<ApiGroup>,
    version: Name,
    kind: Name,
    #[serde(default)]
    watch_options: Option<WatchOptions>,
    #[serde(default, deserialize_with = "notifiers")]
    notifiers: Vec<NotifierConfig>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, expecting = "an object")]
struct WatchOptionsFile {
    #[serde(deserialize_with = "namespace")]
    namespace: Option<String>,
    #[serde(deserialize_with = "optional_parsed")]
    label_selector: Option<Parsed<crate::selectors::LabelSelector>>,
    #[serde(deserialize_with = "optional_parsed")]
    field_selector: Option<Parsed<crate::selectors::FieldSelector>>,
    #[serde(deserialize_with = "query_params")]
    additional_k8s_api_query_params: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an object with `webhookUrls`")]
struct NotifierFile {
    #[serde(deserialize_with = "notifier_urls")]
    webhook_urls: Vec<String>,
    #[serde(default, deserialize_with = "event_types")]
    event_types: Vec<crate::event::ChangeType>,
    #[serde(default)]
    filter: Option<NotifierFilter>,
    #[serde(default, deserialize_with = "super::subscription::match_conditions")]
    match_conditions: Vec<super::subscription::MatchCondition>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, expecting = "an object")]
struct ClientFile {
    auto_in_cluster_config: Option<bool>,
    auth_type: Option<AuthType>,
    #[serde(deserialize_with = "de::text")]
    kube_config_file_path: Option<String>,
    #[serde(deserialize_with = "optional_url")]
    api_server_url: Option<String>,
    #[serde(deserialize_with = "de::text")]
    token_file_path: Option<String>,
    #[serde(deserialize_with = "de::text")]
    ca_cert_path: Option<String>,
    #[serde(deserialize_with = "pem_base64")]
    ca_cert_data_pem_base64: Option<Vec<u8>>,
    #[serde(deserialize_with = "de::text")]
    client_cert_path: Option<String>,
    #[serde(deserialize_with = "de::text")]
    client_key_path: Option<String>,
    #[serde(deserialize_with = "pem_base64")]
    client_cert_data_pem_base64: Option<Vec<u8>>,
    #[serde(deserialize_with = "pem_base64")]
    client_key_data_pem_base64: Option<Vec<u8>>,
    // Accepted for compatibility and type-checked; reconnecting is always on.
    #[allow(dead_code)]
    auto_keep_alive: Option<bool>,
    #[allow(dead_code)]
    auto_reconnect: Option<bool>,
}

impl<'de> Deserialize<'de> for WatchedResource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let file = ResourceFile::deserialize(deserializer)?;
        let group = file.group.map(|g| g.0).unwrap_or_default();
        Ok(WatchedResource {
            gvk: Gvk::new(&group, &file.version.0, &file.kind.0),
            options: file.watch_options.unwrap_or_default(),
            notifiers: file.notifiers,
        })
    }
}

impl<'de> Deserialize<'de> for WatchOptions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let file = WatchOptionsFile::deserialize(deserializer)?;
        Ok(WatchOptions {
            namespace: file.namespace,
            label_selector: file.label_selector,
            field_selector: file.field_selector,
            extra_params: file.additional_k8s_api_query_params,
        })
    }
}

impl<'de> Deserialize<'de> for NotifierConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let file = NotifierFile::deserialize(deserializer)?;
        Ok(NotifierConfig {
            webhook_urls: file.webhook_urls,
            event_types: file.event_types,
            filter: file.filter,
            match_conditions: file.match_conditions,
        })
    }
}

fn resources<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<WatchedResource>, D::Error> {
    de::array(deserializer, "an array of resources to watch")
}

fn notifiers<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<NotifierConfig>, D::Error> {
    de::array(deserializer, "an array of notifiers")
}

fn subscriptions<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<SubscriptionConfig>, D::Error> {
    de::array(deserializer, "an array of subscriptions")
}

fn global_urls<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let urls: Vec<HttpUrl> = de::array(deserializer, "an array of http(s) URLs")?;
    Ok(urls.into_iter().map(|u| u.0).collect())
}

fn notifier_urls<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct NonEmpty(Vec<HttpUrl>);
    impl<'de> Deserialize<'de> for NonEmpty {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let urls: Vec<HttpUrl> = de::array(deserializer, URLS_EXPECTED)?;
            if urls.is_empty() {
                return Err(D::Error::invalid_length(0, &URLS_EXPECTED));
            }
            Ok(NonEmpty(urls))
        }
    }
    Ok(NonEmpty::deserialize(deserializer)?
        .0
        .into_iter()
        .map(|u| u.0)
        .collect())
}

/// Turns what was read into a [`Config`]: the parts that involve several
/// keys or the environment.
struct Resolver<'e> {
    env: &'e dyn Fn(&str) -> Option<String>,
    warnings: Vec<String>,
}

impl Resolver<'_> {
    fn env(&self, name: &str) -> Option<String> {
        (self.env)(name).filter(|v| !v.is_empty())
    }

    /// A path from the file or the environment, with a leading `~` expanded.
    fn path(&mut self, origin: &str, raw: &str) -> PathBuf {
        let raw = Path::new(raw);
        match expand_home(raw, self.env("HOME").as_deref()) {
            Some(path) => path,
            None => {
                self.warnings.push(format!(
                    "{origin} starts with `~` but HOME is not set; the path is used as written"
                ));
                raw.to_path_buf()
            }
        }
    }

    fn file_path(&mut self, key: &str, raw: Option<String>) -> Option<PathBuf> {
        raw.map(|raw| self.path(&format!("config key `{key}`"), &raw))
    }

    fn config(&mut self, file: File) -> Result<Config, ConfigError> {
        let defaults = Config::default();
        let (listen_address, port_in_address) = match file.listen_address {
            Some(ListenAddress(ip, port)) => (ip, port),
            None => (defaults.listen_address, None),
        };
        let listen_port = match (file.listen_port, port_in_address) {
            (Some(Port(port)), address_port) => {
                if address_port.is_some_and(|p| p != port) {
                    self.warnings.push(format!(
                        "config key `listenAddress` names a port that differs from `listenPort`; port {port} is used"
                    ));
                }
                port
            }
            (None, Some(port)) => port,
            (None, None) => defaults.listen_port,
        };

        let resources = &file.initial_watching_resources;
        for (i, resource) in resources.iter().enumerate() {
            if let Some(first) = resources[..i].iter().position(|r| r.gvk == resource.gvk) {
                self.warnings.push(format!(
                    "config key `initialWatchingResources[{i}]` repeats {} of `initialWatchingResources[{first}]`",
                    resource.gvk
                ));
            }
        }
        for (i, subscription) in file.subscriptions.iter().enumerate() {
            if let Some(first) = file.subscriptions[..i]
                .iter()
                .position(|s| s.name == subscription.name)
            {
                return Err(invalid(
                    format!("subscriptions[{i}].name"),
                    format!(
                        "`{}` is already the name of `subscriptions[{first}]`; names must be unique",
                        subscription.name
                    ),
                ));
            }
        }

        let client = self.client(file.k8s_client_config)?;
        let tls_listener = file
            .tls_listener
            .map(|tls| self.tls_listener(tls))
            .transpose()?;
        let leader_election = file.leader_election.map(leader_election).transpose()?;
        if leader_election.is_some() && file.replay_file.is_some() {
            return Err(invalid(
                "leaderElection",
                "a replayed recording has no API server to hold a Lease on; remove `leaderElection` or `replayFile`",
            ));
        }
        let config = Config {
            log_level: file.min_log_level.unwrap_or(defaults.log_level),
            log_type: file.log_type.unwrap_or(defaults.log_type),
            listen_address,
            listen_port,
            kube_api_path_prefix: file
                .kube_api_path_prefix
                .map_or(defaults.kube_api_path_prefix, |p| p.0),
            console_url: file.console_url,
            initial_resources: file.initial_watching_resources,
            global_webhook_urls: file.global_webhook_urls,
            sync_api_groups: file
                .enable_sync_api_groups
                .unwrap_or(defaults.sync_api_groups),
            api_groups_sync_interval: file
                .api_groups_sync_interval_second
                .map_or(defaults.api_groups_sync_interval, Seconds::duration),
            client,
            keep_managed_fields: file
                .keep_managed_fields
                .unwrap_or(defaults.keep_managed_fields),
            streaming_list: file.streaming_list.unwrap_or(defaults.streaming_list),
            on_demand_watch: file.on_demand_watch.unwrap_or(defaults.on_demand_watch),
            allow_on_demand_secrets: file
                .allow_on_demand_secrets
                .unwrap_or(defaults.allow_on_demand_secrets),
            sync_timeout: file
                .sync_timeout_second
                .map_or(defaults.sync_timeout, Seconds::duration),
            on_demand_idle: file
                .on_demand_idle_seconds
                .map_or(defaults.on_demand_idle, Seconds::duration),
            max_on_demand_watches: file
                .max_on_demand_watches
                .map_or(defaults.max_on_demand_watches, |c| c.0),
            watch_stream_max: file
                .watch_stream_max_seconds
                .map_or(defaults.watch_stream_max, Seconds::duration),
            api_token_file: self.file_path("apiTokenFile", file.api_token_file),
            api_auth: file.api_auth,
            delegated_auth: delegated_auth(file.delegated_auth),
            tls_listener,
            replay_file: self.file_path("replayFile", file.replay_file),
            event_history_size: file
                .event_history_size
                .map_or(defaults.event_history_size, |c| c.0),
            event_history_bytes: file
                .event_history_bytes
                .map_or(defaults.event_history_bytes, |c| c.0),
            max_request_body_bytes: file
                .max_request_body_bytes
                .map_or(defaults.max_request_body_bytes, |c| c.0),
            plugin_dir: self.file_path("pluginDir", file.plugin_dir),
            builtin_analyzers: file.builtin_analyzers.unwrap_or(defaults.builtin_analyzers),
            plugin_cache_dir: self.file_path("pluginCacheDir", file.plugin_cache_dir),
            plugin_cache_max_bytes: file
                .plugin_cache_max_bytes
                .map_or(defaults.plugin_cache_max_bytes, |c| c.0 as u64),
            plugin_allowed_hosts: file.plugin_allowed_hosts,
            data_dir: self.file_path("dataDir", file.data_dir),
            subscriptions: file.subscriptions,
            notification_buffer_bytes: file
                .notification_buffer_bytes
                .map_or(defaults.notification_buffer_bytes, |c| c.0),
            subscription_pending_bytes: file
                .subscription_pending_bytes
                .map_or(defaults.subscription_pending_bytes, |c| c.0 as u64),
            subscription_dead_letter_bytes: file
                .subscription_dead_letter_bytes
                .map_or(defaults.subscription_dead_letter_bytes, |c| c.0 as u64),
            leader_election,
            queries: queries(file.queries),
            journal: journal(file.journal),
        };
        check_access(&config)?;
        let token_used = config.api_auth() == ApiAuth::Token
            || config
                .tls_listener
                .as_ref()
                .is_some_and(|tls| tls.auth == ApiAuth::Token);
        if config.api_token_file.is_some() && !token_used {
            self.warnings.push(
                "config key `apiTokenFile` is set but no listener checks it (`apiAuth` and `tlsListener.auth` are not `token`); it is ignored".to_string(),
            );
        }
        Ok(config)
    }

    fn tls_listener(&mut self, file: TlsListenerFile) -> Result<TlsListener, ConfigError> {
        let required = |key: &str, what: &str| {
            invalid(
                format!("tlsListener.{key}"),
                format!("required: the path of {what} (PEM); the key is missing"),
            )
        };
        let cert_file = self
            .file_path("tlsListener.certFile", file.cert_file)
            .ok_or_else(|| required("certFile", "the certificate chain the listener presents"))?;
        let key_file = self
            .file_path("tlsListener.keyFile", file.key_file)
            .ok_or_else(|| required("keyFile", "the certificate's private key"))?;
        let (address, port_in_address) = match file.address {
            Some(ListenAddress(ip, port)) => (ip, port),
            None => (IpAddr::V4(Ipv4Addr::UNSPECIFIED), None),
        };
        Ok(TlsListener {
            address,
            port: file
                .port
                .map(|p| p.0)
                .or(port_in_address)
                .unwrap_or(TLS_PORT),
            cert_file,
            key_file,
            auth: file.auth.unwrap_or(ApiAuth::Delegated),
        })
    }

    fn client(&mut self, file: Option<ClientFile>) -> Result<ClientConfig, ConfigError> {
        let mut client = ClientConfig::default();
        let mut file_kubeconfig = None;
        if let Some(file) = file {
            let key = |name: &str| format!("k8sClientConfig.{name}");
            client = ClientConfig {
                in_cluster: file.auto_in_cluster_config.unwrap_or(false),
                auth_type: file.auth_type,
                kubeconfig_path: None,
                api_server_url: file.api_server_url,
                token_file: self.file_path(&key("tokenFilePath"), file.token_file_path),
                ca_cert_path: self.file_path(&key("caCertPath"), file.ca_cert_path),
                ca_cert_pem: file.ca_cert_data_pem_base64,
                client_cert_path: self.file_path(&key("clientCertPath"), file.client_cert_path),
                client_key_path: self.file_path(&key("clientKeyPath"), file.client_key_path),
                client_cert_pem: file.client_cert_data_pem_base64,
                client_key_pem: file.client_key_data_pem_base64,
            };
            file_kubeconfig =
                self.file_path(&key("kubeConfigFilePath"), file.kube_config_file_path);
            check_auth(&client)?;
        }

        if let Some(value) = self.env("AUTO_INCLUSTER_CONFIG") {
            let trimmed = value.trim();
            if trimmed.eq_ignore_ascii_case("true") {
                client.in_cluster = true;
            } else if !trimmed.eq_ignore_ascii_case("false") {
                self.warnings.push(format!(
                    "environment variable AUTO_INCLUSTER_CONFIG is {}, neither `true` nor `false`; it is ignored",
                    show(&Value::from(value.as_str()))
                ));
            }
        }

        client.kubeconfig_path = match self.kubeconfig_from_env() {
            Some(path) => Some(path),
            None => file_kubeconfig.or_else(|| {
                self.env("HOME")
                    .map(|home| Path::new(&home).join(".kube").join("config"))
            }),
        };
        Ok(client)
    }

    /// The first file named by `KUBECONFIG`.
    fn kubeconfig_from_env(&mut self) -> Option<PathBuf> {
        let value = self.env("KUBECONFIG")?;
        let entries: Vec<&str> = value.split(':').filter(|e| !e.is_empty()).collect();
        let first = *entries.first()?;
        if entries.len() > 1 {
            self.warnings.push(format!(
                "environment variable KUBECONFIG names {} files; only the first, `{first}`, is used",
                entries.len()
            ));
        }
        Some(self.path("environment variable KUBECONFIG", first))
    }
}

/// The keys each `authType` needs.
fn check_auth(client: &ClientConfig) -> Result<(), ConfigError> {
    let needs = |name: &str, auth: &str| {
        invalid(
            format!("k8sClientConfig.{name}"),
            format!("required when `authType` is {auth}; the key is missing"),
        )
    };
    match client.auth_type {
        None | Some(AuthType::KubeConfig) => Ok(()),
        Some(AuthType::BearerToken) => {
            if client.api_server_url.is_none() {
                return Err(needs("apiServerUrl", "BearerToken"));
            }
            if client.token_file.is_none() {
                return Err(needs("tokenFilePath", "BearerToken"));
            }
            Ok(())
        }
        Some(AuthType::ClientCertificate) => {
            if client.api_server_url.is_none() {
                return Err(needs("apiServerUrl", "ClientCertificate"));
            }
            let paths = (
                client.client_cert_path.is_some(),
                client.client_key_path.is_some(),
            );
            let data = (
                client.client_cert_pem.is_some(),
                client.client_key_pem.is_some(),
            );
            match (paths, data) {
                ((true, true), _) | (_, (true, true)) => Ok(()),
                ((true, false), _) => Err(needs(
                    "clientKeyPath",
                    "ClientCertificate and `clientCertPath` is set",
                )),
                ((false, true), _) => Err(needs(
                    "clientCertPath",
                    "ClientCertificate and `clientKeyPath` is set",
                )),
                (_, (true, false)) => Err(needs(
                    "clientKeyDataPemBase64",
                    "ClientCertificate and `clientCertDataPemBase64` is set",
                )),
                (_, (false, true)) => Err(needs(
                    "clientCertDataPemBase64",
                    "ClientCertificate and `clientKeyDataPemBase64` is set",
                )),
                _ => Err(invalid(
                    "k8sClientConfig",
                    "`authType` ClientCertificate needs `clientCertPath` and `clientKeyPath`, \
                     or `clientCertDataPemBase64` and `clientKeyDataPemBase64`",
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests;
