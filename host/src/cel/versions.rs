//! Kubernetes' semver library: `semver('1.2.3')`, `semver(s, true)` (which
//! first drops a leading `v`, fills a missing minor or patch with `0` and
//! drops leading zeros), `isSemver(s)` and `isSemver(s, true)`, and a
//! version's `major()`, `minor()`, `patch()`, `compareTo` (`-1`, `0`, `1`),
//! `isLessThan` and `isGreaterThan`, e.g.
//! `semver(object.metadata.labels['version'], true).isLessThan(semver('2.0.0'))`.
//!
//! Versions are read and ordered as SemVer 2.0.0 says: pre-releases before
//! their release, build metadata ignored, by `compareTo` as by `==`
//! (`semver('1.0.0+a') == semver('1.0.0+b')`), as the API server compares.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::{DeclarationError, Env, ExecutionError};
use semver::Version;

/// The type of versions, as `type(semver('1.0.0'))` names it.
static SEMVER: Type = Type::new_unspecified_type("kubernetes.Semver");

/// A semantic version.
#[derive(Debug, Clone)]
pub struct Semver(Version);

impl PartialEq for Semver {
    /// Equal in precedence: build metadata aside.
    fn eq(&self, other: &Semver) -> bool {
        order(self, other).is_eq()
    }
}

library_value!(Semver, SEMVER);

/// Adds the library to `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(SEMVER.to_owned())?;
    cel::add_overload!(env, fn semver: (CelString) -> Result<Semver>)?;
    cel::add_overload!(env, fn semver_normalized: (CelString, CelBool) -> Result<Semver>, name = "semver")?;
    cel::add_overload!(env, fn is_semver: (CelString) -> CelBool)?;
    cel::add_overload!(env, fn is_semver_normalized: (CelString, CelBool) -> CelBool, name = "isSemver")?;
    cel::add_member_overload!(env, fn major: (Semver) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn minor: (Semver) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn patch: (Semver) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn compare_to: (Semver, Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn is_less_than: (Semver, Semver) -> CelBool)?;
    cel::add_member_overload!(env, fn is_greater_than: (Semver, Semver) -> CelBool)?;
    Ok(())
}

/// Reads a version; with `normalize`, first without a leading `v`, with a
/// missing minor or patch as `0`, and without leading zeros in its first
/// three parts.
pub fn parse(text: &str, normalize: bool) -> Result<Version, String> {
    let version = match normalize {
        false => Version::parse(text),
        true => {
            let stripped = text.strip_prefix('v').unwrap_or(text);
            let mut parts: Vec<String> = stripped.splitn(3, '.').map(str::to_owned).collect();
            for part in &mut parts {
                if part.len() > 1 {
                    let trimmed = part.trim_start_matches('0');
                    *part = match trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                        true => trimmed.to_owned(),
                        false => format!("0{trimmed}"),
                    };
                }
            }
            if parts.len() < 3 {
                if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                    return Err(format!(
                        "'{text}': a version without a patch number cannot have a pre-release or build"
                    ));
                }
                parts.resize(3, "0".to_owned());
            }
            Version::parse(&parts.join("."))
        }
    };
    version.map_err(|e| format!("'{text}' is not a semantic version: {e}"))
}

fn semver(text: &CelString<'_>) -> Result<Semver, ExecutionError> {
    semver_normalized(text, &CelBool::from(false))
}

fn semver_normalized(text: &CelString<'_>, normalize: &CelBool) -> Result<Semver, ExecutionError> {
    parse(text.inner(), *normalize.inner())
        .map(Semver)
        .map_err(|e| ExecutionError::function_error("semver", e))
}

fn is_semver(text: &CelString<'_>) -> CelBool {
    is_semver_normalized(text, &CelBool::from(false))
}

fn is_semver_normalized(text: &CelString<'_>, normalize: &CelBool) -> CelBool {
    CelBool::from(parse(text.inner(), *normalize.inner()).is_ok())
}

fn number(function: &str, n: u64) -> Result<CelInt, ExecutionError> {
    i64::try_from(n)
        .map(CelInt::from)
        .map_err(|_| ExecutionError::function_error(function, format!("{n} does not fit an int")))
}

fn major(v: &Semver) -> Result<CelInt, ExecutionError> {
    number("major", v.0.major)
}

fn minor(v: &Semver) -> Result<CelInt, ExecutionError> {
    number("minor", v.0.minor)
}

fn patch(v: &Semver) -> Result<CelInt, ExecutionError> {
    number("patch", v.0.patch)
}

fn order(a: &Semver, b: &Semver) -> Ordering {
    a.0.cmp_precedence(&b.0)
}

fn compare_to(a: &Semver, b: &Semver) -> CelInt {
    CelInt::from(order(a, b) as i64)
}

fn is_less_than(a: &Semver, b: &Semver) -> CelBool {
    CelBool::from(order(a, b).is_lt())
}

fn is_greater_than(a: &Semver, b: &Semver) -> CelBool {
    CelBool::from(order(a, b).is_gt())
}
