//! CEL conditions: a subscription's `matchConditions` and a query's
//! `match=`, in the Common Expression Language that Kubernetes uses for
//! CRD validation rules, admission policies and admission webhooks'
//! `matchConditions`.
//!
//! **The crate.** `cel` (the cel-rust project) is the CEL implementation
//! for Rust that is kept up: the standard macros and functions, the
//! `strings`, `math` and `base64` extension libraries (and GRW adds
//! `sum()`, `min()`, `max()`, `isSorted()`, `indexOf()` and `lastIndexOf()`
//! of Kubernetes' list library, and its quantity ([`quantity`]), IP and
//! CIDR ([`net`]), URL ([`urls`]), semver ([`versions`]), format
//! ([`formats`]) and regex (`find`, `findAll`) libraries),
//! timestamps and
//! durations, regular expressions, and values an application defines
//! itself, which is what lets an expression read an object from its JSON
//! text without converting it first ([`json`]). The other crates either
//! implement a dialect of their own or stopped before the extension
//! libraries.
//!
//! **What is checked when an expression is compiled** ([`check`]): its
//! syntax, that every variable it names is declared (`object`, and for
//! subscriptions `oldObject` and `type`) and every function it calls
//! exists, and an estimate of its cost: each comprehension (`all`,
//! `exists`, `map`, `filter`...) counted as [`ASSUMED_ENTRIES`] iterations
//! of its body, nested ones multiplied. An estimate over [`COST_LIMIT`] is
//! refused, with where the error is for the others, e.g.
//! `undeclared reference to 'objet' (line 1, column 1)`.
//!
//! **What is checked as it runs** ([`budget`]): the iterations actually
//! made, each weighed by the most one iteration of the expression
//! evaluates; past [`COST_LIMIT`], the evaluation stops with
//! [`EvalError::TooCostly`]. So no expression holds a thread for long,
//! whatever the object: 9 million iterations asked for are cut off in
//! under 10 ms (release build; `an_evaluation_stops_at_the_cost_limit`).
//!
//! Programs are compiled once per text: subscriptions keep theirs, and
//! queries share a bounded cache ([`compile_cached`]). A query's program
//! keeps what it answered for each cached object it read ([`decisions`]),
//! so that asked again it evaluates only the objects changed since.

/// Makes `$rust` (`Clone + PartialEq + 'static`) a CEL value of the type
/// `$cel` (a `static` [`cel::common::types::Type`]), equal to another of
/// its own type when `PartialEq` says so: the values Kubernetes' libraries
/// add (quantities, addresses, URLs...).
macro_rules! library_value {
    ($rust:ty, $cel:ident) => {
        impl ::cel::common::value::Val for $rust {
            fn get_type(&self) -> &::cel::common::types::Type {
                <Self as ::cel::common::value::Val>::cel_type()
            }

            fn cel_type() -> &'static ::cel::common::types::Type {
                &$cel
            }

            fn equals(&self, other: &dyn ::cel::common::value::Val) -> bool {
                other.downcast_ref::<$rust>() == Some(self)
            }

            fn clone_as_boxed<'v>(&self) -> Box<dyn ::cel::common::value::Val + 'v> {
                Box::new(<$rust as Clone>::clone(self))
            }

            fn as_any(&self) -> Option<&dyn ::std::any::Any> {
                Some(self)
            }
        }

        impl ::cel::common::value::StaticVal for $rust {}
    };
}

mod budget;
mod check;
pub mod decisions;
mod find;
pub mod formats;
mod json;
mod lists;
pub mod net;
pub mod quantity;
pub mod urls;
pub mod versions;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, LazyLock};

use cel::common::types::CelString;
use cel::common::value::Val;
use cel::{Context, Env, ExecutionError, Program};
use parking_lot::Mutex;

use crate::event::ChangeType;
use json::JsonMap;

/// Most cost one evaluation may spend, and most an expression may be
/// estimated to: the API server's limit for one CEL call (1,000,000).
pub const COST_LIMIT: u64 = 1_000_000;

/// Entries each list or map of an object is taken to hold when the cost of
/// an expression is estimated (the objects' schemas are not known).
pub const ASSUMED_ENTRIES: u64 = 100;

/// Longest expression accepted, in bytes.
pub const MAX_EXPRESSION_BYTES: usize = 10 * 1024;

/// Compiled programs a query's `match=` keeps; past it, the oldest go.
const CACHED_PROGRAMS: usize = 256;

/// The environment: CEL's standard library, the `strings`, `math` and
/// `base64` extensions, and Kubernetes' list ([`lists`]), quantity
/// ([`quantity`]), IP and CIDR ([`net`]), URL ([`urls`]), semver
/// ([`versions`]), format ([`formats`]) and regex ([`find`]) libraries.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    for extension in [
        cel::extensions::strings,
        cel::extensions::math,
        cel::extensions::encoders,
    ] {
        if let Err(e) = env.add_extension(extension) {
            tracing::error!(error = %e, "a CEL extension library could not be added");
        }
    }
    for (library, name) in [
        (lists::add as fn(&mut Env) -> _, "list"),
        (quantity::library, "quantity"),
        (net::library, "IP and CIDR"),
        (urls::library, "URL"),
        (versions::library, "semver"),
        (find::library, "regex"),
        (formats::library, "format"),
    ] {
        if let Err(e) = env.add_extension(library) {
            tracing::error!(error = %e, "the CEL {name} functions could not be added");
        }
    }
    Arc::new(env)
});

/// Finds the top-level members of an object's text, as `(quoted key,
/// value)` slices of it.
pub type Members<'a> = dyn for<'j> Fn(&'j [u8]) -> Vec<(&'j [u8], &'j [u8])> + 'a;

/// Which variables an expression may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A query's `match=`: `object`.
    Object,
    /// A subscription's `matchConditions`: `object`, `oldObject` (`null`
    /// for an ADDED) and `type` (`ADDED`, `MODIFIED` or `DELETED`).
    Change,
}

impl Scope {
    fn variables(self) -> &'static [&'static str] {
        match self {
            Scope::Object => &["object"],
            Scope::Change => &["object", "oldObject", "type"],
        }
    }
}

/// Why an expression cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CelError {
    /// Empty or blank.
    #[error("the expression is empty")]
    Empty,
    /// Longer than [`MAX_EXPRESSION_BYTES`].
    #[error("the expression is {0} bytes long; at most {MAX_EXPRESSION_BYTES} are accepted")]
    TooLong(usize),
    /// A syntax error, an undeclared variable or an unknown function.
    #[error("{message} (line {line}, column {column})")]
    Invalid {
        /// What is wrong.
        message: String,
        /// Where, from 1.
        line: usize,
        /// Where in the line, in characters from 1.
        column: usize,
    },
    /// Estimated over [`COST_LIMIT`].
    #[error(
        "the expression's estimated cost is {0}, over the limit of {COST_LIMIT} \
         (each list or map of the object counted as {ASSUMED_ENTRIES} entries; \
         nest fewer `all`, `exists`, `map` or `filter`)"
    )]
    TooCostly(u64),
}

/// Why an evaluation gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// It spent more than [`COST_LIMIT`].
    #[error("evaluating it cost more than the limit of {COST_LIMIT}")]
    TooCostly,
    /// It failed on this object: a missing field read without `has()`, a
    /// wrong type...
    #[error("{0}")]
    Failed(String),
    /// It gave something else than a bool.
    #[error("it evaluated to a {0}, not a bool")]
    NotBool(String),
}

/// A compiled expression.
pub struct Condition {
    text: Box<str>,
    program: Program,
    width: u64,
    decisions: decisions::Decisions,
}

impl fmt::Debug for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Condition").field(&self.text).finish()
    }
}

impl PartialEq for Condition {
    fn eq(&self, other: &Condition) -> bool {
        self.text == other.text
    }
}

impl Condition {
    /// Compiles and checks `text` for `scope`.
    pub fn compile(text: &str, scope: Scope) -> Result<Condition, CelError> {
        if text.trim().is_empty() {
            return Err(CelError::Empty);
        }
        if text.len() > MAX_EXPRESSION_BYTES {
            return Err(CelError::TooLong(text.len()));
        }
        let program = ENV.compile(text).map_err(|errors| {
            let first = errors.errors.first();
            let (line, column) = first
                .map(|e| (e.pos.0.max(1) as usize, e.pos.1.max(1) as usize))
                .unwrap_or((1, 1));
            CelError::Invalid {
                message: first.map(|e| e.msg.clone()).unwrap_or_default(),
                line,
                column,
            }
        })?;
        let checked = check::check(program.expression(), scope.variables()).map_err(|p| {
            let mut offset = program
                .source_info()
                .offset_for(p.node)
                .map_or(0, |(start, _)| start as usize);
            // A call is placed at its `(`: say where its name starts.
            if let Some(name) = &p.function {
                let short = name.rsplit('.').next().unwrap_or(name);
                let before = text.get(..offset).unwrap_or("");
                if let Some(name) = [name.as_str(), short]
                    .into_iter()
                    .find(|n| before.ends_with(n))
                {
                    offset -= name.len();
                }
            }
            let (line, column) = position(text, offset);
            CelError::Invalid {
                message: p.message,
                line,
                column,
            }
        })?;
        if checked.estimate > COST_LIMIT {
            return Err(CelError::TooCostly(checked.estimate));
        }
        Ok(Condition {
            text: text.into(),
            program,
            width: checked.width,
            decisions: Default::default(),
        })
    }

    /// The expression as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What this program answered for the cached objects a query read
    /// (see [`decisions`]).
    pub fn decisions(&self) -> &decisions::Decisions {
        &self.decisions
    }

    /// Whether an object matches, its text `json` (decompressed text is
    /// taken as it is, borrowed text is copied), whose top-level members
    /// `members` finds without a scan (a cached object's index, see
    /// [`crate::store::StoredObject::members`]).
    pub fn on_object(
        &self,
        json: std::borrow::Cow<'_, [u8]>,
        members: &Members<'_>,
    ) -> Result<bool, EvalError> {
        let text = Arc::new(json.into_owned());
        let root = JsonMap::root(text.clone(), members(&text).into_iter());
        let mut context = Context::with_env(ENV.clone());
        context.add_variable_as_val("object", Box::new(root));
        self.run(&context)
    }

    /// Whether a change matches (see [`ChangeVariables::new`]); for
    /// several conditions of one change, make its variables once and use
    /// [`Condition::on`].
    pub fn on_change(
        &self,
        kind: ChangeType,
        object: &[u8],
        old: Option<&[u8]>,
    ) -> Result<bool, EvalError> {
        self.on(&ChangeVariables::new(kind, object, old))
    }

    /// Whether the change `variables` were made of matches.
    pub fn on(&self, variables: &ChangeVariables) -> Result<bool, EvalError> {
        self.run(&variables.0)
    }

    fn run(&self, context: &Context) -> Result<bool, EvalError> {
        budget::start(COST_LIMIT, self.width);
        let result = self.program.execute(context);
        if budget::finish() {
            return Err(EvalError::TooCostly);
        }
        match result {
            Ok(cel::Value::Bool(answer)) => Ok(answer),
            Ok(other) => Err(EvalError::NotBool(type_name(&other))),
            Err(e) => Err(EvalError::Failed(execution_error(&e))),
        }
    }
}

/// The variables of one change, made once for every condition evaluated on
/// it: they share the object's text, and what reading it found out.
pub struct ChangeVariables(Context<'static, 'static>);

impl ChangeVariables {
    /// `object` is the new state (the last one for a deletion), `old` the
    /// previous one (`null` for an addition; the last state for a
    /// deletion, as admission webhooks see it), both as JSON text.
    pub fn new(kind: ChangeType, object: &[u8], old: Option<&[u8]>) -> ChangeVariables {
        let mut context = Context::with_env(ENV.clone());
        let object = Arc::new(object.to_vec());
        context.add_variable_as_val("object", JsonMap::of(object.clone()));
        let old = match (old, kind) {
            (Some(old), _) => JsonMap::of(Arc::new(old.to_vec())),
            (None, ChangeType::Deleted) => JsonMap::of(object),
            (None, _) => Box::new(cel::common::types::CelNull),
        };
        context.add_variable_as_val("oldObject", old);
        context.add_variable_as_val("type", Box::new(CelString::from(kind.as_str())));
        ChangeVariables(context)
    }
}

fn type_name(value: &cel::Value) -> String {
    match Box::<dyn Val>::try_from(value.clone()) {
        Ok(val) => val.get_type().name().to_owned(),
        Err(_) => "value".to_owned(),
    }
}

/// An evaluation error in the words of the API server's CEL where they differ.
fn execution_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        other => other.to_string(),
    }
}

/// Line and column (in characters), from 1, of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset.min(text.len()))];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// Compiled programs of queries, by scope and text.
#[derive(Default)]
struct Cache {
    programs: HashMap<(Scope, Box<str>), Arc<Condition>>,
    order: VecDeque<(Scope, Box<str>)>,
}

/// `text` compiled for `scope`, from a cache of the last
/// [`CACHED_PROGRAMS`] texts compiled: a query's `match=` asked again is
/// not compiled again.
///
/// Each call also makes the programs not asked for within
/// [`decisions::IDLE`] forget their answers.
pub fn compile_cached(text: &str, scope: Scope) -> Result<Arc<Condition>, CelError> {
    static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Default::default);
    let key = (scope, Box::<str>::from(text));
    {
        let cache = CACHE.lock();
        for program in cache.programs.values() {
            program.decisions.forget_if_idle(decisions::IDLE);
        }
        if let Some(found) = cache.programs.get(&key) {
            found.decisions.asked();
            return Ok(found.clone());
        }
    }
    let compiled = Arc::new(Condition::compile(text, scope)?);
    let mut cache = CACHE.lock();
    if cache
        .programs
        .insert(key.clone(), compiled.clone())
        .is_none()
    {
        cache.order.push_back(key);
    }
    while cache.order.len() > CACHED_PROGRAMS {
        if let Some(oldest) = cache.order.pop_front() {
            cache.programs.remove(&oldest);
        }
    }
    Ok(compiled)
}

#[cfg(test)]
mod tests;
