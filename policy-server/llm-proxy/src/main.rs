use clap::Parser;
use crfix_llm_proxy::{init_logging, server, Config};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = Config::parse();
    if let Err(error) = init_logging(config.log_format, &config.log_level) {
        eprintln!("crfix-llm-proxy: {error:#}");
        return std::process::ExitCode::from(2);
    }
    match server::run(config).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = format!("{error:#}"), "crfix-llm-proxy failed");
            std::process::ExitCode::FAILURE
        }
    }
}
