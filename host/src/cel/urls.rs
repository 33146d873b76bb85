//! Kubernetes' URL library: `url(s)`, `isURL(s)`, and a URL's
//! `getScheme()`, `getHost()` (with its port, an IPv6 address in
//! brackets), `getHostname()` (without either), `getPort()`,
//! `getEscapedPath()` and `getQuery()` (each name to its list of values,
//! unescaped), e.g. `url(object.spec.url).getScheme() == 'https'`.
//!
//! A URL is what the API server takes for one: an absolute URL
//! (`https://example.com/path`), an absolute path (`/healthz`), or a
//! scheme and an opaque part (`mailto:ops@example.com`), read with the
//! rules of an HTTP request's target (Go's `url.ParseRequestURI`): no
//! control character, every `%` followed by two hex digits, a port of
//! digits only, a host without spaces, and a bracketed host only for an
//! IPv6 address. Its parts are then read as Go's `url.Parse` reads them,
//! so each getter answers what it answers on the API server, where Rust's
//! URL crates, which follow the WHATWG standard, differ (they drop a
//! default port, lower-case the host, resolve `..`).

use std::collections::HashMap;

use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// The type of URLs, as `type(url('/'))` names it.
static URL: Type = Type::new_unspecified_type("kubernetes.URL");

/// A URL's parts, as Go's `url.Parse` reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    opaque: String,
    userinfo: Option<String>,
    host: String,
    /// The path as written, and unescaped.
    raw_path: String,
    path: String,
    query: String,
    fragment: Option<String>,
}

library_value!(Url, URL);

/// Adds the library to `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(URL.to_owned())?;
    cel::add_overload!(env, fn url: (CelString) -> Result<Url>)?;
    cel::add_overload!(env, fn is_url: (CelString) -> CelBool, name = "isURL")?;
    cel::add_member_overload!(env, fn get_scheme: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_host: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_hostname: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_port: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_escaped_path: (Url) -> CelString)?;
    env.add_member_overload(
        "getQuery",
        "kubernetes.URL.getQuery()",
        URL.to_owned(),
        vec![],
        get_query,
    )?;
    Ok(())
}

/// Reads a URL as the API server does (see the module's documentation).
pub fn parse(text: &str) -> Result<Url, String> {
    let refused = |e: String| format!("'{text}' is not a URL: {e}");
    // The rules of a request's target, on the whole text...
    let as_request = read(text, true).map_err(refused)?;
    // ...then the parts, the fragment apart. Without a fragment, the two
    // readings differ only for `//` with no scheme (a path as a request's
    // target, a host otherwise): the first is kept when they cannot.
    let (before, fragment) = match text.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None if !(as_request.scheme.is_empty() && text.starts_with("//")) => {
            return Ok(as_request);
        }
        None => (text, None),
    };
    let mut url = read(before, false).map_err(refused)?;
    url.fragment = fragment
        .map(|f| unescape(f, Mode::Fragment))
        .transpose()
        .map_err(refused)?;
    Ok(url)
}

/// Reads `text`, as the target of a request (`request`) or as any URL.
fn read(text: &str, request: bool) -> Result<Url, String> {
    if text.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("it has a control character".into());
    }
    if text.is_empty() && request {
        return Err("it is empty".into());
    }
    let mut url = Url {
        scheme: String::new(),
        opaque: String::new(),
        userinfo: None,
        host: String::new(),
        raw_path: String::new(),
        path: String::new(),
        query: String::new(),
        fragment: None,
    };
    if text == "*" {
        url.raw_path = "*".into();
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, rest) = scheme(text)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = match rest.strip_suffix('?') {
        Some(before) if !before.contains('?') => before,
        _ => match rest.split_once('?') {
            Some((before, query)) => {
                url.query = query.to_owned();
                before
            }
            None => rest,
        },
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        if request {
            return Err("it is neither an absolute URL nor an absolute path".into());
        }
        if rest.split('/').next().is_some_and(|s| s.contains(':')) {
            return Err("its first path segment has a colon".into());
        }
    }
    if (!url.scheme.is_empty() || !request && !rest.starts_with("///")) && rest.starts_with("//") {
        let authority = &rest[2..];
        let (authority, path) = authority.split_at(authority.find('/').unwrap_or(authority.len()));
        let (userinfo, host) = match authority.rfind('@') {
            Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
            None => (None, authority),
        };
        url.host = host_of(host)?;
        if let Some(userinfo) = userinfo {
            if !userinfo
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&b))
            {
                return Err("its user information has a character that must be escaped".into());
            }
            url.userinfo = Some(unescape(userinfo, Mode::UserPassword)?);
        }
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    url.raw_path = rest.to_owned();
    Ok(url)
}

/// The scheme and what follows its `:`, or no scheme and the whole text.
fn scheme(text: &str) -> Result<(&str, &str), String> {
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("it has no scheme before ':'".into()),
            b':' => return Ok((&text[..i], &text[i + 1..])),
            _ => return Ok(("", text)),
        }
    }
    Ok(("", text))
}

/// Whether `text` is empty or `:` and digits.
fn port_or_none(text: &str) -> bool {
    text.is_empty()
        || text
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The host (and port), unescaped.
fn host_of(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let close = host.rfind(']').ok_or("its host has a '[' and no ']'")?;
        let port = &host[close + 1..];
        if !port_or_none(port) {
            return Err(format!("its port '{port}' is not digits"));
        }
        let inside = &host[1..close];
        let (address, zone) = match inside.find("%25") {
            Some(at) => (&inside[..at], Some(&inside[at..])),
            None => (inside, None),
        };
        let address = unescape(address, Mode::Host)?;
        let zone = zone.map(|z| unescape(z, Mode::Zone)).transpose()?;
        let ipv6 = address
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_ipv6());
        if !ipv6 {
            return Err(format!("'{address}' in brackets is not an IPv6 address"));
        }
        return Ok(format!(
            "[{address}{}]{}",
            zone.unwrap_or_default(),
            unescape(port, Mode::Host)?
        ));
    }
    if let Some(colon) = host.rfind(':')
        && !port_or_none(&host[colon..])
    {
        return Err(format!("its port '{}' is not digits", &host[colon + 1..]));
    }
    unescape(host, Mode::Host)
}

/// Which part of a URL a text is, for what it may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// Whether a byte must be escaped in `mode` (Go's `shouldEscape`).
fn must_escape(b: u8, mode: Mode) -> bool {
    if b.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&'()*+,;=:[]<>\"".contains(&b) {
        return false;
    }
    match b {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => b == b'?',
            Mode::UserPassword => matches!(b, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => true,
            Mode::Fragment => false,
            // Taken above.
            Mode::Host | Mode::Zone => true,
        },
        b'!' | b'(' | b')' | b'*' => mode != Mode::Fragment,
        _ => true,
    }
}

/// `text` with its `%XX` escapes decoded (and `+` as a space in a query).
fn unescape(text: &str, mode: Mode) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
                let Some(hex) = hex else {
                    let bad: String = text[i..].chars().take(3).collect();
                    return Err(format!("'{bad}' is not an escape (% and two hex digits)"));
                };
                let hex = std::str::from_utf8(hex).unwrap_or("00");
                let byte = u8::from_str_radix(hex, 16).unwrap_or(0);
                if mode == Mode::Host && byte < 0x80 && hex != "25" {
                    return Err(format!(
                        "its host has '%{hex}', an escaped character that must be written as it is"
                    ));
                }
                out.push(byte);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            b => {
                if matches!(mode, Mode::Host | Mode::Zone) && b < 0x80 && must_escape(b, mode) {
                    return Err(format!(
                        "its host has the character '{}'",
                        (b as char).escape_default()
                    ));
                }
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `text` with what a path cannot hold escaped.
fn escape_path(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if must_escape(b, Mode::Path) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

impl Url {
    /// The path as written when that is a valid escaped form of it,
    /// otherwise escaped.
    fn escaped_path(&self) -> String {
        let valid = self
            .raw_path
            .bytes()
            .all(|b| b"!$&'()*+,;=:@[]%".contains(&b) || !must_escape(b, Mode::Path));
        if valid {
            self.raw_path.clone()
        } else {
            escape_path(&self.path)
        }
    }

    /// The host and the port of [`Url::host`] (Go's `splitHostPort`).
    fn host_and_port(&self) -> (&str, &str) {
        let (mut host, mut port) = (self.host.as_str(), "");
        if let Some(colon) = host.rfind(':')
            && port_or_none(&host[colon..])
        {
            (host, port) = (&self.host[..colon], &self.host[colon + 1..]);
        }
        if let Some(inside) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            host = inside;
        }
        (host, port)
    }

    /// The query's values by name, each name and value unescaped; pairs
    /// with a bad escape or a `;` are left out, as Go's `url.ParseQuery`
    /// leaves them.
    fn values(&self) -> HashMap<String, Vec<String>> {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        for pair in self.query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if let (Ok(name), Ok(value)) = (
                unescape(name, Mode::QueryComponent),
                unescape(value, Mode::QueryComponent),
            ) {
                values.entry(name).or_default().push(value);
            }
        }
        values
    }
}

fn url(text: &CelString<'_>) -> Result<Url, ExecutionError> {
    parse(text.inner()).map_err(|e| ExecutionError::function_error("url", e))
}

fn is_url(text: &CelString<'_>) -> CelBool {
    CelBool::from(read(text.inner(), true).is_ok())
}

fn get_scheme(url: &Url) -> CelString<'static> {
    CelString::from(url.scheme.clone())
}

fn get_host(url: &Url) -> CelString<'static> {
    CelString::from(url.host.clone())
}

fn get_hostname(url: &Url) -> CelString<'static> {
    CelString::from(url.host_and_port().0.to_owned())
}

fn get_port(url: &Url) -> CelString<'static> {
    CelString::from(url.host_and_port().1.to_owned())
}

fn get_escaped_path(url: &Url) -> CelString<'static> {
    CelString::from(url.escaped_path())
}

fn get_query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [url] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(1, args.len()));
    };
    let url = url
        .downcast_ref::<Url>()
        .ok_or_else(|| ExecutionError::function_error("getQuery", "needs a URL"))?;
    let map: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = url
        .values()
        .into_iter()
        .map(|(name, values)| {
            let list: Vec<Box<dyn Val + 'v>> = values
                .into_iter()
                .map(|v| Box::new(CelString::from(v)) as Box<dyn Val + 'v>)
                .collect();
            (
                CelMapKey::from(name),
                Box::new(CelList::from(list)) as Box<dyn Val + 'v>,
            )
        })
        .collect();
    Ok(CowVal::owned(CelMap::from(map)))
}
