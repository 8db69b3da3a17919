//! Queries on a structural schema (`openAPIV3Schema`).

use serde_json::Value;

/// The schema node that governs the value at `pointer` (through `properties`, `items`,
/// `additionalProperties`), or `None` when the schema does not describe it.
pub fn node_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut node = schema;
    for token in crate::pointer::tokens(pointer) {
        node = child(node, &token)?;
    }
    Some(node)
}

/// The schema node of the child `token` (a property name or an array index) of a value that
/// `node` governs.
pub fn child<'a>(node: &'a Value, token: &str) -> Option<&'a Value> {
    if let Some(p) = node.get("properties").and_then(|p| p.get(token)) {
        return Some(p);
    }
    if let Some(items) = node.get("items").filter(|i| i.is_object()) {
        // An index, or `-` (JSON Patch's "append").
        if token == "-" || (!token.is_empty() && token.bytes().all(|b| b.is_ascii_digit())) {
            return Some(items);
        }
    }
    node.get("additionalProperties").filter(|v| v.is_object())
}

/// `type` of the node (`""` when absent).
pub fn type_of(node: &Value) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or("")
}

fn flag(node: &Value, key: &str) -> bool {
    node.get(key).and_then(Value::as_bool).unwrap_or(false)
}

pub fn is_int_or_string(node: &Value) -> bool {
    flag(node, "x-kubernetes-int-or-string")
}

pub fn preserves_unknown(node: &Value) -> bool {
    flag(node, "x-kubernetes-preserve-unknown-fields")
}

pub fn is_embedded(node: &Value) -> bool {
    flag(node, "x-kubernetes-embedded-resource")
}

pub fn is_nullable(node: &Value) -> bool {
    flag(node, "nullable")
}

/// `x-kubernetes-list-type` (`atomic` when absent).
pub fn list_type(node: &Value) -> &str {
    node.get("x-kubernetes-list-type")
        .and_then(Value::as_str)
        .unwrap_or("atomic")
}

/// `x-kubernetes-list-map-keys` of a `map` list.
pub fn list_map_keys(node: &Value) -> Vec<&str> {
    node.get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `required` property names.
pub fn required(node: &Value) -> impl Iterator<Item = &str> {
    node.get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The node's `enum` values, if any.
pub fn enum_values(node: &Value) -> Option<&Vec<Value>> {
    node.get("enum").and_then(Value::as_array)
}

/// The node's `default`, if any.
pub fn default_value(node: &Value) -> Option<&Value> {
    node.get("default")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn node_at_follows_properties_items_and_maps() {
        let s = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}
            }}
        }});
        assert_eq!(
            node_at(&s, "/spec/list/0/a"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            node_at(&s, "/spec/labels/x"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(node_at(&s, "/spec/nope"), None);
        assert_eq!(node_at(&s, "/spec/list/x"), None);
        assert_eq!(node_at(&s, ""), Some(&s));
    }
}
