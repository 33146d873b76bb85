//! Continue tokens: opaque to clients, the last key of the previous page
//! inside, and, for the Kubernetes routes, the resourceVersion of the list's
//! first page (the API server's tokens carry it too: every page of a list
//! reports the first page's resourceVersion).

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::store::ObjectKey;

/// Version prefix, so a later format can tell old tokens apart.
const PREFIX: &str = "k1:";
/// The prefix of tokens that carry a resourceVersion.
const PREFIX_AT: &str = "k2:";

/// Where the next page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueToken {
    key: ObjectKey,
    resource_version: Option<u64>,
}

/// A `continue` value that GRW did not issue.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`continue` token is not valid: pass the `continue` value of the previous page unchanged")]
pub struct InvalidContinue;

impl ContinueToken {
    /// A token continuing after `key`.
    pub fn after(key: &ObjectKey) -> Self {
        ContinueToken {
            key: key.clone(),
            resource_version: None,
        }
    }

    /// A token continuing after `key` a list whose first page was read at
    /// `resource_version`.
    pub fn after_at(key: &ObjectKey, resource_version: u64) -> Self {
        ContinueToken {
            key: key.clone(),
            resource_version: Some(resource_version),
        }
    }

    /// The last key of the previous page.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// The resourceVersion of the list's first page, if the token carries one.
    pub fn resource_version(&self) -> Option<u64> {
        self.resource_version
    }

    /// Parses a token from a request.
    pub fn parse(token: &str) -> Result<Self, InvalidContinue> {
        let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| InvalidContinue)?;
        let text = String::from_utf8(bytes).map_err(|_| InvalidContinue)?;
        let (resource_version, key) = match text.strip_prefix(PREFIX_AT) {
            Some(rest) => {
                let (rv, key) = rest.split_once('\0').ok_or(InvalidContinue)?;
                (Some(rv.parse().map_err(|_| InvalidContinue)?), key)
            }
            None => (None, text.strip_prefix(PREFIX).ok_or(InvalidContinue)?),
        };
        let (namespace, name) = key.split_once('\0').ok_or(InvalidContinue)?;
        if name.is_empty() {
            return Err(InvalidContinue);
        }
        Ok(ContinueToken {
            key: ObjectKey::new(namespace, name),
            resource_version,
        })
    }
}

impl fmt::Display for ContinueToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (namespace, name) = (self.key.namespace(), self.key.name());
        let raw = match self.resource_version {
            Some(rv) => format!("{PREFIX_AT}{rv}\0{namespace}\0{name}"),
            None => format!("{PREFIX}{namespace}\0{name}"),
        };
        f.write_str(&URL_SAFE_NO_PAD.encode(raw))
    }
}
