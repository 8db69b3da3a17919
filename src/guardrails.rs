//! Guardrails on every candidate, whatever its source (DESIGN section 5, point 4).
//! OWNER: repair engineer. (stub signatures; replace the bodies)

use serde_json::Value;

use crate::settings::Settings;

/// The annotation crfix writes on a repaired object; the only change allowed in metadata.
pub const REPAIR_ANNOTATION: &str = "crfix.dev/repair";

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Violation {
    pub pointer: String,
    pub message: String,
}

/// May a repair touch `pointer`? (allowed roots, protected paths, never apiVersion/kind/metadata)
pub fn check_path(_settings: &Settings, _pointer: &str) -> Result<(), Violation> {
    Ok(())
}

/// Checks a whole candidate against the original: computes the RFC 6902 patch, checks every
/// operation's path(s), the operation count and that metadata/apiVersion/kind are untouched
/// (ignoring the crfix annotation). Returns the patch when clean.
pub fn check_candidate(
    _settings: &Settings,
    _original: &Value,
    _candidate: &Value,
) -> Result<json_patch::Patch, Vec<Violation>> {
    Ok(json_patch::Patch(Vec::new()))
}
