//! CEL's timestamps and durations as cel-go has them: `duration()`, `timestamp()`, `+`, `-`,
//! comparisons, `string()`/`int()` conversions, and the getters (`getHours`, `getFullYear`,
//! … with an optional time zone).
//!
//! A duration is Go's `time.Duration` (int64 nanoseconds), parsed by Go's
//! `time.ParseDuration` rules; a timestamp is parsed by Go's `time.Parse(time.RFC3339, …)`
//! rules and kept in years 1 to 9999. The getters use UTC unless given a zone (Kubernetes sets
//! `DefaultUTCTimeZone`). The `cel` crate's own `chrono` feature would do the same but embeds
//! the IANA time-zone database (1 MB of wasm): here, zone names other than `UTC` are crfix's
//! limitation (the rule is skipped), fixed offsets such as `+05:30` are supported.

use std::any::Any;
use std::cmp::Ordering;

use cel::common::traits::{Adder, Comparer, Negator, Subtractor};
use cel::common::types::{CelInt, CelString, Type};
use cel::common::value::{CowVal, StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use chrono::{Datelike, NaiveDate, Timelike};

use super::{k8s_error, unsupported};

static DURATION_TYPE: Type = Type::new_unspecified_type("google.protobuf.Duration");
static TIMESTAMP_TYPE: Type = Type::new_unspecified_type("google.protobuf.Timestamp");

/// Unix seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z (cel-go's range).
const MIN_UNIX: i64 = -62135596800;
const MAX_UNIX: i64 = 253402300799;
const NANOS: i64 = 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(i64);

/// A point in time: Unix seconds and nanoseconds (UTC), and the offset it was written with.
#[derive(Debug, Clone, Copy)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
    offset: i32,
}

impl Timestamp {
    fn key(&self) -> (i64, u32) {
        (self.secs, self.nanos)
    }

    fn checked(secs: i64, nanos: u32, offset: i32) -> Result<Timestamp, ExecutionError> {
        if !(MIN_UNIX..=MAX_UNIX).contains(&secs) {
            return Err(k8s_error("timestamp", "timestamp overflow"));
        }
        Ok(Timestamp {
            secs,
            nanos,
            offset,
        })
    }

    fn total_nanos(&self) -> i128 {
        self.secs as i128 * NANOS as i128 + self.nanos as i128
    }

    fn from_total_nanos(total: i128, offset: i32) -> Result<Timestamp, ExecutionError> {
        let secs = i64::try_from(total.div_euclid(NANOS as i128))
            .map_err(|_| k8s_error("timestamp", "timestamp overflow"))?;
        Timestamp::checked(secs, total.rem_euclid(NANOS as i128) as u32, offset)
    }
}

fn overflow() -> ExecutionError {
    k8s_error("duration", "integer overflow")
}

macro_rules! val_impl {
    ($t:ty, $type:expr) => {
        impl Val for $t {
            fn get_type(&self) -> &Type {
                &$type
            }
            fn cel_type() -> &'static Type {
                &$type
            }
            fn as_adder<'b, 'v>(&'b self) -> Option<&'b (dyn Adder + 'v)>
            where
                Self: 'v,
            {
                Some(self)
            }
            fn as_subtractor<'b, 'v>(&'b self) -> Option<&'b (dyn Subtractor + 'v)>
            where
                Self: 'v,
            {
                Some(self)
            }
            fn as_comparer(&self) -> Option<&dyn Comparer> {
                Some(self)
            }
            fn equals(&self, other: &dyn Val) -> bool {
                other
                    .downcast_ref::<$t>()
                    .is_some_and(|o| self.compare(o) == Ok(Ordering::Equal))
            }
            fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
                Box::new(*self)
            }
            fn as_any(&self) -> Option<&dyn Any> {
                Some(self)
            }
            fn as_negator<'b, 'v>(&'b self) -> Option<&'b (dyn Negator + 'v)>
            where
                Self: 'v,
            {
                self.negatable().then_some(self as &dyn Negator)
            }
        }
        impl StaticVal for $t {}
    };
}

val_impl!(Duration, DURATION_TYPE);
val_impl!(Timestamp, TIMESTAMP_TYPE);

impl Duration {
    fn negatable(&self) -> bool {
        true
    }
}

impl Timestamp {
    fn negatable(&self) -> bool {
        false
    }
}

impl Negator for Duration {
    fn negate<'v>(&self) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        Ok(Box::new(Duration(
            self.0.checked_neg().ok_or_else(overflow)?,
        )))
    }
}

impl Negator for Timestamp {
    fn negate<'v>(&self) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        Err(ExecutionError::function_error("-_", "no such overload"))
    }
}

fn no_overload(op: &str, rhs: &dyn Val) -> ExecutionError {
    ExecutionError::function_error(
        op,
        format!(
            "{}no such overload for {}",
            super::super::UNSUPPORTED,
            rhs.get_type().name()
        ),
    )
}

impl Comparer for Duration {
    fn compare(&self, rhs: &dyn Val) -> Result<Ordering, ExecutionError> {
        let other = rhs
            .downcast_ref::<Duration>()
            .ok_or_else(|| no_overload("_<_", rhs))?;
        Ok(self.0.cmp(&other.0))
    }
}

impl Comparer for Timestamp {
    fn compare(&self, rhs: &dyn Val) -> Result<Ordering, ExecutionError> {
        let other = rhs
            .downcast_ref::<Timestamp>()
            .ok_or_else(|| no_overload("_<_", rhs))?;
        Ok(self.key().cmp(&other.key()))
    }
}

impl Adder for Duration {
    fn add<'b, 'v>(&'b self, rhs: &(dyn Val + 'v)) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        if let Some(d) = rhs.downcast_ref::<Duration>() {
            return Ok(CowVal::owned(Duration(
                self.0.checked_add(d.0).ok_or_else(overflow)?,
            )));
        }
        if let Some(t) = rhs.downcast_ref::<Timestamp>() {
            let total = t.total_nanos() + self.0 as i128;
            return Ok(CowVal::owned(Timestamp::from_total_nanos(total, t.offset)?));
        }
        Err(no_overload("_+_", rhs))
    }
}

impl Subtractor for Duration {
    fn sub<'b, 'v>(&'b self, rhs: &(dyn Val + 'v)) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let d = rhs
            .downcast_ref::<Duration>()
            .ok_or_else(|| no_overload("_-_", rhs))?;
        Ok(CowVal::owned(Duration(
            self.0.checked_sub(d.0).ok_or_else(overflow)?,
        )))
    }
}

impl Adder for Timestamp {
    fn add<'b, 'v>(&'b self, rhs: &(dyn Val + 'v)) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let d = rhs
            .downcast_ref::<Duration>()
            .ok_or_else(|| no_overload("_+_", rhs))?;
        let total = self.total_nanos() + d.0 as i128;
        Ok(CowVal::owned(Timestamp::from_total_nanos(
            total,
            self.offset,
        )?))
    }
}

impl Subtractor for Timestamp {
    fn sub<'b, 'v>(&'b self, rhs: &(dyn Val + 'v)) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        if let Some(d) = rhs.downcast_ref::<Duration>() {
            let total = self.total_nanos() - d.0 as i128;
            return Ok(CowVal::owned(Timestamp::from_total_nanos(
                total,
                self.offset,
            )?));
        }
        let t = rhs
            .downcast_ref::<Timestamp>()
            .ok_or_else(|| no_overload("_-_", rhs))?;
        let diff = i64::try_from(self.total_nanos() - t.total_nanos()).map_err(|_| overflow())?;
        Ok(CowVal::owned(Duration(diff)))
    }
}

/// Go's `time.ParseDuration`, `None` where Go fails.
fn parse_duration(orig: &str) -> Option<i64> {
    let (neg, mut s) = match orig.as_bytes().first() {
        Some(b'-') => (true, &orig[1..]),
        Some(b'+') => (false, &orig[1..]),
        _ => (false, orig),
    };
    if s == "0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let (value, fraction, scale, rest) = leading_number(s)?;
        let unit_len = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        if unit_len == 0 {
            return None;
        }
        let unit: u64 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        s = &rest[unit_len..];
        if value > (1u64 << 63) / unit {
            return None;
        }
        let mut v = value * unit;
        if fraction > 0 {
            v += (fraction as f64 * (unit as f64 / scale)) as u64;
            if v > 1 << 63 {
                return None;
            }
        }
        total = total.checked_add(v)?;
        if total > 1 << 63 {
            return None;
        }
    }
    if neg {
        return Some((total as i64).wrapping_neg());
    }
    i64::try_from(total).ok()
}

/// Go's `leadingInt` and `leadingFraction`: the integer part, the fraction's digits and its
/// scale, and the rest; `None` for no digits or an integer overflow.
fn leading_number(s: &str) -> Option<(u64, u64, f64, &str)> {
    let b = s.as_bytes();
    if !(b[0] == b'.' || b[0].is_ascii_digit()) {
        return None;
    }
    let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut value: u64 = 0;
    for &c in &b[..int_len] {
        if value > (1 << 63) / 10 {
            return None;
        }
        value = value * 10 + u64::from(c - b'0');
        if value > 1 << 63 {
            return None;
        }
    }
    let mut rest = &s[int_len..];
    let (mut fraction, mut scale, mut frac_len) = (0u64, 1.0f64, 0);
    if let Some(after) = rest.strip_prefix('.') {
        let mut overflow = false;
        for &c in after.as_bytes().iter().take_while(|c| c.is_ascii_digit()) {
            frac_len += 1;
            if overflow || fraction > (1 << 63) / 10 {
                overflow = true;
                continue;
            }
            let y = fraction * 10 + u64::from(c - b'0');
            if y > 1 << 63 {
                overflow = true;
                continue;
            }
            fraction = y;
            scale *= 10.0;
        }
        rest = &after[frac_len..];
    }
    if int_len == 0 && frac_len == 0 {
        return None;
    }
    Some((value, fraction, scale, rest))
}

/// A fixed number of ASCII digits at `s[at..]`.
fn digits(s: &[u8], at: usize, n: usize) -> Option<u32> {
    let field = s.get(at..at + n)?;
    field.iter().try_fold(0u32, |v, c| {
        c.is_ascii_digit().then(|| v * 10 + u32::from(c - b'0'))
    })
}

/// Go's `time.Parse(time.RFC3339, s)`, `None` where Go fails.
fn parse_rfc3339(s: &str) -> Option<(i64, u32, i32)> {
    let b = s.as_bytes();
    let (year, month, day) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    let (hour, minute, second) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || b.get(10) != Some(&b'T') {
        return None;
    }
    if b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(year as i32, month, day)?;
    let mut at = 19;
    let mut nanos = 0u32;
    if matches!(b.get(at), Some(b'.' | b',')) && b.get(at + 1).is_some_and(u8::is_ascii_digit) {
        let len = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        for (i, c) in b[at + 1..at + 1 + len].iter().take(9).enumerate() {
            nanos += u32::from(c - b'0') * 10u32.pow(8 - i as u32);
        }
        at += 1 + len;
    }
    let offset = match b.get(at..)? {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 && rest[2] == b':' => {
            let (h, m) = (digits(rest, 0, 2)?, digits(rest, 3, 2)?);
            if h > 24 || m > 60 {
                return None;
            }
            let secs = (h * 3600 + m * 60) as i32;
            if *sign == b'-' {
                -secs
            } else {
                secs
            }
        }
        _ => return None,
    };
    let days = i64::from(date.num_days_from_ce()) - 719_163;
    let secs = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - i64::from(offset);
    Some((secs, nanos, offset))
}

fn conversion_error(function: &str, to: &str) -> ExecutionError {
    k8s_error(
        function,
        format!("type conversion error from 'string' to '{to}'"),
    )
}

fn duration(s: &CelString<'_>) -> Result<Duration, ExecutionError> {
    parse_duration(s.inner())
        .map(Duration)
        .ok_or_else(|| conversion_error("duration", "google.protobuf.Duration"))
}

fn timestamp(s: &CelString<'_>) -> Result<Timestamp, ExecutionError> {
    let (secs, nanos, offset) = parse_rfc3339(s.inner())
        .ok_or_else(|| conversion_error("timestamp", "google.protobuf.Timestamp"))?;
    Timestamp::checked(secs, nanos, offset)
}

/// kube-openapi's `strfmt.ParseDuration`, which the API server uses for a `format: duration`
/// string: Go's `time.ParseDuration`, else whole numbers with units (`3 days`, `1 week 2h`,
/// matched by unit prefix, Go's wrapping arithmetic).
fn parse_openapi_duration(s: &str) -> Option<i64> {
    if let Some(d) = parse_duration(s) {
        return Some(d);
    }
    // `^\s*(?:\d+\s*[A-Za-zµ]+\s*)+$`, with RE2's `\s` (ASCII space, \t, \n, \f, \r).
    let space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0c' | '\r');
    let letter = |c: char| c.is_ascii_alphabetic() || c == 'µ';
    let mut rest = s.trim_start_matches(space);
    if rest.is_empty() {
        return None;
    }
    let mut total: i64 = 0;
    let mut ok = false;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let factor: i64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start_matches(space);
        let unit_len = rest.len() - rest.trim_start_matches(letter).len();
        if unit_len == 0 {
            return None;
        }
        let unit = rest[..unit_len].to_lowercase();
        rest = rest[unit_len..].trim_start_matches(space);
        const UNITS: &[(&[&str], i64)] = &[
            (&["ns", "nano"], 1),
            (&["us", "µs", "micro"], 1_000),
            (&["ms", "milli"], 1_000_000),
            (&["s", "sec"], NANOS),
            (&["m", "min"], 60 * NANOS),
            (&["h", "hr", "hour"], 3_600 * NANOS),
            (&["d", "day"], 86_400 * NANOS),
            (&["w", "wk", "week"], 604_800 * NANOS),
        ];
        for (variants, multiplier) in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || unit == *variant {
                    ok = true;
                    total = total.wrapping_add(factor.wrapping_mul(*multiplier));
                }
            }
        }
    }
    ok.then_some(total)
}

/// The CEL value the API server makes of a string with a `format` it types: `duration` a
/// duration, `date` and `date-time` timestamps (kube-openapi's `strfmt` parsers), `byte` the
/// decoded bytes. `None` for other formats (a string); `Some(Err(why))` when the API server's
/// parser would fail (its value is then an error where a rule reads it).
pub(crate) fn format_value(
    format: &str,
    s: &str,
) -> Option<Result<Box<dyn Val + 'static>, String>> {
    let failed = |what: &str| Err(format!("Invalid {what} formatted string {s}"));
    Some(match format {
        "duration" => match parse_openapi_duration(s) {
            Some(d) => Ok(Box::new(Duration(d))),
            None => Err(format!("Invalid duration {s}")),
        },
        "date" => {
            let b = s.as_bytes();
            let ymd = (b.len() == 10 && b[4] == b'-' && b[7] == b'-')
                .then(|| (digits(b, 0, 4), digits(b, 5, 2), digits(b, 8, 2)));
            match ymd {
                Some((Some(y), Some(m), Some(d))) => {
                    match NaiveDate::from_ymd_opt(y as i32, m, d) {
                        Some(date) => {
                            let secs = date.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp());
                            match secs.map(|secs| Timestamp::checked(secs, 0, 0)) {
                                Some(Ok(t)) => Ok(Box::new(t)),
                                _ => failed("date"),
                            }
                        }
                        None => failed("date"),
                    }
                }
                _ => failed("date"),
            }
        }
        "date-time" => {
            // RFC 3339, or without a zone (kube-openapi's `ISO8601LocalTime`: UTC).
            let parsed = parse_rfc3339(s).or_else(|| {
                let zoneless = !s.ends_with(['Z', 'z'])
                    && !s.get(19..).is_some_and(|z| z.contains(['+', '-']));
                zoneless.then(|| parse_rfc3339(&format!("{s}Z"))).flatten()
            });
            match parsed.map(|(secs, nanos, offset)| Timestamp::checked(secs, nanos, offset)) {
                Some(Ok(t)) => Ok(Box::new(t)),
                _ => failed("date-time"),
            }
        }
        _ => return None,
    })
}

fn duration_identity(d: &Duration) -> Duration {
    *d
}

fn timestamp_identity(t: &Timestamp) -> Timestamp {
    *t
}

fn timestamp_from_int(secs: &CelInt) -> Result<Timestamp, ExecutionError> {
    Timestamp::checked(*secs.inner(), 0, 0)
}

fn duration_to_int(d: &Duration) -> CelInt {
    CelInt::from(d.0)
}

fn timestamp_to_int(t: &Timestamp) -> CelInt {
    CelInt::from(t.secs)
}

/// cel-go's `string(duration)`: seconds with Go's shortest float formatting and `s`.
fn duration_to_string(d: &Duration) -> CelString<'static> {
    let seconds = (d.0 / NANOS) as f64 + (d.0 % NANOS) as f64 / 1e9;
    CelString::from(format!("{seconds}s"))
}

/// cel-go's `string(timestamp)`: Go's RFC 3339 with nanoseconds, trailing zeros dropped, in
/// the offset it was written with.
fn timestamp_to_string(t: &Timestamp) -> CelString<'static> {
    let local = t.secs + i64::from(t.offset);
    let Some(dt) = chrono::DateTime::from_timestamp(local, t.nanos) else {
        return CelString::from(String::new());
    };
    let dt = dt.naive_utc();
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    if t.nanos > 0 {
        let frac = format!("{:09}", t.nanos);
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    if t.offset == 0 {
        out.push('Z');
    } else {
        let (sign, abs) = if t.offset < 0 {
            ('-', -t.offset)
        } else {
            ('+', t.offset)
        };
        out.push_str(&format!("{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60));
    }
    CelString::from(out)
}

/// The seconds east of UTC of a cel-go time-zone argument.
fn zone_offset(function: &str, tz: &str) -> Result<i64, ExecutionError> {
    let Some(colon) = tz.find(':') else {
        return match tz {
            "" | "UTC" => Ok(0),
            _ => Err(unsupported(
                function,
                format!(
                    "time zone {tz:?}: zone names need the IANA time-zone database, which crfix \
                     does not embed (fixed offsets such as '+02:00' are supported)"
                ),
            )),
        };
    };
    let atoi = |s: &str| -> Result<i64, ExecutionError> {
        let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err(k8s_error(
                function,
                format!("strconv.Atoi: parsing \"{s}\": invalid syntax"),
            ));
        }
        s.strip_prefix('+')
            .unwrap_or(s)
            .parse()
            .map_err(|_| unsupported(function, "time zone offset"))
    };
    let (hours, minutes) = (atoi(&tz[..colon])?, atoi(&tz[colon + 1..])?);
    let offset = if tz.starts_with('-') {
        hours * 60 - minutes
    } else {
        hours * 60 + minutes
    };
    Ok(offset * 60)
}

/// The civil time of `t` in the zone `tz` (UTC when absent).
fn civil(
    function: &str,
    t: &Timestamp,
    tz: Option<&str>,
) -> Result<chrono::NaiveDateTime, ExecutionError> {
    let offset = match tz {
        Some(tz) => zone_offset(function, tz)?,
        None => 0,
    };
    chrono::DateTime::from_timestamp(t.secs + offset, t.nanos)
        .map(|dt| dt.naive_utc())
        .ok_or_else(|| k8s_error(function, "timestamp overflow"))
}

macro_rules! timestamp_getters {
    ($($name:ident, $name_tz:ident, $cel:literal => $get:expr;)*) => {
        $(
            fn $name(t: &Timestamp) -> Result<CelInt, ExecutionError> {
                let dt = civil($cel, t, None)?;
                Ok(CelInt::from(($get)(&dt) as i64))
            }
            fn $name_tz(t: &Timestamp, tz: &CelString<'_>) -> Result<CelInt, ExecutionError> {
                let dt = civil($cel, t, Some(tz.inner()))?;
                Ok(CelInt::from(($get)(&dt) as i64))
            }
        )*
        fn register_timestamp_getters(env: &mut Env) -> Result<(), DeclarationError> {
            $(
                cel::add_member_overload!(env, fn $name: (Timestamp) -> Result<CelInt>, name = $cel)?;
                cel::add_member_overload!(env, fn $name_tz: (Timestamp, CelString) -> Result<CelInt>,
                    name = $cel)?;
            )*
            Ok(())
        }
    };
}

timestamp_getters! {
    full_year, full_year_tz, "getFullYear" => |d: &chrono::NaiveDateTime| d.year();
    month, month_tz, "getMonth" => |d: &chrono::NaiveDateTime| d.month0();
    day_of_year, day_of_year_tz, "getDayOfYear" => |d: &chrono::NaiveDateTime| d.ordinal0();
    day_of_month, day_of_month_tz, "getDayOfMonth" => |d: &chrono::NaiveDateTime| d.day0();
    date, date_tz, "getDate" => |d: &chrono::NaiveDateTime| d.day();
    day_of_week, day_of_week_tz, "getDayOfWeek"
        => |d: &chrono::NaiveDateTime| d.weekday().num_days_from_sunday();
    hours, hours_tz, "getHours" => |d: &chrono::NaiveDateTime| d.hour();
    minutes, minutes_tz, "getMinutes" => |d: &chrono::NaiveDateTime| d.minute();
    seconds, seconds_tz, "getSeconds" => |d: &chrono::NaiveDateTime| d.second();
    millis, millis_tz, "getMilliseconds"
        => |d: &chrono::NaiveDateTime| d.nanosecond() / 1_000_000;
}

fn d_hours(d: &Duration) -> CelInt {
    CelInt::from(d.0 / 3_600_000_000_000)
}
fn d_minutes(d: &Duration) -> CelInt {
    CelInt::from(d.0 / 60_000_000_000)
}
fn d_seconds(d: &Duration) -> CelInt {
    CelInt::from(d.0 / NANOS)
}
fn d_millis(d: &Duration) -> CelInt {
    CelInt::from(d.0 / 1_000_000)
}

/// Registers the conversions (`duration`, `timestamp`, `int`, `string`) and the getters; the
/// operators are the values' own.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn duration: (CelString) -> Result<Duration>, id = "string_to_duration")?;
    cel::add_overload!(env, fn duration_identity: (Duration) -> Duration, name = "duration")?;
    cel::add_overload!(env, fn timestamp: (CelString) -> Result<Timestamp>, id = "string_to_timestamp")?;
    cel::add_overload!(env, fn timestamp_identity: (Timestamp) -> Timestamp, name = "timestamp")?;
    cel::add_overload!(env, fn timestamp_from_int: (CelInt) -> Result<Timestamp>, name = "timestamp")?;
    cel::add_overload!(env, fn duration_to_int: (Duration) -> CelInt, name = "int")?;
    cel::add_overload!(env, fn timestamp_to_int: (Timestamp) -> CelInt, name = "int")?;
    cel::add_overload!(env, fn duration_to_string: (Duration) -> CelString, name = "string")?;
    cel::add_overload!(env, fn timestamp_to_string: (Timestamp) -> CelString, name = "string")?;
    cel::add_member_overload!(env, fn d_hours: (Duration) -> CelInt, name = "getHours")?;
    cel::add_member_overload!(env, fn d_minutes: (Duration) -> CelInt, name = "getMinutes")?;
    cel::add_member_overload!(env, fn d_seconds: (Duration) -> CelInt, name = "getSeconds")?;
    cel::add_member_overload!(env, fn d_millis: (Duration) -> CelInt, name = "getMilliseconds")?;
    register_timestamp_getters(env)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{all_pass, error};
    use super::*;

    #[test]
    fn durations_parse_as_go() {
        assert_eq!(parse_duration("1h30m"), Some(5_400 * NANOS));
        assert_eq!(parse_duration("1.5s"), Some(1_500_000_000));
        assert_eq!(parse_duration("-2m"), Some(-120 * NANOS));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("300ms"), Some(300_000_000));
        assert_eq!(parse_duration("1\u{b5}s"), Some(1_000));
        assert_eq!(parse_duration(".5h"), Some(1_800 * NANOS));
        for bad in ["", "1", "1d", "s", "-", "1.s2", ".s", "3000000h", "1h 2m"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn timestamps_parse_as_go() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some((0, 0, 0)));
        assert_eq!(
            parse_rfc3339("1970-01-01T01:00:00.25+01:00"),
            Some((0, 250_000_000, 3600))
        );
        for bad in [
            "1970-01-01t00:00:00Z",
            "1970-01-01T00:00:00",
            "1970-02-30T00:00:00Z",
            "1970-01-01T24:00:00Z",
            "1970-01-01T00:00:60Z",
            "70-01-01T00:00:00Z",
            "1970-01-01T00:00:00z",
            "1970-01-01 00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn duration_and_timestamp_functions() {
        all_pass(&[
            "duration('1s') == duration('1000ms') && duration('1h') == duration('60m')",
            "duration('1m') > duration('1s') && duration('1m') < duration('1h')",
            "duration('1h') - duration('1m') == duration('59m')",
            "duration('1h') + duration('1m') == duration('1h1m')",
            "-duration('1s') < duration('0s')",
            "duration('2h30m45s').getHours() == 2 && duration('2h30m45s').getMinutes() == 150",
            "duration('2h30m45s').getSeconds() == 9045 && duration('1s500ms').getMilliseconds() == 1500",
            "string(duration('1h30m')) == '5400s' && string(duration('1.5s')) == '1.5s'",
            "int(duration('1s')) == 1000000000 && duration(duration('13s')).getSeconds() == 13",
            "timestamp('2023-05-29T00:00:00Z') > timestamp('2023-05-28T00:00:00Z')",
            "timestamp('2023-05-29T00:00:00Z') - duration('24h') == timestamp('2023-05-28T00:00:00Z')",
            "timestamp('2023-05-29T00:00:00Z') - timestamp('2023-05-28T00:00:00Z') == duration('24h')",
            "timestamp('2023-05-28T00:00:00Z') + duration('24h') == timestamp('2023-05-29T00:00:00Z')",
            "duration('24h') + timestamp('2023-05-28T00:00:00Z') == timestamp('2023-05-29T00:00:00Z')",
            "string(timestamp('2023-05-28T00:00:00.120Z')) == '2023-05-28T00:00:00.12Z'",
            "string(timestamp('2023-05-28T01:00:00+01:00')) == '2023-05-28T01:00:00+01:00'",
            "timestamp('2023-05-28T01:00:00+01:00') == timestamp('2023-05-28T00:00:00Z')",
            "int(timestamp('1970-01-01T00:01:00Z')) == 60 && timestamp(60) == timestamp('1970-01-01T00:01:00Z')",
            "timestamp('2023-05-28T13:14:15.678Z').getFullYear() == 2023",
            "timestamp('2023-05-28T13:14:15.678Z').getMonth() == 4",
            "timestamp('2023-05-28T13:14:15.678Z').getDayOfMonth() == 27",
            "timestamp('2023-05-28T13:14:15.678Z').getDate() == 28",
            "timestamp('2023-05-28T13:14:15.678Z').getDayOfYear() == 147",
            "timestamp('2023-05-28T13:14:15.678Z').getDayOfWeek() == 0",
            "timestamp('2023-05-28T13:14:15.678Z').getHours() == 13",
            "timestamp('2023-05-28T13:14:15.678Z').getMinutes() == 14",
            "timestamp('2023-05-28T13:14:15.678Z').getSeconds() == 15",
            "timestamp('2023-05-28T13:14:15.678Z').getMilliseconds() == 678",
            "timestamp('2023-05-28T23:00:00Z').getHours('+02:00') == 1",
            "timestamp('2023-05-28T23:00:00Z').getDate('-01:30') == 28",
            "timestamp('2023-05-28T23:00:00Z').getHours('UTC') == 23",
        ]);
    }

    #[test]
    fn errors_in_cel_gos_words() {
        assert_eq!(
            error("duration('1d') > duration('1h')"),
            "type conversion error from 'string' to 'google.protobuf.Duration'"
        );
        assert_eq!(
            error("timestamp('yesterday') > timestamp('2020-01-01T00:00:00Z')"),
            "type conversion error from 'string' to 'google.protobuf.Timestamp'"
        );
        assert_eq!(
            error("duration('2562047h') + duration('2562047h') > duration('1h')"),
            "integer overflow"
        );
    }
}
