//! Stage 8: turn the pipeline's [`Outcome`] into Kubewarden's `ValidationResponse` — in one
//! place, [`respond`]: warnings (one per change), the `crfix.dev/repair` annotation, audit
//! annotations, and bounded rejection messages.

use std::collections::HashMap;

use kubewarden_policy_sdk::response::ValidationResponse;
use serde_json::{json, Value};

use crate::guardrails::REPAIR_ANNOTATION;
use crate::settings::Fallback;
use crate::text::{cut_middle, fit, short_value, truncate_bytes, Part};
use crate::types::{error_lines, Change, ChangeSource, FieldError, ValidationOutcome};

/// Audit annotation keys (the API server prefixes them with the webhook name).
pub const AUDIT_OUTCOME: &str = "crfix-outcome";
pub const AUDIT_PATCH: &str = "crfix-patch";
pub const AUDIT_SOURCE: &str = "crfix-source";
pub const AUDIT_LLM_ATTEMPTS: &str = "crfix-llm-attempts";
pub const AUDIT_LLM_MODEL: &str = "crfix-llm-model";
pub const AUDIT_ERRORS: &str = "crfix-errors";
const MAX_AUDIT_VALUE_BYTES: usize = 4096;

/// How an evaluation ended; [`respond`] turns it into the answer to policy-server.
#[derive(Debug)]
pub enum Outcome {
    /// Nothing to check, or nothing wrong.
    Accept { warnings: Vec<String> },
    /// The payload, its settings or its object cannot be read.
    Malformed(String),
    /// No schema to check against (`onSchemaUnavailable`).
    SchemaUnavailable {
        what: String,
        error: String,
        fallback: Fallback,
    },
    /// `mode: validate` and the object is invalid.
    Invalid(Findings),
    /// The LLM was needed and could not be asked (`onLlmUnavailable`).
    LlmUnavailable {
        findings: Findings,
        reason: String,
        /// The deterministic repairs that were made before the LLM was needed.
        suggestions: Vec<Change>,
        fallback: Fallback,
    },
    /// Nothing makes the object valid and safe (`onUnfixable`).
    Unfixable {
        findings: Findings,
        reason: String,
        suggestions: Vec<Change>,
        /// Repairs considered and refused, and why.
        refused: Vec<String>,
        fallback: Fallback,
    },
    /// A valid, guardrail-clean repair: applied, proposed, or reported with the object
    /// accepted unchanged.
    Repaired {
        findings: Findings,
        repair: Repair,
        disposition: Disposition,
    },
}

/// What becomes of a repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disposition {
    /// The object is mutated (`mode: fix`, a certain fix or `uncertainFixes: apply`).
    Applied,
    /// Rejected with the fix spelled out; `held` says why it was not made when that is not
    /// the fix's own uncertainty or `mode: suggest` (e.g. the object is managed by GitOps).
    Proposed { held: Option<String> },
    /// Accepted unchanged, the fix in the warnings (`gitOps.onManaged: warn`).
    Reported { held: String },
}

/// What validation found, and what the LLM stage adds to the audit trail.
#[derive(Debug, Default)]
pub struct Findings {
    /// `crfix: ClusterExtension "x" is invalid`.
    pub headline: String,
    /// The validation of the object as the user sent it: its errors, and the warnings every
    /// response carries. Once a repair passed its final, full validation, the warnings are
    /// that validation's (of the object that will be stored): the user's object may have had
    /// rules "not checked" for its blocking errors, the repaired one had every rule run.
    pub initial: ValidationOutcome,
    pub llm_attempts: Option<u32>,
    pub llm_model: Option<String>,
}

/// A repaired object, every change that made it, and the RFC 6902 patch from the user's object.
#[derive(Debug)]
pub struct Repair {
    pub object: Value,
    pub changes: Vec<Change>,
    pub patch: String,
    /// Why crfix is not certain of this repair (none: it is).
    pub doubts: Vec<String>,
    /// Other fixes that fit, described, for a proposal.
    pub alternatives: Vec<String>,
}

pub fn respond(outcome: Outcome) -> ValidationResponse {
    match outcome {
        Outcome::Accept { warnings } => accept(warnings),
        Outcome::Malformed(message) => reject(
            format!("crfix: {message}"),
            CODE_BAD_REQUEST,
            Vec::new(),
            HashMap::new(),
        ),
        Outcome::SchemaUnavailable {
            error,
            fallback: Fallback::Accept,
            ..
        } => accept(vec![fit(
            &[Part::whole("crfix: not checked: "), Part::rest(&error)],
            MAX_WARNING_CHARS,
        )]),
        Outcome::SchemaUnavailable { what, error, .. } => reject(
            format!("crfix: cannot check {what}: {error}"),
            503,
            Vec::new(),
            audit(&[(AUDIT_OUTCOME, "schema-unavailable".into())]),
        ),
        Outcome::Invalid(findings) => reject(
            invalid_message(&findings.headline, &findings.initial.errors),
            CODE_INVALID,
            findings.initial.warnings,
            audit(&[
                (AUDIT_OUTCOME, "invalid".into()),
                (AUDIT_ERRORS, errors_json(&findings.initial.errors)),
            ]),
        ),
        Outcome::LlmUnavailable {
            findings,
            reason,
            suggestions,
            fallback,
        } => llm_unavailable(findings, &reason, &suggestions, fallback),
        Outcome::Unfixable {
            findings,
            reason,
            suggestions,
            refused,
            fallback,
        } => unfixable(findings, &reason, &suggestions, &refused, fallback),
        Outcome::Repaired {
            findings,
            repair,
            disposition,
        } => repaired(findings, repair, disposition),
    }
}

fn llm_unavailable(
    findings: Findings,
    reason: &str,
    suggestions: &[Change],
    fallback: Fallback,
) -> ValidationResponse {
    let pairs = findings.audit("llm-unavailable");
    let mut warnings = findings.initial.warnings;
    warnings.push(format!("crfix: LLM unavailable: {reason}"));
    match fallback {
        Fallback::Accept => {
            warnings.extend(error_warnings(&findings.initial.errors));
            accept_with_audit(warnings, audit(&pairs))
        }
        Fallback::Reject => reject(
            format!(
                "{} (the LLM was unavailable: {reason})",
                invalid_message(&findings.headline, &findings.initial.errors)
            ),
            CODE_INVALID,
            suggestion_warnings(suggestions),
            audit(&pairs),
        ),
    }
}

fn unfixable(
    findings: Findings,
    reason: &str,
    suggestions: &[Change],
    refused: &[String],
    fallback: Fallback,
) -> ValidationResponse {
    let pairs = findings.audit("unfixable");
    let mut warnings = findings.initial.warnings;
    match fallback {
        Fallback::Accept => {
            warnings.push(format!("crfix: not repaired: {reason}"));
            warnings.extend(error_warnings(&findings.initial.errors));
            accept_with_audit(warnings, audit(&pairs))
        }
        Fallback::Reject => {
            warnings.extend(suggestion_warnings(suggestions));
            warnings.extend(refused.iter().map(|r| format!("crfix: {r}")));
            reject(
                format!(
                    "{} (not repaired: {reason})",
                    invalid_message(&findings.headline, &findings.initial.errors)
                ),
                CODE_INVALID,
                warnings,
                audit(&pairs),
            )
        }
    }
}

fn repaired(
    mut findings: Findings,
    repair: Repair,
    disposition: Disposition,
) -> ValidationResponse {
    let source = source_label(&repair.changes);
    let mut pairs = vec![
        (AUDIT_SOURCE, source.to_string()),
        (AUDIT_PATCH, repair.patch.clone()),
    ];
    pairs.extend(findings.llm_pairs());
    let mut warnings = std::mem::take(&mut findings.initial.warnings);
    match disposition {
        Disposition::Applied => {}
        Disposition::Proposed { held } => {
            pairs.push((AUDIT_OUTCOME, "suggested".into()));
            let message = proposal_message(&findings, &repair, held.as_deref());
            warnings.extend(suggestion_warnings(&repair.changes));
            return reject(message, CODE_INVALID, warnings, audit(&pairs));
        }
        Disposition::Reported { held } => {
            pairs.push((AUDIT_OUTCOME, "reported".into()));
            warnings.push(fit(
                &[Part::whole("crfix: not changed: "), Part::rest(&held)],
                MAX_WARNING_CHARS,
            ));
            warnings.extend(suggestion_warnings(&repair.changes));
            return accept_with_audit(warnings, audit(&pairs));
        }
    }
    pairs.push((AUDIT_OUTCOME, "fixed".into()));
    warnings.extend(
        repair
            .doubts
            .iter()
            .map(|d| format!("crfix: applied although uncertain: {d}")),
    );
    let summary = json!({
        "source": source,
        "changes": repair.changes.len(),
        "model": findings.llm_model.as_deref().filter(|m| !m.is_empty()),
        "attempts": findings.llm_attempts.map(|a| a.to_string()),
    });
    let mut object = repair.object;
    annotate(&mut object, &summary.to_string());
    warnings.extend(repair.changes.iter().map(change_warning));
    mutate(object, warnings, audit(&pairs))
}

/// Most of a proposal message the errors may take; the proposal itself comes after them.
const MAX_PROPOSAL_ERRORS_BYTES: usize = 700;

/// A rejection that spells out the fix crfix did not make: why not, each change with the
/// value it replaces (the user's own words), the JSON Patch and how to apply it to the
/// manifest, and the other fixes that fit.
fn proposal_message(findings: &Findings, repair: &Repair, held: Option<&str>) -> String {
    let errors = truncate_bytes(
        &invalid_message(&findings.headline, &findings.initial.errors),
        MAX_PROPOSAL_ERRORS_BYTES,
    );
    let why = match held {
        Some(held) if repair.doubts.is_empty() => held.to_string(),
        Some(held) => format!(
            "{held}, and it is not certain of the fix: {}",
            repair.doubts.join("; ")
        ),
        None if repair.doubts.is_empty() => "mode is suggest".to_string(),
        None => format!("it is not certain of the fix: {}", repair.doubts.join("; ")),
    };
    let changes: Vec<String> = repair.changes.iter().map(proposed_change).collect();
    let mut message = format!(
        "{errors}. crfix changed nothing because {why}. Proposed fix, if it is what you meant: {}. As a JSON Patch (RFC 6902) to your manifest: {} (e.g. kubectl patch --local -f FILE --type=json -p '<patch>' -o yaml)",
        changes.join("; "),
        repair.patch
    );
    if !repair.alternatives.is_empty() {
        message.push_str(&format!(
            ". Other fixes that fit: {}",
            repair.alternatives.join(" | ")
        ));
    }
    message
}

/// `spec.readOnly: false (was "not read-only")`.
fn proposed_change(change: &Change) -> String {
    let path = crate::pointer::to_field_path(&change.path);
    match (&change.from, &change.old, &change.new) {
        (Some(from), _, _) => format!("move {} to {path}", crate::pointer::to_field_path(from)),
        (None, Some(old), Some(new)) => {
            format!("{path}: {} (was {})", short_value(new), short_value(old))
        }
        (None, None, Some(new)) => format!("{path}: {} (new)", short_value(new)),
        (None, Some(old), None) => format!("remove {path} (was {})", short_value(old)),
        (None, None, None) => path,
    }
}

impl Findings {
    fn llm_pairs(&self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if let Some(attempts) = self.llm_attempts {
            pairs.push((AUDIT_LLM_ATTEMPTS, attempts.to_string()));
        }
        if let Some(model) = &self.llm_model {
            pairs.push((AUDIT_LLM_MODEL, model.clone()));
        }
        pairs
    }

    /// The audit annotations of an invalid object that was not repaired.
    fn audit(&self, outcome: &str) -> Vec<(&'static str, String)> {
        let mut pairs = vec![
            (AUDIT_OUTCOME, outcome.to_string()),
            (AUDIT_ERRORS, errors_json(&self.initial.errors)),
        ];
        pairs.extend(self.llm_pairs());
        pairs
    }
}

/// `rules`, `llm` or `rules+llm`: where the changes of a repair came from.
pub fn source_label(changes: &[Change]) -> &'static str {
    let rules = changes
        .iter()
        .any(|c| matches!(c.source, ChangeSource::Rule { .. }));
    let llm = changes
        .iter()
        .any(|c| matches!(c.source, ChangeSource::Llm { .. }));
    match (rules, llm) {
        (true, true) => "rules+llm",
        (false, true) => "llm",
        _ => "rules",
    }
}

fn audit(pairs: &[(&str, String)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), truncate_bytes(v, MAX_AUDIT_VALUE_BYTES)))
        .collect()
}

fn errors_json(errors: &[FieldError]) -> String {
    serde_json::to_string(&error_lines(errors)).unwrap_or_default()
}

/// `crfix: invalid: <field path>: <message>`: the path's tail and the message's beginning
/// kept, the middle of a long message cut.
fn error_warnings(errors: &[FieldError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| {
            let path = e.field_path();
            let message = format!(": {}", e.message);
            fit(
                &[
                    Part::whole("crfix: invalid: "),
                    Part::path(&path, PATH_KEPT),
                    Part::ends(&message, 60),
                ],
                MAX_WARNING_CHARS,
            )
        })
        .collect()
}

/// Characters of a path's end a warning keeps however long the rest.
const PATH_KEPT: usize = 32;

fn suggestion_warnings(changes: &[Change]) -> Vec<String> {
    changes
        .iter()
        .map(|c| change_warning(c).replacen("crfix: ", "crfix: would have ", 1))
        .collect()
}

fn accept_with_audit(warnings: Vec<String>, audit: HashMap<String, String>) -> ValidationResponse {
    let mut response = accept(warnings);
    response.audit_annotations = Some(audit);
    response
}

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
    // Most warnings are fitted where they are written (the path's tail and the message kept);
    // any other is cut in the middle, so that its last words survive too.
    warnings
        .into_iter()
        .map(|w| cut_middle(&w, MAX_WARNING_CHARS))
        .collect()
}

/// One warning per change: `crfix: set /spec/source/sourceType "catalog" → "Catalog" (enum)`.
pub fn change_warning(change: &Change) -> String {
    let why = match &change.source {
        ChangeSource::Rule { .. } => change.reason.clone(),
        ChangeSource::Llm { model } if model.is_empty() => "from LLM".to_string(),
        ChangeSource::Llm { model } => format!("from LLM {model}"),
    };
    // The path's tail, the new value and the reason survive the cut: the old value and the
    // middle of the path go first.
    let why = format!(" ({why})");
    let (verb, path, middle, end) = match (&change.from, &change.old, &change.new) {
        (Some(from), _, _) => (
            "moved ",
            from.clone(),
            " → ".to_string(),
            change.path.clone(),
        ),
        (None, Some(old), Some(new)) => (
            "set ",
            change.path.clone(),
            format!(" {} → ", short_value(old)),
            short_value(new),
        ),
        (None, None, Some(new)) => (
            "added ",
            change.path.clone(),
            " = ".to_string(),
            short_value(new),
        ),
        (None, Some(old), None) => (
            "removed ",
            change.path.clone(),
            " ".to_string(),
            short_value(old),
        ),
        (None, None, None) => (
            "touched ",
            change.path.clone(),
            String::new(),
            String::new(),
        ),
    };
    fit(
        &[
            Part::whole("crfix: "),
            Part::whole(verb),
            Part::path(&path, PATH_KEPT),
            Part::whole(&middle),
            Part::path(&end, PATH_KEPT),
            Part::ends(&why, 24),
        ],
        MAX_WARNING_CHARS,
    )
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
    fn a_cut_warning_keeps_the_paths_tail_the_new_value_and_the_reason() {
        let deep = format!("/spec/{}/upgradeConstraintPolicy", "nested/".repeat(20));
        let mut c = change(
            Some(json!("x".repeat(500))),
            Some(json!("SelfCertified")),
            None,
        );
        c.path = deep;
        let w = change_warning(&c);
        assert!(w.chars().count() <= MAX_WARNING_CHARS, "{w}");
        assert!(w.starts_with("crfix: set …"), "{w}");
        assert!(w.contains("/upgradeConstraintPolicy"), "{w}");
        assert!(w.ends_with("→ \"SelfCertified\" (enum)"), "{w}");
        // An error: the field's tail and the message's beginning and end.
        let e = FieldError {
            pointer: format!("/spec/{}name", "level/".repeat(30)),
            kind: crate::types::ErrorKind::Required,
            message: format!(
                "Invalid value: \"string\": {} must be short",
                "very ".repeat(40)
            ),
        };
        let w = &error_warnings(&[e])[0];
        assert!(w.chars().count() <= MAX_WARNING_CHARS, "{w}");
        assert!(w.contains("level.level.name: Invalid value"), "{w}");
        assert!(w.ends_with("must be short"), "{w}");
        // Any other warning is cut in the middle: its last words survive.
        let other = format!("crfix: something {} the end", "long ".repeat(50));
        let w = &bound_warnings(vec![other])[0];
        assert!(
            w.starts_with("crfix: something") && w.ends_with("the end"),
            "{w}"
        );
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
}
