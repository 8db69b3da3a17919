//! HTTP handlers: discovery, corrections, health, metrics, and the client-auth gate.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Json, Router};
use correction_api::{
    decode_token, Correction, CorrectionRequest, CorrectionStatus, TokenError, API_VERSION, GROUP,
    KIND, RESOURCE, SINGULAR, VERSION,
};
use serde_json::{json, Value};

use crate::cache::{AnswerCache, Source};
use crate::circuit::{Circuit, CircuitState, Transition};
use crate::limits::{Limits, Refusal};
use crate::metrics::Metrics;
use crate::status::ApiError;
use crate::tls::ClientIdentity;
use crate::upstream::{Answer, Upstream, UpstreamError};

pub struct AppState {
    pub upstream: Upstream,
    pub cache: AnswerCache<ApiError>,
    pub circuit: Arc<Circuit>,
    pub limits: Limits,
    pub metrics: Arc<Metrics>,
    pub max_token_bytes: usize,
    pub request_deadline: Duration,
}

pub type SharedState = Arc<AppState>;

pub fn router(state: SharedState) -> Router {
    let correction_path = format!("/apis/{GROUP}/{VERSION}/{RESOURCE}");
    Router::new()
        .route("/apis", get(group_list))
        .route(&format!("/apis/{GROUP}"), get(group))
        .route(&format!("/apis/{GROUP}/{VERSION}"), get(resource_list))
        .route(&correction_path, any(list_not_allowed))
        .route(&format!("{correction_path}/"), any(list_not_allowed))
        .route(
            &format!("{correction_path}/{{token}}"),
            get(get_correction).fallback(method_not_allowed),
        )
        .route("/healthz", get(healthz))
        .route("/livez", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            authorize,
        ))
        .with_state(state)
}

/// Health endpoints are open to anyone (kubelet probes carry no client certificate, and
/// Kubernetes API servers serve them anonymously too); everything else needs an allowed
/// client certificate. This runs before any handler, so a refused client causes no work.
async fn authorize(State(app): State<SharedState>, request: Request, next: Next) -> Response {
    if matches!(request.uri().path(), "/healthz" | "/livez" | "/readyz") {
        return next.run(request).await;
    }
    match request.extensions().get::<ClientIdentity>() {
        Some(ClientIdentity::Unchecked) | Some(ClientIdentity::Allowed(_)) => {
            next.run(request).await
        }
        Some(ClientIdentity::Denied(cn)) => {
            app.metrics.count_refusal("cn_not_allowed");
            app.metrics.count_request("forbidden");
            ApiError::forbidden(format!(
                "client certificate CN {cn:?} is not in the request-header allowed names"
            ))
            .into_response()
        }
        Some(ClientIdentity::Anonymous) | None => {
            app.metrics.count_refusal("no_client_certificate");
            app.metrics.count_request("unauthorized");
            ApiError::unauthorized(
                "a client certificate signed by the request-header client CA is required",
            )
            .into_response()
        }
    }
}

fn group_version() -> Value {
    json!({"groupVersion": API_VERSION, "version": VERSION})
}

fn group_json() -> Value {
    json!({
        "name": GROUP,
        "versions": [group_version()],
        "preferredVersion": group_version(),
    })
}

async fn group_list() -> Json<Value> {
    Json(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [group_json()]}))
}

async fn group() -> Json<Value> {
    let mut group = group_json();
    group["kind"] = json!("APIGroup");
    group["apiVersion"] = json!("v1");
    Json(group)
}

async fn resource_list() -> Json<Value> {
    Json(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": API_VERSION,
        "resources": [{
            "name": RESOURCE,
            "singularName": SINGULAR,
            "namespaced": false,
            "kind": KIND,
            "verbs": ["get"],
        }],
    }))
}

async fn list_not_allowed() -> ApiError {
    ApiError::method_not_allowed(format!(
        "{RESOURCE}.{GROUP} can only be read one by one (get)"
    ))
}

async fn method_not_allowed() -> ApiError {
    ApiError::method_not_allowed("only GET is served")
}

async fn not_found(request: Request) -> ApiError {
    ApiError::not_found(format!(
        "the server could not find {}",
        request.uri().path()
    ))
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(app): State<SharedState>) -> Response {
    if !app.upstream.is_configured() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "upstream not configured: no API key",
        )
            .into_response();
    }
    if app.circuit.state() == CircuitState::Open {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "circuit open: the LLM keeps failing",
        )
            .into_response();
    }
    "ok".into_response()
}

async fn metrics(State(app): State<SharedState>) -> Response {
    let m = &app.metrics;
    m.cache_entries.set(app.cache.len() as i64);
    m.cache_bytes.set(app.cache.weight() as i64);
    m.circuit_state.set(app.circuit.state().gauge());
    let (requests, tokens) = app.limits.used_today();
    m.budget_requests_used.set(requests as i64);
    m.budget_tokens_used.set(tokens as i64);
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.render(),
    )
        .into_response()
}

async fn get_correction(
    State(app): State<SharedState>,
    token: Result<Path<String>, axum::extract::rejection::PathRejection>,
) -> Response {
    let started = Instant::now();
    let Ok(Path(token)) = token else {
        app.metrics.count_request("bad_request");
        return ApiError::bad_request("the correction name is not valid UTF-8").into_response();
    };
    let result = app.correction(&token).await;
    let elapsed = started.elapsed();
    app.metrics.request_duration.observe(elapsed.as_secs_f64());
    // The token is the prompt: log only its size and a short prefix.
    let token_prefix: String = token.chars().take(16).collect();
    match result {
        Ok((correction, outcome)) => {
            app.metrics.count_request(outcome);
            tracing::info!(
                outcome,
                token_len = token.len(),
                token_prefix,
                elapsed_ms = elapsed.as_millis() as u64,
                "correction"
            );
            Json(correction).into_response()
        }
        Err(mut error) => {
            error.message = app.upstream.redact(error.message);
            let outcome = outcome_for(error.code);
            app.metrics.count_request(outcome);
            tracing::info!(outcome, code = error.code.as_u16(), message = %error.message, token_len = token.len(), token_prefix, elapsed_ms = elapsed.as_millis() as u64, "correction failed");
            error.into_response()
        }
    }
}

fn outcome_for(code: StatusCode) -> &'static str {
    match code.as_u16() {
        400 => "bad_request",
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        405 => "method_not_allowed",
        413 => "too_large",
        429 => "too_many_requests",
        502 => "bad_upstream_answer",
        503 => "unavailable",
        504 => "timeout",
        _ => "internal_error",
    }
}

fn seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

impl AppState {
    async fn correction(&self, token: &str) -> Result<(Correction, &'static str), ApiError> {
        if token.len() > self.max_token_bytes {
            return Err(ApiError::too_large(format!(
                "the correction token is {} bytes, more than the limit of {}",
                token.len(),
                self.max_token_bytes
            )));
        }
        let request = decode_token(token, self.max_token_bytes).map_err(|e| match e {
            TokenError::TooLarge { .. } | TokenError::DecodedTooLarge => {
                ApiError::too_large(format!("invalid correction token: {e}"))
            }
            _ => ApiError::bad_request(format!("invalid correction token: {e}")),
        })?;
        if let Some(answer) = self.cache.get(token) {
            self.metrics.cache_hits.inc();
            return Ok((correction(token, &answer, true), "cached"));
        }
        self.metrics.cache_misses.inc();
        let deadline = Instant::now() + self.request_deadline;
        let (result, source) = self
            .cache
            .get_or_call(token, || self.call_upstream(&request, deadline))
            .await;
        let outcome = match source {
            Source::Upstream => "answered",
            Source::Shared => {
                self.metrics.shared_calls.inc();
                "shared"
            }
        };
        let answer = result?;
        Ok((correction(token, &answer, false), outcome))
    }

    async fn call_upstream(
        &self,
        request: &CorrectionRequest,
        deadline: Instant,
    ) -> Result<Answer, ApiError> {
        let permit = self.circuit.acquire().map_err(|wait| {
            ApiError::unavailable(
                "the LLM keeps failing: the circuit breaker is open",
                Some(seconds(wait).max(1)),
            )
        })?;
        self.limits.admit().map_err(|refusal| match refusal {
            Refusal::Rate(wait) => ApiError::too_many_requests(
                "the proxy's upstream rate limit is reached",
                seconds(wait),
            ),
            Refusal::Requests(wait) => ApiError::too_many_requests(
                "the daily LLM request budget is exhausted",
                seconds(wait),
            ),
            Refusal::Tokens(wait) => ApiError::too_many_requests(
                "the daily LLM token budget is exhausted",
                seconds(wait),
            ),
        })?;
        let result =
            tokio::time::timeout_at(deadline.into(), self.upstream.complete(request, deadline))
                .await
                .unwrap_or(Err(UpstreamError::Timeout));
        match &result {
            Ok(answer) => {
                if permit.record(true) == Transition::Closed {
                    tracing::info!("circuit closed: the LLM answers again");
                }
                let (prompt, completion) =
                    (answer.usage.prompt_tokens, answer.usage.completion_tokens);
                self.limits.spend_tokens(prompt + completion);
                self.metrics.add_tokens(prompt, completion);
            }
            Err(error) if error.is_upstream_failure() => {
                if permit.record(false) == Transition::Opened {
                    self.metrics.circuit_opened.inc();
                    tracing::warn!(%error, "circuit opened: failing fast until the LLM recovers");
                }
            }
            Err(_) => drop(permit),
        }
        result.map_err(|error| match error {
            UpstreamError::NoKey => {
                ApiError::unavailable("the proxy has no LLM API key configured", None)
            }
            UpstreamError::Timeout => ApiError::timeout(error.to_string()),
            UpstreamError::Unavailable(_) => ApiError::unavailable(error.to_string(), None),
            UpstreamError::RateLimited { retry_after } => {
                ApiError::too_many_requests(error.to_string(), retry_after.unwrap_or(1))
            }
            UpstreamError::Rejected(_) | UpstreamError::BadAnswer(_) => {
                ApiError::bad_gateway(error.to_string())
            }
        })
    }
}

fn correction(token: &str, answer: &Answer, cached: bool) -> Correction {
    Correction::new(
        token,
        CorrectionStatus {
            content: answer.content.clone(),
            model: answer.model.clone(),
            cached,
            finish_reason: answer.finish_reason.clone(),
            usage: Some(answer.usage.clone()),
        },
    )
}
