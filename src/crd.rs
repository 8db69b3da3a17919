//! Reading a CustomResourceDefinition document lightly: group, names and each version's name
//! and `served` flag; the schema of the matching version is left unparsed. Used
//! by the settings (inline CRDs are checked when the policy loads) and by the schema source.

use serde::Deserialize;
use serde_json::value::RawValue;

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

#[derive(Deserialize, Default)]
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

/// Checks one inline CRD document from the settings (cheaply: no full schema walk).
pub fn check_inline_crd(raw: &str) -> Result<(), String> {
    let crd = parse_light(raw).map_err(|e| format!("not a CustomResourceDefinition: {e}"))?;
    check_light(&crd)
}

pub(crate) fn check_light(crd: &LightCrd<'_>) -> Result<(), String> {
    if crd.kind.as_deref() != Some("CustomResourceDefinition") {
        return Err(format!(
            "kind is {:?}, expected \"CustomResourceDefinition\"",
            crd.kind.as_deref().unwrap_or_default()
        ));
    }
    if let Some(av) = crd.api_version.as_deref() {
        if !av.starts_with("apiextensions.k8s.io/") {
            return Err(format!(
                "apiVersion is {av:?}, expected \"apiextensions.k8s.io/v1\""
            ));
        }
    }
    let spec = crd.spec.as_ref().ok_or("spec is missing")?;
    if spec.group.is_empty() {
        return Err("spec.group is missing".into());
    }
    if spec.names.kind.is_empty() {
        return Err("spec.names.kind is missing".into());
    }
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
