//! Continue tokens: opaque to clients, the last key of the previous page inside.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::store::ObjectKey;

/// Version prefix, so a later format can tell old tokens apart.
const PREFIX: &str = "k1:";

/// Where the next page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueToken(ObjectKey);

/// A `continue` value that GRW did not issue.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`continue` token is not valid: pass the `continue` value of the previous page unchanged")]
pub struct InvalidContinue;

impl ContinueToken {
    /// A token continuing after `key`.
    pub fn after(key: &ObjectKey) -> Self {
        ContinueToken(key.clone())
    }

    /// The last key of the previous page.
    pub fn key(&self) -> &ObjectKey {
        &self.0
    }

    /// Parses a token from a request.
    pub fn parse(token: &str) -> Result<Self, InvalidContinue> {
        let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| InvalidContinue)?;
        let text = String::from_utf8(bytes).map_err(|_| InvalidContinue)?;
        let key = text.strip_prefix(PREFIX).ok_or(InvalidContinue)?;
        let (namespace, name) = key.split_once('\0').ok_or(InvalidContinue)?;
        if name.is_empty() {
            return Err(InvalidContinue);
        }
        Ok(ContinueToken(ObjectKey::new(namespace, name)))
    }
}

impl fmt::Display for ContinueToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = format!("{PREFIX}{}\0{}", self.0.namespace(), self.0.name());
        f.write_str(&URL_SAFE_NO_PAD.encode(raw))
    }
}
