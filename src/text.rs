//! Bounded text for messages, warnings, prompts and audit annotations: every stage that
//! quotes user input cuts it with these, so nothing a user sends can grow a response unbounded.

use serde_json::Value;

/// Cuts at a character boundary and marks the cut with `…` (at most `max` characters).
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Cuts at a character boundary and marks the cut with `…` (at most `max` bytes).
pub fn truncate_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// A value as JSON, short, for a warning.
pub fn short_value(v: &Value) -> String {
    truncate_chars(&v.to_string(), 32)
}

/// Control characters (newlines included) become spaces, the ends are trimmed, and the
/// result is at most `max` characters: a user's text can never start a new line of a message.
pub fn one_line(s: &str, max: usize) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    truncate_chars(cleaned.trim(), max)
}

/// A value quoted for a message: strings in double quotes, other values as JSON; at most
/// `max` characters of the value.
pub fn quote(v: &Value, max: usize) -> String {
    match v {
        Value::String(s) => format!("{:?}", truncate_chars(s, max)),
        other => truncate_chars(&other.to_string(), max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_bytes("ééé", 4), "…");
        assert_eq!(truncate_bytes("abc", 3), "abc");
        assert_eq!(truncate_chars("abcdef", 4), "abc…");
        assert_eq!(truncate_chars("abcd", 4), "abcd");
    }

    #[test]
    fn one_line_removes_control_characters_and_bounds() {
        assert_eq!(one_line("  a\nb\tc  ", 10), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn quote_marks_strings_and_bounds() {
        assert_eq!(quote(&json!("a\"b"), 10), "\"a\\\"b\"");
        assert_eq!(quote(&json!(12), 10), "12");
        assert_eq!(quote(&json!("abcdef"), 4), "\"abc…\"");
        assert_eq!(short_value(&json!("x".repeat(100))).chars().count(), 32);
    }
}
