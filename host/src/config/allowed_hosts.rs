//! Which hosts a notifier may reach. Two lists must both allow a request's
//! host: the plugin's manifest (`allowedHosts`, what the plugin needs) and
//! GRW's configuration (`pluginAllowedHosts`, what the operator permits).
//! Either list empty means no outbound HTTP at all.
//!
//! A pattern is `host` (any port), `host:port`, `*.domain` (every subdomain
//! of `domain`, at any depth, but not `domain` itself) or `*.domain:port`.
//! IPv6 addresses go in brackets: `[::1]`, `[::1]:8080`. Names compare
//! case-insensitively; IP addresses compare in their canonical form, so
//! `http://0x7f.1/` cannot slip past a pattern for `127.0.0.1` and vice versa.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use reqwest::Url;

/// How a host pattern is written, for messages.
const FORM: &str = "write `host`, `host:port` or `*.domain`";

/// A host pattern that is not one; the message says how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostPatternError {
    /// Nothing.
    #[error("an empty host pattern; {FORM}")]
    Empty,
    /// A URL rather than a host.
    #[error("`{text}` is a URL; write the host alone, e.g. `{host}`")]
    Url {
        /// The pattern.
        text: String,
        /// The host in it.
        host: String,
    },
    /// Characters no host pattern has.
    #[error("`{0}` is not a host pattern; {FORM}")]
    NotAPattern(String),
    /// `[` without `]`.
    #[error("`{0}`: missing `]` after the IPv6 address")]
    Unclosed(String),
    /// Brackets around something else than an IPv6 address.
    #[error("`{text}`: `{address}` is not an IPv6 address")]
    NotIpv6 {
        /// The pattern.
        text: String,
        /// What the brackets hold.
        address: String,
    },
    /// Something else than `:port` after the brackets.
    #[error("`{0}`: expected `:port` after the IPv6 address")]
    AfterBrackets(String),
    /// An IPv6 address without brackets.
    #[error("`{0}` looks like an IPv6 address; write it in brackets, as `[{0}]` or `[{0}]:8080`")]
    Unbracketed(String),
    /// `*` alone.
    #[error(
        "`{0}` would allow every host; name the hosts, or use `*.domain` for the subdomains of one domain"
    )]
    Everything(String),
    /// `*` elsewhere than as the whole first label.
    #[error("`{0}`: `*` is only allowed as the whole first label, as in `*.example.com`")]
    Wildcard(String),
    /// Not a host name.
    #[error(
        "`{0}` is not a host name: use letters, digits, `-` and dots (international names in their `xn--` form)"
    )]
    NotAName(String),
    /// A name ending in a number that is no IPv4 address in plain form.
    #[error(
        "`{0}` is not a host name, nor an IPv4 address in the form `a.b.c.d` (no leading zeros)"
    )]
    NotAnAddress(String),
    /// A port out of range.
    #[error("`{0}`: the port must be a number from 1 to 65535")]
    Port(String),
}

/// A list of host patterns with a bad one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}[{index}]`: {error}")]
pub struct AllowedHostsError {
    /// The list's key, e.g. `allowedHosts`.
    pub key: String,
    /// Which pattern.
    pub index: usize,
    /// What is wrong with it.
    #[source]
    pub error: HostPatternError,
}

/// A request URL that cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not a URL.
    #[error("invalid URL `{url}`: {reason}")]
    Invalid {
        /// The URL.
        url: String,
        /// What the URL parser or GRW found wrong.
        reason: String,
    },
    /// A scheme other than http and https.
    #[error("only http and https URLs are allowed, got `{scheme}:` in `{url}`")]
    Scheme {
        /// The scheme.
        scheme: String,
        /// The URL.
        url: String,
    },
}

/// Which list refuses a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusedBy {
    /// The plugin's manifest (`allowedHosts`).
    Plugin(AllowedHosts),
    /// GRW's configuration (`pluginAllowedHosts`).
    Operator(AllowedHosts),
    /// Both.
    Both(AllowedHosts, AllowedHosts),
}

/// A host neither list, or only one, allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("host {target} is not allowed: {}", match by {
    RefusedBy::Plugin(plugin) => format!("the plugin's manifest does not list it in `allowedHosts` ({plugin})"),
    RefusedBy::Operator(operator) => format!("GRW's configuration does not list it in `pluginAllowedHosts` ({operator})"),
    RefusedBy::Both(plugin, operator) => format!("neither the plugin's manifest (`allowedHosts`: {plugin}) nor GRW's configuration (`pluginAllowedHosts`: {operator}) lists it"),
})]
pub struct NotAllowed {
    /// `host:port`.
    pub target: String,
    /// Which list refused it.
    pub by: RefusedBy,
}

/// One allowed host pattern, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    /// Lower-case name or canonical address (IPv6 without brackets); for
    /// `*.domain`, the domain.
    host: String,
    /// `*.domain`: subdomains match, `domain` itself does not.
    subdomains: bool,
    /// `None` matches every port.
    port: Option<u16>,
}

impl HostPattern {
    /// Parses `host`, `host:port`, `*.domain`, `*.domain:port`, `[v6]` or
    /// `[v6]:port`. The error says what is wrong and how to write it.
    pub fn parse(text: &str) -> Result<HostPattern, HostPatternError> {
        use HostPatternError as E;
        let owned = || text.to_string();
        if text.is_empty() {
            return Err(E::Empty);
        }
        if let Some((_, rest)) = text.split_once("://") {
            let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
            return Err(E::Url {
                text: owned(),
                host: host.to_string(),
            });
        }
        if text.contains(|c: char| "/?#@ \t\r\n".contains(c)) {
            return Err(E::NotAPattern(owned()));
        }
        let text_lower = text.to_ascii_lowercase();
        let (host, port) = if let Some(bracketed) = text_lower.strip_prefix('[') {
            let (address, rest) = bracketed
                .split_once(']')
                .ok_or_else(|| E::Unclosed(owned()))?;
            let address: Ipv6Addr = address.parse().map_err(|_| E::NotIpv6 {
                text: owned(),
                address: address.to_string(),
            })?;
            let port = match rest {
                "" => None,
                _ => Some(
                    rest.strip_prefix(':')
                        .ok_or_else(|| E::AfterBrackets(owned()))?,
                ),
            };
            return Ok(HostPattern {
                host: address.to_string(),
                subdomains: false,
                port: port.map(|p| parse_port(text, p)).transpose()?,
            });
        } else {
            match text_lower.split_once(':') {
                Some((_, rest)) if rest.contains(':') => {
                    return Err(E::Unbracketed(owned()));
                }
                Some((host, port)) => (host, Some(parse_port(text, port)?)),
                None => (text_lower.as_str(), None),
            }
        };
        let host = host.strip_suffix('.').unwrap_or(host);
        let (subdomains, name) = match host.strip_prefix("*.") {
            Some(domain) => (true, domain),
            None => (false, host),
        };
        if name == "*" || host == "*" {
            return Err(E::Everything(owned()));
        }
        if name.contains('*') {
            return Err(E::Wildcard(owned()));
        }
        let valid_label = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if !name.split('.').all(valid_label) {
            return Err(E::NotAName(owned()));
        }
        // URLs read a name ending in a number as an IPv4 address (`1.2.3`,
        // `127.000.0.1`), so a pattern must be one in its plain form.
        let numeric_end = name
            .rsplit('.')
            .next()
            .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()));
        let host = match name.parse::<Ipv4Addr>() {
            Ok(address) if !subdomains => address.to_string(),
            _ if numeric_end => {
                return Err(E::NotAnAddress(owned()));
            }
            _ => name.to_string(),
        };
        Ok(HostPattern {
            host,
            subdomains,
            port,
        })
    }

    /// Whether a request to `host` (as [`Target::host`] spells it) on `port`
    /// is allowed by this pattern.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let host_ok = if self.subdomains {
            host.strip_suffix(self.host.as_str())
                .is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('.'))
        } else {
            host == self.host
        };
        host_ok && self.port.is_none_or(|p| p == port)
    }
}

fn parse_port(text: &str, port: &str) -> Result<u16, HostPatternError> {
    port.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| HostPatternError::Port(text.to_string()))
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.subdomains {
            f.write_str("*.")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// A list of [`HostPattern`]s; a host is allowed if any pattern matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts(Vec<HostPattern>);

impl AllowedHosts {
    /// No host at all.
    pub fn none() -> AllowedHosts {
        AllowedHosts::default()
    }

    /// Parses every pattern of the list named `key`; the error names the bad
    /// one (`` `allowedHosts[1]`: ... ``).
    pub fn parse<S: AsRef<str>>(
        key: &str,
        patterns: &[S],
    ) -> Result<AllowedHosts, AllowedHostsError> {
        patterns
            .iter()
            .enumerate()
            .map(|(index, p)| {
                HostPattern::parse(p.as_ref()).map_err(|error| AllowedHostsError {
                    key: key.to_string(),
                    index,
                    error,
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(AllowedHosts)
    }

    /// Whether any pattern allows `host` on `port`.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.0.iter().any(|p| p.matches(host, port))
    }

    /// Whether the list allows nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl serde::Serialize for AllowedHosts {
    /// As the list of patterns, each written canonically.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(ToString::to_string))
    }
}

impl fmt::Display for AllowedHosts {
    /// `a, b:443, *.c`, or `empty`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("empty");
        }
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

/// Where a request goes: its URL, checked to be `http` or `https`, and the
/// host and port the allow-lists are asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The parsed URL.
    pub url: Url,
    /// Lower-case name, or canonical IP address (IPv6 without brackets).
    pub host: String,
    /// The explicit port, or 80/443 by scheme.
    pub port: u16,
}

impl Target {
    /// Parses a request URL; only absolute `http` and `https` URLs with a
    /// host are accepted.
    pub fn parse(url: &str) -> Result<Target, TargetError> {
        let invalid = |reason: &str| TargetError::Invalid {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let parsed = Url::parse(url).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(TargetError::Scheme {
                scheme: parsed.scheme().to_string(),
                url: url.to_string(),
            });
        }
        // The URL parser already lower-cases names and writes IPv4 addresses
        // canonically; IPv6 addresses come in brackets.
        let host = match parsed.host_str() {
            Some(h) if h.starts_with('[') => h
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<Ipv6Addr>()
                .map_err(|_| invalid("bad IPv6 address"))?
                .to_string(),
            Some(h) if !h.is_empty() => h.trim_end_matches('.').to_ascii_lowercase(),
            _ => return Err(invalid("it names no host")),
        };
        let port = parsed
            .port_or_known_default()
            .ok_or_else(|| invalid("no port"))?;
        Ok(Target {
            url: parsed,
            host,
            port,
        })
    }

    /// Checks the target against the plugin's and the operator's lists; the
    /// error says which list refuses it, in the words a user sees.
    pub fn check(&self, plugin: &AllowedHosts, operator: &AllowedHosts) -> Result<(), NotAllowed> {
        let by_plugin = plugin.allows(&self.host, self.port);
        let by_operator = operator.allows(&self.host, self.port);
        let by = match (by_plugin, by_operator) {
            (true, true) => return Ok(()),
            (false, true) => RefusedBy::Plugin(plugin.clone()),
            (true, false) => RefusedBy::Operator(operator.clone()),
            (false, false) => RefusedBy::Both(plugin.clone(), operator.clone()),
        };
        Err(NotAllowed {
            target: self.to_string(),
            by,
        })
    }
}

impl fmt::Display for Target {
    /// `host:port`, IPv6 in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(patterns: &[&str]) -> AllowedHosts {
        AllowedHosts::parse("test", patterns).unwrap_or_else(|e| panic!("{patterns:?}: {e}"))
    }

    #[test]
    fn patterns_match_hosts_and_ports() {
        let cases: &[(&str, &str, u16, bool)] = &[
            ("hooks.slack.com", "hooks.slack.com", 443, true),
            ("hooks.slack.com", "hooks.slack.com", 8443, true),
            ("Hooks.Slack.com.", "hooks.slack.com", 443, true),
            ("hooks.slack.com", "evil-hooks.slack.com", 443, false),
            ("hooks.slack.com", "hooks.slack.com.evil.io", 443, false),
            ("hooks.slack.com:443", "hooks.slack.com", 443, true),
            ("hooks.slack.com:443", "hooks.slack.com", 80, false),
            ("*.example.com", "a.example.com", 443, true),
            ("*.example.com", "a.b.example.com", 80, true),
            ("*.example.com", "example.com", 443, false),
            ("*.example.com", "badexample.com", 443, false),
            ("*.example.com:8080", "a.example.com", 8080, true),
            ("*.example.com:8080", "a.example.com", 80, false),
            ("127.0.0.1", "127.0.0.1", 9000, true),
            ("127.0.0.1:9000", "127.0.0.1", 9001, false),
            ("[::1]", "::1", 80, true),
            ("[0:0::1]:8080", "::1", 8080, true),
            ("[::1]:8080", "::1", 8081, false),
        ];
        for (pattern, host, port, want) in cases {
            let p = HostPattern::parse(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            assert_eq!(p.matches(host, *port), *want, "{pattern} vs {host}:{port}");
        }
    }

    #[test]
    fn bad_patterns_say_how_to_write_them() {
        let cases = [
            ("", "an empty host pattern"),
            (
                "https://hooks.slack.com/services/T0",
                "`https://hooks.slack.com/services/T0` is a URL; write the host alone, e.g. `hooks.slack.com`",
            ),
            (
                "hooks.slack.com/services",
                "is not a host pattern; write `host`, `host:port` or `*.domain`",
            ),
            ("example.com:0", "the port must be a number from 1 to 65535"),
            (
                "example.com:https",
                "the port must be a number from 1 to 65535",
            ),
            (
                "example.com:70000",
                "the port must be a number from 1 to 65535",
            ),
            ("*", "would allow every host"),
            ("*.*", "would allow every host"),
            ("*:443", "would allow every host"),
            ("a.*.com", "`*` is only allowed as the whole first label"),
            (
                "*example.com",
                "`*` is only allowed as the whole first label",
            ),
            ("exa mple.com", "is not a host pattern"),
            ("exa!mple.com", "is not a host name"),
            ("a..b", "is not a host name"),
            ("bücher.de", "`xn--` form"),
            ("::1", "write it in brackets, as `[::1]`"),
            ("127.000.0.1", "nor an IPv4 address in the form `a.b.c.d`"),
            ("10.1", "nor an IPv4 address"),
            ("*.10.1.2.3", "nor an IPv4 address"),
            ("[::1", "missing `]`"),
            ("[nope]", "`nope` is not an IPv6 address"),
            ("[::1]8080", "expected `:port` after the IPv6 address"),
        ];
        for (text, want) in cases {
            let err = HostPattern::parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let err = AllowedHosts::parse("allowedHosts", &["ok.example", "bad host"])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("`allowedHosts[1]`: `bad host`"), "{err}");
    }

    #[test]
    fn patterns_display_canonically() {
        let l = list(&["A.example.COM", "*.x.io:8443", "[0::1]:80", "127.0.0.1"]);
        assert_eq!(
            l.to_string(),
            "a.example.com, *.x.io:8443, [::1]:80, 127.0.0.1"
        );
        assert_eq!(AllowedHosts::none().to_string(), "empty");
        assert_eq!(
            serde_json::to_value(&l).unwrap(),
            serde_json::json!(["a.example.com", "*.x.io:8443", "[::1]:80", "127.0.0.1"])
        );
    }

    #[test]
    fn targets_are_http_urls_with_effective_ports() {
        let t = Target::parse("https://Hooks.Slack.com/services/T0").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("hooks.slack.com", 443));
        let t = Target::parse("http://127.0.0.1:8080/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 8080));
        assert_eq!(t.to_string(), "127.0.0.1:8080");
        // Other spellings of an address are normalized before the check.
        let t = Target::parse("http://0x7f.1/").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 80));
        let t = Target::parse("http://[::1]:9/").unwrap();
        assert_eq!(t.to_string(), "[::1]:9");
        for (url, want) in [
            (
                "ftp://example.com/f",
                "only http and https URLs are allowed, got `ftp:`",
            ),
            ("file:///etc/passwd", "only http and https URLs are allowed"),
            ("example.com/hook", "invalid URL `example.com/hook`"),
            ("http://", "invalid URL"),
        ] {
            let err = Target::parse(url).unwrap_err().to_string();
            assert!(err.contains(want), "{url}: {err}");
        }
    }

    #[test]
    fn both_lists_must_allow_and_the_refusal_names_the_list() {
        let target = Target::parse("https://hooks.slack.com/x").unwrap();
        let slack = list(&["hooks.slack.com"]);
        let other = list(&["*.example.com"]);
        assert_eq!(target.check(&slack, &slack), Ok(()));
        assert_eq!(
            target.check(&other, &slack).unwrap_err().to_string(),
            "host hooks.slack.com:443 is not allowed: the plugin's manifest does not list it in `allowedHosts` (*.example.com)"
        );
        assert_eq!(
            target
                .check(&slack, &AllowedHosts::none())
                .unwrap_err()
                .to_string(),
            "host hooks.slack.com:443 is not allowed: GRW's configuration does not list it in `pluginAllowedHosts` (empty)"
        );
        assert_eq!(
            target
                .check(&AllowedHosts::none(), &other)
                .unwrap_err()
                .to_string(),
            "host hooks.slack.com:443 is not allowed: neither the plugin's manifest (`allowedHosts`: empty) nor GRW's configuration (`pluginAllowedHosts`: *.example.com) lists it"
        );
        let other_port = list(&["hooks.slack.com:8443"]);
        assert!(target.check(&slack, &other_port).is_err());
    }
}
