//! The repair loop against a small structural validator written for these tests (type,
//! enum, required, unknown properties, nullable, CEL `self == oldSelf` and DNS `matches`),
//! so the engine is tested on its own; `full_loop` below uses the real validator.

use serde_json::{json, Value};

use super::*;
use crate::types::{ErrorKind, FieldError};

fn err(pointer: &str, kind: ErrorKind) -> FieldError {
    FieldError {
        pointer: pointer.to_string(),
        message: format!("{kind:?}"),
        kind,
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

fn dns_ok(s: &str, dots: bool) -> bool {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if dots {
        s.split('.').all(label_ok)
    } else {
        label_ok(s)
    }
}

fn mini(node: &Value, v: &Value, old: Option<&Value>, at: &str, out: &mut Vec<FieldError>) {
    if v.is_null() {
        if node.get("nullable") != Some(&json!(true)) {
            out.push(err(at, ErrorKind::Null));
        }
        return;
    }
    if let Some(t) = node.get("type").and_then(Value::as_str) {
        let actual = type_of(v);
        let ok = actual == t || (t == "number" && actual == "integer");
        if !ok {
            out.push(err(
                at,
                ErrorKind::Type {
                    expected: t.to_string(),
                },
            ));
            return;
        }
    }
    if let Some(allowed) = node.get("enum").and_then(Value::as_array) {
        if !allowed.contains(v) {
            out.push(err(
                at,
                ErrorKind::Enum {
                    allowed: allowed.clone(),
                },
            ));
        }
    }
    for rule in node
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("rule").and_then(Value::as_str))
    {
        let failed = if rule == "self == oldSelf" {
            old.is_some_and(|o| o != v)
        } else if rule.contains("matches(") {
            !dns_ok(v.as_str().unwrap_or(""), rule.contains("\\."))
        } else {
            false
        };
        if failed {
            out.push(err(
                at,
                ErrorKind::Cel {
                    rule: rule.to_string(),
                    reason: "FieldValueInvalid".into(),
                    transition: rule.contains("oldSelf"),
                },
            ));
        }
    }
    match v {
        Value::Object(map) => {
            let props = node.get("properties").and_then(Value::as_object);
            for r in node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !map.contains_key(r) {
                    out.push(err(&pointer::push(at, r), ErrorKind::Required));
                }
            }
            for (k, child) in map {
                let child_at = pointer::push(at, k);
                match props.and_then(|p| p.get(k)) {
                    Some(s) => mini(s, child, old.and_then(|o| o.get(k)), &child_at, out),
                    None if props.is_none()
                        || node.get("x-kubernetes-preserve-unknown-fields").is_some() => {}
                    None => out.push(err(&child_at, ErrorKind::Unknown)),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = node.get("items") {
                for (i, item) in items.iter().enumerate() {
                    mini(s, item, None, &pointer::push(at, &i.to_string()), out);
                }
            }
        }
        _ => {}
    }
}

fn mini_validate(schema: &Value, object: &Value, old: Option<&Value>) -> ValidationOutcome {
    let mut errors = Vec::new();
    mini(schema, object, old, "", &mut errors);
    ValidationOutcome {
        errors,
        warnings: Vec::new(),
    }
}

const LABEL: &str = r#"self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")"#;
const SUBDOMAIN: &str =
    r#"self.matches("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")"#;

/// ClusterExtension v1, in brief.
fn schema_v1() -> Value {
    json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {"type": "object", "required": ["namespace", "serviceAccount", "source"], "properties": {
            "namespace": {"type": "string", "maxLength": 63, "x-kubernetes-validations": [
                {"rule": "self == oldSelf"}, {"rule": LABEL}]},
            "serviceAccount": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "x-kubernetes-validations": [{"rule": SUBDOMAIN}]}}},
            "install": {"type": "object", "properties": {"preflight": {"type": "object", "properties": {
                "crdUpgradeSafety": {"type": "object", "required": ["enforcement"], "properties": {
                    "enforcement": {"type": "string", "enum": ["None", "Strict"]}}}}}}},
            "source": {"type": "object", "required": ["sourceType"], "properties": {
                "sourceType": {"type": "string", "enum": ["Catalog"]},
                "catalog": {"type": "object", "required": ["packageName"], "properties": {
                    "packageName": {"type": "string", "x-kubernetes-validations": [{"rule": SUBDOMAIN}]},
                    "version": {"type": "string"},
                    "channels": {"type": "array", "items": {"type": "string",
                        "x-kubernetes-validations": [{"rule": SUBDOMAIN}]}},
                    "upgradeConstraintPolicy": {"type": "string", "default": "CatalogProvided",
                        "enum": ["CatalogProvided", "SelfCertified"]}
                }}
            }}
        }}
    }})
}

/// ClusterExtension v1alpha1, in brief.
fn schema_v1alpha1() -> Value {
    json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {"type": "object", "required": ["install", "source"], "properties": {
            "install": {"type": "object", "required": ["namespace", "serviceAccount"], "properties": {
                "namespace": {"type": "string"},
                "serviceAccount": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}}}}},
            "source": {"type": "object", "required": ["sourceType"], "properties": {
                "sourceType": {"type": "string", "enum": ["Catalog"]},
                "catalog": {"type": "object", "required": ["packageName"], "properties": {
                    "packageName": {"type": "string"}}}}}
        }}
    }})
}

fn valid_v1() -> Value {
    json!({
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": "argocd"},
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "argocd-installer"},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd-operator"}}
        }
    })
}

fn run_with(
    schema: &Value,
    settings: &Settings,
    object: &Value,
    old: Option<&Value>,
) -> RepairOutcome {
    let ctx = RepairContext {
        schema,
        old_object: old,
        settings,
        options: ValidateOptions {
            report_unknown_fields: true,
        },
    };
    let initial = mini_validate(schema, object, old);
    let validate = |o: &Value| mini_validate(schema, o, old);
    let out = repair_with(&ctx, object, &initial, &validate);
    // Invariants, whatever the case: the outcome's validation is the object's, errors
    // never grow, and a valid result passes every guardrail.
    assert_eq!(out.validation, mini_validate(schema, &out.object, old));
    assert!(out.validation.errors.len() <= initial.errors.len());
    if out.validation.is_valid() {
        if let Err(v) = guardrails::check_candidate(settings, object, &out.object) {
            panic!("valid repair broke guardrails: {v:?}");
        }
    }
    out
}

fn run(schema: &Value, object: &Value) -> RepairOutcome {
    run_with(schema, &Settings::default(), object, None)
}

fn reasons(out: &RepairOutcome) -> Vec<String> {
    out.changes.iter().map(|c| c.reason.clone()).collect()
}

#[test]
fn three_independent_repairs_in_one_round() {
    let mut o = valid_v1();
    o["spec"]["namespace"] = json!("ArgoCD");
    o["spec"]["source"]["sourceType"] = json!("catalog");
    o["spec"]["source"]["catalog"]["channels"] = json!("stable");
    let out = run(&schema_v1(), &o);
    assert!(out.validation.is_valid(), "{:?}", out.validation);
    assert_eq!(out.object["spec"]["namespace"], "argocd");
    assert_eq!(out.object["spec"]["source"]["sourceType"], "Catalog");
    assert_eq!(
        out.object["spec"]["source"]["catalog"]["channels"],
        json!(["stable"])
    );
    assert_eq!(out.changes.len(), 3);
    let r = reasons(&out);
    assert!(r.contains(&"DNS-1123".to_string()), "{r:?}");
    assert!(r.contains(&"enum".to_string()), "{r:?}");
    assert!(
        r.contains(&"a single value where a list is expected".to_string()),
        "{r:?}"
    );
    for c in &out.changes {
        assert!(matches!(c.source, ChangeSource::Rule { .. }));
    }
}

#[test]
fn valid_objects_are_left_alone() {
    let out = run(&schema_v1(), &valid_v1());
    assert!(out.changes.is_empty());
    assert_eq!(out.object, valid_v1());
}

#[test]
fn renamed_subtree_is_repaired_in_later_rounds() {
    // The rename reveals errors inside the renamed value; a later round fixes them.
    let mut o = valid_v1();
    let source = o["spec"].as_object_mut().unwrap().remove("source").unwrap();
    o["spec"]["sorce"] = source;
    o["spec"]["sorce"]["sourceType"] = json!("Catalg");
    o["spec"]["sorce"]["catalog"]["channels"] = json!(["Fast_Track"]);
    let out = run(&schema_v1(), &o);
    assert!(out.validation.is_valid(), "{:?}", out.validation);
    assert_eq!(out.object["spec"]["source"]["sourceType"], "Catalog");
    assert_eq!(
        out.object["spec"]["source"]["catalog"]["channels"],
        json!(["fast-track"])
    );
    assert_eq!(out.changes[0].from.as_deref(), Some("/spec/sorce"));
    assert_eq!(out.changes[0].reason, "renamed: closest property");
}

#[test]
fn v1alpha1_object_migrates_to_v1_including_protected_service_account() {
    let o = json!({
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": "argocd"},
        "spec": {
            "install": {"namespace": "argocd", "serviceAccount": {"name": "argocd-installer"}},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd-operator"}}
        }
    });
    let out = run(&schema_v1(), &o);
    assert!(out.validation.is_valid(), "{:?}", out.validation);
    assert_eq!(out.object["spec"]["namespace"], "argocd");
    assert_eq!(
        out.object["spec"]["serviceAccount"]["name"],
        "argocd-installer"
    );
    assert!(
        out.object["spec"].get("install").is_none(),
        "{}",
        out.object
    );
    let moved_sa = out
        .changes
        .iter()
        .find(|c| c.path == "/spec/serviceAccount")
        .unwrap();
    assert!(moved_sa.reason.contains("your own value"), "{moved_sa:?}");
}

#[test]
fn v1_object_migrates_back_to_v1alpha1() {
    let o = valid_v1();
    let out = run(&schema_v1alpha1(), &o);
    assert!(out.validation.is_valid(), "{:?}", out.validation);
    assert_eq!(out.object["spec"]["install"]["namespace"], "argocd");
    assert_eq!(
        out.object["spec"]["install"]["serviceAccount"]["name"],
        "argocd-installer"
    );
}

#[test]
fn a_required_name_is_never_invented() {
    let mut o = valid_v1();
    o["spec"]["source"]["catalog"]
        .as_object_mut()
        .unwrap()
        .remove("packageName");
    o["spec"].as_object_mut().unwrap().remove("serviceAccount");
    let out = run(&schema_v1(), &o);
    assert!(!out.validation.is_valid());
    assert!(out.changes.is_empty(), "{:?}", out.changes);
    assert_eq!(out.object, o);
}

#[test]
fn far_enum_values_and_equally_close_keys_are_refused() {
    let mut o = valid_v1();
    o["spec"]["source"]["sourceType"] = json!("Image");
    let out = run(&schema_v1(), &o);
    assert!(out.changes.is_empty());
    assert!(
        out.refused.iter().any(|r| r.contains("no allowed value")),
        "{:?}",
        out.refused
    );

    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "step": {"type": "integer"}, "steps": {"type": "integer"}}}}});
    let o = json!({"spec": {"stepz": 1}});
    let out = run(&schema, &o);
    assert!(out.changes.is_empty());
    assert!(
        out.refused.iter().any(|r| r.contains("as close")),
        "{:?}",
        out.refused
    );
}

#[test]
fn a_rule_changes_a_type_only_where_one_reading_is_left() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "entryPoints": {"type": "array", "items": {"type": "string"}},
        "groupBy": {"type": "array", "items": {"type": "string"}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ciphers": {"type": "array", "items": {"type": "string"}},
        "hosts": {"type": "array", "items": {"type": "string"}}}}}});
    let o = json!({"spec": {"entryPoints": ["web", "websecure", 443], "groupBy": "all labels",
        "tags": "single", "ciphers": "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305",
        "hosts": "web.example.com:8443"}});
    let out = run(&schema, &o);
    // A port among entry-point names is not made a name; a string with blanks, or names joined
    // by a colon, is not one item; a host with its port is.
    assert_eq!(out.object["spec"]["entryPoints"], o["spec"]["entryPoints"]);
    assert_eq!(out.object["spec"]["groupBy"], json!("all labels"));
    assert_eq!(out.object["spec"]["tags"], json!(["single"]));
    assert_eq!(out.object["spec"]["ciphers"], o["spec"]["ciphers"]);
    assert_eq!(out.object["spec"]["hosts"], json!(["web.example.com:8443"]));
    for why in ["names, not numbers", "blanks", "joins names with a colon"] {
        assert!(
            out.refused.iter().any(|r| r.contains(why)),
            "{why}: {:?}",
            out.refused
        );
    }
}

#[test]
fn keys_that_collide_after_normalisation_are_refused() {
    let mut o = valid_v1();
    o["spec"].as_object_mut().unwrap().remove("namespace");
    o["spec"]["name_space"] = json!("a");
    o["spec"]["NameSpace"] = json!("b");
    let out = run(&schema_v1(), &o);
    assert!(out.changes.is_empty(), "{:?}", out.changes);
    assert!(
        out.refused.iter().any(|r| r.contains("keys collide as")),
        "{:?}",
        out.refused
    );
}

#[test]
fn defaults_and_single_allowed_values_fill_required_fields() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "required": ["policy", "sourceType"], "properties": {
        "policy": {"type": "string", "default": "CatalogProvided"},
        "sourceType": {"type": "string", "enum": ["Catalog"]}}}}});
    let out = run(&schema, &json!({"spec": {}}));
    assert!(out.validation.is_valid());
    assert_eq!(
        out.object,
        json!({"spec": {"policy": "CatalogProvided", "sourceType": "Catalog"}})
    );
    let r = reasons(&out);
    assert!(r.contains(&"schema default".into()) && r.contains(&"only allowed value".into()));
}

#[test]
fn immutable_values_are_restored_on_update_only_when_enabled() {
    let old = valid_v1();
    let mut o = valid_v1();
    o["spec"]["namespace"] = json!("other");
    let settings = Settings {
        restore_immutable: true,
        ..Settings::default()
    };
    let out = run_with(&schema_v1(), &settings, &o, Some(&old));
    assert!(out.validation.is_valid());
    assert_eq!(out.object["spec"]["namespace"], "argocd");
    assert_eq!(out.changes[0].reason, "immutable: restored from old object");

    // By default the user's change stands and is refused: putting the old value back would
    // undo what they asked for.
    let out = run_with(&schema_v1(), &Settings::default(), &o, Some(&old));
    assert!(!out.validation.is_valid());
    assert!(out.changes.is_empty());
}

#[test]
fn guardrails_stop_repairs() {
    // A protected path is never changed, not even by a sure repair.
    let mut o = valid_v1();
    o["spec"]["serviceAccount"]["name"] = json!("Argo_Installer");
    let out = run(&schema_v1(), &o);
    assert!(out.changes.is_empty());
    assert!(
        out.refused.iter().any(|r| r.contains("protected")),
        "{:?}",
        out.refused
    );
    // Outside the allowed paths.
    let settings = Settings {
        allowed_paths: Some(vec!["/spec/source".into()]),
        ..Settings::default()
    };
    let mut o = valid_v1();
    o["spec"]["namespace"] = json!("ArgoCD");
    o["spec"]["source"]["sourceType"] = json!("catalog");
    let out = run_with(&schema_v1(), &settings, &o, None);
    assert_eq!(out.changes.len(), 1);
    assert_eq!(out.object["spec"]["namespace"], "ArgoCD");
    assert!(out.refused.iter().any(|r| r.contains("allowedPaths")));
    // At most maxPatchOperations changes.
    let settings = Settings {
        max_patch_operations: 1,
        ..Settings::default()
    };
    let out = run_with(&schema_v1(), &settings, &o, None);
    assert_eq!(out.changes.len(), 1);
    assert!(out.refused.iter().any(|r| r.contains("maxPatchOperations")));
}

#[test]
fn dns_normalisation_that_does_not_help_is_undone() {
    // A trailing '.' is stripped, but "a..b" stays invalid as a subdomain: undone, reported.
    let mut o = valid_v1();
    o["spec"]["source"]["catalog"]["packageName"] = json!("Argo..CD");
    let out = run(&schema_v1(), &o);
    assert!(out.changes.is_empty(), "{:?}", out.changes);
    assert_eq!(out.object, o);
    assert!(
        out.refused.iter().any(|r| r.contains("still be invalid")),
        "{:?}",
        out.refused
    );
}

#[test]
fn nulls_are_dropped_then_defaulted() {
    let mut o = valid_v1();
    o["spec"]["source"]["catalog"]["upgradeConstraintPolicy"] = Value::Null;
    let out = run(&schema_v1(), &o);
    assert!(out.validation.is_valid(), "{:?}", out.validation);
    // Dropped (as the API server prunes it); the property is optional, so it stays absent.
    assert!(out.object["spec"]["source"]["catalog"]
        .get("upgradeConstraintPolicy")
        .is_none());
}

#[test]
fn schema_without_properties_and_junk_terminate() {
    let schema = json!({"type": "object"});
    let mut junk = json!("leaf");
    for i in 0..200 {
        junk = json!({format!("k{i}"): junk, "x": [1, 2, {"y": null}]});
    }
    let o = json!({"spec": junk});
    let out = run(&schema, &o);
    assert!(out.changes.is_empty());

    // Many unknown keys under a schema with properties: bounded, no change guessed.
    let mut spec = serde_json::Map::new();
    for i in 0..5000 {
        spec.insert(format!("zz{i}"), json!(i));
    }
    let o = json!({"spec": spec});
    let out = run(&schema_v1(), &o);
    assert!(out.changes.len() <= Settings::default().max_patch_operations);
}

#[test]
fn a_loop_of_repairs_stops() {
    // A validator that always finds a fresh, fixable enum error: bounded rounds, and the
    // result never has more errors than the input.
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "string", "enum": ["X"]}}}}});
    let settings = Settings::default();
    let ctx = RepairContext {
        schema: &schema,
        old_object: None,
        settings: &settings,
        options: ValidateOptions {
            report_unknown_fields: true,
        },
    };
    let object = json!({"spec": {"a": "x"}});
    let flip = |o: &Value| ValidationOutcome {
        // "X" is reported invalid as well: a validator that never settles.
        errors: vec![err(
            "/spec/a",
            ErrorKind::Enum {
                allowed: vec![if o["spec"]["a"] == "X" {
                    json!("x")
                } else {
                    json!("X")
                }],
            },
        )],
        warnings: vec![],
    };
    let initial = flip(&object);
    let out = repair_with(&ctx, &object, &initial, &flip);
    assert!(out.validation.errors.len() <= 1);
    assert!(out.changes.len() <= MAX_ROUNDS);
}

/// The same engine with the real validator and the project's CRD fixtures.
mod full_loop {
    use super::*;

    use crate::fixtures::{ce_v1, ce_v1alpha1, widget_v1 as widget};

    const OPTS: ValidateOptions = ValidateOptions {
        report_unknown_fields: true,
    };

    fn real(
        schema: &Value,
        settings: &Settings,
        object: &Value,
        old: Option<&Value>,
    ) -> RepairOutcome {
        let ctx = RepairContext {
            schema,
            old_object: old,
            settings,
            options: OPTS,
        };
        let initial = validation::validate(schema, object, old, OPTS);
        let out = repair(&ctx, object, &initial);
        assert_eq!(
            out.validation,
            validation::validate(schema, &out.object, old, OPTS)
        );
        assert!(out.validation.errors.len() <= initial.errors.len());
        if out.validation.is_valid() {
            if let Err(v) = guardrails::check_candidate(settings, object, &out.object) {
                panic!("valid repair broke guardrails: {v:?}");
            }
        }
        out
    }

    #[test]
    fn three_repairs_on_the_real_schema() {
        let mut o = valid_v1();
        o["spec"]["namespace"] = json!("ArgoCD");
        o["spec"]["source"]["sourceType"] = json!("catalog");
        o["spec"]["source"]["catalog"]["channels"] = json!("Stable");
        let out = real(&ce_v1(), &Settings::default(), &o, None);
        assert!(
            out.validation.is_valid(),
            "{:?} {:?}",
            out.validation,
            out.refused
        );
        assert_eq!(out.object["spec"]["namespace"], "argocd");
        assert_eq!(out.object["spec"]["source"]["sourceType"], "Catalog");
        assert_eq!(
            out.object["spec"]["source"]["catalog"]["channels"],
            json!(["stable"])
        );
    }

    #[test]
    fn version_migrations_on_the_real_schemas() {
        let mut alpha = valid_v1();
        let spec = alpha["spec"].as_object_mut().unwrap();
        let ns = spec.remove("namespace").unwrap();
        let sa = spec.remove("serviceAccount").unwrap();
        spec.insert(
            "install".into(),
            json!({"namespace": ns, "serviceAccount": sa}),
        );
        let out = real(&ce_v1(), &Settings::default(), &alpha, None);
        assert!(
            out.validation.is_valid(),
            "{:?} {:?}",
            out.validation,
            out.refused
        );
        assert_eq!(out.object["spec"], valid_v1()["spec"]);

        let out = real(&ce_v1alpha1(), &Settings::default(), &valid_v1(), None);
        assert!(
            out.validation.is_valid(),
            "{:?} {:?}",
            out.validation,
            out.refused
        );
        assert_eq!(out.object["spec"], alpha["spec"]);
    }

    #[test]
    fn immutable_namespace_on_update() {
        let old = valid_v1();
        let mut o = valid_v1();
        o["spec"]["namespace"] = json!("elsewhere");
        let restore = Settings {
            restore_immutable: true,
            ..Settings::default()
        };
        let out = real(&ce_v1(), &restore, &o, Some(&old));
        assert!(out.validation.is_valid(), "{:?}", out.validation);
        assert_eq!(out.object["spec"]["namespace"], "argocd");
    }

    #[test]
    fn widget_repairs_and_refusals() {
        let o = json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": "3", "colour": "Red", "name": "My_Widget",
                     "ports": [{"name": "http"}], "tags": "blue"}
        });
        let out = real(&widget(), &Settings::default(), &o, None);
        assert!(
            out.validation.is_valid(),
            "{:?} {:?}",
            out.validation,
            out.refused
        );
        assert_eq!(
            out.object["spec"],
            json!({"size": 3, "color": "red", "name": "my-widget",
                   "ports": [{"name": "http", "protocol": "TCP"}], "tags": ["blue"]})
        );
        // Nothing to derive a size from: not invented.
        let o = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                       "spec": {"color": "purple"}});
        let out = real(&widget(), &Settings::default(), &o, None);
        assert!(!out.validation.is_valid());
        assert!(out.changes.is_empty(), "{:?}", out.changes);
    }
}

/// The e2e corpus (`e2e-tests/corpus`), natively through [`crate::pipeline::evaluate`]: a
/// quick check of outcomes and values without the `.wasm` (the e2e test `corpus` runs the
/// same cases through the real module, with the full set of checks).
mod corpus_native {
    use super::*;
    use crate::host::FnHost;

    const ROOT: &str = env!("CARGO_MANIFEST_DIR");

    fn crd(name: &str) -> Value {
        let text = std::fs::read_to_string(format!("{ROOT}/e2e-tests/fixtures/crds/{name}.yaml"))
            .expect("fixture");
        serde_yaml_ng::from_str(&text).expect("yaml")
    }

    fn run_case(case: &Value) -> Result<(), String> {
        let names: Vec<String> = match &case["crd"] {
            Value::String(s) => vec![s.clone()],
            v => v
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(String::from))
                .collect(),
        };
        let mut settings = case.get("settings").cloned().unwrap_or(json!({}));
        settings["schemaSource"] = json!("inline");
        settings["crds"] = Value::Array(names.iter().map(|n| crd(n)).collect());
        let object = &case["object"];
        let api = object["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api.split_once('/').unwrap_or(("", api));
        let kind = object["kind"].as_str().unwrap_or_default();
        let request = json!({
            "uid": "1",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version,
                         "resource": format!("{}s", kind.to_lowercase())},
            "operation": case["operation"],
            "object": object,
            "oldObject": case.get("oldObject").cloned().unwrap_or(Value::Null),
        });
        let payload = serde_json::to_vec(&json!({"request": request, "settings": settings}))
            .map_err(|e| e.to_string())?;
        let host = FnHost(|_: &crate::host::GetResourceRequest| Err("no cluster".to_string()));
        let response = serde_json::to_value(crate::pipeline::evaluate(&payload, &host))
            .map_err(|e| e.to_string())?;
        let expect = &case["expect"];
        let mutated = response.get("mutated_object").filter(|m| !m.is_null());
        let ok = match expect["outcome"].as_str() {
            Some("fixed") => response["accepted"] == json!(true) && mutated.is_some(),
            Some("rejected") => response["accepted"] == json!(false),
            Some("accepted") => response["accepted"] == json!(true) && mutated.is_none(),
            other => return Err(format!("unknown outcome {other:?}")),
        };
        if !ok {
            return Err(format!("outcome: {response:#}"));
        }
        if let (Some(fixed), Some(values)) = (mutated, expect["values"].as_object()) {
            for (pointer, want) in values {
                if fixed.pointer(pointer) != Some(want) {
                    return Err(format!("{pointer}: want {want}: {response:#}"));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn corpus_outcomes() {
        let mut failures = Vec::new();
        let mut n = 0;
        for entry in std::fs::read_dir(format!("{ROOT}/e2e-tests/corpus"))
            .expect("corpus")
            .flatten()
        {
            let text = std::fs::read_to_string(entry.path()).expect("case");
            let case: Value = serde_json::from_str(&text).expect("json");
            n += 1;
            if let Err(e) = run_case(&case) {
                failures.push(format!("{}: {e}", entry.path().display()));
            }
        }
        assert!(n >= 40, "{n} cases");
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }
}

#[test]
fn a_key_misspelt_inside_a_list_item_is_renamed_in_that_item() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "containers": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "readinessProbe": {"type": "object", "properties": {
                    "periodSeconds": {"type": "integer"}}}}}}}}}});
    let object = json!({"spec": {"containers": [
        {"name": "a"},
        {"name": "b", "readinesProbe": {"periodSeconds": 5}}]}});
    let out = run(&schema, &object);
    assert!(
        out.validation.is_valid(),
        "{:?} {:?}",
        out.validation,
        out.refused
    );
    assert_eq!(
        out.object,
        json!({"spec": {"containers": [
            {"name": "a"},
            {"name": "b", "readinessProbe": {"periodSeconds": 5}}]}})
    );
    assert_eq!(
        out.changes[0].from.as_deref(),
        Some("/spec/containers/1/readinesProbe")
    );
}

#[test]
fn a_number_is_not_made_text_where_an_unset_field_beside_it_takes_the_number() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "endpoint": {"type": "object", "properties": {
                "port": {"type": "string"},
                "targetPort": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                               "x-kubernetes-int-or-string": true},
                "path": {"type": "string"}}},
            "catalog": {"type": "object", "properties": {
                "version": {"type": "string"},
                "packageName": {"type": "string"}}}}}}});
    // 9090 may be the number of the port, whose name `port` holds: not certain.
    let object = json!({"spec": {"endpoint": {"port": 9090}}});
    let out = run(&schema, &object);
    assert!(out.changes.is_empty(), "{:?}", out.changes);
    assert!(
        out.hints
            .iter()
            .any(|h| h.contains("spec.endpoint.targetPort takes it as it is")),
        "{:?}",
        out.hints
    );
    // With targetPort set, or where no field beside it takes a number, the number is text.
    let object = json!({"spec": {"endpoint": {"port": 9090, "targetPort": 8080}}});
    assert_eq!(
        run(&schema, &object).object["spec"]["endpoint"]["port"],
        "9090"
    );
    let object = json!({"spec": {"catalog": {"version": 3}}});
    assert_eq!(
        run(&schema, &object).object["spec"]["catalog"]["version"],
        "3"
    );
}

#[test]
fn words_that_name_a_field_beside_them_are_not_joined_into_a_name() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "ref": {"type": "object", "properties": {
                "name": {"type": "string"},
                "sectionName": {"type": "string", "x-kubernetes-validations": [{"rule": LABEL}]},
                "port": {"type": "integer", "minimum": 1, "maximum": 65535}}}}}}});
    // `port 443` is about the unset `port` beside it, not a listener named `port-443`.
    let object = json!({"spec": {"ref": {"name": "gw", "sectionName": "port 443"}}});
    let out = run(&schema, &object);
    assert!(out.changes.is_empty(), "{:?}", out.changes);
    assert!(
        out.hints.iter().any(|h| h.contains("names spec.ref.port")),
        "{:?}",
        out.hints
    );
    // Words that name no field beside them are a name written with blanks.
    let object = json!({"spec": {"ref": {"name": "gw", "sectionName": "public https"}}});
    assert_eq!(
        run(&schema, &object).object["spec"]["ref"]["sectionName"],
        "public-https"
    );
}

#[test]
fn one_object_where_a_list_is_expected_is_its_one_item_only_when_the_item_takes_it() {
    let item = json!({"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"}, "kind": {"type": "string", "enum": ["Store", "ClusterStore"]}}});
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"storeRefs": {"type": "array", "items": item}}}}});
    // The singular field of a sibling resource, renamed to the list and wrapped.
    let o = json!({"spec": {"storeRef": {"name": "vault", "kind": "ClusterStore"}}});
    let out = run(&schema, &o);
    assert!(out.validation.is_valid(), "{:?}", out.validation);
    assert_eq!(
        out.object["spec"],
        json!({"storeRefs": [{"name": "vault", "kind": "ClusterStore"}]})
    );
    assert!(
        reasons(&out).contains(&"a single object where a list of them is expected".to_string()),
        "{:?}",
        reasons(&out)
    );
    // A map keyed by names is another shape: the item's schema refuses it as it is.
    let o = json!({"spec": {"storeRefs": {"vault": "ClusterStore"}}});
    let out = run(&schema, &o);
    assert!(!out.validation.is_valid());
    assert_eq!(out.object, o);
    assert!(
        out.refused
            .iter()
            .any(|r| r.contains("no item of the list")),
        "{:?}",
        out.refused
    );
}

#[test]
fn a_field_written_inside_its_neighbour_moves_to_the_one_place_that_declares_it() {
    let retry = json!({"type": "object", "properties": {"steps": {"type": "integer"}}});
    let trigger = json!({"type": "object", "properties": {
        "template": {"type": "object", "properties": {"url": {"type": "string"}}},
        "retryStrategy": retry}});
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"triggers": {"type": "array", "items": trigger}}}}});
    // Declared once, in the list's items: the item the field was written in takes it.
    let o = json!({"spec": {"triggers": [
        {"template": {"url": "a"}},
        {"template": {"url": "b", "retryStrategy": {"steps": 3}}}]}});
    let out = run(&schema, &o);
    assert!(out.validation.is_valid(), "{:?}", out.validation);
    assert_eq!(
        out.object["spec"]["triggers"][1],
        json!({"template": {"url": "b"}, "retryStrategy": {"steps": 3}})
    );
    assert_eq!(out.object["spec"]["triggers"][0], o["spec"]["triggers"][0]);
    assert_eq!(reasons(&out), ["moved to schema path"]);
    // Where that item already holds one, nothing is moved over it.
    let mut held = o.clone();
    held["spec"]["triggers"][1]["retryStrategy"] = json!({"steps": 1});
    let out = run(&schema, &held);
    assert!(!out.validation.is_valid());
    assert_eq!(out.object, held);
    // Declared at a second place too: which one is meant is not certain.
    let mut twice = schema.clone();
    twice["properties"]["spec"]["properties"]["retryStrategy"] = retry;
    let out = run(&twice, &o);
    assert!(!out.validation.is_valid());
    assert_eq!(out.object, o);
}
