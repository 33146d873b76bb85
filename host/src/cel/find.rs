//! Kubernetes' regex library: `s.find(re)`, the first match of `re` in
//! `s` (`''` when none), and `s.findAll(re)` and `s.findAll(re, n)`, every
//! match, or the first `n` when `n` is not negative, e.g.
//! `object.spec.containers[0].image.find('[0-9]+\\.[0-9]+')`.
//!
//! Matches are the leftmost-first ones of RE2 syntax, found one after the
//! other without overlapping, as the API server finds them; like it, an
//! empty match right after a match is not counted (`'123 abc'.findAll('[0-9]*')`
//! is `['123', '', '', '', '']`: the empty matches before `a`, `b`, `c`
//! and at the end, not the one right after `123`). The last patterns used
//! are kept compiled, per thread.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;

use cel::common::types::{CelInt, CelList, CelString, INT_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

use super::budget;

/// Compiled patterns kept per thread.
const KEPT: usize = 16;

/// Adds `find` and `findAll` to `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    env.add_member_overload(
        "findAll",
        "string.findAll(string)",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string.findAll(string, int)",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all,
    )?;
    Ok(())
}

/// `pattern` compiled, from the thread's last [`KEPT`] patterns.
fn compiled(function: &str, pattern: &str) -> Result<Arc<Regex>, ExecutionError> {
    thread_local! {
        static KEPT_PATTERNS: RefCell<VecDeque<(Box<str>, Arc<Regex>)>> = RefCell::default();
    }
    KEPT_PATTERNS.with_borrow_mut(|kept| {
        if let Some(i) = kept.iter().position(|(p, _)| &**p == pattern) {
            let found = kept.remove(i).expect("found at i");
            let regex = found.1.clone();
            kept.push_front(found);
            return Ok(regex);
        }
        let regex = Arc::new(
            Regex::new(pattern)
                .map_err(|e| ExecutionError::function_error(function, not_a_regex(pattern, &e)))?,
        );
        kept.push_front((pattern.into(), regex.clone()));
        kept.truncate(KEPT);
        Ok(regex)
    })
}

/// Why `pattern` is not a regular expression, in one line: the regex
/// crate's own message draws where, over several.
pub(super) fn not_a_regex(pattern: &str, error: &regex::Error) -> String {
    let text = error.to_string();
    let why = text.lines().last().unwrap_or_default();
    let why = why.strip_prefix("error: ").unwrap_or(why);
    format!("'{pattern}' is not a valid regex: {why}")
}

/// The matches of `regex` in `text`, at most `limit` of them.
fn matches<'t>(regex: &Regex, text: &'t str, limit: usize) -> Vec<&'t str> {
    let mut found = Vec::new();
    let (mut at, mut last_end) = (0, None);
    while found.len() < limit && at <= text.len() {
        let Some(m) = regex.find_at(text, at) else {
            break;
        };
        let mut keep = true;
        if m.end() == at {
            // Empty, here: not right after a match; then one character on.
            keep = last_end != Some(m.start());
            at += text[at..].chars().next().map_or(1, char::len_utf8);
        } else {
            at = m.end();
        }
        last_end = Some(m.end());
        if keep {
            found.push(m.as_str());
        }
    }
    found
}

fn find(
    text: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelString<'static>, ExecutionError> {
    let regex = compiled("find", pattern.inner())?;
    let first = matches(&regex, text.inner(), 1);
    Ok(CelString::from(
        first.first().copied().unwrap_or("").to_owned(),
    ))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let string = |v: &CowVal<'b, 'v>| v.downcast_ref::<CelString>().map(|s| s.inner().to_owned());
    let (text, pattern, limit) = match args.as_slice() {
        [text, pattern] => (string(text), string(pattern), Some(-1)),
        [text, pattern, limit] => (
            string(text),
            string(pattern),
            limit.downcast_ref::<CelInt>().map(|n| *n.inner()),
        ),
        _ => return Err(ExecutionError::invalid_argument_count(2, args.len())),
    };
    let (Some(text), Some(pattern), Some(limit)) = (text, pattern, limit) else {
        return Err(ExecutionError::function_error(
            "findAll",
            "takes a string, a pattern, and optionally an int",
        ));
    };
    let regex = compiled("findAll", &pattern)?;
    let found = matches(&regex, &text, usize::try_from(limit).unwrap_or(usize::MAX));
    // Each match found is charged as one iteration would be.
    if !budget::charge(found.len()) {
        return Ok(CowVal::owned(CelList::from(Vec::new())));
    }
    let items: Vec<Box<dyn Val + 'v>> = found
        .into_iter()
        .map(|m| Box::new(CelString::from(m.to_owned())) as Box<dyn Val + 'v>)
        .collect();
    Ok(CowVal::owned(CelList::from(items)))
}
