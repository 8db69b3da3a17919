//! `crfix-eval`, the binary, through the real policy `.wasm`: kwctl's flags and exit codes,
//! kwctl session files (replay and record), the compiled-module cache, and Correction reads
//! forwarded to the real crfix-llm-proxy.
//!
//! Needs the module (`make build-wasm`, or `CRFIX_POLICY_WASM`); the proxy test also needs the
//! proxy binary (`cargo build -p crfix-llm-proxy`, or `CRFIX_PROXY_BIN`). `make test` builds both.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

mod support;

use serde_json::Value;
use support::CliProxy;

use crfix_e2e_tests::{load_document, policy_wasm_path, workspace_root};

fn cases_dir() -> PathBuf {
    workspace_root().join("e2e-tests/kwctl/cases")
}

/// crfix-eval with `args`, its compiled-module cache in `cache` (never the user's).
fn eval(cache: &Path, args: &[&str]) -> Output {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_crfix-eval"))
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .env_remove("CRFIX_EVAL_CACHE_DIR")
        .output()
        .expect("running crfix-eval");
    eprintln!(
        "crfix-eval {args:?}: {:?} in {:?}",
        out.status.code(),
        started.elapsed()
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn policy() -> String {
    policy_wasm_path().display().to_string()
}

/// A case's settings as kwctl gets them (run.sh): settings.yaml plus the inline CRDs.
fn case_settings(case: &Path, dir: &Path) -> PathBuf {
    let mut settings = load_document(&case.join("settings.yaml")).unwrap();
    let crds = case.join("inline-crds.txt");
    if crds.is_file() {
        let list: Vec<Value> = std::fs::read_to_string(&crds)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| load_document(&workspace_root().join(l.trim())).unwrap())
            .collect();
        settings["crds"] = Value::Array(list);
    }
    let name = case.file_name().unwrap().to_string_lossy().to_string();
    let path = dir.join(format!("{name}.settings.json"));
    std::fs::write(&path, serde_json::to_vec(&settings).unwrap()).unwrap();
    path
}

/// The checks of e2e-tests/kwctl/check.py on the policy's response.
fn check_expect(case: &str, request: &Value, response: &Value, expect: &Value) {
    assert_eq!(
        response["accepted"], expect["allowed"],
        "{case}: {response}"
    );
    let mutated = response
        .get("mutated_object")
        .is_some_and(|m| m.is_object());
    if let Some(m) = expect["mutated"].as_bool() {
        assert_eq!(mutated, m, "{case}: {response}");
    }
    let object = if mutated {
        &response["mutated_object"]
    } else {
        &request["object"]
    };
    for (pointer, value) in expect["equals"].as_object().into_iter().flatten() {
        assert_eq!(object.pointer(pointer), Some(value), "{case}: {pointer}");
    }
    let warnings = response["warnings"].to_string();
    for word in expect["warningsContain"].as_array().into_iter().flatten() {
        assert!(
            warnings.contains(word.as_str().unwrap()),
            "{case}: {warnings}"
        );
    }
    let message = response["message"].as_str().unwrap_or_default();
    for word in expect["messageContains"].as_array().into_iter().flatten() {
        assert!(
            message.contains(word.as_str().unwrap()),
            "{case}: {message}"
        );
    }
}

#[test]
fn kwctl_cases_pass_with_kwctl_flags_and_replayed_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5);
    let (mut replayed, mut rejected) = (0, 0);
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let settings = case_settings(case, tmp.path());
        let request = case.join("request.json");
        let session = case.join("session.yml");
        let mut args = vec![
            policy(),
            "--request-path".into(),
            request.display().to_string(),
            "--settings-path".into(),
            settings.display().to_string(),
            "--json".into(),
        ];
        // As kwctl: context-aware access and a replayed session only where the case has one.
        if session.is_file() {
            args.push("--allow-context-aware".into());
            args.push("--replay-host-capabilities-interactions".into());
            args.push(session.display().to_string());
            replayed += 1;
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = eval(&cache, &args);
        // kwctl's exit code: 0 for an evaluated request, accepted or rejected.
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("not replayed"),
            "{name}: {}",
            stderr(&out)
        );
        let response: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let review = load_document(&request).unwrap();
        let expect = load_document(&case.join("expect.json")).unwrap();
        check_expect(&name, &review["request"], &response, &expect);
        if response["accepted"] == false {
            rejected += 1;
        }
    }
    assert!(
        replayed >= 3,
        "cluster-schema and LLM cases replay sessions"
    );
    assert!(rejected >= 1, "a rejected case exits 0 too");
}

#[test]
fn a_session_that_differs_from_the_policys_calls_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let case = cases_dir().join("cluster-schema-fix");
    let text = std::fs::read_to_string(case.join("session.yml")).unwrap();
    let stale = text.replace(
        "name: \"clusterextensions.olm.operatorframework.io\"",
        "name: \"widgets.example.com\"",
    );
    assert_ne!(text, stale, "the session names the CRD");
    let session = tmp.path().join("stale.yml");
    std::fs::write(&session, stale).unwrap();
    let settings = case_settings(&case, tmp.path());
    let out = eval(
        &tmp.path().join("cache"),
        &[
            &policy(),
            "-r",
            &case.join("request.json").display().to_string(),
            "-s",
            &settings.display().to_string(),
            "--allow-context-aware",
            "--replay-host-capabilities-interactions",
            &session.display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("Replay error"), "{}", stderr(&out));
}

#[test]
fn exit_codes_are_kwctls() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let requests = workspace_root().join("e2e-tests/requests");
    let crd = workspace_root()
        .join("e2e-tests/fixtures/crds/clusterextensions.olm.operatorframework.io.v1.yaml");
    let invalid = requests.join("cluster-extension-invalid.json");
    let validate = requests.join("settings-inline-validate.yaml");
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v = vec![
            "--wasm".to_string(),
            policy(),
            "--request".into(),
            invalid.display().to_string(),
            "--crd".into(),
            crd.display().to_string(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        eval(&cache, &args)
    };

    // Rejected (validate mode reports every error): evaluated, so 0. The old spellings
    // (--wasm, --request, --settings) still work.
    let out = run(base(&["--settings", &validate.display().to_string()]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("result: REJECTED"),
        "{}",
        stdout(&out)
    );

    // Settings the policy refuses: an error, as kwctl's "Provided settings are not valid".
    let out = run(base(&["--settings-json", r#"{"mode": "sometimes"}"#]));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("Provided settings are not valid"),
        "{}",
        stderr(&out)
    );

    // --settings-json is the same as a settings file.
    let out_json = run(base(&[
        "--settings-json",
        r#"{"mode": "validate", "schemaSource": "inline"}"#,
    ]));
    assert_eq!(out_json.status.code(), Some(0), "{}", stderr(&out_json));
    assert!(stdout(&out_json).contains("result: REJECTED"));

    // A request file that does not exist: an error.
    let out = eval(
        &cache,
        &[&policy(), "--request-path", "/nonexistent/request.json"],
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn recorded_sessions_replay_to_the_same_answer_and_access_needs_allow_context_aware() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let case = cases_dir().join("cluster-schema-fix");
    let settings = case_settings(&case, tmp.path());
    let request = case.join("request.json").display().to_string();
    let settings = settings.display().to_string();
    let session = tmp.path().join("recorded.yml");
    let session_s = session.display().to_string();

    // Served by the fake cluster (the CRD fixtures), recorded in kwctl's format.
    let recorded = eval(
        &cache,
        &[
            &policy(),
            "-r",
            &request,
            "-s",
            &settings,
            "--json",
            "--allow-context-aware",
            "--record-host-capabilities-interactions",
            &session_s,
        ],
    );
    assert_eq!(recorded.status.code(), Some(0), "{}", stderr(&recorded));
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.contains("!KubernetesGetResource"), "{text}");
    assert!(text.contains("type: Exchange"), "{text}");

    let replayed = eval(
        &cache,
        &[
            &policy(),
            "-r",
            &request,
            "-s",
            &settings,
            "--json",
            "--allow-context-aware",
            "--replay-host-capabilities-interactions",
            &session_s,
        ],
    );
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    assert_eq!(stdout(&recorded), stdout(&replayed));

    // Without --allow-context-aware nothing is granted: no call reaches the session.
    let denied_session = tmp.path().join("denied.yml");
    let denied = eval(
        &cache,
        &[
            &policy(),
            "-r",
            &request,
            "-s",
            &settings,
            "--json",
            "-v",
            "--record-host-capabilities-interactions",
            &denied_session.display().to_string(),
        ],
    );
    assert_eq!(denied.status.code(), Some(0), "{}", stderr(&denied));
    let denied_text = std::fs::read_to_string(&denied_session).unwrap();
    assert_eq!(denied_text.trim(), "[]", "{denied_text}");
    assert!(
        stderr(&denied).contains("host call kubernetes/get_resource"),
        "the policy asked and was refused: {}",
        stderr(&denied)
    );
    assert_ne!(stdout(&denied), stdout(&recorded));
}

#[test]
fn the_second_run_uses_the_compiled_module_cache_and_answers_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let requests = workspace_root().join("e2e-tests/requests");
    let crd = workspace_root()
        .join("e2e-tests/fixtures/crds/clusterextensions.olm.operatorframework.io.v1.yaml");
    let args = [
        policy(),
        "-r".into(),
        requests
            .join("cluster-extension-invalid.json")
            .display()
            .to_string(),
        "-s".into(),
        requests
            .join("settings-inline-fix.yaml")
            .display()
            .to_string(),
        "--crd".into(),
        crd.display().to_string(),
        "-v".into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    let t = Instant::now();
    let first = eval(&cache, &args);
    let first_time = t.elapsed();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("module cache: compiled, stored"),
        "{}",
        stderr(&first)
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].extension().is_some_and(|e| e == "cwasm"));
    let written = std::fs::metadata(&files[0]).unwrap().modified().unwrap();

    let t = Instant::now();
    let second = eval(&cache, &args);
    let second_time = t.elapsed();
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(
        stderr(&second).contains(&format!("module cache: hit {}", files[0].display())),
        "{}",
        stderr(&second)
    );
    assert_eq!(stdout(&first), stdout(&second));
    assert!(stdout(&first).contains("ACCEPTED, with repairs"));
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().modified().unwrap(),
        written,
        "a hit does not rewrite the file"
    );
    eprintln!("first run {first_time:?}, second run (cached) {second_time:?}");

    // A module that is not what was cached is compiled, not loaded from the old file.
    let other = tmp.path().join("copy.wasm");
    let mut bytes = std::fs::read(policy_wasm_path()).unwrap();
    // An empty custom section (id 0, size 1, name length 0) changes the bytes, not the code.
    bytes.extend_from_slice(&[0, 1, 0]);
    std::fs::write(&other, bytes).unwrap();
    let mut other_args = args.clone();
    let other_s = other.display().to_string();
    other_args[0] = &other_s;
    let third = eval(&cache, &other_args);
    assert_eq!(third.status.code(), Some(0), "{}", stderr(&third));
    assert!(
        stderr(&third).contains("compiled, stored"),
        "{}",
        stderr(&third)
    );
    assert_eq!(stdout(&third), stdout(&first));

    // A cache file someone else could have written is not loaded: group-writable.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&files[0], std::fs::Permissions::from_mode(0o666)).unwrap();
        let fourth = eval(&cache, &args);
        assert_eq!(fourth.status.code(), Some(0));
        assert!(
            !stderr(&fourth).contains("module cache: hit"),
            "{}",
            stderr(&fourth)
        );
    }

    let off = eval(&cache, &[&args[..], &["--disable-wasmtime-cache"]].concat());
    assert!(stderr(&off).contains("module cache: disabled"));
    assert_eq!(stdout(&off), stdout(&first));
}

#[test]
fn correction_reads_go_to_the_running_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let case = cases_dir().join("llm-fix");
    // The model's answer: the repaired spec, as in the case's host.yaml.
    let host = load_document(&case.join("host.yaml")).unwrap();
    let answer = host["Correction"]["content"].as_str().unwrap().to_string();

    let proxy = CliProxy::start(answer, tmp.path());
    let settings = case_settings(&case, tmp.path());
    let request = case.join("request.json").display().to_string();
    let settings = settings.display().to_string();
    let mut args = vec![policy(), "-r".into(), request, "-s".into(), settings];
    args.push("--allow-context-aware".into());
    args.extend(proxy.args());
    args.push("--json".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = eval(&tmp.path().join("cache"), &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let response: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let review = load_document(&case.join("request.json")).unwrap();
    let expect = load_document(&case.join("expect.json")).unwrap();
    check_expect("llm-fix via proxy", &review["request"], &response, &expect);
    assert!(proxy.llm.request_count() >= 1, "the proxy asked the model");

    // Without the aggregator's identity the proxy is not reachable: an error before evaluating.
    let out = eval(
        &tmp.path().join("cache"),
        &[
            &policy(),
            "-r",
            &case.join("request.json").display().to_string(),
            "--allow-context-aware",
            "--correction-url",
            &proxy.proxy.url(""),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--correction-client-cert"));
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    // `crfix-eval … | head -3`: the pipe closes before the output is written; the program ends
    // with 0 and no panic, as kwctl and other CLIs do.
    let tmp = tempfile::tempdir().unwrap();
    let requests = workspace_root().join("e2e-tests/requests");
    let crd = workspace_root()
        .join("e2e-tests/fixtures/crds/clusterextensions.olm.operatorframework.io.v1.yaml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_crfix-eval"))
        .arg("--cache-dir")
        .arg(tmp.path().join("cache"))
        .arg(policy())
        .arg("--request-path")
        .arg(requests.join("cluster-extension-invalid.json"))
        .arg("--settings-path")
        .arg(requests.join("settings-inline-fix.yaml"))
        .arg("--crd")
        .arg(crd)
        .env_remove("CRFIX_EVAL_CACHE_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running crfix-eval");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("waiting for crfix-eval");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}
