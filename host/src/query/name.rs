//! Name search: a text that an object's name must contain, ignoring case,
//! checked once when a request is read.

use std::fmt;

use crate::store::fold_name;

/// The longest text accepted, in characters: the longest name most kinds
/// allow (a DNS subdomain, 253), so a longer text could match nothing.
pub const MAX_NAME_TEXT: usize = 253;

/// A text an object's name must contain, ignoring case (both folded with
/// [`fold_name`]).
///
/// Texts of three bytes or more are answered from the cache's name index
/// at a cost per match. Shorter ones (one or two ASCII characters, or one
/// accented letter) have no trigram: they are checked on every object the
/// query's other conditions leave, or on all of them, a scan that costs
/// per object (about 50 ms at 100,000 objects on a loaded 2-CPU machine,
/// BENCHMARKS.md) but never fails.
#[derive(Clone, PartialEq, Eq)]
pub struct NameContains {
    folded: Box<str>,
    /// Whether the folded text is ASCII: such a text can be compared with
    /// an ASCII name byte by byte, without folding the name first.
    ascii: bool,
}

/// Why a name text is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameTextError {
    /// Nothing to search for.
    #[error("the text is empty: give at least one character of the name")]
    Empty,
    /// Longer than any name.
    #[error("the text has {0} characters; no name has more than {MAX_NAME_TEXT}")]
    TooLong(usize),
    /// A character no object name can hold.
    #[error(
        "the text holds `{0}`, which no object name can; it searches names alone, not `namespace/name`"
    )]
    Impossible(char),
}

impl NameContains {
    /// Checks and folds a text. `/` and `%` are refused: the API server
    /// refuses them in every kind's names (they would break its paths).
    pub fn parse(text: &str) -> Result<NameContains, NameTextError> {
        if text.is_empty() {
            return Err(NameTextError::Empty);
        }
        let chars = text.chars().count();
        if chars > MAX_NAME_TEXT {
            return Err(NameTextError::TooLong(chars));
        }
        if let Some(c) = text.chars().find(|c| matches!(c, '/' | '%')) {
            return Err(NameTextError::Impossible(c));
        }
        let folded: Box<str> = fold_name(text).into();
        Ok(NameContains {
            ascii: folded.is_ascii(),
            folded,
        })
    }

    /// The text, folded: what the name index is asked.
    pub fn folded(&self) -> &str {
        &self.folded
    }

    /// Whether `name` contains the text, ignoring case.
    pub fn matches(&self, name: &str) -> bool {
        let needle = self.folded.as_bytes();
        if name.is_ascii() {
            // Folding an ASCII name only lower-cases it: compare in place.
            self.ascii
                && name
                    .as_bytes()
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle))
        } else {
            memchr::memmem::find(fold_name(name).as_bytes(), needle).is_some()
        }
    }
}

impl fmt::Debug for NameContains {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NameContains({:?})", self.folded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_ignoring_case() {
        let cases: [(&str, &str, bool); 12] = [
            ("web", "web-7d9f8c6b5-x2k4q", true),
            ("WEB-7D", "web-7d9f8c6b5-x2k4q", true),
            ("x2k4q", "Web-X2K4Q", true),
            ("q", "web-x2k4q", true),
            ("web-x", "web-7d9f8c6b5-x2k4q", false),
            ("-x2k4q-", "web-x2k4q", false),
            ("ünï", "Système-ÜNÏcode", true),
            ("SYSTÈ", "système", true),
            ("è", "systeme", false),
            // The Kelvin sign folds to `k`, an ASCII text.
            ("\u{212A}ube", "kube-proxy", true),
            ("kube", "\u{212A}UBE-proxy", true),
            ("aa", "aaa", true),
        ];
        for (text, name, want) in cases {
            let text = NameContains::parse(text).unwrap();
            assert_eq!(text.matches(name), want, "{text:?} in {name}");
        }
    }

    #[test]
    fn refuses_what_cannot_be_in_a_name() {
        assert_eq!(NameContains::parse(""), Err(NameTextError::Empty));
        let long = "a".repeat(254);
        assert_eq!(NameContains::parse(&long), Err(NameTextError::TooLong(254)));
        assert!(NameContains::parse(&"é".repeat(253)).is_ok());
        assert_eq!(
            NameContains::parse("shop/web"),
            Err(NameTextError::Impossible('/'))
        );
        assert_eq!(
            NameContains::parse("100%").unwrap_err().to_string(),
            "the text holds `%`, which no object name can; it searches names alone, not `namespace/name`"
        );
        assert_eq!(
            NameContains::parse("   ").unwrap().folded(),
            "   ",
            "some kinds' names hold spaces"
        );
    }
}
