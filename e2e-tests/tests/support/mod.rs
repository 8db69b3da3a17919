//! Test support shared by the command-line tests (`eval_cli.rs`, `fix_cli.rs`).

use std::path::{Path, PathBuf};

use fake_llm::{FakeLlm, Reply};
use proxy_harness::{proxy_binary, Pki, Proxy, ProxyBuilder};

/// The real proxy in front of a fake LLM that gives one answer, with the serving CA and the
/// aggregator's client identity written to files, as a command-line user passes them
/// (`--correction-ca-file`, `--correction-client-cert`).
pub struct CliProxy {
    pub proxy: Proxy,
    pub ca_file: PathBuf,
    pub identity_file: PathBuf,
    pub llm: FakeLlm,
}

impl CliProxy {
    /// Starts both; the files go into `dir`.
    pub fn start(answer: String, dir: &Path) -> CliProxy {
        let pki = Pki::new();
        let llm = FakeLlm::start_blocking().expect("fake LLM");
        llm.set_default(Reply::content(answer));
        let proxy = ProxyBuilder::new(proxy_binary(), &pki, &llm.base_url())
            .arg("--model", "fake-model-1")
            .arg("--log-format", "text")
            .start();
        let ca_file = dir.join("serving-ca.pem");
        std::fs::write(&ca_file, &pki.server_ca_pem).unwrap();
        let identity_file = dir.join("aggregator.pem");
        std::fs::write(&identity_file, &pki.allowed_client).unwrap();
        CliProxy {
            proxy,
            ca_file,
            identity_file,
            llm,
        }
    }

    /// The `--correction-*` arguments that reach it.
    pub fn args(&self) -> Vec<String> {
        vec![
            "--correction-url".into(),
            self.proxy.url(""),
            "--correction-ca-file".into(),
            self.ca_file.display().to_string(),
            "--correction-client-cert".into(),
            self.identity_file.display().to_string(),
        ]
    }
}
