//! TLS: the serving certificate, and client authentication as an aggregated API server does
//! it (certificate chained to the request-header CA, CN in the allowed names).

use std::sync::{Arc, Mutex, RwLock};

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
#[derive(Debug, Clone, PartialEq, Eq)]
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

fn certs_from_pem(pem: &[u8]) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .context("parsing the client CA bundle")?;
    if certs.is_empty() {
        bail!("the client CA bundle holds no certificate");
    }
    Ok(certs)
}

/// A rustls server configuration from PEM serving certificate chain and key.
pub fn server_config(
    cert_pem: &[u8],
    key_pem: &[u8],
    auth: &ClientAuth,
    http2_only_alpn: bool,
) -> anyhow::Result<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .context("parsing the serving certificate")?;
    if certs.is_empty() {
        bail!("the serving certificate file holds no certificate");
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).context("reading the private key")?;
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

/// Everything a TLS configuration is built from. Compared as bytes to notice a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsInputs {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    pub auth: ClientAuth,
}

/// The TLS configuration and client authentication new connections use. Replaced as a
/// whole when the certificate, key, client CA or allowed names change; connections already
/// open keep the configuration they were accepted with.
pub struct LiveTls {
    current: RwLock<(Arc<ServerConfig>, Arc<ClientAuth>)>,
    /// What `current` was built from, and the last inputs that failed (not retried until
    /// they change, so a broken file is reported once).
    applied: Mutex<(TlsInputs, Option<TlsInputs>)>,
    http2_only_alpn: bool,
}

/// What [`LiveTls::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    Unchanged,
    Reloaded,
    /// The new inputs are broken; the previous configuration stays.
    Failed,
}

impl LiveTls {
    pub fn new(inputs: TlsInputs, http2_only_alpn: bool) -> anyhow::Result<LiveTls> {
        let config = server_config(
            &inputs.cert_pem,
            &inputs.key_pem,
            &inputs.auth,
            http2_only_alpn,
        )?;
        Ok(LiveTls {
            current: RwLock::new((Arc::new(config), Arc::new(inputs.auth.clone()))),
            applied: Mutex::new((inputs, None)),
            http2_only_alpn,
        })
    }

    /// The configuration and client authentication for a new connection.
    pub fn current(&self) -> (Arc<ServerConfig>, Arc<ClientAuth>) {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        (Arc::clone(&current.0), Arc::clone(&current.1))
    }

    /// Switches to `inputs` if they differ from the applied ones and make a valid
    /// configuration; otherwise keeps the current one.
    pub fn update(&self, inputs: TlsInputs) -> anyhow::Result<Update> {
        let mut applied = self.applied.lock().unwrap_or_else(|p| p.into_inner());
        if inputs == applied.0 || applied.1.as_ref() == Some(&inputs) {
            return Ok(Update::Unchanged);
        }
        match server_config(
            &inputs.cert_pem,
            &inputs.key_pem,
            &inputs.auth,
            self.http2_only_alpn,
        ) {
            Ok(config) => {
                *self.current.write().unwrap_or_else(|p| p.into_inner()) =
                    (Arc::new(config), Arc::new(inputs.auth.clone()));
                *applied = (inputs, None);
                Ok(Update::Reloaded)
            }
            Err(error) => {
                applied.1 = Some(inputs);
                Err(error)
            }
        }
    }
}
