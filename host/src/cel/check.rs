//! What is checked when an expression is compiled: every name it uses is
//! declared, every function it calls exists, and its cost is estimated.
//!
//! The objects' schemas are not known here (any kind, CRDs included, is
//! read as JSON), so types are checked as the expression runs, as they are
//! for CEL's `dyn`. Names and functions need no schema: a misspelt
//! variable or function is refused at once, with where it is.

use std::collections::HashMap;
use std::sync::LazyLock;

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::{Context, ExecutionError};
use parking_lot::Mutex;

use super::{ASSUMED_ENTRIES, ENV};

/// What the check found out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Checked {
    /// The estimated cost, each list or map of the object counted as
    /// [`ASSUMED_ENTRIES`] entries.
    pub(super) estimate: u64,
    /// The most one iteration of any comprehension evaluates (its nested
    /// comprehensions' own iterations apart): what the budget charges per
    /// entry iterated.
    pub(super) width: u64,
}

/// A problem, and the node it is about.
pub(super) struct Problem {
    pub(super) message: String,
    pub(super) node: u64,
    /// The function's name, when the problem is a call.
    pub(super) function: Option<String>,
}

/// Checks `expr`, whose free variables may be `declared`.
pub(super) fn check(expr: &IdedExpr, declared: &[&str]) -> Result<Checked, Problem> {
    let mut walk = Walk {
        declared,
        bound: Vec::new(),
        width: 1,
    };
    let cost = walk.expr(expr)?;
    Ok(Checked {
        estimate: cost.total,
        width: walk.width,
    })
}

/// The cost of a node: in total, and without its comprehensions' loops.
#[derive(Clone, Copy, Default)]
struct Cost {
    total: u64,
    flat: u64,
}

impl Cost {
    fn add(self, other: Cost) -> Cost {
        Cost {
            total: self.total.saturating_add(other.total),
            flat: self.flat.saturating_add(other.flat),
        }
    }
}

struct Walk<'d> {
    declared: &'d [&'d str],
    /// Variables of the comprehensions around the node.
    bound: Vec<String>,
    width: u64,
}

impl Walk<'_> {
    fn expr(&mut self, node: &IdedExpr) -> Result<Cost, Problem> {
        let one = Cost { total: 1, flat: 1 };
        match &node.expr {
            Expr::Ident(name) => {
                if !self.declared.contains(&name.as_str()) && !self.bound.contains(name) {
                    return Err(undeclared(name, node.id));
                }
                Ok(one)
            }
            Expr::Literal(_) | Expr::Unspecified => Ok(one),
            Expr::Select(select) => Ok(one.add(self.expr(&select.operand)?)),
            Expr::Call(call) => {
                let mut cost = one;
                let namespace = match call.target.as_deref() {
                    Some(IdedExpr {
                        expr: Expr::Ident(ns),
                        ..
                    }) if !self.declared.contains(&ns.as_str()) && !self.bound.contains(ns) => {
                        Some(ns.as_str())
                    }
                    _ => None,
                };
                if !is_known(namespace, &call.func_name, call.target.is_some()) {
                    let name = match namespace {
                        Some(ns) => format!("{ns}.{}", call.func_name),
                        None => call.func_name.clone(),
                    };
                    return Err(Problem {
                        function: Some(name.clone()),
                        ..undeclared(&name, node.id)
                    });
                }
                if let Some(problem) = bad_pattern(call) {
                    return Err(problem);
                }
                if let (Some(target), None) = (&call.target, namespace) {
                    cost = cost.add(self.expr(target)?);
                }
                for arg in &call.args {
                    cost = cost.add(self.expr(arg)?);
                }
                Ok(cost)
            }
            Expr::List(list) => list
                .elements
                .iter()
                .try_fold(one, |cost, e| Ok(cost.add(self.expr(e)?))),
            Expr::Map(map) => map.entries.iter().try_fold(one, |cost, entry| {
                Ok(match &entry.expr {
                    EntryExpr::MapEntry(e) => {
                        cost.add(self.expr(&e.key)?).add(self.expr(&e.value)?)
                    }
                    EntryExpr::StructField(f) => cost.add(self.expr(&f.value)?),
                })
            }),
            Expr::Struct(s) => s.entries.iter().try_fold(one, |cost, entry| {
                Ok(match &entry.expr {
                    EntryExpr::MapEntry(e) => {
                        cost.add(self.expr(&e.key)?).add(self.expr(&e.value)?)
                    }
                    EntryExpr::StructField(f) => cost.add(self.expr(&f.value)?),
                })
            }),
            Expr::Comprehension(c) => self.comprehension(c),
        }
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Result<Cost, Problem> {
        let range = self.expr(&c.iter_range)?;
        let init = self.expr(&c.accu_init)?;
        let bound = self.bound.len();
        self.bound.push(c.iter_var.clone());
        self.bound.extend(c.iter_var2.clone());
        self.bound.push(c.accu_var.clone());
        let body = self.expr(&c.loop_cond)?.add(self.expr(&c.loop_step)?);
        let result = self.expr(&c.result)?;
        self.bound.truncate(bound);
        self.width = self.width.max(body.flat);
        // A literal list has as many entries as it is written with; any
        // other range comes from an object.
        let entries = match &c.iter_range.expr {
            Expr::List(list) => list.elements.len() as u64,
            _ => ASSUMED_ENTRIES,
        };
        Ok(Cost {
            total: range
                .total
                .saturating_add(init.total)
                .saturating_add(entries.saturating_mul(body.total))
                .saturating_add(result.total),
            flat: range.flat + init.flat + result.flat + 1,
        })
    }
}

/// A pattern written in the expression for `matches`, `find` or
/// `findAll` that is no regular expression: refused when the expression is
/// compiled, as the API server refuses it, not on every object.
fn bad_pattern(call: &CallExpr) -> Option<Problem> {
    if !matches!(call.func_name.as_str(), "matches" | "find" | "findAll") {
        return None;
    }
    // `s.matches(re)`, or `matches(s, re)`.
    let pattern = call.args.get(usize::from(call.target.is_none()))?;
    let Expr::Literal(LiteralValue::String(text)) = &pattern.expr else {
        return None;
    };
    let error = regex::Regex::new(text.inner()).err()?;
    Some(Problem {
        message: super::find::not_a_regex(text.inner(), &error),
        node: pattern.id,
        function: None,
    })
}

fn undeclared(name: &str, node: u64) -> Problem {
    Problem {
        message: format!("undeclared reference to '{name}'"),
        node,
        function: None,
    }
}

/// Whether a function exists: operators (`_+_`, `@in`...) always do; a
/// name is tried once on the environment, and the answer kept.
fn is_known(namespace: Option<&str>, name: &str, member: bool) -> bool {
    static KNOWN: LazyLock<Mutex<HashMap<String, bool>>> = LazyLock::new(Default::default);
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return true;
    }
    // Called with no arguments, a function that exists answers that no
    // overload takes them; one that does not is an undeclared reference.
    let probe = match (namespace, member) {
        (Some(ns), _) => format!("{ns}.{name}()"),
        (None, true) => format!("null.{name}()"),
        (None, false) => format!("{name}()"),
    };
    if let Some(known) = KNOWN.lock().get(&probe) {
        return *known;
    }
    let known = match ENV.compile(&probe) {
        Ok(program) => !matches!(
            program.execute(&Context::with_env(ENV.clone())),
            Err(ExecutionError::UndeclaredReference(_))
        ),
        // A name the grammar takes as a macro or keyword, e.g. `has`.
        Err(_) => true,
    };
    let mut kept = KNOWN.lock();
    // Bounded: names come from expressions people write.
    if kept.len() < 4096 {
        kept.insert(probe, known);
    }
    known
}
