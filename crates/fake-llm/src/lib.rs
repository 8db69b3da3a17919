//! A scriptable, OpenAI-compatible fake LLM server for tests.
//!
//! It serves `POST /v1/chat/completions` and `GET /v1/models` on `127.0.0.1` with a random
//! port, records every request, and answers each chat completion with the next scripted
//! [`Reply`]:
//!
//! 1. the next reply pushed with [`FakeLlm::push`] (a FIFO queue), else
//! 2. the reply computed by the responder set with [`FakeLlm::set_responder`], else
//! 3. the default reply ([`FakeLlm::set_default`]; initially `Reply::content("{}")`).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::time::Duration;
//! use fake_llm::{FakeLlm, Reply};
//!
//! let llm = FakeLlm::start().await?;            // or FakeLlm::start_blocking() outside tokio
//! let base = llm.base_url();                     // "http://127.0.0.1:PORT/v1"
//! llm.push(Reply::content(r#"{"ops":[]}"#));    // first call gets this answer
//! llm.push(Reply::status(503, "overloaded"));   // second call an HTTP 503
//! llm.push(Reply::content("late").delayed(Duration::from_secs(2)));
//! llm.push(Reply::Garbage("not json".into()));  // 200 with a non-JSON body
//! llm.push(Reply::Drop);                        // connection closed without an answer
//! llm.push(Reply::EchoAuthorization);           // 200 that reflects the Authorization header
//! llm.set_responder(|req| Reply::content(format!("seen {} messages", req.messages().len())));
//! // ... exercise the code under test against `base` ...
//! assert_eq!(llm.request_count(), 6);
//! let first = &llm.requests()[0];
//! assert_eq!(first.authorization.as_deref(), Some("Bearer sk-test"));
//! # Ok(()) }
//! ```
//!
//! The server stops when the [`FakeLlm`] is dropped (or [`FakeLlm::shutdown`] is called);
//! connections still open are closed then.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// A successful chat completion answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// `choices[0].message.content`.
    pub content: String,
    /// `choices[0].finish_reason`.
    pub finish_reason: String,
    /// The model reported in the answer; `None` echoes the requested model.
    pub model: Option<String>,
    /// `usage.prompt_tokens`; `None` estimates it (request characters / 4, at least 1).
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`; `None` estimates it (content characters / 4, at least 1).
    pub completion_tokens: Option<u64>,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// HTTP 200 with an OpenAI chat completion.
    Completion(Completion),
    /// Any HTTP status with this body (sent as `application/json` if it parses as JSON).
    Status { code: u16, body: String },
    /// HTTP 200 with this body verbatim as `application/json`, e.g. non-JSON garbage.
    Garbage(String),
    /// Close the connection without sending a response.
    Drop,
    /// Wait, then answer with the inner reply (a slow or timing-out upstream).
    Delay(Duration, Box<Reply>),
    /// HTTP 200 with a chat completion that reflects the request's `Authorization` header
    /// verbatim in its content, model and finish reason (a hostile or buggy upstream).
    EchoAuthorization,
}

impl Reply {
    /// A completion with this content, finish reason `stop` and estimated usage.
    pub fn content(content: impl Into<String>) -> Reply {
        Reply::Completion(Completion {
            content: content.into(),
            finish_reason: "stop".into(),
            model: None,
            prompt_tokens: None,
            completion_tokens: None,
        })
    }

    /// A completion with exact usage figures.
    pub fn content_with_usage(
        content: impl Into<String>,
        prompt_tokens: u64,
        completion_tokens: u64,
    ) -> Reply {
        Reply::Completion(Completion {
            content: content.into(),
            finish_reason: "stop".into(),
            model: None,
            prompt_tokens: Some(prompt_tokens),
            completion_tokens: Some(completion_tokens),
        })
    }

    /// An HTTP error (or any status) with a body.
    pub fn status(code: u16, body: impl Into<String>) -> Reply {
        Reply::Status {
            code,
            body: body.into(),
        }
    }

    /// This reply, sent after a delay.
    pub fn delayed(self, delay: Duration) -> Reply {
        Reply::Delay(delay, Box::new(self))
    }
}

/// A request the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The `Authorization` header, verbatim.
    pub authorization: Option<String>,
    /// The body parsed as JSON, or `Value::Null` when it is not JSON.
    pub body: Value,
    /// The body as text (lossy UTF-8).
    pub raw_body: String,
}

impl RecordedRequest {
    /// The `(role, content)` pairs of `messages` in a chat completion request.
    pub fn messages(&self) -> Vec<(String, String)> {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .map(|messages| {
                messages
                    .iter()
                    .map(|m| {
                        let field = |name: &str| {
                            m.get(name)
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string()
                        };
                        (field("role"), field("content"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The content of the last `user` message, if any.
    pub fn last_user_message(&self) -> Option<String> {
        self.messages()
            .into_iter()
            .rev()
            .find(|(role, _)| role == "user")
            .map(|(_, content)| content)
    }

    /// The requested model.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }
}

type Responder = Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

struct State {
    queue: VecDeque<Reply>,
    responder: Option<Responder>,
    default: Reply,
    requests: Vec<RecordedRequest>,
    models: Vec<String>,
}

#[derive(Clone)]
struct Shared(Arc<Mutex<State>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking responder must not wedge every later test assertion.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A running fake LLM server. See the crate documentation.
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Shared,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeLlm {
    /// Starts the server on the current tokio runtime (127.0.0.1, random port).
    pub async fn start() -> std::io::Result<FakeLlm> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Shared::new();
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(serve(listener, shared.clone(), stopped));
        Ok(FakeLlm {
            addr,
            shared,
            stop,
            thread: None,
        })
    }

    /// Starts the server on its own thread and tokio runtime, for synchronous callers.
    pub fn start_blocking() -> std::io::Result<FakeLlm> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let shared = Shared::new();
        let (stop, stopped) = watch::channel(false);
        let listener = {
            let _guard = runtime.enter();
            TcpListener::from_std(std_listener)?
        };
        let server_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fake-llm".into())
            .spawn(move || runtime.block_on(serve(listener, server_shared, stopped)))?;
        Ok(FakeLlm {
            addr,
            shared,
            stop,
            thread: Some(thread),
        })
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The OpenAI-style base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queues a reply for the next chat completion request.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push_back(reply);
    }

    /// Sets the reply used when the queue is empty and no responder is set.
    pub fn set_default(&self, reply: Reply) {
        self.shared.lock().default = reply;
    }

    /// Sets a function that answers each request when the queue is empty.
    pub fn set_responder<F>(&self, responder: F)
    where
        F: Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    {
        self.shared.lock().responder = Some(Arc::new(responder));
    }

    /// Removes the responder.
    pub fn clear_responder(&self) {
        self.shared.lock().responder = None;
    }

    /// Sets the model ids listed by `GET /v1/models` (default: `["fake-model"]`).
    pub fn set_models(&self, models: Vec<String>) {
        self.shared.lock().models = models;
    }

    /// Every request received so far (all paths), in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many chat completion requests arrived so far.
    pub fn request_count(&self) -> usize {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .count()
    }

    /// Forgets recorded requests and queued replies; keeps the responder and default.
    pub fn reset(&self) {
        let mut state = self.shared.lock();
        state.requests.clear();
        state.queue.clear();
    }

    /// Stops the server (same as dropping it).
    pub fn shutdown(self) {}
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn new() -> Shared {
        Shared(Arc::new(Mutex::new(State {
            queue: VecDeque::new(),
            responder: None,
            default: Reply::content("{}"),
            requests: Vec::new(),
            models: vec!["fake-model".into()],
        })))
    }
}

async fn serve(listener: TcpListener, shared: Shared, mut stopped: watch::Receiver<bool>) {
    // Connection tasks live in the set: dropping it at shutdown closes them all.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = stopped.changed() => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let shared = shared.clone();
                        async move { handle(req, shared).await }
                    });
                    // An error here is a dropped connection, scripted or not.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

#[derive(Debug)]
struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("scripted connection drop")
    }
}

impl std::error::Error for DropConnection {}

async fn handle(
    req: Request<Incoming>,
    shared: Shared,
) -> Result<Response<Full<Bytes>>, DropConnection> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let authorization = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let raw = match req.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Err(DropConnection),
    };
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        authorization,
        body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
        raw_body: String::from_utf8_lossy(&raw).into_owned(),
    };

    let reply = {
        let mut state = shared.lock();
        state.requests.push(recorded.clone());
        match (method, path.as_str()) {
            (Method::GET, "/v1/models") => {
                let data: Vec<Value> = state
                    .models
                    .iter()
                    .map(|id| json!({"id": id, "object": "model", "owned_by": "fake-llm"}))
                    .collect();
                return Ok(json_response(
                    StatusCode::OK,
                    json!({"object": "list", "data": data}).to_string(),
                ));
            }
            (Method::POST, "/v1/chat/completions") => {
                if let Some(reply) = state.queue.pop_front() {
                    reply
                } else if let Some(responder) = state.responder.clone() {
                    // Run the responder without the lock so it may call back into the fake.
                    drop(state);
                    responder(&recorded)
                } else {
                    state.default.clone()
                }
            }
            _ => {
                return Ok(json_response(
                    StatusCode::NOT_FOUND,
                    json!({"error": {"message": "not found", "type": "invalid_request_error"}})
                        .to_string(),
                ))
            }
        }
    };
    render(reply, &recorded).await
}

async fn render(
    mut reply: Reply,
    request: &RecordedRequest,
) -> Result<Response<Full<Bytes>>, DropConnection> {
    loop {
        match reply {
            Reply::Delay(delay, inner) => {
                tokio::time::sleep(delay).await;
                reply = *inner;
            }
            Reply::Drop => return Err(DropConnection),
            Reply::Garbage(body) => return Ok(json_response(StatusCode::OK, body)),
            Reply::Status { code, body } => {
                let status =
                    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                return Ok(json_response(status, body));
            }
            Reply::Completion(completion) => {
                return Ok(json_response(
                    StatusCode::OK,
                    completion_body(&completion, request).to_string(),
                ))
            }
            Reply::EchoAuthorization => {
                let header = request.authorization.clone().unwrap_or_default();
                reply = Reply::Completion(Completion {
                    content: format!("{{\"seen\":\"Authorization: {header}\"}}"),
                    finish_reason: format!("stop ({header})"),
                    model: Some(format!("echo {header}")),
                    prompt_tokens: None,
                    completion_tokens: None,
                });
            }
        }
    }
}

fn completion_body(completion: &Completion, request: &RecordedRequest) -> Value {
    let model = completion
        .model
        .clone()
        .or_else(|| request.model().map(str::to_string))
        .unwrap_or_else(|| "fake-model".into());
    let prompt_chars: usize = request.messages().iter().map(|(_, c)| c.len()).sum();
    let prompt_tokens = completion
        .prompt_tokens
        .unwrap_or((prompt_chars / 4).max(1) as u64);
    let completion_tokens = completion
        .completion_tokens
        .unwrap_or((completion.content.len() / 4).max(1) as u64);
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": completion.content},
            "finish_reason": completion.finish_reason,
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    })
}

fn json_response(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A minimal blocking HTTP/1.1 client, enough to exercise the fake without dependencies.
    fn post(addr: SocketAddr, path: &str, body: &str) -> std::io::Result<(u16, String)> {
        let mut stream = std::net::TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )?;
        let mut out = String::new();
        stream.read_to_string(&mut out)?;
        let code = out
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let body = out.split("\r\n\r\n").nth(1).unwrap_or_default().to_string();
        Ok((code, body))
    }

    const CHAT: &str = r#"{"model":"m1","messages":[{"role":"system","content":"s"},{"role":"user","content":"hello there"}]}"#;

    #[test]
    fn scripted_replies_in_order_then_responder_then_default() {
        let llm = FakeLlm::start_blocking().unwrap();
        llm.push(Reply::content("first"));
        llm.push(Reply::status(503, "busy"));
        llm.push(Reply::Garbage("<html>".into()));
        llm.push(Reply::Drop);

        let (code, body) = post(llm.addr(), "/v1/chat/completions", CHAT).unwrap();
        assert_eq!(code, 200);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], "first");
        assert_eq!(v["model"], "m1");
        assert_eq!(v["usage"]["completion_tokens"], 1);

        assert_eq!(
            post(llm.addr(), "/v1/chat/completions", CHAT).unwrap(),
            (503, "busy".into())
        );
        assert_eq!(
            post(llm.addr(), "/v1/chat/completions", CHAT).unwrap(),
            (200, "<html>".into())
        );
        let dropped = post(llm.addr(), "/v1/chat/completions", CHAT);
        assert!(matches!(dropped, Err(_) | Ok((0, _))), "{dropped:?}");

        llm.set_responder(|req| Reply::content(req.last_user_message().unwrap_or_default()));
        let (_, body) = post(llm.addr(), "/v1/chat/completions", CHAT).unwrap();
        assert!(body.contains("hello there"), "{body}");

        llm.clear_responder();
        llm.set_default(Reply::content_with_usage("dflt", 7, 3));
        let (_, body) = post(llm.addr(), "/v1/chat/completions", CHAT).unwrap();
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], "dflt");
        assert_eq!(v["usage"]["prompt_tokens"], 7);

        llm.push(Reply::EchoAuthorization);
        let (code, body) = post(llm.addr(), "/v1/chat/completions", CHAT).unwrap();
        assert_eq!(code, 200);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v["choices"][0]["message"]["content"],
            r#"{"seen":"Authorization: Bearer k"}"#
        );
        assert_eq!(v["model"], "echo Bearer k");
        assert_eq!(v["choices"][0]["finish_reason"], "stop (Bearer k)");

        assert_eq!(llm.request_count(), 7);
        let first = &llm.requests()[0];
        assert_eq!(first.authorization.as_deref(), Some("Bearer k"));
        assert_eq!(first.model(), Some("m1"));
        assert_eq!(first.messages().len(), 2);
    }

    #[test]
    fn delay_and_models_and_not_found() {
        let llm = FakeLlm::start_blocking().unwrap();
        llm.push(Reply::content("slow").delayed(Duration::from_millis(200)));
        let started = std::time::Instant::now();
        let (code, _) = post(llm.addr(), "/v1/chat/completions", CHAT).unwrap();
        assert_eq!(code, 200);
        assert!(started.elapsed() >= Duration::from_millis(200));
        let (code, body) = post(llm.addr(), "/v1/nope", "").unwrap();
        assert_eq!(code, 404, "{body}");
        assert_eq!(llm.request_count(), 1);
        assert!(llm.base_url().starts_with("http://127.0.0.1:"));
    }

    #[tokio::test]
    async fn async_start_and_shutdown_on_drop() {
        let llm = FakeLlm::start().await.unwrap();
        let addr = llm.addr();
        let (code, _) =
            tokio::task::spawn_blocking(move || post(addr, "/v1/chat/completions", CHAT))
                .await
                .unwrap()
                .unwrap();
        assert_eq!(code, 200);
        drop(llm);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(std::net::TcpStream::connect(addr).is_err());
    }
}
