//! Objects that Argo CD or Flux manage, and Kubewarden's background audit, through the real
//! `.wasm`: a managed object is never silently mutated into drift (by default the fix is
//! proposed for the repository; `gitOps.onManaged` warns or mutates instead), and an audit
//! request (the stored object, as Kubewarden's audit scanner sends it) is answered without a
//! change: a valid object passes, an invalid one fails with the fix the rules find proposed.
//!
//! Needs the module: `make build-wasm` (or `make test`), or `CRFIX_POLICY_WASM=path`.

use serde_json::{json, Value};

use crfix_e2e_tests::{
    admission_request, check_validation_response, crd_fixture, inline_settings, workspace_root,
    PolicyHost,
};

const CE_V1: &str = "clusterextensions.olm.operatorframework.io.v1";

fn answer(request: &Value, settings: &Value) -> Value {
    let host = PolicyHost::policy().unwrap_or_else(|e| panic!("{e:#}"));
    let response = host
        .validate(request, settings)
        .unwrap_or_else(|e| panic!("validate failed in the host: {e:#}"));
    if let Err(e) = check_validation_response(&response) {
        panic!("malformed response: {e}");
    }
    response
}

/// The sample of `make run`: three mistakes the rules repair with certainty.
fn invalid_ce() -> Value {
    let path = workspace_root().join("e2e-tests/requests/cluster-extension-invalid.json");
    let request: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("sample")).expect("json");
    request["object"].clone()
}

fn valid_ce() -> Value {
    let path = workspace_root().join("e2e-tests/requests/cluster-extension-valid.json");
    let request: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("sample")).expect("json");
    request["object"].clone()
}

fn with_metadata(mut object: Value, field: &str, key: &str, value: &str) -> Value {
    object["metadata"][field][key] = json!(value);
    object
}

fn fix_settings(extra: Value) -> Value {
    let mut settings = inline_settings(&[crd_fixture(CE_V1)], json!({"mode": "fix"}));
    if let (Some(s), Value::Object(extra)) = (settings.as_object_mut(), extra) {
        s.extend(extra);
    }
    settings
}

fn warnings(response: &Value) -> Vec<String> {
    response["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[test]
fn an_unmanaged_object_is_repaired_as_before() {
    let r = answer(
        &admission_request("CREATE", invalid_ce(), None),
        &fix_settings(json!({})),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r["mutated_object"].is_object(), "{r:#}");
}

#[test]
fn an_argo_cd_object_gets_the_fix_proposed_for_the_repository() {
    let object = with_metadata(
        invalid_ce(),
        "annotations",
        "argocd.argoproj.io/tracking-id",
        "olm:olm.operatorframework.io/ClusterExtension:/argocd",
    );
    let r = answer(
        &admission_request("CREATE", object, None),
        &fix_settings(json!({})),
    );
    assert_eq!(r["accepted"], false, "{r:#}");
    assert!(r["mutated_object"].is_null(), "{r:#}");
    let message = r["message"].as_str().unwrap_or_default();
    for part in [
        "managed by GitOps (annotation argocd.argoproj.io/tracking-id)",
        "make the fix in the repository",
        "sourceType: \"Catalog\" (was \"catalog\")",
        "kubectl patch --local",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
    assert_eq!(
        r["audit_annotations"]["crfix-outcome"], "suggested",
        "{r:#}"
    );
}

#[test]
fn a_flux_object_with_on_managed_warn_is_accepted_unchanged_with_the_fix_in_warnings() {
    let object = with_metadata(
        invalid_ce(),
        "labels",
        "kustomize.toolkit.fluxcd.io/name",
        "operators",
    );
    let r = answer(
        &admission_request("CREATE", object, None),
        &fix_settings(json!({"gitOps": {"onManaged": "warn"}})),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r["mutated_object"].is_null(), "{r:#}");
    let w = warnings(&r);
    assert!(
        w.iter()
            .any(|w| w.starts_with("crfix: not changed: ") && w.contains("managed by GitOps")),
        "{w:#?}"
    );
    assert!(
        w.iter()
            .any(|w| w.contains("would have") && w.contains("sourceType")),
        "{w:#?}"
    );
    assert_eq!(r["audit_annotations"]["crfix-outcome"], "reported", "{r:#}");
}

#[test]
fn on_managed_mutate_and_an_empty_list_repair_in_the_cluster() {
    let object = with_metadata(invalid_ce(), "labels", "app.kubernetes.io/instance", "olm");
    for settings in [
        json!({"gitOps": {"onManaged": "mutate"}}),
        json!({"gitOps": {"managedBy": []}}),
    ] {
        let r = answer(
            &admission_request("CREATE", object.clone(), None),
            &fix_settings(settings.clone()),
        );
        assert_eq!(r["accepted"], true, "{settings}: {r:#}");
        assert!(r["mutated_object"].is_object(), "{settings}: {r:#}");
    }
}

#[test]
fn the_managed_by_list_is_the_users_and_a_valid_managed_object_is_untouched() {
    let settings = fix_settings(json!({"gitOps": {"managedBy": ["example.com/owned-by"]}}));
    let object = with_metadata(invalid_ce(), "labels", "example.com/owned-by", "platform");
    let r = answer(&admission_request("CREATE", object, None), &settings);
    assert_eq!(r["accepted"], false, "{r:#}");
    assert!(
        r["message"]
            .as_str()
            .unwrap_or_default()
            .contains("(label example.com/owned-by)"),
        "{r:#}"
    );
    let valid = with_metadata(valid_ce(), "labels", "example.com/owned-by", "platform");
    let r = answer(&admission_request("CREATE", valid, None), &settings);
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r["mutated_object"].is_null(), "{r:#}");
    assert!(warnings(&r).is_empty(), "{r:#}");
}

#[test]
fn a_managed_by_key_that_is_no_key_is_refused_by_validate_settings() {
    let host = PolicyHost::policy().unwrap_or_else(|e| panic!("{e:#}"));
    let r = host
        .validate_settings(&json!({"gitOps": {"managedBy": ["not a key"]}}))
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(r["valid"], false, "{r:#}");
    assert!(
        r["message"]
            .as_str()
            .unwrap_or_default()
            .contains("gitOps.managedBy"),
        "{r:#}"
    );
}

/// A request as Kubewarden's audit scanner builds it from a stored object: CREATE, the
/// object's uid as the request's, no user, and the kind where the plural resource belongs.
fn audit_request(mut object: Value) -> Value {
    object["metadata"]["uid"] = json!("5b0e7d1c-0a4f-4f43-9d2e-6c1a8e2f9b10");
    object["metadata"]["creationTimestamp"] = json!("2026-11-20T10:00:00Z");
    object["metadata"]["resourceVersion"] = json!("48213");
    let mut request = admission_request("CREATE", object, None);
    request["uid"] = json!("5b0e7d1c-0a4f-4f43-9d2e-6c1a8e2f9b10");
    request["resource"]["resource"] = json!("ClusterExtension");
    if let Some(r) = request.as_object_mut() {
        r.remove("userInfo");
    }
    request
}

#[test]
fn an_audit_of_an_invalid_stored_object_fails_with_the_fix_proposed_and_nothing_changed() {
    // From the cluster (the CRD found under the kind's plural) and inline, and with the LLM
    // enabled: an audit never spends LLM budget and never mutates.
    for settings in [
        json!({"schemaSource": "cluster", "mode": "fix", "llm": {"enabled": true}}),
        fix_settings(json!({})),
    ] {
        let r = answer(&audit_request(invalid_ce()), &settings);
        assert_eq!(r["accepted"], false, "{settings}: {r:#}");
        assert!(r["mutated_object"].is_null(), "{r:#}");
        let message = r["message"].as_str().unwrap_or_default();
        assert!(message.contains("background audit"), "{message}");
        assert!(
            message.contains("sourceType: \"Catalog\" (was \"catalog\")"),
            "{message}"
        );
        assert!(
            r["audit_annotations"].get("crfix-llm-attempts").is_none(),
            "{r:#}"
        );
    }
}

#[test]
fn an_audit_of_a_valid_stored_object_passes() {
    let r = answer(
        &audit_request(valid_ce()),
        &json!({"schemaSource": "cluster", "mode": "fix"}),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r["mutated_object"].is_null(), "{r:#}");
}

#[test]
fn an_admission_create_with_a_user_is_no_audit() {
    // The same stored-looking object sent by a user (kubectl apply of an exported object):
    // an ordinary admission, repaired.
    let mut request = audit_request(invalid_ce());
    request["userInfo"] = json!({"username": "alice", "groups": ["system:authenticated"]});
    request["resource"]["resource"] = json!("clusterextensions");
    let r = answer(&request, &fix_settings(json!({})));
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r["mutated_object"].is_object(), "{r:#}");
}
