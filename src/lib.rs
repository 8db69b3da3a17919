//! crfix: a Kubewarden policy that repairs invalid custom resources before they are persisted.
//!
//! `validate` runs [`evaluate`] ([`pipeline`]); each stage lives in its own module, in the order
//! of the request flow (docs/architecture.md, "Stages and their files"):
//! settings and payload → schema source → validation (structural + CEL) → deterministic
//! repair → LLM correction → guardrails → response.
//!
//! The crate's public API is what this file re-exports: the waPC entry points, the pipeline
//! for hosts that call it natively (tests, benchmarks), the settings types and the LLM answer
//! parser (fuzzed from outside).

#[cfg(target_arch = "wasm32")]
mod alloc;
mod certainty;
mod crd;
#[cfg(test)]
mod fixtures;
mod guardrails;
mod host;
mod llm;
mod nearest;
mod pipeline;
mod pointer;
mod repair;
mod request;
mod response;
mod schema;
mod schema_source;
mod schema_view;
mod settings;
mod text;
mod types;
mod validation;

pub use host::{FnHost, GetResourceRequest, Host, LogLevel};
pub use llm::{parse_answer, AnswerError};
pub use pipeline::evaluate;
pub use settings::{
    parse as parse_settings, AnswerFormat, Fallback, LlmSettings, Mode, SchemaSourceKind, Settings,
};

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
