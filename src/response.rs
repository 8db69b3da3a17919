//! Stage 8: turn the pipeline's outcome into Kubewarden's `ValidationResponse`:
//! warnings (one per change), the `crfix.dev/repair` annotation, audit annotations, and
//! bounded rejection messages.

use std::collections::HashMap;

use kubewarden_policy_sdk::response::ValidationResponse;
use serde_json::Value;

use crate::guardrails::REPAIR_ANNOTATION;
use crate::types::{Change, ChangeSource, FieldError};

/// Longest rejection message; the API server shows the whole message to the user.
pub const MAX_MESSAGE_BYTES: usize = 2048;
/// Longest warning; kubectl shows each on its own line.
pub const MAX_WARNING_CHARS: usize = 120;
/// Kubernetes truncates long warning lists; keep the reader's attention.
pub const MAX_WARNINGS: usize = 30;
/// Status code of a rejected invalid object (the API server's own code for invalid objects).
pub const CODE_INVALID: u16 = 422;
pub const CODE_BAD_REQUEST: u16 = 400;

pub fn accept(warnings: Vec<String>) -> ValidationResponse {
    ValidationResponse {
        accepted: true,
        message: None,
        code: None,
        mutated_object: None,
        audit_annotations: None,
        warnings: non_empty(bound_warnings(warnings)),
    }
}

pub fn reject(
    message: String,
    code: u16,
    warnings: Vec<String>,
    audit: HashMap<String, String>,
) -> ValidationResponse {
    ValidationResponse {
        accepted: false,
        message: Some(truncate_bytes(&message, MAX_MESSAGE_BYTES)),
        code: Some(code),
        mutated_object: None,
        audit_annotations: if audit.is_empty() { None } else { Some(audit) },
        warnings: non_empty(bound_warnings(warnings)),
    }
}

pub fn mutate(
    object: Value,
    warnings: Vec<String>,
    audit: HashMap<String, String>,
) -> ValidationResponse {
    ValidationResponse {
        accepted: true,
        message: None,
        code: None,
        mutated_object: Some(object),
        audit_annotations: if audit.is_empty() { None } else { Some(audit) },
        warnings: non_empty(bound_warnings(warnings)),
    }
}

fn non_empty(v: Vec<String>) -> Option<Vec<String>> {
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

fn bound_warnings(mut warnings: Vec<String>) -> Vec<String> {
    let total = warnings.len();
    if total > MAX_WARNINGS {
        warnings.truncate(MAX_WARNINGS - 1);
        warnings.push(format!("crfix: … and {} more", total - (MAX_WARNINGS - 1)));
    }
    warnings
        .into_iter()
        .map(|w| truncate_chars(&w, MAX_WARNING_CHARS))
        .collect()
}

/// Cuts at a character boundary and marks the cut with `…`.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

pub fn truncate_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// A value, short, for a warning.
pub fn short_value(v: &Value) -> String {
    truncate_chars(&v.to_string(), 32)
}

/// One warning per change: `crfix: set /spec/source/sourceType "catalog" → "Catalog" (enum)`.
pub fn change_warning(change: &Change) -> String {
    let why = match &change.source {
        ChangeSource::Rule { .. } => change.reason.clone(),
        ChangeSource::Llm { model } if model.is_empty() => "from LLM".to_string(),
        ChangeSource::Llm { model } => format!("from LLM {model}"),
    };
    let text = match (&change.from, &change.old, &change.new) {
        (Some(from), _, _) => format!("crfix: moved {from} → {} ({why})", change.path),
        (None, Some(old), Some(new)) => format!(
            "crfix: set {} {} → {} ({why})",
            change.path,
            short_value(old),
            short_value(new)
        ),
        (None, None, Some(new)) => {
            format!(
                "crfix: added {} = {} ({why})",
                change.path,
                short_value(new)
            )
        }
        (None, Some(old), None) => {
            format!(
                "crfix: removed {} {} ({why})",
                change.path,
                short_value(old)
            )
        }
        (None, None, None) => format!("crfix: touched {} ({why})", change.path),
    };
    truncate_chars(&text, MAX_WARNING_CHARS)
}

/// `spec.source.catalog.packageName: Required value` style lines, most important first.
pub fn error_lines(errors: &[FieldError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| format!("{}: {}", e.field_path(), e.message))
        .collect()
}

/// The rejection message: a headline and every error, bounded.
pub fn invalid_message(headline: &str, errors: &[FieldError]) -> String {
    let mut message = String::from(headline);
    let lines = error_lines(errors);
    let count = lines.len();
    for (i, line) in lines.into_iter().enumerate() {
        let sep = if i == 0 { ": " } else { "; " };
        let tail_reserve = 40;
        if message.len() + sep.len() + line.len() + tail_reserve > MAX_MESSAGE_BYTES {
            message.push_str(&format!("; … and {} more", count - i));
            break;
        }
        message.push_str(sep);
        message.push_str(&line);
    }
    message
}

/// Adds (or replaces) crfix's annotation on the object.
pub fn annotate(object: &mut Value, summary: &str) {
    let Some(obj) = object.as_object_mut() else {
        return;
    };
    let metadata = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(metadata) = metadata.as_object_mut() else {
        return;
    };
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Default::default()));
    if annotations.is_null() {
        *annotations = Value::Object(Default::default());
    }
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(
            REPAIR_ANNOTATION.to_string(),
            Value::String(summary.to_string()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ErrorKind;
    use serde_json::json;

    fn change(old: Option<Value>, new: Option<Value>, from: Option<&str>) -> Change {
        Change {
            path: "/spec/source/sourceType".into(),
            from: from.map(String::from),
            old,
            new,
            reason: "enum".into(),
            source: ChangeSource::Rule {
                rule: "enum".into(),
            },
        }
    }

    #[test]
    fn warnings_name_path_values_and_reason() {
        let w = change_warning(&change(
            Some(json!("catalog")),
            Some(json!("Catalog")),
            None,
        ));
        assert_eq!(
            w,
            "crfix: set /spec/source/sourceType \"catalog\" → \"Catalog\" (enum)"
        );
        let w = change_warning(&change(
            None,
            Some(json!("x")),
            Some("/spec/install/namespace"),
        ));
        assert!(w.starts_with("crfix: moved /spec/install/namespace → /spec/source/sourceType"));
        let mut c = change(None, Some(json!("argocd-operator")), None);
        c.source = ChangeSource::Llm {
            model: "gpt-4o-mini".into(),
        };
        assert!(change_warning(&c).ends_with("(from LLM gpt-4o-mini)"));
    }

    #[test]
    fn warnings_are_bounded() {
        let long = json!("x".repeat(500));
        let w = change_warning(&change(Some(long.clone()), Some(long), None));
        assert!(w.chars().count() <= MAX_WARNING_CHARS);
        let many: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let bounded = bound_warnings(many);
        assert_eq!(bounded.len(), MAX_WARNINGS);
        assert!(bounded.last().unwrap().contains("71 more"));
    }

    #[test]
    fn invalid_message_lists_errors_and_is_bounded() {
        let e = FieldError {
            pointer: "/spec/source/catalog/packageName".into(),
            kind: ErrorKind::Required,
            message: "Required value".into(),
        };
        let m = invalid_message(
            "crfix: ClusterExtension \"x\" is invalid",
            std::slice::from_ref(&e),
        );
        assert_eq!(
            m,
            "crfix: ClusterExtension \"x\" is invalid: spec.source.catalog.packageName: Required value"
        );
        let many = vec![e; 500];
        let m = invalid_message("h", &many);
        assert!(m.len() <= MAX_MESSAGE_BYTES);
        assert!(m.contains("more"));
    }

    #[test]
    fn annotate_creates_and_replaces() {
        let mut o = json!({"metadata": {"name": "a", "annotations": null}});
        annotate(&mut o, "s1");
        annotate(&mut o, "s2");
        assert_eq!(o["metadata"]["annotations"][REPAIR_ANNOTATION], "s2");
        let mut o = json!({});
        annotate(&mut o, "s");
        assert_eq!(o["metadata"]["annotations"][REPAIR_ANNOTATION], "s");
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_bytes("ééé", 4), "…");
        assert_eq!(truncate_chars("abcdef", 4), "abc…");
    }
}
