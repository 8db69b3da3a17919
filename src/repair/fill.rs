//! Values the schema or the old object determine: a missing required property with a schema
//! `default` or a single allowed value, an immutable value put back from `oldObject`, and a
//! `null` the API server would prune anyway.

use serde_json::Value;

use super::{Edit, Proposal, Verify, PRIORITY_FILL, PRIORITY_IMMUTABLE, PRIORITY_VALUE};
use crate::pointer;
use crate::schema;

/// A missing required property at `at`, from the schema alone.
pub fn required(schema_root: &Value, object: &Value, at: &str) -> Option<Proposal> {
    let (parent, _) = pointer::split_last(at)?;
    object.pointer(parent)?.as_object()?;
    if object.pointer(at).is_some() {
        return None;
    }
    let node = schema::node_at(schema_root, at)?;
    let (value, rule, reason) = if let Some(default) = node.get("default") {
        (default.clone(), "default", "schema default")
    } else {
        match node
            .get("enum")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([only]) => (only.clone(), "only-value", "only allowed value"),
            _ => return None,
        }
    };
    Some(Proposal {
        path: at.to_string(),
        edit: Edit::Set(value),
        rule,
        reason: reason.to_string(),
        verify: Verify::NoErrorUnder,
        priority: PRIORITY_FILL,
    })
}

/// Is this CEL rule exactly "the value may not change"?
pub fn is_immutability_rule(rule: &str) -> bool {
    let compact: String = rule.chars().filter(|c| !c.is_whitespace()).collect();
    compact == "self==oldSelf" || compact == "oldSelf==self"
}

/// Puts back the old object's value at `at`.
pub fn immutable(object: &Value, old_object: Option<&Value>, at: &str) -> Option<Proposal> {
    let old = old_object?.pointer(at)?;
    let current = object.pointer(at)?;
    if old == current {
        return None;
    }
    Some(Proposal {
        path: at.to_string(),
        edit: Edit::Set(old.clone()),
        rule: "immutable",
        reason: "immutable: restored from old object".to_string(),
        verify: Verify::NoErrorAt,
        priority: PRIORITY_IMMUTABLE,
    })
}

/// Drops a `null` property (not an array item), as the API server prunes it.
pub fn null(object: &Value, at: &str) -> Option<Proposal> {
    let (parent, _) = pointer::split_last(at)?;
    object.pointer(parent)?.as_object()?;
    if !object.pointer(at)?.is_null() {
        return None;
    }
    Some(Proposal {
        path: at.to_string(),
        edit: Edit::Remove,
        rule: "null",
        reason: "null dropped, as the API server prunes it".to_string(),
        verify: Verify::Nothing,
        priority: PRIORITY_VALUE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"properties": {"spec": {"properties": {
            "policy": {"type": "string", "default": "CatalogProvided"},
            "sourceType": {"type": "string", "enum": ["Catalog"]},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "name": {"type": "string"}
        }}}})
    }

    #[test]
    fn fills_defaults_and_single_values_only() {
        let o = json!({"spec": {}});
        let p = required(&schema(), &o, "/spec/policy").unwrap();
        assert!(matches!(p.edit, Edit::Set(ref v) if v == "CatalogProvided"));
        assert_eq!(p.reason, "schema default");
        let p = required(&schema(), &o, "/spec/sourceType").unwrap();
        assert!(matches!(p.edit, Edit::Set(ref v) if v == "Catalog"));
        assert_eq!(p.reason, "only allowed value");
        assert!(required(&schema(), &o, "/spec/color").is_none());
        assert!(required(&schema(), &o, "/spec/name").is_none());
        assert!(required(&schema(), &json!({}), "/spec/policy").is_none());
    }

    #[test]
    fn restores_immutable_values() {
        assert!(is_immutability_rule("self == oldSelf"));
        assert!(is_immutability_rule(" oldSelf==self "));
        assert!(!is_immutability_rule("self >= oldSelf"));
        let old = json!({"spec": {"name": "a"}});
        let new = json!({"spec": {"name": "b"}});
        let p = immutable(&new, Some(&old), "/spec/name").unwrap();
        assert!(matches!(p.edit, Edit::Set(ref v) if v == "a"));
        assert!(immutable(&new, None, "/spec/name").is_none());
        assert!(immutable(&old, Some(&old), "/spec/name").is_none());
    }

    #[test]
    fn drops_nulls_from_objects_only() {
        assert!(null(&json!({"spec": {"a": null}}), "/spec/a").is_some());
        assert!(null(&json!({"spec": {"a": [null]}}), "/spec/a/0").is_none());
        assert!(null(&json!({"spec": {"a": 1}}), "/spec/a").is_none());
    }
}
