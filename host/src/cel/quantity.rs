//! Kubernetes' quantity library, as CRD validation rules and admission
//! policies have it: `quantity('1Gi')`, `isQuantity(s)`, and a quantity's
//! `compareTo`, `isLessThan`, `isGreaterThan`, `add`, `sub`, `sign`,
//! `isInteger`, `asInteger` and `asApproximateFloat`, e.g.
//! `quantity(c.resources.limits.memory).isGreaterThan(quantity('1Gi'))`.
//! Two quantities are `==` when their values are (`quantity('1') ==
//! quantity('1000m')`).
//!
//! A quantity is kept exactly, as a whole number of nano-units (`1n`,
//! 10⁻⁹), the finest precision a Kubernetes quantity keeps: a finer one
//! is rounded away from zero, as the API server rounds it. What 128 bits of
//! nano-units cannot hold (beyond about ±1.7 × 10²⁹) is refused as too large.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelDouble, CelInt, CelString, Type};
use cel::{DeclarationError, Env, ExecutionError};

/// The type of quantities, as `type(quantity('1'))` names it.
static QUANTITY: Type = Type::new_unspecified_type("kubernetes.Quantity");

/// Nano-units in one unit.
const NANOS: i128 = 1_000_000_000;

/// A Kubernetes quantity, in nano-units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Quantity(i128);

impl Quantity {
    /// Its value in nano-units (10⁻⁹).
    pub fn nanos(self) -> i128 {
        self.0
    }
}

library_value!(Quantity, QUANTITY);

/// Adds the library to `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(QUANTITY.to_owned())?;
    cel::add_overload!(env, fn quantity: (CelString) -> Result<Quantity>)?;
    cel::add_overload!(env, fn is_quantity: (CelString) -> CelBool)?;
    cel::add_member_overload!(env, fn compare_to: (Quantity, Quantity) -> CelInt)?;
    cel::add_member_overload!(env, fn is_less_than: (Quantity, Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn is_greater_than: (Quantity, Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn plus: (Quantity, Quantity) -> Result<Quantity>, name = "add")?;
    cel::add_member_overload!(env, fn add_int: (Quantity, CelInt) -> Result<Quantity>, name = "add")?;
    cel::add_member_overload!(env, fn minus: (Quantity, Quantity) -> Result<Quantity>, name = "sub")?;
    cel::add_member_overload!(env, fn sub_int: (Quantity, CelInt) -> Result<Quantity>, name = "sub")?;
    cel::add_member_overload!(env, fn sign: (Quantity) -> CelInt)?;
    cel::add_member_overload!(env, fn is_integer: (Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn as_integer: (Quantity) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn as_approximate_float: (Quantity) -> CelDouble)?;
    Ok(())
}

/// Why a text is not a quantity.
const FORMAT: &str = "a quantity is a number with an optional sign and suffix: \
    n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent such as e3";

/// Reads a quantity as the API server writes them: `[+-]` digits with an
/// optional `.`, then a suffix (decimal `n u m k M G T P E`, binary `Ki Mi
/// Gi Ti Pi Ei`, or an exponent `e3`, `E-2`).
pub fn parse(text: &str) -> Result<Quantity, String> {
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return Err(FORMAT.into());
    }
    let (mut ten, two): (i64, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        exponent => {
            let digits = exponent
                .strip_prefix(['e', 'E'])
                .filter(|d| !d.is_empty())
                .ok_or(FORMAT)?;
            let unsigned = digits.strip_prefix(['+', '-']).unwrap_or(digits);
            if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
                return Err(FORMAT.into());
            }
            // Past what any quantity here reaches, either way: the
            // same as the largest (too large) or smallest (rounds to 1n).
            let huge = if digits.starts_with('-') { -1000 } else { 1000 };
            (
                digits.parse::<i64>().map_or(huge, |e| e.clamp(-1000, 1000)),
                0,
            )
        }
    };
    // Decimals past the 30th only decide whether to round away from zero:
    // one more digit `1` stands for them when any is not 0.
    let (fraction, past) = fraction.split_at(fraction.len().min(30));
    let sticky = past.bytes().any(|b| b != b'0').then_some(b'1');
    // The digits as one whole number, the decimals' places shifted.
    let mut mantissa: i128 = 0;
    let mut places = 0;
    for (i, digit) in whole
        .bytes()
        .chain(fraction.bytes())
        .chain(sticky)
        .enumerate()
    {
        places += i64::from(i >= whole.len());
        mantissa = mantissa
            .checked_mul(10)
            .and_then(|m| m.checked_add(i128::from(digit - b'0')))
            .ok_or_else(too_large)?;
    }
    ten -= places;
    // In nano-units: times 10^(ten + 9) and 2^two.
    let nanos = scale(mantissa, ten + 9)?
        .checked_mul(1i128 << two)
        .ok_or_else(too_large)?;
    Ok(Quantity(if negative { -nanos } else { nanos }))
}

fn too_large() -> String {
    "the quantity is too large (at most about 1.7e29)".into()
}

/// `mantissa` (not negative) × 10^`power`, a finer part rounded away
/// from zero.
fn scale(mantissa: i128, power: i64) -> Result<i128, String> {
    if mantissa == 0 {
        return Ok(0);
    }
    let exponent = u32::try_from(power.unsigned_abs()).unwrap_or(u32::MAX);
    if power >= 0 {
        let factor = 10i128.checked_pow(exponent).ok_or_else(too_large)?;
        return mantissa.checked_mul(factor).ok_or_else(too_large);
    }
    // Below one nano-unit: at least 1, whatever the digits.
    let Some(divisor) = 10i128.checked_pow(exponent) else {
        return Ok(1);
    };
    let (quotient, remainder) = (mantissa / divisor, mantissa % divisor);
    Ok(quotient + i128::from(remainder != 0))
}

fn quantity(text: &CelString<'_>) -> Result<Quantity, ExecutionError> {
    parse(text.inner())
        .map_err(|e| ExecutionError::function_error("quantity", format!("'{}': {e}", text.inner())))
}

fn is_quantity(text: &CelString<'_>) -> CelBool {
    CelBool::from(parse(text.inner()).is_ok())
}

fn compare_to(this: &Quantity, other: &Quantity) -> CelInt {
    CelInt::from(match this.cmp(other) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

fn is_less_than(this: &Quantity, other: &Quantity) -> CelBool {
    CelBool::from(this < other)
}

fn is_greater_than(this: &Quantity, other: &Quantity) -> CelBool {
    CelBool::from(this > other)
}

fn overflow(function: &str) -> ExecutionError {
    ExecutionError::function_error(function, too_large())
}

fn plus(this: &Quantity, other: &Quantity) -> Result<Quantity, ExecutionError> {
    this.0
        .checked_add(other.0)
        .map(Quantity)
        .ok_or_else(|| overflow("add"))
}

fn minus(this: &Quantity, other: &Quantity) -> Result<Quantity, ExecutionError> {
    this.0
        .checked_sub(other.0)
        .map(Quantity)
        .ok_or_else(|| overflow("sub"))
}

fn whole(n: &CelInt) -> Quantity {
    // An i64 times 10^9 always fits in an i128.
    Quantity(i128::from(*n.inner()) * NANOS)
}

fn add_int(this: &Quantity, n: &CelInt) -> Result<Quantity, ExecutionError> {
    plus(this, &whole(n))
}

fn sub_int(this: &Quantity, n: &CelInt) -> Result<Quantity, ExecutionError> {
    minus(this, &whole(n))
}

fn sign(this: &Quantity) -> CelInt {
    CelInt::from(this.0.signum() as i64)
}

/// The quantity as an `int`, if it is a whole number that fits one.
fn integer(this: &Quantity) -> Option<i64> {
    (this.0 % NANOS == 0)
        .then(|| i64::try_from(this.0 / NANOS).ok())
        .flatten()
}

fn is_integer(this: &Quantity) -> CelBool {
    CelBool::from(integer(this).is_some())
}

fn as_integer(this: &Quantity) -> Result<CelInt, ExecutionError> {
    integer(this).map(CelInt::from).ok_or_else(|| {
        ExecutionError::function_error(
            "asInteger",
            "the quantity is not a whole number that fits an int; \
             ask isInteger() first, or use asApproximateFloat()",
        )
    })
}

fn as_approximate_float(this: &Quantity) -> CelDouble {
    CelDouble::from(this.0 as f64 / NANOS as f64)
}
