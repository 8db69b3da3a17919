//! Enum values: case, whitespace and separators, a scalar of the wrong type spelling an
//! allowed value, and the single unambiguous nearest allowed value.

use serde_json::Value;

use crate::nearest::{self, Closeness, Pick};

/// How an enum value was repaired.
pub struct EnumFix {
    pub value: Value,
    pub reason: &'static str,
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `Ok(None)`: nothing to say; `Err`: a repair considered and refused, and why.
pub fn repair(value: &Value, allowed: &[Value]) -> Result<Option<EnumFix>, String> {
    let Some(text) = scalar_text(value) else {
        return Ok(None);
    };
    // The same text as an allowed value of another JSON type (`1` for `"1"`).
    let same_text: Vec<&Value> = allowed
        .iter()
        .filter(|a| scalar_text(a).as_deref() == Some(text.as_str()))
        .collect();
    if let [only] = same_text.as_slice() {
        if *only != value {
            return Ok(Some(EnumFix {
                value: (*only).clone(),
                reason: "enum",
            }));
        }
    }
    let names: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
    if names.is_empty() || !value.is_string() {
        return Ok(None);
    }
    match nearest::pick(&text, &names) {
        Pick::One(name, closeness) => Ok(Some(EnumFix {
            value: Value::String(name.to_string()),
            reason: match closeness {
                Closeness::Canonical => "enum",
                Closeness::Distance(_) => "enum: closest allowed value",
            },
        })),
        Pick::Ambiguous(names) => Err(format!(
            "ambiguous, as close to {} as to {}",
            names[0], names[1]
        )),
        Pick::NoneClose => Err(format!(
            "no allowed value is close ({})",
            names.iter().take(6).copied().collect::<Vec<_>>().join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn allowed() -> Vec<Value> {
        vec![json!("CatalogProvided"), json!("SelfCertified")]
    }

    #[test]
    fn repairs_spelling_and_types() {
        let fix = repair(&json!("catalog-provided"), &allowed())
            .unwrap()
            .unwrap();
        assert_eq!(fix.value, json!("CatalogProvided"));
        assert_eq!(fix.reason, "enum");
        let fix = repair(&json!("SelfCertifed"), &allowed()).unwrap().unwrap();
        assert_eq!(fix.value, json!("SelfCertified"));
        assert_eq!(fix.reason, "enum: closest allowed value");
        let fix = repair(&json!(2), &[json!("1"), json!("2")])
            .unwrap()
            .unwrap();
        assert_eq!(fix.value, json!("2"));
        let fix = repair(&json!("3"), &[json!(3), json!(4)]).unwrap().unwrap();
        assert_eq!(fix.value, json!(3));
    }

    #[test]
    fn refuses_far_and_ambiguous_values() {
        let e = repair(&json!("Image"), &[json!("Catalog")]).err().unwrap();
        assert!(e.contains("no allowed value is close"), "{e}");
        let e = repair(&json!("ab-c"), &[json!("abd"), json!("abe")])
            .err()
            .unwrap();
        assert!(e.contains("ambiguous"), "{e}");
        assert!(repair(&json!({"a": 1}), &allowed()).unwrap().is_none());
    }
}
