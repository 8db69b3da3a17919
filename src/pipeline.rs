//! Stage 7, the flow of `validate` (docs/architecture.md, "Request flow"): parse → schema →
//! validate → repair → LLM → guardrails → response. Each stage is one call; a stage that ends
//! the evaluation returns the [`Outcome`] it ends with, and [`response::respond`] turns every
//! outcome into the answer. Never panics on input: every failure becomes a clear response.

use correction_api::RequestUser;
use kubewarden_policy_sdk::response::ValidationResponse;
use serde_json::Value;

use crate::guardrails;
use crate::host::{Host, LogLevel};
use crate::llm::{self, LlmOutcome};
use crate::repair::{self, RepairContext, RepairOutcome};
use crate::request::{self, AdmissionRequest};
use crate::response::{self, Disposition, Findings, Outcome, Repair};
use crate::schema_source::{self, RawSchema, SchemaError};
use crate::settings::{Fallback, Mode, OnManaged, Settings, UncertainFixes};
use crate::types::FieldError;
use crate::validation::{self, ValidateOptions};

pub fn evaluate(payload: &[u8], host: &dyn Host) -> ValidationResponse {
    let outcome = match request::parse_payload_narrowing(payload, values_to_check) {
        Ok((request, settings, narrowed)) => {
            let inline = narrowed.map(|crd| RawSchema::narrowed(payload, &request, crd));
            evaluate_request(&request, settings, inline, host)
        }
        Err(message) => Outcome::Malformed(message),
    };
    response::respond(outcome)
}

/// The object and, on UPDATE, the old object: what the schema is narrowed to.
fn values_to_check(request: &AdmissionRequest) -> Vec<&Value> {
    let object = request.object.as_ref().filter(|o| o.is_object());
    object.into_iter().chain(old_object(request)).collect()
}

/// Every early end of the flow is an `Err` carrying its outcome, so `?` reads as "or stop here".
type Stage<T> = Result<T, Box<Outcome>>;

/// `inline`: the inline CRD the payload's one pass found and narrowed, if it did.
fn evaluate_request(
    request: &AdmissionRequest,
    settings: Settings,
    inline: Option<RawSchema>,
    host: &dyn Host,
) -> Outcome {
    match flow(request, settings, inline, host) {
        Ok(outcome) => outcome,
        Err(outcome) => *outcome,
    }
}

fn flow(
    request: &AdmissionRequest,
    mut settings: Settings,
    inline: Option<RawSchema>,
    host: &dyn Host,
) -> Stage<Outcome> {
    let object = object_to_check(request)?;
    let what = describe(request, object);
    let audit = request.is_audit();
    if audit {
        for_audit(&mut settings);
    }
    let mut raw = match inline {
        Some(raw) => raw,
        None => load_schema(&mut settings, request, host, &what)?,
    };
    let settings = &settings;
    let options = ValidateOptions {
        report_unknown_fields: settings.reject_unknown_fields,
    };
    let old = old_object(request);
    let mut findings = check(&mut raw, object, old, options, settings, host, &what)?;
    // Repairs and the LLM read what the valid path did not: descriptions, absent fields.
    let schema = parsed(raw.full(), settings, host, &what)?;
    let ctx = RepairContext {
        schema,
        old_object: old,
        settings,
        options,
    };
    let repaired = repair::repair(&ctx, object, &findings.initial);
    let candidate = if repaired.validation.is_valid() {
        Repair {
            object: repaired.object.clone(),
            changes: repaired.changes.clone(),
            patch: String::new(),
            doubts: Vec::new(),
            alternatives: Vec::new(),
        }
    } else {
        ask_llm(
            &ctx,
            host,
            requesting_user(request).as_ref(),
            &repaired,
            &mut findings,
        )?
    };
    let repair = final_check(&ctx, object, candidate, &repaired, &mut findings)?;
    let held = held_back(audit, object, &what, settings);
    dispose(settings, held, &what, findings, repair, host)
}

/// A background audit reports the stored object: nothing is changed (policy-server ignores an
/// audit's patch), no LLM budget is spent, and an invalid object is a failed check, with the
/// fix the rules find proposed in the report's message.
fn for_audit(settings: &mut Settings) {
    if settings.mode == Mode::Fix {
        settings.mode = Mode::Suggest;
    }
    settings.llm.enabled = false;
    settings.on_unfixable = Fallback::Reject;
}

/// Why a fix is not made in the cluster even where it could be: the request is a background
/// audit, or the object is one a GitOps tool applies from Git (`gitOps.managedBy`).
fn held_back(audit: bool, object: &Value, what: &str, settings: &Settings) -> Option<String> {
    if audit {
        return Some(
            "this is a background audit of the stored object, which is reported, never changed"
                .to_string(),
        );
    }
    let by = managed_by(object, &settings.git_ops.managed_by)?;
    Some(format!(
        "{what} is managed by GitOps ({by}): a change made here would differ from Git; \
         make the fix in the repository"
    ))
}

/// Stage 7's last step: what becomes of a valid, checked repair — applied, proposed (not
/// certain, `mode: suggest`, or `held` back), reported (`gitOps.onManaged: warn`), or, not
/// certain under `uncertainFixes: reject`, no repair at all.
fn dispose(
    settings: &Settings,
    held: Option<String>,
    what: &str,
    findings: Findings,
    repair: Repair,
    host: &dyn Host,
) -> Stage<Outcome> {
    let applied = match (settings.mode, settings.uncertain_fixes) {
        (Mode::Suggest, _) => false,
        _ if repair.doubts.is_empty() => true,
        (_, UncertainFixes::Apply) => true,
        (_, UncertainFixes::Suggest) => false,
        (_, UncertainFixes::Reject) => {
            let reason = format!(
                "crfix is not certain of the fix ({}), and uncertainFixes is reject",
                repair.doubts.join("; ")
            );
            return Err(Box::new(Outcome::Unfixable {
                findings,
                reason,
                suggestions: Vec::new(),
                refused: Vec::new(),
                fallback: settings.on_unfixable,
            }));
        }
    };
    let disposition = match (applied, held, settings.git_ops.on_managed) {
        (true, None, _) | (true, Some(_), OnManaged::Mutate) => Disposition::Applied,
        (true, Some(held), OnManaged::Suggest) => Disposition::Proposed { held: Some(held) },
        (true, Some(held), OnManaged::Warn) => Disposition::Reported { held },
        (false, held, _) => Disposition::Proposed { held },
    };
    if disposition == Disposition::Applied {
        host.log(
            LogLevel::Info,
            &format!(
                "repaired {what}: {} change(s) from {}",
                repair.changes.len(),
                response::source_label(&repair.changes)
            ),
        );
    }
    Ok(Outcome::Repaired {
        findings,
        repair,
        disposition,
    })
}

/// The first of `keys` that the object carries as a label or an annotation, named
/// (`annotation argocd.argoproj.io/tracking-id`).
fn managed_by(object: &Value, keys: &[String]) -> Option<String> {
    ["labels", "annotations"].into_iter().find_map(|field| {
        let map = object.get("metadata")?.get(field)?.as_object()?;
        let key = keys.iter().find(|k| map.contains_key(k.as_str()))?;
        Some(format!("{} {key}", field.trim_end_matches('s')))
    })
}

/// Stage 1: the object to check. DELETE/CONNECT carry none; subresources (status, scale) are
/// not ours to repair.
fn object_to_check(request: &AdmissionRequest) -> Stage<&Value> {
    let accept = || {
        Box::new(Outcome::Accept {
            warnings: Vec::new(),
        })
    };
    let object = request.object.as_ref().ok_or_else(accept)?;
    if request
        .sub_resource
        .as_deref()
        .is_some_and(|s| !s.is_empty())
    {
        return Err(accept());
    }
    if !object.is_object() {
        return Err(Box::new(Outcome::Malformed(
            "the request's object is not a JSON object".into(),
        )));
    }
    Ok(object)
}

fn old_object(request: &AdmissionRequest) -> Option<&Value> {
    if request.is_update() {
        request.old_object.as_ref().filter(|o| o.is_object())
    } else {
        None
    }
}

/// Stage 2: the CRD's schema, unparsed, or the `onSchemaUnavailable` outcome.
fn load_schema(
    settings: &mut Settings,
    request: &AdmissionRequest,
    host: &dyn Host,
    what: &str,
) -> Stage<RawSchema<'static>> {
    let raw = schema_source::load_raw(settings, request, host);
    // The other inline CRDs (tens of kilobytes) are not needed any more: freed before the
    // validation allocates, every page a fresh instance touches costs a page fault.
    settings.crds = Vec::new();
    parsed(raw, settings, host, what)
}

/// A schema, or, when it cannot be read, the `onSchemaUnavailable` outcome.
fn parsed<T>(
    schema: Result<T, SchemaError>,
    settings: &Settings,
    host: &dyn Host,
    what: &str,
) -> Stage<T> {
    schema.map_err(|e| {
        host.log(LogLevel::Warning, &format!("schema unavailable: {e}"));
        Box::new(Outcome::SchemaUnavailable {
            what: what.to_string(),
            error: e.to_string(),
            fallback: settings.on_schema_unavailable,
        })
    })
}

/// Stage 3: validation against the part of the schema the object touches (the same verdict
/// as the whole schema, at a cost that follows the object). A valid object is accepted; in
/// `mode: validate` an invalid one is rejected; otherwise the findings go on to the repairs.
fn check(
    raw: &mut RawSchema,
    object: &Value,
    old: Option<&Value>,
    options: ValidateOptions,
    settings: &Settings,
    host: &dyn Host,
    what: &str,
) -> Stage<Findings> {
    let values: Vec<&Value> = std::iter::once(object).chain(old).collect();
    let touched = parsed(raw.touched_by(&values), settings, host, what)?;
    let mut initial = validation::validate(&touched, object, old, options);
    if initial.is_valid() {
        return Err(Box::new(Outcome::Accept {
            warnings: initial.warnings,
        }));
    }
    if validation::may_differ_on_the_whole_schema(&initial) {
        // Same errors; but whether rules went unchecked for the object's errors is the whole
        // schema's to say (the object, once corrected, may reach rules the view left out).
        let full = parsed(raw.full(), settings, host, what)?;
        initial = validation::validate(full, object, old, options);
    }
    let findings = Findings {
        headline: format!("crfix: {what} is invalid"),
        initial,
        ..Findings::default()
    };
    if settings.mode == Mode::Validate {
        return Err(Box::new(Outcome::Invalid(findings)));
    }
    Ok(findings)
}

/// Stage 5: what the deterministic repairs (stage 4) left, to the LLM when it is enabled.
fn ask_llm(
    ctx: &RepairContext,
    host: &dyn Host,
    user: Option<&RequestUser>,
    repaired: &RepairOutcome,
    findings: &mut Findings,
) -> Stage<Repair> {
    if !ctx.settings.llm.enabled {
        let reason = "no deterministic repair fixes every error".to_string();
        return Err(unfixable(ctx, std::mem::take(findings), repaired, reason));
    }
    match llm::correct(ctx, host, &repaired.object, &repaired.validation, user) {
        LlmOutcome::Fixed {
            object,
            changes,
            attempts,
            model,
            doubts,
            alternatives,
        } => {
            findings.llm_attempts = Some(attempts);
            findings.llm_model = Some(model);
            let mut all = repaired.changes.clone();
            all.extend(changes);
            Ok(Repair {
                object,
                changes: all,
                patch: String::new(),
                doubts,
                alternatives,
            })
        }
        LlmOutcome::Failed { attempts, reasons } => {
            findings.llm_attempts = Some(attempts);
            let reason = if attempts == 0 {
                reasons.join("; ")
            } else {
                format!(
                    "the LLM's {attempts} attempt(s) did not give a valid, safe object ({})",
                    reasons.join("; ")
                )
            };
            Err(unfixable(ctx, std::mem::take(findings), repaired, reason))
        }
        LlmOutcome::Unavailable { attempts, reason } => {
            findings.llm_attempts = Some(attempts);
            Err(Box::new(Outcome::LlmUnavailable {
                findings: std::mem::take(findings),
                reason,
                suggestions: repaired.changes.clone(),
                fallback: ctx.settings.on_llm_unavailable,
            }))
        }
    }
}

/// Stage 6, belt and braces: whatever the source, the final candidate must be guardrail-clean
/// against the user's original object and fully valid, or nothing is applied.
fn final_check(
    ctx: &RepairContext,
    object: &Value,
    mut candidate: Repair,
    repaired: &RepairOutcome,
    findings: &mut Findings,
) -> Stage<Repair> {
    let patch = match guardrails::check_candidate(ctx.settings, object, &candidate.object) {
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
            return Err(unfixable(ctx, std::mem::take(findings), repaired, reason));
        }
    };
    let lost = crate::certainty::meaning_kept_over(
        ctx.schema,
        object,
        ctx.old_object,
        &crate::certainty::stale_sides(
            &repaired.object,
            ctx.old_object,
            &repaired.validation.errors,
        ),
        &candidate.object,
    );
    if !lost.is_empty() {
        let reason = format!(
            "the repair would not keep what you wrote ({})",
            lost.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        );
        return Err(unfixable(ctx, std::mem::take(findings), repaired, reason));
    }
    let recheck = validation::validate(ctx.schema, &candidate.object, ctx.old_object, ctx.options);
    if !recheck.is_valid() {
        let reason = "the repaired object is still invalid".to_string();
        return Err(unfixable(ctx, std::mem::take(findings), repaired, reason));
    }
    // The warnings of the object that will be stored are its own validation's, rules and all
    // (the user's object may have had rules "not checked" for its blocking errors).
    findings.initial.warnings = recheck.warnings;
    candidate.patch = serde_json::to_string(&patch).unwrap_or_else(|_| "[]".into());
    Ok(candidate)
}

fn unfixable(
    ctx: &RepairContext,
    findings: Findings,
    repaired: &RepairOutcome,
    reason: String,
) -> Box<Outcome> {
    let mut reason = reason;
    for hint in &repaired.hints {
        reason.push_str("; ");
        reason.push_str(hint);
    }
    // Errors the repairs revealed: like the API server, CEL rules wait for the structural
    // errors to be gone, so the user would meet these next.
    let mut revealed: Vec<&FieldError> = Vec::new();
    for e in repaired
        .validation
        .errors
        .iter()
        .chain(&repaired.furthest_errors)
    {
        if revealed.len() < MAX_REVEALED_ERRORS
            && !findings.initial.errors.contains(e)
            && !revealed.contains(&e)
        {
            revealed.push(e);
        }
    }
    if !revealed.is_empty() {
        let lines: Vec<String> = revealed.iter().map(|e| e.line()).collect();
        reason.push_str("; once repaired it is still invalid: ");
        reason.push_str(&lines.join("; "));
    }
    Box::new(Outcome::Unfixable {
        findings,
        reason,
        suggestions: repaired.changes.clone(),
        refused: repaired.refused.clone(),
        fallback: ctx.settings.on_unfixable,
    })
}

/// Most errors revealed by the repairs named in a rejection.
const MAX_REVEALED_ERRORS: usize = 5;

/// Most groups of the requesting user named to the proxy (the prompt stays small).
const MAX_USER_GROUPS: usize = 32;

/// The user who applied the object, for crfix-llm-proxy's per-user budgets and logs.
fn requesting_user(request: &AdmissionRequest) -> Option<RequestUser> {
    let info = &request.user_info;
    (!info.username.is_empty()).then(|| RequestUser {
        username: info.username.clone(),
        groups: info.groups.iter().take(MAX_USER_GROUPS).cloned().collect(),
    })
}

/// `ClusterExtension "name"` for messages.
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
