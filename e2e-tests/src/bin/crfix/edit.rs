//! A fix written back into the user's YAML: each change of the RFC 6902 patch from the object
//! as written to the repaired one becomes an edit of the text where that value is, so every
//! other line stays byte for byte (comments, key order, quoting, indentation, anchors).
//!
//! A key renamed in place keeps its line (and its comment); values are replaced, added and
//! removed by `yamlpatch`. The edited text is read back and must equal the repaired object;
//! when it does not (a change through an anchor that other places use, a layout the editor
//! cannot extend), the document is left alone and the reason given.

use std::borrow::Cow;

use json_patch::PatchOperation;
use serde_json::Value;
use yamlpatch::{Op, Patch};
use yamlpath::{Component, Document, Route};

use crfix_e2e_tests::pointer_tokens;

use crate::manifests;

/// The text of `text` (one YAML document, which reads as `original`) edited so that it reads
/// as `wanted`; `Err` says why that cannot be done while keeping the layout.
pub fn edit(text: &str, original: &Value, wanted: &Value) -> Result<String, String> {
    let edits = plan(original, wanted);
    let mut text = text.to_string();
    let mut current = original.clone();
    for edit in &edits {
        text = apply(&text, &current, edit)?;
        edit.apply_to(&mut current);
    }
    let back = manifests::parse(&text)
        .map_err(|e| format!("the edited document is not valid YAML ({e})"))?;
    if &back != wanted {
        return Err(if text.contains('*') || text.contains('&') {
            "the change reaches a value that an anchor shares with other places".to_string()
        } else {
            "the edited document does not read back as the fix".to_string()
        });
    }
    Ok(text)
}

/// One edit of the text.
#[derive(Debug, Clone, PartialEq)]
enum Edit {
    /// A key renamed where it stands.
    Rename {
        parent: Vec<String>,
        from: String,
        to: String,
    },
    Add {
        path: Vec<String>,
        value: Value,
    },
    Remove {
        path: Vec<String>,
    },
    Replace {
        path: Vec<String>,
        value: Value,
    },
}

/// The patch from `original` to `wanted` as text edits: where one key of a mapping is
/// removed and one added, it is a rename (made in place), followed by the changes inside
/// the renamed value.
fn plan(original: &Value, wanted: &Value) -> Vec<Edit> {
    let mut edits = Vec::new();
    let operations = json_patch::diff(original, wanted).0;
    let mut renamed = Vec::new();
    for (i, op) in operations.iter().enumerate() {
        let PatchOperation::Remove(remove) = op else {
            continue;
        };
        let removed = pointer_tokens(remove.path.as_str());
        let Some((key, parent)) = removed.split_last() else {
            continue;
        };
        if !is_object_at(original, parent) || !is_object_at(wanted, parent) {
            continue;
        }
        let siblings = |want_remove: bool| {
            operations
                .iter()
                .enumerate()
                .filter(move |(_, op)| match op {
                    PatchOperation::Remove(r) if want_remove => {
                        pointer_tokens(r.path.as_str()).split_last().map(|(_, p)| p) == Some(parent)
                    }
                    PatchOperation::Add(a) if !want_remove => {
                        pointer_tokens(a.path.as_str()).split_last().map(|(_, p)| p) == Some(parent)
                    }
                    _ => false,
                })
                .collect::<Vec<_>>()
        };
        let (removes, adds) = (siblings(true), siblings(false));
        if removes.len() != 1 || adds.len() != 1 {
            continue;
        }
        let (j, PatchOperation::Add(add)) = adds[0] else {
            continue;
        };
        let to = pointer_tokens(add.path.as_str()).pop().unwrap_or_default();
        edits.push(Edit::Rename {
            parent: parent.to_vec(),
            from: key.clone(),
            to: to.clone(),
        });
        let old_value = lookup(original, &removed).cloned().unwrap_or(Value::Null);
        let mut inner_path = parent.to_vec();
        inner_path.push(to);
        for inner in plan(&old_value, &add.value) {
            edits.push(inner.under(&inner_path));
        }
        renamed.extend([i, j]);
    }
    for (i, op) in operations.into_iter().enumerate() {
        if renamed.contains(&i) {
            continue;
        }
        edits.push(match op {
            PatchOperation::Add(a) => Edit::Add {
                path: pointer_tokens(a.path.as_str()),
                value: a.value,
            },
            PatchOperation::Remove(r) => Edit::Remove {
                path: pointer_tokens(r.path.as_str()),
            },
            PatchOperation::Replace(r) => Edit::Replace {
                path: pointer_tokens(r.path.as_str()),
                value: r.value,
            },
            // diff() makes only add, remove and replace.
            other => Edit::Replace {
                path: Vec::new(),
                value: serde_json::to_value(other).unwrap_or_default(),
            },
        });
    }
    edits
}

impl Edit {
    fn under(self, prefix: &[String]) -> Edit {
        let join = |path: Vec<String>| [prefix.to_vec(), path].concat();
        match self {
            Edit::Rename { parent, from, to } => Edit::Rename {
                parent: join(parent),
                from,
                to,
            },
            Edit::Add { path, value } => Edit::Add {
                path: join(path),
                value,
            },
            Edit::Remove { path } => Edit::Remove { path: join(path) },
            Edit::Replace { path, value } => Edit::Replace {
                path: join(path),
                value,
            },
        }
    }

    /// The same change made to the JSON value, to follow what the text now reads as.
    fn apply_to(&self, value: &mut Value) {
        match self {
            Edit::Rename { parent, from, to } => {
                if let Some(map) = lookup_mut(value, parent).and_then(Value::as_object_mut) {
                    if let Some(v) = map.remove(from) {
                        map.insert(to.clone(), v);
                    }
                }
            }
            Edit::Add { path, value: new } => {
                let Some((key, parent)) = path.split_last() else {
                    return;
                };
                match lookup_mut(value, parent) {
                    Some(Value::Object(map)) => {
                        map.insert(key.clone(), new.clone());
                    }
                    Some(Value::Array(items)) => {
                        let at = key.parse().unwrap_or(items.len()).min(items.len());
                        items.insert(at, new.clone());
                    }
                    _ => {}
                }
            }
            Edit::Remove { path } => {
                let Some((key, parent)) = path.split_last() else {
                    return;
                };
                match lookup_mut(value, parent) {
                    Some(Value::Object(map)) => {
                        map.remove(key);
                    }
                    Some(Value::Array(items)) => {
                        if let Some(at) = key.parse::<usize>().ok().filter(|&i| i < items.len()) {
                            items.remove(at);
                        }
                    }
                    _ => {}
                }
            }
            Edit::Replace { path, value: new } => {
                if let Some(slot) = lookup_mut(value, path) {
                    *slot = new.clone();
                }
            }
        }
    }
}

/// Makes one edit on the text; `current` is what the text reads as before it.
fn apply(text: &str, current: &Value, edit: &Edit) -> Result<String, String> {
    let document = Document::new(text).map_err(|e| format!("cannot edit this YAML ({e})"))?;
    let where_ = |path: &[String]| pointer_of(path);
    let patch = match edit {
        Edit::Rename { parent, from, to } => {
            let mut path = parent.clone();
            path.push(from.clone());
            let key = document
                .query_key_only(&route(current, &path))
                .map_err(|e| format!("cannot find {} ({e})", where_(&path)))?;
            let (start, end) = key.location.byte_span;
            let rendered = match text[start..end].chars().next() {
                Some('"') => serde_json::to_string(to).map_err(|e| e.to_string())?,
                Some('\'') => format!("'{}'", to.replace('\'', "''")),
                _ => render_key(to),
            };
            let mut edited = text.to_string();
            edited.replace_range(start..end, &rendered);
            return Ok(edited);
        }
        Edit::Add { path, value } => {
            let Some((key, parent)) = path.split_last() else {
                return Err("the whole document would be replaced".to_string());
            };
            let operation = match lookup(current, parent) {
                Some(Value::Object(_)) => Op::Add {
                    key: key.clone(),
                    value: to_yaml(value)?,
                },
                Some(Value::Array(items))
                    if key == "-" || key.parse::<usize>().ok() == Some(items.len()) =>
                {
                    Op::Append {
                        value: to_yaml(value)?,
                    }
                }
                _ => {
                    return Err(format!(
                        "an item inserted inside the list {} would move the items after it",
                        where_(parent)
                    ))
                }
            };
            Patch {
                route: route(current, parent),
                operation,
            }
        }
        Edit::Remove { path } => Patch {
            route: route(current, path),
            operation: Op::Remove,
        },
        Edit::Replace { path, value } => {
            if path.is_empty() {
                return Err("the whole document would be replaced".to_string());
            }
            if let Some(edited) = requote(text, &document, current, path, value) {
                return Ok(edited);
            }
            Patch {
                route: route(current, path),
                operation: Op::Replace(to_yaml(value)?),
            }
        }
    };
    let target = match edit {
        Edit::Add { path, .. } | Edit::Remove { path } | Edit::Replace { path, .. } => where_(path),
        Edit::Rename { .. } => String::new(),
    };
    yamlpatch::apply_yaml_patches(&document, &[patch])
        .map(|d| d.source().to_string())
        .map_err(|e| format!("cannot edit {target} in place ({e})"))
}

/// A quoted string replaced by a string keeps its quotes (`'gitrepository'` →
/// `'GitRepository'`; in a JSON file, `"…"` stays JSON).
fn requote(
    text: &str,
    document: &Document,
    current: &Value,
    path: &[String],
    value: &Value,
) -> Option<String> {
    let (Some(Value::String(_)), Value::String(new)) = (lookup(current, path), value) else {
        return None;
    };
    let feature = document.query_exact(&route(current, path)).ok()??;
    let (start, end) = feature.location.byte_span;
    let written = &text[start..end];
    if written.contains('\n') {
        return None;
    }
    let quoted = if written.starts_with('"') {
        serde_json::to_string(new).ok()?
    } else if written.starts_with('\'') && !new.contains('\n') {
        format!("'{}'", new.replace('\'', "''"))
    } else {
        return None;
    };
    let mut edited = text.to_string();
    edited.replace_range(start..end, &quoted);
    Some(edited)
}

fn to_yaml(value: &Value) -> Result<yaml_serde::Value, String> {
    yaml_serde::to_value(value).map_err(|e| e.to_string())
}

/// A key as YAML writes it: plain when it reads back as the same string, else double-quoted.
fn render_key(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !key.starts_with(['-', '.'])
        && matches!(
            serde_yaml::from_str::<serde_yaml::Value>(key),
            Ok(serde_yaml::Value::String(ref s)) if s == key
        );
    if plain {
        key.to_string()
    } else {
        serde_json::to_string(key).unwrap_or_else(|_| format!("{key:?}"))
    }
}

/// The yamlpath route of a JSON Pointer's tokens: list indices where `value` has a list.
fn route(value: &Value, path: &[String]) -> Route<'static> {
    let mut components = Vec::with_capacity(path.len());
    let mut at = Some(value);
    for token in path {
        let component = match (at, token.parse::<usize>()) {
            (Some(Value::Array(_)), Ok(i)) => Component::Index(i),
            _ => Component::Key(Cow::Owned(token.clone())),
        };
        at = at.and_then(|v| match v {
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            Value::Object(map) => map.get(token),
            _ => None,
        });
        components.push(component);
    }
    Route::from(components)
}

fn pointer_of(path: &[String]) -> String {
    path.iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

fn lookup<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, token| match v {
        Value::Object(map) => map.get(token),
        Value::Array(items) => items.get(token.parse::<usize>().ok()?),
        _ => None,
    })
}

fn lookup_mut<'v>(value: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, token| match v {
        Value::Object(map) => map.get_mut(token),
        Value::Array(items) => items.get_mut(token.parse::<usize>().ok()?),
        _ => None,
    })
}

fn is_object_at(value: &Value, path: &[String]) -> bool {
    matches!(lookup(value, path), Some(Value::Object(_)))
}

/// The 0-based line, within the document's text, where the value at `pointer` is written (its
/// key's line for a mapping entry); the nearest existing parent's line when the value is new.
pub fn line_of(text: &str, value: &Value, pointer: &str) -> Option<usize> {
    let document = Document::new(text).ok()?;
    let mut path = pointer_tokens(pointer);
    loop {
        if path.is_empty() {
            return None;
        }
        if lookup(value, &path).is_some() {
            let route = route(value, &path);
            let feature = if matches!(path.last(), Some(t) if t.parse::<usize>().is_err()) {
                document.query_key_only(&route).ok()
            } else {
                document.query_pretty(&route).ok()
            };
            if let Some(feature) = feature {
                return Some(feature.location.point_span.0 .0);
            }
        }
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fix(text: &str, wanted: Value) -> Result<String, String> {
        let original = manifests::parse(text).unwrap();
        edit(text, &original, &wanted)
    }

    #[test]
    fn a_rename_keeps_the_line_its_comment_and_its_neighbours() {
        let text =
            "spec:\n  # the package\n  pakageName: argocd  # from the catalog\n  version: '1.0'\n";
        let out = fix(
            text,
            json!({"spec": {"packageName": "argocd", "version": "1.0"}}),
        )
        .unwrap();
        assert_eq!(
            out,
            "spec:\n  # the package\n  packageName: argocd  # from the catalog\n  version: '1.0'\n"
        );
    }

    #[test]
    fn a_rename_with_a_change_inside() {
        let text = "spec:\n  sorce:\n    type: catalog # c\n    name: x\n";
        let out = fix(
            text,
            json!({"spec": {"source": {"type": "Catalog", "name": "x"}}}),
        )
        .unwrap();
        assert_eq!(
            out,
            "spec:\n  source:\n    type: Catalog # c\n    name: x\n"
        );
    }

    #[test]
    fn values_added_replaced_and_removed_leave_other_lines_alone() {
        let text = "a: 1 # one\nb:\n  - x\n  - y\nc: \"q\"\nd: gone\n";
        let out = fix(
            text,
            json!({"a": 2, "b": ["x", "y", "z"], "c": "q", "e": true}),
        )
        .unwrap();
        assert!(out.starts_with("a: 2"), "{out}");
        assert!(out.contains("c: \"q\"\n"), "{out}");
        assert!(!out.contains("gone"), "{out}");
        assert_eq!(manifests::parse(&out).unwrap()["b"], json!(["x", "y", "z"]));
    }

    #[test]
    fn a_change_through_a_shared_anchor_is_refused() {
        let text = "base: &b\n  mode: fast\nx:\n  <<: *b\ny: *b\n";
        let original = manifests::parse(text).unwrap();
        let mut wanted = original.clone();
        wanted["y"]["mode"] = json!("Fast");
        let err = edit(text, &original, &wanted).unwrap_err();
        assert!(err.contains("anchor"), "{err}");
    }

    #[test]
    fn quoted_strings_keep_their_quotes() {
        let text = "a: 'x' # one\nb: \"y\"\nc: z\n";
        let out = fix(text, json!({"a": "it's", "b": "Y\"", "c": "Z"})).unwrap();
        assert_eq!(out, "a: 'it''s' # one\nb: \"Y\\\"\"\nc: Z\n");
        let json_text = "{\"k\": {\"kind\": \"git\",\n  \"nme\": 1}}\n";
        let out = fix(json_text, json!({"k": {"kind": "Git", "name": 1}})).unwrap();
        assert_eq!(out, "{\"k\": {\"kind\": \"Git\",\n  \"name\": 1}}\n");
    }

    #[test]
    fn keys_that_need_quotes_get_them() {
        assert_eq!(render_key("packageName"), "packageName");
        assert_eq!(render_key("true"), "\"true\"");
        assert_eq!(render_key("a: b"), "\"a: b\"");
        assert_eq!(
            render_key("app.kubernetes.io/name"),
            "app.kubernetes.io/name"
        );
    }

    #[test]
    fn lines_of_values_and_of_new_values() {
        let text = "spec:\n  a:\n    b: 1\n  list:\n    - x\n";
        let value = manifests::parse(text).unwrap();
        assert_eq!(line_of(text, &value, "/spec/a/b"), Some(2));
        assert_eq!(line_of(text, &value, "/spec/list/0"), Some(4));
        assert_eq!(line_of(text, &value, "/spec/a/missing"), Some(1));
    }
}
