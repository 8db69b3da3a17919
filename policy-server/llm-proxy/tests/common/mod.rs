//! The shared test support, bound to this crate's own binary.
#![allow(dead_code, unused_imports)]

pub use proxy_harness::{
    free_port, metric, token, token_for_user, write_file, ClientCa, Pki, Proxy, ALLOWED_CN,
};

/// The token of [`token`]`(text)` whose request carries `schema` as its `responseSchema`.
pub fn token_with_schema(text: &str, schema: &serde_json::Value) -> String {
    let mut request = correction_api::decode_token(&token(text), usize::MAX).unwrap();
    request.response_schema = Some(schema.clone());
    correction_api::encode_token(&request)
}

pub struct ProxyBuilder;

impl ProxyBuilder {
    #[allow(clippy::new_ret_no_self)]
    pub fn new<'a>(pki: &'a Pki, upstream_base_url: &str) -> proxy_harness::ProxyBuilder<'a> {
        proxy_harness::ProxyBuilder::new(
            env!("CARGO_BIN_EXE_crfix-llm-proxy"),
            pki,
            upstream_base_url,
        )
    }
}

/// What most tests start with: a test PKI, the fake LLM, the proxy binary with `args` in front
/// of it, and a client holding the aggregator's (allowed) certificate.
pub struct Road {
    pub pki: Pki,
    pub llm: fake_llm::FakeLlm,
    pub proxy: Proxy,
    pub client: reqwest::blocking::Client,
}

impl Road {
    pub fn start(args: &[(&str, &str)]) -> Road {
        let pki = Pki::new();
        let llm = fake_llm::FakeLlm::start_blocking().expect("fake LLM");
        let mut builder = ProxyBuilder::new(&pki, &llm.base_url());
        for (name, value) in args {
            builder = builder.arg(name, value);
        }
        let proxy = builder.start();
        let client = pki.client(Some(&pki.allowed_client));
        Road {
            pki,
            llm,
            proxy,
            client,
        }
    }
}
