//! Runs the fake LLM until Ctrl-C, answering every chat completion with a fixed content, or
//! replaying the answers a real model gave in earlier `crfix-e2e-llm` runs.
//!
//! Usage: `fake-llm [CONTENT]` (default content `{}`), or `fake-llm --replay RUN.json...`;
//! the base URL is printed on stdout. Environment: `FAKE_LLM_DELAY_MS` delays every answer.
//!
//! Replay answers a request whose messages are those of a recorded call with that call's
//! answer. A request no run recorded (crfix changed the prompt) gets the answer recorded for
//! the same object and the same kind of question (pick among fixes, or write a patch), the
//! real model's written answers included; a choice nobody recorded gets option 1.

use std::collections::HashMap;
use std::time::Duration;

use fake_llm::{FakeLlm, RecordedRequest, Reply};
use serde_json::Value;

/// What a replayed request is matched by when its exact prompt was not recorded: the system
/// message (the kind of question) and the object the user message shows.
fn object_key(messages: &[(String, String)]) -> Option<(String, String)> {
    let system = messages
        .iter()
        .find(|(role, _)| role == "system")?
        .1
        .clone();
    let user = &messages.iter().rev().find(|(role, _)| role == "user")?.1;
    let start = user.find("```json")?;
    let end = user[start + 7..].find("```")? + start + 7;
    Some((system, user[start..end].to_string()))
}

#[derive(Default)]
struct Recorded {
    by_prompt: HashMap<Vec<(String, String)>, String>,
    by_object: HashMap<(String, String), String>,
}

fn load(paths: &[String]) -> std::io::Result<Recorded> {
    let mut recorded = Recorded::default();
    for path in paths {
        let run: Value = serde_json::from_slice(&std::fs::read(path)?)?;
        let calls = run["cases"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|case| case["calls"].as_array().into_iter().flatten());
        for call in calls {
            let Some(answer) = call["answer"].as_str() else {
                continue;
            };
            let messages: Vec<(String, String)> = call["prompt"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let field = |name: &str| m[name].as_str().unwrap_or_default().to_string();
                    (field("role"), field("content"))
                })
                .collect();
            if let Some(key) = object_key(&messages) {
                recorded.by_object.entry(key).or_insert(answer.to_string());
            }
            recorded.by_prompt.insert(messages, answer.to_string());
        }
    }
    Ok(recorded)
}

fn replay(recorded: &Recorded, request: &RecordedRequest) -> Reply {
    let messages = request.messages();
    if let Some(answer) = recorded.by_prompt.get(&messages) {
        return Reply::content(answer.clone());
    }
    let key = object_key(&messages);
    let is_choice = key
        .as_ref()
        .is_some_and(|(system, _)| system.contains("\"choice\""));
    let (how, answer) = match key.and_then(|key| recorded.by_object.get(&key)) {
        Some(answer) if !is_choice => ("the same object's", answer.as_str()),
        _ if is_choice => ("option 1", r#"{"choice": 1}"#),
        _ => ("nothing recorded", "{}"),
    };
    eprintln!("fake-llm: prompt not recorded, answered with {how}");
    Reply::content(answer)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let delay_ms: u64 = std::env::var("FAKE_LLM_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let delay = move |reply: Reply| {
        if delay_ms > 0 {
            reply.delayed(Duration::from_millis(delay_ms))
        } else {
            reply
        }
    };
    let llm = FakeLlm::start().await?;
    if args.first().map(String::as_str) == Some("--replay") {
        let recorded = load(&args[1..])?;
        eprintln!(
            "fake-llm: replaying {} recorded answers",
            recorded.by_prompt.len()
        );
        llm.set_responder(move |request| delay(replay(&recorded, request)));
    } else {
        let content = args.first().cloned().unwrap_or_else(|| "{}".into());
        llm.set_default(delay(Reply::content(content)));
    }
    println!("{}", llm.base_url());
    tokio::signal::ctrl_c().await?;
    eprintln!(
        "fake-llm: {} chat completion requests served",
        llm.request_count()
    );
    Ok(())
}
