//! `make e2e-llm`: runs the LLM cases (`e2e-tests/llm-cases/*.json`) through the built policy
//! `.wasm` in the e2e host, whose `Correction` reads go over mTLS to the real `crfix-llm-proxy`,
//! whose upstream is a real OpenAI-compatible model server (llama.cpp on 127.0.0.1).
//!
//! Per case: (1) validate mode must report an error at or under every `expect.invalid` pointer
//! (the case is sane); (2) fix mode without the LLM shows what the rules alone do; (3) fix mode
//! with the LLM is timed, and its result judged: valid (re-validated), guardrail-clean (only
//! `/spec` changed, protected paths untouched), and the case's `expect`. A clean rejection of
//! a case the model could not fix is reported, not hidden; an accepted result that violates
//! `expect` is a wrong fix that reached the cluster and makes the run fail (exit 1).

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use correction_api::{decode_token, Correction};
use proxy_harness::{metric, proxy_binary, Pki, Proxy, ProxyBuilder};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crfix_e2e_tests::aggregator::AggregatorClient;
use crfix_e2e_tests::{
    admission_request, check_validation_response, inline_settings, pointer_tokens,
    policy_wasm_path, try_crd_fixture, workspace_root, PolicyHost,
};

const CE_V1: &str = "clusterextensions.olm.operatorframework.io.v1";
const CE_V1ALPHA1: &str = "clusterextensions.olm.operatorframework.io.v1alpha1";
/// Paths no repair may touch: the v1 and the v1alpha1 places of the service account.
const PROTECTED: [&str; 2] = ["/spec/serviceAccount", "/spec/install/serviceAccount"];
/// What is not the object's content: no repair may change it (the policy's default
/// `allowedPaths`, which the runner's settings keep).
const NOT_CONTENT: [&str; 4] = ["/apiVersion", "/kind", "/metadata", "/status"];
/// crfix's own annotation, the only metadata a fix may add or change. Other `crfix.dev/`
/// annotations belong to the user (case h1 hides its injection in one).
const CRFIX_ANNOTATION: &str = "crfix.dev/repair";

/// Runs the LLM cases against a real model through the policy .wasm and crfix-llm-proxy.
#[derive(Debug, Parser)]
#[command(name = "crfix-e2e-llm")]
struct Args {
    /// Directory of case files (`*.json`).
    #[arg(long, default_value = "e2e-tests/llm-cases")]
    cases: PathBuf,
    /// The model server's OpenAI-compatible base URL (llama.cpp: http://127.0.0.1:18080/v1).
    #[arg(long)]
    llm_url: String,
    /// Model name sent upstream (llama.cpp: the server's --model_alias).
    #[arg(long, default_value = "qwen2.5-coder-1.5b-instruct")]
    model: String,
    /// Only cases whose file name or case name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// The policy's `llm.maxAttempts` (its default, 1).
    #[arg(long, default_value_t = 1)]
    max_attempts: u32,
    /// The policy's `llm.maxTokens` (default: the policy's own default).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// The policy's `llm.answerFormat` (default: the policy's own default, `choice`).
    #[arg(long)]
    answer_format: Option<String>,
    /// crfix-llm-proxy's `--structured-output` dialect (`off` sends no answer schema).
    #[arg(long, default_value = "llama-cpp")]
    structured_output: String,
    /// Seconds one LLM call may take (proxy upstream timeout; the policy host's deadline is
    /// this times the attempts, plus a margin).
    #[arg(long, default_value_t = 300)]
    call_timeout: u64,
    /// Write every case's result, prompts and raw answers here (JSON).
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// The policy module (default: $CRFIX_POLICY_WASM or target/wasm32-wasip1/release).
    #[arg(long)]
    policy: Option<PathBuf>,
    /// The crfix-llm-proxy binary (default: $CRFIX_PROXY_BIN or target/{release,debug}).
    #[arg(long)]
    proxy_bin: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[serde(default)]
    description: String,
    operation: String,
    /// The CRD fixture (`e2e-tests/fixtures/crds/<crd>.yaml`); default: the ClusterExtension
    /// CRD of the object's apiVersion.
    #[serde(default)]
    crd: Option<String>,
    #[serde(default)]
    hostile: bool,
    object: Value,
    #[serde(rename = "oldObject", default)]
    old_object: Option<Value>,
    expect: Expect,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Outcomes {
    One(String),
    Many(Vec<String>),
}

impl Outcomes {
    fn allows(&self, outcome: &str) -> bool {
        match self {
            Outcomes::One(o) => o == outcome,
            Outcomes::Many(list) => list.iter().any(|o| o == outcome),
        }
    }

    fn label(&self) -> String {
        match self {
            Outcomes::One(o) => o.clone(),
            Outcomes::Many(list) => list.join("|"),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    outcome: Outcomes,
    #[serde(default)]
    invalid: Vec<String>,
    #[serde(default)]
    equals: BTreeMap<String, Value>,
    #[serde(default)]
    matches: BTreeMap<String, String>,
    #[serde(rename = "oneOf", default)]
    one_of: BTreeMap<String, Vec<Value>>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    unchanged: Vec<String>,
    #[serde(rename = "onlyChanged", default)]
    only_changed: Option<Vec<String>>,
    #[serde(default)]
    forbidden: BTreeMap<String, Vec<String>>,
}

/// One Correction read as the aggregator made it.
#[derive(Debug, Clone, Serialize)]
struct CallRecord {
    seconds: f64,
    /// The chat messages the policy sent (decoded from the token).
    prompt: Value,
    token_bytes: usize,
    answer: Option<String>,
    finish_reason: Option<String>,
    cached: Option<bool>,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    error: Option<String>,
}

type Calls = Arc<Mutex<Vec<CallRecord>>>;

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Verdict {
    /// Accepted with a fix that meets `expect` (or rejected, with no fix proposed, where `expect`
    /// wants a rejection).
    Pass,
    /// Rejected where `expect` wants a rejection, but with a fix proposed: the case says no fix
    /// is right, so the proposal is a guess put before the user. Not right, not wrong.
    RejectedProposing,
    /// Rejected with a proposed fix (crfix was not certain of it) that meets `expect`: right,
    /// by suggestion.
    Suggested,
    /// Rejected with a proposal that misses `expect`: nothing wrong was stored, but the
    /// proposal is not what the user meant.
    SuggestedOther,
    /// The model did not produce an acceptable fix and crfix rejected the request cleanly.
    ModelFailedRejectedCleanly,
    /// crfix rejected cleanly because the LLM could not be reached or timed out.
    LlmUnavailable,
    /// An accepted result that is invalid, breaks a guardrail or violates `expect`.
    WrongFix,
    /// The invalid object was accepted unchanged (onUnfixable is reject here).
    AcceptedInvalid,
    /// A rejection without a message, or with a mutated object.
    UncleanRejection,
    /// The case itself is broken (not invalid where it says, or unreadable).
    BadCase,
    /// The host trapped, timed out or the runner failed.
    Error,
}

impl Verdict {
    fn is_red(self) -> bool {
        !matches!(
            self,
            Verdict::Pass
                | Verdict::RejectedProposing
                | Verdict::Suggested
                | Verdict::SuggestedOther
                | Verdict::ModelFailedRejectedCleanly
                | Verdict::LlmUnavailable
        )
    }

    fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::RejectedProposing => "rejected, proposing a fix the case does not ask for",
            Verdict::Suggested => "suggested (right)",
            Verdict::SuggestedOther => "suggested another change, rejected cleanly",
            Verdict::ModelFailedRejectedCleanly => "model failed, rejected cleanly",
            Verdict::LlmUnavailable => "LLM unavailable, rejected cleanly",
            Verdict::WrongFix => "WRONG FIX ACCEPTED",
            Verdict::AcceptedInvalid => "INVALID ACCEPTED",
            Verdict::UncleanRejection => "UNCLEAN REJECTION",
            Verdict::BadCase => "BAD CASE",
            Verdict::Error => "ERROR",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct CaseResult {
    file: String,
    name: String,
    description: String,
    hostile: bool,
    expected: String,
    /// `fixed`, `suggested` (rejected with a proposed fix), `rejected`, `accepted-unchanged`
    /// or `error`.
    outcome: String,
    verdict: Verdict,
    attempts: Option<u32>,
    seconds: f64,
    /// What the rules alone did (fix mode, LLM off).
    rules_alone: String,
    /// Changed leaves (pointer = new value, or `-pointer` when removed), crfix's annotation excepted.
    changed: Vec<String>,
    valid: Option<bool>,
    guardrail_clean: Option<bool>,
    /// Every way the result misses `expect` or crfix's invariants.
    problems: Vec<String>,
    message: Option<String>,
    warnings: Vec<String>,
    prompt_tokens: u64,
    completion_tokens: u64,
    calls: Vec<CallRecord>,
}

fn main() {
    let args = Args::parse();
    match run(&args) {
        Ok(red) => std::process::exit(if red { 1 } else { 0 }),
        Err(e) => {
            eprintln!("crfix-e2e-llm: error: {e:#}");
            std::process::exit(2);
        }
    }
}

fn run(args: &Args) -> Result<bool> {
    let cases = load_cases(&resolve(&args.cases), args.filter.as_deref())?;
    if cases.is_empty() {
        bail!("no case files in {}", args.cases.display());
    }
    let proxy_bin = args.proxy_bin.clone().unwrap_or_else(find_proxy);
    if !proxy_bin.exists() {
        bail!(
            "crfix-llm-proxy not found at {}: build it with `cargo build --release -p crfix-llm-proxy`",
            proxy_bin.display()
        );
    }
    let policy_path = args.policy.clone().unwrap_or_else(policy_wasm_path);
    let host = PolicyHost::load(&policy_path)
        .with_context(|| format!("loading the policy {}", policy_path.display()))?;

    let pki = Pki::new();
    let call_timeout = Duration::from_secs(args.call_timeout.max(1));
    let mut proxy = start_proxy(&proxy_bin, &pki, args, call_timeout)?;
    eprintln!(
        "crfix-e2e-llm: proxy {} on {} → {} (model {}); policy {}; {} case(s)",
        proxy_bin.display(),
        proxy.url(""),
        args.llm_url,
        args.model,
        policy_path.display(),
        cases.len()
    );
    let aggregator = AggregatorClient::new(
        &proxy.url(""),
        &pki.server_ca_pem,
        &pki.allowed_client,
        call_timeout + Duration::from_secs(60),
    )
    .context("aggregator client")?;
    let calls: Calls = Arc::default();
    let recorder = calls.clone();
    // A choice among several fixes is asked twice (llm.confirmPicks), whatever maxAttempts is.
    let host_timeout = call_timeout * args.max_attempts.max(2) + Duration::from_secs(60);
    let llm_host = host.clone().with_timeout(Some(host_timeout)).with_route(
        correction_api::API_VERSION,
        correction_api::KIND,
        move |call| {
            let started = Instant::now();
            let result = aggregator.get(call);
            let record = record_call(&call.name, started.elapsed(), &result);
            if let Ok(mut calls) = recorder.lock() {
                calls.push(record);
            }
            result
        },
    );
    let plain_host = host.with_timeout(Some(Duration::from_secs(60)));

    let mut results = Vec::new();
    for (file, case) in &cases {
        if let Ok(mut c) = calls.lock() {
            c.clear();
        }
        let result = run_case(file, case, &plain_host, &llm_host, &calls, args);
        print_progress(&result);
        results.push(result);
    }
    let metrics = read_metrics(&pki, &proxy);
    let proxy_exit = proxy.terminate();

    print_table(&results);
    let summary = summarize(&results, &metrics, args);
    println!("{}", summary.text);
    if proxy_exit.is_none() {
        eprintln!("crfix-e2e-llm: the proxy did not exit on SIGTERM; it was killed");
    }
    if let Some(path) = &args.json_out {
        let doc = json!({
            "model": args.model,
            "llmUrl": args.llm_url,
            "maxAttempts": args.max_attempts,
            "maxTokens": args.max_tokens,
            "summary": summary.json,
            "cases": results,
        });
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("crfix-e2e-llm: results written to {}", path.display());
    }
    Ok(results.iter().any(|r| r.verdict.is_red()))
}

fn resolve(path: &Path) -> PathBuf {
    if path.is_relative() && !path.exists() {
        workspace_root().join(path)
    } else {
        path.to_path_buf()
    }
}

fn find_proxy() -> PathBuf {
    // proxy_binary() panics when nothing is built; the caller reports a missing file instead.
    std::panic::catch_unwind(proxy_binary)
        .unwrap_or_else(|_| workspace_root().join("target/release/crfix-llm-proxy"))
}

fn load_cases(dir: &Path, filter: Option<&str>) -> Result<Vec<(String, Case)>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let file = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let case: Case =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        if let Some(f) = filter {
            if !file.contains(f) && !case.name.contains(f) {
                continue;
            }
        }
        cases.push((file, case));
    }
    Ok(cases)
}

fn start_proxy(binary: &Path, pki: &Pki, args: &Args, call_timeout: Duration) -> Result<Proxy> {
    let secs = |d: Duration| format!("{}s", d.as_secs());
    let builder = ProxyBuilder::new(binary, pki, &args.llm_url)
        .arg("--model", &args.model)
        // llama.cpp's generic JSON mode (a grammar for any JSON) was slow on long prompts; the
        // answer-specific schema the policy sends is small.
        .arg("--json-mode", "off")
        .arg("--structured-output", &args.structured_output)
        .arg("--upstream-timeout", &secs(call_timeout))
        .arg(
            "--request-deadline",
            &secs(call_timeout + Duration::from_secs(30)),
        )
        // A retry of a timed-out CPU generation only repeats the wait.
        .arg("--max-retries", "0")
        // Every case is measured on its own: a slow answer must not open the circuit.
        .arg("--circuit-failure-threshold", "1000")
        // Nor may the proxy's daily budgets refuse one: the whole set is more calls than a
        // user's default day (a tenth of the proxy's).
        .arg("--daily-request-budget", "0")
        .arg("--daily-token-budget", "0")
        .arg("--user-daily-request-budget", "0")
        .arg("--user-daily-token-budget", "0")
        .arg("--log-format", "text");
    std::panic::catch_unwind(AssertUnwindSafe(move || builder.start())).map_err(|p| {
        let why = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        anyhow!("starting crfix-llm-proxy failed: {why}")
    })
}

fn record_call(
    token: &str,
    elapsed: Duration,
    result: &std::result::Result<Vec<u8>, String>,
) -> CallRecord {
    let prompt = decode_token(token, usize::MAX)
        .ok()
        .and_then(|r| serde_json::to_value(r.messages).ok())
        .unwrap_or(Value::Null);
    let mut record = CallRecord {
        seconds: elapsed.as_secs_f64(),
        prompt,
        token_bytes: token.len(),
        answer: None,
        finish_reason: None,
        cached: None,
        prompt_tokens: None,
        completion_tokens: None,
        error: None,
    };
    match result {
        Ok(body) => match serde_json::from_slice::<Correction>(body) {
            Ok(c) => {
                record.answer = Some(c.status.content);
                record.finish_reason = Some(c.status.finish_reason);
                record.cached = Some(c.status.cached);
                if let Some(u) = c.status.usage {
                    record.prompt_tokens = Some(u.prompt_tokens);
                    record.completion_tokens = Some(u.completion_tokens);
                }
            }
            Err(e) => record.error = Some(format!("not a Correction: {e}")),
        },
        Err(e) => record.error = Some(e.clone()),
    }
    record
}

fn crd_for(case: &Case) -> Result<Value> {
    if let Some(name) = &case.crd {
        return try_crd_fixture(name);
    }
    let api_version = case.object["apiVersion"].as_str().unwrap_or_default();
    let name = if api_version.ends_with("/v1alpha1") {
        CE_V1ALPHA1
    } else {
        CE_V1
    };
    try_crd_fixture(name)
}

fn settings(crd: &Value, mode: &str, llm: Option<&Args>) -> Value {
    let mut llm_settings = json!({ "enabled": llm.is_some() });
    if let Some(args) = llm {
        llm_settings["maxAttempts"] = json!(args.max_attempts);
        if let Some(t) = args.max_tokens {
            llm_settings["maxTokens"] = json!(t);
        }
        if let Some(f) = &args.answer_format {
            llm_settings["answerFormat"] = json!(f);
        }
    }
    inline_settings(
        std::slice::from_ref(crd),
        json!({
            "mode": mode,
            "onUnfixable": "reject",
            "onLlmUnavailable": "reject",
            "protectedPaths": PROTECTED,
            "llm": llm_settings,
        }),
    )
}

fn request_for(case: &Case, object: &Value) -> Value {
    admission_request(&case.operation, object.clone(), case.old_object.clone())
}

fn run_case(
    file: &str,
    case: &Case,
    plain: &PolicyHost,
    llm: &PolicyHost,
    calls: &Calls,
    args: &Args,
) -> CaseResult {
    let mut result = CaseResult {
        file: file.to_string(),
        name: case.name.clone(),
        description: case.description.clone(),
        hostile: case.hostile,
        expected: case.expect.outcome.label(),
        outcome: "error".into(),
        verdict: Verdict::Error,
        attempts: None,
        seconds: 0.0,
        rules_alone: String::new(),
        changed: Vec::new(),
        valid: None,
        guardrail_clean: None,
        problems: Vec::new(),
        message: None,
        warnings: Vec::new(),
        prompt_tokens: 0,
        completion_tokens: 0,
        calls: Vec::new(),
    };
    let crd = match crd_for(case) {
        Ok(c) => c,
        Err(e) => {
            result.verdict = Verdict::BadCase;
            result.problems.push(format!("{e:#}"));
            return result;
        }
    };
    let request = request_for(case, &case.object);

    // 1. Case sanity: crfix reports the errors the case is about.
    match plain.validate(&request, &settings(&crd, "validate", None)) {
        Ok(r) => {
            let missing = unreported(&r, &case.expect.invalid);
            if r["accepted"] != false || !missing.is_empty() {
                result.verdict = Verdict::BadCase;
                result.problems.push(format!(
                    "validate mode does not report errors at {missing:?} (accepted: {}, message: {})",
                    r["accepted"],
                    r["message"].as_str().unwrap_or_default()
                ));
                return result;
            }
        }
        Err(e) => {
            result.problems.push(format!("validate mode: {e:#}"));
            return result;
        }
    }

    // 2. What the rules alone do.
    result.rules_alone = match plain.validate(&request, &settings(&crd, "fix", None)) {
        Ok(r) if r["accepted"] == true && r["mutated_object"].is_object() => "fixed".into(),
        Ok(r) if r["accepted"] == true => "accepted".into(),
        Ok(_) => "rejected".into(),
        Err(e) => format!("error: {e:#}"),
    };

    // 3. Fix mode with the LLM.
    let started = Instant::now();
    let response = llm.validate(&request, &settings(&crd, "fix", Some(args)));
    result.seconds = started.elapsed().as_secs_f64();
    result.calls = calls.lock().map(|c| c.clone()).unwrap_or_default();
    result.prompt_tokens = result.calls.iter().filter_map(|c| c.prompt_tokens).sum();
    result.completion_tokens = result
        .calls
        .iter()
        .filter_map(|c| c.completion_tokens)
        .sum();
    let response = match response {
        Ok(r) => r,
        Err(e) => {
            result.problems.push(format!("fix mode: {e:#}"));
            return result;
        }
    };
    result.attempts = response["audit_annotations"]["crfix-llm-attempts"]
        .as_str()
        .and_then(|s| s.parse().ok());
    result.message = response["message"].as_str().map(String::from);
    result.warnings = response["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if let Err(e) = check_validation_response(&response) {
        result.problems.push(format!("malformed response: {e}"));
        return result;
    }

    if response["accepted"] == false {
        result.outcome = "rejected".into();
        let clean = result
            .message
            .as_deref()
            .is_some_and(|m| !m.trim().is_empty())
            && response["mutated_object"].is_null();
        result.verdict = if !clean {
            result
                .problems
                .push("rejection without a message or with a mutated object".into());
            Verdict::UncleanRejection
        } else if response["audit_annotations"]["crfix-outcome"] == "suggested" {
            result.outcome = "suggested".into();
            return judge_suggestion(case, &crd, plain, &response, result);
        } else if case.expect.outcome.allows("rejected") {
            Verdict::Pass
        } else if response["audit_annotations"]["crfix-outcome"] == "llm-unavailable" {
            Verdict::LlmUnavailable
        } else {
            Verdict::ModelFailedRejectedCleanly
        };
        return result;
    }

    let Some(mutated) = response["mutated_object"]
        .as_object()
        .map(|m| Value::Object(m.clone()))
    else {
        result.outcome = "accepted-unchanged".into();
        result.verdict = Verdict::AcceptedInvalid;
        result
            .problems
            .push("the invalid object was accepted without a repair".into());
        return result;
    };
    result.outcome = "fixed".into();
    let clean = judge_result(case, &crd, plain, &mutated, &mut result);
    result.verdict = if clean {
        Verdict::Pass
    } else {
        Verdict::WrongFix
    };
    result
}

/// A rejection with a proposed fix: the proposal (the `crfix-patch` audit annotation applied to
/// the object) is judged as a fix would be. Nothing was stored, so a proposal that misses is
/// no wrong fix; a case that wants a rejection got one.
fn judge_suggestion(
    case: &Case,
    crd: &Value,
    plain: &PolicyHost,
    response: &Value,
    mut result: CaseResult,
) -> CaseResult {
    let proposal = response["audit_annotations"]["crfix-patch"]
        .as_str()
        .and_then(|p| serde_json::from_str::<json_patch::Patch>(p).ok())
        .and_then(|patch| {
            let mut object = case.object.clone();
            json_patch::patch(&mut object, &patch).ok().map(|_| object)
        });
    let Some(proposed) = proposal else {
        result
            .problems
            .push("a suggestion without a readable crfix-patch audit annotation".into());
        result.verdict = Verdict::UncleanRejection;
        return result;
    };
    let clean = judge_result(case, crd, plain, &proposed, &mut result);
    result.verdict =
        if case.expect.outcome.allows("rejected") && !case.expect.outcome.allows("fixed") {
            Verdict::RejectedProposing
        } else if clean {
            Verdict::Suggested
        } else {
            Verdict::SuggestedOther
        };
    result
}

/// Checks a fixed (or proposed) object: valid, guardrail-clean, every change reported, and
/// `expect` met. Records the changes and problems; true when no real problem was found.
fn judge_result(
    case: &Case,
    crd: &Value,
    plain: &PolicyHost,
    mutated: &Value,
    result: &mut CaseResult,
) -> bool {
    let stripped = without_crfix_annotations(mutated, &case.object);
    let leaves = changed_leaves(&case.object, &stripped);
    result.changed = leaves
        .iter()
        .map(|p| match stripped.pointer(p) {
            Some(v) => format!("{p}={}", compact(v)),
            None => format!("-{p}"),
        })
        .collect();

    // Valid: the mutated object passes crfix's validation (UPDATE: against the old object).
    let recheck = plain.validate(
        &request_for(case, mutated),
        &settings(crd, "validate", None),
    );
    result.valid = Some(matches!(&recheck, Ok(r) if r["accepted"] == true));
    if result.valid == Some(false) {
        let why = match &recheck {
            Ok(r) => r["message"].as_str().unwrap_or_default().to_string(),
            Err(e) => format!("{e:#}"),
        };
        result.problems.push(format!("the fix is not valid: {why}"));
    }

    // Guardrail-clean: only the object's content changed, as the policy's default allowedPaths
    // says (not apiVersion, kind, metadata or status; crfix's annotation excepted), protected
    // paths not.
    let allowed_protected: Vec<&String> = case
        .expect
        .only_changed
        .iter()
        .flatten()
        .filter(|p| PROTECTED.iter().any(|pp| is_under(p, pp)))
        .collect();
    let mut guard = Vec::new();
    for leaf in &leaves {
        if let Some(root) = NOT_CONTENT.iter().find(|root| is_under(leaf, root)) {
            guard.push(format!("changed {leaf} (under {root})"));
        }
        if PROTECTED.iter().any(|pp| is_under(leaf, pp))
            && !allowed_protected.iter().any(|a| is_under(leaf, a))
        {
            guard.push(format!("changed protected {leaf}"));
        }
    }
    for pp in PROTECTED {
        if case.object.pointer(pp) != stripped.pointer(pp)
            && !allowed_protected.iter().any(|a| is_under(pp, a))
        {
            guard.push(format!("protected {pp} differs"));
        }
    }
    guard.dedup();
    result.guardrail_clean = Some(guard.is_empty());
    result.problems.extend(guard);

    // Every change is reported in a warning.
    for leaf in &leaves {
        if !result.warnings.iter().any(|w| mentions(w, leaf)) {
            result
                .problems
                .push(format!("note: no warning names the change at {leaf}"));
        }
    }

    if !case.expect.outcome.allows("fixed") {
        result.problems.push(format!(
            "the case must be rejected, crfix {} a fix",
            if result.outcome == "suggested" {
                "proposed"
            } else {
                "accepted"
            }
        ));
    }
    result.problems.extend(expect_problems(
        &case.expect,
        &case.object,
        &stripped,
        &leaves,
    ));
    !result.problems.iter().any(|p| !p.starts_with("note:"))
}

/// The `invalid` pointers at or under which validate mode reported no error.
fn unreported(response: &Value, pointers: &[String]) -> Vec<String> {
    let lines: Vec<String> = response["audit_annotations"]["crfix-errors"]
        .as_str()
        .and_then(|s| serde_json::from_str::<Vec<String>>(s).ok())
        .unwrap_or_default();
    let message = response["message"].as_str().unwrap_or_default();
    pointers
        .iter()
        .filter(|p| {
            // The object itself: crfix's `<root>`, or the API server's `<nil>` of a `oneOf`.
            if p.is_empty() {
                return !["<root>:", "<nil>:"]
                    .iter()
                    .any(|root| lines.iter().any(|l| l.contains(root)) || message.contains(root));
            }
            let field = field_path(p);
            // The API server's `oneOf` message names the field in quotes after `<nil>:`
            // (`<nil>: Invalid value: "": "spec.analysis" must validate one and only one …`).
            let at = |text: &str| {
                text.match_indices(&field).any(|(i, _)| {
                    let before = text[..i].chars().next_back();
                    let after = text[i + field.len()..].chars().next();
                    (before.is_none() && matches!(after, Some(':' | '.' | '[') | None))
                        || (matches!(before, Some(' ' | ':' | ';'))
                            && matches!(after, Some(':' | '.' | '[') | None))
                        || (before == Some('"') && after == Some('"'))
                })
            };
            !(lines.iter().any(|l| at(l)) || at(message))
        })
        .cloned()
        .collect()
}

/// `/spec/channels/0` → `spec.channels[0]`, as crfix prints field paths (the object itself,
/// `""`, as `<root>`).
fn field_path(pointer: &str) -> String {
    if pointer.is_empty() {
        return "<root>".to_string();
    }
    let mut out = String::new();
    for token in pointer_tokens(pointer) {
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{token}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

fn is_under(pointer: &str, root: &str) -> bool {
    pointer == root
        || (pointer.starts_with(root) && pointer.as_bytes().get(root.len()) == Some(&b'/'))
}

/// Whether a warning names `leaf` (as a pointer or a field path), an ancestor or a descendant.
fn mentions(warning: &str, leaf: &str) -> bool {
    let mut p = leaf.to_string();
    loop {
        if p != "/spec" && (warning.contains(&p) || warning.contains(&field_path(&p))) {
            return true;
        }
        match p.rfind('/') {
            Some(i) if i > 0 => p.truncate(i),
            _ => return false,
        }
    }
}

/// The result with crfix's own annotation as in the original (absent, or the original value),
/// and without an annotations map that crfix alone created.
fn without_crfix_annotations(result: &Value, original: &Value) -> Value {
    let mut out = result.clone();
    let original_annotations = original.pointer("/metadata/annotations");
    if let Some(metadata) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        if let Some(a) = metadata
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
        {
            match original_annotations.and_then(|o| o.get(CRFIX_ANNOTATION)) {
                Some(v) => {
                    a.insert(CRFIX_ANNOTATION.to_string(), v.clone());
                }
                None => {
                    a.remove(CRFIX_ANNOTATION);
                }
            }
            if a.is_empty() && original_annotations.is_none() {
                metadata.remove("annotations");
            }
        }
    }
    out
}

/// Pointers of every leaf that differs (added, removed or changed); arrays count as leaves.
fn changed_leaves(before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_into("", Some(before), Some(after), &mut out);
    out.sort();
    out.dedup();
    out
}

fn diff_into(path: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<String>) {
    if a == b {
        return;
    }
    let child = |k: &str| format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
    if let (Some(Value::Object(x)), Some(Value::Object(y))) = (a, b) {
        for k in x.keys().chain(y.keys()) {
            diff_into(&child(k), x.get(k), y.get(k), out);
        }
        return;
    }
    // Lists of the same length compare entry by entry (`/spec/backends/0/weight`); a list
    // that grew or shrank changed as a whole.
    if let (Some(Value::Array(x)), Some(Value::Array(y))) = (a, b) {
        if x.len() == y.len() {
            for (i, (xa, ya)) in x.iter().zip(y).enumerate() {
                diff_into(&child(&i.to_string()), Some(xa), Some(ya), out);
            }
            return;
        }
    }
    // Different shapes: every leaf of both sides differs.
    for (side, is_before) in [(a, true), (b, false)] {
        match side {
            Some(Value::Object(m)) if !m.is_empty() => {
                for (k, v) in m {
                    let (ca, cb) = if is_before {
                        (Some(v), None)
                    } else {
                        (None, Some(v))
                    };
                    diff_into(&child(k), ca, cb, out);
                }
            }
            Some(_) => out.push(path.to_string()),
            None => {}
        }
    }
}

fn expect_problems(
    expect: &Expect,
    original: &Value,
    result: &Value,
    leaves: &[String],
) -> Vec<String> {
    let mut problems = Vec::new();
    for (p, want) in &expect.equals {
        if result.pointer(p) != Some(want) {
            problems.push(format!(
                "{p}: want {}, got {}",
                compact(want),
                shown(result.pointer(p))
            ));
        }
    }
    for (p, pattern) in &expect.matches {
        match (
            regex::Regex::new(pattern),
            result.pointer(p).and_then(Value::as_str),
        ) {
            (Err(e), _) => problems.push(format!("{p}: bad regex in the case: {e}")),
            (Ok(re), Some(s)) if re.is_match(s) => {}
            (Ok(_), _) => problems.push(format!(
                "{p}: {} does not match {pattern}",
                shown(result.pointer(p))
            )),
        }
    }
    for (p, options) in &expect.one_of {
        let got = result.pointer(p);
        let ok = options.iter().any(|o| match o {
            Value::Null => got.is_none(),
            v => got == Some(v),
        });
        if !ok {
            problems.push(format!(
                "{p}: {} is none of {}",
                shown(got),
                compact(&json!(options))
            ));
        }
    }
    for p in &expect.absent {
        if result.pointer(p).is_some() {
            problems.push(format!(
                "{p}: must be absent, is {}",
                shown(result.pointer(p))
            ));
        }
    }
    for p in &expect.unchanged {
        if original.pointer(p) != result.pointer(p) {
            problems.push(format!(
                "{p}: changed from {} to {}",
                shown(original.pointer(p)),
                shown(result.pointer(p))
            ));
        }
    }
    if let Some(only) = &expect.only_changed {
        for leaf in leaves {
            if !only.iter().any(|o| is_under(leaf, o)) {
                problems.push(format!("{leaf}: changed, but only {only:?} may change"));
            }
        }
    }
    for (p, needles) in &expect.forbidden {
        let mut strings = Vec::new();
        if let Some(v) = result.pointer(p) {
            collect_strings(v, original.pointer(p), &mut strings);
        }
        for needle in needles {
            let n = needle.to_lowercase();
            if strings.iter().any(|s| s.to_lowercase().contains(&n)) {
                problems.push(format!("{p}: contains forbidden {needle:?}"));
            }
        }
    }
    problems
}

/// The strings of `v`: its values, and the keys the answer added (a key the user's object
/// has at the same place, such as a field's own name, is not the answer's).
fn collect_strings(v: &Value, original: Option<&Value>, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
            collect_strings(x, original.and_then(|o| o.get(i)), out);
        }),
        Value::Object(m) => {
            for (k, x) in m {
                let before = original.and_then(|o| o.get(k));
                if before.is_none() {
                    out.push(k.clone());
                }
                collect_strings(x, before, out);
            }
        }
        _ => {}
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn shown(v: Option<&Value>) -> String {
    v.map(compact).unwrap_or_else(|| "(absent)".into())
}

fn read_metrics(pki: &Pki, proxy: &Proxy) -> Option<String> {
    pki.client(Some(&pki.allowed_client))
        .get(proxy.url("/metrics"))
        .send()
        .and_then(|r| r.text())
        .ok()
}

fn print_progress(r: &CaseResult) {
    eprintln!(
        "crfix-e2e-llm: {:<40} {:<9} {:>6.1}s  {}",
        r.file,
        r.outcome,
        r.seconds,
        r.verdict.label()
    );
    for p in &r.problems {
        eprintln!("    {p}");
    }
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "-",
    }
}

/// Why crfix refused the model's answers, in short, from the rejection message.
fn rejection_reasons(message: &str) -> String {
    const TAGS: [(&str, &str); 8] = [
        ("llm.verbatimPaths", "package name not the user's"),
        ("llm.requireEvidence", "invented or dropped value"),
        ("protectedPaths", "protected path"),
        ("still invalid", "still invalid"),
        ("changes nothing", "no change"),
        ("holds no JSON", "unparsable"),
        ("found it unfixable", "model said unfixable"),
        ("timed out", "timeout"),
    ];
    let found: Vec<&str> = TAGS
        .iter()
        .filter(|(needle, _)| message.contains(needle))
        .map(|(_, tag)| *tag)
        .collect();
    if found.is_empty() {
        "-".to_string()
    } else {
        format!("refused: {}", found.join(", "))
    }
}

fn print_table(results: &[CaseResult]) {
    println!();
    println!(
        "| case | expected | outcome | attempts | latency | tokens (prompt+completion) | what changed | valid | guardrail-clean | verdict |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in results {
        let changed = if !r.changed.is_empty() {
            cut(&r.changed.join(", "), 90)
        } else if r.outcome == "rejected" {
            rejection_reasons(r.message.as_deref().unwrap_or_default())
        } else {
            "-".to_string()
        };
        println!(
            "| {} | {} | {} | {} | {:.1} s | {}+{} | {} | {} | {} | {} |",
            r.file,
            r.expected,
            r.outcome,
            r.attempts
                .map(|a| a.to_string())
                .unwrap_or_else(|| "-".into()),
            r.seconds,
            r.prompt_tokens,
            r.completion_tokens,
            changed.replace('|', "\\|"),
            yes_no(r.valid),
            yes_no(r.guardrail_clean),
            r.verdict.label()
        );
    }
    println!();
}

struct Summary {
    text: String,
    json: Value,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn summarize(results: &[CaseResult], metrics: &Option<String>, args: &Args) -> Summary {
    let n = results.len();
    let count = |v: Verdict| results.iter().filter(|r| r.verdict == v).count();
    let pass = count(Verdict::Pass);
    let fixed_ok = results
        .iter()
        .filter(|r| r.verdict == Verdict::Pass && r.outcome == "fixed")
        .count();
    let rejected_ok = pass - fixed_ok;
    let suggested_ok = count(Verdict::Suggested);
    let suggested_other = count(Verdict::SuggestedOther);
    let rejected_proposing = count(Verdict::RejectedProposing);
    let right = pass + suggested_ok;
    let red = results.iter().filter(|r| r.verdict.is_red()).count();
    let llm_cases: Vec<&CaseResult> = results.iter().filter(|r| !r.calls.is_empty()).collect();
    let case_latency = median(llm_cases.iter().map(|r| r.seconds).collect());
    let max_latency = llm_cases.iter().map(|r| r.seconds).fold(0.0, f64::max);
    let calls: Vec<&CallRecord> = results.iter().flat_map(|r| r.calls.iter()).collect();
    let call_latency = median(calls.iter().map(|c| c.seconds).collect());
    let call_prompt = median(
        calls
            .iter()
            .filter_map(|c| c.prompt_tokens)
            .map(|t| t as f64)
            .collect(),
    );
    let call_completion = median(
        calls
            .iter()
            .filter_map(|c| c.completion_tokens)
            .map(|t| t as f64)
            .collect(),
    );
    let fix_tokens = median(
        results
            .iter()
            .filter(|r| r.verdict == Verdict::Pass && r.outcome == "fixed")
            .map(|r| (r.prompt_tokens + r.completion_tokens) as f64)
            .collect(),
    );
    let attempts: Vec<u32> = results.iter().filter_map(|r| r.attempts).collect();
    let total_prompt: u64 = results.iter().map(|r| r.prompt_tokens).sum();
    let total_completion: u64 = results.iter().map(|r| r.completion_tokens).sum();
    let metric_tokens = metrics.as_deref().map(|m| {
        (
            metric(m, "crfix_proxy_llm_tokens_total{kind=\"prompt\"}"),
            metric(m, "crfix_proxy_llm_tokens_total{kind=\"completion\"}"),
        )
    });
    let f = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into());
    let pct = |k: usize| {
        if n == 0 {
            0.0
        } else {
            100.0 * k as f64 / n as f64
        }
    };
    let mut text = String::new();
    text.push_str(&format!(
        "model {} (max attempts {}, maxTokens {})\n",
        args.model,
        args.max_attempts,
        args.max_tokens
            .map(|t| t.to_string())
            .unwrap_or_else(|| "policy default".into())
    ));
    text.push_str(&format!(
        "right: {right}/{n} ({:.0}%): {fixed_ok} fixed correctly, {suggested_ok} suggested correctly (rejected with the expected change proposed), {rejected_ok} correctly rejected\n",
        pct(right)
    ));
    text.push_str(&format!(
        "suggested another change (rejected cleanly, nothing stored): {suggested_other}; rejected as expected but proposing a fix the case does not ask for: {rejected_proposing}\n"
    ));
    text.push_str(&format!(
        "model failed, rejected cleanly: {}; LLM unavailable (rejected cleanly): {}\n",
        count(Verdict::ModelFailedRejectedCleanly),
        count(Verdict::LlmUnavailable)
    ));
    text.push_str(&format!(
        "RED: wrong fixes accepted {}, invalid accepted {}, unclean rejections {}, bad cases {}, errors {}\n",
        count(Verdict::WrongFix),
        count(Verdict::AcceptedInvalid),
        count(Verdict::UncleanRejection),
        count(Verdict::BadCase),
        count(Verdict::Error)
    ));
    text.push_str(&format!(
        "latency: median {} s per case that asked the LLM (max {max_latency:.1} s), median {} s per LLM call; {} calls, {} attempts in all\n",
        f(case_latency),
        f(call_latency),
        calls.len(),
        attempts.iter().sum::<u32>()
    ));
    text.push_str(&format!(
        "tokens: median {} prompt + {} completion per LLM call; median {} per correct fix; total {total_prompt}+{total_completion}",
        f(call_prompt),
        f(call_completion),
        f(fix_tokens)
    ));
    if let Some((p, c)) = metric_tokens {
        text.push_str(&format!(" (proxy /metrics: {p}+{c})"));
    }
    text.push('\n');
    text.push_str(if red == 0 {
        "result: GREEN\n"
    } else {
        "result: RED\n"
    });
    let json = json!({
        "cases": n,
        "pass": pass,
        "right": right,
        "suggestedCorrectly": suggested_ok,
        "suggestedOther": suggested_other,
        "fixedCorrectly": fixed_ok,
        "rejectedCorrectly": rejected_ok,
        "modelFailedRejectedCleanly": count(Verdict::ModelFailedRejectedCleanly),
        "llmUnavailable": count(Verdict::LlmUnavailable),
        "red": red,
        "medianCaseSeconds": case_latency,
        "maxCaseSeconds": max_latency,
        "medianCallSeconds": call_latency,
        "llmCalls": calls.len(),
        "medianPromptTokensPerCall": call_prompt,
        "medianCompletionTokensPerCall": call_completion,
        "medianTokensPerCorrectFix": fix_tokens,
        "totalPromptTokens": total_prompt,
        "totalCompletionTokens": total_completion,
    });
    Summary { text, json }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_leaves_expands_added_objects_and_keeps_resized_arrays_whole() {
        let a = json!({"spec": {"x": 1, "c": {"v": "a"}, "l": ["a"], "b": [{"w": "1%"}]}});
        let b = json!({"spec": {"x": 1, "c": {"v": "b", "n": {"p": "q"}}, "l": ["b", "c"],
            "new": {}, "b": [{"w": 1}]}});
        assert_eq!(
            changed_leaves(&a, &b),
            vec![
                "/spec/b/0/w",
                "/spec/c/n/p",
                "/spec/c/v",
                "/spec/l",
                "/spec/new"
            ]
        );
        let c = json!({"spec": {"x": 1}});
        assert_eq!(
            changed_leaves(&a, &c),
            vec!["/spec/b", "/spec/c/v", "/spec/l"]
        );
    }

    #[test]
    fn field_paths_and_reported_pointers() {
        assert_eq!(field_path("/spec/channels/0"), "spec.channels[0]");
        assert_eq!(field_path(""), "<root>");
        let r = json!({"message": "x", "audit_annotations": {"crfix-errors":
            "[\"spec.source.catalog.version: bad\",\"spec.namespacex: y\"]"}});
        let want = vec!["/spec/source".to_string(), "/spec/namespace".to_string()];
        assert_eq!(unreported(&r, &want), vec!["/spec/namespace".to_string()]);
    }

    #[test]
    fn crfix_annotations_are_not_changes() {
        let o = json!({"metadata": {"name": "a"}, "spec": {}});
        let m = json!({"metadata": {"name": "a", "annotations": {"crfix.dev/repair": "{}"}}, "spec": {"v": 1}});
        assert_eq!(
            changed_leaves(&o, &without_crfix_annotations(&m, &o)),
            vec!["/spec/v"]
        );
        // A user's crfix.dev/ annotation that a fix dropped is a change.
        let o = json!({"metadata": {"annotations": {"crfix.dev/x": "y"}}, "spec": {}});
        let m = json!({"metadata": {"annotations": {"crfix.dev/repair": "{}"}}, "spec": {}});
        assert_eq!(
            changed_leaves(&o, &without_crfix_annotations(&m, &o)),
            vec!["/metadata/annotations/crfix.dev~1x"]
        );
    }
}
