//! Kubernetes' CEL libraries, as kube-apiserver 1.34 offers them to CRD validation rules
//! (`k8s.io/apiserver/pkg/cel/environment/base.go` and `pkg/cel/library`): the standard
//! library's timestamps and durations, quantities, IP addresses and CIDRs, URLs, semver, named
//! formats, the sets extension, and the lists extension's v3 functions the `cel` crate lacks
//! (`first`, `last`).
//!
//! The strings and lists extensions and Kubernetes' regex and list functions are registered by
//! `super` (`cel.rs`). These functions are registered only for rules that call one of
//! them ([`needed`]): a rule that does not pays nothing for them.
//!
//! Errors a rule can cause (an invalid quantity, IP, CIDR or URL) carry the words cel-go and
//! Kubernetes use ([`verbatim`]); what crfix cannot evaluate (a quantity beyond 38 significant
//! digits, a URL form it does not parse) is its own limitation and never held against the
//! object.

pub(super) mod comprehensions;
mod format;
mod net;
mod quantity;
mod semver;
mod sets;
mod time;
mod url;

pub(crate) use quantity::approximate_value as quantity_value;
pub(super) use time::format_value;

use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};

/// Marks an error message that is the API server's own, word for word.
const VERBATIM: &str = "crfix-k8s: ";

/// The functions of these libraries: a rule that calls one needs [`register`].
const FUNCTIONS: &[&str] = &[
    // timestamps and durations (also made from `format: duration`/`date`/`date-time` strings)
    "duration",
    "timestamp",
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    // quantity
    "quantity",
    "isQuantity",
    "sign",
    "isGreaterThan",
    "isLessThan",
    "compareTo",
    "asApproximateFloat",
    "asInteger",
    "isInteger",
    "add",
    "sub",
    // ip and cidr
    "ip",
    "isIP",
    "ip.isCanonical",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "cidr",
    "isCIDR",
    "containsIP",
    "containsCIDR",
    "prefixLength",
    "masked",
    // semver
    "semver",
    "isSemver",
    "major",
    "minor",
    "patch",
    // url
    "url",
    "isURL",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    // sets, lists v3
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    "first",
    "last",
];

/// Namespaces of these libraries' functions: the parser reads `sets.contains(a, b)` as a call
/// of `contains` on a variable `sets`.
const NAMESPACES: &[&str] = &["sets", "ip", "format"];

/// Whether a rule calling `functions` and naming `variables` needs these libraries.
pub(super) fn needed(functions: &[&str], variables: &[&str]) -> bool {
    functions.iter().any(|f| FUNCTIONS.contains(f))
        || variables.iter().any(|v| NAMESPACES.contains(v))
}

/// Registers the libraries on `env` (which has the standard library).
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    time::register(env)?;
    quantity::register(env)?;
    net::register(env)?;
    url::register(env)?;
    semver::register(env)?;
    format::register(env)?;
    sets::register(env)?;
    Ok(())
}

/// The API server's message for `error`, when it is one of these libraries' errors a rule can
/// cause (the interpreter's own wording is left to the caller).
pub(super) fn verbatim(error: &ExecutionError) -> Option<String> {
    match error {
        ExecutionError::FunctionError { message, .. } => {
            message.strip_prefix(VERBATIM).map(str::to_string)
        }
        _ => None,
    }
}

/// An error in the API server's words.
fn k8s_error(function: &str, message: impl std::fmt::Display) -> ExecutionError {
    ExecutionError::function_error(function, format!("{VERBATIM}{message}"))
}

/// An error that is crfix's limitation (the rule is then skipped, never held against the
/// object).
fn unsupported(function: &str, message: impl std::fmt::Display) -> ExecutionError {
    ExecutionError::function_error(function, format!("{}{message}", super::UNSUPPORTED))
}

/// Go's `strconv.Quote` for the strings these libraries quote: printable text as is, `"` and
/// `\` escaped, control characters as `\n`, `\t`, … or `\x..`/`\u....`.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\u{0B}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A function result from an owned value.
fn owned<'b, 'v, T: cel::common::value::Val + 'v>(value: T) -> CowVal<'b, 'v> {
    CowVal::owned(value)
}

#[cfg(test)]
pub(super) mod test_support {
    use serde_json::{json, Value};

    use super::super::{compile, evaluate, OldSelf, RuleResult};

    /// `rule` on `value` (a string schema unless the value says otherwise).
    pub fn eval(rule: &str, value: Value) -> RuleResult {
        let schema = match &value {
            Value::String(_) => json!({"type": "string"}),
            Value::Number(n) if n.is_f64() => json!({"type": "number"}),
            Value::Number(_) => json!({"type": "integer"}),
            Value::Array(_) => json!({"type": "array", "items": {}}),
            _ => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        };
        let compiled = compile(rule).expect("compiles");
        evaluate(&compiled, &schema, &value, OldSelf::Absent, false)
    }

    /// Asserts that each rule passes (on `null`).
    pub fn all_pass(rules: &[&str]) {
        for rule in rules {
            assert_eq!(eval(rule, Value::Null), RuleResult::Pass, "{rule}");
        }
    }

    /// The run-time error of `rule` (on `null`).
    pub fn error(rule: &str) -> String {
        match eval(rule, Value::Null) {
            RuleResult::Error(e) => e,
            other => panic!("{rule}: {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_escapes_as_go() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("x\ny\u{1}"), r#""x\ny\x01""#);
        assert_eq!(go_quote("é"), "\"é\"");
    }

    #[test]
    fn detection() {
        assert!(needed(&["quantity", "_<_"], &["self"]));
        assert!(needed(&["contains"], &["sets", "self"]));
        assert!(needed(&["isCanonical"], &["ip"]));
        assert!(!needed(&["size", "matches", "_==_", "contains"], &["self"]));
    }
}
