//! The whole road, as in a cluster: the built policy `.wasm` in the e2e host, whose
//! `get_resource` of a `Correction` goes over HTTPS with the aggregator's client certificate
//! to the real `crfix-llm-proxy` process, whose upstream is the scriptable fake LLM.
//!
//! Needs the module (`make build`, or `CRFIX_POLICY_WASM`) and the proxy binary
//! (`cargo build -p crfix-llm-proxy`, or `CRFIX_PROXY_BIN`); `make test` builds both.

use std::time::{Duration, Instant};

use fake_llm::{FakeLlm, RecordedRequest, Reply};
use proxy_harness::{proxy_binary, Pki, Proxy, ProxyBuilder};
use serde_json::{json, Value};

use crfix_e2e_tests::aggregator::AggregatorClient;
use crfix_e2e_tests::{
    admission_request, crd_fixture, inline_settings, merge_settings, object_in_user_message,
    readme_cluster_extension, PolicyHost,
};

const CE_V1: &str = "clusterextensions.olm.operatorframework.io.v1";
const MODEL: &str = "fake-model-1";

struct Road {
    llm: FakeLlm,
    proxy: Proxy,
    host: PolicyHost,
    // Keeps the certificates on disk while the proxy runs; also the metrics client.
    pki: Pki,
}

fn road(proxy_args: &[(&str, &str)]) -> Road {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().expect("fake LLM");
    let mut builder = ProxyBuilder::new(proxy_binary(), &pki, &llm.base_url())
        .arg("--model", MODEL)
        .arg("--log-format", "text");
    for (name, value) in proxy_args {
        builder = builder.arg(name, value);
    }
    let proxy = builder.start();
    let aggregator = AggregatorClient::new(
        &proxy.url(""),
        &pki.server_ca_pem,
        &pki.allowed_client,
        Duration::from_secs(20),
    )
    .expect("aggregator client");
    let host = PolicyHost::policy()
        .unwrap_or_else(|e| panic!("{e:#}"))
        .with_route(
            correction_api::API_VERSION,
            correction_api::KIND,
            move |call| aggregator.get(call),
        );
    Road {
        llm,
        proxy,
        host,
        pki,
    }
}

/// The README scenario, after the API server's client-side checks were skipped.
fn readme_object() -> Value {
    readme_cluster_extension("Catalog")
}

/// The package name comes from the user's label, reshaped ("argocd" + "operator"): not
/// certain, so these round trips through the proxy apply it (`uncertainFixes: apply`); what
/// crfix does by default with such a fix is tested in llm_policy.rs.
fn settings(extra: Value) -> Value {
    let base = inline_settings(
        &[crd_fixture(CE_V1)],
        json!({"mode": "fix", "uncertainFixes": "apply",
               "llm": {"enabled": true, "maxAttempts": 2, "answerFormat": "patch"}}),
    );
    merge_settings(base, extra)
}

/// The object shown to the model: the fenced JSON block of the first user message (later
/// turns of a feedback conversation only list what was wrong).
fn object_in_prompt(request: &RecordedRequest) -> Value {
    let user = request
        .messages()
        .into_iter()
        .find(|(role, content)| role == "user" && content.contains("```json\n"))
        .map(|(_, content)| content)
        .unwrap_or_default();
    object_in_user_message(&user)
}

/// A model that fills the package name the label states.
fn good_answer(request: &RecordedRequest) -> Reply {
    let mut object = object_in_prompt(request);
    object["spec"]["source"]["catalog"]["packageName"] = json!("argocd-operator");
    Reply::content(format!(
        "```json\n{}\n```",
        serde_json::to_string_pretty(&object).unwrap_or_default()
    ))
}

fn warnings(response: &Value) -> Vec<String> {
    response["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn assert_accepted_with_package(response: &Value) -> Value {
    assert_eq!(response["accepted"], true, "{response:#}");
    let mutated = response["mutated_object"].clone();
    assert_eq!(
        mutated["spec"]["source"]["catalog"]["packageName"], "argocd-operator",
        "{response:#}"
    );
    mutated
}

#[test]
fn readme_scenario_is_repaired_by_the_llm_through_the_proxy_then_served_from_cache() {
    let road = road(&[]);
    road.llm.set_responder(good_answer);
    let request = admission_request("CREATE", readme_object(), None);

    let response = road
        .host
        .validate(&request, &settings(json!({})))
        .expect("validate");
    let mutated = assert_accepted_with_package(&response);
    // Nothing else changed but crfix's annotation.
    let mut expected = readme_object();
    expected["spec"]["source"]["catalog"]["packageName"] = json!("argocd-operator");
    let mut without_annotation = mutated.clone();
    if let Some(a) = without_annotation["metadata"]["annotations"].as_object_mut() {
        a.remove("crfix.dev/repair");
        if a.is_empty() {
            without_annotation["metadata"]
                .as_object_mut()
                .map(|m| m.remove("annotations"));
        }
    }
    assert_eq!(without_annotation, expected);
    let w = warnings(&response);
    assert!(
        w.iter()
            .any(|w| w.contains("/spec/source/catalog/packageName")
                && w.contains("argocd-operator")
                && w.contains(&format!("LLM {MODEL}"))),
        "the warning must say the value came from the LLM: {w:?}"
    );
    let annotation = mutated["metadata"]["annotations"]["crfix.dev/repair"]
        .as_str()
        .unwrap_or_default();
    assert!(annotation.contains(MODEL), "{annotation}");

    // The prompt went through the proxy as the policy built it: the error and the object.
    assert_eq!(road.llm.request_count(), 1);
    let sent = &road.llm.requests()[0];
    assert_eq!(sent.model(), Some(MODEL));
    let user = sent.last_user_message().unwrap_or_default();
    assert!(user.contains("/spec/source/catalog/packageName"), "{user}");
    assert_eq!(object_in_prompt(sent), readme_object());

    // The same request again: the proxy answers from its cache, no second upstream call.
    let again = road
        .host
        .validate(&request, &settings(json!({})))
        .expect("validate");
    assert_eq!(again["mutated_object"], response["mutated_object"]);
    assert_eq!(
        road.llm.request_count(),
        1,
        "the second answer must come from the cache"
    );
    let metrics = road
        .pki
        .client(Some(&road.pki.allowed_client))
        .get(road.proxy.url("/metrics"))
        .send()
        .and_then(|r| r.text())
        .expect("metrics");
    assert!(
        proxy_harness::metric(&metrics, "crfix_proxy_cache_hits_total") >= 1.0,
        "{metrics}"
    );
}

#[test]
fn deterministic_repairs_and_the_llm_work_in_one_request() {
    let road = road(&[]);
    road.llm.set_responder(good_answer);
    let mut object = readme_object();
    // Rules fix these two; only the package name is left for the LLM.
    object["spec"]["source"]["sourceType"] = json!("catalog");
    object["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] = json!("selfcertified");
    let request = admission_request("CREATE", object, None);

    let response = road
        .host
        .validate(&request, &settings(json!({})))
        .expect("validate");
    let mutated = assert_accepted_with_package(&response);
    assert_eq!(mutated["spec"]["source"]["sourceType"], "Catalog");
    assert_eq!(
        mutated["spec"]["source"]["catalog"]["upgradeConstraintPolicy"],
        "SelfCertified"
    );
    // The LLM saw the object after the rules had done their part.
    let shown = object_in_prompt(&road.llm.requests()[0]);
    assert_eq!(shown["spec"]["source"]["sourceType"], "Catalog");
    let w = warnings(&response);
    assert!(
        w.iter()
            .any(|w| w.contains("sourceType") && !w.contains("LLM")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.contains("packageName") && w.contains("LLM")),
        "{w:?}"
    );
}

#[test]
fn a_second_attempt_fixes_what_the_first_answer_got_wrong() {
    let road = road(&[]);
    let mut bad = readme_object();
    bad["spec"]["source"]["catalog"]["packageName"] = json!("Argo CD Operator!");
    road.llm.push(Reply::content(bad.to_string()));
    road.llm.set_responder(good_answer);
    let request = admission_request("CREATE", readme_object(), None);

    let response = road
        .host
        .validate(&request, &settings(json!({})))
        .expect("validate");
    assert_accepted_with_package(&response);
    assert_eq!(road.llm.request_count(), 2);
    assert_eq!(
        response["audit_annotations"]["crfix-llm-attempts"], "2",
        "{response:#}"
    );
    // The second prompt tells the model what was wrong with its first answer.
    let second = road.llm.requests()[1]
        .last_user_message()
        .unwrap_or_default();
    assert!(
        second.contains("/spec/source/catalog/packageName"),
        "{second}"
    );
}

#[test]
fn hostile_answers_never_reach_the_cluster() {
    type Corruption = Box<dyn Fn(Value) -> Value + Send + Sync>;
    let hostile: Vec<(&str, Corruption)> = vec![
        (
            "invents a service account",
            Box::new(|mut o: Value| {
                o["spec"]["source"]["catalog"]["packageName"] = json!("argocd-operator");
                o["spec"]["serviceAccount"]["name"] = json!("cluster-admin");
                o
            }),
        ),
        (
            "renames the object",
            Box::new(|mut o: Value| {
                o["spec"]["source"]["catalog"]["packageName"] = json!("argocd-operator");
                o["metadata"]["name"] = json!("pwned");
                o
            }),
        ),
        (
            "writes outside /spec",
            Box::new(|mut o: Value| {
                o["spec"]["source"]["catalog"]["packageName"] = json!("argocd-operator");
                o["status"] = json!({"installed": true});
                o
            }),
        ),
    ];
    let road = road(&[]);
    for (i, (name, corrupt)) in hostile.into_iter().enumerate() {
        road.llm.reset();
        // A distinct object per case: the same prompt would be answered from the proxy's cache.
        let mut object = readme_object();
        object["metadata"]["name"] = json!(format!("argocd-{i}"));
        road.llm.set_responder(move |req| {
            let object = object_in_prompt(req);
            Reply::content(corrupt(object).to_string())
        });
        let request = admission_request("CREATE", object, None);
        let response = road
            .host
            .validate(&request, &settings(json!({})))
            .expect("validate");
        assert_eq!(response["accepted"], false, "{name}: {response:#}");
        assert!(response["mutated_object"].is_null(), "{name}: {response:#}");
        let message = response["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("spec.source.catalog.packageName"),
            "{name}: {message}"
        );
        assert_eq!(
            road.llm.request_count(),
            2,
            "{name}: both attempts were used"
        );
    }
}

#[test]
fn llm_down_falls_back_per_settings_fast_and_the_circuit_opens() {
    let road = road(&[
        ("--max-retries", "1"),
        ("--request-deadline", "3s"),
        ("--circuit-failure-threshold", "1"),
        ("--circuit-open-duration", "60s"),
    ]);
    road.llm
        .set_default(Reply::status(500, r#"{"error":{"message":"down"}}"#));
    let request = admission_request("CREATE", readme_object(), None);

    let started = Instant::now();
    let rejected = road
        .host
        .validate(&request, &settings(json!({"onLlmUnavailable": "reject"})))
        .expect("validate");
    assert_eq!(rejected["accepted"], false, "{rejected:#}");
    let message = rejected["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("spec.source.catalog.packageName"),
        "{message}"
    );
    assert!(message.to_lowercase().contains("unavailable"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // The circuit is open now: the next request fails at once, without an upstream call.
    let calls = road.llm.request_count();
    let started = Instant::now();
    let accepted = road
        .host
        .validate(&request, &settings(json!({"onLlmUnavailable": "accept"})))
        .expect("validate");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        road.llm.request_count(),
        calls,
        "the open circuit must not call upstream"
    );
    assert_eq!(accepted["accepted"], true, "{accepted:#}");
    assert!(
        accepted["mutated_object"].is_null(),
        "accepted unchanged: {accepted:#}"
    );
    assert!(
        warnings(&accepted)
            .iter()
            .any(|w| w.contains("LLM unavailable")),
        "{accepted:#}"
    );
}

#[test]
fn the_proxy_refuses_a_caller_that_is_not_the_aggregator() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().expect("fake LLM");
    let proxy = ProxyBuilder::new(proxy_binary(), &pki, &llm.base_url()).start();
    let intruder = AggregatorClient::new(
        &proxy.url(""),
        &pki.server_ca_pem,
        &pki.disallowed_client,
        Duration::from_secs(5),
    )
    .expect("client");
    let host = PolicyHost::policy()
        .unwrap_or_else(|e| panic!("{e:#}"))
        .with_route(
            correction_api::API_VERSION,
            correction_api::KIND,
            move |call| intruder.get(call),
        );
    let request = admission_request("CREATE", readme_object(), None);
    let response = host
        .validate(&request, &settings(json!({"onLlmUnavailable": "reject"})))
        .expect("validate");
    assert_eq!(response["accepted"], false, "{response:#}");
    assert_eq!(llm.request_count(), 0);
}

/// Choose, don't write, over the whole road: the policy's answer schema travels in the token,
/// the proxy turns it into llama.cpp's `response_format`, and the model's `{"choice": 1}`
/// becomes the fix.
#[test]
fn a_choice_round_trip_carries_the_answer_schema_to_the_backend() {
    let road = road(&[("--structured-output", "llama-cpp")]);
    road.llm.set_default(Reply::content("{\"choice\": 1}"));
    let request = admission_request("CREATE", readme_object(), None);
    let response = road
        .host
        .validate(
            &request,
            &inline_settings(
                &[crd_fixture(CE_V1)],
                json!({"mode": "fix", "uncertainFixes": "apply", "llm": {"enabled": true}}),
            ),
        )
        .expect("validate");
    assert_accepted_with_package(&response);
    let requests = road.llm.requests();
    assert_eq!(requests.len(), 1);
    let format = &requests[0].body["response_format"];
    assert_eq!(format["type"], "json_object", "{format}");
    let offered = format["schema"]["properties"]["choice"]["enum"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(offered.first(), Some(&json!(0)), "{format}");
    assert!(offered.len() >= 2, "{format}");
    let user = requests[0].last_user_message().unwrap_or_default();
    assert!(user.contains("Fixes (number: changes):"), "{user}");
}
