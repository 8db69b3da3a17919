//! Upper bounds of what the API server charges for evaluating a CEL rule, so that crfix never
//! runs unbounded work.
//!
//! The API server counts the cost of every evaluation as cel-go runs it (k8s.io/apiserver's
//! `PerCallLimit` per rule, `RuntimeCELCostBudget` per object) and cancels a rule that goes
//! over. The `cel` crate counts nothing, so crfix computes, before evaluating, an upper bound
//! of that cost from the parsed rule and the sizes of the actual values: a comprehension costs
//! its body times the size of its range (nested ones compound), string functions and regular
//! expressions cost by the length of their operands, as in cel-go's cost model and the
//! Kubernetes library's (`library/cost.go`). A rule whose bound exceeds a limit is not run.
//!
//! The same walk, with the sizes a schema allows instead of actual values, estimates a rule's
//! cost when a CRD is read (see [`estimate`]).

use std::rc::Rc;

use cel::common::ast::{ComprehensionExpr, EntryExpr, Expr, LiteralValue};
use cel::parser::Expression;
use serde_json::Value;

use crate::schema;

/// The API server's cost limit for one evaluation of one rule (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The API server's cost budget for all the rules of one object (`RuntimeCELCostBudget`).
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// The largest estimated cost of one rule a CRD may declare (`StaticEstimatedCostLimit`).
pub const STATIC_RULE_LIMIT: u64 = 10_000_000;
/// The largest estimated cost of all the rules of a CRD (`StaticEstimatedCRDCostLimit`).
pub const STATIC_CRD_LIMIT: u64 = 100_000_000;
/// The API server's largest request (`MaxRequestSizeBytes`): the size of what no schema
/// bounds.
pub const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// cel-go's `StringTraversalCostFactor` (tenths) and `RegexStringLengthCostFactor` (quarters).
const STRING_TRAVERSAL_DIVISOR: u64 = 10;
const REGEX_LENGTH_DIVISOR: u64 = 4;
/// cel-go's `ListCreateBaseCost` and `MapCreateBaseCost`.
const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
/// Deepest nesting of values and schemas looked at for sizes.
const MAX_DEPTH: usize = 64;

/// What the bound knows about a value: one of some JSON values, any value a schema allows,
/// or only sizes.
#[derive(Clone)]
enum Abs<'v> {
    /// One of these JSON values.
    Json(Rc<Vec<&'v Value>>),
    /// Any value of this schema node (at CRD read time).
    Schema(&'v Value),
    /// A computed value: at most `len` characters, elements or entries, each like `elem`.
    Sized(Rc<Sized<'v>>),
    /// An integer no greater than this.
    Int(u64),
}

struct Sized<'v> {
    len: u64,
    elem: Option<Abs<'v>>,
}

fn sized(len: u64, elem: Option<Abs<'_>>) -> Abs<'_> {
    Abs::Sized(Rc::new(Sized { len, elem }))
}

fn scalar<'v>() -> Abs<'v> {
    sized(1, None)
}

/// Ceiling of `n / d`.
fn ceil_div(n: u64, d: u64) -> u64 {
    n / d + u64::from(!n.is_multiple_of(d))
}

fn traversal(len: u64) -> u64 {
    ceil_div(len, STRING_TRAVERSAL_DIVISOR)
}

/// cel-go's cost of a regex match: the string's traversal times a quarter of the pattern.
fn regex_cost(text: u64, pattern: u64) -> u64 {
    traversal(text.saturating_add(1)).saturating_mul(ceil_div(pattern, REGEX_LENGTH_DIVISOR))
}

/// The bound of a `self.matches('<pattern>')` rule on `value`.
pub fn matches_bound(value: &Value, pattern: &str) -> u64 {
    let len = Abs::Json(Rc::new(vec![value])).len();
    1 + regex_cost(len, pattern.chars().count() as u64)
}

/// The estimate of a `self.matches('<pattern>')` rule on any value of `schema`.
pub fn matches_estimate(schema: &Value, pattern: &str) -> u64 {
    let len = Abs::Schema(schema).len();
    1 + regex_cost(len, pattern.chars().count() as u64)
}

/// The bound of a `has(self.<field>)` rule: `self` alone (a presence test costs nothing more).
pub const HAS_BOUND: u64 = 1;

/// The largest number of items, properties or bytes of a value of a schema node, as the API
/// server's `SchemaDeclType` sizes it (`MaxElements`): a string's `maxLength` times 4 (a
/// character may take 4 bytes), `format: byte` its `maxLength`, `duration` and `date-time`
/// at most 32 bytes and `date` 12 whatever their `maxLength`; without a maximum, as many as
/// fit in a request.
fn schema_len(schema: &Value) -> u64 {
    let max = |key: &str| schema.get(key).and_then(Value::as_u64);
    if schema::is_int_or_string(schema) {
        return MAX_REQUEST_BYTES - 2;
    }
    match schema::type_of(schema) {
        "array" => max("maxItems").unwrap_or_else(|| {
            (MAX_REQUEST_BYTES - 2) / (min_serialized_size(schema.get("items")) + 1)
        }),
        "object" => max("maxProperties").unwrap_or_else(|| {
            (MAX_REQUEST_BYTES - 2) / (min_serialized_size(schema.get("additionalProperties")) + 6)
        }),
        "string" => match schema.get("format").and_then(Value::as_str) {
            Some("duration") => MAX_DURATION_JSON,
            Some("date") => DATE_JSON,
            Some("date-time") => MAX_DATETIME_JSON,
            Some("byte") => max("maxLength").unwrap_or(MAX_REQUEST_BYTES - 2),
            _ => max("maxLength")
                .map(|m| m.saturating_mul(4))
                .unwrap_or(MAX_REQUEST_BYTES - 2),
        },
        "" => MAX_REQUEST_BYTES,
        // The API server gives numbers and booleans no size: comparing them costs nothing in
        // its estimate.
        _ => 0,
    }
}

/// The API server's sizes of serialized values (`k8s.io/apiserver/pkg/cel/limits.go`).
const MAX_DURATION_JSON: u64 = 32;
const MAX_DATETIME_JSON: u64 = 32;
const DATE_JSON: u64 = 12;
const MIN_DURATION_JSON: u64 = 3;
const MIN_DATETIME_JSON: u64 = 21;

/// The most times a node of schema `element` can occur in a request where nothing bounds it
/// (the API server's `MaxCardinality`): each at its smallest serialized size, plus a comma.
pub fn max_count(element: Option<&Value>) -> u64 {
    MAX_REQUEST_BYTES / (min_serialized_size(element) + 1)
}

/// The smallest serialized size of a value of `schema` (the API server's
/// `MinSerializedSize`): `""`, `0`, `true`, `[]`, `{}` plus, for an object, each required
/// property without a default (its name, quotes, colon and comma, and its own smallest value).
fn min_serialized_size(schema: Option<&Value>) -> u64 {
    min_size(schema, 0)
}

fn min_size(schema: Option<&Value>, depth: usize) -> u64 {
    let Some(s) = schema else {
        return 1;
    };
    if schema::is_int_or_string(s) {
        return 1;
    }
    match schema::type_of(s) {
        "integer" | "number" => 1,
        "boolean" => 4,
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("duration") => MIN_DURATION_JSON,
            Some("date") => DATE_JSON,
            Some("date-time") => MIN_DATETIME_JSON,
            _ => 2,
        },
        "object" if depth < MAX_DEPTH && s.get("additionalProperties").is_none() => {
            let props = s.get("properties");
            let required = s.get("required").and_then(Value::as_array);
            required
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter_map(|name| Some((name, props?.get(name)?)))
                .filter(|(_, prop)| prop.get("default").is_none())
                .fold(2u64, |acc, (name, prop)| {
                    acc.saturating_add(name.len() as u64 + 4)
                        .saturating_add(min_size(Some(prop), depth + 1))
                })
        }
        _ => 2,
    }
}

impl<'v> Abs<'v> {
    /// The most characters (strings), items (lists) or entries (maps) the value may have; 1
    /// for other values. Strings are counted in bytes, at least their characters.
    fn len(&self) -> u64 {
        match self {
            Abs::Json(values) => values
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.len() as u64,
                    Value::Array(a) => a.len() as u64,
                    Value::Object(o) => o.len() as u64,
                    _ => 1,
                })
                .max()
                .unwrap_or(0),
            Abs::Schema(s) => schema_len(s),
            Abs::Sized(s) => s.len,
            Abs::Int(_) => 1,
        }
    }

    /// The items of a list or the values of a map.
    fn items(&self) -> Abs<'v> {
        match self {
            Abs::Json(values) => {
                let mut out = Vec::new();
                for v in values.iter() {
                    match v {
                        Value::Array(a) => out.extend(a.iter()),
                        Value::Object(o) => out.extend(o.values()),
                        _ => {}
                    }
                }
                Abs::Json(Rc::new(out))
            }
            Abs::Schema(s) => match s.get("items").or_else(|| s.get("additionalProperties")) {
                Some(child) if child.is_object() => Abs::Schema(child),
                _ => sized(MAX_REQUEST_BYTES, None),
            },
            Abs::Sized(s) => s
                .elem
                .clone()
                .unwrap_or_else(|| sized(MAX_REQUEST_BYTES, None)),
            Abs::Int(_) => scalar(),
        }
    }

    /// What a comprehension's (first) variable ranges over: list items, or map keys.
    fn iteration(&self) -> Abs<'v> {
        match self {
            Abs::Json(values) if values.iter().any(|v| v.is_object()) => {
                let keys = values
                    .iter()
                    .filter_map(|v| v.as_object())
                    .flat_map(|o| o.keys().map(|k| k.len() as u64))
                    .max()
                    .unwrap_or(0);
                join(&sized(keys, None), &self.items_of_arrays())
            }
            // The API server sizes a map's keys by its `StringType`, which has no maximum
            // length: 0 (`sizeEstimator.EstimateSize`, `@keys`), so rules over label keys
            // cost what their iteration costs.
            Abs::Schema(s) if schema::type_of(s) == "object" => sized(0, None),
            _ => self.items(),
        }
    }

    fn items_of_arrays(&self) -> Abs<'v> {
        match self {
            Abs::Json(values) => Abs::Json(Rc::new(
                values
                    .iter()
                    .filter_map(|v| v.as_array())
                    .flat_map(|a| a.iter())
                    .collect(),
            )),
            other => other.items(),
        }
    }

    /// Field `name` of an object.
    /// `name` is the field as CEL names it: a declared property is escaped
    /// (`__namespace__`), see [`super::escaping`].
    fn field(&self, name: &str) -> Abs<'v> {
        let plain = super::escaping::unescape(name).unwrap_or(std::borrow::Cow::Borrowed(name));
        match self {
            Abs::Json(values) => Abs::Json(Rc::new(
                values
                    .iter()
                    .filter_map(|v| v.get(plain.as_ref()).or_else(|| v.get(name)))
                    .collect(),
            )),
            Abs::Schema(s) => {
                let child = s
                    .get("properties")
                    .and_then(|p| p.get(plain.as_ref()).or_else(|| p.get(name)))
                    .or_else(|| s.get("additionalProperties").filter(|a| a.is_object()));
                match child {
                    Some(c) => Abs::Schema(c),
                    None => sized(MAX_REQUEST_BYTES, None),
                }
            }
            Abs::Sized(_) | Abs::Int(_) => self.items(),
        }
    }

    /// Whether the value may be a string (else a list, a map or another value).
    fn is_text(&self) -> bool {
        match self {
            Abs::Json(values) => values.iter().any(|v| v.is_string()),
            Abs::Schema(s) => {
                matches!(schema::type_of(s), "string" | "") || schema::is_int_or_string(s)
            }
            Abs::Sized(s) => s.elem.is_none(),
            Abs::Int(_) => false,
        }
    }

    /// The greatest integer the value may be (for `lists.range`, `repeat`-like functions).
    fn max_int(&self) -> u64 {
        match self {
            Abs::Json(values) => values
                .iter()
                .map(|v| {
                    v.as_u64()
                        .unwrap_or(if v.is_number() { 0 } else { u64::MAX })
                })
                .max()
                .unwrap_or(0),
            Abs::Schema(s) => s
                .get("maximum")
                .and_then(Value::as_u64)
                .unwrap_or(MAX_REQUEST_BYTES),
            Abs::Sized(_) => MAX_REQUEST_BYTES,
            Abs::Int(i) => *i,
        }
    }

    /// cel-go's `traversalCost`: a tenth per character, 1 per other scalar, over every
    /// element and key of lists and maps.
    fn traversal(&self, depth: usize) -> u64 {
        if depth > MAX_DEPTH {
            return MAX_REQUEST_BYTES;
        }
        match self {
            Abs::Json(values) => values
                .iter()
                .map(|v| json_traversal(v, depth))
                .max()
                .unwrap_or(0),
            Abs::Schema(s) => match schema::type_of(s) {
                "array" | "object" => schema_len(s)
                    .saturating_mul(self.items().traversal(depth + 1).saturating_add(1)),
                _ => traversal(schema_len(s)).max(1),
            },
            Abs::Sized(s) => match &s.elem {
                Some(e) => s
                    .len
                    .saturating_mul(e.traversal(depth + 1).saturating_add(1)),
                None => traversal(s.len).max(1),
            },
            Abs::Int(_) => 1,
        }
    }
}

fn json_traversal(value: &Value, depth: usize) -> u64 {
    if depth > MAX_DEPTH {
        return MAX_REQUEST_BYTES;
    }
    match value {
        Value::String(s) => traversal(s.len() as u64).max(1),
        Value::Array(a) => a.iter().fold(0u64, |acc, v| {
            acc.saturating_add(json_traversal(v, depth + 1))
        }),
        Value::Object(o) => o.iter().fold(0u64, |acc, (k, v)| {
            acc.saturating_add(traversal(k.len() as u64))
                .saturating_add(json_traversal(v, depth + 1))
        }),
        _ => 1,
    }
}

/// A value that may be either `a` or `b`.
fn join<'v>(a: &Abs<'v>, b: &Abs<'v>) -> Abs<'v> {
    match (a, b) {
        (Abs::Json(x), Abs::Json(y)) => {
            let mut out: Vec<&Value> = x.as_ref().clone();
            out.extend(y.iter());
            Abs::Json(Rc::new(out))
        }
        (Abs::Int(x), Abs::Int(y)) => Abs::Int(*x.max(y)),
        _ => {
            let (ia, ib) = (a.items_or_none(), b.items_or_none());
            let elem = match (ia, ib) {
                (Some(x), Some(y)) => Some(join_shallow(&x, &y)),
                (x, y) => x.or(y),
            };
            sized(a.len().max(b.len()), elem)
        }
    }
}

/// `join` one level down, without recursing further (sizes of deeper levels are the max of
/// both when both are known, else the known one).
fn join_shallow<'v>(a: &Abs<'v>, b: &Abs<'v>) -> Abs<'v> {
    match (a, b) {
        (Abs::Json(_), Abs::Json(_)) => join(a, b),
        _ => sized(
            a.len().max(b.len()),
            a.items_or_none().or(b.items_or_none()),
        ),
    }
}

impl<'v> Abs<'v> {
    fn items_or_none(&self) -> Option<Abs<'v>> {
        match self {
            Abs::Json(values) => values
                .iter()
                .any(|v| v.is_array() || v.is_object())
                .then(|| self.items()),
            Abs::Schema(s) => {
                matches!(schema::type_of(s), "array" | "object").then(|| self.items())
            }
            Abs::Sized(s) => s.elem.clone(),
            Abs::Int(_) => None,
        }
    }
}

/// Variables in scope while walking a rule.
struct Scope<'v, 'e> {
    names: Vec<(&'e str, Abs<'v>)>,
}

impl<'v, 'e> Scope<'v, 'e> {
    fn get(&self, name: &str) -> Option<Abs<'v>> {
        self.names
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, a)| a.clone())
    }
}

/// The cost so far and the value a sub-expression yields.
struct Walk<'v> {
    cost: u64,
    value: Abs<'v>,
}

fn walk<'v, 'e>(expr: &'e Expression, scope: &mut Scope<'v, 'e>, depth: usize) -> Walk<'v> {
    if depth > 2 * MAX_DEPTH {
        return Walk {
            cost: u64::MAX,
            value: scalar(),
        };
    }
    match &expr.expr {
        Expr::Literal(LiteralValue::String(s)) => Walk {
            cost: 0,
            value: sized(s.inner().len() as u64, None),
        },
        Expr::Literal(LiteralValue::Bytes(b)) => Walk {
            cost: 0,
            value: sized(b.inner().len() as u64, None),
        },
        Expr::Literal(LiteralValue::Int(i)) => Walk {
            cost: 0,
            value: Abs::Int(u64::try_from(*i.inner()).unwrap_or(0)),
        },
        Expr::Literal(_) | Expr::Unspecified => Walk {
            cost: 0,
            value: scalar(),
        },
        Expr::Ident(name) => Walk {
            cost: 1,
            value: scope
                .get(name)
                .unwrap_or_else(|| sized(MAX_REQUEST_BYTES, None)),
        },
        // A presence test (`has(self.a)`) costs only its operand: Kubernetes sets cel-go's
        // `PresenceTestHasCost(false)` for the estimate and the runtime count alike.
        Expr::Select(select) if select.test => Walk {
            cost: walk(&select.operand, scope, depth + 1).cost,
            value: scalar(),
        },
        Expr::Select(select) => {
            let operand = walk(&select.operand, scope, depth + 1);
            Walk {
                cost: operand.cost.saturating_add(1),
                value: operand.value.field(&select.field),
            }
        }
        Expr::List(list) => walk_list(&list.elements, scope, depth),
        Expr::Map(map) => walk_entries(&map.entries, MAP_CREATE, scope, depth),
        Expr::Struct(s) => walk_entries(&s.entries, 40, scope, depth),
        Expr::Call(call) => walk_call(call, scope, depth),
        Expr::Comprehension(c) => walk_comprehension(c, scope, depth),
    }
}

/// A list literal: its elements' costs, and a list of their joined shape.
fn walk_list<'v, 'e>(
    elements: &'e [Expression],
    scope: &mut Scope<'v, 'e>,
    depth: usize,
) -> Walk<'v> {
    let mut cost = LIST_CREATE;
    let mut elem: Option<Abs<'v>> = None;
    for e in elements {
        let w = walk(e, scope, depth + 1);
        cost = cost.saturating_add(w.cost);
        elem = Some(match elem {
            None => w.value,
            Some(prev) => join(&prev, &w.value),
        });
    }
    Walk {
        cost,
        value: sized(elements.len() as u64, elem),
    }
}

/// A function call: its target's and arguments' costs, then the function's own.
fn walk_call<'v, 'e>(
    call: &'e cel::common::ast::CallExpr,
    scope: &mut Scope<'v, 'e>,
    depth: usize,
) -> Walk<'v> {
    let mut cost = 0u64;
    let mut target = None;
    // `sets.contains(a, b)` is parsed as a call of `contains` on a variable `sets`: a
    // namespaced function, no receiver.
    let namespaced = match call.target.as_deref().map(|t| &t.expr) {
        Some(Expr::Ident(ns)) if NAMESPACES.contains(&ns.as_str()) && scope.get(ns).is_none() => {
            Some(format!("{ns}.{}", call.func_name))
        }
        _ => None,
    };
    if let (Some(t), None) = (&call.target, &namespaced) {
        let w = walk(t, scope, depth + 1);
        cost = cost.saturating_add(w.cost);
        target = Some(w.value);
    }
    let mut args = Vec::with_capacity(call.args.len());
    let mut arg_costs = Vec::with_capacity(call.args.len());
    for a in &call.args {
        let w = walk(a, scope, depth + 1);
        arg_costs.push(w.cost);
        args.push(w.value);
    }
    let function = namespaced.as_deref().unwrap_or(&call.func_name);
    // A conditional pays its condition and the dearer branch, as cel-go estimates it.
    cost = cost.saturating_add(match (function, arg_costs.as_slice()) {
        ("_?_:_", [condition, then, otherwise]) => condition.saturating_add(*then.max(otherwise)),
        _ => arg_costs.iter().fold(0u64, |sum, c| sum.saturating_add(*c)),
    });
    let (own, value) = call_cost(function, target, args);
    Walk {
        cost: cost.saturating_add(own),
        value,
    }
}

fn walk_entries<'v, 'e>(
    entries: &'e [cel::common::ast::IdedEntryExpr],
    base: u64,
    scope: &mut Scope<'v, 'e>,
    depth: usize,
) -> Walk<'v> {
    let mut cost = base;
    let mut elem: Option<Abs<'v>> = None;
    for entry in entries {
        let parts: Vec<&Expression> = match &entry.expr {
            EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
            EntryExpr::StructField(f) => vec![&f.value],
        };
        for part in parts {
            let w = walk(part, scope, depth + 1);
            cost = cost.saturating_add(w.cost);
            elem = Some(match elem {
                None => w.value,
                Some(prev) => join(&prev, &w.value),
            });
        }
    }
    Walk {
        cost,
        value: sized(entries.len() as u64, elem),
    }
}

fn walk_comprehension<'v, 'e>(
    c: &'e ComprehensionExpr,
    scope: &mut Scope<'v, 'e>,
    depth: usize,
) -> Walk<'v> {
    let range = walk(&c.iter_range, scope, depth + 1);
    let init = walk(&c.accu_init, scope, depth + 1);
    let n = range.value.len();
    let (first, second) = match &c.iter_var2 {
        // Two variables: index and item of a list, key and value of a map.
        Some(_) => (
            join(&sized(n, None), &range.value.iteration()),
            range.value.items(),
        ),
        None => (range.value.iteration(), scalar()),
    };
    let base = scope.names.len();
    scope.names.push((c.iter_var.as_str(), first));
    if let Some(v2) = &c.iter_var2 {
        scope.names.push((v2.as_str(), second));
    }
    // The accumulator grows by at most what one step adds, on every iteration.
    scope.names.push((c.accu_var.as_str(), init.value.clone()));
    let once = walk(&c.loop_step, scope, depth + 1);
    let growth = once.value.len().saturating_sub(init.value.len());
    let accu = if growth > 0 {
        let elem = once.value.items_or_none();
        sized(
            init.value.len().saturating_add(n.saturating_mul(growth)),
            elem,
        )
    } else {
        join(&init.value, &once.value)
    };
    scope
        .names
        .truncate(base + 1 + usize::from(c.iter_var2.is_some()));
    scope.names.push((c.accu_var.as_str(), accu.clone()));
    let cond = walk(&c.loop_cond, scope, depth + 1);
    let step = walk(&c.loop_step, scope, depth + 1);
    scope.names.truncate(base);
    scope.names.push((c.accu_var.as_str(), accu));
    let result = walk(&c.result, scope, depth + 1);
    scope.names.truncate(base);
    let per_iteration = cond.cost.saturating_add(step.cost);
    Walk {
        cost: range
            .cost
            .saturating_add(init.cost)
            .saturating_add(n.saturating_mul(per_iteration))
            .saturating_add(result.cost),
        value: result.value,
    }
}

/// Namespaces of functions (`sets.contains`, `ip.isCanonical`, `format.dns1123Label`, …).
const NAMESPACES: &[&str] = &[
    "sets", "ip", "format", "lists", "strings", "optional", "cel",
];

/// The cost of calling `function` (its arguments already paid) and what it yields: cel-go's
/// runtime cost (`interpreter/runtimecost.go`), Kubernetes' library costs
/// (`pkg/cel/library/cost.go`) and those of the lists (v3) and sets extensions; 1 for a
/// function none of them names.
fn call_cost<'v>(function: &str, target: Option<Abs<'v>>, args: Vec<Abs<'v>>) -> (u64, Abs<'v>) {
    // The receiver first: `a.f(b)` and `f(a, b)` alike.
    let all: Vec<Abs<'v>> = target.into_iter().chain(args).collect();
    match function {
        f if OPERATORS.contains(&f) => operator_cost(function, &all),
        "matches" | "find" | "findAll" | "contains" | "startsWith" | "endsWith" | "split"
        | "replace" | "join" | "url" | "lowerAscii" | "upperAscii" | "substring" | "trim"
        | "format" | "strings.quote" | "charAt" => string_function_cost(function, &all),
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" | "distinct" | "sort"
        | "reverse" | "flatten" | "slice" | SORT_BY_KEYS => list_function_cost(function, &all),
        "sets.contains" | "sets.intersects" | "sets.equivalent" | "lists.range" | "repeat"
        | "quantity" | "isQuantity" | "isIP" | "isCIDR" | "cidr" | "ip" | "ip.isCanonical"
        | "containsIP" | "containsCIDR" | MAP_INSERT => library_cost(function, &all),
        // A conversion to a value that is no text (`duration(self)`, `int(s)`): one call, and
        // its result is sized as a number, not as the string it was parsed from.
        "duration" | "timestamp" | "int" | "uint" | "double" | "bool" if all.len() == 1 => {
            (1, Abs::Int(u64::MAX))
        }
        _ => default_cost(&all),
    }
}

/// CEL's operators, indexing and `size`: what [`operator_cost`] prices.
const OPERATORS: &[&str] = &[
    "_&&_",
    "_||_",
    "_?_:_",
    "@not_strictly_false",
    "!_",
    "_-_",
    "_*_",
    "_/_",
    "_%_",
    "-_",
    "_[_]",
    "_[?_]",
    "_?._",
    "size",
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "@in",
    "_+_",
];

/// CEL's operators, indexing and `size`.
fn operator_cost<'v>(function: &str, all: &[Abs<'v>]) -> (u64, Abs<'v>) {
    let len = |i: usize| all.get(i).map(Abs::len).unwrap_or(0);
    let first = || all.first().cloned().unwrap_or_else(scalar);
    match function {
        "_&&_"
        | "_||_"
        | "_?_:_"
        | "@not_strictly_false"
        | "!_"
        | "_-_"
        | "_*_"
        | "_/_"
        | "_%_"
        | "-_"
        | "_[_]"
        | "_[?_]"
        | "_?._"
        | "size" => {
            let value = match function {
                "_?_:_" => join(
                    &all.get(1).cloned().unwrap_or_else(scalar),
                    &all.get(2).cloned().unwrap_or_else(scalar),
                ),
                "_[_]" | "_[?_]" => first().items(),
                "_?._" => first().items(),
                _ => scalar(),
            };
            // `&&`, `||` and `?:` are no calls in cel-go: only their operands cost.
            let own = u64::from(!matches!(function, "_&&_" | "_||_" | "_?_:_"));
            (own, value)
        }
        // Ordering anything but text (numbers, durations, timestamps) is one of cel-go's
        // fixed-cost overloads.
        "_<_" | "_<=_" | "_>_" | "_>=_" if !all.iter().any(Abs::is_text) => (1, scalar()),
        // A traversal of the smaller operand, nothing more (cel-go's `trackComparison` and its
        // estimate): two scalars cost 1 at runtime, and 0 in the estimate, where the API server
        // sizes a number or a boolean 0.
        "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => {
            (traversal(len(0).min(len(1))), scalar())
        }
        "@in" => (len(1), scalar()),
        "_+_" => {
            let value = match (all.first(), all.get(1)) {
                (Some(a), Some(b)) => sized(a.len().saturating_add(b.len()), join_items(a, b)),
                _ => scalar(),
            };
            (traversal(len(0).saturating_add(len(1))), value)
        }
        _ => default_cost(all),
    }
}

/// Kubernetes' libraries (sets, lists, quantity, IP/CIDR) and cel-go's `@mapInsert`.
fn library_cost<'v>(function: &str, all: &[Abs<'v>]) -> (u64, Abs<'v>) {
    let len = |i: usize| all.get(i).map(Abs::len).unwrap_or(0);
    let first = || all.first().cloned().unwrap_or_else(scalar);
    match function {
        "sets.contains" | "sets.intersects" | "sets.equivalent" => {
            let factor = if function == "sets.equivalent" { 2 } else { 1 };
            (
                len(0)
                    .saturating_mul(len(1))
                    .saturating_mul(factor)
                    .saturating_add(1),
                scalar(),
            )
        }
        "lists.range" | "repeat" => {
            let n = all.last().map(Abs::max_int).unwrap_or(u64::MAX);
            let value = match function {
                "repeat" => sized(len(0).saturating_mul(n), None),
                _ => sized(n, Some(scalar())),
            };
            (n.saturating_add(1 + LIST_CREATE), value)
        }
        // Parsing a string: a tenth of its length (`ip.isCanonical` twice that).
        "quantity" | "isQuantity" | "isIP" | "isCIDR" | "cidr" => (traversal(len(0)), scalar()),
        "ip" if all.first().is_some_and(Abs::is_text) => (traversal(len(0)), scalar()),
        "ip.isCanonical" => (traversal(len(0).saturating_mul(2)), scalar()),
        // A CIDR's bytes compared, plus the parse of a string argument.
        "containsIP" | "containsCIDR" => {
            let base = if function == "containsCIDR" { 3 } else { 1 };
            let parse = match all.get(1) {
                Some(arg) if arg.is_text() => traversal(arg.len()),
                _ => 0,
            };
            (base + parse, scalar())
        }
        // `@mapInsert` of `transformMap`/`transformMapEntry`: one entry (or map) more.
        MAP_INSERT => {
            let accu = first();
            let added = all.last().filter(|_| all.len() == 2).map_or(1, Abs::len);
            let elem = match (accu.items_or_none(), all.last()) {
                (Some(x), Some(y)) if all.len() == 3 => Some(join(&x, y)),
                (x, y) => x.or_else(|| y.and_then(Abs::items_or_none)),
            };
            (1, sized(accu.len().saturating_add(added), elem))
        }
        _ => default_cost(all),
    }
}

/// cel-go's `@mapInsert` and the lists extension's sort by keys (`sortBy`).
const MAP_INSERT: &str = "cel.@mapInsert";
const SORT_BY_KEYS: &str = "@sortByAssociatedKeys";

/// The string functions: a tenth of their operands' lengths; regular expressions, a tenth of
/// the string's length times a quarter of the pattern's.
fn string_function_cost<'v>(function: &str, all: &[Abs<'v>]) -> (u64, Abs<'v>) {
    let len = |i: usize| all.get(i).map(Abs::len).unwrap_or(0);
    let first = || all.first().cloned().unwrap_or_else(scalar);
    match function {
        "matches" => (regex_cost(len(0), len(1)), scalar()),
        "find" => (regex_cost(len(0), len(1)), sized(len(0), None)),
        "findAll" => (
            regex_cost(len(0), len(1)),
            sized(len(0).saturating_add(1), Some(sized(len(0), None))),
        ),
        "url" => (traversal(len(0)), scalar()),
        "lowerAscii" | "upperAscii" | "substring" | "trim" => {
            (traversal(len(0)), sized(len(0), None))
        }
        // The strings extension's `format` and `strings.quote`: a traversal of the string.
        "format" | "strings.quote" => (
            traversal(len(0)),
            sized(len(0).saturating_mul(2).max(32), None),
        ),
        "contains" => (
            traversal(len(0)).saturating_mul(traversal(len(1))),
            scalar(),
        ),
        "startsWith" | "endsWith" => (traversal(len(1)), scalar()),
        "split" => (
            traversal(len(0).saturating_mul(2)),
            sized(len(0).saturating_add(1), Some(sized(len(0), None))),
        ),
        "replace" => {
            let grown = len(0)
                .saturating_add(1)
                .saturating_mul(len(2).max(1))
                .saturating_add(len(0));
            (traversal(len(0).saturating_mul(2)), sized(grown, None))
        }
        "join" => {
            let items = first();
            let total = items
                .len()
                .saturating_mul(items.items().len().saturating_add(len(1)));
            (traversal(total.saturating_mul(2)), sized(total, None))
        }
        _ => default_cost(all),
    }
}

/// `a + b` of two lists: items like either's.
fn join_items<'v>(a: &Abs<'v>, b: &Abs<'v>) -> Option<Abs<'v>> {
    match (a.items_or_none(), b.items_or_none()) {
        (Some(x), Some(y)) => Some(join(&x, &y)),
        (x, y) => x.or(y),
    }
}

fn list_function_cost<'v>(function: &str, all: &[Abs<'v>]) -> (u64, Abs<'v>) {
    let Some(list) = all.first() else {
        return (1, scalar());
    };
    let n = list.len();
    // Kubernetes' list library: one traversal of the list as a data tree.
    let walk = list.traversal(0);
    // The lists extension (v3): the result's size plus the call and the list's creation;
    // sorts and `distinct` compare each element with each (twice, strings a tenth more).
    let allocating = |size: u64, factor_tenths: u64| {
        size.saturating_mul(factor_tenths)
            .div_ceil(10)
            .saturating_add(1 + LIST_CREATE)
    };
    let self_compare = |size: u64| allocating(size.saturating_mul(size), 21);
    match function {
        // A string's own indexOf / lastIndexOf (strings extension).
        "indexOf" | "lastIndexOf" if list.is_text() => (
            traversal(n)
                .saturating_mul(traversal(all.get(1).map(Abs::len).unwrap_or(1)).max(1))
                .saturating_add(1),
            scalar(),
        ),
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => (walk, list.items()),
        "distinct" | "sort" => (self_compare(n), list.clone()),
        // `list.@sortByAssociatedKeys(keys)`: the keys compared.
        SORT_BY_KEYS => (
            self_compare(all.get(1).map(Abs::len).unwrap_or(n)),
            list.clone(),
        ),
        "flatten" => {
            let inner = list.items();
            let depth = all.get(1).map(Abs::max_int).unwrap_or(1);
            (
                allocating(n.saturating_mul(depth), 10),
                sized(n.saturating_mul(inner.len().max(1)), Some(inner.items())),
            )
        }
        // `reverse`, `slice`: the result is at most the list.
        _ => (allocating(n, 10), list.clone()),
    }
}

/// A function the cost models do not name: cel-go charges the call, 1. Its result is no
/// larger than all of its arguments together.
fn default_cost<'v>(all: &[Abs<'v>]) -> (u64, Abs<'v>) {
    let total = all.iter().fold(0u64, |acc, a| acc.saturating_add(a.len()));
    let elem = all
        .iter()
        .filter_map(Abs::items_or_none)
        .reduce(|a, b| join(&a, &b));
    (1, sized(total.max(32), elem))
}

/// An upper bound of the cost the API server charges for evaluating `expression` with `self`
/// bound to `value` (and `oldSelf` to `old`).
pub fn bound(expression: &Expression, value: &Value, old: Option<&Value>) -> u64 {
    let mut scope = Scope {
        names: vec![("self", Abs::Json(Rc::new(vec![value])))],
    };
    if let Some(old) = old {
        scope.names.push(("oldSelf", Abs::Json(Rc::new(vec![old]))));
    } else {
        scope.names.push(("oldSelf", scalar()));
    }
    walk(expression, &mut scope, 0).cost
}

/// An estimate of the cost of one evaluation of `expression` on any value `schema` allows:
/// what the API server estimates when the CRD is written.
pub fn estimate(expression: &Expression, schema: &Value) -> u64 {
    let mut scope = Scope {
        names: vec![
            ("self", Abs::Schema(schema)),
            ("oldSelf", Abs::Schema(schema)),
        ],
    };
    walk(expression, &mut scope, 0).cost
}
