//! What can be checked here about the cluster side, which itself only runs on a real cluster:
//! every manifest parses, kustomize references resolve, names/ports/selectors agree, the
//! Correction group/version/kind is the same everywhere, the settings in the manifests are
//! valid for the policy, RBAC is least-privilege, the proxy pod is hardened, no secret is
//! committed, the packaging metadata agrees with itself, and the kwctl cases (and their replay
//! sessions) match what the policy really does.
//!
//! `CRFIX_BLESS=1 cargo test -p crfix-e2e-tests --test manifests` rewrites the kwctl session
//! files (e2e-tests/kwctl/cases/*/session.yml) from each case's host.yaml.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use crfix_policy::{FnHost, GetResourceRequest};
use kubewarden_policy_sdk::settings::Validatable;
use serde_json::{json, Value};

use crfix_e2e_tests::string_list;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("e2e-tests has a parent")
        .to_path_buf()
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Every YAML document of a file, as JSON values (empty documents skipped).
fn yaml_docs(path: &Path) -> Result<Vec<Value>> {
    let text = read(path)?;
    let mut docs = Vec::new();
    for (i, de) in serde_yaml::Deserializer::from_str(&text).enumerate() {
        let value: Value = serde::Deserialize::deserialize(de)
            .with_context(|| format!("{}: document {} is not valid YAML", path.display(), i + 1))?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    Ok(docs)
}

fn yaml_doc(path: &Path) -> Result<Value> {
    let mut docs = yaml_docs(path)?;
    if docs.len() != 1 {
        bail!(
            "{}: expected one YAML document, found {}",
            path.display(),
            docs.len()
        );
    }
    Ok(docs.remove(0))
}

/// YAML files under `dir`, recursively, skipping generated output and build directories.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !matches!(name.as_str(), "generated" | "target" | "node_modules") {
                out.extend(yaml_files(&path));
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// All Kubernetes objects in config/ (not the generated overlays, not kustomizations).
fn config_objects() -> Vec<(PathBuf, Value)> {
    let mut out = Vec::new();
    for path in yaml_files(&root().join("config")) {
        if path.file_name().is_some_and(|n| n == "kustomization.yaml") {
            continue;
        }
        for doc in yaml_docs(&path).unwrap() {
            out.push((path.clone(), doc));
        }
    }
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Files that kustomizations use as patches (partial objects).
fn patch_files() -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for path in yaml_files(&root().join("config")) {
        if path.file_name().is_some_and(|n| n == "kustomization.yaml") {
            let k = yaml_doc(&path).unwrap();
            for patch in k["patches"].as_array().into_iter().flatten() {
                if let Some(p) = patch["path"].as_str() {
                    out.insert(path.parent().unwrap().join(p));
                }
            }
        }
    }
    out
}

/// The one object of `kind` named `name` in config/ (patches excluded).
fn object(kind: &str, name: &str) -> Value {
    let patches = patch_files();
    let matches: Vec<Value> = config_objects()
        .into_iter()
        .filter(|(path, o)| {
            o["kind"] == kind && o["metadata"]["name"] == name && !patches.contains(path)
        })
        .map(|(_, o)| o)
        .collect();
    assert_eq!(
        matches.len(),
        1,
        "expected one {kind} {name} in config/, found {}",
        matches.len()
    );
    matches.into_iter().next().unwrap()
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} is not a string in {v}"))
}

// ---------------------------------------------------------------------------------------------
// Parsing and kustomize references

#[test]
fn every_manifest_parses() {
    let r = root();
    let mut files = yaml_files(&r.join("config"));
    files.extend(yaml_files(&r.join("policy-server")));
    files.extend(yaml_files(&r.join("e2e-tests/kwctl")));
    files.push(r.join("metadata.yml"));
    files.push(r.join("artifacthub-pkg.yml"));
    assert!(files.len() > 20, "too few YAML files found: {files:?}");
    for file in &files {
        let docs = yaml_docs(file).unwrap();
        assert!(!docs.is_empty(), "{} holds no YAML document", rel(file));
        if rel(file).starts_with("config/") {
            for doc in &docs {
                assert!(
                    doc["apiVersion"].is_string() && doc["kind"].is_string(),
                    "{}: a document without apiVersion/kind",
                    rel(file)
                );
            }
        }
    }
}

#[test]
fn kustomizations_reference_existing_files() {
    let mut seen = 0;
    for path in yaml_files(&root().join("config")) {
        if path.file_name().is_none_or(|n| n != "kustomization.yaml") {
            continue;
        }
        seen += 1;
        let dir = path.parent().unwrap();
        let k = yaml_doc(&path).unwrap();
        let mut listed = BTreeSet::new();
        for entry in string_list(&k["resources"]) {
            let target = dir.join(&entry);
            assert!(
                target.is_file() || target.join("kustomization.yaml").is_file(),
                "{}: resource {entry} does not exist",
                rel(&path)
            );
            listed.insert(entry);
        }
        for patch in k["patches"].as_array().into_iter().flatten() {
            if let Some(p) = patch["path"].as_str() {
                assert!(
                    dir.join(p).is_file(),
                    "{}: patch {p} does not exist",
                    rel(&path)
                );
                listed.insert(p.to_string());
            }
        }
        // Every manifest beside a kustomization is used by it, except documented templates.
        for file in std::fs::read_dir(dir).unwrap().flatten() {
            let name = file.file_name().to_string_lossy().to_string();
            if name.ends_with(".yaml")
                && name != "kustomization.yaml"
                && !name.ends_with(".example.yaml")
            {
                assert!(
                    listed.contains(&name),
                    "{}: {name} is not listed",
                    rel(&path)
                );
            }
        }
    }
    assert!(
        seen >= 5,
        "expected the kustomizations of config/, found {seen}"
    );
}

fn kubectl() -> Option<&'static str> {
    Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "kubectl")
}

fn kustomize(dir: &Path) -> Result<Vec<Value>> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(dir)
        .output()
        .context("running kubectl kustomize")?;
    if !out.status.success() {
        bail!(
            "kubectl kustomize {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8(out.stdout)?;
    let mut docs = Vec::new();
    for de in serde_yaml::Deserializer::from_str(&text) {
        let v: Value = serde::Deserialize::deserialize(de)?;
        if !v.is_null() {
            docs.push(v);
        }
    }
    Ok(docs)
}

#[test]
fn kustomize_builds_every_directory() {
    if kubectl().is_none() {
        eprintln!("SKIPPED kustomize_builds_every_directory: kubectl not on PATH");
        return;
    }
    for dir in [
        "config/default",
        "config/cert-manager",
        "config/samples",
        "config/proxy",
        "config/policy",
    ] {
        let docs = kustomize(&root().join(dir)).unwrap();
        assert!(!docs.is_empty(), "{dir} builds to nothing");
    }
    let docs = kustomize(&root().join("config/cert-manager")).unwrap();
    let api = docs.iter().find(|d| d["kind"] == "APIService").unwrap();
    let inject = str_of(api, "/metadata/annotations/cert-manager.io~1inject-ca-from");
    let (ns, name) = inject.split_once('/').unwrap();
    let cert = docs
        .iter()
        .find(|d| {
            d["kind"] == "Certificate"
                && d["metadata"]["name"] == name
                && d["metadata"]["namespace"] == ns
        })
        .unwrap_or_else(|| panic!("inject-ca-from names no Certificate: {inject}"));
    let deploy = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(cert["spec"]["secretName"], tls_secret_name(deploy));
    let svc = docs.iter().find(|d| d["kind"] == "Service").unwrap();
    let dns = format!(
        "{}.{}.svc",
        str_of(svc, "/metadata/name"),
        str_of(svc, "/metadata/namespace")
    );
    assert!(
        string_list(&cert["spec"]["dnsNames"]).contains(&dns),
        "{dns} missing from the Certificate"
    );
}

fn tls_secret_name(deploy: &Value) -> Value {
    let volumes = deploy["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap();
    volumes
        .iter()
        .find(|v| v["name"] == "tls")
        .expect("a tls volume")["secret"]["secretName"]
        .clone()
}

// ---------------------------------------------------------------------------------------------
// Certificates

fn openssl_ok() -> bool {
    Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn certs_sh(out: &Path) -> Result<String> {
    let o = Command::new("bash")
        .arg(root().join("scripts/certs.sh"))
        .arg("--out")
        .arg(out)
        .output()?;
    if !o.status.success() {
        bail!("certs.sh failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    Ok(String::from_utf8_lossy(&o.stdout).to_string())
}

#[test]
fn certs_script_is_idempotent_and_fills_the_ca_bundle() {
    if !openssl_ok() {
        eprintln!(
            "SKIPPED certs_script_is_idempotent_and_fills_the_ca_bundle: openssl not on PATH"
        );
        return;
    }
    let tmp = std::env::temp_dir().join(format!("crfix-certs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let out = tmp.join("certs");
    certs_sh(&out).unwrap();
    let cert1 = std::fs::read(out.join("tls.crt")).unwrap();
    let ca1 = std::fs::read(out.join("ca.crt")).unwrap();
    let verify = Command::new("openssl")
        .arg("verify")
        .arg("-CAfile")
        .arg(out.join("ca.crt"))
        .arg(out.join("tls.crt"))
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "the serving certificate does not chain to the CA"
    );
    let text = Command::new("openssl")
        .args(["x509", "-noout", "-text", "-in"])
        .arg(out.join("tls.crt"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("DNS:crfix-llm-proxy.crfix-system.svc"),
        "{text}"
    );
    assert!(text.contains("TLS Web Server Authentication"), "{text}");

    // A second run keeps what is still valid.
    let log = certs_sh(&out).unwrap();
    assert!(log.contains("keeping"), "{log}");
    assert_eq!(std::fs::read(out.join("tls.crt")).unwrap(), cert1);
    // A broken key is replaced, under the same CA.
    std::fs::write(out.join("tls.key"), "not a key").unwrap();
    certs_sh(&out).unwrap();
    assert_ne!(std::fs::read(out.join("tls.crt")).unwrap(), cert1);
    assert_eq!(std::fs::read(out.join("ca.crt")).unwrap(), ca1);

    // The overlay: caBundle = the CA, and the Deployment mounts the generated TLS Secret.
    let patch = yaml_doc(&out.join("apiservice-cabundle.yaml")).unwrap();
    let bundle = str_of(&patch, "/spec/caBundle");
    let pem = Command::new("openssl")
        .args(["base64", "-d", "-A"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bundle.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(pem.stdout, ca1, "caBundle is not the CA certificate");
    if kubectl().is_some() {
        let docs = kustomize(&out).unwrap();
        let api = docs.iter().find(|d| d["kind"] == "APIService").unwrap();
        assert_eq!(api["spec"]["caBundle"], bundle);
        let deploy = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
        let secret = docs.iter().find(|d| d["kind"] == "Secret").unwrap();
        assert_eq!(secret["type"], "kubernetes.io/tls");
        assert_eq!(tls_secret_name(deploy), secret["metadata"]["name"]);
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

// ---------------------------------------------------------------------------------------------
// The proxy: names, ports, flags, hardening

fn proxy_container(deploy: &Value) -> &Value {
    let containers = deploy["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap();
    assert_eq!(containers.len(), 1);
    &containers[0]
}

fn args(container: &Value) -> BTreeMap<String, String> {
    string_list(&container["args"])
        .into_iter()
        .map(|a| match a.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (a, String::new()),
        })
        .collect()
}

fn labels_match(selector: &Value, labels: &Value) {
    let sel = selector.as_object().expect("a selector map");
    assert!(!sel.is_empty(), "empty selector");
    for (k, v) in sel {
        assert_eq!(
            &labels[k], v,
            "selector {k}={v} does not match the pod labels {labels}"
        );
    }
}

#[test]
fn proxy_service_deployment_and_apiservice_agree() {
    let deploy = object("Deployment", "crfix-llm-proxy");
    let svc = object("Service", "crfix-llm-proxy");
    let api = object("APIService", "v1alpha1.crfix.dev");
    let pod_labels = &deploy["spec"]["template"]["metadata"]["labels"];
    labels_match(&deploy["spec"]["selector"]["matchLabels"], pod_labels);
    labels_match(&svc["spec"]["selector"], pod_labels);
    labels_match(
        &object("PodDisruptionBudget", "crfix-llm-proxy")["spec"]["selector"]["matchLabels"],
        pod_labels,
    );
    let netpol = object("NetworkPolicy", "crfix-llm-proxy");
    labels_match(&netpol["spec"]["podSelector"]["matchLabels"], pod_labels);
    assert_eq!(
        deploy["metadata"]["namespace"],
        svc["metadata"]["namespace"]
    );

    let container = proxy_container(&deploy);
    let ports = container["ports"].as_array().unwrap();
    let svc_ports = svc["spec"]["ports"].as_array().unwrap();
    assert_eq!(svc_ports.len(), 1);
    let target = &svc_ports[0]["targetPort"];
    let port = ports
        .iter()
        .find(|p| &p["name"] == target || &p["containerPort"] == target)
        .unwrap_or_else(|| panic!("Service targetPort {target} is no container port"));
    let container_port = port["containerPort"].as_u64().unwrap();
    let listen = args(container).get("--listen").cloned().expect("--listen");
    assert!(
        listen.ends_with(&format!(":{container_port}")),
        "--listen {listen} vs port {container_port}"
    );
    let np_port = &netpol["spec"]["ingress"][0]["ports"][0]["port"];
    assert!(np_port == &json!(container_port) || np_port == &port["name"]);

    assert_eq!(api["spec"]["service"]["name"], svc["metadata"]["name"]);
    assert_eq!(
        api["spec"]["service"]["namespace"],
        svc["metadata"]["namespace"]
    );
    assert_eq!(api["spec"]["service"]["port"], svc_ports[0]["port"]);
    assert_ne!(
        api["spec"]["insecureSkipTLSVerify"], true,
        "TLS verification must stay on"
    );
    assert_eq!(
        str_of(&api, "/metadata/name"),
        format!("{}.{}", correction_api::VERSION, correction_api::GROUP)
    );

    // certs.sh names the TLS Secret `<service>-tls` and signs for `<service>.<namespace>.svc`.
    let certs = read(&root().join("scripts/certs.sh")).unwrap();
    assert!(certs.contains(&format!(
        "NAMESPACE={}",
        str_of(&svc, "/metadata/namespace")
    )));
    assert!(certs.contains(&format!("SERVICE={}", str_of(&svc, "/metadata/name"))));
    assert_eq!(
        tls_secret_name(&deploy),
        json!(format!("{}-tls", str_of(&svc, "/metadata/name")))
    );
}

/// The long flags crfix-llm-proxy accepts, read from its clap definition.
fn proxy_flags() -> BTreeSet<String> {
    let src = read(&root().join("policy-server/llm-proxy/src/config.rs")).unwrap();
    let mut flags = BTreeSet::new();
    let mut pending_long = false;
    for line in src.lines() {
        let line = line.trim();
        if line.starts_with("#[arg(") && line.contains("long") {
            pending_long = true;
        } else if pending_long && line.starts_with("pub ") {
            if let Some((name, _)) = line.trim_start_matches("pub ").split_once(':') {
                flags.insert(format!("--{}", name.trim().replace('_', "-")));
            }
            pending_long = false;
        }
    }
    flags
}

#[test]
fn proxy_deployment_uses_only_real_flags_and_mounts_what_they_name() {
    let flags = proxy_flags();
    assert!(
        flags.contains("--tls-cert-file") && flags.contains("--listen"),
        "{flags:?}"
    );
    let deploy = object("Deployment", "crfix-llm-proxy");
    let container = proxy_container(&deploy);
    let args = args(container);
    for flag in args.keys() {
        assert!(
            flags.contains(flag),
            "the proxy has no flag {flag} (it has {flags:?})"
        );
    }
    for required in [
        "--tls-cert-file",
        "--tls-private-key-file",
        "--authentication-from-cluster",
        "--api-key-file",
    ] {
        assert!(args.contains_key(required), "{required} missing");
    }
    assert!(
        !args.contains_key("--insecure-skip-client-auth"),
        "client auth must stay on in-cluster"
    );
    let mounts = container["volumeMounts"].as_array().unwrap();
    for flag in [
        "--tls-cert-file",
        "--tls-private-key-file",
        "--api-key-file",
    ] {
        let path = &args[flag];
        assert!(
            mounts
                .iter()
                .any(|m| path.starts_with(&format!("{}/", str_of(m, "/mountPath")))),
            "{flag}={path} is not under a mounted volume"
        );
    }
    // No API key on the command line or as a literal env value.
    for env in container["env"].as_array().into_iter().flatten() {
        assert!(env.get("value").is_none() || env["name"] != "OPENAI_API_KEY");
    }
    // The proxy's deadline times the policy's attempts must fit in the policy's budget.
    let deadline = args["--request-deadline"]
        .trim_end_matches('s')
        .parse::<u64>()
        .unwrap();
    let cap = object("ClusterAdmissionPolicy", "crfix");
    let attempts = cap["spec"]["settings"]["llm"]["maxAttempts"]
        .as_u64()
        .unwrap();
    let eval = cap["spec"]["timeoutEvalSeconds"].as_u64().unwrap();
    // A choice among several fixes is asked twice (the options in both orders).
    let calls = attempts.max(2);
    assert!(
        deadline * calls < eval,
        "{calls} x {deadline}s does not fit in {eval}s"
    );
}

#[test]
fn proxy_pod_is_hardened() {
    let deploy = object("Deployment", "crfix-llm-proxy");
    let pod = &deploy["spec"]["template"]["spec"];
    let c = proxy_container(&deploy);
    let sc = &c["securityContext"];
    assert!(pod["securityContext"]["runAsNonRoot"] == true || sc["runAsNonRoot"] == true);
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    for kind in ["limits", "requests"] {
        for res in ["cpu", "memory"] {
            assert!(
                c["resources"][kind][res].is_string(),
                "resources.{kind}.{res} missing"
            );
        }
    }
    for probe in ["livenessProbe", "readinessProbe"] {
        let p = &c[probe]["httpGet"];
        assert_eq!(p["scheme"], "HTTPS", "{probe}");
        assert!(p["path"].is_string(), "{probe}");
        assert!(
            c["ports"]
                .as_array()
                .unwrap()
                .iter()
                .any(|port| port["name"] == p["port"] || port["containerPort"] == p["port"]),
            "{probe} port is no container port"
        );
    }
    assert_eq!(deploy["metadata"]["namespace"], "crfix-system");
}

// ---------------------------------------------------------------------------------------------
// The Correction GVK, and the policy's settings

fn correction_car() -> Value {
    json!({"apiVersion": correction_api::API_VERSION, "kind": correction_api::KIND})
}

fn crd_car() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"})
}

fn metadata() -> Value {
    yaml_doc(&root().join("metadata.yml")).unwrap()
}

#[test]
fn correction_group_version_kind_agrees_everywhere() {
    let expected = json!([crd_car(), correction_car()]);
    let meta = metadata();
    assert_eq!(meta["contextAwareResources"], expected, "metadata.yml");
    let cap = object("ClusterAdmissionPolicy", "crfix");
    assert_eq!(
        cap["spec"]["contextAwareResources"], expected,
        "ClusterAdmissionPolicy"
    );
    let policies = yaml_doc(&root().join("policy-server/policies.yml")).unwrap();
    assert_eq!(
        policies["crfix"]["contextAwareResources"], expected,
        "policies.yml"
    );

    let api = object("APIService", "v1alpha1.crfix.dev");
    assert_eq!(api["spec"]["group"], correction_api::GROUP);
    assert_eq!(api["spec"]["version"], correction_api::VERSION);
    assert_eq!(
        format!("{}/{}", correction_api::GROUP, correction_api::VERSION),
        correction_api::API_VERSION
    );

    let defaults = crfix_policy::Settings::default();
    assert_eq!(
        defaults.llm.correction_api_version,
        correction_api::API_VERSION
    );
    assert_eq!(
        cap["spec"]["settings"]["llm"]["correctionApiVersion"],
        correction_api::API_VERSION
    );

    let rbac = object("ClusterRole", "crfix-policy-server");
    assert!(
        rbac["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| string_list(&r["apiGroups"]) == [correction_api::GROUP]
                && string_list(&r["resources"]) == [correction_api::RESOURCE]),
        "the policy server's ClusterRole does not name {}/{}",
        correction_api::GROUP,
        correction_api::RESOURCE
    );
}

fn check_settings(what: &str, settings: &Value) -> crfix_policy::Settings {
    let bytes = serde_json::to_vec(settings).unwrap();
    let parsed = crfix_policy::parse_settings(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    parsed.validate().unwrap_or_else(|e| panic!("{what}: {e}"));
    parsed
}

#[test]
fn settings_in_manifests_are_valid_policy_settings() {
    let cap = object("ClusterAdmissionPolicy", "crfix");
    let settings = &cap["spec"]["settings"];
    let parsed = check_settings("ClusterAdmissionPolicy", settings);
    assert_eq!(parsed.mode, crfix_policy::Mode::Fix);
    assert_eq!(
        parsed.schema_source,
        crfix_policy::SchemaSourceKind::Cluster
    );
    assert!(parsed.llm.enabled);
    assert!(parsed
        .protected_paths
        .iter()
        .any(|p| p == "/spec/serviceAccount"));
    assert_eq!(
        parsed.allowed_paths.as_deref(),
        Some(&["/spec".to_string()][..])
    );
    // Every key is one the policy knows (unknown keys are errors, checked above) and the
    // standalone policies.yml uses the same settings.
    let policies = yaml_doc(&root().join("policy-server/policies.yml")).unwrap();
    check_settings("policies.yml", &policies["crfix"]["settings"]);
    assert_eq!(&policies["crfix"]["settings"], settings);
    assert_eq!(policies["crfix"]["allowedToMutate"], true);
    assert_eq!(
        policies["crfix"]["timeoutEvalSeconds"],
        cap["spec"]["timeoutEvalSeconds"]
    );

    // And a misspelt key would be caught.
    let mut bad = settings.clone();
    bad["llm"]["maxAttempt"] = json!(3);
    assert!(crfix_policy::parse_settings(&serde_json::to_vec(&bad).unwrap()).is_err());
}

#[test]
fn cluster_admission_policy_cannot_lock_the_cluster() {
    let cap = object("ClusterAdmissionPolicy", "crfix");
    let spec = &cap["spec"];
    assert_eq!(spec["failurePolicy"], "Ignore");
    assert_eq!(spec["mutating"], true);
    // Audit requests are answered without a change and without the LLM (gitops_audit.rs).
    assert_eq!(spec["backgroundAudit"], true);
    let timeout = spec["timeoutSeconds"].as_u64().unwrap();
    let eval = spec["timeoutEvalSeconds"].as_u64().unwrap();
    assert!(
        timeout <= 30 && eval < timeout && eval > 2,
        "timeouts {eval}/{timeout}"
    );
    let meta = metadata();
    assert_eq!(
        spec["rules"], meta["rules"],
        "rules differ from metadata.yml"
    );
    for rule in spec["rules"].as_array().unwrap() {
        let ops = string_list(&rule["operations"]);
        assert!(
            ops.iter().all(|o| o == "CREATE" || o == "UPDATE"),
            "{ops:?}"
        );
        for field in ["apiGroups", "apiVersions", "resources"] {
            assert!(
                !string_list(&rule[field]).iter().any(|s| s.contains('*')),
                "wildcard in {field}"
            );
        }
        assert_eq!(string_list(&rule["resources"]), ["clusterextensions"]);
    }
    let ns = &spec["namespaceSelector"]["matchExpressions"][0];
    assert_eq!(ns["key"], "kubernetes.io/metadata.name");
    assert_eq!(ns["operator"], "NotIn");
    let excluded = string_list(&ns["values"]);
    for must in ["kube-system", "kubewarden", "crfix-system"] {
        assert!(excluded.iter().any(|e| e == must), "{must} is not excluded");
    }
    let proxy_ns = object("Deployment", "crfix-llm-proxy")["metadata"]["namespace"].clone();
    assert!(excluded.iter().any(|e| json!(e) == proxy_ns));
    let obj = &spec["objectSelector"]["matchExpressions"][0];
    assert_eq!(obj["key"], "crfix.dev/skip");
    assert_eq!(obj["operator"], "NotIn");
    assert_eq!(string_list(&obj["values"]), ["true"]);

    let server = object("PolicyServer", "crfix");
    assert_eq!(spec["policyServer"], server["metadata"]["name"]);
    // The module is the published policy of metadata.yml.
    let ann = &meta["annotations"];
    let module = format!(
        "registry://{}:v{}",
        str_of(ann, "/io.kubewarden.policy.ociUrl"),
        str_of(ann, "/io.kubewarden.policy.version")
    );
    assert_eq!(spec["module"], module);
}

// ---------------------------------------------------------------------------------------------
// RBAC

fn rules_of(kind: &str, name: &str) -> Vec<Value> {
    object(kind, name)["rules"].as_array().unwrap().clone()
}

#[test]
fn rbac_is_least_privilege() {
    let objects = config_objects();
    // No rule anywhere grants wildcards, secrets, or more than get.
    for (path, o) in &objects {
        if o["kind"] != "ClusterRole" && o["kind"] != "Role" {
            continue;
        }
        for rule in o["rules"].as_array().unwrap() {
            for field in ["apiGroups", "resources", "verbs", "resourceNames"] {
                assert!(
                    !string_list(&rule[field]).iter().any(|s| s.contains('*')),
                    "{}: wildcard",
                    rel(path)
                );
            }
            assert_eq!(
                string_list(&rule["verbs"]),
                ["get"],
                "{}: verbs beyond get",
                rel(path)
            );
            assert!(
                !string_list(&rule["resources"])
                    .iter()
                    .any(|r| r == "secrets"),
                "{}: secrets",
                rel(path)
            );
        }
    }
    // The policy server: exactly get on the CRDs and on corrections.
    let server = object("PolicyServer", "crfix");
    let sa = str_of(&server, "/spec/serviceAccountName");
    let sa_obj = object_any("ServiceAccount", sa);
    let bindings: Vec<&Value> = objects
        .iter()
        .map(|(_, o)| o)
        .filter(|o| o["kind"] == "ClusterRoleBinding" || o["kind"] == "RoleBinding")
        .filter(|o| {
            o["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["name"] == sa && s["namespace"] == sa_obj["metadata"]["namespace"])
        })
        .collect();
    assert_eq!(
        bindings.len(),
        1,
        "the policy server's account has {} bindings",
        bindings.len()
    );
    assert_eq!(bindings[0]["roleRef"]["kind"], "ClusterRole");
    let role = str_of(bindings[0], "/roleRef/name");
    let mut granted: Vec<(String, String, String)> = Vec::new();
    for rule in rules_of("ClusterRole", role) {
        for g in string_list(&rule["apiGroups"]) {
            for r in string_list(&rule["resources"]) {
                for v in string_list(&rule["verbs"]) {
                    granted.push((g.clone(), r.clone(), v));
                }
            }
        }
    }
    granted.sort();
    assert_eq!(
        granted,
        [
            (
                "apiextensions.k8s.io".into(),
                "customresourcedefinitions".into(),
                "get".into()
            ),
            (
                correction_api::GROUP.into(),
                correction_api::RESOURCE.into(),
                "get".into()
            ),
        ]
    );
    // The CRD grant is limited to the CRDs of the resources the policy's rules cover.
    let crd_rule = rules_of("ClusterRole", role)
        .into_iter()
        .find(|r| string_list(&r["resources"]) == ["customresourcedefinitions"])
        .unwrap();
    let mut expected = BTreeSet::new();
    for rule in metadata()["rules"].as_array().unwrap() {
        for g in string_list(&rule["apiGroups"]) {
            for r in string_list(&rule["resources"]) {
                expected.insert(format!("{r}.{g}"));
            }
        }
    }
    assert_eq!(
        string_list(&crd_rule["resourceNames"])
            .into_iter()
            .collect::<BTreeSet<_>>(),
        expected
    );

    // The proxy: only the Role Kubernetes ships for the request-header CA ConfigMap.
    let proxy_sa = str_of(
        &object("Deployment", "crfix-llm-proxy"),
        "/spec/template/spec/serviceAccountName",
    )
    .to_string();
    let proxy_bindings: Vec<&Value> = objects
        .iter()
        .map(|(_, o)| o)
        .filter(|o| o["kind"] == "ClusterRoleBinding" || o["kind"] == "RoleBinding")
        .filter(|o| {
            o["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["name"] == proxy_sa.as_str())
        })
        .collect();
    assert_eq!(proxy_bindings.len(), 1);
    let b = proxy_bindings[0];
    assert_eq!(b["kind"], "RoleBinding");
    assert_eq!(b["metadata"]["namespace"], "kube-system");
    assert_eq!(b["roleRef"]["kind"], "Role");
    assert_eq!(
        b["roleRef"]["name"],
        "extension-apiserver-authentication-reader"
    );
}

fn object_any(kind: &str, name: &str) -> Value {
    config_objects()
        .into_iter()
        .map(|(_, o)| o)
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in config/"))
}

// ---------------------------------------------------------------------------------------------
// Secrets

#[test]
fn no_real_secret_is_committed() {
    let key_like = |s: &str| {
        s.contains("PRIVATE KEY")
            || s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .any(|w| w.starts_with("sk-") && w.len() >= 20)
    };
    let r = root();
    let mut files = yaml_files(&r.join("config"));
    files.extend(yaml_files(&r.join("policy-server")));
    for file in &files {
        let text = read(file).unwrap();
        assert!(!key_like(&text), "{} looks like it holds a key", rel(file));
    }
    let mut secrets = 0;
    for (path, o) in config_objects() {
        if o["kind"] != "Secret" {
            continue;
        }
        secrets += 1;
        assert!(
            rel(&path).ends_with(".example.yaml"),
            "{}: a Secret outside a template",
            rel(&path)
        );
        assert!(
            o.get("data").is_none(),
            "{}: templates use stringData placeholders",
            rel(&path)
        );
        for (k, v) in o["stringData"].as_object().unwrap() {
            let v = v.as_str().unwrap();
            assert!(
                v.is_empty() || v.starts_with("REPLACE"),
                "{}: {k} is not a placeholder",
                rel(&path)
            );
        }
    }
    assert_eq!(secrets, 1, "expected the one Secret template");
    let gitignore = read(&r.join(".gitignore")).unwrap();
    assert!(gitignore.lines().any(|l| l.trim() == "/config/generated/"));
    assert!(gitignore
        .lines()
        .any(|l| l.trim() == "*.wasm" || l.trim() == "annotated-policy.wasm"));
}

// ---------------------------------------------------------------------------------------------
// Packaging metadata

#[test]
fn policy_server_example_matches_config() {
    let a = yaml_doc(&root().join("config/policy/policyserver.yaml")).unwrap();
    let b = yaml_doc(&root().join("policy-server/policyserver.yaml")).unwrap();
    assert_eq!(a, b);
    assert_eq!(
        string_list(&a["spec"]["namespacedPoliciesCapabilities"]),
        ["kubernetes/get_resource"]
    );
    assert_eq!(
        string_list(&metadata()["hostCapabilities"]),
        ["kubernetes/get_resource"]
    );
}

#[test]
fn metadata_and_artifacthub_agree() {
    let meta = metadata();
    assert_eq!(meta["mutating"], true);
    assert_eq!(meta["backgroundAudit"], true);
    assert_eq!(meta["executionMode"], "kubewarden-wapc");
    let rules = meta["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        string_list(&rules[0]["apiGroups"]),
        ["olm.operatorframework.io"]
    );
    assert_eq!(string_list(&rules[0]["resources"]), ["clusterextensions"]);
    assert_eq!(string_list(&rules[0]["operations"]), ["CREATE", "UPDATE"]);
    let ann = &meta["annotations"];
    for key in [
        "io.kubewarden.policy.title",
        "io.kubewarden.policy.description",
        "io.kubewarden.policy.author",
        "io.kubewarden.policy.url",
        "io.kubewarden.policy.source",
        "io.kubewarden.policy.license",
        "io.kubewarden.policy.severity",
        "io.kubewarden.policy.category",
        "io.kubewarden.policy.ociUrl",
        "io.kubewarden.policy.version",
        "io.artifacthub.displayName",
        "io.artifacthub.resources",
        "io.artifacthub.keywords",
    ] {
        assert!(
            ann[key].as_str().is_some_and(|s| !s.is_empty()),
            "metadata.yml: {key} missing"
        );
    }
    let version = str_of(ann, "/io.kubewarden.policy.version");
    let cargo = read(&root().join("Cargo.toml")).unwrap();
    assert!(
        cargo.contains(&format!("version = \"{version}\"")),
        "policy version {version} is not the crate's"
    );

    let pkg = yaml_doc(&root().join("artifacthub-pkg.yml")).unwrap();
    assert_eq!(pkg["version"], version);
    assert_eq!(pkg["name"], ann["io.kubewarden.policy.title"]);
    assert_eq!(pkg["displayName"], ann["io.artifacthub.displayName"]);
    assert_eq!(pkg["description"], ann["io.kubewarden.policy.description"]);
    assert_eq!(pkg["license"], ann["io.kubewarden.policy.license"]);
    assert_eq!(pkg["homeURL"], ann["io.kubewarden.policy.url"]);
    assert_eq!(
        pkg["containersImages"][0]["image"],
        format!("{}:v{version}", str_of(ann, "/io.kubewarden.policy.ociUrl"))
    );
    let keywords: Vec<String> = str_of(ann, "/io.artifacthub.keywords")
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    assert_eq!(string_list(&pkg["keywords"]), keywords);
    let pann = &pkg["annotations"];
    assert_eq!(pann["kubewarden/mutation"], "true");
    assert_eq!(
        pann["kubewarden/resources"],
        ann["io.artifacthub.resources"]
    );
    let from_yaml = |key: &str| -> Value {
        serde_yaml::from_str(str_of(pann, &format!("/kubewarden~1{key}"))).unwrap()
    };
    assert_eq!(from_yaml("rules"), meta["rules"]);
    assert_eq!(
        from_yaml("contextAwareResources"),
        meta["contextAwareResources"]
    );
}

// ---------------------------------------------------------------------------------------------
// kwctl cases, run natively with the same host answers as their replay sessions

struct Case {
    name: String,
    dir: PathBuf,
}

fn kwctl_cases() -> Vec<Case> {
    let dir = root().join("e2e-tests/kwctl/cases");
    let mut cases: Vec<Case> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| Case {
            name: e.file_name().to_string_lossy().to_string(),
            dir: e.path(),
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

/// The settings kwctl gets: settings.yaml plus, for inline cases, the CRDs (as run.sh does).
fn case_settings(case: &Case) -> Result<Value> {
    let mut settings = yaml_doc(&case.dir.join("settings.yaml"))?;
    let crds = case.dir.join("inline-crds.txt");
    if crds.is_file() {
        let mut list = Vec::new();
        for line in read(&crds)?.lines().filter(|l| !l.trim().is_empty()) {
            list.push(yaml_doc(&root().join(line.trim()))?);
        }
        settings["crds"] = Value::Array(list);
    }
    Ok(settings)
}

/// One host answer, as kwctl's session file records it.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Success(String),
    Error(String),
}

/// Answers a `get_resource` from host.yaml.
fn host_answer(host: &Value, request: &GetResourceRequest) -> Result<Answer> {
    let spec = host
        .get(&request.kind)
        .ok_or_else(|| anyhow!("host.yaml has no answer for kind {}", request.kind))?;
    if let Some(err) = spec["error"].as_str() {
        return Ok(Answer::Error(err.to_string()));
    }
    if let Some(fixture) = spec["fixture"].as_str() {
        let obj = yaml_doc(&root().join(fixture))?;
        if obj["metadata"]["name"] != request.name.as_str() {
            return Ok(Answer::Error(format!(
                "Cannot find {}/{} named '{}'",
                request.api_version, request.kind, request.name
            )));
        }
        return Ok(Answer::Success(serde_json::to_string(&obj)?));
    }
    if let Some(content) = spec["content"].as_str() {
        if request.kind != correction_api::KIND {
            bail!("content is only for Corrections");
        }
        let correction = correction_api::Correction::new(
            &request.name,
            correction_api::CorrectionStatus {
                content: content.to_string(),
                model: "kwctl-replay".into(),
                cached: false,
                finish_reason: "stop".into(),
                usage: None,
            },
        );
        return Ok(Answer::Success(serde_json::to_string(&correction)?));
    }
    bail!(
        "host.yaml: {} needs fixture, content or error",
        request.kind
    )
}

/// A request as kwctl writes it in a session: a YAML document tagged with the callback type.
fn session_request(request: &GetResourceRequest) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let mut out = String::from("!KubernetesGetResource\n");
    out += &format!(
        "api_version: {}\nkind: {}\nname: {}\n",
        q(&request.api_version),
        q(&request.kind),
        q(&request.name)
    );
    out += &format!(
        "namespace: {}\n",
        request
            .namespace
            .as_deref()
            .map(q)
            .unwrap_or_else(|| "null".into())
    );
    out += &format!("disable_cache: {}\n", request.disable_cache);
    if let Some(masks) = &request.field_masks {
        out += &format!("field_masks: {}\n", serde_json::to_string(masks).unwrap());
    }
    out
}

fn session_yaml(exchanges: &[(GetResourceRequest, Answer)]) -> Result<String> {
    let list: Vec<Value> = exchanges
        .iter()
        .map(|(req, answer)| {
            let response = match answer {
                Answer::Success(payload) => json!({"type": "Success", "payload": payload}),
                Answer::Error(message) => json!({"type": "Error", "message": message}),
            };
            json!({"type": "Exchange", "request": session_request(req), "response": response})
        })
        .collect();
    let body = serde_yaml::to_string(&list)?;
    Ok(format!(
        "# kwctl replay session: the host's answers to this case's host calls, in order.\n\
         # Derived from host.yaml - regenerate with:\n\
         #   CRFIX_BLESS=1 cargo test -p crfix-e2e-tests --test manifests\n{body}"
    ))
}

/// The session's requests, parsed back (the tag line removed).
fn parse_session(path: &Path) -> Result<Vec<(Value, Value)>> {
    let docs = yaml_doc(path)?;
    let mut out = Vec::new();
    for ex in docs
        .as_array()
        .ok_or_else(|| anyhow!("a session is a list"))?
    {
        let req = ex["request"]
            .as_str()
            .ok_or_else(|| anyhow!("request is a string"))?;
        let body = req
            .strip_prefix("!KubernetesGetResource\n")
            .ok_or_else(|| anyhow!("only KubernetesGetResource requests are used"))?;
        let parsed: Value = serde_yaml::from_str(body)?;
        out.push((parsed, ex["response"].clone()));
    }
    Ok(out)
}

fn check_expect(case: &str, request: &Value, response: &Value, expect: &Value) {
    assert_eq!(
        response["accepted"], expect["allowed"],
        "{case}: {response}"
    );
    let mutated = response.get("mutated_object").is_some_and(|m| !m.is_null());
    if let Some(m) = expect["mutated"].as_bool() {
        assert_eq!(mutated, m, "{case}: mutated {response}");
    }
    let object = if mutated {
        &response["mutated_object"]
    } else {
        &request["object"]
    };
    if mutated {
        assert_eq!(
            object["apiVersion"], request["object"]["apiVersion"],
            "{case}"
        );
        assert_eq!(object["kind"], request["object"]["kind"], "{case}");
    }
    for (pointer, value) in expect["equals"].as_object().into_iter().flatten() {
        assert_eq!(
            object.pointer(pointer),
            Some(value),
            "{case}: {pointer} in {object}"
        );
    }
    let warnings = string_list(&response["warnings"]);
    for word in string_list(&expect["warningsContain"]) {
        assert!(
            warnings.iter().any(|w| w.contains(&word)),
            "{case}: no warning mentions {word}: {warnings:?}"
        );
    }
    if mutated {
        assert!(!warnings.is_empty(), "{case}: changed without a warning");
    }
    let message = response["message"].as_str().unwrap_or_default();
    for word in string_list(&expect["messageContains"]) {
        assert!(
            message.contains(&word),
            "{case}: message does not mention {word}: {message}"
        );
    }
}

#[test]
fn kwctl_cases_pass_natively_and_their_sessions_match_the_policy() {
    let bless = std::env::var_os("CRFIX_BLESS").is_some();
    let cases = kwctl_cases();
    assert!(cases.len() >= 5, "too few kwctl cases");
    let mut with_session = 0;
    for case in &cases {
        let review: Value =
            serde_json::from_str(&read(&case.dir.join("request.json")).unwrap()).unwrap();
        let request = review.get("request").cloned().unwrap_or(review);
        let settings = case_settings(case).unwrap();
        check_settings(&case.name, &settings);
        let expect: Value =
            serde_json::from_str(&read(&case.dir.join("expect.json")).unwrap()).unwrap();
        let host_file = case.dir.join("host.yaml");
        let host = if host_file.is_file() {
            yaml_doc(&host_file).unwrap()
        } else {
            json!({})
        };

        let exchanges: RefCell<Vec<(GetResourceRequest, Answer)>> = RefCell::new(Vec::new());
        let fn_host = FnHost(|req: &GetResourceRequest| {
            let known = metadata()["contextAwareResources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| {
                    c["apiVersion"] == req.api_version.as_str() && c["kind"] == req.kind.as_str()
                });
            if !known {
                return Err(format!(
                    "{}/{} is not in contextAwareResources",
                    req.api_version, req.kind
                ));
            }
            let answer = host_answer(&host, req).map_err(|e| e.to_string())?;
            exchanges.borrow_mut().push((req.clone(), answer.clone()));
            match answer {
                Answer::Success(p) => Ok(p.into_bytes()),
                Answer::Error(m) => Err(m),
            }
        });
        let payload =
            serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
        let response = serde_json::to_value(crfix_policy::evaluate(&payload, &fn_host)).unwrap();
        check_expect(&case.name, &request, &response, &expect);

        let exchanges = exchanges.into_inner();
        let session_path = case.dir.join("session.yml");
        if !host_file.is_file() {
            assert!(
                exchanges.is_empty(),
                "{}: host calls without host.yaml",
                case.name
            );
            assert!(
                !session_path.exists(),
                "{}: session.yml without host.yaml",
                case.name
            );
            continue;
        }
        with_session += 1;
        assert!(
            !exchanges.is_empty(),
            "{}: host.yaml but no host call",
            case.name
        );
        let generated = session_yaml(&exchanges).unwrap();
        if bless {
            std::fs::write(&session_path, &generated).unwrap();
            continue;
        }
        // The committed session must be exactly what the policy asks, in order.
        assert!(
            session_path.is_file(),
            "{}: session.yml missing (CRFIX_BLESS=1)",
            case.name
        );
        let committed = parse_session(&session_path).unwrap();
        assert_eq!(
            committed.len(),
            exchanges.len(),
            "{}: session.yml is stale (CRFIX_BLESS=1)",
            case.name
        );
        for ((req, resp), (want_req, answer)) in committed.iter().zip(&exchanges) {
            let want: Value = serde_yaml::from_str(
                session_request(want_req).trim_start_matches("!KubernetesGetResource\n"),
            )
            .unwrap();
            assert_eq!(
                req, &want,
                "{}: session.yml is stale (CRFIX_BLESS=1)",
                case.name
            );
            match answer {
                Answer::Success(p) => {
                    assert_eq!(resp["payload"].as_str(), Some(p.as_str()), "{}", case.name)
                }
                Answer::Error(m) => {
                    assert_eq!(resp["message"].as_str(), Some(m.as_str()), "{}", case.name)
                }
            }
        }
    }
    assert!(
        with_session >= 3,
        "expected cluster-schema and LLM cases with sessions"
    );
}
