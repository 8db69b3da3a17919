//! Load and fault benchmark of the real crfix-llm-proxy binary on loopback.
//!
//! `cargo bench -p crfix-llm-proxy --bench load`
//!
//! 1. Cached answers: throughput and p50/p99 latency, sequential (the proxy's own overhead)
//!    and with 32 concurrent clients.
//! 2. A slow upstream (20 ms per answer): RSS of the proxy before and after 100 000 requests
//!    over 20 000 distinct tokens with a small cache (constant eviction), and a check that
//!    every request got exactly one answer, for its own token.
//!
//! Sizes can be changed with BENCH_CACHED_REQUESTS and BENCH_SLOW_REQUESTS; every phase stops
//! after BENCH_MAX_SECONDS (default 180) whatever the count.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{metric, token, Pki, ProxyBuilder};
use fake_llm::{FakeLlm, Reply};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Run {
    latencies: Vec<Duration>,
    elapsed: Duration,
    ok: usize,
    wrong: usize,
    failed: usize,
}

/// Sends `tokens.len()` GETs with `concurrency` workers; each response is checked against the
/// token it was sent for.
async fn run(
    client: &reqwest::Client,
    base: &str,
    tokens: Arc<Vec<String>>,
    concurrency: usize,
    max_time: Duration,
) -> Run {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (client, base, tokens, next) = (
            client.clone(),
            base.to_string(),
            Arc::clone(&tokens),
            Arc::clone(&next),
        );
        workers.push(tokio::spawn(async move {
            let (mut latencies, mut ok, mut wrong, mut failed) = (Vec::new(), 0, 0, 0);
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= tokens.len() || started.elapsed() > max_time {
                    break;
                }
                let t0 = Instant::now();
                let result = client.get(format!("{base}{}", tokens[i])).send().await;
                match result {
                    Ok(response) if response.status().is_success() => {
                        let body: serde_json::Value = response.json().await.unwrap_or_default();
                        latencies.push(t0.elapsed());
                        if body["metadata"]["name"] == tokens[i].as_str() {
                            ok += 1;
                        } else {
                            wrong += 1;
                        }
                    }
                    _ => failed += 1,
                }
            }
            (latencies, ok, wrong, failed)
        }));
    }
    let mut total = Run {
        latencies: Vec::new(),
        elapsed: Duration::ZERO,
        ok: 0,
        wrong: 0,
        failed: 0,
    };
    for worker in workers {
        let (latencies, ok, wrong, failed) = worker.await.expect("worker");
        total.latencies.extend(latencies);
        total.ok += ok;
        total.wrong += wrong;
        total.failed += failed;
    }
    total.elapsed = started.elapsed();
    total.latencies.sort();
    total
}

fn report(name: &str, run: &Run) {
    let n = run.ok + run.wrong + run.failed;
    println!(
        "{name}: {n} requests in {:.2}s = {:.0} req/s; p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; ok {}, wrong answer {}, failed {}",
        run.elapsed.as_secs_f64(),
        n as f64 / run.elapsed.as_secs_f64(),
        ms(percentile(&run.latencies, 0.50)),
        ms(percentile(&run.latencies, 0.99)),
        ms(run.latencies.last().copied().unwrap_or_default()),
        run.ok,
        run.wrong,
        run.failed,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks; there are none to list here.
    }
    // Without --bench (`cargo test --benches`), run a small smoke version of the same checks.
    let full = std::env::args().any(|a| a == "--bench");
    let cached_requests = env_usize("BENCH_CACHED_REQUESTS", if full { 20_000 } else { 400 });
    let slow_requests = env_usize("BENCH_SLOW_REQUESTS", if full { 100_000 } else { 2_000 });
    let max_time = Duration::from_secs(env_usize("BENCH_MAX_SECONDS", 180) as u64);
    let pki = Pki::new();
    let client = pki.async_client();
    let mut failures = Vec::new();

    // Phase 1: cached answers.
    let llm = FakeLlm::start().await.expect("fake LLM");
    llm.set_default(Reply::content(
        r#"{"patch":[{"op":"replace","path":"/spec/namespace","value":"ns"}]}"#,
    ));
    // start() waits with a blocking client: keep it off the async workers.
    let proxy = tokio::task::block_in_place(|| {
        ProxyBuilder::new(&pki, &llm.base_url())
            .env("CRFIX_LOG", "warn")
            .start()
    });
    let base = proxy.correction_url("");
    let one = token("a typical correction prompt ".repeat(40).as_str());
    let warm = client
        .get(format!("{base}{one}"))
        .send()
        .await
        .expect("warm-up");
    assert!(warm.status().is_success());
    let sequential = run(
        &client,
        &base,
        Arc::new(vec![one.clone(); cached_requests / 4]),
        1,
        max_time,
    )
    .await;
    report("cached, 1 client ", &sequential);
    let concurrent = run(
        &client,
        &base,
        Arc::new(vec![one.clone(); cached_requests]),
        32,
        max_time,
    )
    .await;
    report("cached, 32 clients", &concurrent);
    let metrics = client
        .get(proxy.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .unwrap_or_default();
    let served = metric(&metrics, "crfix_proxy_request_duration_seconds_count");
    println!(
        "cached: mean time inside the proxy (its own histogram) {:.3} ms over {served} requests",
        metric(&metrics, "crfix_proxy_request_duration_seconds_sum") / served.max(1.0) * 1000.0
    );
    // The proxy's overhead, measured inside it: the share of answers under 1 ms.
    let under_1ms = metric(
        &metrics,
        r#"crfix_proxy_request_duration_seconds_bucket{le="0.001"}"#,
    ) / served.max(1.0);
    println!(
        "cached: {:.2}% of answers took under 1 ms inside the proxy; target 'proxy overhead p99 < 1 ms': {}",
        under_1ms * 100.0,
        if under_1ms >= 0.99 { "met" } else { "NOT met" }
    );
    // Too few samples in the smoke run for a p99 that one descheduling cannot move.
    if full && under_1ms < 0.99 {
        failures.push("proxy overhead p99 on cached answers is not under 1 ms".into());
    }
    // Client-side figures include the client and the TLS round trip; on a shared 2-core
    // machine other work moves their tail, so they are reported, not checked.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "client-side cached p99 (1 client, TLS round trip included): {:.3} ms (load average {})",
        ms(percentile(&sequential.latencies, 0.99)),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    if llm.request_count() != 1 {
        failures.push(format!(
            "cached phase made {} upstream calls, expected 1",
            llm.request_count()
        ));
    }
    drop(proxy);

    // Phase 2: slow upstream, many distinct tokens, small cache.
    let llm = FakeLlm::start().await.expect("fake LLM");
    llm.set_default(Reply::content("x".repeat(1024)).delayed(Duration::from_millis(20)));
    let (cache_entries, cache_bytes) = (2_000u64, 4 * 1024 * 1024u64);
    // start() waits with a blocking client: keep it off the async workers.
    let proxy = tokio::task::block_in_place(|| {
        ProxyBuilder::new(&pki, &llm.base_url())
            .env("CRFIX_LOG", "warn")
            .arg("--cache-max-entries", &cache_entries.to_string())
            .arg("--cache-max-bytes", &cache_bytes.to_string())
            .arg("--daily-request-budget", "0")
            .arg("--daily-token-budget", "0")
            .arg("--circuit-failure-threshold", "1000000")
            .start()
    });
    let distinct: Vec<String> = (0..20_000)
        .map(|i| token(&format!("object {i} is invalid: {}", "spec ".repeat(20))))
        .collect();
    let tokens: Vec<String> = (0..slow_requests)
        .map(|i| distinct[(i * 7919 + i / 3) % distinct.len()].clone())
        .collect();
    let base = proxy.correction_url("");
    let _ = client.get(format!("{base}{}", distinct[0])).send().await;
    let rss_before = proxy.rss_kib().unwrap_or(0);
    let slow = run(&client, &base, Arc::new(tokens), 128, max_time).await;
    let rss_after = proxy.rss_kib().unwrap_or(0);
    report("slow upstream (20 ms), 128 clients", &slow);
    let metrics = client
        .get(proxy.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .unwrap_or_default();
    let outcomes = ["answered", "cached", "shared"].map(|o| {
        metric(
            &metrics,
            &format!("crfix_proxy_requests_total{{outcome=\"{o}\"}}"),
        )
    });
    let counted: f64 = outcomes.iter().sum();
    println!(
        "slow upstream: proxy counted {counted} answers (answered {}, cached {}, shared {}); upstream calls {}; cache entries {}, weight {} bytes",
        outcomes[0],
        outcomes[1],
        outcomes[2],
        llm.request_count(),
        metric(&metrics, "crfix_proxy_cache_entries"),
        metric(&metrics, "crfix_proxy_cache_bytes"),
    );
    println!(
        "proxy RSS: {rss_before} KiB before, {rss_after} KiB after (+{} KiB; cache limit {} KiB)",
        rss_after.saturating_sub(rss_before),
        cache_bytes / 1024
    );

    let sent = slow.ok + slow.wrong + slow.failed;
    if slow.wrong > 0 || slow.failed > 0 {
        failures.push(format!(
            "{} wrong and {} failed answers under load",
            slow.wrong, slow.failed
        ));
    }
    // +1: the warm-up request.
    if counted as usize != sent + 1 {
        failures.push(format!(
            "proxy answered {counted} requests for {} sent",
            sent + 1
        ));
    }
    if outcomes[0] as usize != llm.request_count() {
        failures.push(format!(
            "{} upstream answers but {} upstream calls",
            outcomes[0],
            llm.request_count()
        ));
    }
    // Generous bound: the cache limit plus allocator slack and connection buffers.
    if rss_after > rss_before + cache_bytes / 1024 * 3 + 32 * 1024 {
        failures.push("RSS grew well past the cache limit".into());
    }
    if failures.is_empty() {
        println!("load benchmark: all checks passed");
    } else {
        for failure in &failures {
            println!("load benchmark FAILED: {failure}");
        }
        std::process::exit(1);
    }
}
