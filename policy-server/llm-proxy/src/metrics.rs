//! Prometheus metrics. No label ever holds a token, a prompt or the API key.

use std::collections::HashSet;
use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UserOutcomeLabels {
    pub user: String,
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    pub version: String,
    pub commit: String,
}

/// The git commit the binary was built from: `CRFIX_GIT_COMMIT` at build time, if set.
pub const GIT_COMMIT: &str = match option_env!("CRFIX_GIT_COMMIT") {
    Some(commit) => commit,
    None => "unknown",
};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DialectLabels {
    pub dialect: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UserLabels {
    pub user: String,
}

/// The `user` label value of users beyond `--metrics-max-users`.
pub const OTHER_USERS: &str = "other";

/// Default for `--metrics-max-users`.
pub const DEFAULT_MAX_USER_LABELS: usize = 100;

pub struct Metrics {
    registry: Registry,
    pub requests: Family<OutcomeLabels, Counter>,
    pub request_duration: Histogram,
    pub upstream_requests: Family<OutcomeLabels, Counter>,
    pub upstream_duration: Histogram,
    pub cache_hits: Counter,
    pub cache_misses: Counter,
    pub cache_entries: Gauge,
    pub cache_bytes: Gauge,
    pub shared_calls: Counter,
    pub llm_tokens: Family<KindLabels, Counter>,
    pub circuit_state: Gauge,
    pub circuit_opened: Counter,
    pub budget_requests_used: Gauge,
    pub budget_tokens_used: Gauge,
    pub key_reloads: Counter,
    pub key_redactions: Counter,
    pub refused_connections: Family<ReasonLabels, Counter>,
    pub build_info: Family<BuildLabels, Gauge>,
    pub user_requests: Family<UserOutcomeLabels, Counter>,
    pub tls_reloads: Family<ResultLabels, Counter>,
    pub user_tokens: Family<UserLabels, Counter>,
    pub structured_requests: Family<DialectLabels, Counter>,
    /// Users that have their own label value (at most `max_user_labels`).
    user_labels: Mutex<HashSet<String>>,
    max_user_labels: usize,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::with_max_users(DEFAULT_MAX_USER_LABELS)
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::with_max_users(DEFAULT_MAX_USER_LABELS)
    }

    /// Metrics whose per-user families hold at most `max_users` distinct user labels (plus
    /// [`OTHER_USERS`]).
    pub fn with_max_users(max_users: usize) -> Metrics {
        let mut registry = Registry::default();
        let m = Metrics {
            requests: Family::default(),
            request_duration: Histogram::new(exponential_buckets(0.0005, 2.0, 18)),
            upstream_requests: Family::default(),
            upstream_duration: Histogram::new(exponential_buckets(0.01, 2.0, 14)),
            cache_hits: Counter::default(),
            cache_misses: Counter::default(),
            cache_entries: Gauge::default(),
            cache_bytes: Gauge::default(),
            shared_calls: Counter::default(),
            llm_tokens: Family::default(),
            circuit_state: Gauge::default(),
            circuit_opened: Counter::default(),
            budget_requests_used: Gauge::default(),
            budget_tokens_used: Gauge::default(),
            key_reloads: Counter::default(),
            key_redactions: Counter::default(),
            refused_connections: Family::default(),
            build_info: Family::default(),
            user_requests: Family::default(),
            tls_reloads: Family::default(),
            user_tokens: Family::default(),
            structured_requests: Family::default(),
            user_labels: Mutex::new(HashSet::new()),
            max_user_labels: max_users,
            registry: Registry::default(),
        };
        registry.register(
            "crfix_proxy_requests",
            "Correction requests answered, by outcome",
            m.requests.clone(),
        );
        registry.register(
            "crfix_proxy_request_duration_seconds",
            "Time to answer a correction request",
            m.request_duration.clone(),
        );
        registry.register(
            "crfix_proxy_upstream_requests",
            "Upstream LLM attempts, by result",
            m.upstream_requests.clone(),
        );
        registry.register(
            "crfix_proxy_upstream_duration_seconds",
            "Latency of one upstream LLM attempt",
            m.upstream_duration.clone(),
        );
        registry.register(
            "crfix_proxy_cache_hits",
            "Answers served from the cache",
            m.cache_hits.clone(),
        );
        registry.register(
            "crfix_proxy_cache_misses",
            "Correction requests not found in the cache",
            m.cache_misses.clone(),
        );
        registry.register(
            "crfix_proxy_cache_entries",
            "Answers in the cache",
            m.cache_entries.clone(),
        );
        registry.register(
            "crfix_proxy_cache_bytes",
            "Weight of the cache (bytes, at least cache-max-bytes / cache-max-entries per entry)",
            m.cache_bytes.clone(),
        );
        registry.register(
            "crfix_proxy_singleflight_shared",
            "Requests that shared an identical in-flight upstream call",
            m.shared_calls.clone(),
        );
        registry.register(
            "crfix_proxy_llm_tokens",
            "LLM tokens used, by kind (prompt, completion)",
            m.llm_tokens.clone(),
        );
        registry.register(
            "crfix_proxy_circuit_state",
            "Circuit breaker state: 0 closed, 1 half-open, 2 open",
            m.circuit_state.clone(),
        );
        registry.register(
            "crfix_proxy_circuit_opened",
            "Times the circuit opened",
            m.circuit_opened.clone(),
        );
        registry.register(
            "crfix_proxy_budget_requests_used",
            "Upstream calls admitted today (UTC)",
            m.budget_requests_used.clone(),
        );
        registry.register(
            "crfix_proxy_budget_tokens_used",
            "LLM tokens used today (UTC)",
            m.budget_tokens_used.clone(),
        );
        registry.register(
            "crfix_proxy_api_key_reloads",
            "Times the API key file changed and was reloaded",
            m.key_reloads.clone(),
        );
        registry.register(
            "crfix_proxy_api_key_redactions",
            "LLM answers that contained the API key, which was redacted before use",
            m.key_redactions.clone(),
        );
        registry.register(
            "crfix_proxy_refused_connections",
            "Connections or requests refused by client authentication, by reason",
            m.refused_connections.clone(),
        );
        registry.register(
            "crfix_proxy_build_info",
            "Always 1; the labels say which build runs (version, and git commit when the build knew it)",
            m.build_info.clone(),
        );
        m.build_info
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION").to_string(),
                commit: GIT_COMMIT.to_string(),
            })
            .set(1);
        registry.register(
            "crfix_proxy_tls_reloads",
            "TLS configuration reloads (serving certificate, request-header CA), by result: ok, or error (the previous configuration stays)",
            m.tls_reloads.clone(),
        );
        registry.register(
            "crfix_proxy_user_requests",
            "Correction requests by user (the budget subject) and outcome; users beyond --metrics-max-users are counted as user=\"other\"",
            m.user_requests.clone(),
        );
        registry.register(
            "crfix_proxy_user_llm_tokens",
            "LLM tokens (prompt + completion) spent by user; users beyond --metrics-max-users are counted as user=\"other\"",
            m.user_tokens.clone(),
        );
        registry.register(
            "crfix_proxy_structured_requests",
            "Upstream calls that asked the LLM to follow the correction's JSON Schema, by --structured-output dialect",
            m.structured_requests.clone(),
        );
        Metrics { registry, ..m }
    }

    /// The label value for `user`: itself while fewer than `max_user_labels` users have one,
    /// else [`OTHER_USERS`]. Bounds the series count whatever users the callers name.
    pub fn user_label(&self, user: &str) -> String {
        let mut labels = self.user_labels.lock().unwrap_or_else(|p| p.into_inner());
        if labels.contains(user) {
            return user.to_string();
        }
        if labels.len() < self.max_user_labels {
            labels.insert(user.to_string());
            return user.to_string();
        }
        OTHER_USERS.to_string()
    }

    pub fn count_tls_reload(&self, result: &str) {
        self.tls_reloads
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .inc();
    }

    pub fn count_user_request(&self, user: &str, outcome: &str) {
        self.user_requests
            .get_or_create(&UserOutcomeLabels {
                user: self.user_label(user),
                outcome: outcome.to_string(),
            })
            .inc();
    }

    pub fn add_user_tokens(&self, user: &str, tokens: u64) {
        self.user_tokens
            .get_or_create(&UserLabels {
                user: self.user_label(user),
            })
            .inc_by(tokens);
    }

    /// One upstream call sent with the request's JSON Schema in `dialect` (a fixed flag value).
    pub fn count_structured_request(&self, dialect: &str) {
        self.structured_requests
            .get_or_create(&DialectLabels {
                dialect: dialect.to_string(),
            })
            .inc();
    }

    pub fn count_request(&self, outcome: &str) {
        self.requests
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
    }

    pub fn count_upstream(&self, outcome: &str) {
        self.upstream_requests
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_string(),
            })
            .inc();
    }

    pub fn count_refusal(&self, reason: &str) {
        self.refused_connections
            .get_or_create(&ReasonLabels {
                reason: reason.to_string(),
            })
            .inc();
    }

    pub fn add_tokens(&self, prompt: u64, completion: u64) {
        for (kind, n) in [("prompt", prompt), ("completion", completion)] {
            self.llm_tokens
                .get_or_create(&KindLabels { kind: kind.into() })
                .inc_by(n);
        }
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_labels_are_capped() {
        let m = Metrics::with_max_users(2);
        m.count_user_request("alice", "answered");
        m.count_user_request("bob", "answered");
        m.count_user_request("carol", "answered");
        m.count_user_request("dave", "cached");
        m.add_user_tokens("alice", 5);
        m.add_user_tokens("erin", 7);
        let text = m.render();
        for line in [
            r#"crfix_proxy_user_requests_total{user="alice",outcome="answered"} 1"#,
            r#"crfix_proxy_user_requests_total{user="bob",outcome="answered"} 1"#,
            r#"crfix_proxy_user_requests_total{user="other",outcome="answered"} 1"#,
            r#"crfix_proxy_user_requests_total{user="other",outcome="cached"} 1"#,
            r#"crfix_proxy_user_llm_tokens_total{user="alice"} 5"#,
            r#"crfix_proxy_user_llm_tokens_total{user="other"} 7"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(!text.contains("carol") && !text.contains("dave") && !text.contains("erin"));
    }
}
