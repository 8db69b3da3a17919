//! The real crfix-llm-proxy binary over real TLS on 127.0.0.1, against the fake LLM.

mod common;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::{
    free_port, metric, token, token_for_user, token_with_schema, ClientCa, Pki, Proxy,
    ProxyBuilder, Road,
};
use fake_llm::{FakeLlm, Reply};
use reqwest::blocking::{Client, Response};
use serde_json::Value;

fn json(response: Response) -> (u16, Value) {
    let code = response.status().as_u16();
    let text = response.text().unwrap();
    let value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON ({code}): {text}"));
    (code, value)
}

fn assert_status(body: &Value, code: u16, reason: &str) {
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1", "{body}");
    assert_eq!(body["status"], "Failure", "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["reason"], reason, "{body}");
}

#[test]
fn discovery_documents() {
    let Road {
        pki,
        llm,
        proxy,
        client,
    } = Road::start(&[]);

    let (code, apis) = json(
        client
            .get(proxy.url("/apis"))
            .header("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
            .send()
            .unwrap(),
    );
    assert_eq!(code, 200);
    assert_eq!(apis["kind"], "APIGroupList");
    assert_eq!(apis["groups"][0]["name"], "crfix.dev");
    assert_eq!(
        apis["groups"][0]["preferredVersion"]["groupVersion"],
        "crfix.dev/v1alpha1"
    );
    assert_eq!(apis["groups"][0]["versions"][0]["version"], "v1alpha1");

    let http1 = reqwest::blocking::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(pki.server_ca_pem.as_bytes()).unwrap())
        .identity(reqwest::Identity::from_pem(pki.allowed_client.as_bytes()).unwrap())
        .http1_only()
        .build()
        .unwrap();
    let response = http1.get(proxy.url("/apis/crfix.dev")).send().unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_11);
    let (code, group) = json(response);
    assert_eq!(code, 200);
    assert_eq!(group["kind"], "APIGroup");
    assert_eq!(group["name"], "crfix.dev");
    assert_eq!(group["preferredVersion"]["version"], "v1alpha1");

    let (code, resources) = json(
        client
            .get(proxy.url("/apis/crfix.dev/v1alpha1"))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 200);
    assert_eq!(
        resources,
        serde_json::json!({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"crfix.dev/v1alpha1",
            "resources":[{"name":"corrections","singularName":"correction","namespaced":false,"kind":"Correction","verbs":["get"]}]})
    );

    let (code, body) = json(client.get(proxy.url("/openapi/v2")).send().unwrap());
    assert_eq!(code, 404);
    assert_status(&body, 404, "NotFound");
    let (code, body) = json(
        client
            .get(proxy.url("/apis/crfix.dev/v1alpha1/corrections"))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 405);
    assert_status(&body, 405, "MethodNotAllowed");
    let (code, body) = json(
        client
            .delete(proxy.correction_url(&token("x")))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 405);
    assert_status(&body, 405, "MethodNotAllowed");
    let (code, body) = json(client.post(proxy.url("/apis")).send().unwrap());
    assert_status(&body, code, "MethodNotAllowed");
    assert_eq!(llm.request_count(), 0);
}

#[test]
fn good_correction_then_cache_hit_and_metrics() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    llm.push(Reply::content_with_usage(
        r#"{"spec":{"namespace":"fixed"}}"#,
        40,
        12,
    ));
    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .env("OPENAI_API_KEY", "sk-test-key")
        .start();
    let client = pki.client(Some(&pki.allowed_client));
    let t = token("please fix spec.namespace");

    let response = client.get(proxy.correction_url(&t)).send().unwrap();
    // The kube-apiserver talks HTTP/2 to aggregated servers when ALPN offers it.
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    let (code, first) = json(response);
    assert_eq!(code, 200, "{first}");
    assert_eq!(first["apiVersion"], "crfix.dev/v1alpha1");
    assert_eq!(first["kind"], "Correction");
    assert_eq!(first["metadata"]["name"], t.as_str());
    assert_eq!(
        first["status"]["content"],
        r#"{"spec":{"namespace":"fixed"}}"#
    );
    assert_eq!(first["status"]["cached"], false);
    assert_eq!(first["status"]["model"], "test-model");
    assert_eq!(first["status"]["finishReason"], "stop");
    assert_eq!(first["status"]["usage"]["promptTokens"], 40);

    let upstream = &llm.requests()[0];
    assert_eq!(upstream.path, "/v1/chat/completions");
    assert_eq!(
        upstream.authorization.as_deref(),
        Some("Bearer sk-test-key")
    );
    assert_eq!(upstream.model(), Some("test-model"));
    assert_eq!(
        upstream.last_user_message().as_deref(),
        Some("please fix spec.namespace")
    );
    assert_eq!(upstream.body["max_tokens"], 256);
    assert!(
        upstream.body.get("response_format").is_none(),
        "json mode is off for local endpoints"
    );

    let (code, second) = json(client.get(proxy.correction_url(&t)).send().unwrap());
    assert_eq!(code, 200);
    assert_eq!(second["status"]["cached"], true);
    assert_eq!(second["status"]["content"], first["status"]["content"]);
    assert_eq!(llm.request_count(), 1, "a cache hit makes no upstream call");

    let (code, _) = json(client.get(proxy.correction_url("c1.AAAA")).send().unwrap());
    assert_eq!(code, 400);

    let metrics = metrics_text(&client, &proxy);
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_requests_total{outcome="answered"}"#
        ),
        1.0,
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, r#"crfix_proxy_requests_total{outcome="cached"}"#),
        1.0
    );
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_requests_total{outcome="bad_request"}"#
        ),
        1.0
    );
    assert_eq!(metric(&metrics, "crfix_proxy_cache_hits_total"), 1.0);
    assert_eq!(metric(&metrics, "crfix_proxy_cache_misses_total"), 1.0);
    assert_eq!(metric(&metrics, "crfix_proxy_cache_entries"), 1.0);
    assert_eq!(
        metric(&metrics, r#"crfix_proxy_llm_tokens_total{kind="prompt"}"#),
        40.0
    );
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_llm_tokens_total{kind="completion"}"#
        ),
        12.0
    );
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_upstream_requests_total{outcome="ok"}"#
        ),
        1.0
    );
    assert_eq!(
        metric(&metrics, "crfix_proxy_upstream_duration_seconds_count"),
        1.0
    );
    assert_eq!(metric(&metrics, "crfix_proxy_circuit_state"), 0.0);
    assert_eq!(metric(&metrics, "crfix_proxy_budget_requests_used"), 1.0);
    assert_eq!(metric(&metrics, "crfix_proxy_budget_tokens_used"), 52.0);
}

#[test]
fn identical_concurrent_requests_share_one_upstream_call() {
    let Road {
        pki: _pki,
        llm,
        proxy,
        client,
    } = Road::start(&[]);
    llm.set_default(Reply::content("shared answer").delayed(Duration::from_millis(600)));
    let url = proxy.correction_url(&token("same question"));
    // Warm the TLS connections so that all 20 requests reach the proxy together.
    client.get(proxy.url("/apis")).send().unwrap();

    let barrier = Arc::new(Barrier::new(20));
    let threads: Vec<_> = (0..20)
        .map(|_| {
            let (client, url, barrier) = (client.clone(), url.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                json(client.get(&url).send().unwrap())
            })
        })
        .collect();
    for thread in threads {
        let (code, body) = thread.join().unwrap();
        assert_eq!(code, 200, "{body}");
        assert_eq!(body["status"]["content"], "shared answer");
    }
    assert_eq!(llm.request_count(), 1);
    let metrics = metrics_text(&client, &proxy);
    let shared = metric(&metrics, "crfix_proxy_singleflight_shared_total");
    let hits = metric(&metrics, "crfix_proxy_cache_hits_total");
    assert_eq!(shared + hits, 19.0, "{metrics}");
    assert!(
        shared >= 10.0,
        "most requests overlapped the slow call: {metrics}"
    );
}

#[test]
fn clients_without_an_allowed_certificate_are_refused() {
    let Road {
        pki,
        llm,
        proxy,
        client: _client,
    } = Road::start(&[]);
    let url = proxy.correction_url(&token("anything"));

    let anonymous = pki.client(None);
    let (code, body) = json(anonymous.get(&url).send().unwrap());
    assert_eq!(code, 401);
    assert_status(&body, 401, "Unauthorized");
    assert_eq!(
        json(anonymous.get(proxy.url("/metrics")).send().unwrap()).0,
        401
    );
    assert_eq!(
        json(anonymous.get(proxy.url("/apis")).send().unwrap()).0,
        401
    );
    // Probes carry no certificate: health stays open.
    assert_eq!(
        anonymous
            .get(proxy.url("/healthz"))
            .send()
            .unwrap()
            .status(),
        200
    );

    let foreign = pki.client(Some(&pki.foreign_client));
    let error = foreign
        .get(&url)
        .send()
        .expect_err("a certificate from another CA must fail the handshake");
    assert!(error.is_connect() || error.is_request(), "{error:?}");

    let disallowed = pki.client(Some(&pki.disallowed_client));
    let (code, body) = json(disallowed.get(&url).send().unwrap());
    assert_eq!(code, 403);
    assert_status(&body, 403, "Forbidden");

    assert_eq!(
        llm.request_count(),
        0,
        "refused clients cause no upstream call"
    );
    let allowed = pki.client(Some(&pki.allowed_client));
    assert_eq!(allowed.get(&url).send().unwrap().status(), 200);
    let metrics = metrics_text(&allowed, &proxy);
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_refused_connections_total{reason="cn_not_allowed"}"#
        ),
        1.0
    );
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_refused_connections_total{reason="no_client_certificate"}"#
        ),
        3.0
    );
    assert!(
        metric(
            &metrics,
            r#"crfix_proxy_refused_connections_total{reason="tls_handshake_failed"}"#
        ) >= 1.0
    );
}

#[test]
fn bad_and_oversized_tokens() {
    let Road {
        pki: _pki,
        llm,
        proxy,
        client,
    } = Road::start(&[("--max-token-bytes", "4096")]);
    for bad in ["x1.abc", "c1.AAAA", "c1.$$$", "c1"] {
        let (code, body) = json(client.get(proxy.correction_url(bad)).send().unwrap());
        assert_eq!(code, 400, "{bad}: {body}");
        assert_status(&body, 400, "BadRequest");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("invalid correction token"),
            "{body}"
        );
    }
    // Bytes after the end of the deflate stream: another name for the same request, which
    // would have cost another cache entry and another upstream call. Refused.
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    let good = token("the same question");
    let mut payload = URL_SAFE_NO_PAD.decode(&good[3..]).unwrap();
    payload.extend_from_slice(b"\0junk");
    let padded = format!("c1.{}", URL_SAFE_NO_PAD.encode(&payload));
    let (code, body) = json(client.get(proxy.correction_url(&padded)).send().unwrap());
    assert_eq!(code, 400, "{body}");
    assert_status(&body, 400, "BadRequest");
    assert_eq!(
        body["message"],
        "invalid correction token: token payload has 5 bytes after the end of its deflate stream"
    );
    assert_eq!(llm.request_count(), 0);
    assert_eq!(
        client
            .get(proxy.correction_url(&good))
            .send()
            .unwrap()
            .status(),
        200,
        "the same token without the tail is fine"
    );
    llm.reset();
    // Random text does not compress: the token outgrows the limit.
    let mut rng = fastrand::Rng::with_seed(7);
    let noise: String = (0..6000).map(|_| rng.alphanumeric()).collect();
    let big = token(&noise);
    assert!(big.len() > 4096);
    let (code, body) = json(client.get(proxy.correction_url(&big)).send().unwrap());
    assert_eq!(code, 413, "{body}");
    assert_status(&body, 413, "RequestEntityTooLarge");
    assert_eq!(llm.request_count(), 0);
}

#[test]
fn budgets_answer_429() {
    let Road {
        pki,
        llm,
        proxy,
        client,
    } = Road::start(&[
        ("--daily-request-budget", "2"),
        ("--user-daily-request-budget", "0"),
    ]);
    assert_eq!(
        client
            .get(proxy.correction_url(&token("a")))
            .send()
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        client
            .get(proxy.correction_url(&token("b")))
            .send()
            .unwrap()
            .status(),
        200
    );
    let response = client
        .get(proxy.correction_url(&token("c")))
        .send()
        .unwrap();
    assert!(response.headers().get("retry-after").is_some());
    let (code, body) = json(response);
    assert_eq!(code, 429);
    assert_status(&body, 429, "TooManyRequests");
    assert!(
        body["message"].as_str().unwrap().contains("request budget"),
        "{body}"
    );
    assert_eq!(
        client
            .get(proxy.correction_url(&token("a")))
            .send()
            .unwrap()
            .status(),
        200,
        "cached answers cost nothing"
    );
    assert_eq!(llm.request_count(), 2);

    let llm = FakeLlm::start_blocking().unwrap();
    llm.set_default(Reply::content_with_usage("{}", 8, 5));
    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .arg("--daily-token-budget", "10")
        .arg("--user-daily-token-budget", "0")
        .start();
    assert_eq!(
        client
            .get(proxy.correction_url(&token("a")))
            .send()
            .unwrap()
            .status(),
        200
    );
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token("b")))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 429);
    assert!(
        body["message"].as_str().unwrap().contains("token budget"),
        "{body}"
    );
    assert_eq!(llm.request_count(), 1);

    // The upstream's own 429, after retries, comes back as a 429 too.
    let llm = FakeLlm::start_blocking().unwrap();
    llm.set_default(Reply::status(429, r#"{"error":{"message":"slow down"}}"#));
    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .arg("--max-retries", "1")
        .start();
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token("a")))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 429, "{body}");
    assert_eq!(llm.request_count(), 2);
}

#[test]
fn upstream_timeout_is_504_within_the_deadline() {
    let Road {
        pki: _pki,
        llm,
        proxy,
        client,
    } = Road::start(&[
        ("--upstream-timeout", "300ms"),
        ("--request-deadline", "1s"),
        ("--max-retries", "10"),
    ]);
    llm.set_default(Reply::content("too late").delayed(Duration::from_secs(5)));
    let started = Instant::now();
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token("slow")))
            .send()
            .unwrap(),
    );
    let elapsed = started.elapsed();
    assert_eq!(code, 504, "{body}");
    assert_status(&body, 504, "Timeout");
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
    assert!(
        elapsed < Duration::from_millis(1600),
        "answered within the deadline: {elapsed:?}"
    );
    assert!(
        llm.request_count() >= 2,
        "attempts were retried: {}",
        llm.request_count()
    );
}

#[test]
fn retries_then_errors_map_to_status_codes() {
    let Road {
        pki: _pki,
        llm,
        proxy,
        client,
    } = Road::start(&[
        ("--max-retries", "2"),
        ("--circuit-failure-threshold", "100"),
    ]);

    llm.push(Reply::status(503, "busy"));
    llm.push(Reply::Drop);
    llm.push(Reply::content("third time lucky"));
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token("retry")))
            .send()
            .unwrap(),
    );
    assert_eq!(
        (code, body["status"]["content"].as_str()),
        (200, Some("third time lucky"))
    );
    assert_eq!(llm.request_count(), 3);

    llm.reset();
    llm.push(Reply::Garbage("<html>oops</html>".into()));
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token("garbage")))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 502, "{body}");
    assert_status(&body, 502, "InternalError");

    llm.set_default(Reply::status(500, "down"));
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token("down")))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 503, "{body}");
    assert_status(&body, 503, "ServiceUnavailable");
    assert_eq!(
        llm.request_count(),
        1 + 3,
        "garbage is not retried; 5xx is retried twice"
    );

    // Errors are not cached: the next try reaches the upstream again.
    llm.set_default(Reply::content("back"));
    assert_eq!(
        client
            .get(proxy.correction_url(&token("down")))
            .send()
            .unwrap()
            .status(),
        200
    );
}

#[test]
fn circuit_opens_fails_fast_and_recovers() {
    let Road {
        pki: _pki,
        llm,
        proxy,
        client,
    } = Road::start(&[
        ("--max-retries", "0"),
        ("--circuit-failure-threshold", "2"),
        ("--circuit-open-duration", "1s"),
    ]);
    llm.set_default(Reply::status(502, "bad gateway"));
    let get = |text: &str| {
        json(
            client
                .get(proxy.correction_url(&token(text)))
                .send()
                .unwrap(),
        )
    };

    assert_eq!(get("one").0, 503);
    assert_eq!(get("two").0, 503);
    assert_eq!(llm.request_count(), 2);
    let started = Instant::now();
    let (code, body) = get("three");
    assert_eq!(code, 503);
    assert!(
        body["message"].as_str().unwrap().contains("circuit"),
        "{body}"
    );
    assert!(started.elapsed() < Duration::from_millis(200));
    assert_eq!(
        llm.request_count(),
        2,
        "an open circuit makes no upstream call"
    );
    assert_eq!(
        client.get(proxy.url("/readyz")).send().unwrap().status(),
        503
    );

    std::thread::sleep(Duration::from_millis(1100));
    llm.set_default(Reply::content("recovered"));
    let (code, body) = get("four");
    assert_eq!(code, 200, "{body}");
    assert_eq!(llm.request_count(), 3);
    assert_eq!(
        client.get(proxy.url("/readyz")).send().unwrap().status(),
        200
    );
    let metrics = metrics_text(&client, &proxy);
    assert_eq!(
        metric(&metrics, "crfix_proxy_circuit_opened_total"),
        1.0,
        "{metrics}"
    );
    assert_eq!(metric(&metrics, "crfix_proxy_circuit_state"), 0.0);
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_requests_total{outcome="unavailable"}"#
        ),
        3.0
    );
}

#[test]
fn the_key_never_leaks_into_logs_responses_or_metrics() {
    // A made-up canary, different on every run: it must appear nowhere but upstream.
    let canary = format!("LEAKCHECK{:016x}", fastrand::u64(..));
    let key = format!("sk-{canary}");
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    let echo = format!(r#"{{"error":{{"message":"Incorrect API key provided: {key}"}}}}"#);
    llm.push(Reply::status(401, echo.clone()));
    llm.push(Reply::status(500, echo.clone()));
    llm.push(Reply::Garbage(format!("Authorization: Bearer {key}")));
    llm.push(Reply::content("fine"));
    // A 200 completion that reflects the Authorization header in content, model and
    // finish reason: the key must be redacted from the answer (the policy quotes it).
    llm.push(Reply::EchoAuthorization);
    let mut proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .env("OPENAI_API_KEY", &key)
        .arg("--max-retries", "0")
        .env("CRFIX_LOG", "trace")
        .arg("--log-format", "text")
        .start();
    let client = pki.client(Some(&pki.allowed_client));
    let mut bodies = String::new();
    for (i, expected) in [502, 503, 502, 200].into_iter().enumerate() {
        let response = client
            .get(proxy.correction_url(&token(&format!("q{i}"))))
            .send()
            .unwrap();
        assert_eq!(response.status().as_u16(), expected);
        bodies.push_str(&response.text().unwrap());
    }
    // The echoed answer, fresh and then from the cache: redacted both times.
    let echoed = proxy.correction_url(&token("q4"));
    for cached in [false, true] {
        let (code, body) = json(client.get(&echoed).send().unwrap());
        assert_eq!(code, 200, "{body}");
        assert_eq!(body["status"]["cached"], cached, "{body}");
        assert_eq!(
            body["status"]["content"], r#"{"seen":"Authorization: Bearer [redacted]"}"#,
            "{body}"
        );
        assert_eq!(body["status"]["model"], "echo Bearer [redacted]");
        assert_eq!(body["status"]["finishReason"], "stop (Bearer [redacted])");
        bodies.push_str(&body.to_string());
    }
    assert_eq!(llm.request_count(), 5, "cached answers are not asked again");
    let metrics = metrics_text(&client, &proxy);
    bodies.push_str(&metrics);
    assert!(llm
        .requests()
        .iter()
        .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {key}"))));
    assert_eq!(proxy.terminate(), Some(0));
    let logs = proxy.logs();
    assert!(
        logs.contains("crfix-llm-proxy serving"),
        "logs were captured: {logs}"
    );
    assert!(
        logs.contains("upstream refused the request"),
        "the error paths logged: {logs}"
    );
    assert!(logs.contains("TRACE"), "trace logging was on: {logs}");
    assert!(
        !bodies.contains(&key) && !bodies.contains(&canary),
        "{bodies}"
    );
    assert!(
        !logs.contains(&canary),
        "the key appears in the logs:\n{logs}"
    );
    assert!(
        logs.contains("the LLM's answer contained the API key"),
        "the redaction is logged: {logs}"
    );
    assert_eq!(
        metric(&metrics, "crfix_proxy_api_key_redactions_total"),
        1.0,
        "{metrics}"
    );
}

#[test]
fn key_file_is_reread_when_it_changes() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let key_file = common::write_file(dir.path(), "api-key", "sk-first\n");
    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .env("OPENAI_API_KEY", "sk-env-ignored")
        .arg("--api-key-file", key_file.to_str().unwrap())
        .start();
    let client = pki.client(Some(&pki.allowed_client));
    assert_eq!(
        client
            .get(proxy.correction_url(&token("1")))
            .send()
            .unwrap()
            .status(),
        200
    );
    std::fs::write(&key_file, "sk-rotated-longer\n").unwrap();
    assert_eq!(
        client
            .get(proxy.correction_url(&token("2")))
            .send()
            .unwrap()
            .status(),
        200
    );
    let auth: Vec<_> = llm
        .requests()
        .into_iter()
        .map(|r| r.authorization.unwrap_or_default())
        .collect();
    assert_eq!(auth, ["Bearer sk-first", "Bearer sk-rotated-longer"]);
    let metrics = metrics_text(&client, &proxy);
    assert_eq!(metric(&metrics, "crfix_proxy_api_key_reloads_total"), 1.0);
}

#[test]
fn openai_without_a_key_is_not_ready_and_insecure_mode_warns() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    let proxy = ProxyBuilder::new(&pki, "")
        .arg("--openai-base-url", &llm.base_url())
        .start();
    let client = pki.client(Some(&pki.allowed_client));
    assert_eq!(
        client.get(proxy.url("/readyz")).send().unwrap().status(),
        503
    );
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token("k")))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 503, "{body}");
    assert_eq!(llm.request_count(), 0);

    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .flag("--insecure-skip-client-auth")
        .start();
    let anonymous = pki.client(None);
    assert_eq!(
        anonymous
            .get(proxy.correction_url(&token("k")))
            .send()
            .unwrap()
            .status(),
        200
    );
    assert!(
        proxy.logs().contains("CLIENT AUTHENTICATION IS DISABLED"),
        "{}",
        proxy.logs()
    );
}

#[test]
fn graceful_shutdown_finishes_in_flight_requests() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    llm.set_default(Reply::content("finished").delayed(Duration::from_millis(500)));
    let mut proxy = ProxyBuilder::new(&pki, &llm.base_url()).start();
    let client = pki.client(Some(&pki.allowed_client));
    let url = proxy.correction_url(&token("in flight"));
    let request = std::thread::spawn(move || json(client.get(&url).send().unwrap()));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(proxy.terminate(), Some(0));
    let (code, body) = request.join().unwrap();
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["status"]["content"], "finished");
}

/// The JSON log lines of a proxy's stderr whose message is `message`.
/// The proxy's `/metrics` page, as the client reads it.
fn metrics_text(client: &Client, proxy: &Proxy) -> String {
    client
        .get(proxy.url("/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap()
}

fn log_events(logs: &str, message: &str) -> Vec<Value> {
    logs.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["message"] == message)
        .collect()
}

#[test]
fn per_user_budgets_attribution_and_metrics() {
    let Road {
        pki,
        llm,
        proxy,
        client,
    } = Road::start(&[
        ("--daily-request-budget", "100"),
        ("--user-daily-request-budget", "2"),
        ("--metrics-max-users", "2"),
        ("--log-format", "json"),
    ]);
    llm.set_default(Reply::content_with_usage("{}", 30, 10));
    let get = |token: &str, user: Option<&str>, groups: &[&str]| {
        let mut request = client.get(proxy.correction_url(token));
        if let Some(user) = user {
            request = request.header("X-Remote-User", user);
        }
        for group in groups {
            request = request.header("X-Remote-Group", *group);
        }
        json(request.send().unwrap())
    };

    // Without a user in the token, the aggregator's X-Remote-User is accounted.
    assert_eq!(
        get(
            &token("a1"),
            Some("alice"),
            &["dev", "system:authenticated"]
        )
        .0,
        200
    );
    assert_eq!(get(&token("a2"), Some("alice"), &["dev"]).0, 200);
    let (code, body) = get(&token("a3"), Some("alice"), &["dev"]);
    assert_eq!(code, 429, "{body}");
    assert_status(&body, 429, "TooManyRequests");
    assert_eq!(
        body["message"],
        r#"the daily LLM request budget of user "alice" is exhausted (2 LLM calls per user per day)"#
    );
    assert!(body["details"]["retryAfterSeconds"].as_u64().unwrap() > 0);
    assert_eq!(
        llm.request_count(),
        2,
        "a refused user costs no upstream call"
    );
    // Alice's spending does not touch Bob's budget; cached answers cost nothing.
    assert_eq!(get(&token("b1"), Some("bob"), &[]).0, 200);
    assert_eq!(get(&token("a1"), Some("alice"), &[]).0, 200);
    assert_eq!(llm.request_count(), 3);

    // A user named in the token by the policy is the budget subject, whoever the caller is;
    // the answer for the same request is shared with the plain token's cache entry.
    let policy_server = "system:serviceaccount:kubewarden:policy-server-default";
    let (code, body) = get(
        &token_for_user("a1", "alice", &["dev"]),
        Some(policy_server),
        &["system:serviceaccounts"],
    );
    assert_eq!(
        (code, body["status"]["cached"].as_bool()),
        (200, Some(true)),
        "{body}"
    );
    let (code, body) = get(
        &token_for_user("c1", "alice", &["dev"]),
        Some(policy_server),
        &[],
    );
    assert_eq!(code, 429, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains(r#"user "alice""#),
        "{body}"
    );
    let (code, body) = get(
        &token_for_user("c1", "carol", &["ops"]),
        Some(policy_server),
        &[],
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["metadata"]["name"],
        token_for_user("c1", "carol", &["ops"]).as_str(),
        "the object keeps the name it was asked by"
    );
    // Headers are trusted only from an allowed front-proxy certificate: a direct client
    // without one cannot pose as someone else (it is refused before anything).
    let anonymous = pki.client(None);
    let response = anonymous
        .get(proxy.correction_url(&token("x")))
        .header("X-Remote-User", "bob")
        .send()
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(llm.request_count(), 4);

    let metrics = metrics_text(&client, &proxy);
    let sample = |name: &str| metric(&metrics, name);
    assert_eq!(
        sample(r#"crfix_proxy_user_requests_total{user="alice",outcome="answered"}"#),
        2.0,
        "{metrics}"
    );
    assert_eq!(
        sample(r#"crfix_proxy_user_requests_total{user="alice",outcome="too_many_requests"}"#),
        2.0
    );
    assert_eq!(
        sample(r#"crfix_proxy_user_requests_total{user="alice",outcome="cached"}"#),
        2.0
    );
    assert_eq!(
        sample(r#"crfix_proxy_user_requests_total{user="bob",outcome="answered"}"#),
        1.0
    );
    assert_eq!(
        sample(r#"crfix_proxy_user_llm_tokens_total{user="alice"}"#),
        80.0
    );
    // --metrics-max-users 2: carol is the third user, counted as "other".
    assert_eq!(
        sample(r#"crfix_proxy_user_requests_total{user="other",outcome="answered"}"#),
        1.0
    );
    assert_eq!(
        sample(r#"crfix_proxy_user_llm_tokens_total{user="other"}"#),
        40.0
    );
    assert!(!metrics.contains("carol"), "{metrics}");

    // Every correction is logged with its user, groups, caller, tokens and cache state.
    let logs = proxy.logs();
    let done = log_events(&logs, "correction");
    let first = done
        .iter()
        .find(|e| e["user"] == "alice" && e["outcome"] == "answered")
        .unwrap_or_else(|| panic!("{logs}"));
    assert_eq!(first["groups"], "dev,system:authenticated");
    assert_eq!(first["caller"], "alice");
    assert_eq!(first["tokens"], 40);
    assert_eq!(first["cached"], false);
    let carol = done.iter().find(|e| e["user"] == "carol").unwrap();
    assert_eq!(carol["groups"], "ops");
    assert_eq!(carol["caller"], policy_server);
    assert!(done.iter().any(|e| e["user"] == "alice"
        && e["cached"] == true
        && e["tokens"] == 0
        && e["caller"] == policy_server));
    let refused = log_events(&logs, "correction failed");
    assert!(
        refused
            .iter()
            .any(|e| e["user"] == "alice" && e["code"] == 429),
        "{logs}"
    );
}

/// The certificate (DER) the proxy serves to a new connection from `identity`, or the
/// connection error.
fn served_certificate(pki: &Pki, proxy: &Proxy, identity: &str) -> Result<Vec<u8>, String> {
    let client = reqwest::blocking::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(pki.server_ca_pem.as_bytes()).unwrap())
        .identity(reqwest::Identity::from_pem(identity.as_bytes()).unwrap())
        .tls_info(true)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let response = client
        .get(proxy.url("/apis"))
        .send()
        .map_err(|e| format!("{e:?}"))?;
    if response.status() != 200 {
        return Err(format!("HTTP {}", response.status()));
    }
    let info = response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .unwrap();
    Ok(info.peer_certificate().unwrap().to_vec())
}

fn der(pem: &str) -> Vec<u8> {
    use rustls_pki_types::pem::PemObject;
    rustls_pki_types::CertificateDer::from_pem_slice(pem.as_bytes())
        .unwrap()
        .to_vec()
}

/// Polls `check` until it returns true, for at most 10 s.
fn eventually(what: &str, proxy: &Proxy, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} did not happen within 10 s:\n{}", proxy.logs());
}

#[test]
fn certificates_and_client_ca_reload_without_restart() {
    let Road {
        pki,
        llm: _llm,
        proxy,
        client: _client,
    } = Road::start(&[("--cert-reload-interval", "100ms")]);
    let pid = proxy.pid();
    let cert_a = std::fs::read_to_string(&pki.serving_cert_file).unwrap();
    assert_eq!(
        served_certificate(&pki, &proxy, &pki.allowed_client),
        Ok(der(&cert_a))
    );

    // Rotate the serving certificate (a Secret update): new handshakes get cert B.
    let (cert_b, key_b) = pki.issue_serving_cert();
    std::fs::write(&pki.serving_key_file, &key_b).unwrap();
    std::fs::write(&pki.serving_cert_file, &cert_b).unwrap();
    eventually("serving certificate B", &proxy, || {
        served_certificate(&pki, &proxy, &pki.allowed_client) == Ok(der(&cert_b))
    });

    // A broken new certificate keeps cert B and is reported.
    std::fs::write(
        &pki.serving_cert_file,
        "-----BEGIN CERTIFICATE-----\nbroken\n",
    )
    .unwrap();
    eventually("the reload error", &proxy, || {
        proxy
            .logs()
            .contains("TLS reload failed; keeping the previous")
    });
    assert_eq!(
        served_certificate(&pki, &proxy, &pki.allowed_client),
        Ok(der(&cert_b))
    );
    std::fs::write(&pki.serving_cert_file, &cert_b).unwrap();

    // Rotate the request-header client CA: a client of the new CA gets in, one of the old
    // CA fails the handshake.
    let new_ca = ClientCa::new("rotated request-header CA");
    std::fs::write(&pki.client_ca_file, &new_ca.ca_pem).unwrap();
    eventually("the new client CA", &proxy, || {
        served_certificate(&pki, &proxy, &new_ca.allowed_client).is_ok()
    });
    let old = served_certificate(&pki, &proxy, &pki.allowed_client);
    assert!(old.is_err(), "a client of the old CA is refused: {old:?}");

    assert_eq!(proxy.pid(), pid, "no restart");
    let client = reqwest::blocking::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(pki.server_ca_pem.as_bytes()).unwrap())
        .identity(reqwest::Identity::from_pem(new_ca.allowed_client.as_bytes()).unwrap())
        .build()
        .unwrap();
    assert_eq!(
        client
            .get(proxy.correction_url(&token("after rotation")))
            .send()
            .unwrap()
            .status(),
        200
    );
    let metrics = metrics_text(&client, &proxy);
    assert_eq!(
        metric(&metrics, r#"crfix_proxy_tls_reloads_total{result="ok"}"#),
        2.0,
        "cert B, then the new CA (restoring B itself changed nothing): {metrics}"
    );
    assert!(metric(&metrics, r#"crfix_proxy_tls_reloads_total{result="error"}"#) >= 1.0);
}

#[test]
fn metrics_listener_serves_plain_http_for_prometheus() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    let port = free_port();
    let mut proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .arg("--metrics-bind-address", &format!("127.0.0.1:{port}"))
        .start();
    let client = pki.client(Some(&pki.allowed_client));
    let response = client
        .get(proxy.correction_url(&token("scraped")))
        .header("X-Remote-User", "alice")
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        pki.client(None)
            .get(proxy.url("/apis"))
            .send()
            .unwrap()
            .status(),
        401
    );

    // Prometheus: plain HTTP, no client certificate.
    let scraper = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let response = scraper
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text"));
    let metrics = response.text().unwrap();
    let build_info = format!(
        r#"crfix_proxy_build_info{{version="{}",commit="#,
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with(&build_info) && l.ends_with("} 1")),
        "{metrics}"
    );
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_user_requests_total{user="alice",outcome="answered"}"#
        ),
        1.0,
        "{metrics}"
    );
    assert_eq!(
        metric(
            &metrics,
            r#"crfix_proxy_refused_connections_total{reason="no_client_certificate"}"#
        ),
        1.0
    );
    // Only /metrics: the API is not reachable over the metrics port.
    let response = scraper
        .get(format!(
            "http://127.0.0.1:{port}/apis/crfix.dev/v1alpha1/corrections/{}",
            token("scraped")
        ))
        .send()
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(llm.request_count(), 1);

    assert_eq!(proxy.terminate(), Some(0));
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the metrics listener stops with the proxy"
    );
}

/// A fake kube-apiserver over HTTPS on 127.0.0.1: it serves the ConfigMap
/// kube-system/extension-apiserver-authentication to the bearer token `sa-token`, with the body
/// set by [`FakeApiServer::set`] (an HTTP 500 when it is empty). Stops when dropped.
struct FakeApiServer {
    port: u16,
    body: Arc<std::sync::Mutex<String>>,
    reads: Arc<std::sync::atomic::AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeApiServer {
    fn start(cert_pem: &str, key_pem: &str) -> FakeApiServer {
        use crfix_llm_proxy::tls::{server_config, ClientAuth};
        let config = server_config(
            cert_pem.as_bytes(),
            key_pem.as_bytes(),
            &ClientAuth::Disabled,
            false,
        )
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let body = Arc::new(std::sync::Mutex::new(String::new()));
        let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (served_body, served_reads) = (Arc::clone(&body), Arc::clone(&reads));
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let tcp = tokio::select! {
                        _ = &mut stopped => return,
                        accepted = listener.accept() => match accepted {
                            Ok((tcp, _)) => tcp,
                            Err(_) => continue,
                        },
                    };
                    let (acceptor, body, reads) =
                        (acceptor.clone(), Arc::clone(&served_body), Arc::clone(&served_reads));
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                            let (body, reads) = (Arc::clone(&body), Arc::clone(&reads));
                            async move {
                                let authorized = request
                                    .headers()
                                    .get("authorization")
                                    .is_some_and(|v| v == "Bearer sa-token");
                                let path_ok = request.uri().path()
                                    == "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
                                let text = body.lock().unwrap().clone();
                                let code = match (authorized, path_ok, text.is_empty()) {
                                    (false, _, _) => 401,
                                    (_, false, _) => 404,
                                    (_, _, true) => 500,
                                    _ => 200,
                                };
                                if code == 200 {
                                    reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                }
                                let mut response = hyper::Response::new(text);
                                *response.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
                                Ok::<_, std::convert::Infallible>(response)
                            }
                        });
                        let _ = hyper_util::server::conn::auto::Builder::new(
                            hyper_util::rt::TokioExecutor::new(),
                        )
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                    });
                }
            });
        });
        FakeApiServer {
            port,
            body,
            reads,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Serves a ConfigMap with this request-header CA and allowed names; `None`: HTTP 500.
    fn set(&self, ca_pem: Option<&str>, allowed_names: &[&str]) {
        *self.body.lock().unwrap() = match ca_pem {
            Some(ca) => serde_json::json!({
                "kind": "ConfigMap",
                "apiVersion": "v1",
                "data": {
                    "requestheader-client-ca-file": ca,
                    "requestheader-allowed-names": serde_json::to_string(allowed_names).unwrap(),
                    "requestheader-username-headers": "[\"X-Remote-User\"]",
                }
            })
            .to_string(),
            None => String::new(),
        };
    }

    fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn cluster_request_header_ca_is_reread_from_the_configmap() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    let (api_cert, api_key) = pki.issue_serving_cert();
    let api = FakeApiServer::start(&api_cert, &api_key);
    let first_ca = std::fs::read_to_string(&pki.client_ca_file).unwrap();
    api.set(Some(&first_ca), &["front-proxy-client"]);
    let sa = tempfile::tempdir().unwrap();
    common::write_file(sa.path(), "token", "sa-token\n");
    common::write_file(sa.path(), "ca.crt", &pki.server_ca_pem);

    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .cluster_auth()
        .flag("--authentication-from-cluster")
        .arg("--cluster-auth-reload-interval", "200ms")
        .arg("--cert-reload-interval", "0s")
        .env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        .env("KUBERNETES_SERVICE_PORT", &api.port.to_string())
        .env("CRFIX_SERVICE_ACCOUNT_DIR", sa.path().to_str().unwrap())
        .start();
    // The CA and the allowed names both come from the ConfigMap.
    assert!(served_certificate(&pki, &proxy, &pki.allowed_client).is_ok());
    let disallowed = served_certificate(&pki, &proxy, &pki.disallowed_client);
    assert_eq!(disallowed, Err("HTTP 403 Forbidden".to_string()));

    // The front-proxy CA rotates in the cluster: the proxy follows without restart.
    let new_ca = ClientCa::new("rotated front-proxy CA");
    api.set(Some(&new_ca.ca_pem), &["front-proxy-client"]);
    eventually("the cluster's new client CA", &proxy, || {
        served_certificate(&pki, &proxy, &new_ca.allowed_client).is_ok()
    });
    assert!(served_certificate(&pki, &proxy, &pki.allowed_client).is_err());

    // The API server fails: the proxy keeps the last CA it read and says so.
    api.set(None, &[]);
    eventually("the failed re-read", &proxy, || {
        proxy
            .logs()
            .contains("re-reading kube-system/extension-apiserver-authentication failed")
    });
    assert!(served_certificate(&pki, &proxy, &new_ca.allowed_client).is_ok());
    assert!(api.reads() >= 2, "read at start and again: {}", api.reads());
}

/// The JSON Schema a correction's answer must satisfy, as the policy would send it.
fn answer_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["ops"],
        "properties": {
            "ops": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["op", "path", "value"],
                    "properties": {
                        "op": {"enum": ["replace", "add", "remove"]},
                        "path": {"type": "string", "enum": ["/spec/namespace", "/spec/source"]},
                        "value": {"type": ["string", "null"]}
                    }
                }
            }
        }
    })
}

/// The whole upstream body the proxy sends for `text` (test-model, 256 tokens, temperature 0),
/// with this `response_format` if any.
fn upstream_body(text: &str, response_format: Option<&Value>) -> Value {
    let mut body = serde_json::json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You repair Kubernetes objects. Answer with JSON."},
            {"role": "user", "content": text},
        ],
        "max_tokens": 256,
        "temperature": 0.0,
    });
    if let Some(format) = response_format {
        body["response_format"] = format.clone();
    }
    body
}

#[test]
fn structured_output_sends_the_schema_in_each_backend_dialect() {
    let schema = answer_schema();
    let json_schema = |strict: bool| {
        let mut inner = serde_json::json!({"name": "crfix_answer", "schema": schema});
        if strict {
            inner["strict"] = Value::Bool(true);
        }
        serde_json::json!({"type": "json_schema", "json_schema": inner})
    };
    let dialects = [
        ("openai", Some(json_schema(true))),
        (
            "llama-cpp",
            Some(serde_json::json!({"type": "json_object", "schema": schema})),
        ),
        ("vllm", Some(json_schema(false))),
        ("ollama", Some(json_schema(false))),
        ("off", None),
    ];
    let answer = r#"{"ops":[{"op":"replace","path":"/spec/namespace","value":"fixed"}]}"#;
    for (dialect, format) in dialects {
        let Road {
            pki: _pki,
            llm,
            proxy,
            client,
        } = Road::start(&[("--structured-output", dialect)]);
        llm.set_default(Reply::content(answer));

        // A correction with a schema: the proxy asks in the backend's dialect.
        let with_schema = token_with_schema("fix spec.namespace", &schema);
        let (code, body) = json(
            client
                .get(proxy.correction_url(&with_schema))
                .send()
                .unwrap(),
        );
        assert_eq!(code, 200, "{dialect}: {body}");
        assert_eq!(body["status"]["content"], answer, "{dialect}");
        // Without one: the request is what it always was.
        let (code, body) = json(
            client
                .get(proxy.correction_url(&token("fix spec.namespace")))
                .send()
                .unwrap(),
        );
        assert_eq!(code, 200, "{dialect}: {body}");
        assert_eq!(body["status"]["content"], answer, "{dialect}");

        let sent = llm.requests();
        assert_eq!(sent.len(), 2, "{dialect}");
        assert_eq!(
            sent[0].body,
            upstream_body("fix spec.namespace", format.as_ref()),
            "{dialect}: with a schema"
        );
        assert_eq!(
            sent[1].body,
            upstream_body("fix spec.namespace", None),
            "{dialect}: without a schema"
        );

        let metrics = metrics_text(&client, &proxy);
        let counted = metric(
            &metrics,
            &format!(r#"crfix_proxy_structured_requests_total{{dialect="{dialect}"}}"#),
        );
        let expected = if format.is_some() { 1.0 } else { 0.0 };
        assert_eq!(counted, expected, "{dialect}: {metrics}");
        assert!(
            !metrics.contains(r#"crfix_proxy_structured_requests_total{dialect="off"}"#),
            "{metrics}"
        );
        let started = log_events(&proxy.logs(), "crfix-llm-proxy serving");
        assert_eq!(
            started.first().map(|e| e["structured_output"].clone()),
            Some(Value::from(dialect)),
            "{}",
            proxy.logs()
        );
    }
}

#[test]
fn structured_output_replaces_json_mode_and_forwards_odd_schemas() {
    let pki = Pki::new();
    let llm = FakeLlm::start_blocking().unwrap();
    let client = pki.client(Some(&pki.allowed_client));
    let json_object = serde_json::json!({"type": "json_object"});
    let schema = answer_schema();

    // JSON mode on, dialect from the environment: a schema replaces json_object; without a
    // schema json_object stays.
    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .arg("--json-mode", "on")
        .env("CRFIX_STRUCTURED_OUTPUT", "llama-cpp")
        .start();
    for t in [token_with_schema("a", &schema), token("a")] {
        let (code, body) = json(client.get(proxy.correction_url(&t)).send().unwrap());
        assert_eq!(code, 200, "{body}");
    }
    // Odd but valid schemas are forwarded unchanged: unknown keywords, empty and non-ASCII
    // keys, huge numbers, deep nesting, a dangling $ref.
    let mut deep = serde_json::json!({"type": "string"});
    for _ in 0..40 {
        deep = serde_json::json!({"type": "object", "properties": {"x": deep}});
    }
    let odd = serde_json::json!({
        "$ref": "#/definitions/missing",
        "x-crfix": [null, 1e300, -0.5, {"": {}}],
        "properties": {"": {"const": "\u{0}"}, "名前": {"type": "string"}, "deep": deep},
    });
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token_with_schema("b", &odd)))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 200, "{body}");
    let sent = llm.requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[0].body["response_format"],
        serde_json::json!({"type": "json_object", "schema": schema})
    );
    assert_eq!(sent[1].body["response_format"], json_object);
    assert_eq!(
        sent[2].body["response_format"],
        serde_json::json!({"type": "json_object", "schema": odd})
    );
    drop(proxy);

    // Dialect off (the default) with JSON mode on: the schema is dropped, JSON mode stays.
    llm.reset();
    let proxy = ProxyBuilder::new(&pki, &llm.base_url())
        .arg("--json-mode", "on")
        .start();
    let (code, body) = json(
        client
            .get(proxy.correction_url(&token_with_schema("c", &schema)))
            .send()
            .unwrap(),
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(llm.requests()[0].body["response_format"], json_object);
    let metrics = metrics_text(&client, &proxy);
    assert!(
        !metrics.contains("crfix_proxy_structured_requests_total{"),
        "{metrics}"
    );
}
