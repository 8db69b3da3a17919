//! Test support: certificates made with rcgen, the real proxy binary as a child process, and
//! mTLS clients. Shared by the integration tests and the load benchmark.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use correction_api::{
    encode_token, encode_token_for, ChatMessage, CorrectionRequest, RequestUser, Role,
};
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

pub const ALLOWED_CN: &str = "front-proxy-client";

struct Ca {
    cert: Certificate,
    key: KeyPair,
}

fn new_ca(name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key).unwrap();
    Ca { cert, key }
}

fn leaf(ca: &Ca, cn: &str, sans: &[&str], usage: ExtendedKeyUsagePurpose) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(sans).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    params.extended_key_usages = vec![usage];
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let cert = params.signed_by(&key, &ca.cert, &ca.key).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// Every certificate a test needs, written to a temporary directory.
pub struct Pki {
    pub dir: tempfile::TempDir,
    /// CA of the serving certificate (what the client trusts).
    pub server_ca_pem: String,
    /// Request-header client CA (what the proxy trusts).
    pub client_ca_file: PathBuf,
    pub serving_cert_file: PathBuf,
    pub serving_key_file: PathBuf,
    /// Client identities as PEM cert + key.
    pub allowed_client: String,
    pub disallowed_client: String,
    pub foreign_client: String,
    server_ca: Ca,
}

/// A request-header client CA made apart from a [`Pki`] (to rotate to), with one client
/// identity (PEM cert + key) of CN [`ALLOWED_CN`].
pub struct ClientCa {
    pub ca_pem: String,
    pub allowed_client: String,
}

impl ClientCa {
    pub fn new(name: &str) -> ClientCa {
        let ca = new_ca(name);
        let (cert, key) = leaf(&ca, ALLOWED_CN, &[], ExtendedKeyUsagePurpose::ClientAuth);
        ClientCa {
            ca_pem: ca.cert.pem(),
            allowed_client: format!("{cert}{key}"),
        }
    }
}

impl Default for Pki {
    fn default() -> Self {
        Pki::new()
    }
}

impl Pki {
    pub fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let server_ca = new_ca("crfix test serving CA");
        let client_ca = new_ca("crfix test request-header CA");
        let foreign_ca = new_ca("someone else's CA");
        let (serving_cert, serving_key) = leaf(
            &server_ca,
            "crfix-llm-proxy",
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let identity = |ca: &Ca, cn: &str| {
            let (cert, key) = leaf(ca, cn, &[], ExtendedKeyUsagePurpose::ClientAuth);
            format!("{cert}{key}")
        };
        Pki {
            server_ca_pem: server_ca.cert.pem(),
            client_ca_file: write("client-ca.pem", &client_ca.cert.pem()),
            serving_cert_file: write("serving.pem", &serving_cert),
            serving_key_file: write("serving-key.pem", &serving_key),
            allowed_client: identity(&client_ca, ALLOWED_CN),
            disallowed_client: identity(&client_ca, "system:anonymous-intruder"),
            foreign_client: identity(&foreign_ca, ALLOWED_CN),
            server_ca,
            dir,
        }
    }

    /// A new serving certificate (PEM cert, PEM key) for 127.0.0.1 from the same serving CA.
    pub fn issue_serving_cert(&self) -> (String, String) {
        leaf(
            &self.server_ca,
            "crfix-llm-proxy",
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A blocking client that trusts the serving CA and presents `identity` (PEM cert + key).
    pub fn client(&self, identity: Option<&str>) -> reqwest::blocking::Client {
        let mut builder = reqwest::blocking::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(
                reqwest::Certificate::from_pem(self.server_ca_pem.as_bytes()).unwrap(),
            )
            .timeout(Duration::from_secs(20));
        if let Some(identity) = identity {
            builder = builder.identity(reqwest::Identity::from_pem(identity.as_bytes()).unwrap());
        }
        builder.build().unwrap()
    }

    /// An async client presenting the allowed identity.
    pub fn async_client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .add_root_certificate(
                reqwest::Certificate::from_pem(self.server_ca_pem.as_bytes()).unwrap(),
            )
            .identity(reqwest::Identity::from_pem(self.allowed_client.as_bytes()).unwrap())
            .timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(256)
            .build()
            .unwrap()
    }
}

/// A TCP port free on 127.0.0.1 right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The real `crfix-llm-proxy` binary, killed on drop.
pub struct Proxy {
    child: Option<Child>,
    pub addr: SocketAddr,
    log_dir: tempfile::TempDir,
}

pub struct ProxyBuilder<'a> {
    binary: PathBuf,
    pki: &'a Pki,
    upstream: String,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    cluster_auth: bool,
}

impl<'a> ProxyBuilder<'a> {
    /// `binary`: the built `crfix-llm-proxy` (see [`proxy_binary`]).
    pub fn new(
        binary: impl Into<PathBuf>,
        pki: &'a Pki,
        upstream_base_url: &str,
    ) -> ProxyBuilder<'a> {
        ProxyBuilder {
            binary: binary.into(),
            pki,
            upstream: upstream_base_url.to_string(),
            args: Vec::new(),
            envs: Vec::new(),
            cluster_auth: false,
        }
    }

    pub fn arg(mut self, name: &str, value: &str) -> Self {
        self.args.push(name.to_string());
        self.args.push(value.to_string());
        self
    }

    pub fn flag(mut self, name: &str) -> Self {
        self.args.push(name.to_string());
        self
    }

    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.envs.push((name.into(), value.into()));
        self
    }

    /// Leave out `--requestheader-client-ca-file` and `--requestheader-allowed-names`, for a
    /// proxy that reads them from a (fake) cluster with `--authentication-from-cluster`.
    pub fn cluster_auth(mut self) -> Self {
        self.cluster_auth = true;
        self
    }

    pub fn start(self) -> Proxy {
        let port = free_port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let log_dir = tempfile::tempdir().unwrap();
        let stdout = File::create(log_dir.path().join("stdout")).unwrap();
        let stderr = File::create(log_dir.path().join("stderr")).unwrap();
        let mut command = Command::new(&self.binary);
        for (name, _) in std::env::vars() {
            if name.starts_with("CRFIX_")
                || name.starts_with("KUBERNETES_SERVICE_")
                || name == "OPENAI_API_KEY"
                || name == "LOCAL_LLM_URL"
                || name == "RUST_LOG"
            {
                command.env_remove(name);
            }
        }
        command
            .arg("--listen")
            .arg(addr.to_string())
            .arg("--tls-cert-file")
            .arg(&self.pki.serving_cert_file)
            .arg("--tls-private-key-file")
            .arg(&self.pki.serving_key_file)
            .args(
                (!self.cluster_auth)
                    .then(|| {
                        [
                            "--requestheader-client-ca-file".into(),
                            self.pki.client_ca_file.clone().into_os_string(),
                            "--requestheader-allowed-names".into(),
                            format!("{ALLOWED_CN},aggregator").into(),
                        ]
                    })
                    .into_iter()
                    .flatten(),
            )
            .arg("--rate-limit")
            .arg("0")
            // clap refuses a repeated --model: the default only when the caller sets none.
            .args(
                (!self.args.iter().any(|a| a == "--model"))
                    .then_some(["--model", "test-model"])
                    .into_iter()
                    .flatten(),
            )
            .env("CRFIX_LOG", "debug")
            .env("LOCAL_LLM_URL", &self.upstream)
            .args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", self.binary.display()));
        let mut proxy = Proxy {
            child: Some(child),
            addr,
            log_dir,
        };
        proxy.wait_healthy();
        proxy
    }
}

impl Proxy {
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    pub fn correction_url(&self, token: &str) -> String {
        self.url(&format!("/apis/crfix.dev/v1alpha1/corrections/{token}"))
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    fn wait_healthy(&mut self) {
        let client = reqwest::blocking::Client::builder()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(15) {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("crfix-llm-proxy exited with {status}:\n{}", self.logs());
            }
            if client
                .get(self.url("/healthz"))
                .send()
                .is_ok_and(|r| r.status().is_success())
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("crfix-llm-proxy did not become healthy:\n{}", self.logs());
    }

    /// Everything the process wrote to stdout and stderr so far.
    pub fn logs(&self) -> String {
        let read = |name: &str| {
            std::fs::read_to_string(self.log_dir.path().join(name)).unwrap_or_default()
        };
        format!("{}{}", read("stdout"), read("stderr"))
    }

    /// Sends SIGTERM and waits for the exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        let child = self.child.as_mut()?;
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(15) {
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Current RSS of the proxy process in KiB (Linux).
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A valid token whose user message is `text`.
pub fn token(text: &str) -> String {
    encode_token(&request(text))
}

/// The token of [`token`]`(text)`, made for the end user `username` in `groups` (as the
/// policy names the user of the admission request).
pub fn token_for_user(text: &str, username: &str, groups: &[&str]) -> String {
    let user = RequestUser {
        username: username.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
    };
    encode_token_for(&request(text), Some(&user))
}

fn request(text: &str) -> CorrectionRequest {
    CorrectionRequest {
        messages: vec![
            ChatMessage {
                role: Role::System,
                content: "You repair Kubernetes objects. Answer with JSON.".into(),
            },
            ChatMessage {
                role: Role::User,
                content: text.into(),
            },
        ],
        max_tokens: 256,
        temperature: 0.0,
        response_schema: None,
    }
}

/// The value of one sample in Prometheus text, e.g. `crfix_proxy_cache_hits_total`
/// or `crfix_proxy_requests_total{outcome="cached"}`; 0 when absent.
pub fn metric(text: &str, sample: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let (name, value) = l.rsplit_once(' ')?;
            (name == sample).then(|| value.parse().ok()).flatten()
        })
        .unwrap_or(0.0)
}

pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The proxy binary for tests outside its own crate: `CRFIX_PROXY_BIN`, else the workspace's
/// `target/release` or `target/debug` build (whichever is newer).
pub fn proxy_binary() -> PathBuf {
    if let Ok(path) = std::env::var("CRFIX_PROXY_BIN") {
        return PathBuf::from(path);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target"));
    let candidates = [
        target.join("release/crfix-llm-proxy"),
        target.join("debug/crfix-llm-proxy"),
    ];
    candidates
        .iter()
        .filter_map(|p| Some((std::fs::metadata(p).ok()?.modified().ok()?, p.clone())))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| {
            panic!(
                "crfix-llm-proxy is not built: run `make build` or `cargo build -p crfix-llm-proxy` \
                 (or set CRFIX_PROXY_BIN)"
            )
        })
}
