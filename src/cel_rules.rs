//! CEL `x-kubernetes-validations` rules, evaluated with the `cel` crate.
//!
//! Every evaluation runs in a fresh wasm instance, so nothing here is compiled ahead of time:
//! the environment is built the first time a rule is reached, each distinct rule is compiled
//! once per validation, and regular expressions (`matches`, `find`, `findAll`, schema
//! `pattern`s) are compiled once per instance by [`regex`].
//!
//! What the interpreter cannot do (a function it lacks, a regex feature `regex-lite` does not
//! support) is reported as [`RuleResult::Unsupported`]: crfix never rejects an object for a
//! limitation of its own.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use cel::common::types::{
    CelBool, CelInt, CelOptional, CelString, INT_TYPE, LIST_TYPE, STRING_TYPE,
};
use cel::common::value::{CowVal, Val};
use cel::objects::{Key, Map};
use cel::parser::{Expression, PrattParser};
use cel::{Context, Env, ExecutionError, Value as CelValue};
use serde_json::Value;

use crate::schema;

/// Prefix of the function errors that are crfix's limitation, not the object's fault.
const UNSUPPORTED: &str = "crfix-unsupported: ";

/// Deepest JSON nesting converted into a CEL value.
const MAX_CONVERT_DEPTH: usize = 64;

/// Most distinct regular expressions kept compiled at once.
const MAX_CACHED_REGEXES: usize = 512;

pub mod regex {
    //! One cache of compiled regular expressions per instance (= per evaluation in wasm).

    use super::*;

    type Compiled = Result<Rc<regex_lite::Regex>, String>;

    thread_local! {
        static CACHE: RefCell<HashMap<String, Compiled>> = RefCell::new(HashMap::new());
    }

    pub fn clear() {
        CACHE.with(|cache| cache.borrow_mut().clear());
    }

    /// `pattern` with its capturing groups made non-capturing. Only matching is ever asked
    /// of these regexes, and regex-lite's matcher allocates per state and capture slot: for a
    /// large pattern with many groups (a semver range) that is most of a millisecond.
    pub fn without_captures(pattern: &str) -> std::borrow::Cow<'_, str> {
        if !pattern.contains('(') {
            return std::borrow::Cow::Borrowed(pattern);
        }
        let mut out = String::with_capacity(pattern.len() + 16);
        let mut chars = pattern.chars().peekable();
        let mut in_class = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    out.push(c);
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                '[' if !in_class => {
                    in_class = true;
                    out.push(c);
                    // A `]` right after `[` or `[^` is a literal.
                    if chars.peek() == Some(&'^') {
                        out.push('^');
                        chars.next();
                    }
                    if chars.peek() == Some(&']') {
                        out.push(']');
                        chars.next();
                    }
                }
                '[' if in_class && chars.peek() == Some(&':') => {
                    // A POSIX class `[:alpha:]` inside a class.
                    out.push(c);
                    for n in chars.by_ref() {
                        out.push(n);
                        if n == ']' {
                            break;
                        }
                    }
                }
                ']' if in_class => {
                    in_class = false;
                    out.push(c);
                }
                '(' if !in_class && chars.peek() != Some(&'?') => out.push_str("(?:"),
                _ => out.push(c),
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// The compiled `pattern`, or why `regex-lite` cannot compile it.
    pub fn get(pattern: &str) -> Compiled {
        CACHE.with(|cache| {
            if let Some(hit) = cache.borrow().get(pattern) {
                return hit.clone();
            }
            let compiled = regex_lite::Regex::new(&without_captures(pattern))
                .map(Rc::new)
                .map_err(|e| e.to_string());
            let mut cache = cache.borrow_mut();
            if cache.len() >= MAX_CACHED_REGEXES {
                cache.clear();
            }
            cache.insert(pattern.to_string(), compiled.clone());
            compiled
        })
    }
}

/// What a rule needs from the environment beyond the standard library (each extension costs
/// microseconds to register, in every fresh instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Features {
    strings: bool,
    lists: bool,
    optional: bool,
}

/// Functions of the strings extension.
const STRING_FUNCTIONS: &[&str] = &[
    "charAt",
    "indexOf",
    "lastIndexOf",
    "join",
    "lowerAscii",
    "upperAscii",
    "trim",
    "replace",
    "split",
    "substring",
    "format",
    "strings.quote",
    "reverse",
];
/// Functions of the lists extension.
const LIST_FUNCTIONS: &[&str] = &[
    "slice",
    "flatten",
    "distinct",
    "reverse",
    "sort",
    "lists.range",
];

thread_local! {
    static ENVS: RefCell<HashMap<Features, Arc<Env>>> = RefCell::new(HashMap::new());
}

/// The CEL environment for `features`: the standard library, the extensions the rule uses and
/// the Kubernetes functions crfix implements (`matches`, `find`, `findAll`, `isSorted`, `sum`,
/// `min`, `max`, list `indexOf`/`lastIndexOf`). Built once per instance and feature set.
fn env(features: Features) -> Result<Arc<Env>, String> {
    ENVS.with(|envs| {
        if let Some(env) = envs.borrow().get(&features) {
            return Ok(env.clone());
        }
        let env = Arc::new(build_env(features).map_err(|e| e.to_string())?);
        envs.borrow_mut().insert(features, env.clone());
        Ok(env)
    })
}

/// Forgets the environments and the compiled regexes, as a fresh wasm instance would (for
/// measurements).
pub fn reset_caches() {
    ENVS.with(|envs| envs.borrow_mut().clear());
    regex::clear();
}

fn build_env(features: Features) -> Result<Env, cel::DeclarationError> {
    let mut env = Env::default()
        .with_optional_support(features.optional)
        .with_stdlib();
    if features.strings {
        env.add_extension(cel::extensions::strings)?;
    }
    if features.lists {
        env.add_extension(cel::extensions::lists)?;
    }
    env.add_member_overload(
        "matches",
        "string.matches(string)",
        STRING_TYPE,
        vec![STRING_TYPE],
        matches,
    )?;
    env.add_overload(
        "matches",
        "matches(string,string)",
        vec![STRING_TYPE, STRING_TYPE],
        matches,
    )?;
    env.add_member_overload(
        "find",
        "string.find(string)",
        STRING_TYPE,
        vec![STRING_TYPE],
        find,
    )?;
    env.add_member_overload(
        "findAll",
        "string.findAll(string)",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string.findAll(string,int)",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all,
    )?;
    env.add_member_overload("isSorted", "list.isSorted()", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list.sum()", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list.min()", LIST_TYPE, vec![], list_min)?;
    env.add_member_overload("max", "list.max()", LIST_TYPE, vec![], list_max)?;
    // The strings extension has its own `indexOf`/`lastIndexOf` on strings.
    env.add_member_overload(
        "indexOf",
        "list.indexOf(dyn)",
        LIST_TYPE,
        vec![cel::common::types::DYN_TYPE],
        list_index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list.lastIndexOf(dyn)",
        LIST_TYPE,
        vec![cel::common::types::DYN_TYPE],
        list_last_index_of,
    )?;
    Ok(env)
}

fn string_arg(val: &dyn Val) -> Result<&str, ExecutionError> {
    val.downcast_ref::<CelString>()
        .map(|s| s.inner())
        .ok_or_else(|| ExecutionError::UnexpectedType {
            got: val.get_type().name().to_owned(),
            want: "string".to_owned(),
        })
}

fn compiled_regex(function: &str, pattern: &str) -> Result<Rc<regex_lite::Regex>, ExecutionError> {
    regex::get(pattern).map_err(|e| {
        ExecutionError::function_error(
            function,
            format!("{UNSUPPORTED}regex {pattern:?} is not supported by regex-lite: {e}"),
        )
    })
}

fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [text, pattern] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let re = compiled_regex("matches", string_arg(pattern.as_ref())?)?;
    Ok(CowVal::owned(CelBool::from(
        re.is_match(string_arg(text.as_ref())?),
    )))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [text, pattern] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let re = compiled_regex("find", string_arg(pattern.as_ref())?)?;
    let found = re
        .find(string_arg(text.as_ref())?)
        .map(|m| m.as_str().to_string())
        .unwrap_or_default();
    Ok(CowVal::owned(CelString::from(found)))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (text, pattern, limit) = match args.as_slice() {
        [t, p] => (t, p, -1),
        [t, p, n] => (
            t,
            p,
            *n.as_ref()
                .downcast_ref::<CelInt>()
                .ok_or_else(|| ExecutionError::function_error("findAll", "limit must be an int"))?
                .inner(),
        ),
        _ => return Err(ExecutionError::invalid_argument_count(2, args.len())),
    };
    let re = compiled_regex("findAll", string_arg(pattern.as_ref())?)?;
    let limit = if limit < 0 {
        usize::MAX
    } else {
        limit as usize
    };
    let found: Vec<CelValue> = re
        .find_iter(string_arg(text.as_ref())?)
        .take(limit)
        .map(|m| CelValue::from(m.as_str()))
        .collect();
    list_result(found)
}

fn list_result<'b, 'v>(items: Vec<CelValue>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let boxed: Box<dyn Val> = CelValue::List(Arc::new(items))
        .try_into()
        .map_err(|_| ExecutionError::function_error("list", "cannot build a list"))?;
    Ok(CowVal::Owned(boxed))
}

/// The elements of a list argument as owned values.
fn list_items(val: &dyn Val) -> Result<Vec<CelValue>, ExecutionError> {
    let iterable = val
        .as_iterable()
        .ok_or_else(|| ExecutionError::UnexpectedType {
            got: val.get_type().name().to_owned(),
            want: "list".to_owned(),
        })?;
    let mut out = Vec::new();
    let mut it = iterable.iter();
    while let Some(item) = it.next() {
        out.push(CelValue::try_from(item).map_err(|_| {
            ExecutionError::function_error("list", format!("{UNSUPPORTED}unsupported element"))
        })?);
    }
    Ok(out)
}

fn compare(a: &CelValue, b: &CelValue) -> Result<std::cmp::Ordering, ExecutionError> {
    use CelValue::*;
    let ord = match (a, b) {
        (Int(x), Int(y)) => x.partial_cmp(y),
        (UInt(x), UInt(y)) => x.partial_cmp(y),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (Int(x), Float(y)) => (*x as f64).partial_cmp(y),
        (Float(x), Int(y)) => x.partial_cmp(&(*y as f64)),
        (String(x), String(y)) => x.partial_cmp(y),
        (Bool(x), Bool(y)) => x.partial_cmp(y),
        _ => None,
    };
    ord.ok_or_else(|| ExecutionError::ValuesNotComparable(a.clone(), b.clone()))
}

fn one_arg<'a, 'b, 'v>(args: &'a [CowVal<'b, 'v>]) -> Result<&'a dyn Val, ExecutionError> {
    match args {
        [list] => Ok(list.as_ref()),
        _ => Err(ExecutionError::invalid_argument_count(1, args.len())),
    }
}

fn owned(value: CelValue) -> Result<CowVal<'static, 'static>, ExecutionError> {
    let boxed: Box<dyn Val> = value
        .try_into()
        .map_err(|_| ExecutionError::function_error("value", "cannot convert"))?;
    Ok(CowVal::Owned(boxed))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = list_items(one_arg(&args)?)?;
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1])? == std::cmp::Ordering::Greater {
            return owned(CelValue::Bool(false));
        }
    }
    owned(CelValue::Bool(true))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = list_items(one_arg(&args)?)?;
    let mut int_sum: i64 = 0;
    let mut float_sum: f64 = 0.0;
    let mut floats = false;
    for item in &items {
        match item {
            CelValue::Int(i) => {
                int_sum = int_sum
                    .checked_add(*i)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?;
                float_sum += *i as f64;
            }
            CelValue::Float(f) => {
                floats = true;
                float_sum += f;
            }
            other => {
                return Err(ExecutionError::UnexpectedType {
                    got: format!("{:?}", other.type_of()),
                    want: "int or double".into(),
                })
            }
        }
    }
    if floats {
        owned(CelValue::Float(float_sum))
    } else {
        owned(CelValue::Int(int_sum))
    }
}

fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    name: &str,
    want: std::cmp::Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = list_items(one_arg(&args)?)?;
    let mut best: Option<CelValue> = None;
    for item in items {
        best = match best {
            None => Some(item),
            Some(b) => Some(if compare(&item, &b)? == want { item } else { b }),
        };
    }
    match best {
        Some(b) => owned(b),
        None => Err(ExecutionError::function_error(
            name,
            format!("{name} called on an empty list"),
        )),
    }
}

fn list_min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", std::cmp::Ordering::Less)
}

fn list_max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", std::cmp::Ordering::Greater)
}

fn index_of(args: &[CowVal<'_, '_>], last: bool) -> Result<i64, ExecutionError> {
    let [list, needle] = args else {
        return Err(ExecutionError::invalid_argument_count(2, args.len()));
    };
    let items = list_items(list.as_ref())?;
    let needle = CelValue::try_from(needle.as_ref())
        .map_err(|_| ExecutionError::function_error("indexOf", "unsupported value"))?;
    let found = if last {
        items.iter().rposition(|i| *i == needle)
    } else {
        items.iter().position(|i| *i == needle)
    };
    Ok(found.map(|i| i as i64).unwrap_or(-1))
}

fn list_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(CelValue::Int(index_of(&args, false)?))
}

fn list_last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    owned(CelValue::Int(index_of(&args, true)?))
}

/// A compiled rule of one `x-kubernetes-validations` entry.
pub struct CompiledRule {
    expression: Expression,
    features: Features,
    /// The rule reads `oldSelf` (a transition rule).
    pub transition: bool,
}

/// What a rule said about a value.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleResult {
    Pass,
    /// The rule evaluated to false.
    Fail,
    /// The rule failed at run time as it would in the API server (e.g. no such key).
    Error(String),
    /// crfix cannot evaluate the rule (our limitation, not the object's fault).
    Unsupported(String),
}

/// Compiles `rule` with the `cel` crate's Pratt parser (its ANTLR parser spends most of a
/// millisecond initialising itself in every fresh instance). `Err` says why crfix cannot.
pub fn compile(rule: &str) -> Result<CompiledRule, String> {
    let expression = PrattParser::new()
        .enable_optional_syntax(true)
        .max_recursion_depth(64)
        .max_expression_node_count(10_000)
        .parse(rule)
        .map_err(|e| format!("cannot compile: {}", one_line(&e.to_string())))?;
    let references = expression.references();
    let functions = references.functions();
    let features = Features {
        strings: functions.iter().any(|f| STRING_FUNCTIONS.contains(f)),
        lists: functions.iter().any(|f| LIST_FUNCTIONS.contains(f)),
        optional: rule.contains('?')
            || functions.iter().any(|f| {
                f.starts_with("optional.") || matches!(*f, "hasValue" | "value" | "orValue" | "or")
            }),
    };
    let transition = references.has_variable("oldSelf");
    drop(references);
    Ok(CompiledRule {
        expression,
        features,
        transition,
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `oldSelf` as a rule sees it.
pub enum OldSelf<'a> {
    /// Not bound (a CREATE, or no old value at this node).
    Absent,
    Value(&'a Value),
    /// `optionalOldSelf: true`: bound as an optional, `optional.none()` when there is no old
    /// value.
    Optional(Option<&'a Value>),
}

/// Evaluates `rule` with `self` (and `oldSelf`) bound; `schema` types the values (integer vs
/// number, int-or-string, unknown fields left out as the API server prunes them).
pub fn evaluate(
    rule: &CompiledRule,
    schema: &Value,
    value: &Value,
    old: OldSelf<'_>,
) -> RuleResult {
    let features = Features {
        optional: rule.features.optional || matches!(old, OldSelf::Optional(_)),
        ..rule.features
    };
    match run(&rule.expression, features, schema, value, old) {
        Ok(CelValue::Bool(true)) => RuleResult::Pass,
        Ok(CelValue::Bool(false)) => RuleResult::Fail,
        Ok(other) => RuleResult::Unsupported(format!(
            "the rule evaluated to {:?}, not a bool",
            other.type_of()
        )),
        Err(e) => classify(e),
    }
}

/// Evaluates a `messageExpression`: `Ok(message)` or why it could not.
pub fn evaluate_message(
    source: &str,
    schema: &Value,
    value: &Value,
    old: OldSelf<'_>,
) -> Result<String, String> {
    let rule = compile(source)?;
    let features = Features {
        optional: rule.features.optional || matches!(old, OldSelf::Optional(_)),
        ..rule.features
    };
    match run(&rule.expression, features, schema, value, old) {
        Ok(CelValue::String(s)) => Ok(s.to_string()),
        Ok(other) => Err(format!(
            "messageExpression evaluated to {:?}, not a string",
            other.type_of()
        )),
        Err(e) => Err(e.to_string()),
    }
}

fn run(
    expression: &Expression,
    features: Features,
    schema: &Value,
    value: &Value,
    old: OldSelf<'_>,
) -> Result<CelValue, ExecutionError> {
    let env = env(features).map_err(|e| ExecutionError::function_error("env", e))?;
    let mut ctx = Context::with_env(env);
    ctx.add_variable_from_value("self", to_cel(value, schema, 0)?);
    match old {
        OldSelf::Absent => {}
        OldSelf::Value(old) => ctx.add_variable_from_value("oldSelf", to_cel(old, schema, 0)?),
        OldSelf::Optional(old) => {
            let opt = match old {
                None => CelOptional::none(),
                Some(old) => {
                    let boxed: Box<dyn Val> = to_cel(old, schema, 0)?.try_into().map_err(|_| {
                        ExecutionError::function_error(
                            "oldSelf",
                            format!("{UNSUPPORTED}cannot bind oldSelf"),
                        )
                    })?;
                    CelOptional::of(boxed)
                }
            };
            ctx.add_variable_as_val("oldSelf", Box::new(opt));
        }
    }
    CelValue::resolve(expression, &ctx)
}

fn classify(e: ExecutionError) -> RuleResult {
    let text = e.to_string();
    if text.contains(UNSUPPORTED) {
        return RuleResult::Unsupported(text.replace(UNSUPPORTED, ""));
    }
    match e {
        // The API server type-checks rules when the CRD is written, so a missing overload or
        // an undeclared function here is crfix's limitation (or its typing of the value).
        ExecutionError::NoSuchOverload(_)
        | ExecutionError::UndeclaredReference(_)
        | ExecutionError::NotSupportedAsMethod { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::InternalError(_) => RuleResult::Unsupported(text),
        _ => RuleResult::Error(text),
    }
}

fn unsupported_value(what: &str) -> ExecutionError {
    ExecutionError::function_error("self", format!("{UNSUPPORTED}{what}"))
}

/// A JSON value as the API server hands it to CEL, typed by its schema node.
pub fn to_cel(value: &Value, schema: &Value, depth: usize) -> Result<CelValue, ExecutionError> {
    if depth > MAX_CONVERT_DEPTH {
        return Err(unsupported_value("value nested too deeply"));
    }
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    Ok(match value {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(n) => {
            if ty == "number" {
                CelValue::Float(n.as_f64().unwrap_or(f64::NAN))
            } else if let Some(i) = n.as_i64() {
                CelValue::Int(i)
            } else if let Some(u) = n.as_u64() {
                CelValue::UInt(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if (ty == "integer" || schema::is_int_or_string(schema))
                    && f.fract() == 0.0
                    && f.abs() < 9.0e15
                {
                    CelValue::Int(f as i64)
                } else {
                    CelValue::Float(f)
                }
            }
        }
        Value::String(s) => CelValue::String(Arc::new(s.clone())),
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(to_cel(item, item_schema, depth + 1)?);
            }
            CelValue::List(Arc::new(out))
        }
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let preserve = schema::preserves_unknown(schema);
            let embedded = schema::is_embedded(schema);
            let mut out = HashMap::with_capacity(map.len());
            for (k, v) in map {
                let child = if let Some(p) = props.and_then(|p| p.get(k)) {
                    p
                } else if let Some(a) = additional {
                    a
                } else if preserve
                    || (embedded && matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
                {
                    &Value::Null
                } else {
                    // Pruned by the API server before validation: CEL never sees it.
                    continue;
                };
                out.insert(Key::from(k.clone()), to_cel(v, child, depth + 1)?);
            }
            CelValue::Map(Map { map: Arc::new(out) })
        }
    })
}

/// A cache of compiled rules for one validation: each distinct rule text is compiled once.
#[derive(Default)]
pub struct RuleCache<'a> {
    compiled: HashMap<&'a str, Rc<Result<CompiledRule, String>>>,
}

impl<'a> RuleCache<'a> {
    pub fn get(&mut self, rule: &'a str) -> Rc<Result<CompiledRule, String>> {
        self.compiled
            .entry(rule)
            .or_insert_with(|| Rc::new(compile(rule)))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(rule: &str, schema: Value, value: Value) -> RuleResult {
        let compiled = compile(rule).expect("compiles");
        evaluate(&compiled, &schema, &value, OldSelf::Absent)
    }

    #[test]
    fn matches_uses_regex_lite_and_escapes() {
        let s = json!({"type": "string"});
        let dns =
            r#"self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")"#;
        assert_eq!(eval(dns, s.clone(), json!("a.b-c")), RuleResult::Pass);
        assert_eq!(eval(dns, s.clone(), json!("A_b")), RuleResult::Fail);
        assert_eq!(eval(dns, s.clone(), json!("a..b")), RuleResult::Fail);
        assert_eq!(
            eval("self.find('[0-9]+') == '12'", s.clone(), json!("ab12cd3")),
            RuleResult::Pass
        );
        assert_eq!(
            eval("self.findAll('[0-9]') == ['1','2']", s, json!("a1b2")),
            RuleResult::Pass
        );
    }

    #[test]
    fn extensions_and_macros() {
        let s = json!({"type": "string"});
        assert_eq!(
            eval("self.lowerAscii() == 'abc'", s.clone(), json!("ABC")),
            RuleResult::Pass
        );
        assert_eq!(
            eval(
                "self.split('.').size() == 3 && self.startsWith('a')",
                s.clone(),
                json!("a.b.c")
            ),
            RuleResult::Pass
        );
        let l = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(
            eval(
                "self.isSorted() && self.sum() == 6 && self.min() == 1 && self.max() == 3",
                l.clone(),
                json!([1, 2, 3])
            ),
            RuleResult::Pass
        );
        assert_eq!(
            eval(
                "self.all(x, x > 0) && self.exists_one(x, x == 2)",
                l.clone(),
                json!([1, 2, 3])
            ),
            RuleResult::Pass
        );
        assert_eq!(
            eval("self.indexOf(2) == 1", l, json!([1, 2, 3])),
            RuleResult::Pass
        );
    }

    #[test]
    fn numbers_follow_the_schema_type() {
        let n = json!({"type": "number"});
        assert_eq!(eval("self == 1.0", n, json!(1)), RuleResult::Pass);
        let i = json!({"type": "integer"});
        assert_eq!(eval("self == 1", i, json!(1)), RuleResult::Pass);
        let ios = json!({"x-kubernetes-int-or-string": true});
        assert_eq!(
            eval("type(self) == int", ios.clone(), json!(80)),
            RuleResult::Pass
        );
        assert_eq!(
            eval("type(self) == string", ios, json!("http")),
            RuleResult::Pass
        );
    }

    #[test]
    fn unknown_fields_are_pruned_and_missing_keys_error() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(
            eval("!has(self.b)", s.clone(), json!({"a": "x", "b": 1})),
            RuleResult::Pass
        );
        assert!(matches!(
            eval("self.a == 'x'", s, json!({})),
            RuleResult::Error(_)
        ));
    }

    #[test]
    fn captures_are_removed_without_changing_the_language() {
        use super::regex::without_captures;
        assert_eq!(without_captures("^(a|b)+$"), "^(?:a|b)+$");
        assert_eq!(without_captures(r"\(x\)[(]"), r"\(x\)[(]");
        assert_eq!(without_captures("[]()](?i)(c)"), "[]()](?i)(?:c)");
        assert_eq!(without_captures("[^]a](b)"), "[^]a](?:b)");
        assert_eq!(without_captures("[[:alpha:]](d)"), "[[:alpha:]](?:d)");
        let re = regex::get("^(v?(0|[1-9][0-9]*))([.](0|[1-9][0-9]*)){0,2}$").unwrap();
        assert!(re.is_match("v1.2.3") && !re.is_match("1.2.3.4"));
    }

    #[test]
    fn unsupported_functions_are_not_failures() {
        let s = json!({"type": "string"});
        assert!(matches!(
            eval(
                "quantity(self).isLessThan(quantity('1Gi'))",
                s.clone(),
                json!("1Mi")
            ),
            RuleResult::Unsupported(_)
        ));
        assert!(matches!(
            eval(r"self.matches('\\p{Greek}')", s, json!("x")),
            RuleResult::Unsupported(_)
        ));
        assert!(compile("self ==").is_err());
    }
}
