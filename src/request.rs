//! The `validate` payload: `{"request": <AdmissionRequest>, "settings": <settings>}`.
//! Only the fields crfix uses are parsed.

use serde::Deserialize;
use serde_json::Value;

use crate::settings::{Object, Settings};

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
    pub operation: String,
    /// Who sent the request, as the API server authenticated them.
    #[serde(default)]
    pub user_info: UserInfo,
    #[serde(default)]
    pub object: Option<Value>,
    #[serde(default)]
    pub old_object: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct UserInfo {
    #[serde(default)]
    pub username: String,
    #[serde(default)]
    pub groups: Vec<String>,
}

impl AdmissionRequest {
    pub fn is_update(&self) -> bool {
        self.operation == "UPDATE"
    }

    /// A request of Kubewarden's background audit (its audit scanner): the stored object,
    /// sent as a CREATE whose uid is the object's own and with no user. The API server never
    /// sends a mutating webhook such a CREATE: the object's uid is assigned after mutation, and
    /// every request names the user who made it.
    pub fn is_audit(&self) -> bool {
        let object_uid = self
            .object
            .as_ref()
            .and_then(|o| o.pointer("/metadata/uid"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        self.operation == "CREATE"
            && !object_uid.is_empty()
            && self.uid == object_uid
            && self.user_info.username.is_empty()
    }
}

/// The whole payload, parsed in one pass (the inline CRDs of the settings are scanned once).
#[derive(Deserialize)]
struct Payload {
    #[serde(default)]
    request: Option<AdmissionRequest>,
    #[serde(default)]
    settings: Option<Object<Settings>>,
}

/// Parses the `validate` payload: the request and the settings (defaults when absent),
/// with the per-request checks of the settings. An error names the part and the field that
/// is wrong; it is worked out by a second, path-tracking parse, only when the first failed.
pub fn parse_payload(payload: &[u8]) -> Result<(AdmissionRequest, Settings), String> {
    let Payload { request, settings } =
        serde_json::from_slice(payload).map_err(|e| explain(payload, e))?;
    let settings = settings.map(|Object(s)| s).unwrap_or_default();
    settings
        .validate_options()
        .map_err(|e| format!("invalid settings: {e}"))?;
    let request = request.ok_or("the validate payload has no \"request\"")?;
    Ok((request, settings))
}

fn explain(payload: &[u8], error: serde_json::Error) -> String {
    if error.is_syntax() || error.is_eof() {
        return format!("the validate payload is not valid JSON: {error}");
    }
    let de = &mut serde_json::Deserializer::from_slice(payload);
    let Err(e) = serde_path_to_error::deserialize::<_, Payload>(de) else {
        return format!("the validate payload is malformed: {error}");
    };
    let path = e.path().to_string();
    let inner = e.inner();
    match path.split_once('.').map_or(path.as_str(), |(part, _)| part) {
        "settings" => format!("invalid settings: {path}: {inner}"),
        "request" if path == "request" => format!("the AdmissionRequest is malformed: {inner}"),
        "request" => format!("the AdmissionRequest is malformed: {path}: {inner}"),
        _ => format!("the validate payload is malformed: {inner}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_part_and_field() {
        let e = parse_payload(b"{not json").unwrap_err();
        assert!(
            e.starts_with("the validate payload is not valid JSON"),
            "{e}"
        );
        let e =
            parse_payload(br#"{"request":{},"settings":{"llm":{"maxAttempts":"x"}}}"#).unwrap_err();
        assert!(
            e.starts_with("invalid settings: settings.llm.maxAttempts: "),
            "{e}"
        );
        let e = parse_payload(br#"{"request":{"operation":7}}"#).unwrap_err();
        assert!(
            e.starts_with("the AdmissionRequest is malformed: request.operation: "),
            "{e}"
        );
        let e = parse_payload(br#"{"request":42}"#).unwrap_err();
        assert!(
            e.starts_with("the AdmissionRequest is malformed: invalid type"),
            "{e}"
        );
        let e = parse_payload(br#"{"settings":{}}"#).unwrap_err();
        assert_eq!(e, "the validate payload has no \"request\"");
        let e = parse_payload(br#"{"request":{},"settings":["validate"]}"#).unwrap_err();
        assert!(
            e.starts_with("invalid settings: settings: invalid type: sequence"),
            "{e}"
        );
        let e = parse_payload(b"null").unwrap_err();
        assert!(e.starts_with("the validate payload is malformed"), "{e}");
        let e = parse_payload(br#"{"request":{},"settings":{"allowedPaths":[]}}"#).unwrap_err();
        assert!(e.starts_with("invalid settings: allowedPaths"), "{e}");
    }

    #[test]
    fn the_requesting_user_is_read() {
        let (request, _) = parse_payload(
            br#"{"request":{"userInfo":{"username":"alice","groups":["dev","system:authenticated"],"uid":"1"}}}"#,
        )
        .unwrap();
        assert_eq!(request.user_info.username, "alice");
        assert_eq!(request.user_info.groups, ["dev", "system:authenticated"]);
    }

    #[test]
    fn absent_settings_are_the_defaults() {
        let (request, settings) = parse_payload(br#"{"request":{"operation":"CREATE"}}"#).unwrap();
        assert_eq!(request.operation, "CREATE");
        assert_eq!(settings.mode, crate::settings::Mode::Fix);
    }
}
