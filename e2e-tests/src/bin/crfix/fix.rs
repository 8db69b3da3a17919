//! `crfix fix`: every custom resource of the manifests evaluated by the policy module, as
//! admission would evaluate its CREATE, and each fix written back into the YAML it came from.

use std::collections::HashSet;
use std::io::IsTerminal as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Value};

use crfix_e2e_tests::eval::{CorrectionFlags, ModuleCacheFlags};
use crfix_e2e_tests::{
    admission_request_with_resource, callback_failure, load_document, not_found_error, string_list,
    GetResourceCall, PolicyHost,
};

use crate::crds::{self, CrdIndex};
use crate::edit;
use crate::manifests::{self, Manifest};

/// The annotation admission adds to a repaired object; a fix in the repository is the user's
/// own edit and does not carry it.
const REPAIR_ANNOTATION: &str = "crfix.dev/repair";

#[derive(clap::Args, Debug)]
pub struct FixArgs {
    /// YAML or JSON files and directories (walked for *.yaml, *.yml, *.json); `-` reads
    /// standard input.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// CRD files or directories (CRDs among the manifests are used too).
    #[arg(long = "crd", value_name = "FILE|DIR")]
    pub crds: Vec<PathBuf>,
    /// Also read the CRDs of the current kubeconfig's cluster (read-only, with kubectl).
    #[arg(long)]
    pub crds_from_cluster: bool,
    /// The kubeconfig context for --crds-from-cluster.
    #[arg(long, value_name = "NAME", requires = "crds_from_cluster")]
    pub context: Option<String>,
    /// Edit the files in place (standard input: print the fixed stream).
    #[arg(long, conflicts_with = "check")]
    pub write: bool,
    /// Change nothing, print no diff; exit 1 when anything is invalid or would change.
    #[arg(long)]
    pub check: bool,
    /// Findings as text (one line each, on stderr beside a diff), json or sarif (on stdout).
    #[arg(long, value_enum, default_value = "text")]
    pub output: OutputFormat,
    /// Also write fixes crfix is not certain of (the policy's `uncertainFixes: apply`); by
    /// default they are proposed, and the object counts as invalid.
    #[arg(long)]
    pub apply_uncertain: bool,
    /// When a fix cannot be written keeping the document's layout, write the document as the
    /// fixed object (comments and formatting of that document are lost).
    #[arg(long)]
    pub allow_reformat: bool,
    /// Policy settings (YAML or JSON) to start from; mode, schemaSource and crds are the CLI's.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// The policy module. Default: $CRFIX_POLICY_WASM, crfix_policy.wasm beside this program
    /// or in ../share/crfix, else the workspace's release build.
    #[arg(long, value_name = "PATH")]
    pub policy: Option<PathBuf>,
    #[command(flatten)]
    pub module_cache: ModuleCacheFlags,
    /// The LLM for what rules cannot fix: Correction reads go to a running crfix-llm-proxy
    /// (rules alone when not given).
    #[command(flatten)]
    pub correction: CorrectionFlags,
    /// Print the module cache's use and the policy's log events on stderr.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    Sarif,
}

/// What became of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Valid,
    /// Fixed: written with --write, else shown as a diff.
    Fixed,
    /// Invalid, and no fix is written: none found, not certain, or not writable in place.
    Invalid,
    /// No CRD defines its kind, or the CRD could not be used (a finding says why).
    NotChecked,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// `Kind/name`.
    pub object: String,
    /// `fixed`, `invalid`, `proposal`, `not-written`, `reformatted`, `not-checked` or
    /// `warning`.
    pub kind: &'static str,
    pub message: String,
}

/// The report of one run.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub files: Vec<FileReport>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Serialize)]
pub struct FileReport {
    pub file: String,
    pub objects: Vec<(String, Status)>,
    /// The unified diff of the fixes (empty: no change).
    pub diff: String,
    #[serde(skip)]
    pub path: Option<PathBuf>,
    #[serde(skip)]
    pub fixed_text: Option<String>,
    #[serde(skip)]
    pub original: String,
}

impl Report {
    pub fn count(&self, status: Status) -> usize {
        self.files
            .iter()
            .flat_map(|f| &f.objects)
            .filter(|(_, s)| *s == status)
            .count()
    }

    pub fn changed_files(&self) -> impl Iterator<Item = &FileReport> {
        self.files.iter().filter(|f| f.fixed_text.is_some())
    }
}

/// The evaluator: the policy module loaded once, its settings, and the CRDs.
struct Checker {
    host: PolicyHost,
    base_settings: Value,
    crds: CrdIndex,
    /// Settings already validated, by CRD (group/kind).
    validated: HashSet<String>,
}

pub fn run(args: &FixArgs) -> Result<Report> {
    let files = manifests::collect_paths(&args.paths)?;
    if files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        bail!("standard input (-) can be named once");
    }
    let manifests: Vec<Manifest> = files
        .iter()
        .map(|f| manifests::read(f))
        .collect::<Result<_>>()?;

    let mut crds = CrdIndex::default();
    crds.add_files(&args.crds)?;
    for document in manifests.iter().flat_map(|m| &m.documents) {
        crds.add(&document.value);
    }
    if args.crds_from_cluster {
        crds.add_from_cluster(args.context.as_deref())?;
    }
    if crds.is_empty() {
        bail!("no CRD to check against: give --crd FILE|DIR, put the CRDs among the manifests, or use --crds-from-cluster");
    }

    let wasm = policy_path(args.policy.as_deref());
    if !wasm.exists() {
        bail!(
            "the policy module {} does not exist (build it with `make build-wasm`, or give --policy)",
            wasm.display()
        );
    }
    let mut host = args.module_cache.load(&wasm, args.verbose)?;
    let llm = args.correction.client()?;
    let with_llm = llm.is_some();
    host = host.with_resolver(move |call: &GetResourceCall| match &llm {
        Some(client)
            if call.api_version == correction_api::API_VERSION
                && call.kind == correction_api::KIND =>
        {
            client.get(call)
        }
        _ => Err(callback_failure(&not_found_error(call))),
    });
    let mut checker = Checker {
        host,
        base_settings: base_settings(args, with_llm)?,
        crds,
        validated: HashSet::new(),
    };

    let total: usize = manifests.iter().map(|m| m.documents.len()).sum();
    let mut progress = Progress::new(total);
    let mut report = Report::default();
    for manifest in &manifests {
        let file = checker.check_file(manifest, args, &mut report.findings, &mut progress)?;
        report.files.push(file);
    }
    progress.finish();
    if args.verbose {
        for line in checker.host.logs() {
            eprintln!("log [{}] {}", line.level, line.message);
        }
    }
    Ok(report)
}

/// The user's settings (if any) with what the CLI decides: fix mode against the CRDs given
/// inline; a GitOps-managed object is fixed too (this is the repository the tools apply from).
fn base_settings(args: &FixArgs, with_llm: bool) -> Result<Value> {
    let mut settings = match &args.settings {
        Some(path) => load_document(path)?,
        None => json!({}),
    };
    if settings.is_null() {
        settings = json!({});
    }
    let Some(map) = settings.as_object_mut() else {
        bail!("the settings must be an object");
    };
    map.insert("mode".into(), json!("fix"));
    map.insert("schemaSource".into(), json!("inline"));
    if args.apply_uncertain {
        map.insert("uncertainFixes".into(), json!("apply"));
    }
    let git_ops = map.entry("gitOps").or_insert_with(|| json!({}));
    if let Some(git_ops) = git_ops.as_object_mut() {
        git_ops.insert("onManaged".into(), json!("mutate"));
    }
    if with_llm {
        let llm = map.entry("llm").or_insert_with(|| json!({}));
        if let Some(llm) = llm.as_object_mut() {
            llm.insert("enabled".into(), json!(true));
        }
    } else if let Some(llm) = map.get_mut("llm").and_then(Value::as_object_mut) {
        llm.insert("enabled".into(), json!(false));
    }
    Ok(settings)
}

/// `--policy`, `$CRFIX_POLICY_WASM`, the module installed beside this program, or the
/// workspace's build.
fn policy_path(explicit: Option<&std::path::Path>) -> PathBuf {
    if let Some(path) = explicit {
        return path.to_path_buf();
    }
    if std::env::var_os("CRFIX_POLICY_WASM").is_none() {
        if let Ok(exe) = std::env::current_exe() {
            if let Some(dir) = exe.parent() {
                for candidate in [
                    dir.join("crfix_policy.wasm"),
                    dir.join("../share/crfix/crfix_policy.wasm"),
                ] {
                    if candidate.exists() {
                        return candidate;
                    }
                }
            }
        }
    }
    crfix_e2e_tests::policy_wasm_path()
}

impl Checker {
    fn check_file(
        &mut self,
        manifest: &Manifest,
        args: &FixArgs,
        findings: &mut Vec<Finding>,
        progress: &mut Progress,
    ) -> Result<FileReport> {
        let mut objects = Vec::new();
        let first_finding = findings.len();
        let mut fixed = manifest.text.clone();
        let mut changed = false;
        // Documents are edited last to first so that earlier byte ranges stay valid.
        let mut edits: Vec<(usize, usize, String)> = Vec::new();
        for document in &manifest.documents {
            progress.tick();
            let object = &document.value;
            if crds::is_crd(object) || !object.is_object() || object.get("kind").is_none() {
                continue;
            }
            let name = object_name(object);
            let Some(crd) = self.crds.for_object(object).cloned() else {
                objects.push((name, Status::NotChecked));
                continue;
            };
            let text = manifest.document_text(document);
            let mut at = |pointer: Option<&str>, kind: &'static str, message: String| {
                let line = pointer
                    .and_then(|p| edit::line_of(text, object, p))
                    .unwrap_or(0);
                findings.push(Finding {
                    file: manifest.name.clone(),
                    line: document.first_line + first_content_line(text).max(line) + 1,
                    object: name.clone(),
                    kind,
                    message,
                });
            };
            let response = self.evaluate(object, &crd)?;
            let repaired = response
                .get("mutated_object")
                .filter(|m| m.is_object())
                .map(|m| without_repair_annotation(object, m.clone()));
            match (response["accepted"].as_bool(), repaired) {
                (Some(true), None) => {
                    let mut status = Status::Valid;
                    for warning in string_list(&response["warnings"]) {
                        let warning = warning.replacen("crfix: ", "", 1);
                        if let Some(why) = warning.strip_prefix("not checked: ") {
                            status = Status::NotChecked;
                            at(None, "not-checked", why.to_string());
                        } else {
                            at(first_pointer(&warning).as_deref(), "warning", warning);
                        }
                    }
                    objects.push((name.clone(), status));
                }
                (Some(true), Some(repaired)) => {
                    let first_change = json_patch::diff(object, &repaired)
                        .0
                        .first()
                        .map(|op| op.path().to_string());
                    for warning in string_list(&response["warnings"]) {
                        let pointer = first_pointer(&warning)
                            .filter(|p| edit::line_of(text, object, p).is_some())
                            .or(first_change.clone());
                        at(
                            pointer.as_deref(),
                            "fixed",
                            warning.replacen("crfix: ", "", 1),
                        );
                    }
                    match edit::edit(text, object, &repaired) {
                        Ok(new_text) => {
                            edits.push((document.start, document.end, new_text));
                            objects.push((name.clone(), Status::Fixed));
                        }
                        Err(why) if args.allow_reformat => {
                            // A JSON document stays JSON.
                            let mut yaml = if text.trim_start().starts_with('{') {
                                serde_json::to_string_pretty(&repaired)? + "\n"
                            } else {
                                serde_yaml::to_string(&repaired)?
                            };
                            if text.starts_with("---") {
                                yaml.insert_str(0, "---\n");
                            }
                            at(
                                first_change.as_deref(),
                                "reformatted",
                                format!("the document is rewritten whole: {why}"),
                            );
                            edits.push((document.start, document.end, yaml));
                            objects.push((name.clone(), Status::Fixed));
                        }
                        Err(why) => {
                            at(
                                first_change.as_deref(),
                                "not-written",
                                format!("the fix is not written: {why} (--allow-reformat writes the document whole)"),
                            );
                            objects.push((name.clone(), Status::Invalid));
                        }
                    }
                }
                _ => {
                    for (pointer, line) in errors(&response) {
                        at(pointer.as_deref(), "invalid", line);
                    }
                    if let Some(proposal) = proposal(&response) {
                        at(None, "proposal", proposal);
                    }
                    objects.push((name.clone(), Status::Invalid));
                }
            }
        }
        findings[first_finding..].sort_by_key(|f| f.line);
        edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
        for (start, end, text) in edits {
            fixed.replace_range(start..end, &text);
            changed = true;
        }
        changed &= fixed != manifest.text;
        let diff = if changed {
            // git's a/ and b/ prefixes, for `git apply` and `patch -p1`; an absolute path as is.
            let label = |side: &str| {
                if manifest.name.starts_with('/') {
                    manifest.name.clone()
                } else {
                    format!("{side}/{}", manifest.name)
                }
            };
            similar::TextDiff::from_lines(&manifest.text, &fixed)
                .unified_diff()
                .header(&label("a"), &label("b"))
                .to_string()
        } else {
            String::new()
        };
        Ok(FileReport {
            file: manifest.name.clone(),
            objects,
            diff,
            path: manifest.path.clone(),
            fixed_text: changed.then_some(fixed),
            original: manifest.text.clone(),
        })
    }

    /// The policy's answer to a CREATE of `object`, with its CRD inline.
    fn evaluate(&mut self, object: &Value, crd: &Value) -> Result<Value> {
        let mut settings = self.base_settings.clone();
        settings["crds"] = json!([crd]);
        let crd_name = crd["metadata"]["name"].as_str().unwrap_or("").to_string();
        if !self.validated.contains(&crd_name) {
            let verdict = self.host.validate_settings(&settings)?;
            if verdict["valid"] != true {
                bail!(
                    "the settings (with the CRD {crd_name}) are not valid: {}",
                    verdict["message"].as_str().unwrap_or("(no message)")
                );
            }
            self.validated.insert(crd_name.clone());
        }
        let plural = crd["spec"]["names"]["plural"].as_str();
        let request = admission_request_with_resource("CREATE", object.clone(), None, plural);
        let response = self
            .host
            .validate(&request, &settings)
            .with_context(|| format!("evaluating {}", object_name(object)))?;
        if response["accepted"].as_bool().is_none() {
            bail!("the policy's answer has no boolean \"accepted\": {response}");
        }
        Ok(response)
    }
}

fn object_name(object: &Value) -> String {
    format!(
        "{}/{}",
        object["kind"].as_str().unwrap_or("?"),
        object["metadata"]["name"].as_str().unwrap_or("")
    )
}

/// The first line of a document's text that is neither blank, a comment nor `---`.
fn first_content_line(text: &str) -> usize {
    text.lines()
        .position(|l| {
            let l = l.trim();
            !(l.is_empty() || l.starts_with('#') || l.starts_with("---"))
        })
        .unwrap_or(0)
}

/// The repaired object without the admission-only annotation (and without an annotations
/// map that only it created).
fn without_repair_annotation(original: &Value, mut repaired: Value) -> Value {
    let had_annotations = original.pointer("/metadata/annotations").is_some();
    if let Some(annotations) = repaired
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(REPAIR_ANNOTATION);
        if annotations.is_empty() && !had_annotations {
            if let Some(metadata) = repaired["metadata"].as_object_mut() {
                metadata.remove("annotations");
            }
        }
    }
    repaired
}

/// The first JSON Pointer a warning names (`set /spec/x "a" → "b" (enum)`).
fn first_pointer(warning: &str) -> Option<String> {
    let start = warning.find(" /")? + 1;
    let rest = &warning[start..];
    let end = rest.find([' ', '"']).unwrap_or(rest.len());
    Some(rest[..end].to_string()).filter(|p| !p.contains('…'))
}

/// The errors of a rejection: from the audit annotation (one per field), else the message.
fn errors(response: &Value) -> Vec<(Option<String>, String)> {
    let listed: Option<Vec<String>> = response["audit_annotations"]["crfix-errors"]
        .as_str()
        .and_then(|s| serde_json::from_str(s).ok());
    match listed {
        Some(lines) if !lines.is_empty() => lines
            .into_iter()
            .map(|line| {
                let pointer = line
                    .split_once(": ")
                    .map(|(path, _)| field_path_to_pointer(path));
                (pointer, line)
            })
            .collect(),
        _ => {
            let message = response["message"].as_str().unwrap_or("rejected");
            let message = message
                .split(". crfix changed nothing")
                .next()
                .unwrap_or(message);
            vec![(None, message.replacen("crfix: ", "", 1))]
        }
    }
}

/// The fix a rejection proposes, from `crfix changed nothing because …` on.
fn proposal(response: &Value) -> Option<String> {
    let message = response["message"].as_str()?;
    let at = message.find("crfix changed nothing because")?;
    Some(message[at..].to_string())
}

/// `spec.a[0].b` → `/spec/a/0/b`.
fn field_path_to_pointer(path: &str) -> String {
    let mut pointer = String::new();
    for part in path.split('.') {
        let (name, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            pointer.push('/');
            pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
        }
        for index in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            pointer.push('/');
            pointer.push_str(index);
        }
    }
    pointer
}

/// `crfix: 40/120 documents` on a terminal's stderr, for runs over many documents.
struct Progress {
    total: usize,
    done: usize,
    shown: bool,
    enabled: bool,
}

impl Progress {
    fn new(total: usize) -> Self {
        Progress {
            total,
            done: 0,
            shown: false,
            enabled: total >= 50 && std::io::stderr().is_terminal(),
        }
    }

    fn tick(&mut self) {
        self.done += 1;
        if self.enabled && (self.done.is_multiple_of(10) || self.done == self.total) {
            eprint!("\rcrfix: {}/{} documents", self.done, self.total);
            self.shown = true;
        }
    }

    fn finish(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_become_pointers() {
        assert_eq!(field_path_to_pointer("spec.a[0].b"), "/spec/a/0/b");
        assert_eq!(field_path_to_pointer("spec"), "/spec");
    }

    #[test]
    fn the_repair_annotation_is_not_written_to_the_repository() {
        let original = json!({"metadata": {"name": "x"}});
        let repaired =
            json!({"metadata": {"name": "x", "annotations": {REPAIR_ANNOTATION: "rules"}}});
        assert_eq!(without_repair_annotation(&original, repaired), original);
        let original = json!({"metadata": {"annotations": {"a": "b"}}});
        let repaired = json!({"metadata": {"annotations": {"a": "b", REPAIR_ANNOTATION: "rules"}}});
        assert_eq!(without_repair_annotation(&original, repaired), original);
    }

    #[test]
    fn pointers_in_warnings() {
        assert_eq!(
            first_pointer("crfix: set /spec/x \"a\" → \"b\" (enum)").as_deref(),
            Some("/spec/x")
        );
        assert_eq!(first_pointer("crfix: nothing"), None);
    }
}
