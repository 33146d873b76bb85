//! Checked values of the config file: the types and functions that read one
//! value (a port, a duration, a URL, a path, a host pattern...) and say what
//! was expected when it is not right. [`super::file`] puts them together.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};
use serde_json::Value;

use super::accepted::{
    API_AUTHS, AUTH_TYPES, ApiAuth, AuthType, BUILT_IN_ANALYZERS, EVENT_TYPES, LOG_LEVELS,
    LOG_TYPES, LogLevel, LogType, NAME_EXPECTED, OWN_ROUTE_SEGMENTS, URL_EXPECTED,
};
use super::allowed_hosts::{AllowedHosts, HostPattern};
use super::de::{self, Refusal, show};
use crate::event::ChangeType;

/// Standard base64 alphabet; padding optional.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

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

/// Checks one part of a group/version/kind: no white space, no `/`.
pub(super) fn is_plain_name(s: &str) -> bool {
    !s.chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '/')
}

/// Whether `s` is an `http://` or `https://` URL with a host (and, if given,
/// a numeric port).
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

impl<'de> Deserialize<'de> for LogLevel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, LOG_LEVELS)
    }
}

impl<'de> Deserialize<'de> for LogType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, LOG_TYPES)
    }
}

impl<'de> Deserialize<'de> for ApiAuth {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, API_AUTHS)
    }
}

impl<'de> Deserialize<'de> for AuthType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, AUTH_TYPES)
    }
}

/// `listenAddress`: an IP address, or (as some configs of the earlier GRW
/// wrote) an `IP:PORT` socket address.
pub(super) struct ListenAddress(pub(super) IpAddr, pub(super) Option<u16>);

impl<'de> Deserialize<'de> for ListenAddress {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(deserializer, "an IP address such as 127.0.0.1 or ::", |s| {
            if let Ok(ip) = s.parse::<IpAddr>() {
                return Ok(ListenAddress(ip, None));
            }
            match s.parse::<SocketAddr>() {
                Ok(address) if address.port() != 0 => {
                    Ok(ListenAddress(address.ip(), Some(address.port())))
                }
                _ => Err(Refusal::Expected),
            }
        })
    }
}

/// Where the Kubernetes API is served on the API listener: `/kube`, or
/// deeper (`/grw/kube`); not a path GRW's own routes begin with.
pub(super) struct PathPrefix(pub(super) String);

/// What `kubeApiPathPrefix` accepts.
const PATH_PREFIX_EXPECTED: &str = "a path such as /kube: segments of letters, digits, `-`, `.` or `_` after each `/`, no `/` at the end";

impl<'de> Deserialize<'de> for PathPrefix {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(deserializer, PATH_PREFIX_EXPECTED, |s| {
            let segments: Vec<&str> = match s.strip_prefix('/') {
                Some(rest) => rest.split('/').collect(),
                None => return Err(Refusal::Expected),
            };
            let valid = |segment: &&str| {
                !segment.is_empty()
                    && segment
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
            };
            if !segments.iter().all(valid) {
                return Err(Refusal::Expected);
            }
            if OWN_ROUTE_SEGMENTS.contains(&segments[0]) {
                return Err(Refusal::Message(format!(
                    "{s:?} begins like GRW's own routes (/{}/...); choose another first segment, such as /kube",
                    segments[0]
                )));
            }
            Ok(PathPrefix(s.to_string()))
        })
    }
}

/// A whole number from `MIN` up, as a `usize`.
pub(super) struct Count<const MIN: u64>(pub(super) usize);

impl<'de, const MIN: u64> Deserialize<'de> for Count<MIN> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountVisitor<const MIN: u64>;
        impl<const MIN: u64> serde::de::Visitor<'_> for CountVisitor<MIN> {
            type Value = Count<MIN>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a whole number from {MIN} up")
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Count<MIN>, E> {
                usize::try_from(n)
                    .ok()
                    .filter(|_| n >= MIN)
                    .map(Count)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
        }
        deserializer.deserialize_u64(CountVisitor::<MIN>)
    }
}

/// A port, 1 to 65535.
pub(super) struct Port(pub(super) u16);

impl<'de> Deserialize<'de> for Port {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PortVisitor;
        impl serde::de::Visitor<'_> for PortVisitor {
            type Value = Port;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number from 1 to 65535")
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Port, E> {
                u16::try_from(n)
                    .ok()
                    .filter(|p| *p != 0)
                    .map(Port)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
        }
        deserializer.deserialize_u16(PortVisitor)
    }
}

/// A number of seconds above 0 and at most `MAX` (`u64::MAX`: no bound
/// but a [`Duration`]'s): the one reading of a duration in seconds, for the
/// config file, the API's subscriptions and the command line. It keeps the
/// number as written, which it shows back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seconds<const MAX: u64 = { u64::MAX }>(f64);

impl<const MAX: u64> Seconds<MAX> {
    /// `seconds`, if it is above 0 and at most `MAX`.
    pub fn new(seconds: f64) -> Option<Seconds<MAX>> {
        let bounded = MAX == u64::MAX || seconds <= MAX as f64;
        (bounded && positive_seconds(seconds).is_some()).then_some(Seconds(seconds))
    }

    /// The number as written.
    pub fn value(self) -> f64 {
        self.0
    }

    /// As a duration.
    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.0)
    }

    /// What is expected, for messages.
    fn expected() -> String {
        if MAX == u64::MAX {
            "a positive number of seconds".to_string()
        } else {
            format!("a number of seconds above 0 and at most {MAX}")
        }
    }
}

impl<'de, const MAX: u64> Deserialize<'de> for Seconds<MAX> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SecondsVisitor<const MAX: u64>;
        impl<const MAX: u64> serde::de::Visitor<'_> for SecondsVisitor<MAX> {
            type Value = Seconds<MAX>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&Seconds::<MAX>::expected())
            }

            fn visit_f64<E: serde::de::Error>(self, s: f64) -> Result<Seconds<MAX>, E> {
                Seconds::new(s)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Float(s), &self))
            }

            fn visit_u64<E: serde::de::Error>(self, s: u64) -> Result<Seconds<MAX>, E> {
                self.visit_f64(s as f64)
            }

            fn visit_i64<E: serde::de::Error>(self, s: i64) -> Result<Seconds<MAX>, E> {
                self.visit_f64(s as f64)
            }
        }
        deserializer.deserialize_f64(SecondsVisitor)
    }
}

impl<const MAX: u64> serde::Serialize for Seconds<MAX> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.0)
    }
}

/// From a command-line value.
impl<const MAX: u64> std::str::FromStr for Seconds<MAX> {
    type Err = NotSeconds;

    fn from_str(text: &str) -> Result<Self, NotSeconds> {
        text.trim()
            .parse::<f64>()
            .ok()
            .and_then(Seconds::new)
            .ok_or_else(|| NotSeconds(Self::expected()))
    }
}

/// Text that is not a number of seconds in range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {0}")]
pub struct NotSeconds(String);

/// A required group/version/kind part: non-empty, no white space, no `/`.
pub(super) struct Name(pub(super) String);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(deserializer, NAME_EXPECTED, |s| match s {
            "" => Err(Refusal::Expected),
            s if !is_plain_name(s) => Err(Refusal::Message(format!(
                "expected a name without spaces or `/`, got {}",
                show(&Value::from(s))
            ))),
            s => Ok(Name(s.to_string())),
        })
    }
}

/// `group`: `core` or "" for the core group.
pub(super) struct ApiGroup(pub(super) String);

/// A field path as field selectors write it (`spec.nodeName`), split into
/// its segments.
pub(super) struct FieldPath(pub(super) Vec<String>);

impl<'de> Deserialize<'de> for FieldPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(
            deserializer,
            "a field path as field selectors write it, e.g. \"spec.nodeName\"",
            |s| {
                crate::selectors::field::parse_path(s)
                    .map(FieldPath)
                    .map_err(|e| Refusal::Message(e.reason))
            },
        )
    }
}

impl<'de> Deserialize<'de> for ApiGroup {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(
            deserializer,
            "an API group name (`core` or \"\" for the core group)",
            |s| {
                if is_plain_name(s) {
                    Ok(ApiGroup(s.to_string()))
                } else {
                    Err(Refusal::Expected)
                }
            },
        )
    }
}

/// An `http://` or `https://` URL.
pub(super) struct HttpUrl(pub(super) String);

impl<'de> Deserialize<'de> for HttpUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(deserializer, URL_EXPECTED, |s| {
            if is_http_url(s) {
                Ok(HttpUrl(s.to_string()))
            } else {
                Err(Refusal::Expected)
            }
        })
    }
}

pub(super) fn optional_url<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    de::string_then(deserializer, URL_EXPECTED, |s| match s {
        "" => Ok(None),
        s if is_http_url(s) => Ok(Some(s.to_string())),
        _ => Err(Refusal::Expected),
    })
}

/// `consoleUrl`: an absolute http(s) URL without query or fragment, in
/// `url`'s normal form (so pure ASCII, fit for any header) and without a
/// trailing `/`, ready for `/ui/open?...` to be appended.
pub(super) fn console_url<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    de::string_then(deserializer, "an absolute http(s) URL", |s| {
        let shown = show(&Value::from(s));
        let parsed = url::Url::parse(s).ok().filter(|_| is_http_url(s)).ok_or_else(|| {
            Refusal::Message(format!(
                "{shown} is not an absolute http(s) URL; give the console's base URL as users reach it, e.g. https://grw.example.com"
            ))
        })?;
        if parsed.query().is_some() {
            return Err(Refusal::Message(format!(
                "{shown} has a query (`?...`); give the base URL only: GRW appends `/ui/open?kind=...`"
            )));
        }
        if parsed.fragment().is_some() {
            return Err(Refusal::Message(format!(
                "{shown} has a fragment (`#...`); give the base URL only: GRW appends `/ui/open?kind=...`"
            )));
        }
        Ok(Some(parsed.as_str().trim_end_matches('/').to_string()))
    })
}

pub(super) fn namespace<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    let namespace = de::text(deserializer)?;
    match namespace {
        Some(ns) if !is_plain_name(&ns) => Err(D::Error::custom(format!(
            "expected a namespace name without spaces or `/`, got {}",
            show(&Value::from(ns))
        ))),
        namespace => Ok(namespace),
    }
}

/// `additionalK8sApiQueryParams`: names and values, sorted by name.
pub(super) fn query_params<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, String)>, D::Error> {
    struct Param(Option<String>);
    impl<'de> Deserialize<'de> for Param {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct ParamVisitor;
            impl serde::de::Visitor<'_> for ParamVisitor {
                type Value = Param;

                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a string, number or boolean")
                }

                fn visit_unit<E>(self) -> Result<Param, E> {
                    Ok(Param(None))
                }

                fn visit_str<E>(self, s: &str) -> Result<Param, E> {
                    Ok(Param(Some(s.to_string())))
                }

                fn visit_bool<E>(self, b: bool) -> Result<Param, E> {
                    Ok(Param(Some(b.to_string())))
                }

                fn visit_u64<E>(self, n: u64) -> Result<Param, E> {
                    Ok(Param(Some(n.to_string())))
                }

                fn visit_i64<E>(self, n: i64) -> Result<Param, E> {
                    Ok(Param(Some(n.to_string())))
                }

                fn visit_f64<E>(self, n: f64) -> Result<Param, E> {
                    Ok(Param(Some(n.to_string())))
                }
            }
            deserializer.deserialize_any(ParamVisitor)
        }
    }
    struct Params(Vec<(String, String)>);
    impl<'de> Deserialize<'de> for Params {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct ParamsVisitor;
            impl<'de> serde::de::Visitor<'de> for ParamsVisitor {
                type Value = Params;

                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object whose values are strings, numbers or booleans")
                }

                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Params, A::Error> {
                    let mut params = Vec::new();
                    while let Some((name, Param(value))) = map.next_entry::<String, Param>()? {
                        if let Some(value) = value {
                            params.push((name, value));
                        }
                    }
                    params.sort();
                    Ok(Params(params))
                }
            }
            deserializer.deserialize_map(ParamsVisitor)
        }
    }
    Ok(Params::deserialize(deserializer)?.0)
}

/// `pluginAllowedHosts`: `host`, `host:port` or `*.domain` patterns.
pub(super) fn allowed_hosts<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<AllowedHosts, D::Error> {
    struct Pattern(String);
    impl<'de> Deserialize<'de> for Pattern {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            de::string_then(deserializer, NAME_EXPECTED, |s| {
                if s.is_empty() {
                    return Err(Refusal::Expected);
                }
                HostPattern::parse(s).map_err(|e| Refusal::Message(e.to_string()))?;
                Ok(Pattern(s.to_string()))
            })
        }
    }
    let patterns: Vec<Pattern> = de::array(
        deserializer,
        "an array of host names (`host`, `host:port` or `*.domain`)",
    )?;
    let patterns: Vec<String> = patterns.into_iter().map(|p| p.0).collect();
    AllowedHosts::parse("pluginAllowedHosts", &patterns).map_err(D::Error::custom)
}

/// A base64-encoded PEM key; empty counts as missing. The message never
/// repeats the value: it may be a private key.
pub(super) fn pem_base64<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<u8>>, D::Error> {
    let Some(encoded) = de::text(deserializer)? else {
        return Ok(None);
    };
    let compact: String = encoded
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    BASE64.decode(compact).map(Some).map_err(|e| {
        D::Error::custom(format!(
            "expected base64-encoded PEM data, but the value is not valid base64 ({e})"
        ))
    })
}

/// `builtinAnalyzers`: `true` (all of them), `false` (none), or the names
/// of those that run, each once.
pub(super) fn built_in_analyzers<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<String>>, D::Error> {
    const EXPECTED: &str = "true, false, or an array of built-in analyzer names";
    struct Analyzer(String);
    impl<'de> Deserialize<'de> for Analyzer {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            de::string_then(deserializer, "a built-in analyzer name", |s| {
                if BUILT_IN_ANALYZERS.contains(&s) {
                    Ok(Analyzer(s.to_string()))
                } else {
                    Err(Refusal::Message(format!(
                        "GRW has no built-in analyzer {}; it has {}",
                        show(&Value::from(s)),
                        BUILT_IN_ANALYZERS.join(", ")
                    )))
                }
            })
        }
    }
    struct Choice;
    impl<'de> serde::de::Visitor<'de> for Choice {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(EXPECTED)
        }

        fn visit_bool<E: serde::de::Error>(self, all: bool) -> Result<Vec<String>, E> {
            Ok(match all {
                true => BUILT_IN_ANALYZERS.map(String::from).to_vec(),
                false => Vec::new(),
            })
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<String>, A::Error> {
            let mut names = Vec::new();
            while let Some(Analyzer(name)) = seq.next_element()? {
                if names.contains(&name) {
                    return Err(A::Error::custom(format!("names `{name}` twice")));
                }
                names.push(name);
            }
            Ok(names)
        }
    }
    deserializer.deserialize_any(Choice).map(Some)
}

/// A value read from text and checked, with the text as written: what the
/// API server gets (selectors) and what the API shows.
///
/// Two are equal when their texts are.
#[derive(Debug, Clone)]
pub struct Parsed<T> {
    text: String,
    value: T,
}

impl<T> Parsed<T> {
    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed value.
    pub fn value(&self) -> &T {
        &self.value
    }
}

impl<T: FromStr> FromStr for Parsed<T> {
    type Err = T::Err;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Parsed {
            value: text.parse()?,
            text: text.to_string(),
        })
    }
}

impl<T> PartialEq for Parsed<T> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl<T> Eq for Parsed<T> {}

impl<T> Hash for Parsed<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl<T> fmt::Display for Parsed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<T> serde::Serialize for Parsed<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

/// From a string; the message of a parse error is the error's own (it names
/// the text).
impl<'de, T> serde::Deserialize<'de> for Parsed<T>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(deserializer, "a string", |text| {
            text.parse()
                .map_err(|e: T::Err| Refusal::Message(e.to_string()))
        })
    }
}

/// `eventTypes`: each of ADDED, MODIFIED, DELETED at most once, in the order
/// written.
pub(super) fn event_types<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<ChangeType>, D::Error> {
    struct EventType(ChangeType);
    impl<'de> Deserialize<'de> for EventType {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            de::choose(deserializer, EVENT_TYPES).map(EventType)
        }
    }
    let written: Vec<EventType> =
        de::array(deserializer, "an array of ADDED, MODIFIED or DELETED")?;
    let mut types = Vec::with_capacity(written.len());
    for EventType(t) in written {
        if !types.contains(&t) {
            types.push(t);
        }
    }
    Ok(types)
}

/// Event types as their names.
pub(super) fn event_type_names<S: Serializer>(
    types: &[ChangeType],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(types.iter().map(|t| t.as_str()))
}

/// A selector or other parsed text; empty counts as missing.
pub(super) fn optional_parsed<'de, D, T>(deserializer: D) -> Result<Option<Parsed<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr,
    T::Err: fmt::Display,
{
    de::string_then(deserializer, "a string", |text| {
        if text.is_empty() {
            return Ok(None);
        }
        text.parse()
            .map(Some)
            .map_err(|e: T::Err| Refusal::Message(e.to_string()))
    })
}
