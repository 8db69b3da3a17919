//! Unknown properties: a misspelt key renamed to the sibling property it stands for, or a
//! property moved to the one place in the schema where a property of that name lives (which
//! also migrates objects written for another version of the CRD).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Edit, Proposal, Verify, PRIORITY_RELOCATE};
use crate::nearest::{self, Closeness, Pick};
use crate::pointer;
use crate::schema;

/// Schema nodes deeper than this are not indexed (bounded work on odd schemas).
const MAX_SCHEMA_DEPTH: usize = 24;
/// At most this many properties are indexed.
const MAX_INDEXED: usize = 20_000;
/// The token of a place inside a list item, whichever item: it is resolved from the path the
/// field was written at (the item it was written in), never guessed.
const ANY_ITEM: &str = "*";

/// Property name → every place the schema declares a property of that name, following
/// `properties` and list `items` (written [`ANY_ITEM`]); a map's values are not followed (a map
/// key cannot be guessed).
#[derive(Default)]
pub struct SchemaIndex {
    by_name: HashMap<String, Vec<String>>,
}

impl SchemaIndex {
    pub fn build(schema: &Value) -> Self {
        let mut index = SchemaIndex::default();
        let mut count = 0usize;
        let mut stack: Vec<(&Value, String, usize)> = vec![(schema, String::new(), 0)];
        while let Some((node, at, depth)) = stack.pop() {
            if let Some(items) = node.get("items").filter(|i| i.is_object()) {
                if depth + 1 < MAX_SCHEMA_DEPTH {
                    stack.push((items, pointer::push(&at, ANY_ITEM), depth + 1));
                }
            }
            let Some(props) = node.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (name, child) in props {
                count += 1;
                if count > MAX_INDEXED {
                    return index;
                }
                let child_at = pointer::push(&at, name);
                index
                    .by_name
                    .entry(name.clone())
                    .or_default()
                    .push(child_at.clone());
                if depth + 1 < MAX_SCHEMA_DEPTH {
                    stack.push((child, child_at, depth + 1));
                }
            }
        }
        index
    }

    fn paths(&self, name: &str) -> &[String] {
        self.by_name
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

/// `place` from the index with each list item it passes through taken from `at`, where `at` runs
/// through the same list; `None` when a list of `place` is not on `at`'s way (which of its
/// items is meant cannot be told).
fn resolve(place: &str, at: &str) -> Option<String> {
    let written = pointer::tokens(at);
    let mut resolved = String::new();
    let mut same_way = true;
    for (i, token) in pointer::tokens(place).into_iter().enumerate() {
        let here = written.get(i).filter(|_| same_way);
        let token = if token == ANY_ITEM {
            here.filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))?
                .clone()
        } else {
            token
        };
        same_way = here == Some(&token);
        resolved = pointer::push(&resolved, &token);
    }
    Some(resolved)
}

/// Can `target` be created in `object` (every existing ancestor an object, or a list holding
/// the item named)?
fn creatable(object: &Value, target: &str) -> bool {
    let mut node = object;
    for token in pointer::tokens(target) {
        match node {
            Value::Object(map) => match map.get(&token) {
                Some(child) => node = child,
                None => return true,
            },
            Value::Array(items) => match token.parse::<usize>().ok().and_then(|i| items.get(i)) {
                Some(item) => node = item,
                None => return false,
            },
            _ => return false,
        }
    }
    false
}

fn rename(at: &str, parent: &str, target: &str, closeness: Closeness) -> Proposal {
    let reason = match closeness {
        Closeness::Canonical => "renamed: same name, other spelling",
        Closeness::Distance(_) => "renamed: closest property",
    }
    .to_string();
    Proposal {
        path: pointer::push(parent, target),
        edit: Edit::Move {
            from: at.to_string(),
        },
        rule: "rename",
        reason,
        verify: Verify::Nothing,
        priority: PRIORITY_RELOCATE,
    }
}

/// A repair for the unknown property at `at`: `Ok(None)` when there is nothing to try,
/// `Err` when a repair was considered and refused.
pub fn propose(
    schema_root: &Value,
    object: &Value,
    at: &str,
    index: &mut Option<SchemaIndex>,
    allowed: &dyn Fn(&str) -> bool,
) -> Result<Option<Proposal>, String> {
    let Some((parent, key)) = pointer::split_last(at) else {
        return Ok(None);
    };
    let Some(present) = object.pointer(parent).and_then(Value::as_object) else {
        return Ok(None);
    };
    let siblings = Siblings::new(schema::node_at(schema_root, parent), present);
    // 1. The same name, spelt with other case or separators.
    if let Some(p) = respelt(at, parent, &key, &siblings)? {
        return Ok(Some(p));
    }
    // 2. The one place in the schema where a property of this name lives.
    let index = index.get_or_insert_with(|| SchemaIndex::build(schema_root));
    let places: Vec<Option<String>> = index
        .paths(&key)
        .iter()
        .map(|place| resolve(place, at))
        .filter(|p| p.as_deref().is_none_or(|p| p != at && allowed(p)))
        .collect();
    // Among several, the one inside an object the user wrote beside it (a field written one
    // level too high, next to the object that takes it).
    let beside: Vec<&String> = places
        .iter()
        .flatten()
        .filter(|place| {
            pointer::split_last(place).is_some_and(|(holder, _)| {
                pointer::split_last(holder).is_some_and(|(up, _)| up == parent)
                    && object.pointer(holder).is_some_and(Value::is_object)
            })
        })
        .collect();
    let target = match (places.as_slice(), beside.as_slice()) {
        ([Some(only)], _) => Some(only),
        ([_, _, ..], [only]) if places.iter().all(Option::is_some) => Some(*only),
        // (Places inside list items elsewhere are no place one level off.)
        ([_, _, ..], []) => holder_of_all(schema_root, parent, present, &places),
        _ => None,
    };
    if let Some(target) = target {
        if object.pointer(target).is_none()
            && creatable(object, target)
            && !pointer::is_under(target, at)
        {
            return Ok(Some(Proposal {
                path: target.clone(),
                edit: Edit::Move {
                    from: at.to_string(),
                },
                rule: "move",
                reason: "moved to schema path".to_string(),
                verify: Verify::Nothing,
                priority: PRIORITY_RELOCATE,
            }));
        }
    }
    // 3. The closest sibling, preferring the required ones that are missing.
    if let Some(p) = closest_sibling(at, parent, &key, &siblings)? {
        return Ok(Some(p));
    }
    if places.len() > 1 {
        return Err(format!(
            "{key:?} exists at {} places in the schema",
            places.len()
        ));
    }
    Ok(None)
}

/// Among the `places` of a field written at `parent`, the one inside the one object one level
/// down that declares every field written undeclared at `parent` (two or more): fields written
/// together one level too high go together into the object that takes them all
/// (`predictor: {modelFormat, runtime, storageUri}` → `predictor.model`).
fn holder_of_all<'p>(
    schema_root: &Value,
    parent: &str,
    present: &Map<String, Value>,
    places: &'p [Option<String>],
) -> Option<&'p String> {
    let declared = schema::node_at(schema_root, parent)
        .and_then(|n| n.get("properties"))
        .and_then(Value::as_object);
    let undeclared: Vec<&String> = present
        .keys()
        .filter(|k| !declared.is_some_and(|d| d.contains_key(k.as_str())))
        .collect();
    if undeclared.len() < 2 {
        return None;
    }
    let mut holders = places.iter().flatten().filter(|place| {
        pointer::split_last(place).is_some_and(|(holder, _)| {
            pointer::split_last(holder).is_some_and(|(up, _)| up == parent)
                && schema::node_at(schema_root, holder)
                    .and_then(|n| n.get("properties"))
                    .and_then(Value::as_object)
                    .is_some_and(|p| undeclared.iter().all(|k| p.contains_key(k.as_str())))
        })
    });
    match (holders.next(), holders.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// The properties the schema gives the parent of an unknown key, and which of them the object
/// lacks.
struct Siblings<'s> {
    /// Properties of the parent that the object has.
    present: Vec<&'s str>,
    /// Properties of the parent that the object lacks.
    absent: Vec<&'s str>,
    /// The absent ones that are required.
    missing_required: Vec<&'s str>,
}

impl<'s> Siblings<'s> {
    fn new(parent_schema: Option<&'s Value>, present: &Map<String, Value>) -> Self {
        let properties: Vec<&str> = parent_schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let required: Vec<&str> = parent_schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let (present_props, absent): (Vec<&str>, Vec<&str>) =
            properties.iter().partition(|p| present.contains_key(**p));
        let missing_required = absent
            .iter()
            .copied()
            .filter(|p| required.contains(p))
            .collect();
        Siblings {
            present: present_props,
            absent,
            missing_required,
        }
    }
}

/// Step 1: `key` is an absent property's name with other case or separators; refused when two
/// could be meant or a present property already has that name.
fn respelt(
    at: &str,
    parent: &str,
    key: &str,
    siblings: &Siblings,
) -> Result<Option<Proposal>, String> {
    match nearest::pick(key, &siblings.absent) {
        Pick::One(target, Closeness::Canonical) => {
            return Ok(Some(rename(at, parent, target, Closeness::Canonical)));
        }
        Pick::Ambiguous(names) if nearest::canonical(names[0]) == nearest::canonical(key) => {
            return Err(format!("{key:?} could be {} or {}", names[0], names[1]));
        }
        _ => {}
    }
    let canon = nearest::canonical(key);
    if let Some(existing) = siblings
        .present
        .iter()
        .find(|p| nearest::canonical(p) == canon && **p != key)
    {
        return Err(format!("{key:?} collides with the existing {existing}"));
    }
    Ok(None)
}

/// Step 3: the closest absent sibling, the missing required ones first.
fn closest_sibling(
    at: &str,
    parent: &str,
    key: &str,
    siblings: &Siblings,
) -> Result<Option<Proposal>, String> {
    for candidates in [&siblings.missing_required, &siblings.absent] {
        match nearest::pick(key, candidates) {
            // A field named as this one's opposite takes the negated value, never this one.
            Pick::One(target, _) if crate::certainty::names_opposite(key, target) => {
                return Err(format!("{target} names the opposite of {key:?}"));
            }
            Pick::One(target, closeness) => {
                return Ok(Some(rename(at, parent, target, closeness)));
            }
            Pick::Ambiguous(names) => {
                return Err(format!(
                    "{key:?} is as close to {} as to {}",
                    names[0], names[1]
                ));
            }
            Pick::NoneClose => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "required": ["namespace", "source"], "properties": {
                "namespace": {"type": "string"},
                "install": {"type": "object", "properties": {"preflight": {"type": "object"}}},
                "source": {"type": "object", "properties": {
                    "sourceType": {"type": "string"},
                    "catalog": {"type": "object", "properties": {
                        "packageName": {"type": "string"},
                        "version": {"type": "string"}
                    }}
                }},
                "step": {"type": "integer"},
                "steps": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "version": {"type": "string"}
            }}
        }})
    }

    fn any(_: &str) -> bool {
        true
    }

    fn run(object: Value, at: &str) -> Result<Option<Proposal>, String> {
        let mut index = None;
        propose(&schema(), &object, at, &mut index, &any)
    }

    #[test]
    fn fields_written_together_one_level_high_go_to_the_object_that_takes_them_all() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"predictor": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "model": {"type": "object", "properties": {
                    "runtime": {"type": "string"}, "storageUri": {"type": "string"}}},
                "onnx": {"type": "object", "properties": {"storageUri": {"type": "string"}}}}}}}}});
        // (A place inside another list's items, as a canary list repeats the predictor, is
        // no place one level off.)
        let mut schema = schema;
        schema["properties"]["spec"]["properties"]["canary"] = json!({"type": "array",
            "items": {"type": "object", "properties": {
                "predictor": schema["properties"]["spec"]["properties"]["predictor"].clone()}}});
        let object = json!({"spec": {"predictor": {"replicas": 2,
            "runtime": "triton", "storageUri": "pvc://models/v3"}}});
        let mut index = None;
        let p = propose(
            &schema,
            &object,
            "/spec/predictor/storageUri",
            &mut index,
            &any,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.path, "/spec/predictor/model/storageUri");
        // Alone, the field could go to either object: nothing moves.
        let alone = json!({"spec": {"predictor": {"storageUri": "pvc://models/v3"}}});
        let p = propose(
            &schema,
            &alone,
            "/spec/predictor/storageUri",
            &mut None,
            &any,
        );
        assert!(!matches!(p, Ok(Some(ref p)) if p.rule == "move"));
    }

    #[test]
    fn renames_misspelt_keys() {
        let p = run(json!({"spec": {"sorce": {}}}), "/spec/sorce")
            .unwrap()
            .unwrap();
        assert_eq!(p.path, "/spec/source");
        assert!(matches!(p.edit, Edit::Move { ref from } if from == "/spec/sorce"));
        let p = run(json!({"spec": {"name_space": "a"}}), "/spec/name_space")
            .unwrap()
            .unwrap();
        assert_eq!(p.path, "/spec/namespace");
        assert!(p.reason.contains("same name"));
    }

    #[test]
    fn moves_to_the_unique_schema_path() {
        let o = json!({"spec": {"install": {"namespace": "a"}}});
        let p = run(o, "/spec/install/namespace").unwrap().unwrap();
        assert_eq!(p.path, "/spec/namespace");
        assert_eq!(p.rule, "move");
        let o = json!({"spec": {"source": {"packageName": "a"}}});
        let p = run(o, "/spec/source/packageName").unwrap().unwrap();
        assert_eq!(p.path, "/spec/source/catalog/packageName");
    }

    #[test]
    fn refuses_ambiguity_and_collisions() {
        let e = run(json!({"spec": {"stepz": 1}}), "/spec/stepz").unwrap_err();
        assert!(e.contains("as close"), "{e}");
        let e = run(
            json!({"spec": {"namespace": "a", "Namespace": "b"}}),
            "/spec/Namespace",
        )
        .unwrap_err();
        assert!(e.contains("collides"), "{e}");
        // "version" lives at two places: no move; and nothing close nearby.
        let o = json!({"spec": {"install": {"version": "1"}}});
        let e = run(o, "/spec/install/version").unwrap_err();
        assert!(e.contains("2 places"), "{e}");
        // Written beside the object that declares it, among several places: that object's.
        let o = json!({"spec": {"source": {"catalog": {}, "version": "1"}}});
        let p = run(o, "/spec/source/version").unwrap().unwrap();
        assert_eq!(p.path, "/spec/source/catalog/version");
        // Nothing to derive anything from.
        assert!(run(json!({"spec": {"zzzz": 1}}), "/spec/zzzz")
            .unwrap()
            .is_none());
        // The target is taken.
        let o = json!({"spec": {"namespace": "x", "install": {"namespace": "a"}}});
        assert!(run(o, "/spec/install/namespace").unwrap().is_none());
    }

    #[test]
    fn items_are_indexed_and_resolved_from_the_item_written_in() {
        let index = SchemaIndex::build(&schema());
        assert_eq!(index.paths("name"), ["/spec/steps/*/name"]);
        // Written in a neighbour inside the second item: that item's field.
        let o = json!({"spec": {"steps": [{}, {"extra": {"name": "b"}}]}});
        let p = run(o, "/spec/steps/1/extra/name").unwrap().unwrap();
        assert_eq!(p.path, "/spec/steps/1/name");
        // Written outside the list: which item is meant cannot be told.
        let o = json!({"spec": {"steps": [{}], "install": {"name": "b"}}});
        assert!(run(o, "/spec/install/name").unwrap().is_none());
        assert_eq!(
            resolve("/a/*/b/*/c", "/a/3/b/0/x/c").as_deref(),
            Some("/a/3/b/0/c")
        );
        assert_eq!(resolve("/a/*/b/*/c", "/a/3/d/0/c"), None);
        assert_eq!(resolve("/a/*/c", "/a/b/c"), None);
        assert_eq!(
            index.paths("packageName"),
            ["/spec/source/catalog/packageName"]
        );
    }
}
