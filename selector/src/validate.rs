//! The rules the API server applies to label keys and values
//! (k8s.io/apimachinery `validation.IsQualifiedName` and
//! `validation.IsValidLabelValue`).

/// Longest label name (the part of a key after any `/`) and label value.
pub(crate) const MAX_NAME_LEN: usize = 63;
/// Longest key prefix (the DNS subdomain before `/`).
pub(crate) const MAX_PREFIX_LEN: usize = 253;

/// Why `key` is not a valid label key (an optional DNS-subdomain prefix and
/// `/`, then a name), or `None` if it is.
pub(crate) fn key_problem(key: &str) -> Option<String> {
    let name = match key.split_once('/') {
        None => key,
        Some((_, name)) if name.contains('/') => {
            return Some("a key may contain at most one `/`".to_string());
        }
        Some((prefix, name)) => {
            if prefix.is_empty() {
                return Some("the prefix before `/` is empty".to_string());
            }
            if prefix.chars().count() > MAX_PREFIX_LEN {
                return Some(format!(
                    "the prefix before `/` is longer than {MAX_PREFIX_LEN} characters"
                ));
            }
            if !is_dns_subdomain(prefix) {
                return Some(
                    "the prefix before `/` must be a DNS subdomain: lowercase letters, digits, \
                     `-` and `.`, with each dot-separated part starting and ending with a letter \
                     or digit"
                        .to_string(),
                );
            }
            name
        }
    };
    if name.is_empty() {
        return Some("the name is empty".to_string());
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Some(format!("the name is longer than {MAX_NAME_LEN} characters"));
    }
    if !is_name(name) {
        return Some(
            "the name must consist of letters, digits, `-`, `_` and `.`, and start and end \
             with a letter or digit"
                .to_string(),
        );
    }
    None
}

/// Why `value` is not a valid value for `key`, or `None` if it is.
pub(crate) fn value_problem(key: &str, value: &str) -> Option<String> {
    if value.chars().count() > MAX_NAME_LEN {
        Some(format!(
            "value of `{key}` is longer than {MAX_NAME_LEN} characters"
        ))
    } else if !is_name(value) {
        Some(format!(
            "value `{value}` of `{key}` is not a valid label value: it must consist of \
             letters, digits, `-`, `_` and `.`, and start and end with a letter or digit"
        ))
    } else {
        None
    }
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, or empty (a valid label
/// value; names are checked for emptiness first).
fn is_name(s: &str) -> bool {
    let bytes = s.as_bytes();
    let edges_ok = match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric(),
        _ => true,
    };
    edges_ok
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Lowercase RFC 1123 subdomain: dot-separated `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns_subdomain(s: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    s.split('.').all(|part| match part.as_bytes() {
        [] => false,
        bytes => {
            alnum(bytes[0])
                && alnum(bytes[bytes.len() - 1])
                && bytes.iter().all(|&b| alnum(b) || b == b'-')
        }
    })
}
