//! Label selectors in the Kubernetes syntax: `app=web,tier in (a,b),!debug`.
//!
//! A selector is a comma-separated list of requirements that must all hold.
//! Each requirement is one of `k=v` (or `k==v`), `k!=v`, `k in (a,b)`,
//! `k notin (a,b)`, `k` (the label exists) and `!k` (it does not). Whitespace
//! between tokens is ignored. Keys and values are checked with the same rules
//! the API server applies to labels, so a selector that could never match a
//! real object is reported instead of silently matching nothing.
//!
//! [`SelectorError`] is shared with [`super::field`].

use std::fmt;
use std::str::FromStr;

/// A label or field selector that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} selector `{input}`: {reason}")]
pub struct SelectorError {
    /// Which selector language was being parsed: `"label"` or `"field"`.
    pub kind: &'static str,
    /// The selector exactly as given.
    pub input: String,
    /// What was wrong and where; positions are 0-based character offsets.
    pub reason: String,
}

/// Longest label name (the part of a key after any `/`) and label value.
const MAX_NAME_LEN: usize = 63;
/// Longest key prefix (the DNS subdomain before `/`).
const MAX_PREFIX_LEN: usize = 253;

/// A parsed label selector: every requirement must hold.
///
/// The empty selector matches every object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

/// One condition on one label.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        /// Allowed values, sorted and without duplicates when parsed.
        values: Vec<String>,
    },
    /// `key notin (a,b)`: the label is absent or has none of the values.
    NotIn {
        /// Label key.
        key: String,
        /// Excluded values, sorted and without duplicates when parsed.
        values: Vec<String>,
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
}

impl LabelSelector {
    /// The selector that matches every object.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Builds a selector from requirements that must all hold.
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
    /// `get(key)` returns the object's value for a label, or `None` when the
    /// object does not have it.
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
            | Self::DoesNotExist { key } => key,
        }
    }

    /// Whether the requirement holds for an object whose label [`key`](Self::key)
    /// has `value` (`None`: the object does not have the label).
    pub fn matches(&self, value: Option<&str>) -> bool {
        let is_one_of = |values: &[String]| value.is_some_and(|v| values.iter().any(|w| w == v));
        match self {
            Self::Equals { value: wanted, .. } => value == Some(wanted.as_str()),
            // Like Kubernetes, an object without the label is "not equal".
            Self::NotEquals { value: wanted, .. } => value != Some(wanted.as_str()),
            Self::In { values, .. } => is_one_of(values),
            Self::NotIn { values, .. } => !is_one_of(values),
            Self::Exists { .. } => value.is_some(),
            Self::DoesNotExist { .. } => value.is_none(),
        }
    }
}

impl FromStr for LabelSelector {
    type Err = SelectorError;

    /// Parses the Kubernetes label selector syntax; `""` matches everything.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        Parser {
            input,
            tokens: tokenize(input),
            next: 0,
        }
        .selector()
    }
}

/// The canonical form: requirements joined by `,` with no spaces except
/// around `in`/`notin`, e.g. `app=web,tier in (a,b),!debug`. Parsing it gives
/// back an equal selector.
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

/// One requirement in selector syntax, e.g. `tier in (a,b)`.
impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Equals { key, value } => write!(f, "{key}={value}"),
            Self::NotEquals { key, value } => write!(f, "{key}!={value}"),
            Self::In { key, values } => write!(f, "{key} in ({})", SetList(values)),
            Self::NotIn { key, values } => write!(f, "{key} notin ({})", SetList(values)),
            Self::Exists { key } => f.write_str(key),
            Self::DoesNotExist { key } => write!(f, "!{key}"),
        }
    }
}

/// The inside of a value set's parentheses.
struct SetList<'a>(&'a [String]);

impl fmt::Display for SetList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `()` is rejected as an empty set, so the set holding only the empty
        // value is written `(,)`, which parses back to exactly that.
        if let [only] = self.0
            && only.is_empty()
        {
            return f.write_str(",");
        }
        f.write_str(&self.0.join(","))
    }
}

/// A lexical token of the label selector syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A run of characters that are neither whitespace nor one of the
    /// symbols below: a key, a value, or the words `in` / `notin`.
    Word(String),
    Eq,
    DoubleEq,
    NotEq,
    Bang,
    Open,
    Close,
    Comma,
    /// `<` and `>` are recognised only to reject them with a clear message.
    Lt,
    Gt,
    End,
}

impl Token {
    /// How the token is named in error messages.
    fn describe(&self) -> String {
        let symbol = match self {
            Token::Word(word) => word,
            Token::Eq => "=",
            Token::DoubleEq => "==",
            Token::NotEq => "!=",
            Token::Bang => "!",
            Token::Open => "(",
            Token::Close => ")",
            Token::Comma => ",",
            Token::Lt => "<",
            Token::Gt => ">",
            Token::End => return "the end of the selector".to_string(),
        };
        format!("`{symbol}`")
    }
}

/// Characters that end a word.
fn is_symbol(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '<' | '>')
}

/// Splits the input into tokens with their character positions. Never fails:
/// anything unexpected is a word, and words are validated by the parser where
/// it knows whether it wants a key or a value. The last token is always
/// [`Token::End`].
fn tokenize(input: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (token, len) = match (c, chars.get(i + 1)) {
            ('=', Some('=')) => (Token::DoubleEq, 2),
            ('=', _) => (Token::Eq, 1),
            ('!', Some('=')) => (Token::NotEq, 2),
            ('!', _) => (Token::Bang, 1),
            ('(', _) => (Token::Open, 1),
            (')', _) => (Token::Close, 1),
            (',', _) => (Token::Comma, 1),
            ('<', _) => (Token::Lt, 1),
            ('>', _) => (Token::Gt, 1),
            _ => {
                let len = chars[i..]
                    .iter()
                    .position(|&c| c.is_whitespace() || is_symbol(c))
                    .unwrap_or(chars.len() - i);
                (Token::Word(chars[i..i + len].iter().collect()), len)
            }
        };
        tokens.push((token, i));
        i += len;
    }
    tokens.push((Token::End, chars.len()));
    tokens
}

/// Recursive-descent parser over the token list.
struct Parser<'a> {
    input: &'a str,
    /// Never empty: ends with [`Token::End`].
    tokens: Vec<(Token, usize)>,
    /// Index of the next token; never moves past the final `End`.
    next: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &(Token, usize) {
        &self.tokens[self.next]
    }

    fn bump(&mut self) -> (Token, usize) {
        let token = self.tokens[self.next].clone();
        if self.next + 1 < self.tokens.len() {
            self.next += 1;
        }
        token
    }

    fn error(&self, reason: String) -> SelectorError {
        SelectorError {
            kind: "label",
            input: self.input.to_string(),
            reason,
        }
    }

    fn selector(mut self) -> Result<LabelSelector, SelectorError> {
        let mut requirements = Vec::new();
        if self.peek().0 == Token::End {
            return Ok(LabelSelector::everything());
        }
        loop {
            requirements.push(self.requirement()?);
            let (token, pos) = self.bump();
            match token {
                Token::End => return Ok(LabelSelector::new(requirements)),
                Token::Comma if self.peek().0 == Token::End => {
                    return Err(self.error(format!(
                        "trailing `,` at position {pos}: expected another requirement after it"
                    )));
                }
                Token::Comma => {}
                Token::Close => {
                    return Err(self.error(format!(
                        "unmatched `)` at position {pos}: there is no `(` to close"
                    )));
                }
                other => {
                    return Err(self.error(format!(
                        "unexpected {} at position {pos}: expected `,` or the end of the selector",
                        other.describe()
                    )));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        let (token, pos) = self.bump();
        match token {
            Token::Bang => {
                let key = self.key("after `!`")?;
                let (next, next_pos) = self.peek();
                if !matches!(next, Token::Comma | Token::End) {
                    return Err(self.error(format!(
                        "`!{key}` only tests that the label is absent and takes no operator or value, \
                         but found {} at position {next_pos}",
                        next.describe()
                    )));
                }
                Ok(Requirement::DoesNotExist { key })
            }
            Token::Word(key) => {
                self.check_key(&key, pos)?;
                self.operator(key)
            }
            Token::Comma => Err(self.error(format!(
                "empty requirement at position {pos}: expected a label key before `,`"
            ))),
            other => Err(self.error(format!(
                "expected a label key at position {pos}, found {}",
                other.describe()
            ))),
        }
    }

    /// Reads a key; `context` says what came before it, for the message.
    fn key(&mut self, context: &str) -> Result<String, SelectorError> {
        match self.bump() {
            (Token::Word(key), pos) => {
                self.check_key(&key, pos)?;
                Ok(key)
            }
            (other, pos) => Err(self.error(format!(
                "expected a label key {context} at position {pos}, found {}",
                other.describe()
            ))),
        }
    }

    /// Parses what follows a key: nothing (`Exists`), or an operator and its
    /// value(s).
    fn operator(&mut self, key: String) -> Result<Requirement, SelectorError> {
        let (token, pos) = self.peek().clone();
        match token {
            Token::Comma | Token::End => Ok(Requirement::Exists { key }),
            Token::Eq | Token::DoubleEq => {
                self.bump();
                let value = self.single_value(&key, &token)?;
                Ok(Requirement::Equals { key, value })
            }
            Token::NotEq => {
                self.bump();
                let value = self.single_value(&key, &token)?;
                Ok(Requirement::NotEquals { key, value })
            }
            Token::Word(word) if word == "in" || word == "notin" => {
                self.bump();
                let values = self.value_set(&key, &word)?;
                Ok(if word == "in" {
                    Requirement::In { key, values }
                } else {
                    Requirement::NotIn { key, values }
                })
            }
            Token::Lt | Token::Gt => Err(self.error(format!(
                "unsupported operator {} at position {pos}: label selectors allow \
                 `=`, `==`, `!=`, `in` and `notin`",
                token.describe()
            ))),
            other => Err(self.error(format!(
                "expected an operator after key `{key}` at position {pos}, found {}: \
                 use `=`, `==`, `!=`, `in`, `notin`, or `,` to start the next requirement",
                other.describe()
            ))),
        }
    }

    /// The value after `=`, `==` or `!=`; missing means the empty value.
    fn single_value(&mut self, key: &str, operator: &Token) -> Result<String, SelectorError> {
        let (token, pos) = self.peek().clone();
        match token {
            Token::Word(value) => {
                self.bump();
                self.check_value(key, &value, pos)?;
                Ok(value)
            }
            // `k=` requires the label with an empty value, as in Kubernetes.
            Token::Comma | Token::End => Ok(String::new()),
            other => Err(self.error(format!(
                "expected a value after {} at position {pos}, found {}",
                operator.describe(),
                other.describe()
            ))),
        }
    }

    /// The parenthesised list after `in` / `notin`, sorted and deduplicated.
    ///
    /// As in Kubernetes, an item between commas may be left out to mean the
    /// empty value (`(a,)` is `a` or empty), but the list itself may not be
    /// empty.
    fn value_set(&mut self, key: &str, operator: &str) -> Result<Vec<String>, SelectorError> {
        let (token, open_pos) = self.bump();
        if token != Token::Open {
            return Err(self.error(format!(
                "expected `(` after `{operator}` at position {open_pos}, found {}",
                token.describe()
            )));
        }
        if self.peek().0 == Token::Close {
            return Err(self.error(format!(
                "empty value list after `{operator}` at position {open_pos}: \
                 list at least one value"
            )));
        }
        let mut values = Vec::new();
        loop {
            let value = match self.peek().clone() {
                (Token::Word(value), pos) => {
                    self.bump();
                    self.check_value(key, &value, pos)?;
                    value
                }
                _ => String::new(),
            };
            values.push(value);
            match self.bump() {
                (Token::Comma, _) => {}
                (Token::Close, _) => break,
                (Token::End, _) => {
                    return Err(self.error(format!(
                        "missing `)` to close the `(` at position {open_pos}"
                    )));
                }
                (other, pos) => {
                    return Err(self.error(format!(
                        "expected `,` or `)` at position {pos}, found {}",
                        other.describe()
                    )));
                }
            }
        }
        values.sort();
        values.dedup();
        Ok(values)
    }

    fn check_key(&self, key: &str, pos: usize) -> Result<(), SelectorError> {
        key_problem(key).map_or(Ok(()), |problem| {
            Err(self.error(format!(
                "key `{key}` is not a valid label key: {problem} (at position {pos})"
            )))
        })
    }

    fn check_value(&self, key: &str, value: &str, pos: usize) -> Result<(), SelectorError> {
        let problem = if value.chars().count() > MAX_NAME_LEN {
            format!("value of `{key}` is longer than {MAX_NAME_LEN} characters")
        } else if !is_name(value) {
            format!(
                "value `{value}` of `{key}` is not a valid label value: it must consist of \
                 letters, digits, `-`, `_` and `.`, and start and end with a letter or digit"
            )
        } else {
            return Ok(());
        };
        Err(self.error(format!("{problem} (at position {pos})")))
    }
}

/// Why `key` is not a valid label key (optional DNS-subdomain prefix and `/`,
/// then a name), or `None` if it is.
fn key_problem(key: &str) -> Option<String> {
    let name = match key.split_once('/') {
        None => key,
        Some((_, name)) if name.contains('/') => {
            return Some("a key may contain at most one `/`".to_string());
        }
        Some((prefix, name)) => {
            if prefix.is_empty() {
                return Some("the prefix before `/` is empty".to_string());
            }
            if prefix.len() > MAX_PREFIX_LEN {
                return Some(format!(
                    "the prefix before `/` is longer than {MAX_PREFIX_LEN} characters"
                ));
            }
            if !is_dns_subdomain(prefix) {
                return Some(
                    "the prefix before `/` must be a DNS subdomain: lowercase letters, digits, \
                     `-` and `.`, with each dot-separated part starting and ending with a letter \
                     or digit"
                        .to_string(),
                );
            }
            name
        }
    };
    if name.is_empty() {
        return Some("the name is empty".to_string());
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Some(format!("the name is longer than {MAX_NAME_LEN} characters"));
    }
    if !is_name(name) {
        return Some(
            "the name must consist of letters, digits, `-`, `_` and `.`, and start and end \
             with a letter or digit"
                .to_string(),
        );
    }
    None
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, or empty (a valid label value).
fn is_name(s: &str) -> bool {
    let edges_ok = match (s.chars().next(), s.chars().last()) {
        (Some(first), Some(last)) => first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric(),
        _ => true,
    };
    edges_ok
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Lowercase RFC 1123 subdomain: dot-separated `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns_subdomain(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.split('.')
        .all(|part| match (part.chars().next(), part.chars().last()) {
            (Some(first), Some(last)) => {
                alnum(first) && alnum(last) && part.chars().all(|c| alnum(c) || c == '-')
            }
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn eq(key: &str, value: &str) -> Requirement {
        Requirement::Equals {
            key: key.into(),
            value: value.into(),
        }
    }
    fn ne(key: &str, value: &str) -> Requirement {
        Requirement::NotEquals {
            key: key.into(),
            value: value.into(),
        }
    }
    fn is_in(key: &str, values: &[&str]) -> Requirement {
        Requirement::In {
            key: key.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }
    fn not_in(key: &str, values: &[&str]) -> Requirement {
        Requirement::NotIn {
            key: key.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }
    fn exists(key: &str) -> Requirement {
        Requirement::Exists { key: key.into() }
    }
    fn absent(key: &str) -> Requirement {
        Requirement::DoesNotExist { key: key.into() }
    }

    fn parse(input: &str) -> LabelSelector {
        match input.parse() {
            Ok(selector) => selector,
            Err(e) => panic!("{input:?} should parse: {e}"),
        }
    }

    #[test]
    fn parses_valid_selectors() {
        let long_name = "n".repeat(63);
        let long_prefix = format!("{}.{}", "a".repeat(126), "b".repeat(126));
        let long_key = format!("{long_prefix}/{long_name}");
        let long_value = "v".repeat(63);
        let long_eq = format!("{long_key}={long_value}");
        let cases: Vec<(&str, Vec<Requirement>, &str)> = vec![
            ("", vec![], ""),
            ("   ", vec![], ""),
            ("app=web", vec![eq("app", "web")], "app=web"),
            ("app==web", vec![eq("app", "web")], "app=web"),
            ("app!=web", vec![ne("app", "web")], "app!=web"),
            ("app=", vec![eq("app", "")], "app="),
            ("app==", vec![eq("app", "")], "app="),
            ("app!=", vec![ne("app", "")], "app!="),
            ("app=,b", vec![eq("app", ""), exists("b")], "app=,b"),
            ("  app  =  web  ", vec![eq("app", "web")], "app=web"),
            ("app", vec![exists("app")], "app"),
            ("!app", vec![absent("app")], "!app"),
            ("! app", vec![absent("app")], "!app"),
            (
                "tier in (a,b)",
                vec![is_in("tier", &["a", "b"])],
                "tier in (a,b)",
            ),
            (
                "tier in(b, a ,b)",
                vec![is_in("tier", &["a", "b"])],
                "tier in (a,b)",
            ),
            (
                "tier notin (x)",
                vec![not_in("tier", &["x"])],
                "tier notin (x)",
            ),
            (
                "tier notin(z,y)",
                vec![not_in("tier", &["y", "z"])],
                "tier notin (y,z)",
            ),
            // As in Kubernetes, an omitted item is the empty value.
            (
                "tier in (a,)",
                vec![is_in("tier", &["", "a"])],
                "tier in (,a)",
            ),
            (
                "tier in (,a)",
                vec![is_in("tier", &["", "a"])],
                "tier in (,a)",
            ),
            ("tier in (,)", vec![is_in("tier", &[""])], "tier in (,)"),
            (
                "tier in (a,,b)",
                vec![is_in("tier", &["", "a", "b"])],
                "tier in (,a,b)",
            ),
            // `in` is only an operator after a key; elsewhere it is a word.
            ("k=in", vec![eq("k", "in")], "k=in"),
            (
                "k in (in,notin)",
                vec![is_in("k", &["in", "notin"])],
                "k in (in,notin)",
            ),
            (
                "app=web,tier in (a,b),!debug",
                vec![
                    eq("app", "web"),
                    is_in("tier", &["a", "b"]),
                    absent("debug"),
                ],
                "app=web,tier in (a,b),!debug",
            ),
            (
                "a , b!=c , !d , e notin ( f )",
                vec![exists("a"), ne("b", "c"), absent("d"), not_in("e", &["f"])],
                "a,b!=c,!d,e notin (f)",
            ),
            (
                "app.kubernetes.io/name=web",
                vec![eq("app.kubernetes.io/name", "web")],
                "app.kubernetes.io/name=web",
            ),
            (
                "A-b_c.D=x_Y-z.0",
                vec![eq("A-b_c.D", "x_Y-z.0")],
                "A-b_c.D=x_Y-z.0",
            ),
            ("x=1,x=2", vec![eq("x", "1"), eq("x", "2")], "x=1,x=2"),
            ("9=9", vec![eq("9", "9")], "9=9"),
            (&long_eq, vec![eq(&long_key, &long_value)], &long_eq),
        ];
        for (input, requirements, display) in cases {
            let selector = parse(input);
            assert_eq!(
                selector.requirements(),
                requirements.as_slice(),
                "{input:?}"
            );
            assert_eq!(selector.is_empty(), requirements.is_empty(), "{input:?}");
            assert_eq!(selector.to_string(), display, "{input:?}");
            assert_eq!(parse(display), selector, "round trip of {input:?}");
        }
    }

    #[test]
    fn rejects_invalid_selectors() {
        let long = "x".repeat(64);
        let long_value = format!("app={long}");
        let long_set_value = format!("app in (a,{long})");
        let long_name = format!("{long}=1");
        let long_prefix = format!("{}/n", "a".repeat(254));
        let cases: Vec<(&str, &str)> = vec![
            // Dangling or misplaced operators.
            ("=", "expected a label key at position 0, found `=`"),
            ("=web", "expected a label key at position 0, found `=`"),
            (
                "!",
                "expected a label key after `!` at position 1, found the end",
            ),
            ("!=x", "expected a label key at position 0, found `!=`"),
            (
                "k in",
                "expected `(` after `in` at position 4, found the end",
            ),
            ("k notin", "expected `(` after `notin` at position 7"),
            (
                "tier in a",
                "expected `(` after `in` at position 8, found `a`",
            ),
            (
                "tier notin a,b",
                "expected `(` after `notin` at position 11, found `a`",
            ),
            (
                "k=(a)",
                "expected a value after `=` at position 2, found `(`",
            ),
            (
                "k!==v",
                "expected a value after `!=` at position 3, found `=`",
            ),
            (
                "k===v",
                "expected a value after `==` at position 3, found `=`",
            ),
            (
                "k=a=b",
                "unexpected `=` at position 3: expected `,` or the end",
            ),
            ("k=v w", "unexpected `w` at position 4"),
            (
                "k v",
                "expected an operator after key `k` at position 2, found `v`",
            ),
            (
                "k !v",
                "expected an operator after key `k` at position 2, found `!`",
            ),
            ("k>1", "unsupported operator `>` at position 1"),
            ("k < 1", "unsupported operator `<` at position 2"),
            ("!k=v", "`!k` only tests that the label is absent"),
            ("!k=v", "found `=` at position 2"),
            ("!k in (a)", "found `in` at position 3"),
            // Sets.
            ("k in ()", "empty value list after `in` at position 5"),
            (
                "k notin ( )",
                "empty value list after `notin` at position 8",
            ),
            ("k in (a,b", "missing `)` to close the `(` at position 5"),
            ("k in (", "missing `)` to close the `(` at position 5"),
            ("k in ((a)", "expected `,` or `)` at position 6, found `(`"),
            ("k in (a b)", "expected `,` or `)` at position 8, found `b`"),
            ("k in (a))", "unmatched `)` at position 8"),
            (
                "k)",
                "expected an operator after key `k` at position 1, found `)`",
            ),
            ("(k)", "expected a label key at position 0, found `(`"),
            // Commas.
            ("a=b,", "trailing `,` at position 3"),
            ("a=b, ", "trailing `,` at position 3"),
            (",a", "empty requirement at position 0"),
            ("a,,b", "empty requirement at position 2"),
            // Keys.
            (
                "Bad:Key",
                "key `Bad:Key` is not a valid label key: the name must consist of",
            ),
            ("-a", "key `-a` is not a valid label key"),
            ("a-", "key `a-` is not a valid label key"),
            ("é=1", "key `é` is not a valid label key"),
            ("x/", "key `x/` is not a valid label key: the name is empty"),
            ("/x", "the prefix before `/` is empty"),
            ("a/b/c", "a key may contain at most one `/`"),
            (
                "Example.com/x",
                "the prefix before `/` must be a DNS subdomain",
            ),
            ("a..b/x", "the prefix before `/` must be a DNS subdomain"),
            ("-a.b/x", "the prefix before `/` must be a DNS subdomain"),
            (
                "x in (a),y/",
                "key `y/` is not a valid label key: the name is empty (at position 9)",
            ),
            (
                &long_name,
                "the name is longer than 63 characters (at position 0)",
            ),
            (
                &long_prefix,
                "the prefix before `/` is longer than 253 characters",
            ),
            ("!Bad_", "key `Bad_` is not a valid label key"),
            // Values.
            (
                &long_value,
                "value of `app` is longer than 63 characters (at position 4)",
            ),
            (
                &long_set_value,
                "value of `app` is longer than 63 characters (at position 10)",
            ),
            ("app=a/b", "value `a/b` of `app` is not a valid label value"),
            ("app=-a", "value `-a` of `app` is not a valid label value"),
            (
                "app in (ok,_x)",
                "value `_x` of `app` is not a valid label value",
            ),
            ("app!=ü", "value `ü` of `app` is not a valid label value"),
            (
                "app!=ü",
                "start and end with a letter or digit (at position 5)",
            ),
            // Positions count characters, not bytes (U+00A0 is whitespace).
            ("\u{a0}x in z", "expected `(` after `in` at position 6"),
        ];
        for (input, expected) in cases {
            match input.parse::<LabelSelector>() {
                Ok(selector) => panic!("{input:?} should not parse, got {selector:?}"),
                Err(e) => {
                    assert_eq!(e.kind, "label");
                    assert_eq!(e.input, input);
                    assert!(
                        e.reason.contains(expected),
                        "{input:?}: {:?} should contain {expected:?}",
                        e.reason
                    );
                }
            }
        }
    }

    #[test]
    fn error_message_names_the_selector() {
        let err = "tier in a".parse::<LabelSelector>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "label selector `tier in a`: expected `(` after `in` at position 8, found `a`"
        );
    }

    #[test]
    fn matches_label_sets() {
        let web = [("app", "web"), ("tier", "front"), ("empty", "")];
        let db = [("app", "db"), ("tier", "back"), ("debug", "1")];
        let none: [(&str, &str); 0] = [];
        type Labels<'a> = &'a [(&'a str, &'a str)];
        let cases: Vec<(Labels, &str, bool)> = vec![
            (&web, "", true),
            (&none, "", true),
            (&web, "app=web", true),
            (&web, "app==web", true),
            (&db, "app=web", false),
            (&none, "app=web", false),
            (&web, "app!=web", false),
            (&db, "app!=web", true),
            // A missing label is "not equal" to anything.
            (&none, "app!=web", true),
            (&web, "empty=", true),
            (&web, "app=", false),
            // `k=` needs the label present.
            (&none, "empty=", false),
            (&web, "empty!=", false),
            (&web, "app!=", true),
            (&none, "app!=", true),
            (&web, "tier in (front,back)", true),
            (&db, "tier in (front,back)", true),
            (&web, "tier in (middle)", false),
            (&none, "tier in (front)", false),
            (&web, "empty in (,x)", true),
            (&web, "tier notin (front)", false),
            (&db, "tier notin (front)", true),
            // A missing label is not in any set.
            (&none, "tier notin (front)", true),
            (&web, "app", true),
            (&none, "app", false),
            (&web, "empty", true),
            (&web, "!debug", true),
            (&db, "!debug", false),
            (&web, "!empty", false),
            (&web, "app=web,tier in (front),!debug", true),
            (&web, "app=web,tier in (back)", false),
            (&db, "app=db,debug", true),
            (&db, "app=db,!debug", false),
            (&web, "APP=web", false),
            (&web, "app=Web", false),
        ];
        for (labels, selector, expected) in cases {
            let labels: BTreeMap<&str, &str> = labels.iter().copied().collect();
            let get = |key: &str| labels.get(key).copied();
            assert_eq!(
                parse(selector).matches(get),
                expected,
                "{selector:?} against {labels:?}"
            );
        }
    }

    #[test]
    fn requirement_matches_single_value() {
        let cases: Vec<(Requirement, Option<&str>, bool)> = vec![
            (eq("k", "v"), Some("v"), true),
            (eq("k", "v"), Some("w"), false),
            (eq("k", "v"), None, false),
            (ne("k", "v"), None, true),
            (ne("k", "v"), Some("v"), false),
            (is_in("k", &["a", "b"]), Some("b"), true),
            (is_in("k", &["a", "b"]), None, false),
            (not_in("k", &["a", "b"]), Some("a"), false),
            (not_in("k", &["a", "b"]), Some("c"), true),
            (exists("k"), Some(""), true),
            (exists("k"), None, false),
            (absent("k"), Some(""), false),
            (absent("k"), None, true),
        ];
        for (requirement, value, expected) in cases {
            assert_eq!(requirement.key(), "k");
            assert_eq!(
                requirement.matches(value),
                expected,
                "{requirement:?} against {value:?}"
            );
        }
    }

    #[test]
    fn everything_is_the_empty_selector() {
        let everything = LabelSelector::everything();
        assert!(everything.is_empty());
        assert_eq!(everything, parse(""));
        assert_eq!(everything, LabelSelector::default());
        assert_eq!(everything.to_string(), "");
        assert!(everything.matches(|_| None));
        assert!(!LabelSelector::new(vec![exists("a")]).is_empty());
    }

    #[test]
    fn display_of_built_selectors_round_trips() {
        let selectors = [
            LabelSelector::new(vec![is_in("a", &[""])]),
            LabelSelector::new(vec![not_in("a", &["", "x"]), eq("b", ""), ne("c", "")]),
            LabelSelector::new(vec![absent("x/y"), exists("z")]),
        ];
        for selector in selectors {
            assert_eq!(parse(&selector.to_string()), selector, "{selector}");
        }
    }
}
