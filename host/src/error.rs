//! Showing errors to people: an error with the chain of its causes.

use std::fmt;

/// Displays an error followed by each of its sources, `: `-separated, e.g.
/// `cannot open the outbox /data/grw.redb: I/O error: Permission denied`.
/// Errors of this crate keep their causes as sources rather than in their
/// own message, so logs and answers use this to say everything once. Some
/// errors of other crates repeat their source in their own message; a cause
/// whose text was already said is left out.
pub struct Report<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut said = self.0.to_string();
        let mut source = self.0.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !said.contains(&text) {
                said.push_str(": ");
                said.push_str(&text);
            }
            source = cause.source();
        }
        f.write_str(&said)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot open the outbox")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("client failed: {0}")]
    struct Repeating(#[source] std::io::Error);

    #[test]
    fn shows_every_cause_once() {
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(Report(&e).to_string(), "cannot open the outbox: disk full");
        let e = Repeating(std::io::Error::other("disk full"));
        assert_eq!(Report(&e).to_string(), "client failed: disk full");
    }
}
