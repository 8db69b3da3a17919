//! Stage 3: validate an object as the API server validates custom resources.
//! OWNER: validation engineer. (stub signatures; replace the bodies)

use serde_json::Value;

use crate::types::ValidationOutcome;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Report properties the schema does not know (see `Settings::reject_unknown_fields`).
    pub report_unknown_fields: bool,
}

/// Validates `object` (the whole custom resource) against the CRD version's
/// `openAPIV3Schema`. `old_object` is given on UPDATE; transition rules (`oldSelf`) run only
/// where the old value exists.
pub fn validate(
    _schema: &Value,
    _object: &Value,
    _old_object: Option<&Value>,
    _options: ValidateOptions,
) -> ValidationOutcome {
    ValidationOutcome::default()
}
