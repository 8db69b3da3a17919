//! Stage 2: find the `openAPIV3Schema` for the request's group/version/kind, from the inline
//! CRDs of the settings or from the cluster (`kubernetes/get_resource`); the CRD document
//! itself is read by [`crate::crd`].

use serde_json::Value;

pub use crate::crd::SchemaError;
use crate::crd::{check_head, head, parse_light, pick_version, schema_of, touched_schema, Wanted};
use crate::host::{GetResourceRequest, Host};
use crate::request::{AdmissionRequest, NarrowedCrd};
use crate::settings::{SchemaSourceKind, Settings};

/// The CRD document that holds the request's schema, unparsed: the valid path parses only
/// what the object touches ([`RawSchema::touched_by`]), the rest of the flow the whole schema
/// ([`RawSchema::full`]).
#[derive(Debug)]
pub struct RawSchema<'p> {
    crd: String,
    /// The version whose schema it is, found when the document is read.
    version: String,
    source: Source<'p>,
    /// The whole schema, once [`RawSchema::full`] has parsed it.
    full: Option<Value>,
}

#[derive(Debug)]
enum Source<'p> {
    /// The document's text.
    Document(String),
    /// An inline CRD, its versions narrowed while the payload was read
    /// ([`crate::request::parse_payload_narrowing`]); the whole schema is read from the
    /// payload again when the flow needs it.
    Payload {
        payload: &'p [u8],
        index: usize,
        touched: Option<Result<Value, SchemaError>>,
    },
}

impl<'p> RawSchema<'p> {
    /// The inline CRD that the payload's one pass found and narrowed.
    pub fn narrowed(payload: &'p [u8], request: &AdmissionRequest, crd: NarrowedCrd) -> Self {
        let (_, version) = crate::request::wanted(request);
        let touched = pick_version(&crd.crd, version, crd.versions);
        RawSchema {
            crd: crd.crd,
            version: version.to_string(),
            source: Source::Payload {
                payload,
                index: crd.index,
                touched: Some(touched),
            },
            full: None,
        }
    }

    fn malformed(&self, message: String) -> SchemaError {
        SchemaError::Malformed {
            crd: self.crd.clone(),
            message,
        }
    }

    /// The whole `openAPIV3Schema`, parsed once.
    pub fn full(&mut self) -> Result<&Value, SchemaError> {
        if self.full.is_none() {
            self.full = Some(self.parse_full()?);
        }
        Ok(self.full.get_or_insert(Value::Null))
    }

    fn parse_full(&self) -> Result<Value, SchemaError> {
        match &self.source {
            Source::Document(document) => self.full_of(document),
            Source::Payload { payload, index, .. } => {
                let (_, settings) = crate::request::parse_payload(payload)
                    .map_err(|e| self.malformed(format!("the payload, read again: {e}")))?;
                let document = settings.crds.get(*index).ok_or_else(|| {
                    self.malformed("the payload, read again, has no such CRD".into())
                })?;
                self.full_of(document.get())
            }
        }
    }

    fn full_of(&self, document: &str) -> Result<Value, SchemaError> {
        let crd = parse_light(document).map_err(|message| self.malformed(message))?;
        let spec = crd
            .spec
            .as_ref()
            .ok_or_else(|| self.malformed("spec is missing".into()))?;
        let raw = schema_of(spec, &self.version)?;
        serde_json::from_str(raw.get()).map_err(|e| self.malformed(format!("openAPIV3Schema: {e}")))
    }

    /// The part of the schema that `values` touch (see `schema_view`), the served version
    /// found in the same pass. For a CRD narrowed while the payload was read, `values` are
    /// those it was narrowed to, and it is taken once.
    pub fn touched_by(&mut self, values: &[&Value]) -> Result<Value, SchemaError> {
        match &mut self.source {
            Source::Document(document) => {
                touched_schema(&self.crd, document, &self.version, values)
            }
            Source::Payload { touched, .. } => touched
                .take()
                .unwrap_or_else(|| Err(self.malformed("its schema was taken already".into()))),
        }
    }
}

/// The schema for the request, from the cluster or the inline CRDs per `settings.schemaSource`.
#[cfg(test)]
pub fn load_schema(
    settings: &Settings,
    request: &AdmissionRequest,
    host: &dyn Host,
) -> Result<Value, SchemaError> {
    load_raw(&mut settings.clone(), request, host)?
        .full()
        .cloned()
}

/// The CRD document for the request; an inline one is taken out of `settings.crds`.
pub fn load_raw(
    settings: &mut Settings,
    request: &AdmissionRequest,
    host: &dyn Host,
) -> Result<RawSchema<'static>, SchemaError> {
    let (wanted, version) = crate::request::wanted(request);
    match settings.schema_source {
        SchemaSourceKind::Inline => inline_schema(settings, wanted, version),
        SchemaSourceKind::Cluster => cluster_schema(request, host, wanted.group, version),
    }
}

/// The schema from the CRD of the settings that matches the request's group and kind.
fn inline_schema(
    settings: &mut Settings,
    wanted: Wanted,
    version: &str,
) -> Result<RawSchema<'static>, SchemaError> {
    let group = wanted.group;
    let name = wanted.describe();
    // Settings are checked when the policy loads (`validate_settings`), not on every
    // request: a CRD that cannot be read is named here, and the matching one checked.
    let mut unreadable = Vec::new();
    for (i, raw) in settings.crds.iter().enumerate() {
        // Only the head is read to match: the served version's schema is found and narrowed
        // in one pass when the object is validated ([`RawSchema::touched_by`]), as for a CRD
        // read from the cluster.
        let head = match head(raw.get()) {
            Ok(head) => head,
            Err(e) => {
                unreadable.push(format!("crds[{i}] is not a CustomResourceDefinition: {e}"));
                continue;
            }
        };
        if !head.spec {
            continue;
        }
        let matches = wanted.matches(&head);
        if matches {
            check_head(&head).map_err(|message| SchemaError::Malformed {
                crd: head.name(),
                message: format!("crds[{i}]: {message}"),
            })?;
            let document: Box<str> = settings.crds.swap_remove(i).into();
            return Ok(RawSchema {
                crd: head.name(),
                version: version.to_string(),
                source: Source::Document(document.into_string()),
                full: None,
            });
        }
    }
    let mut message = format!(
        "{name} (no inline CRD in the settings matches group {group:?} and kind {:?}",
        wanted.kind
    );
    if !unreadable.is_empty() {
        message.push_str("; ");
        message.push_str(&unreadable.join("; "));
    }
    message.push(')');
    Err(SchemaError::NotFound(message))
}

/// The schema from the cluster's CRD `<resource>.<group>`, read through policy-server.
fn cluster_schema(
    request: &AdmissionRequest,
    host: &dyn Host,
    group: &str,
    version: &str,
) -> Result<RawSchema<'static>, SchemaError> {
    let resource = request.resource.resource.as_str();
    if resource.is_empty() || group.is_empty() {
        return Err(SchemaError::NotFound(format!(
            "{resource}.{group} (the request names no resource and group; core kinds have no CRD)"
        )));
    }
    // Kubewarden's audit scanner puts the kind where the resource (the plural) belongs: the
    // CRD is then looked up under the kind's regular plurals, in order.
    let plurals = if resource == request.kind.kind {
        regular_plurals(resource)
    } else {
        vec![resource.to_string()]
    };
    let mut not_found = None;
    for plural in plurals {
        let name = format!("{plural}.{group}");
        match read_crd(host, &name) {
            Ok(document) => {
                // Read in one pass when the object is validated ([`RawSchema::touched_by`]).
                return Ok(RawSchema {
                    crd: name,
                    version: version.to_string(),
                    source: Source::Document(document),
                    full: None,
                });
            }
            Err(SchemaError::NotFound(e)) => not_found = Some(SchemaError::NotFound(e)),
            Err(e) => return Err(e),
        }
    }
    Err(not_found.unwrap_or_else(|| SchemaError::NotFound(format!("{resource}.{group}"))))
}

/// The CRD document `name`, read through policy-server.
fn read_crd(host: &dyn Host, name: &str) -> Result<String, SchemaError> {
    let answer = host
        .get_resource(&GetResourceRequest {
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
            name: name.to_string(),
            namespace: None,
            disable_cache: false,
            field_masks: Some(vec![
                "spec.group".into(),
                "spec.names".into(),
                "spec.versions".into(),
            ]),
        })
        .map_err(|message| host_error(name, message))?;
    String::from_utf8(answer).map_err(|e| SchemaError::Malformed {
        crd: name.to_string(),
        message: format!("the answer is not UTF-8: {}", e.utf8_error()),
    })
}

/// The plurals a CRD's `names.plural` is usually made of from its kind: `Policy` →
/// `policies`, `Ingress` → `ingresses`, `ClusterExtension` → `clusterextensions`.
fn regular_plurals(kind: &str) -> Vec<String> {
    let lower = kind.to_ascii_lowercase();
    let mut plurals = Vec::new();
    if let Some(stem) = lower.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) {
            plurals.push(format!("{stem}ies"));
        }
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| lower.ends_with(end))
    {
        plurals.push(format!("{lower}es"));
    }
    plurals.push(format!("{lower}s"));
    plurals
}

/// A failed host call: `NotFound` when the API server said 404, else `HostCall`.
fn host_error(crd: &str, message: String) -> SchemaError {
    let lower = message.to_ascii_lowercase();
    // kube-rs renders a 404 as `ApiError: ... "<name>" not found: NotFound (ErrorResponse {
    // ..., reason: "NotFound", code: 404 })`; policy-server passes that text through.
    if lower.contains("not found") || lower.contains("notfound") || lower.contains("code: 404") {
        SchemaError::NotFound(crd.to_string())
    } else {
        SchemaError::HostCall {
            crd: crd.to_string(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::check_inline_crd;
    use crate::fixtures::crd_json as fixture_json;
    use crate::host::FnHost;
    use crate::request::{GroupVersionKind, GroupVersionResource};
    use serde_json::value::RawValue;
    use std::cell::RefCell;

    fn request(group: &str, version: &str, kind: &str, resource: &str) -> AdmissionRequest {
        AdmissionRequest {
            kind: GroupVersionKind {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
            },
            resource: GroupVersionResource {
                group: group.into(),
                version: version.into(),
                resource: resource.into(),
            },
            operation: "CREATE".into(),
            ..Default::default()
        }
    }

    fn ce(version: &str) -> AdmissionRequest {
        request(
            "olm.operatorframework.io",
            version,
            "ClusterExtension",
            "clusterextensions",
        )
    }

    fn inline(docs: &[&str]) -> Settings {
        Settings {
            schema_source: SchemaSourceKind::Inline,
            crds: docs
                .iter()
                .map(|d| RawValue::from_string(fixture_json(d)).expect("raw"))
                .collect(),
            ..Settings::default()
        }
    }

    fn no_host() -> FnHost<impl Fn(&GetResourceRequest) -> Result<Vec<u8>, String>> {
        FnHost(|_: &GetResourceRequest| Err("no host in this test".to_string()))
    }

    #[test]
    fn inline_crds_match_group_kind_and_version() {
        let s = inline(&[
            "widgets.example.com.yaml",
            "clusterextensions.olm.operatorframework.io.v1.yaml",
        ]);
        let schema = load_schema(&s, &ce("v1"), &no_host()).unwrap();
        assert!(schema
            .pointer("/properties/spec/properties/namespace")
            .is_some());
        let widget = request("example.com", "v1beta1", "Widget", "widgets");
        let schema = load_schema(&s, &widget, &no_host()).unwrap();
        assert_eq!(
            schema.pointer("/properties/spec/required/0"),
            Some(&"size".into())
        );
        let v0 = request("example.com", "v0", "Widget", "widgets");
        assert!(matches!(
            load_schema(&s, &v0, &no_host()),
            Err(SchemaError::VersionNotServed { .. })
        ));
        let v9 = request("example.com", "v9", "Widget", "widgets");
        assert!(matches!(
            load_schema(&s, &v9, &no_host()),
            Err(SchemaError::VersionNotServed { .. })
        ));
        let other = request("example.com", "v1", "Gadget", "gadgets");
        assert!(matches!(
            load_schema(&s, &other, &no_host()),
            Err(SchemaError::NotFound(_))
        ));
        // v1alpha1 is only in the v1alpha1 fixture.
        assert!(matches!(
            load_schema(&s, &ce("v1alpha1"), &no_host()),
            Err(SchemaError::VersionNotServed { .. })
        ));
        let s = inline(&["clusterextensions.olm.operatorframework.io.v1alpha1.yaml"]);
        let schema = load_schema(&s, &ce("v1alpha1"), &no_host()).unwrap();
        assert!(schema
            .pointer("/properties/spec/properties/install/properties/namespace")
            .is_some());
    }

    #[test]
    fn inline_check_names_what_is_wrong() {
        for f in [
            "widgets.example.com.yaml",
            "clusterextensions.olm.operatorframework.io.v1.yaml",
            "clusterextensions.olm.operatorframework.io.v1alpha1.yaml",
        ] {
            assert_eq!(check_inline_crd(&fixture_json(f)), Ok(()), "{f}");
        }
        let e = check_inline_crd(r#"{"kind":"ConfigMap"}"#).unwrap_err();
        assert!(e.contains("CustomResourceDefinition"), "{e}");
        let e = check_inline_crd(
            r#"{"kind":"CustomResourceDefinition","spec":{"names":{"kind":"A"},"versions":[]}}"#,
        )
        .unwrap_err();
        assert!(e.contains("spec.group"), "{e}");
        let e = check_inline_crd(r#"{"kind":"CustomResourceDefinition","spec":{"group":"g","names":{"kind":"A"},"versions":[{"name":"v1","served":true}]}}"#).unwrap_err();
        assert!(e.contains("openAPIV3Schema"), "{e}");
        let e = check_inline_crd("[1,2]").unwrap_err();
        assert!(e.contains("not a CustomResourceDefinition"), "{e}");
    }

    #[test]
    fn an_inline_crd_the_api_server_would_refuse_for_its_rules_costs_is_refused() {
        // Every fixture is modelled on a CRD real API servers accept (the largest, Gateway
        // API's HTTPRoute and Argo CD's Application, with all their rules); the one made to
        // hold the most CEL work a request can carry is, as an inline CRD, refused: the API
        // server estimates its strings at 4 bytes a character.
        let dir = format!("{}/e2e-tests/fixtures/crds", env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).expect("fixtures") {
            let name = entry
                .expect("entry")
                .file_name()
                .into_string()
                .expect("name");
            if !name.ends_with(".yaml") {
                continue;
            }
            let verdict = check_inline_crd(&fixture_json(&name));
            if name == "gadgets.fidelity.example.com.yaml" {
                let e = verdict.unwrap_err();
                assert!(
                    e.starts_with(
                        "the API server would refuse this CustomResourceDefinition \
                         (gadgets.fidelity.example.com, version v1): the rule at spec.chunks[*] \
                         (x-kubernetes-validations[0]: self.matches("
                    ) && e.contains(": Forbidden: estimated rule cost exceeds budget by factor of"),
                    "{e}"
                );
            } else {
                assert_eq!(verdict, Ok(()), "{name}");
            }
            checked += 1;
        }
        assert!(checked > 40, "{checked}");
    }

    #[test]
    fn broken_inline_crds_are_named_when_a_request_needs_them() {
        let mut s = inline(&["widgets.example.com.yaml"]);
        s.crds
            .insert(0, RawValue::from_string("[1,2]".into()).unwrap());
        // Unreadable: named in the not-found error.
        match load_schema(&s, &ce("v1"), &no_host()) {
            Err(SchemaError::NotFound(m)) => {
                assert!(
                    m.contains("crds[0] is not a CustomResourceDefinition"),
                    "{m}"
                )
            }
            other => panic!("{other:?}"),
        }
        // The readable one still serves its kind.
        let widget = request("example.com", "v1beta1", "Widget", "widgets");
        assert!(load_schema(&s, &widget, &no_host()).is_ok());
        // The matching document fails the checks validate_settings makes: malformed.
        let mut doc: Value =
            serde_json::from_str(&fixture_json("widgets.example.com.yaml")).unwrap();
        doc["kind"] = "ConfigMap".into();
        let s = Settings {
            crds: vec![RawValue::from_string(doc.to_string()).unwrap()],
            ..s
        };
        match load_schema(&s, &widget, &no_host()) {
            Err(SchemaError::Malformed { message, .. }) => {
                assert!(
                    message.starts_with("crds[0]: kind is \"ConfigMap\""),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cluster_source_asks_for_the_crd_by_name() {
        let crd = fixture_json("clusterextensions.olm.operatorframework.io.v1.yaml");
        let seen = RefCell::new(Vec::new());
        let host = FnHost(|r: &GetResourceRequest| {
            seen.borrow_mut().push(r.clone());
            Ok(crd.clone().into_bytes())
        });
        let schema = load_schema(&Settings::default(), &ce("v1"), &host).unwrap();
        assert!(schema.pointer("/properties/spec").is_some());
        let seen = seen.borrow();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].name, "clusterextensions.olm.operatorframework.io");
        assert_eq!(seen[0].kind, "CustomResourceDefinition");
        assert_eq!(seen[0].api_version, "apiextensions.k8s.io/v1");
        assert_eq!(seen[0].namespace, None);
        assert!(!seen[0].disable_cache);
    }

    #[test]
    fn regular_plurals_of_a_kind() {
        assert_eq!(regular_plurals("ClusterExtension"), ["clusterextensions"]);
        assert_eq!(regular_plurals("Policy"), ["policies", "policys"]);
        assert_eq!(regular_plurals("Gateway"), ["gateways"]);
        assert_eq!(regular_plurals("Ingress"), ["ingresses", "ingresss"]);
        assert_eq!(regular_plurals("Mailbox"), ["mailboxes", "mailboxs"]);
    }

    #[test]
    fn an_audit_request_names_the_kind_as_resource_and_the_crd_is_found_by_its_plural() {
        // Kubewarden's audit scanner sets resource.resource to the kind.
        let mut request = ce("v1");
        request.resource.resource = "ClusterExtension".into();
        let crd = fixture_json("clusterextensions.olm.operatorframework.io.v1.yaml");
        let seen = RefCell::new(Vec::new());
        let host = FnHost(|r: &GetResourceRequest| {
            seen.borrow_mut().push(r.name.clone());
            if r.name == "clusterextensions.olm.operatorframework.io" {
                Ok(crd.clone().into_bytes())
            } else {
                Err(format!("{} not found: NotFound", r.name))
            }
        });
        let schema = load_schema(&Settings::default(), &request, &host).unwrap();
        assert!(schema.pointer("/properties/spec").is_some());
        assert_eq!(
            *seen.borrow(),
            ["clusterextensions.olm.operatorframework.io"]
        );
        // No plural found: the last "not found" is the answer.
        request.kind.kind = "Policy".into();
        request.resource.resource = "Policy".into();
        seen.borrow_mut().clear();
        assert_eq!(
            load_schema(&Settings::default(), &request, &host),
            Err(SchemaError::NotFound(
                "policys.olm.operatorframework.io".into()
            ))
        );
        assert_eq!(
            *seen.borrow(),
            [
                "policies.olm.operatorframework.io",
                "policys.olm.operatorframework.io"
            ]
        );
    }

    #[test]
    fn cluster_source_errors() {
        let s = Settings::default();
        let not_found = FnHost(|_: &GetResourceRequest| {
            Err(r#"ApiError: customresourcedefinitions.apiextensions.k8s.io "x" not found: NotFound"#.to_string())
        });
        assert_eq!(
            load_schema(&s, &ce("v1"), &not_found),
            Err(SchemaError::NotFound(
                "clusterextensions.olm.operatorframework.io".into()
            ))
        );
        let refused = FnHost(|_: &GetResourceRequest| Err("connection refused".to_string()));
        assert!(matches!(
            load_schema(&s, &ce("v1"), &refused),
            Err(SchemaError::HostCall { message, .. }) if message == "connection refused"
        ));
        let garbage = FnHost(|_: &GetResourceRequest| Ok(b"<html>".to_vec()));
        assert!(matches!(
            load_schema(&s, &ce("v1"), &garbage),
            Err(SchemaError::Malformed { .. })
        ));
        let binary = FnHost(|_: &GetResourceRequest| Ok(vec![0xff, 0xfe]));
        assert!(matches!(
            load_schema(&s, &ce("v1"), &binary),
            Err(SchemaError::Malformed { .. })
        ));
        let crd = fixture_json("widgets.example.com.yaml");
        let widgets = FnHost(move |_: &GetResourceRequest| Ok(crd.clone().into_bytes()));
        assert!(matches!(
            load_schema(
                &s,
                &request("example.com", "v0", "Widget", "widgets"),
                &widgets
            ),
            Err(SchemaError::VersionNotServed { .. })
        ));
        let no_schema = FnHost(|_: &GetResourceRequest| {
            Ok(br#"{"spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets"},"versions":[{"name":"v1","served":true}]}}"#.to_vec())
        });
        assert!(matches!(
            load_schema(
                &s,
                &request("example.com", "v1", "Widget", "widgets"),
                &no_schema
            ),
            Err(SchemaError::NoSchema(_))
        ));
        let bad_schema = FnHost(|_: &GetResourceRequest| {
            Ok(br#"{"spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets"},"versions":[{"name":"v1","served":true,"schema":{"openAPIV3Schema":"nope"}}]}}"#.to_vec())
        });
        assert!(matches!(
            load_schema(
                &s,
                &request("example.com", "v1", "Widget", "widgets"),
                &bad_schema
            ),
            Err(SchemaError::Malformed { .. })
        ));
    }
}
