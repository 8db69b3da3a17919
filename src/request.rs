//! The `validate` payload: `{"request": <AdmissionRequest>, "settings": <settings>}`.
//! Only the fields crfix uses are parsed.

use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::crd::{check_head, Document, FoundVersion, ReadCrd, Wanted};
use crate::settings::{Object, SchemaSourceKind, Settings};

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

/// The group, kind, plural and version of the CRD a request needs.
pub fn wanted(request: &AdmissionRequest) -> (Wanted<'_>, &str) {
    let group = if request.kind.group.is_empty() {
        request.resource.group.as_str()
    } else {
        request.kind.group.as_str()
    };
    let version = if request.kind.version.is_empty() {
        request.resource.version.as_str()
    } else {
        request.kind.version.as_str()
    };
    let wanted = Wanted {
        group,
        kind: &request.kind.kind,
        plural: &request.resource.resource,
    };
    (wanted, version)
}

/// The inline CRD a request needs, found and narrowed while the payload was read.
#[derive(Debug)]
pub struct NarrowedCrd {
    /// `<plural>.<group>`.
    pub crd: String,
    /// Its place in the settings' `crds`.
    pub index: usize,
    pub versions: Vec<FoundVersion>,
}

/// [`parse_payload`], with one pass over the inline CRDs instead of two: when the request comes
/// before the settings (policy-server and kwctl write it so), the inline CRD that matches the
/// request is found while the settings are read and its versions narrowed to what
/// `values_of(request)` touch, instead of being kept as text and read again. The settings then
/// hold no CRDs. Whenever that is not possible (another key order, no CRD that matches, a
/// document that is not one, any error), the payload is parsed as [`parse_payload`] does,
/// whose errors name what is wrong.
pub fn parse_payload_narrowing<F>(
    payload: &[u8],
    values_of: F,
) -> Result<(AdmissionRequest, Settings, Option<NarrowedCrd>), String>
where
    F: for<'r> Fn(&'r AdmissionRequest) -> Vec<&'r Value>,
{
    let mut de = serde_json::Deserializer::from_slice(payload);
    let read = de
        .deserialize_map(NarrowingPayload(&values_of))
        .and_then(|read| de.end().map(|()| read));
    if let Ok((Some(request), settings, crds)) = read {
        let settings = settings.unwrap_or_default();
        let usable = match &crds {
            None => Some(settings.crds.len()),
            Some(read) if settings.schema_source == SchemaSourceKind::Cluster => Some(read.count),
            Some(read) => read.narrowed.as_ref().map(|_| read.count),
        };
        if let Some(count) = usable {
            if let Err(e) = settings.validate_options_given(count) {
                return Err(format!("invalid settings: {e}"));
            }
            let narrowed = crds
                .and_then(|read| read.narrowed)
                .filter(|_| settings.schema_source == SchemaSourceKind::Inline);
            return Ok((request, settings, narrowed));
        }
    }
    let (request, settings) = parse_payload(payload)?;
    Ok((request, settings, None))
}

/// The settings' CRDs as the one pass read them.
struct CrdsRead {
    count: usize,
    narrowed: Option<NarrowedCrd>,
}

struct NarrowingPayload<'f, F>(&'f F);

impl<'de, F> Visitor<'de> for NarrowingPayload<'_, F>
where
    F: for<'r> Fn(&'r AdmissionRequest) -> Vec<&'r Value>,
{
    type Value = (Option<AdmissionRequest>, Option<Settings>, Option<CrdsRead>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a validate payload")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut request, mut settings, mut crds) = (None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "request" if request.is_none() => request = Some(map.next_value()?),
                "settings" if settings.is_none() => {
                    let (read, taken) = map.next_value_seed(NarrowingSettings {
                        request: request.as_ref(),
                        values_of: self.0,
                    })?;
                    settings = Some(read);
                    crds = taken;
                }
                "request" | "settings" => return Err(de::Error::custom("a duplicate key")),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((request, settings, crds))
    }
}

/// The settings, their `crds` read by [`CrdList`] when the request is known.
struct NarrowingSettings<'r, 'f, F> {
    request: Option<&'r AdmissionRequest>,
    values_of: &'f F,
}

impl<'de, F> DeserializeSeed<'de> for NarrowingSettings<'_, '_, F>
where
    F: for<'r> Fn(&'r AdmissionRequest) -> Vec<&'r Value>,
{
    type Value = (Settings, Option<CrdsRead>);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F> Visitor<'de> for NarrowingSettings<'_, '_, F>
where
    F: for<'r> Fn(&'r AdmissionRequest) -> Vec<&'r Value>,
{
    type Value = (Settings, Option<CrdsRead>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let Some(request) = self.request else {
            return Settings::deserialize(MapAccessDeserializer::new(map)).map(|s| (s, None));
        };
        let values = (self.values_of)(request);
        let (wanted, version) = wanted(request);
        let mut taken = None;
        let settings = Settings::deserialize(MapAccessDeserializer::new(CrdsTaken {
            inner: map,
            pending: false,
            list: CrdList {
                wanted,
                version,
                values: &values,
            },
            taken: &mut taken,
        }))?;
        Ok((settings, taken))
    }
}

/// The settings' map as the derived `Settings` reads it, but the value of `crds` goes to
/// [`CrdList`], and `Settings` is handed an empty list in its place.
struct CrdsTaken<'a, 't, A> {
    inner: A,
    pending: bool,
    list: CrdList<'a>,
    taken: &'t mut Option<CrdsRead>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CrdsTaken<'_, '_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some(key) = self.inner.next_key::<String>()? else {
            return Ok(None);
        };
        self.pending = key == "crds";
        seed.deserialize(StringDeserializer::<A::Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        if !std::mem::take(&mut self.pending) {
            return self.inner.next_value_seed(seed);
        }
        *self.taken = Some(self.inner.next_value_seed(self.list)?);
        seed.deserialize(SeqDeserializer::<_, A::Error>::new(std::iter::empty::<()>()))
    }
}

/// The inline CRDs: the first that matches the request and is readable is narrowed, the others
/// are skipped.
#[derive(Clone, Copy)]
struct CrdList<'a> {
    wanted: Wanted<'a>,
    version: &'a str,
    values: &'a [&'a Value],
}

impl<'de> DeserializeSeed<'de> for CrdList<'_> {
    type Value = CrdsRead;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CrdList<'_> {
    type Value = CrdsRead;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of CustomResourceDefinitions")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut read = CrdsRead {
            count: 0,
            narrowed: None,
        };
        // After the first match, a document is only skipped (the first match wins, as when the
        // CRDs are kept as text).
        while read.narrowed.is_none() {
            let document = Document {
                version: self.version,
                values: self.values,
                wanted: Some(self.wanted),
            };
            let Some(crd) = seq.next_element_seed(document)? else {
                return Ok(read);
            };
            let index = read.count;
            read.count += 1;
            if crd.versions_first {
                // Whether it matched was not known in time: read as text instead.
                return Err(de::Error::custom("versions before the group"));
            }
            read.narrowed = narrowed(crd, self.wanted, index);
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {
            read.count += 1;
        }
        Ok(read)
    }
}

fn narrowed(crd: ReadCrd, wanted: Wanted, index: usize) -> Option<NarrowedCrd> {
    let ReadCrd { head, versions, .. } = crd;
    if !head.spec || !wanted.matches(&head) {
        return None;
    }
    // A matching CRD with a broken head is named by the text path.
    check_head(&head).ok()?;
    Some(NarrowedCrd {
        crd: head.name(),
        index,
        versions: versions.unwrap_or_default(),
    })
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
    use crate::fixtures::crd_json as fixture_json;
    use serde_json::json;

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

    fn ce_request(spec: Value, version: &str) -> Value {
        json!({"uid": "1", "operation": "CREATE",
            "kind": {"group": "olm.operatorframework.io", "version": version, "kind": "ClusterExtension"},
            "resource": {"group": "olm.operatorframework.io", "version": version, "resource": "clusterextensions"},
            "object": {"apiVersion": format!("olm.operatorframework.io/{version}"), "kind": "ClusterExtension",
                "metadata": {"name": "argocd"}, "spec": spec}})
    }

    fn valid_spec() -> Value {
        json!({"namespace": "argocd", "serviceAccount": {"name": "installer"},
            "source": {"sourceType": "Catalog", "catalog": {"packageName": "argocd-operator"}}})
    }

    fn crds() -> Vec<String> {
        vec![
            fixture_json("widgets.example.com.yaml"),
            fixture_json("clusterextensions.olm.operatorframework.io.v1.yaml"),
        ]
    }

    /// The payload with the request first (as policy-server writes it) or last.
    fn payload(request: &Value, settings: &str, request_first: bool) -> Vec<u8> {
        let request = request.to_string();
        if request_first {
            format!(r#"{{"request":{request},"settings":{settings}}}"#)
        } else {
            format!(r#"{{"settings":{settings},"request":{request}}}"#)
        }
        .into_bytes()
    }

    fn inline(crds: &[String]) -> String {
        format!(r#"{{"schemaSource":"inline","crds":[{}]}}"#, crds.join(","))
    }

    fn values(request: &AdmissionRequest) -> Vec<&Value> {
        request.object.iter().collect()
    }

    #[test]
    fn the_matching_inline_crd_is_narrowed_while_the_payload_is_read() {
        let request = ce_request(valid_spec(), "v1");
        let crds = crds();
        let (r, settings, narrowed) =
            parse_payload_narrowing(&payload(&request, &inline(&crds), true), values).unwrap();
        let narrowed = narrowed.expect("narrowed in the one pass");
        assert_eq!(narrowed.crd, "clusterextensions.olm.operatorframework.io");
        assert_eq!(narrowed.index, 1);
        assert!(settings.crds.is_empty());
        assert_eq!(settings.schema_source, SchemaSourceKind::Inline);
        // The same view as the text path's one pass over the document.
        let expected = crate::crd::touched_schema(&narrowed.crd, &crds[1], "v1", &values(&r));
        let found = crate::crd::pick_version(&narrowed.crd, "v1", narrowed.versions);
        assert_eq!(found.unwrap(), expected.unwrap());
        // The request and the other settings as the plain parse reads them.
        let (plain_request, plain_settings) =
            parse_payload(&payload(&request, &inline(&crds), true)).unwrap();
        assert_eq!(r.object, plain_request.object);
        assert_eq!(plain_settings.crds.len(), 2);
        assert_eq!(settings.mode, plain_settings.mode);
        // A version the CRD does not serve is found not served, as by the text path.
        let request = ce_request(valid_spec(), "v9");
        let (_, _, narrowed) =
            parse_payload_narrowing(&payload(&request, &inline(&crds), true), values).unwrap();
        let narrowed = narrowed.unwrap();
        assert!(matches!(
            crate::crd::pick_version(&narrowed.crd, "v9", narrowed.versions),
            Err(crate::crd::SchemaError::VersionNotServed { .. })
        ));
    }

    #[test]
    fn otherwise_the_inline_crds_are_kept_as_text() {
        let request = ce_request(valid_spec(), "v1");
        let crds = crds();
        // The settings before the request: the request is not known while the CRDs are read.
        let (_, settings, narrowed) =
            parse_payload_narrowing(&payload(&request, &inline(&crds), false), values).unwrap();
        assert!(narrowed.is_none());
        assert_eq!(settings.crds.len(), 2);
        // No CRD matches: the text path names what it found.
        let (_, settings, narrowed) =
            parse_payload_narrowing(&payload(&request, &inline(&crds[..1]), true), values).unwrap();
        assert!(narrowed.is_none());
        assert_eq!(settings.crds.len(), 1);
        // The versions before the group and names: whether they match is known too late.
        let doc: Value = serde_json::from_str(&crds[1]).unwrap();
        let spec = &doc["spec"];
        let text = format!(
            r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{{"versions":{},"group":{},"names":{},"scope":"Cluster"}}}}"#,
            spec["versions"], spec["group"], spec["names"]
        );
        assert!(text.find(r#""versions""#) < text.find(r#""group""#));
        let (_, settings, narrowed) =
            parse_payload_narrowing(&payload(&request, &inline(&[text]), true), values).unwrap();
        assert!(narrowed.is_none());
        assert_eq!(settings.crds.len(), 1);
        // A cluster source does not need them.
        let cluster = format!(
            r#"{{"schemaSource":"cluster","crds":[{}]}}"#,
            crds.join(",")
        );
        let (_, settings, narrowed) =
            parse_payload_narrowing(&payload(&request, &cluster, true), values).unwrap();
        assert!(narrowed.is_none());
        assert_eq!(settings.schema_source, SchemaSourceKind::Cluster);
    }

    #[test]
    fn the_one_pass_fails_as_the_plain_parse_does() {
        let request = ce_request(valid_spec(), "v1").to_string();
        let payloads = [
            "{not json".to_string(),
            r#"{"request":{},"settings":{"llm":{"maxAttempts":"x"}}}"#.to_string(),
            r#"{"request":{"operation":7}}"#.to_string(),
            r#"{"settings":{}}"#.to_string(),
            r#"{"request":{},"settings":["validate"]}"#.to_string(),
            r#"{"request":{},"settings":{"allowedPaths":[]}}"#.to_string(),
            format!(r#"{{"request":{request},"settings":{{"schemaSource":"inline"}}}}"#),
            format!(r#"{{"request":{request},"settings":{{"schemaSource":"inline","crds":[]}}}}"#),
            format!(r#"{{"request":{request},"settings":{{"schemaSource":"inline","crds":[7]}}}}"#),
            format!(r#"{{"request":{request},"settings":{{"crds":[{{}}],"nope":1}}}}"#),
            format!(
                r#"{{"request":{request},"settings":{{"schemaSource":"inline","crds":[{{}}]}}}} trailing"#
            ),
            format!(r#"{{"request":{request},"request":{request},"settings":{{}}}}"#),
        ];
        for p in payloads {
            let plain = parse_payload(p.as_bytes()).map(|_| ());
            let narrowing = parse_payload_narrowing(p.as_bytes(), values).map(|_| ());
            assert_eq!(narrowing, plain, "{p}");
        }
    }

    #[test]
    fn both_paths_give_the_same_answers() {
        let host =
            crate::host::FnHost(
                |_: &crate::host::GetResourceRequest| Err("no cluster".to_string()),
            );
        let mut invalid = valid_spec();
        invalid["source"]["sourceType"] = json!("catalog");
        invalid["namespace"] = json!("Argo_CD");
        let mut unfixable = valid_spec();
        unfixable["source"]["catalog"] = json!({});
        let crds = crds();
        for (spec, version) in [
            (valid_spec(), "v1"),
            (invalid, "v1"),
            (unfixable, "v1"),
            (valid_spec(), "v9"),
        ] {
            let request = ce_request(spec, version);
            let answer = |request_first| {
                let p = payload(&request, &inline(&crds), request_first);
                serde_json::to_value(crate::pipeline::evaluate(&p, &host)).unwrap()
            };
            assert_eq!(answer(true), answer(false), "{request}");
        }
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
