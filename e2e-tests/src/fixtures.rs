//! Test fixtures: CRDs from `e2e-tests/fixtures/crds`, inline settings, and realistic
//! AdmissionRequests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use serde_json::{json, Map, Value};

/// `e2e-tests/fixtures`.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The strings of a JSON list (other items and a non-list: none).
pub fn string_list(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON Pointer's reference tokens, unescaped (`/a~1b/0` → `["a/b", "0"]`).
pub fn pointer_tokens(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// Reads a JSON or YAML document (YAML unless the file is `.json` or starts with `{`).
pub fn load_document(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_document(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Parses JSON, or YAML when it is not JSON (one document).
pub fn parse_document(text: &str) -> Result<Value> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(v) = serde_json::from_str(text) {
            return Ok(v);
        }
    }
    serde_yaml::from_str::<Value>(text).map_err(|e| anyhow!("neither JSON nor YAML: {e}"))
}

/// The CRD fixture `e2e-tests/fixtures/crds/<name>.yaml` (e.g.
/// `"clusterextensions.olm.operatorframework.io.v1"`) as JSON.
pub fn try_crd_fixture(name: &str) -> Result<Value> {
    let dir = fixtures_dir().join("crds");
    for ext in ["yaml", "yml", "json"] {
        let path = dir.join(format!("{name}.{ext}"));
        if path.exists() {
            return load_document(&path);
        }
    }
    Err(anyhow!(
        "no CRD fixture {name:?} in {} (files are named <plural>.<group>[.<version>].yaml)",
        dir.display()
    ))
}

/// [`try_crd_fixture`] for tests: panics with the reason when the fixture is missing.
pub fn crd_fixture(name: &str) -> Value {
    match try_crd_fixture(name) {
        Ok(v) => v,
        Err(e) => panic!("{e:#}"),
    }
}

/// `base` with the keys of `extra` (an object) added or overriding; `llm` is merged key by key.
pub fn merge_settings(mut base: Value, extra: Value) -> Value {
    let Value::Object(extra) = extra else {
        return base;
    };
    for (key, value) in extra {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(inner)), Value::Object(more)) if key == "llm" => inner.extend(more),
            (_, value) => base[key.as_str()] = value,
        }
    }
    base
}

/// The README's ClusterExtension, applied with `kubectl apply --validate=false`: `catalog`
/// lacks `packageName`, which no rule can know; `source_type` as the user spelt it.
pub fn readme_cluster_extension(source_type: &str) -> Value {
    json!({
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {
            "name": "argocd",
            "labels": {"app.kubernetes.io/name": "argocd-operator"}
        },
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "argocd-installer"},
            "source": {
                "sourceType": source_type,
                "catalog": {"version": ">=0.13.0, <0.14.0"}
            }
        }
    })
}

/// Test cases for a property test: `PROPTEST_CASES`, else `default_cases`.
pub fn proptest_cases(default_cases: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default_cases)
}

/// Settings with `schemaSource: inline` and these CRDs; the keys of `extra` (an object) are
/// added or override.
pub fn inline_settings(crds: &[Value], extra: Value) -> Value {
    let mut settings = Map::new();
    settings.insert("schemaSource".into(), json!("inline"));
    settings.insert("crds".into(), Value::Array(crds.to_vec()));
    if let Value::Object(extra) = extra {
        settings.extend(extra);
    }
    Value::Object(settings)
}

/// The plural resource name of `kind` in `group`, from the CRD fixtures.
pub fn plural_for(group: &str, kind: &str) -> Option<String> {
    static PLURALS: OnceLock<HashMap<(String, String), String>> = OnceLock::new();
    let plurals = PLURALS.get_or_init(|| {
        let mut map = HashMap::new();
        let Ok(entries) = std::fs::read_dir(fixtures_dir().join("crds")) else {
            return map;
        };
        for entry in entries.flatten() {
            let Ok(doc) = load_document(&entry.path()) else {
                continue;
            };
            let spec = &doc["spec"];
            if let (Some(g), Some(k), Some(p)) = (
                spec["group"].as_str(),
                spec["names"]["kind"].as_str(),
                spec["names"]["plural"].as_str(),
            ) {
                map.insert((g.to_string(), k.to_string()), p.to_string());
            }
        }
        map
    });
    plurals.get(&(group.to_string(), kind.to_string())).cloned()
}

fn split_api_version(api_version: &str) -> (String, String) {
    match api_version.split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), api_version.to_string()),
    }
}

fn next_uid() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("c0ffee00-0000-4000-8000-{n:012x}")
}

/// A realistic AdmissionRequest (what policy-server puts under `"request"`): uid, kind and
/// resource (also `requestKind`/`requestResource`) derived from the object's apiVersion/kind
/// (plural from the CRD fixtures, else lowercase kind + "s"), name, namespace, operation,
/// userInfo, object, oldObject, dryRun false and options.
///
/// `object` is `Value::Null` when there is none (DELETE); kind and name then come from
/// `old_object`.
pub fn admission_request(operation: &str, object: Value, old_object: Option<Value>) -> Value {
    admission_request_with_resource(operation, object, old_object, None)
}

/// [`admission_request`] with an explicit plural resource name.
pub fn admission_request_with_resource(
    operation: &str,
    object: Value,
    old_object: Option<Value>,
    resource: Option<&str>,
) -> Value {
    let source = if object.is_object() {
        &object
    } else {
        old_object.as_ref().unwrap_or(&object)
    };
    let str_at = |p: &str| {
        source
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (group, version) = split_api_version(str_at("/apiVersion"));
    let kind = str_at("/kind").to_string();
    let plural = resource
        .map(str::to_string)
        .or_else(|| plural_for(&group, &kind))
        .unwrap_or_else(|| format!("{}s", kind.to_lowercase()));
    let name = str_at("/metadata/name").to_string();
    let namespace = source
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    let options_kind = match operation {
        "CREATE" => "CreateOptions",
        "UPDATE" => "UpdateOptions",
        "DELETE" => "DeleteOptions",
        _ => "",
    };
    let gvk = json!({"group": group, "version": version, "kind": kind});
    let gvr = json!({"group": group, "version": version, "resource": plural});
    let mut request = json!({
        "uid": next_uid(),
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": name,
        "operation": operation,
        "userInfo": {
            "username": "kubernetes-admin",
            "groups": ["system:masters", "system:authenticated"],
        },
        "object": object,
        "oldObject": old_object.unwrap_or(Value::Null),
        "dryRun": false,
    });
    if let Some(ns) = namespace {
        request["namespace"] = json!(ns);
    }
    if !options_kind.is_empty() {
        let mut options = json!({"apiVersion": "meta.k8s.io/v1", "kind": options_kind});
        if operation != "DELETE" {
            options["fieldManager"] = json!("kubectl-client-side-apply");
            options["fieldValidation"] = json!("Strict");
        } else {
            options["propagationPolicy"] = json!("Background");
        }
        request["options"] = options;
    }
    request
}

/// A valid v1 ClusterExtension (every optional block set), shared by tests and benchmarks.
pub fn valid_cluster_extension() -> Value {
    json!({
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": "argocd"},
        "spec": {
            "namespace": "argocd",
            "serviceAccount": {"name": "argocd-installer"},
            "source": {
                "sourceType": "Catalog",
                "catalog": {
                    "packageName": "argocd-operator",
                    "version": ">=0.13.0, <0.14.0",
                    "channels": ["alpha"],
                    "upgradeConstraintPolicy": "CatalogProvided"
                }
            },
            "install": {"preflight": {"crdUpgradeSafety": {"enforcement": "Strict"}}}
        }
    })
}

/// The object a crfix prompt shows the model: the fenced JSON block of a user message.
/// Panics (a test helper) when the message has none.
pub fn object_in_user_message(user: &str) -> Value {
    let block = user
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap_or_default();
    serde_json::from_str(block).unwrap_or_else(|e| panic!("no object in the prompt ({e}): {user}"))
}
