//! The SDK's error type.

use std::fmt;

/// Why an SDK operation failed: invalid JSON, a malformed label selector or
/// field path, an object that does not fit the requested type.
///
/// It is a message meant for people; plugins usually hand it to the operator
/// (`init` errors) or log it. `?` converts it into the `String` errors that
/// plugin trait methods return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with the given message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for String {
    fn from(error: Error) -> Self {
        error.message
    }
}
