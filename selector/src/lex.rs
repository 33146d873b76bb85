//! The lexer: a byte-for-byte port of the one in k8s.io/apimachinery
//! `pkg/labels/selector.go`, so that the same text splits into the same
//! tokens.

/// A lexical token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// A maximal run of bytes that are neither whitespace, a special symbol
    /// nor NUL: a key, a value, or one of the words `in` and `notin`, which
    /// are operators only where the parser expects an operator.
    Word(&'a str),
    /// `=`
    Eq,
    /// `==`
    DoubleEq,
    /// `!=`
    NotEq,
    /// `!`
    Bang,
    /// `(`
    Open,
    /// `)`
    Close,
    /// `,`
    Comma,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// The end of the input.
    End,
}

impl Token<'_> {
    /// How the token is named in error messages.
    pub(crate) fn describe(&self) -> String {
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

/// The only whitespace: other Unicode spaces such as U+00A0 are part of a
/// word (and so make the key or value invalid).
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Bytes that end a word and start a symbol token.
fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'<' | b'>')
}

/// Splits `input` into tokens, each with the byte offset where it starts.
/// Never fails: anything unexpected is a word, checked by the parser where it
/// knows whether it wants a key or a value. The last token is always
/// [`Token::End`].
///
/// A NUL byte is treated as the Kubernetes lexer treats it, because that
/// lexer reads a 0 byte as the end of the string: where a token would start
/// (at the beginning, after whitespace, or after another NUL), a NUL ends the
/// input and everything after it is ignored; directly after a word or a
/// symbol, it ends that token and is skipped, like a separator.
pub(crate) fn tokenize(input: &str) -> Vec<(Token<'_>, usize)> {
    let bytes = input.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    loop {
        while bytes.get(pos).copied().is_some_and(is_whitespace) {
            pos += 1;
        }
        let start = pos;
        let token = match bytes.get(pos).copied() {
            None | Some(0) => {
                tokens.push((Token::End, start));
                return tokens;
            }
            Some(first) if is_special(first) => {
                // Symbol runs are scanned greedily into the longest known
                // token: `===` is `==` then `=`, `<=` is `<` then `=`.
                let second = bytes.get(pos + 1).copied();
                let (token, len) = match (first, second) {
                    (b'=', Some(b'=')) => (Token::DoubleEq, 2),
                    (b'!', Some(b'=')) => (Token::NotEq, 2),
                    (b'=', _) => (Token::Eq, 1),
                    (b'!', _) => (Token::Bang, 1),
                    (b'(', _) => (Token::Open, 1),
                    (b')', _) => (Token::Close, 1),
                    (b',', _) => (Token::Comma, 1),
                    (b'<', _) => (Token::Lt, 1),
                    _ => (Token::Gt, 1),
                };
                pos += len;
                token
            }
            Some(_) => {
                while bytes
                    .get(pos)
                    .is_some_and(|&b| b != 0 && !is_whitespace(b) && !is_special(b))
                {
                    pos += 1;
                }
                // Words end at ASCII bytes or at the end, so this slice is
                // on character boundaries.
                Token::Word(&input[start..pos])
            }
        };
        tokens.push((token, start));
        if bytes.get(pos) == Some(&0) {
            pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Token::*;
    use super::*;

    fn kinds(input: &str) -> Vec<Token<'_>> {
        tokenize(input).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn symbols_are_scanned_greedily() {
        assert_eq!(kinds("==="), [DoubleEq, Eq, End]);
        assert_eq!(kinds("!==v"), [NotEq, Eq, Word("v"), End]);
        assert_eq!(kinds("<=>"), [Lt, Eq, Gt, End]);
        assert_eq!(kinds("!!="), [Bang, NotEq, End]);
        assert_eq!(kinds("(),"), [Open, Close, Comma, End]);
        assert_eq!(kinds("=!"), [Eq, Bang, End]);
    }

    #[test]
    fn words_run_to_whitespace_or_a_symbol() {
        assert_eq!(
            kinds(" a.b/c-d\tin\r\nnotin(é\u{a0}x)"),
            [
                Word("a.b/c-d"),
                Word("in"),
                Word("notin"),
                Open,
                Word("é\u{a0}x"),
                Close,
                End
            ]
        );
        assert_eq!(kinds("a\u{b}b\u{c}"), [Word("a\u{b}b\u{c}"), End]);
    }

    #[test]
    fn positions_are_byte_offsets() {
        let positions: Vec<usize> = tokenize("é = x").into_iter().map(|(_, p)| p).collect();
        assert_eq!(positions, [0, 3, 5, 6]);
    }

    #[test]
    fn nul_ends_the_input_or_the_token_as_in_kubernetes() {
        assert_eq!(kinds("\0a=b"), [End]);
        assert_eq!(kinds("a \0 b"), [Word("a"), End]);
        assert_eq!(kinds("a\0b"), [Word("a"), Word("b"), End]);
        assert_eq!(kinds("a\0\0b"), [Word("a"), End]);
        assert_eq!(kinds("a=\0b"), [Word("a"), Eq, Word("b"), End]);
        assert_eq!(kinds("a==\0"), [Word("a"), DoubleEq, End]);
        assert_eq!(kinds("!\0="), [Bang, Eq, End]);
    }
}
