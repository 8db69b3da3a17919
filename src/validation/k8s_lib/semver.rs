//! Kubernetes' semver library (1.33, version 1): `semver()`, `semver(s, normalize)`,
//! `isSemver()`, `major`, `minor`, `patch`, `compareTo`, `isLessThan`, `isGreaterThan`.
//!
//! Kubernetes parses with `github.com/blang/semver/v4`'s strict `Parse`; its rules and error
//! texts are followed here (the `semver` crate accepts the same versions but words its errors
//! differently and orders build metadata, which blang ignores).

use std::any::Any;
use std::cmp::Ordering;

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::common::value::{StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::{go_quote, k8s_error};

static SEMVER_TYPE: Type = Type::new_unspecified_type("kubernetes.Semver");

#[derive(Debug, Clone, PartialEq)]
enum Pre {
    Num(u64),
    Alpha(String),
}

#[derive(Debug, Clone)]
pub struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Pre>,
}

impl Val for Semver {
    fn get_type(&self) -> &Type {
        &SEMVER_TYPE
    }
    fn cel_type() -> &'static Type {
        &SEMVER_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other
            .downcast_ref::<Semver>()
            .is_some_and(|o| compare(self, o) == Ordering::Equal)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Semver {}

/// Go's `strconv.ParseUint(s, 10, 64)` error text.
fn parse_uint(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        let why = if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            "invalid syntax"
        } else {
            "value out of range"
        };
        format!("strconv.ParseUint: parsing {}: {why}", go_quote(s))
    })
}

/// blang's numeric component: digits only, no leading zero.
fn number(s: &str, name: &str, capital: &str) -> Result<u64, String> {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "Invalid character(s) found in {name} number {}",
            go_quote(s)
        ));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!(
            "{capital} number must not contain leading zeroes {}",
            go_quote(s)
        ));
    }
    parse_uint(s)
}

fn alphanumeric(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// blang's `NewPRVersion`.
fn prerelease(s: &str) -> Result<Pre, String> {
    if s.is_empty() {
        return Err("Prerelease is empty".to_string());
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        if s.len() > 1 && s.starts_with('0') {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {}",
                go_quote(s)
            ));
        }
        return parse_uint(s).map(Pre::Num);
    }
    if !alphanumeric(s) {
        return Err(format!(
            "Invalid character(s) found in prerelease {}",
            go_quote(s)
        ));
    }
    Ok(Pre::Alpha(s.to_string()))
}

/// blang's `semver.Parse`.
fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".to_string());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts.as_slice() else {
        return Err("No Major.Minor.Patch elements found".to_string());
    };
    let major = number(major, "major", "Major")?;
    let minor = number(minor, "minor", "Minor")?;
    let (rest, build) = rest
        .split_once('+')
        .map_or((*rest, None), |(r, b)| (r, Some(b)));
    let (patch, pre) = rest
        .split_once('-')
        .map_or((rest, None), |(p, r)| (p, Some(r)));
    let patch = number(patch, "patch", "Patch")?;
    let pre = match pre {
        Some(pre) => pre.split('.').map(prerelease).collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    for b in build
        .map(|b| b.split('.').collect::<Vec<_>>())
        .unwrap_or_default()
    {
        if b.is_empty() {
            return Err("Build meta data is empty".to_string());
        }
        if !alphanumeric(b) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                go_quote(b)
            ));
        }
    }
    Ok(Semver {
        major,
        minor,
        patch,
        pre,
    })
}

/// Kubernetes' `normalizeAndParse`: no `v` prefix, missing minor/patch filled with 0, leading
/// zeros removed.
fn normalize_and_parse(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_string).collect();
    for p in parts.iter_mut() {
        if p.len() > 1 {
            let trimmed = p.trim_start_matches('0');
            *p = if trimmed.is_empty() || !trimmed.as_bytes()[0].is_ascii_digit() {
                format!("0{trimmed}")
            } else {
                trimmed.to_string()
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".to_string());
        }
        parts.resize(3, "0".to_string());
    }
    parse(&parts.join("."))
}

/// blang's `Version.Compare` (build metadata ignored).
fn compare(a: &Semver, b: &Semver) -> Ordering {
    let core = (a.major, a.minor, a.patch).cmp(&(b.major, b.minor, b.patch));
    if core != Ordering::Equal {
        return core;
    }
    match (a.pre.is_empty(), b.pre.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    for (x, y) in a.pre.iter().zip(&b.pre) {
        let ord = match (x, y) {
            (Pre::Num(x), Pre::Num(y)) => x.cmp(y),
            (Pre::Num(_), Pre::Alpha(_)) => Ordering::Less,
            (Pre::Alpha(_), Pre::Num(_)) => Ordering::Greater,
            (Pre::Alpha(x), Pre::Alpha(y)) => x.cmp(y),
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    a.pre.len().cmp(&b.pre.len())
}

fn semver(s: &CelString<'_>) -> Result<Semver, ExecutionError> {
    parse(s.inner()).map_err(|e| k8s_error("semver", e))
}

fn semver_normalize(s: &CelString<'_>, normalize: &CelBool) -> Result<Semver, ExecutionError> {
    let parsed = if *normalize.inner() {
        normalize_and_parse(s.inner())
    } else {
        parse(s.inner())
    };
    parsed.map_err(|e| k8s_error("semver", e))
}

fn is_semver(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse(s.inner()).is_ok())
}

fn is_semver_normalize(s: &CelString<'_>, normalize: &CelBool) -> CelBool {
    CelBool::from(if *normalize.inner() {
        normalize_and_parse(s.inner()).is_ok()
    } else {
        parse(s.inner()).is_ok()
    })
}

fn major(v: &Semver) -> CelInt {
    CelInt::from(v.major as i64)
}
fn minor(v: &Semver) -> CelInt {
    CelInt::from(v.minor as i64)
}
fn patch(v: &Semver) -> CelInt {
    CelInt::from(v.patch as i64)
}
fn compare_to(v: &Semver, o: &Semver) -> CelInt {
    CelInt::from(compare(v, o) as i64)
}
fn is_less_than(v: &Semver, o: &Semver) -> CelBool {
    CelBool::from(compare(v, o) == Ordering::Less)
}
fn is_greater_than(v: &Semver, o: &Semver) -> CelBool {
    CelBool::from(compare(v, o) == Ordering::Greater)
}

pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn semver: (CelString) -> Result<Semver>, id = "string_to_semver")?;
    cel::add_overload!(env, fn semver_normalize: (CelString, CelBool) -> Result<Semver>,
        name = "semver", id = "string_bool_to_semver")?;
    cel::add_overload!(env, fn is_semver: (CelString) -> CelBool, id = "is_semver_string")?;
    cel::add_overload!(env, fn is_semver_normalize: (CelString, CelBool) -> CelBool,
        name = "isSemver", id = "is_semver_string_bool")?;
    cel::add_member_overload!(env, fn major: (Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn minor: (Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn patch: (Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn compare_to: (Semver, Semver) -> CelInt)?;
    cel::add_member_overload!(env, fn is_less_than: (Semver, Semver) -> CelBool)?;
    cel::add_member_overload!(env, fn is_greater_than: (Semver, Semver) -> CelBool)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{all_pass, error};

    #[test]
    fn semver_functions() {
        all_pass(&[
            "isSemver('1.0.0') && isSemver('1.2.3-alpha.1+build.007') && !isSemver('v1.0.0')",
            "!isSemver('1.0') && !isSemver('01.0.0') && !isSemver('1.0.0-01') && !isSemver('')",
            "isSemver('v1.0', true) && isSemver('01.02', true) && !isSemver('1-alpha', true)",
            "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3",
            "semver('v01.2', true) == semver('1.2.0')",
            "semver('1.2.3').compareTo(semver('1.2.3')) == 0",
            "semver('1.2.3').compareTo(semver('2.0.0')) == -1 && semver('1.2.3').compareTo(semver('0.1.2')) == 1",
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0')) && semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))",
            "semver('1.0.0-2').isLessThan(semver('1.0.0-11')) && semver('1.0.0-rc.1').isGreaterThan(semver('1.0.0-beta.11'))",
            "semver('1.0.0+a') == semver('1.0.0+b')",
        ]);
    }

    #[test]
    fn errors_in_blangs_words() {
        assert_eq!(
            error("semver('1.0').major() == 1"),
            "No Major.Minor.Patch elements found"
        );
        assert_eq!(
            error("semver('v1.0.0').major() == 1"),
            r#"Invalid character(s) found in major number "v1""#
        );
        assert_eq!(
            error("semver('1.01.0').major() == 1"),
            r#"Minor number must not contain leading zeroes "01""#
        );
    }
}
