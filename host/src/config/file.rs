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

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::{Map, Value};

use super::{
    AuthType, ClientConfig, Config, ConfigError, LogLevel, LogType, NotifierConfig, WatchOptions,
    WatchedResource,
};
use crate::gvk::Gvk;

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

const AUTH_TYPES: &[(&str, AuthType)] = &[
    ("KubeConfig", AuthType::KubeConfig),
    ("BearerToken", AuthType::BearerToken),
    ("ClientCertificate", AuthType::ClientCertificate),
];

const EVENT_TYPES: &[(&str, &str)] = &[
    ("ADDED", "ADDED"),
    ("MODIFIED", "MODIFIED"),
    ("DELETED", "DELETED"),
];

const TOP_KEYS: &[&str] = &[
    "minLogLevel",
    "logType",
    "listenAddress",
    "listenPort",
    "initialWatchingResources",
    "globalWebhookUrls",
    "enableSyncApiGroups",
    "apiGroupsSyncIntervalSecond",
    "k8sClientConfig",
    "keepManagedFields",
    "onDemandWatch",
    "allowOnDemandSecrets",
    "syncTimeoutSecond",
    "apiTokenFile",
    "replayFile",
    "eventHistorySize",
    "maxRequestBodyBytes",
    "pluginDir",
    "pluginCacheDir",
    "pluginAllowedHosts",
    "dataDir",
    "subscriptions",
    "notificationBufferBytes",
];

const RESOURCE_KEYS: &[&str] = &["group", "version", "kind", "watchOptions", "notifiers"];

const WATCH_OPTION_KEYS: &[&str] = &[
    "namespace",
    "labelSelector",
    "fieldSelector",
    "additionalK8sApiQueryParams",
];

const NOTIFIER_KEYS: &[&str] = &["webhookUrls", "eventTypes", "filter"];

const CLIENT_KEYS: &[&str] = &[
    "autoInClusterConfig",
    "authType",
    "kubeConfigFilePath",
    "apiServerUrl",
    "tokenFilePath",
    "caCertPath",
    "caCertDataPemBase64",
    "clientCertPath",
    "clientKeyPath",
    "clientCertDataPemBase64",
    "clientKeyDataPemBase64",
    // Accepted for compatibility; reconnecting is always on.
    "autoKeepAlive",
    "autoReconnect",
];

/// Standard base64 alphabet; padding optional.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Longest rendering of an offending value in an error message, in characters.
const SHOWN_VALUE_CHARS: usize = 60;

const URL_EXPECTED: &str = "an http:// or https:// URL with a host";
const NAME_EXPECTED: &str = "a non-empty string";

/// Every default documented on [`Config`]. The kubeconfig path is left unset
/// here: [`parse`] resolves it from the environment.
impl Default for Config {
    fn default() -> Self {
        Config {
            log_level: LogLevel::Info,
            log_type: LogType::Json,
            listen_address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            listen_port: 3000,
            initial_resources: Vec::new(),
            global_webhook_urls: Vec::new(),
            sync_api_groups: true,
            api_groups_sync_interval: Duration::from_secs(30),
            client: ClientConfig::default(),
            keep_managed_fields: false,
            on_demand_watch: true,
            allow_on_demand_secrets: false,
            sync_timeout: Duration::from_secs(30),
            api_token_file: None,
            replay_file: None,
            plugin_dir: None,
            plugin_cache_dir: None,
            plugin_allowed_hosts: Vec::new(),
            data_dir: None,
            subscriptions: Vec::new(),
            event_history_size: 10_000,
            max_request_body_bytes: 1024 * 1024,
            notification_buffer_bytes: 64 << 20,
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
    let Value::Object(map) = &value else {
        return Err(ConfigError::NotAnObject {
            file: None,
            got: show(&value),
        });
    };
    let mut reader = Reader {
        env,
        warnings: Vec::new(),
    };
    let config = reader.config(map)?;
    Ok((config, reader.warnings))
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

/// Replaces a leading `~` component with `home`. `None` when the path starts
/// with `~` but there is no home directory to put in its place.
pub(super) fn expand_home(path: &Path, home: Option<&str>) -> Option<PathBuf> {
    match path.strip_prefix("~") {
        Ok(rest) => {
            let home = home.filter(|h| !h.is_empty())?;
            Some(if rest.as_os_str().is_empty() {
                PathBuf::from(home)
            } else {
                Path::new(home).join(rest)
            })
        }
        Err(_) => Some(path.to_path_buf()),
    }
}

/// Converts a number of seconds to a non-zero duration.
pub(super) fn positive_seconds(seconds: f64) -> Option<Duration> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return None;
    }
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
}

/// Looks `name` up in a table of accepted names.
pub(super) fn pick<T: Copy>(options: &[(&str, T)], name: &str) -> Option<T> {
    options
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, value)| *value)
}

/// The accepted names of a table, for messages and `--help`.
pub(super) fn names<'a, T>(
    options: &'a [(&'static str, T)],
) -> impl Iterator<Item = &'static str> + 'a {
    options.iter().map(|(name, _)| *name)
}

fn one_of_text<T>(options: &[(&'static str, T)]) -> String {
    format!("one of {}", names(options).collect::<Vec<_>>().join(", "))
}

/// Checks one part of a group/version/kind: no white space, no `/`.
pub(super) fn is_plain_name(s: &str) -> bool {
    !s.chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '/')
}

/// Whether `s` is an `http://` or `https://` URL with a host (and, if given,
/// a numeric port).
/// Whether `s` is an http:// or https:// URL with a host (and a valid port, if any).
pub fn is_http_url(s: &str) -> bool {
    let Some(rest) =
        strip_prefix_ignore_case(s, "http://").or_else(|| strip_prefix_ignore_case(s, "https://"))
    else {
        return false;
    };
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host_ok, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let Some((ip, after)) = bracketed.split_once(']') else {
            return false;
        };
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return false,
        };
        (ip.parse::<Ipv6Addr>().is_ok(), port)
    } else {
        match host_port.split_once(':') {
            Some((host, port)) => (is_host_name(host), Some(port)),
            None => (is_host_name(host_port), None),
        }
    };
    host_ok && port.is_none_or(|p| p.is_empty() || p.parse::<u16>().is_ok())
}

fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '_' | '%'))
}

fn strip_prefix_ignore_case<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// A JSON value as an error message shows it: compact, cut after
/// [`SHOWN_VALUE_CHARS`] characters.
fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_VALUE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(SHOWN_VALUE_CHARS).collect();
    cut.push('…');
    cut
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        file: None,
        key: key.into(),
        message: message.into(),
    }
}

fn expected(key: impl Into<String>, what: &str, got: &Value) -> ConfigError {
    invalid(key, format!("expected {what}, got {}", show(got)))
}

fn missing(key: impl Into<String>, what: &str) -> ConfigError {
    invalid(key, format!("expected {what}; the key is missing"))
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn choose<T: Copy>(
    key: String,
    value: &Value,
    options: &[(&'static str, T)],
) -> Result<T, ConfigError> {
    value
        .as_str()
        .and_then(|s| pick(options, s))
        .ok_or_else(|| expected(key, &one_of_text(options), value))
}

fn as_str<'v>(key: &str, value: &'v Value, what: &str) -> Result<&'v str, ConfigError> {
    value.as_str().ok_or_else(|| expected(key, what, value))
}

fn as_array<'v>(key: &str, value: &'v Value, what: &str) -> Result<&'v [Value], ConfigError> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| expected(key, what, value))
}

fn as_object<'v>(
    key: &str,
    value: &'v Value,
    what: &str,
) -> Result<&'v Map<String, Value>, ConfigError> {
    value.as_object().ok_or_else(|| expected(key, what, value))
}

/// A whole number, written with or without a zero fraction.
fn whole_number(value: &Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    // 2^64: the first float above every u64.
    (f.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(&f)).then_some(f as u64)
}

fn count(key: &str, value: &Value, min: u64) -> Result<usize, ConfigError> {
    whole_number(value)
        .filter(|n| *n >= min)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| expected(key, &format!("a whole number from {min} up"), value))
}

fn port(key: &str, value: &Value) -> Result<u16, ConfigError> {
    whole_number(value)
        .and_then(|n| u16::try_from(n).ok())
        .filter(|p| *p != 0)
        .ok_or_else(|| expected(key, "a number from 1 to 65535", value))
}

fn seconds(key: &str, value: &Value) -> Result<Duration, ConfigError> {
    value
        .as_f64()
        .and_then(positive_seconds)
        .ok_or_else(|| expected(key, "a positive number of seconds", value))
}

fn http_url(key: &str, value: &Value) -> Result<String, ConfigError> {
    match value.as_str() {
        Some(s) if is_http_url(s) => Ok(s.to_string()),
        _ => Err(expected(key, URL_EXPECTED, value)),
    }
}

/// An array of webhook URLs; `what` describes the whole array.
fn url_list(
    key: &str,
    value: &Value,
    what: &str,
    non_empty: bool,
) -> Result<Vec<String>, ConfigError> {
    let items = as_array(key, value, what)?;
    if non_empty && items.is_empty() {
        return Err(expected(key, what, value));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| http_url(&format!("{key}[{i}]"), item))
        .collect()
}

/// An array of non-empty strings; `what` describes the whole array.
fn string_list(key: &str, value: &Value, what: &str) -> Result<Vec<String>, ConfigError> {
    as_array(key, value, what)?
        .iter()
        .enumerate()
        .map(|(i, item)| match item.as_str() {
            Some(s) if !s.is_empty() => Ok(s.to_string()),
            _ => Err(expected(format!("{key}[{i}]"), NAME_EXPECTED, item)),
        })
        .collect()
}

/// An object of the file, with its full key path.
struct Section<'v> {
    path: String,
    map: &'v Map<String, Value>,
}

impl<'v> Section<'v> {
    fn key(&self, name: &str) -> String {
        join(&self.path, name)
    }

    /// The value of a key; `null` counts as missing.
    fn get(&self, name: &str) -> Option<&'v Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn bool(&self, name: &str) -> Result<Option<bool>, ConfigError> {
        self.get(name)
            .map(|v| {
                v.as_bool()
                    .ok_or_else(|| expected(self.key(name), "true or false", v))
            })
            .transpose()
    }

    /// An optional string; empty counts as missing.
    fn string(&self, name: &str) -> Result<Option<&'v str>, ConfigError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => Ok(Some(as_str(&self.key(name), v, "a string")?).filter(|s| !s.is_empty())),
        }
    }

    /// A required group/version/kind part.
    fn name(&self, name: &str) -> Result<&'v str, ConfigError> {
        let key = self.key(name);
        let value = self.get(name).ok_or_else(|| missing(&key, NAME_EXPECTED))?;
        match value.as_str() {
            Some("") => Err(expected(key, NAME_EXPECTED, value)),
            Some(s) if !is_plain_name(s) => {
                Err(expected(key, "a name without spaces or `/`", value))
            }
            Some(s) => Ok(s),
            None => Err(expected(key, NAME_EXPECTED, value)),
        }
    }
}

/// Reads the parts of the file, collecting warnings.
struct Reader<'e> {
    env: &'e dyn Fn(&str) -> Option<String>,
    warnings: Vec<String>,
}

impl Reader<'_> {
    /// Wraps an object of the file, warning about the keys it does not know.
    fn section<'v>(
        &mut self,
        path: String,
        map: &'v Map<String, Value>,
        known: &[&str],
    ) -> Section<'v> {
        let mut unknown: Vec<&String> = map
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .collect();
        unknown.sort();
        for name in unknown {
            self.warnings.push(format!(
                "config key `{}` is not known and is ignored",
                join(&path, name)
            ));
        }
        Section { path, map }
    }

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

    fn optional_path(
        &mut self,
        section: &Section<'_>,
        name: &str,
    ) -> Result<Option<PathBuf>, ConfigError> {
        Ok(section
            .string(name)?
            .map(|raw| self.path(&format!("config key `{}`", section.key(name)), raw)))
    }

    fn config(&mut self, map: &Map<String, Value>) -> Result<Config, ConfigError> {
        let top = self.section(String::new(), map, TOP_KEYS);
        let mut config = Config::default();

        if let Some(v) = top.get("minLogLevel") {
            config.log_level = choose(top.key("minLogLevel"), v, LOG_LEVELS)?;
        }
        if let Some(v) = top.get("logType") {
            config.log_type = choose(top.key("logType"), v, LOG_TYPES)?;
        }

        let mut port_in_address = None;
        if let Some(v) = top.get("listenAddress") {
            let (ip, port) = listen_address(&top.key("listenAddress"), v)?;
            config.listen_address = ip;
            port_in_address = port;
        }
        match (top.get("listenPort"), port_in_address) {
            (Some(v), address_port) => {
                config.listen_port = port(&top.key("listenPort"), v)?;
                if address_port.is_some_and(|p| p != config.listen_port) {
                    self.warnings.push(format!(
                        "config key `listenAddress` names a port that differs from `listenPort`; port {} is used",
                        config.listen_port
                    ));
                }
            }
            (None, Some(p)) => config.listen_port = p,
            (None, None) => {}
        }

        if let Some(v) = top.get("initialWatchingResources") {
            config.initial_resources = self.resources(top.key("initialWatchingResources"), v)?;
        }
        if let Some(v) = top.get("globalWebhookUrls") {
            config.global_webhook_urls = url_list(
                &top.key("globalWebhookUrls"),
                v,
                "an array of http(s) URLs",
                false,
            )?;
        }
        if let Some(b) = top.bool("enableSyncApiGroups")? {
            config.sync_api_groups = b;
        }
        if let Some(v) = top.get("apiGroupsSyncIntervalSecond") {
            config.api_groups_sync_interval = seconds(&top.key("apiGroupsSyncIntervalSecond"), v)?;
        }
        config.client = self.client(top.key("k8sClientConfig"), top.get("k8sClientConfig"))?;

        if let Some(b) = top.bool("keepManagedFields")? {
            config.keep_managed_fields = b;
        }
        if let Some(b) = top.bool("onDemandWatch")? {
            config.on_demand_watch = b;
        }
        if let Some(b) = top.bool("allowOnDemandSecrets")? {
            config.allow_on_demand_secrets = b;
        }
        if let Some(v) = top.get("syncTimeoutSecond") {
            config.sync_timeout = seconds(&top.key("syncTimeoutSecond"), v)?;
        }
        config.api_token_file = self.optional_path(&top, "apiTokenFile")?;
        config.replay_file = self.optional_path(&top, "replayFile")?;
        config.plugin_dir = self.optional_path(&top, "pluginDir")?;
        config.plugin_cache_dir = self.optional_path(&top, "pluginCacheDir")?;
        config.data_dir = self.optional_path(&top, "dataDir")?;
        if let Some(v) = top.get("pluginAllowedHosts") {
            config.plugin_allowed_hosts = string_list(
                &top.key("pluginAllowedHosts"),
                v,
                "an array of host names (`host`, `host:port` or `*.domain`)",
            )?;
        }
        if let Some(v) = top.get("subscriptions") {
            config.subscriptions =
                as_array(&top.key("subscriptions"), v, "an array of subscriptions")?.to_vec();
        }
        if let Some(v) = top.get("eventHistorySize") {
            config.event_history_size = count(&top.key("eventHistorySize"), v, 0)?;
        }
        if let Some(v) = top.get("maxRequestBodyBytes") {
            config.max_request_body_bytes = count(&top.key("maxRequestBodyBytes"), v, 1)?;
        }
        if let Some(v) = top.get("notificationBufferBytes") {
            config.notification_buffer_bytes = count(&top.key("notificationBufferBytes"), v, 1)?;
        }
        Ok(config)
    }

    fn resources(
        &mut self,
        key: String,
        value: &Value,
    ) -> Result<Vec<WatchedResource>, ConfigError> {
        let items = as_array(&key, value, "an array of resources to watch")?;
        let mut resources: Vec<WatchedResource> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let resource = self.resource(format!("{key}[{i}]"), item)?;
            if let Some(first) = resources.iter().position(|r| r.gvk == resource.gvk) {
                self.warnings.push(format!(
                    "config key `{key}[{i}]` repeats {} of `{key}[{first}]`",
                    resource.gvk
                ));
            }
            resources.push(resource);
        }
        Ok(resources)
    }

    fn resource(&mut self, key: String, value: &Value) -> Result<WatchedResource, ConfigError> {
        let map = as_object(&key, value, "an object with `group`, `version` and `kind`")?;
        let section = self.section(key, map, RESOURCE_KEYS);
        let group = match section.get("group") {
            None => "",
            Some(v) => match v.as_str() {
                Some(s) if is_plain_name(s) => s,
                _ => {
                    return Err(expected(
                        section.key("group"),
                        "an API group name (`core` or \"\" for the core group)",
                        v,
                    ));
                }
            },
        };
        let version = section.name("version")?;
        let kind = section.name("kind")?;
        let options = match section.get("watchOptions") {
            Some(v) => self.watch_options(section.key("watchOptions"), v)?,
            None => WatchOptions::default(),
        };
        let notifiers = match section.get("notifiers") {
            Some(v) => self.notifiers(section.key("notifiers"), v)?,
            None => Vec::new(),
        };
        Ok(WatchedResource {
            gvk: Gvk::new(group, version, kind),
            options,
            notifiers,
        })
    }

    fn watch_options(&mut self, key: String, value: &Value) -> Result<WatchOptions, ConfigError> {
        let map = as_object(&key, value, "an object")?;
        let section = self.section(key, map, WATCH_OPTION_KEYS);
        let namespace = section.string("namespace")?;
        if let Some(ns) = namespace
            && !is_plain_name(ns)
        {
            return Err(expected(
                section.key("namespace"),
                "a namespace name without spaces or `/`",
                &Value::from(ns),
            ));
        }
        let mut extra_params = Vec::new();
        if let Some(v) = section.get("additionalK8sApiQueryParams") {
            let params_key = section.key("additionalK8sApiQueryParams");
            let params = as_object(
                &params_key,
                v,
                "an object whose values are strings, numbers or booleans",
            )?;
            for (name, v) in params {
                let text = match v {
                    Value::Null => continue,
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Array(_) | Value::Object(_) => {
                        return Err(expected(
                            join(&params_key, name),
                            "a string, number or boolean",
                            v,
                        ));
                    }
                };
                extra_params.push((name.clone(), text));
            }
            extra_params.sort();
        }
        Ok(WatchOptions {
            namespace: namespace.map(str::to_string),
            label_selector: section.string("labelSelector")?.map(str::to_string),
            field_selector: section.string("fieldSelector")?.map(str::to_string),
            extra_params,
        })
    }

    fn notifiers(
        &mut self,
        key: String,
        value: &Value,
    ) -> Result<Vec<NotifierConfig>, ConfigError> {
        let items = as_array(&key, value, "an array of notifiers")?;
        let mut notifiers = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_key = format!("{key}[{i}]");
            let map = as_object(&item_key, item, "an object with `webhookUrls`")?;
            let section = self.section(item_key, map, NOTIFIER_KEYS);

            let urls_what = "a non-empty array of http(s) URLs";
            let webhook_urls = match section.get("webhookUrls") {
                Some(v) => url_list(&section.key("webhookUrls"), v, urls_what, true)?,
                None => return Err(missing(section.key("webhookUrls"), urls_what)),
            };

            let mut event_types: Vec<String> = Vec::new();
            if let Some(v) = section.get("eventTypes") {
                let types_key = section.key("eventTypes");
                let types = as_array(&types_key, v, "an array of ADDED, MODIFIED or DELETED")?;
                for (j, t) in types.iter().enumerate() {
                    let name = choose(format!("{types_key}[{j}]"), t, EVENT_TYPES)?;
                    if !event_types.iter().any(|e| e == name) {
                        event_types.push(name.to_string());
                    }
                }
            }

            let filter = match section.get("filter") {
                Some(v @ Value::Object(_)) => Some(v.clone()),
                Some(v) => {
                    return Err(expected(
                        section.key("filter"),
                        "an object (the same shape as a query body)",
                        v,
                    ));
                }
                None => None,
            };

            notifiers.push(NotifierConfig {
                webhook_urls,
                event_types,
                filter,
            });
        }
        Ok(notifiers)
    }

    fn client(&mut self, key: String, value: Option<&Value>) -> Result<ClientConfig, ConfigError> {
        let mut client = ClientConfig::default();
        let mut file_kubeconfig = None;
        if let Some(value) = value {
            let map = as_object(&key, value, "an object")?;
            let section = self.section(key, map, CLIENT_KEYS);
            client.in_cluster = section.bool("autoInClusterConfig")?.unwrap_or(false);
            if let Some(v) = section.get("authType") {
                client.auth_type = Some(choose(section.key("authType"), v, AUTH_TYPES)?);
            }
            file_kubeconfig = self.optional_path(&section, "kubeConfigFilePath")?;
            if let Some(url) = section.string("apiServerUrl")? {
                client.api_server_url =
                    Some(http_url(&section.key("apiServerUrl"), &Value::from(url))?);
            }
            client.token_file = self.optional_path(&section, "tokenFilePath")?;
            client.ca_cert_path = self.optional_path(&section, "caCertPath")?;
            client.ca_cert_pem = pem_base64(&section, "caCertDataPemBase64")?;
            client.client_cert_path = self.optional_path(&section, "clientCertPath")?;
            client.client_key_path = self.optional_path(&section, "clientKeyPath")?;
            client.client_cert_pem = pem_base64(&section, "clientCertDataPemBase64")?;
            client.client_key_pem = pem_base64(&section, "clientKeyDataPemBase64")?;
            // Type-checked only: reconnecting is always on.
            section.bool("autoKeepAlive")?;
            section.bool("autoReconnect")?;
            check_auth(&section, &client)?;
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

/// `listenAddress`: an IP address, or (as some configs of the earlier GRW
/// wrote) an `IP:PORT` socket address.
fn listen_address(key: &str, value: &Value) -> Result<(IpAddr, Option<u16>), ConfigError> {
    let what = "an IP address such as 127.0.0.1 or ::";
    let s = as_str(key, value, what)?;
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Ok((ip, None));
    }
    match s.parse::<SocketAddr>() {
        Ok(address) if address.port() != 0 => Ok((address.ip(), Some(address.port()))),
        _ => Err(expected(key, what, value)),
    }
}

/// A base64-encoded PEM key. The message never repeats the value: it may be a
/// private key.
fn pem_base64(section: &Section<'_>, name: &str) -> Result<Option<Vec<u8>>, ConfigError> {
    let Some(encoded) = section.string(name)? else {
        return Ok(None);
    };
    let compact: String = encoded
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    BASE64.decode(compact).map(Some).map_err(|e| {
        invalid(
            section.key(name),
            format!("expected base64-encoded PEM data, but the value is not valid base64 ({e})"),
        )
    })
}

/// The keys each `authType` needs.
fn check_auth(section: &Section<'_>, client: &ClientConfig) -> Result<(), ConfigError> {
    let needs = |name: &str, auth: &str| {
        invalid(
            section.key(name),
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
                    section.path.clone(),
                    "`authType` ClientCertificate needs `clientCertPath` and `clientKeyPath`, \
                     or `clientCertDataPemBase64` and `clientKeyDataPemBase64`",
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn parse_ok(text: &str) -> (Config, Vec<String>) {
        parse(text, &no_env).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn parse_err(text: &str) -> String {
        match parse(text, &no_env) {
            Ok((config, _)) => panic!("{text}: accepted as {config:?}"),
            Err(e) => e.to_string(),
        }
    }

    const FULL: &str = r#"{
      "minLogLevel": "debug",
      "logType": "pretty",
      "listenAddress": "0.0.0.0",
      "listenPort": 8080,
      "initialWatchingResources": [
        {
          "group": "core", "version": "v1", "kind": "Pod",
          "watchOptions": {
            "namespace": "shop",
            "labelSelector": "app=web",
            "fieldSelector": "status.phase=Running",
            "additionalK8sApiQueryParams": {"timeoutSeconds": 300, "pretty": false, "limit": "500", "skipped": null}
          },
          "notifiers": [{
            "webhookUrls": ["http://hooks.local:8080/pods", "https://[::1]/pods"],
            "eventTypes": ["DELETED", "ADDED", "DELETED"],
            "filter": {"namespace": "shop", "labelSelectors": ["app", "web"]}
          }]
        },
        {"group": "apps", "version": "v1", "kind": "Deployment"},
        {"group": "", "version": "v1", "kind": "ConfigMap",
         "notifiers": [{"webhookUrls": ["https://example.com/cm"]}]}
      ],
      "globalWebhookUrls": ["https://user:pw@example.com/all?x=1"],
      "enableSyncApiGroups": false,
      "apiGroupsSyncIntervalSecond": 2.5,
      "k8sClientConfig": {
        "autoInClusterConfig": true,
        "authType": "ClientCertificate",
        "kubeConfigFilePath": "~/kube/cfg",
        "apiServerUrl": "https://10.0.0.1:6443",
        "tokenFilePath": "/var/run/token",
        "caCertPath": "~/ca.crt",
        "caCertDataPemBase64": "Y2EtcGVt",
        "clientCertPath": "/pki/c.crt",
        "clientKeyPath": "/pki/c.key",
        "clientCertDataPemBase64": "Y2VydC1wZW0=",
        "clientKeyDataPemBase64": "a2V5LXBlbQ",
        "autoKeepAlive": true,
        "autoReconnect": false
      },
      "keepManagedFields": true,
      "onDemandWatch": false,
      "allowOnDemandSecrets": true,
      "syncTimeoutSecond": 12,
      "apiTokenFile": "~/grw.token",
      "replayFile": "/data/events.jsonl",
      "pluginDir": "/plugins",
      "pluginCacheDir": "/cache",
      "pluginAllowedHosts": ["hooks.slack.com", "*.example.com:8443"],
      "dataDir": "~/grw-data",
      "subscriptions": [{"name": "a", "kind": "Pod", "webhook": {"url": "http://x"}}],
      "eventHistorySize": 0,
      "maxRequestBodyBytes": 4096,
      "notificationBufferBytes": 1000000
    }"#;

    #[test]
    fn full_config_sets_every_key() {
        let env = env_of(&[("HOME", "/home/u")]);
        let (config, warnings) = parse(FULL, &env).unwrap();
        assert_eq!(warnings, Vec::<String>::new());
        let want = Config {
            log_level: LogLevel::Debug,
            log_type: LogType::Pretty,
            listen_address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            listen_port: 8080,
            initial_resources: vec![
                WatchedResource {
                    gvk: Gvk::new("", "v1", "Pod"),
                    options: WatchOptions {
                        namespace: Some("shop".into()),
                        label_selector: Some("app=web".into()),
                        field_selector: Some("status.phase=Running".into()),
                        extra_params: vec![
                            ("limit".into(), "500".into()),
                            ("pretty".into(), "false".into()),
                            ("timeoutSeconds".into(), "300".into()),
                        ],
                    },
                    notifiers: vec![NotifierConfig {
                        webhook_urls: vec![
                            "http://hooks.local:8080/pods".into(),
                            "https://[::1]/pods".into(),
                        ],
                        event_types: vec!["DELETED".into(), "ADDED".into()],
                        filter: Some(
                            serde_json::json!({"namespace": "shop", "labelSelectors": ["app", "web"]}),
                        ),
                    }],
                },
                WatchedResource {
                    gvk: Gvk::new("apps", "v1", "Deployment"),
                    options: WatchOptions::default(),
                    notifiers: vec![],
                },
                WatchedResource {
                    gvk: Gvk::new("", "v1", "ConfigMap"),
                    options: WatchOptions::default(),
                    notifiers: vec![NotifierConfig {
                        webhook_urls: vec!["https://example.com/cm".into()],
                        event_types: vec![],
                        filter: None,
                    }],
                },
            ],
            global_webhook_urls: vec!["https://user:pw@example.com/all?x=1".into()],
            sync_api_groups: false,
            api_groups_sync_interval: Duration::from_millis(2500),
            client: ClientConfig {
                in_cluster: true,
                auth_type: Some(AuthType::ClientCertificate),
                kubeconfig_path: Some(PathBuf::from("/home/u/kube/cfg")),
                api_server_url: Some("https://10.0.0.1:6443".into()),
                token_file: Some(PathBuf::from("/var/run/token")),
                ca_cert_path: Some(PathBuf::from("/home/u/ca.crt")),
                ca_cert_pem: Some(b"ca-pem".to_vec()),
                client_cert_path: Some(PathBuf::from("/pki/c.crt")),
                client_key_path: Some(PathBuf::from("/pki/c.key")),
                client_cert_pem: Some(b"cert-pem".to_vec()),
                client_key_pem: Some(b"key-pem".to_vec()),
            },
            keep_managed_fields: true,
            on_demand_watch: false,
            allow_on_demand_secrets: true,
            sync_timeout: Duration::from_secs(12),
            api_token_file: Some(PathBuf::from("/home/u/grw.token")),
            replay_file: Some(PathBuf::from("/data/events.jsonl")),
            plugin_dir: Some(PathBuf::from("/plugins")),
            plugin_cache_dir: Some(PathBuf::from("/cache")),
            plugin_allowed_hosts: vec!["hooks.slack.com".into(), "*.example.com:8443".into()],
            data_dir: Some(PathBuf::from("/home/u/grw-data")),
            subscriptions: vec![serde_json::json!(
                {"name": "a", "kind": "Pod", "webhook": {"url": "http://x"}}
            )],
            event_history_size: 0,
            max_request_body_bytes: 4096,
            notification_buffer_bytes: 1_000_000,
        };
        assert_eq!(config, want);
        assert_eq!(config.initial_resources[0].gvk.group_or_core(), "core");
    }

    #[test]
    fn empty_object_gives_every_default() {
        let (config, warnings) = parse_ok("{}");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.log_level, LogLevel::Info);
        assert_eq!(config.log_type, LogType::Json);
        assert_eq!(
            config.listen_address,
            "127.0.0.1".parse::<IpAddr>().unwrap()
        );
        assert_eq!(config.listen_port, 3000);
        assert!(config.initial_resources.is_empty());
        assert!(config.global_webhook_urls.is_empty());
        assert!(config.sync_api_groups);
        assert_eq!(config.api_groups_sync_interval, Duration::from_secs(30));
        assert_eq!(config.client, ClientConfig::default());
        assert!(!config.client.in_cluster);
        assert_eq!(config.client.auth_type, None);
        assert_eq!(config.client.kubeconfig_path, None);
        assert!(!config.keep_managed_fields);
        assert!(config.on_demand_watch);
        assert!(!config.allow_on_demand_secrets);
        assert_eq!(config.sync_timeout, Duration::from_secs(30));
        assert_eq!(config.api_token_file, None);
        assert_eq!(config.replay_file, None);
        assert_eq!(config.event_history_size, 10_000);
        assert_eq!(config.max_request_body_bytes, 1_048_576);
        assert_eq!(config.notification_buffer_bytes, 64 << 20);
        assert_eq!(config, Config::default());
    }

    #[test]
    fn example_of_the_earlier_grw_parses_without_warnings() {
        let text = r#"{
          "minLogLevel": "trace",
          "logType": "json",
          "listenPort": 3000,
          "initialWatchingResources": [
            {
              "group": "core", "version": "v1", "kind": "Pod",
              "watchOptions": null,
              "notifiers": [{
                "webhookUrls": ["http://localhost:8080/PodUpdated"],
                "filter": {"namespace": "default"},
                "eventTypes": ["ADDED", "MODIFIED", "DELETED"]
              }]
            },
            {"group": "apps", "version": "v1", "kind": "Deployment"}
          ],
          "globalWebhookUrls": ["http://localhost:8080/k8sResourceUpdated"],
          "enableSyncApiGroups": true,
          "apiGroupsSyncIntervalSecond": 30,
          "k8sClientConfig": {
            "apiServerUrl": "https://kubernetes.default",
            "authType": "KubeConfig",
            "kubeConfigFilePath": "",
            "autoInClusterConfig": false,
            "autoKeepAlive": true,
            "autoReconnect": false,
            "caCertDataPemBase64": "",
            "caCertPath": "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
            "clientCertDataPemBase64": "",
            "clientCertPath": "/etc/kubernetes/pki/apiserver.crt",
            "clientKeyDataPemBase64": "",
            "clientKeyPath": "/etc/kubernetes/pki/apiserver.key",
            "tokenFilePath": "/var/run/secrets/kubernetes.io/serviceaccount/token"
          }
        }"#;
        let (config, warnings) = parse_ok(text);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.log_level, LogLevel::Trace);
        let kinds: Vec<String> = config
            .initial_resources
            .iter()
            .map(|r| r.gvk.to_string())
            .collect();
        assert_eq!(kinds, ["v1/Pod", "apps/v1/Deployment"]);
        assert_eq!(config.initial_resources[0].options, WatchOptions::default());
        assert_eq!(
            config.initial_resources[0].notifiers[0].event_types,
            ["ADDED", "MODIFIED", "DELETED"]
        );
        assert_eq!(config.client.auth_type, Some(AuthType::KubeConfig));
        assert_eq!(config.client.kubeconfig_path, None);
        assert_eq!(config.client.ca_cert_pem, None);
        assert_eq!(config.client.client_key_pem, None);
    }

    #[test]
    fn bad_values_are_errors_naming_the_key() {
        let pod = r#"{"version": "v1", "kind": "Pod"}"#;
        let cases: Vec<(String, &str)> = vec![
            (
                r#"{"listenPort": "abc"}"#.into(),
                r#"config key `listenPort`: expected a number from 1 to 65535, got "abc""#,
            ),
            (r#"{"listenPort": 0}"#.into(), "config key `listenPort`: expected a number from 1 to 65535, got 0"),
            (r#"{"listenPort": 70000}"#.into(), "expected a number from 1 to 65535, got 70000"),
            (r#"{"listenPort": 80.5}"#.into(), "expected a number from 1 to 65535, got 80.5"),
            (
                r#"{"minLogLevel": "verbose"}"#.into(),
                r#"config key `minLogLevel`: expected one of silly, trace, debug, info, warn, error, fatal, got "verbose""#,
            ),
            (r#"{"minLogLevel": "INFO"}"#.into(), r#"config key `minLogLevel`: expected one of"#),
            (r#"{"minLogLevel": 3}"#.into(), "got 3"),
            (
                r#"{"logType": "xml"}"#.into(),
                r#"config key `logType`: expected one of json, pretty, hidden, got "xml""#,
            ),
            (
                r#"{"listenAddress": "localhost"}"#.into(),
                r#"config key `listenAddress`: expected an IP address such as 127.0.0.1 or ::, got "localhost""#,
            ),
            (r#"{"listenAddress": "0.0.0.0:0"}"#.into(), "config key `listenAddress`: expected an IP address"),
            (r#"{"listenAddress": 127}"#.into(), "config key `listenAddress`: expected an IP address"),
            (
                r#"{"initialWatchingResources": {}}"#.into(),
                "config key `initialWatchingResources`: expected an array of resources to watch, got {}",
            ),
            (
                r#"{"initialWatchingResources": ["v1/Pod"]}"#.into(),
                r#"config key `initialWatchingResources[0]`: expected an object with `group`, `version` and `kind`, got "v1/Pod""#,
            ),
            (
                format!(r#"{{"initialWatchingResources": [{pod}, {pod}, {{"version": "v1", "kind": ""}}]}}"#),
                r#"config key `initialWatchingResources[2].kind`: expected a non-empty string, got """#,
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1"}]}"#.into(),
                "config key `initialWatchingResources[0].kind`: expected a non-empty string; the key is missing",
            ),
            (
                r#"{"initialWatchingResources": [{"kind": "Pod"}]}"#.into(),
                "config key `initialWatchingResources[0].version`: expected a non-empty string; the key is missing",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "", "kind": "Pod"}]}"#.into(),
                "config key `initialWatchingResources[0].version`: expected a non-empty string",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": 5}]}"#.into(),
                "config key `initialWatchingResources[0].kind`: expected a non-empty string, got 5",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod s"}]}"#.into(),
                "config key `initialWatchingResources[0].kind`: expected a name without spaces or `/`",
            ),
            (
                r#"{"initialWatchingResources": [{"group": 1, "version": "v1", "kind": "Pod"}]}"#.into(),
                "config key `initialWatchingResources[0].group`: expected an API group name",
            ),
            (
                r#"{"initialWatchingResources": [{"group": "apps/v1", "version": "v1", "kind": "Pod"}]}"#.into(),
                "config key `initialWatchingResources[0].group`: expected an API group name",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": "shop"}]}"#.into(),
                r#"config key `initialWatchingResources[0].watchOptions`: expected an object, got "shop""#,
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"namespace": 3}}]}"#.into(),
                "config key `initialWatchingResources[0].watchOptions.namespace`: expected a string, got 3",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"namespace": "a/b"}}]}"#.into(),
                "config key `initialWatchingResources[0].watchOptions.namespace`: expected a namespace name",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"labelSelector": true}}]}"#.into(),
                "config key `initialWatchingResources[0].watchOptions.labelSelector`: expected a string, got true",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"additionalK8sApiQueryParams": []}}]}"#.into(),
                "config key `initialWatchingResources[0].watchOptions.additionalK8sApiQueryParams`: expected an object whose values are strings, numbers or booleans, got []",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"additionalK8sApiQueryParams": {"a": [1]}}}]}"#.into(),
                "config key `initialWatchingResources[0].watchOptions.additionalK8sApiQueryParams.a`: expected a string, number or boolean, got [1]",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": {}}]}"#.into(),
                "config key `initialWatchingResources[0].notifiers`: expected an array of notifiers, got {}",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{}]}]}"#.into(),
                "config key `initialWatchingResources[0].notifiers[0].webhookUrls`: expected a non-empty array of http(s) URLs; the key is missing",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": []}]}]}"#.into(),
                "config key `initialWatchingResources[0].notifiers[0].webhookUrls`: expected a non-empty array of http(s) URLs, got []",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": "http://a"}]}]}"#.into(),
                r#"config key `initialWatchingResources[0].notifiers[0].webhookUrls`: expected a non-empty array of http(s) URLs, got "http://a""#,
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a", "ftp://b"]}]}]}"#.into(),
                r#"config key `initialWatchingResources[0].notifiers[0].webhookUrls[1]`: expected an http:// or https:// URL with a host, got "ftp://b""#,
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://"]}]}]}"#.into(),
                "`initialWatchingResources[0].notifiers[0].webhookUrls[0]`: expected an http:// or https:// URL with a host",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "eventTypes": ["ADDED", "CREATED"]}]}]}"#.into(),
                r#"config key `initialWatchingResources[0].notifiers[0].eventTypes[1]`: expected one of ADDED, MODIFIED, DELETED, got "CREATED""#,
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "eventTypes": "ADDED"}]}]}"#.into(),
                "config key `initialWatchingResources[0].notifiers[0].eventTypes`: expected an array",
            ),
            (
                r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "filter": "ns=a"}]}]}"#.into(),
                r#"config key `initialWatchingResources[0].notifiers[0].filter`: expected an object (the same shape as a query body), got "ns=a""#,
            ),
            (
                r#"{"pluginAllowedHosts": ["ok", ""]}"#.into(),
                r#"config key `pluginAllowedHosts[1]`: expected a non-empty string, got """#,
            ),
            (
                r#"{"subscriptions": {"name": "a"}}"#.into(),
                r#"config key `subscriptions`: expected an array of subscriptions, got {"name":"a"}"#,
            ),
            (
                r#"{"globalWebhookUrls": ["hooks.local/x"]}"#.into(),
                r#"config key `globalWebhookUrls[0]`: expected an http:// or https:// URL with a host, got "hooks.local/x""#,
            ),
            (r#"{"globalWebhookUrls": "http://a"}"#.into(), "config key `globalWebhookUrls`: expected an array of http(s) URLs"),
            (
                r#"{"enableSyncApiGroups": "yes"}"#.into(),
                r#"config key `enableSyncApiGroups`: expected true or false, got "yes""#,
            ),
            (
                r#"{"apiGroupsSyncIntervalSecond": 0}"#.into(),
                "config key `apiGroupsSyncIntervalSecond`: expected a positive number of seconds, got 0",
            ),
            (r#"{"apiGroupsSyncIntervalSecond": -5}"#.into(), "expected a positive number of seconds, got -5"),
            (r#"{"apiGroupsSyncIntervalSecond": "30"}"#.into(), r#"expected a positive number of seconds, got "30""#),
            (r#"{"apiGroupsSyncIntervalSecond": 1e300}"#.into(), "expected a positive number of seconds"),
            (r#"{"k8sClientConfig": []}"#.into(), "config key `k8sClientConfig`: expected an object, got []"),
            (
                r#"{"k8sClientConfig": {"authType": "Token"}}"#.into(),
                r#"config key `k8sClientConfig.authType`: expected one of KubeConfig, BearerToken, ClientCertificate, got "Token""#,
            ),
            (
                r#"{"k8sClientConfig": {"authType": "BearerToken", "tokenFilePath": "/t"}}"#.into(),
                "config key `k8sClientConfig.apiServerUrl`: required when `authType` is BearerToken; the key is missing",
            ),
            (
                r#"{"k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": "https://k"}}"#.into(),
                "config key `k8sClientConfig.tokenFilePath`: required when `authType` is BearerToken; the key is missing",
            ),
            (
                r#"{"k8sClientConfig": {"authType": "ClientCertificate", "clientCertPath": "/c", "clientKeyPath": "/k"}}"#.into(),
                "config key `k8sClientConfig.apiServerUrl`: required when `authType` is ClientCertificate",
            ),
            (
                r#"{"k8sClientConfig": {"authType": "ClientCertificate", "apiServerUrl": "https://k"}}"#.into(),
                "config key `k8sClientConfig`: `authType` ClientCertificate needs `clientCertPath` and `clientKeyPath`, or `clientCertDataPemBase64` and `clientKeyDataPemBase64`",
            ),
            (
                r#"{"k8sClientConfig": {"authType": "ClientCertificate", "apiServerUrl": "https://k", "clientCertPath": "/c"}}"#.into(),
                "config key `k8sClientConfig.clientKeyPath`: required when `authType` is ClientCertificate",
            ),
            (
                r#"{"k8sClientConfig": {"authType": "ClientCertificate", "apiServerUrl": "https://k", "clientKeyDataPemBase64": "a2V5"}}"#.into(),
                "config key `k8sClientConfig.clientCertDataPemBase64`: required when `authType` is ClientCertificate",
            ),
            (
                r#"{"k8sClientConfig": {"apiServerUrl": "ftp://k"}}"#.into(),
                r#"config key `k8sClientConfig.apiServerUrl`: expected an http:// or https:// URL with a host, got "ftp://k""#,
            ),
            (
                r#"{"k8sClientConfig": {"apiServerUrl": "kubernetes.default"}}"#.into(),
                "config key `k8sClientConfig.apiServerUrl`: expected an http:// or https:// URL",
            ),
            (
                r#"{"k8sClientConfig": {"caCertDataPemBase64": "not base64!"}}"#.into(),
                "config key `k8sClientConfig.caCertDataPemBase64`: expected base64-encoded PEM data, but the value is not valid base64",
            ),
            (
                r#"{"k8sClientConfig": {"clientCertDataPemBase64": 12}}"#.into(),
                "config key `k8sClientConfig.clientCertDataPemBase64`: expected a string, got 12",
            ),
            (
                r#"{"k8sClientConfig": {"autoKeepAlive": "yes"}}"#.into(),
                r#"config key `k8sClientConfig.autoKeepAlive`: expected true or false, got "yes""#,
            ),
            (
                r#"{"k8sClientConfig": {"autoInClusterConfig": 1}}"#.into(),
                "config key `k8sClientConfig.autoInClusterConfig`: expected true or false, got 1",
            ),
            (r#"{"k8sClientConfig": {"tokenFilePath": []}}"#.into(), "config key `k8sClientConfig.tokenFilePath`: expected a string, got []"),
            (r#"{"keepManagedFields": 1}"#.into(), "config key `keepManagedFields`: expected true or false, got 1"),
            (r#"{"onDemandWatch": "false"}"#.into(), "config key `onDemandWatch`: expected true or false"),
            (r#"{"allowOnDemandSecrets": 0}"#.into(), "config key `allowOnDemandSecrets`: expected true or false"),
            (r#"{"syncTimeoutSecond": "x"}"#.into(), r#"config key `syncTimeoutSecond`: expected a positive number of seconds, got "x""#),
            (r#"{"apiTokenFile": 5}"#.into(), "config key `apiTokenFile`: expected a string, got 5"),
            (r#"{"replayFile": {}}"#.into(), "config key `replayFile`: expected a string, got {}"),
            (
                r#"{"eventHistorySize": -1}"#.into(),
                "config key `eventHistorySize`: expected a whole number from 0 up, got -1",
            ),
            (r#"{"eventHistorySize": 1.5}"#.into(), "expected a whole number from 0 up, got 1.5"),
            (
                r#"{"maxRequestBodyBytes": 0}"#.into(),
                "config key `maxRequestBodyBytes`: expected a whole number from 1 up, got 0",
            ),
            (
                r#"{"notificationBufferBytes": "64Mi"}"#.into(),
                "config key `notificationBufferBytes`: expected a whole number from 1 up, got \"64Mi\"",
            ),
            ("[]".into(), "the config file must hold a JSON object at the top level, got []"),
            (r#""text""#.into(), r#"the config file must hold a JSON object at the top level, got "text""#),
            ("null".into(), "must hold a JSON object at the top level, got null"),
        ];
        for (input, want) in &cases {
            let message = parse_err(input);
            assert!(
                message.contains(want),
                "input: {input}\n  got: {message}\n want: {want}"
            );
        }
        // The first case must match exactly, not only as a part.
        assert_eq!(parse_err(&cases[0].0), cases[0].1);
    }

    #[test]
    fn base64_errors_do_not_repeat_the_secret() {
        let message =
            parse_err(r#"{"k8sClientConfig": {"clientKeyDataPemBase64": "c2VjcmV0LWtleQ*="}}"#);
        assert!(
            message.contains("`k8sClientConfig.clientKeyDataPemBase64`"),
            "{message}"
        );
        assert!(message.contains("not valid base64"), "{message}");
        assert!(!message.contains("c2VjcmV0LWtleQ"), "{message}");
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        let long = "x".repeat(200);
        let message = parse_err(&format!(r#"{{"listenPort": "{long}"}}"#));
        let got = message.split("got ").nth(1).unwrap();
        assert!(got.ends_with('…'), "{message}");
        assert_eq!(got.chars().count(), SHOWN_VALUE_CHARS + 1);
    }

    #[test]
    fn invalid_json_reports_line_and_column() {
        let cases = [
            ("{\n  \"listenPort\": 3000,\n}", 3, 1),
            ("{\"listenPort\": 3000} x", 1, 22),
            ("{\n  // a comment\n}", 2, 3),
            ("", 1, 0),
        ];
        for (input, line, column) in cases {
            match parse(input, &no_env) {
                Err(ConfigError::Syntax {
                    line: l,
                    column: c,
                    ref message,
                    ..
                }) => {
                    assert_eq!((l, c), (line, column), "{input:?}: {message}");
                    assert!(!message.contains(" at line "), "{message}");
                }
                other => panic!("{input:?}: {other:?}"),
            }
        }
        let message = parse_err("{\n  \"listenPort\": 3000,\n}");
        assert_eq!(
            message,
            "the config file is not valid JSON: trailing comma at line 3, column 1"
        );
    }

    #[test]
    fn unknown_keys_warn_with_full_paths() {
        let text = r#"{
          "listenPort": 3000,
          "pluginsDir": "/x",
          "initialWebHookUrls": [],
          "initialWatchingResources": [
            {"version": "v1", "kind": "Pod", "watchOption": {},
             "watchOptions": {"namespace": "a", "resync": 5},
             "notifiers": [{"webhookUrls": ["http://a"]}, {"webhookUrls": ["http://b"], "retries": 3}]}
          ],
          "k8sClientConfig": {"autoKeepAlive": true, "autoReconnect": true, "proxyUrl": "http://p"}
        }"#;
        let (config, warnings) = parse_ok(text);
        assert_eq!(
            warnings,
            [
                "config key `initialWebHookUrls` is not known and is ignored",
                "config key `pluginsDir` is not known and is ignored",
                "config key `initialWatchingResources[0].watchOption` is not known and is ignored",
                "config key `initialWatchingResources[0].watchOptions.resync` is not known and is ignored",
                "config key `initialWatchingResources[0].notifiers[1].retries` is not known and is ignored",
                "config key `k8sClientConfig.proxyUrl` is not known and is ignored",
            ]
        );
        assert_eq!(
            config.initial_resources[0].options.namespace.as_deref(),
            Some("a")
        );
        assert_eq!(config.initial_resources[0].notifiers.len(), 2);
    }

    #[test]
    fn repeated_kinds_are_kept_with_a_warning() {
        let text = r#"{"initialWatchingResources": [
            {"group": "apps", "version": "v1", "kind": "Deployment"},
            {"version": "v1", "kind": "Pod"},
            {"group": "apps", "version": "v1", "kind": "Deployment"}
        ]}"#;
        let (config, warnings) = parse_ok(text);
        assert_eq!(config.initial_resources.len(), 3);
        assert_eq!(
            warnings,
            [
                "config key `initialWatchingResources[2]` repeats apps/v1/Deployment of `initialWatchingResources[0]`"
            ]
        );
    }

    #[test]
    fn environment_overrides() {
        struct Case {
            env: &'static [(&'static str, &'static str)],
            file: &'static str,
            kubeconfig: Option<&'static str>,
            in_cluster: bool,
            warning: Option<&'static str>,
        }
        let file_path = r#"{"k8sClientConfig": {"kubeConfigFilePath": "/etc/kc"}}"#;
        let cases = [
            Case {
                env: &[],
                file: "{}",
                kubeconfig: None,
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("HOME", "/home/u")],
                file: "{}",
                kubeconfig: Some("/home/u/.kube/config"),
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("HOME", "")],
                file: "{}",
                kubeconfig: None,
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("HOME", "/home/u")],
                file: file_path,
                kubeconfig: Some("/etc/kc"),
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("HOME", "/home/u"), ("KUBECONFIG", "/k1")],
                file: file_path,
                kubeconfig: Some("/k1"),
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("KUBECONFIG", "/k1:/k2")],
                file: file_path,
                kubeconfig: Some("/k1"),
                in_cluster: false,
                warning: Some(
                    "environment variable KUBECONFIG names 2 files; only the first, `/k1`, is used",
                ),
            },
            Case {
                env: &[("KUBECONFIG", ":/k2")],
                file: "{}",
                kubeconfig: Some("/k2"),
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("KUBECONFIG", ""), ("HOME", "/home/u")],
                file: file_path,
                kubeconfig: Some("/etc/kc"),
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("KUBECONFIG", "~/k"), ("HOME", "/home/u")],
                file: "{}",
                kubeconfig: Some("/home/u/k"),
                in_cluster: false,
                warning: None,
            },
            Case {
                env: &[("AUTO_INCLUSTER_CONFIG", "true")],
                file: r#"{"k8sClientConfig": {"autoInClusterConfig": false}}"#,
                kubeconfig: None,
                in_cluster: true,
                warning: None,
            },
            Case {
                env: &[("AUTO_INCLUSTER_CONFIG", "TRUE")],
                file: "{}",
                kubeconfig: None,
                in_cluster: true,
                warning: None,
            },
            Case {
                env: &[("AUTO_INCLUSTER_CONFIG", "false")],
                file: r#"{"k8sClientConfig": {"autoInClusterConfig": true}}"#,
                kubeconfig: None,
                in_cluster: true,
                warning: None,
            },
            Case {
                env: &[("AUTO_INCLUSTER_CONFIG", "yes")],
                file: "{}",
                kubeconfig: None,
                in_cluster: false,
                warning: Some(
                    "environment variable AUTO_INCLUSTER_CONFIG is \"yes\", neither `true` nor `false`; it is ignored",
                ),
            },
            Case {
                env: &[],
                file: r#"{"k8sClientConfig": {"kubeConfigFilePath": "~/kc"}}"#,
                kubeconfig: Some("~/kc"),
                in_cluster: false,
                warning: Some(
                    "config key `k8sClientConfig.kubeConfigFilePath` starts with `~` but HOME is not set; the path is used as written",
                ),
            },
        ];
        for (i, case) in cases.iter().enumerate() {
            let env = env_of(case.env);
            let (config, warnings) =
                parse(case.file, &env).unwrap_or_else(|e| panic!("case {i}: {e}"));
            assert_eq!(
                config.client.kubeconfig_path,
                case.kubeconfig.map(PathBuf::from),
                "case {i}"
            );
            assert_eq!(config.client.in_cluster, case.in_cluster, "case {i}");
            assert_eq!(
                warnings,
                case.warning.into_iter().collect::<Vec<_>>(),
                "case {i}"
            );
        }
    }

    #[test]
    fn accepted_forms() {
        let (config, warnings) = parse_ok(r#"{"listenAddress": "0.0.0.0:9000"}"#);
        assert_eq!(config.listen_address, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        assert_eq!(config.listen_port, 9000);
        assert!(warnings.is_empty());

        let (config, warnings) = parse_ok(r#"{"listenAddress": "[::1]:9000", "listenPort": 3001}"#);
        assert_eq!(config.listen_address, IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert_eq!(config.listen_port, 3001);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("port 3001 is used"), "{warnings:?}");

        let (config, _) =
            parse_ok(r#"{"listenAddress": "::", "listenPort": 3000.0, "eventHistorySize": 5e3}"#);
        assert_eq!(config.listen_address, IpAddr::V6(Ipv6Addr::UNSPECIFIED));
        assert_eq!(config.listen_port, 3000);
        assert_eq!(config.event_history_size, 5000);

        let (config, _) =
            parse_ok(r#"{"apiGroupsSyncIntervalSecond": 0.25, "syncTimeoutSecond": 90}"#);
        assert_eq!(config.api_groups_sync_interval, Duration::from_millis(250));
        assert_eq!(config.sync_timeout, Duration::from_secs(90));

        // `null` and "" count as absent.
        let (config, _) = parse_ok(
            r#"{"listenPort": null, "apiTokenFile": "", "initialWatchingResources": [
                {"group": null, "version": "v1", "kind": "Pod", "notifiers": null,
                 "watchOptions": {"namespace": "", "labelSelector": null}}]}"#,
        );
        assert_eq!(config.listen_port, 3000);
        assert_eq!(config.api_token_file, None);
        assert_eq!(config.initial_resources[0].gvk, Gvk::new("", "v1", "Pod"));
        assert_eq!(config.initial_resources[0].options, WatchOptions::default());
        assert!(config.initial_resources[0].notifiers.is_empty());

        // Base64 with line breaks and without padding.
        let (config, _) = parse_ok(
            r#"{"k8sClientConfig": {"caCertDataPemBase64": "Y2Et\ncGVt", "clientCertDataPemBase64": "Y2VydC1wZW0"}}"#,
        );
        assert_eq!(config.client.ca_cert_pem.as_deref(), Some(&b"ca-pem"[..]));
        assert_eq!(
            config.client.client_cert_pem.as_deref(),
            Some(&b"cert-pem"[..])
        );

        // BearerToken with what it needs.
        let (config, _) = parse_ok(
            r#"{"k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": "http://127.0.0.1:8001", "tokenFilePath": "/t"}}"#,
        );
        assert_eq!(config.client.auth_type, Some(AuthType::BearerToken));
        assert_eq!(config.client.token_file, Some(PathBuf::from("/t")));
    }

    #[test]
    fn http_url_check() {
        let good = [
            "http://a",
            "https://a.example.com/x?y#z",
            "HTTPS://Example.COM",
            "http://a:8080",
            "http://user:pw@a/x",
            "http://[::1]:80/x",
            "http://[fe80::1]",
            "http://10.0.0.1:6443",
        ];
        let bad = [
            "",
            "a.example.com",
            "ftp://a",
            "http://",
            "http:///x",
            "http://:80",
            "http://a b",
            "http://a:port",
            "http://a:70000",
            "http://[::1",
            "http://[zz]/",
            "http://[::1]x",
            "https//a",
        ];
        for url in good {
            assert!(is_http_url(url), "{url} should be accepted");
        }
        for url in bad {
            assert!(!is_http_url(url), "{url} should be refused");
        }
    }

    #[test]
    fn home_expansion() {
        let cases = [
            ("~", Some("/h"), Some("/h")),
            ("~/a/b", Some("/h"), Some("/h/a/b")),
            ("~user/a", Some("/h"), Some("~user/a")),
            ("/a/~/b", Some("/h"), Some("/a/~/b")),
            ("a", None, Some("a")),
            ("~/a", None, None),
            ("~/a", Some(""), None),
        ];
        for (path, home, want) in cases {
            assert_eq!(
                expand_home(Path::new(path), home),
                want.map(PathBuf::from),
                "{path} with HOME={home:?}"
            );
        }
    }
}
