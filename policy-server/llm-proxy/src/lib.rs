//! crfix-llm-proxy: the aggregated API server (`crfix.dev/v1alpha1`, resource `corrections`)
//! that lets the crfix admission policy reach an LLM without holding its key.
//! See the README, section "crfix-llm-proxy".

pub mod cache;
pub mod circuit;
pub mod config;
pub mod handlers;
pub mod incluster;
pub mod key;
pub mod limits;
pub mod metrics;
pub mod server;
pub mod status;
pub mod tls;
pub mod upstream;

pub use config::Config;

/// Sets up structured logging on stderr.
pub fn init_logging(format: config::LogFormat, filter: &str) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .map_err(|e| anyhow::anyhow!("invalid log filter {filter:?}: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match format {
        config::LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
        config::LogFormat::Text => builder.try_init(),
    };
    result.map_err(|e| anyhow::anyhow!("setting up logging: {e}"))
}
