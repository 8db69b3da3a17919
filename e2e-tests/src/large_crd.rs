//! A generated CRD shaped like the large real ones (Argo CD's Application, the Prometheus
//! operator's CRDs, anything embedding a pod template): a few hundred kilobytes of JSON, most of
//! it descriptions and optional branches an object rarely uses, nested several levels deep,
//! with enums, patterns, bounded lists, maps, list-map keys and a few CEL rules. Its size grows
//! with the number of branches, so that benchmarks can show how the cost of an evaluation
//! grows with the CRD.

use serde_json::{json, Map, Value};

pub const GROUP: &str = "large.fixtures.crfix.dev";
pub const KIND: &str = "Workload";
pub const PLURAL: &str = "workloads";

/// About 500 characters, as a real CRD's field descriptions often are.
fn description(what: &str) -> String {
    format!(
        "{what}. This field is optional; when it is not set the controller uses its own default, \
         which may change between releases. Changing it on a running object rolls out a new \
         revision: the old one keeps serving until the new one reports ready, and is then scaled \
         down. See the operator's documentation for the interaction with the other fields of this \
         section, the limits that apply per namespace, and the metrics each setting exposes. \
         Values outside the documented range are rejected by the API server before any \
         controller sees them."
    )
}

fn string(what: &str) -> Value {
    json!({"type": "string", "maxLength": 253, "description": description(what)})
}

/// A container-like object: the kind of branch that makes pod templates large.
fn container(depth: usize) -> Value {
    let mut properties = Map::new();
    properties.insert(
        "name".into(),
        json!({"type": "string", "maxLength": 63,
               "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "description": description("Name")}),
    );
    properties.insert("image".into(), string("Container image"));
    properties.insert(
        "imagePullPolicy".into(),
        json!({"type": "string", "enum": ["Always", "IfNotPresent", "Never"],
               "description": description("Image pull policy")}),
    );
    properties.insert(
        "args".into(),
        json!({"type": "array", "maxItems": 64, "items": {"type": "string", "maxLength": 1024},
               "description": description("Arguments")}),
    );
    properties.insert(
        "env".into(),
        json!({"type": "array", "maxItems": 128, "x-kubernetes-list-type": "map",
               "x-kubernetes-list-map-keys": ["name"], "description": description("Environment"),
               "items": {"type": "object", "required": ["name"], "properties": {
                   "name": string("Variable name"),
                   "value": string("Variable value"),
                   "valueFrom": {"type": "object", "description": description("Source"),
                       "properties": {
                           "secretKeyRef": {"type": "object", "required": ["key"],
                               "description": description("Secret key"),
                               "properties": {"name": string("Secret"), "key": string("Key"),
                                              "optional": {"type": "boolean"}}},
                           "configMapKeyRef": {"type": "object", "required": ["key"],
                               "description": description("ConfigMap key"),
                               "properties": {"name": string("ConfigMap"), "key": string("Key"),
                                              "optional": {"type": "boolean"}}}}}}}}),
    );
    properties.insert(
        "ports".into(),
        json!({"type": "array", "maxItems": 32, "x-kubernetes-list-type": "map",
               "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
               "description": description("Ports"),
               "items": {"type": "object", "required": ["containerPort"], "properties": {
                   "name": string("Port name"),
                   "containerPort": {"type": "integer", "format": "int32", "minimum": 1,
                                     "maximum": 65535, "description": description("Port")},
                   "protocol": {"type": "string", "default": "TCP",
                                "enum": ["TCP", "UDP", "SCTP"],
                                "description": description("Protocol")}}}}),
    );
    properties.insert(
        "resources".into(),
        json!({"type": "object", "description": description("Compute resources"),
               "properties": {
                   "limits": {"type": "object", "additionalProperties": {
                       "anyOf": [{"type": "integer"}, {"type": "string"}],
                       "x-kubernetes-int-or-string": true}, "description": description("Limits")},
                   "requests": {"type": "object", "additionalProperties": {
                       "anyOf": [{"type": "integer"}, {"type": "string"}],
                       "x-kubernetes-int-or-string": true},
                       "description": description("Requests")}}}),
    );
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        properties.insert(
            probe.into(),
            json!({"type": "object", "description": description(probe), "properties": {
                "httpGet": {"type": "object", "required": ["port"], "properties": {
                    "path": string("Path"), "port": {"anyOf": [{"type": "integer"},
                        {"type": "string"}], "x-kubernetes-int-or-string": true},
                    "scheme": {"type": "string", "enum": ["HTTP", "HTTPS"]}}},
                "exec": {"type": "object", "properties": {"command": {"type": "array",
                    "items": {"type": "string"}}}},
                "periodSeconds": {"type": "integer", "format": "int32", "minimum": 1},
                "timeoutSeconds": {"type": "integer", "format": "int32", "minimum": 1},
                "failureThreshold": {"type": "integer", "format": "int32", "minimum": 1}}}),
        );
    }
    if depth > 0 {
        properties.insert(
            "sidecars".into(),
            json!({"type": "array", "maxItems": 8, "description": description("Sidecars"),
                   "items": container(depth - 1)}),
        );
    }
    json!({"type": "object", "required": ["name"], "properties": properties,
           "description": description("A container")})
}

/// One optional section of the spec (`section{i}`): a pod-template-like object.
fn section(i: usize) -> Value {
    let mut section = json!({
        "type": "object",
        "description": description(&format!("Section {i}")),
        "properties": {
            "enabled": {"type": "boolean", "description": description("Enabled")},
            "replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 1000,
                         "description": description("Replicas")},
            "labels": {"type": "object", "maxProperties": 64,
                       "additionalProperties": {"type": "string", "maxLength": 63},
                       "description": description("Labels")},
            "containers": {"type": "array", "maxItems": 16, "description": description("Containers"),
                           "items": container(1)},
            "schedule": {"type": "string", "maxLength": 64,
                         "pattern": "^(@(hourly|daily|weekly|monthly))|((\\S+\\s+){4}\\S+)$",
                         "description": description("Schedule")}
        }
    });
    // A few sections carry CEL rules, as real CRDs carry some.
    if i.is_multiple_of(8) {
        section["x-kubernetes-validations"] = json!([
            {"rule": "!has(self.replicas) || !has(self.enabled) || self.enabled || self.replicas == 0",
             "message": "a disabled section runs no replicas"}
        ]);
    }
    section
}

/// The CRD with `sections` optional sections under `spec` (about 26 KB of JSON each).
pub fn large_crd(sections: usize) -> Value {
    let mut spec = Map::new();
    spec.insert(
        "name".into(),
        json!({"type": "string", "minLength": 1, "maxLength": 63, "description": description("Name")}),
    );
    spec.insert(
        "tier".into(),
        json!({"type": "string", "enum": ["frontend", "backend", "batch"],
               "description": description("Tier")}),
    );
    for i in 0..sections {
        spec.insert(format!("section{i}"), section(i));
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{PLURAL}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": KIND, "plural": PLURAL, "singular": "workload", "listKind": "WorkloadList"},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "description": description(KIND),
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "metadata": {"type": "object"},
                        "spec": {"type": "object", "required": ["name"], "properties": spec,
                                 "description": description("Spec")},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }}
            }]
        }
    })
}

/// A small valid object that uses two of the sections, a container and its env and ports.
pub fn valid_workload() -> Value {
    json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": KIND,
        "metadata": {"name": "shop", "namespace": "default"},
        "spec": {
            "name": "shop",
            "tier": "frontend",
            "section0": {"enabled": true, "replicas": 3, "labels": {"app": "shop"},
                "containers": [{"name": "web", "image": "registry.example.com/shop:1.4",
                    "env": [{"name": "MODE", "value": "prod"}],
                    "ports": [{"containerPort": 8080}],
                    "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}}}]},
            "section1": {"schedule": "@daily"}
        }
    })
}
