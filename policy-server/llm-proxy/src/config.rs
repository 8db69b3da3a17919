//! Command-line flags and environment variables.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::limits::Budget;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum JsonMode {
    /// On for api.openai.com, off for any other endpoint.
    Auto,
    On,
    Off,
}

/// How a correction's `responseSchema` is put into the upstream request: the backend's
/// dialect for schema-constrained decoding (see docs/proxy.md, "Structured outputs").
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StructuredOutput {
    /// Never send a schema (a backend that cannot constrain decoding).
    Off,
    /// OpenAI Structured Outputs: `response_format` `json_schema`, `strict: true`.
    Openai,
    /// llama.cpp's llama-server and llama-cpp-python's server: `response_format`
    /// `{"type":"json_object","schema":...}`.
    LlamaCpp,
    /// vLLM's OpenAI-compatible server: `response_format` `json_schema`.
    Vllm,
    /// Ollama's OpenAI-compatible `/v1`: `response_format` `json_schema`.
    Ollama,
}

impl StructuredOutput {
    /// The flag value, also the `dialect` metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            StructuredOutput::Off => "off",
            StructuredOutput::Openai => "openai",
            StructuredOutput::LlamaCpp => "llama-cpp",
            StructuredOutput::Vllm => "vllm",
            StructuredOutput::Ollama => "ollama",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Json,
    Text,
}

/// crfix-llm-proxy: the aggregated API server (crfix.dev/v1alpha1 corrections) that holds the
/// LLM API key and calls an OpenAI-compatible LLM for the crfix admission policy.
///
/// The API key is read from the OPENAI_API_KEY environment variable or from --api-key-file;
/// it has no command-line flag, so it never shows in a process listing.
#[derive(Debug, Clone, Parser)]
#[command(name = "crfix-llm-proxy", version, about, long_about = None)]
pub struct Config {
    /// Address to serve HTTPS on.
    #[arg(long, env = "CRFIX_LISTEN", default_value = "0.0.0.0:8443")]
    pub listen: SocketAddr,

    /// PEM serving certificate (chain).
    #[arg(long, env = "CRFIX_TLS_CERT_FILE")]
    pub tls_cert_file: PathBuf,

    /// PEM private key of the serving certificate.
    #[arg(long, env = "CRFIX_TLS_PRIVATE_KEY_FILE")]
    pub tls_private_key_file: PathBuf,

    /// PEM CA bundle that client certificates must chain to (the API server's
    /// request-header client CA).
    #[arg(long, env = "CRFIX_REQUESTHEADER_CLIENT_CA_FILE")]
    pub requestheader_client_ca_file: Option<PathBuf>,

    /// Comma-separated client certificate common names allowed; empty allows any
    /// certificate that chains to the request-header CA (as Kubernetes does).
    #[arg(long, env = "CRFIX_REQUESTHEADER_ALLOWED_NAMES", value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,

    /// Read the request-header CA and allowed names from the ConfigMap
    /// kube-system/extension-apiserver-authentication (in-cluster service account).
    /// Explicit --requestheader-* flags take precedence.
    #[arg(long, env = "CRFIX_AUTHENTICATION_FROM_CLUSTER")]
    pub authentication_from_cluster: bool,

    /// How often to re-read the serving certificate, its key and the request-header CA file;
    /// new connections use them once they changed and are valid. 0 switches it off.
    #[arg(long, env = "CRFIX_CERT_RELOAD_INTERVAL", value_parser = humantime::parse_duration, default_value = "10s")]
    pub cert_reload_interval: Duration,

    /// With --authentication-from-cluster: how often to re-read the ConfigMap
    /// kube-system/extension-apiserver-authentication (request-header CA rotation). 0
    /// switches it off.
    #[arg(long, env = "CRFIX_CLUSTER_AUTH_RELOAD_INTERVAL", value_parser = humantime::parse_duration, default_value = "1m")]
    pub cluster_auth_reload_interval: Duration,

    /// Do not ask for client certificates. For local use only: anyone who can reach the
    /// port can spend the LLM budget.
    #[arg(long, env = "CRFIX_INSECURE_SKIP_CLIENT_AUTH")]
    pub insecure_skip_client_auth: bool,

    /// OpenAI API base URL (used when LOCAL_LLM_URL is not set).
    #[arg(
        long,
        env = "CRFIX_OPENAI_BASE_URL",
        default_value = "https://api.openai.com/v1"
    )]
    pub openai_base_url: String,

    /// Base URL of an OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama's /v1); takes
    /// precedence over --openai-base-url, and the API key becomes optional.
    #[arg(long, env = "LOCAL_LLM_URL")]
    pub local_llm_url: Option<String>,

    /// File holding the API key (a mounted Secret); re-read when it changes. Takes
    /// precedence over OPENAI_API_KEY.
    #[arg(long, env = "CRFIX_API_KEY_FILE")]
    pub api_key_file: Option<PathBuf>,

    /// Model name sent upstream.
    #[arg(long, env = "CRFIX_MODEL", default_value = "gpt-4o-mini")]
    pub model: String,

    /// Ask for `response_format: {"type":"json_object"}`.
    #[arg(long, env = "CRFIX_JSON_MODE", value_enum, default_value = "auto")]
    pub json_mode: JsonMode,

    /// How to ask the backend to constrain answers to the correction's JSON Schema
    /// (`responseSchema`): in the backend's dialect, replacing JSON mode for that request; `off`
    /// sends no schema. Requests without a schema are unchanged.
    #[arg(long, env = "CRFIX_STRUCTURED_OUTPUT", default_value = "off")]
    pub structured_output: StructuredOutput,

    /// Timeout of one upstream attempt.
    #[arg(long, env = "CRFIX_UPSTREAM_TIMEOUT", value_parser = humantime::parse_duration, default_value = "15s")]
    pub upstream_timeout: Duration,

    /// Total time for one correction, retries included (keep it below the policy's timeout).
    #[arg(long, env = "CRFIX_REQUEST_DEADLINE", value_parser = humantime::parse_duration, default_value = "20s")]
    pub request_deadline: Duration,

    /// Retries on upstream 429/5xx/timeouts/connection errors, inside the deadline.
    #[arg(long, env = "CRFIX_MAX_RETRIES", default_value_t = 2)]
    pub max_retries: u32,

    /// Maximum number of cached answers.
    #[arg(long, env = "CRFIX_CACHE_MAX_ENTRIES", default_value_t = 10_000)]
    pub cache_max_entries: u64,

    /// Maximum bytes of cached answers (tokens and contents).
    #[arg(long, env = "CRFIX_CACHE_MAX_BYTES", default_value_t = 64 * 1024 * 1024)]
    pub cache_max_bytes: u64,

    /// Upstream calls per second (0 = unlimited); over it the proxy answers 429.
    #[arg(long, env = "CRFIX_RATE_LIMIT", default_value_t = 5.0)]
    pub rate_limit: f64,

    /// Burst of upstream calls allowed above the rate.
    #[arg(long, env = "CRFIX_RATE_BURST", default_value_t = 10)]
    pub rate_burst: u32,

    /// Upstream calls per UTC day (0 = unlimited).
    #[arg(long, env = "CRFIX_DAILY_REQUEST_BUDGET", default_value_t = 10_000)]
    pub daily_request_budget: u64,

    /// LLM tokens (prompt + completion) per UTC day (0 = unlimited).
    #[arg(long, env = "CRFIX_DAILY_TOKEN_BUDGET", default_value_t = 5_000_000)]
    pub daily_token_budget: u64,

    /// Upstream calls per user per UTC day (0 = unlimited). Default: a tenth of
    /// --daily-request-budget (at least 1). The user is the one named in the token by the
    /// policy, else the aggregator's X-Remote-User.
    #[arg(long, env = "CRFIX_USER_DAILY_REQUEST_BUDGET")]
    pub user_daily_request_budget: Option<u64>,

    /// LLM tokens per user per UTC day (0 = unlimited). Default: a tenth of
    /// --daily-token-budget (at least 1).
    #[arg(long, env = "CRFIX_USER_DAILY_TOKEN_BUDGET")]
    pub user_daily_token_budget: Option<u64>,

    /// Most distinct `user` label values in the per-user metrics; later users are counted
    /// under user="other".
    #[arg(long, env = "CRFIX_METRICS_MAX_USERS", default_value_t = 100)]
    pub metrics_max_users: usize,

    /// Consecutive upstream failures that open the circuit.
    #[arg(long, env = "CRFIX_CIRCUIT_FAILURE_THRESHOLD", default_value_t = 5)]
    pub circuit_failure_threshold: u32,

    /// How long the circuit stays open before one probe is let through.
    #[arg(long, env = "CRFIX_CIRCUIT_OPEN_DURATION", value_parser = humantime::parse_duration, default_value = "30s")]
    pub circuit_open_duration: Duration,

    /// Longest token (resource name) accepted; longer ones get 413.
    #[arg(long, env = "CRFIX_MAX_TOKEN_BYTES", default_value_t = correction_api::DEFAULT_MAX_TOKEN_BYTES)]
    pub max_token_bytes: usize,

    /// Also serve GET /metrics as plain HTTP on this address (e.g. 0.0.0.0:9090), for
    /// Prometheus. Off by default; restrict who reaches it with a NetworkPolicy. /metrics
    /// on the HTTPS port (front-proxy client certificate) stays available either way.
    #[arg(long, env = "CRFIX_METRICS_BIND_ADDRESS")]
    pub metrics_bind_address: Option<SocketAddr>,

    /// Log format.
    #[arg(long, env = "CRFIX_LOG_FORMAT", value_enum, default_value = "json")]
    pub log_format: LogFormat,

    /// Log filter (tracing EnvFilter syntax), e.g. `info` or `crfix_llm_proxy=debug`.
    #[arg(long, env = "CRFIX_LOG", default_value = "info")]
    pub log_level: String,

    /// Time given to open connections to finish after SIGTERM/SIGINT.
    #[arg(long, env = "CRFIX_SHUTDOWN_GRACE", value_parser = humantime::parse_duration, default_value = "10s")]
    pub shutdown_grace: Duration,
}

impl Config {
    /// The upstream base URL and whether it is a local (key optional) endpoint.
    pub fn upstream_base(&self) -> (&str, bool) {
        match &self.local_llm_url {
            Some(url) if !url.trim().is_empty() => (url.trim_end_matches('/'), true),
            _ => (self.openai_base_url.trim_end_matches('/'), false),
        }
    }

    /// The global daily budget.
    pub fn global_budget(&self) -> Budget {
        Budget {
            requests: self.daily_request_budget,
            tokens: self.daily_token_budget,
        }
    }

    /// The per-user daily budget: the flags, else a tenth of the global budget.
    pub fn user_budget(&self) -> Budget {
        let tenth = |global: u64| if global == 0 { 0 } else { global.div_ceil(10) };
        Budget {
            requests: self
                .user_daily_request_budget
                .unwrap_or_else(|| tenth(self.daily_request_budget)),
            tokens: self
                .user_daily_token_budget
                .unwrap_or_else(|| tenth(self.daily_token_budget)),
        }
    }

    /// Whether to ask for JSON mode, resolving `auto`.
    pub fn json_mode_enabled(&self) -> bool {
        match self.json_mode {
            JsonMode::On => true,
            JsonMode::Off => false,
            JsonMode::Auto => {
                let (base, _) = self.upstream_base();
                base.starts_with("https://api.openai.com/")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments every test passes first.
    const REQUIRED: [&str; 5] = [
        "crfix-llm-proxy",
        "--tls-cert-file",
        "c",
        "--tls-private-key-file",
        "k",
    ];

    fn parse(args: &[&str]) -> Config {
        let mut all = REQUIRED.to_vec();
        all.extend_from_slice(args);
        Config::try_parse_from(all).unwrap()
    }

    #[test]
    fn defaults_and_json_mode() {
        let c = parse(&[]);
        assert_eq!(c.listen.to_string(), "0.0.0.0:8443");
        assert_eq!(c.max_token_bytes, correction_api::DEFAULT_MAX_TOKEN_BYTES);
        assert!(c.json_mode_enabled());
        let c = parse(&["--local-llm-url", "http://127.0.0.1:8080/v1/"]);
        assert_eq!(c.upstream_base(), ("http://127.0.0.1:8080/v1", true));
        assert!(!c.json_mode_enabled());
        let c = parse(&["--local-llm-url", "http://x/v1", "--json-mode", "on"]);
        assert!(c.json_mode_enabled());
    }

    #[test]
    fn structured_output_dialects_parse_and_default_to_off() {
        assert_eq!(parse(&[]).structured_output, StructuredOutput::Off);
        for (value, dialect) in [
            ("off", StructuredOutput::Off),
            ("openai", StructuredOutput::Openai),
            ("llama-cpp", StructuredOutput::LlamaCpp),
            ("vllm", StructuredOutput::Vllm),
            ("ollama", StructuredOutput::Ollama),
        ] {
            let c = parse(&["--structured-output", value]);
            assert_eq!(c.structured_output, dialect);
            assert_eq!(dialect.as_str(), value);
        }
        for bad in ["llama.cpp", "llamacpp", "json_schema", ""] {
            let mut all = REQUIRED.to_vec();
            all.extend_from_slice(&["--structured-output", bad]);
            assert!(Config::try_parse_from(&all).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn user_budgets_default_to_a_tenth_of_the_global_ones() {
        let c = parse(&[]);
        assert_eq!(
            c.user_budget(),
            Budget {
                requests: 1_000,
                tokens: 500_000
            }
        );
        let c = parse(&["--daily-request-budget", "5", "--daily-token-budget", "0"]);
        assert_eq!(
            c.user_budget(),
            Budget {
                requests: 1,
                tokens: 0
            }
        );
        let c = parse(&[
            "--user-daily-request-budget",
            "0",
            "--user-daily-token-budget",
            "7",
        ]);
        assert_eq!(
            c.user_budget(),
            Budget {
                requests: 0,
                tokens: 7
            }
        );
    }

    #[test]
    fn allowed_names_are_a_comma_list_and_durations_parse() {
        let c = parse(&[
            "--requestheader-allowed-names",
            "front-proxy-client,aggregator",
            "--request-deadline",
            "1500ms",
        ]);
        assert_eq!(
            c.requestheader_allowed_names,
            ["front-proxy-client", "aggregator"]
        );
        assert_eq!(c.request_deadline, Duration::from_millis(1500));
    }
}
