//! Kubernetes label selectors.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;

use crate::{Error, Event, Object};

/// A Kubernetes label selector, in the syntax `kubectl -l` takes.
///
/// | requirement            | matches when the label ...            |
/// |------------------------|---------------------------------------|
/// | `app=web`, `app==web`  | is present with that value            |
/// | `app!=web`             | is absent or has another value        |
/// | `app in (web,api)`     | is present with one of the values     |
/// | `app notin (web,api)`  | is absent or has none of the values   |
/// | `app`                  | is present                            |
/// | `!app`                 | is absent                             |
/// | `replicas>2`, `n<10`   | is present and an integer above/below |
///
/// Requirements are separated by commas and must all hold; the empty
/// selector matches everything. Keys (`[prefix/]name`) and values are
/// checked against the rules Kubernetes applies, so a selector that GRW
/// accepts is one the API server accepts too.
///
/// ```
/// use grw_sdk::LabelSelector;
///
/// let selector = LabelSelector::parse("app in (web,api),tier!=cache")?;
/// assert!(selector.matches(&[("app", "web")]));
/// assert!(!selector.matches(&[("app", "web"), ("tier", "cache")]));
/// assert!(LabelSelector::parse("app in web").is_err());
/// # Ok::<(), grw_sdk::Error>(())
/// ```
///
/// It also deserializes from a string, so a plugin configuration can hold
/// one directly; a malformed selector is then a configuration error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// One requirement of a [`LabelSelector`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// What the label must satisfy.
    pub operator: Operator,
}

/// The test a [`Requirement`] applies to its label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key in (...)`, `key=value`, `key==value`.
    In(BTreeSet<String>),
    /// `key notin (...)`, `key!=value`.
    NotIn(BTreeSet<String>),
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>n`.
    GreaterThan(i64),
    /// `key<n`.
    LessThan(i64),
}

impl Requirement {
    /// Whether the label value (`None` when absent) satisfies this requirement.
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        match (&self.operator, value) {
            (Operator::In(values), Some(v)) => values.contains(v),
            (Operator::In(_), None) => false,
            (Operator::NotIn(values), Some(v)) => !values.contains(v),
            (Operator::NotIn(_), None) => true,
            (Operator::Exists, v) => v.is_some(),
            (Operator::DoesNotExist, v) => v.is_none(),
            (Operator::GreaterThan(n), Some(v)) => v.parse::<i64>().is_ok_and(|v| v > *n),
            (Operator::LessThan(n), Some(v)) => v.parse::<i64>().is_ok_and(|v| v < *n),
            (Operator::GreaterThan(_) | Operator::LessThan(_), None) => false,
        }
    }
}

/// Anything labels can be looked up in: [`Event`], [`Object`], maps and
/// lists of pairs.
pub trait Labels {
    /// The value of the label `key`, if present.
    fn get_label(&self, key: &str) -> Option<&str>;
}

impl<T: Labels + ?Sized> Labels for &T {
    fn get_label(&self, key: &str) -> Option<&str> {
        (**self).get_label(key)
    }
}

impl Labels for Event {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.label(key)
    }
}

impl Labels for Object {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.label(key)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Labels for [(K, V)] {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| v.as_ref())
    }
}

impl<K: AsRef<str>, V: AsRef<str>, const N: usize> Labels for [(K, V); N] {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.as_slice().get_label(key)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Labels for Vec<(K, V)> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.as_slice().get_label(key)
    }
}

impl<V: AsRef<str>> Labels for BTreeMap<String, V> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.get(key).map(AsRef::as_ref)
    }
}

impl<V: AsRef<str>> Labels for BTreeMap<&str, V> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.get(key).map(AsRef::as_ref)
    }
}

impl<V: AsRef<str>, S: std::hash::BuildHasher> Labels for HashMap<String, V, S> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.get(key).map(AsRef::as_ref)
    }
}

impl LabelSelector {
    /// Parses a selector; the error says what is wrong and where.
    pub fn parse(text: &str) -> Result<Self, Error> {
        Parser::new(text).parse().map_err(|(at, why)| {
            Error::new(format!(
                "invalid label selector {text:?} at column {}: {why}",
                at + 1
            ))
        })
    }

    /// The selector that matches everything.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Whether this selector has no requirements (and so matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements, all of which must hold.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(labels.get_label(&r.key)))
    }
}

impl FromStr for LabelSelector {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse(text)
    }
}

impl fmt::Display for LabelSelector {
    /// The canonical form, which parses back to the same selector.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let key = &r.key;
            let join = |values: &BTreeSet<String>| {
                values
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            match &r.operator {
                Operator::In(values) if values.len() == 1 => write!(f, "{key}={}", join(values))?,
                Operator::NotIn(values) if values.len() == 1 => {
                    write!(f, "{key}!={}", join(values))?
                }
                Operator::In(values) => write!(f, "{key} in ({})", join(values))?,
                Operator::NotIn(values) => write!(f, "{key} notin ({})", join(values))?,
                Operator::Exists => write!(f, "{key}")?,
                Operator::DoesNotExist => write!(f, "!{key}")?,
                Operator::GreaterThan(n) => write!(f, "{key}>{n}")?,
                Operator::LessThan(n) => write!(f, "{key}<{n}")?,
            }
        }
        Ok(())
    }
}

impl<'de> serde::Deserialize<'de> for LabelSelector {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    Greater,
    Less,
    Comma,
    Open,
    Close,
    In,
    NotIn,
    End,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Word(w) => format!("`{w}`"),
            Token::Not => "`!`".into(),
            Token::Equals => "`=`".into(),
            Token::DoubleEquals => "`==`".into(),
            Token::NotEquals => "`!=`".into(),
            Token::Greater => "`>`".into(),
            Token::Less => "`<`".into(),
            Token::Comma => "`,`".into(),
            Token::Open => "`(`".into(),
            Token::Close => "`)`".into(),
            Token::In => "`in`".into(),
            Token::NotIn => "`notin`".into(),
            Token::End => "the end".into(),
        }
    }
}

type ParseError = (usize, String);

/// Splits the selector into tokens the way Kubernetes' lexer does: words run
/// until whitespace or one of `!=,()<>`.
fn tokenize(text: &str) -> Vec<(usize, Token)> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let token = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'!' if bytes.get(i + 1) == Some(&b'=') => {
                i += 2;
                Token::NotEquals
            }
            b'!' => {
                i += 1;
                Token::Not
            }
            b'=' if bytes.get(i + 1) == Some(&b'=') => {
                i += 2;
                Token::DoubleEquals
            }
            b'=' => {
                i += 1;
                Token::Equals
            }
            b'>' => {
                i += 1;
                Token::Greater
            }
            b'<' => {
                i += 1;
                Token::Less
            }
            b',' => {
                i += 1;
                Token::Comma
            }
            b'(' => {
                i += 1;
                Token::Open
            }
            b')' => {
                i += 1;
                Token::Close
            }
            _ => {
                while i < bytes.len() && !b" \t\n\r!=<>,()".contains(&bytes[i]) {
                    i += 1;
                }
                match &text[start..i] {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    word => Token::Word(word.to_owned()),
                }
            }
        };
        tokens.push((start, token));
    }
    tokens.push((text.len(), Token::End));
    tokens
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    next: usize,
}

impl Parser {
    fn new(text: &str) -> Self {
        Self {
            tokens: tokenize(text),
            next: 0,
        }
    }

    fn peek(&self) -> &(usize, Token) {
        &self.tokens[self.next]
    }

    fn advance(&mut self) -> (usize, Token) {
        let token = self.tokens[self.next].clone();
        if token.1 != Token::End {
            self.next += 1;
        }
        token
    }

    fn parse(mut self) -> Result<LabelSelector, ParseError> {
        let mut requirements = Vec::new();
        if self.peek().1 == Token::End {
            return Ok(LabelSelector { requirements });
        }
        loop {
            requirements.push(self.requirement()?);
            match self.advance() {
                (_, Token::End) => break,
                (_, Token::Comma) => {}
                (at, other) => {
                    return Err((
                        at,
                        format!(
                            "expected `,` or the end after a requirement, found {}",
                            other.describe()
                        ),
                    ));
                }
            }
        }
        Ok(LabelSelector { requirements })
    }

    fn requirement(&mut self) -> Result<Requirement, ParseError> {
        if self.peek().1 == Token::Not {
            self.advance();
            let key = self.key()?;
            return Ok(Requirement {
                key,
                operator: Operator::DoesNotExist,
            });
        }
        let key = self.key()?;
        let operator = match self.peek().1 {
            Token::Comma | Token::End => Operator::Exists,
            Token::Equals | Token::DoubleEquals => {
                self.advance();
                Operator::In(BTreeSet::from([self.value()?]))
            }
            Token::NotEquals => {
                self.advance();
                Operator::NotIn(BTreeSet::from([self.value()?]))
            }
            Token::In => {
                self.advance();
                Operator::In(self.value_set()?)
            }
            Token::NotIn => {
                self.advance();
                Operator::NotIn(self.value_set()?)
            }
            Token::Greater => {
                self.advance();
                Operator::GreaterThan(self.integer()?)
            }
            Token::Less => {
                self.advance();
                Operator::LessThan(self.integer()?)
            }
            ref other => {
                let found = other.describe();
                return Err((
                    self.peek().0,
                    format!(
                        "expected an operator (`=`, `==`, `!=`, `in`, `notin`, `>`, `<`) or `,` after key `{key}`, found {found}"
                    ),
                ));
            }
        };
        Ok(Requirement { key, operator })
    }

    fn key(&mut self) -> Result<String, ParseError> {
        match self.advance() {
            (at, Token::Word(word)) => {
                check_key(&word).map_err(|why| (at, why))?;
                Ok(word)
            }
            (at, other) => Err((
                at,
                format!("expected a label key, found {}", other.describe()),
            )),
        }
    }

    /// A value after `=`/`!=`; Kubernetes allows it to be empty (`app=`).
    fn value(&mut self) -> Result<String, ParseError> {
        match self.peek().clone() {
            (at, Token::Word(word)) => {
                self.advance();
                check_value(&word).map_err(|why| (at, why))?;
                Ok(word)
            }
            (_, Token::Comma | Token::End) => Ok(String::new()),
            (at, other) => Err((
                at,
                format!("expected a label value, found {}", other.describe()),
            )),
        }
    }

    /// `(a, b, c)`; as in Kubernetes, an empty slot is the empty value.
    fn value_set(&mut self) -> Result<BTreeSet<String>, ParseError> {
        match self.advance() {
            (_, Token::Open) => {}
            (at, other) => {
                return Err((
                    at,
                    format!(
                        "expected `(` to start a set of values, found {}",
                        other.describe()
                    ),
                ));
            }
        }
        let mut values = BTreeSet::new();
        loop {
            let value = match self.peek().clone() {
                (at, Token::Word(word)) => {
                    self.advance();
                    check_value(&word).map_err(|why| (at, why))?;
                    word
                }
                (_, Token::Comma | Token::Close) => String::new(),
                (at, other) => {
                    return Err((
                        at,
                        format!(
                            "expected a label value, `,` or `)` in a set of values, found {}",
                            other.describe()
                        ),
                    ));
                }
            };
            values.insert(value);
            match self.advance() {
                (_, Token::Comma) => {}
                (_, Token::Close) => return Ok(values),
                (at, other) => {
                    return Err((
                        at,
                        format!(
                            "expected `,` or `)` in a set of values, found {}",
                            other.describe()
                        ),
                    ));
                }
            }
        }
    }

    fn integer(&mut self) -> Result<i64, ParseError> {
        match self.advance() {
            (at, Token::Word(word)) => word
                .parse()
                .map_err(|_| (at, format!("`>` and `<` need an integer, found `{word}`"))),
            (at, other) => Err((
                at,
                format!("`>` and `<` need an integer, found {}", other.describe()),
            )),
        }
    }
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name.
fn check_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let valid = !prefix.is_empty()
            && prefix.len() <= 253
            && prefix.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !part.starts_with('-')
                    && !part.ends_with('-')
            });
        if !valid {
            return Err(format!(
                "label key `{key}`: the prefix before `/` must be a DNS subdomain (lowercase letters, digits, `-` and `.`, at most 253 characters)"
            ));
        }
    }
    if name.is_empty() || !is_label_name(name) {
        return Err(format!(
            "label key `{key}`: the name must be 1-63 characters of letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"
        ));
    }
    Ok(())
}

fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() || is_label_name(value) {
        Ok(())
    } else {
        Err(format!(
            "label value `{value}` must be at most 63 characters of letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"
        ))
    }
}

fn is_label_name(s: &str) -> bool {
    let bytes = s.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(text: &str) -> LabelSelector {
        LabelSelector::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(text: &str) -> String {
        LabelSelector::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn empty_selector_matches_everything() {
        for text in ["", "   "] {
            let s = sel(text);
            assert!(s.is_empty());
            assert!(s.matches(&[("a", "b")]));
            assert!(s.matches::<[(&str, &str)]>(&[]));
        }
    }

    #[test]
    fn equality() {
        let s = sel("app=web");
        assert!(s.matches(&[("app", "web")]));
        assert!(!s.matches(&[("app", "api")]));
        assert!(!s.matches::<[(&str, &str)]>(&[]));
        assert_eq!(sel("app==web"), s);
        assert_eq!(sel(" app = web "), s);

        let s = sel("app!=web");
        assert!(!s.matches(&[("app", "web")]));
        assert!(s.matches(&[("app", "api")]));
        assert!(s.matches::<[(&str, &str)]>(&[]));
    }

    #[test]
    fn sets() {
        let s = sel("app in (web, api),tier notin (cache)");
        assert!(s.matches(&[("app", "web")]));
        assert!(s.matches(&[("app", "api"), ("tier", "front")]));
        assert!(!s.matches(&[("app", "api"), ("tier", "cache")]));
        assert!(!s.matches(&[("app", "db")]));
        assert!(!s.matches(&[("tier", "front")]));
        assert_eq!(s.requirements().len(), 2);
        // An empty slot is the empty value, as in Kubernetes.
        assert!(sel("a in (x,)").matches(&[("a", "")]));
        assert!(sel("a in ()").matches(&[("a", "")]));
    }

    #[test]
    fn existence() {
        let s = sel("app,!legacy");
        assert!(s.matches(&[("app", "")]));
        assert!(!s.matches(&[("app", "x"), ("legacy", "true")]));
        assert!(!s.matches(&[("other", "x")]));
    }

    #[test]
    fn integers() {
        let s = sel("replicas>2,replicas<10");
        assert!(s.matches(&[("replicas", "5")]));
        assert!(!s.matches(&[("replicas", "2")]));
        assert!(!s.matches(&[("replicas", "x")]));
        assert!(!s.matches::<[(&str, &str)]>(&[]));
        assert!(err("n>x").contains("integer"));
    }

    #[test]
    fn keys_with_prefix_and_empty_values() {
        let s = sel("app.kubernetes.io/name=shop,empty=");
        assert!(s.matches(&[("app.kubernetes.io/name", "shop"), ("empty", "")]));
        assert!(!s.matches(&[("app.kubernetes.io/name", "shop"), ("empty", "x")]));
    }

    #[test]
    fn matches_events_objects_and_maps() {
        let object = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}}});
        let event = Event::new(crate::EventType::Added, object.clone());
        let s = sel("app=web");
        assert!(s.matches(&event));
        assert!(s.matches(&Object::new(object)));
        assert!(s.matches(&BTreeMap::from([("app".to_owned(), "web".to_owned())])));
        assert!(s.matches(&HashMap::from([("app".to_owned(), "web")])));
        assert!(s.matches(&vec![("app".to_owned(), "web".to_owned())]));
    }

    #[test]
    fn malformed_selectors_are_rejected_with_a_reason() {
        assert!(
            err("app in web").contains("expected `(`"),
            "{}",
            err("app in web")
        );
        assert!(err("app in (web").contains("`)`"));
        assert!(err("app=web,").contains("expected a label key"));
        assert!(err(",app").contains("expected a label key"));
        assert!(err("app web").contains("expected an operator"));
        assert!(err("app=(web)").contains("expected a label value"));
        assert!(err("-app=web").contains("label key `-app`"));
        assert!(err("Bad_Prefix/app=x").contains("prefix"));
        assert!(err("a=b c").contains("expected `,`"));
        assert!(err("app=-web").contains("label value `-web`"));
        assert!(err(&format!("a={}", "x".repeat(64))).contains("63"));
        assert!(LabelSelector::parse("app==").is_ok());
        let e = err("app in web");
        assert!(e.contains("column 8"), "{e}");
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "app in (api,web),tier!=cache",
            "a=b,!c,d,e notin (x,y),n>1,m<2",
        ] {
            let s = sel(text);
            assert_eq!(sel(&s.to_string()), s);
        }
        assert_eq!(sel("app in (web)").to_string(), "app=web");
    }

    #[test]
    fn deserializes_from_a_string() {
        let s: LabelSelector = serde_json::from_str(r#""app=web""#).unwrap();
        assert_eq!(s, sel("app=web"));
        let e = serde_json::from_str::<LabelSelector>(r#""app in web""#).unwrap_err();
        assert!(e.to_string().contains("invalid label selector"));
    }
}
