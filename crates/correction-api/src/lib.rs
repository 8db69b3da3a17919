//! The Correction API: the contract between the crfix policy and crfix-llm-proxy.
//!
//! The policy asks for a correction with `kubernetes/get_resource` of a cluster-scoped
//! `Correction` named by a token; the proxy decodes the token, calls the LLM and answers with a
//! `Correction` object whose `status.content` is the model's answer.
//!
//! Token = `c1.` + base64url-without-padding(raw deflate(JSON [`CorrectionRequest`])).
//! The same request always encodes to the same token, so answers are cacheable by token.

use std::io::{Read, Write};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

pub const GROUP: &str = "crfix.dev";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "crfix.dev/v1alpha1";
pub const KIND: &str = "Correction";
pub const LIST_KIND: &str = "CorrectionList";
pub const RESOURCE: &str = "corrections";
pub const SINGULAR: &str = "correction";

/// Version prefix of every token.
pub const TOKEN_PREFIX: &str = "c1.";
/// Default and documented maximum length of a token, in bytes (prefix included).
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Upper bound on the decompressed JSON: guards the proxy against deflate bombs.
pub const MAX_DECODED_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
}

/// What the policy asks the LLM: the chat messages and sampling limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CorrectionRequest {
    pub messages: Vec<ChatMessage>,
    pub max_tokens: u32,
    pub temperature: f32,
    /// A JSON Schema every acceptable answer satisfies (the policy builds it from the errors
    /// and the candidates it offers). The proxy asks the backend to constrain decoding to it
    /// (`--structured-output`) or, for a backend that cannot, leaves it out: the policy
    /// checks every answer either way. Absent, tokens encode exactly as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<serde_json::Value>,
}

/// The user whose admission request needs the correction, as the policy saw it in the
/// AdmissionRequest's `userInfo`. The proxy accounts per-user budgets and logs by it.
///
/// It is asserted by the caller, not verified by the proxy: the proxy trusts it because only
/// the policy server's identity may `get` corrections (RBAC), and that caller is the one
/// that put it in the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestUser {
    pub username: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// A decoded token: the request, and the user it is made for when the token names one.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedToken {
    pub request: CorrectionRequest,
    pub user: Option<RequestUser>,
}

/// The token's JSON: a [`CorrectionRequest`] plus the optional `user`. Without a user it
/// serialises exactly like the request alone, so such tokens are unchanged.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireOut<'a> {
    messages: &'a [ChatMessage],
    max_tokens: u32,
    temperature: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_schema: Option<&'a serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<&'a RequestUser>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WireIn {
    messages: Vec<ChatMessage>,
    max_tokens: u32,
    temperature: f32,
    #[serde(default)]
    response_schema: Option<serde_json::Value>,
    #[serde(default)]
    user: Option<RequestUser>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("token is {len} bytes, more than the limit of {max}")]
    TooLarge { len: usize, max: usize },
    #[error("token does not start with {TOKEN_PREFIX:?}")]
    BadPrefix,
    #[error("token is not base64url without padding")]
    BadBase64,
    #[error("token payload is not raw deflate data")]
    BadDeflate,
    #[error("token payload has {0} bytes after the end of its deflate stream")]
    TrailingData(usize),
    #[error("token payload decompresses to more than {MAX_DECODED_BYTES} bytes")]
    DecodedTooLarge,
    #[error("token payload is not a valid correction request: {0}")]
    BadJson(String),
    #[error("correction request is invalid: {0}")]
    Invalid(String),
}

impl CorrectionRequest {
    /// Checks the request's own invariants (not its size).
    pub fn check(&self) -> Result<(), TokenError> {
        if self.messages.is_empty() {
            return Err(TokenError::Invalid("no messages".into()));
        }
        if self.max_tokens == 0 || self.max_tokens > 32_768 {
            return Err(TokenError::Invalid(format!(
                "maxTokens {} is outside 1..=32768",
                self.max_tokens
            )));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(TokenError::Invalid(format!(
                "temperature {} is outside 0..=2",
                self.temperature
            )));
        }
        if let Some(schema) = &self.response_schema {
            if !schema.is_object() {
                return Err(TokenError::Invalid(
                    "responseSchema is not a JSON object".into(),
                ));
            }
        }
        Ok(())
    }
}

/// Encodes a request as a token. Deterministic: the same request gives the same token.
pub fn encode_token(request: &CorrectionRequest) -> String {
    encode_token_for(request, None)
}

/// Encodes a request made for `user` (see [`RequestUser`]) as a token. With `None` this is
/// [`encode_token`]. The user makes the token (and so its length) differ per user; the proxy
/// still caches answers by the request alone.
pub fn encode_token_for(request: &CorrectionRequest, user: Option<&RequestUser>) -> String {
    let wire = WireOut {
        messages: &request.messages,
        max_tokens: request.max_tokens,
        temperature: request.temperature,
        response_schema: request.response_schema.as_ref(),
        user,
    };
    let json = serde_json::to_vec(&wire).expect("a CorrectionRequest always serialises");
    let mut encoder = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(json.len() / 2),
        flate2::Compression::best(),
    );
    encoder
        .write_all(&json)
        .expect("writing to a Vec cannot fail");
    let compressed = encoder.finish().expect("writing to a Vec cannot fail");
    let mut token = String::with_capacity(TOKEN_PREFIX.len() + compressed.len() * 4 / 3 + 4);
    token.push_str(TOKEN_PREFIX);
    URL_SAFE_NO_PAD.encode_string(&compressed, &mut token);
    token
}

/// Inflates one complete raw deflate stream that must span the whole input: a truncated
/// stream or bytes after its end are refused, so one request has exactly one token (and one
/// cache entry).
fn inflate_exactly(compressed: &[u8]) -> Result<Vec<u8>, TokenError> {
    let mut json = Vec::new();
    let mut decoder = flate2::bufread::DeflateDecoder::new(compressed);
    (&mut decoder)
        .take(MAX_DECODED_BYTES as u64 + 1)
        .read_to_end(&mut json)
        .map_err(|_| TokenError::BadDeflate)?;
    if json.len() > MAX_DECODED_BYTES {
        return Err(TokenError::DecodedTooLarge);
    }
    // The bufread decoder consumes exactly the bytes of the stream: whatever is left of the
    // input follows its final block.
    let rest = decoder.into_inner().len();
    if rest > 0 {
        return Err(TokenError::TrailingData(rest));
    }
    Ok(json)
}

/// Decodes and checks a token; `max_len` bounds the token itself. A user in the token is
/// accepted and dropped; [`decode_token_with_user`] keeps it.
pub fn decode_token(token: &str, max_len: usize) -> Result<CorrectionRequest, TokenError> {
    decode_token_with_user(token, max_len).map(|decoded| decoded.request)
}

/// Decodes and checks a token, with the user it names, if any.
pub fn decode_token_with_user(token: &str, max_len: usize) -> Result<DecodedToken, TokenError> {
    if token.len() > max_len {
        return Err(TokenError::TooLarge {
            len: token.len(),
            max: max_len,
        });
    }
    let body = token
        .strip_prefix(TOKEN_PREFIX)
        .ok_or(TokenError::BadPrefix)?;
    let compressed = URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| TokenError::BadBase64)?;
    let json = inflate_exactly(&compressed)?;
    let wire: WireIn =
        serde_json::from_slice(&json).map_err(|e| TokenError::BadJson(e.to_string()))?;
    let request = CorrectionRequest {
        messages: wire.messages,
        max_tokens: wire.max_tokens,
        temperature: wire.temperature,
        response_schema: wire.response_schema,
    };
    request.check()?;
    if let Some(user) = &wire.user {
        if user.username.trim().is_empty() {
            return Err(TokenError::Invalid("user.username is empty".into()));
        }
    }
    Ok(DecodedToken {
        request,
        user: wire.user,
    })
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorrectionMetadata {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CorrectionStatus {
    /// The model's answer, verbatim.
    pub content: String,
    /// The model name the upstream reported.
    #[serde(default)]
    pub model: String,
    /// Whether the proxy answered from its cache.
    #[serde(default)]
    pub cached: bool,
    #[serde(default)]
    pub finish_reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The object the proxy serves at `/apis/crfix.dev/v1alpha1/corrections/{token}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Correction {
    pub api_version: String,
    pub kind: String,
    pub metadata: CorrectionMetadata,
    pub status: CorrectionStatus,
}

impl Correction {
    pub fn new(token: &str, status: CorrectionStatus) -> Self {
        Correction {
            api_version: API_VERSION.to_string(),
            kind: KIND.to_string(),
            metadata: CorrectionMetadata {
                name: token.to_string(),
                creation_timestamp: None,
            },
            status,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CorrectionRequest {
        CorrectionRequest {
            messages: vec![
                ChatMessage {
                    role: Role::System,
                    content: "fix it".into(),
                },
                ChatMessage {
                    role: Role::User,
                    content: "{\"spec\":{}}".repeat(50),
                },
            ],
            max_tokens: 512,
            temperature: 0.0,
            response_schema: None,
        }
    }

    #[test]
    fn round_trip_is_exact_and_deterministic() {
        let token = encode_token(&sample());
        assert!(token.starts_with(TOKEN_PREFIX));
        assert_eq!(token, encode_token(&sample()));
        assert!(token[3..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(
            decode_token(&token, DEFAULT_MAX_TOKEN_BYTES).unwrap(),
            sample()
        );
    }

    #[test]
    fn different_requests_give_different_tokens() {
        let mut other = sample();
        other.max_tokens = 513;
        assert_ne!(encode_token(&sample()), encode_token(&other));
    }

    #[test]
    fn rejects_bad_tokens() {
        let token = encode_token(&sample());
        assert_eq!(decode_token("x1.abc", 100), Err(TokenError::BadPrefix));
        assert_eq!(decode_token("c1.a+b/", 100), Err(TokenError::BadBase64));
        assert_eq!(decode_token("c1.AAAA", 100), Err(TokenError::BadDeflate));
        assert!(matches!(
            decode_token(&token, 10),
            Err(TokenError::TooLarge { max: 10, .. })
        ));
        let not_json = {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(b"hello").unwrap();
            format!("c1.{}", URL_SAFE_NO_PAD.encode(e.finish().unwrap()))
        };
        assert!(matches!(
            decode_token(&not_json, 1000),
            Err(TokenError::BadJson(_))
        ));
    }

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn rejects_bytes_after_the_deflate_stream_and_truncated_streams() {
        let json = serde_json::to_vec(&sample()).unwrap();
        let compressed = deflate(&json);
        let exact = format!("c1.{}", URL_SAFE_NO_PAD.encode(&compressed));
        assert_eq!(exact, encode_token(&sample()));
        assert_eq!(decode_token(&exact, DEFAULT_MAX_TOKEN_BYTES), Ok(sample()));
        for tail in [&b"\0"[..], b"x", b"trailing garbage", &compressed] {
            let mut padded = compressed.clone();
            padded.extend_from_slice(tail);
            let token = format!("c1.{}", URL_SAFE_NO_PAD.encode(&padded));
            assert_eq!(
                decode_token(&token, DEFAULT_MAX_TOKEN_BYTES),
                Err(TokenError::TrailingData(tail.len())),
                "{tail:?}"
            );
        }
        for cut in [1, 2, compressed.len() / 2] {
            let token = format!(
                "c1.{}",
                URL_SAFE_NO_PAD.encode(&compressed[..compressed.len() - cut])
            );
            assert_eq!(
                decode_token(&token, DEFAULT_MAX_TOKEN_BYTES),
                Err(TokenError::BadDeflate),
                "cut {cut}"
            );
        }
        assert_eq!(
            TokenError::TrailingData(3).to_string(),
            "token payload has 3 bytes after the end of its deflate stream"
        );
    }

    #[test]
    fn tokens_may_name_a_user() {
        let alice = RequestUser {
            username: "alice@example.com".into(),
            groups: vec!["system:authenticated".into(), "dev".into()],
        };
        assert_eq!(encode_token_for(&sample(), None), encode_token(&sample()));
        let token = encode_token_for(&sample(), Some(&alice));
        assert_ne!(token, encode_token(&sample()));
        assert_eq!(token, encode_token_for(&sample(), Some(&alice)));
        let decoded = decode_token_with_user(&token, DEFAULT_MAX_TOKEN_BYTES).unwrap();
        assert_eq!(decoded.request, sample());
        assert_eq!(decoded.user, Some(alice));
        assert_eq!(decode_token(&token, DEFAULT_MAX_TOKEN_BYTES), Ok(sample()));
        let plain = decode_token_with_user(&encode_token(&sample()), DEFAULT_MAX_TOKEN_BYTES);
        assert_eq!(plain.unwrap().user, None);
        // Groups are optional; an empty name and unknown user fields are refused.
        let bob = RequestUser {
            username: "bob".into(),
            groups: vec![],
        };
        let token = encode_token_for(&sample(), Some(&bob));
        assert_eq!(
            decode_token_with_user(&token, DEFAULT_MAX_TOKEN_BYTES)
                .unwrap()
                .user,
            Some(bob)
        );
        let nobody = RequestUser {
            username: " ".into(),
            groups: vec![],
        };
        assert!(matches!(
            decode_token_with_user(
                &encode_token_for(&sample(), Some(&nobody)),
                DEFAULT_MAX_TOKEN_BYTES
            ),
            Err(TokenError::Invalid(_))
        ));
        let json = br#"{"messages":[{"role":"user","content":"x"}],"maxTokens":5,"temperature":0,"user":{"username":"a","uid":"1"}}"#;
        let token = format!("c1.{}", URL_SAFE_NO_PAD.encode(deflate(json)));
        assert!(matches!(
            decode_token(&token, 1000),
            Err(TokenError::BadJson(_))
        ));
    }

    #[test]
    fn rejects_deflate_bombs() {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![b' '; MAX_DECODED_BYTES + 10]).unwrap();
        let token = format!("c1.{}", URL_SAFE_NO_PAD.encode(e.finish().unwrap()));
        assert!(token.len() < DEFAULT_MAX_TOKEN_BYTES);
        assert_eq!(
            decode_token(&token, DEFAULT_MAX_TOKEN_BYTES),
            Err(TokenError::DecodedTooLarge)
        );
    }

    #[test]
    fn rejects_unknown_fields_and_bad_limits() {
        let mut bad = sample();
        bad.max_tokens = 0;
        assert!(matches!(
            decode_token(&encode_token(&bad), DEFAULT_MAX_TOKEN_BYTES),
            Err(TokenError::Invalid(_))
        ));
        let json = br#"{"messages":[{"role":"user","content":"x"}],"maxTokens":5,"temperature":0,"apiKey":"x"}"#;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(json).unwrap();
        let token = format!("c1.{}", URL_SAFE_NO_PAD.encode(e.finish().unwrap()));
        assert!(matches!(
            decode_token(&token, 1000),
            Err(TokenError::BadJson(_))
        ));
    }
}
