//! Kubernetes' CEL list library: `sum()`, `min()` and `max()` of a list
//! of `int`s or of `double`s
//! (`object.status.containerStatuses.map(s, s.restartCount).sum()`),
//! `isSorted()`, and `indexOf(x)` and `lastIndexOf(x)` (`-1` when absent).
//! Like the API server's, `sum()` of an empty list is `0`, and `min()` and
//! `max()` of one are errors.

use cel::ExecutionError;
use cel::common::types::{CelBool, CelDouble, CelInt, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env};

use super::budget;

/// Adds `sum`, `min` and `max` to `env`.
pub(super) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("sum", "list.sum()", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list.min()", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list.max()", LIST_TYPE, vec![], max)?;
    env.add_member_overload("isSorted", "list.isSorted()", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload(
        "indexOf",
        "list.indexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list.lastIndexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

/// A list's numbers: all `int` or all `double`.
enum Numbers {
    Ints(Vec<i64>),
    Doubles(Vec<f64>),
}

fn numbers(function: &str, list: &dyn Val) -> Result<Numbers, ExecutionError> {
    let Some(items) = elements(function, list)? else {
        return Ok(Numbers::Ints(Vec::new()));
    };
    let (mut ints, mut doubles) = (Vec::new(), Vec::new());
    for item in items {
        if let Some(n) = item.downcast_ref::<CelInt>() {
            ints.push(*n.inner());
        } else if let Some(n) = item.downcast_ref::<CelDouble>() {
            doubles.push(*n.inner());
        } else {
            return Err(ExecutionError::function_error(
                function,
                format!("needs a list of numbers, got a {}", item.get_type().name()),
            ));
        }
    }
    match (ints.is_empty(), doubles.is_empty()) {
        (_, true) => Ok(Numbers::Ints(ints)),
        (true, false) => Ok(Numbers::Doubles(doubles)),
        (false, false) => Err(ExecutionError::function_error(
            function,
            "needs a list of one number type, `int` or `double`",
        )),
    }
}

fn the_list<'b, 'v>(args: &'b [CowVal<'b, 'v>]) -> Result<&'b dyn Val, ExecutionError> {
    match args {
        [list] => Ok(&**list as &dyn Val),
        _ => Err(ExecutionError::invalid_argument_count(1, args.len())),
    }
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    match numbers("sum", the_list(&args)?)? {
        Numbers::Ints(ints) => ints
            .into_iter()
            .try_fold(0i64, i64::checked_add)
            .map(|n| CowVal::owned(CelInt::from(n)))
            .ok_or_else(|| ExecutionError::function_error("sum", "the sum overflows an int")),
        Numbers::Doubles(doubles) => {
            Ok(CowVal::owned(CelDouble::from(doubles.iter().sum::<f64>())))
        }
    }
}

fn extreme<'b, 'v>(
    function: &str,
    args: Vec<CowVal<'b, 'v>>,
    pick: fn(std::cmp::Ordering) -> bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let empty = || ExecutionError::function_error(function, "the list is empty");
    match numbers(function, the_list(&args)?)? {
        Numbers::Ints(ints) => ints
            .into_iter()
            .reduce(|a, b| if pick(b.cmp(&a)) { b } else { a })
            .map(|n| CowVal::owned(CelInt::from(n)))
            .ok_or_else(empty),
        Numbers::Doubles(doubles) => doubles
            .into_iter()
            .reduce(|a, b| if pick(b.total_cmp(&a)) { b } else { a })
            .map(|n| CowVal::owned(CelDouble::from(n)))
            .ok_or_else(empty),
    }
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme("min", args, std::cmp::Ordering::is_lt)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme("max", args, std::cmp::Ordering::is_gt)
}

/// A list's elements, each charged once as an iteration would be; `None`
/// past the budget.
fn elements<'b, 'v>(
    function: &str,
    list: &'b (dyn Val + 'v),
) -> Result<Option<Vec<&'b (dyn Val + 'v)>>, ExecutionError> {
    let iterable = list
        .as_iterable()
        .ok_or_else(|| ExecutionError::function_error(function, "needs a list"))?;
    let mut items = iterable.iter();
    let mut all = Vec::new();
    while let Some(item) = items.next() {
        all.push(item);
    }
    Ok(budget::charge(all.len()).then_some(all))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let Some(items) = elements("isSorted", the_list(&args)?)? else {
        return Ok(CowVal::owned(CelBool::from(false)));
    };
    for pair in items.windows(2) {
        let unordered = || {
            ExecutionError::function_error(
                "isSorted",
                format!(
                    "cannot order a {} with a {}",
                    pair[0].get_type().name(),
                    pair[1].get_type().name()
                ),
            )
        };
        let order = pair[0]
            .as_comparer()
            .ok_or_else(unordered)?
            .compare(pair[1])
            .map_err(|_| unordered())?;
        if order.is_gt() {
            return Ok(CowVal::owned(CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(CelBool::from(true)))
}

/// The list and the value of `list.f(value)`.
fn list_and_value<'a, 'b, 'v>(
    args: &'a [CowVal<'b, 'v>],
) -> Result<(&'a (dyn Val + 'v), &'a (dyn Val + 'v)), ExecutionError> {
    match args {
        [list, value] => Ok((&**list, &**value)),
        _ => Err(ExecutionError::invalid_argument_count(2, args.len())),
    }
}

/// Where `value` is in the list, searched from its start or its end.
fn position<'b, 'v>(
    function: &str,
    args: Vec<CowVal<'b, 'v>>,
    from_end: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, value) = list_and_value(&args)?;
    let items = elements(function, list)?.unwrap_or_default();
    let found = match from_end {
        false => items.iter().position(|item| item.equals(value)),
        true => items.iter().rposition(|item| item.equals(value)),
    };
    Ok(CowVal::owned(CelInt::from(found.map_or(-1, |i| i as i64))))
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position("indexOf", args, false)
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position("lastIndexOf", args, true)
}
