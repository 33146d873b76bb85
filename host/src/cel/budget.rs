//! What one evaluation may spend, counted as it runs.
//!
//! The interpreter has no meter of its own, and what makes an expression
//! costly is iterating: `all`, `exists`, `map`, `filter` and `in` over the
//! object's lists and maps, nested. Each of those asks the JSON value it
//! iterates for its entries ([`super::json`]), which charges here the
//! entries times the most an iteration of the expression's comprehensions
//! evaluates (its *width*, from the check at compile time). Past the limit,
//! the value hands out no entries, so the evaluation ends at once, and
//! [`finish`] says it ran out: the answer is then an error, never a result
//! computed on part of the object.
//!
//! Thread-local: an evaluation runs on one thread from start to end.

use std::cell::Cell;

thread_local! {
    /// Units left, the width of the running expression, and whether it ran out.
    static LEFT: Cell<(u64, u64, bool)> = const { Cell::new((0, 1, false)) };
}

/// Starts an evaluation of an expression of `width` with `limit` units.
pub(super) fn start(limit: u64, width: u64) {
    LEFT.set((limit, width.max(1), false));
}

/// Charges iterating `entries`; false (and the evaluation has run out) when
/// they cost more than what is left.
pub(super) fn charge(entries: usize) -> bool {
    let (left, width, out) = LEFT.get();
    let cost = (entries as u64).saturating_mul(width);
    if out || cost > left {
        LEFT.set((0, width, true));
        return false;
    }
    LEFT.set((left - cost, width, false));
    true
}

/// Ends an evaluation: whether it ran out.
pub(super) fn finish() -> bool {
    let (_, _, out) = LEFT.get();
    LEFT.set((0, 1, false));
    out
}
