//! Stages 6-7: ask the LLM through crfix-llm-proxy (a `Correction` read with
//! `kubernetes/get_resource`), parse the answer, check and re-validate it; bounded attempts.
//!
//! Each attempt: build the prompt ([`crate::prompt`]) → fit it into a Correction token → one
//! host call → parse the answer ([`crate::answer`]) → guardrails against the object the LLM was
//! given → re-validation. The first candidate that is fully valid and guardrail-clean wins; a
//! failed candidate goes back to the LLM with its problems, up to `llm.maxAttempts`. A candidate
//! that breaks a guardrail is discarded whole, never partly applied.

use correction_api::Correction;
use serde_json::Value;

use crate::answer::{self, AnswerError};
use crate::evidence;
use crate::guardrails::{self, REPAIR_ANNOTATION};
use crate::host::{GetResourceRequest, Host, LogLevel};
use crate::pointer;
use crate::prompt::{self, Feedback, PromptInput};
use crate::repair::RepairContext;
use crate::settings::Settings;
use crate::types::{Change, ChangeSource, ValidationOutcome};
use crate::validation;

#[derive(Debug, Clone)]
pub enum LlmOutcome {
    /// A fully valid, guardrail-clean candidate.
    Fixed {
        object: Value,
        /// The changes the LLM made (source `Llm`), relative to the object it was given.
        changes: Vec<Change>,
        attempts: u32,
        model: String,
    },
    /// Every attempt failed (invalid, guardrail, unparsable); nothing is applied.
    Failed {
        attempts: u32,
        /// Why each attempt failed, in order.
        reasons: Vec<String>,
    },
    /// The LLM could not be asked or did not answer (not granted, proxy down, 429/503/504,
    /// prompt too large).
    Unavailable { attempts: u32, reason: String },
}

/// Longest reason for one failed attempt (they end up in the rejection message).
const MAX_REASON_CHARS: usize = 200;
/// Longest snippet of an unrecognised host error quoted in a reason.
const MAX_HOST_ERROR_SNIPPET: usize = 120;

/// Asks the LLM to fix what `outcome` still reports on `object`.
pub fn correct(
    ctx: &RepairContext,
    host: &dyn Host,
    object: &Value,
    outcome: &ValidationOutcome,
) -> LlmOutcome {
    let settings = ctx.settings;
    let shown = prompt::for_prompt(object);
    let mut feedback: Option<Feedback> = None;
    let mut previous: Option<Value> = None;
    let mut reasons: Vec<String> = Vec::new();
    let mut attempts = 0u32;
    while attempts < settings.llm.max_attempts {
        let input = PromptInput {
            settings,
            schema: ctx.schema,
            object: &shown,
            errors: &outcome.errors,
            feedback: feedback.as_ref(),
        };
        let fitted = match prompt::fit(&input) {
            Ok(f) => f,
            Err(e) if attempts == 0 => {
                return LlmOutcome::Unavailable {
                    attempts,
                    reason: e.to_string(),
                }
            }
            Err(e) => {
                reasons.push(format!("no attempt {}: {e}", attempts + 1));
                break;
            }
        };
        attempts += 1;
        let correction = match call(host, settings, &fitted.token) {
            Ok(c) => c,
            Err(reason) => return LlmOutcome::Unavailable { attempts, reason },
        };
        let status = &correction.status;
        host.log(
            LogLevel::Info,
            &format!(
                "LLM attempt {attempts}: model {:?}, cached {}, finish reason {:?}, trim level {}, token {} bytes",
                status.model,
                status.cached,
                status.finish_reason,
                fitted.trim.0,
                fitted.token.len()
            ),
        );
        match judge(ctx, object, &shown, &status.content, previous.as_ref()) {
            Ok(candidate) => {
                let changes = llm_changes(object, &candidate, &status.model);
                return LlmOutcome::Fixed {
                    object: candidate,
                    changes,
                    attempts,
                    model: status.model.clone(),
                };
            }
            Err(rejected) => {
                let mut reason = rejected.summary;
                if status.finish_reason == "length" {
                    reason.push_str(" (the answer hit llm.maxTokens)");
                }
                host.log(
                    LogLevel::Info,
                    &format!("LLM attempt {attempts} rejected: {reason}"),
                );
                reasons.push(format!(
                    "attempt {attempts}: {}",
                    crate::response::truncate_chars(&reason, MAX_REASON_CHARS)
                ));
                if rejected.final_ {
                    break;
                }
                if rejected.parsed {
                    previous = rejected.partial;
                }
                feedback = Some(rejected.feedback);
            }
        }
    }
    LlmOutcome::Failed { attempts, reasons }
}

/// One host call: `kubernetes/get_resource` of the Correction named by the token.
fn call(host: &dyn Host, settings: &Settings, token: &str) -> Result<Correction, String> {
    let api_version = &settings.llm.correction_api_version;
    let request = GetResourceRequest {
        api_version: api_version.clone(),
        kind: correction_api::KIND.to_string(),
        name: token.to_string(),
        namespace: None,
        // Identical requests within 5 s are answered by policy-server's cache.
        disable_cache: false,
        field_masks: None,
    };
    let bytes = host.get_resource(&request).map_err(|e| {
        host.log(
            LogLevel::Warning,
            &format!("Correction request failed: {}", one_line(&e, 512)),
        );
        classify_host_error(&e, api_version)
    })?;
    let correction: Correction = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "crfix-llm-proxy's answer is not a Correction object ({e}); check the proxy version"
        )
    })?;
    Ok(correction)
}

/// Maps the host's error string to a short reason a user understands. policy-server reports a
/// failed `get_resource` as text: a denied resource or capability ("Policy has not been
/// granted access to ..."), an unknown kind ("Cannot find resource ..." / "error finding
/// resource ..." from discovery), a missing object ("Cannot find <apiVersion>/<kind> named
/// ..."), or a kube-rs API error whose text carries the Status (`code: 503`, reason
/// `ServiceUnavailable`).
pub fn classify_host_error(err: &str, api_version: &str) -> String {
    let lower = err.to_ascii_lowercase();
    if lower.contains("has not been granted access") {
        return format!(
            "the policy may not read {api_version} Correction: add it to contextAwareResources in the policy's metadata (and to the PolicyServer's allowed host capabilities)"
        );
    }
    if lower.contains("cannot find resource")
        || lower.contains("error finding resource")
        || lower.contains("page not found")
        || lower.contains("could not find the requested resource")
    {
        return format!(
            "the Correction API {api_version} is not served: is crfix-llm-proxy installed and its APIService available?"
        );
    }
    let named = format!(
        "cannot find {}/correction named",
        api_version.to_ascii_lowercase()
    );
    if lower.contains(&named) {
        return "crfix-llm-proxy answered 404 for the Correction: is the APIService pointing at crfix-llm-proxy?".into();
    }
    match status_code(&lower) {
        Some(429) => "the LLM budget or rate limit is exhausted (429)".into(),
        Some(503) => "the LLM or crfix-llm-proxy is unavailable (503)".into(),
        Some(504) => "the LLM did not answer in time (504)".into(),
        Some(code @ (400 | 413 | 422)) => format!(
            "crfix-llm-proxy rejected the Correction request ({code}); this is a crfix bug, please report it"
        ),
        Some(code @ (401 | 403)) => format!(
            "the policy-server may not get corrections.{} ({code}): check its RBAC",
            correction_api::GROUP
        ),
        Some(404) => format!(
            "the Correction API {api_version} answered 404: is crfix-llm-proxy installed?"
        ),
        Some(code) => format!("the Correction request failed ({code})"),
        None if lower.contains("timed out")
            || lower.contains("timeout")
            || lower.contains("deadline") =>
        {
            "the Correction request timed out".into()
        }
        None => format!(
            "the Correction request failed: {}",
            one_line(err, MAX_HOST_ERROR_SNIPPET)
        ),
    }
}

/// The HTTP status in a host error: the last `code: NNN` / `"code":NNN` (kube-rs prints the
/// Status last, after the proxy's own message), else a Status reason name.
fn status_code(lower: &str) -> Option<u16> {
    let bytes = lower.as_bytes();
    let mut found = None;
    let mut from = 0;
    while let Some(i) = lower[from..].find("code") {
        let mut j = from + i + 4;
        while j < bytes.len() && matches!(bytes[j], b' ' | b':' | b'"' | b'=') {
            j += 1;
        }
        let digits = bytes[j..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 3 {
            found = lower[j..j + 3].parse().ok();
        }
        from = from + i + 4;
    }
    if found.is_some() {
        return found;
    }
    const REASONS: [(&str, u16); 7] = [
        ("toomanyrequests", 429),
        ("serviceunavailable", 503),
        ("gatewaytimeout", 504),
        ("requestentitytoolarge", 413),
        ("badrequest", 400),
        ("forbidden", 403),
        ("unauthorized", 401),
    ];
    REASONS
        .iter()
        .find(|(r, _)| lower.contains(r))
        .map(|&(_, c)| c)
}

fn one_line(s: &str, max: usize) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    crate::response::truncate_chars(cleaned.trim(), max)
}

/// Why a candidate was not accepted, and what to tell the LLM next.
struct Rejected {
    summary: String,
    feedback: Feedback,
    /// No further attempt helps (the model said the object cannot be fixed).
    final_: bool,
    /// The answer gave a candidate at all (it parsed and applied).
    parsed: bool,
    /// The candidate, when it broke no guardrail and is only still invalid: the model, told
    /// its remaining errors, often answers with a patch to its own previous result.
    partial: Option<Value>,
}

/// Parses an answer and checks the candidate: guardrails against the object given, then full
/// re-validation. A patch is tried on `previous` (the last attempt's guardrail-clean but
/// invalid candidate) first, then on the object given; either way the result is judged
/// against the object given.
fn judge(
    ctx: &RepairContext,
    given: &Value,
    shown: &Value,
    content: &str,
    previous: Option<&Value>,
) -> Result<Value, Box<Rejected>> {
    let Some(previous) = previous else {
        return judge_on(ctx, given, shown, content, given);
    };
    let on_previous = match judge_on(ctx, given, shown, content, previous) {
        Ok(candidate) => return Ok(candidate),
        Err(rejected) => rejected,
    };
    judge_on(ctx, given, shown, content, given).map_err(|on_given| {
        if on_previous.parsed {
            on_previous
        } else {
            on_given
        }
    })
}

fn judge_on(
    ctx: &RepairContext,
    given: &Value,
    shown: &Value,
    content: &str,
    base: &Value,
) -> Result<Value, Box<Rejected>> {
    let mut candidate = match answer::parse_answer(content, base) {
        Ok(c) => c,
        Err(e) => {
            let final_ = matches!(e, AnswerError::Refused(_));
            return Err(Box::new(Rejected {
                summary: e.to_string(),
                feedback: Feedback::new(content, vec![format!("<answer> | format | {e}")], vec![]),
                final_,
                parsed: false,
                partial: None,
            }));
        }
    };
    restore_hidden_metadata(&mut candidate, given, shown);
    if candidate == *given {
        return Err(Box::new(Rejected {
            summary: "the answer changes nothing".into(),
            feedback: Feedback::new(
                content,
                vec![
                    "<answer> | unchanged | the answer is the object as given; the errors remain"
                        .into(),
                ],
                vec![],
            ),
            final_: false,
            parsed: true,
            partial: None,
        }));
    }
    let mut guard = guardrails::check_candidate(ctx.settings, given, &candidate);
    let unsupported = evidence::check(ctx.settings, given, ctx.old_object, &candidate);
    if !unsupported.is_empty() {
        match &mut guard {
            Ok(_) => guard = Err(unsupported),
            Err(violations) => violations.extend(unsupported),
        }
    }
    let validation = validation::validate(ctx.schema, &candidate, ctx.old_object, ctx.options);
    let mut problems: Vec<String> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    if let Err(violations) = &guard {
        for v in violations {
            problems.push(format!("{} | guardrail | {}", v.pointer, v.message));
        }
        summary.push(format!(
            "broke guardrails ({})",
            violations
                .iter()
                .map(|v| format!("{}: {}", v.pointer, v.message))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if !validation.is_valid() {
        problems.extend(validation.errors.iter().map(prompt::error_line));
        summary.push(format!(
            "still invalid ({})",
            crate::response::error_lines(&validation.errors).join("; ")
        ));
    }
    if problems.is_empty() {
        return Ok(candidate);
    }
    let partial = guard.is_ok().then_some(candidate);
    Err(Box::new(Rejected {
        summary: summary.join(", "),
        feedback: Feedback::new(content, problems, validation.errors),
        final_: false,
        parsed: true,
        partial,
    }))
}

/// The LLM saw the object without managed fields and the last-applied annotation; an answer
/// that left the rest of metadata as shown (give or take empty maps) gets the real metadata
/// back.
fn restore_hidden_metadata(candidate: &mut Value, given: &Value, shown: &Value) {
    let (Some(c), Some(s), Some(g)) = (
        candidate.get("metadata"),
        shown.get("metadata"),
        given.get("metadata"),
    ) else {
        return;
    };
    if c != g && without_empty_maps(c) == without_empty_maps(s) {
        let g = g.clone();
        if let Some(obj) = candidate.as_object_mut() {
            obj.insert("metadata".into(), g);
        }
    }
}

fn without_empty_maps(metadata: &Value) -> Value {
    let mut m = metadata.clone();
    if let Some(obj) = m.as_object_mut() {
        obj.retain(|_, v| !v.as_object().is_some_and(|o| o.is_empty()) && !v.is_null());
    }
    m
}

/// One change per JSON Patch operation between the object given and the candidate, with the
/// value before and after.
pub fn llm_changes(given: &Value, candidate: &Value, model: &str) -> Vec<Change> {
    let patch = json_patch::diff(given, candidate);
    let annotation = pointer::push("/metadata/annotations", REPAIR_ANNOTATION);
    let mut doc = given.clone();
    let mut changes = Vec::new();
    for op in patch.0 {
        let path = op.path().to_string();
        let old = match &op {
            json_patch::PatchOperation::Add(_) => None,
            _ => doc.pointer(&path).cloned(),
        };
        let applied = json_patch::patch(&mut doc, std::slice::from_ref(&op)).is_ok();
        let new = match &op {
            json_patch::PatchOperation::Remove(_) => None,
            _ if applied => doc.pointer(&path).cloned(),
            _ => None,
        };
        if pointer::is_under(&path, &annotation) {
            continue;
        }
        changes.push(Change {
            path,
            from: None,
            old,
            new,
            reason: "LLM".into(),
            source: ChangeSource::Llm {
                model: model.to_string(),
            },
        });
    }
    changes
}

#[cfg(test)]
mod tests;
