//! Stage 5 (docs/architecture.md, "Stages and their files"): ask the LLM through crfix-llm-proxy
//! (a `Correction` read with `kubernetes/get_resource`), parse the answer, check and re-validate
//! it; bounded attempts.
//!
//! Each attempt: build the prompt ([`prompt`]) → fit it into a Correction token → one host call
//! ([`transport`]) → parse the answer ([`answer`]) → evidence ([`evidence`]) and guardrails against the object the LLM was
//! given → re-validation. The first candidate that is fully valid and guardrail-clean wins; a
//! failed candidate goes back to the LLM with its problems, up to `llm.maxAttempts`. A candidate
//! that breaks a guardrail is discarded whole, never partly applied.

mod answer;
mod answer_schema;
mod candidates;
mod cron;
mod evidence;
mod prompt;
pub(crate) mod readings;
mod transport;

pub use answer::{parse_answer, AnswerError};

use correction_api::RequestUser;
use serde_json::Value;

use crate::certainty;
use crate::guardrails::{self, REPAIR_ANNOTATION};
use crate::host::{Host, LogLevel};
use crate::pointer;
use crate::repair::RepairContext;
use crate::schema;
use crate::settings::AnswerFormat;
use crate::types::{Change, ChangeSource, ErrorKind, ValidationOutcome};
use crate::validation;
use prompt::{Feedback, PromptInput};
use transport::call;

#[derive(Debug, Clone)]
pub enum LlmOutcome {
    /// A fully valid, guardrail-clean candidate.
    Fixed {
        object: Value,
        /// The changes the LLM made (source `Llm`), relative to the object it was given.
        changes: Vec<Change>,
        attempts: u32,
        model: String,
        /// Why this fix is not certain (none: it is); an uncertain fix is proposed, not made,
        /// unless `uncertainFixes` says otherwise.
        doubts: Vec<String>,
        /// The other fixes that fit, described, for the proposal.
        alternatives: Vec<String>,
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

/// Asks the LLM to fix what `outcome` still reports on `object`: to choose among the fixes
/// crfix can ground itself when there are any (`llm.answerFormat: choice`), else to write one.
pub fn correct(
    ctx: &RepairContext,
    host: &dyn Host,
    object: &Value,
    outcome: &ValidationOutcome,
    user: Option<&RequestUser>,
) -> LlmOutcome {
    let shown = prompt::for_prompt(object);
    let judge = Judge {
        ctx,
        given: object,
        shown: &shown,
        error_pointers: outcome.errors.iter().map(|e| e.pointer.as_str()).collect(),
        stale: certainty::stale_sides(object, ctx.old_object, &outcome.errors),
    };
    if let Some(rule) = outcome.errors.iter().find(|e| {
        matches!(
            e.kind,
            ErrorKind::Cel {
                transition: true,
                ..
            }
        )
    }) {
        // A transition rule forbids the change itself: any "repair" would undo what the user
        // asked for or invent something in its place. Only the user can decide.
        return LlmOutcome::Failed {
            attempts: 0,
            reasons: vec![format!(
                "the LLM was not asked: {} forbids this change (a transition rule); only the user can decide",
                rule.line()
            )],
        };
    }
    if let Some(reason) = self_contradiction(ctx, object, outcome) {
        return LlmOutcome::Failed {
            attempts: 0,
            reasons: vec![reason],
        };
    }
    if ctx.settings.llm.answer_format == AnswerFormat::Choice {
        let offered = judge.candidates(outcome);
        if !offered.candidates.is_empty() {
            return choose(&judge, host, outcome, user, &offered);
        }
        if outcome
            .errors
            .iter()
            .all(|e| object.pointer(&e.pointer).is_none())
        {
            // Every error is a missing value (required, or a rule on an absent field), and
            // crfix looked wherever an answer may take one from (the old object, fields of
            // the same name, labels and annotations about the field) and found none that
            // passes the checks: whatever the model wrote would be invented.
            return LlmOutcome::Failed {
                attempts: 0,
                reasons: vec![format!(
                    "the LLM was not asked: no value for {} in the object; only the user can give it",
                    outcome
                        .errors
                        .iter()
                        .map(|e| e.pointer.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )],
            };
        }
        host.log(
            LogLevel::Info,
            "crfix found no checked fix to offer; asking the LLM to write one",
        );
    }
    write(&judge, host, outcome, user)
}

/// The first error whose value contradicts itself (two enum values, two amounts): any fix
/// would drop one of the user's two statements, so only the user can decide.
fn self_contradiction(
    ctx: &RepairContext,
    object: &Value,
    outcome: &ValidationOutcome,
) -> Option<String> {
    outcome.errors.iter().find_map(|e| {
        let value = object.pointer(&e.pointer)?;
        let node = schema::node_at(ctx.schema, &e.pointer);
        let old = ctx.old_object.and_then(|o| o.pointer(&e.pointer));
        // Several values in one list entry are several entries, not a contradiction; a word
        // several allowed values share is ambiguous there too.
        let (parent, _) = pointer::split_last(&e.pointer)?;
        let contradiction = if object.pointer(parent).is_some_and(Value::is_array) {
            readings::shared_word(node, value, old)
                .or_else(|| readings::unchanged_but_different(value, old))
                .or_else(|| readings::qualified_value(node, value))
        } else {
            let own = pointer::split_last(&e.pointer)
                .map(|(_, n)| n)
                .unwrap_or_default();
            readings::contradiction(node, value, old)
                .or_else(|| {
                    object
                        .pointer(parent)
                        .and_then(|siblings| readings::same_as_sibling(value, siblings, &own))
                })
                .or_else(|| {
                    let annotations: Vec<&str> = readings::user_annotations(object)
                        .into_iter()
                        .map(|(_, text)| text)
                        .collect();
                    readings::state_against_truth(&own, value, &annotations)
                })
        };
        contradiction.map(|c| {
            format!(
                "the LLM was not asked: {} {}; only the user can say which one is meant",
                e.field_path(),
                c
            )
        })
    })
}

/// The model's answer to one choice request.
#[derive(Debug, Clone, PartialEq)]
enum Pick {
    /// The index into the candidates (not the number shown).
    Fix(usize),
    /// "None of them is what the user meant".
    Nothing,
    /// No usable answer, and why.
    Unusable(String),
}

/// What one choice request came back with.
struct Asked {
    pick: Pick,
    model: String,
    summary: Option<String>,
}

/// Why the chosen `fix` is more than the user's own words reshaped, if it is: it drops the
/// stale side of a rule this update left beside its change, or words are dropped or added.
fn not_a_reshaping(judge: &Judge, fix: &Value) -> Option<String> {
    let stale_dropped: Vec<String> = judge
        .stale
        .iter()
        .filter(|p| fix.pointer(p).is_none())
        .map(|p| pointer::to_field_path(p))
        .collect();
    if !stale_dropped.is_empty() {
        return Some(format!(
            "the fix drops {}, which this update left as stored beside your change",
            stale_dropped.join(", ")
        ));
    }
    certainty::lossless(judge.ctx.schema, judge.given, fix)
        .err()
        .map(|why| format!("the fix {why} (not only your own words, reshaped)"))
}

/// The model picks one of the `offered` candidates by number, or 0. Every candidate already
/// passed what an answer must pass, so the question is only which reading the user meant, and
/// a small model's pick carries a strong position bias (docs/llm.md, "Certainty"): with two or
/// more candidates the question is asked again with the candidates in reverse order
/// (`llm.confirmPicks`), and a pick that does not survive the swap decides nothing. The fix is
/// certain only when it is the one candidate crfix found, it only reshapes the user's words,
/// and the model did not refuse it; otherwise it is proposed (`uncertainFixes`).
fn choose(
    judge: &Judge,
    host: &dyn Host,
    outcome: &ValidationOutcome,
    user: Option<&RequestUser>,
    offered: &candidates::Offered,
) -> LlmOutcome {
    let list = &offered.candidates;
    let fixes: Vec<Vec<String>> = list
        .iter()
        .map(|c| candidates::describe(judge.given, &c.object))
        .collect();
    let forward: Vec<usize> = (0..list.len()).collect();
    let first = match ask_choice(judge, host, outcome, user, &fixes, &forward, 1) {
        Ok(a) => a,
        Err(unavailable) => return *unavailable,
    };
    let mut attempts = 1;
    let second = if list.len() > 1 && judge.ctx.settings.llm.confirm_picks {
        attempts = 2;
        let backward: Vec<usize> = forward.iter().rev().copied().collect();
        Some(
            ask_choice(judge, host, outcome, user, &fixes, &backward, 2).unwrap_or_else(|e| {
                let reason = match *e {
                    LlmOutcome::Unavailable { reason, .. } => reason,
                    _ => "no answer".into(),
                };
                Asked {
                    pick: Pick::Unusable(format!("the second request failed: {reason}")),
                    model: first.model.clone(),
                    summary: None,
                }
            }),
        )
    } else {
        None
    };
    let mut doubts: Vec<String> = Vec::new();
    let chosen = settle(
        &first.pick,
        second.as_ref().map(|s| &s.pick),
        list.len(),
        judge.ctx.settings.llm.trust_agreed_picks,
        &mut doubts,
    );
    if offered.more_possible {
        doubts.push("crfix did not try every combination of readings".into());
    }
    doubts.extend(not_a_reshaping(judge, &list[chosen].object));
    for summary in [
        first.summary.as_ref(),
        second.as_ref().and_then(|s| s.summary.as_ref()),
    ]
    .into_iter()
    .flatten()
    {
        host.log(LogLevel::Info, summary);
    }
    let alternatives = fixes
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != chosen)
        .map(|(_, f)| f.join(", "))
        .collect();
    fixed(
        judge.given,
        list[chosen].object.clone(),
        attempts,
        &first.model,
        doubts,
        alternatives,
    )
}

/// The candidate the picks settle on (its index; crfix's own first when they settle nothing),
/// and why that is not certain, in `doubts`: `first` in the order offered, `second` in reverse.
fn settle(
    first: &Pick,
    second: Option<&Pick>,
    count: usize,
    trust_agreed_picks: bool,
    doubts: &mut Vec<String>,
) -> usize {
    match (first, second) {
        (Pick::Fix(k), None) if count == 1 => *k,
        (Pick::Fix(k), Some(Pick::Fix(j))) if k == j => {
            if !trust_agreed_picks {
                doubts.push(format!(
                    "{count} fixes fit; the model picked this one in both orders, which does not make a small model's pick certain"
                ));
            }
            *k
        }
        (Pick::Fix(_), None) => {
            doubts.push(format!(
                "{count} fixes fit and only one order was asked (llm.confirmPicks is off)"
            ));
            0
        }
        (Pick::Nothing, _) | (_, Some(Pick::Nothing)) => {
            doubts.push(format!(
                "the model judged that {} is not what you meant",
                if count == 1 {
                    "the only fix crfix found"
                } else {
                    "none of the fixes crfix found"
                }
            ));
            0
        }
        (Pick::Unusable(why), _) | (_, Some(Pick::Unusable(why))) => {
            doubts.push(format!("the model gave no usable pick ({why})"));
            0
        }
        (Pick::Fix(_), Some(Pick::Fix(_))) => {
            doubts.push(format!(
                "{count} fixes fit and the model's pick changed with their order"
            ));
            0
        }
    }
}

/// One choice request with the candidates in `order` (their indices, as shown 1..n).
fn ask_choice(
    judge: &Judge,
    host: &dyn Host,
    outcome: &ValidationOutcome,
    user: Option<&RequestUser>,
    fixes: &[Vec<String>],
    order: &[usize],
    attempt: u32,
) -> Result<Asked, Box<LlmOutcome>> {
    let shown: Vec<Vec<String>> = order.iter().map(|&i| fixes[i].clone()).collect();
    let response_schema = answer_schema::choice(shown.len());
    let input = PromptInput {
        settings: judge.ctx.settings,
        schema: judge.ctx.schema,
        object: judge.shown,
        errors: &outcome.errors,
        feedback: None,
        user,
        response_schema: Some(&response_schema),
    };
    let fitted = prompt::fit_messages(&input, &|trim| {
        prompt::choice_messages(&input, &shown, trim)
    })
    .map_err(|e| {
        Box::new(LlmOutcome::Unavailable {
            attempts: attempt - 1,
            reason: e.to_string(),
        })
    })?;
    let correction = call(host, judge.ctx.settings, &fitted.token).map_err(|reason| {
        Box::new(LlmOutcome::Unavailable {
            attempts: attempt,
            reason,
        })
    })?;
    let status = &correction.status;
    log_attempt(host, attempt, status, &fitted);
    let pick = match answer::parse_choice(&status.content) {
        Ok(0) => Pick::Nothing,
        Ok(k) => match usize::try_from(k)
            .ok()
            .and_then(|k| k.checked_sub(1))
            .and_then(|k| order.get(k))
        {
            Some(&i) => Pick::Fix(i),
            None => Pick::Unusable(format!(
                "the answer chose {k}, which was not offered (1-{})",
                order.len()
            )),
        },
        Err(e) => Pick::Unusable(e.to_string()),
    };
    let summary = match &pick {
        Pick::Unusable(why) => Some(rejection_reason(host, attempt, status, why)),
        _ => None,
    };
    Ok(Asked {
        pick,
        model: status.model.clone(),
        summary,
    })
}

/// Up to `llm.maxAttempts` requests for an answer the model writes (a patch or the whole
/// object), each after the first carrying the previous answer and its problems. An answer
/// that repeats an earlier one ends the loop: the model has nothing new to say.
fn write(
    judge: &Judge,
    host: &dyn Host,
    outcome: &ValidationOutcome,
    user: Option<&RequestUser>,
) -> LlmOutcome {
    let settings = judge.ctx.settings;
    let response_schema = written_answer_schema(judge);
    let mut feedback: Option<Feedback> = None;
    let mut previous: Option<Value> = None;
    let mut answers: Vec<String> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    let mut attempts = 0u32;
    while attempts < settings.llm.max_attempts {
        let input = PromptInput {
            settings,
            schema: judge.ctx.schema,
            object: judge.shown,
            errors: &outcome.errors,
            feedback: feedback.as_ref(),
            user,
            response_schema: response_schema.as_ref(),
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
        log_attempt(host, attempts, status, &fitted);
        match judge.judge(&status.content, previous.as_ref()) {
            Ok(candidate) => {
                let doubt = "the model wrote this fix: crfix found no reading of your text to check it against".to_string();
                return fixed(
                    judge.given,
                    candidate,
                    attempts,
                    &status.model,
                    vec![doubt],
                    Vec::new(),
                );
            }
            Err(rejected) => {
                let repeated = answers.iter().any(|a| a.trim() == status.content.trim());
                let summary = if repeated {
                    format!(
                        "the same answer as before (no further attempt): {}",
                        rejected.summary
                    )
                } else {
                    rejected.summary.clone()
                };
                reasons.push(rejection_reason(host, attempts, status, &summary));
                if rejected.final_ || repeated {
                    break;
                }
                answers.push(status.content.clone());
                if rejected.parsed {
                    previous = rejected.partial;
                }
                feedback = Some(rejected.feedback);
            }
        }
    }
    LlmOutcome::Failed { attempts, reasons }
}

/// The schema of a written answer: a patch's, or none for a whole object.
fn written_answer_schema(judge: &Judge) -> Option<Value> {
    let settings = judge.ctx.settings;
    match settings.llm.answer_format {
        AnswerFormat::Object => None,
        AnswerFormat::Patch | AnswerFormat::Choice => Some(answer_schema::patch(
            judge.ctx.schema,
            &judge.error_pointers,
            settings.max_patch_operations,
        )),
    }
}

fn fixed(
    given: &Value,
    object: Value,
    attempts: u32,
    model: &str,
    doubts: Vec<String>,
    alternatives: Vec<String>,
) -> LlmOutcome {
    let changes = llm_changes(given, &object, model);
    LlmOutcome::Fixed {
        object,
        changes,
        attempts,
        model: model.to_string(),
        doubts,
        alternatives,
    }
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

/// Why an attempt failed, logged, and bounded for the rejection message.
fn rejection_reason(
    host: &dyn Host,
    attempt: u32,
    status: &correction_api::CorrectionStatus,
    summary: &str,
) -> String {
    let mut reason = summary.to_string();
    if status.finish_reason == "length" {
        reason.push_str(" (the answer hit llm.maxTokens)");
    }
    host.log(
        LogLevel::Info,
        &format!("LLM attempt {attempt} rejected: {reason}"),
    );
    format!(
        "attempt {attempt}: {}",
        crate::text::truncate_chars(&reason, MAX_REASON_CHARS)
    )
}

fn log_attempt(
    host: &dyn Host,
    attempt: u32,
    status: &correction_api::CorrectionStatus,
    fitted: &prompt::Fitted,
) {
    host.log(
        LogLevel::Info,
        &format!(
            "LLM attempt {attempt}: model {:?}, cached {}, finish reason {:?}, trim level {}, token {} bytes",
            status.model,
            status.cached,
            status.finish_reason,
            fitted.trim.0,
            fitted.token.len()
        ),
    );
}

/// What an answer is judged against: the object the LLM was given (and shown), and the
/// errors it was asked to fix.
struct Judge<'c, 'a> {
    ctx: &'c RepairContext<'a>,
    given: &'c Value,
    shown: &'c Value,
    /// Where the errors are: an answer may change nothing else.
    error_pointers: Vec<&'c str>,
    /// What this UPDATE left stale beside a change, where a rule tests presence.
    stale: Vec<String>,
}

impl Judge<'_, '_> {
    /// Parses an answer and checks the candidate: guardrails against the object given, then
    /// full re-validation. A patch is tried on `previous` (the last attempt's guardrail-clean
    /// but invalid candidate) first, then on the object given; either way the result is
    /// judged against the object given.
    fn judge(&self, content: &str, previous: Option<&Value>) -> Result<Value, Box<Rejected>> {
        let Some(previous) = previous else {
            return self.judge_on(content, self.given);
        };
        let on_previous = match self.judge_on(content, previous) {
            Ok(candidate) => return Ok(candidate),
            Err(rejected) => rejected,
        };
        self.judge_on(content, self.given).map_err(|on_given| {
            if on_previous.parsed {
                on_previous
            } else {
                on_given
            }
        })
    }

    fn judge_on(&self, content: &str, base: &Value) -> Result<Value, Box<Rejected>> {
        let given = self.given;
        let parsed = match answer::parse(content, base) {
            Ok(parsed) => parsed,
            Err(e) => {
                let final_ = matches!(e, AnswerError::Refused(_));
                return Err(Box::new(Rejected {
                    summary: e.to_string(),
                    feedback: Feedback::new(
                        content,
                        vec![format!("<answer> | format | {e}")],
                        vec![],
                    ),
                    final_,
                    parsed: false,
                    partial: None,
                }));
            }
        };
        let mut candidate = parsed.object;
        restore_hidden_metadata(&mut candidate, given, self.shown);
        self.check(content, candidate, parsed.operations, false)
    }

    /// The candidates crfix can ground itself, each checked as an answer would be (with
    /// the schema's enum values counted as evidence: they come from the schema, not the model).
    fn candidates(&self, outcome: &ValidationOutcome) -> candidates::Offered {
        let sources = candidates::Sources {
            schema: self.ctx.schema,
            given: self.given,
            old_object: self.ctx.old_object,
            protected: &self.ctx.settings.protected_paths,
        };
        candidates::enumerate(&sources, &outcome.errors, &mut |object| {
            self.check("", object.clone(), 0, true).is_ok()
        })
    }

    /// Guardrails, scope, evidence and full re-validation of one candidate object.
    fn check(
        &self,
        content: &str,
        candidate: Value,
        operations: usize,
        enum_is_evidence: bool,
    ) -> Result<Value, Box<Rejected>> {
        let (ctx, given) = (self.ctx, self.given);
        if candidate == *given {
            return Err(Box::new(Rejected {
                summary: "the answer changes nothing".into(),
                feedback: Feedback::new(
                    content,
                    vec!["<answer> | unchanged | the answer is the object as given; the errors remain"
                        .into()],
                    vec![],
                ),
                final_: false,
                parsed: true,
                partial: None,
            }));
        }
        let mut violations = match guardrails::check_candidate(ctx.settings, given, &candidate) {
            Ok(_) => Vec::new(),
            Err(violations) => violations,
        };
        if operations > ctx.settings.max_patch_operations {
            violations.push(guardrails::Violation::new(
                "",
                format!(
                    "the answer has {} patch operations, more than maxPatchOperations ({})",
                    operations, ctx.settings.max_patch_operations
                ),
            ));
        }
        let patch = json_patch::diff(given, &candidate);
        violations.extend(
            guardrails::check_scope(given, &patch, &self.error_pointers, &self.stale)
                .into_iter()
                .filter(|v| {
                    !(enum_is_evidence && self.moved_from_an_error(&candidate, &v.pointer))
                }),
        );
        violations.extend(undone_changes(&patch, given, ctx.old_object, &candidate));
        violations.extend(certainty::meaning_kept_over(
            ctx.schema,
            given,
            ctx.old_object,
            &self.stale,
            &candidate,
        ));
        violations.extend(
            evidence::check(ctx.settings, ctx.schema, given, ctx.old_object, &candidate)
                .into_iter()
                .filter(|v| !(enum_is_evidence && self.in_schema(&candidate, &v.pointer))),
        );
        let validation = validation::validate(ctx.schema, &candidate, ctx.old_object, ctx.options);
        if violations.is_empty() && validation.is_valid() {
            return Ok(candidate);
        }
        Err(Box::new(rejected(
            content,
            candidate,
            &violations,
            validation,
        )))
    }
}

impl Judge<'_, '_> {
    /// Does the candidate's value at `p` come from a value in error that it no longer has
    /// there (a field moved to its place, a part split off into a sibling)? crfix's own
    /// candidates may write there; what the model writes may not.
    fn moved_from_an_error(&self, candidate: &Value, p: &str) -> bool {
        let Some(written) = candidate.pointer(p) else {
            return false;
        };
        self.moved_value(candidate, written)
            || self.moved_with_its_name(candidate, p, written)
            || (*written == Value::Bool(true) && self.flag_in_error_names(p))
            || (*written == Value::Bool(true) && self.switches_for_an_error(candidate, p))
            || self.negates_an_error(candidate, p, written)
    }

    /// Is `written`, at `p`, the negated truth value of a field in error beside it that the
    /// candidate removes and whose name says the opposite (`revisionCounterEnabled: false` →
    /// `revisionCounterDisabled: true`)?
    fn negates_an_error(&self, candidate: &Value, p: &str, written: &Value) -> bool {
        let (Some((parent, name)), Some(truth)) = (pointer::split_last(p), written.as_bool())
        else {
            return false;
        };
        self.error_pointers.iter().any(|e| {
            let was = self.given.pointer(e).and_then(|v| match v {
                Value::Bool(b) => Some(*b),
                Value::String(s) => readings::stated_bool(s),
                _ => None,
            });
            pointer::split_last(e).is_some_and(|(at, field)| {
                at == parent
                    && candidate.pointer(e).is_none()
                    && was == Some(!truth)
                    && certainty::names_opposite(&field, &name)
            })
        })
    }

    /// Is the field at `p` the switch beside a value in error that the candidate removes and
    /// that says what the switch does (`disablePolling` for `pollingInterval: "none - webhook
    /// only"`, `includeAllKeys` for `key: "*"`)?
    fn switches_for_an_error(&self, candidate: &Value, p: &str) -> bool {
        let Some((parent, switch)) = pointer::split_last(p) else {
            return false;
        };
        self.error_pointers.iter().any(|e| {
            let said = self.given.pointer(e).and_then(Value::as_str);
            pointer::split_last(e).is_some_and(|(at, field)| {
                at == parent
                    && candidate.pointer(e).is_none()
                    && said.is_some_and(|s| candidates::is_switch_for(&switch, &field, s))
            })
        })
    }

    /// Is `written`, at `p`, the user's value under the same name in a value in error that the
    /// candidate removes (`provider.webhook.secrets` → `secrets`, where `provider` is
    /// undeclared; `maxShards` one level too high → `queueConfig.maxShards`)?
    fn moved_with_its_name(&self, candidate: &Value, p: &str, written: &Value) -> bool {
        let Some((_, name)) = pointer::split_last(p) else {
            return false;
        };
        self.error_pointers.iter().any(|e| {
            let Some(before) = self.given.pointer(e) else {
                return false;
            };
            let Some((_, was)) = pointer::split_last(e) else {
                return false;
            };
            // Or in the unit its key named (`timeout-minutes: 20` → `timeout: 20m`).
            let in_named_unit = candidates::unit_named_by(&was, &name).is_some_and(|unit| {
                before
                    .as_f64()
                    .map(|n| candidates::amount_with_unit(n, unit))
                    == written.as_str().map(str::to_string)
            });
            candidate.pointer(e).is_none()
                && ((was == name && before == written)
                    || in_named_unit
                    || holds_under_name(before, &name, written))
        })
    }

    /// Does a command line in error hold a flag without a value that names the field at `p`
    /// (`--pass-credentials` for `passCredentials`): the user's own switch for it?
    fn flag_in_error_names(&self, p: &str) -> bool {
        let Some((_, field)) = pointer::split_last(p) else {
            return false;
        };
        self.error_pointers.iter().any(|e| {
            self.given
                .pointer(e)
                .and_then(Value::as_str)
                .is_some_and(|text| {
                    crate::certainty::flags(text)
                        .iter()
                        .any(|(flag, v)| v.is_none() && crate::certainty::names_field(flag, &field))
                })
        })
    }

    /// `written` (or, for a new object, each of its values: `keyAlgorithm` and `keySize`
    /// moved into a new `privateKey`) comes from a value in error that the candidate moved.
    fn moved_value(&self, candidate: &Value, written: &Value) -> bool {
        if let Value::Object(map) = written {
            return !map.is_empty() && map.values().all(|v| self.moved_value(candidate, v));
        }
        self.error_pointers.iter().any(|e| {
            let Some(before) = self.given.pointer(e) else {
                return false;
            };
            if candidate.pointer(e) == Some(before) {
                return false;
            }
            written == before
                || written.as_array().is_some_and(|a| a.len() == 1 && a[0] == *before)
                // Parts of a text in error, moved as a list (`"everything except 'X'"` →
                // an exclusion list `[X]` beside it).
                || matches!((written, before), (Value::Array(items), Value::String(b))
                    if !items.is_empty() && items.iter().all(|i| i.as_str()
                        .is_some_and(|w| !w.is_empty() && b.contains(w))))
                || matches!((written, before), (Value::String(w), Value::String(b)) if !w.is_empty() && b.contains(w.as_str()))
                // A number written as a word of its own in the string (`--partitions 6`).
                || matches!((written, before), (Value::Number(w), Value::String(b))
                    if readings::numbers_said(b).iter().any(|n| Some(n.value) == w.as_f64()))
                || (evidence::is_scalar(written) && holds_leaf(before, written))
                // A list or object in error put whole into a new structure (a label's values
                // into a selector requirement).
                || (!evidence::is_scalar(before) && holds_whole(written, before))
                // Or a list or object found whole inside one (levels swapped around it).
                || (!evidence::is_scalar(written) && holds_whole(before, written))
                // Or an entry of an object in error (a rule over the whole map refused it).
                || before.as_object().is_some_and(|entries| {
                    entries.iter().any(|(key, entry)| {
                        !evidence::is_scalar(entry)
                            && candidate.pointer(&pointer::push(e, key)).is_none()
                            && holds_whole(written, entry)
                    })
                })
        })
    }

    /// Is the candidate's value at `p` one the schema spells out there (an enum value, a
    /// whole value of its pattern, a capitalised word its description names: a label
    /// selector's operator `In` where the description lists the valid operators)?
    fn in_schema(&self, candidate: &Value, p: &str) -> bool {
        let (Some(value), Some(node)) = (candidate.pointer(p), schema::node_at(self.ctx.schema, p))
        else {
            return false;
        };
        // The user's own value after a scheme the pattern requires (`http://` + `squid:3128`)
        // holds no word of crfix's but the schema's.
        let said = self.given.pointer(p).and_then(Value::as_str);
        value
            .as_str()
            .is_some_and(|v| named_in_description(node, v))
            || schema::enum_values(node).is_some_and(|allowed| allowed.contains(value))
            || node
                .get("pattern")
                .and_then(Value::as_str)
                .zip(value.as_str())
                .is_some_and(|(pattern, v)| {
                    schema::pattern_literals(pattern).iter().any(|l| l == v)
                        || schema::pattern_schemes(pattern).iter().any(|scheme| {
                            said.is_some_and(|said| {
                                v.strip_prefix(scheme.as_str()) == Some(said.trim())
                            })
                        })
                })
    }
}

/// On UPDATE, what the user changed is what they asked for: an answer that puts the old
/// object's value back where the user changed or removed it undoes the request, valid or not.
/// The same value, or the same number or word written as another JSON type (`604800000` and
/// `"604800000"`: an int-or-string field stores either).
fn same_scalar(a: &Value, b: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    a == b || text(a).is_some_and(|t| Some(t) == text(b))
}

fn undone_changes(
    patch: &json_patch::Patch,
    given: &Value,
    old_object: Option<&Value>,
    candidate: &Value,
) -> Vec<guardrails::Violation> {
    let Some(old) = old_object else {
        return Vec::new();
    };
    patch
        .0
        .iter()
        .filter_map(|op| {
            let (path, value) = match op {
                json_patch::PatchOperation::Add(a) => (a.path.to_string(), &a.value),
                json_patch::PatchOperation::Replace(r) => (r.path.to_string(), &r.value),
                _ => return None,
            };
            let before = old.pointer(&path)?;
            // An entry of a list is judged by the whole list: `"server auth and client auth"`
            // split into two entries keeps the old one at its place without undoing anything.
            if let Some((parent, _)) = pointer::split_last(&path) {
                if let Some(Value::Array(_)) = old.pointer(parent) {
                    let list = candidate.pointer(parent);
                    return (list == old.pointer(parent) && given.pointer(parent) != list).then(
                        || {
                            guardrails::Violation::new(
                                parent,
                                "puts back the old object's list where this UPDATE changed it (an undo, not a repair)",
                            )
                        },
                    );
                }
            }
            // The user's own text stating that value is theirs, whatever was stored
            // (`finalCheckpoint: "no - the VM keeps running until the cutover"` over `false`).
            let stated = given
                .pointer(&path)
                .and_then(Value::as_str)
                .is_some_and(|said| states_scalar(said, value));
            (same_scalar(before, value) && given.pointer(&path) != Some(before) && !stated).then(|| {
                guardrails::Violation::new(
                    &path,
                    "puts back the old object's value where this UPDATE changed it (an undo, not a repair)",
                )
            })
        })
        .collect()
}

/// Does the user's text state the scalar `value`: the truth value it states, or its value
/// before its remarks, written as `value` is?
fn states_scalar(said: &str, value: &Value) -> bool {
    match value {
        Value::Bool(b) => readings::stated_bool(said) == Some(*b),
        Value::String(_) | Value::Number(_) => {
            let written = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string);
            let said = certainty::without_remarks(readings::value_before_comment(said, None));
            said.trim() == written
        }
        _ => false,
    }
}

/// A parsed candidate that broke guardrails or is still invalid.
fn rejected(
    content: &str,
    candidate: Value,
    violations: &[guardrails::Violation],
    validation: crate::types::ValidationOutcome,
) -> Rejected {
    let mut problems: Vec<String> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    if !violations.is_empty() {
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
            crate::types::error_lines(&validation.errors).join("; ")
        ));
    }
    Rejected {
        summary: summary.join(", "),
        feedback: Feedback::new(content, problems, validation.errors),
        final_: false,
        parsed: true,
        partial: violations.is_empty().then_some(candidate),
    }
}

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

/// Does the description of `node` spell out `value`, a capitalised word of letters and digits
/// (`In` where it reads "One of In, NotIn, Exists, DoesNotExist")?
fn named_in_description(node: &Value, value: &str) -> bool {
    value.starts_with(|c: char| c.is_ascii_uppercase())
        && value.chars().all(|c| c.is_ascii_alphanumeric())
        && node
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| {
                d.split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|w| w == value)
            })
}

/// Is `part` one of the values inside `v`, at any depth (`v` itself not counted)?
fn holds_whole(v: &Value, part: &Value) -> bool {
    let inside = |c: &Value| c == part || holds_whole(c, part);
    match v {
        Value::Object(map) => map.values().any(inside),
        Value::Array(items) => items.iter().any(inside),
        _ => false,
    }
}

/// Does `tree` hold `value` under the key `name`, at any depth?
fn holds_under_name(tree: &Value, name: &str, value: &Value) -> bool {
    match tree {
        Value::Object(fields) => fields
            .iter()
            .any(|(k, v)| (k == name && v == value) || holds_under_name(v, name, value)),
        Value::Array(items) => items.iter().any(|i| holds_under_name(i, name, value)),
        _ => false,
    }
}

/// A string or number leaf of the structure `v` is `leaf` (a value moved out of a wrapper in
/// error: `secretKeyRef: {name: smtp}` → `name: smtp`).
fn holds_leaf(v: &Value, leaf: &Value) -> bool {
    let mut found = false;
    evidence::leaves(v, "", 0, &mut |_, l| found |= l == leaf);
    found
}

#[cfg(test)]
mod tests;
