use super::*;
use serde_json::json;

use crate::fixtures::{ce_v1, ce_v1alpha1, widget_v1};

const OPTS: ValidateOptions = ValidateOptions {
    report_unknown_fields: true,
};

fn valid_ce() -> Value {
    json!({
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": "argocd", "creationTimestamp": null, "labels": {"a": "b"}},
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "argocd-installer"},
            "source": {
                "sourceType": "Catalog",
                "catalog": {
                    "packageName": "argocd-operator",
                    "version": ">=0.6.0, <1.0.0",
                    "channels": ["stable", "fast.v1"],
                    "upgradeConstraintPolicy": "CatalogProvided",
                    "selector": {
                        "matchLabels": {"olm.operatorframework.io/metadata.name": "operatorhubio"},
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]
                    }
                }
            },
            "install": {"preflight": {"crdUpgradeSafety": {"enforcement": "Strict"}}}
        }
    })
}

fn valid_widget() -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {
            "size": 10,
            "minSize": 2,
            "ratio": 0.5,
            "step": 15,
            "color": "red",
            "name": "my-widget",
            "nickname": null,
            "port": "http",
            "createdAt": "2024-05-01T12:00:00Z",
            "homepage": "https://example.com",
            "contact": "ops@example.com",
            "address": "10.1.2.3",
            "id": "123e4567-e89b-12d3-a456-426614174000",
            "blob": "aGVsbG8=",
            "tags": ["a", "b"],
            "ports": [{"name": "web", "protocol": "TCP", "number": 80}, {"name": "web", "protocol": "UDP"}],
            "steps": [{"weight": 3}],
            "labels": {"team": "x"},
            "limits": {"cpu": 2, "memory": "1Gi"},
            "extra": {"anything": {"nested": [1, "two", null]}},
            "template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}},
            "mode": "fast"
        }
    })
}

fn run(schema: &Value, object: &Value) -> ValidationOutcome {
    validate(schema, object, None, OPTS)
}

fn only_error(outcome: &ValidationOutcome) -> &FieldError {
    assert_eq!(outcome.errors.len(), 1, "{:#?}", outcome.errors);
    &outcome.errors[0]
}

fn with(mut object: Value, pointer: &str, value: Value) -> Value {
    let (parent, last) = crate::pointer::split_last(pointer).expect("not root");
    let target = object.pointer_mut(parent).expect("parent exists");
    match target {
        Value::Object(map) => {
            map.insert(last, value);
        }
        Value::Array(items) => {
            let i: usize = last.parse().expect("index");
            items[i] = value;
        }
        _ => panic!("not a container"),
    }
    object
}

fn without(mut object: Value, pointer: &str) -> Value {
    let (parent, last) = crate::pointer::split_last(pointer).expect("not root");
    object
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("parent object")
        .remove(&last);
    object
}

#[test]
fn valid_cluster_extensions_are_accepted() {
    let outcome = run(&ce_v1(), &valid_ce());
    assert_eq!(outcome, ValidationOutcome::default());
    let minimal = json!({
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": "x"},
        "spec": {"namespace": "ns", "serviceAccount": {"name": "sa"},
                 "source": {"sourceType": "Catalog", "catalog": {"packageName": "pkg"}}}
    });
    assert_eq!(run(&ce_v1(), &minimal), ValidationOutcome::default());
    let alpha = json!({
        "apiVersion": "olm.operatorframework.io/v1alpha1", "kind": "ClusterExtension",
        "metadata": {"name": "x"},
        "spec": {"install": {"namespace": "ns", "serviceAccount": {"name": "sa"}},
                 "source": {"sourceType": "Catalog", "catalog": {"packageName": "pkg", "version": "1.2.x"}}}
    });
    assert_eq!(run(&ce_v1alpha1(), &alpha), ValidationOutcome::default());
}

#[test]
fn v1alpha1_shape_is_invalid_for_v1_and_v1alpha1_rule_applies() {
    let alpha_obj = json!({
        "spec": {"install": {"namespace": "ns", "serviceAccount": {"name": "sa"}},
                 "source": {"sourceType": "Catalog", "catalog": {"packageName": "pkg"}}}
    });
    let outcome = run(&ce_v1(), &alpha_obj);
    let pointers: Vec<&str> = outcome.errors.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        vec![
            "/spec/namespace",
            "/spec/serviceAccount",
            "/spec/install/namespace",
            "/spec/install/serviceAccount",
        ]
    );
    // The Required errors block the rules (the API server's hasBlockingErr).
    assert!(outcome.warnings.iter().any(|w| w.contains(NOT_CHECKED)));
    // Without them, unknown fields are pruned before CEL: install is empty for
    // `has(self.preflight)`.
    let mut only_unknown = alpha_obj.clone();
    only_unknown["spec"]["namespace"] = json!("ns");
    only_unknown["spec"]["serviceAccount"] = json!({"name": "sa"});
    let pruned = run(&ce_v1(), &only_unknown);
    let pointers: Vec<&str> = pruned.errors.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        vec![
            "/spec/install/namespace",
            "/spec/install/serviceAccount",
            "/spec/install"
        ]
    );
    assert_eq!(outcome.errors[0].kind, ErrorKind::Required);
    assert_eq!(outcome.errors[2].kind, ErrorKind::Unknown);

    let no_catalog = json!({"spec": {"install": {"namespace": "ns", "serviceAccount": {"name": "sa"}},
                                      "source": {"sourceType": "Catalog"}}});
    let e = only_error(&run(&ce_v1alpha1(), &no_catalog)).clone();
    assert_eq!(e.pointer, "/spec/source");
    assert_eq!(
        e.message,
        "Invalid value: \"object\": sourceType Catalog requires catalog field"
    );
}

#[test]
fn required_type_enum_and_length_errors() {
    let o = without(valid_ce(), "/spec/source/catalog/packageName");
    let e = only_error(&run(&ce_v1(), &o)).clone();
    assert_eq!(e.pointer, "/spec/source/catalog/packageName");
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::Required, "Required value")
    );

    let o = with(valid_ce(), "/spec/source/sourceType", json!("catalog"));
    let outcome = run(&ce_v1(), &o);
    // The enum error alone: it blocks the sourceType/catalog rule on spec.source, as in the
    // API server.
    let e = only_error(&outcome).clone();
    assert_eq!(e.pointer, "/spec/source/sourceType");
    assert_eq!(
        e.kind,
        ErrorKind::Enum {
            allowed: vec![json!("Catalog")]
        }
    );
    assert_eq!(
        e.message,
        "Unsupported value: \"catalog\": supported values: \"Catalog\""
    );

    let o = with(valid_ce(), "/spec/namespace", json!(42));
    let outcome = run(&ce_v1(), &o);
    let e = only_error(&outcome);
    assert_eq!(
        e.kind,
        ErrorKind::Type {
            expected: "string".into()
        }
    );
    assert_eq!(
        e.message,
        "Invalid value: \"integer\": spec.namespace in body must be of type string: \"integer\""
    );
    // CEL waits for the type errors to be fixed, as in the API server.
    assert_eq!(outcome.warnings, vec![format!("crfix: {NOT_CHECKED}")]);

    let long = "a".repeat(64);
    let o = with(valid_ce(), "/spec/namespace", json!(long));
    let outcome = run(&ce_v1(), &o);
    assert_eq!(outcome.errors[0].kind, ErrorKind::MaxLength { limit: 63 });
    assert_eq!(
        outcome.errors[0].message,
        "Too long: may not be more than 63 bytes"
    );
    // Lengths count characters, not bytes.
    let o = with(
        valid_ce(),
        "/spec/source/catalog/version",
        json!("é".repeat(40)),
    );
    let outcome = run(&ce_v1(), &o);
    assert!(outcome
        .errors
        .iter()
        .all(|e| !matches!(e.kind, ErrorKind::MaxLength { .. })));
}

#[test]
fn cel_dns_rules_and_sourcetype_rule() {
    let o = with(valid_ce(), "/spec/namespace", json!("Bad_NS"));
    let e = only_error(&run(&ce_v1(), &o)).clone();
    assert_eq!(e.pointer, "/spec/namespace");
    assert_eq!(
        e.message,
        "Invalid value: \"string\": namespace must be a valid DNS1123 label"
    );
    match &e.kind {
        ErrorKind::Cel {
            rule,
            reason,
            transition,
        } => {
            assert!(rule.contains("matches"));
            assert_eq!(reason, "FieldValueInvalid");
            assert!(!transition);
        }
        other => panic!("{other:?}"),
    }

    let o = with(
        valid_ce(),
        "/spec/source/catalog/channels/1",
        json!("Fast!"),
    );
    let e = only_error(&run(&ce_v1(), &o)).clone();
    assert_eq!(e.pointer, "/spec/source/catalog/channels/1");

    let o = with(valid_ce(), "/spec/source/catalog/version", json!("latest"));
    let e = only_error(&run(&ce_v1(), &o)).clone();
    assert_eq!(
        e.message,
        "Invalid value: \"string\": invalid version expression"
    );

    let o = without(valid_ce(), "/spec/source/catalog");
    let e = only_error(&run(&ce_v1(), &o)).clone();
    assert_eq!(e.pointer, "/spec/source");
    assert!(e
        .message
        .contains("catalog is required when sourceType is Catalog"));

    let o = with(valid_ce(), "/spec/install", json!({}));
    let e = only_error(&run(&ce_v1(), &o)).clone();
    assert_eq!(e.pointer, "/spec/install");
    assert!(e.message.contains("at least one of [preflight]"));
}

#[test]
fn immutability_rules_run_only_on_update_with_an_old_value() {
    let old = valid_ce();
    let new = with(valid_ce(), "/spec/namespace", json!("other"));
    assert!(
        run(&ce_v1(), &new).is_valid(),
        "transition rules skipped on CREATE"
    );
    let outcome = validate(&ce_v1(), &new, Some(&old), OPTS);
    let e = only_error(&outcome);
    assert_eq!(e.pointer, "/spec/namespace");
    assert_eq!(
        e.message,
        "Invalid value: \"string\": namespace is immutable"
    );
    assert!(matches!(
        e.kind,
        ErrorKind::Cel {
            transition: true,
            ..
        }
    ));

    // No old value at that node (added on UPDATE): the transition rule does not run.
    let old = without(valid_ce(), "/spec/source/catalog/version");
    let old = with(old, "/spec/source/catalog/packageName", json!("pkg"));
    let new = with(valid_ce(), "/spec/source/catalog/packageName", json!("pkg"));
    assert!(validate(&ce_v1(), &new, Some(&old), OPTS).is_valid());
    let new = with(
        valid_ce(),
        "/spec/source/catalog/packageName",
        json!("pkg2"),
    );
    let outcome = validate(&ce_v1(), &new, Some(&old), OPTS);
    assert_eq!(
        only_error(&outcome).pointer,
        "/spec/source/catalog/packageName"
    );
}

#[test]
fn widget_valid_object_is_accepted_with_only_the_unsupported_rule_warned() {
    let outcome = run(&widget_v1(), &valid_widget());
    assert!(outcome.is_valid(), "{:#?}", outcome.errors);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    // Kubernetes' quantity library is evaluated: 2Gi breaks the rule.
    let o = with(valid_widget(), "/spec/memory", json!("2Gi"));
    let outcome = run(&widget_v1(), &o);
    assert_eq!(only_error(&outcome).pointer, "/spec/memory");
    // A quantity beyond crfix's 38 significant digits is its limitation: never rejected.
    let o = with(
        valid_widget(),
        "/spec/memory",
        json!("1234567890123456789012345678901234567891"),
    );
    let outcome = run(&widget_v1(), &o);
    assert!(
        outcome.is_valid(),
        "our limitation never rejects: {:?}",
        outcome.errors
    );
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    assert!(outcome.warnings[0].starts_with("crfix: CEL rule at spec.memory not evaluated"));
}

#[test]
fn numeric_bounds_and_multiples() {
    let cases = [
        (
            "/spec/size",
            json!(0),
            ErrorKind::Minimum {
                limit: 1.0,
                exclusive: false,
            },
            "Invalid value: 0: spec.size in body should be greater than or equal to 1",
        ),
        (
            "/spec/size",
            json!(101),
            ErrorKind::Maximum {
                limit: 100.0,
                exclusive: false,
            },
            "Invalid value: 101: spec.size in body should be less than or equal to 100",
        ),
        (
            "/spec/ratio",
            json!(0),
            ErrorKind::Minimum {
                limit: 0.0,
                exclusive: true,
            },
            "Invalid value: 0: spec.ratio in body should be greater than 0",
        ),
        (
            "/spec/ratio",
            json!(1.0),
            ErrorKind::Maximum {
                limit: 1.0,
                exclusive: true,
            },
            "Invalid value: 1.0: spec.ratio in body should be less than 1",
        ),
        (
            "/spec/step",
            json!(7),
            ErrorKind::MultipleOf { factor: 5.0 },
            "Invalid value: 7: spec.step in body should be a multiple of 5",
        ),
    ];
    for (ptr, value, kind, message) in cases {
        let o = with(valid_widget(), ptr, value);
        let outcome = run(&widget_v1(), &o);
        let e = outcome
            .errors
            .iter()
            .find(|e| e.pointer == ptr && !matches!(e.kind, ErrorKind::Cel { .. }))
            .unwrap_or_else(|| panic!("{ptr}: {:#?}", outcome.errors));
        assert_eq!(e.kind, kind, "{ptr}");
        assert_eq!(e.message, message, "{ptr}");
    }
    // 1.0 is an integer for `type: integer`; 1.5 is not.
    assert!(run(
        &widget_v1(),
        &with(valid_widget(), "/spec/size", json!(12.0))
    )
    .is_valid());
    let outcome = run(
        &widget_v1(),
        &with(valid_widget(), "/spec/size", json!(1.5)),
    );
    assert_eq!(
        only_error(&outcome).kind,
        ErrorKind::Type {
            expected: "integer".into()
        }
    );
    // An integer is a number.
    assert!(run(
        &widget_v1(),
        &with(valid_widget(), "/spec/ratio", json!(0.25))
    )
    .is_valid());
}

#[test]
fn strings_patterns_formats() {
    let o = with(valid_widget(), "/spec/name", json!("A"));
    let outcome = run(&widget_v1(), &o);
    let kinds: Vec<&ErrorKind> = outcome.errors.iter().map(|e| &e.kind).collect();
    assert_eq!(
        kinds,
        vec![
            &ErrorKind::MinLength { limit: 2 },
            &ErrorKind::Pattern {
                pattern: "^[a-z][a-z0-9-]*$".into()
            }
        ]
    );
    assert_eq!(
        outcome.errors[1].message,
        "Invalid value: \"A\": spec.name in body should match '^[a-z][a-z0-9-]*$'"
    );
    for (ptr, bad, format) in [
        ("/spec/createdAt", "yesterday", "date-time"),
        ("/spec/homepage", "example dot com", "uri"),
        ("/spec/contact", "nobody", "email"),
        ("/spec/address", "300.1.1.1", "ipv4"),
        ("/spec/id", "not-a-uuid", "uuid"),
        ("/spec/blob", "%%%", "byte"),
    ] {
        let outcome = run(&widget_v1(), &with(valid_widget(), ptr, json!(bad)));
        let e = only_error(&outcome);
        assert_eq!(e.pointer, ptr);
        assert_eq!(
            e.kind,
            ErrorKind::Format {
                format: format.into()
            }
        );
    }
}

#[test]
fn nullable_and_null() {
    assert!(run(
        &widget_v1(),
        &with(valid_widget(), "/spec/nickname", json!(null))
    )
    .is_valid());
    let outcome = run(
        &widget_v1(),
        &with(valid_widget(), "/spec/color", json!(null)),
    );
    let e = only_error(&outcome);
    assert_eq!(
        (e.pointer.as_str(), &e.kind),
        ("/spec/color", &ErrorKind::Null)
    );
    assert_eq!(
        e.message,
        "Invalid value: \"null\": spec.color in body must be of type string: \"null\""
    );
}

#[test]
fn int_or_string() {
    for ok in [json!(8080), json!("http")] {
        assert!(run(&widget_v1(), &with(valid_widget(), "/spec/port", ok)).is_valid());
    }
    for bad in [json!(1.5), json!(true), json!({"a": 1})] {
        let outcome = run(&widget_v1(), &with(valid_widget(), "/spec/port", bad));
        assert_eq!(
            only_error(&outcome).kind,
            ErrorKind::Type {
                expected: "int-or-string".into()
            }
        );
    }
    let outcome = run(
        &widget_v1(),
        &with(valid_widget(), "/spec/limits/cpu", json!([1])),
    );
    assert_eq!(only_error(&outcome).pointer, "/spec/limits/cpu");
}

#[test]
fn lists_sets_and_maps() {
    let outcome = run(
        &widget_v1(),
        &with(valid_widget(), "/spec/tags", json!(["a", "b", "a"])),
    );
    let e = only_error(&outcome);
    assert_eq!(
        (e.pointer.as_str(), &e.kind),
        ("/spec/tags/2", &ErrorKind::Duplicate)
    );
    assert_eq!(e.message, "Duplicate value: \"a\"");

    let outcome = run(&widget_v1(), &with(valid_widget(), "/spec/tags", json!([])));
    assert_eq!(only_error(&outcome).kind, ErrorKind::MinItems { limit: 1 });
    let outcome = run(
        &widget_v1(),
        &with(
            valid_widget(),
            "/spec/tags",
            json!(["a", "b", "c", "d", "e", "f"]),
        ),
    );
    let e = only_error(&outcome);
    assert_eq!(e.kind, ErrorKind::MaxItems { limit: 5 });
    assert_eq!(e.message, "Too many: 6: must have at most 5 items");

    // Map-list keys are (name, protocol); protocol's default counts for a missing key.
    let ports = json!([{"name": "web", "protocol": "TCP"}, {"name": "web"}]);
    let outcome = run(&widget_v1(), &with(valid_widget(), "/spec/ports", ports));
    let dup = outcome
        .errors
        .iter()
        .find(|e| e.kind == ErrorKind::Duplicate)
        .expect("duplicate");
    assert_eq!(dup.pointer, "/spec/ports/1");
    assert_eq!(
        dup.message,
        r#"Duplicate value: {"name":"web","protocol":"TCP"}"#
    );
    // The missing (defaulted) protocol is still a Required error before the duplicate.
    assert_eq!(outcome.errors[0].kind, ErrorKind::Required);
    assert_eq!(outcome.errors[0].pointer, "/spec/ports/1/protocol");
}

#[test]
fn maps_and_properties_limits() {
    let outcome = run(
        &widget_v1(),
        &with(valid_widget(), "/spec/labels", json!({})),
    );
    assert_eq!(
        only_error(&outcome).kind,
        ErrorKind::MinProperties { limit: 1 }
    );
    let labels = json!({"a": "1", "b": "2", "c": "3", "d": "4"});
    let outcome = run(&widget_v1(), &with(valid_widget(), "/spec/labels", labels));
    assert_eq!(
        only_error(&outcome).kind,
        ErrorKind::MaxProperties { limit: 3 }
    );
    let outcome = run(
        &widget_v1(),
        &with(valid_widget(), "/spec/labels/team", json!("way-too-long")),
    );
    assert_eq!(only_error(&outcome).pointer, "/spec/labels/team");
}

#[test]
fn unknown_fields_and_preserve_unknown() {
    let o = with(valid_widget(), "/spec/colour", json!("red"));
    let e = only_error(&run(&widget_v1(), &o)).clone();
    assert_eq!(
        (e.pointer.as_str(), &e.kind),
        ("/spec/colour", &ErrorKind::Unknown)
    );
    let quiet = ValidateOptions {
        report_unknown_fields: false,
    };
    assert!(validate(&widget_v1(), &o, None, quiet).is_valid());
    // Nothing is unknown under x-kubernetes-preserve-unknown-fields, nor in metadata.
    let o = with(
        valid_widget(),
        "/spec/extra/whatever",
        json!({"deep": {"x": [1, 2]}}),
    );
    let o = with(o, "/metadata/weird", json!(1));
    assert!(run(&widget_v1(), &o).is_valid());
    // metadata.name restrictions in the schema are checked.
    let o = with(valid_widget(), "/metadata/name", json!("n".repeat(21)));
    assert_eq!(only_error(&run(&widget_v1(), &o)).pointer, "/metadata/name");
}

#[test]
fn embedded_resources() {
    let o = with(
        valid_widget(),
        "/spec/template",
        json!({"metadata": {"name": "x"}, "data": {}}),
    );
    let outcome = run(&widget_v1(), &o);
    let pointers: Vec<(&str, &ErrorKind)> = outcome
        .errors
        .iter()
        .map(|e| (e.pointer.as_str(), &e.kind))
        .collect();
    assert_eq!(
        pointers,
        vec![
            ("/spec/template/apiVersion", &ErrorKind::EmbeddedResource),
            ("/spec/template/kind", &ErrorKind::EmbeddedResource)
        ]
    );
}

#[test]
fn cel_message_expression_reason_and_field_path() {
    let o = with(valid_widget(), "/spec/minSize", json!(20));
    let e = only_error(&run(&widget_v1(), &o)).clone();
    assert_eq!(e.pointer, "/spec/size");
    assert_eq!(
        e.message,
        "Invalid value: \"object\": size (10) must be at least minSize (20)"
    );
    let o = with(valid_widget(), "/spec/mode", json!("Fast"));
    let e = only_error(&run(&widget_v1(), &o)).clone();
    assert_eq!(e.message, "Forbidden: mode must be lower case, not Fast");
    assert!(matches!(&e.kind, ErrorKind::Cel { reason, .. } if reason == "FieldValueForbidden"));
    // A rule without a message.
    let s = json!({"type": "object", "properties": {"a": {"type": "integer",
        "x-kubernetes-validations": [{"rule": "self > 1"}]}}});
    let e = only_error(&run(&s, &json!({"a": 1}))).clone();
    assert_eq!(
        e.message,
        "Invalid value: \"integer\": failed rule: self > 1"
    );
    // A run-time error (no such key) is an error, as in the API server.
    let s = json!({"type": "object", "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.a > 1"}]});
    let e = only_error(&run(&s, &json!({}))).clone();
    assert!(
        e.message.contains("evaluating rule: self.a > 1"),
        "{}",
        e.message
    );
}

#[test]
fn transitions_correlate_through_map_lists_only() {
    // Map list: the old item with the same key is oldSelf.
    let old = valid_widget();
    let new = with(valid_widget(), "/spec/ports/0/number", json!(81));
    let outcome = validate(&widget_v1(), &new, Some(&old), OPTS);
    assert_eq!(only_error(&outcome).pointer, "/spec/ports/0/number");
    // Reordering keeps the correlation by key.
    let reordered = with(
        valid_widget(),
        "/spec/ports",
        json!([{"name": "web", "protocol": "UDP"}, {"name": "web", "protocol": "TCP", "number": 80}]),
    );
    assert!(validate(&widget_v1(), &reordered, Some(&old), OPTS).is_valid());
    // Atomic list: no correlation, so the transition rule does not run.
    let new = with(valid_widget(), "/spec/steps/0/weight", json!(1));
    assert!(validate(&widget_v1(), &new, Some(&old), OPTS).is_valid());
    // Transition rule on a scalar: size may not decrease.
    let new = with(valid_widget(), "/spec/size", json!(5));
    let outcome = validate(&widget_v1(), &new, Some(&old), OPTS);
    assert_eq!(
        only_error(&outcome).message,
        "Invalid value: \"integer\": size may not decrease"
    );
}

#[test]
fn optional_old_self_runs_on_create() {
    let s = json!({"type": "object", "properties": {"a": {"type": "string",
        "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self == oldSelf.value()",
                                      "optionalOldSelf": true, "message": "frozen"}]}}});
    assert!(run(&s, &json!({"a": "x"})).is_valid());
    let outcome = validate(&s, &json!({"a": "y"}), Some(&json!({"a": "x"})), OPTS);
    assert_eq!(
        only_error(&outcome).message,
        "Invalid value: \"string\": frozen"
    );
}

#[test]
fn errors_are_ordered_by_importance() {
    let mut o = valid_ce();
    o["spec"]["namespace"] = json!("BAD");
    o["spec"]["source"]["sourceType"] = json!("catalog");
    o["spec"]["extra"] = json!(1);
    o["spec"]["serviceAccount"] = json!({});
    let outcome = run(&ce_v1(), &o);
    let kinds: Vec<&str> = outcome.errors.iter().map(|e| e.rule_name()).collect();
    // Required and enum block the rules.
    assert_eq!(kinds, vec!["unknown field", "required", "enum"]);
    // Without them the rules run: their errors come last, in walk order (spec.namespace
    // before spec.source).
    let mut o = valid_ce();
    o["spec"]["namespace"] = json!("BAD");
    o["spec"]["extra"] = json!(1);
    o["spec"]["source"]
        .as_object_mut()
        .expect("source")
        .remove("catalog");
    let outcome = run(&ce_v1(), &o);
    let kinds: Vec<&str> = outcome.errors.iter().map(|e| e.rule_name()).collect();
    assert_eq!(
        kinds,
        vec![
            "unknown field",
            "x-kubernetes-validations",
            "x-kubernetes-validations"
        ]
    );
    assert_eq!(outcome.errors[1].pointer, "/spec/namespace");
    assert_eq!(outcome.errors[2].pointer, "/spec/source");
}

#[test]
fn huge_and_deep_inputs_are_bounded() {
    // Deep junk under preserve-unknown-fields is not walked; deep junk elsewhere stops at the
    // first unknown field.
    let mut deep = json!("leaf");
    for _ in 0..120 {
        deep = json!({"x": deep});
    }
    let o = with(valid_widget(), "/spec/extra/deep", deep.clone());
    assert!(run(&widget_v1(), &o).is_valid());
    let o = with(valid_widget(), "/spec/junk", deep);
    assert_eq!(run(&widget_v1(), &o).errors.len(), 1);
    // A recursive-looking schema deeper than MAX_DEPTH stops with a warning.
    let mut s = json!({"type": "string"});
    let mut v = json!("x");
    for _ in 0..(MAX_DEPTH + 10) {
        s = json!({"type": "object", "properties": {"x": s}});
        v = json!({"x": v});
    }
    let outcome = run(&s, &v);
    assert!(outcome.is_valid());
    assert!(outcome
        .warnings
        .iter()
        .any(|w| w.contains("nested more than")));
    // Many errors are capped (within maxItems: 256).
    let channels: Vec<Value> = (0..250).map(|i| json!(format!("BAD_{i}"))).collect();
    let o = with(valid_ce(), "/spec/source/catalog/channels", json!(channels));
    let started = std::time::Instant::now();
    let outcome = run(&ce_v1(), &o);
    assert_eq!(outcome.errors.len(), MAX_ERRORS);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Thousands of unknown keys are capped too.
    let junk: serde_json::Map<String, Value> =
        (0..10_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let o = with(valid_ce(), "/spec/junk", Value::Object(junk));
    assert_eq!(run(&ce_v1(), &o).errors.len(), 1);
    let o = with(valid_widget(), "/spec/labels", json!({}));
    let many: serde_json::Map<String, Value> =
        (0..10_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let o = with(o, "/spec", Value::Object(many));
    assert_eq!(run(&widget_v1(), &o).errors.len(), MAX_ERRORS);
}

#[test]
fn root_must_be_an_object_and_metadata_too() {
    let outcome = run(&ce_v1(), &json!([1]));
    assert_eq!(
        only_error(&outcome).kind,
        ErrorKind::Type {
            expected: "object".into()
        }
    );
    let outcome = run(&ce_v1(), &with(valid_ce(), "/metadata", json!("x")));
    assert_eq!(only_error(&outcome).pointer, "/metadata");
}

#[test]
fn field_paths_convert_to_pointers() {
    assert_eq!(field_path_to_pointer(".size").as_deref(), Some("/size"));
    assert_eq!(
        field_path_to_pointer(".a['b.c'].d").as_deref(),
        Some("/a/b.c/d")
    );
    assert_eq!(
        field_path_to_pointer(".list[2]").as_deref(),
        Some("/list/2")
    );
    assert_eq!(field_path_to_pointer("size"), None);
    assert_eq!(field_path_to_pointer(".a[x]"), None);
}

#[test]
fn numbers_compare_by_value() {
    assert!(values_equal(&json!(1), &json!(1.0)));
    assert!(values_equal(&json!({"a": [1]}), &json!({"a": [1.0]})));
    assert!(!values_equal(&json!(1), &json!("1")));
}

/// A list of `n` integers under a schema with `rule` (and `maxItems` if given).
fn hostile_list(n: i64, max_items: Option<u64>, rule: &str) -> (Value, Value) {
    let mut list = json!({"type": "array", "items": {"type": "integer"},
        "x-kubernetes-validations": [{"rule": rule}]});
    if let Some(m) = max_items {
        list["maxItems"] = json!(m);
    }
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"list": list}}}});
    let items: Vec<i64> = (0..n).collect();
    (schema, json!({"spec": {"list": items}}))
}

const QUADRATIC: &str = "self.all(x, self.exists(y, y > x) || x == self.max())";

#[test]
fn blocking_errors_skip_every_rule_as_the_api_server_does() {
    // maxItems (TooMany) blocks the rules: the 10,000 x 10,000 comprehension never runs.
    let (s, o) = hostile_list(10_000, Some(100), QUADRATIC);
    let started = std::time::Instant::now();
    let outcome = run(&s, &o);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    let e = only_error(&outcome);
    assert_eq!(e.kind, ErrorKind::MaxItems { limit: 100 });
    assert_eq!(e.message, "Too many: 10000: must have at most 100 items");
    assert!(outcome.warnings.contains(&format!("crfix: {NOT_CHECKED}")));
    // The same rule on a small list runs and passes.
    let (s, o) = hostile_list(50, Some(100), QUADRATIC);
    let outcome = run(&s, &o);
    assert!(
        outcome.is_valid() && outcome.warnings.is_empty(),
        "{outcome:?}"
    );

    // Enum, Required, TooLong, type and format errors block; minLength, pattern and bounds
    // errors do not (the rule on the root then runs and fails).
    let rule = json!([{"rule": "self.a == 'x'", "message": "a must be x"}]);
    let props = json!({
        "a": {"type": "string"}, "e": {"type": "string", "enum": ["E"]},
        "l": {"type": "string", "maxLength": 2}, "m": {"type": "string", "minLength": 2},
        "p": {"type": "string", "pattern": "^[a-z]+$"}, "f": {"type": "string", "format": "ipv4"},
        "n": {"type": "integer", "maximum": 3}, "r": {"type": "string"}});
    let s = json!({"type": "object", "properties": props, "required": ["a"],
        "x-kubernetes-validations": rule});
    let blocking = [
        json!({"a": "y", "e": "F"}),
        json!({"a": "y", "l": "abc"}),
        json!({"a": "y", "f": "1.2.3.4:80"}),
        json!({"a": "y", "n": "1"}),
        json!({}),
    ];
    for o in blocking {
        let outcome = run(&s, &o);
        assert!(
            outcome
                .errors
                .iter()
                .all(|e| e.rule_name() != "x-kubernetes-validations"),
            "{o}"
        );
        assert!(
            outcome.warnings.iter().any(|w| w.contains(NOT_CHECKED)),
            "{o}"
        );
    }
    let not_blocking = [
        json!({"a": "y", "m": "a"}),
        json!({"a": "y", "p": "A"}),
        json!({"a": "y", "n": 4}),
    ];
    for o in not_blocking {
        let outcome = run(&s, &o);
        assert_eq!(outcome.errors.len(), 2, "{o}: {outcome:?}");
        assert_eq!(
            outcome.errors[1].message,
            "Invalid value: \"object\": a must be x"
        );
        assert!(outcome.warnings.is_empty(), "{o}");
    }
    // A schema without rules gets no warning.
    let plain = json!({"type": "object", "properties": {"e": {"type": "string", "enum": ["E"]}}});
    assert!(run(&plain, &json!({"e": "F"})).warnings.is_empty());
}

#[test]
fn a_rule_over_the_per_call_cost_limit_is_refused_in_the_api_servers_words() {
    // Within the CRD's estimate (500 items), but 500 equal items make every `exists` iterate
    // the whole list: over the per-call limit at run time.
    let (s, _) = hostile_list(0, Some(500), QUADRATIC);
    let o = json!({"spec": {"list": vec![7; 500]}});
    let started = std::time::Instant::now();
    let outcome = run(&s, &o);
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    let e = only_error(&outcome);
    assert_eq!(e.pointer, "/spec/list");
    assert_eq!(
        e.message,
        format!(
            "Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no \
             further validation rules will be run due to call cost exceeds limit for rule: \
             {QUADRATIC}"
        )
    );
    // The rule's message names it when it has one; and no rule runs after it.
    let mut s = s;
    s["properties"]["spec"]["properties"]["list"]["x-kubernetes-validations"] = json!([
        {"rule": QUADRATIC, "message": "sorted enough"},
        {"rule": "self.size() == 0", "message": "never evaluated"}]);
    let outcome = run(&s, &o);
    assert!(only_error(&outcome)
        .message
        .ends_with("call cost exceeds limit for rule: sorted enough"));
    // A regex over a long string costs its length times the pattern's.
    let s = json!({"type": "object", "properties": {"name": {"type": "string",
        "x-kubernetes-validations": [{"rule": "self.findAll('[a-z]+[0-9]+[a-z]*').size() < 5"}]}}});
    let started = std::time::Instant::now();
    let outcome = run(&s, &json!({"name": "a1".repeat(1_500_000)}));
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert!(only_error(&outcome)
        .message
        .contains("call cost exceeds limit"));
    assert!(run(&s, &json!({"name": "a1b2"})).is_valid());
}

#[test]
fn the_object_budget_stops_the_rules_in_the_api_servers_words() {
    // Each item's rule costs about 801,000: twelve fit in the 10,000,000 budget, the
    // thirteenth does not. (Two lists of at most 12: the CRD's estimate of each rule, times
    // 12, is within the API server's limit.)
    let pattern = "^(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p)*$";
    let list = json!({"type": "array", "maxItems": 12,
        "items": {"type": "string", "maxLength": 890_000,
            "x-kubernetes-validations": [{"rule": format!("self.matches('{pattern}')")}]}});
    let s = json!({"type": "object", "properties": {"a": list, "b": list}});
    let item = "a".repeat(890_000);
    let o = json!({"a": vec![item.clone(); 12], "b": [item.clone()]});
    // The API server estimates each string at 4 bytes a character (3.8 times its per-rule
    // limit), so it would refuse this CRD now; one installed before the limits is evaluated
    // as it is, and the runtime budget is what stops the rules.
    let outcome = run(&s, &o);
    // crfix's own, smaller, budget: the rules past it are not evaluated (not an error).
    assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
    assert!(outcome.warnings[0].starts_with("crfix: CEL rules from a[2] on not evaluated"));
    let e = only_error(&outcome);
    assert_eq!(e.pointer, "/b/0");
    assert_eq!(
        e.message,
        "Invalid value: \"string\": validation failed due to running out of cost budget, no \
         further validation rules will be run"
    );
    let o = json!({"a": vec![item.clone(); 12], "b": []});
    assert!(run(&s, &o).is_valid());
    // Within crfix's budget every rule is evaluated.
    let o = json!({"a": [item.clone(), item], "b": ["z"]});
    let outcome = run(&s, &o);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert_eq!(only_error(&outcome).pointer, "/b/0");
}

#[test]
fn a_string_over_max_length_is_not_matched_against_its_pattern() {
    let s = json!({"type": "object", "properties": {"v": {"type": "string", "maxLength": 253,
        "pattern": "^(a|b)+c$", "format": "ipv4"}}});
    let started = std::time::Instant::now();
    let outcome = run(&s, &json!({"v": "ab".repeat(1_500_000)}));
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    assert_eq!(
        only_error(&outcome).kind,
        ErrorKind::MaxLength { limit: 253 }
    );
    // Within maxLength both are checked.
    assert_eq!(run(&s, &json!({"v": "abab"})).errors.len(), 2);
    // Without a maxLength, a pattern too costly to match is not checked (crfix's limit).
    let s = json!({"type": "object", "properties": {"v": {"type": "string",
        "pattern": "^(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p)+$"}}});
    let outcome = run(&s, &json!({"v": "a".repeat(3_000_000)}));
    assert!(outcome.is_valid());
    assert!(outcome.warnings[0].contains("pattern at v not checked"));
}

#[test]
fn one_of_any_of_all_of_and_not_as_the_api_servers_validator() {
    let s = json!({"type": "object", "properties": {
        "address": {"type": "string", "oneOf": [{"format": "ipv4"}, {"format": "ipv6"}]},
        "replicas": {"type": "integer", "anyOf": [{"minimum": 10}, {"maximum": 1}]},
        "mode": {"type": "string", "not": {"enum": ["legacy"]}},
        "both": {"type": "string", "oneOf": [{"minLength": 1}, {"maxLength": 5}]},
        "all": {"type": "string", "allOf": [{"minLength": 2}, {"pattern": "^a"}]},
        "port": {"x-kubernetes-int-or-string": true,
                 "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "shape": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                  "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}});
    let valid = json!({"address": "1.2.3.4", "replicas": 12, "mode": "new", "both": "abcdefg",
        "all": "ab", "port": 80, "shape": {"a": "x", "c": 1}});
    let outcome = validate(
        &s,
        &valid,
        None,
        ValidateOptions {
            report_unknown_fields: false,
        },
    );
    assert!(
        outcome.is_valid() && outcome.warnings.is_empty(),
        "{outcome:?}"
    );
    for ok in [
        json!({"address": "::1"}),
        json!({"replicas": 0}),
        json!({"port": "http"}),
    ] {
        assert!(run(&s, &ok).is_valid(), "{ok}");
    }
    let lines = |o: Value| crate::types::error_lines(&run(&s, &o).errors);
    // Gateway API's addresses: a port is neither an IPv4 nor an IPv6 address.
    assert_eq!(
        lines(json!({"address": "1.2.3.4:8080"})),
        vec![
            "<nil>: Invalid value: \"\": \"address\" must validate one and only one schema (oneOf). Found none valid",
            "address: Invalid value: \"1.2.3.4:8080\": address in body must be of type ipv4: \"1.2.3.4:8080\"",
        ]
    );
    assert_eq!(
        lines(json!({"both": "abc"})),
        vec!["<nil>: Invalid value: \"\": \"both\" must validate one and only one schema (oneOf). Found 2 valid alternatives"]
    );
    assert_eq!(
        lines(json!({"replicas": 5})),
        vec![
            "<nil>: Invalid value: \"\": \"replicas\" must validate at least one schema (anyOf)",
            "replicas: Invalid value: 5: replicas in body should be greater than or equal to 10",
        ]
    );
    assert_eq!(
        lines(json!({"mode": "legacy"})),
        vec!["<nil>: Invalid value: \"\": \"mode\" must not validate the schema (not)"]
    );
    assert_eq!(
        lines(json!({"all": "b"})),
        vec![
            "all: Invalid value: \"b\": all in body should be at least 2 chars long",
            "all: Invalid value: \"b\": all in body should match '^a'",
            "<nil>: Invalid value: \"\": \"all\" must validate all the schemas (allOf). None validated",
        ]
    );
    assert_eq!(
        lines(json!({"shape": {"a": "x", "b": "y"}})),
        vec!["<nil>: Invalid value: \"\": \"shape\" must validate one and only one schema (oneOf). Found 2 valid alternatives"]
    );
    // int-or-string: the type alternatives never fail for an int or a string.
    assert_eq!(
        run(&s, &json!({"port": 1.5})).errors[0].kind,
        ErrorKind::Type {
            expected: "int-or-string".into()
        }
    );
}

#[test]
fn runtime_errors_in_cel_gos_words_naming_the_rules_message() {
    let s = |rule: &str, message: Option<&str>| {
        let mut r = json!({"rule": rule});
        if let Some(m) = message {
            r["message"] = json!(m);
        }
        json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"}, "u": {"type": "integer"},
            "l": {"type": "array", "items": {"type": "integer"}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}}},
            "x-kubernetes-validations": [r]})
    };
    let cases = [
        ("self.a > 1", Some("a must be big"), json!({}), "no such key: a evaluating rule: a must be big"),
        ("self.a > 1", None, json!({}), "no such key: a evaluating rule: self.a > 1"),
        // cel-go evaluates the left operand first and names it.
        ("self.a == self.b", None, json!({}), "no such key: a evaluating rule: self.a == self.b"),
        ("self.a == self.b", None, json!({"a": 1}), "no such key: b evaluating rule: self.a == self.b"),
        ("self.m['x'] == 'y'", None, json!({"m": {}}), "no such key: x evaluating rule: self.m['x'] == 'y'"),
        ("self.a / self.b > 0", None, json!({"a": 1, "b": 0}), "division by zero evaluating rule: self.a / self.b > 0"),
        ("self.a % self.b > 0", None, json!({"a": 1, "b": 0}), "modulus by zero evaluating rule: self.a % self.b > 0"),
        ("self.a * self.b > 0", None, json!({"a": i64::MAX, "b": 2}), "integer overflow evaluating rule: self.a * self.b > 0"),
        ("self.l[3] > 0", None, json!({"l": [1]}), "index '3' out of range in list size '1' evaluating rule: self.l[3] > 0"),
        ("self.a > 0 ? self.l[0] > 0 : self.b > 0", None, json!({"a": 1, "l": []}),
         "index '0' out of range in list size '0' evaluating rule: self.a > 0 ? self.l[0] > 0 : self.b > 0"),
    ];
    for (rule, message, object, expected) in cases {
        let outcome = run(&s(rule, message), &object);
        let e = only_error(&outcome);
        assert_eq!(
            e.message,
            format!("Invalid value: \"object\": {expected}"),
            "{rule}"
        );
    }
}

#[test]
fn rules_the_api_server_refuses_for_their_estimated_cost_are_named() {
    // Quadratic in a list without maxItems: far over StaticEstimatedCostLimit.
    let failing = "self.all(x, self.exists(y, y > x))";
    let (s, o) = hostile_list(3, None, failing);
    assert_eq!(
        refusals(&s),
        vec![(
            "spec.list".to_string(),
            "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try \
             simplifying the rule, or adding maxItems, maxProperties, and maxLength where \
             arrays, maps, and strings are declared)"
                .to_string()
        )]
    );
    // Validation evaluates every rule, bounded by the runtime limits: an inline CRD with
    // such a rule is refused when the settings are validated (`crd::check_inline_crd`).
    assert_eq!(only_error(&run(&s, &o)).pointer, "/spec/list");
    // With maxItems the estimate is within the limit.
    let (s, _) = hostile_list(3, Some(100), failing);
    assert!(refusals(&s).is_empty());

    // A matches rule: a tenth of the string's bytes (the API server counts 4 per character
    // of maxLength) times a quarter of the pattern's length.
    let pattern = "^(a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r)+$";
    assert_eq!(pattern.len(), 40);
    let matches = |max_length: u64| {
        json!({"type": "string", "maxLength": max_length,
               "x-kubernetes-validations": [{"rule": format!("self.matches('{pattern}')")}]})
    };
    let s = json!({"type": "object", "properties": {"a": matches(2_999_999)}});
    assert!(refusals(&s)[0]
        .1
        .starts_with("Forbidden: estimated rule cost exceeds budget by factor of 1.200000x"));
    let s = json!({"type": "object", "properties": {"a": matches(2_374_998)}});
    assert!(refusals(&s).is_empty());
    // Eleven rules of 9,500,002 each: each within the limit, their total over the CRD's. The
    // API server names the four most expensive.
    let props: serde_json::Map<String, Value> = (0..11)
        .map(|i| (format!("p{i:02}"), matches(2_374_998)))
        .collect();
    let s = json!({"type": "object", "properties": props});
    let refused = refusals(&s);
    assert_eq!(refused.len(), 4);
    assert!(
        refused.iter().all(|(_, w)| w.contains(
            "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire \
         OpenAPIv3 schema; openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule \
         cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.045000x"
        )),
        "{refused:?}"
    );
    // The ClusterExtension CRD's rules are all within the limits.
    assert!(refusals(&ce_v1()).is_empty());
}

#[test]
fn presence_tests_cost_nothing_beyond_their_operand_as_in_the_api_server() {
    // Kubernetes sets cel-go's PresenceTestHasCost(false) for the estimate and the runtime
    // count alike: `has(self.a)` costs what `self` costs. Rules made of presence tests on the
    // items of a list without maxItems (as external-secrets' PushSecret has on `dataTo` and
    // its `rewrite` items) are within the limit; charged 1 per `has()` they were 4.8 % over
    // it, and crfix refused a CRD every API server accepts.
    let schema = |rule: &str| {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "rules": {"type": "array", "items": {"type": "object",
                "properties": {"regexp": {"type": "object", "properties": {
                                   "source": {"type": "string", "maxLength": 64}}},
                               "transform": {"type": "object", "properties": {
                                   "template": {"type": "string", "maxLength": 64}}}},
                "x-kubernetes-validations": [{"rule": rule, "message": "exactly one"}]}}}}}})
    };
    let one_of = "(has(self.regexp) && !has(self.transform)) || \
                  (!has(self.regexp) && has(self.transform))";
    assert!(
        refusals(&schema(one_of)).is_empty(),
        "{:?}",
        refusals(&schema(one_of))
    );
    // Not every rule passes: the same items compared by value cost more than the limit.
    let compared = "(self.regexp.source == 'a' && !has(self.transform)) || \
                    (!has(self.regexp) && self.transform.template == 'b')";
    assert_eq!(refusals(&schema(compared)).len(), 1);
    // And the rule is evaluated: an item with both is refused, one with either passes.
    let object = |item: Value| json!({"spec": {"rules": [item]}});
    let both = json!({"regexp": {"source": "x"}, "transform": {"template": "y"}});
    assert_eq!(
        only_error(&run(&schema(one_of), &object(both))).message,
        "Invalid value: \"object\": exactly one"
    );
    assert!(run(&schema(one_of), &object(json!({"regexp": {"source": "x"}}))).is_valid());
}

#[test]
fn a_rule_that_uses_a_reserved_word_as_a_name_is_refused_as_by_the_api_server() {
    // `namespace` is reserved in CEL: the API server does not compile `self.namespace` (the
    // property is `self.__namespace__`), so it refuses the CRD; crfix used to evaluate the rule
    // and let every object pass it.
    let schema = |rule: &str| {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "caProvider": {"type": "object", "properties": {"namespace": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": rule, "message": "no namespace here"}]}}}}})
    };
    let refused = refusals(&schema("!has(self.namespace)"));
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, "spec.caProvider");
    assert!(
        refused[0].1.contains("reserved identifier: namespace"),
        "{refused:?}"
    );
    assert!(refusals(&schema("!has(self.__namespace__)")).is_empty());
    // The escaped rule is evaluated: an object with the field fails it.
    let object = json!({"spec": {"caProvider": {"namespace": "x"}}});
    let outcome = run(&schema("!has(self.__namespace__)"), &object);
    assert_eq!(
        only_error(&outcome).message,
        "Invalid value: \"object\": no namespace here"
    );
}

/// The rules of `schema` the API server's estimate refuses: their field paths and its words.
fn refusals(schema: &Value) -> Vec<(String, String)> {
    static_cost::refused_rules(schema)
        .into_iter()
        .map(|r| (r.path, r.why))
        .collect()
}

fn traffic_route() -> Value {
    crate::fixtures::schema("trafficroutes.routing.fixtures.crfix.dev.yaml", "v1")
}

/// A parent reference as the API server hands it over, its defaults filled in.
fn parent(namespace: &str) -> Value {
    json!({"group": "routing.fixtures.crfix.dev", "kind": "Gateway", "name": "gw",
           "namespace": namespace})
}

fn route(spec: Value) -> Value {
    json!({"apiVersion": "routing.fixtures.crfix.dev/v1", "kind": "TrafficRoute",
           "metadata": {"name": "r", "namespace": "default"}, "spec": spec})
}

#[test]
fn every_rule_of_a_crd_shaped_like_gateway_apis_httproute_is_evaluated() {
    // Gateway API's HTTPRoute compares its parent references pairwise over a list of 32,
    // reading `namespace` as CEL's `__namespace__`: within the API server's estimate
    // (crfix used to look `__namespace__` up as an unknown, unbounded field and refuse both
    // rules, 32 times over the limit).
    let s = traffic_route();
    let spec = json!({
        "parents": [parent("a"), parent("b")],
        "hostnames": ["example.com"],
        "rules": [{
            "matches": [{"path": {"type": "Prefix", "value": "/api"}}],
            "filters": [{"type": "Mirror", "mirror": {"fraction": {"numerator": 1, "denominator": 2}}}],
            "backends": [{"name": "svc", "kind": "Service", "group": "", "port": 80}],
            "timeouts": {"request": "10s", "backend": "5s"}
        }]
    });
    let outcome = run(&s, &route(spec.clone()));
    assert!(outcome.is_valid(), "{outcome:#?}");
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert!(static_cost::refused_rules(&s).is_empty());

    // The two parent rules run, and `namespace` is what they read: the same parent twice in
    // one namespace is refused by one of them.
    let twice = with(spec.clone(), "/parents", json!([parent("a"), parent("a")]));
    let outcome = run(&s, &route(twice));
    assert_eq!(
        only_error(&outcome).message,
        "Invalid value: \"array\": each parent (with its section) may be named only once"
    );
    // The rules deep in lists of lists run too: a path with '//', a backend timeout over the
    // request's, a Mirror filter with both percent and fraction.
    for (pointer, value, message) in [
        (
            "/rules/0/matches/0/path/value",
            json!("/a//b"),
            "an exact or prefix path has no '//'",
        ),
        (
            "/rules/0/timeouts/backend",
            json!("1m"),
            "the backend timeout must not exceed the request timeout",
        ),
        (
            "/rules/0/filters/0/mirror/percent",
            json!(5),
            "only one of percent or fraction may be set",
        ),
    ] {
        let outcome = run(&s, &route(with(spec.clone(), pointer, value)));
        assert!(
            only_error(&outcome).message.ends_with(message),
            "{pointer}: {outcome:#?}"
        );
    }
}

#[test]
fn rules_read_the_defaults_of_optional_fields_left_out() {
    // The API server fills defaults before any rule runs; offline objects lack them.
    let s = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "match": {"type": "object",
            "properties": {"type": {"type": "string", "default": "Exact"},
                           "value": {"type": "string", "maxLength": 64}},
            "x-kubernetes-validations": [{
                "rule": "self.type != 'Exact' || self.value.startsWith('/')",
                "message": "an exact path starts with '/'"}]}}}}});
    let object = |m: Value| {
        json!({"apiVersion": "v1", "kind": "Thing",
        "metadata": {"name": "t"}, "spec": {"match": m}})
    };
    let outcome = run(&s, &object(json!({"value": "a"})));
    assert!(
        only_error(&outcome)
            .message
            .ends_with("an exact path starts with '/'"),
        "{outcome:#?}"
    );
    let outcome = run(&s, &object(json!({"value": "/a"})));
    assert!(
        outcome.is_valid() && outcome.warnings.is_empty(),
        "{outcome:#?}"
    );
    let outcome = run(&s, &object(json!({"type": "Prefix", "value": "a"})));
    assert!(outcome.is_valid(), "{outcome:#?}");
}

#[test]
fn a_default_filled_in_is_never_an_unknown_field_of_the_narrowed_schema() {
    // Gateway API's Gateway: `status` defaults to an object with `conditions`; the schema
    // narrowed to what the object touches keeps `status` (its `addresses` carry rules) but not
    // `conditions`. The default is the CRD author's, not an unknown field of the user's.
    let s = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}}},
        "status": {"type": "object",
            "default": {"conditions": [{"type": "Accepted", "status": "Unknown"}]},
            "properties": {
                "addresses": {"type": "array", "maxItems": 4, "items": {"type": "string",
                    "maxLength": 64, "x-kubernetes-validations": [
                        {"rule": "self.size() > 0", "message": "an address is not empty"}]}},
                "conditions": {"type": "array", "maxItems": 8, "items": {"type": "object",
                    "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}}}}}});
    let object = json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t"},
        "spec": {"name": "a"}});
    let narrowed = crate::schema_view::touched_by(&s.to_string(), &[&object]).expect("narrows");
    assert!(
        narrowed
            .pointer("/properties/status/properties/conditions")
            .is_none(),
        "the view should not hold conditions: {narrowed:#}"
    );
    let outcome = run(&narrowed, &object);
    assert!(
        outcome.is_valid() && outcome.warnings.is_empty(),
        "{outcome:#?}"
    );
    // A field the user wrote is still reported.
    let outcome = run(&narrowed, &with(object, "/spec/nme", json!("x")));
    assert_eq!(only_error(&outcome).pointer, "/spec/nme");
}

#[test]
fn rules_over_a_maps_keys_are_estimated_as_the_api_server_sizes_keys() {
    // Gateway API's `infrastructure.labels`: rules that match and measure every key of a map
    // bounded by maxProperties only. The API server sizes a key by its plain string type
    // (maximum 0) and accepts them; estimated as 3 MiB strings they were refused inline.
    let labels = json!({
        "type": "object",
        "maxProperties": 8,
        "additionalProperties": {"type": "string", "maxLength": 63},
        "x-kubernetes-validations": [
            {"rule": "self.all(key, key.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",
             "message": "label keys must be qualified names"},
            {"rule": "self.all(key, key.size() <= 316)", "message": "label keys are at most 316 characters"}
        ]
    });
    let s = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"labels": labels}}}});
    assert!(refusals(&s).is_empty(), "{:?}", refusals(&s));
    let object = |labels: Value| {
        json!({"apiVersion": "v1", "kind": "Thing",
        "metadata": {"name": "t"}, "spec": {"labels": labels}})
    };
    let outcome = run(&s, &object(json!({"example.com/team": "a"})));
    assert!(
        outcome.is_valid() && outcome.warnings.is_empty(),
        "{outcome:#?}"
    );
    let outcome = run(&s, &object(json!({"-bad-/team": "a"})));
    assert!(
        only_error(&outcome)
            .message
            .ends_with("label keys must be qualified names"),
        "{outcome:#?}"
    );
}

#[test]
fn a_truly_too_expensive_rule_is_named_by_the_estimate_and_bounded_when_it_runs() {
    // Unique header names, compared lower-cased pairwise under lists of 16 and 64: 16 × 64
    // evaluations of 16 × 16 comparisons of 1,024-byte strings, far over the API server's
    // per-rule limit (it would refuse the CRD, and crfix refuses it inline in the settings).
    let mut s = traffic_route();
    let headers =
        "/properties/spec/properties/rules/items/properties/matches/items/properties/headers";
    s.pointer_mut(headers).expect("headers")["x-kubernetes-validations"] = json!([{
        "rule": "self.all(a, self.exists_one(b, a.name.lowerAscii() == b.name.lowerAscii()))",
        "message": "header names are unique"}]);
    let refused = refusals(&s);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0].0, "spec.rules[*].matches[*].headers");
    // A CRD read from the cluster with such a rule (installed before the limits): the rule
    // runs, bounded by the per-call limit and budgets.
    let dup = json!([{"name": "X-A", "value": "1"}, {"name": "x-a", "value": "2"}]);
    let o = route(json!({"rules": [{"matches": [{"headers": dup}]}]}));
    let outcome = run(&s, &o);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    assert_eq!(
        only_error(&outcome).message,
        "Invalid value: \"array\": header names are unique"
    );
}

#[test]
fn properties_named_like_cel_keywords_are_seen_escaped() {
    let s = json!({"type": "object", "properties": {
        "namespace": {"type": "string"}, "x-y": {"type": "string"}, "if": {"type": "integer"}},
        "x-kubernetes-validations": [
            {"rule": "has(self.__namespace__) && self.__namespace__ == 'a'", "message": "ns"},
            {"rule": "!has(self.x__dash__y) || self.x__dash__y.size() < 3", "message": "xy"},
            {"rule": "!has(self.__if__) || self.__if__ > 0", "message": "if"}]});
    assert!(run(&s, &json!({"namespace": "a", "x-y": "ab", "if": 1})).is_valid());
    let outcome = run(&s, &json!({"namespace": "b", "x-y": "abc", "if": 0}));
    let messages: Vec<&str> = outcome.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "Invalid value: \"object\": ns",
            "Invalid value: \"object\": xy",
            "Invalid value: \"object\": if"
        ]
    );
}

/// One rule's estimated cost on `schema`, as the API server estimates it.
fn estimated(rule: &str, schema: &Value) -> u64 {
    let mut cache = RuleCache::default();
    let compiled = cache.get(rule);
    let compiled = compiled.as_ref().as_ref().expect("compiles");
    compiled.cost_estimate(schema).expect("estimated")
}

#[test]
fn estimates_agree_with_the_api_servers_own_expected_costs() {
    // Expected costs from the API server's cost-estimation tests (apiextensions-apiserver,
    // `TestCostEstimation`): a comparison costs a tenth of the smaller operand's size and
    // nothing more; the API server sizes numbers and booleans 0.
    let string = |max: Option<u64>| match max {
        Some(m) => json!({"type": "string", "maxLength": m}),
        None => json!({"type": "string"}),
    };
    let array = |items: Value| json!({"type": "array", "items": items});
    let map = |values: Value| json!({"type": "object", "additionalProperties": values});
    for (rule, schema, cost) in [
        ("self == \"x\"", string(Some(0)), 1),
        ("self == \"x\"", string(None), 2),
        ("self.startsWith('test')", string(Some(15)), 2),
        ("self.contains('test')", string(Some(10)), 5),
        ("self.contains('test')", string(None), 314574),
        (
            "size(self + \"hello\") > size(\"hello\")",
            string(Some(4)),
            7,
        ),
        (
            "size(self + \"hello\") > size(\"hello\")",
            string(None),
            314578,
        ),
        ("self.matches(\"x\")", string(Some(50)), 22),
        ("self.lowerAscii() == 'lower!'", string(Some(10)), 6),
        ("self[1] == 0.0", array(json!({"type": "number"})), 2),
        (
            "self.all(x, true)",
            array(json!({"type": "number"})),
            4718591,
        ),
        (
            "self.all(x, true)",
            json!({"type": "array", "maxItems": 10, "items": {"type": "number"}}),
            32,
        ),
        (
            "self.all(x, self.all(y, true))",
            json!({"type": "array", "maxItems": 10, "items": {"type": "number"}}),
            352,
        ),
        ("self[0] == false", array(json!({"type": "boolean"})), 2),
        (
            "oldSelf.size() == self.size()",
            map(json!({"type": "integer"})),
            5,
        ),
        (
            "self[\"a\"] == self[\"b\"]",
            map(json!({"type": "string", "format": "date-time"})),
            8,
        ),
    ] {
        assert_eq!(estimated(rule, &schema), cost, "{rule} on {schema}");
    }
}

#[test]
fn a_rule_at_the_root_sees_the_resources_name_and_generate_name_only() {
    // As controller-gen writes a root: `metadata: {type: object}`, no properties. The API
    // server still hands CEL the resource's `metadata.name` and `metadata.generateName` there
    // (and nothing else of metadata); crfix saw an empty metadata and let such rules pass.
    let schema = |rule: &str| {
        json!({"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {"cluster": {"type": "string"}}}},
            "x-kubernetes-validations": [{"rule": rule, "message": "not the cluster's name"}]})
    };
    let object = |name: &str| {
        json!({"apiVersion": "x/v1", "kind": "Pooler",
               "metadata": {"name": name, "namespace": "db", "labels": {"a": "b"}},
               "spec": {"cluster": "pg"}})
    };
    let same_name = "!has(self.metadata.name) || self.metadata.name != self.spec.cluster";
    assert_eq!(
        only_error(&run(&schema(same_name), &object("pg"))).message,
        "Invalid value: \"object\": not the cluster's name"
    );
    assert!(run(&schema(same_name), &object("pg-pooler")).is_valid());
    // Nothing else of metadata is CEL's.
    assert!(run(&schema("!has(self.metadata.namespace)"), &object("x")).is_valid());
    assert!(run(&schema("!has(self.metadata.labels)"), &object("x")).is_valid());
    // An embedded resource is a resource root too.
    let embedded = |rule: &str| {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true,
                "x-kubernetes-validations": [{"rule": rule, "message": "bad"}]}}}}})
    };
    let o = json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}}}}});
    assert!(run(&embedded("self.metadata.name == 'p'"), &o).is_valid());
    assert!(run(&embedded("!has(self.metadata.labels)"), &o).is_valid());
    assert!(!run(&embedded("self.metadata.name == 'q'"), &o).is_valid());
}

#[test]
fn a_conversion_is_sized_as_a_number_and_ordering_numbers_is_one_call() {
    // cel-go charges a fixed 1 for `<`, `<=`, `>`, `>=` on anything but strings and bytes, and
    // `duration(s)` is one call whose result is a duration, however long `s` may be: Istio's
    // `duration(self) >= duration('1ms')` on an unbounded string costs 2 + 1 + 1. crfix sized
    // the duration as its string and charged the comparison a traversal (7), and refused
    // Istio's real DestinationRule CRD, whose many such rules under unbounded lists the API
    // server accepts (their total 1.6 times its limit by crfix's count).
    let string = json!({"type": "string"});
    let date_time = json!({"type": "string", "format": "date-time"});
    let numbers = json!({"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}});
    for (rule, schema, cost) in [
        ("duration(self) >= duration('1ms')", &string, 4),
        ("duration(self) < duration('1h')", &string, 4),
        (
            "timestamp(self) < timestamp('2030-01-01T00:00:00Z')",
            &date_time,
            4,
        ),
        ("int(self) > 3", &string, 3),
        ("self.a < self.b", &numbers, 5),
        // Text is still compared by traversal: a tenth of the shorter side.
        (
            "self < 'm'",
            &json!({"type": "string", "maxLength": 100}),
            2,
        ),
    ] {
        assert_eq!(estimated(rule, schema), cost, "{rule} on {schema}");
    }
}

#[test]
fn a_rule_the_api_server_accepts_at_the_edge_of_its_limit_is_evaluated() {
    // Contour's HTTPProxy: `subjectNames[0] == subjectName` under two unbounded lists, made to
    // fit by `maxLength: 250` on subjectName (1,000 bytes: a tenth is 100 a comparison).
    let s = crate::fixtures::schema("httpproxies.projectcontour.io.yaml", "v1");
    assert_eq!(refusals(&s), Vec::<(String, String)>::new());
}
