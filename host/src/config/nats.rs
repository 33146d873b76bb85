//! The `nats` sink of a subscription as configured ([`NatsSinkConfig`]),
//! checked when the configuration is read: the server addresses, the
//! subject template ([`SubjectTemplate`]; the placeholders are described in
//! `notify::nats`, which publishes), the stream name and the ack timeout.

use async_nats::ServerAddr;

/// `nats` sink settings of a subscription.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an object with `url`"
)]
pub struct NatsSinkConfig {
    /// Server URL(s), e.g. `nats://127.0.0.1:4222` (comma-separated for
    /// several). `nats://` and `tls://` are accepted, or a bare `host:port`;
    /// the port defaults to 4222.
    pub url: String,
    /// Subject template; default `grw.{group}.{version}.{kind}.{namespace}`.
    /// See the module documentation for the placeholders.
    #[serde(default = "default_subject")]
    pub subject: String,
    /// JetStream stream; created if missing, with subjects = the template
    /// with every placeholder token replaced by `*`. Default `GRW`.
    #[serde(default = "default_stream")]
    pub stream: String,
    /// How long a send may take, acknowledgement included, in seconds
    /// (default 10).
    #[serde(default = "default_ack_timeout_second")]
    pub ack_timeout_second: u64,
}

fn default_subject() -> String {
    "grw.{group}.{version}.{kind}.{namespace}".to_string()
}

fn default_stream() -> String {
    "GRW".to_string()
}

fn default_ack_timeout_second() -> u64 {
    10
}

/// A `nats` sink setting that is not right; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NatsConfigError {
    /// `url` names no server.
    #[error("`url`: no server given; expected e.g. `nats://127.0.0.1:4222`")]
    NoServer,
    /// `url` has an empty comma-separated entry.
    #[error("`url`: empty entry in `{0}`")]
    EmptyServer(String),
    /// A scheme other than `nats://` or `tls://`.
    #[error(
        "`url`: unsupported scheme `{scheme}` in `{url}`; use nats://host:port, tls://host:port or host:port"
    )]
    Scheme {
        /// The scheme.
        scheme: String,
        /// The entry.
        url: String,
    },
    /// An entry that is no server address.
    #[error(
        "`url`: `{0}` is not a server address; use nats://host:port, tls://host:port or host:port"
    )]
    NotAnAddress(String),
    /// `subject` is not a template of subject tokens.
    #[error("`subject`: {0}")]
    Subject(#[from] SubjectError),
    /// `stream` is no stream name.
    #[error(
        "`stream`: `{0}` is not a valid stream name; it must not be empty nor contain `.`, `*`, `>`, `/`, `\\` or whitespace"
    )]
    Stream(String),
    /// `ackTimeoutSecond` is 0.
    #[error("`ackTimeoutSecond`: must be at least 1, got 0")]
    AckTimeout,
}

/// A subject template that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubjectError {
    /// Two dots in a row, or one at either end.
    #[error(
        "`{0}` has an empty token; tokens are separated by single dots, with none at either end"
    )]
    EmptyToken(String),
    /// `{` without `}`.
    #[error("unclosed `{{` in `{0}`")]
    Unclosed(String),
    /// `}` without `{`.
    #[error("unmatched `}}` in `{0}`")]
    Unmatched(String),
    /// A placeholder of no value.
    #[error(
        "unknown placeholder `{{{name}}}` in `{template}`; use {{group}}, {{version}}, {{kind}}, {{namespace}}, {{name}} or {{type}}"
    )]
    Placeholder {
        /// The name between the braces.
        name: String,
        /// The template.
        template: String,
    },
    /// A character a subject to publish to cannot hold.
    #[error(
        "`{template}` contains {bad:?}; a subject to publish to cannot hold `*`, `>` or whitespace"
    )]
    Character {
        /// The character.
        bad: char,
        /// The template.
        template: String,
    },
}

impl NatsSinkConfig {
    /// Checks every setting; the error names the key and what is wrong.
    pub fn validate(&self) -> Result<(), NatsConfigError> {
        self.parse().map(|_| ())
    }

    /// The servers and the subject template, checked.
    pub fn parse(&self) -> Result<(Vec<ServerAddr>, SubjectTemplate), NatsConfigError> {
        let servers = parse_servers(&self.url)?;
        let template = SubjectTemplate::parse(&self.subject)?;
        check_stream_name(&self.stream)?;
        if self.ack_timeout_second == 0 {
            return Err(NatsConfigError::AckTimeout);
        }
        Ok((servers, template))
    }
}

fn parse_servers(urls: &str) -> Result<Vec<ServerAddr>, NatsConfigError> {
    if urls.trim().is_empty() {
        return Err(NatsConfigError::NoServer);
    }
    urls.split(',')
        .map(str::trim)
        .map(|url| {
            if url.is_empty() {
                return Err(NatsConfigError::EmptyServer(urls.to_string()));
            }
            if let Some((scheme, _)) = url.split_once("://")
                && !scheme.eq_ignore_ascii_case("nats")
                && !scheme.eq_ignore_ascii_case("tls")
            {
                return Err(NatsConfigError::Scheme {
                    scheme: scheme.to_string(),
                    url: url.to_string(),
                });
            }
            url.parse::<ServerAddr>()
                .ok()
                .filter(|addr| !addr.host().is_empty())
                .ok_or_else(|| NatsConfigError::NotAnAddress(url.to_string()))
        })
        .collect()
}

fn check_stream_name(name: &str) -> Result<(), NatsConfigError> {
    let bad = |c: char| matches!(c, '.' | '*' | '>' | '/' | '\\') || c.is_whitespace();
    if name.is_empty() || name.chars().any(|c| bad(c) || c.is_control()) {
        return Err(NatsConfigError::Stream(name.to_string()));
    }
    Ok(())
}

/// A value a subject placeholder stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `{group}`.
    Group,
    /// `{version}`.
    Version,
    /// `{kind}`.
    Kind,
    /// `{namespace}`.
    Namespace,
    /// `{name}`.
    Name,
    /// `{type}`.
    Type,
}

impl Field {
    pub(crate) fn parse(name: &str) -> Option<Field> {
        Some(match name {
            "group" => Field::Group,
            "version" => Field::Version,
            "kind" => Field::Kind,
            "namespace" => Field::Namespace,
            "name" => Field::Name,
            "type" => Field::Type,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Value(Field),
}

/// A subject template parsed into tokens (the parts between dots), each a
/// sequence of literal text and placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubjectTemplate {
    tokens: Vec<Vec<Piece>>,
}

impl SubjectTemplate {
    /// Parses a template; the error says what is wrong with it.
    pub fn parse(template: &str) -> Result<SubjectTemplate, SubjectError> {
        let tokens = template
            .split('.')
            .map(|token| parse_token(template, token))
            .collect::<Result<_, _>>()?;
        Ok(SubjectTemplate { tokens })
    }

    /// The subject for these values of the placeholders.
    pub fn render<'v>(&self, value: impl Fn(Field) -> &'v str) -> String {
        self.join(|token| {
            token
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => text.clone(),
                    Piece::Value(field) => token_value(value(*field)),
                })
                .collect()
        })
    }

    /// The subject filter of a stream created for this template.
    pub fn wildcard(&self) -> String {
        // A token without placeholders was parsed into a single text piece.
        self.join(|token| match token {
            [Piece::Text(text)] => text.clone(),
            _ => "*".to_string(),
        })
    }

    fn join(&self, mut token: impl FnMut(&[Piece]) -> String) -> String {
        self.tokens
            .iter()
            .map(|t| token(t))
            .collect::<Vec<_>>()
            .join(".")
    }
}

fn parse_token(template: &str, token: &str) -> Result<Vec<Piece>, SubjectError> {
    if token.is_empty() {
        return Err(SubjectError::EmptyToken(template.to_string()));
    }
    let mut pieces = Vec::new();
    let mut rest = token;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('{') {
            let (name, tail) = after
                .split_once('}')
                .ok_or_else(|| SubjectError::Unclosed(template.to_string()))?;
            let field = Field::parse(name).ok_or_else(|| SubjectError::Placeholder {
                name: name.to_string(),
                template: template.to_string(),
            })?;
            pieces.push(Piece::Value(field));
            rest = tail;
        } else {
            let end = rest.find('{').unwrap_or(rest.len());
            let (text, tail) = rest.split_at(end);
            if text.contains('}') {
                return Err(SubjectError::Unmatched(template.to_string()));
            }
            if let Some(bad) = text
                .chars()
                .find(|&c| c == '*' || c == '>' || c.is_whitespace())
            {
                return Err(SubjectError::Character {
                    bad,
                    template: template.to_string(),
                });
            }
            pieces.push(Piece::Text(text.to_string()));
            rest = tail;
        }
    }
    Ok(pieces)
}

/// A value made fit for a subject token (see the module documentation).
fn token_value(value: &str) -> String {
    if value.is_empty() {
        return "_".to_string();
    }
    value
        .chars()
        .map(|c| {
            if matches!(c, '.' | '*' | '>') || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str, subject: &str, stream: &str) -> NatsSinkConfig {
        NatsSinkConfig {
            url: url.to_string(),
            subject: subject.to_string(),
            stream: stream.to_string(),
            ack_timeout_second: 10,
        }
    }

    #[test]
    fn defaults_fill_missing_keys_and_unknown_keys_are_refused() {
        let parsed: NatsSinkConfig =
            serde_json::from_str(r#"{"url": "nats://127.0.0.1:4222"}"#).unwrap();
        assert_eq!(
            parsed,
            config(
                "nats://127.0.0.1:4222",
                "grw.{group}.{version}.{kind}.{namespace}",
                "GRW"
            )
        );
        assert_eq!(parsed.validate(), Ok(()));
        let unknown = serde_json::from_str::<NatsSinkConfig>(r#"{"url": "x", "topic": "y"}"#);
        assert!(
            unknown
                .unwrap_err()
                .to_string()
                .contains("unknown field `topic`")
        );
    }

    #[test]
    fn valid_configs() {
        for (url, subject, stream) in [
            ("nats://127.0.0.1:4222", "grw.{group}.{kind}", "GRW"),
            ("tls://nats.example.com:4443", "k8s", "events-1"),
            (
                "127.0.0.1:4222, nats://10.0.0.2:4222",
                "a.{kind}-{name}.{type}",
                "S_2",
            ),
            ("NATS://host", "x.{namespace}.{name}", "GRW"),
        ] {
            assert_eq!(
                config(url, subject, stream).validate(),
                Ok(()),
                "{url} {subject}"
            );
        }
    }

    #[test]
    fn invalid_configs_say_what_is_wrong() {
        let default = "grw.{kind}";
        for (url, subject, stream, message) in [
            (
                "http://127.0.0.1:4222",
                default,
                "GRW",
                "`url`: unsupported scheme `http` in `http://127.0.0.1:4222`; \
                 use nats://host:port, tls://host:port or host:port",
            ),
            (
                "ws://h:80",
                default,
                "GRW",
                "`url`: unsupported scheme `ws` in `ws://h:80`; \
                 use nats://host:port, tls://host:port or host:port",
            ),
            (
                " ",
                default,
                "GRW",
                "`url`: no server given; expected e.g. `nats://127.0.0.1:4222`",
            ),
            (
                "nats://a:4222,,nats://b:4222",
                default,
                "GRW",
                "`url`: empty entry in `nats://a:4222,,nats://b:4222`",
            ),
            (
                "nats://h:99999",
                default,
                "GRW",
                "`url`: `nats://h:99999` is not a server address; \
                 use nats://host:port, tls://host:port or host:port",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.{cluster}",
                "GRW",
                "`subject`: unknown placeholder `{cluster}` in `grw.{cluster}`; \
                 use {group}, {version}, {kind}, {namespace}, {name} or {type}",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw..{kind}",
                "GRW",
                "`subject`: `grw..{kind}` has an empty token; \
                 tokens are separated by single dots, with none at either end",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.{kind}.",
                "GRW",
                "`subject`: `grw.{kind}.` has an empty token; \
                 tokens are separated by single dots, with none at either end",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.{kind",
                "GRW",
                "`subject`: unclosed `{` in `grw.{kind`",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.kind}",
                "GRW",
                "`subject`: unmatched `}` in `grw.kind}`",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.>",
                "GRW",
                "`subject`: `grw.>` contains '>'; a subject to publish to \
                 cannot hold `*`, `>` or whitespace",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.my kind",
                "GRW",
                "`subject`: `grw.my kind` contains ' '; a subject to publish to \
                 cannot hold `*`, `>` or whitespace",
            ),
            (
                "nats://127.0.0.1:4222",
                default,
                "grw.events",
                "`stream`: `grw.events` is not a valid stream name; it must not be empty \
                 nor contain `.`, `*`, `>`, `/`, `\\` or whitespace",
            ),
            (
                "nats://127.0.0.1:4222",
                default,
                "",
                "`stream`: `` is not a valid stream name; it must not be empty \
                 nor contain `.`, `*`, `>`, `/`, `\\` or whitespace",
            ),
        ] {
            assert_eq!(
                config(url, subject, stream)
                    .validate()
                    .map_err(|e| e.to_string()),
                Err(message.to_string())
            );
        }
        let mut zero = config("nats://127.0.0.1:4222", default, "GRW");
        zero.ack_timeout_second = 0;
        assert_eq!(
            zero.validate().map_err(|e| e.to_string()),
            Err("`ackTimeoutSecond`: must be at least 1, got 0".to_string())
        );
    }
}
