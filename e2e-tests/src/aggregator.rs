//! The kube-apiserver's side of a `Correction` read: what policy-server's `get_resource`
//! does when the resource is served by crfix-llm-proxy through an APIService. The request
//! goes over HTTPS with the aggregator's client certificate, and a non-200 `Status` comes
//! back to the guest as the error string policy-server (kube-rs) makes of it.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::{callback_failure, GetResourceCall};

/// The error string the guest receives when the API server answers with a `Status`
/// (kube-rs `Error::Api`, wrapped by policy-server's callback).
pub fn kube_api_error(code: u16, reason: &str, message: &str) -> String {
    callback_failure(&format!(
        "ApiError: {message}: {reason} (ErrorResponse {{ status: \"Failure\", message: {message:?}, reason: {reason:?}, code: {code} }})"
    ))
}

/// Where the proxy is and how the aggregator authenticates to it.
pub struct AggregatorClient {
    client: reqwest::blocking::Client,
    base_url: String,
}

impl AggregatorClient {
    /// `ca_pem`: the proxy's serving CA (the APIService `caBundle`); `identity_pem`: the
    /// aggregator's client certificate and key (PEM, concatenated).
    pub fn new(
        base_url: &str,
        ca_pem: &str,
        identity_pem: &str,
        timeout: Duration,
    ) -> Result<Self> {
        let client = reqwest::blocking::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(
                reqwest::Certificate::from_pem(ca_pem.as_bytes()).context("serving CA")?,
            )
            .identity(
                reqwest::Identity::from_pem(identity_pem.as_bytes()).context("client identity")?,
            )
            .timeout(timeout)
            .build()
            .context("building the aggregator client")?;
        Ok(AggregatorClient {
            client,
            base_url: base_url.trim_end_matches('/').to_string(),
        })
    }

    /// Answers one `get_resource` of a cluster-scoped object the proxy serves.
    pub fn get(&self, call: &GetResourceCall) -> std::result::Result<Vec<u8>, String> {
        let (group, version) = call
            .api_version
            .split_once('/')
            .ok_or_else(|| callback_failure(&format!("bad apiVersion {}", call.api_version)))?;
        let plural = format!("{}s", call.kind.to_lowercase());
        let url = format!(
            "{}/apis/{group}/{version}/{plural}/{}",
            self.base_url, call.name
        );
        let response = self
            .client
            .get(&url)
            .header("Accept", "application/json")
            .send()
            .map_err(|e| {
                let kind = if e.is_timeout() {
                    "timed out"
                } else {
                    "failed"
                };
                kube_api_error(
                    503,
                    "ServiceUnavailable",
                    &format!("the aggregated API request {kind}"),
                )
            })?;
        let code = response.status().as_u16();
        let body = response
            .bytes()
            .map_err(|_| kube_api_error(503, "ServiceUnavailable", "reading the answer failed"))?;
        if code == 200 {
            return Ok(body.to_vec());
        }
        let status: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let text = |key: &str| {
            status
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        Err(kube_api_error(code, &text("reason"), &text("message")))
    }
}
