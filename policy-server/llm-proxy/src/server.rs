//! Wiring: configuration → client auth → TLS → state → accept loop with graceful shutdown.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
use crate::incluster::RequestHeaderAuth;
use crate::key::{ApiKey, KeySource};
use crate::limits::Limits;
use crate::metrics::Metrics;
use crate::tls::{ClientAuth, ClientIdentity, LiveTls, TlsInputs, Update};
use crate::upstream::{Upstream, UpstreamOptions};

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the TLS inputs come from: files, and the cluster's ConfigMap. Read at start and
/// again on every reload tick.
pub struct TlsSources {
    cert_file: PathBuf,
    key_file: PathBuf,
    ca_file: Option<PathBuf>,
    /// From `--requestheader-allowed-names`; empty takes the cluster's.
    allowed_names: Vec<String>,
    from_cluster: bool,
    disabled: bool,
}

impl TlsSources {
    pub fn from_config(config: &Config) -> TlsSources {
        let mut allowed_names = config.requestheader_allowed_names.clone();
        allowed_names.retain(|n| !n.trim().is_empty());
        TlsSources {
            cert_file: config.tls_cert_file.clone(),
            key_file: config.tls_private_key_file.clone(),
            ca_file: config.requestheader_client_ca_file.clone(),
            allowed_names,
            from_cluster: config.authentication_from_cluster,
            disabled: config.insecure_skip_client_auth,
        }
    }

    fn uses_cluster(&self) -> bool {
        self.from_cluster && !self.disabled
    }

    /// Reads every input; `cluster` is the last ConfigMap content read, if any. Explicit
    /// `--requestheader-*` flags take precedence over the cluster's values.
    pub fn read(&self, cluster: Option<&RequestHeaderAuth>) -> anyhow::Result<TlsInputs> {
        let read = |path: &PathBuf, what: &str| {
            std::fs::read(path).with_context(|| format!("reading the {what} {}", path.display()))
        };
        let cert_pem = read(&self.cert_file, "serving certificate")?;
        let key_pem = read(&self.key_file, "private key")?;
        if self.disabled {
            return Ok(TlsInputs {
                cert_pem,
                key_pem,
                auth: ClientAuth::Disabled,
            });
        }
        let mut ca_pem = cluster.map(|c| c.client_ca_pem.clone());
        if let Some(path) = &self.ca_file {
            ca_pem = Some(read(path, "request-header CA")?);
        }
        let ca_pem = ca_pem.context(
            "no request-header client CA: pass --requestheader-client-ca-file or --authentication-from-cluster (or --insecure-skip-client-auth for local use)",
        )?;
        let allowed_names = match cluster {
            Some(c) if self.allowed_names.is_empty() => c.allowed_names.clone(),
            _ => self.allowed_names.clone(),
        };
        Ok(TlsInputs {
            cert_pem,
            key_pem,
            auth: ClientAuth::RequestHeader {
                ca_pem,
                allowed_names,
            },
        })
    }
}

/// Re-reads the certificate files every `file_interval` and the cluster's ConfigMap every
/// `cluster_interval` (0 switches either off), and switches new connections to the new
/// configuration when something changed. A broken or half-written new input keeps the
/// previous configuration and is reported once (by log and metric) until it changes.
async fn reload_tls(
    sources: TlsSources,
    live: Arc<LiveTls>,
    mut cluster: Option<RequestHeaderAuth>,
    file_interval: Duration,
    cluster_interval: Duration,
    metrics: Arc<Metrics>,
) {
    let cluster_interval = if sources.uses_cluster() {
        cluster_interval
    } else {
        Duration::ZERO
    };
    let tick = match (file_interval.is_zero(), cluster_interval.is_zero()) {
        (true, true) => return,
        (false, true) => file_interval,
        (true, false) => cluster_interval,
        (false, false) => file_interval.min(cluster_interval),
    };
    let mut ticker = tokio::time::interval(tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    let mut cluster_read_at = Instant::now();
    let mut last_error: Option<String> = None;
    loop {
        ticker.tick().await;
        let mut cluster_changed = false;
        if !cluster_interval.is_zero() && cluster_read_at.elapsed() >= cluster_interval {
            cluster_read_at = Instant::now();
            match crate::incluster::fetch().await {
                Ok(fresh) => {
                    cluster_changed = cluster.as_ref() != Some(&fresh);
                    cluster = Some(fresh);
                }
                Err(error) => {
                    metrics.count_tls_reload("error");
                    tracing::error!(
                        error = format!("{error:#}"),
                        "re-reading kube-system/extension-apiserver-authentication failed; keeping the previous request-header CA"
                    );
                }
            }
        }
        if file_interval.is_zero() && !cluster_changed {
            continue;
        }
        let result = sources
            .read(cluster.as_ref())
            .and_then(|inputs| live.update(inputs));
        match result {
            Ok(Update::Reloaded) => {
                last_error = None;
                metrics.count_tls_reload("ok");
                tracing::info!("TLS configuration reloaded: new connections use the new serving certificate and request-header CA");
            }
            Ok(_) => {}
            Err(error) => {
                let error = format!("{error:#}");
                if last_error.as_ref() != Some(&error) {
                    metrics.count_tls_reload("error");
                    tracing::error!(%error, "TLS reload failed; keeping the previous certificate and client CA");
                    last_error = Some(error);
                }
            }
        }
    }
}

/// Reads the cluster's request-header authentication, if configured, and logs the
/// client-authentication mode.
pub async fn initial_cluster_auth(
    config: &Config,
    sources: &TlsSources,
) -> anyhow::Result<Option<RequestHeaderAuth>> {
    if config.insecure_skip_client_auth {
        tracing::warn!(
            "!!! CLIENT AUTHENTICATION IS DISABLED (--insecure-skip-client-auth): anyone who can reach {} can spend the LLM budget. Use this only on a developer machine. !!!",
            config.listen
        );
        return Ok(None);
    }
    let cluster = if sources.uses_cluster() {
        let from_cluster = crate::incluster::fetch().await?;
        tracing::info!(allowed_names = ?from_cluster.allowed_names, "read request-header authentication from kube-system/extension-apiserver-authentication");
        Some(from_cluster)
    } else {
        None
    };
    Ok(cluster)
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
            structured_output: config.structured_output,
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
    let sources = TlsSources::from_config(&config);
    let cluster = initial_cluster_auth(&config, &sources).await?;
    let inputs = sources.read(cluster.as_ref())?;
    if matches!(&inputs.auth, ClientAuth::RequestHeader { allowed_names, .. } if allowed_names.is_empty())
    {
        tracing::warn!("--requestheader-allowed-names is empty: any certificate signed by the request-header CA is accepted");
    }
    let client_auth = !matches!(inputs.auth, ClientAuth::Disabled);
    let live = Arc::new(LiveTls::new(inputs, false)?);
    let state = build_state(&config)?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let metrics_server = match config.metrics_bind_address {
        Some(address) => {
            let listener = TcpListener::bind(address)
                .await
                .with_context(|| format!("binding the metrics address {address}"))?;
            tracing::info!(listen = %listener.local_addr().unwrap_or(address), "serving /metrics over plain HTTP");
            let mut stopped = stopped.clone();
            let router = handlers::metrics_router(Arc::clone(&state));
            Some(tokio::spawn(async move {
                let result = axum::serve(listener, router)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.wait_for(|stop| *stop).await;
                    })
                    .await;
                if let Err(error) = result {
                    tracing::error!(%error, "the metrics listener failed");
                }
            }))
        }
        None => None,
    };
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("binding {}", config.listen))?;
    tracing::info!(
        listen = %listener.local_addr().unwrap_or(config.listen),
        upstream = %display_host(config.upstream_base().0),
        model = %config.model,
        json_mode = config.json_mode_enabled(),
        structured_output = config.structured_output.as_str(),
        client_auth,
        "crfix-llm-proxy serving"
    );
    let reloader = tokio::spawn(reload_tls(
        sources,
        Arc::clone(&live),
        cluster,
        config.cert_reload_interval,
        config.cluster_auth_reload_interval,
        Arc::clone(&state.metrics),
    ));
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = stop.send(true);
    });
    let mut main_stopped = stopped;
    let result = serve(
        listener,
        live,
        state,
        config.max_token_bytes,
        async move {
            let _ = main_stopped.wait_for(|stop| *stop).await;
        },
        config.shutdown_grace,
    )
    .await;
    reloader.abort();
    if let Some(metrics_server) = metrics_server {
        let _ = tokio::time::timeout(config.shutdown_grace, metrics_server).await;
    }
    result
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
    tls: Arc<LiveTls>,
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
        // Each connection takes the configuration current when it is accepted.
        let (tls_config, auth) = tls.current();
        let acceptor = TlsAcceptor::from(tls_config);
        let (app, builder, state) = (app.clone(), Arc::clone(&builder), Arc::clone(&state));
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
