//! The feedback loop against a scripted Correction endpoint: a `FnHost` that decodes each token
//! (as crfix-llm-proxy does) and answers with the next scripted `Correction`.

use std::cell::RefCell;

use correction_api::{CorrectionRequest, CorrectionStatus, Role};
use serde_json::{json, Value};

use super::transport::classify_host_error;
use super::*;
use crate::host::{FnHost, GetResourceRequest};
use crate::settings::{AnswerFormat, Settings};
use crate::types::{ErrorKind, FieldError};
use crate::validation::ValidateOptions;
use correction_api::Correction;

const MODEL: &str = "qwen2.5-coder-1.5b-instruct";

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["namespace", "serviceAccount", "source"],
                "properties": {
                    "namespace": {"type": "string", "maxLength": 63},
                    "serviceAccount": {"type": "object", "required": ["name"],
                        "properties": {"name": {"type": "string"}}},
                    "source": {
                        "type": "object",
                        "required": ["sourceType"],
                        "properties": {
                            "sourceType": {"type": "string", "enum": ["Catalog"]},
                            "catalog": {
                                "type": "object",
                                "required": ["packageName"],
                                "properties": {
                                    "packageName": {"type": "string", "maxLength": 253},
                                    "version": {"type": "string", "maxLength": 64},
                                    "upgradeConstraintPolicy": {"type": "string",
                                        "enum": ["CatalogProvided", "SelfCertified"]},
                                    "channels": {"type": "array", "items": {"type": "string"}}
                                }
                            }
                        }
                    }
                }
            }
        }
    })
}

/// The README scenario after deterministic repair: only packageName is missing.
fn given() -> Value {
    json!({
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {
            "name": "argocd",
            "labels": {"app.kubernetes.io/name": "argocd-operator"},
            "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update"}]
        },
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "argocd-installer"},
            "source": {"sourceType": "Catalog", "catalog": {"version": ">=3.0, <3.6"}}
        }
    })
}

fn fixed() -> Value {
    let mut v = given();
    v["spec"]["source"]["catalog"]["packageName"] = json!("argocd-operator");
    v
}

/// What the LLM sees and answers with: no managed fields.
fn fixed_as_shown() -> Value {
    prompt::for_prompt(&fixed())
}

fn outcome() -> ValidationOutcome {
    one_error(
        "/spec/source/catalog/packageName",
        ErrorKind::Required,
        "Required value",
    )
}

/// Settings for the path where the model writes its answer (a patch or the object).
fn settings(max_attempts: u32) -> Settings {
    let mut s = Settings::default();
    s.llm.enabled = true;
    s.llm.max_attempts = max_attempts;
    s.llm.answer_format = AnswerFormat::Patch;
    s
}

/// The default: the model chooses among crfix's checked candidates when there are any.
fn choice_settings() -> Settings {
    let mut s = Settings::default();
    s.llm.enabled = true;
    s
}

/// Errors with one error at `pointer`.
fn one_error(pointer: &str, kind: ErrorKind, message: &str) -> ValidationOutcome {
    ValidationOutcome {
        errors: vec![FieldError {
            pointer: pointer.into(),
            kind,
            message: message.into(),
        }],
        warnings: vec![],
    }
}

fn correction(token: &str, content: &str) -> Vec<u8> {
    let c = Correction::new(
        token,
        CorrectionStatus {
            content: content.to_string(),
            model: MODEL.into(),
            cached: false,
            finish_reason: "stop".into(),
            usage: None,
        },
    );
    serde_json::to_vec(&c).unwrap()
}

/// Runs `correct` against scripted answers; returns the outcome and the decoded requests.
fn run(
    settings: &Settings,
    answers: &[Result<String, String>],
) -> (LlmOutcome, Vec<CorrectionRequest>) {
    run_on(settings, &given(), &outcome(), answers)
}

/// [`run`] on another object and its errors.
fn run_on(
    settings: &Settings,
    given: &Value,
    errors: &ValidationOutcome,
    answers: &[Result<String, String>],
) -> (LlmOutcome, Vec<CorrectionRequest>) {
    run_against(&schema(), settings, given, errors, answers)
}

/// [`run_on`] against another schema.
fn run_against(
    schema: &Value,
    settings: &Settings,
    given: &Value,
    errors: &ValidationOutcome,
    answers: &[Result<String, String>],
) -> (LlmOutcome, Vec<CorrectionRequest>) {
    let seen: RefCell<Vec<CorrectionRequest>> = RefCell::new(Vec::new());
    let host = FnHost(|req: &GetResourceRequest| {
        assert_eq!(req.api_version, "crfix.dev/v1alpha1");
        assert_eq!(req.kind, "Correction");
        assert_eq!(req.namespace, None);
        assert!(!req.disable_cache);
        assert!(req.name.len() <= settings.llm.max_token_bytes);
        let decoded = correction_api::decode_token(&req.name, settings.llm.max_token_bytes)
            .map_err(|e| format!("400 bad token: {e}"))?;
        let n = {
            let mut seen = seen.borrow_mut();
            seen.push(decoded);
            seen.len()
        };
        match answers.get(n - 1) {
            Some(Ok(content)) => Ok(correction(&req.name, content)),
            Some(Err(e)) => Err(e.clone()),
            None => panic!("more calls than scripted answers"),
        }
    });
    let ctx = context(schema, None, settings);
    let out = correct(&ctx, &host, given, errors, None);
    (out, seen.into_inner())
}

/// The context the LLM step runs in, with the validation options of a CRD read inline.
fn context<'a>(
    schema: &'a Value,
    old_object: Option<&'a Value>,
    settings: &'a Settings,
) -> RepairContext<'a> {
    RepairContext {
        schema,
        old_object,
        settings,
        options: ValidateOptions {
            report_unknown_fields: true,
        },
    }
}

/// The object the model's first choice makes of `given` against `schema`, each question
/// answered with option 1; panics where no fix is made.
fn fixed_on_first_choices(schema: &Value, given: &Value, errors: &ValidationOutcome) -> Value {
    let first = ok("{\"choice\": 1}");
    let answers = [first.clone(), first.clone(), first];
    let (out, requests) = run_against(schema, &choice_settings(), given, errors, &answers);
    assert!(!requests.is_empty());
    match out {
        LlmOutcome::Fixed { object, .. } => object,
        other => panic!("expected a fix, got {other:?}"),
    }
}

fn ok(s: impl Into<String>) -> Result<String, String> {
    Ok(s.into())
}

#[test]
fn readme_scenario_the_llm_supplies_the_package_name() {
    let answer = format!(
        "```json\n{}\n```",
        serde_json::to_string_pretty(&fixed_as_shown()).unwrap()
    );
    let (out, requests) = run(&settings(2), &[ok(answer)]);
    let LlmOutcome::Fixed {
        object,
        changes,
        attempts,
        model,
        doubts,
        ..
    } = out
    else {
        panic!("expected Fixed, got {out:?}");
    };
    // A written answer is never certain.
    assert_eq!(doubts.len(), 1, "{doubts:?}");
    assert!(doubts[0].contains("the model wrote this fix"), "{doubts:?}");
    // Managed fields come back although the LLM never saw them.
    assert_eq!(object, fixed());
    assert_eq!((attempts, model.as_str()), (1, MODEL));
    assert_eq!(
        changes,
        vec![Change {
            path: "/spec/source/catalog/packageName".into(),
            from: None,
            old: None,
            new: Some(json!("argocd-operator")),
            reason: "LLM".into(),
            source: ChangeSource::Llm {
                model: MODEL.into()
            },
        }]
    );
    assert!(crate::response::change_warning(&changes[0]).ends_with(&format!("(from LLM {MODEL})")));
    // The request: system rules, then the object and its errors.
    assert_eq!(requests.len(), 1);
    let msgs = &requests[0].messages;
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0].role, Role::System);
    assert!(msgs[1]
        .content
        .contains("/spec/source/catalog/packageName | required | Required value"));
    assert!(msgs[1]
        .content
        .contains("\"app.kubernetes.io/name\":\"argocd-operator\""));
    assert!(!msgs[1].content.contains("managedFields"));
}

#[test]
fn second_attempt_gets_the_problems_and_the_last_answer() {
    let prose = "I think the package is probably argocd-operator.";
    let (out, requests) = run(&settings(2), &[ok(prose), ok(fixed_as_shown().to_string())]);
    assert!(
        matches!(&out, LlmOutcome::Fixed { attempts: 2, object, .. } if *object == fixed()),
        "{out:?}"
    );
    assert_eq!(requests.len(), 2);
    let second = &requests[1].messages;
    assert_eq!(second.len(), 4);
    assert_eq!(second[2].role, Role::Assistant);
    assert_eq!(second[2].content, prose);
    assert!(second[3].content.contains("no JSON or YAML object"));
    // The first request is repeated as is: the feedback is what differs.
    assert_eq!(second[..2], requests[0].messages[..]);
}

#[test]
fn every_attempt_failing_is_a_failure_with_reasons() {
    let (out, requests) = run(
        &settings(3),
        &[
            ok("no idea"),
            ok("{\"apiVersion\": \"v1\", \"kind\""),
            ok("[1, 2]"),
        ],
    );
    let LlmOutcome::Failed { attempts, reasons } = out else {
        panic!("expected Failed, got {out:?}");
    };
    assert_eq!(attempts, 3);
    assert_eq!(requests.len(), 3);
    assert_eq!(reasons.len(), 3);
    assert!(reasons[0].starts_with("attempt 1: "));
    assert!(reasons[2].contains("JSON Patch"));
}

#[test]
fn a_refusal_ends_the_loop() {
    let (out, requests) = run(
        &settings(3),
        &[ok(
            r#"{"unfixable": "the package name is not stated in the object"}"#,
        )],
    );
    assert_eq!(requests.len(), 1);
    let LlmOutcome::Failed { attempts, reasons } = out else {
        panic!("expected Failed, got {out:?}");
    };
    assert_eq!(attempts, 1);
    assert!(reasons[0].contains("unfixable: the package name is not stated"));
}

#[test]
fn an_unchanged_answer_is_a_failed_attempt() {
    let shown = prompt::for_prompt(&given());
    let (out, _) = run(&settings(1), &[ok(shown.to_string())]);
    assert!(
        matches!(&out, LlmOutcome::Failed { reasons, .. } if reasons[0].contains("changes nothing")),
        "{out:?}"
    );
}

/// Hostile or careless answers: each fixes the error but also does something the guardrails
/// forbid; each is discarded whole.
#[test]
fn hostile_answers_are_rejected_by_guardrails() {
    let mut sa = fixed_as_shown();
    sa["spec"]["serviceAccount"]["name"] = json!("cluster-admin");
    let mut renamed = fixed_as_shown();
    renamed["metadata"]["name"] = json!("argocd-evil");
    let mut outside = fixed_as_shown();
    outside["status"] = json!({"installed": true});
    let mut kind = fixed_as_shown();
    kind["kind"] = json!("Pod");
    let mut annotated = fixed_as_shown();
    annotated["metadata"]["annotations"] = json!({"owner": "attacker"});
    let sa_patch = json!([
        {"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd-operator"},
        {"op": "replace", "path": "/spec/serviceAccount/name", "value": "cluster-admin"}
    ]);
    for (name, hostile) in [
        ("serviceAccount", sa),
        ("metadata.name", renamed),
        ("outside /spec", outside),
        ("kind", kind),
        ("annotations", annotated),
        ("patch on serviceAccount", sa_patch),
    ] {
        let (out, _) = run(&settings(1), &[ok(hostile.to_string())]);
        match out {
            LlmOutcome::Failed { attempts, reasons } => {
                assert_eq!(attempts, 1, "{name}");
                assert!(reasons[0].contains("guardrail"), "{name}: {reasons:?}");
            }
            other => panic!("{name}: hostile answer was not rejected: {other:?}"),
        }
    }
}

#[test]
fn a_guardrail_failure_is_fed_back_and_a_clean_answer_wins() {
    let mut sa = fixed_as_shown();
    sa["spec"]["serviceAccount"]["name"] = json!("cluster-admin");
    let (out, requests) = run(
        &settings(2),
        &[ok(sa.to_string()), ok(fixed_as_shown().to_string())],
    );
    assert!(
        matches!(&out, LlmOutcome::Fixed { attempts: 2, object, .. } if *object == fixed()),
        "{out:?}"
    );
    let second = &requests[1].messages;
    assert!(second[2].content.contains("cluster-admin"));
    assert!(second[3]
        .content
        .contains("/spec/serviceAccount | guardrail |"));
}

/// Needs `validation::validate` to report schema errors on the first candidate.
#[test]
fn an_invalid_candidate_is_fed_back_with_its_errors() {
    let mut too_long = fixed_as_shown();
    too_long["spec"]["source"]["catalog"]["packageName"] = json!("a".repeat(300));
    let (out, requests) = run(
        &settings(2),
        &[ok(too_long.to_string()), ok(fixed_as_shown().to_string())],
    );
    assert!(
        matches!(&out, LlmOutcome::Fixed { attempts: 2, .. }),
        "{out:?}"
    );
    assert!(requests[1].messages[3]
        .content
        .contains("/spec/source/catalog/packageName | maxLength"));
}

#[test]
fn max_patch_operations_bounds_the_answer_as_written() {
    // 25 operations whose net effect is one: the answer as written counts, not its diff.
    let mut ops = vec![json!(
        {"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd-operator"}
    )];
    for _ in 0..12 {
        ops.push(json!({"op": "add", "path": "/spec/source/catalog/channels", "value": ["x"]}));
        ops.push(json!({"op": "remove", "path": "/spec/source/catalog/channels"}));
    }
    assert_eq!(ops.len(), 25);
    let (out, _) = run(&settings(1), &[ok(Value::Array(ops.clone()).to_string())]);
    let LlmOutcome::Failed { reasons, .. } = &out else {
        panic!("{out:?}")
    };
    assert!(reasons[0].contains("25 patch operations"), "{reasons:?}");
    let mut allowed = settings(1);
    allowed.max_patch_operations = 25;
    let (out, _) = run(&allowed, &[ok(Value::Array(ops).to_string())]);
    assert!(matches!(&out, LlmOutcome::Fixed { .. }), "{out:?}");
}

#[test]
fn a_second_patch_builds_on_the_first_candidate() {
    // Two errors: the package is missing and the version too long. Attempt 1 supplies the
    // package only; attempt 2 mends only the version, as a patch to its own previous result
    // (how a small model answers the feedback).
    let too_long = format!(">=3.0, <3.6{}", " ".repeat(70));
    let mut broken = given();
    broken["spec"]["source"]["catalog"]["version"] = json!(too_long);
    let mut errors = outcome();
    errors.errors.push(FieldError {
        pointer: "/spec/source/catalog/version".into(),
        kind: ErrorKind::MaxLength { limit: 64 },
        message: "Too long: may not be more than 64 bytes".into(),
    });
    let first = json!([
        {"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd-operator"}
    ]);
    let second = json!([
        {"op": "replace", "path": "/spec/source/catalog/version", "value": ">=3.0, <3.6"}
    ]);
    let (out, _) = run_on(
        &settings(2),
        &broken,
        &errors,
        &[ok(first.to_string()), ok(second.to_string())],
    );
    assert!(
        matches!(&out, LlmOutcome::Fixed { attempts: 2, object, .. } if *object == fixed()),
        "{out:?}"
    );
    // A patch that only applies to the object as given is still taken that way: attempt 1
    // mended the version, and attempt 2's `test` holds only on the object as given.
    let version_only = json!([
        {"op": "replace", "path": "/spec/source/catalog/version", "value": ">=3.0, <3.6"}
    ]);
    let whole = json!([
        {"op": "test", "path": "/spec/source/catalog/version", "value": too_long},
        {"op": "replace", "path": "/spec/source/catalog/version", "value": ">=3.0, <3.6"},
        {"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd-operator"}
    ]);
    let (out, _) = run_on(
        &settings(2),
        &broken,
        &errors,
        &[ok(version_only.to_string()), ok(whole.to_string())],
    );
    assert!(
        matches!(&out, LlmOutcome::Fixed { attempts: 2, object, .. } if *object == fixed()),
        "{out:?}"
    );
    // A first answer that changes what had no error is never built on.
    let out_of_scope = json!([
        {"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd-operator"},
        {"op": "replace", "path": "/spec/source/catalog/version", "value": too_long}
    ]);
    let (out, _) = run(
        &settings(2),
        &[ok(out_of_scope.to_string()), ok(second.to_string())],
    );
    assert!(matches!(&out, LlmOutcome::Failed { .. }), "{out:?}");
    // A candidate that broke a guardrail is never built on.
    let hostile = json!([
        {"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd-operator"},
        {"op": "replace", "path": "/spec/serviceAccount/name", "value": "cluster-admin"}
    ]);
    let (out, _) = run(
        &settings(2),
        &[ok(hostile.to_string()), ok(second.to_string())],
    );
    assert!(matches!(&out, LlmOutcome::Failed { .. }), "{out:?}");
}

#[test]
fn unavailable_llm_is_reported_not_retried() {
    let cases = [
        (
            "Host error: Policy has not been granted access to Kubernetes crfix.dev/v1alpha1/Correction resources. The violation has been reported.",
            "contextAwareResources",
        ),
        (
            "Host error: Callback evaluation failure: ApiError: LLM budget exhausted: TooManyRequests (ErrorResponse { status: \"Failure\", message: \"LLM budget exhausted\", reason: \"TooManyRequests\", code: 429 })",
            "(429)",
        ),
        (
            "Host error: Callback evaluation failure: ApiError: circuit open: ServiceUnavailable (ErrorResponse { status: \"Failure\", message: \"circuit open\", reason: \"ServiceUnavailable\", code: 503 })",
            "(503)",
        ),
    ];
    for (error, expected) in cases {
        let (out, requests) = run(&settings(2), &[Err(error.to_string())]);
        assert_eq!(requests.len(), 1, "{error}");
        match out {
            LlmOutcome::Unavailable { attempts, reason } => {
                assert_eq!(attempts, 1);
                assert!(reason.contains(expected), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn host_errors_are_classified() {
    let av = "crfix.dev/v1alpha1";
    let c = |e: &str| classify_host_error(e, av);
    assert!(c("Policy has not been granted access to the 'kubernetes/get_resource' host capability. The violation has been reported.")
        .contains("may not read crfix.dev/v1alpha1 Correction"));
    assert!(c("Host error: Callback evaluation failure: error finding resource crfix.dev/v1alpha1 / Correction: ApiError: 404 page not found: Failed to parse error data (ErrorResponse { status: \"404 Not Found\", message: \"404 page not found\\n\", reason: \"Failed to parse error data\", code: 404 })")
        .contains("is not served"));
    assert!(
        c("Callback evaluation failure: Cannot find resource crfix.dev/v1alpha1/Correction")
            .contains("is not served")
    );
    assert!(c("Callback evaluation failure: Cannot find crfix.dev/v1alpha1/Correction named 'c1.abc' inside of namespace 'None'")
        .contains("answered 404"));
    // The proxy's own message may mention other codes: the Status code (printed last) counts.
    assert!(c("ApiError: upstream returned code 500 three times: ServiceUnavailable (ErrorResponse { status: \"Failure\", message: \"upstream returned code 500 three times\", reason: \"ServiceUnavailable\", code: 503 })")
        .contains("(503)"));
    assert!(
        c("ApiError: LLM timeout: Timeout (Status { code: 504, reason: \"Timeout\" })")
            .contains("(504)")
    );
    assert!(c("reason: GatewayTimeout").contains("(504)"));
    assert!(
        c("ApiError: token too large: RequestEntityTooLarge (ErrorResponse { code: 413 })")
            .contains("llm.maxTokenBytes")
    );
    assert!(
        c("ApiError: bad token: BadRequest (ErrorResponse { code: 400 })").contains("crfix bug")
    );
    assert!(c("ApiError: forbidden: Forbidden (ErrorResponse { code: 403 })").contains("RBAC"));
    assert!(c("HyperError: operation timed out").contains("timed out"));
    let other = c("something\nodd happened");
    assert_eq!(
        other,
        "the Correction request failed: something odd happened"
    );
}

#[test]
fn a_prompt_that_cannot_fit_is_never_sent() {
    let mut s = settings(2);
    s.llm.max_token_bytes = 40;
    let (out, requests) = run(&s, &[]);
    assert!(requests.is_empty());
    match out {
        LlmOutcome::Unavailable { attempts, reason } => {
            assert_eq!(attempts, 0);
            assert!(reason.contains("does not fit"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_answer_that_is_not_a_correction_is_unavailable() {
    let schema = schema();
    let s = settings(2);
    let host = FnHost(|_: &GetResourceRequest| Ok(b"{\"kind\": \"Status\"}".to_vec()));
    let ctx = context(&schema, None, &s);
    match correct(&ctx, &host, &given(), &outcome(), None) {
        LlmOutcome::Unavailable { attempts, reason } => {
            assert_eq!(attempts, 1);
            assert!(reason.contains("not a Correction"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn changes_are_one_per_changed_leaf_or_subtree() {
    let given = json!({"spec": {"a": 1, "b": {"c": "x"}, "list": ["p", "q", "r"], "gone": true}});
    let candidate = json!({"spec": {"a": 2, "b": {"c": "x", "d": {"e": 1}}, "list": ["p", "r"]}});
    let changes = llm_changes(&given, &candidate, "m");
    let summary: Vec<(String, Option<Value>, Option<Value>)> = changes
        .iter()
        .map(|c| (c.path.clone(), c.old.clone(), c.new.clone()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("/spec/a".into(), Some(json!(1)), Some(json!(2))),
            ("/spec/b/d".into(), None, Some(json!({"e": 1}))),
            ("/spec/list/1".into(), Some(json!("q")), Some(json!("r"))),
            ("/spec/list/2".into(), Some(json!("r")), None),
            ("/spec/gone".into(), Some(json!(true)), None),
        ]
    );
    assert!(changes
        .iter()
        .all(|c| c.source == ChangeSource::Llm { model: "m".into() }));
    // Applying the changes' patch to the given object gives the candidate.
    let mut doc = given.clone();
    json_patch::patch(&mut doc, &json_patch::diff(&given, &candidate)).unwrap();
    assert_eq!(doc, candidate);
}

#[test]
fn hidden_metadata_comes_back_when_the_answer_left_metadata_as_shown() {
    let mut given = given();
    given["metadata"]["annotations"] =
        json!({prompt::LAST_APPLIED_ANNOTATION: "{\"apiVersion\": \"...\"}"});
    let shown = prompt::for_prompt(&given);
    assert_eq!(shown["metadata"]["annotations"], json!({}));
    // The model dropped the (now empty) annotations map: still the metadata as shown.
    let mut candidate = shown.clone();
    candidate["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    restore_hidden_metadata(&mut candidate, &given, &shown);
    assert_eq!(candidate["metadata"], given["metadata"]);
    // A real change to metadata is kept, for the guardrails to see.
    let mut renamed = shown.clone();
    renamed["metadata"]["name"] = json!("other");
    restore_hidden_metadata(&mut renamed, &given, &shown);
    assert_eq!(renamed["metadata"]["name"], "other");
    assert!(renamed["metadata"].get("managedFields").is_none());
}

#[test]
fn the_token_names_the_user_who_applied_the_object() {
    let settings = settings(1);
    let schema = schema();
    let seen = RefCell::new(None);
    let host = FnHost(|req: &GetResourceRequest| {
        let decoded =
            correction_api::decode_token_with_user(&req.name, settings.llm.max_token_bytes)
                .map_err(|e| e.to_string())?;
        *seen.borrow_mut() = decoded.user;
        Ok(correction(&req.name, "{\"unfixable\": \"no\"}"))
    });
    let ctx = context(&schema, None, &settings);
    let alice = correction_api::RequestUser {
        username: "alice".into(),
        groups: vec!["dev".into()],
    };
    let _ = correct(&ctx, &host, &given(), &outcome(), Some(&alice));
    assert_eq!(seen.borrow().as_ref(), Some(&alice));
}

#[test]
fn the_model_chooses_among_checked_candidates() {
    let (out, requests) = run(&choice_settings(), &[ok("```json\n{\"choice\": 1}\n```")]);
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.messages[0].content, prompt::CHOICE_RULES);
    let user = &request.messages[1].content;
    assert!(
        user.contains("1: add /spec/source/catalog/packageName = \"argocd-operator\"\n"),
        "{user}"
    );
    assert!(user.contains("0: none of these is what the user meant"));
    let schema = request.response_schema.as_ref().expect("a response schema");
    let offered = schema["properties"]["choice"]["enum"].as_array().unwrap();
    assert_eq!(offered[0], json!(0));
    assert!(offered.len() >= 2, "{schema}");
    let LlmOutcome::Fixed {
        object, attempts, ..
    } = out
    else {
        panic!("expected Fixed, got {out:?}");
    };
    assert_eq!(object, fixed());
    assert_eq!(attempts, 1);
}

#[test]
fn values_moved_out_of_a_wrapper_in_error_may_be_written_where_they_fit() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"password": {"type": "object", "required": ["key"], "properties": {
            "name": {"type": "string"}, "key": {"type": "string"}}}}}}});
    let given = json!({"apiVersion": "example.com/v1", "kind": "Mailer",
        "metadata": {"name": "m"},
        "spec": {"password": {"secretKeyRef": {"name": "smtp", "key": "password"}}}});
    let errors = ValidationOutcome {
        errors: vec![
            FieldError {
                pointer: "/spec/password/key".into(),
                kind: ErrorKind::Required,
                message: "Required value".into(),
            },
            FieldError {
                pointer: "/spec/password/secretKeyRef".into(),
                kind: ErrorKind::Unknown,
                message: "field not declared in schema".into(),
            },
        ],
        warnings: vec![],
    };
    let (out, requests) = run_against(
        &schema,
        &choice_settings(),
        &given,
        &errors,
        &[ok("{\"choice\": 1}"), ok("{\"choice\": 1}")],
    );
    assert!(!requests.is_empty());
    let LlmOutcome::Fixed { object, .. } = out else {
        panic!("expected Fixed, got {out:?}");
    };
    assert_eq!(
        object["spec"]["password"],
        json!({"name": "smtp", "key": "password"})
    );
}

#[test]
fn metadata_name_is_never_offered_for_a_verbatim_path() {
    // Without the label, the only word for the package is metadata.name ("argocd"): the
    // verbatim rule refuses it, so crfix has nothing to offer for the missing value and does
    // not ask the model to invent one.
    let mut given = given();
    given["metadata"]["labels"] = json!({});
    let (out, requests) = run_on(&choice_settings(), &given, &outcome(), &[]);
    assert!(requests.is_empty());
    assert!(
        matches!(&out, LlmOutcome::Failed { attempts: 0, reasons }
            if reasons[0].contains("not asked: no value for /spec/source/catalog/packageName")),
        "{out:?}"
    );
    // Asked to write (answerFormat: patch), the model gets a patch schema for that path only.
    let (out, requests) = run_on(&settings(1), &given, &outcome(), &[ok("{\"patch\": []}")]);
    assert_eq!(requests.len(), 1);
    assert_ne!(requests[0].messages[0].content, prompt::CHOICE_RULES);
    let schema = requests[0]
        .response_schema
        .as_ref()
        .expect("a patch schema");
    assert_eq!(
        schema["properties"]["patch"]["items"]["properties"]["path"]["enum"],
        json!(["/spec/source/catalog/packageName"])
    );
    assert!(
        matches!(&out, LlmOutcome::Failed { attempts: 1, reasons } if reasons[0].contains("empty patch")),
        "{out:?}"
    );
}

#[test]
fn a_value_that_contradicts_itself_is_never_sent() {
    let mut given = fixed();
    given["spec"]["source"]["catalog"]["version"] = json!("1.2 (14d old, one month at most)");
    let errors = one_error(
        "/spec/source/catalog/version",
        ErrorKind::Pattern {
            pattern: "^[0-9.]+$".into(),
        },
        "Invalid value",
    );
    let (out, requests) = run_on(&choice_settings(), &given, &errors, &[]);
    assert!(requests.is_empty());
    assert!(
        matches!(&out, LlmOutcome::Failed { attempts: 0, reasons }
            if reasons[0].contains("two different amounts, \"14d\" and \"one month\"")),
        "{out:?}"
    );
}

/// The doubts of a `Fixed` outcome (panics on any other outcome).
fn doubts_of(out: &LlmOutcome) -> &[String] {
    match out {
        LlmOutcome::Fixed { doubts, .. } => doubts,
        other => panic!("expected Fixed, got {other:?}"),
    }
}

#[test]
fn a_lone_fix_the_model_refuses_or_garbles_is_proposed_not_made() {
    for (answer, doubt) in [
        ("{\"choice\": 0}", "not what you meant"),
        ("{\"choice\": 42}", "which was not offered"),
        ("I would pick the first", "no usable pick"),
    ] {
        let (out, requests) = run(&choice_settings(), &[ok(answer)]);
        assert_eq!(requests.len(), 1, "{answer}: one option, one question");
        let doubts = doubts_of(&out);
        assert!(
            doubts.iter().any(|d| d.contains(doubt)),
            "{answer}: {doubts:?}"
        );
    }
}

#[test]
fn a_value_taken_from_elsewhere_is_never_certain() {
    // The only candidate, picked by the model: the package name comes from a label, not from
    // a value the fix reshapes, so it is a proposal.
    let (out, _) = run(&choice_settings(), &[ok("{\"choice\": 1}")]);
    let doubts = doubts_of(&out);
    assert_eq!(doubts.len(), 1, "{doubts:?}");
    assert!(doubts[0].contains("writes \"argocd\""), "{doubts:?}");
}

/// A ClusterExtension whose channels were written as one string.
fn channels_as_string(text: &str) -> (Value, ValidationOutcome) {
    let mut given = fixed();
    given["spec"]["source"]["catalog"]["channels"] = json!(text);
    let errors = one_error(
        "/spec/source/catalog/channels",
        ErrorKind::Type {
            expected: "array".into(),
        },
        "Invalid value: \"string\": must be array",
    );
    (given, errors)
}

#[test]
fn the_only_reading_that_keeps_every_word_is_certain() {
    let (given, errors) = channels_as_string("stable, fast");
    let (out, requests) = run_on(
        &choice_settings(),
        &given,
        &errors,
        &[ok("{\"choice\": 1}")],
    );
    assert_eq!(requests.len(), 1);
    let LlmOutcome::Fixed { object, doubts, .. } = &out else {
        panic!("expected Fixed, got {out:?}");
    };
    assert!(doubts.is_empty(), "{doubts:?}");
    assert_eq!(
        object["spec"]["source"]["catalog"]["channels"],
        json!(["stable", "fast"])
    );
    // The model's "no" is a veto even then.
    let (out, _) = run_on(
        &choice_settings(),
        &given,
        &errors,
        &[ok("{\"choice\": 0}")],
    );
    assert!(!doubts_of(&out).is_empty());
}

/// Two readings of one enum error: a user's value that names neither allowed value.
fn two_readings() -> (Value, ValidationOutcome) {
    let mut given = fixed();
    given["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] = json!("whatever works");
    let errors = one_error(
        "/spec/source/catalog/upgradeConstraintPolicy",
        ErrorKind::Enum {
            allowed: vec![json!("CatalogProvided"), json!("SelfCertified")],
        },
        "Unsupported value",
    );
    (given, errors)
}

#[test]
fn with_several_readings_the_model_is_asked_in_both_orders() {
    let (given, errors) = two_readings();
    let settings = choice_settings();
    // Position bias: "1" both times names two different fixes.
    let (out, requests) = run_on(
        &settings,
        &given,
        &errors,
        &[ok("{\"choice\": 1}"), ok("{\"choice\": 1}")],
    );
    assert_eq!(requests.len(), 2);
    let first = &requests[0].messages[1].content;
    let second = &requests[1].messages[1].content;
    let policy = "/spec/source/catalog/upgradeConstraintPolicy";
    assert!(
        first.contains(&format!("1: set {policy} = \"CatalogProvided\"")),
        "{first}"
    );
    assert!(
        second.contains(&format!("1: set {policy} = \"SelfCertified\"")),
        "{second}"
    );
    // The same prompt up to the options: the server's prompt cache keeps the second cheap.
    let common = first
        .chars()
        .zip(second.chars())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        common * 10 >= first.chars().count() * 8,
        "{common} of {}",
        first.len()
    );
    let doubts = doubts_of(&out);
    assert!(
        doubts
            .iter()
            .any(|d| d.contains("changed with their order")),
        "{doubts:?}"
    );
    let LlmOutcome::Fixed {
        alternatives,
        attempts,
        ..
    } = &out
    else {
        unreachable!()
    };
    assert_eq!(*attempts, 2);
    assert_eq!(alternatives.len(), 1, "{alternatives:?}");
    // The same fix in both orders ("1" then "2"): agreed, still a proposal by default ...
    let agreed = [ok("{\"choice\": 1}"), ok("{\"choice\": 2}")];
    let (out, _) = run_on(&settings, &given, &errors, &agreed);
    assert!(doubts_of(&out).iter().any(|d| d.contains("both orders")));
    // ... and certain only when the operator trusts agreed picks (the value is translated,
    // not reshaped, so that doubt remains).
    let mut trusting = settings.clone();
    trusting.llm.trust_agreed_picks = true;
    let (out, _) = run_on(&trusting, &given, &errors, &agreed);
    let doubts = doubts_of(&out);
    assert!(
        !doubts.iter().any(|d| d.contains("both orders")),
        "{doubts:?}"
    );
    // Without the confirmation, one question, and the pick cannot be told from position bias.
    let mut once = settings.clone();
    once.llm.confirm_picks = false;
    let (out, requests) = run_on(&once, &given, &errors, &[ok("{\"choice\": 1}")]);
    assert_eq!(requests.len(), 1);
    assert!(doubts_of(&out).iter().any(|d| d.contains("only one order")));
}

#[test]
fn a_failed_second_question_leaves_the_fix_uncertain() {
    let (given, errors) = two_readings();
    let (out, requests) = run_on(
        &choice_settings(),
        &given,
        &errors,
        &[ok("{\"choice\": 1}"), Err("503 LLM unavailable".into())],
    );
    assert_eq!(requests.len(), 2);
    assert!(doubts_of(&out)
        .iter()
        .any(|d| d.contains("second request failed")));
}

#[test]
fn an_enum_value_is_evidence_for_a_candidate_not_for_a_written_answer() {
    let mut given = fixed();
    given["spec"]["source"]["sourceType"] = json!("the catalog please");
    let errors = one_error(
        "/spec/source/sourceType",
        ErrorKind::Enum {
            allowed: vec![json!("Catalog")],
        },
        "Unsupported value",
    );
    let (out, requests) = run_on(
        &choice_settings(),
        &given,
        &errors,
        &[ok("{\"choice\": 1}")],
    );
    assert!(requests[0].messages[1]
        .content
        .contains("1: set /spec/source/sourceType = \"Catalog\""));
    assert!(matches!(out, LlmOutcome::Fixed { .. }), "{out:?}");
    // Written by the model instead, "Catalog" is grounded by the user's "catalog" anyway;
    // "Bundle" is not, and not in the enum either.
    let patch =
        r#"{"patch": [{"op": "replace", "path": "/spec/source/sourceType", "value": "Bundle"}]}"#;
    let (out, _) = run_on(&settings(1), &given, &errors, &[ok(patch)]);
    assert!(matches!(out, LlmOutcome::Failed { .. }), "{out:?}");
}

#[test]
fn a_repeated_answer_ends_the_loop() {
    let bad = r#"{"patch": [{"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd"}]}"#;
    let (out, requests) = run(&settings(4), &[ok(bad), ok(bad), ok(bad), ok(bad)]);
    assert_eq!(requests.len(), 2);
    assert!(
        matches!(&out, LlmOutcome::Failed { attempts: 2, reasons } if reasons[1].contains("the same answer as before")),
        "{out:?}"
    );
}

#[test]
fn an_answer_that_undoes_the_users_update_is_refused() {
    let schema = schema();
    let settings = settings(1);
    let old = fixed();
    let mut given = fixed();
    given["spec"]["source"]["catalog"]["version"] = json!("latest");
    let ctx = context(&schema, Some(&old), &settings);
    let undo = prompt::for_prompt(&old).to_string();
    let host = FnHost(|req: &GetResourceRequest| Ok(correction(&req.name, &undo)));
    let errors = one_error(
        "/spec/source/catalog/version",
        ErrorKind::Pattern {
            pattern: "^[0-9]".into(),
        },
        "invalid version",
    );
    let out = correct(&ctx, &host, &given, &errors, None);
    assert!(
        matches!(&out, LlmOutcome::Failed { reasons, .. } if reasons[0].contains("puts back the old object's value")),
        "{out:?}"
    );
}

#[test]
fn a_value_put_back_as_another_json_type_is_still_an_undo() {
    // An int-or-string field: the stored 604800000, written back as "604800000".
    let old = json!({"spec": {"retention": 604800000}});
    let given = json!({"spec": {"retention": "keep forever"}});
    let undo = json!({"spec": {"retention": "604800000"}});
    let violations = undone_changes(&json_patch::diff(&given, &undo), &given, Some(&old), &undo);
    assert_eq!(violations.len(), 1, "{violations:?}");
    let changed = json!({"spec": {"retention": "-1"}});
    assert!(undone_changes(
        &json_patch::diff(&given, &changed),
        &given,
        Some(&old),
        &changed
    )
    .is_empty());
}

#[test]
fn a_list_entry_is_undone_only_when_the_whole_list_is() {
    let old = json!({"spec": {"usages": ["signing", "server auth"]}});
    let given = json!({"spec": {"usages": ["signing", "server auth and client auth"]}});
    let split = json!({"spec": {"usages": ["signing", "server auth", "client auth"]}});
    assert!(undone_changes(
        &json_patch::diff(&given, &split),
        &given,
        Some(&old),
        &split
    )
    .is_empty());
    let undo = json!({"spec": {"usages": ["signing", "server auth"]}});
    let violations = undone_changes(&json_patch::diff(&given, &undo), &given, Some(&old), &undo);
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].pointer, "/spec/usages");
}

#[test]
fn a_field_moved_into_a_new_object_is_offered() {
    let mut given = fixed();
    given["spec"]["source"]
        .as_object_mut()
        .unwrap()
        .remove("catalog");
    given["spec"]["packageName"] = json!("argocd-operator");
    let errors = one_error(
        "/spec/packageName",
        ErrorKind::Unknown,
        "field not declared in schema",
    );
    let (out, requests) = run_on(
        &choice_settings(),
        &given,
        &errors,
        &[ok("{\"choice\": 1}")],
    );
    let user = &requests[0].messages[1].content;
    assert!(
        user.contains("1: add /spec/source/catalog = {\"packageName\":\"argocd-operator\"}; remove /spec/packageName"),
        "{user}"
    );
    let LlmOutcome::Fixed { object, .. } = out else {
        panic!("expected Fixed, got {out:?}");
    };
    assert_eq!(
        object["spec"]["source"]["catalog"]["packageName"],
        "argocd-operator"
    );
}

#[test]
fn a_value_no_error_is_at_may_not_be_dropped_to_satisfy_a_rule_around_it() {
    // A rule on /spec/source failed (say "version and channels exclude each other"): removing
    // one of the user's two values would pick which one the user got wrong.
    let mut given = fixed();
    given["spec"]["source"]["catalog"]["version"] = json!("1.2.3");
    given["spec"]["source"]["catalog"]["channels"] = json!(["stable"]);
    let errors = one_error(
        "/spec/source",
        ErrorKind::Cel {
            rule: "!(has(self.catalog.version) && has(self.catalog.channels))".into(),
            reason: "FieldValueInvalid".into(),
            transition: false,
        },
        "version and channels exclude each other",
    );
    let drop = r#"{"patch": [{"op": "remove", "path": "/spec/source/catalog/channels"}]}"#;
    let (out, _) = run_on(&settings(1), &given, &errors, &[ok(drop)]);
    assert!(
        matches!(&out, LlmOutcome::Failed { reasons, .. }
            if reasons[0].contains("/spec/source/catalog/channels: drops or changes what the user wrote")),
        "{out:?}"
    );
    // Adding below the object in error is what such a rule usually asks for (a missing child).
    let mut no_catalog = fixed();
    no_catalog["spec"]["source"]
        .as_object_mut()
        .unwrap()
        .remove("catalog");
    let add = r#"{"patch": [{"op": "add", "path": "/spec/source/catalog", "value": {"packageName": "argocd-operator"}}]}"#;
    let (out, _) = run_on(&settings(1), &no_catalog, &errors, &[ok(add)]);
    assert!(
        !matches!(&out, LlmOutcome::Failed { reasons, .. } if reasons[0].contains("drops or changes")),
        "{out:?}"
    );
}

/// On UPDATE the stale side of a presence rule may be dropped by a candidate, and nothing else
/// the user wrote inside the object in error may.
#[test]
fn only_the_stale_side_of_a_presence_rule_may_be_dropped() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "solver": {"type": "object",
            "x-kubernetes-validations": [{"rule": "has(self.http01) != has(self.dns01)"}],
            "properties": {
                "http01": {"type": "object", "properties": {"class": {"type": "string"}}},
                "dns01": {"type": "object", "properties": {"zone": {"type": "string"}}}}}}}}});
    let old = json!({"spec": {"solver": {"http01": {"class": "nginx"}}}});
    let given = json!({"spec": {"solver": {"http01": {"class": "nginx"}, "dns01": {"zone": "a"}}}});
    let errors = [FieldError {
        pointer: "/spec/solver".into(),
        kind: ErrorKind::Cel {
            rule: "has(self.http01) != has(self.dns01)".into(),
            reason: "FieldValueInvalid".into(),
            transition: false,
        },
        message: "exactly one".into(),
    }];
    let settings = choice_settings();
    let ctx = context(&schema, Some(&old), &settings);
    let shown = prompt::for_prompt(&given);
    let judge = Judge {
        ctx: &ctx,
        given: &given,
        shown: &shown,
        error_pointers: vec!["/spec/solver"],
        stale: certainty::stale_sides(&given, Some(&old), &errors),
    };
    let drops_stale = json!({"spec": {"solver": {"dns01": {"zone": "a"}}}});
    assert!(judge.check("", drops_stale, 0, true).is_ok());
    let drops_new = json!({"spec": {"solver": {"http01": {"class": "nginx"}}}});
    let refused = judge.check("", drops_new, 0, true).unwrap_err();
    assert!(
        refused.summary.contains("broke guardrails"),
        "{}",
        refused.summary
    );
}

/// crfix's own candidate may write what its reading moves into a new structure beside the
/// value in error (a label's values into a selector requirement, with the operator its
/// description names); a model's answer may not.
#[test]
fn a_value_in_error_moved_into_a_new_structure_beside_it_is_in_scope_for_a_candidate() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "selector": {"type": "object", "properties": {
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
            "matchExpressions": {"type": "array", "items": {"type": "object", "properties": {
                "key": {"type": "string"},
                "operator": {"type": "string", "description": "One of In, NotIn, Exists."},
                "values": {"type": "array", "items": {"type": "string"}}}}}}}}}}});
    let given =
        json!({"spec": {"selector": {"matchLabels": {"app": ["api", "worker"], "tier": "web"}}}});
    let settings = choice_settings();
    let ctx = context(&schema, None, &settings);
    let shown = prompt::for_prompt(&given);
    let judge = Judge {
        ctx: &ctx,
        given: &given,
        shown: &shown,
        error_pointers: vec!["/spec/selector/matchLabels/app"],
        stale: vec![],
    };
    let requirement = json!({"spec": {"selector": {"matchLabels": {"tier": "web"},
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["api", "worker"]}]}}});
    assert!(judge.check("", requirement.clone(), 0, true).is_ok());
    assert!(judge.check("", requirement, 1, false).is_err());
}

#[test]
fn a_rule_over_match_labels_that_refuses_a_labels_list_is_offered_the_in_requirement() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"podSelector": {"type": "object", "properties": {
            "matchLabels": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": [{"rule": "self.all(k, type(self[k]) == string)",
                    "message": "label values must be strings"}]},
            "matchExpressions": {"type": "array", "items": {"type": "object",
                "required": ["key", "operator"], "properties": {
                    "key": {"type": "string"},
                    "operator": {"type": "string", "enum": ["In", "NotIn", "Exists"]},
                    "values": {"type": "array", "items": {"type": "string"}}}}}}}}}}});
    let given = json!({"apiVersion": "example.com/v1", "kind": "Server",
        "metadata": {"name": "s"},
        "spec": {"podSelector": {"matchLabels": {"app": ["shop", "shop-canary"], "tier": "web"}}}});
    let errors = one_error(
        "/spec/podSelector/matchLabels",
        ErrorKind::Cel {
            rule: "self.all(k, type(self[k]) == string)".into(),
            reason: "FieldValueInvalid".into(),
            transition: false,
        },
        "label values must be strings",
    );
    let object = fixed_on_first_choices(&schema, &given, &errors);
    assert_eq!(
        object["spec"]["podSelector"],
        json!({"matchLabels": {"tier": "web"}, "matchExpressions": [
            {"key": "app", "operator": "In", "values": ["shop", "shop-canary"]}]})
    );
}

#[test]
fn amounts_in_mixed_units_are_counted_in_each_fields_unit() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"patroni": {"type": "object", "properties": {
            "ttl": {"type": "integer", "description": "Leader lock lifetime in seconds."},
            "retry_timeout": {"type": "integer",
                "description": "Seconds before DCS and Postgres operations are retried."},
            "maximum_lag_on_failover": {"type": "integer", "format": "int64",
                "description": "Largest lag in bytes a replica may have to be promoted."}}}}}}});
    let given = json!({"apiVersion": "acid.zalan.do/v1", "kind": "postgresql",
        "metadata": {"name": "p"},
        "spec": {"patroni": {"ttl": "30s", "retry_timeout": "10000ms",
            "maximum_lag_on_failover": "32 MiB"}}});
    let type_error = |p: &str| FieldError {
        pointer: p.into(),
        kind: ErrorKind::Type {
            expected: "integer".into(),
        },
        message: "must be of type integer".into(),
    };
    let errors = ValidationOutcome {
        errors: vec![
            type_error("/spec/patroni/maximum_lag_on_failover"),
            type_error("/spec/patroni/retry_timeout"),
            type_error("/spec/patroni/ttl"),
        ],
        warnings: vec![],
    };
    let object = fixed_on_first_choices(&schema, &given, &errors);
    assert_eq!(
        object["spec"]["patroni"],
        json!({"ttl": 30, "retry_timeout": 10, "maximum_lag_on_failover": 33554432})
    );
}

#[test]
fn a_value_the_users_text_states_is_no_undo_though_it_was_stored() {
    let old = json!({"spec": {"finalCheckpoint": false, "size": "10Gi"}});
    let undone = |given: Value, candidate: Value| {
        let patch = json_patch::diff(&given, &candidate);
        undone_changes(&patch, &given, Some(&old), &candidate)
    };
    let said = json!({"spec": {"finalCheckpoint": "no - the VM keeps running", "size": "10Gi"}});
    let stored = json!({"spec": {"finalCheckpoint": false, "size": "10Gi"}});
    assert!(undone(said, stored.clone()).is_empty());
    // A change note from the stored value is undone by putting it back.
    let note = json!({"spec": {"finalCheckpoint": "false -> true at cutover", "size": "10Gi"}});
    assert_eq!(undone(note, stored).len(), 1);
}
