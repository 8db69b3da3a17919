//! Stage 5, the answer: turn an LLM answer (free text) into a whole candidate object.
//!
//! Real models wrap JSON in fences, answer in YAML, add prose around the object, return only
//! `spec`, or return an RFC 6902 patch. All of these are accepted; anything else is an
//! [`AnswerError`] (a failed attempt, never a panic). The work is bounded: the answer is capped
//! at [`MAX_ANSWER_BYTES`], at most [`MAX_EXTRACTIONS`] JSON/YAML parses are tried, and the
//! JSON and YAML parsers have their own recursion limits.
//!
//! Parsing does not judge the candidate: guardrails and re-validation do that afterwards.

use serde_json::{Map, Value};

/// Longest answer considered; a longer one is a failed attempt.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// At most this many fenced blocks / embedded values are parsed.
pub const MAX_EXTRACTIONS: usize = 16;
/// At most this many operations in a JSON Patch answer.
pub const MAX_PATCH_OPS: usize = 256;

/// Top-level keys of a Kubernetes object; an object with none of these is taken for a bare `spec`.
const OBJECT_KEYS: [&str; 5] = ["apiVersion", "kind", "metadata", "spec", "status"];
/// Kept from the object given when a (partial) answer leaves them out.
const IDENTITY_KEYS: [&str; 3] = ["apiVersion", "kind", "metadata"];

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerError {
    #[error("the answer is empty")]
    Empty,
    #[error("the answer is {0} bytes, more than {MAX_ANSWER_BYTES}")]
    TooLarge(usize),
    #[error("the answer holds no JSON or YAML object (prose only, or truncated)")]
    NoObject,
    #[error("the answer's JSON Patch does not apply: {0}")]
    BadPatch(String),
    #[error("the answer is not the object, its spec, or a JSON Patch: {0}")]
    Unrecognised(String),
    /// The model said it cannot fix the object (`{"unfixable": "why"}`).
    #[error("the LLM found it unfixable: {0}")]
    Refused(String),
}

/// Longest refusal reason kept.
const MAX_REFUSAL_CHARS: usize = 200;

/// A candidate object, and the number of JSON Patch operations the answer wrote to make it
/// (0 for an answer that is an object): an answer is bounded as written, not only by the
/// difference it makes.
#[derive(Debug)]
pub struct Parsed {
    pub object: Value,
    pub operations: usize,
}

/// Parses `text` into a whole candidate object, using `given` (the object the LLM was shown)
/// for what a partial answer leaves out.
pub fn parse_answer(text: &str, given: &Value) -> Result<Value, AnswerError> {
    parse(text, given).map(|parsed| parsed.object)
}

/// [`parse_answer`], with the number of operations the answer wrote.
pub fn parse(text: &str, given: &Value) -> Result<Parsed, AnswerError> {
    if text.len() > MAX_ANSWER_BYTES {
        return Err(AnswerError::TooLarge(text.len()));
    }
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return Err(AnswerError::Empty);
    }
    let mut last_error = None;
    for value in values_in(text) {
        match interpret(value, given) {
            Ok(candidate) => return Ok(candidate),
            Err(e @ AnswerError::Refused(_)) => return Err(e),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or(AnswerError::NoObject))
}

/// The number a choice answer picks: `{"choice": 2}` (as the response schema asks), also
/// fenced or with prose around it, or a bare number. `None` when the answer holds no choice.
pub fn parse_choice(text: &str) -> Result<u64, AnswerError> {
    if text.len() > MAX_ANSWER_BYTES {
        return Err(AnswerError::TooLarge(text.len()));
    }
    let text = text.trim_start_matches('\u{feff}').trim();
    if text.is_empty() {
        return Err(AnswerError::Empty);
    }
    for value in values_in(text) {
        let choice = match &value {
            Value::Object(map) => map.get("choice"),
            Value::Number(_) => Some(&value),
            _ => None,
        };
        if let Some(n) = choice.and_then(|c| c.as_u64().or_else(|| c.as_str()?.trim().parse().ok()))
        {
            return Ok(n);
        }
    }
    if let Ok(n) = text.parse::<u64>() {
        return Ok(n);
    }
    Err(AnswerError::Unrecognised(
        "not a choice: answer {\"choice\": <number>}".into(),
    ))
}

/// The JSON/YAML values found in the answer, most likely first, lazily and boundedly.
fn values_in(text: &str) -> impl Iterator<Item = Value> + '_ {
    let whole = std::iter::once_with(move || parse_json(text));
    let fenced = fenced_blocks(text).map(|(lang, body)| {
        let lang = lang.to_ascii_lowercase();
        if lang == "yaml" || lang == "yml" {
            parse_yaml(body).or_else(|| parse_json(body))
        } else {
            parse_json(body).or_else(|| parse_yaml(body))
        }
    });
    let embedded = embedded_json(text).map(parse_json);
    let yaml = std::iter::once_with(move || yaml_start(text).and_then(parse_yaml));
    whole
        .chain(fenced)
        .chain(embedded)
        .chain(yaml)
        .take(MAX_EXTRACTIONS + 2)
        .flatten()
        .filter(|v| v.is_object() || v.is_array())
}

/// JSON, or failing that the same text without `//`/`/* */` comments and trailing commas
/// (small models add both).
fn parse_json(text: &str) -> Option<Value> {
    let text = text.trim();
    serde_json::from_str(text)
        .ok()
        .or_else(|| relaxed_json(text).and_then(|t| serde_json::from_str(&t).ok()))
}

/// `text` without comments and trailing commas outside strings; `None` when there are none.
fn relaxed_json(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut i = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut last = 0; // start of the text not yet copied
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let skip_to = match b {
            b'"' => {
                in_string = true;
                None
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => Some(
                bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |n| i + n),
            ),
            b'/' if bytes.get(i + 1) == Some(&b'*') => Some(
                text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2),
            ),
            b',' => {
                let next = bytes[i + 1..]
                    .iter()
                    .find(|c| !c.is_ascii_whitespace())
                    .copied();
                matches!(next, Some(b'}') | Some(b']')).then_some(i + 1)
            }
            _ => None,
        };
        match skip_to {
            Some(end) => {
                out.push_str(&text[last..i]);
                last = end;
                i = end;
                changed = true;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[last..]);
    changed.then_some(out)
}

fn parse_yaml(text: &str) -> Option<Value> {
    // A YAML document holding a bare string or number is no candidate; only mappings and
    // sequences are kept by the caller.
    serde_yaml_ng::from_str::<Value>(text).ok()
}

/// An unfenced answer is tried as YAML from its first line that starts a top-level object key
/// (`apiVersion:`, `spec:`, ...): prose before it would parse as YAML keys too.
fn yaml_start(text: &str) -> Option<&str> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let starts_object = OBJECT_KEYS.iter().any(|k| {
            line.strip_prefix(k)
                .is_some_and(|rest| rest.starts_with(':'))
        });
        if starts_object {
            return Some(&text[offset..]);
        }
        offset += line.len();
    }
    None
}

/// Markdown fenced code blocks: (info string's first word, body). An unclosed fence is skipped
/// (the answer was truncated).
fn fenced_blocks(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let start = rest.find("```")?;
        let after = &rest[start..];
        let fence_len = after.bytes().take_while(|&b| b == b'`').count();
        let fence = &after[..fence_len];
        let line_end = after.find('\n')?;
        let lang = after[fence_len..line_end]
            .split_whitespace()
            .next()
            .unwrap_or("");
        let body_start = start + line_end + 1;
        let body = &rest[body_start..];
        let Some(close) = find_closing_fence(body, fence) else {
            rest = "";
            return None;
        };
        let block = &body[..close];
        rest = &body[close + fence.len()..];
        Some((lang, block))
    })
}

/// The closing fence is a line that starts with the fence (after optional indentation).
fn find_closing_fence(body: &str, fence: &str) -> Option<usize> {
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with(fence) {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
}

/// Balanced `{...}` / `[...]` spans in prose, aware of JSON strings. Scanning resumes after
/// each complete span; an opening bracket that never closes ends the scan (the answer was
/// truncated: an inner object of a cut-off answer must not pass for the answer).
fn embedded_json(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    std::iter::from_fn(move || {
        let start = pos + bytes[pos..].iter().position(|&b| b == b'{' || b == b'[')?;
        let end = balanced_end(&bytes[start..])?;
        pos = start + end;
        Some(&text[start..start + end])
    })
}

/// Length of the balanced span that starts at `bytes[0]` (an opening bracket).
fn balanced_end(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Turns one parsed value into a whole candidate object.
fn interpret(value: Value, given: &Value) -> Result<Parsed, AnswerError> {
    match value {
        Value::Array(ops) => {
            let operations = ops.len();
            apply_patch(ops, given).map(|object| Parsed { object, operations })
        }
        Value::Object(mut map) => {
            // `{"patch": [...]}`: the shape the response schema asks for (a root object).
            if map.len() == 1 {
                if let Some(Value::Array(ops)) = map.get_mut("patch") {
                    if ops.is_empty() {
                        return Err(AnswerError::Refused(
                            "the answer is an empty patch (the model found no fix)".into(),
                        ));
                    }
                    let ops = std::mem::take(ops);
                    let operations = ops.len();
                    return apply_patch(ops, given).map(|object| Parsed { object, operations });
                }
            }
            from_object(map, given).map(|object| Parsed {
                object,
                operations: 0,
            })
        }
        other => Err(AnswerError::Unrecognised(format!(
            "a {} value",
            json_type(&other)
        ))),
    }
}

fn apply_patch(mut ops: Vec<Value>, given: &Value) -> Result<Value, AnswerError> {
    if ops.is_empty() {
        return Err(AnswerError::BadPatch("the patch is empty".into()));
    }
    if ops.len() > MAX_PATCH_OPS {
        return Err(AnswerError::BadPatch(format!(
            "{} operations, more than {MAX_PATCH_OPS}",
            ops.len()
        )));
    }
    for op in ops.iter_mut().filter_map(Value::as_object_mut) {
        for key in ["path", "from"] {
            if let Some(Value::String(p)) = op.get_mut(key) {
                *p = normalise_path(p);
            }
        }
    }
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops))
        .map_err(|e| AnswerError::BadPatch(format!("not an RFC 6902 patch: {e}")))?;
    let mut candidate = given.clone();
    for (i, op) in patch.0.into_iter().enumerate() {
        if let Err(e) = json_patch::patch(&mut candidate, std::slice::from_ref(&op)) {
            // Models `replace` members that do not exist yet (that is an `add`), and `add`
            // under objects that do not exist yet (`mkdir -p`: missing parents become `{}`),
            // or under the string the object is built from (`selector: "app=web"` →
            // `selector/matchLabels`: the string becomes `{}`; what it said is the evidence
            // check's to find in the result). Any other value is never replaced on the way.
            let add = match op {
                json_patch::PatchOperation::Replace(r) => Some(json_patch::AddOperation {
                    path: r.path,
                    value: r.value,
                }),
                json_patch::PatchOperation::Add(a) => Some(a),
                _ => None,
            };
            let retried = add.is_some_and(|add| {
                let mut attempt = candidate.clone();
                let applied = create_missing_parents(&mut attempt, add.path.as_str())
                    && json_patch::patch(&mut attempt, &[json_patch::PatchOperation::Add(add)])
                        .is_ok();
                if applied {
                    candidate = attempt;
                }
                applied
            });
            if !retried {
                return Err(AnswerError::BadPatch(format!("operation {i}: {e}")));
            }
        }
    }
    Ok(candidate)
}

/// Creates the absent objects on the way to `path`'s parent, and turns a string on the way
/// into an object. False when a step is something else (an array index, a number, a list
/// is never made up).
fn create_missing_parents(value: &mut Value, path: &str) -> bool {
    let Some((parent, _)) = crate::pointer::split_last(path) else {
        return false;
    };
    let mut node = value;
    for token in crate::pointer::tokens(parent) {
        string_to_object(node);
        node = match node {
            Value::Object(map) => map
                .entry(token)
                .or_insert_with(|| Value::Object(serde_json::Map::new())),
            Value::Array(items) => match token.parse::<usize>().ok().and_then(|i| items.get_mut(i))
            {
                Some(item) => item,
                None => return false,
            },
            _ => return false,
        };
    }
    string_to_object(node);
    node.is_object() || node.is_array()
}

fn string_to_object(node: &mut Value) {
    if node.is_string() {
        *node = Value::Object(serde_json::Map::new());
    }
}

/// `/spec/a[0]/b` → `/spec/a/0/b`, `spec/a` → `/spec/a`: paths as small models write them.
fn normalise_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 2);
    if !p.is_empty() && !p.starts_with('/') {
        out.push('/');
    }
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' {
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            if !digits.is_empty() && chars.peek() == Some(&']') {
                chars.next();
                out.push('/');
                out.push_str(&digits);
                continue;
            }
            out.push('[');
            out.push_str(&digits);
            continue;
        }
        out.push(c);
    }
    out
}

fn from_object(map: Map<String, Value>, given: &Value) -> Result<Value, AnswerError> {
    if let Some(refusal) = refusal(&map) {
        return Err(refusal);
    }
    let map = unwrapped(map)?;
    let Some(given_map) = given.as_object() else {
        return Err(AnswerError::Unrecognised(
            "the object given is not a JSON object".into(),
        ));
    };
    if map.keys().any(|k| OBJECT_KEYS.contains(&k.as_str())) {
        return whole_or_partial(map, given_map);
    }
    // A bare spec: at least one key is one of the given spec's keys.
    let given_spec = given_map.get("spec").and_then(Value::as_object);
    let overlaps = given_spec.is_some_and(|s| map.keys().any(|k| s.contains_key(k)));
    if overlaps {
        let mut merged = given_map.clone();
        merged.insert("spec".into(), Value::Object(map));
        return Ok(Value::Object(merged));
    }
    Err(AnswerError::Unrecognised(
        "an object that is neither the resource nor its spec".into(),
    ))
}

/// `{"unfixable": "why"}` (not inside an object that is the resource).
fn refusal(map: &Map<String, Value>) -> Option<AnswerError> {
    let why = map.get("unfixable")?;
    if map.contains_key("spec") || map.contains_key("kind") {
        return None;
    }
    let why = match why {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let why: String = why
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    Some(AnswerError::Refused(crate::text::truncate_chars(
        why.trim(),
        MAX_REFUSAL_CHARS,
    )))
}

/// `{"object": {...}}`, `{"corrected": {...}}`: the whole object one key wraps; else `map`.
fn unwrapped(map: Map<String, Value>) -> Result<Map<String, Value>, AnswerError> {
    let is_wrapped_object = map.len() == 1
        && !map.contains_key("spec")
        && map
            .values()
            .next()
            .and_then(Value::as_object)
            .is_some_and(|o| o.contains_key("apiVersion") && o.contains_key("kind"));
    if !is_wrapped_object {
        return Ok(map);
    }
    match map.into_iter().next() {
        Some((_, Value::Object(inner))) => Ok(inner),
        _ => Err(AnswerError::NoObject),
    }
}

/// A whole object, or a partial one (`{"spec": ...}`): what it leaves out of the object's
/// identity is kept as given; what it gives replaces the given value.
fn whole_or_partial(
    mut candidate: Map<String, Value>,
    given_map: &Map<String, Value>,
) -> Result<Value, AnswerError> {
    for key in ["metadata", "spec"] {
        if candidate.get(key).is_some_and(|v| !v.is_object()) {
            return Err(AnswerError::Unrecognised(format!("{key} is not an object")));
        }
    }
    if !candidate.contains_key("spec") && !candidate.contains_key("kind") {
        return Err(AnswerError::Unrecognised(
            "an object with neither kind nor spec".into(),
        ));
    }
    for key in IDENTITY_KEYS {
        if !candidate.contains_key(key) {
            if let Some(v) = given_map.get(key) {
                candidate.insert(key.to_string(), v.clone());
            }
        }
    }
    if !candidate.contains_key("kind") || !candidate.contains_key("apiVersion") {
        // `{"spec": ...}` alone: every other top-level field stays as given.
        let mut merged = given_map.clone();
        merged.extend(candidate);
        return Ok(Value::Object(merged));
    }
    Ok(Value::Object(candidate))
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn given() -> Value {
        json!({
            "apiVersion": "olm.operatorframework.io/v1",
            "kind": "ClusterExtension",
            "metadata": {"name": "argocd", "labels": {"app": "argocd"}},
            "spec": {
                "namespace": "argocd",
                "serviceAccount": {"name": "argocd-installer"},
                "source": {"sourceType": "Catalog", "catalog": {"version": ">=3.0, <3.6"}}
            }
        })
    }

    fn fixed() -> Value {
        let mut v = given();
        v["spec"]["source"]["catalog"]["packageName"] = json!("argocd-operator");
        v
    }

    fn fixed_json() -> String {
        serde_json::to_string_pretty(&fixed()).unwrap()
    }

    #[test]
    fn bare_json_object() {
        assert_eq!(parse_answer(&fixed_json(), &given()).unwrap(), fixed());
    }

    #[test]
    fn fenced_json_with_prose_around() {
        let text = format!(
            "Here is the corrected object:\n\n```json\n{}\n```\n\nI added the packageName.",
            fixed_json()
        );
        assert_eq!(parse_answer(&text, &given()).unwrap(), fixed());
    }

    #[test]
    fn unlabelled_fence_and_first_parsable_block_wins() {
        let text = format!(
            "```\nnot json at all\n```\nthen\n```\n{}\n```\n```json\n{{\"spec\": {{}}}}\n```",
            fixed_json()
        );
        assert_eq!(parse_answer(&text, &given()).unwrap(), fixed());
    }

    #[test]
    fn yaml_fenced_and_bare() {
        let yaml = "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata:\n  name: argocd\n  labels:\n    app: argocd\nspec:\n  namespace: argocd\n  serviceAccount:\n    name: argocd-installer\n  source:\n    sourceType: Catalog\n    catalog:\n      packageName: argocd-operator\n      version: \">=3.0, <3.6\"\n";
        assert_eq!(parse_answer(yaml, &given()).unwrap(), fixed());
        let fenced = format!("Sure!\n```yaml\n{yaml}```\n");
        assert_eq!(parse_answer(&fenced, &given()).unwrap(), fixed());
    }

    #[test]
    fn text_around_one_json_object() {
        let text = format!(
            "The {{problem}} was a missing field. Fixed: {} Hope this helps [1].",
            serde_json::to_string(&fixed()).unwrap()
        );
        assert_eq!(parse_answer(&text, &given()).unwrap(), fixed());
    }

    #[test]
    fn braces_inside_strings_do_not_confuse_extraction() {
        let mut v = fixed();
        v["metadata"]["annotations"] = json!({"note": "a } and a { and \\\" quote ]"});
        let text = format!("Answer: {} done", serde_json::to_string(&v).unwrap());
        let mut g = given();
        g["metadata"]["annotations"] = v["metadata"]["annotations"].clone();
        assert_eq!(parse_answer(&text, &g).unwrap(), v);
    }

    #[test]
    fn only_spec_wrapped_or_bare() {
        let spec = fixed()["spec"].clone();
        let wrapped = json!({ "spec": spec }).to_string();
        assert_eq!(parse_answer(&wrapped, &given()).unwrap(), fixed());
        assert_eq!(parse_answer(&spec.to_string(), &given()).unwrap(), fixed());
    }

    #[test]
    fn whole_object_without_metadata_keeps_the_given_metadata() {
        let mut v = fixed();
        v.as_object_mut().unwrap().remove("metadata");
        assert_eq!(parse_answer(&v.to_string(), &given()).unwrap(), fixed());
    }

    #[test]
    fn object_wrapped_in_one_key() {
        let text = json!({ "correctedObject": fixed() }).to_string();
        assert_eq!(parse_answer(&text, &given()).unwrap(), fixed());
    }

    #[test]
    fn json_patch_is_applied_to_a_copy() {
        let text = r#"```json
[{"op": "add", "path": "/spec/source/catalog/packageName", "value": "argocd-operator"}]
```"#;
        let g = given();
        assert_eq!(parse_answer(text, &g).unwrap(), fixed());
        assert_eq!(g, given());
        let bad = r#"[{"op": "remove", "path": "/spec/source/catalog/channels"}]"#;
        assert!(matches!(
            parse_answer(bad, &g),
            Err(AnswerError::BadPatch(_))
        ));
        let junk = r#"[1, 2, "three"]"#;
        assert!(matches!(
            parse_answer(junk, &g),
            Err(AnswerError::BadPatch(_))
        ));
    }

    #[test]
    fn refusals_are_recognised() {
        let text = "I can't tell.\n```json\n{\"unfixable\": \"the package name is not in the object\"}\n```";
        assert_eq!(
            parse_answer(text, &given()),
            Err(AnswerError::Refused(
                "the package name is not in the object".into()
            ))
        );
        let long = json!({"unfixable": "x\n".repeat(500)}).to_string();
        match parse_answer(&long, &given()) {
            Err(AnswerError::Refused(why)) => {
                assert!(why.chars().count() <= MAX_REFUSAL_CHARS);
                assert!(!why.contains('\n'));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn comments_and_trailing_commas_are_tolerated() {
        let text = "```json\n{\n  \"apiVersion\": \"olm.operatorframework.io/v1\", // kept\n  \"kind\": \"ClusterExtension\",\n  /* the fix */\n  \"spec\": {\"namespace\": \"argocd\", \"serviceAccount\": {\"name\": \"argocd-installer\"},\n    \"source\": {\"sourceType\": \"Catalog\", \"catalog\": {\"version\": \">=3.0, <3.6\", \"packageName\": \"argocd-operator\",},},\n  },\n}\n```";
        assert_eq!(parse_answer(text, &given()).unwrap(), fixed());
        // `//` and `,}` inside strings are data, not comments or trailing commas.
        assert_eq!(
            relaxed_json(r#"{"a": "http://x,}", "b": 1,}"#).as_deref(),
            Some(r#"{"a": "http://x,}", "b": 1}"#)
        );
        assert_eq!(relaxed_json(r#"{"a": "// not a comment"}"#), None);
    }

    #[test]
    fn patch_paths_and_ops_as_small_models_write_them() {
        let text = r#"[{"op": "replace", "path": "spec/source/catalog/packageName", "value": "argocd-operator"}]"#;
        assert_eq!(parse_answer(text, &given()).unwrap(), fixed());
        let mut g = given();
        g["spec"]["source"]["catalog"]["channels"] = json!(["Stable"]);
        let text =
            r#"[{"op": "replace", "path": "/spec/source/catalog/channels[0]", "value": "stable"}]"#;
        let out = parse_answer(text, &g).unwrap();
        assert_eq!(
            out["spec"]["source"]["catalog"]["channels"],
            json!(["stable"])
        );
        assert_eq!(normalise_path("/a[12]/b[x]/c[3"), "/a/12/b[x]/c[3");
        // An add (or replace) under objects that do not exist yet creates them...
        let text = r#"[{"op": "add", "path": "/spec/install/preflight/crdUpgradeSafety/enforcement", "value": "None"}]"#;
        let out = parse_answer(text, &g).unwrap();
        assert_eq!(
            out["spec"]["install"],
            json!({"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}})
        );
        let text = r#"[{"op": "replace", "path": "/spec/nope/deeper", "value": 1}]"#;
        assert_eq!(
            parse_answer(text, &g).unwrap()["spec"]["nope"],
            json!({"deeper": 1})
        );
        // ... and builds an object where a string stood (what the string said is left to
        // the evidence check) ...
        let text = r#"[{"op": "add", "path": "/spec/namespace/deeper", "value": 1}]"#;
        assert_eq!(
            parse_answer(text, &g).unwrap()["spec"]["namespace"],
            json!({"deeper": 1})
        );
        // ... but never replaces another value on the way, nor makes up an array element.
        g["spec"]["replicas"] = json!(3);
        for bad in [
            r#"[{"op": "add", "path": "/spec/replicas/deeper", "value": 1}]"#,
            r#"[{"op": "add", "path": "/spec/source/catalog/channels/5/x", "value": 1}]"#,
            r#"[{"op": "add", "path": "/spec/source/catalog/channels/x", "value": 1}]"#,
        ] {
            assert!(
                matches!(parse_answer(bad, &g), Err(AnswerError::BadPatch(_))),
                "{bad}"
            );
        }
        // An existing array element may be the way.
        g["spec"]["source"]["catalog"]["channels"] = json!([{"a": 1}]);
        let text = r#"[{"op": "add", "path": "/spec/source/catalog/channels/0/b/c", "value": 2}]"#;
        assert_eq!(
            parse_answer(text, &g).unwrap()["spec"]["source"]["catalog"]["channels"],
            json!([{"a": 1, "b": {"c": 2}}])
        );
    }

    #[test]
    fn prose_only_and_empty_fail() {
        assert_eq!(parse_answer("   ", &given()), Err(AnswerError::Empty));
        assert_eq!(
            parse_answer(
                "I cannot determine the package name from the object.",
                &given()
            ),
            Err(AnswerError::NoObject)
        );
        assert!(parse_answer("spec: is what you need to fix", &given()).is_err());
    }

    #[test]
    fn truncated_answers_fail_and_inner_objects_do_not_pass() {
        let full = serde_json::to_string(&fixed()).unwrap();
        for cut in [10, full.len() / 2, full.len() - 1] {
            let text = &full[..cut];
            assert!(parse_answer(text, &given()).is_err(), "cut at {cut}");
            let fenced = format!("```json\n{text}");
            assert!(
                parse_answer(&fenced, &given()).is_err(),
                "fenced cut at {cut}"
            );
        }
    }

    #[test]
    fn unrelated_objects_are_not_candidates() {
        assert!(matches!(
            parse_answer(r#"{"answer": "no", "reason": "x"}"#, &given()),
            Err(AnswerError::Unrecognised(_))
        ));
        assert!(parse_answer(r#"{"metadata": {"name": "x"}}"#, &given()).is_err());
        assert!(parse_answer("42", &given()).is_err());
        assert!(parse_answer(r#""a string""#, &given()).is_err());
    }

    #[test]
    fn hostile_answers_parse_and_are_left_to_guardrails() {
        // Parsing does not judge; these must come back as candidates that show the change
        // so that guardrails can reject them.
        let mut sa = fixed();
        sa["spec"]["serviceAccount"]["name"] = json!("cluster-admin");
        assert_eq!(parse_answer(&sa.to_string(), &given()).unwrap(), sa);
        let mut renamed = fixed();
        renamed["metadata"]["name"] = json!("evil");
        assert_eq!(
            parse_answer(&renamed.to_string(), &given()).unwrap(),
            renamed
        );
        let mut outside = fixed();
        outside["status"] = json!({"installed": true});
        assert_eq!(
            parse_answer(&outside.to_string(), &given()).unwrap(),
            outside
        );
    }

    #[test]
    fn oversized_and_deep_inputs_are_bounded() {
        let huge = "x".repeat(MAX_ANSWER_BYTES + 1);
        assert_eq!(
            parse_answer(&huge, &given()),
            Err(AnswerError::TooLarge(MAX_ANSWER_BYTES + 1))
        );
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse_answer(&deep, &given()).is_err());
        let deep_obj = format!("{}1{}", "{\"a\":".repeat(5_000), "}".repeat(5_000));
        assert!(parse_answer(&deep_obj, &given()).is_err());
        let deep_yaml = format!("spec:\n{}", "- ".repeat(20_000));
        assert!(parse_answer(&deep_yaml, &given()).is_err());
        let many_fences = "```json\n{\n```\n".repeat(2_000);
        assert!(parse_answer(&many_fences, &given()).is_err());
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nspec: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
        assert!(parse_answer(bomb, &given()).is_err());
    }
}
