//! Kubernetes' quantity library (`kubernetes.quantity`): `quantity()`, `isQuantity()`,
//! `sign`, `isGreaterThan`, `isLessThan`, `compareTo`, `asApproximateFloat`, `asInteger`,
//! `isInteger`, `add`, `sub`.
//!
//! Parsing follows apimachinery's `resource.ParseQuantity` rule by rule: the scanner, the
//! suffixes, the int64 fast path (which decides `isInteger`/`asInteger`: a quantity kept as
//! an arbitrary-precision decimal is never an integer there, `1.5Gi` included), rounding up to
//! nano units and the cap of binary-SI values at 2^63-1. Values are exact: a mantissa of at
//! most 38 digits and a power of ten; beyond that crfix says it cannot evaluate the rule.

use std::any::Any;
use std::cmp::Ordering;

use cel::common::types::{CelBool, CelDouble, CelInt, CelString, Type};
use cel::common::value::{StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::{k8s_error, unsupported};

static QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");

const SPLIT_RE: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

/// apimachinery's parse errors.
#[derive(Debug, Clone, PartialEq)]
enum ParseError {
    Format,
    Numeric,
    Suffix,
    /// Exact, but beyond what crfix represents.
    TooPrecise,
}

impl ParseError {
    fn into_execution(self) -> ExecutionError {
        match self {
            ParseError::Format => k8s_error(
                "quantity",
                format!("quantities must match the regular expression '{SPLIT_RE}'"),
            ),
            ParseError::Numeric => {
                k8s_error("quantity", "unable to parse numeric part of quantity")
            }
            ParseError::Suffix => k8s_error("quantity", "unable to parse quantity's suffix"),
            ParseError::TooPrecise => {
                unsupported("quantity", "quantity beyond 38 significant digits")
            }
        }
    }
}

/// An exact decimal: `(-1)^neg * mantissa * 10^exp`, the mantissa without trailing zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    neg: bool,
    mantissa: u128,
    exp: i32,
}

impl Decimal {
    fn new(neg: bool, mut mantissa: u128, mut exp: i32) -> Decimal {
        if mantissa == 0 {
            return Decimal {
                neg: false,
                mantissa: 0,
                exp: 0,
            };
        }
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exp += 1;
        }
        Decimal { neg, mantissa, exp }
    }

    fn from_i64(value: i64, scale: i32) -> Decimal {
        Decimal::new(value < 0, value.unsigned_abs() as u128, scale)
    }

    fn digits(self) -> i64 {
        self.mantissa.checked_ilog10().map_or(0, |d| d as i64 + 1)
    }

    fn cmp_abs(self, other: Decimal) -> Ordering {
        match (self.mantissa, other.mantissa) {
            (0, 0) => return Ordering::Equal,
            (0, _) => return Ordering::Less,
            (_, 0) => return Ordering::Greater,
            _ => {}
        }
        let magnitude = |d: Decimal| d.digits() + d.exp as i64;
        match magnitude(self).cmp(&magnitude(other)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        // Same magnitude: both mantissas have at most 38 digits, so aligning fits in u128.
        let (a, b) = align(self, other).unwrap_or((self.mantissa, other.mantissa));
        a.cmp(&b)
    }

    fn cmp(self, other: Decimal) -> Ordering {
        let sign = |d: Decimal| match (d.mantissa, d.neg) {
            (0, _) => 0,
            (_, true) => -1,
            _ => 1,
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal if self.neg => other.cmp_abs(self),
            Ordering::Equal => self.cmp_abs(other),
            unequal => unequal,
        }
    }

    /// `self + other`, or `None` beyond 38 digits.
    fn add(self, other: Decimal) -> Option<Decimal> {
        let exp = self.exp.min(other.exp);
        let (a, b) = align(self, other)?;
        let (neg, mantissa) = match (self.neg, other.neg) {
            (x, y) if x == y => (x, a.checked_add(b)?),
            _ if a >= b => (self.neg, a - b),
            _ => (other.neg, b - a),
        };
        Some(Decimal::new(neg, mantissa, exp))
    }

    fn negate(self) -> Decimal {
        Decimal::new(!self.neg, self.mantissa, self.exp)
    }

    /// The unscaled integer of this value at `scale` digits after the point, as a float (Go's
    /// `big.Float.SetInt(unscaled).Float64()`: the nearest double).
    fn unscaled_float(self, scale: i32) -> f64 {
        let shift = self.exp as i64 + scale as i64;
        let text = format!(
            "{}{}e{}",
            if self.neg { "-" } else { "" },
            self.mantissa,
            shift
        );
        let value: f64 = text.parse().unwrap_or(f64::NAN);
        if shift < 0 {
            // Not an integer at that scale (cannot happen for Go's values): truncate.
            value.trunc()
        } else {
            value
        }
    }
}

/// Both mantissas at the smaller exponent, or `None` if one overflows.
fn align(a: Decimal, b: Decimal) -> Option<(u128, u128)> {
    let exp = a.exp.min(b.exp);
    let scale = |d: Decimal| -> Option<u128> {
        let shift = u32::try_from(d.exp as i64 - exp as i64).ok()?;
        d.mantissa.checked_mul(10u128.checked_pow(shift)?)
    };
    Some((scale(a)?, scale(b)?))
}

/// A quantity: its exact value and how apimachinery holds it.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    value: Decimal,
    form: Form,
}

/// apimachinery's representation of a quantity, which decides `isInteger` and the float.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    /// `int64Amount{value, scale}`: `value * 10^scale`.
    Int { value: i64, scale: i32 },
    /// An `inf.Dec` with this scale (digits after the point).
    Dec { scale: i32 },
}

impl Val for Quantity {
    fn get_type(&self) -> &Type {
        &QUANTITY_TYPE
    }
    fn cel_type() -> &'static Type {
        &QUANTITY_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other
            .downcast_ref::<Quantity>()
            .is_some_and(|o| self.value.cmp(o.value) == Ordering::Equal)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Quantity {}

/// Go's `int64Multiply`.
fn int64_multiply(a: i64, b: i64) -> Option<i64> {
    if a == 0 || b == 0 {
        return Some(0);
    }
    if a == 1 {
        return Some(b);
    }
    if b == 1 {
        return Some(a);
    }
    if a == i64::MIN || b == i64::MIN {
        return None;
    }
    a.checked_mul(b)
}

/// Go's `positiveScaleInt64`: `base * 10^scale`.
fn positive_scale(base: i64, scale: i32) -> Option<i64> {
    (0..scale).try_fold(base, |v, _| int64_multiply(v, 10))
}

/// The parts apimachinery's scanner (`parseQuantityString`) finds.
struct Scanned<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// apimachinery's `parseQuantityString`.
fn scan(s: &str) -> Result<Scanned<'_>, ParseError> {
    let b = s.as_bytes();
    let end = b.len();
    let mut out = Scanned {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    match b.first() {
        Some(b'-') => {
            out.positive = false;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        out.num = "0";
        out.value = "0";
        return Ok(out);
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        out.num = &s[start..];
        out.value = s;
        return Ok(out);
    }
    out.num = if pos == start { "0" } else { &s[start..pos] };
    if b[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        out.denom = &s[start..pos];
        if pos >= end {
            out.value = s;
            return Ok(out);
        }
    }
    out.value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(ParseError::Format);
    }
    out.suffix = &s[suffix_start..];
    Ok(out)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    DecimalExponent,
    BinarySi,
    DecimalSi,
}

/// apimachinery's `quantitySuffixer.interpret`: base, exponent and format of a suffix.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = match suffix {
        "" => Some(0),
        "n" => Some(-9),
        "u" => Some(-6),
        "m" => Some(-3),
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        "E" => Some(18),
        _ => None,
    };
    if let Some(exp) = decimal {
        return Some((10, exp, Format::DecimalSi));
    }
    let binary = match suffix {
        "Ki" => Some(10),
        "Mi" => Some(20),
        "Gi" => Some(30),
        "Ti" => Some(40),
        "Pi" => Some(50),
        "Ei" => Some(60),
        _ => None,
    };
    if let Some(exp) = binary {
        return Some((2, exp, Format::BinarySi));
    }
    let rest = suffix.strip_prefix(['e', 'E'])?;
    // Go's strconv.ParseInt(…, 10, 64), then a conversion to int32 that wraps.
    let parsed = parse_go_int(rest)?;
    Some((10, parsed as i32, Format::DecimalExponent))
}

/// Go's `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits.
fn parse_go_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}

/// The value of a quantity as apimachinery reads it (`500m` is 0.5, `2Gi` 2147483648), for
/// readings outside CEL; `None` for no quantity.
pub(crate) fn approximate_value(text: &str) -> Option<f64> {
    parse(text).ok().map(|q| q.as_approximate_float())
}

/// apimachinery's `ParseQuantity`.
fn parse(s: &str) -> Result<Quantity, ParseError> {
    if s.is_empty() {
        return Err(ParseError::Format);
    }
    if s == "0" {
        return Ok(int_quantity(0, 0));
    }
    let scanned = scan(s)?;
    let (base, exponent, format) = interpret(scanned.suffix).ok_or(ParseError::Suffix)?;
    if let Some(q) = fast_path(&scanned, exponent, format) {
        return q;
    }
    slow_path(&scanned, base, exponent, format)
}

fn int_quantity(value: i64, scale: i32) -> Quantity {
    Quantity {
        value: Decimal::from_i64(value, scale),
        form: Form::Int { value, scale },
    }
}

/// The int64 fast path of `ParseQuantity`, `None` when it does not apply.
fn fast_path(
    s: &Scanned<'_>,
    exponent: i32,
    format: Format,
) -> Option<Result<Quantity, ParseError>> {
    let digits = (s.num.len() + s.denom.len()) as i64;
    let (mut scale, precision, mantissa) = match format {
        Format::DecimalExponent | Format::DecimalSi => (exponent, 18 - digits, 1i64),
        Format::BinarySi if exponent >= 0 && s.denom.is_empty() => {
            let precision = 15 - s.num.len() as i64 - (exponent as f32 * 3.0 / 10.0) as i64 - 1;
            (0, precision, 1i64 << exponent)
        }
        Format::BinarySi => (0, -1, 1),
    };
    if precision < 0 {
        return None;
    }
    scale = scale.checked_sub(s.denom.len() as i32)?;
    if scale < -9 {
        return None;
    }
    let shifted = format!("{}{}", s.num, s.denom);
    let Ok(value) = shifted.parse::<i64>() else {
        return Some(Err(ParseError::Numeric));
    };
    let result = int64_multiply(value, mantissa)?;
    let result = if s.positive { result } else { -result };
    Some(Ok(int_quantity(result, scale)))
}

/// `inf.Dec.SetString`: an optional sign, digits with at most one point.
fn parse_decimal(value: &str) -> Result<Decimal, ParseError> {
    let (neg, rest) = match value.as_bytes().first() {
        Some(b'-') => (true, &value[1..]),
        Some(b'+') => (false, &value[1..]),
        _ => (false, value),
    };
    let (int, frac) = rest.split_once('.').unwrap_or((rest, ""));
    if int.len() + frac.len() == 0 || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(ParseError::Numeric);
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.len() > 38 {
        return Err(ParseError::TooPrecise);
    }
    let trailing = (digits.len() - significant.len()) as i32;
    let mantissa = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| ParseError::TooPrecise)?
    };
    Ok(Decimal::new(neg, mantissa, trailing - frac.len() as i32))
}

/// The `inf.Dec` path of `ParseQuantity`: suffix applied, rounded up to nano, binary capped.
fn slow_path(
    s: &Scanned<'_>,
    base: u32,
    exponent: i32,
    format: Format,
) -> Result<Quantity, ParseError> {
    let amount = parse_decimal(s.value)?;
    let mut amount = if base == 10 {
        let exp = amount
            .exp
            .checked_add(exponent)
            .ok_or(ParseError::TooPrecise)?;
        Decimal::new(amount.neg, amount.mantissa, exp)
    } else {
        let factor = 1u128
            .checked_shl(exponent as u32)
            .ok_or(ParseError::TooPrecise)?;
        let mantissa = amount
            .mantissa
            .checked_mul(factor)
            .ok_or(ParseError::TooPrecise)?;
        Decimal::new(amount.neg, mantissa, amount.exp)
    };
    if amount.mantissa == 0 {
        return Ok(Quantity {
            value: amount,
            form: Form::Dec { scale: 0 },
        });
    }
    if amount.exp < -9 {
        // Round up (away from zero) to nano units.
        let shift = (-9 - amount.exp) as u32;
        let divisor = 10u128.checked_pow(shift);
        let mantissa = match divisor {
            Some(d) => amount.mantissa / d + u128::from(!amount.mantissa.is_multiple_of(d)),
            None => 1,
        };
        amount = Decimal::new(amount.neg, mantissa, -9);
    }
    let mut scale = 9;
    let max = Decimal::from_i64(i64::MAX, 0);
    if format == Format::BinarySi && amount.cmp_abs(max) == Ordering::Greater {
        amount = Decimal::new(amount.neg, max.mantissa, max.exp);
        scale = 0;
    }
    Ok(Quantity {
        value: amount,
        form: Form::Dec { scale },
    })
}

impl Quantity {
    fn dec_scale(&self) -> i32 {
        match self.form {
            Form::Int { scale, .. } => -scale,
            Form::Dec { scale } => scale,
        }
    }

    /// apimachinery's `Quantity.Add`.
    fn add(self, other: Quantity) -> Result<Quantity, ExecutionError> {
        let value = self
            .value
            .add(other.value)
            .ok_or_else(|| unsupported("add", "quantity beyond 38 significant digits"))?;
        if let (
            Form::Int {
                value: a,
                scale: sa,
            },
            Form::Int {
                value: b,
                scale: sb,
            },
        ) = (self.form, other.form)
        {
            if let Some((v, s)) = int64_add(a, sa, b, sb) {
                return Ok(Quantity {
                    value,
                    form: Form::Int { value: v, scale: s },
                });
            }
        }
        let scale = self.dec_scale().max(other.dec_scale());
        Ok(Quantity {
            value,
            form: Form::Dec { scale },
        })
    }

    /// apimachinery's `Quantity.Sub`: `Add` of the negation (`int64Amount.Sub`).
    fn sub(self, other: Quantity) -> Result<Quantity, ExecutionError> {
        let negated = Quantity {
            value: other.value.negate(),
            form: match other.form {
                Form::Int { value, scale } => Form::Int {
                    value: value.wrapping_neg(),
                    scale,
                },
                dec => dec,
            },
        };
        self.add(negated)
    }

    /// apimachinery's `AsInt64`.
    fn as_int64(&self) -> Option<i64> {
        match self.form {
            Form::Int { value, scale: 0 } => Some(value),
            Form::Int { scale, .. } if scale < 0 => None,
            Form::Int { value, scale } => positive_scale(value, scale),
            Form::Dec { .. } => None,
        }
    }

    /// apimachinery's `AsApproximateFloat64`.
    fn as_approximate_float(&self) -> f64 {
        let (base, exponent) = match self.form {
            Form::Int { value, scale } => (value as f64, scale),
            Form::Dec { scale } => (self.value.unscaled_float(scale), -scale),
        };
        if exponent == 0 {
            return base;
        }
        base * go_pow10(exponent)
    }
}

/// Go's `int64Amount.Add`: the sum as an int64 amount, or `None` when Go falls back to
/// `inf.Dec`.
fn int64_add(a: i64, sa: i32, b: i64, sb: i32) -> Option<(i64, i32)> {
    if b == 0 {
        return Some((a, sa));
    }
    if a == 0 {
        return Some((b, sb));
    }
    match sa.cmp(&sb) {
        Ordering::Equal => Some((a.checked_add(b)?, sa)),
        Ordering::Greater => Some((positive_scale(a, sa - sb)?.checked_add(b)?, sb)),
        Ordering::Less => Some((a.checked_add(positive_scale(b, sb - sa)?)?, sa)),
    }
}

/// Go's `math.Pow10`: the nearest double to `10^n`.
fn go_pow10(n: i32) -> f64 {
    if n < -323 {
        return 0.0;
    }
    if n > 308 {
        return f64::INFINITY;
    }
    if n >= 0 {
        return format!("1e{n}").parse().unwrap_or(f64::INFINITY);
    }
    // Go computes 1 / 10^-n for negative n.
    let positive: f64 = format!("1e{}", -n).parse().unwrap_or(f64::INFINITY);
    1.0 / positive
}

fn quantity(s: &CelString<'_>) -> Result<Quantity, ExecutionError> {
    parse(s.inner()).map_err(ParseError::into_execution)
}

fn is_quantity(s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    match parse(s.inner()) {
        Ok(_) => Ok(CelBool::from(true)),
        Err(ParseError::TooPrecise) => Err(ParseError::TooPrecise.into_execution()),
        Err(_) => Ok(CelBool::from(false)),
    }
}

fn sign(q: &Quantity) -> CelInt {
    CelInt::from(match q.value.cmp(Decimal::new(false, 0, 0)) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

fn compare_to(q: &Quantity, other: &Quantity) -> CelInt {
    CelInt::from(q.value.cmp(other.value) as i64)
}

fn is_greater_than(q: &Quantity, other: &Quantity) -> CelBool {
    CelBool::from(q.value.cmp(other.value) == Ordering::Greater)
}

fn is_less_than(q: &Quantity, other: &Quantity) -> CelBool {
    CelBool::from(q.value.cmp(other.value) == Ordering::Less)
}

fn as_approximate_float(q: &Quantity) -> CelDouble {
    CelDouble::from(q.as_approximate_float())
}

fn as_integer(q: &Quantity) -> Result<CelInt, ExecutionError> {
    q.as_int64()
        .map(CelInt::from)
        .ok_or_else(|| k8s_error("asInteger", "cannot convert value to integer"))
}

fn is_integer(q: &Quantity) -> CelBool {
    CelBool::from(q.as_int64().is_some())
}

fn add(q: &Quantity, other: &Quantity) -> Result<Quantity, ExecutionError> {
    q.add(*other)
}

fn add_int(q: &Quantity, other: &CelInt) -> Result<Quantity, ExecutionError> {
    q.add(int_quantity(*other.inner(), 0))
}

fn sub(q: &Quantity, other: &Quantity) -> Result<Quantity, ExecutionError> {
    q.sub(*other)
}

fn sub_int(q: &Quantity, other: &CelInt) -> Result<Quantity, ExecutionError> {
    q.sub(int_quantity(*other.inner(), 0))
}

pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn quantity: (CelString) -> Result<Quantity>, id = "string_to_quantity")?;
    cel::add_overload!(env, fn is_quantity: (CelString) -> Result<CelBool>, id = "is_quantity_string")?;
    // Declared global in Kubernetes and documented as a member: both forms.
    cel::add_overload!(env, fn sign: (Quantity) -> CelInt, id = "quantity_sign")?;
    cel::add_member_overload!(env, fn sign: (Quantity) -> CelInt, id = "quantity_sign_member")?;
    cel::add_member_overload!(env, fn is_greater_than: (Quantity, Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn is_less_than: (Quantity, Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn compare_to: (Quantity, Quantity) -> CelInt)?;
    cel::add_member_overload!(env, fn as_approximate_float: (Quantity) -> CelDouble)?;
    cel::add_member_overload!(env, fn as_integer: (Quantity) -> Result<CelInt>)?;
    cel::add_member_overload!(env, fn is_integer: (Quantity) -> CelBool)?;
    cel::add_member_overload!(env, fn add: (Quantity, Quantity) -> Result<Quantity>)?;
    cel::add_member_overload!(env, fn add_int: (Quantity, CelInt) -> Result<Quantity>, name = "add")?;
    cel::add_member_overload!(env, fn sub: (Quantity, Quantity) -> Result<Quantity>)?;
    cel::add_member_overload!(env, fn sub_int: (Quantity, CelInt) -> Result<Quantity>, name = "sub")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{all_pass, error};
    use super::*;

    #[test]
    fn parses_as_apimachinery() {
        let int = |s: &str| parse(s).unwrap().form;
        assert_eq!(
            int("100m"),
            Form::Int {
                value: 100,
                scale: -3
            }
        );
        assert_eq!(
            int("1Gi"),
            Form::Int {
                value: 1 << 30,
                scale: 0
            }
        );
        assert_eq!(
            int("0.001"),
            Form::Int {
                value: 1,
                scale: -3
            }
        );
        assert_eq!(
            int("-5k"),
            Form::Int {
                value: -5,
                scale: 3
            }
        );
        assert_eq!(int("1e3"), Form::Int { value: 1, scale: 3 });
        assert_eq!(int("1.5Gi"), Form::Dec { scale: 9 });
        assert_eq!(int("1.5n"), Form::Dec { scale: 9 });
        assert_eq!(parse("1.5n").unwrap().value, Decimal::new(false, 2, -9));
        for bad in ["", "abc", "1,3G", "1.2.3", "1Mii", "--1", "1 Mi"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("200K").unwrap_err(), ParseError::Suffix);
        assert_eq!(parse("1e").unwrap_err(), ParseError::Suffix);
        assert_eq!(parse("1x").unwrap_err(), ParseError::Format);
        // Rounded up to nano units.
        let tiny = parse("0.0000000001").unwrap();
        assert_eq!(tiny.value, Decimal::new(false, 1, -9));
        // Binary SI capped at 2^63-1.
        assert_eq!(
            parse("100000000000Ei").unwrap().value,
            Decimal::from_i64(i64::MAX, 0)
        );
    }

    #[test]
    fn quantity_functions() {
        all_pass(&[
            "quantity('1.3G') == quantity('1300M')",
            "isQuantity('1.3Gi') && isQuantity('10000k') && !isQuantity('200K')",
            "!isQuantity('Three') && !isQuantity('1,3G') && !isQuantity('')",
            // apimachinery's `ParseQuantity` reads a missing number as 0 (it does not use the
            // regular expression its error message quotes): `Mi` and `k` are quantities.
            "isQuantity('Mi') && quantity('Mi') == quantity('0') && isQuantity('k')",
            "isQuantity('-Mi') && isQuantity('.5') && !isQuantity('M i') && isQuantity('-')",
            "quantity('50000000G').isInteger() && quantity('50k').isInteger()",
            "!quantity('9999999999999999999999999999999G').isInteger()",
            "!quantity('1.5Gi').isInteger() && !quantity('1000m').isInteger()",
            "quantity('50k').asInteger() == 50000",
            "quantity('50k').sub(20000).asApproximateFloat() == 30000.0",
            "quantity('50k').add(quantity('20k')) == quantity('70k')",
            "quantity('50k').add(20) == quantity('50020')",
            "quantity('50k').sub(quantity('20k')) == quantity('30k')",
            "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')",
            "quantity('200M').compareTo(quantity('0.2G')) == 0",
            "quantity('50M').compareTo(quantity('50Mi')) == -1",
            "quantity('50Mi').compareTo(quantity('50M')) == 1",
            "quantity('150Mi').isGreaterThan(quantity('100Mi'))",
            "!quantity('50Mi').isGreaterThan(quantity('100Mi'))",
            "quantity('50M').isLessThan(quantity('100M'))",
            "quantity('-1').sign() == -1 && sign(quantity('0')) == 0",
            "quantity('1e100').isGreaterThan(quantity('9E'))",
            "quantity('100m').asApproximateFloat() == 0.1",
            "quantity('1.5Gi').asApproximateFloat() == 1610612736.0",
            "quantity('9223372036854775807').add(1).isInteger() == false",
        ]);
    }

    #[test]
    fn quantity_errors_in_the_api_servers_words() {
        assert_eq!(
            error("quantity('abc') == quantity('1')"),
            format!("quantities must match the regular expression '{SPLIT_RE}'")
        );
        assert_eq!(
            error("quantity('200K').sign() == 1"),
            "unable to parse quantity's suffix"
        );
        assert_eq!(
            error("quantity('1.5Gi').asInteger() == 1"),
            "cannot convert value to integer"
        );
    }
}
