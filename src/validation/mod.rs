//! Stage 3: validate an object as the API server validates custom resources.
//!
//! The object and its structural schema are walked together: only the schema nodes the object
//! reaches are looked at, only the `pattern`s and CEL rules of those nodes are compiled (each
//! distinct one once), and nothing is prepared ahead of time — every evaluation runs in a fresh
//! wasm instance, so nothing would survive anyway.
//!
//! Order of the errors (most important first): structure (`Required`, wrong type, `null`,
//! unknown fields), then value constraints (enum, pattern, format, lengths, bounds, items,
//! properties, duplicates, embedded resources), then CEL rules. Within a class errors come in
//! walk order: depth first, object keys in alphabetical order, `required` in the schema's order
//! before the keys of the object that declares them.
//!
//! Like the API server, CEL rules are not evaluated while the object has type errors (a `null`
//! where the schema does not allow one counts as one): a warning says so.

mod cel;
mod cost;
mod defaults;
mod escaping;
mod formats;
mod regex;
mod static_cost;

pub(crate) use cel::quantity_value;
pub use static_cost::refused_rules;

use std::collections::HashSet;

use serde_json::{Map, Value};

use self::cel::{OldSelf, RuleCache, RuleResult};
use crate::pointer;
use crate::response::MAX_WARNING_CHARS;
use crate::schema;
use crate::text::{self, Part};
use crate::types::{ErrorKind, FieldError, ValidationOutcome};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Report properties the schema does not know (see `Settings::reject_unknown_fields`).
    pub report_unknown_fields: bool,
}

impl ValidateOptions {
    /// Unknown fields reported.
    pub const STRICT: ValidateOptions = ValidateOptions {
        report_unknown_fields: true,
    };
}

/// `minimum` or `maximum` (with its `exclusive…` flag).
#[derive(Clone, Copy)]
enum Bound {
    Minimum,
    Maximum,
}

impl Bound {
    fn key(self) -> &'static str {
        match self {
            Bound::Minimum => "minimum",
            Bound::Maximum => "maximum",
        }
    }

    fn exclusive_key(self) -> &'static str {
        match self {
            Bound::Minimum => "exclusiveMinimum",
            Bound::Maximum => "exclusiveMaximum",
        }
    }

    fn violated(self, x: f64, limit: f64, exclusive: bool) -> bool {
        match (self, exclusive) {
            (Bound::Minimum, true) => x <= limit,
            (Bound::Minimum, false) => x < limit,
            (Bound::Maximum, true) => x >= limit,
            (Bound::Maximum, false) => x > limit,
        }
    }

    fn relation(self, exclusive: bool) -> &'static str {
        match (self, exclusive) {
            (Bound::Minimum, true) => "greater than",
            (Bound::Minimum, false) => "greater than or equal to",
            (Bound::Maximum, true) => "less than",
            (Bound::Maximum, false) => "less than or equal to",
        }
    }
}

/// What `min…`/`max…` count: an array's items or an object's properties.
#[derive(Clone, Copy)]
enum Size {
    Items,
    Properties,
}

impl Size {
    fn max_key(self) -> &'static str {
        match self {
            Size::Items => "maxItems",
            Size::Properties => "maxProperties",
        }
    }

    fn min_key(self) -> &'static str {
        match self {
            Size::Items => "minItems",
            Size::Properties => "minProperties",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Size::Items => "items",
            Size::Properties => "properties",
        }
    }
}

/// Deepest nesting of the object that is walked.
pub const MAX_DEPTH: usize = 64;
/// Most errors reported for one object.
pub const MAX_ERRORS: usize = 100;
/// Most CEL rule evaluations for one object.
pub const MAX_CEL_EVALUATIONS: usize = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Structure,
    Value,
    Cel,
}

/// A node whose `x-kubernetes-validations` run once the walk is over.
struct CelSite<'a> {
    pointer: String,
    schema: &'a Value,
    value: &'a Value,
    old: Option<&'a Value>,
}

struct Walker<'a> {
    options: ValidateOptions,
    errors: Vec<(Class, FieldError)>,
    warnings: Vec<String>,
    sites: Vec<CelSite<'a>>,
    depth_warned: bool,
    /// Where schema defaults were filled in: the CRD author's values, whose fields the
    /// narrowed schema may not hold (never an unknown field of the user's).
    filled: Vec<String>,
}

/// Validates `object` (the whole custom resource) against the CRD version's
/// `openAPIV3Schema`. `old_object` is given on UPDATE; transition rules (`oldSelf`) run only
/// where the old value exists.
pub fn validate(
    schema: &Value,
    object: &Value,
    old_object: Option<&Value>,
    options: ValidateOptions,
) -> ValidationOutcome {
    // The rules see the object as the API server stores it, its optional defaults filled.
    let (defaulted, filled) = match defaults::with_defaults(schema, object) {
        Some((copy, filled)) => (Some(copy), filled),
        None => (None, Vec::new()),
    };
    let object = defaulted.as_ref().unwrap_or(object);
    let defaulted_old = old_object.and_then(|old| defaults::with_defaults(schema, old));
    let old_object = defaulted_old.as_ref().map(|(copy, _)| copy).or(old_object);
    let mut w = Walker {
        options,
        errors: Vec::new(),
        warnings: Vec::new(),
        sites: Vec::new(),
        depth_warned: false,
        filled,
    };
    w.walk_root(schema, object, old_object);
    w.run_cel(schema);
    let Walker {
        mut errors,
        mut warnings,
        ..
    } = w;
    errors.sort_by_key(|(class, _)| *class);
    let mut errors: Vec<FieldError> = errors.into_iter().map(|(_, e)| e).collect();
    if errors.len() > MAX_ERRORS {
        warnings.push(format!(
            "crfix: {} more errors not reported (at most {MAX_ERRORS})",
            errors.len() - MAX_ERRORS
        ));
        errors.truncate(MAX_ERRORS);
    }
    warnings.dedup();
    ValidationOutcome { errors, warnings }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`), as the API server compares
/// decoded values.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The JSON type name of a value, as the API server names it in messages.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if is_integer(n) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// JSON numbers without a fraction are integers; so are floats with a zero fraction, which
/// the API server's validator accepts for `type: integer`.
fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// A value as the API server quotes it in `Invalid value: ...`.
fn shown(value: &Value) -> String {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => {
            let s = value.to_string();
            truncate(&s, 80)
        }
        Value::Array(_) => "\"array\"".into(),
        Value::Object(_) => "\"object\"".into(),
    }
}

/// At most `max` characters of `s`, and the `…` that marks a cut.
fn truncate(s: &str, max: usize) -> String {
    crate::text::truncate_chars(s, max + 1)
}

/// The type the API server names in a CEL rule's `Invalid value: "<type>"` message.
fn rule_type_name<'s>(site: &CelSite<'s>) -> &'s str {
    if schema::is_int_or_string(site.schema) {
        "int-or-string"
    } else {
        match schema::type_of(site.schema) {
            "" => json_type(site.value),
            t => t,
        }
    }
}

/// Where a rule's error points: the rule's node, or below it by the rule's `fieldPath`.
fn rule_pointer(rule: &Value, site: &CelSite<'_>) -> String {
    match rule.get("fieldPath").and_then(Value::as_str) {
        Some(fp) if !fp.is_empty() => match field_path_to_pointer(fp) {
            Some(suffix) => format!("{}{suffix}", site.pointer),
            None => site.pointer.clone(),
        },
        _ => site.pointer.clone(),
    }
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn uint(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0)
            .map(|f| f as u64)
    })
}

impl<'a> Walker<'a> {
    fn full(&self) -> bool {
        self.errors.len() > MAX_ERRORS
    }

    fn push(&mut self, class: Class, pointer: String, kind: ErrorKind, message: String) {
        if self.full() {
            return;
        }
        self.errors.push((
            class,
            FieldError {
                pointer,
                kind,
                message,
            },
        ));
    }

    fn warn(&mut self, message: String) {
        if !self.warnings.contains(&message) {
            self.warnings.push(message);
        }
    }

    fn walk_root(&mut self, schema: &'a Value, object: &'a Value, old: Option<&'a Value>) {
        let Some(obj) = object.as_object() else {
            self.type_error("", schema, object, "object");
            return;
        };
        // apiVersion, kind and metadata are the API server's, whatever the schema says; only
        // metadata.name and metadata.generateName may be restricted by a CRD schema.
        for key in ["apiVersion", "kind"] {
            if let Some(v) = obj.get(key) {
                if !v.is_string() {
                    self.type_error(&pointer::push("", key), schema, v, "string");
                }
            }
        }
        if let Some(meta) = obj.get("metadata") {
            match meta.as_object() {
                None => self.type_error("/metadata", schema, meta, "object"),
                Some(meta_obj) => {
                    if let Some(meta_schema) =
                        schema.get("properties").and_then(|p| p.get("metadata"))
                    {
                        for key in ["name", "generateName"] {
                            if let (Some(v), Some(s)) = (
                                meta_obj.get(key),
                                meta_schema.get("properties").and_then(|p| p.get(key)),
                            ) {
                                let p = pointer::push("/metadata", key);
                                self.walk(s, v, None, &p, 2);
                            }
                        }
                    }
                }
            }
        }
        self.walk_node(schema, object, old, "", 0, true);
    }

    fn type_error(&mut self, ptr: &str, _schema: &Value, value: &Value, expected: &str) {
        let actual = json_type(value);
        self.push(
            Class::Structure,
            ptr.to_string(),
            ErrorKind::Type {
                expected: expected.to_string(),
            },
            format!(
                "Invalid value: \"{actual}\": {} in body must be of type {expected}: \"{actual}\"",
                pointer::to_field_path(ptr)
            ),
        );
    }

    fn walk(
        &mut self,
        schema: &'a Value,
        value: &'a Value,
        old: Option<&'a Value>,
        ptr: &str,
        depth: usize,
    ) {
        self.walk_node(schema, value, old, ptr, depth, false);
    }

    fn walk_node(
        &mut self,
        schema: &'a Value,
        value: &'a Value,
        old: Option<&'a Value>,
        ptr: &str,
        depth: usize,
        root: bool,
    ) {
        if self.full() {
            return;
        }
        if depth > MAX_DEPTH {
            if !self.depth_warned {
                self.depth_warned = true;
                let path = pointer::to_field_path(ptr);
                let rest =
                    format!(" is nested more than {MAX_DEPTH} levels deep; not checked below");
                self.warn(fit(&[
                    Part::whole("crfix: "),
                    Part::path(&path, PATH_KEPT),
                    Part::whole(&rest),
                ]));
            }
            return;
        }
        if value.is_null() {
            if !schema::is_nullable(schema) && !schema.is_null() {
                let expected = match schema::type_of(schema) {
                    "" if schema::is_int_or_string(schema) => "int-or-string",
                    "" => "non-null",
                    t => t,
                };
                self.push(
                    Class::Structure,
                    ptr.to_string(),
                    ErrorKind::Null,
                    format!(
                        "Invalid value: \"null\": {} in body must be of type {expected}: \"null\"",
                        pointer::to_field_path(ptr)
                    ),
                );
            }
            return;
        }
        if !self.check_type(schema, value, ptr) {
            return;
        }
        self.check_value(schema, value, ptr);
        self.check_combinators(schema, value, ptr, depth);
        if schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
        {
            self.sites.push(CelSite {
                pointer: ptr.to_string(),
                schema,
                value,
                old,
            });
        }
        match value {
            Value::Object(obj) => self.walk_object(schema, obj, old, ptr, depth, root),
            Value::Array(items) => self.walk_array(schema, items, old, ptr, depth),
            _ => {}
        }
    }

    /// `false` when the value has the wrong type (and nothing below it is checked).
    fn check_type(&mut self, schema: &Value, value: &Value, ptr: &str) -> bool {
        if schema::is_int_or_string(schema) {
            let ok = match value {
                Value::String(_) => true,
                Value::Number(n) => is_integer(n),
                _ => false,
            };
            if !ok {
                self.type_error(ptr, schema, value, "int-or-string");
            }
            return ok;
        }
        let expected = schema::type_of(schema);
        let ok = match expected {
            "" => true,
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "number" => value.is_number(),
            "integer" => value.as_number().is_some_and(is_integer),
            _ => true,
        };
        if !ok {
            self.type_error(ptr, schema, value, expected);
        }
        ok
    }

    fn check_value(&mut self, schema: &Value, value: &Value, ptr: &str) {
        self.check_enum(schema, value, ptr);
        match value {
            Value::String(s) => self.check_string(schema, value, s, ptr),
            Value::Number(n) => self.check_number(schema, n, ptr),
            Value::Array(items) => {
                let len = items.len() as u64;
                self.check_size(schema, len, ptr, Size::Items);
                self.check_list_type(schema, items, ptr);
            }
            Value::Object(obj) => self.check_size(schema, obj.len() as u64, ptr, Size::Properties),
            _ => {}
        }
    }

    fn check_enum(&mut self, schema: &Value, value: &Value, ptr: &str) {
        let Some(allowed) = schema::enum_values(schema) else {
            return;
        };
        if allowed.iter().any(|a| values_equal(a, value)) {
            return;
        }
        let list = allowed
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        self.push(
            Class::Value,
            ptr.to_string(),
            ErrorKind::Enum {
                allowed: allowed.clone(),
            },
            format!(
                "Unsupported value: {}: supported values: {list}",
                shown(value)
            ),
        );
    }

    fn check_string(&mut self, schema: &Value, value: &Value, s: &str, ptr: &str) {
        let fp = || pointer::to_field_path(ptr);
        let mut chars: Option<u64> = None;
        let mut count = || *chars.get_or_insert_with(|| s.chars().count() as u64);
        let mut too_long = false;
        if let Some(limit) = schema.get("maxLength").and_then(uint) {
            if count() > limit {
                too_long = true;
                self.push(
                    Class::Value,
                    ptr.to_string(),
                    ErrorKind::MaxLength { limit },
                    format!("Too long: may not be more than {limit} bytes"),
                );
            }
        }
        if let Some(limit) = schema.get("minLength").and_then(uint) {
            if count() < limit {
                self.push(
                    Class::Value,
                    ptr.to_string(),
                    ErrorKind::MinLength { limit },
                    format!(
                        "Invalid value: {}: {} in body should be at least {limit} chars long",
                        shown(value),
                        fp()
                    ),
                );
            }
        }
        // A string over its maxLength is not matched against its pattern or format: the
        // object is rejected for its length anyway, and a hostile string could be megabytes.
        if too_long {
            return;
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            self.check_pattern(value, s, pattern, ptr);
        }
        if let Some(format) = schema.get("format").and_then(Value::as_str) {
            if formats::is_checked(format) && !formats::check(format, s) {
                self.push(
                    Class::Value,
                    ptr.to_string(),
                    ErrorKind::Format {
                        format: format.to_string(),
                    },
                    format!(
                        "Invalid value: {}: {} in body must be of type {format}: {}",
                        shown(value),
                        fp(),
                        shown(value)
                    ),
                );
            }
        }
    }

    fn check_pattern(&mut self, value: &Value, s: &str, pattern: &str, ptr: &str) {
        let fp = || pointer::to_field_path(ptr);
        // Matching costs the string's length times the pattern's: past the API server's
        // per-call limit for a CEL `matches`, crfix does not run it (a limit of its own).
        if cost::matches_bound(value, pattern) > cost::PER_CALL_LIMIT {
            let why = format!(
                ": the value is too long ({} bytes) to match in time",
                s.len()
            );
            self.warn(fit(&[
                Part::whole("crfix: pattern at "),
                Part::path(&fp(), PATH_KEPT),
                Part::whole(" not checked"),
                Part::rest(&why),
            ]));
            return;
        }
        match regex::is_match(pattern, s) {
            Ok(true) => {}
            Ok(false) => self.push(
                Class::Value,
                ptr.to_string(),
                ErrorKind::Pattern {
                    pattern: pattern.to_string(),
                },
                format!(
                    "Invalid value: {}: {} in body should match '{pattern}'",
                    shown(value),
                    fp()
                ),
            ),
            Err(e) => {
                let why = format!(": {e}");
                self.warn(fit(&[
                    Part::whole("crfix: pattern at "),
                    Part::path(&fp(), PATH_KEPT),
                    Part::whole(" not checked"),
                    Part::rest(&why),
                ]))
            }
        }
    }

    fn check_number(&mut self, schema: &Value, n: &serde_json::Number, ptr: &str) {
        let x = n.as_f64().unwrap_or(f64::NAN);
        for bound in [Bound::Minimum, Bound::Maximum] {
            let Some(limit) = schema.get(bound.key()).and_then(num) else {
                continue;
            };
            let exclusive = schema
                .get(bound.exclusive_key())
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if !bound.violated(x, limit, exclusive) {
                continue;
            }
            let shown_limit = schema
                .get(bound.key())
                .map(Value::to_string)
                .unwrap_or_default();
            let kind = match bound {
                Bound::Minimum => ErrorKind::Minimum { limit, exclusive },
                Bound::Maximum => ErrorKind::Maximum { limit, exclusive },
            };
            self.push(
                Class::Value,
                ptr.to_string(),
                kind,
                format!(
                    "Invalid value: {n}: {} in body should be {} {shown_limit}",
                    pointer::to_field_path(ptr),
                    bound.relation(exclusive)
                ),
            );
        }
        if let Some(factor) = schema.get("multipleOf").and_then(num) {
            if factor > 0.0 && !is_multiple(n, x, factor) {
                let shown_factor = schema
                    .get("multipleOf")
                    .map(Value::to_string)
                    .unwrap_or_default();
                self.push(
                    Class::Value,
                    ptr.to_string(),
                    ErrorKind::MultipleOf { factor },
                    format!(
                        "Invalid value: {n}: {} in body should be a multiple of {shown_factor}",
                        pointer::to_field_path(ptr)
                    ),
                );
            }
        }
    }

    /// `maxItems`/`minItems` of an array, `maxProperties`/`minProperties` of an object.
    fn check_size(&mut self, schema: &Value, len: u64, ptr: &str, size: Size) {
        if let Some(limit) = schema.get(size.max_key()).and_then(uint) {
            if len > limit {
                let kind = match size {
                    Size::Items => ErrorKind::MaxItems { limit },
                    Size::Properties => ErrorKind::MaxProperties { limit },
                };
                self.push(
                    Class::Value,
                    ptr.to_string(),
                    kind,
                    format!("Too many: {len}: must have at most {limit} items"),
                );
            }
        }
        if let Some(limit) = schema.get(size.min_key()).and_then(uint) {
            if len < limit {
                let kind = match size {
                    Size::Items => ErrorKind::MinItems { limit },
                    Size::Properties => ErrorKind::MinProperties { limit },
                };
                self.push(
                    Class::Value,
                    ptr.to_string(),
                    kind,
                    format!(
                        "Invalid value: {len}: {} in body should have at least {limit} {}",
                        pointer::to_field_path(ptr),
                        size.noun()
                    ),
                );
            }
        }
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`, as the API server's schema validator (kube-openapi)
    /// checks them: each branch is a schema the same value is validated against.
    fn check_combinators(&mut self, schema: &'a Value, value: &'a Value, ptr: &str, depth: usize) {
        // Only a failed combinator names the field: most nodes have none.
        let fp = || {
            if ptr.is_empty() {
                String::new()
            } else {
                pointer::to_field_path(ptr)
            }
        };
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            let results = self.branches(branches, value, ptr, depth, branches.len());
            if !results.iter().any(Vec::is_empty) {
                self.combinator(
                    ptr,
                    "anyOf",
                    format!("{:?} must validate at least one schema (anyOf)", fp()),
                );
                self.merge_best(results);
            }
        }
        if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
            let results = self.branches(branches, value, ptr, depth, branches.len());
            let valid = results.iter().filter(|r| r.is_empty()).count();
            if valid != 1 {
                let found = if valid == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {valid} valid alternatives")
                };
                self.combinator(
                    ptr,
                    "oneOf",
                    format!(
                        "{:?} must validate one and only one schema (oneOf). {found}",
                        fp()
                    ),
                );
                if valid == 0 {
                    self.merge_best(results);
                }
            }
        }
        if let Some(branches) = schema.get("allOf").and_then(Value::as_array) {
            let results = self.branches(branches, value, ptr, depth, branches.len());
            let failed = results.iter().filter(|r| !r.is_empty()).count();
            for errors in results {
                for (class, e) in errors {
                    self.push(class, e.pointer, e.kind, e.message);
                }
            }
            if failed > 0 {
                let none = if failed == branches.len() {
                    ". None validated"
                } else {
                    ""
                };
                self.combinator(
                    ptr,
                    "allOf",
                    format!("{:?} must validate all the schemas (allOf){none}", fp()),
                );
            }
        }
        if let Some(not) = schema.get("not").filter(|n| n.is_object()) {
            if self.branches(std::slice::from_ref(not), value, ptr, depth, 1)[0].is_empty() {
                self.combinator(
                    ptr,
                    "not",
                    format!("{:?} must not validate the schema (not)", fp()),
                );
            }
        }
    }

    /// The errors of `value` against each of `branches` (at most `n`), found by a walker of
    /// their own (unknown fields are not errors in a branch: it names only what it checks).
    fn branches(
        &mut self,
        branches: &'a [Value],
        value: &'a Value,
        ptr: &str,
        depth: usize,
        n: usize,
    ) -> Vec<Vec<(Class, FieldError)>> {
        let mut out = Vec::with_capacity(n);
        for branch in branches.iter().take(n) {
            let mut w = Walker {
                options: ValidateOptions {
                    report_unknown_fields: false,
                },
                errors: Vec::new(),
                warnings: Vec::new(),
                sites: Vec::new(),
                depth_warned: self.depth_warned,
                filled: Vec::new(),
            };
            w.walk(branch, value, None, ptr, depth + 1);
            for warning in w.warnings {
                self.warn(warning);
            }
            out.push(w.errors);
        }
        out
    }

    /// A failed `anyOf`/`oneOf`: the errors of the branch that came closest (fewest errors,
    /// the first of equals), as the API server reports its best failure.
    fn merge_best(&mut self, results: Vec<Vec<(Class, FieldError)>>) {
        let best = results
            .into_iter()
            .filter(|r| !r.is_empty())
            .reduce(|best, r| if r.len() < best.len() { r } else { best });
        for (class, e) in best.unwrap_or_default() {
            self.push(class, e.pointer, e.kind, e.message);
        }
    }

    /// The API server's error for a combinator: `Invalid value: ""` and no field.
    fn combinator(&mut self, ptr: &str, keyword: &str, message: String) {
        self.push(
            Class::Value,
            ptr.to_string(),
            ErrorKind::Combinator {
                keyword: keyword.to_string(),
            },
            format!("Invalid value: \"\": {message}"),
        );
    }

    fn check_required(&mut self, schema: &Value, obj: &Map<String, Value>, ptr: &str) {
        for name in schema::required(schema) {
            if !obj.contains_key(name) {
                self.push(
                    Class::Structure,
                    pointer::push(ptr, name),
                    ErrorKind::Required,
                    "Required value".to_string(),
                );
            }
        }
    }

    fn check_list_type(&mut self, schema: &Value, items: &[Value], ptr: &str) {
        match schema::list_type(schema) {
            "set" => {
                let mut seen: HashSet<String> = HashSet::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    if !seen.insert(canonical(item)) {
                        self.push(
                            Class::Value,
                            pointer::push(ptr, &i.to_string()),
                            ErrorKind::Duplicate,
                            format!("Duplicate value: {}", truncate(&item.to_string(), 80)),
                        );
                    }
                }
            }
            "map" => {
                let keys = schema::list_map_keys(schema);
                if keys.is_empty() {
                    return;
                }
                let item_schema = schema.get("items");
                let mut seen: HashSet<String> = HashSet::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let Some(obj) = item.as_object() else {
                        continue;
                    };
                    let key = map_key(obj, &keys, item_schema);
                    let shown_key = Value::Object(
                        keys.iter()
                            .filter_map(|k| {
                                key_value(obj, k, item_schema).map(|v| (k.to_string(), v.clone()))
                            })
                            .collect(),
                    );
                    if !seen.insert(key) {
                        self.push(
                            Class::Value,
                            pointer::push(ptr, &i.to_string()),
                            ErrorKind::Duplicate,
                            format!("Duplicate value: {}", truncate(&shown_key.to_string(), 120)),
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn walk_object(
        &mut self,
        schema: &'a Value,
        obj: &'a Map<String, Value>,
        old: Option<&'a Value>,
        ptr: &str,
        depth: usize,
        root: bool,
    ) {
        let embedded = schema::is_embedded(schema);
        if embedded {
            for key in ["apiVersion", "kind"] {
                let present = obj
                    .get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty());
                if !present {
                    self.push(
                        Class::Value,
                        pointer::push(ptr, key),
                        ErrorKind::EmbeddedResource,
                        "Required value: must not be empty".to_string(),
                    );
                }
            }
            if let Some(meta) = obj.get("metadata") {
                if !meta.is_object() {
                    self.type_error(&pointer::push(ptr, "metadata"), schema, meta, "object");
                }
            }
        }
        self.check_required(schema, obj, ptr);
        let props = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        let preserve = schema::preserves_unknown(schema)
            || additional.and_then(Value::as_bool).unwrap_or(false);
        for (key, child) in obj {
            if self.full() {
                return;
            }
            // The root's apiVersion/kind/metadata were checked by walk_root; an embedded
            // resource's just above.
            if (root || embedded) && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            let child_schema = props
                .and_then(|p| p.get(key))
                .or_else(|| additional.filter(|a| a.is_object()));
            let child_old = old.and_then(|o| o.get(key));
            match child_schema {
                Some(s) => {
                    let p = pointer::push(ptr, key);
                    self.walk(s, child, child_old, &p, depth + 1);
                }
                None if preserve || (schema::type_of(schema).is_empty() && props.is_none()) => {}
                None => {
                    let p = pointer::push(ptr, key);
                    if self.options.report_unknown_fields && !defaults::inside(&self.filled, &p) {
                        self.push(
                            Class::Structure,
                            p,
                            ErrorKind::Unknown,
                            "field not declared in schema".to_string(),
                        );
                    }
                }
            }
        }
    }

    fn walk_array(
        &mut self,
        schema: &'a Value,
        items: &'a [Value],
        old: Option<&'a Value>,
        ptr: &str,
        depth: usize,
    ) {
        let Some(item_schema) = schema.get("items").filter(|i| i.is_object()) else {
            return;
        };
        // Old values correlate only through map-type lists (by key), never by position.
        let old_items: Option<Vec<(String, &'a Value)>> = if schema::list_type(schema) == "map" {
            let keys = schema::list_map_keys(schema);
            old.and_then(Value::as_array).map(|olds| {
                olds.iter()
                    .filter_map(|o| {
                        o.as_object()
                            .map(|obj| (map_key(obj, &keys, Some(item_schema)), o))
                    })
                    .collect()
            })
        } else {
            None
        };
        let keys = schema::list_map_keys(schema);
        for (i, item) in items.iter().enumerate() {
            if self.full() {
                return;
            }
            let item_old = match (&old_items, item.as_object()) {
                (Some(olds), Some(obj)) => {
                    let k = map_key(obj, &keys, Some(item_schema));
                    olds.iter().find(|(ok, _)| *ok == k).map(|(_, v)| *v)
                }
                _ => None,
            };
            let p = pointer::push(ptr, &i.to_string());
            self.walk(item_schema, item, item_old, &p, depth + 1);
        }
    }

    fn run_cel(&mut self, schema: &'a Value) {
        // As the API server (customresource strategy, `hasBlockingErr`): no rule is evaluated
        // while the object has an error that makes its shape unlike the one the rules were
        // written for.
        if self.errors.iter().any(|(_, e)| is_blocking(&e.kind)) {
            if !self.sites.is_empty() || has_rules(schema, 0) {
                self.warn(format!("crfix: {NOT_CHECKED}"));
            }
            return;
        }
        let sites = std::mem::take(&mut self.sites);
        if sites.is_empty() {
            return;
        }
        // Every rule is evaluated: the CRD is one the API server accepted, or an inline one
        // whose estimates the settings' validation checked as the API server would
        // (`crd::check_rule_costs`). The per-call limit and the budgets bound each evaluation.
        let mut run = CelRun {
            cache: RuleCache::default(),
            evaluations: 0,
            budget: cost::RUNTIME_BUDGET,
            own_budget: OWN_BUDGET,
            own_exhausted: false,
        };
        for site in &sites {
            let Some(rules) = site
                .schema
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
            else {
                continue;
            };
            for rule in rules {
                if self.full() {
                    return;
                }
                let Some(text) = rule.get("rule").and_then(Value::as_str) else {
                    continue;
                };
                run.evaluations += 1;
                if run.evaluations > MAX_CEL_EVALUATIONS {
                    self.warn(format!(
                        "crfix: more than {MAX_CEL_EVALUATIONS} CEL evaluations; the rest were not evaluated"
                    ));
                    return;
                }
                if self.run_rule(&mut run, site, rule, text) == Flow::Stop {
                    return;
                }
            }
        }
    }

    /// Evaluates one rule at one site; `Flow::Stop` when no further rule may run (the API
    /// server's cost limits).
    fn run_rule(
        &mut self,
        run: &mut CelRun<'a>,
        site: &CelSite<'a>,
        rule: &'a Value,
        text: &'a str,
    ) -> Flow {
        let fp = || pointer::to_field_path(&site.pointer);
        let compiled = run.cache.get(text);
        let compiled = match compiled.as_ref() {
            Ok(c) => c,
            Err(why) => {
                let shown = rule_error_string(rule, text);
                self.warn(rule_warning(&fp(), " not evaluated: ", &shown, why));
                return Flow::Go;
            }
        };
        let optional_old = rule
            .get("optionalOldSelf")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        // Transition rules run only where the old value exists (never on CREATE), unless the
        // rule asks for an optional oldSelf.
        if compiled.transition && !optional_old && site.old.is_none() {
            return Flow::Go;
        }
        let old_self = || {
            if !compiled.transition {
                OldSelf::Absent
            } else if optional_old {
                OldSelf::Optional(site.old)
            } else {
                site.old.map(OldSelf::Value).unwrap_or(OldSelf::Absent)
            }
        };
        let shown = rule_error_string(rule, text);
        let bound = compiled.cost_bound(site.value, site.old);
        if let Some(flow) = self.charge_rule(run, site, text, compiled.transition, bound, &shown) {
            return flow;
        }
        let root = site.pointer.is_empty();
        let result = self::cel::evaluate(compiled, site.schema, site.value, old_self(), root);
        let message = match result {
            RuleResult::Pass => return Flow::Go,
            RuleResult::Unsupported(why) => {
                self.warn(rule_warning(&fp(), " not evaluated: ", &shown, &why));
                return Flow::Go;
            }
            RuleResult::Error(e) => self::cel::runtime_error_message(&e, &shown),
            RuleResult::Fail => match self.failure_message(run, rule, site, text, old_self()) {
                Ok(m) => m,
                Err(message) => {
                    self.push_cost_error(site, text, compiled.transition, message);
                    return Flow::Stop;
                }
            },
        };
        let reason = rule
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("FieldValueInvalid")
            .to_string();
        let message = reason_message(&reason, &message, site);
        self.push(
            Class::Cel,
            rule_pointer(rule, site),
            ErrorKind::Cel {
                rule: text.to_string(),
                reason,
                transition: compiled.transition,
            },
            message,
        );
        Flow::Go
    }

    /// Charges a rule's cost `bound` to the API server's budgets and to crfix's own:
    /// `Some(flow)` when the rule is not to be evaluated (an error or a warning says why).
    fn charge_rule(
        &mut self,
        run: &mut CelRun<'a>,
        site: &CelSite<'a>,
        text: &str,
        transition: bool,
        bound: u64,
        shown: &str,
    ) -> Option<Flow> {
        if let Some(message) = charge(&mut run.budget, bound, &format!("rule: {shown}")) {
            self.push_cost_error(site, text, transition, message);
            return Some(Flow::Stop);
        }
        if bound > run.own_budget {
            if !run.own_exhausted {
                run.own_exhausted = true;
                let path = pointer::to_field_path(&site.pointer);
                let rest = format!(
                    " of {OWN_BUDGET} (the API server's is {})",
                    cost::RUNTIME_BUDGET
                );
                self.warn(fit(&[
                    Part::whole("crfix: CEL rules from "),
                    Part::path(&path, PATH_KEPT),
                    Part::whole(" on not evaluated: over crfix's own cost budget"),
                    Part::rest(&rest),
                ]));
            }
            return Some(Flow::Go);
        }
        run.own_budget -= bound;
        None
    }

    /// A rule refused for its cost, at the rule's node, in the API server's words.
    fn push_cost_error(
        &mut self,
        site: &CelSite<'a>,
        text: &str,
        transition: bool,
        message: String,
    ) {
        self.push(
            Class::Cel,
            site.pointer.clone(),
            ErrorKind::Cel {
                rule: text.to_string(),
                reason: "FieldValueInvalid".to_string(),
                transition,
            },
            format!("Invalid value: \"{}\": {message}", rule_type_name(site)),
        );
    }

    /// The message of a rule that evaluated to false: its `messageExpression`, else its
    /// `message`, else the rule itself. `Err` (the API server's words) when the
    /// `messageExpression` is over the cost limits: no further rule runs.
    fn failure_message(
        &mut self,
        run: &mut CelRun<'a>,
        rule: &Value,
        site: &CelSite<'a>,
        text: &str,
        old_self: OldSelf<'_>,
    ) -> Result<String, String> {
        let fp = pointer::to_field_path(&site.pointer);
        if let Some(expr) = rule.get("messageExpression").and_then(Value::as_str) {
            let what = format!("messageExpression: {expr:?}");
            let outcome =
                self::cel::message_cost_bound(expr, site.value, site.old).map(
                    |bound| match charge(&mut run.budget, bound, &what) {
                        Some(message) => Err(message),
                        None => Ok(self::cel::evaluate_message(
                            expr,
                            site.schema,
                            site.value,
                            old_self,
                            site.pointer.is_empty(),
                        )),
                    },
                );
            match outcome {
                Ok(Err(too_expensive)) => return Err(too_expensive),
                Ok(Ok(Ok(m))) if !m.trim().is_empty() => return Ok(m.trim().to_string()),
                Ok(Ok(Ok(_))) => {}
                Ok(Ok(Err(e))) | Err(e) => {
                    let why = format!(": {e}");
                    self.warn(fit(&[
                        Part::whole("crfix: messageExpression at "),
                        Part::path(&fp, PATH_KEPT),
                        Part::whole(" not evaluated"),
                        Part::ends(&why, RULE_KEPT),
                    ]))
                }
            }
        }
        Ok(rule
            .get("message")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("failed rule: {}", text.trim())))
    }
}

/// Characters of a field path's end, and of a rule's message, that a warning keeps however
/// long the rest (warnings are cut at `MAX_WARNING_CHARS`).
const PATH_KEPT: usize = 28;
const RULE_KEPT: usize = 28;

/// `parts` in one warning, at most `MAX_WARNING_CHARS` characters (see [`text::fit`]).
fn fit(parts: &[Part<'_>]) -> String {
    text::fit(parts, MAX_WARNING_CHARS)
}

/// A warning about a CEL rule: `crfix: CEL rule at <path><what><message or rule>: <why>`;
/// the path's tail and the rule's message survive the cut, `why` is cut first.
fn rule_warning(path: &str, what: &str, shown: &str, why: &str) -> String {
    let shown = text::one_line(shown, 300);
    let why = format!(": {}", text::one_line(why, 300));
    fit(&[
        Part::whole("crfix: CEL rule at "),
        Part::path(path, PATH_KEPT),
        Part::whole(what),
        Part::ends(&shown, RULE_KEPT),
        Part::rest(&why),
    ])
}

/// The API server's words when the rules of an object are not evaluated because of other
/// errors (less "existing" before "errors", so that `crfix: ` and they fit in one warning's
/// 120 characters).
pub const NOT_CHECKED: &str = "some validation rules were not checked because the object was \
     invalid; correct the errors to complete validation";

/// Whether the next rule is evaluated, or none is any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

/// The state of one object's rule evaluations.
struct CelRun<'a> {
    cache: RuleCache<'a>,
    evaluations: usize,
    /// What is left of the API server's per-object budget.
    budget: u64,
    /// What is left of crfix's own, smaller, budget; once a rule went over it, no further
    /// rule is evaluated.
    own_budget: u64,
    own_exhausted: bool,
}

/// crfix's own cost budget per object. The API server's (10,000,000) is "roughly 1 second" of
/// cel-go; crfix's interpreter and `regex-lite` in wasm are several times slower per unit of
/// cost, and policy-server gives an evaluation 2 s. Rules past it are not evaluated (a
/// warning says so): crfix's limit, never held against the object.
pub const OWN_BUDGET: u64 = 2_000_000;

/// Charges `bound` to `budget`; `Some(message)` (the API server's words, `what` naming the
/// rule or messageExpression) when it is over the per-call limit or the budget.
fn charge(budget: &mut u64, bound: u64, what: &str) -> Option<String> {
    if bound > cost::PER_CALL_LIMIT {
        // The API server cancels the call at the limit; that much is charged first.
        if cost::PER_CALL_LIMIT > *budget {
            return Some(OUT_OF_BUDGET.to_string());
        }
        return Some(format!(
            "'{CALL_LIMIT_EXCEEDED}': no further validation rules will be run due to call \
             cost exceeds limit for {what}"
        ));
    }
    if bound > *budget {
        return Some(OUT_OF_BUDGET.to_string());
    }
    *budget -= bound;
    None
}

/// cel-go's error when a call goes over its cost limit.
const CALL_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";
/// The API server's error when the object's rules go over the budget.
const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// A failed rule's message with the API server's wording for its `reason`.
fn reason_message(reason: &str, message: &str, site: &CelSite<'_>) -> String {
    match reason {
        "FieldValueRequired" => format!("Required value: {message}"),
        "FieldValueForbidden" => format!("Forbidden: {message}"),
        "FieldValueDuplicate" => format!("Duplicate value: {message}"),
        _ => format!("Invalid value: \"{}\": {message}", rule_type_name(site)),
    }
}

/// The rule as the API server names it in errors: its message if it has one, else the rule.
fn rule_error_string(rule: &Value, text: &str) -> String {
    rule.get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .unwrap_or(text.trim())
        .to_string()
}

/// Whether `outcome`, from a view of the schema that leaves out the rules at nodes the object
/// does not reach (`schema_view`), may read otherwise against the whole schema: the errors are
/// the same, but a blocking error stops rules the object, once corrected, may reach, which
/// only the whole schema knows of (the "not checked" warning).
pub fn may_differ_on_the_whole_schema(outcome: &ValidationOutcome) -> bool {
    let said = outcome.warnings.iter().any(|w| w.ends_with(NOT_CHECKED));
    let blocked =
        outcome.errors.len() >= MAX_ERRORS || outcome.errors.iter().any(|e| is_blocking(&e.kind));
    blocked && !said
}

/// The API server skips every rule when schema validation found one of these (`hasBlockingErr`:
/// NotSupported, Required, TooLong, TooMany, TypeInvalid). A wrong `format` is a TypeInvalid
/// there; a forbidden `null` is crfix's type error.
fn is_blocking(kind: &ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Enum { .. }
            | ErrorKind::Required
            | ErrorKind::EmbeddedResource
            | ErrorKind::MaxLength { .. }
            | ErrorKind::MaxItems { .. }
            | ErrorKind::MaxProperties { .. }
            | ErrorKind::Type { .. }
            | ErrorKind::Null
            | ErrorKind::Format { .. }
    )
}

/// The schema declares `x-kubernetes-validations` somewhere (the API server then has a rule
/// validator for the resource).
fn has_rules(schema: &Value, depth: usize) -> bool {
    if depth > 2 * MAX_DEPTH {
        return false;
    }
    match schema {
        Value::Object(map) => {
            map.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|r| !r.is_empty())
                || map.iter().any(|(k, v)| {
                    !matches!(k.as_str(), "enum" | "default" | "example") && has_rules(v, depth + 1)
                })
        }
        Value::Array(items) => items.iter().any(|v| has_rules(v, depth + 1)),
        _ => false,
    }
}

fn is_multiple(n: &serde_json::Number, x: f64, factor: f64) -> bool {
    if let (Some(i), true) = (n.as_i64(), factor.fract() == 0.0) {
        let f = factor as i64;
        return f == 0 || i % f == 0;
    }
    let q = x / factor;
    (q - q.round()).abs() < 1e-9
}

/// A canonical text of a value, for set/map uniqueness (numbers by value).
fn canonical(value: &Value) -> String {
    match value {
        Value::Number(n) if is_integer(n) && !n.is_i64() && !n.is_u64() => {
            format!("{}", n.as_f64().unwrap_or(0.0) as i64)
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        _ => value.to_string(),
    }
}

/// The value of a list-map key of an item: the item's own or the key's schema default.
fn key_value<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    item_schema: Option<&'v Value>,
) -> Option<&'v Value> {
    obj.get(key).or_else(|| {
        item_schema
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(key))
            .and_then(schema::default_value)
    })
}

fn map_key(obj: &Map<String, Value>, keys: &[&str], item_schema: Option<&Value>) -> String {
    keys.iter()
        .map(|k| {
            key_value(obj, k, item_schema)
                .map(canonical)
                .unwrap_or_else(|| "∅".into())
        })
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

/// A CEL rule's `fieldPath` (`.spec.a`, `.b['c.d']`, `.list[0]`) as a pointer suffix.
pub fn field_path_to_pointer(path: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            out = pointer::push(&out, &r[..end]);
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            out = pointer::push(&out, &r[..end]);
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let idx = &r[..end];
            if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            out = pointer::push(&out, idx);
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests;
