//! The built policy `.wasm` answers as the API server would, and within policy-server's time:
//! work per evaluation is bounded (blocking errors, rule cost limits), an inline CRD the API
//! server would refuse for its rules' estimated cost is refused, `oneOf`/`anyOf`/`not` are checked, and
//! rules that fail at run time are reported in the API server's words.
//!
//! Needs the module: `make build-wasm` (or `make test`), or `CRFIX_POLICY_WASM=path`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crfix_e2e_tests::valid_cluster_extension as valid_ce;
use crfix_e2e_tests::{
    admission_request, check_validation_response, crd_fixture, inline_settings, PolicyHost,
};

const GADGET: &str = "gadgets.fidelity.example.com";
const CE_V1: &str = "clusterextensions.olm.operatorframework.io.v1";

/// A functional bound on the work of one evaluation (the CPU time of the thread that runs it,
/// [`thread_cpu_time`]), well under policy-server's default timeout of 2 s (the timing itself
/// is `make bench`'s).
const WELL_UNDER_THE_TIMEOUT: Duration = Duration::from_secs(1);

fn host() -> PolicyHost {
    match PolicyHost::policy() {
        Ok(h) => h,
        Err(e) => panic!("{e:#}"),
    }
}

fn gadget(spec: Value) -> Value {
    json!({
        "apiVersion": "fidelity.example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": spec
    })
}

/// The answer of the policy in validate mode with `crd` inline, and how long it took.
fn validate(host: &PolicyHost, crd: &str, object: Value) -> (Value, Duration) {
    validate_with(host, crd_fixture(crd), object)
}

fn validate_with(host: &PolicyHost, crd: Value, object: Value) -> (Value, Duration) {
    let settings = inline_settings(&[crd], json!({"mode": "validate"}));
    let request = admission_request("CREATE", object, None);
    let (started, cpu_started) = (Instant::now(), thread_cpu_time());
    let response = match host.validate(&request, &settings) {
        Ok(r) => r,
        Err(e) => panic!("validate failed in the host: {e:#}"),
    };
    // A kernel that keeps no scheduler statistics reports 0: then the wall time is the bound.
    let took = match (cpu_started, thread_cpu_time()) {
        (Some(before), Some(after)) if after > before => after - before,
        _ => started.elapsed(),
    };
    if let Err(e) = check_validation_response(&response) {
        panic!("malformed response: {e}");
    }
    (response, took)
}

/// [`validate`] with the CRD read from the (test host's) cluster.
fn validate_in_cluster(host: &PolicyHost, object: Value) -> (Value, Duration) {
    let settings = json!({"schemaSource": "cluster", "mode": "validate"});
    let request = admission_request("CREATE", object, None);
    let (started, cpu_started) = (Instant::now(), thread_cpu_time());
    let response = match host.validate(&request, &settings) {
        Ok(r) => r,
        Err(e) => panic!("validate failed in the host: {e:#}"),
    };
    // A kernel that keeps no scheduler statistics reports 0: then the wall time is the bound.
    let took = match (cpu_started, thread_cpu_time()) {
        (Some(before), Some(after)) if after > before => after - before,
        _ => started.elapsed(),
    };
    if let Err(e) = check_validation_response(&response) {
        panic!("malformed response: {e}");
    }
    (response, took)
}

/// The CPU time this thread has run, where the kernel reports it (Linux): the module runs on
/// the calling thread, so the bound holds for crfix's work and not for how busy the machine is
/// (under a load of 4 the wall time of the same evaluation was 2 to 8 times longer).
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn message(response: &Value) -> &str {
    response["message"].as_str().unwrap_or_default()
}

fn warnings(response: &Value) -> Vec<String> {
    response["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Rejected, in `took` well under the timeout, with `expected` in the message.
fn assert_rejected(response: &Value, took: Duration, expected: &str) {
    assert_eq!(response["accepted"], false, "{response:#}");
    assert!(
        message(response).contains(expected),
        "{expected:?} missing from {:?}",
        message(response)
    );
    assert!(took < WELL_UNDER_THE_TIMEOUT, "took {took:?}");
}

const NOT_CHECKED: &str = "some validation rules were not checked because the object was \
                           invalid; correct the existing errors to complete validation";

#[test]
fn a_quadratic_rule_on_a_list_over_max_items_is_not_run() {
    let host = host();
    let scores: Vec<i64> = (0..10_000).collect();
    let (r, took) = validate(&host, GADGET, gadget(json!({"scores": scores})));
    assert_rejected(
        &r,
        took,
        "spec.scores: Too many: 10000: must have at most 100 items",
    );
    assert!(warnings(&r)
        .iter()
        .any(|w| w.contains("some validation rules")));
    // Within maxItems the rule runs, and answers.
    let (r, _) = validate(&host, GADGET, gadget(json!({"scores": [3, 1, 2]})));
    assert_eq!(r["accepted"], true, "{r:#}");
}

#[test]
fn a_three_megabyte_version_is_too_long_and_its_regex_rule_is_not_run() {
    let mut ce = valid_ce();
    ce["spec"]["source"]["catalog"]["version"] = json!("1".repeat(3_000_000));
    let (r, took) = validate(&host(), CE_V1, ce);
    assert_rejected(
        &r,
        took,
        "spec.source.catalog.version: Too long: may not be more than 64 bytes",
    );
    assert!(!message(&r).contains("invalid version expression"));
    assert!(warnings(&r).iter().any(|w| w.contains(&NOT_CHECKED[..60])));
}

#[test]
fn a_three_megabyte_string_over_max_length_is_not_searched() {
    let (r, took) = validate(
        &host(),
        GADGET,
        gadget(json!({"name": "a1".repeat(1_500_000)})),
    );
    assert_rejected(
        &r,
        took,
        "spec.name: Too long: may not be more than 253 bytes",
    );
    assert!(!message(&r).contains("numbered words"));
}

#[test]
fn a_rule_over_the_per_call_limit_is_refused_in_the_api_servers_words() {
    // `notes` has no maxLength: the CRD's estimate is within the limits, 3 MB are not.
    let (r, took) = validate(
        &host(),
        GADGET,
        gadget(json!({"notes": "a1".repeat(1_500_000)})),
    );
    assert_rejected(
        &r,
        took,
        "spec.notes: Invalid value: \"string\": 'operation cancelled: actual cost limit \
         exceeded': no further validation rules will be run due to call cost exceeds limit for \
         rule: at most 99 numbered words in notes",
    );
    // A short one is evaluated.
    let (r, _) = validate(&host(), GADGET, gadget(json!({"notes": "a1 b2"})));
    assert_eq!(r["accepted"], true, "{r:#}");
}

/// `validate_settings` for the gadget CRD inline with a quadratic rule on `spec.unbounded`
/// (`unbounded` its schema, the rule added) and without `chunks`, whose rule an inline CRD's
/// estimate refuses on its own.
fn settings_verdict_with_quadratic_rule(mut unbounded: Value) -> Value {
    let mut crd = crd_fixture(GADGET);
    let spec = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    unbounded["x-kubernetes-validations"] = json!([{"rule": "self.all(x, self.exists(y, y > x))"}]);
    spec["properties"]["unbounded"] = unbounded;
    spec["properties"]
        .as_object_mut()
        .expect("properties")
        .remove("chunks");
    let settings = inline_settings(&[crd], json!({"mode": "validate"}));
    match host().validate_settings(&settings) {
        Ok(v) => v,
        Err(e) => panic!("validate_settings failed in the host: {e:#}"),
    }
}

#[test]
fn an_inline_crd_the_api_server_would_refuse_for_a_rules_cost_is_refused_by_the_settings() {
    // A quadratic rule on a list without maxItems: the API server refuses such a CRD, so
    // crfix's settings refuse it as an inline CRD, in the API server's words. (Its estimate
    // also takes the CRD's total over its limit, so the dearest other rule is named too.)
    let verdict = settings_verdict_with_quadratic_rule(
        json!({"type": "array", "items": {"type": "integer"}}),
    );
    assert_eq!(verdict["valid"], false, "{verdict:#}");
    let message = verdict["message"].as_str().expect("message");
    assert!(
        message.starts_with(
            "crds[0]: the API server would refuse this CustomResourceDefinition \
             (gadgets.fidelity.example.com, version v1): the rule at "
        ),
        "{message}"
    );
    assert!(
        message.contains(
            "the rule at spec.unbounded (x-kubernetes-validations[0]: self.all(x, \
             self.exists(y, y > x))): Forbidden: estimated rule cost exceeds budget by factor \
             of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, \
             and maxLength where arrays, maps, and strings are declared)"
        ),
        "{message}"
    );
    // Bounded, the rule is within the API server's estimate: the settings are valid.
    let verdict = settings_verdict_with_quadratic_rule(
        json!({"type": "array", "maxItems": 100, "items": {"type": "integer"}}),
    );
    assert_eq!(verdict["valid"], true, "{verdict:#}");
}

#[test]
fn one_of_any_of_and_not_as_the_api_server() {
    let host = host();
    for valid in [
        json!({"address": "10.0.0.1"}),
        json!({"address": "fd00::1"}),
        json!({"replicas": 12}),
        json!({"replicas": 0}),
        json!({"mode": "current"}),
        json!({"port": 8080}),
        json!({"port": "http"}),
    ] {
        let (r, _) = validate(&host, GADGET, gadget(valid.clone()));
        assert_eq!(r["accepted"], true, "{valid}: {r:#}");
    }
    let cases = [
        (
            json!({"address": "1.2.3.4:8080"}),
            "<nil>: Invalid value: \"\": \"spec.address\" must validate one and only one schema \
             (oneOf). Found none valid",
        ),
        (
            json!({"address": "1.2.3.4:8080"}),
            "spec.address: Invalid value: \"1.2.3.4:8080\": spec.address in body must be of \
             type ipv4: \"1.2.3.4:8080\"",
        ),
        (
            json!({"replicas": 5}),
            "<nil>: Invalid value: \"\": \"spec.replicas\" must validate at least one schema \
             (anyOf)",
        ),
        (
            json!({"mode": "legacy"}),
            "<nil>: Invalid value: \"\": \"spec.mode\" must not validate the schema (not)",
        ),
    ];
    for (spec, expected) in cases {
        let (r, took) = validate(&host, GADGET, gadget(spec));
        assert_rejected(&r, took, expected);
    }
}

#[test]
fn rules_that_fail_at_run_time_in_the_api_servers_words() {
    let host = host();
    let cases = [
        (
            json!({"tls": {"mode": "Terminate"}}),
            "spec.tls: Invalid value: \"object\": no such key: certificateRefs evaluating rule: \
             certificateRefs must be set when mode is Terminate",
        ),
        (
            json!({"tls": {}}),
            "spec.tls: Invalid value: \"object\": no such key: mode evaluating rule: \
             certificateRefs must be set when mode is Terminate",
        ),
        (
            json!({"ratio": {"num": 1, "den": 0}}),
            "spec.ratio: Invalid value: \"object\": division by zero evaluating rule: \
             self.num / self.den < 10",
        ),
        (
            json!({"ratio": {}}),
            "spec.ratio: Invalid value: \"object\": no such key: num evaluating rule: \
             self.num / self.den < 10",
        ),
    ];
    for (spec, expected) in cases {
        let (r, took) = validate(&host, GADGET, gadget(spec));
        assert_rejected(&r, took, expected);
    }
    let (r, _) = validate(
        &host,
        GADGET,
        gadget(
            json!({"tls": {"mode": "Terminate", "certificateRefs": ["c"]},
                      "ratio": {"num": 9, "den": 1}}),
        ),
    );
    assert_eq!(r["accepted"], true, "{r:#}");
}

/// The most regex work the API server's runtime cost limits allow in one request (see the
/// fixture's `chunks`): crfix evaluates what its own, smaller, budget allows, well under the
/// timeout. The API server's estimate (4 bytes a character of `maxLength`) would refuse the
/// rule in a new CRD, so the CRD is read from the cluster: one the API server accepted (before
/// the limits, or unchanged since) has every rule evaluated, bounded by the runtime limits.
pub fn most_regex_work() -> Value {
    let chunk = "abc123-".repeat(40_000) + "alpha";
    gadget(json!({"chunks": vec![chunk; 10]}))
}

#[test]
fn the_most_rule_work_the_limits_allow_is_bounded_in_time() {
    let (r, took) = validate_in_cluster(&host(), most_regex_work());
    assert_eq!(r["accepted"], true, "{r:#}");
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with(
            "crfix: CEL rules from spec.chunks[2] on not evaluated: over crfix's own cost budget"
        ),
        "{w:?}"
    );
    assert!(took < WELL_UNDER_THE_TIMEOUT, "took {took:?}");
    // Within crfix's budget, the rule runs and answers.
    let mut two = most_regex_work();
    two["spec"]["chunks"] = json!(["abc123-alpha", "Not-Words!"]);
    let (r, _) = validate_in_cluster(&host(), two);
    assert_rejected(
        &r,
        Duration::ZERO,
        "spec.chunks[1]: Invalid value: \"string\": a chunk is words and numbers",
    );
}
