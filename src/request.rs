//! The `validate` payload: `{"request": <AdmissionRequest>, "settings": <settings>}`.
//! Only the fields crfix uses are parsed.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GroupVersionResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub resource: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    #[serde(default)]
    pub uid: String,
    #[serde(default)]
    pub kind: GroupVersionKind,
    #[serde(default)]
    pub resource: GroupVersionResource,
    #[serde(default)]
    pub sub_resource: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub operation: String,
    #[serde(default)]
    pub object: Option<Value>,
    #[serde(default)]
    pub old_object: Option<Value>,
    #[serde(default)]
    pub dry_run: Option<bool>,
}

impl AdmissionRequest {
    pub fn is_update(&self) -> bool {
        self.operation == "UPDATE"
    }
}

/// The payload split in its two parts; each is parsed on its own so that an error names
/// the part that is wrong.
#[derive(Deserialize)]
pub struct RawPayload<'a> {
    #[serde(borrow)]
    pub request: Option<&'a RawValue>,
    #[serde(borrow)]
    pub settings: Option<&'a RawValue>,
}

/// The whole payload parsed in one pass: what [`RawPayload`] and the parses of its parts give
/// when every part is right, with one scan of the (large) inline CRDs instead of two. When
/// it fails, the part-by-part parse says which part is wrong.
#[derive(Deserialize)]
pub struct Payload {
    #[serde(default)]
    pub request: Option<AdmissionRequest>,
    #[serde(default)]
    pub settings: Option<crate::settings::Settings>,
}
