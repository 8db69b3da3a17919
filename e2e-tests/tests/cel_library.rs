//! The Kubernetes CEL environment (kube-apiserver 1.34) through the built policy `.wasm`: the
//! `celfunctions.fixtures.crfix.dev` CRD has a rule per library (durations and timestamps,
//! quantities, IP addresses and CIDRs, URLs, semver, named formats, sets and lists, two-variable
//! comprehensions and `sortBy`, strings typed by their `format`, a missing overload); each is
//! given a valid value, which must be accepted untouched, and an invalid one, which must be
//! rejected with the API server's message.
//!
//! Needs the module: `make build-wasm` (or `make test`), or `CRFIX_POLICY_WASM=path`.

use serde_json::{json, Value};

use crfix_e2e_tests::{
    admission_request, check_validation_response, crd_fixture, inline_settings, PolicyHost,
};

const CRD: &str = "celfunctions.fixtures.crfix.dev";

fn host() -> PolicyHost {
    match PolicyHost::policy() {
        Ok(h) => h,
        Err(e) => panic!("{e:#}"),
    }
}

fn object(spec: Value) -> Value {
    json!({
        "apiVersion": "fixtures.crfix.dev/v1",
        "kind": "CelFunctions",
        "metadata": {"name": "sample", "namespace": "default"},
        "spec": spec,
    })
}

/// A valid object: every rule passes.
fn valid_spec() -> Value {
    json!({
        "timeouts": {"request": "10s", "backendRequest": "2s"},
        "window": "1h30m",
        "notBefore": "2024-05-01T12:00:00Z",
        "memory": "512Mi",
        "cpu": {"request": "250m", "limit": "1"},
        "replicasQuantity": "3",
        "address": "192.0.2.10",
        "podCIDR": "10.244.0.0/16",
        "gateway": "10.0.0.1",
        "endpoint": "https://api.example.com:8443/v1",
        "callback": "https://hooks.example.com/hooks/build?ref=main",
        "features": ["alpha", "gamma"],
        "ports": [8080, 9090],
        "minVersion": "v1.30",
        "serviceName": "api-gateway",
        "grades": {"midterm": 70, "final": 85},
        "steps": ["a-start", "build", "test"],
        "owners": {"api": "alice", "web": "bob"},
        "priorities": [{"name": "high", "weight": 10}, {"name": "low", "weight": 1}],
        "ttl": "2h30m",
        "expires": "2030-06-01T10:00:00+02:00",
        "since": "2024-05-06",
        "digest": "AAECAw==",
        "port": 8080,
    })
}

fn validate(host: &PolicyHost, spec: Value) -> Value {
    let settings = inline_settings(&[crd_fixture(CRD)], json!({"mode": "validate"}));
    let request = admission_request("CREATE", object(spec), None);
    let response = match host.validate(&request, &settings) {
        Ok(r) => r,
        Err(e) => panic!("validate failed in the host: {e:#}"),
    };
    if let Err(e) = check_validation_response(&response) {
        panic!("malformed response: {e}");
    }
    response
}

/// Warnings that say a rule was not evaluated.
fn skipped_rules(response: &Value) -> Vec<String> {
    response["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("not evaluated"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_valid_object_passes_every_library_rule() {
    let response = validate(&host(), valid_spec());
    assert_eq!(response["accepted"], json!(true), "{response:#}");
    assert!(response["mutated_object"].is_null(), "{response:#}");
    assert_eq!(skipped_rules(&response), Vec::<String>::new());
}

/// `field` set to `value` in the valid object is rejected with `expected` (the API server's
/// message for that field), and nothing else.
fn rejected(host: &PolicyHost, field: &str, value: Value, expected: &str) {
    let mut spec = valid_spec();
    spec[field] = value;
    let response = validate(host, spec);
    assert_eq!(response["accepted"], json!(false), "{field}: {response:#}");
    let message = response["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(expected),
        "{field}: expected {expected:?} in {message:?}"
    );
    assert_eq!(skipped_rules(&response), Vec::<String>::new(), "{field}");
}

#[test]
fn durations_and_timestamps() {
    let host = host();
    // HTTPRoute's rule: a backend timeout longer than the request timeout.
    rejected(
        &host,
        "timeouts",
        json!({"request": "1s", "backendRequest": "1m"}),
        r#"spec.timeouts: Invalid value: "object": backendRequest timeout cannot be longer than request timeout"#,
    );
    // A zero request timeout means none: any backend timeout is fine.
    let mut spec = valid_spec();
    spec["timeouts"] = json!({"request": "0s", "backendRequest": "1h"});
    assert_eq!(validate(&host, spec)["accepted"], json!(true));
    rejected(
        &host,
        "window",
        json!("25h"),
        r#"spec.window: Invalid value: "string": window must be positive and shorter than a day"#,
    );
    rejected(
        &host,
        "notBefore",
        json!("2019-12-31T23:59:59Z"),
        r#"spec.notBefore: Invalid value: "string": notBefore must be in 2020..2099"#,
    );
}

#[test]
fn quantities() {
    let host = host();
    rejected(
        &host,
        "memory",
        json!("2Gi"),
        r#"spec.memory: Invalid value: "string": memory must be positive and below 1Gi"#,
    );
    rejected(
        &host,
        "memory",
        json!("lots"),
        r#"spec.memory: Invalid value: "string": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: memory must be positive and below 1Gi"#,
    );
    rejected(
        &host,
        "cpu",
        json!({"request": "2", "limit": "1500m"}),
        r#"spec.cpu.limit: Invalid value: "object": the cpu limit must not be below the request"#,
    );
    // `1000m` is 1, but held as milli-units it is not an integer for Kubernetes.
    rejected(
        &host,
        "replicasQuantity",
        json!("1000m"),
        r#"spec.replicasQuantity: Invalid value: "string": failed rule: isQuantity(self) && quantity(self).isInteger() && quantity(self).asInteger() <= 10 && quantity(self).asApproximateFloat() >= 1.0"#,
    );
}

#[test]
fn ip_addresses_and_cidrs() {
    let host = host();
    rejected(
        &host,
        "address",
        json!("127.0.0.1"),
        r#"spec.address: Invalid value: "string": address must be a global unicast IPv4 address"#,
    );
    rejected(
        &host,
        "address",
        json!("2001:db8::1"),
        r#"spec.address: Invalid value: "string": address must be a global unicast IPv4 address"#,
    );
    rejected(
        &host,
        "podCIDR",
        json!("10.244.0.1/16"),
        r#"spec.podCIDR: Invalid value: "string": podCIDR must be a canonical /24 or larger inside 10.0.0.0/8"#,
    );
    rejected(
        &host,
        "podCIDR",
        json!("10.244.0.0"),
        r#"spec.podCIDR: Invalid value: "string": network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("10.244.0.0"): no '/' evaluating rule: podCIDR must be a canonical /24 or larger inside 10.0.0.0/8"#,
    );
    rejected(
        &host,
        "gateway",
        json!("192.168.0.1"),
        r#"spec.gateway: Invalid value: "string": gateway must be a canonical address inside 10.0.0.0/8"#,
    );
    rejected(
        &host,
        "gateway",
        json!("10.0.0.256"),
        r#"spec.gateway: Invalid value: "string": IP Address "10.0.0.256" parse error during conversion from string: ParseAddr("10.0.0.256"): IPv4 field has value >255 evaluating rule: gateway must be a canonical address inside 10.0.0.0/8"#,
    );
}

#[test]
fn urls() {
    let host = host();
    rejected(
        &host,
        "endpoint",
        json!("http://api.example.com/v1"),
        r#"spec.endpoint: Invalid value: "string": endpoint must be an https URL on port 443 or 8443"#,
    );
    rejected(
        &host,
        "endpoint",
        json!("api.example.com"),
        r#"spec.endpoint: Invalid value: "string": endpoint must be an https URL on port 443 or 8443"#,
    );
    rejected(
        &host,
        "callback",
        json!("https://hooks.example.com/hooks/build?debug=1"),
        r#"spec.callback: Invalid value: "string": callback must be under /hooks/ without debug"#,
    );
    rejected(
        &host,
        "callback",
        json!("hooks/build"),
        r#"spec.callback: Invalid value: "string": URL parse error during conversion from string: parse "hooks/build": invalid URI for request evaluating rule: callback must be under /hooks/ without debug"#,
    );
}

#[test]
fn sets_and_lists() {
    let host = host();
    rejected(
        &host,
        "features",
        json!(["alpha", "delta"]),
        r#"spec.features: Invalid value: "array": unknown feature"#,
    );
    rejected(
        &host,
        "ports",
        json!([80, 8080]),
        r#"spec.ports: Invalid value: "array": ports must start at 1024 or above"#,
    );
    let mut spec = valid_spec();
    spec["ports"] = json!([]);
    assert_eq!(validate(&host, spec)["accepted"], json!(true));
}

#[test]
fn semantic_versions() {
    let host = host();
    for bad in ["1.26.5", "2.0.0", "latest"] {
        rejected(
            &host,
            "minVersion",
            json!(bad),
            r#"spec.minVersion: Invalid value: "string": minVersion must be a 1.x version after 1.27.0"#,
        );
    }
}

/// With every other rule in the object: the library calls cost what the API server charges
/// (1 for `format.dns1123Label()` and `validate`), well within crfix's own budget.
#[test]
fn named_formats() {
    rejected(
        &host(),
        "serviceName",
        json!("API_Gateway"),
        r#"spec.serviceName: Invalid value: "string": serviceName must be a lowercase RFC 1123 label"#,
    );
}

#[test]
fn two_variable_comprehensions() {
    let host = host();
    // Map: key and value.
    rejected(
        &host,
        "grades",
        json!({"midterm": 70, "final": 101}),
        r#"spec.grades: Invalid value: "object": grades must be within 0..100, with a final grade"#,
    );
    rejected(
        &host,
        "grades",
        json!({"midterm": 70, "retake": 80}),
        r#"spec.grades: Invalid value: "object": grades must be within 0..100, with a final grade"#,
    );
    // List: index and element.
    rejected(
        &host,
        "steps",
        json!(["a-start", "test", "build"]),
        r#"spec.steps: Invalid value: "array": steps must be sorted, starting with a-start"#,
    );
    rejected(
        &host,
        "steps",
        json!(["a-start", "b-a-very-long-step-name"]),
        r#"spec.steps: Invalid value: "array": steps after the first must be at most 16 characters"#,
    );
    // transformMap, and transformMapEntry's error on a repeated key (cel-go's words).
    rejected(
        &host,
        "owners",
        json!({"api": "Alice"}),
        r#"spec.owners: Invalid value: "object": owners must be lower case and distinct"#,
    );
    rejected(
        &host,
        "owners",
        json!({"api": "alice", "web": "alice"}),
        r#"spec.owners: Invalid value: "object": insert failed: key alice already exists evaluating rule: owners must be lower case and distinct"#,
    );
}

#[test]
fn sort_by() {
    rejected(
        &host(),
        "priorities",
        json!([{"name": "low", "weight": 1}, {"name": "high", "weight": 10}]),
        r#"spec.priorities: Invalid value: "array": priorities must be listed by decreasing weight"#,
    );
}

/// `format: duration`, `date-time`, `date` and `byte` strings are durations, timestamps and
/// bytes for CEL, as the API server hands them (kube-openapi's parsers: `3 days` is a
/// duration).
#[test]
fn strings_typed_by_their_format() {
    let host = host();
    for bad in ["30s", "2 days"] {
        rejected(
            &host,
            "ttl",
            json!(bad),
            r#"spec.ttl: Invalid value: "string": ttl must be between 1m and 24h"#,
        );
    }
    let mut spec = valid_spec();
    spec["ttl"] = json!("1 hour");
    assert_eq!(validate(&host, spec)["accepted"], json!(true));
    // 23:30+02:00 is 21:30 UTC: valid; 23:30Z is not.
    let mut spec = valid_spec();
    spec["expires"] = json!("2030-06-01T23:30:00+02:00");
    assert_eq!(validate(&host, spec)["accepted"], json!(true));
    rejected(
        &host,
        "expires",
        json!("2030-06-01T23:30:00Z"),
        r#"spec.expires: Invalid value: "string": expires must be after 2024, before 23:00 UTC"#,
    );
    // 2024-05-05 is a Sunday.
    for bad in ["2024-05-05", "2024-05-07"] {
        rejected(
            &host,
            "since",
            json!(bad),
            r#"spec.since: Invalid value: "string": since must be a weekday, at the latest 2024-05-06"#,
        );
    }
    for bad in ["AAEC", "AAAAAA=="] {
        rejected(
            &host,
            "digest",
            json!(bad),
            r#"spec.digest: Invalid value: "string": digest must be 4 bytes, not all zero"#,
        );
    }
}

/// A rule on an int-or-string value the API server could not type-check: a string compared
/// with an int has no overload, an error in the API server's words.
#[test]
fn a_missing_overload_is_the_api_servers_error() {
    rejected(
        &host(),
        "port",
        json!("http"),
        r#"spec.port: Invalid value: "int-or-string": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: port must be positive"#,
    );
}
