//! Release and packaging checks that need no cluster and no network:
//!
//! * the Kubewarden version is pinned once (`KUBEWARDEN_VERSION`, mk/cluster.mk) and everything
//!   that must follow it does: the `admission-controller` chart, both PolicyServer images
//!   (policy-server's major.minor must match the controller's) and kwctl in the workflows;
//! * artifacthub-pkg.yml is what `kwctl scaffold artifacthub` writes from metadata.yml (the
//!   rules of kwctl's generator, field by field);
//! * the GitHub workflows parse, call only Makefile targets that exist, pin third-party actions
//!   and never let CI rewrite files;
//! * the proxy image is multi-arch, distroless and non-root.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("e2e-tests has a parent")
        .to_path_buf()
}

fn read(rel: &str) -> String {
    let path = root().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn yaml(rel: &str) -> Value {
    serde_yaml::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `make -s <target>` at the workspace root, without the caller's make state and without the
/// environment overriding the pins under test.
fn make(args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new("make");
    cmd.current_dir(root())
        .arg("--no-print-directory")
        .args(args);
    for var in [
        "MAKEFLAGS",
        "MFLAGS",
        "MAKELEVEL",
        "MAKEOVERRIDES",
        "KUBEWARDEN_VERSION",
        "KW_CHART_VERSION",
        "KW_POLICY_SERVER_IMAGE",
        "CI",
    ] {
        cmd.env_remove(var);
    }
    cmd.output().expect("running make")
}

/// The Kubewarden pins as make evaluates them.
fn kubewarden_pins() -> BTreeMap<String, String> {
    let out = make(&["-s", "kubewarden-versions"]);
    assert!(
        out.status.success(),
        "make kubewarden-versions: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// One Kubewarden version

#[test]
fn kubewarden_version_is_pinned_once_and_followed_everywhere() {
    let pins = kubewarden_pins();
    let version = pins["KUBEWARDEN_VERSION"].clone();
    let parts: Vec<u64> = version
        .split('.')
        .map(|p| {
            p.parse()
                .unwrap_or_else(|_| panic!("{version} is not x.y.z"))
        })
        .collect();
    assert_eq!(parts.len(), 3, "{version}");
    // The supported minor: the admission-controller chart exists from Kubewarden 1.37 on.
    assert_eq!((parts[0], parts[1]), (1, 37), "supported: Kubewarden 1.37");
    assert_eq!(pins["KW_CHART_VERSION"], format!("6.0.{}", parts[2]));

    let image = format!("ghcr.io/kubewarden/adm-controller/policy-server:v{version}");
    assert_eq!(pins["KW_POLICY_SERVER_IMAGE"], image);
    for file in [
        "config/policy/policyserver.yaml",
        "policy-server/policyserver.yaml",
    ] {
        let ps = yaml(file);
        assert_eq!(ps["kind"], "PolicyServer", "{file}");
        assert_eq!(ps["spec"]["image"], image.as_str(), "{file}");
    }

    // make deploy installs the one chart at that version and patches the PolicyServer image
    // from the same pin.
    let cluster_mk = read("mk/cluster.mk");
    assert!(cluster_mk.contains("kubewarden/admission-controller --version $(KW_CHART_VERSION)"));
    assert!(cluster_mk.contains("value: $(KW_POLICY_SERVER_IMAGE)"));
    for deprecated in [
        "kubewarden/kubewarden-crds",
        "kubewarden/kubewarden-controller ",
        "kubewarden/kubewarden-defaults",
    ] {
        for file in ["Makefile", "mk/cluster.mk"] {
            assert!(
                !read(file).contains(deprecated),
                "{file} still installs the deprecated chart {deprecated}"
            );
        }
    }

    // kwctl in CI is the same major.minor.patch (kwctl follows the stack version too).
    let mut kwctl_pins = 0;
    for (name, wf) in workflows() {
        for step in steps(&wf) {
            if step["uses"]
                .as_str()
                .is_some_and(|u| u.contains("/kwctl-installer@"))
            {
                assert_eq!(
                    step["with"]["kwctl-version"],
                    format!("v{version}").as_str(),
                    "{name}: kwctl-installer"
                );
                kwctl_pins += 1;
            }
        }
    }
    assert!(kwctl_pins >= 1, "no workflow installs kwctl");

    // The docs name the supported release and chart the pins install.
    for file in ["README.md", "docs/cluster.md"] {
        let text = read(file);
        let chart = &pins["KW_CHART_VERSION"];
        let names_chart = text.contains(&format!("`admission-controller` chart {chart}"))
            || text.contains(&format!("`admission-controller` {chart}"));
        assert!(
            text.contains(&format!("v{version}")) && names_chart,
            "{file} does not name Kubewarden v{version} and its chart {chart}"
        );
    }

    // No other file pins another policy-server image.
    for dir in ["config", "policy-server", "mk", ".github"] {
        for path in files_under(&root().join(dir)) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (i, line) in text.lines().enumerate() {
                if line.contains("policy-server:v") {
                    assert!(
                        line.contains(&format!("policy-server:v{version}"))
                            || line.contains("$(KUBEWARDEN_VERSION)"),
                        "{}:{}: {line}",
                        path.display(),
                        i + 1
                    );
                }
            }
        }
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if !path.ends_with("generated") && !path.ends_with("target") {
                out.extend(files_under(&path));
            }
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn the_aggregated_api_server_gets_the_critical_priority_class() {
    let deploy = yaml("config/proxy/deployment.yaml");
    assert_eq!(
        deploy["spec"]["template"]["spec"]["priorityClassName"],
        "system-cluster-critical"
    );
}

// ---------------------------------------------------------------------------------------------
// artifacthub-pkg.yml = `kwctl scaffold artifacthub` of metadata.yml

/// What kwctl's generator writes into `install` for an OCI reference.
fn kwctl_install_text(oci_ref: &str) -> String {
    format!(
        "The policy can be obtained using [kwctl](https://docs.kubewarden.io/howtos/install-kwctl):\n\
         ```console\nkwctl pull {oci_ref}\n```\n\
         Then, generate the policy manifest and tune it to your liking. For example:\n\
         ```console\nkwctl scaffold manifest -t ClusterAdmissionPolicy registry://{oci_ref}\n```\n"
    )
}

/// `Name <email>[, Name <email>...]` (RFC 5322 name-addr list, the form kwctl parses).
fn maintainers(author: &str) -> Value {
    let list: Vec<Value> = author
        .split(',')
        .map(|one| {
            let one = one.trim();
            let (name, rest) = one
                .split_once('<')
                .unwrap_or_else(|| panic!("author {one:?} is not `Name <email>`"));
            let email = rest.trim_end_matches('>').trim();
            assert!(
                email.contains('@') && !email.contains(' '),
                "bad email {email:?}"
            );
            json!({"name": name.trim(), "email": email})
        })
        .collect();
    Value::Array(list)
}

/// The package kwctl generates from metadata.yml (all fields but `createdAt`, which is the time
/// of generation), following policy-evaluator's `ArtifactHubPkg::from_metadata`.
fn expected_artifacthub_pkg(meta: &Value, questions: Option<&str>) -> Value {
    let ann = meta["annotations"]
        .as_object()
        .expect("metadata annotations");
    let get = |key: &str| ann.get(key).and_then(Value::as_str).map(str::to_string);
    let required = |key: &str| get(key).unwrap_or_else(|| panic!("metadata.yml: {key} missing"));

    let version = required("io.kubewarden.policy.version");
    let semver: Vec<&str> = version
        .split(['-', '+'])
        .next()
        .unwrap()
        .split('.')
        .collect();
    assert!(
        semver.len() == 3 && semver.iter().all(|p| p.parse::<u64>().is_ok()),
        "io.kubewarden.policy.version {version:?} is not semver"
    );
    let oci_ref = format!("{}:v{version}", required("io.kubewarden.policy.ociUrl"));

    let mut pkg = serde_json::Map::new();
    pkg.insert("version".into(), json!(version));
    pkg.insert("name".into(), json!(required("io.kubewarden.policy.title")));
    pkg.insert(
        "displayName".into(),
        json!(required("io.artifacthub.displayName")),
    );
    pkg.insert(
        "description".into(),
        json!(required("io.kubewarden.policy.description")),
    );
    if let Some(license) = get("io.kubewarden.policy.license") {
        pkg.insert("license".into(), json!(license));
    }
    if let Some(url) = get("io.kubewarden.policy.url") {
        pkg.insert("homeURL".into(), json!(normalized_url(&url)));
    }
    pkg.insert(
        "containersImages".into(),
        json!([{"name": "policy", "image": oci_ref}]),
    );
    if let Some(keywords) = get("io.artifacthub.keywords") {
        let words: Vec<String> = keywords
            .split(',')
            .map(|w| w.trim_matches(' ').to_string())
            .collect();
        assert!(
            words.iter().all(|w| !w.is_empty()),
            "empty keyword in {keywords:?}"
        );
        pkg.insert("keywords".into(), json!(words));
    }
    if let Some(source) = get("io.kubewarden.policy.source") {
        let source = normalized_url(&source);
        let links = if source.starts_with("https://github.com/") {
            let release = get("com.github.release.tag").unwrap_or(format!("v{version}"));
            json!([
                {"name": "policy", "url": format!("{source}/releases/download/{release}/policy.wasm")},
                {"name": "source", "url": source},
            ])
        } else {
            json!([{"name": "source", "url": source}])
        };
        pkg.insert("links".into(), links);
    }
    pkg.insert("install".into(), json!(kwctl_install_text(&oci_ref)));
    if let Some(author) = get("io.kubewarden.policy.author") {
        pkg.insert("maintainers".into(), maintainers(&author));
    }
    pkg.insert("provider".into(), json!({"name": "kubewarden"}));
    pkg.insert(
        "recommendations".into(),
        json!([{"url": "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller"}]),
    );

    // Annotations; the YAML-valued ones are compared as data (see the test).
    let mut a = serde_json::Map::new();
    a.insert(
        "kubewarden/mutation".into(),
        json!(meta["mutating"].as_bool().unwrap_or(false).to_string()),
    );
    let mut car: Vec<(String, String)> = meta["contextAwareResources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["apiVersion"].as_str().unwrap().to_string(),
                r["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    car.dedup();
    if !car.is_empty() {
        let list: Vec<Value> = car
            .iter()
            .map(|(a, k)| json!({"apiVersion": a, "kind": k}))
            .collect();
        a.insert("kubewarden/contextAwareResources".into(), json!(list));
    }
    a.insert("kubewarden/rules".into(), meta["rules"].clone());
    if let Some(q) = questions {
        a.insert("kubewarden/questions-ui".into(), json!(q));
    }
    if let Some(hidden) = get("io.kubewarden.hidden-ui") {
        let b: bool = hidden
            .parse()
            .expect("io.kubewarden.hidden-ui is true or false");
        a.insert("kubewarden/hidden-ui".into(), json!(b.to_string()));
    }
    if let Some(resources) = get("io.artifacthub.resources") {
        a.insert("kubewarden/resources".into(), json!(resources));
    }
    pkg.insert("annotations".into(), Value::Object(a));
    Value::Object(pkg)
}

/// `url::Url`'s serialisation of a plain https URL: an empty path becomes `/`.
fn normalized_url(url: &str) -> String {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("{url} is not an http(s) URL"));
    if rest.contains('/') {
        url.to_string()
    } else {
        format!("{url}/")
    }
}

/// The questions file kwctl would pick up next to metadata.yml.
fn questions_file() -> Option<String> {
    [
        "questions-ui.yml",
        "questions-ui.yaml",
        "questions.yml",
        "questions.yaml",
    ]
    .iter()
    .map(|f| root().join(f))
    .find(|p| p.is_file())
    .map(|p| std::fs::read_to_string(p).unwrap())
}

#[test]
fn artifacthub_pkg_is_what_kwctl_scaffold_writes_from_metadata() {
    let meta = yaml("metadata.yml");
    let text = read("artifacthub-pkg.yml");
    let mut pkg: Value = serde_yaml::from_str(&text).unwrap();
    let expected = expected_artifacthub_pkg(&meta, questions_file().as_deref());

    // createdAt: RFC 3339, as kwctl writes the generation time.
    let created = pkg["createdAt"].as_str().unwrap_or_else(|| {
        // serde_yaml may read an unquoted timestamp as a string already; anything else is wrong
        panic!("createdAt missing or not a timestamp: {}", pkg["createdAt"])
    });
    let rfc3339 =
        regex::Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
            .unwrap();
    assert!(rfc3339.is_match(created), "createdAt {created:?}");
    pkg.as_object_mut().unwrap().remove("createdAt");

    // The YAML-in-a-string annotations: compare their data.
    let ann = pkg["annotations"].as_object_mut().expect("annotations");
    for key in ["kubewarden/rules", "kubewarden/contextAwareResources"] {
        if let Some(Value::String(s)) = ann.get(key) {
            let parsed: Value = serde_yaml::from_str(s).unwrap_or_else(|e| panic!("{key}: {e}"));
            ann.insert(key.into(), parsed);
        }
    }
    for (key, want) in expected.as_object().unwrap() {
        assert_eq!(&pkg[key], want, "artifacthub-pkg.yml: {key}");
    }
    let extra: Vec<&String> = pkg
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !expected.as_object().unwrap().contains_key(*k))
        .collect();
    assert!(extra.is_empty(), "fields kwctl does not write: {extra:?}");

    // Field order as kwctl serialises its struct (a regenerated file gives no diff).
    let mapping: serde_yaml::Mapping = serde_yaml::from_str(&text).unwrap();
    let order: Vec<&str> = mapping.keys().filter_map(|k| k.as_str()).collect();
    assert_eq!(
        order,
        [
            "version",
            "name",
            "displayName",
            "createdAt",
            "description",
            "license",
            "homeURL",
            "containersImages",
            "keywords",
            "links",
            "install",
            "maintainers",
            "provider",
            "recommendations",
            "annotations"
        ]
    );
}

#[test]
fn the_artifacthub_check_catches_drift() {
    // The comparison above must fail when metadata.yml and the package disagree.
    let mut meta = yaml("metadata.yml");
    let pkg = expected_artifacthub_pkg(&meta, None);
    meta["annotations"]["io.kubewarden.policy.version"] = json!("9.9.9");
    meta["annotations"]["io.artifacthub.keywords"] = json!("a, b");
    meta["contextAwareResources"]
        .as_array_mut()
        .unwrap()
        .reverse();
    let drifted = expected_artifacthub_pkg(&meta, None);
    assert_ne!(pkg["version"], drifted["version"]);
    assert_ne!(pkg["links"], drifted["links"]);
    assert_ne!(pkg["install"], drifted["install"]);
    assert_eq!(drifted["keywords"], json!(["a", "b"]));
    // Sorted like kwctl's set, whatever the order in metadata.yml.
    assert_eq!(
        pkg["annotations"]["kubewarden/contextAwareResources"],
        drifted["annotations"]["kubewarden/contextAwareResources"]
    );
    assert_eq!(maintainers("A <a@x.io>, B C <b@y.io>")[1]["name"], "B C");
    assert_eq!(
        normalized_url("https://example.com"),
        "https://example.com/"
    );
}

#[test]
fn artifacthub_repo_names_owners() {
    let repo = yaml("artifacthub-repo.yml");
    let owners = repo["owners"].as_array().expect("owners");
    assert!(!owners.is_empty());
    for o in owners {
        assert!(o["email"].as_str().is_some_and(|e| e.contains('@')));
    }
    if let Some(id) = repo.get("repositoryID") {
        let id = id.as_str().unwrap_or_default();
        assert!(
            regex::Regex::new(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
                .unwrap()
                .is_match(id)
                && id != "00000000-0000-0000-0000-000000000000",
            "repositoryID {id:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// GitHub workflows

fn workflows() -> Vec<(String, Value)> {
    let dir = root().join(".github/workflows");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&p).unwrap();
            let v: Value = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn steps(workflow: &Value) -> Vec<Value> {
    workflow["jobs"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(_, job)| job["steps"].as_array().cloned().unwrap_or_default())
        .collect()
}

fn runs(workflow: &Value) -> Vec<String> {
    steps(workflow)
        .iter()
        .filter_map(|s| s["run"].as_str().map(str::to_string))
        .collect()
}

/// The make targets a shell snippet calls (`make a b`, `make -s a`; variables skipped).
fn make_targets(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in script.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if *w == "make" {
                for t in &words[i + 1..] {
                    if t.starts_with('-') || t.contains('=') {
                        continue;
                    }
                    if matches!(*t, "&&" | "||" | ";" | "|") {
                        break;
                    }
                    out.push(t.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn workflows_parse_and_call_only_existing_make_targets() {
    let wfs = workflows();
    let names: Vec<&str> = wfs.iter().map(|(n, _)| n.as_str()).collect();
    for needed in ["ci.yml", "release.yml", "proxy-image.yml"] {
        assert!(names.contains(&needed), "missing workflow {needed}");
    }
    let mut targets = BTreeSet::new();
    for (name, wf) in &wfs {
        assert!(wf.get("on").is_some(), "{name}: no trigger");
        let jobs = wf["jobs"].as_object().unwrap_or_else(|| panic!("{name}"));
        assert!(!jobs.is_empty(), "{name}: no jobs");
        for (id, job) in jobs {
            assert!(
                job.get("steps").is_some() || job.get("uses").is_some(),
                "{name}: job {id} has neither steps nor uses"
            );
            if let Some(uses) = job["uses"].as_str() {
                if let Some(local) = uses.strip_prefix("./") {
                    assert!(root().join(local).is_file(), "{name}: {uses}");
                }
            }
        }
        for script in runs(wf) {
            targets.extend(make_targets(&script));
        }
    }
    // The Kubewarden convention and our own entry points.
    for t in ["annotated-policy.wasm", "e2e-kwctl", "setup"] {
        assert!(targets.contains(t), "no workflow runs make {t}");
    }
    for t in &targets {
        let out = make(&["-n", t]);
        assert!(
            out.status.success(),
            "workflows call `make {t}`, which make cannot run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // CI runs .ci/run, which is make test.
    let ci = &wfs.iter().find(|(n, _)| n == "ci.yml").unwrap().1;
    assert!(runs(ci).iter().any(|r| r.trim() == "bash .ci/run"));
    assert!(read(".ci/run").lines().any(|l| l.trim() == "make test"));
}

#[test]
fn third_party_actions_are_pinned_to_a_commit() {
    let sha = regex::Regex::new(r"^[^@]+@[0-9a-f]{40}$").unwrap();
    let mut seen = 0;
    for (name, wf) in workflows() {
        for step in steps(&wf) {
            let Some(uses) = step["uses"].as_str() else {
                continue;
            };
            seen += 1;
            assert!(
                uses.starts_with("./") || sha.is_match(uses),
                "{name}: {uses} is not pinned to a commit"
            );
        }
    }
    assert!(seen > 5);
}

#[test]
fn ci_never_rewrites_files() {
    for (name, wf) in workflows() {
        for script in runs(&wf) {
            for line in script.lines() {
                if line.contains("cargo fmt") {
                    assert!(line.contains("--check"), "{name}: {line}");
                }
                assert!(!line.contains("CRFIX_BLESS"), "{name}: {line}");
            }
        }
    }
    // What CI's make calls run for formatting: only checks.
    for (args, ci) in [(&["-n", "test"][..], false), (&["-n", "fmt"][..], true)] {
        let mut cmd = Command::new("make");
        cmd.current_dir(root())
            .arg("--no-print-directory")
            .args(args);
        for var in ["MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CI"] {
            cmd.env_remove(var);
        }
        if ci {
            cmd.env("CI", "true");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let fmt_lines: Vec<&str> = text.lines().filter(|l| l.contains("cargo fmt")).collect();
        assert!(!fmt_lines.is_empty(), "make {args:?} runs no rustfmt");
        for l in fmt_lines {
            assert!(l.contains("--check"), "make {args:?} rewrites files: {l}");
        }
    }
}

#[test]
fn release_workflow_builds_annotates_pushes_signs_and_attaches() {
    let (_, wf) = workflows()
        .into_iter()
        .find(|(n, _)| n == "release.yml")
        .unwrap();
    let job = &wf["jobs"]["release"];
    for (perm, level) in [
        ("contents", "write"),
        ("packages", "write"),
        ("id-token", "write"),
    ] {
        assert_eq!(job["permissions"][perm], level, "release: {perm}");
    }
    assert_eq!(wf["permissions"]["contents"], "read");
    let all = runs(&wf).join("\n");
    for needle in [
        "make setup annotated-policy.wasm",
        "kwctl push",
        "cosign sign --yes",
        "cosign sign-blob",
        "syft scan",
        "policy.wasm annotated-policy.wasm",
        "io.kubewarden.policy.version",
    ] {
        assert!(all.contains(needle), "release.yml: no {needle:?}");
    }
    let tags = wf["on"]["push"]["tags"].as_array().unwrap();
    assert!(tags.iter().any(|t| t == "v*"));
    let uses: Vec<String> = steps(&wf)
        .iter()
        .filter_map(|s| s["uses"].as_str().map(str::to_string))
        .chain(
            wf["jobs"]
                .as_object()
                .unwrap()
                .values()
                .flat_map(|j| j["steps"].as_array().cloned().unwrap_or_default())
                .filter_map(|s| s["uses"].as_str().map(str::to_string)),
        )
        .collect();
    assert!(uses.iter().any(|u| u.contains("/push-artifacthub@")));
    assert!(root().join("artifacthub-repo.yml").is_file());
}

#[test]
fn proxy_image_is_multi_arch_distroless_and_non_root() {
    let (_, wf) = workflows()
        .into_iter()
        .find(|(n, _)| n == "proxy-image.yml")
        .unwrap();
    let matrix = wf["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap();
    let arches: BTreeSet<&str> = matrix.iter().filter_map(|m| m["arch"].as_str()).collect();
    assert_eq!(arches, BTreeSet::from(["amd64", "arm64"]));
    let build = steps(&wf)
        .into_iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("docker/build-push-action@"))
        })
        .unwrap();
    assert_eq!(build["with"]["file"], "policy-server/llm-proxy/Dockerfile");
    assert!(runs(&wf).join("\n").contains("cosign sign --yes"));

    let dockerfile = read("policy-server/llm-proxy/Dockerfile");
    let stages: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    let last = stages.last().unwrap();
    assert!(
        last.contains("gcr.io/distroless/static") && last.contains(":nonroot"),
        "{last}"
    );
    let user = dockerfile
        .lines()
        .rfind(|l| l.starts_with("USER "))
        .expect("USER");
    let uid: u32 = user[5..].split(':').next().unwrap().trim().parse().unwrap();
    assert_ne!(uid, 0, "{user}");
    assert!(dockerfile.contains("ARG TARGETARCH"));
    for triple in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"] {
        assert!(dockerfile.contains(triple), "no {triple}");
    }
    let ignore = read("policy-server/llm-proxy/Dockerfile.dockerignore");
    assert!(ignore.lines().any(|l| l.trim() == "target/"));
    assert!(ignore.lines().any(|l| l.trim() == ".git/"));
    // The Deployment runs the image as the same non-root user.
    let deploy = yaml("config/proxy/deployment.yaml");
    assert_eq!(
        deploy["spec"]["template"]["spec"]["securityContext"]["runAsUser"],
        json!(uid)
    );
}
