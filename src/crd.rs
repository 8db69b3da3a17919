//! Reading a CustomResourceDefinition document lightly: group, names and each version's name
//! and `served` flag; the schema of the matching version is left unparsed. Used
//! by the settings (inline CRDs are checked when the policy loads) and by the schema source.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::schema_view::{self, TouchedBy};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SchemaError {
    #[error("CustomResourceDefinition {0} not found")]
    NotFound(String),
    #[error("CustomResourceDefinition {crd} does not serve version {version}")]
    VersionNotServed { crd: String, version: String },
    #[error("CustomResourceDefinition {0} has no openAPIV3Schema for the requested version")]
    NoSchema(String),
    #[error("could not read CustomResourceDefinition {crd}: {message}")]
    HostCall { crd: String, message: String },
    #[error("CustomResourceDefinition {crd} is malformed: {message}")]
    Malformed { crd: String, message: String },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LightCrd<'a> {
    #[serde(default)]
    pub(crate) api_version: Option<String>,
    #[serde(default)]
    pub(crate) kind: Option<String>,
    #[serde(borrow)]
    pub(crate) spec: Option<LightSpec<'a>>,
}

#[derive(Deserialize)]
pub(crate) struct LightSpec<'a> {
    #[serde(default)]
    pub(crate) group: String,
    #[serde(default)]
    pub(crate) names: LightNames,
    #[serde(default, borrow)]
    versions: Vec<LightVersion<'a>>,
}

#[derive(Debug, Deserialize, Default)]
pub(crate) struct LightNames {
    #[serde(default)]
    pub(crate) kind: String,
    #[serde(default)]
    pub(crate) plural: String,
}

#[derive(Deserialize)]
struct LightVersion<'a> {
    #[serde(default)]
    name: String,
    #[serde(default)]
    served: bool,
    #[serde(default, borrow)]
    schema: Option<LightSchema<'a>>,
}

#[derive(Deserialize)]
struct LightSchema<'a> {
    #[serde(rename = "openAPIV3Schema", borrow)]
    open_api_v3_schema: Option<&'a RawValue>,
}

pub(crate) fn parse_light(raw: &str) -> Result<LightCrd<'_>, String> {
    serde_json::from_str(raw).map_err(|e| e.to_string())
}

pub(crate) fn crd_name(spec: &LightSpec) -> String {
    format!("{}.{}", spec.names.plural, spec.group)
}

/// Checks one inline CRD document from the settings: its shape, and that the API server
/// would accept its rules ([`check_rule_costs`]).
pub fn check_inline_crd(raw: &str) -> Result<(), String> {
    let crd = parse_light(raw).map_err(|e| format!("not a CustomResourceDefinition: {e}"))?;
    check_light(&crd)?;
    check_rule_costs(&crd)
}

/// At most this many refused rules are named in the settings' error.
const REFUSALS_NAMED: usize = 3;

/// The API server estimates the cost of every CEL rule when a CRD is written and refuses the
/// CRD when a rule, or all of them together, goes over its limits. An inline CRD it would
/// refuse could never be installed, so the settings are refused with its words; every CRD a
/// request is then evaluated against passed those estimates, and each of its rules is
/// evaluated (bounded per call and per object, as by the API server).
fn check_rule_costs(crd: &LightCrd<'_>) -> Result<(), String> {
    let Some(spec) = crd.spec.as_ref() else {
        return Ok(());
    };
    for (i, version) in spec.versions.iter().enumerate() {
        let Some(raw) = version.schema.as_ref().and_then(|s| s.open_api_v3_schema) else {
            continue;
        };
        let schema: Value = serde_json::from_str(raw.get())
            .map_err(|e| format!("spec.versions[{i}].schema.openAPIV3Schema: {e}"))?;
        let refused = crate::validation::refused_rules(&schema);
        if refused.is_empty() {
            continue;
        }
        let named: Vec<String> = refused
            .iter()
            .take(REFUSALS_NAMED)
            .map(|r| {
                format!(
                    "the rule at {} (x-kubernetes-validations[{}]: {}): {}",
                    r.path,
                    r.index,
                    crate::text::one_line(&r.rule, 200),
                    r.why
                )
            })
            .collect();
        let more = match refused.len().saturating_sub(REFUSALS_NAMED) {
            0 => String::new(),
            n => format!("; and {n} more"),
        };
        return Err(format!(
            "the API server would refuse this CustomResourceDefinition ({}, version {}): {}{more}",
            crd_name(spec),
            version.name,
            named.join("; ")
        ));
    }
    Ok(())
}

pub(crate) fn check_light(crd: &LightCrd<'_>) -> Result<(), String> {
    let spec = crd.spec.as_ref();
    check_head(&CrdHead {
        api_version: crd.api_version.clone(),
        kind: crd.kind.clone(),
        group: spec.map(|s| s.group.clone()).unwrap_or_default(),
        names: LightNames {
            kind: spec.map(|s| s.names.kind.clone()).unwrap_or_default(),
            plural: String::new(),
        },
        spec: spec.is_some(),
    })?;
    let spec = crd.spec.as_ref().ok_or("spec is missing")?;
    if spec.versions.is_empty() {
        return Err("spec.versions is empty".into());
    }
    for (i, v) in spec.versions.iter().enumerate() {
        if v.name.is_empty() {
            return Err(format!("spec.versions[{i}].name is missing"));
        }
    }
    if !spec.versions.iter().any(|v| {
        v.schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema)
            .is_some_and(|s| s.get().trim_start().starts_with('{'))
    }) {
        return Err(format!(
            "no version of {} has a schema.openAPIV3Schema object",
            spec.names.kind
        ));
    }
    Ok(())
}

/// What matching a CRD document to a request needs: its kind, group and names.
#[derive(Debug, Default)]
pub(crate) struct CrdHead {
    pub(crate) api_version: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) group: String,
    pub(crate) names: LightNames,
    /// The document has a `spec`.
    pub(crate) spec: bool,
}

impl CrdHead {
    /// `<plural>.<group>`, the CRD's name.
    pub(crate) fn name(&self) -> String {
        format!("{}.{}", self.names.plural, self.group)
    }
}

/// The checks of [`check_light`] that the head answers.
pub(crate) fn check_head(head: &CrdHead) -> Result<(), String> {
    if head.kind.as_deref() != Some("CustomResourceDefinition") {
        return Err(format!(
            "kind is {:?}, expected \"CustomResourceDefinition\"",
            head.kind.as_deref().unwrap_or_default()
        ));
    }
    if let Some(av) = head.api_version.as_deref() {
        if !av.starts_with("apiextensions.k8s.io/") {
            return Err(format!(
                "apiVersion is {av:?}, expected \"apiextensions.k8s.io/v1\""
            ));
        }
    }
    if !head.spec {
        return Err("spec is missing".into());
    }
    if head.group.is_empty() {
        return Err("spec.group is missing".into());
    }
    if head.names.kind.is_empty() {
        return Err("spec.names.kind is missing".into());
    }
    Ok(())
}

/// Ends the read of a head once everything in it is known: serde has no early return, so an
/// error with these words stops the reader, and [`head`] knows it for what it is. The versions
/// and their schemas (nearly all of a CRD's bytes) come after the head in the order both
/// kubectl's JSON and YAML manifests write them, and are then not read at all.
const HEAD_READ: &str = "crfix: the head of the CRD is read";

/// The head of a CRD document (see [`CrdHead`]), read no further than it needs.
pub(crate) fn head(raw: &str) -> Result<CrdHead, String> {
    let mut head = CrdHead::default();
    let mut de = serde_json::Deserializer::from_str(raw);
    match HeadSeed(&mut head).deserialize(&mut de) {
        Ok(()) => Ok(head),
        Err(e) if e.to_string().starts_with(HEAD_READ) => Ok(head),
        Err(e) => Err(e.to_string()),
    }
}

struct HeadSeed<'h>(&'h mut CrdHead);

impl<'de> DeserializeSeed<'de> for HeadSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for HeadSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CustomResourceDefinition")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => self.0.api_version = map.next_value()?,
                "kind" => self.0.kind = map.next_value()?,
                "spec" => {
                    self.0.spec = true;
                    map.next_value_seed(SpecHead(&mut *self.0))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct SpecHead<'h>(&'h mut CrdHead);

impl<'de> DeserializeSeed<'de> for SpecHead<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SpecHead<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CustomResourceDefinition's spec")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "group" => self.0.group = map.next_value()?,
                "names" => self.0.names = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            let known = self.0.kind.is_some()
                && self.0.api_version.is_some()
                && !self.0.group.is_empty()
                && !self.0.names.kind.is_empty();
            if known {
                return Err(de::Error::custom(HEAD_READ));
            }
        }
        Ok(())
    }
}

/// The `openAPIV3Schema` of `version`, unparsed (checked to be a JSON object).
pub(crate) fn schema_of<'a>(
    spec: &LightSpec<'a>,
    version: &str,
) -> Result<&'a RawValue, SchemaError> {
    let crd = crd_name(spec);
    let Some(v) = spec.versions.iter().find(|v| v.name == version) else {
        return Err(SchemaError::VersionNotServed {
            crd,
            version: version.to_string(),
        });
    };
    if !v.served {
        return Err(SchemaError::VersionNotServed {
            crd,
            version: version.to_string(),
        });
    }
    let raw = v
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema)
        .ok_or_else(|| SchemaError::NoSchema(crd.clone()))?;
    if !raw.get().trim_start().starts_with('{') {
        return Err(SchemaError::Malformed {
            crd,
            message: "openAPIV3Schema is not an object".into(),
        });
    }
    Ok(raw)
}

/// The `openAPIV3Schema` of `version`, narrowed to what `values` touch ([`schema_view`]), in one
/// pass over the CRD document: the version is found and its schema narrowed while the text is
/// read (a version's `name` comes before its `schema` in what the API server serves and in
/// sorted JSON; otherwise the schema's text is narrowed once the name is known). The same
/// errors as [`schema_of`].
pub(crate) fn touched_schema(
    crd: &str,
    document: &str,
    version: &str,
    values: &[&Value],
) -> Result<Value, SchemaError> {
    let malformed = |message: String| SchemaError::Malformed {
        crd: crd.to_string(),
        message,
    };
    let mut de = serde_json::Deserializer::from_str(document);
    let read = Document {
        version,
        values,
        wanted: None,
    }
    .deserialize(&mut de)
    .and_then(|read| de.end().map(|()| read))
    .map_err(|e| malformed(e.to_string()))?;
    if !read.head.spec {
        return Err(malformed("spec is missing".into()));
    }
    pick_version(crd, version, read.versions.unwrap_or_default())
}

/// The schema of `version` among the versions one pass found, or why there is none.
pub(crate) fn pick_version(
    crd: &str,
    version: &str,
    versions: Vec<FoundVersion>,
) -> Result<Value, SchemaError> {
    let Some(wanted) = versions.into_iter().find(|v| v.name == version) else {
        return Err(SchemaError::VersionNotServed {
            crd: crd.to_string(),
            version: version.to_string(),
        });
    };
    if !wanted.served {
        return Err(SchemaError::VersionNotServed {
            crd: crd.to_string(),
            version: version.to_string(),
        });
    }
    match wanted.schema {
        Some(schema) if schema.is_object() => Ok(schema),
        Some(Value::Null) | None => Err(SchemaError::NoSchema(crd.to_string())),
        Some(_) => Err(SchemaError::Malformed {
            crd: crd.to_string(),
            message: "openAPIV3Schema is not an object".into(),
        }),
    }
}

/// A version as the one pass found it: its schema only if it is the wanted one.
#[derive(Debug)]
pub(crate) struct FoundVersion {
    name: String,
    served: bool,
    schema: Option<Value>,
}

/// Which CRD a request needs: its group, and its kind or (without one) its plural.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted<'a> {
    pub(crate) group: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) plural: &'a str,
}

impl Wanted<'_> {
    /// `<kind>.<group>`, or `<plural>.<group>` without a kind: what the request asks for.
    pub(crate) fn describe(&self) -> String {
        let what = if self.kind.is_empty() {
            self.plural
        } else {
            self.kind
        };
        format!("{what}.{}", self.group)
    }

    pub(crate) fn matches(&self, head: &CrdHead) -> bool {
        head.group == self.group
            && if self.kind.is_empty() {
                head.names.plural == self.plural
            } else {
                head.names.kind == self.kind
            }
    }
}

/// What one pass over a CRD document read: its head, and its versions when they were narrowed
/// (always without a [`Wanted`]; with one, only when the head matched before the versions).
#[derive(Debug, Default)]
pub(crate) struct ReadCrd {
    pub(crate) head: CrdHead,
    pub(crate) versions: Option<Vec<FoundVersion>>,
    /// The versions came before the group and names: whether they match was not known in time.
    pub(crate) versions_first: bool,
}

/// The CRD document; with `wanted`, the versions are narrowed only if the document is that CRD.
pub(crate) struct Document<'a> {
    pub(crate) version: &'a str,
    pub(crate) values: &'a [&'a Value],
    pub(crate) wanted: Option<Wanted<'a>>,
}

impl<'de> DeserializeSeed<'de> for Document<'_> {
    type Value = ReadCrd;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Document<'_> {
    type Value = ReadCrd;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CustomResourceDefinition")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut read = ReadCrd::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => read.head.api_version = map.next_value()?,
                "kind" => read.head.kind = map.next_value()?,
                "spec" => {
                    read.head.spec = true;
                    map.next_value_seed(Spec {
                        document: &self,
                        read: &mut read,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(read)
    }
}

struct Spec<'a, 'r> {
    document: &'a Document<'a>,
    read: &'r mut ReadCrd,
}

impl<'de> DeserializeSeed<'de> for Spec<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Spec<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CustomResourceDefinition's spec")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Spec { document, read } = self;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "group" => read.head.group = map.next_value()?,
                "names" => read.head.names = map.next_value()?,
                "versions" => {
                    let narrow = match document.wanted {
                        None => true,
                        Some(_)
                            if read.head.group.is_empty() || read.head.names.kind.is_empty() =>
                        {
                            read.versions_first = true;
                            false
                        }
                        Some(wanted) => wanted.matches(&read.head),
                    };
                    if narrow {
                        read.versions = Some(map.next_value_seed(Versions {
                            version: document.version,
                            values: document.values,
                        })?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct Versions<'a> {
    version: &'a str,
    values: &'a [&'a Value],
}

impl<'de> DeserializeSeed<'de> for Versions<'_> {
    type Value = Vec<FoundVersion>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Versions<'_> {
    type Value = Vec<FoundVersion>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of versions")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = Vec::new();
        while let Some(v) = seq.next_element_seed(Version {
            version: self.version,
            values: self.values,
        })? {
            found.push(v);
        }
        Ok(found)
    }
}

struct Version<'a> {
    version: &'a str,
    values: &'a [&'a Value],
}

impl<'de> DeserializeSeed<'de> for Version<'_> {
    type Value = FoundVersion;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Version<'_> {
    type Value = FoundVersion;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a version")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut name: Option<String> = None;
        let mut served = false;
        let mut schema = None;
        // The schema's text, when it came before the version's name.
        let mut deferred: Option<&'de RawValue> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => name = Some(map.next_value()?),
                "served" => served = map.next_value()?,
                "schema" => match name.as_deref() {
                    Some(n) if n == self.version => {
                        schema = map.next_value_seed(VersionSchema(TouchedBy {
                            values: self.values,
                        }))?;
                    }
                    Some(_) => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    None => deferred = Some(map.next_value()?),
                },
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let name = name.unwrap_or_default();
        if let Some(raw) = deferred.filter(|_| name == self.version) {
            let light: LightSchema = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
            schema = match light.open_api_v3_schema {
                Some(text) => Some(
                    schema_view::touched_by(text.get(), self.values).map_err(de::Error::custom)?,
                ),
                None => None,
            };
        }
        Ok(FoundVersion {
            name,
            served,
            schema,
        })
    }
}

/// A version's `schema`: its `openAPIV3Schema`, narrowed.
struct VersionSchema<'a>(TouchedBy<'a>);

impl<'de> DeserializeSeed<'de> for VersionSchema<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for VersionSchema<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a version's schema")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut schema = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "openAPIV3Schema" {
                schema = Some(map.next_value_seed(self.0)?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(schema)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(versions: Value) -> String {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"},
                        "versions": versions}})
        .to_string()
    }

    fn schema() -> Value {
        json!({"type": "object", "description": "d", "properties": {
            "spec": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}}})
    }

    #[test]
    fn the_head_is_read_no_further_than_it_needs() {
        let head_first = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [ this is never read"#;
        let h = head(head_first).unwrap();
        assert_eq!(
            (h.group.as_str(), h.names.kind.as_str()),
            ("example.com", "Widget")
        );
        assert_eq!(h.name(), "widgets.example.com");
        assert!(check_head(&h).is_ok());
        // `kind` after `spec`: read to the end, and a broken document is named as broken.
        let kind_last = r#"{"spec": {"group": "example.com", "names": {"kind": "Widget"},
            "versions": []}, "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}"#;
        let h = head(kind_last).unwrap();
        assert!(check_head(&h).is_ok(), "{h:?}");
        assert!(head(r#"{"kind": "CustomResourceDefinition", "spec": [1"#).is_err());
        let h = head(r#"{"kind": "ConfigMap"}"#).unwrap();
        assert!(check_head(&h).unwrap_err().contains("ConfigMap"));
    }

    #[test]
    fn the_one_pass_finds_the_version_whatever_the_key_order() {
        let object = json!({"spec": {"a": "x"}});
        let expected = schema_view::touched_by(&schema().to_string(), &[&object]).unwrap();
        let sorted = crd(json!([
            {"name": "v1", "served": true, "schema": {"openAPIV3Schema": schema()}},
            {"name": "v2", "served": true, "schema": {"openAPIV3Schema": {"type": "string"}}}]));
        assert_eq!(
            touched_schema("things.example.com", &sorted, "v1", &[&object]).unwrap(),
            expected
        );
        // The schema before the name: its text is narrowed once the name is known.
        let schema_first = sorted.replace(r#"{"name":"v1","schema":"#, r#"{"schema":"#);
        let schema_first =
            schema_first.replacen(r#","served":true}"#, r#","name":"v1","served":true}"#, 1);
        assert!(
            schema_first.find(r#""schema""#) < schema_first.find(r#""name":"v1""#),
            "{schema_first}"
        );
        assert_eq!(
            touched_schema("things.example.com", &schema_first, "v1", &[&object]).unwrap(),
            expected
        );
    }

    #[test]
    fn the_one_pass_fails_as_the_light_read_does() {
        let object = json!({});
        let document = crd(json!([
            {"name": "v1", "served": false, "schema": {"openAPIV3Schema": schema()}},
            {"name": "v2", "served": true},
            {"name": "v3", "served": true, "schema": {"openAPIV3Schema": "text"}}]));
        for version in ["v1", "v2", "v3", "v9"] {
            let light = parse_light(&document).unwrap();
            let expected = schema_of(light.spec.as_ref().unwrap(), version).unwrap_err();
            assert_eq!(
                touched_schema("things.example.com", &document, version, &[&object]).unwrap_err(),
                expected,
                "{version}"
            );
        }
        assert!(matches!(
            touched_schema("things.example.com", r#"{"kind":"x"}"#, "v1", &[&object]),
            Err(SchemaError::Malformed { .. })
        ));
        assert!(matches!(
            touched_schema("things.example.com", "{not json", "v1", &[&object]),
            Err(SchemaError::Malformed { .. })
        ));
    }
}
