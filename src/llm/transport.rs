//! The road to the LLM: a `Correction` read with `kubernetes/get_resource`, which the API
//! server's aggregation layer hands to crfix-llm-proxy (see docs/architecture.md, "The
//! Correction API"), and the host's error strings turned into reasons a user understands.

use correction_api::Correction;

use crate::host::{GetResourceRequest, Host, LogLevel};
use crate::settings::Settings;
use crate::text::one_line;

/// Longest snippet of an unrecognised host error quoted in a reason.
const MAX_HOST_ERROR_SNIPPET: usize = 120;

/// One host call: `kubernetes/get_resource` of the Correction named by the token.
pub(super) fn call(
    host: &dyn Host,
    settings: &Settings,
    token: &str,
) -> Result<Correction, String> {
    let api_version = &settings.llm.correction_api_version;
    let request = GetResourceRequest {
        api_version: api_version.clone(),
        kind: correction_api::KIND.to_string(),
        name: token.to_string(),
        namespace: None,
        // Identical requests within 5 s are answered by policy-server's cache.
        disable_cache: false,
        field_masks: None,
    };
    let bytes = host.get_resource(&request).map_err(|e| {
        host.log(
            LogLevel::Warning,
            &format!("Correction request failed: {}", one_line(&e, 512)),
        );
        classify_host_error(&e, api_version)
    })?;
    let correction: Correction = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "crfix-llm-proxy's answer is not a Correction object ({e}); check the proxy version"
        )
    })?;
    Ok(correction)
}

/// Maps the host's error string to a short reason a user understands. policy-server reports a
/// failed `get_resource` as text: a denied resource or capability ("Policy has not been
/// granted access to ..."), an unknown kind ("Cannot find resource ..." / "error finding
/// resource ..." from discovery), a missing object ("Cannot find <apiVersion>/<kind> named
/// ..."), or a kube-rs API error whose text carries the Status (`code: 503`, reason
/// `ServiceUnavailable`).
pub fn classify_host_error(err: &str, api_version: &str) -> String {
    let lower = err.to_ascii_lowercase();
    if lower.contains("has not been granted access") {
        return format!(
            "the policy may not read {api_version} Correction: add it to contextAwareResources in the policy's metadata (and to the PolicyServer's allowed host capabilities)"
        );
    }
    if lower.contains("cannot find resource")
        || lower.contains("error finding resource")
        || lower.contains("page not found")
        || lower.contains("could not find the requested resource")
    {
        return format!(
            "the Correction API {api_version} is not served: is crfix-llm-proxy installed and its APIService available?"
        );
    }
    let named = format!(
        "cannot find {}/correction named",
        api_version.to_ascii_lowercase()
    );
    if lower.contains(&named) {
        return "crfix-llm-proxy answered 404 for the Correction: is the APIService pointing at crfix-llm-proxy?".into();
    }
    match status_code(&lower) {
        Some(429) => "the LLM budget or rate limit is exhausted (429)".into(),
        Some(503) => "the LLM or crfix-llm-proxy is unavailable (503)".into(),
        Some(504) => "the LLM did not answer in time (504)".into(),
        Some(413) => "the Correction is larger than crfix-llm-proxy accepts (413): lower llm.maxTokenBytes to the proxy's token limit".into(),
        Some(code @ (400 | 422)) => format!(
            "crfix-llm-proxy rejected the Correction request ({code}); this is a crfix bug, please report it"
        ),
        Some(code @ (401 | 403)) => format!(
            "the policy-server may not get corrections.{} ({code}): check its RBAC",
            correction_api::GROUP
        ),
        Some(404) => format!(
            "the Correction API {api_version} answered 404: is crfix-llm-proxy installed?"
        ),
        Some(code) => format!("the Correction request failed ({code})"),
        None if lower.contains("timed out")
            || lower.contains("timeout")
            || lower.contains("deadline") =>
        {
            "the Correction request timed out".into()
        }
        None => format!(
            "the Correction request failed: {}",
            one_line(err, MAX_HOST_ERROR_SNIPPET)
        ),
    }
}

/// The HTTP status in a host error: the last `code: NNN` / `"code":NNN` (kube-rs prints the
/// Status last, after the proxy's own message), else a Status reason name.
fn status_code(lower: &str) -> Option<u16> {
    let bytes = lower.as_bytes();
    let mut found = None;
    let mut from = 0;
    while let Some(i) = lower[from..].find("code") {
        let mut j = from + i + 4;
        while j < bytes.len() && matches!(bytes[j], b' ' | b':' | b'"' | b'=') {
            j += 1;
        }
        let digits = bytes[j..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 3 {
            found = lower[j..j + 3].parse().ok();
        }
        from = from + i + 4;
    }
    if found.is_some() {
        return found;
    }
    const REASONS: [(&str, u16); 7] = [
        ("toomanyrequests", 429),
        ("serviceunavailable", 503),
        ("gatewaytimeout", 504),
        ("requestentitytoolarge", 413),
        ("badrequest", 400),
        ("forbidden", 403),
        ("unauthorized", 401),
    ];
    REASONS
        .iter()
        .find(|(r, _)| lower.contains(r))
        .map(|&(_, c)| c)
}
