//! The crfix end-to-end host: the built policy `.wasm` run the way Kubewarden's policy-server
//! runs a `kubewarden-wapc` policy.
//!
//! * one `wasmtime::Engine` (epoch interruption on, like policy-server with evaluation
//!   timeouts) and one compiled `wasmtime::Module` per `.wasm` file, compiled once per process;
//! * a pre-linked module ([`wapc_engine::EnginePre`]) **rehydrated into a fresh instance for
//!   every call** (`EnginePre::rehydrate` + `WapcHost::new`), so nothing survives in wasm
//!   memory from one evaluation to the next;
//! * the `validate` payload `{"request": <AdmissionRequest>, "settings": <settings>}`;
//! * the host callback answering `("kubewarden", "tracing", "log")` (captured here) and
//!   `("kubewarden", "kubernetes", "get_resource")` through a [`Resolver`], after the same
//!   allow-list check (`contextAwareResources` of `metadata.yml`) and with the same error
//!   strings policy-server returns.
//!
//! Everything is synchronous. See [`fixtures`] for CRD fixtures and AdmissionRequest builders
//! and [`cluster`] for the fake cluster that answers `get_resource`.

pub mod aggregator;
pub mod cluster;
pub mod eval;
pub mod fixtures;
pub mod large_crd;
pub mod wapc_engine;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use wapc_engine::{Deadlines, EnginePre};

pub use cluster::Cluster;
pub use fixtures::{
    admission_request, admission_request_with_resource, crd_fixture, fixtures_dir, inline_settings,
    load_document, merge_settings, object_in_user_message, parse_document, plural_for,
    pointer_tokens, proptest_cases, readme_cluster_extension, string_list, try_crd_fixture,
    valid_cluster_extension,
};

/// Env var naming the policy `.wasm` to test (the Makefile sets it).
pub const POLICY_WASM_ENV: &str = "CRFIX_POLICY_WASM";
/// Env var naming the no-op baseline `.wasm`.
pub const NOOP_WASM_ENV: &str = "CRFIX_NOOP_WASM";
/// Set (to anything) to write `/tmp/perf-<pid>.map` so that `perf` names the guest's functions
/// (profile an unstripped `.wasm`: `CARGO_PROFILE_RELEASE_STRIP=false`).
pub const PERF_MAP_ENV: &str = "CRFIX_WASM_PERF_MAP";

/// How often the engine's epoch advances; deadlines are counted in these ticks.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Per-evaluation deadline. policy-server's default is 2 s; the e2e host allows more by
/// default because CI machines are small and shared. Set with [`PolicyHost::with_timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The workspace root (the directory of the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn release_wasm(file: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_relative() {
                workspace_root().join(p)
            } else {
                p
            }
        })
        .unwrap_or_else(|| workspace_root().join("target"));
    let preferred = target.join("wasm32-wasip1/release").join(file);
    let default = workspace_root()
        .join("target/wasm32-wasip1/release")
        .join(file);
    if preferred.exists() || !default.exists() {
        preferred
    } else {
        default
    }
}

/// The crfix policy module: `$CRFIX_POLICY_WASM`, else
/// `<target>/wasm32-wasip1/release/crfix_policy.wasm`. Existence is checked by
/// [`PolicyHost::load`], whose error says to run `make build`.
pub fn policy_wasm_path() -> PathBuf {
    std::env::var_os(POLICY_WASM_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| release_wasm("crfix_policy.wasm"))
}

/// The no-op baseline policy (`e2e-tests/noop-policy`): `$CRFIX_NOOP_WASM`, else
/// `<target>/wasm32-wasip1/release/crfix_noop_policy.wasm`.
pub fn noop_wasm_path() -> PathBuf {
    std::env::var_os(NOOP_WASM_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| release_wasm("crfix_noop_policy.wasm"))
}

/// A `kubernetes/get_resource` call as the policy sent it (kubewarden-policy-sdk's
/// `GetResourceRequest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetResourceCall {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default)]
    pub disable_cache: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_masks: Option<Vec<String>>,
}

/// Answers `get_resource`: the object as JSON bytes, or the error string the guest receives.
pub type Resolver = Arc<dyn Fn(&GetResourceCall) -> Result<Vec<u8>, String> + Send + Sync>;

/// The error policy-server returns when the object does not exist (kube's `get_opt` gave
/// `None`; the callback wraps the error as "Callback evaluation failure: {e:?}").
pub fn not_found_error(call: &GetResourceCall) -> String {
    callback_failure(&format!(
        "Cannot find {}/{} named '{}' inside of namespace '{:?}'",
        call.api_version,
        call.kind,
        call.name,
        call.namespace.as_deref()
    ))
}

/// How policy-server wraps any failure of a host capability.
pub fn callback_failure(message: &str) -> String {
    format!("Callback evaluation failure: {message}")
}

/// The error policy-server returns when `(apiVersion, kind)` is not in the policy's
/// `contextAwareResources` (or the PolicyServer's allow list).
pub fn not_allowed_error(api_version: &str, kind: &str) -> String {
    format!(
        "Policy has not been granted access to Kubernetes {api_version}/{kind} resources. The violation has been reported."
    )
}

/// One `("kubewarden", "tracing", "log")` event.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub level: String,
    pub message: String,
    /// The whole event as the policy sent it.
    pub event: Value,
}

/// Any other host call the policy made (unknown binding/namespace/operation).
#[derive(Debug, Clone, PartialEq)]
pub struct OtherCall {
    pub binding: String,
    pub namespace: String,
    pub operation: String,
    pub payload: Vec<u8>,
}

#[derive(Default)]
struct Records {
    get_resource: Vec<GetResourceCall>,
    logs: Vec<LogLine>,
    other: Vec<OtherCall>,
}

/// One compiled module, shared by every [`PolicyHost`] of the process that loads the same file.
#[derive(Clone)]
struct Compiled {
    pre: EnginePre,
    modified: Option<SystemTime>,
    len: u64,
}

/// The process-wide engine, configured like policy-server's when evaluation timeouts are on
/// (`wasmtime::Config::new()` + `epoch_interruption(true)`), with a ticker thread.
fn engine() -> Result<&'static wasmtime::Engine> {
    static ENGINE: OnceLock<std::result::Result<wasmtime::Engine, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut config = wasmtime::Config::new();
            config.epoch_interruption(true);
            if std::env::var_os(PERF_MAP_ENV).is_some() {
                config.profiler(wasmtime::ProfilingStrategy::PerfMap);
            }
            let engine = wasmtime::Engine::new(&config).map_err(|e| e.to_string())?;
            let weak = engine.weak();
            std::thread::Builder::new()
                .name("crfix-epoch-ticker".into())
                .spawn(move || {
                    while let Some(engine) = weak.upgrade() {
                        engine.increment_epoch();
                        drop(engine);
                        std::thread::sleep(EPOCH_TICK);
                    }
                })
                .map_err(|e| e.to_string())?;
            Ok(engine)
        })
        .as_ref()
        .map_err(|e| anyhow!("cannot create the wasmtime engine: {e}"))
}

fn compile(path: &Path) -> Result<Compiled> {
    compile_with(path, None).map(|(compiled, _)| compiled)
}

/// What [`PolicyHost::load_cached`] did with the on-disk cache of compiled modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleCacheUse {
    /// The compiled module was read from this file (no compilation).
    Hit(PathBuf),
    /// The module was compiled and written to this file.
    Stored(PathBuf),
    /// The cache was not used, for this reason; the module was compiled.
    Skipped(String),
}

fn compile_with(path: &Path, cache_dir: Option<&Path>) -> Result<(Compiled, ModuleCacheUse)> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Compiled>>> = OnceLock::new();
    let meta = std::fs::metadata(path).map_err(|e| {
        anyhow!(
            "cannot read the policy module {}: {e}. Build it first: run `make build` at the \
             repository root (or set {POLICY_WASM_ENV} to a built .wasm)",
            path.display()
        )
    })?;
    let modified = meta.modified().ok();
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let cache = CACHE.get_or_init(Default::default);
    if let Ok(cache) = cache.lock() {
        if let Some(c) = cache.get(&key) {
            if c.modified == modified && c.len == meta.len() {
                return Ok((
                    c.clone(),
                    ModuleCacheUse::Skipped("compiled earlier in this process".into()),
                ));
            }
        }
    }
    let engine = engine()?;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let (module, used) = match cache_dir {
        Some(dir) => module_cache::load_or_compile(engine, &bytes, dir)
            .map_err(|e| anyhow!("cannot compile {}: {e:#}", path.display()))?,
        None => (
            wasmtime::Module::new(engine, &bytes)
                .map_err(|e| anyhow!("cannot compile {}: {e}", path.display()))?,
            ModuleCacheUse::Skipped("no cache directory".into()),
        ),
    };
    let pre = EnginePre::new(engine, &module)
        .map_err(|e| anyhow!("cannot pre-instantiate {}: {e:?}", path.display()))?;
    let compiled = Compiled {
        pre,
        modified,
        len: meta.len(),
    };
    if let Ok(mut cache) = cache.lock() {
        cache.insert(key, compiled.clone());
    }
    Ok((compiled, used))
}

/// Compiled modules on disk, for short-lived processes such as `crfix-eval`: compiling the
/// policy with Cranelift takes longer than evaluating a request.
///
/// A file is named after the SHA-256 of the `.wasm` bytes together with the engine's
/// compatibility hash (wasmtime's version and the compilation settings), so a changed module,
/// wasmtime or configuration never finds an old file. Deserialising is only safe for files this
/// code wrote itself: the directory must belong to the current user and be writable by nobody
/// else, files are written under a temporary name and renamed into place (never read half
/// written), and a file that does not belong to the current user is not read.
mod module_cache {
    use std::hash::{Hash, Hasher};
    use std::io::Write;
    use std::path::{Path, PathBuf};

    use anyhow::{anyhow, bail, Context, Result};
    use sha2::{Digest, Sha256};

    use super::ModuleCacheUse;

    pub(super) fn key(engine: &wasmtime::Engine, wasm: &[u8]) -> String {
        let mut compat = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut compat);
        let mut h = Sha256::new();
        h.update(b"crfix-e2e-tests module cache v1\0");
        h.update(compat.finish().to_le_bytes());
        h.update(Sha256::digest(wasm));
        h.finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    }

    #[cfg(unix)]
    fn check_private_dir(dir: &Path) -> Result<u32> {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let meta = std::fs::metadata(dir)?;
        let uid = current_uid(dir)?;
        if meta.uid() != uid {
            bail!("{} belongs to another user", dir.display());
        }
        if meta.mode() & 0o022 != 0 {
            // Ours: tighten it rather than refuse.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(uid)
    }

    /// The uid new files get in `dir`: the effective uid of this process.
    #[cfg(unix)]
    fn current_uid(dir: &Path) -> Result<u32> {
        use std::os::unix::fs::MetadataExt;
        let probe = tempfile_in(dir)?;
        let uid = std::fs::metadata(&probe.0)?.uid();
        Ok(uid)
    }

    #[cfg(not(unix))]
    fn check_private_dir(dir: &Path) -> Result<u32> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(0)
    }

    /// A new, empty, private file in `dir`, removed on drop unless persisted.
    struct TempFile(PathBuf);

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn tempfile_in(dir: &Path) -> Result<TempFile> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let path = dir.join(format!(".tmp-{}-{nanos}", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        Ok(TempFile(path))
    }

    pub(super) fn load_or_compile(
        engine: &wasmtime::Engine,
        wasm: &[u8],
        dir: &Path,
    ) -> Result<(wasmtime::Module, ModuleCacheUse)> {
        let compile = || wasmtime::Module::new(engine, wasm).map_err(|e| anyhow!("{e}"));
        let uid = match check_private_dir(dir) {
            Ok(uid) => uid,
            Err(e) => return Ok((compile()?, ModuleCacheUse::Skipped(format!("{e:#}")))),
        };
        let file = dir.join(format!("{}.cwasm", key(engine, wasm)));
        if let Ok(meta) = std::fs::metadata(&file) {
            #[cfg(unix)]
            let ours = {
                use std::os::unix::fs::MetadataExt;
                meta.uid() == uid && meta.mode() & 0o022 == 0
            };
            #[cfg(not(unix))]
            let ours = {
                let _ = (meta, uid);
                true
            };
            if ours {
                // SAFETY: the file was written by `store` below (private directory of this
                // user, complete files only, named after the module and the engine's
                // compatibility hash); wasmtime also checks its header against this engine.
                if let Ok(module) = unsafe { wasmtime::Module::deserialize_file(engine, &file) } {
                    return Ok((module, ModuleCacheUse::Hit(file)));
                }
            }
        }
        let module = compile()?;
        match store(&module, dir, &file) {
            Ok(()) => Ok((module, ModuleCacheUse::Stored(file))),
            Err(e) => Ok((module, ModuleCacheUse::Skipped(format!("{e:#}")))),
        }
    }

    fn store(module: &wasmtime::Module, dir: &Path, file: &Path) -> Result<()> {
        let bytes = module.serialize().map_err(|e| anyhow!("{e}"))?;
        let tmp = tempfile_in(dir)?;
        let mut f = std::fs::OpenOptions::new().write(true).open(&tmp.0)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp.0, file).with_context(|| format!("writing {}", file.display()))?;
        Ok(())
    }
}

/// `(apiVersion, kind)` pairs of `contextAwareResources` in the workspace's `metadata.yml`.
pub fn context_aware_resources_from_metadata() -> Result<Vec<(String, String)>> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Metadata {
        #[serde(default)]
        context_aware_resources: Vec<Resource>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Resource {
        api_version: String,
        kind: String,
    }
    let path = workspace_root().join("metadata.yml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let meta: Metadata =
        serde_yaml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    Ok(meta
        .context_aware_resources
        .into_iter()
        .map(|r| (r.api_version, r.kind))
        .collect())
}

fn default_allow_list() -> Option<Vec<(String, String)>> {
    Some(context_aware_resources_from_metadata().unwrap_or_else(|_| {
        vec![
            (
                "apiextensions.k8s.io/v1".into(),
                "CustomResourceDefinition".into(),
            ),
            ("crfix.dev/v1alpha1".into(), "Correction".into()),
        ]
    }))
}

/// A policy loaded into the e2e host. Cheap to clone; clones share recorded calls.
#[derive(Clone)]
pub struct PolicyHost {
    path: PathBuf,
    compiled: Compiled,
    resolver: Resolver,
    /// `None`: every `(apiVersion, kind)` is allowed.
    allow_list: Option<Vec<(String, String)>>,
    timeout: Option<Duration>,
    records: Arc<Mutex<Records>>,
}

impl std::fmt::Debug for PolicyHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyHost")
            .field("path", &self.path)
            .field("allow_list", &self.allow_list)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl PolicyHost {
    /// Loads (compiles once per process) the module at `path`. The default resolver is
    /// [`Cluster::with_crd_fixtures`]; the allow list is `metadata.yml`'s
    /// `contextAwareResources`.
    pub fn load(path: impl AsRef<Path>) -> Result<PolicyHost> {
        let path = path.as_ref().to_path_buf();
        let compiled = compile(&path)?;
        let cluster = Cluster::with_crd_fixtures().context("loading the CRD fixtures")?;
        Ok(PolicyHost {
            path,
            compiled,
            resolver: cluster.resolver(),
            allow_list: default_allow_list(),
            timeout: Some(DEFAULT_TIMEOUT),
            records: Default::default(),
        })
    }

    /// [`PolicyHost::load`], with compiled modules kept in `cache_dir` across processes
    /// (see [`ModuleCacheUse`]): a second process loading the same `.wasm` skips compilation.
    pub fn load_cached(
        path: impl AsRef<Path>,
        cache_dir: &Path,
    ) -> Result<(PolicyHost, ModuleCacheUse)> {
        let path = path.as_ref().to_path_buf();
        let (compiled, used) = compile_with(&path, Some(cache_dir))?;
        let cluster = Cluster::with_crd_fixtures().context("loading the CRD fixtures")?;
        Ok((
            PolicyHost {
                path,
                compiled,
                resolver: cluster.resolver(),
                allow_list: default_allow_list(),
                timeout: Some(DEFAULT_TIMEOUT),
                records: Default::default(),
            },
            used,
        ))
    }

    /// The crfix policy at [`policy_wasm_path`].
    pub fn policy() -> Result<PolicyHost> {
        PolicyHost::load(policy_wasm_path())
    }

    /// The no-op baseline at [`noop_wasm_path`].
    pub fn noop() -> Result<PolicyHost> {
        PolicyHost::load(noop_wasm_path())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Answers `get_resource` with `resolver` (after the allow-list check).
    pub fn with_resolver(
        mut self,
        resolver: impl Fn(&GetResourceCall) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    ) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }

    /// Answers `get_resource` calls for `(api_version, kind)` with `resolver`; every other
    /// call still goes to the current resolver (e.g. Corrections to a proxy, CRDs to the
    /// fake cluster).
    pub fn with_route(
        mut self,
        api_version: &str,
        kind: &str,
        resolver: impl Fn(&GetResourceCall) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    ) -> Self {
        let (api_version, kind) = (api_version.to_string(), kind.to_string());
        let rest = self.resolver.clone();
        self.resolver = Arc::new(move |call: &GetResourceCall| {
            if call.api_version == api_version && call.kind == kind {
                resolver(call)
            } else {
                rest(call)
            }
        });
        self
    }

    /// Answers `get_resource` from `cluster`.
    pub fn with_cluster(mut self, cluster: Cluster) -> Self {
        self.resolver = cluster.resolver();
        self
    }

    /// Replaces the `(apiVersion, kind)` allow list (policy-server's context-aware check).
    pub fn with_allowed_resources<A: Into<String>, K: Into<String>>(
        mut self,
        allowed: impl IntoIterator<Item = (A, K)>,
    ) -> Self {
        self.allow_list = Some(
            allowed
                .into_iter()
                .map(|(a, k)| (a.into(), k.into()))
                .collect(),
        );
        self
    }

    /// Lets the policy read any resource.
    pub fn allow_all_resources(mut self) -> Self {
        self.allow_list = None;
        self
    }

    /// Deadline of one guest call (`None`: no deadline). Past it wasmtime interrupts the
    /// guest and the call fails, as in policy-server.
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// `validate` with `{"request": request, "settings": settings}`; the parsed response.
    /// An `Err` means the guest trapped, returned a waPC error, or answered with non-JSON —
    /// what policy-server turns into an internal error.
    pub fn validate(&self, request: &Value, settings: &Value) -> Result<Value> {
        let payload = json!({ "request": request, "settings": settings });
        let bytes = serde_json::to_vec(&payload)?;
        let out = self.validate_raw(&bytes)?;
        parse_response(&out, "validate")
    }

    /// `validate` with a raw payload (for fuzzing); the raw response bytes.
    pub fn validate_raw(&self, payload: &[u8]) -> Result<Vec<u8>> {
        self.call("validate", payload)
    }

    /// `validate_settings`; the parsed `{"valid": bool, "message"?}`.
    pub fn validate_settings(&self, settings: &Value) -> Result<Value> {
        let out = self.validate_settings_raw(&serde_json::to_vec(settings)?)?;
        parse_response(&out, "validate_settings")
    }

    /// `validate_settings` with a raw payload.
    pub fn validate_settings_raw(&self, payload: &[u8]) -> Result<Vec<u8>> {
        self.call("validate_settings", payload)
    }

    /// `protocol_version`, decoded as policy-server does (a JSON string such as `"v1"`).
    pub fn protocol_version(&self) -> Result<String> {
        let out = self.call("protocol_version", &[])?;
        serde_json::from_slice::<String>(&out).map_err(|e| {
            anyhow!(
                "protocol_version answered {:?}, not a JSON string: {e}",
                String::from_utf8_lossy(&out)
            )
        })
    }

    /// The `get_resource` calls made so far (all clones of this host included).
    pub fn host_calls(&self) -> Vec<GetResourceCall> {
        self.records
            .lock()
            .map(|r| r.get_resource.clone())
            .unwrap_or_default()
    }

    /// The log events captured so far.
    pub fn logs(&self) -> Vec<LogLine> {
        self.records
            .lock()
            .map(|r| r.logs.clone())
            .unwrap_or_default()
    }

    /// Host calls to anything but `tracing/log` and `kubernetes/get_resource`.
    pub fn other_calls(&self) -> Vec<OtherCall> {
        self.records
            .lock()
            .map(|r| r.other.clone())
            .unwrap_or_default()
    }

    /// Forgets recorded calls and logs.
    pub fn clear_records(&self) {
        if let Ok(mut r) = self.records.lock() {
            *r = Records::default();
        }
    }

    /// One guest call in a fresh instance, as policy-server evaluates every request.
    pub fn call(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>> {
        let deadlines = self.timeout.map(|t| {
            let ticks = (t.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
            Deadlines {
                init: ticks,
                call: ticks,
            }
        });
        let provider = self.compiled.pre.rehydrate(deadlines);
        let host = wapc::WapcHost::new(Box::new(provider), Some(self.callback()))
            .map_err(|e| anyhow!("cannot initialise {}: {e}", self.path.display()))?;
        host.call(operation, payload)
            .map_err(|e| anyhow!("waPC call {operation:?} failed: {e}"))
    }

    fn callback(&self) -> Box<wapc::HostCallback> {
        let resolver = self.resolver.clone();
        let allow_list = self.allow_list.clone();
        let records = self.records.clone();
        Box::new(
            move |_id, binding, namespace, operation, payload| -> std::result::Result<
                Vec<u8>,
                Box<dyn std::error::Error + Send + Sync>,
            > {
                match (binding, namespace, operation) {
                    ("kubewarden", "tracing", "log") => {
                        // policy-server logs a bad event and still answers Ok.
                        if let Ok(event) = serde_json::from_slice::<Value>(payload) {
                            let line = LogLine {
                                level: event["level"].as_str().unwrap_or_default().to_string(),
                                message: event["message"].as_str().unwrap_or_default().to_string(),
                                event,
                            };
                            if let Ok(mut r) = records.lock() {
                                r.logs.push(line);
                            }
                        }
                        Ok(Vec::new())
                    }
                    ("kubewarden", "kubernetes", "get_resource") => {
                        let call: GetResourceCall = serde_json::from_slice(payload)?;
                        if let Ok(mut r) = records.lock() {
                            r.get_resource.push(call.clone());
                        }
                        if let Some(allowed) = &allow_list {
                            if !allowed
                                .iter()
                                .any(|(a, k)| *a == call.api_version && *k == call.kind)
                            {
                                return Err(not_allowed_error(&call.api_version, &call.kind).into());
                            }
                        }
                        resolver(&call).map_err(Into::into)
                    }
                    _ => {
                        if let Ok(mut r) = records.lock() {
                            r.other.push(OtherCall {
                                binding: binding.into(),
                                namespace: namespace.into(),
                                operation: operation.into(),
                                payload: payload.to_vec(),
                            });
                        }
                        if binding != "kubewarden" {
                            Err(format!("unknown binding: {binding}").into())
                        } else if !["tracing", "oci", "net", "crypto", "kubernetes"]
                            .contains(&namespace)
                        {
                            Err(format!("unknown namespace: {namespace}").into())
                        } else {
                            Err(format!("unknown operation: {operation}").into())
                        }
                    }
                }
            },
        )
    }
}

fn parse_response(out: &[u8], what: &str) -> Result<Value> {
    let value: Value = serde_json::from_slice(out).map_err(|e| {
        anyhow!(
            "{what} answered something that is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&out[..out.len().min(512)])
        )
    })?;
    if !value.is_object() {
        bail!("{what} answered {value}, not a JSON object");
    }
    Ok(value)
}

/// Checks the shape policy-server requires of a `validate` answer (kubewarden-policy-sdk's
/// `ValidationResponse`); returns a description of what is wrong.
pub fn check_validation_response(response: &Value) -> std::result::Result<(), String> {
    let obj = response
        .as_object()
        .ok_or_else(|| format!("not an object: {response}"))?;
    if !obj.get("accepted").is_some_and(Value::is_boolean) {
        return Err(format!("no boolean \"accepted\": {response}"));
    }
    for (key, value) in obj {
        let ok = match key.as_str() {
            "accepted" => true,
            "message" => value.is_string() || value.is_null(),
            "code" => value.is_u64() || value.is_null(),
            "mutated_object" => value.is_object() || value.is_null(),
            "audit_annotations" => {
                value.is_null()
                    || value
                        .as_object()
                        .is_some_and(|m| m.values().all(Value::is_string))
            }
            "warnings" => {
                value.is_null()
                    || value
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_string))
            }
            _ => false,
        };
        if !ok {
            return Err(format!("unexpected {key:?}: {value}"));
        }
    }
    if response["accepted"] == false && response.get("mutated_object").is_some_and(|m| !m.is_null())
    {
        return Err("a rejection carries a mutated_object".into());
    }
    Ok(())
}

/// Checks a `validate_settings` answer: `{"valid": bool, "message"?: string}`.
pub fn check_settings_response(response: &Value) -> std::result::Result<(), String> {
    if !response.get("valid").is_some_and(Value::is_boolean) {
        return Err(format!("no boolean \"valid\": {response}"));
    }
    match response.get("message") {
        None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
        Some(other) => Err(format!("\"message\" is not a string: {other}")),
    }
}
