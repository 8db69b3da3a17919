//! The built policy `.wasm` in the policy-server-like host: the waPC contract
//! (`protocol_version`, `validate_settings`, `validate`) and the `get_resource` capability.
//!
//! Needs the module: `make build-wasm` (or `make test`), or `CRFIX_POLICY_WASM=path`.

use serde_json::{json, Value};

use crfix_e2e_tests::valid_cluster_extension as valid_ce;
use crfix_e2e_tests::{
    admission_request, check_settings_response, check_validation_response, crd_fixture,
    inline_settings, not_allowed_error, not_found_error, Cluster, GetResourceCall, PolicyHost,
};

const CE_V1: &str = "clusterextensions.olm.operatorframework.io.v1";
const CE_CRD_NAME: &str = "clusterextensions.olm.operatorframework.io";

fn host() -> PolicyHost {
    match PolicyHost::policy() {
        Ok(h) => h,
        Err(e) => panic!("{e:#}"),
    }
}

/// Three independent, deterministically repairable mistakes and one required field missing
/// under a misspelt key.
fn invalid_ce() -> Value {
    let mut ce = valid_ce();
    ce["spec"]["source"]["sourceType"] = json!("catalog");
    let catalog = &mut ce["spec"]["source"]["catalog"];
    catalog["upgradeConstraintPolicy"] = json!("selfcertified");
    let package = catalog
        .as_object_mut()
        .and_then(|c| c.remove("packageName"))
        .unwrap_or_default();
    catalog["pakageName"] = package;
    ce
}

fn inline(mode: &str) -> Value {
    inline_settings(&[crd_fixture(CE_V1)], json!({ "mode": mode }))
}

fn validate(host: &PolicyHost, request: &Value, settings: &Value) -> Value {
    let response = match host.validate(request, settings) {
        Ok(r) => r,
        Err(e) => panic!("validate failed in the host: {e:#}"),
    };
    if let Err(e) = check_validation_response(&response) {
        panic!("malformed response: {e}");
    }
    response
}

fn message(response: &Value) -> &str {
    response["message"].as_str().unwrap_or_default()
}

#[test]
fn protocol_version_is_v1() {
    assert_eq!(host().protocol_version().expect("protocol_version"), "v1");
}

#[test]
fn the_noop_baseline_speaks_the_same_protocol() {
    let noop = match PolicyHost::noop() {
        Ok(h) => h,
        Err(e) => panic!("{e:#}"),
    };
    assert_eq!(noop.protocol_version().expect("protocol_version"), "v1");
    let r = noop
        .validate(&admission_request("CREATE", valid_ce(), None), &json!({}))
        .expect("validate");
    assert_eq!(r, json!({"accepted": true}));
}

#[test]
fn settings_defaults_and_inline_crds_are_valid() {
    let host = host();
    for settings in [
        json!({}),
        inline("fix"),
        inline("validate"),
        inline("suggest"),
    ] {
        let r = host
            .validate_settings(&settings)
            .expect("validate_settings");
        check_settings_response(&r).expect("shape");
        assert_eq!(r["valid"], true, "{settings:#} → {r}");
    }
}

#[test]
fn settings_errors_name_the_field() {
    let host = host();
    let cases = [
        (json!({"modee": "fix"}), "modee"),
        (json!({"llm": {"maxAttempts": "two"}}), "llm.maxAttempts"),
        (json!({"mode": "repair"}), "mode"),
        (json!({"schemaSource": "inline"}), "crds"),
        (json!({"schemaSource": "inline", "crds": []}), "crds"),
        (json!({"allowedPaths": ["/metadata"]}), "allowedPaths"),
    ];
    for (settings, field) in cases {
        let r = host
            .validate_settings(&settings)
            .expect("validate_settings");
        check_settings_response(&r).expect("shape");
        assert_eq!(r["valid"], false, "{settings} was accepted");
        let m = r["message"].as_str().unwrap_or_default();
        assert!(
            m.contains(field),
            "{settings}: message {m:?} does not name {field}"
        );
    }
}

#[test]
fn settings_that_are_not_json_are_an_answer_not_a_trap() {
    let host = host();
    for payload in [&b"{not json"[..], b"", b"[1,2]", b"\"fix\"", b"\xff\xfe"] {
        let out = host
            .validate_settings_raw(payload)
            .unwrap_or_else(|e| panic!("{payload:?}: {e:#}"));
        let r: Value = serde_json::from_slice(&out).expect("JSON answer");
        check_settings_response(&r).expect("shape");
        assert_eq!(r["valid"], false, "{payload:?}");
    }
}

#[test]
fn a_valid_create_is_accepted_untouched() {
    let host = host();
    for mode in ["fix", "validate", "suggest"] {
        let r = validate(
            &host,
            &admission_request("CREATE", valid_ce(), None),
            &inline(mode),
        );
        assert_eq!(r["accepted"], true, "{mode}: {r:#}");
        assert!(r.get("mutated_object").is_none_or(Value::is_null), "{r:#}");
    }
}

#[test]
fn a_valid_update_is_accepted_untouched() {
    let host = host();
    let old = valid_ce();
    let mut new = valid_ce();
    new["spec"]["source"]["catalog"]["version"] = json!(">=0.14.0, <0.15.0");
    let r = validate(
        &host,
        &admission_request("UPDATE", new, Some(old)),
        &inline("fix"),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r.get("mutated_object").is_none_or(Value::is_null), "{r:#}");
}

#[test]
fn delete_is_accepted_without_reading_anything() {
    let host = host();
    let r = validate(
        &host,
        &admission_request("DELETE", Value::Null, Some(invalid_ce())),
        &json!({}),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(host.host_calls().is_empty(), "{:?}", host.host_calls());
}

#[test]
fn malformed_payloads_are_clean_rejections() {
    let host = host();
    let payloads: [&[u8]; 6] = [
        b"{not json",
        b"",
        b"null",
        b"{\"settings\": {}}",
        b"{\"request\": 42, \"settings\": {}}",
        b"{\"request\": {\"operation\": \"CREATE\", \"object\": [1]}, \"settings\": {}}",
    ];
    for payload in payloads {
        let out = host
            .validate_raw(payload)
            .unwrap_or_else(|e| panic!("{:?}: {e:#}", String::from_utf8_lossy(payload)));
        let r: Value = serde_json::from_slice(&out).expect("JSON answer");
        check_validation_response(&r).expect("shape");
        assert_eq!(r["accepted"], false, "{r}");
        assert_eq!(r["code"], 400, "{r}");
        assert!(message(&r).starts_with("crfix: "), "{r}");
    }
}

#[test]
fn invalid_settings_in_validate_are_a_rejection() {
    let host = host();
    let r = validate(
        &host,
        &admission_request("CREATE", valid_ce(), None),
        &json!({"modee": "fix"}),
    );
    assert_eq!(r["accepted"], false);
    assert!(message(&r).contains("modee"), "{r}");
}

#[test]
fn validate_mode_rejects_with_precise_paths() {
    let host = host();
    let r = validate(
        &host,
        &admission_request("CREATE", invalid_ce(), None),
        &inline("validate"),
    );
    assert_eq!(r["accepted"], false, "{r:#}");
    assert_eq!(r["code"], 422, "{r:#}");
    let m = message(&r);
    for path in [
        "spec.source.sourceType",
        "spec.source.catalog.packageName",
        "spec.source.catalog.upgradeConstraintPolicy",
    ] {
        assert!(m.contains(path), "{path} missing from {m:?}");
    }
    assert!(r.get("mutated_object").is_none_or(Value::is_null));
}

#[test]
fn fix_mode_repairs_and_the_repair_is_valid() {
    let host = host();
    let original = invalid_ce();
    let r = validate(
        &host,
        &admission_request("CREATE", original.clone(), None),
        &inline("fix"),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    let fixed = &r["mutated_object"];
    assert_eq!(fixed["spec"]["source"]["sourceType"], "Catalog", "{r:#}");
    let catalog = &fixed["spec"]["source"]["catalog"];
    assert_eq!(catalog["packageName"], "argocd-operator", "{r:#}");
    assert_eq!(catalog["upgradeConstraintPolicy"], "SelfCertified", "{r:#}");
    assert!(catalog.get("pakageName").is_none(), "{r:#}");
    assert_eq!(
        fixed["spec"]["serviceAccount"],
        original["spec"]["serviceAccount"]
    );
    assert!(
        fixed
            .pointer("/metadata/annotations/crfix.dev~1repair")
            .is_some_and(Value::is_string),
        "{r:#}"
    );
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for path in [
        "/spec/source/sourceType",
        "/spec/source/catalog/upgradeConstraintPolicy",
        "/spec/source/catalog/packageName",
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(path)),
            "no warning for {path}: {warnings:?}"
        );
    }
    // The repaired object is valid: validate mode accepts it as it is.
    let again = validate(
        &host,
        &admission_request("CREATE", fixed.clone(), None),
        &inline("validate"),
    );
    assert_eq!(again["accepted"], true, "{again:#}");
}

#[test]
fn suggest_mode_rejects_with_the_patch() {
    let host = host();
    let r = validate(
        &host,
        &admission_request("CREATE", invalid_ce(), None),
        &inline("suggest"),
    );
    assert_eq!(r["accepted"], false, "{r:#}");
    let m = message(&r);
    assert!(
        m.contains("JSON Patch") && m.contains("/spec/source/sourceType"),
        "{m}"
    );
}

#[test]
fn cluster_schema_source_reads_the_crd_through_get_resource() {
    let host = host();
    let settings = json!({"schemaSource": "cluster", "mode": "validate"});
    let r = validate(
        &host,
        &admission_request("CREATE", invalid_ce(), None),
        &settings,
    );
    let calls = host.host_calls();
    assert!(
        calls
            .iter()
            .any(|c| c.api_version == "apiextensions.k8s.io/v1"
                && c.kind == "CustomResourceDefinition"
                && c.name == CE_CRD_NAME
                && c.namespace.is_none()),
        "{calls:?}"
    );
    assert_eq!(r["accepted"], false, "{r:#}");
    assert!(message(&r).contains("spec.source.sourceType"), "{r:#}");

    let r = validate(
        &host,
        &admission_request("CREATE", valid_ce(), None),
        &settings,
    );
    assert_eq!(r["accepted"], true, "{r:#}");
}

#[test]
fn cluster_schema_not_found_follows_on_schema_unavailable() {
    let host = host().with_cluster(Cluster::new());
    let request = admission_request("CREATE", invalid_ce(), None);

    let r = validate(
        &host,
        &request,
        &json!({"schemaSource": "cluster", "onSchemaUnavailable": "accept"}),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r.get("mutated_object").is_none_or(Value::is_null));
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains(CE_CRD_NAME), "{r:#}");

    let r = validate(
        &host,
        &request,
        &json!({"schemaSource": "cluster", "onSchemaUnavailable": "reject"}),
    );
    assert_eq!(r["accepted"], false, "{r:#}");
    assert!(message(&r).contains(CE_CRD_NAME), "{r:#}");
    assert!(!host.host_calls().is_empty());
}

#[test]
fn a_resource_outside_context_aware_resources_is_refused_like_policy_server() {
    let host = host().with_allowed_resources(Vec::<(String, String)>::new());
    let r = validate(
        &host,
        &admission_request("CREATE", invalid_ce(), None),
        &json!({"schemaSource": "cluster", "onSchemaUnavailable": "reject"}),
    );
    assert_eq!(r["accepted"], false, "{r:#}");
    assert_eq!(host.host_calls().len(), 1, "{:?}", host.host_calls());
}

#[test]
fn custom_resolvers_see_every_call() {
    let crd = crd_fixture(CE_V1);
    let host = host().with_resolver(move |call: &GetResourceCall| {
        if call.name == CE_CRD_NAME {
            serde_json::to_vec(&crd).map_err(|e| e.to_string())
        } else {
            Err(not_found_error(call))
        }
    });
    let r = validate(
        &host,
        &admission_request("CREATE", valid_ce(), None),
        &json!({"schemaSource": "cluster", "onSchemaUnavailable": "reject"}),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert_eq!(host.host_calls().len(), 1);
}

#[test]
fn host_error_strings_match_policy_server() {
    let call = GetResourceCall {
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        name: "x.example.com".into(),
        namespace: None,
        disable_cache: false,
        field_masks: None,
    };
    assert_eq!(
        not_found_error(&call),
        "Callback evaluation failure: Cannot find apiextensions.k8s.io/v1/CustomResourceDefinition \
         named 'x.example.com' inside of namespace 'None'"
    );
    assert_eq!(
        not_allowed_error("crfix.dev/v1alpha1", "Correction"),
        "Policy has not been granted access to Kubernetes crfix.dev/v1alpha1/Correction \
         resources. The violation has been reported."
    );
    assert_eq!(Cluster::new().get(&call), Err(not_found_error(&call)));
}

#[test]
fn every_evaluation_starts_from_a_fresh_instance() {
    // The same request twice gives the same answer and the same host calls: nothing is
    // remembered in wasm memory between evaluations.
    let host = host();
    let request = admission_request("CREATE", invalid_ce(), None);
    let settings = json!({"schemaSource": "cluster", "mode": "validate"});
    let first = validate(&host, &request, &settings);
    let calls = host.host_calls().len();
    host.clear_records();
    let second = validate(&host, &request, &settings);
    assert_eq!(first, second);
    assert_eq!(host.host_calls().len(), calls);
}

/// Settings are a JSON object: an array is never read by position (`["validate"]` would be
/// `mode: validate`, and an array could silently empty `protectedPaths`).
#[test]
fn settings_given_as_an_array_are_refused() {
    let host = host();
    for settings in [json!(["validate"]), json!({"llm": [true, 3]}), json!([])] {
        let r = host
            .validate_settings(&settings)
            .expect("validate_settings");
        assert_eq!(r["valid"], false, "{settings}");
        let m = r["message"].as_str().unwrap_or_default();
        assert!(m.contains("expected a JSON object"), "{settings}: {m}");
        let r = validate(
            &host,
            &admission_request("CREATE", valid_ce(), None),
            &settings,
        );
        assert_eq!(r["accepted"], false, "{settings}: {r}");
        assert_eq!(r["code"], 400, "{r}");
        assert!(message(&r).contains("expected a JSON object"), "{r}");
    }
}

/// `version: 1.10` reaches a webhook as the number 1.1: turning it into "1.1" would change the
/// version range, so crfix refuses and says to quote the value; an integer is still coerced.
#[test]
fn a_number_with_a_fraction_is_never_turned_into_text() {
    let host = host();
    for number in [json!(1.1), json!(1.2), json!(10.0)] {
        let mut ce = valid_ce();
        ce["spec"]["source"]["catalog"]["version"] = number.clone();
        let r = validate(
            &host,
            &admission_request("CREATE", ce, None),
            &inline("fix"),
        );
        assert_eq!(r["accepted"], false, "{number}: {r:#}");
        assert!(
            message(&r).contains("quote the value"),
            "{number}: {}",
            message(&r)
        );
    }
    let mut ce = valid_ce();
    ce["spec"]["source"]["catalog"]["version"] = json!(2);
    let r = validate(
        &host,
        &admission_request("CREATE", ce, None),
        &inline("fix"),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert_eq!(
        r["mutated_object"]["spec"]["source"]["catalog"]["version"],
        "2"
    );
}
