//! Kubernetes' URL library (`kubernetes.urls`): `url()`, `isURL()`, `getScheme`, `getHost`,
//! `getHostname`, `getPort`, `getEscapedPath`, `getQuery`.
//!
//! Kubernetes checks a URL with Go's `url.ParseRequestURI` (absolute URLs and absolute paths)
//! and then reads it with `url.Parse`. Go's rules differ from the WHATWG URL standard the `url`
//! crate implements (no normalisation, no IDNA, its own errors), so they are followed here
//! directly, for what validation rules use; a percent sign in a host is left unevaluated.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::{CelBool, CelString, Type};
use cel::common::value::{StaticVal, Val};
use cel::objects::{Key, Map};
use cel::{DeclarationError, Env, ExecutionError, Value as CelValue};

use super::{go_quote, k8s_error, unsupported};

static URL_TYPE: Type = Type::new_unspecified_type("kubernetes.URL");

#[derive(Debug, Clone, PartialEq)]
pub struct Url {
    scheme: String,
    opaque: String,
    /// `user@host:port` as written, without the user info.
    host: String,
    raw_path: String,
    raw_query: String,
}

impl Val for Url {
    fn get_type(&self) -> &Type {
        &URL_TYPE
    }
    fn cel_type() -> &'static Type {
        &URL_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Url>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Url {}

/// Why a URL does not parse: Go's error text, or crfix's limitation.
enum UrlError {
    Go(String),
    Unsupported(&'static str),
}

fn is_scheme_char(c: u8, first: bool) -> bool {
    c.is_ascii_alphabetic() || (!first && (c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.')))
}

/// Go's `getScheme`: the scheme and the rest, or an error for a leading `:`.
fn split_scheme(raw: &str) -> Result<(&str, &str), &'static str> {
    for (i, c) in raw.bytes().enumerate() {
        if c == b':' {
            if i == 0 {
                return Err("missing protocol scheme");
            }
            return Ok((&raw[..i], &raw[i + 1..]));
        }
        if !is_scheme_char(c, i == 0) {
            return Ok(("", raw));
        }
    }
    Ok(("", raw))
}

/// Go's `validOptionalPort`.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `parseHost`, for hosts without percent-escapes.
fn check_host(host: &str) -> Result<(), UrlError> {
    if host.contains('%') {
        return Err(UrlError::Unsupported("a percent sign in a URL host"));
    }
    let port = if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err(UrlError::Go("missing ']' in host".to_string()));
        };
        &host[i + 1..]
    } else {
        host.rfind(':').map_or("", |i| &host[i..])
    };
    if !valid_optional_port(port) {
        return Err(UrlError::Go(format!(
            "invalid port {} after host",
            go_quote(port)
        )));
    }
    // Go's `unescape(host, encodeHost)`: an ASCII byte a host may not hold unescaped.
    match host.bytes().find(|&b| b < 0x80 && !host_safe(b)) {
        Some(b) => Err(UrlError::Go(format!(
            "invalid character {} in host name",
            go_quote(&(b as char).to_string())
        ))),
        None => Ok(()),
    }
}

/// Go's `shouldEscape(c, encodeHost)` is false for the ASCII byte `c`.
fn host_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c)
}

/// Go's path unescaping check: every `%` starts a two-digit hex escape.
fn check_escapes(s: &str) -> Result<(), UrlError> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let ok =
                b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
            if !ok {
                let end = (i + 3).min(b.len());
                let escape = s.get(i..end).unwrap_or(&s[i..]);
                return Err(UrlError::Go(format!(
                    "invalid URL escape {}",
                    go_quote(escape)
                )));
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    Ok(())
}

/// Go's `url.Parse` with `viaRequest` (`ParseRequestURI`) or not (the fragment is cut first).
fn parse(raw: &str, via_request: bool) -> Result<Url, UrlError> {
    let go = |e: String| UrlError::Go(format!("parse {}: {e}", go_quote(raw)));
    let mut rest = raw;
    if !via_request {
        rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    }
    if rest.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(go("net/url: invalid control character in URL".to_string()));
    }
    if rest.is_empty() && via_request {
        return Err(go("empty url".to_string()));
    }
    let mut url = Url {
        scheme: String::new(),
        opaque: String::new(),
        host: String::new(),
        raw_path: String::new(),
        raw_query: String::new(),
    };
    if rest == "*" {
        url.raw_path = "*".to_string();
        return Ok(url);
    }
    let (scheme, after) = split_scheme(rest).map_err(|e| go(e.to_string()))?;
    url.scheme = scheme.to_ascii_lowercase();
    rest = after;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        url.raw_query = q.to_string();
        rest = r;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        if via_request {
            return Err(go("invalid URI for request".to_string()));
        }
        if let Some(colon) = rest.find(':') {
            if rest.find('/').is_none_or(|slash| colon < slash) {
                return Err(go(
                    "first path segment in URL cannot contain colon".to_string()
                ));
            }
        }
    }
    let authority_allowed = !url.scheme.is_empty() || !via_request && !rest.starts_with("///");
    if authority_allowed && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if let Some((user, _)) = authority.rsplit_once('@') {
            if !user.bytes().all(valid_userinfo_byte) {
                return Err(go("net/url: invalid userinfo".to_string()));
            }
        }
        check_host(host).map_err(|e| match e {
            UrlError::Go(m) => go(m),
            other => other,
        })?;
        url.host = host.to_string();
        rest = path;
    }
    check_escapes(rest).map_err(|e| match e {
        UrlError::Go(m) => go(m),
        other => other,
    })?;
    url.raw_path = rest.to_string();
    Ok(url)
}

/// Go's `validUserinfo`.
fn valid_userinfo_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&b)
}

/// Go's `shouldEscape(c, encodePath)` is false for `c`.
fn path_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&c)
}

/// Go's `URL.EscapedPath`: the path as written when it is a valid encoding, else re-escaped.
fn escaped_path(raw: &str) -> String {
    let valid = raw
        .bytes()
        .all(|c| path_safe(c) || b"!$&'()*+,;=:@[]%".contains(&c));
    if valid {
        return raw.to_string();
    }
    let decoded = percent_decode(raw, false);
    let mut out = String::with_capacity(decoded.len());
    for c in decoded {
        if path_safe(c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

/// Percent-decoding (and `+` as a space in queries); `None`-free: invalid escapes stay.
fn percent_decode(s: &str, plus_is_space: bool) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// Go's `QueryUnescape`, `None` for an invalid escape.
fn query_unescape(s: &str) -> Option<String> {
    check_escapes(s).ok()?;
    String::from_utf8(percent_decode(s, true)).ok()
}

/// Go's `URL.Query()` (`ParseQuery`, errors ignored: bad pairs are skipped).
fn query_map(raw: &str) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for pair in raw.split('&') {
        if pair.is_empty() || pair.contains(';') {
            continue;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let (Some(k), Some(v)) = (query_unescape(k), query_unescape(v)) {
            out.entry(k).or_default().push(v);
        }
    }
    out
}

/// Go's `splitHostPort`: host (without brackets) and port.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(colon) = host_port.rfind(':') {
        if valid_optional_port(&host_port[colon..]) {
            host = &host_port[..colon];
            port = &host_port[colon + 1..];
        }
    }
    if host.starts_with('[') && host.ends_with(']') {
        host = &host[1..host.len() - 1];
    }
    (host, port)
}

/// Go's `url.ParseRequestURI(s)` error text, `None` when it parses (the format library's
/// `uri`).
pub(super) fn request_uri_error(s: &str) -> Result<Option<String>, ExecutionError> {
    match parse(s, true) {
        Ok(_) => Ok(None),
        Err(UrlError::Go(m)) => Ok(Some(m)),
        Err(UrlError::Unsupported(what)) => Err(unsupported("validate", what)),
    }
}

fn url(s: &CelString<'_>) -> Result<Url, ExecutionError> {
    let checked = parse(s.inner(), true).and_then(|_| parse(s.inner(), false));
    checked.map_err(|e| match e {
        UrlError::Go(m) => k8s_error(
            "url",
            format!("URL parse error during conversion from string: {m}"),
        ),
        UrlError::Unsupported(what) => unsupported("url", what),
    })
}

fn is_url(s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    match parse(s.inner(), true) {
        Ok(_) => Ok(CelBool::from(true)),
        Err(UrlError::Go(_)) => Ok(CelBool::from(false)),
        Err(UrlError::Unsupported(what)) => Err(unsupported("isURL", what)),
    }
}

fn get_scheme(u: &Url) -> CelString<'static> {
    CelString::from(u.scheme.clone())
}

fn get_host(u: &Url) -> CelString<'static> {
    CelString::from(u.host.clone())
}

fn get_hostname(u: &Url) -> CelString<'static> {
    CelString::from(split_host_port(&u.host).0.to_string())
}

fn get_port(u: &Url) -> CelString<'static> {
    CelString::from(split_host_port(&u.host).1.to_string())
}

fn get_escaped_path(u: &Url) -> CelString<'static> {
    if !u.opaque.is_empty() {
        return CelString::from(String::new());
    }
    CelString::from(escaped_path(&u.raw_path))
}

fn get_query(u: &Url) -> Result<Box<dyn Val + 'static>, ExecutionError> {
    let map: HashMap<Key, CelValue> = query_map(&u.raw_query)
        .into_iter()
        .map(|(k, vs)| {
            let list = vs.into_iter().map(CelValue::from).collect::<Vec<_>>();
            (Key::from(k), CelValue::List(Arc::new(list)))
        })
        .collect();
    CelValue::Map(Map { map: Arc::new(map) })
        .try_into()
        .map_err(|_| ExecutionError::function_error("getQuery", "cannot build a map"))
}

fn get_query_fn<'b, 'v>(
    args: Vec<cel::common::value::CowVal<'b, 'v>>,
) -> Result<cel::common::value::CowVal<'b, 'v>, ExecutionError> {
    let [u] = args.as_slice() else {
        return Err(ExecutionError::invalid_argument_count(1, args.len()));
    };
    let u = u
        .downcast_ref::<Url>()
        .ok_or_else(|| ExecutionError::UnexpectedType {
            got: u.get_type().name().to_owned(),
            want: URL_TYPE.name().to_owned(),
        })?;
    Ok(cel::common::value::CowVal::Owned(get_query(u)?))
}

pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn url: (CelString) -> Result<Url>, id = "string_to_url")?;
    cel::add_overload!(env, fn is_url: (CelString) -> Result<CelBool>, name = "isURL", id = "is_url_string")?;
    cel::add_member_overload!(env, fn get_scheme: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_host: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_hostname: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_port: (Url) -> CelString)?;
    cel::add_member_overload!(env, fn get_escaped_path: (Url) -> CelString)?;
    env.add_member_overload(
        "getQuery",
        "url_get_query",
        URL_TYPE.to_owned(),
        vec![],
        get_query_fn,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{all_pass, error};

    #[test]
    fn url_functions() {
        all_pass(&[
            "url('https://example.com/').getScheme() == 'https'",
            "url('https://example.com:80/').getHost() == 'example.com:80'",
            "url('https://example.com/').getHost() == 'example.com'",
            "url('https://[::1]:80/').getHost() == '[::1]:80'",
            "url('https://example.com:80/').getHostname() == 'example.com'",
            "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'",
            "url('https://[::1]:80/').getHostname() == '::1'",
            "url('/path').getHostname() == ''",
            "url('https://example.com:80/').getPort() == '80'",
            "url('https://example.com/').getPort() == ''",
            "url('https://example.com/path').getEscapedPath() == '/path'",
            "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
            "url('https://example.com/').getEscapedPath() == '/'",
            "url('https://example.com').getEscapedPath() == ''",
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
            "url('https://example.com/path?key with spaces=value with spaces').getQuery() == {'key with spaces': ['value with spaces']}",
            "url('https://example.com/path?').getQuery() == {}",
            "url('https://example.com/path').getQuery() == {}",
            "url('https://example.com/path#frag').getEscapedPath() == '/path'",
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            "isURL('/absolute-path') && !isURL('../relative-path') && !isURL('example.com')",
            "!isURL('')",
            "!isURL('http://docker pull ghcr.io/acme/x') && isURL('http://docker/pull ghcr.io')",
            "!isURL('https://exa{mple}.com/') && isURL('https://ex_a~m-p.le/') && isURL('https://é.example/')",
        ]);
    }

    #[test]
    fn url_errors_in_the_api_servers_words() {
        assert_eq!(
            error("url('../relative-path').getScheme() == ''"),
            r#"URL parse error during conversion from string: parse "../relative-path": invalid URI for request"#
        );
        assert_eq!(
            error("url('https://example.com:8x/').getScheme() == ''"),
            r#"URL parse error during conversion from string: parse "https://example.com:8x/": invalid port ":8x" after host"#
        );
        assert_eq!(
            error("url(':foo').getScheme() == ''"),
            r#"URL parse error during conversion from string: parse ":foo": missing protocol scheme"#
        );
        assert_eq!(
            error("url('http://a b/').getScheme() == ''"),
            r#"URL parse error during conversion from string: parse "http://a b/": invalid character " " in host name"#
        );
    }
}
