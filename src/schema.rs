//! Queries on a structural schema (`openAPIV3Schema`).
//! OWNER: validation engineer.

use serde_json::Value;

/// The schema node that governs the value at `pointer` (through `properties`, `items`,
/// `additionalProperties`), or `None` when the schema does not describe it.
pub fn node_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut node = schema;
    for token in crate::pointer::tokens(pointer) {
        node = if let Some(p) = node.get("properties").and_then(|p| p.get(&token)) {
            p
        } else if let Some(items) = node.get("items") {
            items
        } else if let Some(ap) = node.get("additionalProperties").filter(|v| v.is_object()) {
            ap
        } else {
            return None;
        };
    }
    Some(node)
}
