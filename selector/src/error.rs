//! The error a selector that does not parse gives.

use std::error::Error;
use std::fmt;

/// A label selector that could not be parsed, or that names a key or value
/// the API server would reject.
///
/// It displays as ``label selector `<input>`: <reason>``, for example
///
/// ```text
/// label selector `tier in a`: expected `(` after `in` at position 8, found `a`
/// ```
///
/// The message is meant for users: it says what was wrong and where, and can
/// be shown as it is (in an HTTP 400 answer, a configuration error, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorError {
    input: String,
    reason: String,
    position: usize,
}

impl SelectorError {
    pub(crate) fn new(input: &str, reason: String, position: usize) -> Self {
        Self {
            input: input.to_string(),
            reason,
            position,
        }
    }

    /// The selector exactly as it was given.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// What was wrong and where, without the selector itself, e.g.
    /// ``expected `(` after `in` at position 8, found `a` ``.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Where the problem is: a 0-based character (not byte) offset into
    /// [`input`](Self::input). It is the start of the offending token (or key,
    /// or value), or the length of the input when the selector ended too
    /// early. The [`reason`](Self::reason) mentions the same position.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "label selector `{}`: {}", self.input, self.reason)
    }
}

impl Error for SelectorError {}
