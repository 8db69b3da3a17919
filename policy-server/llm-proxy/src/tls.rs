//! TLS: the serving certificate, and client authentication as an aggregated API server does
//! it (certificate chained to the request-header CA, CN in the allowed names).

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Who is on the other end of a connection, decided once, right after the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientIdentity {
    /// Client authentication is switched off (`--insecure-skip-client-auth`).
    Unchecked,
    /// A certificate that chains to the CA and whose CN is allowed.
    Allowed(String),
    /// A certificate that chains to the CA but whose CN is not allowed.
    Denied(String),
    /// No client certificate (e.g. kubelet probes): health endpoints only.
    Anonymous,
}

/// Client authentication settings.
#[derive(Debug, Clone)]
pub enum ClientAuth {
    Disabled,
    RequestHeader {
        ca_pem: Vec<u8>,
        allowed_names: Vec<String>,
    },
}

impl ClientAuth {
    pub fn identify(&self, peer: Option<&[CertificateDer<'_>]>) -> ClientIdentity {
        let ClientAuth::RequestHeader { allowed_names, .. } = self else {
            return ClientIdentity::Unchecked;
        };
        let Some(leaf) = peer.and_then(|chain| chain.first()) else {
            return ClientIdentity::Anonymous;
        };
        // The verifier already checked the chain; only the CN is left to check.
        let cn = common_name(leaf).unwrap_or_default();
        if allowed_names.is_empty() || allowed_names.iter().any(|n| n == &cn) {
            ClientIdentity::Allowed(cn)
        } else {
            ClientIdentity::Denied(cn)
        }
    }
}

fn common_name(der: &CertificateDer<'_>) -> Option<String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).ok()?;
    let cn = cert.subject().iter_common_name().next()?;
    cn.as_str().ok().map(str::to_string)
}

pub fn load_certs(path: &Path) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .with_context(|| format!("reading certificates from {}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("parsing certificates in {}", path.display()))?;
    if certs.is_empty() {
        bail!("no certificate in {}", path.display());
    }
    Ok(certs)
}

fn certs_from_pem(pem: &[u8]) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .context("parsing the client CA bundle")?;
    if certs.is_empty() {
        bail!("the client CA bundle holds no certificate");
    }
    Ok(certs)
}

pub fn server_config(
    cert_file: &Path,
    key_file: &Path,
    auth: &ClientAuth,
    http2_only_alpn: bool,
) -> anyhow::Result<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = load_certs(cert_file)?;
    let key = PrivateKeyDer::from_pem_file(key_file)
        .with_context(|| format!("reading the private key in {}", key_file.display()))?;
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?;
    let builder = match auth {
        ClientAuth::Disabled => builder.with_no_client_auth(),
        ClientAuth::RequestHeader { ca_pem, .. } => {
            let mut roots = RootCertStore::empty();
            for cert in certs_from_pem(ca_pem)? {
                roots.add(cert).context("adding a client CA certificate")?;
            }
            // Anonymous clients may connect (kubelet probes); they only reach the health
            // endpoints. A certificate that does not chain to the CA fails the handshake.
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .context("building the client certificate verifier")?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .context("the serving certificate and key do not match")?;
    config.alpn_protocols = if http2_only_alpn {
        vec![b"h2".to_vec()]
    } else {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    };
    Ok(config)
}
