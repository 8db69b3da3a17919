//! Stages 6-7: ask the LLM through crfix-llm-proxy (a `Correction` read with
//! `kubernetes/get_resource`), parse the answer, check and re-validate it; bounded attempts.
//! OWNER: LLM engineer. (stub signatures; replace the bodies; prompt.rs/answer.rs beside it)

use serde_json::Value;

use crate::host::Host;
use crate::repair::RepairContext;
use crate::types::{Change, ValidationOutcome};

#[derive(Debug, Clone)]
pub enum LlmOutcome {
    /// A fully valid, guardrail-clean candidate.
    Fixed {
        object: Value,
        /// The changes the LLM made (source `Llm`), relative to the object it was given.
        changes: Vec<Change>,
        attempts: u32,
        model: String,
    },
    /// Every attempt failed (invalid, guardrail, unparsable); nothing is applied.
    Failed {
        attempts: u32,
        /// Why each attempt failed, in order.
        reasons: Vec<String>,
    },
    /// The LLM could not be asked or did not answer (not granted, proxy down, 429/503/504,
    /// prompt too large).
    Unavailable { attempts: u32, reason: String },
}

/// Asks the LLM to fix what `outcome` still reports on `object`.
pub fn correct(
    _ctx: &RepairContext,
    _host: &dyn Host,
    _object: &Value,
    _outcome: &ValidationOutcome,
) -> LlmOutcome {
    LlmOutcome::Unavailable {
        attempts: 0,
        reason: "not implemented".into(),
    }
}
