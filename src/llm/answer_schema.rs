//! The JSON Schema of an acceptable answer, sent in the Correction request so that a backend
//! that can constrain decoding (crfix-llm-proxy's `--structured-output`) cannot produce an
//! answer of any other shape. Both schemas keep to the subset every dialect accepts (OpenAI's
//! strict mode: root object, every property required, `additionalProperties: false`).
//! crfix checks every answer as before, whether the backend honoured the schema or not.

use serde_json::{json, Value};

use crate::pointer;
use crate::schema;

/// Most paths a patch answer may name.
const MAX_PATCH_PATHS: usize = 64;

/// `{"choice": n}` with `n` one of `0..=offered` (0: cannot be fixed).
pub fn choice(offered: usize) -> Value {
    let numbers: Vec<usize> = (0..=offered).collect();
    json!({
        "type": "object",
        "properties": {"choice": {"type": "integer", "enum": numbers}},
        "required": ["choice"],
        "additionalProperties": false
    })
}

/// `{"patch": [...]}`: at most `max_operations` operations, each `add`, `replace` or
/// `remove` at an erroring path (or a property of an erroring object), with a scalar or a
/// list of strings as its value (`null` for `remove`). An empty patch is the refusal.
pub fn patch(crd_schema: &Value, error_pointers: &[&str], max_operations: usize) -> Value {
    let mut paths: Vec<String> = Vec::new();
    for p in error_pointers {
        if !paths.iter().any(|q| q == p) {
            paths.push(p.to_string());
        }
        let Some(node) = schema::node_at(crd_schema, p) else {
            continue;
        };
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for name in properties.keys() {
                let child = pointer::push(p, name);
                if !paths.contains(&child) {
                    paths.push(child);
                }
            }
        }
    }
    paths.truncate(MAX_PATCH_PATHS);
    json!({
        "type": "object",
        "properties": {
            "patch": {
                "type": "array",
                "maxItems": max_operations,
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": ["add", "replace", "remove"]},
                        "path": {"type": "string", "enum": paths},
                        "value": {"anyOf": [
                            {"type": "string"},
                            {"type": "number"},
                            {"type": "boolean"},
                            {"type": "array", "items": {"type": "string"}},
                            {"type": "null"}
                        ]}
                    },
                    "required": ["op", "path", "value"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["patch"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_offers_zero_to_n() {
        let s = choice(3);
        assert_eq!(s["properties"]["choice"]["enum"], json!([0, 1, 2, 3]));
        assert_eq!(s["additionalProperties"], json!(false));
    }

    #[test]
    fn patch_paths_are_the_errors_and_their_properties() {
        let crd = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "object",
            "properties": {"c": {"type": "string"}}}}}}});
        let s = patch(&crd, &["/spec/b", "/spec/a", "/spec/zz"], 5);
        let items = &s["properties"]["patch"]["items"];
        assert_eq!(
            items["properties"]["path"]["enum"],
            json!(["/spec/b", "/spec/b/c", "/spec/a", "/spec/zz"])
        );
        assert_eq!(s["properties"]["patch"]["maxItems"], json!(5));
    }
}
