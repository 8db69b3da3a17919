//! The OpenAI-compatible upstream client: one chat completion per correction, with per-attempt
//! timeouts, jittered exponential backoff on 429/5xx/timeouts/connection errors, and a total
//! deadline. Upstream bodies are never logged or echoed: they may quote the key.

use std::sync::Arc;
use std::time::{Duration, Instant};

use correction_api::{CorrectionRequest, Usage};
use reqwest::header::{AUTHORIZATION, RETRY_AFTER};
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::config::StructuredOutput;
use crate::key::{ApiKey, KeySource};
use crate::metrics::Metrics;

/// The `name` of the schema in the `json_schema` dialects (OpenAI requires one, vLLM too).
pub const SCHEMA_NAME: &str = "crfix_answer";

#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub content: String,
    pub model: String,
    pub finish_reason: String,
    pub usage: Usage,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    #[error("no API key is configured")]
    NoKey,
    #[error("the LLM did not answer within the deadline")]
    Timeout,
    #[error("the LLM is unavailable ({0})")]
    Unavailable(String),
    #[error("the LLM is rate limiting the proxy")]
    RateLimited { retry_after: Option<u64> },
    #[error("the LLM refused the request with HTTP {0}")]
    Rejected(u16),
    #[error("the LLM answer is unusable: {0}")]
    BadAnswer(String),
}

impl UpstreamError {
    /// The error with the key removed from its text (messages are fixed strings today; this
    /// keeps it so if one ever quotes the upstream).
    fn redacted(self, key: &ApiKey) -> UpstreamError {
        let clean = |text: String| key.redact(&text).unwrap_or(text);
        match self {
            UpstreamError::Unavailable(text) => UpstreamError::Unavailable(clean(text)),
            UpstreamError::BadAnswer(text) => UpstreamError::BadAnswer(clean(text)),
            other => other,
        }
    }

    /// Whether the failure says the upstream is unhealthy (counts for the circuit breaker).
    pub fn is_upstream_failure(&self) -> bool {
        match self {
            UpstreamError::Timeout
            | UpstreamError::Unavailable(_)
            | UpstreamError::BadAnswer(_) => true,
            UpstreamError::Rejected(code) => *code == 401 || *code == 403,
            UpstreamError::NoKey | UpstreamError::RateLimited { .. } => false,
        }
    }
}

pub struct Upstream {
    client: reqwest::Client,
    url: String,
    model: String,
    json_mode: bool,
    structured_output: StructuredOutput,
    key: KeySource,
    key_required: bool,
    attempt_timeout: Duration,
    max_retries: u32,
    metrics: Arc<Metrics>,
}

#[derive(Deserialize)]
struct ChatResponse {
    #[serde(default)]
    model: String,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<ChoiceMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

enum Attempt {
    Done(Result<Answer, UpstreamError>),
    Retry(UpstreamError, Option<Duration>),
}

pub struct UpstreamOptions {
    pub base_url: String,
    pub model: String,
    pub json_mode: bool,
    pub structured_output: StructuredOutput,
    pub key: KeySource,
    pub key_required: bool,
    pub attempt_timeout: Duration,
    pub max_retries: u32,
}

impl Upstream {
    pub fn new(options: UpstreamOptions, metrics: Arc<Metrics>) -> anyhow::Result<Upstream> {
        let client = reqwest::Client::builder()
            .user_agent(concat!("crfix-llm-proxy/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(options.attempt_timeout.min(Duration::from_secs(5)))
            .pool_idle_timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| anyhow::anyhow!("building the upstream HTTP client: {e}"))?;
        Ok(Upstream {
            client,
            url: format!(
                "{}/chat/completions",
                options.base_url.trim_end_matches('/')
            ),
            model: options.model,
            json_mode: options.json_mode,
            structured_output: options.structured_output,
            key: options.key,
            key_required: options.key_required,
            attempt_timeout: options.attempt_timeout,
            max_retries: options.max_retries,
            metrics,
        })
    }

    /// Configured: a key is present, or the endpoint does not need one.
    pub fn is_configured(&self) -> bool {
        !self.key_required || self.key.is_configured()
    }

    pub fn endpoint(&self) -> &str {
        &self.url
    }

    /// One chat completion, retried within `deadline`.
    pub async fn complete(
        &self,
        request: &CorrectionRequest,
        deadline: Instant,
    ) -> Result<Answer, UpstreamError> {
        let key = self.current_key();
        if key.is_none() && self.key_required {
            return Err(UpstreamError::NoKey);
        }
        let mut body = json!({
            "model": self.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        });
        let structured = request
            .response_schema
            .as_ref()
            .and_then(|schema| response_format(self.structured_output, schema));
        if let Some(format) = structured {
            // The schema says more than JSON mode: it replaces it.
            body["response_format"] = format;
            self.metrics
                .count_structured_request(self.structured_output.as_str());
        } else if self.json_mode {
            body["response_format"] = json!({"type": "json_object"});
        }
        let auth = key.as_ref().and_then(|k| k.bearer_header());
        let result = self.attempts(&body, auth, deadline).await;
        match (result, &key) {
            (Ok(answer), Some(key)) => Ok(self.redact_answer(answer, key)),
            (Err(error), Some(key)) => Err(error.redacted(key)),
            (result, None) => result,
        }
    }

    /// The answer with the key removed from every field the proxy passes on: an upstream
    /// that reflects the `Authorization` header must not hand the key to the caller (the
    /// policy quotes answers in rejection messages) nor to the cache.
    fn redact_answer(&self, mut answer: Answer, key: &ApiKey) -> Answer {
        let mut redacted = false;
        for field in [
            &mut answer.content,
            &mut answer.model,
            &mut answer.finish_reason,
        ] {
            if let Some(clean) = key.redact(field) {
                *field = clean;
                redacted = true;
            }
        }
        if redacted {
            self.metrics.key_redactions.inc();
            tracing::warn!("the LLM's answer contained the API key; it was redacted");
        }
        answer
    }

    fn current_key(&self) -> Option<ApiKey> {
        let (key, reloaded) = self.key.current();
        if reloaded {
            self.metrics.key_reloads.inc();
            tracing::info!("API key file changed; using the new key");
        }
        key
    }

    /// `text` without the current key, for text shown to callers.
    pub fn redact(&self, text: String) -> String {
        match self.current_key() {
            Some(key) => key.redact(&text).unwrap_or(text),
            None => text,
        }
    }

    async fn attempts(
        &self,
        body: &serde_json::Value,
        auth: Option<reqwest::header::HeaderValue>,
        deadline: Instant,
    ) -> Result<Answer, UpstreamError> {
        let mut attempt = 0u32;
        loop {
            let now = Instant::now();
            let Some(remaining) = deadline
                .checked_duration_since(now)
                .filter(|d| !d.is_zero())
            else {
                return Err(UpstreamError::Timeout);
            };
            let timeout = self.attempt_timeout.min(remaining);
            let (error, retry_after) = match self.attempt(body, auth.clone(), timeout).await {
                Attempt::Done(result) => return result,
                Attempt::Retry(error, retry_after) => (error, retry_after),
            };
            if attempt >= self.max_retries {
                return Err(error);
            }
            attempt += 1;
            let backoff = retry_after.unwrap_or_else(|| jittered_backoff(attempt));
            let left = deadline.saturating_duration_since(Instant::now());
            if backoff >= left {
                // No time for another attempt: a timed-out attempt means the deadline is the
                // real cause; otherwise report the last error.
                return Err(error);
            }
            tracing::debug!(attempt, backoff_ms = backoff.as_millis() as u64, %error, "retrying upstream");
            tokio::time::sleep(backoff).await;
        }
    }

    async fn attempt(
        &self,
        body: &serde_json::Value,
        auth: Option<reqwest::header::HeaderValue>,
        timeout: Duration,
    ) -> Attempt {
        let started = Instant::now();
        let mut builder = self.client.post(&self.url).json(body).timeout(timeout);
        if let Some(auth) = auth {
            builder = builder.header(AUTHORIZATION, auth);
        }
        let result = builder.send().await;
        let outcome = match result {
            Err(e) if e.is_timeout() => {
                self.record(started, "timeout");
                return Attempt::Retry(UpstreamError::Timeout, None);
            }
            Err(e) => {
                self.record(started, "connect_error");
                // reqwest errors carry the URL, never headers.
                let kind = if e.is_connect() {
                    "connection failed"
                } else {
                    "request failed"
                };
                return Attempt::Retry(UpstreamError::Unavailable(kind.into()), None);
            }
            Ok(response) => response,
        };
        let status = outcome.status();
        let retry_after = outcome
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if status == StatusCode::TOO_MANY_REQUESTS {
            self.record(started, "http_429");
            return Attempt::Retry(
                UpstreamError::RateLimited { retry_after },
                retry_after.map(Duration::from_secs),
            );
        }
        if status.is_server_error() {
            self.record(started, "http_5xx");
            return Attempt::Retry(
                UpstreamError::Unavailable(format!("HTTP {}", status.as_u16())),
                retry_after.map(Duration::from_secs),
            );
        }
        if !status.is_success() {
            self.record(started, "http_4xx");
            tracing::warn!(status = status.as_u16(), "upstream refused the request");
            return Attempt::Done(Err(UpstreamError::Rejected(status.as_u16())));
        }
        let bytes =
            match tokio::time::timeout(timeout.saturating_sub(started.elapsed()), outcome.bytes())
                .await
            {
                Ok(Ok(bytes)) => bytes,
                Ok(Err(_)) => {
                    self.record(started, "connect_error");
                    return Attempt::Retry(
                        UpstreamError::Unavailable("answer cut short".into()),
                        None,
                    );
                }
                Err(_) => {
                    self.record(started, "timeout");
                    return Attempt::Retry(UpstreamError::Timeout, None);
                }
            };
        let answer = parse_answer(&bytes);
        self.record(started, if answer.is_ok() { "ok" } else { "bad_answer" });
        Attempt::Done(answer)
    }

    fn record(&self, started: Instant, outcome: &str) {
        self.metrics
            .upstream_duration
            .observe(started.elapsed().as_secs_f64());
        self.metrics.count_upstream(outcome);
    }
}

/// The `response_format` that asks `dialect`'s backend to constrain decoding to `schema`, or
/// `None` for `off`. The schema is forwarded as it is: the token it came in is size-limited,
/// and the backend judges what it can compile (a refusal comes back as an HTTP error).
pub fn response_format(
    dialect: StructuredOutput,
    schema: &serde_json::Value,
) -> Option<serde_json::Value> {
    match dialect {
        StructuredOutput::Off => None,
        // OpenAI Structured Outputs: strict, so the answer always matches (the schema must be
        // in OpenAI's strict subset, or OpenAI refuses the request with HTTP 400).
        StructuredOutput::Openai => Some(json!({
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "strict": true, "schema": schema},
        })),
        // The one shape both llama.cpp's llama-server and llama-cpp-python's server turn into
        // a grammar: llama-cpp-python admits only "text" and "json_object" (a "json_schema"
        // type gets HTTP 500).
        StructuredOutput::LlamaCpp => Some(json!({"type": "json_object", "schema": schema})),
        // vLLM and Ollama read `json_schema.schema` and enforce it without `strict`.
        StructuredOutput::Vllm | StructuredOutput::Ollama => Some(json!({
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": schema},
        })),
    }
}

fn parse_answer(bytes: &[u8]) -> Result<Answer, UpstreamError> {
    let response: ChatResponse = serde_json::from_slice(bytes)
        .map_err(|_| UpstreamError::BadAnswer("not an OpenAI chat completion".into()))?;
    let choice = response
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| UpstreamError::BadAnswer("no choices".into()))?;
    let content = choice
        .message
        .and_then(|m| m.content)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| UpstreamError::BadAnswer("empty content".into()))?;
    let usage = response.usage.map(|u| Usage {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
    });
    Ok(Answer {
        content,
        model: response.model,
        finish_reason: choice.finish_reason.unwrap_or_default(),
        usage: usage.unwrap_or_default(),
    })
}

/// Full jitter: uniform in [base/2, base], base = 100 ms × 2^(attempt-1), capped at 2 s.
fn jittered_backoff(attempt: u32) -> Duration {
    let base = 100u64
        .saturating_mul(1 << attempt.saturating_sub(1).min(5))
        .min(2_000);
    Duration::from_millis(base / 2 + fastrand::u64(0..=base / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_answers_and_rejects_garbage() {
        let ok = br#"{"model":"m","choices":[{"message":{"content":"{}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
        let answer = parse_answer(ok).unwrap();
        assert_eq!(answer.content, "{}");
        assert_eq!(answer.usage.prompt_tokens, 3);
        assert!(matches!(
            parse_answer(b"<html>"),
            Err(UpstreamError::BadAnswer(_))
        ));
        assert!(matches!(
            parse_answer(br#"{"choices":[]}"#),
            Err(UpstreamError::BadAnswer(_))
        ));
        assert!(matches!(
            parse_answer(br#"{"choices":[{"message":{"content":null}}]}"#),
            Err(UpstreamError::BadAnswer(_))
        ));
    }

    #[test]
    fn response_format_per_dialect() {
        let schema = json!({"type": "object", "required": ["ops"], "properties": {"ops": {"type": "array"}}});
        assert_eq!(response_format(StructuredOutput::Off, &schema), None);
        assert_eq!(
            response_format(StructuredOutput::Openai, &schema),
            Some(
                json!({"type": "json_schema", "json_schema": {"name": "crfix_answer", "strict": true, "schema": schema}})
            )
        );
        assert_eq!(
            response_format(StructuredOutput::LlamaCpp, &schema),
            Some(json!({"type": "json_object", "schema": schema}))
        );
        for dialect in [StructuredOutput::Vllm, StructuredOutput::Ollama] {
            assert_eq!(
                response_format(dialect, &schema),
                Some(
                    json!({"type": "json_schema", "json_schema": {"name": "crfix_answer", "schema": schema}})
                )
            );
        }
        // Odd schemas are forwarded untouched.
        let odd = json!({"$ref": "#/nope", "x-\u{0}": [null, 1e308, {"": {}}]});
        assert_eq!(
            response_format(StructuredOutput::LlamaCpp, &odd).unwrap()["schema"],
            odd
        );
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        for attempt in 1..10 {
            let d = jittered_backoff(attempt);
            assert!(d <= Duration::from_secs(2), "{d:?}");
            assert!(d >= Duration::from_millis(50), "{d:?}");
        }
    }
}
