//! The `token` access mode: every caller sends one shared bearer token,
//! read from `apiTokenFile`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;

use crate::api::Problem;

/// Why the API token file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The file cannot be read.
    #[error("cannot read the API token file {} (apiTokenFile)", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file holds no token, which would let anyone in.
    #[error("the API token file {} (apiTokenFile) is empty; write the token API clients must send into it", .path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// The token clients must send, read from a file and re-read when the file changes.
pub struct ApiToken {
    path: PathBuf,
    cached: Mutex<(Option<SystemTime>, Arc<str>)>,
}

impl ApiToken {
    /// Reads the token file; an empty file is an error (it would let anyone in).
    pub fn load(path: PathBuf) -> Result<ApiToken, TokenError> {
        let (modified, token) = read(&path)?;
        Ok(ApiToken {
            path,
            cached: Mutex::new((modified, token)),
        })
    }

    /// The current token, re-read if the file's modification time changed.
    fn current(&self) -> Arc<str> {
        let modified = std::fs::metadata(&self.path)
            .and_then(|m| m.modified())
            .ok();
        let mut cached = self.cached.lock();
        if modified != cached.0 {
            match read(&self.path) {
                Ok(fresh) => *cached = fresh,
                // Keep the last good token: a rotation in progress must not lock everyone out.
                Err(e) => {
                    tracing::warn!(error = %crate::error::Report(&e), "API token file unreadable, keeping the previous token")
                }
            }
        }
        cached.1.clone()
    }
}

fn read(path: &PathBuf) -> Result<(Option<SystemTime>, Arc<str>), TokenError> {
    let text = std::fs::read_to_string(path).map_err(|source| TokenError::Read {
        path: path.clone(),
        source,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(TokenError::Empty { path: path.clone() });
    }
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    Ok((modified, token.into()))
}

impl ApiToken {
    /// Whether the request carries the token, as `Authorization: Bearer <token>`.
    pub(super) fn admits(&self, headers: &HeaderMap) -> bool {
        let given = super::bearer::bearer_token(headers);
        let expected = self.current();
        given.is_some_and(|g| constant_time_eq(g.as_bytes(), expected.as_bytes()))
    }
}

/// The answer to a request without the token.
pub(super) fn refusal() -> Response {
    let mut response = Problem::new(
        StatusCode::UNAUTHORIZED,
        "Unauthorized",
        "this API needs `Authorization: Bearer <token>` with the token of the configured apiTokenFile",
    )
    .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// Compares without an early exit, so timing does not reveal a prefix of the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_file_is_reread_when_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "first\n").unwrap();
        let token = ApiToken::load(path.clone()).unwrap();
        assert_eq!(&*token.current(), "first");
        std::fs::write(&path, "second").unwrap();
        // Make sure the modification time differs even on coarse clocks.
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(&*token.current(), "second");

        std::fs::write(&path, "").unwrap();
        let err = ApiToken::load(path.clone()).err().unwrap().to_string();
        assert_eq!(
            err,
            format!(
                "the API token file {} (apiTokenFile) is empty; write the token API clients must send into it",
                path.display()
            )
        );
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
