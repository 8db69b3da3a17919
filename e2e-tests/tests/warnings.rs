//! What the warnings of the real `.wasm` say: the "not checked" warning only where rules were
//! really not checked on the object that will be stored, every rule of a CRD the API server
//! accepts evaluated (a route CRD shaped like Gateway API's HTTPRoute, inline and from the
//! cluster), and a warning cut at 120 characters still naming the field and the rule.
//!
//! Needs the module: `make build-wasm` (or `make test`), or `CRFIX_POLICY_WASM=path`.

use serde_json::{json, Value};

use crfix_e2e_tests::{
    admission_request, check_validation_response, crd_fixture, inline_settings, workspace_root,
    PolicyHost,
};

const CE_V1: &str = "clusterextensions.olm.operatorframework.io.v1";
const ROUTES: &str = "trafficroutes.routing.fixtures.crfix.dev";
const NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid";
const MAX_WARNING_CHARS: usize = 120;

fn host() -> PolicyHost {
    match PolicyHost::policy() {
        Ok(h) => h,
        Err(e) => panic!("{e:#}"),
    }
}

fn answer(host: &PolicyHost, request: &Value, settings: &Value) -> Value {
    let response = match host.validate(request, settings) {
        Ok(r) => r,
        Err(e) => panic!("validate failed in the host: {e:#}"),
    };
    if let Err(e) = check_validation_response(&response) {
        panic!("malformed response: {e}");
    }
    response
}

fn warnings(response: &Value) -> Vec<String> {
    let w: Vec<String> = response["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    for one in &w {
        assert!(one.chars().count() <= MAX_WARNING_CHARS, "{one}");
    }
    w
}

/// A request (or an object) of `e2e-tests/requests` (what `make run` evaluates).
fn sample_request(name: &str) -> Value {
    let path = workspace_root().join("e2e-tests/requests").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("json")
}

#[test]
fn the_repaired_sample_of_make_run_has_no_not_checked_warning() {
    // The user's object has blocking errors (an enum, an unknown field renamed), so its rules
    // were not checked; the repaired object is validated in full, rules and all, before it is
    // stored.
    let settings = inline_settings(&[crd_fixture(CE_V1)], json!({"mode": "fix"}));
    let r = answer(
        &host(),
        &sample_request("cluster-extension-invalid.json"),
        &settings,
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r["mutated_object"].is_object(), "{r:#}");
    let w = warnings(&r);
    assert!(!w.is_empty(), "{r:#}");
    assert!(!w.iter().any(|w| w.contains(NOT_CHECKED)), "{w:#?}");
}

#[test]
fn the_not_checked_warning_stays_where_the_object_is_stored_unchanged() {
    // No rule can invent the missing package name; with onUnfixable: accept the object is
    // stored as it is, its rules never checked.
    let settings = inline_settings(
        &[crd_fixture(CE_V1)],
        json!({"mode": "fix", "onUnfixable": "accept"}),
    );
    let object = sample_request("cluster-extension-no-package.json");
    let r = answer(
        &host(),
        &admission_request("CREATE", object, None),
        &settings,
    );
    assert_eq!(r["accepted"], true, "{r:#}");
    assert!(r["mutated_object"].is_null(), "{r:#}");
    let w = warnings(&r);
    assert!(
        w.iter().any(|w| w
            == "crfix: some validation rules were not checked because the object was invalid; \
                correct the errors to complete validation"),
        "{w:#?}"
    );
}

fn route(spec: Value) -> Value {
    json!({"apiVersion": "routing.fixtures.crfix.dev/v1", "kind": "TrafficRoute",
           "metadata": {"name": "r", "namespace": "default"}, "spec": spec})
}

fn parent(namespace: &str) -> Value {
    json!({"group": "routing.fixtures.crfix.dev", "kind": "Gateway", "name": "gw",
           "namespace": namespace})
}

fn route_spec(parents: Value) -> Value {
    json!({
        "parents": parents,
        "rules": [{
            "matches": [{"path": {"type": "Prefix", "value": "/api"}}],
            "backends": [{"name": "svc", "kind": "Service", "group": "", "port": 80}],
            "timeouts": {"request": "10s", "backend": "5s"}
        }]
    })
}

#[test]
fn every_rule_of_an_httproute_shaped_crd_is_evaluated_inline_and_from_the_cluster() {
    let host = host();
    let inline = inline_settings(&[crd_fixture(ROUTES)], json!({"mode": "validate"}));
    let cluster = json!({"schemaSource": "cluster", "mode": "validate"});
    for settings in [&inline, &cluster] {
        // Two parents in two namespaces: the pairwise rules read `namespace` (`__namespace__`).
        let ok = admission_request(
            "CREATE",
            route(route_spec(json!([parent("a"), parent("b")]))),
            None,
        );
        let r = answer(&host, &ok, settings);
        assert_eq!(r["accepted"], true, "{settings}: {r:#}");
        assert_eq!(warnings(&r), Vec::<String>::new(), "{settings}");
        // The same parent twice: refused by the rule crfix used to skip.
        let twice = admission_request(
            "CREATE",
            route(route_spec(json!([parent("a"), parent("a")]))),
            None,
        );
        let r = answer(&host, &twice, settings);
        assert_eq!(r["accepted"], false, "{settings}: {r:#}");
        let message = r["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(
                "spec.parents: Invalid value: \"array\": each parent (with its section) may be \
                 named only once"
            ),
            "{message}"
        );
    }
}

#[test]
fn an_inline_crd_with_a_rule_the_api_server_refuses_is_named_in_full_by_the_settings() {
    // A truly too-expensive rule deep in lists, in an inline CRD: the settings are refused as
    // the API server would refuse the CRD, naming the rule's field and text in full (a
    // settings message is not cut like a warning).
    let mut crd = crd_fixture(ROUTES);
    let headers = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/rules/items\
                   /properties/matches/items/properties/headers";
    crd.pointer_mut(headers).expect("headers")["x-kubernetes-validations"] = json!([{
        "rule": "self.all(a, self.exists_one(b, a.name.lowerAscii() == b.name.lowerAscii()))",
        "message": "header names are unique"}]);
    let settings = inline_settings(&[crd], json!({"mode": "validate"}));
    let verdict = match host().validate_settings(&settings) {
        Ok(v) => v,
        Err(e) => panic!("validate_settings failed in the host: {e:#}"),
    };
    assert_eq!(verdict["valid"], false, "{verdict:#}");
    let message = verdict["message"].as_str().expect("message");
    assert!(
        message.starts_with(
            "crds[0]: the API server would refuse this CustomResourceDefinition \
             (trafficroutes.routing.fixtures.crfix.dev, version v1): the rule at \
             spec.rules[*].matches[*].headers (x-kubernetes-validations[0]: self.all(a, \
             self.exists_one(b, a.name.lowerAscii() == b.name.lowerAscii()))): Forbidden: \
             estimated rule cost exceeds budget by factor of"
        ),
        "{message}"
    );
}
