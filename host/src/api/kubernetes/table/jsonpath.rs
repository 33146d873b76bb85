//! The JSONPath of CRD printer columns (`additionalPrinterColumns[].jsonPath`),
//! parsed once when the CRD is read and evaluated per object.
//!
//! The subset is the one CRDs use in practice, with kubectl's semantics
//! (client-go's `jsonpath`, with missing keys allowed):
//! - `.a.b`, `.a\.b` (an escaped dot inside a key), `['key.with.dots']`,
//!   `["k"]`, `['a','b']`;
//! - `[0]`, `[-1]` (from the end), `[1:3]`, `[:2]`, `[0,2]`;
//! - `[*]` and `.*` (every element of an array, every value of an object);
//! - `[?(@.type=="Ready")]` with `==`, `!=`, `<`, `>`, `<=`, `>=` against a
//!   quoted string, a number, `true`/`false` or another `@` path, and
//!   `[?(@.field)]` (the field exists).
//!
//! Evaluation follows client-go: a missing key gives nothing (an empty
//! cell), while an index out of range, indexing or filtering something that
//! is not an array, or comparing values of different types is an error (the
//! API server then prints an empty cell too). Recursive descent (`..`) and
//! slice steps (`[::2]`) are rejected when the path is read.

use std::cmp::Ordering;

use serde_json::Value;

/// A parsed path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonPath {
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// Object members by name (one, or a union).
    Keys(Vec<String>),
    /// Every element of an array, every value of an object.
    Wildcard,
    /// Array elements by index (one, or a union); negative from the end.
    Indexes(Vec<i64>),
    /// Array elements from `start` (inclusive) to `end` (exclusive).
    Slice {
        start: Option<i64>,
        end: Option<i64>,
    },
    /// Array elements for which the filter holds.
    Filter(Box<Filter>),
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    left: JsonPath,
    /// `None`: the filter only asks that `left` exists.
    compare: Option<(Op, Operand)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Operand {
    Literal(Value),
    Path(JsonPath),
}

/// Why a column's JSONPath cannot be used. Shown to operators with the CRD
/// and column it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} at byte {at} of `{path}`")]
pub(crate) struct PathError {
    /// The whole path as written.
    pub(crate) path: String,
    /// Where in it reading stopped.
    pub(crate) at: usize,
    /// What was expected or is not supported there.
    pub(crate) what: String,
}

/// Why evaluating a path against one object failed (the cell is empty).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EvalError {
    /// `[n]` past the end of an array.
    #[error("index {index} is out of range for an array of {len}")]
    OutOfRange {
        /// The index as written (negative from the end).
        index: i64,
        /// The array's length.
        len: usize,
    },
    /// An index, slice or filter applied to something else than an array.
    #[error("{0} is not an array")]
    NotAnArray(&'static str),
    /// A filter comparing values of different types, or values that have
    /// no order (`<` on booleans, anything with `null`).
    #[error("cannot compare {0} with {1}")]
    Incomparable(&'static str, &'static str),
    /// A filter whose side gives no value or several.
    #[error("a filter compares one value at a time, got {0}")]
    NotOneValue(usize),
}

impl JsonPath {
    /// Reads a path as written in a CRD column (`.status.replicas`).
    pub(crate) fn parse(path: &str) -> Result<JsonPath, PathError> {
        let mut parser = Parser { text: path, pos: 0 };
        if !path.starts_with('.') {
            return Err(parser.error("a column's JSONPath starts with `.`"));
        }
        let json_path = parser.path(false)?;
        if parser.pos < path.len() {
            return Err(parser.error("unexpected text"));
        }
        Ok(json_path)
    }

    /// The path through object keys `keys`, as `.a.b` reads.
    pub(crate) fn keys(keys: &[&str]) -> JsonPath {
        JsonPath {
            steps: keys
                .iter()
                .map(|k| Step::Keys(vec![k.to_string()]))
                .collect(),
        }
    }

    /// The values the path selects in `root`, in document order.
    pub(crate) fn find<'v>(&self, root: &'v Value) -> Result<Vec<&'v Value>, EvalError> {
        let mut current = vec![root];
        for step in &self.steps {
            let mut next = Vec::new();
            for value in current {
                step.apply(value, &mut next)?;
            }
            current = next;
        }
        Ok(current)
    }
}

impl Step {
    fn apply<'v>(&self, value: &'v Value, out: &mut Vec<&'v Value>) -> Result<(), EvalError> {
        match self {
            Step::Keys(keys) => {
                // A key of something that is not an object is missing, not
                // an error: kubectl prints nothing for `.spec.size.x`.
                if let Value::Object(map) = value {
                    out.extend(keys.iter().filter_map(|k| map.get(k)));
                }
            }
            Step::Wildcard => match value {
                Value::Array(items) => out.extend(items),
                Value::Object(map) => out.extend(map.values()),
                _ => {}
            },
            Step::Indexes(indexes) => {
                let items = array(value)?;
                for &index in indexes {
                    let len = items.len();
                    let at = if index < 0 { index + len as i64 } else { index };
                    match usize::try_from(at).ok().and_then(|at| items.get(at)) {
                        Some(item) => out.push(item),
                        None => return Err(EvalError::OutOfRange { index, len }),
                    }
                }
            }
            Step::Slice { start, end } => {
                let items = array(value)?;
                let len = items.len() as i64;
                let bound = |b: Option<i64>, default: i64| match b {
                    Some(b) if b < 0 => (b + len).max(0),
                    Some(b) => b.min(len),
                    None => default,
                };
                let (from, to) = (bound(*start, 0), bound(*end, len));
                if from < to {
                    out.extend(&items[from as usize..to as usize]);
                }
            }
            Step::Filter(filter) => {
                for item in array(value)? {
                    if filter.holds(item)? {
                        out.push(item);
                    }
                }
            }
        }
        Ok(())
    }
}

fn array(value: &Value) -> Result<&[Value], EvalError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(EvalError::NotAnArray(type_name(other))),
    }
}

impl Filter {
    fn holds(&self, item: &Value) -> Result<bool, EvalError> {
        let lefts = self.left.find(item)?;
        let Some((op, operand)) = &self.compare else {
            return Ok(!lefts.is_empty());
        };
        let left = one(&lefts)?;
        let right = match operand {
            Operand::Literal(v) => v,
            Operand::Path(path) => one(&path.find(item)?)?,
        };
        // Booleans are equal or not, never ordered.
        if let (Value::Bool(a), Value::Bool(b)) = (left, right) {
            return match op {
                Op::Eq => Ok(a == b),
                Op::Ne => Ok(a != b),
                _ => Err(EvalError::Incomparable(type_name(left), type_name(right))),
            };
        }
        let ordering = compare(left, right)?;
        Ok(match op {
            Op::Eq => ordering == Ordering::Equal,
            Op::Ne => ordering != Ordering::Equal,
            Op::Lt => ordering == Ordering::Less,
            Op::Gt => ordering == Ordering::Greater,
            Op::Le => ordering != Ordering::Greater,
            Op::Ge => ordering != Ordering::Less,
        })
    }
}

fn one<'v>(values: &[&'v Value]) -> Result<&'v Value, EvalError> {
    match values {
        [v] => Ok(v),
        other => Err(EvalError::NotOneValue(other.len())),
    }
}

/// Orders two values of the same kind, as Go templates do: integers with
/// integers, floats with floats, text with text. Anything else is an error.
fn compare(left: &Value, right: &Value) -> Result<Ordering, EvalError> {
    let incomparable = || EvalError::Incomparable(type_name(left), type_name(right));
    match (left, right) {
        (Value::String(a), Value::String(b)) => Ok(a.cmp(b)),
        (Value::Number(a), Value::Number(b)) if a.is_f64() && b.is_f64() => {
            a.as_f64().partial_cmp(&b.as_f64()).ok_or_else(incomparable)
        }
        (Value::Number(a), Value::Number(b)) if !a.is_f64() && !b.is_f64() => {
            // Integers past i64 are positive, and above every i64.
            Ok(match (a.as_i64(), b.as_i64()) {
                (Some(a), Some(b)) => a.cmp(&b),
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (None, None) => a.as_u64().cmp(&b.as_u64()),
            })
        }
        _ => Err(incomparable()),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> PathError {
        PathError {
            path: self.text.to_string(),
            at: self.pos,
            what: what.to_string(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    /// Steps until the end, or (inside a filter) until a character that
    /// cannot continue a path.
    fn path(&mut self, in_filter: bool) -> Result<JsonPath, PathError> {
        let mut steps = Vec::new();
        loop {
            match self.peek() {
                Some('.') => {
                    self.pos += 1;
                    match self.peek() {
                        Some('.') => {
                            return Err(self.error("recursive descent (`..`) is not supported"));
                        }
                        Some('*') => {
                            self.pos += 1;
                            steps.push(Step::Wildcard);
                        }
                        // `.` alone (the whole object), or `.[0]`.
                        None | Some('[') => {}
                        Some(_) if in_filter && self.at_filter_end() => {}
                        Some(_) => steps.push(Step::Keys(vec![self.field(in_filter)?])),
                    }
                }
                Some('[') => {
                    self.pos += 1;
                    steps.push(self.bracket()?);
                }
                _ => break,
            }
        }
        Ok(JsonPath { steps })
    }

    fn at_filter_end(&self) -> bool {
        let rest = self.rest().trim_start();
        rest.starts_with(')') || OPERATORS.iter().any(|(t, _)| rest.starts_with(t))
    }

    /// A key after `.`, up to the next `.`, `[`, `]`, `,`, space or (in
    /// filters) `)` or a comparison; `\` makes the next character part of
    /// the key.
    fn field(&mut self, in_filter: bool) -> Result<String, PathError> {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if matches!(c, '.' | '[' | ']' | ',' | '{' | '}' | '@' | '$')
                || c.is_whitespace()
                || (in_filter && matches!(c, '(' | ')' | '=' | '!' | '<' | '>' | '~'))
            {
                break;
            }
            self.pos += c.len_utf8();
            if c == '\\' {
                match self.peek() {
                    Some(escaped) => {
                        self.pos += escaped.len_utf8();
                        name.push(escaped);
                    }
                    None => return Err(self.error("`\\` at the end of the path")),
                }
            } else {
                name.push(c);
            }
        }
        if name.is_empty() {
            return Err(self.error("expected a field name after `.`"));
        }
        Ok(name)
    }

    /// What follows `[`, up to and including `]`.
    fn bracket(&mut self) -> Result<Step, PathError> {
        self.skip_spaces();
        let step = match self.peek() {
            Some('*') => {
                self.pos += 1;
                Step::Wildcard
            }
            Some('?') => {
                self.pos += 1;
                Step::Filter(Box::new(self.filter()?))
            }
            Some('\'' | '"') => {
                let mut keys = vec![self.quoted()?];
                while self.comma() {
                    keys.push(self.quoted()?);
                }
                Step::Keys(keys)
            }
            Some(c) if c == '-' || c == ':' || c.is_ascii_digit() => self.indexes()?,
            _ => return Err(self.error("expected `*`, `?(`, a quoted key or an index after `[`")),
        };
        self.skip_spaces();
        if !self.eat(']') {
            return Err(self.error("expected `]`"));
        }
        Ok(step)
    }

    fn comma(&mut self) -> bool {
        self.skip_spaces();
        let found = self.eat(',');
        self.skip_spaces();
        found
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// `'text'` or `"text"`, with `\` escaping the next character.
    fn quoted(&mut self) -> Result<String, PathError> {
        let Some(quote) = self.peek().filter(|c| matches!(c, '\'' | '"')) else {
            return Err(self.error("expected a quoted key"));
        };
        self.pos += 1;
        let mut text = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated quoted text"));
            };
            self.pos += c.len_utf8();
            match c {
                c if c == quote => return Ok(text),
                '\\' => match self.peek() {
                    Some(escaped) => {
                        self.pos += escaped.len_utf8();
                        text.push(escaped);
                    }
                    None => return Err(self.error("unterminated quoted text")),
                },
                c => text.push(c),
            }
        }
    }

    /// `1`, `-1`, `0,2`, `1:3`, `:2`, `1:`.
    fn indexes(&mut self) -> Result<Step, PathError> {
        let first = self.integer()?;
        if self.eat(':') {
            let end = self.integer()?;
            if self.peek() == Some(':') {
                return Err(self.error("slice steps (`[a:b:c]`) are not supported"));
            }
            return Ok(Step::Slice { start: first, end });
        }
        let Some(first) = first else {
            return Err(self.error("expected an index"));
        };
        let mut indexes = vec![first];
        while self.comma() {
            match self.integer()? {
                Some(i) => indexes.push(i),
                None => return Err(self.error("expected an index after `,`")),
            }
        }
        Ok(Step::Indexes(indexes))
    }

    /// An optional integer (absent in `[:2]`).
    fn integer(&mut self) -> Result<Option<i64>, PathError> {
        self.skip_spaces();
        let start = self.pos;
        self.eat('-');
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let text = &self.text[start..self.pos];
        self.skip_spaces();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse()
            .map(Some)
            .map_err(|_| self.error("expected an index (a whole number)"))
    }

    /// `(@.a == 'x')` or `(@.a)`, after `?`.
    fn filter(&mut self) -> Result<Filter, PathError> {
        if !self.eat('(') {
            return Err(self.error("expected `(` after `?`"));
        }
        self.skip_spaces();
        let left = self.relative_path()?;
        self.skip_spaces();
        let compare = if self.eat(')') {
            None
        } else {
            let Some(&(token, op)) = OPERATORS.iter().find(|(t, _)| self.rest().starts_with(t))
            else {
                return Err(self.error("expected `==`, `!=`, `<`, `>`, `<=`, `>=` or `)`"));
            };
            self.pos += token.len();
            self.skip_spaces();
            let operand = self.operand()?;
            self.skip_spaces();
            if !self.eat(')') {
                return Err(self.error("expected `)` to close the filter"));
            }
            Some((op, operand))
        };
        Ok(Filter { left, compare })
    }

    fn relative_path(&mut self) -> Result<JsonPath, PathError> {
        if !self.eat('@') {
            return Err(self.error("a filter starts with `@`, the element it tests"));
        }
        self.path(true)
    }

    fn operand(&mut self) -> Result<Operand, PathError> {
        match self.peek() {
            Some('@') => Ok(Operand::Path(self.relative_path()?)),
            Some('\'' | '"') => Ok(Operand::Literal(Value::String(self.quoted()?))),
            _ if self.rest().starts_with("true") => {
                self.pos += 4;
                Ok(Operand::Literal(Value::Bool(true)))
            }
            _ if self.rest().starts_with("false") => {
                self.pos += 5;
                Ok(Operand::Literal(Value::Bool(false)))
            }
            _ => self.number().map(Operand::Literal),
        }
    }

    fn number(&mut self) -> Result<Value, PathError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.pos += 1;
        }
        let text = &self.text[start..self.pos];
        let value = match text.parse::<i64>() {
            Ok(i) => Some(Value::from(i)),
            Err(_) => text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number),
        };
        value.ok_or_else(|| {
            self.pos = start;
            self.error("expected a quoted string, a number, `true`, `false` or an `@` path")
        })
    }
}

/// Two-character operators first, so that `<=` is not read as `<`.
const OPERATORS: [(&str, Op); 6] = [
    ("==", Op::Eq),
    ("!=", Op::Ne),
    ("<=", Op::Le),
    (">=", Op::Ge),
    ("<", Op::Lt),
    (">", Op::Gt),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object() -> Value {
        json!({
            "metadata": {
                "name": "w1",
                "labels": {"app.kubernetes.io/name": "widget", "tier": "be"},
            },
            "spec": {"size": 3, "ratio": 1.5, "color": "blue", "on": true, "hosts": ["a", "b", "c"]},
            "status": {
                "conditions": [
                    {"type": "Synced", "status": "True", "age": 4},
                    {"type": "Ready", "status": "False", "age": 9},
                ],
                "empty": null,
            },
        })
    }

    fn find(path: &str) -> Result<Vec<Value>, EvalError> {
        let object = object();
        let parsed = JsonPath::parse(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        parsed
            .find(&object)
            .map(|values| values.into_iter().cloned().collect())
    }

    #[test]
    fn selects_what_kubectl_selects() {
        let cases: &[(&str, Value)] = &[
            (".spec.size", json!([3])),
            (".spec.color", json!(["blue"])),
            (".", json!([object()])),
            (".spec.missing", json!([])),
            (".spec.size.deeper", json!([])),
            (".status.empty", json!([null])),
            (
                ".metadata.labels['app.kubernetes.io/name']",
                json!(["widget"]),
            ),
            (".metadata.labels[\"tier\"]", json!(["be"])),
            (
                ".metadata.labels.app\\.kubernetes\\.io/name",
                json!(["widget"]),
            ),
            (
                ".metadata.labels['tier', 'nope', 'app.kubernetes.io/name']",
                json!(["be", "widget"]),
            ),
            (".spec.hosts[0]", json!(["a"])),
            (".spec.hosts[-1]", json!(["c"])),
            (".spec.hosts[0,2]", json!(["a", "c"])),
            (".spec.hosts[1:]", json!(["b", "c"])),
            (".spec.hosts[:2]", json!(["a", "b"])),
            (".spec.hosts[-2:]", json!(["b", "c"])),
            (".spec.hosts[2:1]", json!([])),
            (".spec.hosts[*]", json!(["a", "b", "c"])),
            (".status.conditions[*].type", json!(["Synced", "Ready"])),
            (".status.conditions.type", json!([])),
            (".metadata.labels.*", json!(["widget", "be"])),
            (
                ".status.conditions[?(@.type==\"Ready\")].status",
                json!(["False"]),
            ),
            (
                ".status.conditions[?(@.type == 'Ready')].status",
                json!(["False"]),
            ),
            (
                ".status.conditions[?(@.type!='Ready')].type",
                json!(["Synced"]),
            ),
            (".status.conditions[?(@.age>5)].type", json!(["Ready"])),
            (".status.conditions[?(@.age<=4)].type", json!(["Synced"])),
            (
                ".status.conditions[?(@.age>=4)].type",
                json!(["Synced", "Ready"]),
            ),
            (".status.conditions[?(@.age<4)].type", json!([])),
            (
                ".status.conditions[?(@.status)].type",
                json!(["Synced", "Ready"]),
            ),
            (".status.conditions[?(@.reason)].type", json!([])),
            (".status.conditions[?(@.type == @.status)].type", json!([])),
            (".spec.hosts[?(@ == 'b')]", json!(["b"])),
        ];
        for (path, want) in cases {
            assert_eq!(find(path).as_ref(), Ok(want.as_array().unwrap()), "{path}");
        }
    }

    #[test]
    fn evaluation_errors_are_values_not_panics() {
        let cases: &[(&str, EvalError)] = &[
            (".spec.hosts[3]", EvalError::OutOfRange { index: 3, len: 3 }),
            (
                ".spec.hosts[-4]",
                EvalError::OutOfRange { index: -4, len: 3 },
            ),
            (".spec.color[0]", EvalError::NotAnArray("a string")),
            (".spec[1:2]", EvalError::NotAnArray("an object")),
            (".spec[?(@.x)]", EvalError::NotAnArray("an object")),
            (
                ".status.conditions[?(@.age > 'old')]",
                EvalError::Incomparable("an integer", "a string"),
            ),
            (
                ".status.conditions[?(@.age == 4.0)]",
                EvalError::Incomparable("an integer", "a float"),
            ),
            (
                ".status.conditions[?(@.reason == 'x')]",
                EvalError::NotOneValue(0),
            ),
        ];
        for (path, want) in cases {
            assert_eq!(find(path).as_ref(), Err(want), "{path}");
        }
        // Booleans are equal or not, never ordered.
        let flags = json!({"items": [{"on": true}, {"on": false}]});
        let eq = JsonPath::parse(".items[?(@.on == true)]").unwrap();
        assert_eq!(eq.find(&flags).unwrap(), [&json!({"on": true})]);
        let lt = JsonPath::parse(".items[?(@.on < true)]").unwrap();
        assert_eq!(
            lt.find(&flags),
            Err(EvalError::Incomparable("a boolean", "a boolean"))
        );
        let floats = JsonPath::parse(".spec[?(@ > 1.0)]").unwrap();
        let ratios = json!({"spec": [0.5, 1.5]});
        assert_eq!(floats.find(&ratios).unwrap(), [&json!(1.5)]);
    }

    #[test]
    fn bad_paths_are_reported_where_they_go_wrong() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "starts with `.`"),
            ("spec.size", 0, "starts with `.`"),
            ("$.spec", 0, "starts with `.`"),
            (".spec..size", 6, "recursive descent"),
            (".spec.hosts[", 12, "expected `*`"),
            (".spec.hosts[0", 13, "expected `]`"),
            (".spec.hosts[a]", 12, "expected `*`"),
            (".spec.hosts[1:2:3]", 15, "slice steps"),
            (".spec.hosts[0,]", 14, "index after `,`"),
            (".metadata.labels['tier", 22, "unterminated"),
            (".metadata.labels['a' 'b']", 21, "expected `]`"),
            (".status.conditions[?@.type=='x']", 20, "expected `(`"),
            (".status.conditions[?(.type=='x')]", 21, "starts with `@`"),
            (".status.conditions[?(@.type=~'x')]", 27, "expected `==`"),
            (
                ".status.conditions[?(@.type==x)]",
                29,
                "a quoted string, a number",
            ),
            (
                ".status.conditions[?(@.type=='x']",
                32,
                "to close the filter",
            ),
            (".spec.size]", 10, "unexpected text"),
            (".a\\", 3, "at the end"),
        ];
        for (path, at, what) in cases {
            let err = JsonPath::parse(path).unwrap_err();
            assert_eq!(err.at, *at, "{path}: {err}");
            assert!(err.what.contains(what), "{path}: {err}");
            assert!(err.to_string().contains(&format!("`{path}`")), "{err}");
        }
    }
}
