//! Showing errors to people: an error with the chain of its causes.

use std::fmt;

/// Displays an error followed by each of its sources, `: `-separated, e.g.
/// `cannot open the outbox /data/grw.redb: I/O error: Permission denied`.
/// Errors of this crate keep their causes as sources rather than in their
/// own message, so logs and answers use this to say everything once.
pub struct Report<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot open the outbox")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn shows_every_cause_once() {
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(Report(&e).to_string(), "cannot open the outbox: disk full");
    }
}
