//! The shared test support, bound to this crate's own binary.
#![allow(dead_code, unused_imports)]

pub use proxy_harness::{
    free_port, metric, token, token_for_user, write_file, ClientCa, Pki, Proxy, ALLOWED_CN,
};

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
