//! The repair corpus (`e2e-tests/corpus/*.json`) through the real `.wasm`.
//!
//! Each case is an AdmissionRequest's object (and old object), the CRD fixture and settings to
//! use, and the expected outcome: fixed with given values, rejected naming given paths, or
//! accepted untouched. Whatever the case, every fixed object must also be accepted when sent
//! back in `validate` mode, and its patch may only touch allowed, unprotected paths (crfix's
//! annotation aside; a protected value may only have been relocated verbatim).
//!
//! Needs the module: `make build-wasm` (or `make test`), or `CRFIX_POLICY_WASM=path`.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crfix_e2e_tests::{
    admission_request, check_validation_response, crd_fixture, inline_settings, string_list,
    PolicyHost,
};

const REPAIR_ANNOTATION: &str = "crfix.dev/repair";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    description: String,
    /// CRD fixture name(s) (`e2e-tests/fixtures/crds/<name>.yaml`), put inline in the settings.
    crd: CrdNames,
    #[serde(default = "empty_object")]
    settings: Value,
    operation: String,
    object: Value,
    #[serde(default, rename = "oldObject")]
    old_object: Option<Value>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum CrdNames {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Expect {
    outcome: Outcome,
    /// Pointers and the values the fixed object holds there.
    #[serde(default)]
    values: Map<String, Value>,
    /// Pointers the fixed object must not have.
    #[serde(default)]
    absent: Vec<String>,
    /// Field paths (`spec.x.y`) the rejection message names.
    #[serde(default)]
    rejected_paths: Vec<String>,
    #[serde(default)]
    message_contains: Vec<String>,
    /// Each string appears in some warning.
    #[serde(default)]
    warnings_contain: Vec<String>,
    /// Number of change warnings (`crfix: set|moved|added|removed ...`) of a fix.
    #[serde(default)]
    changes: Option<usize>,
}

#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "camelCase")]
enum Outcome {
    Fixed,
    Rejected,
    Accepted,
}

fn empty_object() -> Value {
    json!({})
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

fn load_cases() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("e2e-tests/corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&path).expect("read case");
            let case: Case =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (name, case)
        })
        .collect()
}

fn settings_for(case: &Case, mode: Option<&str>) -> Value {
    let names = match &case.crd {
        CrdNames::One(n) => vec![n.clone()],
        CrdNames::Many(n) => n.clone(),
    };
    let crds: Vec<Value> = names.iter().map(|n| crd_fixture(n)).collect();
    let mut extra = case.settings.clone();
    if let (Some(mode), Some(map)) = (mode, extra.as_object_mut()) {
        map.insert("mode".into(), json!(mode));
    }
    inline_settings(&crds, extra)
}

fn is_under(pointer: &str, root: &str) -> bool {
    pointer == root
        || (pointer.starts_with(root) && pointer.as_bytes().get(root.len()) == Some(&b'/'))
}

fn last_token(pointer: &str) -> String {
    pointer
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .replace("~1", "/")
        .replace("~0", "~")
}

/// Lower case without separators: how a misspelt key is still "the same name".
fn loose(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Does `tree` hold `value` under a key named like `name`, at a pointer `other` lacks?
fn holds_elsewhere(tree: &Value, other: &Value, name: &str, value: &Value, at: &str) -> bool {
    match tree {
        Value::Object(map) => map.iter().any(|(k, child)| {
            let child_at = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
            (child == value
                && (loose(k) == loose(name) || strsim_close(&loose(k), &loose(name)))
                && other.pointer(&child_at).is_none())
                || holds_elsewhere(child, other, name, value, &child_at)
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .any(|(i, child)| holds_elsewhere(child, other, name, value, &format!("{at}/{i}"))),
        _ => false,
    }
}

/// One edit apart (a typo).
fn strsim_close(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    a.len().max(b.len()) - prefix - suffix <= 1
}

/// The guardrail invariant, checked independently of the policy's own code.
fn check_guardrails(case: &Case, original: &Value, fixed: &Value) -> Result<(), String> {
    let allowed = {
        let a = string_list(&case.settings["allowedPaths"]);
        if a.is_empty() {
            vec!["/spec".to_string()]
        } else {
            a
        }
    };
    let protected = if case.settings.get("protectedPaths").is_some() {
        string_list(&case.settings["protectedPaths"])
    } else {
        vec!["/spec/serviceAccount".to_string()]
    };
    for key in ["apiVersion", "kind"] {
        if original.get(key) != fixed.get(key) {
            return Err(format!("{key} changed"));
        }
    }
    let mut meta_before = original["metadata"].clone();
    let mut meta_after = fixed["metadata"].clone();
    if let Some(a) = meta_after
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        if !a.contains_key(REPAIR_ANNOTATION) {
            return Err("no crfix.dev/repair annotation".into());
        }
        a.remove(REPAIR_ANNOTATION);
    }
    for m in [&mut meta_before, &mut meta_after] {
        if let Some(map) = m.as_object_mut() {
            if map
                .get("annotations")
                .is_some_and(|a| a.is_null() || a.as_object().is_some_and(Map::is_empty))
            {
                map.remove("annotations");
            }
        }
    }
    if meta_before != meta_after {
        return Err(format!("metadata changed: {meta_before} → {meta_after}"));
    }
    let patch = json_patch::diff(original, fixed);
    let max_ops = case.settings["maxPatchOperations"].as_u64().unwrap_or(20) as usize;
    let mut ops = 0;
    for op in &patch.0 {
        let path = serde_json::to_value(op).map_err(|e| e.to_string())?["path"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if is_under(&path, "/metadata") {
            continue;
        }
        ops += 1;
        if !allowed.iter().any(|root| is_under(&path, root)) {
            return Err(format!("patch touches {path}, outside {allowed:?}"));
        }
    }
    if ops > max_ops {
        return Err(format!("{ops} patch operations > {max_ops}"));
    }
    for root in &protected {
        let (before, after) = (original.pointer(root), fixed.pointer(root));
        if before == after {
            continue;
        }
        let name = last_token(root);
        let relocated = match (before, after) {
            (None, Some(v)) => holds_elsewhere(original, fixed, &name, v, ""),
            (Some(v), None) => holds_elsewhere(fixed, original, &name, v, ""),
            _ => false,
        };
        if !relocated {
            return Err(format!("protected {root} changed: {before:?} → {after:?}"));
        }
    }
    Ok(())
}

fn run_case(host: &PolicyHost, case: &Case) -> Result<(), String> {
    let request = admission_request(
        &case.operation,
        case.object.clone(),
        case.old_object.clone(),
    );
    let response = host
        .validate(&request, &settings_for(case, None))
        .map_err(|e| format!("host: {e:#}"))?;
    check_validation_response(&response).map_err(|e| format!("malformed response: {e}"))?;
    let accepted = response["accepted"] == json!(true);
    let mutated = response
        .get("mutated_object")
        .filter(|m| !m.is_null())
        .cloned();
    let message = response["message"].as_str().unwrap_or_default().to_string();
    let warnings = string_list(&response["warnings"]);
    let show = || format!("{response:#}");
    let expect = &case.expect;

    match expect.outcome {
        Outcome::Fixed => {
            let Some(fixed) = mutated else {
                return Err(format!("expected a fix, got {}", show()));
            };
            if !accepted {
                return Err(format!("a fix must be accepted: {}", show()));
            }
            for (pointer, want) in &expect.values {
                if fixed.pointer(pointer) != Some(want) {
                    return Err(format!(
                        "{pointer}: want {want}, got {:?}\n{}",
                        fixed.pointer(pointer),
                        show()
                    ));
                }
            }
            for pointer in &expect.absent {
                if fixed.pointer(pointer).is_some() {
                    return Err(format!("{pointer} should be absent\n{}", show()));
                }
            }
            if let Some(n) = expect.changes {
                let got = warnings
                    .iter()
                    .filter(|w| {
                        ["set ", "moved ", "added ", "removed "]
                            .iter()
                            .any(|v| w.starts_with(&format!("crfix: {v}")))
                    })
                    .count();
                if got != n {
                    return Err(format!("want {n} change warnings, got {got}: {warnings:?}"));
                }
            }
            check_guardrails(case, &case.object, &fixed)
                .map_err(|e| format!("guardrail invariant: {e}\n{}", show()))?;
            // The fix is valid: the same settings in validate mode accept it as it is.
            let again = admission_request(&case.operation, fixed.clone(), case.old_object.clone());
            let r = host
                .validate(&again, &settings_for(case, Some("validate")))
                .map_err(|e| format!("host: {e:#}"))?;
            if r["accepted"] != json!(true) {
                return Err(format!("the fixed object is not valid: {r:#}"));
            }
        }
        Outcome::Rejected => {
            if accepted || mutated.is_some() {
                return Err(format!("expected a rejection, got {}", show()));
            }
        }
        Outcome::Accepted => {
            if !accepted || mutated.is_some() {
                return Err(format!("expected an untouched acceptance, got {}", show()));
            }
        }
    }
    for path in &expect.rejected_paths {
        if !message.contains(path.as_str()) {
            return Err(format!("the message does not name {path}: {message:?}"));
        }
    }
    for text in &expect.message_contains {
        if !message.contains(text.as_str()) {
            return Err(format!("the message lacks {text:?}: {message:?}"));
        }
    }
    for text in &expect.warnings_contain {
        if !warnings.iter().any(|w| w.contains(text.as_str())) {
            return Err(format!("no warning contains {text:?}: {warnings:?}"));
        }
    }
    Ok(())
}

#[test]
fn corpus() {
    let host = match PolicyHost::policy() {
        Ok(h) => h,
        Err(e) => panic!("{e:#}"),
    };
    let cases = load_cases();
    assert!(cases.len() >= 40, "the corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    for (name, case) in &cases {
        if let Err(e) = run_case(&host, case) {
            failures.push(format!("{name} ({}):\n{e}", case.description));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_corpus_covers_what_the_issue_asks_for() {
    let cases = load_cases();
    let count = |f: &dyn Fn(&Case) -> bool| cases.iter().filter(|(_, c)| f(c)).count();
    let api = |c: &Case| {
        c.object["apiVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(count(&|c| api(c) == "olm.operatorframework.io/v1") >= 10);
    assert!(count(&|c| api(c) == "olm.operatorframework.io/v1alpha1") >= 3);
    assert!(count(&|c| api(c).starts_with("example.com/")) >= 3);
    assert!(count(&|c| c.operation == "UPDATE") >= 4);
    assert!(count(&|c| c.expect.outcome == Outcome::Fixed) >= 15);
    assert!(count(&|c| c.expect.outcome == Outcome::Rejected) >= 15);
    assert!(
        count(&|c| c.expect.outcome == Outcome::Rejected
            && (c.settings.get("allowedPaths").is_some()
                || c.settings.get("protectedPaths").is_some()
                || c.settings.get("maxPatchOperations").is_some()))
            >= 3
    );
}
