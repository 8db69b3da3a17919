//! Stage 6: guardrails on every candidate, whatever its source (docs/architecture.md,
//! "Guardrails").
//!
//! - Only values under `allowedPaths` (default `/spec`) may change.
//! - Values under `protectedPaths` (default `/spec/serviceAccount`) may not be added, changed
//!   or removed. One exception, because it invents nothing: the user's own value may be
//!   *relocated verbatim* under the same (or a misspelt) property name, e.g. an object written
//!   for ClusterExtension `v1alpha1` (`spec.install.serviceAccount`) moved to where `v1` keeps
//!   it (`spec.serviceAccount`), provided the target was absent.
//! - `apiVersion`, `kind` and `metadata` never change, except crfix's own annotation.
//! - At most `maxPatchOperations` RFC 6902 operations.

use serde_json::Value;

use crate::pointer;
use crate::settings::Settings;

/// The annotation crfix writes on a repaired object; the only change allowed in metadata.
pub const REPAIR_ANNOTATION: &str = "crfix.dev/repair";

/// Upper bound on the nodes visited when looking for the origin of a relocated value.
const MAX_RELOCATION_SEARCH_NODES: usize = 100_000;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

impl Violation {
    pub(crate) fn new(pointer: &str, message: impl Into<String>) -> Self {
        Violation {
            pointer: pointer.to_string(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Checks everything about `pointer` except protected paths.
fn check_allowed(settings: &Settings, pointer: &str) -> Result<(), Violation> {
    if let Some(root) = crate::settings::NEVER_CHANGED
        .iter()
        .find(|root| pointer::is_under(pointer, root) || pointer::is_under(root, pointer))
    {
        return Err(Violation::new(
            pointer,
            format!("crfix never changes {}", &root[1..]),
        ));
    }
    if !settings.allows(pointer) {
        return Err(Violation::new(
            pointer,
            format!("outside allowedPaths ({})", settings.allowed_paths_text()),
        ));
    }
    Ok(())
}

/// The first protected path that `pointer` lies under, or that lies under `pointer` (adding
/// or replacing a whole parent object touches everything below it).
fn protected_root<'s>(settings: &'s Settings, pointer: &str) -> Option<&'s str> {
    settings
        .protected_paths
        .iter()
        .find(|p| pointer::is_under(pointer, p) || pointer::is_under(p, pointer))
        .map(String::as_str)
}

/// May a repair touch `pointer`? (allowed roots, protected paths, never apiVersion/kind/metadata)
pub fn check_path(settings: &Settings, pointer: &str) -> Result<(), Violation> {
    check_allowed(settings, pointer)?;
    if let Some(p) = protected_root(settings, pointer) {
        return Err(Violation::new(
            pointer,
            format!("protected path {p} (protectedPaths)"),
        ));
    }
    Ok(())
}

/// May a repair remove the empty object at `pointer`? Nothing under it can be protected, so
/// only a protected path above it (or at it) stops the removal.
pub fn check_empty_removal(settings: &Settings, pointer: &str) -> Result<(), Violation> {
    check_allowed(settings, pointer)?;
    if let Some(p) = settings
        .protected_paths
        .iter()
        .find(|p| pointer::is_under(pointer, p))
    {
        return Err(Violation::new(
            pointer,
            format!("protected path {p} (protectedPaths)"),
        ));
    }
    Ok(())
}

/// May a repair move the user's own value from `from` to `to` (absent before the move)?
/// Both ends must be under allowed paths; protected paths are allowed only for a verbatim
/// relocation whose property names match (see the module documentation).
pub fn check_relocation(settings: &Settings, from: &str, to: &str) -> Result<(), Violation> {
    check_allowed(settings, from)?;
    check_allowed(settings, to)?;
    if pointer::is_under(to, from) || pointer::is_under(from, to) {
        return Err(Violation::new(to, "a value cannot move into itself"));
    }
    // A protected value may only travel whole: moving into or out of the inside of a
    // protected subtree would change it.
    for end in [from, to] {
        if let Some(p) = settings
            .protected_paths
            .iter()
            .find(|p| pointer::is_under(end, p) && end != p.as_str())
        {
            return Err(Violation::new(
                end,
                format!("protected path {p} (protectedPaths)"),
            ));
        }
    }
    let touches_protected =
        protected_root(settings, from).is_some() || protected_root(settings, to).is_some();
    if touches_protected {
        let same_name = match (pointer::split_last(from), pointer::split_last(to)) {
            (Some((_, a)), Some((_, b))) => crate::nearest::same_name(&a, &b),
            _ => false,
        };
        if !same_name {
            let p = protected_root(settings, to)
                .or_else(|| protected_root(settings, from))
                .unwrap_or_default();
            return Err(Violation::new(
                to,
                format!("protected path {p} (protectedPaths)"),
            ));
        }
    }
    Ok(())
}

/// Does the user's original object hold `value` under a property named like `name`, at a
/// pointer (other than `except`, under an allowed path) where `other` has nothing?
pub(crate) fn relocated_from(
    settings: &Settings,
    source: &Value,
    other: &Value,
    name: &str,
    value: &Value,
    except: &str,
) -> bool {
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), source)];
    let mut visited = 0usize;
    while let Some((at, node)) = stack.pop() {
        visited += 1;
        if visited > MAX_RELOCATION_SEARCH_NODES {
            return false;
        }
        match node {
            Value::Object(map) => {
                for (key, child) in map {
                    let child_at = pointer::push(&at, key);
                    if child == value
                        && crate::nearest::same_name(key, name)
                        && !pointer::is_under(&child_at, except)
                        && !pointer::is_under(except, &child_at)
                        && check_allowed(settings, &child_at).is_ok()
                        && other.pointer(&child_at).is_none()
                    {
                        return true;
                    }
                    if child.is_object() || child.is_array() {
                        stack.push((child_at, child));
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    if child.is_object() || child.is_array() {
                        stack.push((pointer::push(&at, &i.to_string()), child));
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// Metadata with crfix's own annotation (and an annotations map left empty by removing it)
/// taken out, so that adding the annotation is not a change.
fn comparable_metadata(object: &Value) -> Value {
    let mut metadata = object
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    if let Some(map) = metadata.as_object_mut() {
        let drop_annotations = match map.get_mut("annotations") {
            Some(Value::Object(annotations)) => {
                annotations.remove(REPAIR_ANNOTATION);
                annotations.is_empty()
            }
            Some(Value::Null) => true,
            _ => false,
        };
        if drop_annotations {
            map.remove("annotations");
        }
    }
    metadata
}

/// Checks a whole candidate against the original: computes the RFC 6902 patch, checks every
/// operation's path(s), the operation count and that metadata/apiVersion/kind are untouched
/// (ignoring the crfix annotation). Returns the patch when clean.
pub fn check_candidate(
    settings: &Settings,
    original: &Value,
    candidate: &Value,
) -> Result<json_patch::Patch, Vec<Violation>> {
    let patch = json_patch::diff(original, candidate);
    let mut violations = Vec::new();

    for key in ["apiVersion", "kind"] {
        if original.get(key) != candidate.get(key) {
            violations.push(Violation::new(
                &format!("/{key}"),
                format!("crfix never changes {key}"),
            ));
        }
    }
    if !original.is_object() || !candidate.is_object() {
        violations.push(Violation::new("", "the object must stay a JSON object"));
    } else if comparable_metadata(original) != comparable_metadata(candidate) {
        violations.push(Violation::new(
            "/metadata",
            format!("crfix never changes metadata, except the {REPAIR_ANNOTATION} annotation"),
        ));
    }

    let mut operations = 0usize;
    for op in &patch.0 {
        let (path, from) = operation_paths(op);
        if path.is_empty() || pointer::is_under(path, "/metadata") {
            // The root is reported above; metadata was compared as a whole.
            continue;
        }
        operations += 1;
        for p in std::iter::once(path).chain(from) {
            if let Err(v) = check_allowed(settings, p) {
                if !violations.contains(&v) {
                    violations.push(v);
                }
            }
        }
    }
    for op in &patch.0 {
        if let Some(v) = number_made_text(original, op) {
            violations.push(v);
        }
    }
    if operations > settings.max_patch_operations {
        violations.push(Violation::new(
            "",
            format!(
                "{operations} patch operations, more than maxPatchOperations ({})",
                settings.max_patch_operations
            ),
        ));
    }

    check_protected(settings, original, candidate, &mut violations);

    if violations.is_empty() {
        Ok(patch)
    } else {
        Err(violations)
    }
}

/// Nothing under `protectedPaths` is added, changed or removed, but for the user's own value
/// moved verbatim.
fn check_protected(
    settings: &Settings,
    original: &Value,
    candidate: &Value,
    violations: &mut Vec<Violation>,
) {
    for root in &settings.protected_paths {
        let before = original.pointer(root);
        let after = candidate.pointer(root);
        if before == after {
            continue;
        }
        let name = pointer::split_last(root)
            .map(|(_, n)| n)
            .unwrap_or_default();
        let relocated = match (before, after) {
            // The user's own value arrived here from elsewhere in the object, verbatim.
            (None, Some(v)) => relocated_from(settings, original, candidate, &name, v, root),
            // The user's own value went from here to elsewhere in the object, verbatim.
            (Some(v), None) => relocated_from(settings, candidate, original, &name, v, root),
            _ => false,
        };
        if !relocated {
            violations.push(Violation::new(
                root,
                "protected path changed (protectedPaths)",
            ));
        }
    }
}

/// A number with a fraction replaced by a string that spells it: the number's digits as the
/// user wrote them are lost before a webhook sees it (`1.10` arrives as 1.1), so the string
/// may mean something else. Whatever proposes it, a rule or an LLM, it is refused.
fn number_made_text(original: &Value, op: &json_patch::PatchOperation) -> Option<Violation> {
    let json_patch::PatchOperation::Replace(replace) = op else {
        return None;
    };
    let path = replace.path.as_str();
    let Some(Value::Number(n)) = original.pointer(path) else {
        return None;
    };
    if n.is_i64() || n.is_u64() || !spells(&replace.value, n.as_f64()?) {
        return None;
    }
    Some(Violation::new(
        path,
        format!("the number {n} is not turned into a string: quote the value as you meant it, e.g. \"{n}\""),
    ))
}

/// `value` is (or lists) a string that reads as the number `x` (`"1.1"`, `"1.10"`).
fn spells(value: &Value, x: f64) -> bool {
    match value {
        Value::String(s) => s.trim().parse::<f64>().is_ok_and(|y| y == x),
        Value::Array(items) => items.iter().any(|i| spells(i, x)),
        _ => false,
    }
}

/// An LLM answer may change only what had an error: a value at or under an erroring path, or
/// a missing parent on the way to one (holding nothing but what leads there). Anything else
/// (a new field nobody asked for, a list entry added elsewhere) is a violation, valid or not.
/// Under an *object* in error (a rule relating its fields) it may add, but not drop or change
/// a value no error is at, unless on UPDATE it is the stale side of the rule (`stale`,
/// [`crate::certainty::stale_sides`]). `patch` is the diff from `original` to the answer.
pub fn check_scope(
    original: &Value,
    patch: &json_patch::Patch,
    error_pointers: &[&str],
    stale: &[String],
) -> Vec<Violation> {
    let in_scope = |p: &str| error_pointers.iter().any(|e| pointer::is_under(p, e));
    let mut violations = Vec::new();
    for op in &patch.0 {
        let (path, from) = operation_paths(op);
        if path.is_empty() || pointer::is_under(path, "/metadata") {
            // The root and metadata are check_candidate's.
            continue;
        }
        let written = match op {
            json_patch::PatchOperation::Add(a) => Some(&a.value),
            json_patch::PatchOperation::Replace(r) => Some(&r.value),
            _ => None,
        };
        let removed = match op {
            json_patch::PatchOperation::Add(_) => None,
            _ => original.pointer(path),
        };
        let on_the_way = error_pointers.iter().any(|e| pointer::is_under(e, path))
            && written
                .into_iter()
                .chain(removed)
                .flat_map(|v| leaf_pointers(v, path))
                .all(|leaf| in_scope(&leaf));
        for p in std::iter::once(path).chain(from) {
            if !in_scope(p) && !on_the_way {
                let v = Violation::new(
                    p,
                    "no error here: the answer may only change what is in error",
                );
                if !violations.contains(&v) {
                    violations.push(v);
                }
            }
        }
        if in_scope(path)
            && dropped_inside_an_object_error(original, patch, op, error_pointers)
            && !stale.iter().any(|p| p == path)
        {
            violations.push(Violation::new(
                path,
                "drops or changes what the user wrote where no error is (only a rule around it \
                 failed): which value is wrong is the user's decision",
            ));
        }
    }
    violations
}

/// Does `op` remove or replace a value the user wrote inside an object in error, with no
/// error at the value itself (a rule relating two fields failed: which one the user got
/// wrong is theirs to say, `tls.mode: Passthrough` with a `pathMatch` the rule forbids)? A
/// value the patch adds again elsewhere was moved, not dropped; inside a value in error that
/// is no object (a list), everything is in error.
fn dropped_inside_an_object_error(
    original: &Value,
    patch: &json_patch::Patch,
    op: &json_patch::PatchOperation,
    error_pointers: &[&str],
) -> bool {
    let path = match op {
        json_patch::PatchOperation::Remove(r) => r.path.to_string(),
        json_patch::PatchOperation::Replace(r) => r.path.to_string(),
        _ => return false,
    };
    let at_an_error = error_pointers.iter().any(|e| {
        *e == path
            || (pointer::is_under(&path, e) && original.pointer(e).is_some_and(|v| !v.is_object()))
    });
    let Some(before) = original.pointer(&path) else {
        return false;
    };
    let moved = patch.0.iter().any(|op| match op {
        json_patch::PatchOperation::Add(a) => holds(&a.value, before),
        _ => false,
    });
    !at_an_error && !moved
}

/// Is `needle` `haystack` or a value inside it?
fn holds(haystack: &Value, needle: &Value) -> bool {
    haystack == needle
        || match haystack {
            Value::Object(map) => map.values().any(|v| holds(v, needle)),
            Value::Array(items) => items.iter().any(|v| holds(v, needle)),
            _ => false,
        }
}

/// The pointers of the leaves of `value` written at `at` (an empty object or list is a leaf).
fn leaf_pointers(value: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(at.to_string(), value)];
    while let Some((p, v)) = stack.pop() {
        match v {
            Value::Object(map) if !map.is_empty() => {
                stack.extend(map.iter().map(|(k, c)| (pointer::push(&p, k), c)));
            }
            Value::Array(items) if !items.is_empty() => {
                stack.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (pointer::push(&p, &i.to_string()), c)),
                );
            }
            _ => out.push(p),
        }
    }
    out
}

fn operation_paths(op: &json_patch::PatchOperation) -> (&str, Option<&str>) {
    use json_patch::PatchOperation as Op;
    match op {
        Op::Add(o) => (o.path.as_str(), None),
        Op::Remove(o) => (o.path.as_str(), None),
        Op::Replace(o) => (o.path.as_str(), None),
        Op::Move(o) => (o.path.as_str(), Some(o.from.as_str())),
        Op::Copy(o) => (o.path.as_str(), Some(o.from.as_str())),
        Op::Test(o) => (o.path.as_str(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> Settings {
        Settings::default()
    }

    fn base() -> Value {
        json!({
            "apiVersion": "olm.operatorframework.io/v1",
            "kind": "ClusterExtension",
            "metadata": {"name": "argocd"},
            "spec": {
                "namespace": "argocd",
                "serviceAccount": {"name": "argocd-installer"},
                "source": {"sourceType": "catalog", "catalog": {"packageName": "argocd-operator"}}
            }
        })
    }

    #[test]
    fn check_path_enforces_roots_and_protection() {
        let s = settings();
        assert!(check_path(&s, "/spec/source/sourceType").is_ok());
        assert!(check_path(&s, "/status/phase").is_err());
        assert!(check_path(&s, "/metadata/labels/a").is_err());
        assert!(check_path(&s, "/kind").is_err());
        assert!(check_path(&s, "/spec/serviceAccount/name").is_err());
        // Replacing a parent that contains a protected path touches it.
        assert!(check_path(&s, "/spec").is_err());
        assert!(check_path(&s, "/spec/serviceAccountx").is_ok());
    }

    #[test]
    fn clean_candidate_gives_the_patch() {
        let original = base();
        let mut candidate = original.clone();
        candidate["spec"]["source"]["sourceType"] = json!("Catalog");
        candidate["metadata"]["annotations"] = json!({REPAIR_ANNOTATION: "{}"});
        let patch = check_candidate(&settings(), &original, &candidate).unwrap();
        let text = serde_json::to_string(&patch).unwrap();
        assert!(text.contains("/spec/source/sourceType"), "{text}");
    }

    #[test]
    fn metadata_apiversion_kind_are_frozen() {
        let original = base();
        let mut c = original.clone();
        c["metadata"]["labels"] = json!({"a": "b"});
        let v = check_candidate(&settings(), &original, &c).unwrap_err();
        assert_eq!(v[0].pointer, "/metadata");
        let mut c = original.clone();
        c["kind"] = json!("Other");
        assert!(check_candidate(&settings(), &original, &c).is_err());
        let mut c = original.clone();
        c["apiVersion"] = json!("olm.operatorframework.io/v1alpha1");
        assert!(check_candidate(&settings(), &original, &c).is_err());
        // The annotation alone is fine, even when metadata had no annotations (or was null).
        let mut o = original.clone();
        o["metadata"]["annotations"] = Value::Null;
        let mut c = o.clone();
        c["metadata"]["annotations"] = json!({REPAIR_ANNOTATION: "x"});
        assert!(check_candidate(&settings(), &o, &c).is_ok());
        // ... but not another annotation beside it.
        c["metadata"]["annotations"]["other"] = json!("y");
        assert!(check_candidate(&settings(), &o, &c).is_err());
    }

    #[test]
    fn paths_outside_allowed_roots_are_violations() {
        let original = base();
        let mut c = original.clone();
        c["status"] = json!({"phase": "x"});
        let v = check_candidate(&settings(), &original, &c).unwrap_err();
        assert_eq!(v[0].pointer, "/status");
        let mut s = settings();
        s.allowed_paths = Some(vec!["/spec/source".into()]);
        let mut c = original.clone();
        c["spec"]["namespace"] = json!("other");
        assert!(check_candidate(&s, &original, &c).is_err());
        c = original.clone();
        c["spec"]["source"]["sourceType"] = json!("Catalog");
        assert!(check_candidate(&s, &original, &c).is_ok());
    }

    #[test]
    fn protected_paths_cannot_be_invented_changed_or_removed() {
        let mut original = base();
        original["spec"]
            .as_object_mut()
            .unwrap()
            .remove("serviceAccount");
        let mut c = original.clone();
        c["spec"]["serviceAccount"] = json!({"name": "default"});
        let v = check_candidate(&settings(), &original, &c).unwrap_err();
        assert_eq!(v[0].pointer, "/spec/serviceAccount");

        let original = base();
        let mut c = original.clone();
        c["spec"]["serviceAccount"]["name"] = json!("cluster-admin");
        assert!(check_candidate(&settings(), &original, &c).is_err());
        let mut c = original.clone();
        c["spec"].as_object_mut().unwrap().remove("serviceAccount");
        assert!(check_candidate(&settings(), &original, &c).is_err());
    }

    #[test]
    fn verbatim_relocation_of_the_users_own_value_is_allowed() {
        let original = json!({
            "apiVersion": "v1", "kind": "K", "metadata": {},
            "spec": {"install": {"namespace": "a", "serviceAccount": {"name": "sa"}}}
        });
        let candidate = json!({
            "apiVersion": "v1", "kind": "K", "metadata": {},
            "spec": {"namespace": "a", "serviceAccount": {"name": "sa"}}
        });
        assert!(check_candidate(&settings(), &original, &candidate).is_ok());
        // And back (v1 → v1alpha1).
        assert!(check_candidate(&settings(), &candidate, &original).is_ok());
        // A deeper protected path relocates with its parent.
        let mut s = settings();
        s.protected_paths = vec!["/spec/serviceAccount/name".into()];
        assert!(check_candidate(&s, &original, &candidate).is_ok());
        // A copy (the original kept as well) is not a relocation.
        let mut copy = candidate.clone();
        copy["spec"]["install"] = original["spec"]["install"].clone();
        assert!(check_candidate(&settings(), &original, &copy).is_err());
        // A value that is not the user's, or that changed on the way, is refused.
        let mut changed = candidate.clone();
        changed["spec"]["serviceAccount"]["name"] = json!("other");
        assert!(check_candidate(&settings(), &original, &changed).is_err());
        // The value of an unrelated property is not a service account.
        let original = json!({"spec": {"owner": {"name": "sa"}}});
        let candidate = json!({"spec": {"serviceAccount": {"name": "sa"}}});
        assert!(check_candidate(&settings(), &original, &candidate).is_err());
    }

    #[test]
    fn relocation_check_agrees() {
        let s = settings();
        assert!(
            check_relocation(&s, "/spec/install/serviceAccount", "/spec/serviceAccount").is_ok()
        );
        assert!(check_relocation(&s, "/spec/serviceAcount", "/spec/serviceAccount").is_ok());
        assert!(check_relocation(&s, "/spec/owner", "/spec/serviceAccount").is_err());
        assert!(check_relocation(&s, "/spec/a", "/status/a").is_err());
        assert!(check_relocation(&s, "/spec/a", "/spec/a/b").is_err());
        // Into (or out of) the inside of a protected subtree: never, whatever the name.
        assert!(check_relocation(&s, "/spec/name", "/spec/serviceAccount/name").is_err());
        assert!(check_relocation(&s, "/spec/serviceAccount/name", "/spec/name").is_err());
    }

    #[test]
    fn a_number_with_a_fraction_never_becomes_text() {
        let mut original = base();
        original["spec"]["source"]["catalog"]["version"] = json!(1.1);
        for text in [json!("1.1"), json!("1.10"), json!(["1.1"])] {
            let mut candidate = original.clone();
            candidate["spec"]["source"]["catalog"]["version"] = text.clone();
            let v = check_candidate(&settings(), &original, &candidate).unwrap_err();
            assert!(v[0].message.contains("quote the value"), "{text}: {v:?}");
        }
        let mut candidate = original.clone();
        candidate["spec"]["source"]["catalog"]["version"] = json!(">=1.1.0");
        assert!(check_candidate(&settings(), &original, &candidate).is_ok());
        original["spec"]["source"]["catalog"]["version"] = json!(3);
        let mut candidate = original.clone();
        candidate["spec"]["source"]["catalog"]["version"] = json!("3");
        assert!(check_candidate(&settings(), &original, &candidate).is_ok());
    }

    #[test]
    fn llm_changes_stay_where_the_errors_are() {
        let original = base();
        let errors = ["/spec/source/catalog/packageName"];
        let mut fixed = original.clone();
        fixed["spec"]["source"]["catalog"]["packageName"] = json!("argocd");
        assert!(check_scope(
            &original,
            &json_patch::diff(&original, &fixed),
            &errors,
            &[]
        )
        .is_empty());
        // Something nobody asked for, beside the fix or instead of it.
        for (pointer, value) in [
            (
                "/spec/install",
                json!({"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}}),
            ),
            ("/spec/source/catalog/channels", json!(["evil-channel"])),
            ("/spec/namespace", json!("kube-system")),
        ] {
            let mut extra = fixed.clone();
            let (parent, key) = pointer::split_last(pointer).unwrap();
            extra.pointer_mut(parent).unwrap()[key.as_str()] = value;
            let v = check_scope(
                &original,
                &json_patch::diff(&original, &extra),
                &errors,
                &[],
            );
            assert_eq!(v.len(), 1, "{pointer}: {v:?}");
            assert!(v[0].pointer.starts_with(pointer), "{v:?}");
        }
        // A missing parent created on the way to the error holds only what leads there.
        let mut no_catalog = original.clone();
        no_catalog["spec"]["source"]
            .as_object_mut()
            .unwrap()
            .remove("catalog");
        let mut created = no_catalog.clone();
        created["spec"]["source"]["catalog"] = json!({"packageName": "argocd"});
        assert!(check_scope(
            &no_catalog,
            &json_patch::diff(&no_catalog, &created),
            &errors,
            &[]
        )
        .is_empty());
        created["spec"]["source"]["catalog"]["channels"] = json!(["x"]);
        assert!(!check_scope(
            &no_catalog,
            &json_patch::diff(&no_catalog, &created),
            &errors,
            &[]
        )
        .is_empty());
        // Removing an erroring field, or the parent that holds only it.
        let unknown = ["/spec/source/junk/inner"];
        let mut junk = original.clone();
        junk["spec"]["source"]["junk"] = json!({"inner": 1});
        assert!(check_scope(&junk, &json_patch::diff(&junk, &original), &unknown, &[]).is_empty());
        junk["spec"]["source"]["junk"]["other"] = json!(2);
        assert!(!check_scope(&junk, &json_patch::diff(&junk, &original), &unknown, &[]).is_empty());
    }

    #[test]
    fn operation_count_is_bounded() {
        let original = json!({"spec": {}});
        let candidate = json!({"spec": {"a": 1, "b": 2, "c": 3}});
        let mut s = settings();
        s.max_patch_operations = 2;
        let v = check_candidate(&s, &original, &candidate).unwrap_err();
        assert!(v[0].message.contains("maxPatchOperations"), "{v:?}");
        s.max_patch_operations = 3;
        assert!(check_candidate(&s, &original, &candidate).is_ok());
    }

    #[test]
    fn inside_an_object_in_error_only_a_stale_side_may_be_dropped() {
        let original =
            json!({"spec": {"solver": {"http01": {"class": "nginx"}, "dns01": {"zone": "a"}}}});
        let fixed = json!({"spec": {"solver": {"dns01": {"zone": "a"}}}});
        let patch = json_patch::diff(&original, &fixed);
        let errors = ["/spec/solver"];
        let v = check_scope(&original, &patch, &errors, &[]);
        assert!(
            v[0].message
                .contains("which value is wrong is the user's decision"),
            "{v:?}"
        );
        let stale = ["/spec/solver/http01".to_string()];
        assert!(check_scope(&original, &patch, &errors, &stale).is_empty());
        // The stale side names one value: the other stays the user's decision.
        let other = json_patch::diff(
            &original,
            &json!({"spec": {"solver": {"http01": {"class": "nginx"}}}}),
        );
        assert!(!check_scope(&original, &other, &errors, &stale).is_empty());
    }
}
