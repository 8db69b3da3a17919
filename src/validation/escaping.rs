//! Property names as CEL sees them. The API server exposes an object's declared `properties`
//! to CEL under escaped names (`k8s.io/apiserver/pkg/cel` `Escape`): a name that is a CEL
//! reserved word becomes `__<word>__` (`namespace` → `__namespace__`, used by Gateway API's
//! rules), and in other names `__` becomes `__underscores__`, `.` `__dot__`, `-` `__dash__`,
//! `/` `__slash__`. A name that starts with a digit or holds any other character is not
//! exposed at all. Keys of `additionalProperties` maps are not escaped (they are map keys).

use std::borrow::Cow;

/// The words CEL's lexer reserves.
pub const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The first word of `rule` that CEL's lexer reserves and the rule uses as a name (outside
/// string literals): the API server refuses such a rule ("reserved identifier"), since a
/// property of that name is `__<word>__` to CEL (`self.__namespace__`, never
/// `self.namespace`). `true`, `false`, `null` and `in` are CEL's own words, not names.
pub fn reserved_identifier(rule: &str) -> Option<&'static str> {
    let bytes = rule.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' || c == b'\'' {
            // A string literal: up to its closing quote (a tripled quote for a triple-quoted
            // one), escapes skipped.
            let close: &[u8] = if bytes[i..].starts_with(&[c, c, c]) {
                &bytes[i..i + 3]
            } else {
                &bytes[i..i + 1]
            };
            i += close.len();
            while i < bytes.len() && !bytes[i..].starts_with(close) {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += close.len();
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &rule[start..i];
            if !matches!(word, "true" | "false" | "null" | "in") {
                if let Some(reserved) = CEL_RESERVED.iter().find(|r| **r == word) {
                    return Some(reserved);
                }
            }
        } else if c.is_ascii_digit() {
            // A number (`1e10`, `0x1F`, `2u`): its letters are no name.
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The name under which CEL sees property `name`; `None` when the API server does not expose
/// it.
pub fn escape(name: &str) -> Option<Cow<'_, str>> {
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if CEL_RESERVED.contains(&name) {
        return Some(Cow::Owned(format!("__{name}__")));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/');
    if !name.chars().all(allowed) {
        return None;
    }
    if !name.contains(['.', '-', '/']) && !name.contains("__") {
        return Some(Cow::Borrowed(name));
    }
    let mut out = String::with_capacity(name.len() + 16);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("__") {
            out.push_str("__underscores__");
            rest = r;
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            other => out.push(other),
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(Cow::Owned(out))
}

/// The property name of the CEL field `escaped` (the inverse of [`escape`]); `None` for an
/// escape sequence the API server does not write.
pub fn unescape(escaped: &str) -> Option<Cow<'_, str>> {
    if !escaped.contains("__") {
        return Some(Cow::Borrowed(escaped));
    }
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while !rest.is_empty() {
        // An escape is `__`, a run of characters other than `_`, and `__`.
        if let Some(after) = rest.strip_prefix("__") {
            let word_len = after.find('_').unwrap_or(after.len());
            if word_len > 0 && after[word_len..].starts_with("__") {
                let word = &after[..word_len];
                let plain = match word {
                    "underscores" => "__",
                    "dot" => ".",
                    "dash" => "-",
                    "slash" => "/",
                    w if CEL_RESERVED.contains(&w) => {
                        // A reserved word is escaped only as the whole name.
                        if escaped.len() != word_len + 4 {
                            return None;
                        }
                        w
                    }
                    _ => return None,
                };
                out.push_str(plain);
                rest = &after[word_len + 2..];
                continue;
            }
        }
        let c = rest.chars().next().unwrap_or('_');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserved_word_used_as_a_name_is_found_outside_string_literals() {
        assert_eq!(
            reserved_identifier("!has(self.namespace)"),
            Some("namespace")
        );
        assert_eq!(reserved_identifier("self.if == 1"), Some("if"));
        assert_eq!(reserved_identifier("!has(self.__namespace__)"), None);
        assert_eq!(
            reserved_identifier(r#"self.x in ['namespace', "var"] && self.y != null"#),
            None
        );
        assert_eq!(
            reserved_identifier("self.a.matches('^for$') ? true : false"),
            None
        );
        assert_eq!(reserved_identifier("'''let''' == self.b || 1e3 > 2u"), None);
        assert_eq!(reserved_identifier("self.namespaces.size() > 0"), None);
    }

    #[test]
    fn names_escape_as_the_api_server_escapes_them() {
        for (name, cel) in [
            ("namespace", Some("__namespace__")),
            ("if", Some("__if__")),
            ("group", Some("group")),
            ("a_b", Some("a_b")),
            ("a__b", Some("a__underscores__b")),
            (
                "x-forwarded.for/v1",
                Some("x__dash__forwarded__dot__for__slash__v1"),
            ),
            ("1abc", None),
            ("a b", None),
            ("", None),
        ] {
            assert_eq!(escape(name).as_deref(), cel, "{name}");
            if let Some(cel) = cel {
                assert_eq!(unescape(cel).as_deref(), Some(name), "{cel}");
            }
        }
        assert_eq!(unescape("__bogus__"), None);
        assert_eq!(unescape("a__namespace__"), None);
        assert_eq!(unescape("plain"), Some(Cow::Borrowed("plain")));
    }
}
