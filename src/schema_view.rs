//! The part of a CRD's schema that one object touches, parsed from the raw JSON without the
//! rest: what the valid path needs, so that its cost follows the object, not the CRD.
//!
//! A large CRD (hundreds of kilobytes, most of it descriptions and branches the object does
//! not use) used to be parsed whole into a `Value` on every evaluation. Validation only ever
//! looks at the schema nodes the object reaches, plus, where a node carries CEL rules, the
//! node's whole subtree (a rule can name any field below it). A rule at a node no value reaches
//! never runs, and no rule is estimated per request (an inline CRD's rules were estimated when
//! the settings were validated). So the view keeps:
//! - every keyword of a node it keeps, except `description`;
//! - under `properties`, the properties the object (or the old object) has;
//! - `items`, `additionalProperties` and the combinators, narrowed to the values they govern;
//! - the key properties of a `map` list's items (an absent key takes its schema default);
//! - below a node with rules, everything but descriptions.
//!
//! It is built in one pass over the text (serde seeds): a property nobody touches is only
//! delimited, never parsed, and its text is remembered in case the node turns out to carry
//! rules or list-map keys (those keywords may come after `properties`), in which case it is
//! parsed after all.
//!
//! The result validates exactly as the full schema does (a test compares both over every
//! fixture and case). Repairs and the LLM read descriptions and absent fields' schemas: an
//! invalid object goes on with the full schema ([`crate::schema_source::RawSchema::full`]).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Deepest nesting narrowed; below it the schema is kept whole (descriptions included).
const MAX_DEPTH: usize = 128;

const RULES: &str = "x-kubernetes-validations";

/// The schema `schema` narrowed to what `values` (the object, and the old object on UPDATE)
/// touch. One pass over the text: what is not kept is skipped, not parsed.
pub fn touched_by(schema: &str, values: &[&Value]) -> serde_json::Result<Value> {
    narrow(schema, values, Keep::NARROWED, 0).map(|n| n.value)
}

/// [`touched_by`] as a seed, for a schema met while reading a larger document (the CRD).
#[derive(Clone, Copy)]
pub struct TouchedBy<'v> {
    pub values: &'v [&'v Value],
}

/// What a node keeps beyond what the values touch.
#[derive(Clone, Copy)]
struct Keep {
    /// Everything but descriptions (a node with rules, or below one).
    whole: bool,
}

impl Keep {
    const NARROWED: Keep = Keep { whole: false };
}

impl<'de> DeserializeSeed<'de> for TouchedBy<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Node {
            values: self.values,
            keep: Keep::NARROWED,
            depth: 0,
        }
        .deserialize(deserializer)
        .map(|n| n.value)
    }
}

/// A property left out, by its path from the node that left it out (`properties`, the name;
/// `items`, `properties`, the name; …), with its text: an ancestor that turns out to carry
/// CEL rules (the key may come after `properties`) or list-map keys puts it back.
type Skipped<'de> = Vec<(Vec<String>, &'de RawValue)>;

struct Narrowed<'de> {
    value: Value,
    skipped: Skipped<'de>,
}

fn narrow<'de>(
    text: &'de str,
    values: &[&Value],
    keep: Keep,
    depth: usize,
) -> serde_json::Result<Narrowed<'de>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let narrowed = Node {
        values,
        keep,
        depth,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(narrowed)
}

fn prefixed<'de>(into: &mut Skipped<'de>, skipped: Skipped<'de>, prefix: &[&str]) {
    into.extend(skipped.into_iter().map(|(path, raw)| {
        let mut full: Vec<String> = prefix.iter().map(|p| p.to_string()).collect();
        full.extend(path);
        (full, raw)
    }));
}

/// Puts `value` at `path` (every step but the last exists: the node that skipped it).
fn insert_at(node: &mut Value, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = node;
    for token in parents {
        let next = match node {
            Value::Object(map) => map.get_mut(token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    if let Value::Object(map) = node {
        map.insert(last.clone(), value);
    }
}

/// The visitor methods for a value that is not what the seed narrows (a schema written
/// oddly): kept as it is, as the whole schema's parse would keep it.
macro_rules! plain_scalars {
    () => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Narrowed<'de>, E> {
            Ok(kept(Value::Bool(v)))
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Narrowed<'de>, E> {
            Ok(kept(Value::from(v)))
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Narrowed<'de>, E> {
            Ok(kept(Value::from(v)))
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Narrowed<'de>, E> {
            Ok(kept(Value::from(v)))
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<Narrowed<'de>, E> {
            Ok(kept(Value::String(v.to_string())))
        }

        fn visit_string<E: de::Error>(self, v: String) -> Result<Narrowed<'de>, E> {
            Ok(kept(Value::String(v)))
        }

        fn visit_unit<E: de::Error>(self) -> Result<Narrowed<'de>, E> {
            Ok(kept(Value::Null))
        }
    };
}

/// [`plain_scalars`] for a list.
macro_rules! plain_list {
    () => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Narrowed<'de>, A::Error> {
            Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(kept)
        }
    };
}

/// One schema node, as a seed: narrowed while it is read.
struct Node<'v> {
    values: &'v [&'v Value],
    keep: Keep,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Narrowed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Narrowed<'de>, D::Error> {
        if self.depth > MAX_DEPTH {
            return Value::deserialize(deserializer).map(kept);
        }
        deserializer.deserialize_any(self)
    }
}

fn kept<'de>(value: Value) -> Narrowed<'de> {
    Narrowed {
        value,
        skipped: Vec::new(),
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Narrowed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON schema node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Narrowed<'de>, A::Error> {
        let mut out = Map::new();
        let mut skipped = Vec::new();
        let mut has_rules = false;
        let depth = self.depth + 1;
        while let Some(key) = map.next_key::<String>()? {
            let child = |values| Node {
                values,
                keep: self.keep,
                depth,
            };
            let value = match key.as_str() {
                "description" => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
                "properties" => {
                    let n = map.next_value_seed(Properties {
                        values: self.values,
                        keep: self.keep,
                        depth,
                    })?;
                    prefixed(&mut skipped, n.skipped, &["properties"]);
                    n.value
                }
                "items" => {
                    let n = map.next_value_seed(child(&elements(self.values)))?;
                    prefixed(&mut skipped, n.skipped, &["items"]);
                    n.value
                }
                "additionalProperties" => {
                    let n = map.next_value_seed(child(&entries(self.values)))?;
                    prefixed(&mut skipped, n.skipped, &["additionalProperties"]);
                    n.value
                }
                "not" => {
                    let n = map.next_value_seed(child(self.values))?;
                    prefixed(&mut skipped, n.skipped, &["not"]);
                    n.value
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let n = map.next_value_seed(Branches {
                        values: self.values,
                        keep: self.keep,
                        depth,
                    })?;
                    prefixed(&mut skipped, n.skipped, &[key.as_str()]);
                    n.value
                }
                RULES => {
                    has_rules = true;
                    map.next_value::<Value>()?
                }
                _ => map.next_value::<Value>()?,
            };
            out.insert(key, value);
        }
        let mut value = Value::Object(out);
        let map_keys: Vec<String> = crate::schema::list_map_keys(&value)
            .into_iter()
            .map(str::to_string)
            .collect();
        let skipped = restore(
            &mut value,
            skipped,
            Keep {
                whole: has_rules && !self.keep.whole,
            },
            &map_keys,
            depth,
        )
        .map_err(de::Error::custom)?;
        Ok(Narrowed { value, skipped })
    }

    plain_list!();

    plain_scalars!();
}

/// Puts back into `node` what its properties skipped but the node turns out to need (its
/// `x-kubernetes-validations` and `x-kubernetes-list-map-keys` may come after `properties`):
/// everything when it carries rules (`whole`), else a `map` list's item keys. The rest stays
/// skipped, for an ancestor with rules.
fn restore<'de>(
    node: &mut Value,
    skipped: Skipped<'de>,
    keep: Keep,
    map_keys: &[String],
    depth: usize,
) -> serde_json::Result<Skipped<'de>> {
    let whole = keep.whole;
    let mut left = Vec::new();
    for (path, raw) in skipped {
        let map_key = path.len() == 3
            && path[0] == "items"
            && path[1] == "properties"
            && map_keys.contains(&path[2]);
        if !(whole || map_key) {
            left.push((path, raw));
            continue;
        }
        let n = narrow(raw.get(), &[], keep, depth + path.len())?;
        insert_at(node, &path, n.value);
        let prefix: Vec<&str> = path.iter().map(String::as_str).collect();
        prefixed(&mut left, n.skipped, &prefix);
    }
    Ok(left)
}

/// A node's `properties`: the ones the values have (or all, under a node with rules) are
/// narrowed in place; a property whose text holds a rule is kept (the API server's cost limit
/// counts every rule of the CRD; the text search may also match a description, which only
/// keeps a little more); the others are skipped, their text remembered.
struct Properties<'v> {
    values: &'v [&'v Value],
    keep: Keep,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Properties<'_> {
    type Value = Narrowed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Narrowed<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Properties<'_> {
    type Value = Narrowed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON schema's properties")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Narrowed<'de>, A::Error> {
        let mut out = Map::new();
        let mut skipped = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            let children: Vec<&Value> = self
                .values
                .iter()
                .filter_map(|v| v.as_object()?.get(&name))
                .collect();
            let n = if self.keep.whole || !children.is_empty() {
                map.next_value_seed(Node {
                    values: &children,
                    keep: self.keep,
                    depth: self.depth,
                })?
            } else {
                let raw: &'de RawValue = map.next_value()?;
                skipped.push((vec![name], raw));
                continue;
            };
            prefixed(&mut skipped, n.skipped, &[name.as_str()]);
            out.insert(name, n.value);
        }
        Ok(Narrowed {
            value: Value::Object(out),
            skipped,
        })
    }

    plain_list!();

    plain_scalars!();
}

/// The branches of `allOf`, `anyOf`, `oneOf`: each narrowed like its node.
struct Branches<'v> {
    values: &'v [&'v Value],
    keep: Keep,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Branches<'_> {
    type Value = Narrowed<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Narrowed<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Branches<'_> {
    type Value = Narrowed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of JSON schemas")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Narrowed<'de>, A::Error> {
        let mut items = Vec::new();
        let mut skipped = Vec::new();
        while let Some(n) = seq.next_element_seed(Node {
            values: self.values,
            keep: self.keep,
            depth: self.depth,
        })? {
            let index = items.len().to_string();
            prefixed(&mut skipped, n.skipped, &[index.as_str()]);
            items.push(n.value);
        }
        Ok(Narrowed {
            value: Value::Array(items),
            skipped,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Narrowed<'de>, A::Error> {
        Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(kept)
    }

    plain_scalars!();
}

fn elements<'v>(values: &[&'v Value]) -> Vec<&'v Value> {
    values
        .iter()
        .filter_map(|v| v.as_array())
        .flatten()
        .collect()
}

fn entries<'v>(values: &[&'v Value]) -> Vec<&'v Value> {
    values
        .iter()
        .filter_map(|v| v.as_object())
        .flat_map(|m| m.values())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(schema: &Value, object: &Value) -> Value {
        touched_by(&schema.to_string(), &[object]).unwrap()
    }

    #[test]
    fn keeps_what_the_object_touches_and_drops_descriptions() {
        let schema = json!({
            "type": "object",
            "description": "root",
            "required": ["spec"],
            "properties": {
                "spec": {"type": "object", "description": "spec", "properties": {
                    "used": {"type": "string", "maxLength": 3, "description": "d"},
                    "unused": {"type": "object", "properties": {"deep": {"type": "string"}}},
                    "list": {"type": "array", "items": {"type": "object", "properties": {
                        "a": {"type": "integer"}, "b": {"type": "integer"}}}},
                    "map": {"type": "object", "additionalProperties": {"type": "object",
                        "properties": {"x": {"type": "string"}, "y": {"type": "string"}}}}
                }}
            }
        });
        let object = json!({"spec": {"used": "abc", "list": [{"a": 1}], "map": {"k": {"y": "v"}}}});
        assert_eq!(
            view(&schema, &object),
            json!({
                "type": "object",
                "required": ["spec"],
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "used": {"type": "string", "maxLength": 3},
                        "list": {"type": "array", "items": {"type": "object", "properties": {
                            "a": {"type": "integer"}}}},
                        "map": {"type": "object", "additionalProperties": {"type": "object",
                            "properties": {"y": {"type": "string"}}}}
                    }}
                }
            })
        );
    }

    #[test]
    fn a_node_with_rules_keeps_its_subtree() {
        let schema = json!({
            "type": "object",
            "properties": {
                "ruled": {"type": "object",
                    "x-kubernetes-validations": [{"rule": "has(self.absent) || true"}],
                    "properties": {"absent": {"type": "string", "description": "gone"},
                                   "present": {"type": "string"}}},
                "elsewhere": {"type": "object", "properties": {
                    "deep": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]},
                    "plain": {"type": "string"}}},
                "untouched": {"type": "string"}
            }
        });
        let object = json!({"ruled": {"present": "x"}});
        assert_eq!(
            view(&schema, &object),
            json!({
                "type": "object",
                "properties": {
                    "ruled": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "has(self.absent) || true"}],
                        "properties": {"absent": {"type": "string"},
                                       "present": {"type": "string"}}}
                }
            })
        );
    }

    #[test]
    fn from_the_cluster_rules_elsewhere_are_not_kept() {
        let schema = json!({
            "type": "object",
            "properties": {
                "ruled": {"type": "object",
                    "x-kubernetes-validations": [{"rule": "has(self.absent) || true"}],
                    "properties": {"absent": {"type": "string"}}},
                "elsewhere": {"type": "object", "properties": {
                    "deep": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]}}}
            }
        });
        let object = json!({"ruled": {}});
        assert_eq!(
            touched_by(&schema.to_string(), &[&object]).unwrap(),
            json!({
                "type": "object",
                "properties": {
                    "ruled": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "has(self.absent) || true"}],
                        "properties": {"absent": {"type": "string"}}}
                }
            })
        );
    }

    #[test]
    fn the_keys_of_a_map_list_are_kept_for_their_defaults() {
        let schema = json!({"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "protocol"],
            "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "protocol": {"type": "string", "default": "TCP"},
                "other": {"type": "string"}}}});
        let object = json!([{"name": "a"}]);
        assert_eq!(
            view(&schema, &object),
            json!({"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "protocol"],
                "items": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "protocol": {"type": "string", "default": "TCP"}}}})
        );
    }

    #[test]
    fn a_property_named_description_is_a_property() {
        let schema = json!({"type": "object", "properties": {
            "description": {"type": "string", "description": "the text"}}});
        let object = json!({"description": "hello"});
        assert_eq!(
            view(&schema, &object),
            json!({"type": "object", "properties": {"description": {"type": "string"}}})
        );
    }

    #[test]
    fn combinators_are_narrowed_like_their_node() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "oneOf": [{"required": ["a"], "properties": {"a": {"minLength": 1}, "b": {"maxLength": 1}}},
                      {"required": ["b"]}],
            "not": {"properties": {"b": {"type": "string"}}}});
        let object = json!({"a": "x"});
        assert_eq!(
            view(&schema, &object),
            json!({"type": "object", "properties": {"a": {"type": "string"}},
                "oneOf": [{"required": ["a"], "properties": {"a": {"minLength": 1}}},
                          {"required": ["b"]}],
                "not": {"properties": {}}})
        );
    }

    /// Every case the project has (the deterministic corpus and the LLM cases, over all the
    /// fixture CRDs), and each with one leaf at a time made a string, a number and null: the
    /// view must give the very errors and warnings the whole schema gives.
    #[test]
    fn the_view_validates_as_the_whole_schema_on_every_case() {
        use crate::validation::{validate, ValidateOptions};
        let root = env!("CARGO_MANIFEST_DIR");
        let mut compared = 0;
        for dir in ["e2e-tests/corpus", "e2e-tests/llm-cases"] {
            let mut files: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
                .expect("cases")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            files.sort();
            for file in files {
                let case: Value =
                    serde_json::from_str(&std::fs::read_to_string(&file).expect("case"))
                        .expect("json");
                let (Some(crd), Some(object)) = (case["crd"].as_str(), case.get("object")) else {
                    continue;
                };
                let fixture = format!("{crd}.yaml");
                if !std::path::Path::new(&format!("{root}/e2e-tests/fixtures/crds/{fixture}"))
                    .exists()
                {
                    continue;
                }
                let version = object["apiVersion"]
                    .as_str()
                    .and_then(|v| v.rsplit('/').next())
                    .expect("apiVersion");
                let full = crate::fixtures::schema(&fixture, version);
                let text = full.to_string();
                let document = crate::fixtures::crd_json(&fixture);
                let old = case.get("oldObject").filter(|o| o.is_object());
                for variant in variants(object) {
                    let values: Vec<&Value> = std::iter::once(&variant).chain(old).collect();
                    let view = touched_by(&text, &values).expect("view");
                    // The same view read straight from the CRD document.
                    assert_eq!(
                        crate::crd::touched_schema(crd, &document, version, &values)
                            .expect("view from the document"),
                        view
                    );
                    for options in [
                        ValidateOptions::STRICT,
                        ValidateOptions {
                            report_unknown_fields: false,
                        },
                    ] {
                        let (by_view, by_full) = (
                            validate(&view, &variant, old, options),
                            validate(&full, &variant, old, options),
                        );
                        // An invalid object whose warnings may read otherwise is validated
                        // again against the whole schema (`pipeline::check`): the view left
                        // out rules the object, once corrected, may reach.
                        let may_differ =
                            crate::validation::may_differ_on_the_whole_schema(&by_view);
                        if by_full.is_valid() || !may_differ {
                            assert_eq!(
                                by_view,
                                by_full,
                                "{} ({options:?}): {variant}",
                                file.display()
                            );
                        } else {
                            assert_eq!(
                                by_view.errors,
                                by_full.errors,
                                "{} ({options:?}): {variant}",
                                file.display()
                            );
                        }
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 1000, "only {compared} comparisons");
    }

    /// The object, and for each of its first leaves the object with that leaf replaced.
    fn variants(object: &Value) -> Vec<Value> {
        let mut leaves = Vec::new();
        collect_leaves(object, String::new(), &mut leaves);
        let mut out = vec![object.clone()];
        for pointer in leaves.iter().take(24) {
            for replacement in [json!("x"), json!(7), Value::Null] {
                let mut variant = object.clone();
                if let Some(leaf) = variant.pointer_mut(pointer) {
                    *leaf = replacement;
                    out.push(variant);
                }
            }
        }
        out
    }

    fn collect_leaves(value: &Value, pointer: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (k, v) in map {
                    let token = k.replace('~', "~0").replace('/', "~1");
                    collect_leaves(v, format!("{pointer}/{token}"), out);
                }
            }
            Value::Array(items) if !items.is_empty() => {
                for (i, v) in items.iter().enumerate() {
                    collect_leaves(v, format!("{pointer}/{i}"), out);
                }
            }
            _ if !pointer.starts_with("/apiVersion") && !pointer.starts_with("/kind") => {
                out.push(pointer)
            }
            _ => {}
        }
    }
}
