//! HTTP handlers: discovery, corrections, health, metrics, and the client-auth gate.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Extension, Json, Router};
use correction_api::{
    decode_token_with_user, encode_token, Correction, CorrectionRequest, CorrectionStatus,
    TokenError, API_VERSION, GROUP, KIND, RESOURCE, SINGULAR, VERSION,
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

/// The router of the plain-HTTP metrics listener: GET /metrics and nothing else.
pub fn metrics_router(state: SharedState) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
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

/// The user a correction is for (the budget subject), and who asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requester {
    /// The end user named in the token by the policy, else the aggregator's `X-Remote-User`,
    /// else [`ANONYMOUS`].
    pub user: String,
    pub groups: Vec<String>,
    /// `X-Remote-User`, as set by the aggregator (the policy server's own identity when the
    /// policy asks): who made the request.
    pub caller: Option<String>,
}

/// The budget subject of requests that name no user at all.
pub const ANONYMOUS: &str = "system:anonymous";

/// `X-Remote-User` and `X-Remote-Group`, trusted only on connections that passed the
/// front-proxy client certificate check (anyone else could set them).
fn remote_user(
    identity: Option<&ClientIdentity>,
    headers: &HeaderMap,
) -> (Option<String>, Vec<String>) {
    if !matches!(identity, Some(ClientIdentity::Allowed(_))) {
        return (None, Vec::new());
    }
    let text = |v: &axum::http::HeaderValue| {
        v.to_str()
            .ok()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    let user = headers.get("x-remote-user").and_then(text);
    let groups = headers
        .get_all("x-remote-group")
        .iter()
        .filter_map(text)
        .collect();
    (user, groups)
}

/// What a correction request came to.
struct Answered {
    correction: Correction,
    outcome: &'static str,
    /// Tokens this request made the LLM spend (0 when cached or shared).
    tokens: u64,
}

async fn get_correction(
    State(app): State<SharedState>,
    identity: Option<Extension<ClientIdentity>>,
    headers: HeaderMap,
    token: Result<Path<String>, axum::extract::rejection::PathRejection>,
) -> Response {
    let started = Instant::now();
    let (caller, caller_groups) = remote_user(identity.as_deref(), &headers);
    let mut requester = Requester {
        user: caller.clone().unwrap_or_else(|| ANONYMOUS.to_string()),
        groups: caller_groups,
        caller,
    };
    let Ok(Path(token)) = token else {
        app.metrics.count_request("bad_request");
        app.metrics
            .count_user_request(&requester.user, "bad_request");
        return ApiError::bad_request("the correction name is not valid UTF-8").into_response();
    };
    let result = app.correction(&token, &mut requester).await;
    let elapsed = started.elapsed();
    app.metrics.request_duration.observe(elapsed.as_secs_f64());
    // The token is the prompt: log only its size and a short prefix.
    let token_prefix: String = token.chars().take(16).collect();
    let Requester {
        user,
        groups,
        caller,
    } = &requester;
    let groups = groups.join(",");
    let caller = caller.as_deref().unwrap_or("");
    match result {
        Ok(Answered {
            correction,
            outcome,
            tokens,
        }) => {
            app.metrics.count_request(outcome);
            app.metrics.count_user_request(user, outcome);
            tracing::info!(
                outcome,
                user = %user,
                groups = %groups,
                caller = %caller,
                tokens,
                cached = correction.status.cached,
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
            app.metrics.count_user_request(user, outcome);
            tracing::info!(
                outcome,
                user = %user,
                groups = %groups,
                caller = %caller,
                tokens = 0u64,
                cached = false,
                code = error.code.as_u16(),
                error = %error.message,
                token_len = token.len(),
                token_prefix,
                elapsed_ms = elapsed.as_millis() as u64,
                "correction failed"
            );
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
    /// Answers one token. `requester` comes in as the caller and leaves as the user the
    /// correction was accounted to (the end user the token names, if any).
    async fn correction(
        &self,
        token: &str,
        requester: &mut Requester,
    ) -> Result<Answered, ApiError> {
        if token.len() > self.max_token_bytes {
            return Err(ApiError::too_large(format!(
                "the correction token is {} bytes, more than the limit of {}",
                token.len(),
                self.max_token_bytes
            )));
        }
        let decoded = decode_token_with_user(token, self.max_token_bytes).map_err(|e| match e {
            TokenError::TooLarge { .. } | TokenError::DecodedTooLarge => {
                ApiError::too_large(format!("invalid correction token: {e}"))
            }
            _ => ApiError::bad_request(format!("invalid correction token: {e}")),
        })?;
        let request = decoded.request;
        // Answers depend on the request alone: tokens naming different users for the same
        // request share one cache entry (and one in-flight call).
        let cache_key = match decoded.user {
            Some(user) => {
                requester.user = user.username;
                requester.groups = user.groups;
                Cow::Owned(encode_token(&request))
            }
            None => Cow::Borrowed(token),
        };
        let done = |answer: &Answer, cached: bool, outcome, tokens| Answered {
            correction: correction(token, answer, cached),
            outcome,
            tokens,
        };
        if let Some(answer) = self.cache.get(&cache_key) {
            self.metrics.cache_hits.inc();
            return Ok(done(&answer, true, "cached", 0));
        }
        self.metrics.cache_misses.inc();
        let deadline = Instant::now() + self.request_deadline;
        let user = requester.user.as_str();
        let (result, source) = self
            .cache
            .get_or_call(&cache_key, || self.call_upstream(&request, deadline, user))
            .await;
        let answer = result?;
        Ok(match source {
            Source::Upstream => {
                let tokens = answer.usage.prompt_tokens + answer.usage.completion_tokens;
                done(&answer, false, "answered", tokens)
            }
            Source::Shared => {
                self.metrics.shared_calls.inc();
                done(&answer, false, "shared", 0)
            }
        })
    }

    async fn call_upstream(
        &self,
        request: &CorrectionRequest,
        deadline: Instant,
        user: &str,
    ) -> Result<Answer, ApiError> {
        let permit = self.circuit.acquire().map_err(|wait| {
            ApiError::unavailable(
                "the LLM keeps failing: the circuit breaker is open",
                Some(seconds(wait).max(1)),
            )
        })?;
        let per_user = self.limits.per_user();
        self.limits.admit(user).map_err(|refusal| match refusal {
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
            Refusal::UserRequests(wait) => ApiError::too_many_requests(
                format!(
                    "the daily LLM request budget of user {user:?} is exhausted ({} LLM calls per user per day)",
                    per_user.requests
                ),
                seconds(wait),
            ),
            Refusal::UserTokens(wait) => ApiError::too_many_requests(
                format!(
                    "the daily LLM token budget of user {user:?} is exhausted ({} tokens per user per day)",
                    per_user.tokens
                ),
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
                self.limits.spend_tokens(user, prompt + completion);
                self.metrics.add_tokens(prompt, completion);
                self.metrics.add_user_tokens(user, prompt + completion);
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
