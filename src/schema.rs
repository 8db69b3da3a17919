//! Queries on a structural schema (`openAPIV3Schema`).

use regex_syntax::ast::{AssertionKind, Ast, ClassSet, ClassSetItem, RepetitionKind};
use serde_json::Value;

/// The schema node that governs the value at `pointer` (through `properties`, `items`,
/// `additionalProperties`), or `None` when the schema does not describe it.
pub fn node_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut node = schema;
    for token in crate::pointer::tokens(pointer) {
        node = child(node, &token)?;
    }
    Some(node)
}

/// The schema node of the child `token` (a property name or an array index) of a value that
/// `node` governs.
pub fn child<'a>(node: &'a Value, token: &str) -> Option<&'a Value> {
    if let Some(p) = node.get("properties").and_then(|p| p.get(token)) {
        return Some(p);
    }
    if let Some(items) = node.get("items").filter(|i| i.is_object()) {
        // An index, or `-` (JSON Patch's "append").
        if token == "-" || (!token.is_empty() && token.bytes().all(|b| b.is_ascii_digit())) {
            return Some(items);
        }
    }
    node.get("additionalProperties").filter(|v| v.is_object())
}

/// `type` of the node (`""` when absent).
pub fn type_of(node: &Value) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or("")
}

fn flag(node: &Value, key: &str) -> bool {
    node.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Does the node check a text beyond its type (an enum, a pattern, a format or a rule of its
/// own)? A string field without one takes any words.
pub fn checks_text(node: &Value) -> bool {
    ["enum", "pattern", "format", "x-kubernetes-validations"]
        .iter()
        .any(|k| node.get(*k).is_some())
}

pub fn is_int_or_string(node: &Value) -> bool {
    flag(node, "x-kubernetes-int-or-string")
}

pub fn preserves_unknown(node: &Value) -> bool {
    flag(node, "x-kubernetes-preserve-unknown-fields")
}

pub fn is_embedded(node: &Value) -> bool {
    flag(node, "x-kubernetes-embedded-resource")
}

pub fn is_nullable(node: &Value) -> bool {
    flag(node, "nullable")
}

/// `x-kubernetes-list-type` (`atomic` when absent).
pub fn list_type(node: &Value) -> &str {
    node.get("x-kubernetes-list-type")
        .and_then(Value::as_str)
        .unwrap_or("atomic")
}

/// `x-kubernetes-list-map-keys` of a `map` list.
pub fn list_map_keys(node: &Value) -> Vec<&str> {
    node.get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// `required` property names.
pub fn required(node: &Value) -> impl Iterator<Item = &str> {
    node.get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The node's `enum` values, if any.
pub fn enum_values(node: &Value) -> Option<&Vec<Value>> {
    node.get("enum").and_then(Value::as_array)
}

/// The string literals of the node's CEL rules (`self.kind in ['Gateway', 'Service']` →
/// `Gateway`, `Service`), each as written between its quotes (no escapes read), in order.
pub fn rule_literals(node: &Value) -> Vec<String> {
    let rules = node
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("rule").and_then(Value::as_str));
    let mut out: Vec<String> = Vec::new();
    for rule in rules {
        let mut rest = rule;
        while let Some(start) = rest.find(['\'', '"']) {
            let quote = rest[start..].chars().next().unwrap_or('"');
            let after = &rest[start + 1..];
            let Some(end) = after.find(quote) else {
                break;
            };
            let literal = &after[..end];
            if !literal.contains('\\') && !out.iter().any(|o| o == literal) {
                out.push(literal.to_string());
            }
            rest = &after[end + 1..];
        }
    }
    out
}

/// The whole values a `pattern` spells out as literals (`^(@(daily|weekly)|[0-9 *]+)$` →
/// `@daily`, `@weekly`): for a pattern, what `enum` is for an enum. At most
/// [`MAX_PATTERN_LITERALS`]; a pattern that does not parse has none. Read from the syntax
/// tree (no Unicode tables needed: the policy stays small).
pub fn pattern_literals(pattern: &str) -> Vec<String> {
    let Ok(ast) = regex_syntax::ast::parse::Parser::new().parse(pattern) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for branch in whole_value_branches(&ast) {
        for literal in finite_language(branch).unwrap_or_default() {
            if !literal.is_empty() && !out.contains(&literal) {
                out.push(literal);
            }
        }
    }
    out.truncate(MAX_PATTERN_LITERALS);
    out
}

/// The URL schemes a `pattern` makes every value begin with (`^(http|https)://.*$` →
/// `http://`, `https://`): the strings its one branch must start with, read as
/// [`pattern_literals`] reads whole values, when each is a scheme and `://`. None for a
/// pattern of several branches, or one whose start is no scheme.
pub fn pattern_schemes(pattern: &str) -> Vec<String> {
    let Ok(ast) = regex_syntax::ast::parse::Parser::new().parse(pattern) else {
        return Vec::new();
    };
    let [branch] = top_branches(&ast)[..] else {
        return Vec::new();
    };
    let parts: Vec<&Ast> = match branch {
        Ast::Concat(c) => c
            .asts
            .iter()
            .filter(|a| !matches!(a, Ast::Assertion(_)))
            .collect(),
        other => vec![other],
    };
    let mut starts = vec![String::new()];
    for part in parts {
        if starts.iter().all(|s| s.contains("://")) {
            break;
        }
        let Some(tails) = finite_language(part) else {
            break;
        };
        let Some(longer) = concatenate(&starts, &tails) else {
            return Vec::new();
        };
        starts = longer;
    }
    let mut schemes: Vec<String> = Vec::new();
    for start in starts {
        let Some((scheme, _)) = start.split_once("://") else {
            return Vec::new();
        };
        let mut chars = scheme.chars();
        let is_scheme = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !is_scheme {
            return Vec::new();
        }
        let scheme = format!("{scheme}://");
        if !schemes.contains(&scheme) {
            schemes.push(scheme);
        }
    }
    schemes
}

/// Most literals read from one pattern (and from one branch of it).
pub const MAX_PATTERN_LITERALS: usize = 32;

/// The alternatives of a pattern, anchors and groups around them removed.
fn top_branches(ast: &Ast) -> Vec<&Ast> {
    anchored_branches(ast, false, false)
        .into_iter()
        .map(|(branch, _)| branch)
        .collect()
}

/// The top-level branches of a pattern that are anchored at both ends (`^…$`), the only ones
/// whose strings are whole values: a pattern is searched for anywhere in the value, so
/// `^https?://` spells out a start (`http://` and any text after it), not a value.
fn whole_value_branches(ast: &Ast) -> Vec<&Ast> {
    anchored_branches(ast, false, false)
        .into_iter()
        .filter_map(|(branch, whole)| whole.then_some(branch))
        .collect()
}

/// The alternatives of a pattern, anchors and groups around them removed, each with whether
/// it is anchored at both ends (`start`, `end`: anchored by what encloses it).
fn anchored_branches(ast: &Ast, start: bool, end: bool) -> Vec<(&Ast, bool)> {
    let is_start = |a: &Ast| {
        matches!(a, Ast::Assertion(x)
            if matches!(x.kind, AssertionKind::StartLine | AssertionKind::StartText))
    };
    let is_end = |a: &Ast| {
        matches!(a, Ast::Assertion(x)
            if matches!(x.kind, AssertionKind::EndLine | AssertionKind::EndText))
    };
    match ast {
        Ast::Group(g) => anchored_branches(&g.ast, start, end),
        Ast::Concat(c) => {
            let start = start || c.asts.first().is_some_and(is_start);
            let end = end || c.asts.last().is_some_and(is_end);
            let inner: Vec<&Ast> = c
                .asts
                .iter()
                .filter(|a| !matches!(a, Ast::Assertion(_)))
                .collect();
            match inner.as_slice() {
                [only] => anchored_branches(only, start, end),
                _ => vec![(ast, start && end)],
            }
        }
        Ast::Alternation(a) => a
            .asts
            .iter()
            .flat_map(|b| anchored_branches(b, start, end))
            .collect(),
        _ => vec![(ast, start && end)],
    }
}

/// Every string `ast` matches, when they are few (literals, groups, alternations, optional
/// parts, classes of a few characters); `None` otherwise (and for flags, which change what
/// a literal matches).
fn finite_language(ast: &Ast) -> Option<Vec<String>> {
    match ast {
        Ast::Empty(_) | Ast::Assertion(_) => Some(vec![String::new()]),
        Ast::Literal(l) => Some(vec![l.c.to_string()]),
        Ast::Group(g) if g.flags().is_none() => finite_language(&g.ast),
        Ast::ClassBracketed(class) if !class.negated => match &class.kind {
            ClassSet::Item(item) => small_class(item),
            ClassSet::BinaryOp(_) => None,
        },
        Ast::Repetition(r) if r.op.kind == RepetitionKind::ZeroOrOne => {
            let mut out = finite_language(&r.ast)?;
            out.push(String::new());
            Some(out)
        }
        Ast::Concat(c) => {
            let mut acc = vec![String::new()];
            for part in &c.asts {
                acc = concatenate(&acc, &finite_language(part)?)?;
            }
            Some(acc)
        }
        Ast::Alternation(a) => {
            let mut out = Vec::new();
            for branch in &a.asts {
                out.extend(finite_language(branch)?);
                if out.len() > MAX_PATTERN_LITERALS {
                    return None;
                }
            }
            Some(out)
        }
        _ => None,
    }
}

/// Every head followed by every tail; `None` past [`MAX_PATTERN_LITERALS`].
fn concatenate(heads: &[String], tails: &[String]) -> Option<Vec<String>> {
    if heads.len() * tails.len() > MAX_PATTERN_LITERALS {
        return None;
    }
    Some(
        heads
            .iter()
            .flat_map(|head| tails.iter().map(move |tail| format!("{head}{tail}")))
            .collect(),
    )
}

/// The characters of a bracketed class of at most four (`[hdw]`, `[.]`).
fn small_class(item: &ClassSetItem) -> Option<Vec<String>> {
    const MAX_CLASS_CHARS: usize = 4;
    let mut out = Vec::new();
    let items = match item {
        ClassSetItem::Union(u) => u.items.iter().collect::<Vec<_>>(),
        other => vec![other],
    };
    for item in items {
        match item {
            ClassSetItem::Literal(l) => out.push(l.c.to_string()),
            ClassSetItem::Range(r) => {
                for c in r.start.c..=r.end.c {
                    out.push(c.to_string());
                    if out.len() > MAX_CLASS_CHARS {
                        return None;
                    }
                }
            }
            _ => return None,
        }
        if out.len() > MAX_CLASS_CHARS {
            return None;
        }
    }
    Some(out)
}

/// Words of a description sentence that say what an absent value means.
pub const DEFAULT_WORDS: [&str; 6] = [
    "default",
    "unspecified",
    "omitted",
    "unset",
    "not set",
    "empty",
];

/// The sentences of the node's description that say what an absent value means
/// (`"When unspecified, the latest version available will be installed."`).
pub fn default_sentences(node: &Value) -> Vec<String> {
    node.get("description")
        .and_then(Value::as_str)
        .map(|d| {
            d.split_inclusive(". ")
                .map(|s| s.to_lowercase())
                .filter(|s| DEFAULT_WORDS.iter().any(|w| s.contains(w)))
                .collect()
        })
        .unwrap_or_default()
}

/// The node's `default`, if any.
pub fn default_value(node: &Value) -> Option<&Value> {
    node.get("default")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pattern_literals_are_the_whole_values_a_pattern_spells_out() {
        let cron = r"^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9*,/-]+ +[0-9*,/-]+ +[0-9*,/?LW-]+ +[0-9A-Za-z*,/-]+ +[0-9A-Za-z*,/?L#-]+)$";
        assert_eq!(
            pattern_literals(cron),
            [
                "@yearly",
                "@annually",
                "@monthly",
                "@weekly",
                "@daily",
                "@midnight",
                "@hourly"
            ]
        );
        assert_eq!(
            pattern_literals(r"^(UTC|[A-Z][A-Za-z_]+(/[A-Za-z0-9_+-]+)+)$"),
            ["UTC"]
        );
        assert_eq!(
            pattern_literals("^v?1\\.(0|1)$"),
            ["v1.0", "v1.1", "1.0", "1.1"]
        );
        assert!(pattern_literals(r"^[1-9][0-9]*[hdw]$").is_empty());
        assert!(pattern_literals("^(unclosed").is_empty());
        // A pattern not anchored at both ends spells out parts of values, not values.
        assert!(pattern_literals("^https?://").is_empty());
        assert!(pattern_literals("(Gi|Mi)$").is_empty());
        assert_eq!(pattern_literals("^a$|^b$"), ["a", "b"]);
        assert_eq!(
            pattern_schemes("^(http|https)://.*$"),
            ["http://", "https://"]
        );
        assert_eq!(pattern_schemes("^https://[a-z.]+$"), ["https://"]);
        assert_eq!(pattern_schemes("^s3://.+"), ["s3://"]);
        // No scheme at the start, a start that is not always one, several branches.
        assert!(pattern_schemes("^[a-z]+://.*$").is_empty());
        assert!(pattern_schemes("^(http://|/).*$").is_empty());
        assert!(pattern_schemes("^(unix://.+|[0-9.]+)$").is_empty());
        assert!(pattern_schemes("^v[0-9]+$").is_empty());
        let many = format!(
            "^({})$",
            (0..100)
                .map(|i| format!("v{i}"))
                .collect::<Vec<_>>()
                .join("|")
        );
        assert!(pattern_literals(&many).len() <= MAX_PATTERN_LITERALS);
    }

    #[test]
    fn node_at_follows_properties_items_and_maps() {
        let s = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}
            }}
        }});
        assert_eq!(
            node_at(&s, "/spec/list/0/a"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            node_at(&s, "/spec/labels/x"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(node_at(&s, "/spec/nope"), None);
        assert_eq!(node_at(&s, "/spec/list/x"), None);
        assert_eq!(node_at(&s, ""), Some(&s));
    }
}
