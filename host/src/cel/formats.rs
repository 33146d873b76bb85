//! Kubernetes' format library: the API server's own checks of names,
//! labels and CRD string formats, as values: `format.dns1123Label()`,
//! `format.dns1123Subdomain()`, `format.dns1035Label()`,
//! `format.qualifiedName()`, `format.dns1123LabelPrefix()`,
//! `format.dns1123SubdomainPrefix()`, `format.dns1035LabelPrefix()`,
//! `format.labelValue()`, `format.uri()`, `format.uuid()`, `format.byte()`,
//! `format.date()` and `format.datetime()`, or `format.named(name)` (an
//! optional: none for a name not in that list). A format's
//! `validate(s)` is an optional list of what is wrong with `s`: none when
//! `s` is valid, e.g.
//! `!format.dns1123Label().validate(object.metadata.labels.app).hasValue()`.
//!
//! The messages of names and labels are the API server's own (`must be no
//! more than 63 characters`, and the pattern with examples). A `...Prefix`
//! format checks a name to which `generateName` will add characters, so a
//! trailing `-` is allowed. `uri` says why in GRW's words (see
//! [`super::urls`]); `uuid`, `byte` (standard base64, padded), `date`
//! (`2006-01-02`) and `datetime` (RFC 3339, or without the offset, or
//! without seconds) say only that the text is not one.

use std::sync::LazyLock;

use base64::Engine;
use cel::common::functions::Function;
use cel::common::types::{CelList, CelOptional, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

/// The type of formats, as `type(format.uuid())` names it.
static FORMAT: Type = Type::new_unspecified_type("kubernetes.NamedFormat");

/// One of the named formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An RFC 1123 label: a Pod's or Namespace's name.
    Dns1123Label,
    /// An RFC 1123 subdomain: most objects' names.
    Dns1123Subdomain,
    /// An RFC 1035 label: a Service's name.
    Dns1035Label,
    /// A label's or annotation's key: an optional subdomain prefix and `/`.
    QualifiedName,
    /// [`Format::Dns1123Label`] before `generateName`'s suffix.
    Dns1123LabelPrefix,
    /// [`Format::Dns1123Subdomain`] before `generateName`'s suffix.
    Dns1123SubdomainPrefix,
    /// [`Format::Dns1035Label`] before `generateName`'s suffix.
    Dns1035LabelPrefix,
    /// A label's value.
    LabelValue,
    /// An absolute URL or an absolute path.
    Uri,
    /// A UUID, with or without its dashes.
    Uuid,
    /// Standard base64.
    Byte,
    /// A calendar date, `2006-01-02`.
    Date,
    /// A date and time, RFC 3339.
    Datetime,
}

/// Every format, by the name CEL calls it.
pub const NAMED: [(&str, Format); 13] = [
    ("dns1123Label", Format::Dns1123Label),
    ("dns1123Subdomain", Format::Dns1123Subdomain),
    ("dns1035Label", Format::Dns1035Label),
    ("qualifiedName", Format::QualifiedName),
    ("dns1123LabelPrefix", Format::Dns1123LabelPrefix),
    ("dns1123SubdomainPrefix", Format::Dns1123SubdomainPrefix),
    ("dns1035LabelPrefix", Format::Dns1035LabelPrefix),
    ("labelValue", Format::LabelValue),
    ("uri", Format::Uri),
    ("uuid", Format::Uuid),
    ("byte", Format::Byte),
    ("date", Format::Date),
    ("datetime", Format::Datetime),
];

library_value!(Format, FORMAT);

/// Adds the library to `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(FORMAT.to_owned())?;
    let constants: [Function; NAMED.len()] = [
        constant::<0>,
        constant::<1>,
        constant::<2>,
        constant::<3>,
        constant::<4>,
        constant::<5>,
        constant::<6>,
        constant::<7>,
        constant::<8>,
        constant::<9>,
        constant::<10>,
        constant::<11>,
        constant::<12>,
    ];
    for ((name, _), function) in NAMED.iter().zip(constants) {
        env.add_overload(
            &format!("format.{name}"),
            &format!("format.{name}()"),
            vec![],
            function,
        )?;
    }
    env.add_overload(
        "format.named",
        "format.named(string)",
        vec![STRING_TYPE],
        named,
    )?;
    env.add_member_overload(
        "validate",
        "kubernetes.NamedFormat.validate(string)",
        FORMAT.to_owned(),
        vec![STRING_TYPE],
        validate,
    )?;
    Ok(())
}

/// `format.<name>()`, the `I`th of [`NAMED`]: a function is not told the
/// name it was called by, so each name has its own.
fn constant<'b, 'v, const I: usize>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    if !args.is_empty() {
        return Err(ExecutionError::invalid_argument_count(0, args.len()));
    }
    Ok(CowVal::owned(NAMED[I].1))
}

fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [name] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(1, args.len()));
    };
    let name = name
        .downcast_ref::<CelString>()
        .ok_or_else(|| ExecutionError::function_error("format.named", "needs a string"))?;
    let found = NAMED
        .iter()
        .find(|(n, _)| *n == name.inner())
        .map(|(_, f)| Box::new(*f) as Box<dyn Val + 'v>);
    Ok(CowVal::owned(CelOptional::from(found)))
}

fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [format, text] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let (Some(format), Some(text)) = (
        format.downcast_ref::<Format>(),
        text.downcast_ref::<CelString>(),
    ) else {
        return Err(ExecutionError::function_error(
            "validate",
            "needs a format and a string",
        ));
    };
    let problems = format.problems(text.inner());
    let found = (!problems.is_empty()).then(|| {
        let list: Vec<Box<dyn Val + 'v>> = problems
            .into_iter()
            .map(|p| Box::new(CelString::from(p)) as Box<dyn Val + 'v>)
            .collect();
        Box::new(CelList::from(list)) as Box<dyn Val + 'v>
    });
    Ok(CowVal::owned(CelOptional::from(found)))
}

const LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const LABEL_1035: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

/// The whole of a text matches `pattern`.
fn whole(pattern: &str) -> Regex {
    Regex::new(&format!("^(?:{pattern})$")).expect("a valid pattern")
}

static LABEL_RE: LazyLock<Regex> = LazyLock::new(|| whole(LABEL));
static SUBDOMAIN_RE: LazyLock<Regex> = LazyLock::new(|| whole(&subdomain()));
static LABEL_1035_RE: LazyLock<Regex> = LazyLock::new(|| whole(LABEL_1035));
static QUALIFIED_RE: LazyLock<Regex> = LazyLock::new(|| whole(QUALIFIED));
static LABEL_VALUE_RE: LazyLock<Regex> = LazyLock::new(|| whole(&format!("({QUALIFIED})?")));

fn subdomain() -> String {
    format!("{LABEL}(\\.{LABEL})*")
}

fn too_long(most: usize) -> String {
    format!("must be no more than {most} characters")
}

/// What a text must be, with examples and the pattern, as the API server
/// says it.
fn pattern_error(what: &str, pattern: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{what} (e.g. {}regex used for validation is '{pattern}')",
        examples.join(" or ")
    )
}

/// What is wrong with `text`: longer than `most` bytes, or not matched
/// by `re` (then `unmatched` says why).
fn checked(text: &str, most: usize, re: &Regex, unmatched: impl FnOnce() -> String) -> Vec<String> {
    let mut problems = Vec::new();
    if text.len() > most {
        problems.push(too_long(most));
    }
    if !re.is_match(text) {
        problems.push(unmatched());
    }
    problems
}

fn dns1123_label(text: &str) -> Vec<String> {
    checked(text, 63, &LABEL_RE, || {
        // A subdomain of the right length: it has dots.
        if SUBDOMAIN_RE.is_match(text) {
            return "must not contain dots".to_owned();
        }
        pattern_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric \
             characters or '-', and must start and end with an alphanumeric character",
            LABEL,
            &["my-name", "123-abc"],
        )
    })
}

fn dns1123_subdomain(text: &str) -> Vec<String> {
    checked(text, 253, &SUBDOMAIN_RE, || {
        pattern_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
             characters, '-' or '.', and must start and end with an alphanumeric character",
            &subdomain(),
            &["example.com"],
        )
    })
}

fn dns1035_label(text: &str) -> Vec<String> {
    checked(text, 63, &LABEL_1035_RE, || {
        pattern_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', \
             start with an alphabetic character, and end with an alphanumeric character",
            LABEL_1035,
            &["my-name", "abc-123"],
        )
    })
}

const QUALIFIED_WHAT: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
    and must start and end with an alphanumeric character";
const QUALIFIED_EXAMPLES: [&str; 3] = ["MyName", "my.name", "123-abc"];

fn qualified_name(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let parts: Vec<&str> = text.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                problems.push("prefix part must be non-empty".to_owned());
            } else {
                problems.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|p| format!("prefix part {p}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')",
                pattern_error(QUALIFIED_WHAT, QUALIFIED, &QUALIFIED_EXAMPLES)
            )];
        }
    };
    if name.is_empty() {
        problems.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        problems.push(format!("name part {}", too_long(63)));
    }
    if !QUALIFIED_RE.is_match(name) {
        problems.push(format!(
            "name part {}",
            pattern_error(QUALIFIED_WHAT, QUALIFIED, &QUALIFIED_EXAMPLES)
        ));
    }
    problems
}

fn label_value(text: &str) -> Vec<String> {
    checked(text, 63, &LABEL_VALUE_RE, || {
        pattern_error(
            "a valid label must be an empty string or consist of alphanumeric characters, \
             '-', '_' or '.', and must start and end with an alphanumeric character",
            &format!("({QUALIFIED})?"),
            &["MyValue", "my_value", "12345"],
        )
    })
}

/// A name `generateName` will add to, checked as the API server checks
/// it: its last two bytes, a trailing `-` and the one before it, stand
/// for one letter. (Where the API server would cut a character in two,
/// the whole character is kept: either way, the name is not one.)
fn masked_prefix(text: &str) -> String {
    match text.strip_suffix('-') {
        Some(_) if text.len() > 1 => {
            let mut cut = text.len() - 2;
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            format!("{}a", &text[..cut])
        }
        _ => text.to_owned(),
    }
}

fn is_uuid(text: &str) -> bool {
    let bytes = text.as_bytes();
    match bytes.len() {
        32 => bytes.iter().all(u8::is_ascii_hexdigit),
        36 => bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        }),
        _ => false,
    }
}

/// `2006-01-02`, a day that exists.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &text[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// A date, `T`, a time `15:04[:05[.999999999]]`, and an offset `Z` or
/// `±07:00` (or none: local time).
fn is_datetime(text: &str) -> bool {
    static TIME: LazyLock<Regex> = LazyLock::new(|| {
        whole(
            r"([01][0-9]|2[0-3]):[0-5][0-9](:([0-5][0-9]|60)(\.[0-9]{1,9})?)?([Zz]|[+-]([01][0-9]|2[0-3]):?[0-5][0-9])?",
        )
    });
    text.len() > 11
        && text.is_char_boundary(10)
        && is_date(&text[..10])
        && matches!(text.as_bytes()[10], b'T' | b't')
        && TIME.is_match(&text[11..])
}

impl Format {
    /// What is wrong with `text` in this format: nothing when it is valid.
    pub fn problems(self, text: &str) -> Vec<String> {
        let one = |valid: bool, problem: &str| match valid {
            true => Vec::new(),
            false => vec![problem.to_owned()],
        };
        match self {
            Format::Dns1123Label => dns1123_label(text),
            Format::Dns1123Subdomain => dns1123_subdomain(text),
            Format::Dns1035Label => dns1035_label(text),
            Format::QualifiedName => qualified_name(text),
            Format::Dns1123LabelPrefix => dns1123_label(&masked_prefix(text)),
            Format::Dns1123SubdomainPrefix => dns1123_subdomain(&masked_prefix(text)),
            Format::Dns1035LabelPrefix => dns1035_label(&masked_prefix(text)),
            Format::LabelValue => label_value(text),
            Format::Uri => match super::urls::parse(text) {
                Ok(_) => Vec::new(),
                Err(e) => vec![e],
            },
            Format::Uuid => one(is_uuid(text), "does not match the UUID format"),
            Format::Byte => one(
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .is_ok(),
                "invalid base64",
            ),
            Format::Date => one(is_date(text), "invalid date"),
            Format::Datetime => one(is_datetime(text), "invalid datetime"),
        }
    }
}
