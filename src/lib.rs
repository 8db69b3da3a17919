//! crfix: a Kubewarden policy that repairs invalid custom resources before they are persisted.
//!
//! `validate` runs the pipeline of [`pipeline::evaluate`]; each stage lives in its own module:
//! settings → schema source → validation (structural + CEL) → deterministic repair →
//! LLM correction → guardrails → response.

pub mod answer;
pub mod cel_rules;
pub mod evidence;
pub mod guardrails;
pub mod host;
pub mod llm;
pub mod pipeline;
pub mod pointer;
pub mod prompt;
pub mod repair;
pub mod request;
pub mod response;
pub mod schema;
pub mod schema_source;
pub mod settings;
pub mod types;
pub mod validation;

use kubewarden_policy_sdk::settings::{SettingsValidationResponse, Validatable};
use wapc_guest::prelude::*;

#[no_mangle]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}

fn validate(payload: &[u8]) -> CallResult {
    let response = pipeline::evaluate(payload, &host::WapcHost);
    Ok(serde_json::to_vec(&response)?)
}

fn validate_settings(payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&check_settings(payload))?)
}

/// `validate_settings`: never an error, always an answer that names the bad field.
pub fn check_settings(payload: &[u8]) -> SettingsValidationResponse {
    match settings::parse(payload).and_then(|s| s.validate()) {
        Ok(()) => SettingsValidationResponse {
            valid: true,
            message: None,
        },
        Err(message) => SettingsValidationResponse {
            valid: false,
            message: Some(message),
        },
    }
}
