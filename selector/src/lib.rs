//! Kubernetes label selectors, read exactly as the API server reads them.
//!
//! A label selector such as `app in (web,api),tier!=cache,!legacy` picks
//! objects by their labels. It is what `kubectl get -l` takes and what the
//! `labelSelector` parameter of a Kubernetes LIST or WATCH carries. This
//! crate parses one with the grammar and the validation of the API server
//! (`labels.Parse` in k8s.io/apimachinery), so a selector it accepts is one
//! the API server accepts and vice versa; matches objects' labels against
//! it; and writes it back in a canonical form. It depends on nothing but
//! `std` and builds for any target, WebAssembly included.
//!
//! ```
//! use std::collections::BTreeMap;
//! use grw_selector::{LabelSelector, Requirement};
//!
//! let selector: LabelSelector = "app in (web, api), tier!=cache, replicas>2".parse()?;
//!
//! let labels = BTreeMap::from([("app", "web"), ("replicas", "3")]);
//! assert!(selector.matches(|key| labels.get(key).copied()));
//!
//! assert_eq!(selector.requirements()[2], Requirement::GreaterThan {
//!     key: "replicas".into(),
//!     value: 2,
//! });
//! assert_eq!(selector.to_string(), "app in (api,web),tier!=cache,replicas>2");
//!
//! let error = "app in web".parse::<LabelSelector>().unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "label selector `app in web`: expected `(` after `in` at position 7, found `web`"
//! );
//! # Ok::<(), grw_selector::SelectorError>(())
//! ```
//!
//! # Requirements
//!
//! A selector is a comma-separated list of requirements, all of which must
//! hold. The empty selector (or one of only whitespace) has none and matches
//! everything.
//!
//! | requirement              | [`Requirement`]  | matches when the label ...                        |
//! |--------------------------|------------------|---------------------------------------------------|
//! | `k=v`, `k==v`            | `Equals`         | is present with the value `v`                     |
//! | `k!=v`                   | `NotEquals`      | is absent, or present with another value          |
//! | `k in (a,b)`             | `In`             | is present with one of the values                 |
//! | `k notin (a,b)`          | `NotIn`          | is absent, or present with none of the values     |
//! | `k`                      | `Exists`         | is present, with any value                        |
//! | `!k`                     | `DoesNotExist`   | is absent                                         |
//! | `k>n`                    | `GreaterThan`    | is present with an integer value greater than `n` |
//! | `k<n`                    | `LessThan`       | is present with an integer value less than `n`    |
//!
//! For `>` and `<`, `n` is a base-10 64-bit signed integer, and a label
//! whose value is not one (`"abc"`, `""`, a number beyond the 64-bit range)
//! matches neither. `gt` and `lt` are not operators: `k gt 1` is an error.
//!
//! # Grammar
//!
//! ```text
//! selector    = [ requirement *( "," requirement ) ]
//! requirement = "!" KEY
//!             | KEY [ ( "=" | "==" | "!=" | ">" | "<" ) [ VALUE ]
//!                   | ( "in" | "notin" ) "(" [ VALUE ] *( "," [ VALUE ] ) ")" ]
//! ```
//!
//! - **Tokens.** The text is read byte by byte. Whitespace is only space,
//!   tab, carriage return and line feed, and may appear between any two
//!   tokens. The symbols are `=`, `==`, `!=`, `!`, `(`, `)`, `,`, `<` and
//!   `>`; a run of symbol characters is split greedily into the longest
//!   symbols, so `===` is `==` then `=`, `!==v` is `!=` then `=v`, and `<=`
//!   is `<` then `=` (an error: there is no `<=`). Everything else, up to the
//!   next whitespace or symbol character, is one word: a key, a value, or
//!   the operator `in` or `notin`. Other Unicode spaces such as U+00A0 are
//!   therefore part of a word, which then is not a valid key or value.
//! - **Keywords.** `in` and `notin` are operators only right after a key.
//!   Where a key or a value is expected they are ordinary words:
//!   `in=x`, `k=in` and `k in (in,notin)` are all valid.
//! - **Empty values.** A value left out after `=`, `==` or `!=` (followed by
//!   `,` or the end) is the empty value: `k=` requires the label to be
//!   present and empty. In a set, an item left out between `(`, `,` and `)`
//!   is the empty value too: `k in (a,)`, `k in (,a)` and `k in (a,,b)` all
//!   contain `""`, and `k in ()` is the set holding only `""`. Duplicate
//!   values collapse; sets are kept sorted.
//! - **Negation.** `!k` takes nothing after the key: `!k=v` is an error.
//! - **Commas.** Every `,` must be followed by another requirement: `a=b,`,
//!   `,a` and `a,,b` are errors.
//! - **NUL.** The API server's lexer reads a 0 byte as the end of the text,
//!   and this one does the same: a NUL where a token would start ends the
//!   selector (`"a=b \0 junk"` is `a=b`), and a NUL right after a token ends
//!   that token and is skipped.
//!
//! # Keys and values
//!
//! Keys and values are checked with the rules the API server applies to
//! labels, so a selector that could never match a real object is reported
//! instead of silently matching nothing.
//!
//! - A **key** is `[prefix/]name`. The name is 1 to 63 characters of ASCII
//!   letters, digits, `-`, `_` and `.`, starting and ending with a letter or
//!   digit. The optional prefix is a DNS subdomain: at most 253 characters,
//!   dot-separated parts of lowercase letters, digits and `-` that start and
//!   end with a letter or digit. A key holds at most one `/`.
//! - A **value** (of every operator, the bounds of `>` and `<` included) is
//!   empty, or at most 63 characters of ASCII letters, digits, `-`, `_` and
//!   `.` starting and ending with a letter or digit. So the bound of `>` or
//!   `<` is written without a sign: `k>-1` is an error.
//!
//! # Errors
//!
//! A [`SelectorError`] says what was wrong and where, in words meant for
//! the person who wrote the selector; positions are 0-based character (not
//! byte) offsets into the text as given.
//!
//! # Differences from the API server
//!
//! None in what is accepted or rejected, nor in what matches. Two in
//! presentation: [`LabelSelector::requirements`] keeps the order in which the
//! requirements were written (the API server sorts them by key), and the
//! error messages are this crate's own.

#![warn(missing_docs)]

mod error;
mod lex;
mod parse;
mod validate;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

pub use error::SelectorError;

/// A parsed label selector: every requirement must hold.
///
/// Parse one with [`str::parse`] (it implements [`FromStr`]); its
/// [`Display`](fmt::Display) form is canonical and parses back to an equal
/// selector. The empty selector matches every object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// One condition on one label. The variants are the eight operators of the
/// Kubernetes selector syntax (`=` and `==` being the same).
///
/// A requirement built by hand is not validated: one with a key or value
/// the parser would reject, an empty set, or a negative bound for `>`/`<`
/// (which the syntax cannot express) displays as text that does not parse
/// back to it. An empty `In` set matches nothing and an empty `NotIn` set
/// everything.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// `key=value` or `key==value`: the label is present with this value.
    Equals {
        /// Label key.
        key: String,
        /// Required value; may be empty.
        value: String,
    },
    /// `key!=value`: the label is absent or has another value.
    NotEquals {
        /// Label key.
        key: String,
        /// Excluded value; may be empty.
        value: String,
    },
    /// `key in (a,b)`: the label is present with one of the values.
    In {
        /// Label key.
        key: String,
        /// Allowed values; may include the empty value.
        values: BTreeSet<String>,
    },
    /// `key notin (a,b)`: the label is absent or has none of the values.
    NotIn {
        /// Label key.
        key: String,
        /// Excluded values; may include the empty value.
        values: BTreeSet<String>,
    },
    /// `key`: the label is present, with any value.
    Exists {
        /// Label key.
        key: String,
    },
    /// `!key`: the label is absent.
    DoesNotExist {
        /// Label key.
        key: String,
    },
    /// `key>value` (Kubernetes' `Gt`): the label is present and its value is
    /// an integer greater than `value`.
    GreaterThan {
        /// Label key.
        key: String,
        /// The bound, exclusive.
        value: i64,
    },
    /// `key<value` (Kubernetes' `Lt`): the label is present and its value is
    /// an integer less than `value`.
    LessThan {
        /// Label key.
        key: String,
        /// The bound, exclusive.
        value: i64,
    },
}

/// Which test a [`Requirement`] applies, without its key and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `=` or `==`: [`Requirement::Equals`].
    Equals,
    /// `!=`: [`Requirement::NotEquals`].
    NotEquals,
    /// `in`: [`Requirement::In`].
    In,
    /// `notin`: [`Requirement::NotIn`].
    NotIn,
    /// A bare key: [`Requirement::Exists`].
    Exists,
    /// `!` before the key: [`Requirement::DoesNotExist`].
    DoesNotExist,
    /// `>`: [`Requirement::GreaterThan`].
    GreaterThan,
    /// `<`: [`Requirement::LessThan`].
    LessThan,
}

impl LabelSelector {
    /// The selector that matches every object (the empty selector).
    pub fn everything() -> Self {
        Self::default()
    }

    /// Builds a selector from requirements that must all hold. They are not
    /// validated (see [`Requirement`]).
    pub fn new(requirements: Vec<Requirement>) -> Self {
        Self { requirements }
    }

    /// Whether the selector has no requirements and so matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements, in the order they were written.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether an object's labels satisfy every requirement.
    ///
    /// `get(key)` returns the object's value for the label `key`, or `None`
    /// when the object does not have that label.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use grw_selector::LabelSelector;
    ///
    /// let labels = HashMap::from([("app".to_string(), "web".to_string())]);
    /// let selector: LabelSelector = "app=web,!debug".parse()?;
    /// assert!(selector.matches(|key| labels.get(key).map(String::as_str)));
    /// # Ok::<(), grw_selector::SelectorError>(())
    /// ```
    pub fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| r.matches(get(r.key())))
    }
}

impl Requirement {
    /// The label key this requirement is about.
    pub fn key(&self) -> &str {
        match self {
            Self::Equals { key, .. }
            | Self::NotEquals { key, .. }
            | Self::In { key, .. }
            | Self::NotIn { key, .. }
            | Self::Exists { key }
            | Self::DoesNotExist { key }
            | Self::GreaterThan { key, .. }
            | Self::LessThan { key, .. } => key,
        }
    }

    /// Which test this requirement applies.
    pub fn operator(&self) -> Operator {
        match self {
            Self::Equals { .. } => Operator::Equals,
            Self::NotEquals { .. } => Operator::NotEquals,
            Self::In { .. } => Operator::In,
            Self::NotIn { .. } => Operator::NotIn,
            Self::Exists { .. } => Operator::Exists,
            Self::DoesNotExist { .. } => Operator::DoesNotExist,
            Self::GreaterThan { .. } => Operator::GreaterThan,
            Self::LessThan { .. } => Operator::LessThan,
        }
    }

    /// Whether the requirement holds for an object whose label
    /// [`key`](Self::key) has `value` (`None`: the object does not have the
    /// label).
    pub fn matches(&self, value: Option<&str>) -> bool {
        let integer = || value.and_then(|v| v.parse::<i64>().ok());
        match self {
            Self::Equals { value: wanted, .. } => value == Some(wanted.as_str()),
            // As in Kubernetes, an object without the label is "not equal".
            Self::NotEquals { value: wanted, .. } => value != Some(wanted.as_str()),
            Self::In { values, .. } => value.is_some_and(|v| values.contains(v)),
            Self::NotIn { values, .. } => !value.is_some_and(|v| values.contains(v)),
            Self::Exists { .. } => value.is_some(),
            Self::DoesNotExist { .. } => value.is_none(),
            Self::GreaterThan { value: bound, .. } => integer().is_some_and(|v| v > *bound),
            Self::LessThan { value: bound, .. } => integer().is_some_and(|v| v < *bound),
        }
    }
}

impl FromStr for LabelSelector {
    type Err = SelectorError;

    /// Parses the Kubernetes label selector syntax; `""` matches everything.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        parse::parse(input)
    }
}

/// The canonical form: requirements in their order, joined by `,`, with no
/// spaces except around `in`/`notin`, and sets sorted, e.g.
/// `app=web,tier in (a,b),!debug,replicas>2`.
impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, requirement) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

/// One requirement in selector syntax, e.g. `tier in (a,b)`. The set
/// holding only the empty value is written `()`.
impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Equals { key, value } => write!(f, "{key}={value}"),
            Self::NotEquals { key, value } => write!(f, "{key}!={value}"),
            Self::In { key, values } => write!(f, "{key} in ({})", SetList(values)),
            Self::NotIn { key, values } => write!(f, "{key} notin ({})", SetList(values)),
            Self::Exists { key } => f.write_str(key),
            Self::DoesNotExist { key } => write!(f, "!{key}"),
            Self::GreaterThan { key, value } => write!(f, "{key}>{value}"),
            Self::LessThan { key, value } => write!(f, "{key}<{value}"),
        }
    }
}

/// The inside of a value set's parentheses: the values joined by `,`.
struct SetList<'a>(&'a BTreeSet<String>);

impl fmt::Display for SetList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, value) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(value)?;
        }
        Ok(())
    }
}
