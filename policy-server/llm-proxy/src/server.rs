//! Wiring: configuration → client auth → TLS → state → accept loop with graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::cache::AnswerCache;
use crate::circuit::Circuit;
use crate::config::Config;
use crate::handlers::{self, AppState};
use crate::key::{ApiKey, KeySource};
use crate::limits::Limits;
use crate::metrics::Metrics;
use crate::tls::{self, ClientAuth, ClientIdentity};
use crate::upstream::{Upstream, UpstreamOptions};

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves client authentication from flags and, if asked, from the cluster.
pub async fn client_auth(config: &Config) -> anyhow::Result<ClientAuth> {
    if config.insecure_skip_client_auth {
        tracing::warn!(
            "!!! CLIENT AUTHENTICATION IS DISABLED (--insecure-skip-client-auth): anyone who can reach {} can spend the LLM budget. Use this only on a developer machine. !!!",
            config.listen
        );
        return Ok(ClientAuth::Disabled);
    }
    let (mut ca_pem, mut allowed_names) = (None, config.requestheader_allowed_names.clone());
    allowed_names.retain(|n| !n.trim().is_empty());
    if config.authentication_from_cluster {
        let from_cluster = crate::incluster::fetch().await?;
        tracing::info!(allowed_names = ?from_cluster.allowed_names, "read request-header authentication from kube-system/extension-apiserver-authentication");
        ca_pem = Some(from_cluster.client_ca_pem);
        if allowed_names.is_empty() {
            allowed_names = from_cluster.allowed_names;
        }
    }
    if let Some(path) = &config.requestheader_client_ca_file {
        ca_pem = Some(
            std::fs::read(path)
                .with_context(|| format!("reading the request-header CA {}", path.display()))?,
        );
    }
    let ca_pem = ca_pem.context(
        "no request-header client CA: pass --requestheader-client-ca-file or --authentication-from-cluster (or --insecure-skip-client-auth for local use)",
    )?;
    if allowed_names.is_empty() {
        tracing::warn!("--requestheader-allowed-names is empty: any certificate signed by the request-header CA is accepted");
    }
    Ok(ClientAuth::RequestHeader {
        ca_pem,
        allowed_names,
    })
}

pub fn build_state(config: &Config) -> anyhow::Result<Arc<AppState>> {
    let metrics = Arc::new(Metrics::with_max_users(config.metrics_max_users));
    let (base_url, local) = config.upstream_base();
    let key = match (
        &config.api_key_file,
        std::env::var("OPENAI_API_KEY").ok().and_then(ApiKey::new),
    ) {
        (Some(path), _) => KeySource::file(path.clone()),
        (None, Some(key)) => KeySource::Env(key),
        (None, None) => KeySource::None,
    };
    if !local && !key.is_configured() {
        tracing::warn!("no API key (OPENAI_API_KEY or --api-key-file): the proxy is not ready");
    }
    let upstream = Upstream::new(
        UpstreamOptions {
            base_url: base_url.to_string(),
            model: config.model.clone(),
            json_mode: config.json_mode_enabled(),
            key,
            key_required: !local,
            attempt_timeout: config.upstream_timeout,
            max_retries: config.max_retries,
        },
        Arc::clone(&metrics),
    )?;
    Ok(Arc::new(AppState {
        upstream,
        cache: AnswerCache::new(config.cache_max_entries, config.cache_max_bytes),
        circuit: Circuit::new(
            config.circuit_failure_threshold,
            config.circuit_open_duration,
        ),
        limits: Limits::new(
            config.rate_limit,
            config.rate_burst,
            config.global_budget(),
            config.user_budget(),
        ),
        metrics,
        max_token_bytes: config.max_token_bytes,
        request_deadline: config.request_deadline,
    }))
}

/// Host (and port) of a URL, without any user info or path.
fn display_host(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?.to_string();
            Some(match u.port() {
                Some(port) => format!("{}://{host}:{port}", u.scheme()),
                None => format!("{}://{host}", u.scheme()),
            })
        })
        .unwrap_or_else(|| "<unparsable URL>".into())
}

pub async fn run(config: Config) -> anyhow::Result<()> {
    let auth = client_auth(&config).await?;
    let tls_config = tls::server_config(
        &config.tls_cert_file,
        &config.tls_private_key_file,
        &auth,
        false,
    )?;
    let state = build_state(&config)?;
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    tracing::info!(
        listen = %listener.local_addr().unwrap_or(config.listen),
        upstream = %display_host(config.upstream_base().0),
        model = %config.model,
        json_mode = config.json_mode_enabled(),
        client_auth = !matches!(auth, ClientAuth::Disabled),
        "crfix-llm-proxy serving"
    );
    serve(
        listener,
        TlsAcceptor::from(Arc::new(tls_config)),
        auth,
        state,
        config.max_token_bytes,
        shutdown_signal(),
        config.shutdown_grace,
    )
    .await
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(error) => {
                    tracing::warn!(%error, "cannot listen for SIGTERM");
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    auth: ClientAuth,
    state: Arc<AppState>,
    max_token_bytes: usize,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> anyhow::Result<()> {
    let app = handlers::router(Arc::clone(&state));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    let header_room = (max_token_bytes * 2 + 64 * 1024) as u32;
    builder
        .http1()
        .max_buf_size((header_room as usize).max(8192 + 4096));
    builder.http2().max_header_list_size(header_room);
    let builder = Arc::new(builder);
    let graceful = GracefulShutdown::new();
    let auth = Arc::new(auth);
    tokio::pin!(shutdown);

    loop {
        let (tcp, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Usually EMFILE: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let (acceptor, app, builder, auth, state) = (
            acceptor.clone(),
            app.clone(),
            Arc::clone(&builder),
            Arc::clone(&auth),
            Arc::clone(&state),
        );
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    state.metrics.count_refusal("tls_handshake_failed");
                    tracing::debug!(%peer, %error, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    state.metrics.count_refusal("tls_handshake_timeout");
                    return;
                }
            };
            let identity = auth.identify(stream.get_ref().1.peer_certificates());
            match &identity {
                ClientIdentity::Denied(cn) => {
                    tracing::warn!(%peer, cn = %cn, "client certificate CN is not allowed; only health endpoints will answer")
                }
                ClientIdentity::Allowed(cn) => {
                    tracing::debug!(%peer, cn = %cn, "client authenticated")
                }
                _ => {}
            }
            let service = app.map_request(move |mut request: hyper::Request<Incoming>| {
                request.extensions_mut().insert(identity.clone());
                request
            });
            let connection = builder.serve_connection_with_upgrades(
                TokioIo::new(stream),
                TowerToHyperService::new(service),
            );
            if let Err(error) = watcher.watch(connection.into_owned()).await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }

    drop(listener);
    tracing::info!("shutting down: waiting for open connections");
    match tokio::time::timeout(grace, graceful.shutdown()).await {
        Ok(()) => tracing::info!("all connections closed"),
        Err(_) => tracing::warn!(
            grace_seconds = grace.as_secs(),
            "connections still open after the grace period; exiting"
        ),
    }
    Ok(())
}
