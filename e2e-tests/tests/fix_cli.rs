//! `crfix fix`, the binary, on real files through the real policy `.wasm`: the sample repository
//! (examples/repository: valid, fixable, invalid, multi-document, commented, anchored, JSON,
//! kinds without a CRD), untouched lines byte for byte after `--write`, a second `--write`
//! changing nothing, `--check` exit codes, standard input, a fix that cannot keep the layout,
//! JSON and SARIF output, and the LLM reached through the real crfix-llm-proxy.
//!
//! Needs the module (`make build-wasm`, or `CRFIX_POLICY_WASM`); the proxy test also needs the
//! proxy binary. `make test` builds both.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod support;

use serde_json::Value;
use support::CliProxy;

use crfix_e2e_tests::{load_document, workspace_root};

fn crd_dir() -> PathBuf {
    workspace_root().join("e2e-tests/fixtures/crds")
}

/// `crfix` with `args` (and `stdin`), its module cache in `cache`.
fn crfix(cache: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crfix"))
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .env_remove("CRFIX_EVAL_CACHE_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running crfix");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().expect("waiting for crfix")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[track_caller]
fn assert_stderr_has(out: &Output, text: &str) {
    let stderr = stderr(out);
    assert!(stderr.contains(text), "no {text:?} in:\n{stderr}");
}

/// The sample repository copied into `dir`; its files' texts by relative path.
fn sample_repository(dir: &Path) -> BTreeMap<String, String> {
    let source = workspace_root().join("examples/repository");
    let mut files = BTreeMap::new();
    copy_tree(&source, dir, &source, &mut files);
    files
}

fn copy_tree(from: &Path, to: &Path, root: &Path, files: &mut BTreeMap<String, String>) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target, root, files);
        } else {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&target, &text).unwrap();
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            files.insert(relative, text);
        }
    }
}

fn read_tree(dir: &Path, names: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    names
        .keys()
        .map(|name| {
            (
                name.clone(),
                std::fs::read_to_string(dir.join(name)).unwrap(),
            )
        })
        .collect()
}

/// The finding lines of a text report (`file:line: Kind/name: kind: message`).
fn findings(out: &Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| !l.starts_with("crfix: "))
        .map(String::from)
        .collect()
}

/// 1-based line numbers where `after` differs from `before` (same line count expected).
fn changed_lines(before: &str, after: &str) -> Vec<usize> {
    let (b, a): (Vec<&str>, Vec<&str>) = (
        before.split_inclusive('\n').collect(),
        after.split_inclusive('\n').collect(),
    );
    assert_eq!(
        b.len(),
        a.len(),
        "line count changed:\n{before}\n---\n{after}"
    );
    b.iter()
        .zip(&a)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn the_sample_repository_is_checked_fixed_in_place_and_stays_fixed() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let before = sample_repository(&repo);
    assert!(before.len() >= 20, "the sample has {} files", before.len());
    let cache = tmp.path().join("cache");
    let dir = repo.display().to_string();
    let crds = crd_dir().display().to_string();

    // --check: nothing changes, nothing on stdout, exit 1 (invalid objects and due fixes).
    let check = crfix(&cache, &["fix", &dir, "--crd", &crds, "--check"], None);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert_eq!(stdout(&check), "");
    assert_eq!(read_tree(&repo, &before), before);
    let lines = findings(&check);
    let expect_line = |file: &str, line: usize, what: &str| {
        let prefix = format!("{}:{line}: ", repo.join(file).display());
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&prefix) && l.contains(what)),
            "no finding {prefix}…{what} in:\n{}",
            lines.join("\n")
        );
    };
    expect_line(
        "operators/argocd.yaml",
        14,
        "fixed: set /spec/source/sourceType",
    );
    expect_line("operators/argocd.yaml", 16, "renamed: closest property");
    expect_line("operators/argocd.yaml", 18, "\"SelfCertified\" (enum)");
    expect_line(
        "operators/bundle.yaml",
        33,
        "ClusterExtension/grafana: fixed",
    );
    expect_line(
        "operators/no-package.yaml",
        12,
        "invalid: spec.source.catalog.packageName: Required value",
    );
    expect_line("apps/podinfo-flux.yml", 7, "invalid: spec.interval");
    expect_line(
        "flux/apps.yaml",
        11,
        "fixed: set /spec/prune \"true\" → true",
    );
    assert_stderr_has(
        &check,
        "crfix: 25 objects in 22 files: 12 valid, 7 fixable, 2 invalid, 4 not checked",
    );

    // The default prints the diff and changes nothing.
    let diff = crfix(&cache, &["fix", &dir, "--crd", &crds], None);
    assert_eq!(diff.status.code(), Some(1), "2 objects stay invalid");
    assert!(stdout(&diff).contains("-    sourceType: catalog   # the catalog source\n+    sourceType: Catalog   # the catalog source\n"), "{}", stdout(&diff));
    assert_eq!(read_tree(&repo, &before), before);

    // --write: only the lines of the fixes change, byte for byte everything else.
    let write = crfix(&cache, &["fix", &dir, "--crd", &crds, "--write"], None);
    assert_eq!(write.status.code(), Some(1), "{}", stderr(&write));
    let after = read_tree(&repo, &before);
    let expected_changes: BTreeMap<&str, Vec<usize>> = [
        ("operators/argocd.yaml", vec![14, 16, 18]),
        ("operators/bundle.yaml", vec![33]),
        ("flux/podinfo.yaml", vec![12]),
        ("flux/apps.yaml", vec![11]),
        ("keda/frontend.yaml", vec![10]),
        ("monitoring/api-monitor.yaml", vec![17]),
        ("apps/podinfo-monitor.yaml", vec![13]),
    ]
    .into_iter()
    .collect();
    for (name, text) in &before {
        let changed = changed_lines(text, &after[name]);
        let expected = expected_changes
            .get(name.as_str())
            .cloned()
            .unwrap_or_default();
        assert_eq!(changed, expected, "{name}:\n{}", after[name]);
    }
    assert!(after["operators/argocd.yaml"].contains(
        "    sourceType: Catalog   # the catalog source\n    catalog:\n      packageName: argocd-operator\n"
    ));
    assert!(
        after["monitoring/api-monitor.yaml"].contains("minVersion: TLS12   # at least TLS 1.2\n")
    );

    // A second --write changes nothing; the fixed objects are now valid.
    let again = crfix(&cache, &["fix", &dir, "--crd", &crds, "--write"], None);
    assert_eq!(read_tree(&repo, &before), after);
    assert_stderr_has(&again, "19 valid, 0 fixed, 2 invalid");

    // Without the two objects no rule can fix, --check passes.
    std::fs::remove_file(repo.join("operators/no-package.yaml")).unwrap();
    std::fs::remove_file(repo.join("apps/podinfo-flux.yml")).unwrap();
    let clean = crfix(&cache, &["fix", &dir, "--crd", &crds, "--check"], None);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
}

#[test]
fn standard_input_is_read_and_the_fixed_stream_written() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let crds = crd_dir().display().to_string();
    let text =
        std::fs::read_to_string(workspace_root().join("examples/repository/operators/bundle.yaml"))
            .unwrap();

    let diff = crfix(&cache, &["fix", "-", "--crd", &crds], Some(&text));
    assert_eq!(diff.status.code(), Some(0), "{}", stderr(&diff));
    assert!(
        stdout(&diff).starts_with("--- a/-\n+++ b/-\n"),
        "{}",
        stdout(&diff)
    );
    assert_stderr_has(&diff, "-:33: ClusterExtension/grafana: fixed");

    // `kustomize build | crfix fix --write - | kubectl apply -f -`: the whole stream, fixed.
    let write = crfix(
        &cache,
        &["fix", "-", "--crd", &crds, "--write"],
        Some(&text),
    );
    assert_eq!(write.status.code(), Some(0), "{}", stderr(&write));
    let fixed = stdout(&write);
    assert_eq!(changed_lines(&text, &fixed), vec![33]);
    assert!(fixed.contains("        enforcement: None\n"));

    // A valid stream passes through unchanged.
    let valid = crfix(
        &cache,
        &["fix", "-", "--crd", &crds, "--write"],
        Some(&fixed),
    );
    assert_eq!(stdout(&valid), fixed);
    assert_eq!(valid.status.code(), Some(0));
    let check = crfix(
        &cache,
        &["fix", "-", "--crd", &crds, "--check"],
        Some(&fixed),
    );
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}

#[test]
fn anchors_are_edited_where_they_are_defined_unless_that_changes_another_place() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let crds = crd_dir().display().to_string();
    let head = "\
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: shared # two endpoints, one TLS setting
spec:
  selector:
    matchLabels:
      app: api
";
    // Both endpoints share the TLS setting: the fix is made once, at the anchor.
    let shared = format!(
        "{head}  endpoints:\n    - port: https\n      tlsConfig: &tls\n        minVersion: tls12\n    - port: https-admin\n      tlsConfig: *tls\n"
    );
    let file = tmp.path().join("monitor.yaml");
    std::fs::write(&file, &shared).unwrap();
    let path = file.display().to_string();
    let out = crfix(&cache, &["fix", &path, "--crd", &crds, "--write"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(changed_lines(&shared, &written), vec![12]);
    assert!(written.contains("      tlsConfig: &tls\n        minVersion: TLS12\n"));

    // An alias of a whole value is replaced by the fixed value where it stands.
    let alias = format!(
        "{head}  jobLabel: &v tls12\n  endpoints:\n    - port: https\n      tlsConfig:\n        minVersion: *v\n"
    );
    std::fs::write(&file, &alias).unwrap();
    let out = crfix(&cache, &["fix", &path, "--crd", &crds, "--write"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(changed_lines(&alias, &written), vec![13]);
    assert!(written.contains("  jobLabel: &v tls12\n"), "{written}");

    // The fix goes through an alias to a mapping that is also a set of labels, which must
    // not change: the fix cannot be written in place, and the file is left alone.
    let label = "\
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: shared
spec:
  selector:
    matchLabels: &labels
      minVersion: tls12
  endpoints:
    - port: https
      tlsConfig: *labels
";
    std::fs::write(&file, label).unwrap();
    let out = crfix(&cache, &["fix", &path, "--crd", &crds, "--write"], None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), label);
    assert_stderr_has(
        &out,
        "not-written: the fix is not written: the change reaches a value that an anchor shares",
    );

    // --allow-reformat writes the document whole.
    let out = crfix(
        &cache,
        &["fix", &path, "--crd", &crds, "--write", "--allow-reformat"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = load_document(&file).unwrap();
    assert_eq!(
        written["spec"]["endpoints"][0]["tlsConfig"]["minVersion"],
        "TLS12"
    );
    assert_eq!(
        written["spec"]["selector"]["matchLabels"]["minVersion"],
        "tls12"
    );
    assert_stderr_has(&out, "reformatted");
}

#[test]
fn json_and_sarif_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let repo = tmp.path().join("repo");
    sample_repository(&repo);
    let dir = repo.display().to_string();
    let crds = crd_dir().display().to_string();

    let out = crfix(
        &cache,
        &["fix", &dir, "--crd", &crds, "--output", "json"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("a JSON report");
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["kind"] == "invalid"
        && f["object"] == "ClusterExtension/mystery"
        && f["line"] == 12));
    let argocd = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["file"]
                .as_str()
                .unwrap()
                .ends_with("operators/argocd.yaml")
        })
        .unwrap();
    assert_eq!(
        argocd["objects"][0],
        serde_json::json!(["ClusterExtension/argocd", "fixed"])
    );
    assert!(argocd["diff"]
        .as_str()
        .unwrap()
        .contains("+      packageName: argocd-operator"));

    let out = crfix(
        &cache,
        &["fix", &dir, "--crd", &crds, "--output", "sarif"],
        None,
    );
    let sarif: Value = serde_json::from_str(&stdout(&out)).expect("a SARIF log");
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    let rules: Vec<&str> = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    for result in results {
        assert!(rules.contains(&result["ruleId"].as_str().unwrap()));
        let region = &result["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
    }
    assert!(results
        .iter()
        .any(|r| r["level"] == "error" && r["ruleId"] == "invalid"));
}

#[test]
fn errors_exit_2_and_the_module_is_compiled_once() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let crds = crd_dir().display().to_string();
    let sample = workspace_root()
        .join("examples/repository/operators/argocd.yaml")
        .display()
        .to_string();

    // No CRD for anything: nothing could be checked, which is an error, not a pass.
    let out = crfix(&cache, &["fix", &sample], None);
    assert_eq!(out.status.code(), Some(2));
    assert_stderr_has(&out, "no CRD to check against");

    // Broken YAML names the file and the document's line.
    let broken = tmp.path().join("broken.yaml");
    std::fs::write(&broken, "a: 1\n---\nb: [\n").unwrap();
    let out = crfix(
        &cache,
        &["fix", &broken.display().to_string(), "--crd", &crds],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_stderr_has(&out, "broken.yaml");
    assert_stderr_has(&out, "line 2");

    // A path that does not exist.
    let out = crfix(&cache, &["fix", "/nonexistent/crfix", "--crd", &crds], None);
    assert_eq!(out.status.code(), Some(2));

    // The first run compiles and stores the module; the next ones load it.
    let first = crfix(
        &cache,
        &["fix", &sample, "--crd", &crds, "--check", "-v"],
        None,
    );
    let second = crfix(
        &cache,
        &["fix", &sample, "--crd", &crds, "--check", "-v"],
        None,
    );
    assert_stderr_has(&first, "module cache: compiled, stored");
    assert_stderr_has(&second, "module cache: hit");
    assert_eq!(first.status.code(), Some(1));
    assert_eq!(second.status.code(), Some(1));
}

#[test]
fn crds_from_the_cluster_are_read_with_kubectl() {
    // No cluster runs here: `$KUBECTL` names a script that answers `get crd -o json` with a
    // List, as kubectl does, and records its arguments.
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let crd = load_document(&crd_dir().join("clusterextensions.olm.operatorframework.io.v1.yaml"))
        .unwrap();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [crd]});
    let list_file = tmp.path().join("crds.json");
    std::fs::write(&list_file, list.to_string()).unwrap();
    let args_file = tmp.path().join("args");
    let kubectl = tmp.path().join("kubectl");
    std::fs::write(
        &kubectl,
        format!(
            "#!/bin/sh\necho \"$@\" > {}\ncat {}\n",
            args_file.display(),
            list_file.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let sample = workspace_root().join("examples/repository/operators/argocd.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_crfix"))
        .args([
            "fix",
            "--crds-from-cluster",
            "--context",
            "prod",
            "--check",
            "--cache-dir",
        ])
        .arg(&cache)
        .arg(&sample)
        .env("KUBECTL", &kubectl)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "ClusterExtension/argocd: fixed");
    assert_eq!(
        std::fs::read_to_string(&args_file).unwrap().trim(),
        "--context prod get customresourcedefinitions.apiextensions.k8s.io -o json"
    );
}

#[test]
fn the_llm_is_reached_through_the_proxy_with_admissions_certainty_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let crds = crd_dir().display().to_string();
    // The kwctl llm-fix case's object, as a manifest with a comment: the package name is
    // missing; the model's answer adds it.
    let case = workspace_root().join("e2e-tests/kwctl/cases/llm-fix");
    let host = load_document(&case.join("host.yaml")).unwrap();
    let answer = host["Correction"]["content"].as_str().unwrap().to_string();
    let text = "\
# Argo CD, channel alpha
apiVersion: olm.operatorframework.io/v1
kind: ClusterExtension
metadata:
  name: argocd-operator
  labels:
    app.kubernetes.io/name: argocd-operator
spec:
  namespace: argocd
  serviceAccount:
    name: argocd-installer
  source:
    sourceType: Catalog
    catalog:
      channels:
        - alpha # the only channel we test
";
    let file = tmp.path().join("argocd.yaml");
    std::fs::write(&file, text).unwrap();
    let settings = tmp.path().join("settings.yaml");
    std::fs::write(&settings, "llm:\n  maxAttempts: 1\n  answerFormat: patch\n").unwrap();

    let proxy = CliProxy::start(answer, tmp.path());
    let correction = proxy.args();
    let path = file.display().to_string();
    let mut args = vec![
        "fix",
        path.as_str(),
        "--crd",
        &crds,
        "--settings",
        settings.to_str().unwrap(),
    ];
    args.extend(correction.iter().map(String::as_str));

    // A written answer is never certain: proposed, not written, and the object stays invalid.
    let proposed = crfix(&cache, &[args.clone(), vec!["--write"]].concat(), None);
    assert_eq!(proposed.status.code(), Some(1), "{}", stderr(&proposed));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert_stderr_has(&proposed, "proposal: crfix changed nothing because");
    assert!(proxy.llm.request_count() >= 1, "the proxy asked the model");

    // The user accepts uncertain fixes: the package name is added, every other line kept.
    args.extend(["--write", "--apply-uncertain"]);
    let applied = crfix(&cache, &args, None);
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains("        - alpha # the only channel we test\n"),
        "{written}"
    );
    assert!(
        written.starts_with("# Argo CD, channel alpha\n"),
        "{written}"
    );
    assert_eq!(
        load_document(&file).unwrap()["spec"]["source"]["catalog"]["packageName"],
        "argocd-operator"
    );
    assert_stderr_has(&applied, "from LLM");
}

#[test]
fn an_installed_crfix_finds_its_module_beside_it() {
    // `make install-cli PREFIX=…`: PREFIX/bin/crfix and PREFIX/share/crfix/crfix_policy.wasm.
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::create_dir_all(prefix.join("share/crfix")).unwrap();
    let bin = prefix.join("bin/crfix");
    std::fs::copy(env!("CARGO_BIN_EXE_crfix"), &bin).unwrap();
    std::fs::copy(
        crfix_e2e_tests::policy_wasm_path(),
        prefix.join("share/crfix/crfix_policy.wasm"),
    )
    .unwrap();
    let sample = workspace_root().join("examples/repository/operators/argocd.yaml");
    let run = || {
        Command::new(&bin)
            .args(["fix", "--check", "--cache-dir"])
            .arg(tmp.path().join("cache"))
            .arg("--crd")
            .arg(crd_dir())
            .arg(&sample)
            .env_remove("CRFIX_POLICY_WASM")
            .current_dir(tmp.path())
            .output()
            .unwrap()
    };
    let out = run();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_stderr_has(&out, "ClusterExtension/argocd: fixed");

    // Without it, the error says how to get one.
    std::fs::remove_file(prefix.join("share/crfix/crfix_policy.wasm")).unwrap();
    let out = Command::new(&bin)
        .args(["fix", "--check", "--policy"])
        .arg(tmp.path().join("missing.wasm"))
        .arg("--crd")
        .arg(crd_dir())
        .arg(&sample)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_stderr_has(&out, "make build-wasm");
}

#[test]
fn the_pre_commit_hooks_run_as_pre_commit_runs_them() {
    // pre-commit runs `entry` + `args` + the staged files' names.
    let hooks = load_document(&workspace_root().join(".pre-commit-hooks.yaml")).unwrap();
    let hooks = hooks.as_array().expect("a list of hooks");
    assert_eq!(hooks.len(), 2);
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let original =
        std::fs::read_to_string(workspace_root().join("examples/repository/flux/podinfo.yaml"))
            .unwrap();
    let file = tmp.path().join("podinfo.yaml");
    for hook in hooks {
        std::fs::write(&file, &original).unwrap();
        let entry: Vec<&str> = hook["entry"].as_str().unwrap().split_whitespace().collect();
        assert_eq!(entry[0], "crfix");
        assert_eq!(hook["language"], "system");
        let files = regex::Regex::new(hook["files"].as_str().unwrap()).unwrap();
        assert!(files.is_match("podinfo.yaml") && files.is_match("a.json"));
        assert!(!files.is_match("README.md"));
        let crds = crd_dir().display().to_string();
        let path = file.display().to_string();
        let args = [&entry[1..], &["--crd", &crds, &path]].concat();
        let out = crfix(&cache, &args, None);
        // A fix is due. crfix-fix writes it and succeeds (pre-commit fails the commit because
        // the file changed); crfix-check changes nothing and fails.
        let after = std::fs::read_to_string(&file).unwrap();
        match hook["id"].as_str().unwrap() {
            "crfix-fix" => {
                assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
                assert_eq!(changed_lines(&original, &after), vec![12]);
            }
            "crfix-check" => {
                assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
                assert_eq!(after, original);
            }
            other => panic!("unknown hook {other}"),
        }
    }
}

#[test]
fn crfix_run_is_crfix_eval() {
    // `crfix run` keeps the kwctl-run-shaped single-request mode: the same flags, output and
    // exit code as crfix-eval.
    let tmp = tempfile::tempdir().unwrap();
    let requests = workspace_root().join("e2e-tests/requests");
    let crd = crd_dir().join("clusterextensions.olm.operatorframework.io.v1.yaml");
    let crfix_eval = |program: &str| {
        Command::new(program)
            .args(["--cache-dir"])
            .arg(tmp.path().join("cache"))
            .arg("--request-path")
            .arg(requests.join("cluster-extension-invalid.json"))
            .arg("--settings-path")
            .arg(requests.join("settings-inline-fix.yaml"))
            .arg("--crd")
            .arg(&crd)
            .output()
            .unwrap()
    };
    let eval = crfix_eval(env!("CARGO_BIN_EXE_crfix-eval"));
    let run = Command::new(env!("CARGO_BIN_EXE_crfix"))
        .arg("run")
        .arg("--cache-dir")
        .arg(tmp.path().join("cache"))
        .arg("--request-path")
        .arg(requests.join("cluster-extension-invalid.json"))
        .arg("--settings-path")
        .arg(requests.join("settings-inline-fix.yaml"))
        .arg("--crd")
        .arg(&crd)
        .output()
        .unwrap();
    assert_eq!(eval.status.code(), Some(0), "{}", stderr(&eval));
    assert_eq!(run.status.code(), eval.status.code());
    assert_eq!(stdout(&run), stdout(&eval));
    assert!(stdout(&run).contains("result: ACCEPTED, with repairs"));
}
