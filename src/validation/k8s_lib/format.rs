//! Kubernetes' format library (1.31): `format.<name>()`, `format.named(name)` and
//! `<format>.validate(s)`, which is `optional.none()` for a valid string, else the list of
//! apimachinery's error messages.
//!
//! The DNS, label and qualified-name checks follow `k8s.io/apimachinery/pkg/util/validation`
//! (its regular expressions and messages); `uri` uses the URL library's `ParseRequestURI`
//! rules, `uuid`, `byte`, `date` and `datetime` the schema `format` checks crfix already has.

use std::any::Any;

use cel::common::types::{CelOptional, CelString, Type};
use cel::common::value::{CowVal, StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value as CelValue};

use super::unsupported;
use crate::validation::formats;

static FORMAT_TYPE: Type = Type::new_unspecified_type("kubernetes.NamedFormat");

/// The named formats, as `format.<name>()` and `format.named('<name>')` know them.
const NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Format(&'static str);

impl Val for Format {
    fn get_type(&self) -> &Type {
        &FORMAT_TYPE
    }
    fn cel_type() -> &'static Type {
        &FORMAT_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Format>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Format {}

const LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const QUALIFIED_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must \
     start and end with an alphanumeric character";

/// apimachinery's `RegexError`.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

fn matches_fully(fmt: &str, s: &str) -> Result<bool, ExecutionError> {
    super::super::regex::is_match(&format!("^(?:{fmt})$"), s)
        .map_err(|e| unsupported("validate", e))
}

fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// apimachinery's `maskTrailingDash`, used for the `…Prefix` formats.
fn mask_trailing_dash(s: &str) -> String {
    if s.len() > 1 && s.ends_with('-') {
        format!("{}a", &s[..s.len() - 2])
    } else {
        s.to_string()
    }
}

/// A length limit and a regular expression, apimachinery's way.
fn check(
    s: &str,
    limit: usize,
    fmt: &str,
    msg: &str,
    examples: &[&str],
) -> Result<Vec<String>, ExecutionError> {
    let mut errs = Vec::new();
    if s.len() > limit {
        errs.push(max_len(limit));
    }
    if !matches_fully(fmt, s)? {
        errs.push(regex_error(msg, fmt, examples));
    }
    Ok(errs)
}

fn dns1123_label(s: &str) -> Result<Vec<String>, ExecutionError> {
    check(s, 63, LABEL_FMT, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", &["my-name", "123-abc"])
}

fn dns1123_subdomain(s: &str) -> Result<Vec<String>, ExecutionError> {
    check(s, 253, SUBDOMAIN_FMT, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", &["example.com"])
}

fn dns1035_label(s: &str) -> Result<Vec<String>, ExecutionError> {
    check(s, 63, DNS1035_FMT, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", &["my-name", "abc-123"])
}

fn label_value(s: &str) -> Result<Vec<String>, ExecutionError> {
    check(s, 63, LABEL_VALUE_FMT, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", &["MyValue", "my_value", "12345"])
}

/// apimachinery's `IsQualifiedName`.
fn qualified_name(s: &str) -> Result<Vec<String>, ExecutionError> {
    let examples = &["MyName", "my.name", "123-abc"];
    let parts: Vec<&str> = s.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                let prefixed = dns1123_subdomain(prefix)?;
                errs.extend(prefixed.into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return Ok(vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_MSG, QUALIFIED_FMT, examples)
            )])
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63)));
    }
    if !matches_fully(QUALIFIED_FMT, name)? {
        errs.push(format!(
            "name part {}",
            regex_error(QUALIFIED_MSG, QUALIFIED_FMT, examples)
        ));
    }
    Ok(errs)
}

fn flag(ok: bool, message: &str) -> Vec<String> {
    if ok {
        Vec::new()
    } else {
        vec![message.to_string()]
    }
}

/// The error messages of `s` for the format `name`.
fn validate_with(name: &str, s: &str) -> Result<Vec<String>, ExecutionError> {
    match name {
        "dns1123Label" => dns1123_label(s),
        "dns1123LabelPrefix" => dns1123_label(&mask_trailing_dash(s)),
        "dns1123Subdomain" => dns1123_subdomain(s),
        "dns1123SubdomainPrefix" => dns1123_subdomain(&mask_trailing_dash(s)),
        "dns1035Label" => dns1035_label(s),
        "dns1035LabelPrefix" => dns1035_label(&mask_trailing_dash(s)),
        "qualifiedName" => qualified_name(s),
        "labelValue" => label_value(s),
        "uri" => super::url::request_uri_error(s).map(|e| e.into_iter().collect()),
        "uuid" => Ok(flag(
            formats::check("uuid", s),
            "does not match the UUID format",
        )),
        "byte" => Ok(flag(formats::check("byte", s), "invalid base64")),
        "date" => Ok(flag(formats::check("date", s), "invalid date")),
        "datetime" => Ok(flag(formats::check("date-time", s), "invalid datetime")),
        _ => Err(unsupported("validate", format!("format {name}"))),
    }
}

fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [f, s] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let (Some(f), Some(s)) = (f.downcast_ref::<Format>(), s.downcast_ref::<CelString>()) else {
        return Err(unsupported("validate", "arguments"));
    };
    let errors = validate_with(f.0, s.inner())?;
    if errors.is_empty() {
        return Ok(CowVal::owned(CelOptional::none()));
    }
    let list: Box<dyn Val> = CelValue::List(std::sync::Arc::new(
        errors.into_iter().map(CelValue::from).collect(),
    ))
    .try_into()
    .map_err(|_| unsupported("validate", "list"))?;
    Ok(CowVal::owned(CelOptional::of(list)))
}

fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [name] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(1, args.len()));
    };
    let name = name
        .downcast_ref::<CelString>()
        .ok_or_else(|| unsupported("format.named", "argument"))?;
    Ok(CowVal::owned(
        match NAMES.iter().find(|n| **n == name.inner()) {
            Some(n) => CelOptional::of(Box::new(Format(n))),
            None => CelOptional::none(),
        },
    ))
}

macro_rules! constants {
    ($($f:ident = $name:literal;)*) => {
        $(
            fn $f<'b, 'v>(_: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
                Ok(CowVal::owned(Format($name)))
            }
        )*
        fn register_constants(env: &mut Env) -> Result<(), DeclarationError> {
            $( env.add_overload(concat!("format.", $name), concat!("format.", $name), vec![], $f)?; )*
            Ok(())
        }
    };
}

constants! {
    f_dns1123_label = "dns1123Label";
    f_dns1123_subdomain = "dns1123Subdomain";
    f_dns1035_label = "dns1035Label";
    f_qualified_name = "qualifiedName";
    f_dns1123_label_prefix = "dns1123LabelPrefix";
    f_dns1123_subdomain_prefix = "dns1123SubdomainPrefix";
    f_dns1035_label_prefix = "dns1035LabelPrefix";
    f_label_value = "labelValue";
    f_uri = "uri";
    f_uuid = "uuid";
    f_byte = "byte";
    f_date = "date";
    f_datetime = "datetime";
}

pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    register_constants(env)?;
    env.add_member_overload(
        "validate",
        "format-validate",
        FORMAT_TYPE.to_owned(),
        vec![cel::common::types::STRING_TYPE],
        validate,
    )?;
    env.add_overload(
        "format.named",
        "format-named",
        vec![cel::common::types::STRING_TYPE],
        named,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::all_pass;

    #[test]
    fn format_functions() {
        all_pass(&[
            "!format.dns1123Label().validate('my-label-name').hasValue()",
            "format.dns1123Label().validate('My_Label').value() == [\"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\"]",
            "format.dns1123Label().validate('x-').value().size() == 1",
            "!format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue()",
            "!format.dns1035Label().validate('my-label-name').hasValue() && format.dns1035Label().validate('1abc').hasValue()",
            "!format.qualifiedName().validate('apiextensions.k8s.io/v1beta1').hasValue()",
            "format.qualifiedName().validate('/x').value() == ['prefix part must be non-empty']",
            "!format.dns1123LabelPrefix().validate('my-label-prefix-').hasValue()",
            "!format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-').hasValue()",
            "!format.labelValue().validate('').hasValue() && format.labelValue().validate('-x').hasValue()",
            "!format.uri().validate('http://example.com').hasValue()",
            "format.uri().validate('example').value() == ['parse \"example\": invalid URI for request']",
            "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
            "format.uuid().validate('x').value() == ['does not match the UUID format']",
            "!format.byte().validate('aGVsbG8=').hasValue() && format.byte().validate('!').hasValue()",
            "!format.date().validate('2021-01-01').hasValue() && format.date().validate('2021-13-01').hasValue()",
            "!format.datetime().validate('2021-01-01T00:00:00Z').hasValue()",
            "format.named('dns1123Label').hasValue() && !format.named('nope').hasValue()",
            "!format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
        ]);
    }
}
