//! Plain data types shared by the stages of the pipeline.

use serde::Serialize;
use serde_json::Value;

/// What kind of rule a value broke. Carries what a repair needs to know about the rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ErrorKind {
    /// A required property is missing; the error's pointer is the missing property's path.
    Required,
    /// The value has the wrong JSON type. `expected` is the schema type
    /// (`string`, `integer`, `number`, `boolean`, `object`, `array`, `int-or-string`).
    Type {
        expected: String,
    },
    /// `null` where the schema is not `nullable`.
    Null,
    Enum {
        allowed: Vec<Value>,
    },
    Pattern {
        pattern: String,
    },
    Format {
        format: String,
    },
    MinLength {
        limit: u64,
    },
    MaxLength {
        limit: u64,
    },
    Minimum {
        limit: f64,
        exclusive: bool,
    },
    Maximum {
        limit: f64,
        exclusive: bool,
    },
    MultipleOf {
        factor: f64,
    },
    MinItems {
        limit: u64,
    },
    MaxItems {
        limit: u64,
    },
    MinProperties {
        limit: u64,
    },
    MaxProperties {
        limit: u64,
    },
    /// A property the schema does not know (and no `x-kubernetes-preserve-unknown-fields`).
    Unknown,
    /// `x-kubernetes-list-type: set` or `map` duplicates.
    Duplicate,
    /// An `x-kubernetes-embedded-resource` without apiVersion/kind.
    EmbeddedResource,
    /// `oneOf`, `anyOf`, `allOf` or `not` (the `keyword`) not satisfied. The API server reports
    /// it without a field (`<nil>`); the pointer is the value's.
    Combinator {
        keyword: String,
    },
    /// A CEL `x-kubernetes-validations` rule evaluated to false (or failed at run time).
    Cel {
        rule: String,
        /// `FieldValueInvalid` unless the rule says otherwise.
        reason: String,
        /// The rule uses `oldSelf` (a transition rule).
        transition: bool,
    },
}

/// One validation error, as precise as the API server's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldError {
    /// RFC 6901 JSON pointer of the offending value (for `Required`, of the missing property).
    pub pointer: String,
    #[serde(flatten)]
    pub kind: ErrorKind,
    /// A sentence a person understands.
    pub message: String,
}

impl FieldError {
    /// The API server's dotted field path, e.g. `spec.source.catalog.packageName`,
    /// `spec.channels[0]`.
    pub fn field_path(&self) -> String {
        if matches!(self.kind, ErrorKind::Combinator { .. }) {
            // The API server's schema validator names the value in the message instead.
            return "<nil>".to_string();
        }
        crate::pointer::to_field_path(&self.pointer)
    }

    /// `spec.source.catalog.packageName: Required value`.
    pub fn line(&self) -> String {
        format!("{}: {}", self.field_path(), self.message)
    }

    /// Short rule name for messages and prompts (`required`, `enum`, `cel`, ...).
    pub fn rule_name(&self) -> &'static str {
        match &self.kind {
            ErrorKind::Required => "required",
            ErrorKind::Type { .. } => "type",
            ErrorKind::Null => "nullable",
            ErrorKind::Enum { .. } => "enum",
            ErrorKind::Pattern { .. } => "pattern",
            ErrorKind::Format { .. } => "format",
            ErrorKind::MinLength { .. } => "minLength",
            ErrorKind::MaxLength { .. } => "maxLength",
            ErrorKind::Minimum { .. } => "minimum",
            ErrorKind::Maximum { .. } => "maximum",
            ErrorKind::MultipleOf { .. } => "multipleOf",
            ErrorKind::MinItems { .. } => "minItems",
            ErrorKind::MaxItems { .. } => "maxItems",
            ErrorKind::MinProperties { .. } => "minProperties",
            ErrorKind::MaxProperties { .. } => "maxProperties",
            ErrorKind::Unknown => "unknown field",
            ErrorKind::Duplicate => "duplicate",
            ErrorKind::EmbeddedResource => "embedded resource",
            ErrorKind::Combinator { .. } => "schema combinator",
            ErrorKind::Cel { .. } => "x-kubernetes-validations",
        }
    }
}

/// `spec.source.catalog.packageName: Required value` style lines, most important first.
pub fn error_lines(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(FieldError::line).collect()
}

/// Result of validating one object against one schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ValidationOutcome {
    /// Errors, most important first.
    pub errors: Vec<FieldError>,
    /// Problems of crfix itself that did not reject the object, e.g. a CEL rule the
    /// interpreter could not compile (reported, never held against the user's object).
    pub warnings: Vec<String>,
}

impl ValidationOutcome {
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Where a change came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "source", rename_all = "camelCase")]
pub enum ChangeSource {
    /// A deterministic repair; `rule` names the repair kind (e.g. `enum`, `coerce`, `rename`).
    Rule { rule: String },
    /// An LLM answer; `model` as reported by the proxy.
    Llm { model: String },
}

/// One change made to the object, for warnings, annotations and the audit log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// JSON pointer of the value after the change.
    pub path: String,
    /// For moves/renames: the pointer the value came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Value before (None: it was absent).
    pub old: Option<Value>,
    /// Value after (None: it was removed).
    pub new: Option<Value>,
    /// Why, in a few words (e.g. `enum`, `closest allowed value`, `moved to schema path`).
    pub reason: String,
    #[serde(flatten)]
    pub source: ChangeSource,
}
