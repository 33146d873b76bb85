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
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let form = "write `host`, `host:port` or `*.domain`";
        if text.is_empty() {
            return Err(format!("an empty host pattern; {form}"));
        }
        if let Some((_, rest)) = text.split_once("://") {
            let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
            return Err(format!(
                "`{text}` is a URL; write the host alone, e.g. `{host}`"
            ));
        }
        if text.contains(|c: char| "/?#@ \t\r\n".contains(c)) {
            return Err(format!("`{text}` is not a host pattern; {form}"));
        }
        let text_lower = text.to_ascii_lowercase();
        let (host, port) = if let Some(bracketed) = text_lower.strip_prefix('[') {
            let (address, rest) = bracketed
                .split_once(']')
                .ok_or_else(|| format!("`{text}`: missing `]` after the IPv6 address"))?;
            let address: Ipv6Addr = address
                .parse()
                .map_err(|_| format!("`{text}`: `{address}` is not an IPv6 address"))?;
            let port =
                match rest {
                    "" => None,
                    _ => Some(rest.strip_prefix(':').ok_or_else(|| {
                        format!("`{text}`: expected `:port` after the IPv6 address")
                    })?),
                };
            return Ok(HostPattern {
                host: address.to_string(),
                subdomains: false,
                port: port.map(|p| parse_port(text, p)).transpose()?,
            });
        } else {
            match text_lower.split_once(':') {
                Some((_, rest)) if rest.contains(':') => {
                    return Err(format!(
                        "`{text}` looks like an IPv6 address; write it in brackets, as `[{text}]` or `[{text}]:8080`"
                    ));
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
            return Err(format!(
                "`{text}` would allow every host; name the hosts, or use `*.domain` for the subdomains of one domain"
            ));
        }
        if name.contains('*') {
            return Err(format!(
                "`{text}`: `*` is only allowed as the whole first label, as in `*.example.com`"
            ));
        }
        let valid_label = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if !name.split('.').all(valid_label) {
            return Err(format!(
                "`{text}` is not a host name: use letters, digits, `-` and dots (international names in their `xn--` form)"
            ));
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
                return Err(format!(
                    "`{text}` is not a host name, nor an IPv4 address in the form `a.b.c.d` (no leading zeros)"
                ));
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

fn parse_port(text: &str, port: &str) -> Result<u16, String> {
    port.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("`{text}`: the port must be a number from 1 to 65535"))
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
    pub fn parse<S: AsRef<str>>(key: &str, patterns: &[S]) -> Result<AllowedHosts, String> {
        patterns
            .iter()
            .enumerate()
            .map(|(i, p)| HostPattern::parse(p.as_ref()).map_err(|e| format!("`{key}[{i}]`: {e}")))
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
    pub fn parse(url: &str) -> Result<Target, String> {
        let parsed = Url::parse(url).map_err(|e| format!("invalid URL `{url}`: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "only http and https URLs are allowed, got `{}:` in `{url}`",
                parsed.scheme()
            ));
        }
        // The URL parser already lower-cases names and writes IPv4 addresses
        // canonically; IPv6 addresses come in brackets.
        let host = match parsed.host_str() {
            Some(h) if h.starts_with('[') => h
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<Ipv6Addr>()
                .map_err(|_| format!("invalid URL `{url}`: bad IPv6 address"))?
                .to_string(),
            Some(h) if !h.is_empty() => h.trim_end_matches('.').to_ascii_lowercase(),
            _ => return Err(format!("invalid URL `{url}`: it names no host")),
        };
        let port = parsed
            .port_or_known_default()
            .ok_or_else(|| format!("invalid URL `{url}`: no port"))?;
        Ok(Target {
            url: parsed,
            host,
            port,
        })
    }

    /// Checks the target against the plugin's and the operator's lists; the
    /// error says which list refuses it, in the words a user sees.
    pub fn check(&self, plugin: &AllowedHosts, operator: &AllowedHosts) -> Result<(), String> {
        let by_plugin = plugin.allows(&self.host, self.port);
        let by_operator = operator.allows(&self.host, self.port);
        let why = match (by_plugin, by_operator) {
            (true, true) => return Ok(()),
            (false, true) => {
                format!("the plugin's manifest does not list it in `allowedHosts` ({plugin})")
            }
            (true, false) => {
                format!("GRW's configuration does not list it in `pluginAllowedHosts` ({operator})")
            }
            (false, false) => format!(
                "neither the plugin's manifest (`allowedHosts`: {plugin}) nor GRW's configuration (`pluginAllowedHosts`: {operator}) lists it"
            ),
        };
        Err(format!("host {self} is not allowed: {why}"))
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
            let err = HostPattern::parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let err = AllowedHosts::parse("allowedHosts", &["ok.example", "bad host"]).unwrap_err();
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
            let err = Target::parse(url).unwrap_err();
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
            target.check(&other, &slack).unwrap_err(),
            "host hooks.slack.com:443 is not allowed: the plugin's manifest does not list it in `allowedHosts` (*.example.com)"
        );
        assert_eq!(
            target.check(&slack, &AllowedHosts::none()).unwrap_err(),
            "host hooks.slack.com:443 is not allowed: GRW's configuration does not list it in `pluginAllowedHosts` (empty)"
        );
        assert_eq!(
            target.check(&AllowedHosts::none(), &other).unwrap_err(),
            "host hooks.slack.com:443 is not allowed: neither the plugin's manifest (`allowedHosts`: empty) nor GRW's configuration (`pluginAllowedHosts`: *.example.com) lists it"
        );
        let other_port = list(&["hooks.slack.com:8443"]);
        assert!(target.check(&slack, &other_port).is_err());
    }
}
