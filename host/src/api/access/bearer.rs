//! `Authorization: Bearer <token>`, read once for every access mode, as
//! RFC 6750 (section 2.1) writes it: the scheme, one or more spaces, the
//! token. The scheme is read in any case (RFC 9110, section 11.1: an
//! authentication scheme is case-insensitive), as the API server reads it.

use axum::http::{HeaderMap, header};

/// The bearer token of a request's `Authorization` header, if it has one:
/// none for another scheme, an empty token, or a value with more than a
/// scheme and a token in it.
pub(super) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    parse(value)
}

/// The token of an `Authorization` header's value.
fn parse(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim_start_matches(' ');
    let whole = !token.is_empty() && !token.contains(|c: char| c.is_ascii_whitespace());
    (scheme.eq_ignore_ascii_case("bearer") && whole).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_token_of_a_bearer_header_only() {
        #[rustfmt::skip]
        let cases = [
            ("Bearer abc", Some("abc")),
            // The scheme in any case.
            ("bearer abc", Some("abc")),
            ("BEARER abc", Some("abc")),
            ("BeArEr abc", Some("abc")),
            // One or more spaces after it; spaces around the value.
            ("Bearer   abc", Some("abc")),
            ("  Bearer abc  ", Some("abc")),
            // A token's own characters, padding included.
            ("Bearer a-b.c_d~e+f/g==", Some("a-b.c_d~e+f/g==")),
            // No token.
            ("Bearer", None),
            ("Bearer ", None),
            ("Bearer    ", None),
            ("", None),
            // Not one token.
            ("Bearer abc def", None),
            ("Bearer\tabc", None),
            ("Bearer abc\tdef", None),
            // Other schemes, and a scheme run into its token.
            ("Basic amFuZTpwdw==", None),
            ("Token abc", None),
            ("Bearerabc", None),
            ("Bearer-x abc", None),
        ];
        for (value, want) in cases {
            assert_eq!(parse(value), want, "{value:?}");
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            assert_eq!(bearer_token(&headers), want, "{value:?} in a header");
        }
        assert_eq!(bearer_token(&HeaderMap::new()), None, "no header");
        let mut headers = HeaderMap::new();
        let not_text = HeaderValue::from_bytes(b"Bearer \xff").unwrap();
        headers.insert(header::AUTHORIZATION, not_text);
        assert_eq!(bearer_token(&headers), None, "a value that is not text");
    }
}
