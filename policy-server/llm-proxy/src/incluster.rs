//! `--authentication-from-cluster`: read the request-header client CA and allowed names from
//! the ConfigMap kube-system/extension-apiserver-authentication with one HTTPS GET, using the
//! pod's service account. (kube-rs would be far heavier for one read.)

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use serde::Deserialize;

const SA_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const PATH: &str = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeaderAuth {
    pub client_ca_pem: Vec<u8>,
    pub allowed_names: Vec<String>,
}

#[derive(Deserialize)]
struct ConfigMap {
    #[serde(default)]
    data: std::collections::BTreeMap<String, String>,
}

/// Parses the ConfigMap's JSON.
pub fn parse_configmap(json: &[u8]) -> anyhow::Result<RequestHeaderAuth> {
    let cm: ConfigMap = serde_json::from_slice(json).context("the ConfigMap is not JSON")?;
    let ca = cm
        .data
        .get("requestheader-client-ca-file")
        .filter(|ca| !ca.trim().is_empty())
        .ok_or_else(|| anyhow!("the ConfigMap has no requestheader-client-ca-file: the API server runs without front-proxy (aggregation) certificates"))?;
    let allowed_names = match cm.data.get("requestheader-allowed-names") {
        Some(names) if !names.trim().is_empty() => serde_json::from_str::<Vec<String>>(names)
            .context("requestheader-allowed-names is not a JSON list of strings")?,
        _ => Vec::new(),
    };
    Ok(RequestHeaderAuth {
        client_ca_pem: ca.as_bytes().to_vec(),
        allowed_names,
    })
}

/// Reads the ConfigMap from the API server the pod runs under.
pub async fn fetch() -> anyhow::Result<RequestHeaderAuth> {
    let host = std::env::var("KUBERNETES_SERVICE_HOST")
        .context("KUBERNETES_SERVICE_HOST is not set: not running in a cluster")?;
    let port = std::env::var("KUBERNETES_SERVICE_PORT").unwrap_or_else(|_| "443".into());
    // The service account mount; another directory only for tests and unusual mounts.
    let dir = std::env::var_os("CRFIX_SERVICE_ACCOUNT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(SA_DIR));
    let token =
        std::fs::read_to_string(dir.join("token")).context("reading the service account token")?;
    let ca = std::fs::read(dir.join("ca.crt")).context("reading the service account CA")?;
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    let client = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).context("parsing ca.crt")?)
        .timeout(Duration::from_secs(10))
        .build()
        .context("building the API server client")?;
    let mut auth = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", token.trim()))
        .context("the service account token is not a valid header value")?;
    auth.set_sensitive(true);
    let response = client
        .get(format!("https://{host}:{port}{PATH}"))
        .header(reqwest::header::AUTHORIZATION, auth)
        .send()
        .await
        .context("reading kube-system/extension-apiserver-authentication")?;
    if !response.status().is_success() {
        bail!(
            "reading kube-system/extension-apiserver-authentication: HTTP {} (does the service account have the extension-apiserver-authentication-reader Role?)",
            response.status().as_u16()
        );
    }
    let body = response
        .bytes()
        .await
        .context("reading the ConfigMap body")?;
    parse_configmap(&body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_configmap() {
        let json = br#"{"kind":"ConfigMap","data":{"client-ca-file":"x","requestheader-client-ca-file":"-----BEGIN CERTIFICATE-----\nAA\n-----END CERTIFICATE-----\n","requestheader-allowed-names":"[\"front-proxy-client\"]","requestheader-username-headers":"[\"X-Remote-User\"]"}}"#;
        let auth = parse_configmap(json).unwrap();
        assert_eq!(auth.allowed_names, ["front-proxy-client"]);
        assert!(auth
            .client_ca_pem
            .starts_with(b"-----BEGIN CERTIFICATE-----"));
        let no_names =
            br#"{"data":{"requestheader-client-ca-file":"pem","requestheader-allowed-names":""}}"#;
        assert!(parse_configmap(no_names).unwrap().allowed_names.is_empty());
        assert!(parse_configmap(br#"{"data":{"client-ca-file":"x"}}"#).is_err());
    }
}
