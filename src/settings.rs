//! Policy settings, as given in the ClusterAdmissionPolicy (or `kwctl run --settings-json`).
//!
//! Unknown keys are an error: a misspelt setting must not silently fall back to a default.

use std::fmt;
use std::marker::PhantomData;

use kubewarden_policy_sdk::settings::Validatable;
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// What crfix does with an invalid object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Repair and mutate the object; every change is reported as a warning.
    #[default]
    Fix,
    /// Reject; the message holds the proposed JSON Patch.
    Suggest,
    /// Reject with precise errors; no repair.
    Validate,
}

/// What `mode: fix` does with a repair crfix is not certain of (docs/repair.md, "Certain and
/// uncertain changes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum UncertainFixes {
    /// Reject, with the proposed change spelled out for the user to apply.
    #[default]
    Suggest,
    /// Apply it anyway, with a warning that says it was uncertain.
    Apply,
    /// Reject without a proposal.
    Reject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SchemaSourceKind {
    /// Read the CustomResourceDefinition from the cluster (`kubernetes/get_resource`).
    #[default]
    Cluster,
    /// Use the CRDs given in `crds`.
    Inline,
}

/// What to do when crfix cannot decide (no schema, LLM down, nothing to repair).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Fallback {
    Accept,
    Reject,
}

/// What `mode: fix` does with a repair of an object a GitOps tool manages (docs/gitops.md): a
/// change in the cluster would differ from Git for good (Argo CD shows OutOfSync and may
/// re-apply the broken manifest, Flux reports drift).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OnManaged {
    /// Reject with the fix spelled out, to be made in the repository.
    #[default]
    Suggest,
    /// Accept the object unchanged; the fix is in the warnings (the API server still
    /// validates the object against its CRD).
    Warn,
    /// Repair in the cluster as for any other object.
    Mutate,
}

/// Objects that GitOps tools apply from Git, by the labels or annotations that track them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GitOpsSettings {
    /// Label or annotation keys: an object that has any of them is managed.
    pub managed_by: Vec<String>,
    pub on_managed: OnManaged,
}

impl Default for GitOpsSettings {
    fn default() -> Self {
        GitOpsSettings {
            managed_by: [
                // Argo CD: annotation tracking, and its default tracking label (which Helm
                // sets too: a Helm release re-applies its manifests as well).
                "argocd.argoproj.io/tracking-id",
                "app.kubernetes.io/instance",
                // Flux: kustomize-controller and helm-controller.
                "kustomize.toolkit.fluxcd.io/name",
                "helm.toolkit.fluxcd.io/name",
            ]
            .map(String::from)
            .to_vec(),
            on_managed: OnManaged::Suggest,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct LlmSettings {
    /// Ask the LLM (through crfix-llm-proxy) for what deterministic repair leaves.
    pub enabled: bool,
    /// Attempts per request, each with the errors of the previous candidate.
    pub max_attempts: u32,
    /// Maximum length of a Correction token (the compressed prompt).
    pub max_token_bytes: usize,
    /// apiVersion of the Correction kind served by crfix-llm-proxy.
    pub correction_api_version: String,
    /// Sampling limits sent with each request.
    pub max_tokens: u32,
    pub temperature: f32,
    /// What the LLM is asked to answer with (the parser accepts either).
    pub answer_format: AnswerFormat,
    /// Every word and number the LLM writes must occur in the user's own text, and no number
    /// of a value it rewrites may be dropped (see the LLM stage's evidence checks).
    pub require_evidence: bool,
    /// Values only the user chooses: the LLM may cut the user's own value down or move it
    /// there, never supply one.
    pub verbatim_paths: Vec<String>,
    /// With two or more fixes to choose from, ask a second time with the fixes in reverse
    /// order: a pick that does not survive the swap is position bias, not judgement.
    pub confirm_picks: bool,
    /// A pick the model makes in both orders counts as certain. Off by default: on a small
    /// model the swap filters position bias but does not make the pick right (docs/llm.md).
    pub trust_agreed_picks: bool,
}

/// `choice` (default): crfix enumerates the fixes it can ground itself and checks each; the
/// model picks one by number or answers that none is what the user meant. When crfix finds
/// none, it asks for a patch. `patch`: always an RFC 6902 JSON Patch — measured on a small CPU
/// model, a third of the output tokens of a whole object and more accurate. `object`: the
/// whole corrected object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AnswerFormat {
    #[default]
    Choice,
    Patch,
    Object,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            enabled: false,
            max_attempts: 1,
            max_token_bytes: correction_api::DEFAULT_MAX_TOKEN_BYTES,
            correction_api_version: correction_api::API_VERSION.to_string(),
            max_tokens: 256,
            temperature: 0.0,
            answer_format: AnswerFormat::Choice,
            require_evidence: true,
            verbatim_paths: vec!["/spec/source/catalog/packageName".to_string()],
            confirm_picks: true,
            trust_agreed_picks: false,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Settings {
    pub mode: Mode,
    /// In `mode: fix`, what happens to a repair that is not certain.
    pub uncertain_fixes: UncertainFixes,
    pub schema_source: SchemaSourceKind,
    /// Inline CustomResourceDefinition documents (`schemaSource: inline`). Kept raw: only the
    /// CRD that matches a request is parsed in full.
    pub crds: Vec<Box<RawValue>>,
    /// No CRD, an unserved version or a failed host call: accept (the API server still
    /// validates) or reject.
    pub on_schema_unavailable: Fallback,
    /// The object is invalid and crfix cannot repair it.
    pub on_unfixable: Fallback,
    /// The LLM is enabled but unavailable (proxy down, budget, timeout).
    pub on_llm_unavailable: Fallback,
    /// Only values under these pointers may change. Not given: the object's own content, every
    /// top-level field but those in [`NOT_CONTENT`] (a CRD may declare fields beside `spec`,
    /// such as Dapr's `scopes` and `auth`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_paths: Option<Vec<String>>,
    /// Values under these pointers may never be added, changed or removed.
    pub protected_paths: Vec<String>,
    /// At most this many JSON Patch operations in one repair.
    pub max_patch_operations: usize,
    /// On UPDATE, put back immutable values (`self == oldSelf` rules) from the old object.
    /// Off by default: it undoes the user's change, and an undo is no repair (the same
    /// principle the guardrails hold a model's answer to).
    pub restore_immutable: bool,
    /// Report and repair unknown fields (the API server prunes them before webhooks see
    /// them, but `kwctl`, audit scans and preserve-unknown subtrees deliver them).
    pub reject_unknown_fields: bool,
    #[serde(deserialize_with = "object")]
    pub llm: LlmSettings,
    /// Objects that Argo CD or Flux manage: a fix is proposed for the repository, not made in
    /// the cluster (by default).
    #[serde(rename = "gitOps", deserialize_with = "object")]
    pub git_ops: GitOpsSettings,
}

/// A value that may only be given as a JSON object. serde reads a struct from an array too,
/// by position: `["validate"]` would be `mode: validate`, and an array could silently empty a
/// list such as `protectedPaths`.
#[derive(Debug)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        object(deserializer).map(Object)
    }
}

fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<T, D::Error> {
    struct ObjectVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }

    deserializer.deserialize_map(ObjectVisitor(PhantomData))
}

pub const DEFAULT_MAX_PATCH_OPERATIONS: usize = 20;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            mode: Mode::Fix,
            uncertain_fixes: UncertainFixes::Suggest,
            schema_source: SchemaSourceKind::Cluster,
            crds: Vec::new(),
            on_schema_unavailable: Fallback::Accept,
            on_unfixable: Fallback::Reject,
            on_llm_unavailable: Fallback::Reject,
            allowed_paths: None,
            protected_paths: vec![
                "/spec/serviceAccount".to_string(),
                "/spec/install/serviceAccount".to_string(),
            ],
            max_patch_operations: DEFAULT_MAX_PATCH_OPERATIONS,
            restore_immutable: false,
            reject_unknown_fields: true,
            llm: LlmSettings::default(),
            git_ops: GitOpsSettings::default(),
        }
    }
}

fn check_pointer(field: &str, pointer: &str) -> Result<(), String> {
    if !pointer.starts_with('/') || pointer.len() < 2 || pointer.ends_with('/') {
        return Err(format!(
            "{field}: {pointer:?} is not a JSON pointer below the root (e.g. \"/spec\")"
        ));
    }
    Ok(())
}

impl Validatable for Settings {
    /// Every check, the inline CRDs' included (`validate_settings`, when the policy loads).
    fn validate(&self) -> Result<(), String> {
        for (i, crd) in self.crds.iter().enumerate() {
            crate::crd::check_inline_crd(crd.get()).map_err(|e| format!("crds[{i}]: {e}"))?;
        }
        self.validate_options()
    }
}

/// What crfix never changes, whatever the settings (crfix's own annotation aside).
pub const NEVER_CHANGED: [&str; 3] = ["/apiVersion", "/kind", "/metadata"];

/// The top-level fields that are not the object's content: [`NEVER_CHANGED`], and `status`
/// unless `allowedPaths` names it.
pub const NOT_CONTENT: [&str; 4] = [
    NEVER_CHANGED[0],
    NEVER_CHANGED[1],
    NEVER_CHANGED[2],
    "/status",
];

impl Settings {
    /// Does `allowedPaths` let crfix change the value at `pointer`?
    pub fn allows(&self, pointer: &str) -> bool {
        match &self.allowed_paths {
            Some(roots) => roots
                .iter()
                .any(|root| crate::pointer::is_under(pointer, root)),
            None => {
                !pointer.is_empty()
                    && !NOT_CONTENT
                        .iter()
                        .any(|root| crate::pointer::is_under(pointer, root))
            }
        }
    }

    /// Is `pointer` one of the roots `allowedPaths` allows (kept even when a move empties it)?
    pub fn is_allowed_root(&self, pointer: &str) -> bool {
        match &self.allowed_paths {
            Some(roots) => roots.iter().any(|root| root == pointer),
            None => self.allows(pointer) && crate::pointer::tokens(pointer).len() == 1,
        }
    }

    /// `allowedPaths` in words, for messages.
    pub fn allowed_paths_text(&self) -> String {
        match &self.allowed_paths {
            Some(roots) => roots.join(", "),
            None => "the object's content: not apiVersion, kind, metadata or status".to_string(),
        }
    }

    /// The pointers under which values may change, for an object of `schema` (the model's
    /// instructions): `allowedPaths`, or the top-level fields the schema declares as content.
    pub fn allowed_roots(&self, schema: &serde_json::Value) -> Vec<String> {
        match &self.allowed_paths {
            Some(roots) => roots.clone(),
            None => schema
                .get("properties")
                .and_then(serde_json::Value::as_object)
                .into_iter()
                .flat_map(|properties| properties.keys())
                .map(|name| crate::pointer::push("", name))
                .filter(|root| self.allows(root))
                .collect(),
        }
    }

    /// The checks of [`Validatable::validate`] but the inline CRDs' (each is a pass over its
    /// text): what `validate` runs on every request. `validate_settings` has checked the
    /// CRDs when the policy was loaded, and the CRD a request needs is checked when it is
    /// read (the schema source, stage 2).
    pub fn validate_options(&self) -> Result<(), String> {
        self.validate_options_given(self.crds.len())
    }

    /// [`Settings::validate_options`] for settings whose `inline_crds` CRDs were read apart.
    pub fn validate_options_given(&self, inline_crds: usize) -> Result<(), String> {
        if self.schema_source == SchemaSourceKind::Inline && inline_crds == 0 {
            return Err("crds: schemaSource is \"inline\" but no CRDs are given".into());
        }
        let allowed_paths = self.allowed_paths.as_deref().unwrap_or_default();
        if self.allowed_paths.is_some() && allowed_paths.is_empty() {
            return Err("allowedPaths: must name at least one path (e.g. \"/spec\")".into());
        }
        for p in allowed_paths {
            check_pointer("allowedPaths", p)?;
            for forbidden in NEVER_CHANGED {
                if crate::pointer::is_under(p, forbidden) || crate::pointer::is_under(forbidden, p)
                {
                    return Err(format!(
                        "allowedPaths: {p:?} would let crfix change {forbidden}, which it never changes"
                    ));
                }
            }
        }
        for p in &self.protected_paths {
            check_pointer("protectedPaths", p)?;
        }
        for p in &self.llm.verbatim_paths {
            check_pointer("llm.verbatimPaths", p)?;
        }
        for key in &self.git_ops.managed_by {
            if key.is_empty() || key.len() > 316 || key.chars().any(char::is_whitespace) {
                return Err(format!(
                    "gitOps.managedBy: {key:?} is not a label or annotation key"
                ));
            }
        }
        if self.max_patch_operations == 0 || self.max_patch_operations > 1000 {
            return Err("maxPatchOperations: must be between 1 and 1000".into());
        }
        let llm = &self.llm;
        if llm.max_attempts == 0 || llm.max_attempts > 5 {
            return Err("llm.maxAttempts: must be between 1 and 5".into());
        }
        if !(512..=64 * 1024).contains(&llm.max_token_bytes) {
            return Err("llm.maxTokenBytes: must be between 512 and 65536".into());
        }
        if llm.max_tokens == 0 || llm.max_tokens > 32_768 {
            return Err("llm.maxTokens: must be between 1 and 32768".into());
        }
        if !(0.0..=2.0).contains(&llm.temperature) {
            return Err("llm.temperature: must be between 0 and 2".into());
        }
        match llm.correction_api_version.split_once('/') {
            Some((group, version))
                if !group.is_empty() && !version.is_empty() && !version.contains('/') => {}
            _ => {
                return Err(format!(
                    "llm.correctionApiVersion: {:?} is not of the form group/version",
                    llm.correction_api_version
                ))
            }
        }
        Ok(())
    }
}

/// Parses settings JSON, naming the bad field in the error.
pub fn parse(payload: &[u8]) -> Result<Settings, String> {
    // Settings are parsed on every evaluation: the plain parser first, and the slower
    // path-tracking one only to explain an error.
    if let Ok(Object(settings)) = serde_json::from_slice(payload) {
        return Ok(settings);
    }
    let de = &mut serde_json::Deserializer::from_slice(payload);
    serde_path_to_error::deserialize(de)
        .map(|Object(s)| s)
        .map_err(|e| {
            let path = e.path().to_string();
            if path == "." {
                format!("settings: {}", e.inner())
            } else {
                format!("settings.{path}: {}", e.inner())
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_safe() {
        let s = parse(b"{}").unwrap();
        assert_eq!(s.mode, Mode::Fix);
        assert_eq!(s.allowed_paths, None);
        assert!(s.allows("/spec/source"));
        assert!(s.allows("/scopes/0"));
        for never in [
            "",
            "/apiVersion",
            "/kind",
            "/metadata/labels",
            "/status",
            "/status/x",
        ] {
            assert!(!s.allows(never), "{never}");
        }
        assert!(s.is_allowed_root("/spec") && s.is_allowed_root("/scopes"));
        assert!(!s.is_allowed_root("/spec/source") && !s.is_allowed_root("/status"));
        let s = parse(br#"{"allowedPaths":["/spec/source"]}"#).unwrap();
        assert!(s.allows("/spec/source/catalog") && !s.allows("/spec/namespace"));
        assert!(s.is_allowed_root("/spec/source") && !s.is_allowed_root("/spec"));
        assert!(s
            .protected_paths
            .contains(&"/spec/serviceAccount".to_string()));
        assert!(!s.llm.enabled);
        assert_eq!(s.uncertain_fixes, UncertainFixes::Suggest);
        assert!(s.llm.confirm_picks && !s.llm.trust_agreed_picks);
        assert!(s.validate().is_ok());
    }

    #[test]
    fn uncertain_fixes_takes_its_three_values_and_nothing_else() {
        for (text, want) in [
            ("suggest", UncertainFixes::Suggest),
            ("apply", UncertainFixes::Apply),
            ("reject", UncertainFixes::Reject),
        ] {
            let s = parse(format!(r#"{{"uncertainFixes":"{text}"}}"#).as_bytes()).unwrap();
            assert_eq!(s.uncertain_fixes, want);
        }
        let e = parse(br#"{"uncertainFixes":"maybe"}"#).unwrap_err();
        assert!(e.contains("uncertainFixes"), "{e}");
    }

    #[test]
    fn unknown_keys_are_errors_that_name_the_key() {
        let e = parse(br#"{"modee":"fix"}"#).unwrap_err();
        assert!(e.contains("modee"), "{e}");
        let e = parse(br#"{"llm":{"maxAttempt":3}}"#).unwrap_err();
        assert!(e.contains("llm") && e.contains("maxAttempt"), "{e}");
    }

    #[test]
    fn settings_are_objects_never_arrays() {
        let e = parse(br#"["validate"]"#).unwrap_err();
        assert!(
            e.starts_with("settings: invalid type: sequence, expected a JSON object"),
            "{e}"
        );
        let e = parse(br#"{"llm":[true, 3]}"#).unwrap_err();
        assert!(e.starts_with("settings.llm: invalid type: sequence"), "{e}");
        let e = parse(b"42").unwrap_err();
        assert!(e.contains("expected a JSON object"), "{e}");
        assert!(parse(br#"{"llm":{}}"#).is_ok());
    }

    #[test]
    fn wrong_types_name_the_field() {
        let e = parse(br#"{"llm":{"maxAttempts":"two"}}"#).unwrap_err();
        assert!(e.starts_with("settings.llm.maxAttempts"), "{e}");
        let e = parse(br#"{"mode":"repair"}"#).unwrap_err();
        assert!(e.starts_with("settings.mode"), "{e}");
    }

    #[test]
    fn semantic_checks_name_the_field() {
        let s = parse(br#"{"schemaSource":"inline"}"#).unwrap();
        assert!(s.validate().unwrap_err().starts_with("crds"));
        assert!(s.validate_options().unwrap_err().starts_with("crds"));
        // The per-request checks leave the CRDs to validate_settings and load_schema.
        let s = parse(br#"{"schemaSource":"inline","crds":[{"kind":"ConfigMap"}]}"#).unwrap();
        assert!(s.validate().unwrap_err().starts_with("crds[0]: kind"));
        assert_eq!(s.validate_options(), Ok(()));
        let s = parse(br#"{"allowedPaths":["/metadata/labels"]}"#).unwrap();
        assert!(s.validate().unwrap_err().starts_with("allowedPaths"));
        let s = parse(br#"{"allowedPaths":["/"]}"#).unwrap();
        assert!(s.validate().unwrap_err().starts_with("allowedPaths"));
        let s = parse(br#"{"protectedPaths":["spec"]}"#).unwrap();
        assert!(s.validate().unwrap_err().starts_with("protectedPaths"));
        let s = parse(br#"{"llm":{"maxAttempts":0}}"#).unwrap();
        assert!(s.validate().unwrap_err().starts_with("llm.maxAttempts"));
        let s = parse(br#"{"llm":{"correctionApiVersion":"v1"}}"#).unwrap();
        assert!(s
            .validate()
            .unwrap_err()
            .starts_with("llm.correctionApiVersion"));
    }
}
