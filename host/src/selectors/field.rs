//! Field selectors: `status.phase=Running,spec.nodeName!=`.
//!
//! Unlike Kubernetes, which supports a fixed list of fields per kind, any
//! dotted path into the object's JSON can be selected on. A selector is a
//! comma-separated list of `path=value`, `path==value` or `path!=value`
//! requirements that must all hold.
//!
//! A backslash escapes the next character, which must be one of `\`, `.`,
//! `,`, `=`, `!`, `<`, `>` or whitespace. In paths, `\.` is a dot inside a
//! segment (`metadata.labels.app\.kubernetes\.io/name`); in values, `,`, `=`
//! and `!` must be escaped. Whitespace around paths, operators and values is
//! ignored; escape it (`\ `) to keep it at the edge of a value.

use std::fmt;
use std::str::FromStr;

use serde_json::{Number, Value};

/// A field selector that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field selector `{input}`: {reason}")]
pub struct FieldSelectorError {
    /// The selector exactly as given.
    pub input: String,
    /// What was wrong and where; positions are 0-based character offsets.
    pub reason: String,
}

/// A parsed field selector: every requirement must hold.
///
/// The empty selector matches every object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

/// One condition on the JSON value at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// Object keys (or array indices, as decimal digits) from the root.
    pub path: Vec<String>,
    /// How the value at the path is compared with [`value`](Self::value).
    pub op: FieldOp,
    /// The text to compare with, unescaped.
    pub value: String,
}

/// A field selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldOp {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

impl FieldSelector {
    /// The selector that matches every object.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Builds a selector from requirements that must all hold.
    pub fn new(requirements: Vec<FieldRequirement>) -> Self {
        Self { requirements }
    }

    /// Whether the selector has no requirements and so matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements, in the order they were written.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether `object` satisfies every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        self.requirements.iter().all(|r| r.matches(object))
    }
}

impl FieldRequirement {
    /// Whether `object` satisfies this requirement.
    ///
    /// Strings compare as text, numbers numerically (`3.0` matches `3`),
    /// booleans with `true` / `false`. A missing or `null` value compares like
    /// the empty string, so `spec.nodeName=` selects unscheduled pods as in
    /// Kubernetes. Objects and arrays equal no value.
    pub fn matches(&self, object: &Value) -> bool {
        let equal = value_equals(lookup(object, &self.path), &self.value);
        match self.op {
            FieldOp::Equals => equal,
            FieldOp::NotEquals => !equal,
        }
    }
}

/// Follows `path` from `object`: keys into objects, decimal indices into
/// arrays. Anything else (a missing key, an index out of range, a path that
/// continues past a scalar) is `None`.
fn lookup<'v>(object: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(object, |value, segment| match value {
        Value::Object(map) => map.get(segment),
        // Digits only: `usize::from_str` would also accept `+0`.
        Value::Array(items) if segment.bytes().all(|b| b.is_ascii_digit()) => {
            segment.parse::<usize>().ok().and_then(|i| items.get(i))
        }
        _ => None,
    })
}

impl FieldRequirement {
    /// Whether a field whose value is `found` satisfies this requirement:
    /// the same as [`FieldRequirement::matches`] on the object holding it.
    pub fn matches_field(&self, found: &FieldValue) -> bool {
        self.holds(found.equals(&self.value))
    }

    /// Whether a field whose value is the string `text` satisfies this
    /// requirement.
    pub fn matches_text(&self, text: &str) -> bool {
        self.holds(text == self.value)
    }

    fn holds(&self, equal: bool) -> bool {
        match self.op {
            FieldOp::Equals => equal,
            FieldOp::NotEquals => !equal,
        }
    }
}

/// A field's value as selectors compare it, read from its JSON text without
/// parsing the object around it: what an index of the field keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// Equals exactly this text: a string, `true` or `false`, or the empty
    /// text for a missing or `null` value.
    Text(Box<str>),
    /// A number, as written: equals the texts that are the same number.
    Number(Box<str>),
    /// An object or an array: equals no text.
    Composite,
}

impl FieldValue {
    /// The value of the JSON text `raw` (`None`: nothing at the path).
    pub fn from_json(raw: Option<&[u8]>) -> FieldValue {
        let Some(raw) = raw else {
            return FieldValue::Text("".into());
        };
        match raw.first() {
            Some(b'"') => match serde_json::from_slice::<String>(raw) {
                Ok(text) => FieldValue::Text(text.into()),
                Err(_) => FieldValue::Composite,
            },
            Some(b'{' | b'[') => FieldValue::Composite,
            _ => match raw {
                b"null" => FieldValue::Text("".into()),
                b"true" => FieldValue::Text("true".into()),
                b"false" => FieldValue::Text("false".into()),
                number => match std::str::from_utf8(number) {
                    Ok(text) => FieldValue::Number(text.into()),
                    Err(_) => FieldValue::Composite,
                },
            },
        }
    }

    /// Whether a selector's `text` equals this value, as
    /// [`FieldRequirement::matches`] compares them.
    pub fn equals(&self, text: &str) -> bool {
        match self {
            FieldValue::Text(value) => **value == *text,
            FieldValue::Number(value) => serde_json::from_str::<Number>(value)
                .is_ok_and(|number| number_equals(&number, text)),
            FieldValue::Composite => false,
        }
    }
}

/// Parses one field path as a selector writes it (`spec.nodeName`,
/// `metadata.labels.app\.kubernetes\.io/name`).
pub fn parse_path(text: &str) -> Result<Vec<String>, FieldSelectorError> {
    let mut scanner = Scanner {
        input: text,
        chars: text.chars().collect(),
        pos: 0,
    };
    let path = scanner.path()?;
    match scanner.peek() {
        None => Ok(path),
        Some(c) => Err(scanner.error(format!(
            "unexpected `{c}` at position {} in a field path (escape it with `\\`)",
            scanner.pos
        ))),
    }
}

fn value_equals(found: Option<&Value>, text: &str) -> bool {
    match found {
        None | Some(Value::Null) => text.is_empty(),
        Some(Value::String(s)) => s == text,
        Some(Value::Number(n)) => number_equals(n, text),
        Some(Value::Bool(b)) => text == if *b { "true" } else { "false" },
        Some(Value::Array(_) | Value::Object(_)) => false,
    }
}

fn number_equals(number: &Number, text: &str) -> bool {
    // Integers compare exactly: going through f64 would make large values
    // such as 2^53 + 1 equal to their neighbours.
    let integer = number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from));
    if let (Some(integer), Ok(wanted)) = (integer, text.parse::<i128>()) {
        return integer == wanted;
    }
    match (number.as_f64(), text.parse::<f64>()) {
        (Some(float), Ok(wanted)) => float == wanted,
        _ => false,
    }
}

impl FromStr for FieldSelector {
    type Err = FieldSelectorError;

    /// Parses `path=value,path!=value,…`; `""` matches everything.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        Scanner {
            input,
            chars: input.chars().collect(),
            pos: 0,
        }
        .selector()
    }
}

/// The canonical form, e.g. `status.phase=Running,spec.nodeName!=`, escaped
/// so that parsing it gives back an equal selector.
impl fmt::Display for FieldSelector {
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

/// One requirement in selector syntax, escaped, e.g. `spec.nodeName!=`.
impl fmt::Display for FieldRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.path.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            for c in segment.chars() {
                if is_path_delimiter(c) || c == '\\' || c == '.' {
                    f.write_str("\\")?;
                }
                write!(f, "{c}")?;
            }
        }
        write!(f, "{}", self.op)?;
        // Edge whitespace is trimmed when parsing, so only it needs escaping.
        let first = self.value.find(|c: char| !c.is_whitespace());
        let last = self.value.rfind(|c: char| !c.is_whitespace());
        for (i, c) in self.value.char_indices() {
            let at_edge = first.is_none_or(|first| i < first) || last.is_none_or(|last| i > last);
            if matches!(c, '\\' | ',' | '=' | '!') || (at_edge && c.is_whitespace()) {
                f.write_str("\\")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

/// `=` or `!=`.
impl fmt::Display for FieldOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FieldOp::Equals => "=",
            FieldOp::NotEquals => "!=",
        })
    }
}

/// Characters that end a path unless escaped. `<` and `>` are among them so
/// that `spec.replicas>3` is reported as an unsupported operator rather than
/// read as a path.
fn is_path_delimiter(c: char) -> bool {
    matches!(c, '=' | '!' | '<' | '>' | ',') || c.is_whitespace()
}

/// Characters a backslash may escape.
fn is_escapable(c: char) -> bool {
    matches!(c, '\\' | '.' | ',' | '=' | '!' | '<' | '>') || c.is_whitespace()
}

/// Words that are operators in other selector languages; named as such in
/// errors instead of being reported as stray text.
const FOREIGN_OPERATOR_WORDS: [&str; 4] = ["in", "notin", "gt", "lt"];

/// Character-level parser. Positions are character indices into `chars`.
struct Scanner<'a> {
    input: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn error(&self, reason: String) -> FieldSelectorError {
        FieldSelectorError {
            input: self.input.to_string(),
            reason,
        }
    }

    fn selector(mut self) -> Result<FieldSelector, FieldSelectorError> {
        if self.input.trim().is_empty() {
            return Ok(FieldSelector::everything());
        }
        let mut requirements = Vec::new();
        loop {
            requirements.push(self.requirement()?);
            // A requirement ends at an unescaped `,` or at the end.
            if self.peek().is_none() {
                return Ok(FieldSelector::new(requirements));
            }
            let comma = self.pos;
            self.pos += 1;
            self.skip_whitespace();
            if self.peek().is_none() {
                return Err(self.error(format!(
                    "trailing `,` at position {comma}: expected another requirement after it"
                )));
            }
        }
    }

    fn requirement(&mut self) -> Result<FieldRequirement, FieldSelectorError> {
        self.skip_whitespace();
        if self.peek() == Some(',') {
            return Err(self.error(format!(
                "empty requirement at position {}: expected a field path before `,`",
                self.pos
            )));
        }
        let path_start = self.pos;
        let path = self.path()?;
        let path_text: String = self.chars[path_start..self.pos].iter().collect();
        self.skip_whitespace();
        let op = self.operator(&path_text)?;
        let value = self.value()?;
        Ok(FieldRequirement { path, op, value })
    }

    /// Reads dot-separated segments up to an unescaped delimiter.
    fn path(&mut self) -> Result<Vec<String>, FieldSelectorError> {
        let start = self.pos;
        let mut segments = Vec::new();
        let mut segment = String::new();
        loop {
            match self.peek() {
                None => break,
                Some(c) if is_path_delimiter(c) => break,
                Some('\\') => segment.push(self.escape()?),
                Some('.') => {
                    if segment.is_empty() {
                        return Err(self.empty_segment());
                    }
                    segments.push(std::mem::take(&mut segment));
                    self.pos += 1;
                }
                Some(c) => {
                    segment.push(c);
                    self.pos += 1;
                }
            }
        }
        if self.pos == start {
            let found = self
                .peek()
                .map_or("the end of the selector".to_string(), |c| format!("`{c}`"));
            return Err(self.error(format!(
                "expected a field path at position {start}, found {found}"
            )));
        }
        if segment.is_empty() {
            return Err(self.empty_segment());
        }
        segments.push(segment);
        Ok(segments)
    }

    fn empty_segment(&self) -> FieldSelectorError {
        self.error(format!(
            "empty segment in field path at position {}: segments are joined by single `.` \
             (write `\\.` for a dot inside a segment)",
            self.pos
        ))
    }

    fn operator(&mut self, path: &str) -> Result<FieldOp, FieldSelectorError> {
        let pos = self.pos;
        let (op, len) = match (self.peek(), self.chars.get(pos + 1)) {
            (Some('='), Some('=')) => (FieldOp::Equals, 2),
            (Some('='), _) => (FieldOp::Equals, 1),
            (Some('!'), Some('=')) => (FieldOp::NotEquals, 2),
            (None | Some(','), _) => {
                return Err(self.error(format!(
                    "missing operator after field path `{path}` at position {pos}: \
                     expected `=`, `==` or `!=`"
                )));
            }
            (Some(first), _) => {
                let word = self.word_at(pos, first);
                let reason = if first.is_alphanumeric()
                    && !FOREIGN_OPERATOR_WORDS.contains(&word.as_str())
                {
                    format!(
                        "expected `=`, `==` or `!=` after field path `{path}` at position {pos}, \
                         found `{word}`"
                    )
                } else {
                    format!(
                        "unsupported operator `{word}` at position {pos}: \
                         field selectors allow only `=`, `==` and `!=`"
                    )
                };
                return Err(self.error(reason));
            }
        };
        self.pos += len;
        Ok(op)
    }

    /// The word or operator-like symbol run starting at `pos`, for messages.
    fn word_at(&self, pos: usize, first: char) -> String {
        let in_word = |c: &char| {
            if first.is_alphanumeric() {
                c.is_alphanumeric()
            } else {
                matches!(c, '<' | '>' | '=' | '!' | '~')
            }
        };
        let word: String = self.chars[pos..]
            .iter()
            .take_while(|c| in_word(c))
            .collect();
        if word.is_empty() {
            first.to_string()
        } else {
            word
        }
    }

    /// Reads a value up to an unescaped `,` or the end, trimming unescaped
    /// whitespace at both edges.
    fn value(&mut self) -> Result<String, FieldSelectorError> {
        // Each character with whether it was escaped, which protects it from
        // trimming.
        let mut chars: Vec<(char, bool)> = Vec::new();
        loop {
            match self.peek() {
                None | Some(',') => break,
                Some('\\') => chars.push((self.escape()?, true)),
                Some(c @ ('=' | '!')) => {
                    return Err(self.error(format!(
                        "unescaped `{c}` in value at position {}: write `\\{c}` for a literal `{c}`",
                        self.pos
                    )));
                }
                Some(c) => {
                    chars.push((c, false));
                    self.pos += 1;
                }
            }
        }
        let trimmable = |&(c, escaped): &(char, bool)| !escaped && c.is_whitespace();
        let start = chars
            .iter()
            .position(|c| !trimmable(c))
            .unwrap_or(chars.len());
        let end = chars
            .iter()
            .rposition(|c| !trimmable(c))
            .map_or(start, |i| i + 1);
        Ok(chars[start..end].iter().map(|&(c, _)| c).collect())
    }

    /// Reads `\x` at the current position and returns `x`.
    fn escape(&mut self) -> Result<char, FieldSelectorError> {
        let at = self.pos;
        match self.chars.get(at + 1) {
            Some(&c) if is_escapable(c) => {
                self.pos += 2;
                Ok(c)
            }
            Some(&c) => Err(self.error(format!(
                "invalid escape `\\{c}` at position {at}: a backslash may only precede \
                 `\\`, `.`, `,`, `=`, `!`, `<`, `>` or whitespace"
            ))),
            None => Err(self.error(format!(
                "`\\` at position {at} ends the selector: it must be followed by the \
                 character it escapes"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(path: &[&str], op: FieldOp, value: &str) -> FieldRequirement {
        FieldRequirement {
            path: path.iter().map(|s| s.to_string()).collect(),
            op,
            value: value.to_string(),
        }
    }
    fn eq(path: &[&str], value: &str) -> FieldRequirement {
        req(path, FieldOp::Equals, value)
    }
    fn ne(path: &[&str], value: &str) -> FieldRequirement {
        req(path, FieldOp::NotEquals, value)
    }

    fn parse(input: &str) -> FieldSelector {
        match input.parse() {
            Ok(selector) => selector,
            Err(e) => panic!("{input:?} should parse: {e}"),
        }
    }

    #[test]
    fn parses_valid_selectors() {
        let cases: Vec<(&str, Vec<FieldRequirement>, &str)> = vec![
            ("", vec![], ""),
            (" \t ", vec![], ""),
            (
                "metadata.name=web",
                vec![eq(&["metadata", "name"], "web")],
                "metadata.name=web",
            ),
            (
                "metadata.name==web",
                vec![eq(&["metadata", "name"], "web")],
                "metadata.name=web",
            ),
            (
                "status.phase!=Running",
                vec![ne(&["status", "phase"], "Running")],
                "status.phase!=Running",
            ),
            (
                "spec.nodeName=",
                vec![eq(&["spec", "nodeName"], "")],
                "spec.nodeName=",
            ),
            (
                " spec.nodeName != ",
                vec![ne(&["spec", "nodeName"], "")],
                "spec.nodeName!=",
            ),
            (
                "spec.replicas = 3",
                vec![eq(&["spec", "replicas"], "3")],
                "spec.replicas=3",
            ),
            (
                "a=b , c!=d",
                vec![eq(&["a"], "b"), ne(&["c"], "d")],
                "a=b,c!=d",
            ),
            (
                r"metadata.labels.app\.kubernetes\.io/name=web",
                vec![eq(&["metadata", "labels", "app.kubernetes.io/name"], "web")],
                r"metadata.labels.app\.kubernetes\.io/name=web",
            ),
            (
                "spec.containers.0.name=main",
                vec![eq(&["spec", "containers", "0", "name"], "main")],
                "spec.containers.0.name=main",
            ),
            (
                r"a=x\,y\=z\!w\\v",
                vec![eq(&["a"], r"x,y=z!w\v")],
                r"a=x\,y\=z\!w\\v",
            ),
            (r"a=\ x\ ", vec![eq(&["a"], " x ")], r"a=\ x\ "),
            (r"a=\ ", vec![eq(&["a"], " ")], r"a=\ "),
            ("a = x y ", vec![eq(&["a"], "x y")], "a=x y"),
            (r"a\\b.c=d", vec![eq(&[r"a\b", "c"], "d")], r"a\\b.c=d"),
            (
                r"we\ ird\=\<\>\!\,seg=1",
                vec![eq(&["we ird=<>!,seg"], "1")],
                r"we\ ird\=\<\>\!\,seg=1",
            ),
            (
                "a=b.c<d>(e)~",
                vec![eq(&["a"], "b.c<d>(e)~")],
                "a=b.c<d>(e)~",
            ),
            (r"a=\.", vec![eq(&["a"], ".")], "a=."),
            ("a=é ü", vec![eq(&["a"], "é ü")], "a=é ü"),
            ("a/b(c)=1", vec![eq(&["a/b(c)"], "1")], "a/b(c)=1"),
            (
                "status.phase=Running,spec.nodeName!=,metadata.namespace==default",
                vec![
                    eq(&["status", "phase"], "Running"),
                    ne(&["spec", "nodeName"], ""),
                    eq(&["metadata", "namespace"], "default"),
                ],
                "status.phase=Running,spec.nodeName!=,metadata.namespace=default",
            ),
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
        let cases: Vec<(&str, &str)> = vec![
            // Operators.
            (
                "metadata.name",
                "missing operator after field path `metadata.name` at position 13",
            ),
            (
                "metadata.name ",
                "missing operator after field path `metadata.name` at position 14",
            ),
            (
                "a=b,c",
                "missing operator after field path `c` at position 5",
            ),
            (
                "a,b=c",
                "missing operator after field path `a` at position 1",
            ),
            (
                "status.phase in (Running)",
                "unsupported operator `in` at position 13: field selectors allow only `=`, `==` and `!=`",
            ),
            (
                "status.phase notin (x)",
                "unsupported operator `notin` at position 13",
            ),
            ("spec.replicas>3", "unsupported operator `>` at position 13"),
            (
                "spec.replicas >= 3",
                "unsupported operator `>=` at position 14",
            ),
            ("a<b", "unsupported operator `<` at position 1"),
            ("a!b", "unsupported operator `!` at position 1"),
            ("a ~ b", "unsupported operator `~` at position 2"),
            ("a !~ b", "unsupported operator `!~` at position 2"),
            (
                "meta data=x",
                "expected `=`, `==` or `!=` after field path `meta` at position 5, found `data`",
            ),
            // Paths.
            ("=x", "expected a field path at position 0, found `=`"),
            ("!=x", "expected a field path at position 0, found `!`"),
            ("a=b, =c", "expected a field path at position 5, found `=`"),
            ("a..b=c", "empty segment in field path at position 2"),
            (".a=b", "empty segment in field path at position 0"),
            ("a.=b", "empty segment in field path at position 2"),
            ("a. b=c", "empty segment in field path at position 2"),
            // Values.
            (
                "a=b=c",
                r"unescaped `=` in value at position 3: write `\=` for a literal `=`",
            ),
            ("a===b", "unescaped `=` in value at position 3"),
            ("a!=!b", r"unescaped `!` in value at position 3: write `\!`"),
            ("a=b!", "unescaped `!` in value at position 3"),
            // Escapes.
            (r"a=\n", r"invalid escape `\n` at position 2"),
            (r"a\x=b", r"invalid escape `\x` at position 1"),
            (r"a=b\", r"`\` at position 3 ends the selector"),
            // Commas.
            ("a=b,", "trailing `,` at position 3"),
            ("a=b,  ", "trailing `,` at position 3"),
            (",a=b", "empty requirement at position 0"),
            ("a=b,,c=d", "empty requirement at position 4"),
            ("a=b, ,c=d", "empty requirement at position 5"),
            // Positions count characters, not bytes.
            (
                "é=1,ü",
                "missing operator after field path `ü` at position 5",
            ),
        ];
        for (input, expected) in cases {
            match input.parse::<FieldSelector>() {
                Ok(selector) => panic!("{input:?} should not parse, got {selector:?}"),
                Err(e) => {
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
        let err = "a<b".parse::<FieldSelector>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "field selector `a<b`: unsupported operator `<` at position 1: \
             field selectors allow only `=`, `==` and `!=`"
        );
    }

    #[test]
    fn matches_objects() {
        let pod = json!({
            "metadata": {
                "name": "web-1",
                "labels": {"app.kubernetes.io/name": "web", "app": {"kubernetes": "nested"}},
                "annotations": {"count": "3"}
            },
            "spec": {
                "nodeName": "node-a",
                "replicas": 3,
                "float3": 3.0,
                "ratio": 0.5,
                "negative": -2,
                "big": 18446744073709551615u64,
                "exact": 9007199254740993i64,
                "paused": false,
                "nothing": null,
                "empty": "",
                "object": {},
                "list": [],
                "containers": [{"name": "main", "image": "nginx"}, {"name": "side"}]
            },
            "status": {"phase": "Running"}
        });
        let pending = json!({"spec": {}, "status": {"phase": "Pending"}});
        let cases: Vec<(&Value, &str, bool)> = vec![
            (&pod, "", true),
            // Strings compare as text.
            (&pod, "metadata.name=web-1", true),
            (&pod, "metadata.name==web-1", true),
            (&pod, "metadata.name!=web-1", false),
            (&pod, "metadata.name=web-2", false),
            (&pod, "metadata.name!=web-2", true),
            (&pod, "metadata.name=WEB-1", false),
            (&pod, "metadata.annotations.count=3", true),
            (&pod, "metadata.annotations.count=3.0", false),
            (&pod, "spec.empty=", true),
            (&pod, "spec.empty!=", false),
            // Escaped dots stay inside one segment.
            (&pod, r"metadata.labels.app\.kubernetes\.io/name=web", true),
            (&pod, "metadata.labels.app.kubernetes.io/name=web", false),
            (&pod, "metadata.labels.app.kubernetes=nested", true),
            // Numbers compare numerically.
            (&pod, "spec.replicas=3", true),
            (&pod, "spec.replicas=3.0", true),
            (&pod, "spec.replicas=3e0", true),
            (&pod, "spec.replicas=4", false),
            (&pod, "spec.replicas!=3", false),
            (&pod, "spec.replicas!=4", true),
            (&pod, "spec.replicas=three", false),
            (&pod, "spec.replicas=", false),
            (&pod, "spec.replicas!=", true),
            (&pod, "spec.float3=3", true),
            (&pod, "spec.ratio=0.5", true),
            (&pod, "spec.ratio=0.50", true),
            (&pod, "spec.ratio=.5", true),
            (&pod, "spec.ratio=1", false),
            (&pod, "spec.negative=-2", true),
            (&pod, "spec.negative=2", false),
            (&pod, "spec.big=18446744073709551615", true),
            (&pod, "spec.big=18446744073709551614", false),
            (&pod, "spec.exact=9007199254740993", true),
            (&pod, "spec.exact=9007199254740992", false),
            // Booleans.
            (&pod, "spec.paused=false", true),
            (&pod, "spec.paused!=false", false),
            (&pod, "spec.paused=true", false),
            (&pod, "spec.paused!=true", true),
            (&pod, "spec.paused=False", false),
            (&pod, "spec.paused=0", false),
            (&pod, "spec.paused=", false),
            // Missing and null behave like the empty string.
            (&pod, "spec.nothing=", true),
            (&pod, "spec.nothing!=", false),
            (&pod, "spec.nothing=null", false),
            (&pod, "spec.missing=", true),
            (&pod, "spec.missing!=", false),
            (&pod, "spec.missing=x", false),
            (&pod, "spec.missing!=x", true),
            (&pod, "metadata.name.deeper=", true),
            (&pod, "spec.nodeName=", false),
            (&pod, "spec.nodeName!=", true),
            (&pending, "spec.nodeName=", true),
            (&pending, "spec.nodeName!=", false),
            // Objects and arrays equal nothing.
            (&pod, "spec.object=", false),
            (&pod, "spec.object!=", true),
            (&pod, "spec.list=", false),
            (&pod, "spec.list!=x", true),
            (&pod, "spec.containers=main", false),
            // Array indices.
            (&pod, "spec.containers.0.name=main", true),
            (&pod, "spec.containers.1.name=side", true),
            (&pod, "spec.containers.1.name=main", false),
            (&pod, "spec.containers.1.image=", true),
            (&pod, "spec.containers.2.name=", true),
            (&pod, "spec.containers.2.name=main", false),
            (&pod, "spec.containers.+0.name=main", false),
            (&pod, "spec.containers.first.name=main", false),
            // All requirements must hold.
            (&pod, "status.phase=Running,spec.nodeName!=", true),
            (&pod, "status.phase=Running,spec.nodeName=", false),
            (&pending, "status.phase!=Running,spec.nodeName=", true),
        ];
        for (object, selector, expected) in cases {
            assert_eq!(parse(selector).matches(object), expected, "{selector:?}");
        }
    }

    #[test]
    fn array_roots_are_indexable() {
        let list = json!([{"a": "b"}, {"a": 1}]);
        assert!(parse("0.a=b").matches(&list));
        assert!(parse("1.a=1").matches(&list));
        assert!(!parse("1.a=b").matches(&list));
        assert!(!parse("0=b").matches(&list));
    }

    #[test]
    fn requirement_matches_directly() {
        let object = json!({"status": {"phase": "Running"}});
        assert!(eq(&["status", "phase"], "Running").matches(&object));
        assert!(!ne(&["status", "phase"], "Running").matches(&object));
        assert!(ne(&["status", "reason"], "Evicted").matches(&object));
    }

    #[test]
    fn everything_is_the_empty_selector() {
        let everything = FieldSelector::everything();
        assert!(everything.is_empty());
        assert_eq!(everything, parse(""));
        assert_eq!(everything, FieldSelector::default());
        assert_eq!(everything.to_string(), "");
        assert!(everything.matches(&json!(null)));
        assert!(!FieldSelector::new(vec![eq(&["a"], "")]).is_empty());
    }

    #[test]
    fn display_of_built_selectors_round_trips() {
        let selectors = [
            FieldSelector::new(vec![eq(&["a.b", "c"], " \t x, y=z! \\ ")]),
            FieldSelector::new(vec![ne(&["sp ace", "<>"], "   ")]),
            FieldSelector::new(vec![eq(&["0"], ""), ne(&["k"], "v")]),
        ];
        for selector in selectors {
            assert_eq!(parse(&selector.to_string()), selector, "{selector}");
        }
    }

    #[test]
    fn field_values_compare_as_requirements_compare_objects() {
        let object = json!({"s": "Running", "n": 3, "f": 3.5, "b": true, "z": null,
            "a": [1], "o": {"k": "v"}, "e": "", "q": "with \"quotes\""});
        let texts = [
            "Running",
            "3",
            "3.0",
            "3.5",
            "true",
            "false",
            "",
            "x",
            "with \"quotes\"",
        ];
        for key in ["s", "n", "f", "b", "z", "a", "o", "e", "q", "missing"] {
            let raw = object.get(key).map(|v| serde_json::to_vec(v).unwrap());
            let value = FieldValue::from_json(raw.as_deref());
            for text in texts {
                let requirement = eq(&[key], text);
                assert_eq!(
                    requirement.matches_field(&value),
                    requirement.matches(&object),
                    "{key} = {text:?} ({value:?})"
                );
                let requirement = ne(&[key], text);
                assert_eq!(
                    requirement.matches_field(&value),
                    requirement.matches(&object)
                );
            }
        }
    }

    #[test]
    fn paths_parse_as_in_selectors() {
        assert_eq!(parse_path("spec.nodeName").unwrap(), ["spec", "nodeName"]);
        assert_eq!(
            parse_path(r"metadata.labels.app\.kubernetes\.io/name").unwrap(),
            ["metadata", "labels", "app.kubernetes.io/name"]
        );
        assert_eq!(
            parse_path("spec..x").unwrap_err().to_string(),
            "field selector `spec..x`: empty segment in field path at position 5: segments are joined by single `.` (write `\\.` for a dot inside a segment)"
        );
        assert_eq!(
            parse_path("spec.x=y").unwrap_err().to_string(),
            "field selector `spec.x=y`: unexpected `=` at position 6 in a field path (escape it with `\\`)"
        );
        assert!(parse_path("").is_err());
    }
}
