//! The parser: the grammar of k8s.io/apimachinery `labels.Parse`, with
//! messages that say what was wrong and where.

use std::collections::BTreeSet;

use crate::lex::{Token, tokenize};
use crate::validate::{key_problem, value_problem};
use crate::{LabelSelector, Requirement, SelectorError};

/// Parses `input`; see the crate documentation for the grammar.
pub(crate) fn parse(input: &str) -> Result<LabelSelector, SelectorError> {
    Parser {
        input,
        tokens: tokenize(input),
        next: 0,
    }
    .selector()
}

/// A value as written, with the byte offset of its token (or, for an omitted
/// value, of the token that stands where it would be).
type Spanned<'a> = (&'a str, usize);

/// Recursive-descent parser over the token list. Offsets in tokens are
/// bytes; messages convert them to characters.
struct Parser<'a> {
    input: &'a str,
    /// Never empty: ends with [`Token::End`].
    tokens: Vec<(Token<'a>, usize)>,
    /// Index of the next token; never moves past the final `End`.
    next: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> (Token<'a>, usize) {
        self.tokens[self.next]
    }

    fn bump(&mut self) -> (Token<'a>, usize) {
        let token = self.tokens[self.next];
        if self.next + 1 < self.tokens.len() {
            self.next += 1;
        }
        token
    }

    /// The character offset of byte offset `at`.
    fn position(&self, at: usize) -> usize {
        self.input[..at].chars().count()
    }

    /// An error at byte offset `at`; `reason` is built from the character
    /// position.
    fn error(&self, at: usize, reason: impl FnOnce(usize) -> String) -> SelectorError {
        let position = self.position(at);
        SelectorError::new(self.input, reason(position), position)
    }

    fn selector(mut self) -> Result<LabelSelector, SelectorError> {
        let mut requirements = Vec::new();
        match self.peek() {
            (Token::End, _) => return Ok(LabelSelector::everything()),
            (Token::Word(_) | Token::Bang, _) => {}
            (Token::Comma, at) => {
                return Err(self.error(at, |pos| {
                    format!("empty requirement at position {pos}: expected a label key before `,`")
                }));
            }
            (other, at) => {
                return Err(self.error(at, |pos| {
                    format!(
                        "expected a label key or `!` at position {pos}, found {}",
                        other.describe()
                    )
                }));
            }
        }
        loop {
            requirements.push(self.requirement()?);
            match self.bump() {
                (Token::End, _) => return Ok(LabelSelector::new(requirements)),
                (Token::Comma, comma) => match self.peek() {
                    (Token::Word(_) | Token::Bang, _) => {}
                    (Token::End, _) => {
                        return Err(self.error(comma, |pos| {
                            format!(
                                "trailing `,` at position {pos}: expected another requirement \
                                 after it"
                            )
                        }));
                    }
                    (Token::Comma, at) => {
                        return Err(self.error(at, |pos| {
                            format!(
                                "empty requirement at position {pos}: expected a label key \
                                 before `,`"
                            )
                        }));
                    }
                    (other, at) => {
                        return Err(self.error(at, |pos| {
                            format!(
                                "expected a label key or `!` after `,` at position {pos}, found {}",
                                other.describe()
                            )
                        }));
                    }
                },
                (Token::Close, at) => {
                    return Err(self.error(at, |pos| {
                        format!("unmatched `)` at position {pos}: there is no `(` to close")
                    }));
                }
                (other, at) => {
                    return Err(self.error(at, |pos| {
                        format!(
                            "unexpected {} at position {pos}: expected `,` or the end of the \
                             selector",
                            other.describe()
                        )
                    }));
                }
            }
        }
    }

    /// One requirement; the next token is a word or `!`.
    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        match self.bump() {
            (Token::Bang, _) => {
                let key = match self.bump() {
                    (Token::Word(key), at) => self.check_key(key, at)?,
                    (other, at) => {
                        return Err(self.error(at, |pos| {
                            format!(
                                "expected a label key after `!` at position {pos}, found {}",
                                other.describe()
                            )
                        }));
                    }
                };
                match self.peek() {
                    (Token::Comma | Token::End, _) => Ok(Requirement::DoesNotExist { key }),
                    (other, at) => Err(self.error(at, |pos| {
                        format!(
                            "`!{key}` only tests that the label is absent and takes no operator \
                             or value, but found {} at position {pos}",
                            other.describe()
                        )
                    })),
                }
            }
            (Token::Word(key), at) => {
                let key = self.check_key(key, at)?;
                self.operator(key)
            }
            (other, at) => Err(self.error(at, |pos| {
                format!(
                    "expected a label key at position {pos}, found {}",
                    other.describe()
                )
            })),
        }
    }

    /// What follows a key: nothing (`Exists`), or an operator and its
    /// value(s).
    fn operator(&mut self, key: String) -> Result<Requirement, SelectorError> {
        let (token, at) = self.peek();
        match token {
            Token::Comma | Token::End => Ok(Requirement::Exists { key }),
            Token::Eq | Token::DoubleEq | Token::NotEq => {
                self.bump();
                let (value, value_at) = self.exact_value(token)?;
                self.check_value(&key, value, value_at)?;
                let value = value.to_string();
                Ok(if token == Token::NotEq {
                    Requirement::NotEquals { key, value }
                } else {
                    Requirement::Equals { key, value }
                })
            }
            Token::Gt | Token::Lt => {
                self.bump();
                let (text, value_at) = self.exact_value(token)?;
                let value = self.integer(&key, token, text, value_at)?;
                self.check_bound(&key, token, text, value_at)?;
                Ok(if token == Token::Gt {
                    Requirement::GreaterThan { key, value }
                } else {
                    Requirement::LessThan { key, value }
                })
            }
            Token::Word(word @ ("in" | "notin")) => {
                self.bump();
                let written = self.value_set(word)?;
                let mut values = BTreeSet::new();
                for (value, value_at) in written {
                    self.check_value(&key, value, value_at)?;
                    values.insert(value.to_string());
                }
                Ok(if word == "in" {
                    Requirement::In { key, values }
                } else {
                    Requirement::NotIn { key, values }
                })
            }
            Token::Word(word @ ("gt" | "lt")) => Err(self.error(at, |pos| {
                let symbol = if word == "gt" { '>' } else { '<' };
                format!(
                    "`{word}` at position {pos} is not an operator: write `{key}{symbol}N` \
                     to compare `{key}` with the integer N"
                )
            })),
            other => Err(self.error(at, |pos| {
                format!(
                    "expected an operator after key `{key}` at position {pos}, found {}: \
                     use `=`, `==`, `!=`, `in`, `notin`, `>`, `<`, or `,` to start the next \
                     requirement",
                    other.describe()
                )
            })),
        }
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; missing (followed by `,`
    /// or the end) means the empty value.
    fn exact_value(&mut self, operator: Token<'a>) -> Result<Spanned<'a>, SelectorError> {
        match self.peek() {
            (Token::Comma | Token::End, at) => Ok(("", at)),
            (Token::Word(value), at) => {
                self.bump();
                Ok((value, at))
            }
            (other, at) => Err(self.error(at, |pos| {
                format!(
                    "expected a value after {} at position {pos}, found {}",
                    operator.describe(),
                    other.describe()
                )
            })),
        }
    }

    /// The parenthesised list after `in` / `notin`, as written. An item
    /// between commas may be left out to mean the empty value, and `()` is
    /// the set holding only the empty value.
    fn value_set(&mut self, operator: &str) -> Result<Vec<Spanned<'a>>, SelectorError> {
        let open = match self.bump() {
            (Token::Open, at) => at,
            (other, at) => {
                return Err(self.error(at, |pos| {
                    format!(
                        "expected `(` after `{operator}` at position {pos}, found {}",
                        other.describe()
                    )
                }));
            }
        };
        let unclosed = |parser: &Self| {
            parser.error(open, |pos| {
                format!("missing `)` to close the `(` at position {pos}")
            })
        };
        let mut values = Vec::new();
        loop {
            match self.peek() {
                (Token::Word(value), at) => {
                    self.bump();
                    values.push((value, at));
                }
                (Token::Comma | Token::Close, at) => values.push(("", at)),
                (Token::End, _) => return Err(unclosed(self)),
                (other, at) => {
                    return Err(self.error(at, |pos| {
                        format!(
                            "expected a value, `,` or `)` at position {pos}, found {}",
                            other.describe()
                        )
                    }));
                }
            }
            match self.bump() {
                (Token::Comma, _) => {}
                (Token::Close, _) => return Ok(values),
                (Token::End, _) => return Err(unclosed(self)),
                (other, at) => {
                    return Err(self.error(at, |pos| {
                        format!(
                            "expected `,` or `)` at position {pos}, found {}",
                            other.describe()
                        )
                    }));
                }
            }
        }
    }

    fn check_key(&self, key: &str, at: usize) -> Result<String, SelectorError> {
        match key_problem(key) {
            None => Ok(key.to_string()),
            Some(problem) => Err(self.error(at, |pos| {
                format!("key `{key}` is not a valid label key: {problem} (at position {pos})")
            })),
        }
    }

    fn check_value(&self, key: &str, value: &str, at: usize) -> Result<(), SelectorError> {
        match value_problem(key, value) {
            None => Ok(()),
            Some(problem) => Err(self.error(at, |pos| format!("{problem} (at position {pos})"))),
        }
    }

    /// The bound of `>` / `<`: a base-10 `i64`, as `strconv.ParseInt` reads
    /// it (which allows a sign and leading zeros).
    fn integer(
        &self,
        key: &str,
        operator: Token<'_>,
        text: &str,
        at: usize,
    ) -> Result<i64, SelectorError> {
        const RULE: &str = "for 'Gt', 'Lt' operators, the value must be an integer";
        if let Ok(value) = text.parse::<i64>() {
            return Ok(value);
        }
        let operator = operator.describe();
        Err(self.error(at, |pos| {
            if text.is_empty() {
                format!("missing value after {operator} at position {pos}: {RULE}")
            } else if is_integer_syntax(text) {
                format!(
                    "value `{text}` of `{key}` after {operator} (at position {pos}) is out of \
                     range: {RULE} from {} to {}",
                    i64::MIN,
                    i64::MAX
                )
            } else {
                format!(
                    "value `{text}` of `{key}` after {operator} (at position {pos}) is not a \
                     number: {RULE}"
                )
            }
        }))
    }

    /// The bound of `>` / `<` must also be a valid label value, so it cannot
    /// carry a sign.
    fn check_bound(
        &self,
        key: &str,
        operator: Token<'_>,
        text: &str,
        at: usize,
    ) -> Result<(), SelectorError> {
        match value_problem(key, text) {
            None => Ok(()),
            Some(problem) => Err(self.error(at, |pos| {
                let hint = if text.starts_with(['+', '-']) {
                    format!(
                        ", so the bound of {} cannot have a sign",
                        operator.describe()
                    )
                } else {
                    String::new()
                };
                format!("{problem}{hint} (at position {pos})")
            })),
        }
    }
}

/// Whether `text` is an optional sign and at least one digit: what an `i64`
/// parse accepts apart from the range.
fn is_integer_syntax(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}
