//! Stage 5: deterministic, schema-guided repairs, driven by the validation errors.
//! OWNER: repair engineer. (stub signatures; replace the bodies; may become repair/mod.rs)

use serde_json::Value;

use crate::settings::Settings;
use crate::types::{Change, ValidationOutcome};
use crate::validation::ValidateOptions;

pub struct RepairContext<'a> {
    pub schema: &'a Value,
    /// The old object on UPDATE.
    pub old_object: Option<&'a Value>,
    pub settings: &'a Settings,
    pub options: ValidateOptions,
}

#[derive(Debug, Clone)]
pub struct RepairOutcome {
    /// The object after every repair that was applied.
    pub object: Value,
    /// What was changed and why, in order.
    pub changes: Vec<Change>,
    /// Validation of `object`.
    pub validation: ValidationOutcome,
    /// Repairs considered but not applied, and why (ambiguous, guardrail, ...).
    pub refused: Vec<String>,
}

/// Repairs `object` until it is valid or no repair reduces the errors (bounded rounds).
pub fn repair(_ctx: &RepairContext, object: &Value, initial: &ValidationOutcome) -> RepairOutcome {
    RepairOutcome {
        object: object.clone(),
        changes: Vec::new(),
        validation: initial.clone(),
        refused: Vec::new(),
    }
}
