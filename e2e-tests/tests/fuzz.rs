//! Property tests through the real `.wasm`: whatever the input, the policy answers with a
//! well-formed response (never a trap, never a waPC error), and every repair it makes is
//! valid, stays within the object's content (never its identity or status), and never invents
//! `/spec/serviceAccount`.
//!
//! Case counts are modest (each case is a fresh wasm instance); raise them with
//! `PROPTEST_CASES=2000 cargo test -p crfix-e2e-tests --test fuzz`.

use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use serde_json::{json, Map, Value};

use crfix_e2e_tests::valid_cluster_extension as valid_ce;
use crfix_e2e_tests::{
    admission_request, check_settings_response, check_validation_response, crd_fixture,
    inline_settings, proptest_cases, PolicyHost,
};

const REPAIR_ANNOTATION_POINTER: &str = "/metadata/annotations/crfix.dev~1repair";

fn host() -> &'static PolicyHost {
    static HOST: OnceLock<PolicyHost> = OnceLock::new();
    HOST.get_or_init(|| match PolicyHost::policy() {
        Ok(h) => h,
        Err(e) => panic!("{e:#}"),
    })
}

fn ce_crd() -> &'static Value {
    static CRD: OnceLock<Value> = OnceLock::new();
    CRD.get_or_init(|| crd_fixture("clusterextensions.olm.operatorframework.io.v1"))
}

fn config(default_cases: u32) -> Config {
    Config {
        cases: proptest_cases(default_cases),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Arbitrary JSON, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "spec",
            "metadata",
            "request",
            "settings",
            "object",
            "oldObject",
            "operation",
            "CREATE",
            "UPDATE",
            "DELETE",
            "mode",
            "fix",
            "validate",
            "inline",
            "cluster",
            "crds",
            "Catalog",
            "catalog",
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-zA-Z]{0,10}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

const PATHS: &[&str] = &[
    "/spec/namespace",
    "/spec/serviceAccount",
    "/spec/serviceAccount/name",
    "/spec/source",
    "/spec/source/sourceType",
    "/spec/source/catalog",
    "/spec/source/catalog/packageName",
    "/spec/source/catalog/version",
    "/spec/source/catalog/channels",
    "/spec/source/catalog/channels/0",
    "/spec/source/catalog/selector",
    "/spec/source/catalog/upgradeConstraintPolicy",
    "/spec/install",
    "/spec/install/namespace",
    "/spec/install/serviceAccount",
    "/spec/install/preflight/crdUpgradeSafety/enforcement",
    "/spec",
    "/metadata/name",
];

/// Values close to what a person writes by mistake, and arbitrary ones.
fn near_miss() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::sample::select(vec![
            json!("catalog"), json!("CATALOG"), json!("Catalog"), json!("selfcertified"),
            json!("Self-Certified"), json!("catalogprovided"), json!("strict"), json!("none"),
            json!("NONE"), json!("Argocd-Operator"), json!("argocd_operator"), json!("1.2"),
            json!(1.2), json!(true), json!("true"), json!(["stable"]), json!("stable"),
            json!("stable,candidate"), json!(null), json!(""), json!({}), json!([]),
            json!({"name": "argocd-installer"}), json!("argocd"), json!("Argo CD"),
            json!(42), json!(">=1.0.0"), json!("latest"),
        ]),
        1 => json_value(),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(&'static str, Value),
    Remove(&'static str),
    /// Renames the last key of the path by dropping one character (a typo).
    Typo(&'static str, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let path = prop::sample::select(PATHS);
    prop_oneof![
        3 => (path.clone(), near_miss()).prop_map(|(p, v)| Mutation::Set(p, v)),
        1 => path.clone().prop_map(Mutation::Remove),
        1 => (path, 0usize..16).prop_map(|(p, i)| Mutation::Typo(p, i)),
    ]
}

fn split(path: &str) -> Option<(&str, &str)> {
    path.rsplit_once('/')
}

fn apply(object: &mut Value, m: &Mutation) {
    match m {
        Mutation::Set(path, value) => {
            let Some((parent, key)) = split(path) else {
                return;
            };
            match object.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.insert(key.to_string(), value.clone());
                }
                Some(Value::Array(items)) => {
                    if let Ok(i) = key.parse::<usize>() {
                        if i < items.len() {
                            items[i] = value.clone();
                        }
                    }
                }
                _ => {}
            }
        }
        Mutation::Remove(path) => {
            if let Some((parent, key)) = split(path) {
                if let Some(Value::Object(map)) = object.pointer_mut(parent) {
                    map.remove(key);
                }
            }
        }
        Mutation::Typo(path, i) => {
            if let Some((parent, key)) = split(path) {
                if let Some(Value::Object(map)) = object.pointer_mut(parent) {
                    if let Some(v) = map.remove(key) {
                        let mut chars: Vec<char> = key.chars().collect();
                        if !chars.is_empty() {
                            chars.remove(i % chars.len());
                        }
                        map.insert(chars.into_iter().collect(), v);
                    }
                }
            }
        }
    }
}

/// Does `needle` occur anywhere in `haystack` (as a whole value)?
fn occurs_in(haystack: &Value, needle: &Value) -> bool {
    if haystack == needle {
        return true;
    }
    match haystack {
        Value::Object(map) => map.values().any(|v| occurs_in(v, needle)),
        Value::Array(items) => items.iter().any(|v| occurs_in(v, needle)),
        _ => false,
    }
}

fn without_repair_annotation(object: &Value) -> Value {
    let mut metadata = object.get("metadata").cloned().unwrap_or(Value::Null);
    if let Some(Value::Object(annotations)) = metadata.get_mut("annotations") {
        annotations.remove("crfix.dev/repair");
        if annotations.is_empty() {
            if let Some(m) = metadata.as_object_mut() {
                m.remove("annotations");
            }
        }
    }
    metadata
}

/// The repair invariant: only `/spec` changes (plus crfix's annotation), `/spec/serviceAccount`
/// is never invented or changed (a verbatim relocation of the user's own value is the one
/// allowed move), and the repaired object is valid as it is.
fn check_repair(
    original: &Value,
    mutated: &Value,
    request: &Value,
    settings: &Value,
) -> Result<(), TestCaseError> {
    prop_assert!(
        mutated
            .pointer(REPAIR_ANNOTATION_POINTER)
            .is_some_and(Value::is_string),
        "no crfix.dev/repair annotation: {mutated}"
    );
    prop_assert_eq!(original.get("apiVersion"), mutated.get("apiVersion"));
    prop_assert_eq!(original.get("kind"), mutated.get("kind"));
    prop_assert_eq!(
        without_repair_annotation(original),
        without_repair_annotation(mutated),
        "metadata changed beyond the annotation"
    );
    let patch = json_patch::diff(original, mutated);
    for op in patch.0.iter() {
        let op_json = serde_json::to_value(op).unwrap_or(Value::Null);
        for key in ["path", "from"] {
            if let Some(p) = op_json.get(key).and_then(Value::as_str) {
                // The object's content (the default allowedPaths): anything but its identity
                // and status; metadata beyond the annotation is checked above.
                let content = !["/apiVersion", "/kind", "/status"]
                    .iter()
                    .any(|root| p == *root || p.starts_with(&format!("{root}/")));
                prop_assert!(
                    !p.is_empty() && content,
                    "{} touches {}: {}",
                    op_json,
                    p,
                    mutated
                );
            }
        }
    }
    let before = original.pointer("/spec/serviceAccount");
    let after = mutated.pointer("/spec/serviceAccount");
    if before != after {
        // The user's own value, moved verbatim (from v1alpha1's `install`, or with a whole
        // `spec` whose key was misspelt).
        let relocated = before.is_none()
            && after.is_some_and(|v| occurs_in(original, v))
            && !occurs_in(&mutated["spec"]["install"], after.unwrap_or(&Value::Null));
        prop_assert!(
            relocated,
            "/spec/serviceAccount changed: {:?} → {:?}",
            before,
            after
        );
    }

    let mut again = request.clone();
    again["object"] = mutated.clone();
    let mut validate_settings = settings.clone();
    validate_settings["mode"] = json!("validate");
    let r = host()
        .validate(&again, &validate_settings)
        .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
    prop_assert_eq!(
        &r["accepted"],
        &json!(true),
        "repaired object rejected: {}",
        r
    );
    prop_assert!(r.get("mutated_object").is_none_or(Value::is_null));
    Ok(())
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn arbitrary_bytes_get_an_answer(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let out = host().validate_raw(&bytes).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let r: Value = serde_json::from_slice(&out)
            .map_err(|e| TestCaseError::fail(format!("not JSON: {e}")))?;
        check_validation_response(&r).map_err(TestCaseError::fail)?;

        let out = host()
            .validate_settings_raw(&bytes)
            .map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let r: Value = serde_json::from_slice(&out)
            .map_err(|e| TestCaseError::fail(format!("not JSON: {e}")))?;
        check_settings_response(&r).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn arbitrary_json_gets_an_answer(request in json_value(), settings in json_value()) {
        let r = host().validate(&request, &settings).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        check_validation_response(&r).map_err(TestCaseError::fail)?;
        let r = host().validate_settings(&settings).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        check_settings_response(&r).map_err(TestCaseError::fail)?;
        // The same value as a whole payload.
        let payload = serde_json::to_vec(&request).unwrap_or_default();
        let out = host().validate_raw(&payload).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        let r: Value = serde_json::from_slice(&out).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_validation_response(&r).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn arbitrary_object_under_a_cluster_extension_request(
        object in json_value(),
        operation in prop::sample::select(vec!["CREATE", "UPDATE", "DELETE", "CONNECT"]),
    ) {
        let settings = inline_settings(&[ce_crd().clone()], json!({"mode": "fix"}));
        let mut request = admission_request("CREATE", valid_ce(), None);
        request["operation"] = json!(operation);
        request["object"] = object;
        let r = host().validate(&request, &settings).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        check_validation_response(&r).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn repairs_are_valid_and_stay_in_bounds(
        mutations in prop::collection::vec(mutation(), 1..5),
        update in any::<bool>(),
        mode in prop::sample::select(vec!["fix", "suggest", "validate"]),
    ) {
        let mut object = valid_ce();
        for m in &mutations {
            apply(&mut object, m);
        }
        let request = if update {
            admission_request("UPDATE", object.clone(), Some(valid_ce()))
        } else {
            admission_request("CREATE", object.clone(), None)
        };
        let settings = inline_settings(&[ce_crd().clone()], json!({"mode": mode}));
        let r = host().validate(&request, &settings).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
        check_validation_response(&r).map_err(TestCaseError::fail)?;
        if mode != "fix" {
            prop_assert!(r.get("mutated_object").is_none_or(Value::is_null), "{} mutated: {}", mode, r);
        }
        if r["accepted"] == true {
            if let Some(mutated) = r.get("mutated_object").filter(|m| m.is_object()) {
                check_repair(&object, mutated, &request, &settings)?;
            }
        } else {
            prop_assert!(r["message"].as_str().is_some_and(|m| !m.is_empty()), "rejection without a message: {}", r);
        }
    }
}

/// The repair property is not vacuous: the mutation strategy does produce repaired objects.
#[test]
fn the_mutation_strategy_exercises_repairs() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let settings = inline_settings(&[ce_crd().clone()], json!({"mode": "fix"}));
    let strategy = prop::collection::vec(mutation(), 1..5);
    let (mut repaired, total) = (0, 100);
    for _ in 0..total {
        let mutations = match strategy.new_tree(&mut runner) {
            Ok(tree) => tree.current(),
            Err(e) => panic!("{e}"),
        };
        let mut object = valid_ce();
        for m in &mutations {
            apply(&mut object, m);
        }
        let request = admission_request("CREATE", object, None);
        let r = host().validate(&request, &settings).expect("validate");
        if r.get("mutated_object").is_some_and(Value::is_object) {
            repaired += 1;
        }
    }
    assert!(
        repaired >= 10,
        "only {repaired} of {total} cases were repaired"
    );
}

/// Found by the repair property: a float the repair does not touch must come back to the bit
/// (serde_json's default float parser could be 1 ULP off; crfix parses with
/// `float_roundtrip`).
#[test]
fn untouched_floats_come_back_exactly() {
    let mut object = valid_ce();
    let mutations = [
        Mutation::Typo("/spec/namespace", 0),
        Mutation::Set("/metadata/name", json!({"": 4.1373351141566505e-301})),
    ];
    for m in &mutations {
        apply(&mut object, m);
    }
    let request = admission_request("CREATE", object.clone(), None);
    let settings = inline_settings(&[ce_crd().clone()], json!({"mode": "fix"}));
    let r = host().validate(&request, &settings).expect("validate");
    let mutated = &r["mutated_object"];
    assert!(mutated.is_object(), "{r}");
    assert_eq!(mutated["metadata"]["name"], object["metadata"]["name"]);
    check_repair(&object, mutated, &request, &settings).unwrap();
}

/// The invariant checker rejects what it must.
#[test]
fn the_repair_checker_catches_bad_repairs() {
    let original = valid_ce();
    let request = admission_request("CREATE", original.clone(), None);
    let settings = inline_settings(&[ce_crd().clone()], json!({"mode": "fix"}));
    let annotated = |mut v: Value| {
        v["metadata"]["annotations"] = json!({"crfix.dev/repair": "{}"});
        v
    };
    let good = annotated(original.clone());
    assert!(check_repair(&original, &good, &request, &settings).is_ok());

    let mut sa = annotated(original.clone());
    sa["spec"]["serviceAccount"]["name"] = json!("cluster-admin");
    assert!(check_repair(&original, &sa, &request, &settings).is_err());

    let mut outside = annotated(original.clone());
    outside["status"] = json!({"phase": "x"});
    assert!(check_repair(&original, &outside, &request, &settings).is_err());

    let mut labels = annotated(original.clone());
    labels["metadata"]["labels"] = json!({"a": "b"});
    assert!(check_repair(&original, &labels, &request, &settings).is_err());

    let mut invalid = annotated(original.clone());
    invalid["spec"]["source"]["sourceType"] = json!("catalog");
    assert!(check_repair(&original, &invalid, &request, &settings).is_err());

    assert!(check_repair(&original, &original, &request, &settings).is_err());
}
