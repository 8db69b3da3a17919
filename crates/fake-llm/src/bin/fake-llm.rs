//! Runs the fake LLM until Ctrl-C, answering every chat completion with a fixed content.
//!
//! Usage: `fake-llm [CONTENT]` (default content `{}`); the base URL is printed on stdout.
//! Environment: `FAKE_LLM_DELAY_MS` delays every answer.

use std::time::Duration;

use fake_llm::{FakeLlm, Reply};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let content = std::env::args().nth(1).unwrap_or_else(|| "{}".into());
    let delay_ms: u64 = std::env::var("FAKE_LLM_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let llm = FakeLlm::start().await?;
    let mut reply = Reply::content(content);
    if delay_ms > 0 {
        reply = reply.delayed(Duration::from_millis(delay_ms));
    }
    llm.set_default(reply);
    println!("{}", llm.base_url());
    tokio::signal::ctrl_c().await?;
    eprintln!(
        "fake-llm: {} chat completion requests served",
        llm.request_count()
    );
    Ok(())
}
