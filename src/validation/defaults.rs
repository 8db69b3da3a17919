//! The object as the API server validates it: it applies the schema's `default`s when it
//! decodes a request, before any rule runs, so a rule may read a field the user left out
//! (`self.type == 'Exact'` over a match whose `type` defaults to `Exact`). Requests from the
//! API server carry them already; objects checked offline (kwctl, `crfix-eval`, `crfix fix`)
//! do not, so crfix fills them in on the copy it validates, never in the object it returns.
//!
//! Only optional properties are filled. A required property left out is reported as
//! `Required` and its default written by the repair, where the user sees it
//! (docs/validation.md, "Differences from the API server, on purpose").

use serde_json::{Map, Value};

use crate::pointer;
use crate::schema;

/// Deepest nesting filled.
const MAX_DEPTH: usize = 128;

/// `object` with the defaults of the optional properties it leaves out, and where each was
/// put (JSON pointers); `None` when it leaves none out (the common case, which costs one walk
/// and no copy).
pub fn with_defaults(schema: &Value, object: &Value) -> Option<(Value, Vec<String>)> {
    if !missing_default(schema, object, 0) {
        return None;
    }
    let mut copy = object.clone();
    let mut filled = Vec::new();
    fill(schema, &mut copy, "", &mut filled, 0);
    Some((copy, filled))
}

/// The optional properties of `node` that `object` leaves out and that have a default: their
/// names and defaults.
fn defaulted<'s>(
    node: &'s Value,
    object: &'s Map<String, Value>,
) -> impl Iterator<Item = (&'s String, &'s Value)> {
    node.get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(move |(name, _)| {
            !object.contains_key(name.as_str()) && !schema::required(node).any(|r| r == *name)
        })
        .filter_map(|(name, property)| Some((name, schema::default_value(property)?)))
}

/// The schema node of property `key` of an object `node` describes: its own, or
/// `additionalProperties`.
fn property_schema<'v>(node: &'v Value, key: &str) -> Option<&'v Value> {
    node.get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
}

/// The schema node that governs each child of `value`: its properties, its `items`, its
/// `additionalProperties`.
fn children<'v>(node: &'v Value, value: &'v Value) -> Vec<(&'v Value, &'v Value)> {
    match value {
        Value::Object(map) => map
            .iter()
            .filter_map(|(k, v)| property_schema(node, k).map(|n| (n, v)))
            .collect(),
        Value::Array(items) => match node.get("items").filter(|i| i.is_object()) {
            Some(item) => items.iter().map(|v| (item, v)).collect(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn missing_default(node: &Value, value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    if let Value::Object(map) = value {
        if defaulted(node, map).next().is_some() {
            return true;
        }
    }
    children(node, value)
        .into_iter()
        .any(|(n, v)| missing_default(n, v, depth + 1))
}

fn fill(node: &Value, value: &mut Value, at: &str, filled: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            let added: Vec<(String, Value)> = defaulted(node, map)
                .map(|(k, d)| (k.clone(), d.clone()))
                .collect();
            for (k, d) in added {
                filled.push(pointer::push(at, &k));
                map.insert(k, d);
            }
            for (k, v) in map.iter_mut() {
                if let Some(n) = property_schema(node, k) {
                    fill(n, v, &pointer::push(at, k), filled, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = node.get("items").filter(|i| i.is_object()) {
                for (i, v) in items.iter_mut().enumerate() {
                    fill(
                        item,
                        v,
                        &pointer::push(at, &i.to_string()),
                        filled,
                        depth + 1,
                    );
                }
            }
        }
        _ => {}
    }
}

/// Is `p` at or under one of the `filled` pointers?
pub fn inside(filled: &[String], p: &str) -> bool {
    filled.iter().any(|f| {
        p == f
            || p.strip_prefix(f.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "default": "x"},
            "matches": {"type": "array", "items": {"type": "object", "properties": {
                "type": {"type": "string", "default": "Exact"},
                "value": {"type": "string"},
                "port": {"type": "object", "default": {}, "properties": {
                    "protocol": {"type": "string", "default": "TCP"}}}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"weight": {"type": "integer", "default": 1}}}}}})
    }

    #[test]
    fn optional_defaults_are_filled_at_every_depth_required_ones_are_not() {
        let object = json!({"matches": [{"value": "/a"}, {"type": "Prefix"}],
                            "labels": {"a": {}}});
        let (filled, at) = with_defaults(&schema(), &object).expect("some are missing");
        assert_eq!(
            at,
            [
                "/labels/a/weight",
                "/matches/0/port",
                "/matches/0/type",
                "/matches/0/port/protocol",
                "/matches/1/port",
                "/matches/1/port/protocol"
            ]
        );
        assert!(inside(&at, "/matches/0/port/protocol") && !inside(&at, "/matches/0/portx"));
        assert_eq!(
            filled,
            json!({"matches": [
                       {"value": "/a", "type": "Exact", "port": {"protocol": "TCP"}},
                       {"type": "Prefix", "port": {"protocol": "TCP"}}],
                   "labels": {"a": {"weight": 1}}})
        );
    }

    #[test]
    fn an_object_with_every_default_written_is_not_copied() {
        let object = json!({"name": "n", "matches": [
            {"type": "Exact", "port": {"protocol": "UDP"}}], "labels": {}});
        assert_eq!(with_defaults(&schema(), &object), None);
        // A value of another type than the schema's is left to validation.
        assert_eq!(with_defaults(&schema(), &json!({"matches": "x"})), None);
    }
}
