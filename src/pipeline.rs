//! The `validate` pipeline (DESIGN section 1): parse → schema → validate → repair → LLM →
//! guardrails → response. Never panics on input: every failure becomes a clear response.

use std::collections::HashMap;

use kubewarden_policy_sdk::response::ValidationResponse;
use serde_json::{json, Value};

use crate::guardrails;
use crate::host::{Host, LogLevel};
use crate::llm::{self, LlmOutcome};
use crate::repair::{self, RepairContext};
use crate::request::{AdmissionRequest, Payload, RawPayload};
use crate::response::{self, CODE_BAD_REQUEST, CODE_INVALID};
use crate::schema_source;
use crate::settings::{self, Fallback, Mode, Settings};
use crate::types::{Change, ChangeSource, FieldError};
use crate::validation::{self, ValidateOptions};

/// Audit annotation keys (the API server prefixes them with the webhook name).
pub const AUDIT_OUTCOME: &str = "crfix-outcome";
pub const AUDIT_PATCH: &str = "crfix-patch";
pub const AUDIT_SOURCE: &str = "crfix-source";
pub const AUDIT_LLM_ATTEMPTS: &str = "crfix-llm-attempts";
pub const AUDIT_LLM_MODEL: &str = "crfix-llm-model";
pub const AUDIT_ERRORS: &str = "crfix-errors";
const MAX_AUDIT_VALUE_BYTES: usize = 4096;

pub fn evaluate(payload: &[u8], host: &dyn Host) -> ValidationResponse {
    if let Ok(Payload { request, settings }) = serde_json::from_slice(payload) {
        let settings: Settings = settings.unwrap_or_default();
        if let Err(e) = settings.validate_options() {
            return malformed(format!("invalid settings: {e}"));
        }
        let Some(request) = request else {
            return malformed("the validate payload has no \"request\"".into());
        };
        return evaluate_request(&request, settings, host);
    }
    let raw: RawPayload = match serde_json::from_slice(payload) {
        Ok(raw) => raw,
        Err(e) => return malformed(format!("the validate payload is not valid JSON: {e}")),
    };
    let settings = match raw.settings {
        None => Settings::default(),
        // The inline CRDs are checked when the policy loads (`validate_settings`) and when
        // the request's own is read, not all of them on every request.
        Some(s) => match settings::parse(s.get().as_bytes())
            .and_then(|s| s.validate_options().map(|()| s))
        {
            Ok(s) => s,
            Err(e) => return malformed(format!("invalid settings: {e}")),
        },
    };
    let Some(raw_request) = raw.request else {
        return malformed("the validate payload has no \"request\"".into());
    };
    let request: AdmissionRequest = match serde_json::from_str(raw_request.get()) {
        Ok(r) => r,
        Err(e) => return malformed(format!("the AdmissionRequest is malformed: {e}")),
    };
    evaluate_request(&request, settings, host)
}

fn malformed(message: String) -> ValidationResponse {
    response::reject(
        format!("crfix: {message}"),
        CODE_BAD_REQUEST,
        Vec::new(),
        HashMap::new(),
    )
}

fn audit(pairs: &[(&str, String)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                response::truncate_bytes(v, MAX_AUDIT_VALUE_BYTES),
            )
        })
        .collect()
}

fn describe(request: &AdmissionRequest, object: &Value) -> String {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .or(request.name.as_deref())
        .or_else(|| {
            object
                .pointer("/metadata/generateName")
                .and_then(Value::as_str)
        })
        .unwrap_or("");
    let kind = if request.kind.kind.is_empty() {
        object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("object")
    } else {
        &request.kind.kind
    };
    format!("{kind} {name:?}")
}

pub fn evaluate_request(
    request: &AdmissionRequest,
    mut settings: Settings,
    host: &dyn Host,
) -> ValidationResponse {
    // DELETE/CONNECT carry no object; subresources (status, scale) are not ours to repair.
    let Some(object) = request.object.as_ref() else {
        return response::accept(Vec::new());
    };
    if request
        .sub_resource
        .as_deref()
        .is_some_and(|s| !s.is_empty())
    {
        return response::accept(Vec::new());
    }
    if !object.is_object() {
        return malformed("the request's object is not a JSON object".into());
    }
    let what = describe(request, object);

    let schema = match schema_source::load_schema(&settings, request, host) {
        Ok(schema) => {
            // The inline CRDs (tens of kilobytes) are not needed any more: freed before the
            // validation allocates, every page a fresh instance touches costs a page fault.
            settings.crds = Vec::new();
            schema
        }
        Err(e) => {
            host.log(LogLevel::Warning, &format!("schema unavailable: {e}"));
            return match settings.on_schema_unavailable {
                Fallback::Accept => response::accept(vec![response::truncate_chars(
                    &format!("crfix: not checked: {e}"),
                    response::MAX_WARNING_CHARS,
                )]),
                Fallback::Reject => response::reject(
                    format!("crfix: cannot check {what}: {e}"),
                    503,
                    Vec::new(),
                    audit(&[(AUDIT_OUTCOME, "schema-unavailable".into())]),
                ),
            };
        }
    };

    let settings = &settings;
    let old_object = if request.is_update() {
        request.old_object.as_ref().filter(|o| o.is_object())
    } else {
        None
    };
    let options = ValidateOptions {
        report_unknown_fields: settings.reject_unknown_fields,
    };
    let initial = validation::validate(&schema, object, old_object, options);
    let mut warnings: Vec<String> = initial.warnings.clone();
    if initial.is_valid() {
        return response::accept(warnings);
    }
    let headline = format!("crfix: {what} is invalid");
    if settings.mode == Mode::Validate {
        return response::reject(
            response::invalid_message(&headline, &initial.errors),
            CODE_INVALID,
            warnings,
            audit(&[
                (AUDIT_OUTCOME, "invalid".into()),
                (AUDIT_ERRORS, errors_json(&initial.errors)),
            ]),
        );
    }

    let ctx = RepairContext {
        schema: &schema,
        old_object,
        settings,
        options,
    };
    let repaired = repair::repair(&ctx, object, &initial);
    let mut changes = repaired.changes.clone();
    let mut candidate = repaired.object.clone();
    let mut llm_audit: Vec<(&str, String)> = Vec::new();
    let mut model = String::new();

    if !repaired.validation.is_valid() {
        let unfixable_reason;
        if settings.llm.enabled {
            match llm::correct(&ctx, host, &repaired.object, &repaired.validation) {
                LlmOutcome::Fixed {
                    object: fixed,
                    changes: llm_changes,
                    attempts,
                    model: m,
                } => {
                    llm_audit.push((AUDIT_LLM_ATTEMPTS, attempts.to_string()));
                    llm_audit.push((AUDIT_LLM_MODEL, m.clone()));
                    model = m;
                    changes.extend(llm_changes);
                    candidate = fixed;
                    unfixable_reason = None;
                }
                LlmOutcome::Failed { attempts, reasons } => {
                    llm_audit.push((AUDIT_LLM_ATTEMPTS, attempts.to_string()));
                    unfixable_reason = Some(format!(
                        "the LLM's {attempts} attempt(s) did not give a valid, safe object ({})",
                        reasons.join("; ")
                    ));
                }
                LlmOutcome::Unavailable { attempts, reason } => {
                    llm_audit.push((AUDIT_LLM_ATTEMPTS, attempts.to_string()));
                    let mut pairs = vec![(AUDIT_OUTCOME, "llm-unavailable".to_string())];
                    pairs.extend(llm_audit.iter().cloned());
                    pairs.push((AUDIT_ERRORS, errors_json(&initial.errors)));
                    warnings.push(format!("crfix: LLM unavailable: {reason}"));
                    return match settings.on_llm_unavailable {
                        Fallback::Accept => {
                            warnings.extend(error_warnings(&initial.errors));
                            let mut r = response::accept(warnings);
                            r.audit_annotations = Some(audit(&pairs));
                            r
                        }
                        Fallback::Reject => response::reject(
                            format!(
                                "{} (the LLM was unavailable: {reason})",
                                response::invalid_message(&headline, &initial.errors)
                            ),
                            CODE_INVALID,
                            suggestion_warnings(&repaired.changes),
                            audit(&pairs),
                        ),
                    };
                }
            }
        } else {
            unfixable_reason = Some("no deterministic repair fixes every error".to_string());
        }
        if let Some(reason) = unfixable_reason {
            return unfixable(
                request,
                settings,
                &headline,
                &initial.errors,
                &repaired,
                reason,
                warnings,
                llm_audit,
            );
        }
    }

    // Belt and braces: whatever the source, the final candidate must be fully valid and
    // guardrail-clean against the user's original object, or nothing is applied.
    let patch = match guardrails::check_candidate(settings, object, &candidate) {
        Ok(patch) => patch,
        Err(violations) => {
            let reason = format!(
                "the repair broke a guardrail ({})",
                violations
                    .iter()
                    .map(|v| format!("{}: {}", v.pointer, v.message))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            return unfixable(
                request,
                settings,
                &headline,
                &initial.errors,
                &repaired,
                reason,
                warnings,
                llm_audit,
            );
        }
    };
    let recheck = validation::validate(&schema, &candidate, old_object, options);
    if !recheck.is_valid() {
        let reason = "the repaired object is still invalid".to_string();
        return unfixable(
            request,
            settings,
            &headline,
            &initial.errors,
            &repaired,
            reason,
            warnings,
            llm_audit,
        );
    }

    let patch_json = serde_json::to_string(&patch).unwrap_or_else(|_| "[]".into());
    let source = source_label(&changes);
    let mut pairs = vec![
        (AUDIT_SOURCE, source.to_string()),
        (AUDIT_PATCH, patch_json.clone()),
    ];
    pairs.extend(llm_audit.iter().cloned());

    match settings.mode {
        Mode::Suggest => {
            pairs.push((AUDIT_OUTCOME, "suggested".into()));
            let message = format!(
                "{}. crfix proposes this JSON Patch (RFC 6902): {patch_json}",
                response::invalid_message(&headline, &initial.errors)
            );
            warnings.extend(suggestion_warnings(&changes));
            response::reject(message, CODE_INVALID, warnings, audit(&pairs))
        }
        Mode::Fix | Mode::Validate => {
            pairs.push((AUDIT_OUTCOME, "fixed".into()));
            let summary = json!({
                "source": source,
                "changes": changes.len(),
                "model": if model.is_empty() { Value::Null } else { Value::String(model.clone()) },
                "attempts": llm_audit.iter().find(|(k, _)| *k == AUDIT_LLM_ATTEMPTS).map(|(_, v)| v.clone()),
            });
            response::annotate(&mut candidate, &summary.to_string());
            warnings.extend(changes.iter().map(response::change_warning));
            host.log(
                LogLevel::Info,
                &format!("repaired {what}: {} change(s) from {source}", changes.len()),
            );
            response::mutate(candidate, warnings, audit(&pairs))
        }
    }
}

fn source_label(changes: &[Change]) -> &'static str {
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

fn errors_json(errors: &[FieldError]) -> String {
    serde_json::to_string(&response::error_lines(errors)).unwrap_or_default()
}

fn error_warnings(errors: &[FieldError]) -> Vec<String> {
    response::error_lines(errors)
        .into_iter()
        .map(|l| format!("crfix: invalid: {l}"))
        .collect()
}

fn suggestion_warnings(changes: &[Change]) -> Vec<String> {
    changes
        .iter()
        .map(|c| response::change_warning(c).replacen("crfix: ", "crfix: would have ", 1))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn unfixable(
    _request: &AdmissionRequest,
    settings: &Settings,
    headline: &str,
    errors: &[FieldError],
    repaired: &repair::RepairOutcome,
    reason: String,
    mut warnings: Vec<String>,
    llm_audit: Vec<(&str, String)>,
) -> ValidationResponse {
    let mut pairs = vec![
        (AUDIT_OUTCOME, "unfixable".to_string()),
        (AUDIT_ERRORS, errors_json(errors)),
    ];
    pairs.extend(llm_audit);
    match settings.on_unfixable {
        Fallback::Accept => {
            warnings.push(format!("crfix: not repaired: {reason}"));
            warnings.extend(error_warnings(errors));
            let mut r = response::accept(warnings);
            r.audit_annotations = Some(audit(&pairs));
            r
        }
        Fallback::Reject => {
            warnings.extend(suggestion_warnings(&repaired.changes));
            warnings.extend(repaired.refused.iter().map(|r| format!("crfix: {r}")));
            response::reject(
                format!(
                    "{} (not repaired: {reason})",
                    response::invalid_message(headline, errors)
                ),
                CODE_INVALID,
                warnings,
                audit(&pairs),
            )
        }
    }
}
