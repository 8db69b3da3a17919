//! `kwctl run`'s single-request evaluation through the built policy `.wasm`, in the host that
//! behaves like Kubewarden's policy-server: the body of `crfix-eval` and of `crfix run`.
//!
//! ```text
//! crfix-eval [POLICY] --request-path req.json [--settings-path s.yaml | --settings-json '{..}']
//!            [--allow-context-aware] [--replay-host-capabilities-interactions session.yml]
//! ```
//!
//! Exit code (as kwctl's): 0 when the request was evaluated, accepted or rejected; 1 on an
//! error (bad input, invalid settings, a guest failure, a host call that differs from the
//! replayed session).

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::aggregator::AggregatorClient;
use crate::{
    admission_request, callback_failure, load_document, parse_document, Cluster, GetResourceCall,
    ModuleCacheUse, PolicyHost,
};

/// `println!` that ends the program quietly (exit 0, as `kwctl` and other CLIs do) when the
/// reader went away (`crfix-eval … | head`), instead of panicking on the broken pipe.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

/// How policy-server (and kwctl) prefix a failed host capability; stripped when recording.
const CALLBACK_FAILURE: &str = "Callback evaluation failure: ";

/// `kwctl run`'s flags, for `crfix-eval` and `crfix run`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// Policy module: a path or file:// URI, as kwctl run's positional argument.
    /// Default: --wasm, $CRFIX_POLICY_WASM or target/wasm32-wasip1/release/crfix_policy.wasm.
    #[arg(value_name = "POLICY")]
    policy: Option<String>,
    /// Policy module (older spelling of POLICY).
    #[arg(long, value_name = "PATH", conflicts_with = "policy")]
    wasm: Option<PathBuf>,
    /// An AdmissionReview or AdmissionRequest (JSON or YAML), or a bare object (a CREATE
    /// request is built around it).
    #[arg(
        long = "request-path",
        short = 'r',
        visible_alias = "request",
        value_name = "PATH"
    )]
    request: PathBuf,
    /// Policy settings (JSON or YAML). Default: `{}`.
    #[arg(
        long = "settings-path",
        short = 's',
        visible_alias = "settings",
        value_name = "PATH"
    )]
    settings: Option<PathBuf>,
    /// Policy settings as a JSON string.
    #[arg(long, value_name = "VALUE", conflicts_with = "settings")]
    settings_json: Option<String>,
    /// Grant the policy the Kubernetes resources of metadata.yml's `contextAwareResources`
    /// (as kwctl). Without it every kubernetes/get_resource is refused, as policy-server does.
    #[arg(long)]
    allow_context_aware: bool,
    /// Answer the policy's host calls from a kwctl session file, in order.
    #[arg(
        long = "replay-host-capabilities-interactions",
        value_name = "FILE",
        conflicts_with_all = ["record", "correction_url", "crd_dir"]
    )]
    replay: Option<PathBuf>,
    /// Write the policy's host calls and the answers it got to a kwctl session file.
    #[arg(long = "record-host-capabilities-interactions", value_name = "FILE")]
    record: Option<PathBuf>,
    #[command(flatten)]
    pub correction: CorrectionFlags,
    /// CRD file(s) to append to the settings' `crds` (for `schemaSource: inline`).
    #[arg(long = "crd", value_name = "PATH")]
    crds: Vec<PathBuf>,
    /// Override the settings' `mode` (fix, suggest, validate).
    #[arg(long)]
    mode: Option<String>,
    /// Directory of CRDs the fake cluster serves to kubernetes/get_resource
    /// (`schemaSource: cluster`). Default: e2e-tests/fixtures/crds.
    #[arg(long, value_name = "DIR")]
    crd_dir: Option<PathBuf>,
    /// For a bare object: the operation of the request built around it.
    #[arg(long, default_value = "CREATE")]
    operation: String,
    /// For a bare object: the old object (makes an UPDATE request).
    #[arg(long, value_name = "PATH")]
    old_object: Option<PathBuf>,
    /// Print the policy's raw JSON response instead of the summary.
    #[arg(long)]
    json: bool,
    /// Also print the policy's log events, host calls and the module cache's use (on stderr).
    #[arg(long, short = 'v')]
    verbose: bool,
    #[command(flatten)]
    pub module_cache: ModuleCacheFlags,
}

/// Where Correction reads go: a running crfix-llm-proxy, reached as the API server's
/// aggregator reaches it (the proxy's CA, the aggregator's client certificate).
#[derive(clap::Args, Debug, Clone)]
pub struct CorrectionFlags {
    /// Forward Correction reads to a running crfix-llm-proxy, e.g. https://127.0.0.1:8443, as
    /// the kube-apiserver's aggregator does (needs the CA and the client certificate below).
    #[arg(long, value_name = "URL")]
    pub correction_url: Option<String>,
    /// The CA of the proxy's serving certificate (PEM).
    #[arg(long, value_name = "PATH", requires = "correction_url")]
    pub correction_ca_file: Option<PathBuf>,
    /// The aggregator's client certificate (PEM; may hold the key too).
    #[arg(long, value_name = "PATH", requires = "correction_url")]
    pub correction_client_cert: Option<PathBuf>,
    /// The client certificate's key (PEM), when not in --correction-client-cert.
    #[arg(long, value_name = "PATH", requires = "correction_client_cert")]
    pub correction_client_key: Option<PathBuf>,
    /// Seconds one Correction read may take.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub correction_timeout: u64,
}

/// The compiled-module cache: one compilation of the `.wasm` serves every later run.
#[derive(clap::Args, Debug, Clone)]
pub struct ModuleCacheFlags {
    /// Compile the module even when a compiled copy is cached (as kwctl's flag).
    #[arg(long)]
    pub disable_wasmtime_cache: bool,
    /// Where compiled modules are cached. Default: $CRFIX_EVAL_CACHE_DIR, else
    /// $XDG_CACHE_HOME/crfix, else ~/.cache/crfix.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Builds the request: an AdmissionReview is unwrapped; an AdmissionRequest is recognised by
/// its `operation` and object fields; anything else with apiVersion and kind is a bare object.
fn load_request(args: &EvalArgs) -> Result<Value> {
    let mut doc = load_document(&args.request)?;
    if doc["kind"] == "AdmissionReview" && doc["request"].is_object() {
        doc = doc["request"].take();
    }
    let is_request = doc.get("operation").is_some()
        && (doc.get("object").is_some() || doc.get("oldObject").is_some());
    if is_request {
        if args.old_object.is_some() {
            bail!("--old-object is for bare objects; this file is already an AdmissionRequest");
        }
        return Ok(doc);
    }
    if doc.get("apiVersion").is_none() || doc.get("kind").is_none() {
        bail!(
            "{} is neither an AdmissionReview, an AdmissionRequest (operation + object) nor a Kubernetes object (apiVersion + kind)",
            args.request.display()
        );
    }
    let old = args.old_object.as_deref().map(load_document).transpose()?;
    let operation = if old.is_some() && args.operation == "CREATE" {
        "UPDATE".to_string()
    } else {
        args.operation.to_uppercase()
    };
    Ok(admission_request(&operation, doc, old))
}

fn load_settings(args: &EvalArgs) -> Result<Value> {
    let mut settings = match (&args.settings, &args.settings_json) {
        (Some(path), _) => load_document(path)?,
        (None, Some(text)) => parse_document(text).context("--settings-json")?,
        (None, None) => json!({}),
    };
    if settings.is_null() {
        settings = json!({});
    }
    let Some(map) = settings.as_object_mut() else {
        bail!("the settings must be an object");
    };
    if !args.crds.is_empty() {
        let crds = map.entry("crds").or_insert_with(|| json!([]));
        let Some(list) = crds.as_array_mut() else {
            bail!("settings.crds must be a list");
        };
        for path in &args.crds {
            list.push(load_document(path)?);
        }
    }
    if let Some(mode) = &args.mode {
        map.insert("mode".into(), json!(mode));
    }
    Ok(settings)
}

/// The policy module: POLICY (a path or file:// URI), --wasm, or the default build.
fn policy_path(args: &EvalArgs) -> Result<PathBuf> {
    if let Some(uri) = &args.policy {
        if let Some(path) = uri.strip_prefix("file://") {
            return Ok(PathBuf::from(path));
        }
        if uri.contains("://") {
            bail!("{uri}: only local modules run here (a path or file:// URI)");
        }
        return Ok(PathBuf::from(uri));
    }
    Ok(args.wasm.clone().unwrap_or_else(crate::policy_wasm_path))
}

impl ModuleCacheFlags {
    /// The cache's directory, or none when the cache is off.
    pub fn dir(&self) -> Option<PathBuf> {
        if self.disable_wasmtime_cache {
            return None;
        }
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        self.cache_dir
            .clone()
            .or_else(|| env("CRFIX_EVAL_CACHE_DIR").map(PathBuf::from))
            .or_else(|| env("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("crfix")))
            .or_else(|| env("HOME").map(|d| PathBuf::from(d).join(".cache/crfix")))
    }

    /// The policy module at `wasm`, compiled or taken from the cache; `verbose` says which
    /// on stderr.
    pub fn load(&self, wasm: &Path, verbose: bool) -> Result<PolicyHost> {
        let Some(dir) = self.dir() else {
            if verbose {
                eprintln!("module cache: disabled");
            }
            return PolicyHost::load(wasm);
        };
        let (host, used) = PolicyHost::load_cached(wasm, &dir)?;
        if verbose {
            match used {
                ModuleCacheUse::Hit(file) => {
                    eprintln!("module cache: hit {}", file.display())
                }
                ModuleCacheUse::Stored(file) => {
                    eprintln!("module cache: compiled, stored {}", file.display())
                }
                ModuleCacheUse::Skipped(why) => {
                    eprintln!("module cache: not used ({why})")
                }
            }
        }
        Ok(host)
    }
}

// ---------------------------------------------------------------------------------------------
// kwctl session files (--record-/--replay-host-capabilities-interactions)

/// A host call as kwctl writes it in a session: a YAML document tagged with the request type
/// (`!KubernetesGetResource`); `field_masks` is a set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum SessionRequest {
    KubernetesGetResource {
        api_version: String,
        kind: String,
        name: String,
        namespace: Option<String>,
        disable_cache: bool,
        field_masks: Option<BTreeSet<String>>,
    },
}

impl From<&GetResourceCall> for SessionRequest {
    fn from(call: &GetResourceCall) -> Self {
        SessionRequest::KubernetesGetResource {
            api_version: call.api_version.clone(),
            kind: call.kind.clone(),
            name: call.name.clone(),
            namespace: call.namespace.clone(),
            disable_cache: call.disable_cache,
            field_masks: call
                .field_masks
                .as_ref()
                .map(|m| m.iter().cloned().collect()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type")]
enum SessionResponse {
    Success { payload: String },
    Error { message: String },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type")]
struct Exchange {
    request: String,
    response: SessionResponse,
}

#[derive(Default)]
struct Replay {
    exchanges: VecDeque<Exchange>,
    errors: Vec<String>,
}

impl Replay {
    fn answer(&mut self, call: &GetResourceCall) -> std::result::Result<Vec<u8>, String> {
        let got = SessionRequest::from(call);
        let Some(exchange) = self.exchanges.pop_front() else {
            let e =
                format!("the list of recorded responses is empty (the policy asked for {got:?})");
            self.errors.push(e.clone());
            return Err(callback_failure(&e));
        };
        let expected: std::result::Result<SessionRequest, _> =
            serde_yaml::from_str(&exchange.request);
        match expected {
            Ok(expected) if expected == got => match exchange.response {
                SessionResponse::Success { payload } => Ok(payload.into_bytes()),
                SessionResponse::Error { message } => Err(callback_failure(&message)),
            },
            other => {
                let expected = match other {
                    Ok(e) => format!("{e:?}"),
                    Err(_) => exchange.request.trim().to_string(),
                };
                let e = format!(
                    "Replay error: unexpected request. Was expecting {expected}, got {got:?} instead"
                );
                self.errors.push(e.clone());
                Err(callback_failure(&e))
            }
        }
    }
}

fn read_session(path: &Path) -> Result<VecDeque<Exchange>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_yaml::from_str(&text)
        .with_context(|| format!("{} is not a kwctl session file", path.display()))
}

fn write_session(path: &Path, exchanges: &[Exchange]) -> Result<()> {
    let text = serde_yaml::to_string(exchanges)?;
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Wraps a resolver so that every answer is kept for `--record-host-capabilities-interactions`.
fn recording(
    host: PolicyHost,
    resolver: crate::Resolver,
    log: Arc<Mutex<Vec<Exchange>>>,
) -> PolicyHost {
    host.with_resolver(move |call| {
        let answer = resolver(call);
        let response = match &answer {
            Ok(bytes) => SessionResponse::Success {
                payload: String::from_utf8_lossy(bytes).into_owned(),
            },
            Err(message) => SessionResponse::Error {
                message: message
                    .strip_prefix(CALLBACK_FAILURE)
                    .unwrap_or(message)
                    .to_string(),
            },
        };
        if let (Ok(request), Ok(mut log)) = (
            serde_yaml::to_string(&SessionRequest::from(call)),
            log.lock(),
        ) {
            log.push(Exchange { request, response });
        }
        answer
    })
}

// ---------------------------------------------------------------------------------------------

/// The resolver for `get_resource`: a replayed session, or the fake cluster with Corrections
/// forwarded to crfix-llm-proxy.
fn resolver(args: &EvalArgs, replay: Option<Arc<Mutex<Replay>>>) -> Result<crate::Resolver> {
    if let Some(replay) = replay {
        return Ok(Arc::new(move |call: &GetResourceCall| {
            replay
                .lock()
                .map_err(|_| callback_failure("replay state poisoned"))?
                .answer(call)
        }));
    }
    let cluster = match &args.crd_dir {
        Some(dir) => Cluster::new().with_crds_from_dir(dir)?,
        None => Cluster::with_crd_fixtures()?,
    };
    let cluster = cluster.resolver();
    let Some(client) = args.correction.client()? else {
        return Ok(cluster);
    };
    Ok(Arc::new(move |call: &GetResourceCall| {
        if call.api_version == correction_api::API_VERSION && call.kind == correction_api::KIND {
            client.get(call)
        } else {
            cluster(call)
        }
    }))
}

impl CorrectionFlags {
    /// The client of the proxy named by `--correction-url`, if any.
    pub fn client(&self) -> Result<Option<AggregatorClient>> {
        let Some(url) = &self.correction_url else {
            return Ok(None);
        };
        let (Some(ca), Some(cert)) = (&self.correction_ca_file, &self.correction_client_cert)
        else {
            bail!("--correction-url needs --correction-ca-file and --correction-client-cert (crfix-llm-proxy authenticates the aggregator by its client certificate)");
        };
        let read = |p: &Path| {
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))
        };
        let mut identity = read(cert)?;
        if let Some(key) = &self.correction_client_key {
            identity.push('\n');
            identity.push_str(&read(key)?);
        }
        let client = AggregatorClient::new(
            url,
            &read(ca)?,
            &identity,
            Duration::from_secs(self.correction_timeout),
        )?;
        Ok(Some(client))
    }
}

/// Evaluates the request of `args`, printing the summary (or the JSON response); errors are
/// the caller's exit code 1.
pub fn run(args: &EvalArgs) -> Result<()> {
    let request = load_request(args)?;
    let settings = load_settings(args)?;
    let wasm = policy_path(args)?;
    let mut host = args.module_cache.load(&wasm, args.verbose)?;

    let replay = args
        .replay
        .as_deref()
        .map(read_session)
        .transpose()?
        .map(|exchanges| {
            Arc::new(Mutex::new(Replay {
                exchanges,
                errors: Vec::new(),
            }))
        });
    let resolver = resolver(args, replay.clone())?;
    let recorded: Arc<Mutex<Vec<Exchange>>> = Arc::default();
    host = if args.record.is_some() {
        recording(host, resolver, recorded.clone())
    } else {
        host.with_resolver(move |call| resolver(call))
    };
    if !args.allow_context_aware {
        // kwctl's default: no Kubernetes resource is granted.
        host = host.with_allowed_resources(Vec::<(String, String)>::new());
        if args.replay.is_some()
            || args.correction.correction_url.is_some()
            || args.crd_dir.is_some()
        {
            eprintln!(
                "warning: without --allow-context-aware the policy's kubernetes/get_resource calls are refused (as kwctl does)"
            );
        }
    }

    // policy-server validates the settings before it serves any request.
    let verdict = host.validate_settings(&settings)?;
    if verdict["valid"] != true {
        bail!(
            "Provided settings are not valid: {}",
            verdict["message"].as_str().unwrap_or("(no message)")
        );
    }

    let response = host.validate(&request, &settings)?;
    if args.verbose {
        for line in host.logs() {
            eprintln!("log [{}] {}", line.level, line.message);
        }
        for call in host.host_calls() {
            eprintln!(
                "host call kubernetes/get_resource {}",
                serde_json::to_string(&call)?
            );
        }
    }
    if response["accepted"].as_bool().is_none() {
        bail!("the response has no boolean \"accepted\": {response}");
    }
    if args.json {
        out!("{}", serde_json::to_string_pretty(&response)?);
    } else {
        print_summary(&request, &settings, &response)?;
    }

    if let Some(path) = &args.record {
        let exchanges = recorded
            .lock()
            .map_err(|_| anyhow!("recording poisoned"))?
            .clone();
        write_session(path, &exchanges)?;
    }
    if let Some(replay) = replay {
        let replay = replay.lock().map_err(|_| anyhow!("replay poisoned"))?;
        if !replay.exchanges.is_empty() {
            eprintln!(
                "warning: {} recorded exchange(s) were not replayed",
                replay.exchanges.len()
            );
        }
        if let Some(first) = replay.errors.first() {
            bail!(
                "the policy's host calls differ from {}: {first}",
                args.replay.as_deref().unwrap_or(Path::new("")).display()
            );
        }
    }
    Ok(())
}

fn print_summary(request: &Value, settings: &Value, response: &Value) -> Result<()> {
    let object = if request["object"].is_object() {
        &request["object"]
    } else {
        &request["oldObject"]
    };
    let mode = settings["mode"].as_str().unwrap_or("fix");
    out!(
        "{} {} {:?} (mode {mode})",
        request["operation"].as_str().unwrap_or("?"),
        object["kind"].as_str().unwrap_or("object"),
        object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    let mutated = response
        .get("mutated_object")
        .filter(|m| m.is_object())
        .cloned();
    match (response["accepted"].as_bool(), &mutated) {
        (Some(true), Some(_)) => out!("result: ACCEPTED, with repairs"),
        (Some(true), None) => out!("result: ACCEPTED"),
        _ => match response["code"].as_u64() {
            Some(code) => out!("result: REJECTED (code {code})"),
            None => out!("result: REJECTED"),
        },
    }
    if let Some(message) = response["message"].as_str() {
        out!("message:");
        for line in message.lines() {
            out!("  {line}");
        }
    }
    if let Some(warnings) = response["warnings"].as_array() {
        if !warnings.is_empty() {
            out!("warnings:");
            for w in warnings {
                out!("  {}", w.as_str().unwrap_or_default());
            }
        }
    }
    if let Some(mutated) = mutated {
        let patch = json_patch::diff(object, &mutated);
        out!("JSON Patch (RFC 6902):");
        for op in patch.0.iter() {
            out!("  {}", serde_json::to_string(op)?);
        }
        out!("repaired object:");
        let yaml = serde_yaml::to_string(&mutated).context("rendering the object as YAML")?;
        for line in yaml.lines() {
            out!("  {line}");
        }
    }
    Ok(())
}
