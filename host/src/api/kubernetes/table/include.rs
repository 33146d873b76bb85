//! The `includeObject` query parameter: what each row carries besides its
//! cells.

use std::fmt::Write;

/// What each row's `object` is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    /// `null`.
    None,
    /// A `PartialObjectMetadata` with the object's `metadata` (the default):
    /// enough for kubectl to name rows and sort them.
    #[default]
    Metadata,
    /// The whole object (`kubectl get -o wide` asks for it, and so does
    /// any printer that needs fields no column shows).
    Object,
}

impl IncludeObject {
    /// Reads the parameter's value; an absent or empty one is `Metadata`.
    pub(crate) fn parse(value: &str) -> Result<IncludeObject, BadIncludeObject> {
        match value {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(BadIncludeObject(other.to_string())),
        }
    }
}

/// An `includeObject` value that is none of the three. Its message is the
/// API server's, word for word (a 400 `BadRequest` there).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be \
     'Metadata', 'Object', 'None', or empty",
    go_quote(.0)
)]
pub(crate) struct BadIncludeObject(pub(crate) String);

/// Text in double quotes with Go's escapes (`%q`), as the API server
/// quotes bad values in its messages.
fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        let cases = [
            ("", IncludeObject::Metadata),
            ("Metadata", IncludeObject::Metadata),
            ("None", IncludeObject::None),
            ("Object", IncludeObject::Object),
        ];
        for (text, want) in cases {
            assert_eq!(IncludeObject::parse(text), Ok(want), "{text:?}");
        }
        assert_eq!(IncludeObject::default(), IncludeObject::Metadata);
    }

    #[test]
    fn bad_values_get_the_api_servers_message() {
        let err = IncludeObject::parse("object").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unable to convert to Table as requested: includeObject: Invalid value: \"object\": \
             must be 'Metadata', 'Object', 'None', or empty"
        );
        let quoted = [
            ("all", "\"all\""),
            ("a\"b\\c", "\"a\\\"b\\\\c\""),
            ("tab\there\n", "\"tab\\there\\n\""),
            ("\u{1}\u{7f}", "\"\\x01\\x7f\""),
            ("\u{85}é", "\"\\u0085é\""),
        ];
        for (value, want) in quoted {
            assert_eq!(go_quote(value), want, "{value:?}");
            assert!(
                IncludeObject::parse(value)
                    .unwrap_err()
                    .to_string()
                    .contains(want)
            );
        }
    }
}
